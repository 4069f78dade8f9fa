/* Lookup expressions: pure functions, see expr.h. A canonical URL is laid out
 * "scheme://host/path?query", so every Safe Browsing expression (a suffix of
 * the host followed by a prefix of path?query) is one contiguous slice of it:
 * expansion only computes offsets, it copies nothing. */
#include "config.h"

#include "url/expr.h"

#include <stdio.h>
#include <string.h>

/* Safe Browsing's bounds: the exact host and 4 more; 2 exact paths and 4
 * prefixes. */
#define HOSTS_MAX 5
#define SUFFIX_LABELS 5
#define PREFIXES_MAX 4
_Static_assert(SUFFIX_LABELS <= URL_CANON_DOTS && PREFIXES_MAX == URL_CANON_SLASHES,
               "the fast path notes enough dots and slashes for the bounds");

/* The start of each suffix of h[0..n) of min_labels to max_labels labels
 * (max_labels <= URL_EXPR_HOST_LABELS), the longest first; returns how many,
 * and the host's label count in *labels. One scan, from the right. */
static size_t suffixes(const char *h, size_t n, size_t min_labels, size_t max_labels,
                       const char **out, size_t *labels)
{
    const char *st[URL_EXPR_HOST_LABELS]; /* st[k - 1]: the suffix of k labels */
    size_t dots = 0;
    for (size_t i = n; i > 0; i--) {
        if (h[i - 1] != '.')
            continue;
        if (dots < max_labels)
            st[dots] = h + i;
        dots++;
    }
    if (dots < max_labels)
        st[dots] = h;
    *labels = dots + 1;
    size_t found = 0;
    size_t top = *labels < max_labels ? *labels : max_labels;
    for (size_t k = top; k >= min_labels && k > 0; k--)
        out[found++] = st[k - 1];
    return found;
}

void url_expr_url(const struct url_canon *c, struct url_exprs *x)
{
    const char *url = c->url;
    const char *host = url + c->host_off;

    /* The host forms: the exact host, then its last 5, 4, 3, 2 labels. */
    const char *hosts[HOSTS_MAX];
    size_t nh = 1;
    hosts[0] = host;
    if (c->marked) {
        /* The fast path noted the last dots: the suffix of k labels starts
         * after dot host_dots - k. */
        size_t labels = c->host_dots + 1;
        size_t top = labels < SUFFIX_LABELS ? labels : SUFFIX_LABELS;
        for (size_t k = top; k >= 2; k--)
            if (k != labels)
                hosts[nh++] = url + c->dot[(c->host_dots - k) % URL_CANON_DOTS] + 1;
    } else if (c->host_type == URL_HOST_NAME) {
        const char *suf[SUFFIX_LABELS];
        size_t labels;
        size_t ns = suffixes(host, c->host_len, 2, SUFFIX_LABELS, suf, &labels);
        for (size_t i = 0; i < ns; i++)
            if (suf[i] != host)
                hosts[nh++] = suf[i];
    }

    /* The path forms, as end offsets into url[]: with the query, without it,
     * then each directory prefix ("/", "/1/", ...), duplicates dropped. */
    size_t ends[2 + PREFIXES_MAX];
    enum url_expr_path kinds[2 + PREFIXES_MAX];
    size_t np = 0;
    size_t path_end = c->path_off + c->path_len;
    if (c->has_query) {
        ends[np] = c->len;
        kinds[np++] = URL_EXPR_PATH_QUERY;
    }
    ends[np] = path_end;
    kinds[np++] = URL_EXPR_PATH_EXACT;
    if (c->marked) { /* the fast path noted the first slashes */
        for (size_t j = 0; j < c->path_slashes; j++) {
            size_t i = c->slash[j];
            if (i + 1 == path_end)
                continue; /* the exact path is this directory */
            ends[np] = i + 1;
            kinds[np++] = URL_EXPR_PATH_PREFIX;
        }
    } else {
        size_t prefixes = 0;
        for (size_t i = c->path_off; i < path_end && prefixes < PREFIXES_MAX; i++) {
            if (url[i] != '/')
                continue;
            prefixes++;
            if (i + 1 == path_end)
                continue; /* the exact path is this directory */
            ends[np] = i + 1;
            kinds[np++] = URL_EXPR_PATH_PREFIX;
        }
    }

    x->n = 0;
    for (size_t h = 0; h < nh; h++)
        for (size_t p = 0; p < np; p++) {
            struct url_expr *e = &x->e[x->n++];
            e->ptr = hosts[h];
            e->len = (size_t)(url + ends[p] - hosts[h]);
            e->host_rank = (uint8_t)h;
            e->path = kinds[p];
        }
}

