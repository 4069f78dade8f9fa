/* Numeric listener addresses: parsing (never a DNS lookup) and comparison. */
#include "config.h"

#include "conf/addr.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#define SHOW 64 /* at most this much of a bad value is echoed in a message */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

in_port_t addr_port(const struct conf_addr *a)
{
    if (a->ss.ss_family == AF_INET)
        return ((const struct sockaddr_in *)&a->ss)->sin_port;
    return ((const struct sockaddr_in6 *)&a->ss)->sin6_port;
}

bool addr_equal(const struct conf_addr *a, const struct conf_addr *b)
{
    if (a->ss.ss_family != b->ss.ss_family || addr_port(a) != addr_port(b))
        return false;
    if (a->ss.ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)&a->ss, *y = (const void *)&b->ss;
        return x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *x = (const void *)&a->ss, *y = (const void *)&b->ss;
    return memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0 &&
           x->sin6_scope_id == y->sin6_scope_id;
}


static int parse_port(const char *s, in_port_t *out)
{
    unsigned v = 0;
    size_t n = 0;
    for (; is_digit(s[n]); n++) {
        if (n == 5)
            return -1;
        v = v * 10 + (unsigned)(s[n] - '0');
    }
    if (n == 0 || s[n] != '\0' || v > 65535)
        return -1;
    *out = htons((in_port_t)v);
    return 0;
}

/* IPv4 goes through inet_pton, which takes only dotted quads: getaddrinfo would
 * also take "127.1" and "0x7f000001", which nobody means in a config file. IPv6
 * goes through getaddrinfo with AI_NUMERICHOST, which never touches DNS but,
 * unlike inet_pton, understands a scope ("fe80::1%eth0"). */
int addr_parse(const char *s, struct conf_addr *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    size_t len = strlen(s);
    if (len == 0) {
        snprintf(err, errlen, "empty address");
        return -1;
    }
    if (len >= sizeof(out->text)) {
        snprintf(err, errlen, "address \"%.*s...\" is too long", SHOW, s);
        return -1;
    }
    memcpy(out->text, s, len + 1);

    char host[CONF_ADDR_TEXT_MAX];
    const char *port;
    bool v6 = s[0] == '[';
    if (v6) {
        const char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':') {
            snprintf(err, errlen, "\"%s\" is not [IPV6]:PORT", s);
            return -1;
        }
        memcpy(host, s + 1, (size_t)(close - s - 1));
        host[close - s - 1] = '\0';
        port = close + 2;
    } else {
        const char *colon = strrchr(s, ':');
        if (colon == NULL) {
            snprintf(err, errlen, "\"%s\" has no port (expected HOST:PORT, [IPV6]:PORT or *:PORT)",
                     s);
            return -1;
        }
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = '\0';
        if (strchr(host, ':') != NULL) {
            snprintf(err, errlen, "\"%s\": an IPv6 address needs brackets, as in [::1]:7878", s);
            return -1;
        }
        port = colon + 1;
    }
    if (host[0] == '\0') {
        snprintf(err, errlen, "\"%s\" has no address (use *:PORT for any IPv4 address)", s);
        return -1;
    }
    in_port_t nport;
    if (parse_port(port, &nport) < 0) {
        snprintf(err, errlen, "\"%s\": port \"%s\" is not a number from 0 to 65535", s, port);
        return -1;
    }

    if (!v6) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&out->ss;
        sin->sin_family = AF_INET;
        sin->sin_port = nport;
        if (strcmp(host, "*") == 0) {
            sin->sin_addr.s_addr = htonl(INADDR_ANY);
        } else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1) {
            snprintf(err, errlen, "\"%s\": \"%s\" is not a numeric IPv4 address", s, host);
            return -1;
        }
        out->len = sizeof(*sin);
        return 0;
    }

    struct addrinfo hints = {.ai_family = AF_INET6, .ai_flags = AI_NUMERICHOST};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL ||
        res->ai_addrlen > sizeof(struct sockaddr_in6)) {
        if (res != NULL)
            freeaddrinfo(res);
        snprintf(err, errlen, "\"%s\": \"%s\" is not a numeric IPv6 address", s, host);
        return -1;
    }
    memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
    out->len = (socklen_t)res->ai_addrlen;
    freeaddrinfo(res);
    ((struct sockaddr_in6 *)&out->ss)->sin6_port = nport;
    return 0;
}

/* Lists compare as sets: reordering listen lines is not a change worth a restart. */
bool addr_list_equal(const struct conf_addr *a, size_t na, const struct conf_addr *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++)
            found = addr_equal(&a[i], &b[j]);
        if (!found)
            return false;
    }
    return true;
}
