/* libFuzzer harness for url/canon and url/expr: every input is canonicalised
 * as a URL, as a bare host, as an e-mail address and as "any host", and the
 * results expanded. Checks the invariants the rest of bloomgate relies on:
 * bounded output, well-formed escapes, parts that tile the canonical URL,
 * idempotence (canon(canon(x)) == canon(x)), at most 30 distinct expressions
 * inside the canonical URL, a list key and a query meeting on the same bytes,
 * the one-pass unescape equal to the naive loop, and url_canon_url's fast
 * path equal to the general steps (its expressions too). Build: `make fuzz`. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url/expr.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_url: %s:%d: %s\n", __FILE__, __LINE__, #cond);                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static struct url_canon c1, c2;
static struct url_exprs x2;
static char err[256];

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Whole passes until nothing changes: the definition url_unescape must meet. */
static size_t naive_unescape(char *b, size_t n)
{
    for (bool changed = true; changed;) {
        changed = false;
        size_t o = 0;
        for (size_t i = 0; i < n;) {
            if (b[i] == '%' && i + 2 < n && hexval(b[i + 1]) >= 0 && hexval(b[i + 2]) >= 0) {
                b[o++] = (char)(hexval(b[i + 1]) << 4 | hexval(b[i + 2]));
                i += 3;
                changed = true;
            } else {
                b[o++] = b[i++];
            }
        }
        n = o;
    }
    return n;
}

/* What the escaping step guarantees of any canonical text. */
static void check_escaped(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        CHECK(ch > 0x20 && ch < 0x7f && ch != '#');
        if (ch == '%') {
            CHECK(i + 2 < n);
            CHECK(s[i + 1] && strchr("0123456789ABCDEF", s[i + 1]));
            CHECK(s[i + 2] && strchr("0123456789ABCDEF", s[i + 2]));
        }
    }
}

static void check_url(const struct url_canon *c)
{
    CHECK(c->len <= URL_CANON_MAX && strlen(c->url) == c->len);
    check_escaped(c->url, c->len);
    CHECK(c->scheme_len > 0 && c->scheme_len <= URL_SCHEME_MAX);
    CHECK(!memcmp(c->url + c->scheme_len, "://", 3));
    CHECK(c->host_off == c->scheme_len + 3 && c->host_len > 0);
    CHECK(c->host_len <= 3 * URL_HOST_MAX);
    CHECK(c->path_off == c->host_off + c->host_len && c->url[c->path_off] == '/');
    if (c->has_query) {
        CHECK(c->url[c->query_off - 1] == '?' && c->query_off == c->path_off + c->path_len + 1);
        CHECK(c->query_off + c->query_len == c->len);
    } else {
        CHECK(c->path_off + c->path_len == c->len);
    }
    CHECK(!memchr(c->url + c->path_off, '?', c->path_len));
    CHECK(!memmem(c->url + c->path_off, c->path_len, "//", 2));
    CHECK(!memmem(c->url + c->path_off, c->path_len, "/./", 3));
    CHECK(!memmem(c->url + c->path_off, c->path_len, "/../", 4));
    const char *h = c->url + c->host_off;
    CHECK(h[0] != '.' && h[c->host_len - 1] != '.' && !memmem(h, c->host_len, "..", 2));
    for (size_t i = 0; i < c->host_len; i++) {
        if (h[i] == '%')
            i += 2; /* the upper-case hex of an escape */
        else
            CHECK(!(h[i] >= 'A' && h[i] <= 'Z'));
    }
}

static void check_exprs(const struct url_canon *c, const struct url_exprs *x, size_t max)
{
    CHECK(x->n >= 1 && x->n <= max);
    char d[2048];
    for (size_t i = 0; i < x->n; i++) {
        const struct url_expr *e = &x->e[i];
        CHECK(e->len > 0 && e->ptr >= c->url && e->ptr + e->len <= c->url + c->len);
        for (size_t j = 0; j < i; j++)
            CHECK(e->len != x->e[j].len || memcmp(e->ptr, x->e[j].ptr, e->len));
        CHECK(url_expr_describe(x, i, d, sizeof(d)) > 0 && strlen(d) < sizeof(d));
    }
}

