/* `bloomgate build --exact`, see build_exact.h. */
#include "config.h"

#include "tool/build_exact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/format.h"
#include "exact/exact.h"
#include "exact/ref.h"
#include "store/xtable.h"

int build_exact_path(const char *output, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s.exact", output);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

struct exact_builder *build_exact_begin(const struct build_opts *o, char *err, size_t errlen)
{
    char path[4096], why[512];
    if (build_exact_path(o->output, path, sizeof(path)) != 0) {
        snprintf(err, errlen, "%s: the path is too long for its exact table", o->output);
        return NULL;
    }
    struct exact_build_opts xo = {
        .path = path,
        .kind = o->exact,
        .mem_bytes = o->exact_mem,
        .threads = o->threads,
    };
    if (exact_seed_random(&xo.seed, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "a seed for the exact table: %s", why);
        return NULL;
    }
    struct exact_builder *xb = exact_builder_new(&xo, why, sizeof(why));
    if (!xb)
        snprintf(err, errlen, "%s: %s", path, why);
    return xb;
}

int build_exact_flush(struct build_xacc *a, struct exact_builder *xb, char *err, size_t errlen)
{
    if (a->n == 0)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        a->ptrs[i] = a->bytes + a->offs[i];
    int rc = exact_builder_add(xb, a->ptrs, a->lens, a->n, err, errlen);
    a->n = 0;
    a->used = 0;
    return rc;
}

int build_exact_put(struct build_xacc *a, struct exact_builder *xb, const void *key, size_t len,
                    char *err, size_t errlen)
{
    if (len > EXACT_MAX_KEY) {
        snprintf(err, errlen, "a key of %zu bytes is longer than the exact table takes (%u)", len,
                 EXACT_MAX_KEY);
        return -1;
    }
    if (a->cap - a->used < len) {
        size_t cap = a->cap ? a->cap : 1 << 16;
        while (cap - a->used < len)
            cap *= 2;
        char *nb = realloc(a->bytes, cap);
        if (!nb) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        a->bytes = nb;
        a->cap = cap;
    }
    memcpy(a->bytes + a->used, key, len);
    a->offs[a->n] = a->used;
    a->lens[a->n] = len;
    a->used += len;
    if (++a->n == BUILD_EXACT_BATCH)
        return build_exact_flush(a, xb, err, errlen);
    return 0;
}

void build_exact_acc_free(struct build_xacc *a)
{
    free(a->bytes);
    a->bytes = NULL;
    a->used = a->cap = a->n = 0;
}

int build_exact_commit(const struct build_opts *o, struct exact_builder *xb, struct filter *f,
                       unsigned threads, struct build_result *res, char *err, size_t errlen)
{
    char path[4096], why[1024];
    struct exact_build_stats st;
    if (build_exact_path(o->output, path, sizeof(path)) != 0 ||
        exact_builder_finish(xb, &st, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    /* The checksum the filter names is read back from what was written. */
    struct exact_table *t = exact_table_open(path, why, sizeof(why));
    if (!t) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    struct exact_info xi;
    exact_table_info(t, &xi);
    exact_table_close(t);
    struct exact_ref ref = {.kind = xi.kind, .count = xi.count, .checksum = xi.checksum};
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    size_t nl = strlen(base);
    unsigned char body[EXACT_REF_HEAD + EXACT_REF_NAME_MAX];
    size_t len = 0;
    if (nl <= EXACT_REF_NAME_MAX) {
        memcpy(ref.name, base, nl + 1);
        len = exact_ref_encode(&ref, body, sizeof(body));
    }
    if (len == 0) {
        snprintf(err, errlen, "%s: the exact table's file name is longer than %u bytes", path,
                 EXACT_REF_NAME_MAX);
        return -1;
    }
    res->exact_count = xi.count;
    res->exact_bytes = xi.file_bytes;
    res->exact_runs = st.runs;
    return format_write_section(f, o->output, threads, FORMAT_SECTION_EXACT, body, len, err,
                                errlen);
}

json_t *build_exact_info_json(const char *path, const struct format_info *fi, char *err,
                              size_t errlen)
{
    struct exact_ref ref;
    struct exact_table *t = xtable_open(path, fi, &ref, err, errlen);
    if (!t)
        return NULL;
    struct exact_info xi;
    exact_table_info(t, &xi);
    char sum[17];
    snprintf(sum, sizeof(sum), "%016llx", (unsigned long long)xi.checksum);
    json_t *x = json_object();
    json_object_set_new(x, "file", json_string(exact_table_name(t)));
    json_object_set_new(x, "kind", json_string(xi.kind == EXACT_KIND_KEYS ? "keys" : "fp"));
    json_object_set_new(x, "entries", json_integer((json_int_t)xi.count));
    json_object_set_new(x, "file_bytes", json_integer((json_int_t)xi.file_bytes));
    json_object_set_new(x, "index_bytes", json_integer((json_int_t)xi.index_bytes));
    json_object_set_new(x, "checksum", json_string(sum));
    exact_table_close(t);
    return x;
}

int build_exact_verify(const char *path, const struct format_info *fi, char *note, size_t notelen,
                       char *err, size_t errlen)
{
    struct exact_ref ref;
    note[0] = '\0';
    if (fi->section_kind != FORMAT_SECTION_EXACT)
        return 0;
    struct exact_table *t = xtable_open(path, fi, &ref, err, errlen);
    if (!t)
        return -1;
    int rc = exact_table_verify(t, err, errlen);
    snprintf(note, notelen, " and its exact table (%llu entries)", (unsigned long long)ref.count);
    exact_table_close(t);
    return rc;
}
