/* The authorization endpoint's pure part, see authz.h. Any thread. */
#include "config.h"

#include "front/http/authz.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/fname.h"
#include "front/http/httpparse.h"

/* One filter name of the path, cut out at '/', ';' and ',': percent-decoded
 * (so "%2F", "%3B" and "%2C" are bytes of a name, as in any URL) into out,
 * which holds FNAME_MAX bytes, and held to base/fname.h's rule. */
static int take_name(const char *p, size_t len, const char *what, char *out, struct authz_name *nm,
                     char *err, size_t errlen)
{
    char tmp[3 * FNAME_MAX]; /* the longest escaped form of a name */
    long n = len > sizeof(tmp) ? FNAME_MAX + 1 : httpparse_pct_decode(p, len, tmp, false);
    int show = (int)(len > 64 ? 64 : len);
    if (len == 0) {
        snprintf(err, errlen, "an empty %s name in the path", what);
        return -1;
    }
    if (n < 0) {
        snprintf(err, errlen, "a bad %%-escape in the %s name '%.*s'", what, show, p);
        return -1;
    }
    if (n > FNAME_MAX) {
        snprintf(err, errlen, "a %s name longer than %d bytes in the path", what, FNAME_MAX);
        return -1;
    }
    if (!fname_valid(tmp, (size_t)n)) {
        snprintf(err, errlen, "invalid %s name '%.*s': use " FNAME_RULE " (comma-separated)", what,
                 show, p);
        return -1;
    }
    memcpy(out, tmp, (size_t)n);
    nm->p = out;
    nm->len = (size_t)n;
    return 0;
}

int authz_parse_path(const char *rest, size_t len, struct authz_route *rt, char *err, size_t errlen)
{
    memset(rt, 0, sizeof(*rt));
    const char *slash = memchr(rest, '/', len);
    size_t seg = slash ? (size_t)(slash - rest) : len;
    if (slash) {
        rt->below = slash;
        rt->below_len = len - seg;
    }
    const char *semi = memchr(rest, ';', seg);
    size_t list = semi ? (size_t)(semi - rest) : seg;
    if (list == 0) {
        snprintf(err, errlen, "no filter named: use /v1/authz/NAME[,NAME...]");
        return -1;
    }
    size_t i = 0;
    while (i <= list) {
        const char *comma = memchr(rest + i, ',', list - i);
        size_t n = comma ? (size_t)(comma - (rest + i)) : list - i;
        if (rt->n == AUTHZ_MAX_FILTERS) {
            snprintf(err, errlen, "more than %d filters in the path", AUTHZ_MAX_FILTERS);
            return -1;
        }
        if (take_name(rest + i, n, "filter", rt->names[rt->n], &rt->filter[rt->n], err, errlen) !=
            0)
            return -1;
        rt->n++;
        i += n + 1;
    }
    if (semi) {
        static const char key[] = "client=";
        const char *p = semi + 1;
        size_t n = seg - list - 1;
        if (n < sizeof(key) - 1 || memcmp(p, key, sizeof(key) - 1) != 0) {
            snprintf(err, errlen, "unknown parameter ';%.*s' in the path: only ;client=NAME",
                     (int)(n > 64 ? 64 : n), p);
            return -1;
        }
        p += sizeof(key) - 1;
        n -= sizeof(key) - 1;
        if (take_name(p, n, "client filter", rt->names[AUTHZ_MAX_FILTERS], &rt->client, err,
                      errlen) != 0)
            return -1;
    }
    return 0;
}

static bool name_is(const char *p, size_t len, const char *want, size_t wlen)
{
    return len == wlen && strncasecmp(p, want, wlen) == 0;
}

#define NAME_IS(p, len, lit) name_is((p), (len), (lit), sizeof(lit) - 1)

static void note(struct authz_hdr *h, const char *v, size_t vl)
{
    if (h->count++ == 0) {
        h->p = v;
        h->len = vl;
    }
}

/* Any thread. One pass over the header lines; only the names are compared,
 * by length first, so a gateway's usual dozen headers cost little. */
