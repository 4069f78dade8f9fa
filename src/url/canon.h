/* url/canon: Safe Browsing (v4 "URLs and Hashing") canonicalisation of URLs, and
 * the same host rules for bare host names, IP addresses and e-mail addresses.
 * Pure functions over bytes: no globals, no locks, no allocation except inside
 * libidn2 for a host that has non-ASCII bytes. Any thread; the caller owns the
 * struct url_canon (one per thread is enough) and the results point into it. */
#ifndef BLOOMGATE_URL_CANON_H
#define BLOOMGATE_URL_CANON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest input accepted and the longest canonical URL produced, in bytes.
 * One bound for both keeps canonicalisation idempotent: every canonical URL is
 * itself an acceptable input. A URL whose canonical form (escapes included)
 * would be longer is an error, not a truncation. */
#define URL_CANON_MAX 8192

/* The longest host, in bytes, after dot clean-up, IDN conversion and IP
 * normalisation but before percent-escaping (DNS's limit, RFC 1035). */
#define URL_HOST_MAX 253

/* The dots and slashes the fast path notes for url/expr.c: enough for the
 * last 5 host labels and 4 path prefixes (Safe Browsing's bounds). */
#define URL_CANON_DOTS 5
#define URL_CANON_SLASHES 4

/* The longest scheme accepted ("http", "https", "ftp", ... are far shorter). */
#define URL_SCHEME_MAX 32

enum url_host_type {
    URL_HOST_NAME, /* a name (possibly punycode, possibly with escaped bytes) */
    URL_HOST_IPV4, /* dotted decimal a.b.c.d */
    URL_HOST_IPV6  /* RFC 5952 text; in a URL inside brackets */
};

/* A canonical URL or host and where its parts are. Offsets index url[]; the
 * parts are percent-escaped exactly as they appear in url[]. */
struct url_canon {
    char url[URL_CANON_MAX + 1]; /* the canonical form, NUL-terminated */
    size_t len;                  /* strlen(url) */
    size_t scheme_len;           /* url[0..scheme_len): "http"; 0 for a bare host */
    size_t host_off, host_len;   /* the host; an IPv6 URL host keeps its brackets */
    size_t path_off, path_len;   /* from the '/' after the host to '?' or the end */
    size_t query_off, query_len; /* after the '?' (has_query false: no '?') */
    bool has_query;              /* a '?' was present, even with nothing after it */
    enum url_host_type host_type;
    /* Left by the fast path of url_canon_url for url_expr_url, which then
     * need not scan the host and the path again (marked false: it scans).
     * dot[i % URL_CANON_DOTS] is the offset in url[] of the host's dot i,
     * counting from the left, for its last URL_CANON_DOTS dots (host_dots in
     * all); slash[] the offsets of the path's first path_slashes slashes. */
    bool marked;
    unsigned host_dots, path_slashes;
    uint16_t dot[URL_CANON_DOTS], slash[URL_CANON_SLASHES];
    char work[URL_CANON_MAX]; /* scratch: the unescaped input */
};

/* Canonicalise the URL in[0..len) as Safe Browsing v4 specifies: strip tab, CR
 * and LF and the surrounding white space, drop the fragment, percent-unescape
 * until stable, default the scheme to http, drop user:password and the port,
 * clean up the host (dots, IPv4 in any legal spelling, IPv6, lower case, IDN to
 * punycode) and the path (dot segments, repeated slashes), keep the query, and
 * escape bytes <= 0x20, >= 0x7f, '#' and '%' as %XX. Returns 0, or -1 with the
 * reason in err (too long, no host, bad port, bad IPv6 literal, a scheme
 * without "//" such as mailto:, ...). canon(canon(x)) == canon(x). */
int url_canon_url(struct url_canon *c, const char *in, size_t len, char *err, size_t errlen);

/* The same result by the general steps alone, never the fast path that
 * url_canon_url takes for URLs that need only lower-casing and a port
 * dropped. For tests and the fuzz harness, which check that both agree. */
int url_canon_url_general(struct url_canon *c, const char *in, size_t len, char *err,
                          size_t errlen);

/* Canonicalise a bare host name or IP address: the host rules above, with an
 * IPv6 address written without brackets (brackets and a ":port" are accepted
 * and dropped on input). url[] holds the host alone. */
int url_canon_host(struct url_canon *c, const char *in, size_t len, char *err, size_t errlen);

/* Canonicalise the host of an e-mail address: the part after the last '@'
 * (a trailing '>' of "<user@host>" is dropped). url[] holds the host alone. */
int url_canon_email(struct url_canon *c, const char *in, size_t len, char *err, size_t errlen);

/* The host of whatever a client may send where a host is expected: a URL (it
 * has "://", or a '/' or '?' after the host), an e-mail address (it has '@'),
 * or a bare host. url[] holds the canonical URL for a URL, the host alone
 * otherwise; either way host_off/host_len name the host. */
int url_canon_any_host(struct url_canon *c, const char *in, size_t len, char *err, size_t errlen);

/* Percent-unescape buf[0..len) in place until no %XX is left, in one pass, and
 * return the new length. The same result as unescaping whole passes until
 * nothing changes (each decoded byte is rechecked with the two bytes before
 * it), without the quadratic cost of "%2525252525...". Exposed for the fuzzer,
 * which checks it against the naive loop. */
size_t url_unescape(char *buf, size_t len);

#endif
