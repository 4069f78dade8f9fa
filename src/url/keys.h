/* url/keys: a filter's key kind applied to a query. Turns one item into the
 * byte strings a lookup probes, most specific first: the item itself for exact
 * keys, the host and its parent domains for host keys, the Safe Browsing
 * expressions for url keys. What CHECK, MCHECK and MATCH call, and
 * `bloomgate check`. Pure, no allocation (libidn2 aside, for a non-ASCII
 * host); any thread; the caller owns the struct keys_query (one per thread). */
#ifndef BLOOMGATE_URL_KEYS_H
#define BLOOMGATE_URL_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "url/canon.h"
#include "url/expr.h"

/* Same values as enum filter_keys (bloom/filter.h), which stores the kind in
 * the filter file; kept apart so liburl needs neither xxHash nor the filter. */
enum keys_kind {
    KEYS_EXACT = 0, /* the item's bytes, as they are */
    KEYS_HOST = 1,  /* a host, a URL or an e-mail address: the host and its parents */
    KEYS_URL = 2,   /* a URL: up to 30 host-suffix x path-prefix expressions */
};
#define KEYS_KIND_COUNT 3

/* The most strings one query probes (url keys: 5 hosts x 6 paths). */
#define KEYS_MAX URL_EXPR_MAX

/* One string to probe. Laid out as struct filter_key, so a caller may hand
 * the array to filter_check_batch as it is (checked where both are seen). */
struct keys_probe {
    const void *data;
    size_t len;
};

/* One query, expanded. p[] points into the item (exact) or into c (host,
 * url): it lives as long as both. About 16 KiB: keep one per thread, never
 * on a small stack. */
struct keys_query {
    enum keys_kind kind;
    size_t n;                      /* probes in p[], 1 to KEYS_MAX */
    struct keys_probe p[KEYS_MAX]; /* most specific first (url/expr.h's order) */
    struct url_exprs x;            /* host, url: what each probe is, for keys_describe */
    struct url_canon c;            /* host, url: the canonical form the probes slice */
};

/* Expand item[0..len) as kind into q. exact takes any bytes (the empty item
 * too); host takes a bare host or IP address, a URL or an e-mail address; url
 * takes a URL, with or without a scheme. 0, or -1 with the reason in err
 * ("bad URL: no host", "bad host: empty host", an over-long input, an unknown
 * kind); q->n is then 0. */
int keys_expand(enum keys_kind kind, const void *item, size_t len, struct keys_query *q, char *err,
                size_t errlen);

/* The first probe present, given present[i] for each probe i: the most
 * specific expression that matched, what MATCH names. q->n if none. */
size_t keys_first_present(const struct keys_query *q, const bool *present);

/* Describe probe i for a log line or a reply: the expression and what it is
 * (`"b.c/1/" (parent domain b.c, directory /1/)`; for exact keys the item,
 * quoted). Writes at most outlen bytes, NUL-terminated; returns what snprintf
 * returns. */
int keys_describe(const struct keys_query *q, size_t i, char *out, size_t outlen);

/* "exact", "host", "url"; "?" out of range. */
const char *keys_kind_name(enum keys_kind kind);
/* The kind named s: 0, or -1 if s names none. */
int keys_kind_parse(const char *s, enum keys_kind *out);

#endif
