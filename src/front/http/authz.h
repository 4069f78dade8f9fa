/* authz: the pure part of the authorization endpoint (/v1/authz/..., for
 * nginx auth_request, Envoy ext_authz, HAProxy's auth-request, Traefik
 * forwardAuth; docs/gateways.md): reading the path's filter list, finding
 * the headers a gateway sets, and deriving from them the URL to judge and
 * the client address. No libevent, no allocation; any thread. Results point
 * into the caller's bytes (or its out buffer, or the route's names) and live as long as they do.
 * The glue that looks the URL up is http_authz.c. */
#ifndef BLOOMGATE_AUTHZ_H
#define BLOOMGATE_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>

#include "base/fname.h"

/* The most filters one authz path may name (the client filter aside). */
#define AUTHZ_MAX_FILTERS 8

/* The longest scheme X-Forwarded-Proto may name (url/canon.h's bound). */
#define AUTHZ_SCHEME_MAX 32

struct authz_name {
    const char *p; /* into the route's names[]; a filter name (base/fname.h) */
    size_t len;
};

/* What the path after "/v1/authz/" says: "NAME[,NAME...][;client=NAME][/below]".
 * The names point into the struct's own names[]: use it where it was filled. */
struct authz_route {
    struct authz_name filter[AUTHZ_MAX_FILTERS]; /* in the order given */
    size_t n;                                    /* 1 to AUTHZ_MAX_FILTERS */
    struct authz_name client;                    /* ;client=NAME (len 0: not given) */
    const char *below;                           /* into the path: below the segment, from '/' */
    size_t below_len;                            /* 0: nothing below */
    char names[AUTHZ_MAX_FILTERS + 1][FNAME_MAX]; /* the names decoded; the client's last */
};

/* Parse rest[0..len), the request's path after "/v1/authz/" (no query).
 * The segment is cut at ';' and ',' before each name is percent-decoded.
 * 0, or -1 with the reason in err (no filter, an empty or invalid name, a
 * bad %-escape, more than AUTHZ_MAX_FILTERS, an unknown ';' parameter). */
int authz_parse_path(const char *rest, size_t len, struct authz_route *rt, char *err,
                     size_t errlen);

/* One header's value as sent (trimmed by the parser), NULL if absent. */
struct authz_hdr {
    const char *p;
    size_t len;
    unsigned count; /* how many times it was given */
};

/* The headers a gateway sets to say what it is asking about. */
struct authz_headers {
    struct authz_hdr original_url;    /* X-Original-URL: the whole URL */
    struct authz_hdr original_uri;    /* X-Original-URI: path?query (nginx $request_uri) */
    struct authz_hdr forwarded_uri;   /* X-Forwarded-Uri: path?query (Traefik) */
    struct authz_hdr forwarded_proto; /* X-Forwarded-Proto: the scheme */
    struct authz_hdr forwarded_host;  /* X-Forwarded-Host */
    struct authz_hdr host;            /* Host */
    struct authz_hdr real_ip;         /* X-Real-IP */
    struct authz_hdr forwarded_for;   /* X-Forwarded-For (first field given) */
    /* The request's context, for an adblock filter: the browser's own
     * headers, which gateways pass on. */
    struct authz_hdr sec_fetch_dest;   /* Sec-Fetch-Dest: the request's type */
    struct authz_hdr referer;          /* Referer: the page */
    struct authz_hdr origin;           /* Origin: the page's origin */
    struct authz_hdr original_method;  /* X-Original-Method (nginx, HAProxy: set by the config) */
    struct authz_hdr forwarded_method; /* X-Forwarded-Method (Traefik) */
};

/* Find those headers in a request head the HTTP parser has accepted
 * (head[0..len): the request line, the header lines, the blank line; CRLF
 * or bare LF). Whitespace around a value is trimmed. Never fails: a line
 * without a colon is skipped. */
void authz_scan_headers(const char *head, size_t len, struct authz_headers *h);

/* Where the URL came from. */
enum authz_source {
    AUTHZ_FROM_URL,    /* X-Original-URL */
    AUTHZ_FROM_HEADER, /* scheme, host and X-Original-URI / X-Forwarded-Uri */
    AUTHZ_FROM_PATH,   /* scheme, host and the path below the prefix (Envoy) */
};

/* The URL to judge, written to out (room for cap bytes; not NUL-terminated),
 * in this order: X-Original-URL if present; else the scheme from
 * X-Forwarded-Proto (its first element, lower-cased; default http), "://",
 * the host from X-Forwarded-Host (its first element) or Host, and the path
 * from X-Original-URI, else X-Forwarded-Uri, else below[0..below_len) with
 * "?query" when the request had a query (has_query): Envoy appends the
 * original path, query included, to the prefix. The URL is not canonicalised
 * here: the filter's key kind does that (url/keys.c). The source, or -1 with
 * the reason in err: no URL at all, an empty X-Original-URL, a header that
 * decides the URL given twice, no host, a host with '/', '?', '#', '@', '\',
 * white space or a control byte in it, a bad scheme, a path not starting
 * with '/', or more than cap bytes. */
int authz_derive_url(const struct authz_headers *h, const char *below, size_t below_len,
                     const char *query, size_t query_len, bool has_query, char *out, size_t cap,
                     size_t *outlen, char *err, size_t errlen);

/* The request's context as the gateway's headers give it, raw (the glue
 * maps the words: adblock_fetch_dest_parse, adblock_method_parse). */
struct authz_context {
    const char *dest; /* Sec-Fetch-Dest (NULL: none) */
    size_t dest_len;
    const char *from; /* the page: Referer, else Origin (NULL: none) */
    size_t from_len;
    const char *method; /* X-Original-Method, else X-Forwarded-Method (NULL: none) */
    size_t method_len;
};

/* Pick the context from the headers. A header given more than once, or
 * empty, counts as absent (the context only narrows which rules apply: a
 * request without it is judged as a top-level document, never refused for
 * it); an Origin of "null" (an opaque origin) names no page. Never fails. */
void authz_context(const struct authz_headers *h, struct authz_context *c);

/* The client address: X-Real-IP, else the first element of X-Forwarded-For
 * (the address the first proxy saw), trimmed. 1 with *p, *len set; 0 if
 * neither header gives one; -1 with the reason in err if X-Real-IP was
 * given twice. */
int authz_client_addr(const struct authz_headers *h, const char **p, size_t *len, char *err,
                      size_t errlen);

#endif
