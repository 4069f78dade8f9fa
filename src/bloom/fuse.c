/* The fuse layout, see fuse.h. Where an item's slots are is fixed by
 * docs/file-format.md ("fuse"): changing it changes the meaning of every
 * fuse file. Written from the paper's description of 3-wise binary fuse
 * filters (segments, the sizing rules, peeling); nothing here is copied. */
#include "config.h"

#include "bloom/fuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define BATCH 16 /* keys hashed and prefetched ahead of testing */
#define MIX_A 0x9E3779B97F4A7C15ull
#define MIX_B 0xC2B2AE3D27D4EB4Full

static inline uint64_t splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* An item's three slots and its fingerprint, from its hash and its shard's
 * seed: z = splitmix64(hi ^ seed); the fingerprint is z's low f bits; x =
 * lo ^ (z >> 24) places it. x's top 24 bits are lo's, whatever the seed, so
 * keys sorted by lo are inserted in slot order (the construction sweeps the
 * array instead of jumping about); its low 40 bits change with the seed, so
 * a retry draws a new hypergraph. */
struct fuse_slots {
    uint64_t p[3];
    uint32_t fp;
};

static inline void slots_of(const struct filter *f, struct hash128 h, uint64_t seed,
                            struct fuse_slots *o)
{
    uint64_t z = splitmix64(h.hi ^ seed);
    uint64_t x = h.lo ^ (z >> 24);
    uint64_t len = (uint64_t)f->fuse_segments << f->fuse_seg_log;
    uint64_t seg = 1ull << f->fuse_seg_log, mask = seg - 1;
    uint64_t h0 = (uint64_t)(((unsigned __int128)x * len) >> 64);
    o->p[0] = h0;
    o->p[1] = (h0 + seg) ^ ((x >> 18) & mask);
    o->p[2] = (h0 + 2 * seg) ^ (x & mask);
    o->fp = (uint32_t)z & (uint32_t)(0xFFFFFFFFu >> (32 - f->k));
}

/* Slot i of a payload: f bits at bit i*f, read with one unaligned 8-byte
 * load (the payload has 8 spare bytes at its end). */
static inline uint32_t slot_get(const unsigned char *pl, uint64_t i, unsigned f)
{
    uint64_t bit = i * f, w;
    memcpy(&w, pl + (bit >> 3), 8);
    return (uint32_t)(w >> (bit & 7)) & (uint32_t)(0xFFFFFFFFu >> (32 - f));
}

static inline void slot_put(unsigned char *pl, uint64_t i, unsigned f, uint32_t v)
{
    uint64_t bit = i * f, w, m = (uint64_t)(0xFFFFFFFFu >> (32 - f)) << (bit & 7);
    memcpy(&w, pl + (bit >> 3), 8);
    w = (w & ~m) | ((uint64_t)v << (bit & 7));
    memcpy(pl + (bit >> 3), &w, 8);
}

unsigned fuse_bits_for(double p)
{
    for (unsigned f = FUSE_MIN_BITS; f <= FUSE_MAX_BITS; f++)
        if (ldexp(1.0, -(int)f) <= p)
            return f;
    return 0;
}

uint64_t fuse_shard_bits(uint32_t seg_log, uint32_t segments, unsigned f)
{
    uint64_t slots = ((uint64_t)segments + 2) << seg_log;
    return (slots * f + 64 + 511) / 512 * 512;
}

/* The paper's sizing for 3-wise: segment length 2^floor(ln n / ln 3.33 +
 * 2.25), and max(1.125, 0.875 + 0.25 ln 1e6 / ln n) slots per key (more
 * for small n, where peeling needs the room); the array is then that many
 * slots rounded to whole segments, two more segments at the end. */
void fuse_geometry(uint64_t n, unsigned f, uint32_t *seg_log, uint32_t *segments, uint64_t *bits)
{
    uint32_t sl = 2;
    double slots = 0;
    if (n > 1) {
        double ln = log((double)n);
        double e = floor(ln / log(3.33) + 2.25);
        sl = e < 2 ? 2 : e > 18 ? 18 : (uint32_t)e;
        double factor = fmax(1.125, 0.875 + 0.25 * log(1e6) / ln);
        slots = ceil((double)n * factor);
    }
    uint64_t seg = 1ull << sl;
    uint64_t total = ((uint64_t)slots + seg - 1) / seg;
    *seg_log = sl;
    *segments = total > 3 ? (uint32_t)(total - 2) : 1;
    *bits = fuse_shard_bits(sl, *segments, f);
}

