/* A key kind applied to a query: pure functions, see keys.h. The work is in
 * url/canon.c and url/expr.c; this adds the exact kind, which must cost
 * nothing (one probe pointing at the item, no copy, no scan), and one shape
 * for all three that a caller can hand to a batched filter lookup. */
#include "config.h"

#include "url/keys.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[KEYS_KIND_COUNT] = {"exact", "host", "url"};

const char *keys_kind_name(enum keys_kind kind)
{
    return (unsigned)kind < KEYS_KIND_COUNT ? kind_names[kind] : "?";
}

int keys_kind_parse(const char *s, enum keys_kind *out)
{
    for (unsigned i = 0; i < KEYS_KIND_COUNT; i++)
        if (strcmp(s, kind_names[i]) == 0) {
            *out = (enum keys_kind)i;
            return 0;
        }
    return -1;
}

int keys_expand(enum keys_kind kind, const void *item, size_t len, struct keys_query *q, char *err,
                size_t errlen)
{
    q->kind = kind;
    q->n = 0;
    q->x.n = 0;
    if (kind == KEYS_EXACT) {
        q->p[0] = (struct keys_probe){item, len};
        q->n = 1;
        return 0;
    }
    if (kind != KEYS_HOST && kind != KEYS_URL) {
        snprintf(err, errlen, "unknown key kind %u", (unsigned)kind);
        return -1;
    }
    char why[200];
    enum url_kind uk = kind == KEYS_URL ? URL_KIND_URL : URL_KIND_HOST;
    if (url_expr_query(uk, &q->c, item, len, &q->x, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "bad %s: %s", kind == KEYS_URL ? "URL" : "host", why);
        q->x.n = 0;
        return -1;
    }
    for (size_t i = 0; i < q->x.n; i++)
        q->p[i] = (struct keys_probe){q->x.e[i].ptr, q->x.e[i].len};
    q->n = q->x.n;
    return 0;
}

size_t keys_first_present(const struct keys_query *q, const bool *present)
{
    for (size_t i = 0; i < q->n; i++)
        if (present[i])
            return i;
    return q->n;
}

int keys_describe(const struct keys_query *q, size_t i, char *out, size_t outlen)
{
    if (i >= q->n)
        return snprintf(out, outlen, "(no probe %zu)", i);
    if (q->kind == KEYS_EXACT) {
        int len = q->p[0].len > 1024 ? 1024 : (int)q->p[0].len;
        return snprintf(out, outlen, "\"%.*s\" (exact item)", len, (const char *)q->p[0].data);
    }
    return url_expr_describe(&q->x, i, out, outlen);
}
