/* The counting layout, see counting.h. */
#include "config.h"

#include "bloom/counting.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/sizing.h"

#define MIX_A 0x9E3779B97F4A7C15ull
#define MIX_B 0xC2B2AE3D27D4EB4Full
#define BATCH 16
#define LOW_NIBBLES 0x1111111111111111ull

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

int counting_plan_make(uint64_t capacity, double fpr, uint32_t shards, struct filter_plan *out,
                       char *err, size_t errlen)
{
    double cpi;
    unsigned k;
    if (sizing_counting(fpr, &cpi, &k) != 0) {
        snprintf(err, errlen, "false-positive rate %g is below what the counting layout can reach",
                 fpr);
        return -1;
    }
    double counters = ceil((double)capacity * cpi / COUNTING_PER_BLOCK) * COUNTING_PER_BLOCK;
    if (counters / 2 > (double)FILTER_MAX_BYTES) {
        snprintf(err, errlen, "filter would take %.0f bytes, over the limit of %llu", counters / 2,
                 (unsigned long long)FILTER_MAX_BYTES);
        return -1;
    }
    uint64_t blocks_total = (uint64_t)counters / COUNTING_PER_BLOCK;
    if (shards == 0) {
        uint64_t want = ceil_div(blocks_total * 64, FILTER_SHARD_TARGET_BYTES);
        shards = 1;
        while (shards < want && shards < FILTER_MAX_SHARDS)
            shards <<= 1;
    }
    uint64_t blocks = ceil_div(blocks_total, shards);
    out->layout = FILTER_COUNTING;
    out->capacity = capacity;
    out->fpr_target = fpr;
    out->shard_count = shards;
    out->bits_per_shard = blocks * SIZING_BLOCK_BITS;
    double per_item = (double)blocks * COUNTING_PER_BLOCK * shards / (double)capacity;
    out->k = sizing_counting_best_k(per_item);
    out->fpr_expected = sizing_counting_fpr(per_item, out->k);
    return 0;
}

double counting_plan_fpr(uint64_t bits_per_shard, uint32_t shards, uint64_t capacity, unsigned k)
{
    double counters = (double)(bits_per_shard / 4) * shards;
    return sizing_counting_fpr(counters / (double)capacity, k);
}

static inline uint64_t splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The block of h: as the blocked layout picks it (filter_first_line). */
static inline _Atomic uint64_t *block_of(const struct filter *f, struct hash128 h)
{
    return f->shards[filter_shard_of(f, h)].words +
           filter_reduce64(h.lo, f->blocks_per_shard) * 8;
}

/* Every counter position of h, pos, for BODY: k 7-bit positions, nine from
 * each splitmix64 output seeded from both hash halves (as the blocked layout
 * takes 9-bit ones, BLOCKED_PROBES). */