static uint32_t pow2_ceil(uint64_t x)
{
    uint32_t p = 1;
    while (p < x && p < FILTER_MAX_SHARDS)
        p <<= 1;
    return p;
}

/* Every shard gets the same array, designed for the mean count plus five
 * standard deviations of where the hash puts items (none with one shard),
 * so a shard of a list at capacity essentially never overflows. */
int fuse_plan_make(uint64_t capacity, double fpr, uint32_t shards, struct filter_plan *out,
                   char *err, size_t errlen)
{
    unsigned f = fuse_bits_for(fpr);
    if (f == 0) {
        snprintf(err, errlen,
                 "false-positive rate %g is below what the fuse layout reaches (2^-32); use the "
                 "blocked or classic layout",
                 fpr);
        return -1;
    }
    if (shards == 0)
        shards = pow2_ceil((capacity + FUSE_SHARD_TARGET_ITEMS - 1) / FUSE_SHARD_TARGET_ITEMS);
    uint64_t per = capacity / shards + (capacity % shards != 0);
    uint64_t design = shards == 1 ? per : per + (uint64_t)ceil(5.0 * sqrt((double)per)) + 8;
    uint64_t bits;
    out->layout = FILTER_FUSE;
    out->k = f;
    out->shard_count = shards;
    fuse_geometry(design, f, &out->fuse_seg_log, &out->fuse_segments, &bits);
    if ((double)bits / 8 * shards > (double)FILTER_MAX_BYTES) {
        snprintf(err, errlen, "filter would take %.0f bytes, over the limit of %llu",
                 (double)bits / 8 * shards, (unsigned long long)FILTER_MAX_BYTES);
        return -1;
    }
    out->bits_per_shard = bits;
    out->fpr_expected = ldexp(1.0, -(int)f);
    return 0;
}

int fuse_plan_validate(const struct filter_plan *p, char *err, size_t errlen)
{
    if (p->layout != FILTER_FUSE) {
        if (p->fuse_seg_log || p->fuse_segments) {
            snprintf(err, errlen, "fuse geometry given for a filter of layout %d (not fuse)",
                     (int)p->layout);
            return -1;
        }
        return 0;
    }
    if (p->k < FUSE_MIN_BITS || p->k > FUSE_MAX_BITS || p->fuse_seg_log < 1 ||
        p->fuse_seg_log > FUSE_MAX_SEG_LOG || p->fuse_segments < 1 ||
        p->fuse_segments > UINT32_MAX - 2) {
        snprintf(err, errlen, "fuse geometry out of range (f %u, segment 2^%u, %u segments)", p->k,
                 p->fuse_seg_log, p->fuse_segments);
        return -1;
    }
    if (p->bits_per_shard != fuse_shard_bits(p->fuse_seg_log, p->fuse_segments, p->k)) {
        snprintf(err, errlen, "bits per shard %llu do not match the fuse geometry (%llu)",
                 (unsigned long long)p->bits_per_shard,
                 (unsigned long long)fuse_shard_bits(p->fuse_seg_log, p->fuse_segments, p->k));
        return -1;
    }
    return 0;
}

static inline const unsigned char *payload(const struct filter *f, struct hash128 h,
                                           uint64_t *seed)
{
    const struct filter_shard *sh = &f->shards[filter_shard_of(f, h)];
    *seed = sh->fuse_seed;
    return (const unsigned char *)(const void *)sh->words;
}

bool fuse_check_hash(const struct filter *f, struct hash128 h)
{
    uint64_t seed;
    const unsigned char *pl = payload(f, h, &seed);
    struct fuse_slots s;
    slots_of(f, h, seed, &s);
    unsigned k = f->k;
    return (slot_get(pl, s.p[0], k) ^ slot_get(pl, s.p[1], k) ^ slot_get(pl, s.p[2], k)) == s.fp;
}

/* Software-pipelined like the blocked batch: the next BATCH keys hashed, their
 * three slots located and prefetched (and also's first line), while the
 * current one is tested. */