void authz_scan_headers(const char *head, size_t len, struct authz_headers *h)
{
    memset(h, 0, sizeof(*h));
    const char *end = head + len;
    const char *p = memchr(head, '\n', len); /* skip the request line */
    if (!p)
        return;
    p++;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *le = e > p && e[-1] == '\r' ? e - 1 : e;
        if (le == p)
            break; /* the blank line */
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (colon) {
            size_t nlen = (size_t)(colon - p);
            const char *v = colon + 1, *ve = le;
            while (v < ve && (*v == ' ' || *v == '\t'))
                v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            size_t vl = (size_t)(ve - v);
            switch (nlen) {
            case 6:
                if (NAME_IS(p, nlen, "origin"))
                    note(&h->origin, v, vl);
                break;
            case 7:
                if (NAME_IS(p, nlen, "referer"))
                    note(&h->referer, v, vl);
                break;
            case 4:
                if (NAME_IS(p, nlen, "host"))
                    note(&h->host, v, vl);
                break;
            case 9:
                if (NAME_IS(p, nlen, "x-real-ip"))
                    note(&h->real_ip, v, vl);
                break;
            case 14:
                if (NAME_IS(p, nlen, "x-original-url"))
                    note(&h->original_url, v, vl);
                else if (NAME_IS(p, nlen, "x-original-uri"))
                    note(&h->original_uri, v, vl);
                else if (NAME_IS(p, nlen, "sec-fetch-dest"))
                    note(&h->sec_fetch_dest, v, vl);
                break;
            case 15:
                if (NAME_IS(p, nlen, "x-forwarded-uri"))
                    note(&h->forwarded_uri, v, vl);
                else if (NAME_IS(p, nlen, "x-forwarded-for"))
                    note(&h->forwarded_for, v, vl);
                break;
            case 16:
                if (NAME_IS(p, nlen, "x-forwarded-host"))
                    note(&h->forwarded_host, v, vl);
                break;
            case 17:
                if (NAME_IS(p, nlen, "x-forwarded-proto"))
                    note(&h->forwarded_proto, v, vl);
                else if (NAME_IS(p, nlen, "x-original-method"))
                    note(&h->original_method, v, vl);
                break;
            case 18:
                if (NAME_IS(p, nlen, "x-forwarded-method"))
                    note(&h->forwarded_method, v, vl);
                break;
            default:
                break;
            }
        }
        if (!nl)
            break;
        p = nl + 1;
    }
}

/* The first element of a comma-separated value, trimmed (proxies append
 * theirs: the first is what the client-facing proxy wrote). */
static void first_element(const char *v, size_t vl, const char **out, size_t *outlen)
{
    const char *c = memchr(v, ',', vl);
    size_t n = c ? (size_t)(c - v) : vl;
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    *out = v;
    *outlen = n;
}

static int once(const struct authz_hdr *h, const char *name, char *err, size_t errlen)
{
    if (h->count > 1) {
        snprintf(err, errlen, "%s given %u times: which URL is meant is ambiguous", name, h->count);
        return -1;
    }
    return 0;
}

/* A host as a gateway forwards it: a name or address with an optional port.
 * Refused are the bytes that would change what the URL built around it
 * means (a '/' or '?' ends the authority, '@' makes the rest userinfo, '#'
 * starts a fragment, '\' is a '/' to browsers), and white space and
 * controls, which no host has. */
static int check_host(const char *p, size_t len, const char *from, char *err, size_t errlen)
{
    if (len == 0) {
        snprintf(err, errlen, "%s is empty", from);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c <= ' ' || c == 0x7f || c == '/' || c == '?' || c == '#' || c == '@' || c == '\\') {
            int shown = len > 64 ? 64 : (int)len;
            if (c > ' ' && c != 0x7f)
                snprintf(err, errlen, "%s '%.*s' is not a host (it has '%c')", from, shown, p,
                         (char)c);
            else
                snprintf(err, errlen, "%s is not a host (it has white space or a control byte)",
                         from);
            return -1;
        }
    }
    return 0;
}

/* Append s[0..n) at *at in out; false if it does not fit. */
static bool append(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
    if (cap - *at < n)
        return false;
    memcpy(out + *at, s, n);
    *at += n;
    return true;
}