void url_expr_host(const struct url_canon *c, struct url_exprs *x)
{
    const char *host = c->url + c->host_off;
    size_t n = c->host_len;
    if (n >= 2 && host[0] == '[') { /* an IPv6 URL host: the address alone */
        host++;
        n -= 2;
    }
    x->n = 0;
    if (c->host_type != URL_HOST_NAME) {
        x->e[0] = (struct url_expr){host, n, 0, URL_EXPR_PATH_NONE};
        x->n = 1;
        return;
    }
    size_t labels = 1;
    for (size_t i = 0; i < n; i++)
        labels += host[i] == '.';
    const char *suf[URL_EXPR_HOST_LABELS];
    size_t first = 0; /* the rank of suf[0] */
    if (labels > URL_EXPR_HOST_LABELS) {
        /* Too many labels: the host itself, then the shortest parents. */
        x->e[x->n++] = (struct url_expr){host, n, 0, URL_EXPR_PATH_NONE};
        first = labels - (URL_EXPR_HOST_LABELS - 1);
    }
    size_t ns = suffixes(host, n, 1, URL_EXPR_HOST_LABELS - (first ? 1 : 0), suf, &labels);
    for (size_t i = 0; i < ns; i++)
        x->e[x->n++] = (struct url_expr){suf[i], n - (size_t)(suf[i] - host), (uint8_t)(first + i),
                                         URL_EXPR_PATH_NONE};
}

int url_expr_query(enum url_kind kind, struct url_canon *c, const char *q, size_t len,
                   struct url_exprs *x, char *err, size_t errlen)
{
    if (kind == URL_KIND_URL) {
        if (url_canon_url(c, q, len, err, errlen) < 0)
            return -1;
        url_expr_url(c, x);
        return 0;
    }
    if (url_canon_any_host(c, q, len, err, errlen) < 0)
        return -1;
    url_expr_host(c, x);
    return 0;
}

int url_expr_describe(const struct url_exprs *x, size_t i, char *out, size_t outlen)
{
    if (i >= x->n)
        return snprintf(out, outlen, "(no expression %zu)", i);
    const struct url_expr *e = &x->e[i];
    int len = e->len > 1024 ? 1024 : (int)e->len;
    if (e->path == URL_EXPR_PATH_NONE)
        return snprintf(out, outlen, "\"%.*s\" (%s)", len, e->ptr,
                        e->host_rank ? "parent domain" : "exact host");
    const char *slash = memchr(e->ptr, '/', e->len);
    int hl = slash ? (int)(slash - e->ptr) : len;
    const char *what = e->path == URL_EXPR_PATH_QUERY   ? "exact path and query"
                       : e->path == URL_EXPR_PATH_EXACT ? "exact path"
                                                        : "directory";
    if (e->path == URL_EXPR_PATH_PREFIX)
        return snprintf(out, outlen, "\"%.*s\" (%s %.*s, %s %.*s)", len, e->ptr,
                        e->host_rank ? "parent domain" : "host", hl, e->ptr, what, len - hl,
                        e->ptr + hl);
    return snprintf(out, outlen, "\"%.*s\" (%s %.*s, %s)", len, e->ptr,
                    e->host_rank ? "parent domain" : "host", hl, e->ptr, what);
}