void fuse_check_batch_also(const struct filter *f, const struct filter *also,
                           bool (*also_has)(const struct filter *, struct hash128),
                           const struct filter_key *keys, size_t n, bool *present)
{
    struct {
        struct fuse_slots s;
        const unsigned char *pl;
        struct hash128 h;
    } ring[BATCH];
    unsigned k = f->k;
#define FUSE_STAGE(slot, key)                                                                  \
    do {                                                                                       \
        struct hash128 h_ = filter_hash(f, (key).data, (key).len);                             \
        uint64_t seed_;                                                                        \
        ring[slot].pl = payload(f, h_, &seed_);                                                \
        ring[slot].h = h_;                                                                     \
        slots_of(f, h_, seed_, &ring[slot].s);                                                 \
        if (also)                                                                              \
            __builtin_prefetch(filter_first_line(also, h_), 0, 0);                             \
        for (unsigned j_ = 0; j_ < 3; j_++) {                                                  \
            const unsigned char *a_ = ring[slot].pl + ((ring[slot].s.p[j_] * k) >> 3);         \
            __builtin_prefetch(a_, 0, 0);                                                      \
            if (((uintptr_t)a_ & 63) > 56) /* the 8-byte read reaches the next line */         \
                __builtin_prefetch(a_ + 8, 0, 0);                                              \
        }                                                                                      \
    } while (0)
    size_t ahead = n < BATCH ? n : BATCH;
    for (size_t i = 0; i < ahead; i++)
        FUSE_STAGE(i, keys[i]);
    for (size_t i = 0; i < n; i++) {
        size_t slot = i % BATCH;
        const unsigned char *pl = ring[slot].pl;
        const struct fuse_slots *s = &ring[slot].s;
        bool yes = (slot_get(pl, s->p[0], k) ^ slot_get(pl, s->p[1], k) ^
                    slot_get(pl, s->p[2], k)) == s->fp ||
                   (also && also_has(also, ring[slot].h));
        if (i + BATCH < n)
            FUSE_STAGE(slot, keys[i + BATCH]);
        present[i] = yes;
    }
#undef FUSE_STAGE
}

void fuse_check_batch(const struct filter *f, const struct filter_key *keys, size_t n,
                      bool *present)
{
    fuse_check_batch_also(f, NULL, NULL, keys, n, present);
}

/* ---- construction ---- */

/* LSD radix sort of the keys by lo, 11 bits a pass (6 passes cover 64).
 * False when out of memory. */
