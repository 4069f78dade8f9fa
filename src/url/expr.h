/* url/expr: the lookup expressions of a canonical URL or host, the strings a
 * filter of `url` or `host` keys is probed with: Safe Browsing host-suffix x
 * path-prefix expressions for a URL, the host and its parent domains for a
 * host. Pure, no allocation: every expression is a slice of the caller's
 * struct url_canon and lives as long as it does. Any thread. */
#ifndef BLOOMGATE_URL_EXPR_H
#define BLOOMGATE_URL_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "url/canon.h"

/* What the keys of a filter are, and so how a query is expanded. */
enum url_kind {
    URL_KIND_URL, /* "host/path?query" Safe Browsing expressions */
    URL_KIND_HOST /* host names and IP addresses */
};

/* At most 5 hosts x 6 paths for a URL (Safe Browsing's bounds). */
#define URL_EXPR_MAX 30

/* For a host: the host and its parents up to this many labels long. A host of
 * more labels is tried as itself and as its 15 shortest parents ("org",
 * "example.org", ...), never as the parents in between, which no list names. */
#define URL_EXPR_HOST_LABELS 16

/* How an expression's path relates to the URL's (URL_KIND_URL only). */
enum url_expr_path {
    URL_EXPR_PATH_QUERY,  /* the exact path with the query */
    URL_EXPR_PATH_EXACT,  /* the exact path without the query */
    URL_EXPR_PATH_PREFIX, /* a directory prefix: "/", "/1/", ... */
    URL_EXPR_PATH_NONE    /* a host expression */
};

struct url_expr {
    const char *ptr; /* into the struct url_canon the expressions came from */
    size_t len;
    uint8_t host_rank;       /* 0: the exact host; n: the n-th shorter suffix */
    enum url_expr_path path; /* which path form */
};

struct url_exprs {
    size_t n;
    struct url_expr e[URL_EXPR_MAX];
};

/* The Safe Browsing expressions of the canonical URL in c (from url_canon_url):
 * for each of at most 5 hosts (the exact host, then the host formed from its
 * last 5 labels, 4, 3 and 2, never the bare TLD; an IP address only as
 * itself) each of at most 6 paths (the exact path with the query, without it,
 * then "/" and up to 3 more directory prefixes, each with its trailing
 * slash), host-major, duplicates removed. Always at least one. */
void url_expr_url(const struct url_canon *c, struct url_exprs *x);

/* The host expressions of the host in c (from any url_canon_* call): the host,
 * then each parent domain down to the TLD ("a.b.example.org",
 * "b.example.org", "example.org", "org"); an IP address only as itself, an
 * IPv6 URL host without its brackets. See URL_EXPR_HOST_LABELS. */
void url_expr_host(const struct url_canon *c, struct url_exprs *x);

/* Canonicalise a query (a URL for URL_KIND_URL; a URL, an e-mail address or a
 * bare host for URL_KIND_HOST) into c and expand it into x. 0, or -1 with
 * the reason from canonicalisation in err. */
int url_expr_query(enum url_kind kind, struct url_canon *c, const char *q, size_t len,
                   struct url_exprs *x, char *err, size_t errlen);

/* Describe expression i of x for a log line or a reply, such as
 * `"b.c/1/" (parent domain b.c, directory /1/)`. Writes at most outlen bytes,
 * NUL-terminated; returns what snprintf returns. */
int url_expr_describe(const struct url_exprs *x, size_t i, char *out, size_t outlen);

#endif
