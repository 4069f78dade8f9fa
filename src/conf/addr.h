/* addr: numeric socket addresses for the listeners: parsed from config text
 * (never a DNS lookup) and compared. Pure functions; any thread. */
#ifndef BLOOMGATE_ADDR_H
#define BLOOMGATE_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define CONF_ADDR_TEXT_MAX 80 /* "[v6%scope]:port" and its NUL fit */

/* A numeric socket address, ready for bind(). */
struct conf_addr {
    struct sockaddr_storage ss;    /* AF_INET or AF_INET6, port set */
    socklen_t len;                 /* bytes of ss that matter, for bind() */
    unsigned line;                 /* config line it came from; 0 for a default */
    char text[CONF_ADDR_TEXT_MAX]; /* as written, for messages: "127.0.0.1:7878" */
};

/* Parse "A.B.C.D:PORT", "[V6]:PORT" or "*:PORT" (any IPv4 address). Numeric
 * addresses only, never a DNS lookup; port 0 to 65535 (0 asks for an ephemeral
 * port). 0, or -1 with the reason in err. */
int addr_parse(const char *s, struct conf_addr *out, char *err, size_t errlen);

/* The port, in network byte order. */
in_port_t addr_port(const struct conf_addr *a);
/* Same family, address, port (and IPv6 scope). */
bool addr_equal(const struct conf_addr *a, const struct conf_addr *b);
/* Lists compared as sets: reordering listen lines is not a change. */
bool addr_list_equal(const struct conf_addr *a, size_t na, const struct conf_addr *b, size_t nb);

#endif