int authz_derive_url(const struct authz_headers *h, const char *below, size_t below_len,
                     const char *query, size_t query_len, bool has_query, char *out, size_t cap,
                     size_t *outlen, char *err, size_t errlen)
{
    *outlen = 0;
    if (h->original_url.count) {
        if (once(&h->original_url, "X-Original-URL", err, errlen) != 0)
            return -1;
        if (h->original_url.len == 0) {
            snprintf(err, errlen, "X-Original-URL is empty");
            return -1;
        }
        if (h->original_url.len > cap) {
            snprintf(err, errlen, "X-Original-URL is longer than %zu bytes", cap);
            return -1;
        }
        memcpy(out, h->original_url.p, h->original_url.len);
        *outlen = h->original_url.len;
        return AUTHZ_FROM_URL;
    }
    /* The path first: without one there is nothing to judge, whatever the host. */
    const struct authz_hdr *ph = h->original_uri.count    ? &h->original_uri
                                 : h->forwarded_uri.count ? &h->forwarded_uri
                                                          : NULL;
    const char *pname = ph == &h->original_uri ? "X-Original-URI" : "X-Forwarded-Uri";
    enum authz_source src = ph ? AUTHZ_FROM_HEADER : AUTHZ_FROM_PATH;
    if (!ph && below_len == 0) {
        snprintf(err, errlen,
                 "no URL to judge: send X-Original-URL, or Host (or X-Forwarded-Host) with "
                 "X-Original-URI or X-Forwarded-Uri, or put the path below /v1/authz/NAME");
        return -1;
    }
    if (ph) {
        if (once(ph, pname, err, errlen) != 0)
            return -1;
        if (ph->len == 0 || ph->p[0] != '/') {
            snprintf(err, errlen, "%s '%.*s' does not start with '/'", pname,
                     (int)(ph->len > 64 ? 64 : ph->len), ph->p);
            return -1;
        }
    }
    /* The host. */
    const struct authz_hdr *hh = h->forwarded_host.count ? &h->forwarded_host : &h->host;
    const char *hname = hh == &h->forwarded_host ? "X-Forwarded-Host" : "Host";
    if (!hh->count) {
        snprintf(err, errlen, "no host: send X-Forwarded-Host or Host");
        return -1;
    }
    if (once(hh, hname, err, errlen) != 0)
        return -1;
    const char *host;
    size_t host_len;
    first_element(hh->p, hh->len, &host, &host_len);
    if (check_host(host, host_len, hname, err, errlen) != 0)
        return -1;
    /* The scheme: [A-Za-z][A-Za-z0-9+.-]*, lower-cased. */
    char scheme[AUTHZ_SCHEME_MAX];
    size_t scheme_len = 4;
    memcpy(scheme, "http", 4);
    if (h->forwarded_proto.count) {
        if (once(&h->forwarded_proto, "X-Forwarded-Proto", err, errlen) != 0)
            return -1;
        const char *s;
        size_t n;
        first_element(h->forwarded_proto.p, h->forwarded_proto.len, &s, &n);
        bool ok = n > 0 && n <= AUTHZ_SCHEME_MAX;
        for (size_t i = 0; ok && i < n; i++) {
            unsigned char c = (unsigned char)s[i] | (s[i] >= 'A' && s[i] <= 'Z' ? 0x20 : 0);
            ok = (c >= 'a' && c <= 'z') ||
                 (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '.' || c == '-'));
            scheme[i] = (char)c;
        }
        if (!ok) {
            snprintf(err, errlen, "X-Forwarded-Proto '%.*s' is not a scheme",
                     (int)(n > 64 ? 64 : n), s);
            return -1;
        }
        scheme_len = n;
    }
    size_t at = 0;
    bool fit = append(out, cap, &at, scheme, scheme_len) && append(out, cap, &at, "://", 3) &&
               append(out, cap, &at, host, host_len);
    if (ph)
        fit = fit && append(out, cap, &at, ph->p, ph->len);
    else
        fit = fit && append(out, cap, &at, below, below_len) &&
              (!has_query ||
               (append(out, cap, &at, "?", 1) && append(out, cap, &at, query, query_len)));
    if (!fit) {
        snprintf(err, errlen, "the URL is longer than %zu bytes", cap);
        return -1;
    }
    *outlen = at;
    return (int)src;
}

int authz_client_addr(const struct authz_headers *h, const char **p, size_t *len, char *err,
                      size_t errlen)
{
    *p = NULL;
    *len = 0;
    if (h->real_ip.count) {
        if (h->real_ip.count > 1) {
            snprintf(err, errlen, "X-Real-IP given %u times", h->real_ip.count);
            return -1;
        }
        if (h->real_ip.len) {
            *p = h->real_ip.p;
            *len = h->real_ip.len;
            return 1;
        }
    }
    if (h->forwarded_for.count) {
        first_element(h->forwarded_for.p, h->forwarded_for.len, p, len);
        if (*len)
            return 1;
    }
    *p = NULL;
    *len = 0;
    return 0;
}

/* A context header's value if it was given once and is not empty. */
static bool single(const struct authz_hdr *h, const char **p, size_t *len)
{
    if (h->count != 1 || h->len == 0)
        return false;
    *p = h->p;
    *len = h->len;
    return true;
}

void authz_context(const struct authz_headers *h, struct authz_context *c)
{
    memset(c, 0, sizeof(*c));
    single(&h->sec_fetch_dest, &c->dest, &c->dest_len);
    if (!single(&h->referer, &c->from, &c->from_len) &&
        single(&h->origin, &c->from, &c->from_len) && NAME_IS(c->from, c->from_len, "null")) {
        c->from = NULL;
        c->from_len = 0;
    }
    if (!single(&h->original_method, &c->method, &c->method_len))
        single(&h->forwarded_method, &c->method, &c->method_len);
}
