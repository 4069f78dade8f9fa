/* sort: a parallel radix sort of fingerprints. Fingerprints are uniform, so
 * the first pass (top byte, histogram and scatter split over threads) cuts the
 * buffer into 256 buckets of about equal size, which the threads then sort
 * independently (7 LSD passes over the remaining bytes). A keys table's
 * entries take the same passes, then equal fingerprints (rare) are ordered by
 * their keys' bytes. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "exact/sort.h"

#define CHUNKS_MAX 64

struct msd {
    uint64_t *a, *s;
    struct exact_kent *ka, *ks;
    size_t n, chunks;
    size_t hist[CHUNKS_MAX][256];
    size_t start[257];
    const unsigned char *arena;
};

/* A byte's counts into the offsets where each byte's run starts (an
 * exclusive prefix sum), for one pass of a radix sort. */
static inline void counts_to_offsets(size_t cnt[256])
{
    size_t pos = 0;
    for (int d = 0; d < 256; d++) {
        size_t k = cnt[d];
        cnt[d] = pos;
        pos += k;
    }
}

static size_t chunk_lo(const struct msd *m, size_t c)
{
    return m->n * c / m->chunks;
}

static void msd_count(void *ctx, size_t c)
{
    struct msd *m = ctx;
    size_t *h = m->hist[c];
    memset(h, 0, 256 * sizeof(*h));
    for (size_t i = chunk_lo(m, c); i < chunk_lo(m, c + 1); i++)
        h[(m->a ? m->a[i] : m->ka[i].fp) >> 56]++;
}

static void msd_scatter(void *ctx, size_t c)
{
    struct msd *m = ctx;
    size_t *h = m->hist[c]; /* holds this chunk's next slot per byte */
    for (size_t i = chunk_lo(m, c); i < chunk_lo(m, c + 1); i++) {
        if (m->a)
            m->s[h[m->a[i] >> 56]++] = m->a[i];
        else
            m->ks[h[m->ka[i].fp >> 56]++] = m->ka[i];
    }
}

/* Into the scratch buffer by top byte; m->start[] are the buckets. */
static void msd_pass(struct msd *m, unsigned threads)
{
    m->chunks = threads > CHUNKS_MAX ? CHUNKS_MAX : threads ? threads : 1;
    if (m->n < 65536)
        m->chunks = 1;
    util_parallel_for(threads, m->chunks, msd_count, m);
    size_t pos = 0;
    for (int b = 0; b < 256; b++) {
        m->start[b] = pos;
        for (size_t c = 0; c < m->chunks; c++) {
            size_t k = m->hist[c][b];
            m->hist[c][b] = pos;
            pos += k;
        }
    }
    m->start[256] = pos;
    util_parallel_for(threads, m->chunks, msd_scatter, m);
}

/* Bucket b, in scratch after the first pass, sorted back into a: 7 passes of
 * one byte each, alternating, the odd count ending in a. */
static void lsd_bucket(void *ctx, size_t b)
{
    struct msd *m = ctx;
    size_t lo = m->start[b], n = m->start[b + 1] - lo;
    uint64_t *src = m->s + lo, *dst = m->a + lo;
    if (n == 0)
        return;
    for (unsigned shift = 0; shift < 56; shift += 8) {
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[(src[i] >> shift) & 0xff]++;
        counts_to_offsets(cnt);
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
}

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

void exact_sort_u64(uint64_t *a, uint64_t *scratch, size_t n, unsigned threads)
{
    struct msd *m = calloc(1, sizeof(*m));
    if (!m) { /* no room for the histograms: the slow way, still correct */
        qsort(a, n, sizeof(*a), u64_cmp);
        return;
    }
    m->a = a;
    m->s = scratch;
    m->n = n;
    msd_pass(m, threads);
    util_parallel_for(threads, 256, lsd_bucket, m);
    free(m);
}

static int kent_cmp(const void *x, const void *y, void *ctx)
{
    const struct exact_kent *a = x, *b = y;
    if (a->fp != b->fp)
        return a->fp < b->fp ? -1 : 1;
    const unsigned char *arena = ctx;
    size_t la = a->ref & 0xffff, lb = b->ref & 0xffff;
    int c = memcmp(arena + (a->ref >> 16), arena + (b->ref >> 16), la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* Bucket b of a keys table's entries, in scratch after the first pass, sorted
 * back into a by fingerprint as lsd_bucket does; then each run of equal
 * fingerprints (two keys, one fingerprint: rare) by the keys' bytes. */
static void kent_bucket(void *ctx, size_t b)
{
    struct msd *m = ctx;
    size_t lo = m->start[b], n = m->start[b + 1] - lo;
    struct exact_kent *src = m->ks + lo, *dst = m->ka + lo;
    if (n == 0)
        return;
    for (unsigned shift = 0; shift < 56; shift += 8) {
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[(src[i].fp >> shift) & 0xff]++;
        counts_to_offsets(cnt);
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i].fp >> shift) & 0xff]++] = src[i];
        struct exact_kent *t = src;
        src = dst;
        dst = t;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && src[j].fp == src[i].fp)
            j++;
        if (j - i > 1)
            qsort_r(src + i, j - i, sizeof(*src), kent_cmp, (void *)m->arena);
        i = j;
    }
}

void exact_sort_kent(struct exact_kent *a, struct exact_kent *scratch, size_t n,
                     const unsigned char *arena, unsigned threads)
{
    struct msd *m = calloc(1, sizeof(*m));
    if (!m) {
        qsort_r(a, n, sizeof(*a), kent_cmp, (void *)arena);
        return;
    }
    m->ka = a;
    m->ks = scratch;
    m->n = n;
    m->arena = arena;
    msd_pass(m, threads);
    util_parallel_for(threads, 256, kent_bucket, m);
    free(m);
}