static bool sort_by_lo(struct hash128 *a, struct hash128 *tmp, size_t n)
{
    static const unsigned W = 11;
    uint32_t *cnt = malloc(sizeof(uint32_t) << W);
    if (!cnt)
        return false;
    for (unsigned shift = 0; shift < 64; shift += W) {
        memset(cnt, 0, sizeof(uint32_t) << W);
        for (size_t i = 0; i < n; i++)
            cnt[(a[i].lo >> shift) & ((1u << W) - 1)]++;
        uint32_t sum = 0;
        for (size_t d = 0; d < (1u << W); d++) {
            uint32_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[cnt[(a[i].lo >> shift) & ((1u << W) - 1)]++] = a[i];
        memcpy(a, tmp, n * sizeof(*a));
    }
    free(cnt);
    return true;
}

/* Drop exact duplicates from keys sorted by lo (equal lo are adjacent; equal
 * lo with a different hi is a distinct key and kept). Returns the count. */
static size_t dedupe(struct hash128 *a, size_t n)
{
    size_t m = 0, run = 0; /* a[run, m) share a[m-1].lo */
    for (size_t i = 0; i < n; i++) {
        if (m == 0 || a[i].lo != a[m - 1].lo) {
            run = m;
        } else {
            bool dup = false;
            for (size_t j = run; j < m && !dup; j++)
                dup = a[j].hi == a[i].hi;
            if (dup)
                continue;
        }
        a[m++] = a[i];
    }
    return m;
}

struct scratch {
    uint32_t *cnt;   /* per slot: keys << 2 | XOR of which slot (0, 1, 2) of each key it is */
    uint32_t *ix;    /* per slot: XOR of the indices of its keys */
    uint32_t *queue; /* slots holding one key */
    uint32_t *stack; /* peeled keys: index << 2 | which slot was its own */
};

/* One attempt: the hypergraph of the keys under seed, peeled. True when
 * every key was peeled; the stack then holds them in peeling order. */
static bool peel(const struct filter *f, const struct hash128 *keys, size_t m, uint64_t seed,
                 uint64_t slots, struct scratch *sc)
{
    memset(sc->cnt, 0, slots * sizeof(uint32_t));
    memset(sc->ix, 0, slots * sizeof(uint32_t));
    struct fuse_slots s;
    for (size_t i = 0; i < m; i++) {
        slots_of(f, keys[i], seed, &s);
        for (uint32_t j = 0; j < 3; j++) {
            if (sc->cnt[s.p[j]] >= 0xFFFFFFF0u)
                return false;
            sc->cnt[s.p[j]] = (sc->cnt[s.p[j]] + 4) ^ j;
            sc->ix[s.p[j]] ^= (uint32_t)i;
        }
    }
    size_t q = 0, top = 0;
    for (uint64_t i = 0; i < slots; i++)
        if ((sc->cnt[i] >> 2) == 1)
            sc->queue[q++] = (uint32_t)i;
    while (q > 0) {
        uint32_t slot = sc->queue[--q];
        if ((sc->cnt[slot] >> 2) != 1)
            continue;
        uint32_t i = sc->ix[slot], which = sc->cnt[slot] & 3;
        sc->stack[top++] = i << 2 | which;
        slots_of(f, keys[i], seed, &s);
        for (uint32_t j = 0; j < 3; j++) {
            uint64_t o = s.p[j];
            sc->cnt[o] = (sc->cnt[o] - 4) ^ j;
            sc->ix[o] ^= i;
            if ((sc->cnt[o] >> 2) == 1)
                sc->queue[q++] = (uint32_t)o;
        }
    }
    return top == m;
}

int fuse_build_shard(struct filter *f, uint32_t s, struct hash128 *keys, size_t n,
                     uint64_t base_seed, char *err, size_t errlen)
{
    uint64_t slots = ((uint64_t)f->fuse_segments + 2) << f->fuse_seg_log;
    struct hash128 *tmp = malloc((n ? n : 1) * sizeof(*tmp));
    bool sorted = tmp && sort_by_lo(keys, tmp, n);
    free(tmp);
    if (!sorted) {
        snprintf(err, errlen, "shard %u: out of memory sorting %zu keys", s, n);
        return -1;
    }
    size_t m = dedupe(keys, n);
    /* Peeling fails for good once keys outnumber ~0.9 of the slots. */
    if ((double)m > (double)slots * 0.9 || m >= UINT32_MAX / 4) {
        snprintf(err, errlen,
                 "shard %u holds %zu distinct keys, more than its %llu slots can take: the list "
                 "is larger than the capacity the filter was sized for; build with a larger "
                 "--capacity (or none, to count the list)",
                 s, m, (unsigned long long)slots);
        return -1;
    }
    struct scratch sc = {malloc(slots * 4), malloc(slots * 4), malloc(slots * 4),
                         malloc((m ? m : 1) * 4)};
    int rc = -1;
    if (!sc.cnt || !sc.ix || !sc.queue || !sc.stack) {
        snprintf(err, errlen, "shard %u: out of memory building %zu keys", s, m);
        goto out;
    }
    uint64_t seed = 0;
    unsigned attempt;
    for (attempt = 0; attempt < FUSE_MAX_ATTEMPTS; attempt++) {
        seed = splitmix64(base_seed ^ ((uint64_t)s * MIX_A) ^ ((uint64_t)(attempt + 1) * MIX_B));
        if (peel(f, keys, m, seed, slots, &sc))
            break;
    }
    if (attempt == FUSE_MAX_ATTEMPTS) {
        snprintf(err, errlen,
                 "shard %u: no construction of its %zu keys succeeded in %u seeds (the shard is "
                 "too full: build with a larger --capacity)",
                 s, m, FUSE_MAX_ATTEMPTS);
        goto out;
    }
    /* Assign in reverse peeling order: each key's own slot is set last, so
     * that its three slots XOR to its fingerprint; later keys never touch it. */
    unsigned char *pl = (unsigned char *)(void *)f->shards[s].words;
    memset(pl, 0, f->bits_per_shard / 8);
    for (size_t t = m; t-- > 0;) {
        uint32_t i = sc.stack[t] >> 2, w = sc.stack[t] & 3;
        struct fuse_slots fs;
        slots_of(f, keys[i], seed, &fs);
        uint32_t v = fs.fp ^ slot_get(pl, fs.p[(w + 1) % 3], f->k) ^
                     slot_get(pl, fs.p[(w + 2) % 3], f->k);
        slot_put(pl, fs.p[w], f->k, v);
    }
    f->shards[s].fuse_seed = seed;
    atomic_store_explicit(&f->shards[s].items, m, memory_order_relaxed);
    rc = 0;
out:
    free(sc.cnt);
    free(sc.ix);
    free(sc.queue);
    free(sc.stack);
    return rc;
}
