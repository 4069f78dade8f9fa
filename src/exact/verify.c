/* verify: the full pass over an exact table (exact_table_verify): every
 * section's checksum and the sections' agreement with one another. Reads the
 * whole file, in order; the caller's thread. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "base/util.h"
#include "exact/exact_int.h"

static int bad(char *err, size_t errlen, const struct exact_table *t, const char *what, uint64_t at)
{
    return util_fail(err, errlen, "%s: exact table fails verification: %s (entry %llu)", t->name,
                     what, (unsigned long long)at);
}

static bool zero_from(const unsigned char *p, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++)
        if (p[i])
            return false;
    return true;
}

/* Keys tables: offsets in order within the bytes, each key no longer than a
 * key may be, hashing to its fingerprint, and the entries in (fingerprint,
 * bytes) order without repeats. */
static int verify_keys(const struct exact_table *t, char *err, size_t errlen)
{
    const unsigned char *h = t->header;
    uint64_t offs_off = exact_get64(h + EH_OFFS_OFF);
    if (XXH3_64bits(t->map + offs_off, t->map_bytes - offs_off) != exact_get64(h + EH_KEYS_SUM))
        return bad(err, errlen, t, "key section checksum mismatch", 0);
    if (!zero_from(t->map + offs_off, (t->count + 1) * 8, exact_get64(h + EH_BLOB_OFF) - offs_off))
        return bad(err, errlen, t, "non-zero padding after the key offsets", t->count);
    const void *prev = NULL;
    size_t prev_len = 0;
    for (uint64_t i = 0; i < t->count; i++) {
        size_t len;
        const void *k = exact_table_entry(t, i, &len);
        if (!k || len > EXACT_MAX_KEY)
            return bad(err, errlen, t, "key offsets out of order", i);
        uint64_t fp = exact_table_fp_at(t, i);
        if (exact_fp(&t->secret, k, len) != fp)
            return bad(err, errlen, t, "a key does not hash to its fingerprint", i);
        if (i && fp == exact_table_fp_at(t, i - 1)) {
            int c = memcmp(prev, k, len < prev_len ? len : prev_len);
            if (c > 0 || (c == 0 && prev_len >= len))
                return bad(err, errlen, t, "keys out of order or repeated", i);
        }
        prev = k;
        prev_len = len;
    }
    return 0;
}

int exact_table_verify(const struct exact_table *t, char *err, size_t errlen)
{
    const unsigned char *h = t->header;
    uint64_t n = t->count;
    size_t body = (size_t)(t->map_bytes - EXACT_PAGE);
    if (body)
        (void)madvise((void *)(t->map + EXACT_PAGE), body, MADV_SEQUENTIAL);
    int rc = 0;
    if (XXH3_64bits(t->fps, n * 8) != exact_get64(h + EH_FP_SUM))
        rc = bad(err, errlen, t, "fingerprint checksum mismatch", 0);
    const unsigned char *fps = (const unsigned char *)t->fps;
    if (rc == 0 && !zero_from(fps, n * 8, exact_align(n * 8)))
        rc = bad(err, errlen, t, "non-zero padding after the fingerprints", n);
    uint64_t fence_off = exact_get64(h + EH_FENCE_OFF);
    if (rc == 0 &&
        !zero_from(t->map + fence_off, t->fence_count * 8, exact_align(t->fence_count * 8)))
        rc = bad(err, errlen, t, "non-zero padding after the fence index", n);
    for (uint64_t i = 0; rc == 0 && i < n; i++) {
        uint64_t fp = exact_table_fp_at(t, i);
        if (i % EXACT_PER_PAGE == 0 && t->fences[i / EXACT_PER_PAGE] != fp)
            rc = bad(err, errlen, t, "fence index does not match its page", i);
        else if (i && (fp < exact_table_fp_at(t, i - 1) ||
                       (t->kind == EXACT_KIND_FP && fp == exact_table_fp_at(t, i - 1))))
            rc = bad(err, errlen, t, "fingerprints out of order or repeated", i);
    }
    if (rc == 0 && t->kind == EXACT_KIND_KEYS)
        rc = verify_keys(t, err, errlen);
    if (body)
        (void)madvise((void *)(t->map + EXACT_PAGE), body, MADV_RANDOM);
    return rc;
}