static bool same_canon(const struct url_canon *a, const struct url_canon *b)
{
    return a->len == b->len && !memcmp(a->url, b->url, a->len + 1) &&
           a->scheme_len == b->scheme_len && a->host_off == b->host_off &&
           a->host_len == b->host_len && a->path_off == b->path_off &&
           a->path_len == b->path_len && a->query_off == b->query_off &&
           a->query_len == b->query_len && a->has_query == b->has_query &&
           a->host_type == b->host_type;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    struct url_exprs x;

    /* The one-pass unescape against the definition (bounded: the naive loop
     * is quadratic). */
    if (size <= 1024) {
        static char a[1024], b[1024];
        memcpy(a, in, size);
        memcpy(b, in, size);
        size_t na = url_unescape(a, size), nb = naive_unescape(b, size);
        CHECK(na == nb && !memcmp(a, b, na));
    }

    /* The fast path and the general steps agree on every input. */
    int rc = url_canon_url(&c1, in, size, err, sizeof(err));
    CHECK(url_canon_url_general(&c2, in, size, err, sizeof(err)) == rc);
    if (rc == 0) {
        CHECK(same_canon(&c1, &c2));
        /* The expressions from the fast path's notes (dots, slashes) equal
         * those of the scan the general path's result gets. */
        CHECK(!c2.marked);
        url_expr_url(&c1, &x);
        url_expr_url(&c2, &x2);
        CHECK(x.n == x2.n);
        for (size_t i = 0; i < x.n; i++)
            CHECK(x.e[i].len == x2.e[i].len && x.e[i].ptr - c1.url == x2.e[i].ptr - c2.url &&
                  x.e[i].host_rank == x2.e[i].host_rank && x.e[i].path == x2.e[i].path);
    }

    if (rc == 0) {
        check_url(&c1);
        /* Idempotent. */
        CHECK(url_canon_url(&c2, c1.url, c1.len, err, sizeof(err)) == 0);
        CHECK(c2.len == c1.len && !memcmp(c1.url, c2.url, c1.len));
        CHECK(c2.host_off == c1.host_off && c2.path_off == c1.path_off &&
              c2.host_type == c1.host_type && c2.has_query == c1.has_query);
        url_expr_url(&c1, &x);
        check_exprs(&c1, &x, URL_EXPR_MAX);
        /* The exact expression, written in a list without a scheme, is the
         * key a query for this URL probes. */
        const char *exact = c1.url + c1.host_off;
        size_t exact_len = c1.len - c1.host_off;
        CHECK(url_canon_url(&c2, exact, exact_len, err, sizeof(err)) == 0);
        CHECK(c2.len - c2.host_off == exact_len && !memcmp(c2.url + c2.host_off, exact, exact_len));
        url_expr_host(&c1, &x);
        check_exprs(&c1, &x, URL_EXPR_HOST_LABELS);
        /* The host of a canonical URL is a canonical bare host. */
        CHECK(url_canon_host(&c2, x.e[0].ptr, x.e[0].len, err, sizeof(err)) == 0);
        CHECK(c2.len == x.e[0].len && !memcmp(c2.url, x.e[0].ptr, c2.len));
    } else {
        CHECK(err[0] != 0);
    }

    if (url_canon_host(&c1, in, size, err, sizeof(err)) == 0) {
        CHECK(c1.len == c1.host_len && c1.host_off == 0 && strlen(c1.url) == c1.len);
        CHECK(c1.len <= 3 * URL_HOST_MAX);
        check_escaped(c1.url, c1.len);
        CHECK(url_canon_host(&c2, c1.url, c1.len, err, sizeof(err)) == 0);
        CHECK(c2.len == c1.len && !memcmp(c1.url, c2.url, c1.len));
        url_expr_host(&c1, &x);
        check_exprs(&c1, &x, URL_EXPR_HOST_LABELS);
    }

    if (url_canon_email(&c1, in, size, err, sizeof(err)) == 0) {
        CHECK(c1.len == c1.host_len && c1.len <= 3 * URL_HOST_MAX);
        CHECK(url_canon_host(&c2, c1.url, c1.len, err, sizeof(err)) == 0);
        CHECK(c2.len == c1.len && !memcmp(c1.url, c2.url, c1.len));
    }

    for (int kind = 0; kind < 2; kind++)
        if (url_expr_query((enum url_kind)kind, &c1, in, size, &x, err, sizeof(err)) == 0)
            check_exprs(&c1, &x, kind == URL_KIND_URL ? URL_EXPR_MAX : URL_EXPR_HOST_LABELS);
    return 0;
}