#define COUNTER_PROBES(h, k, BODY)                                                                 \
    do {                                                                                           \
        uint64_t s_ = (h).hi ^ ((h).lo * MIX_B);                                                   \
        for (unsigned g_ = 0; g_ * 9 < (k); g_++) {                                                \
            s_ += MIX_A;                                                                           \
            uint64_t z_ = splitmix64(s_);                                                          \
            unsigned n_ = (k) - g_ * 9 < 9 ? (k) - g_ * 9 : 9;                                     \
            for (unsigned j_ = 0; j_ < n_; j_++) {                                                 \
                unsigned pos = (unsigned)(z_ >> (57 - 7 * j_)) & 127;                              \
                BODY;                                                                              \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* The k counters of h in its block (COUNTER_PROBES), as the low bit of each
 * counter's nibble in eight word masks. A position drawn twice is one
 * counter, counted once. */
static inline void counter_masks(struct hash128 h, unsigned k, uint64_t m[8])
{
    for (unsigned i = 0; i < 8; i++)
        m[i] = 0;
    COUNTER_PROBES(h, k, m[pos >> 4] |= 1ull << ((pos & 15) * 4));
}

/* The low bit of every non-zero nibble of w. */
static inline uint64_t nonzero_nibbles(uint64_t w)
{
    return (w | w >> 1 | w >> 2 | w >> 3) & LOW_NIBBLES;
}

/* The low bit of every nibble of w at 15. */
static inline uint64_t full_nibbles(uint64_t w)
{
    return w & w >> 1 & w >> 2 & w >> 3 & LOW_NIBBLES;
}

/* 1 when the counter at pos of blk is non-zero, else 0, with no branch. */
static inline uint64_t counter_live(const _Atomic uint64_t *blk, unsigned pos)
{
    uint64_t c = atomic_load_explicit(&blk[pos >> 4], memory_order_relaxed) >> ((pos & 15) * 4);
    return ((c & 15) + 15) >> 4;
}

/* A check probes each counter where it lies, without making the masks an
 * add needs: one load, shift and test a probe, as the blocked layout's
 * blocked_test does (~8 instructions). The test is branch-free: all k
 * counters lie in one cache line. */
static inline bool block_test(const _Atomic uint64_t *blk, struct hash128 h, unsigned k)
{
    uint64_t ok = 1;
    if (k <= 18) { /* every rate down to ~1e-8: a switch enters exactly k probes */
        uint64_t s = h.hi ^ (h.lo * MIX_B);
        uint64_t z1 = splitmix64(s + MIX_A), z2 = k > 9 ? splitmix64(s + 2 * MIX_A) : 0;
#define PROBE(z, j) (ok &= counter_live(blk, (unsigned)((z) >> (57 - 7 * (j))) & 127))
        switch (k) {
            SHAPE_PROBES_9(9, PROBE, z2)
            SHAPE_PROBES_9(0, PROBE, z1)
        default:
            break;
        }
#undef PROBE
        return ok != 0;
    }
    COUNTER_PROBES(h, k, ok &= counter_live(blk, pos));
    return ok != 0;
}

bool counting_check_hash(const struct filter *f, struct hash128 h)
{
    return block_test(block_of(f, h), h, f->k);
}

/* As filter_check_batch: the next BATCH keys hashed and their blocks
 * prefetched while the current one is tested. Any thread. */
void counting_check_batch(const struct filter *f, const struct filter_key *keys, size_t n,
                          bool *present)
{
    struct {
        struct hash128 h;
        const _Atomic uint64_t *blk;
    } ring[BATCH];
    size_t ahead = n < BATCH ? n : BATCH;
    for (size_t i = 0; i < ahead; i++) {
        ring[i].h = filter_hash(f, keys[i].data, keys[i].len);
        ring[i].blk = block_of(f, ring[i].h);
        __builtin_prefetch((const void *)ring[i].blk, 0, 0);
    }
    for (size_t i = 0; i < n; i++) {
        size_t slot = i % BATCH;
        bool yes = block_test(ring[slot].blk, ring[slot].h, f->k);
        if (i + BATCH < n) {
            ring[slot].h = filter_hash(f, keys[i + BATCH].data, keys[i + BATCH].len);
            ring[slot].blk = block_of(f, ring[slot].h);
            __builtin_prefetch((const void *)ring[slot].blk, 0, 0);
        }
        present[i] = yes;
    }
}

/* Add 1 to the counters of m in w (one per low-nibble bit) that are below
 * 15: no carry leaves a nibble, since a nibble at 15 gets nothing. */
static inline uint64_t inc_word(uint64_t w, uint64_t m)
{
    return w + (m & ~full_nibbles(w));
}

/* Subtract 1 from the counters of m below 15; the caller has made sure none
 * of them is zero, so no borrow leaves a nibble. */
static inline uint64_t dec_word(uint64_t w, uint64_t m)
{
    return w - (m & ~full_nibbles(w));
}

unsigned counting_add_hash(struct filter *f, struct hash128 h, bool *was_present)
{
    uint64_t m[8];
    counter_masks(h, f->k, m);
    uint32_t s = filter_shard_of(f, h);
    _Atomic uint64_t *blk = block_of(f, h);
    unsigned fresh = 0;
    for (unsigned i = 0; i < 8; i++) {
        if (!m[i])
            continue;
        uint64_t old = atomic_load_explicit(&blk[i], memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&blk[i], &old, inc_word(old, m[i]),
                                                      memory_order_relaxed, memory_order_relaxed))
            ;
        fresh += (unsigned)__builtin_popcountll(m[i] & ~nonzero_nibbles(old));
    }
    if (was_present)
        *was_present = fresh == 0;
    atomic_fetch_add_explicit(&f->shards[s].items, 1, memory_order_relaxed);
    if (fresh)
        atomic_fetch_add_explicit(&f->shards[s].bits_set, fresh, memory_order_relaxed);
    return fresh;
}

bool counting_remove_hash(struct filter *f, struct hash128 h)
{
    uint64_t m[8];
    counter_masks(h, f->k, m);
    uint32_t s = filter_shard_of(f, h);
    _Atomic uint64_t *blk = block_of(f, h);
    unsigned gone = 0, i;
    for (i = 0; i < 8; i++) {
        if (!m[i])
            continue;
        uint64_t old = atomic_load_explicit(&blk[i], memory_order_relaxed);
        bool ok = true;
        do {
            if (m[i] & ~nonzero_nibbles(old)) {
                ok = false;
                break;
            }
        } while (!atomic_compare_exchange_weak_explicit(&blk[i], &old, dec_word(old, m[i]),
                                                        memory_order_relaxed,
                                                        memory_order_relaxed));
        if (!ok)
            break;
        gone += (unsigned)__builtin_popcountll(m[i] & ~nonzero_nibbles(dec_word(old, m[i])));
    }
    if (i < 8) {
        /* A zero counter: undo the words already decremented (each counter
         * there went from c in 1..14 to c - 1, or stayed at 15, so adding
         * back restores it). The first word is zero-checked before any
         * change, so with removals ordered by the caller this never runs. */
        while (i-- > 0) {
            if (!m[i])
                continue;
            uint64_t o = atomic_load_explicit(&blk[i], memory_order_relaxed);
            while (!atomic_compare_exchange_weak_explicit(&blk[i], &o, inc_word(o, m[i]),
                                                          memory_order_relaxed,
                                                          memory_order_relaxed))
                ;
        }
        return false;
    }
    atomic_fetch_sub_explicit(&f->shards[s].items, 1, memory_order_relaxed);
    if (gone)
        atomic_fetch_sub_explicit(&f->shards[s].bits_set, gone, memory_order_relaxed);
    return true;
}

/* One key of a batch for counting_can_remove: its block and its place. */
struct pend {
    const _Atomic uint64_t *blk;
    size_t idx;
    uint64_t m[8];
};

static int pend_cmp(const void *a, const void *b)
{
    const struct pend *x = a, *y = b;
    if (x->blk != y->blk)
        return (uintptr_t)x->blk < (uintptr_t)y->blk ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Keys in different blocks share no counter, so the batch is sorted by
 * block and each block's keys are taken in request order against a tally
 * of the decrements before them. Any thread; mallocs n entries (a batch is
 * bounded by max_items). On out of memory, COUNTING_NO_MEMORY. */
size_t counting_can_remove(const struct filter *f, const struct filter_key *keys, size_t n)
{
    struct pend *p = malloc((n ? n : 1) * sizeof(*p));
    if (!p)
        return COUNTING_NO_MEMORY;
    for (size_t i = 0; i < n; i++) {
        struct hash128 h = filter_hash(f, keys[i].data, keys[i].len);
        p[i].blk = block_of(f, h);
        p[i].idx = i;
        counter_masks(h, f->k, p[i].m);
    }
    qsort(p, n, sizeof(*p), pend_cmp);
    size_t first_bad = n;
    unsigned char tally[COUNTING_PER_BLOCK];
    for (size_t g = 0; g < n;) {
        size_t end = g;
        while (end < n && p[end].blk == p[g].blk)
            end++;
        memset(tally, 0, sizeof(tally));
        for (size_t i = g; i < end && p[i].idx < first_bad; i++) {
            bool bad = false;
            for (unsigned w = 0; w < 8 && !bad; w++) {
                uint64_t word = atomic_load_explicit(&p[i].blk[w], memory_order_relaxed);
                for (uint64_t b = p[i].m[w]; b && !bad; b &= b - 1) {
                    unsigned nib = (unsigned)__builtin_ctzll(b) / 4;
                    unsigned c = (unsigned)(word >> (nib * 4)) & 15;
                    if (c == COUNTING_MAX)
                        continue; /* saturated: never decremented */
                    if (c <= tally[w * 16 + nib])
                        bad = true;
                }
            }
            if (bad) {
                first_bad = p[i].idx;
                break;
            }
            for (unsigned w = 0; w < 8; w++)
                for (uint64_t b = p[i].m[w]; b; b &= b - 1)
                    if (tally[w * 16 + (unsigned)__builtin_ctzll(b) / 4] < COUNTING_MAX)
                        tally[w * 16 + (unsigned)__builtin_ctzll(b) / 4]++;
        }
        g = end;
    }
    free(p);
    return first_bad;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("popcnt", "default")))
#endif
uint64_t counting_nonzero(const uint64_t *w, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (uint64_t)__builtin_popcountll(nonzero_nibbles(w[i]));
    return c;
}

/* The rate the non-zero counters give; the shards' own tallies, summed here
 * (filter.c calls this, so this file calls nothing of filter.c). Any thread. */
double counting_estimated_fpr(const struct filter *f)
{
    uint64_t counters = f->bits_per_shard / 4 * f->shard_count, nonzero = 0;
    for (uint32_t i = 0; i < f->shard_count; i++)
        nonzero += atomic_load_explicit(&f->shards[i].bits_set, memory_order_relaxed);
    return sizing_estimate_fpr_counting(counters, nonzero, f->k);
}
