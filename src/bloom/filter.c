/* The sharded Bloom filter. Layout and probe derivation are documented in
 * docs/design.md and fixed by docs/file-format.md: changing how a position is
 * derived from the hash changes the meaning of every filter file. */
#include "config.h"

#include "bloom/filter.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bloom/counting.h"
#include "bloom/fuse.h"
#include "bloom/sizing.h"

/* Odd 64-bit constants (golden ratio, and XXH's PRIME64_2) used to stir the two
 * hash halves into a probe start and a probe stride. */
#define MIX_A 0x9E3779B97F4A7C15ull
#define MIX_B 0xC2B2AE3D27D4EB4Full
#define BATCH 16 /* keys hashed and prefetched ahead of testing */

static inline uint64_t reduce64(uint64_t x, uint64_t n) { return filter_reduce64(x, n); }

const char *filter_layout_name(enum filter_layout layout)
{
    switch (layout) {
    case FILTER_BLOCKED:
        return "blocked";
    case FILTER_CLASSIC:
        return "classic";
    case FILTER_COUNTING:
        return "counting";
    case FILTER_FUSE:
        return "fuse";
    }
    return "unknown";
}

int filter_layout_parse(const char *s, enum filter_layout *out)
{
    if (strcasecmp(s, "blocked") == 0)
        *out = FILTER_BLOCKED;
    else if (strcasecmp(s, "classic") == 0)
        *out = FILTER_CLASSIC;
    else if (strcasecmp(s, "counting") == 0)
        *out = FILTER_COUNTING;
    else if (strcasecmp(s, "fuse") == 0)
        *out = FILTER_FUSE;
    else
        return -1;
    return 0;
}

static uint32_t pow2_ceil32(uint64_t x)
{
    uint32_t p = 1;
    while (p < x && p < FILTER_MAX_SHARDS)
        p <<= 1;
    return p;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Size a filter. For blocked, the Poisson model gives bits per item; blocks are
 * then spread evenly over the shards (rounding up, never down) and k is chosen
 * again for the exact size, so the expected rate at capacity is <= p. */
static int plan_compute(enum filter_layout layout, uint64_t capacity, double fpr,
                        uint32_t shards, struct filter_plan *out, char *err, size_t errlen);

/* Plans made lately, by their arguments: a plan is a pure function of them,
 * and the blocked layout's exact model costs a good part of a second, while
 * filters made at run time (store/created.c: RESP's auto-created keys, one a
 * product a day) and the sub-filters of growing filters ask for the same few
 * plans over and over. A small ring under a mutex: any thread. */
#define PLAN_MEMO 32
static struct {
    pthread_mutex_t mu;
    unsigned next;
    struct {
        bool used;
        enum filter_layout layout;
        uint64_t capacity;
        double fpr;
        uint32_t shards;
        struct filter_plan plan;
    } e[PLAN_MEMO];
} plan_memo = {.mu = PTHREAD_MUTEX_INITIALIZER};

int filter_plan_make(enum filter_layout layout, uint64_t capacity, double fpr, uint32_t shards,
                     struct filter_plan *out, char *err, size_t errlen)
{
    pthread_mutex_lock(&plan_memo.mu);
    for (unsigned i = 0; i < PLAN_MEMO; i++)
        if (plan_memo.e[i].used && plan_memo.e[i].layout == layout &&
            plan_memo.e[i].capacity == capacity && plan_memo.e[i].fpr == fpr &&
            plan_memo.e[i].shards == shards) {
            *out = plan_memo.e[i].plan;
            pthread_mutex_unlock(&plan_memo.mu);
            return 0;
        }
    pthread_mutex_unlock(&plan_memo.mu);
    if (plan_compute(layout, capacity, fpr, shards, out, err, errlen) != 0)
        return -1;
    pthread_mutex_lock(&plan_memo.mu);
    unsigned i = plan_memo.next++ % PLAN_MEMO;
    plan_memo.e[i].used = true;
    plan_memo.e[i].layout = layout;
    plan_memo.e[i].capacity = capacity;
    plan_memo.e[i].fpr = fpr;
    plan_memo.e[i].shards = shards;
    plan_memo.e[i].plan = *out;
    pthread_mutex_unlock(&plan_memo.mu);
    return 0;
}

static int plan_compute(enum filter_layout layout, uint64_t capacity, double fpr,
                        uint32_t shards, struct filter_plan *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (capacity < 1 || capacity > FILTER_MAX_CAPACITY) {
        snprintf(err, errlen, "capacity %llu out of range (1 to %llu)",
                 (unsigned long long)capacity, (unsigned long long)FILTER_MAX_CAPACITY);
        return -1;
    }
    if (!(fpr >= FILTER_MIN_FPR && fpr <= 0.5)) {
        snprintf(err, errlen, "false-positive rate %g out of range (%g to 0.5)", fpr,
                 FILTER_MIN_FPR);
        return -1;
    }
    if (shards != 0 && (shards > FILTER_MAX_SHARDS || (shards & (shards - 1)) != 0)) {
        snprintf(err, errlen, "shard count %u must be a power of two from 1 to %u", shards,
                 FILTER_MAX_SHARDS);
        return -1;
    }
    if (layout == FILTER_COUNTING) {
        if (counting_plan_make(capacity, fpr, shards, out, err, errlen) != 0)
            return -1;
        return filter_plan_validate(out, err, errlen);
    }
    out->layout = layout;
    out->capacity = capacity;
    out->fpr_target = fpr;
    if (layout == FILTER_FUSE) {
        if (fuse_plan_make(capacity, fpr, shards, out, err, errlen) != 0)
            return -1;
        return filter_plan_validate(out, err, errlen);
    }

    double total_bits_d;
    unsigned k = 0;
    if (layout == FILTER_BLOCKED) {
        double bpi;
        if (sizing_blocked(fpr, &bpi, &k) != 0) {
            snprintf(err, errlen,
                     "false-positive rate %g is below what the blocked layout can reach; "
                     "use the classic layout",
                     fpr);
            return -1;
        }
        total_bits_d = ceil((double)capacity * bpi / SIZING_BLOCK_BITS) * SIZING_BLOCK_BITS;
    } else if (layout == FILTER_CLASSIC) {
        uint64_t m;
        sizing_classic(capacity, fpr, &m, &k);
        total_bits_d = (double)m;
    } else {
        snprintf(err, errlen, "unknown layout %d", (int)layout);
        return -1;
    }
    if (total_bits_d / 8 > (double)FILTER_MAX_BYTES) {
        snprintf(err, errlen, "filter would take %.0f bytes, over the limit of %llu",
                 total_bits_d / 8, (unsigned long long)FILTER_MAX_BYTES);
        return -1;
    }
    uint64_t total_bits = (uint64_t)total_bits_d;
    if (shards == 0)
        shards = pow2_ceil32(ceil_div(total_bits / 8, FILTER_SHARD_TARGET_BYTES));
    uint64_t blocks = ceil_div(ceil_div(total_bits, SIZING_BLOCK_BITS), shards);
    out->shard_count = shards;
    out->bits_per_shard = blocks * SIZING_BLOCK_BITS;
    double m = (double)out->bits_per_shard * shards;
    if (layout == FILTER_BLOCKED) {
        out->k = sizing_blocked_best_k(m / (double)capacity);
        out->fpr_expected = sizing_blocked_fpr(m / (double)capacity, out->k);
    } else {
        out->k = k;
        out->fpr_expected = sizing_classic_fpr(m, (double)capacity, k);
    }
    return filter_plan_validate(out, err, errlen);
}

int filter_plan_validate(const struct filter_plan *p, char *err, size_t errlen)
{
    if (p->layout != FILTER_BLOCKED && p->layout != FILTER_CLASSIC &&
        p->layout != FILTER_COUNTING && p->layout != FILTER_FUSE) {
        snprintf(err, errlen, "unknown layout %d", (int)p->layout);
        return -1;
    }
    if (p->k < 1 || p->k > SIZING_MAX_K) {
        snprintf(err, errlen, "k = %u out of range (1 to %u)", p->k, SIZING_MAX_K);
        return -1;
    }
    if (p->shard_count < 1 || p->shard_count > FILTER_MAX_SHARDS ||
        (p->shard_count & (p->shard_count - 1)) != 0) {
        snprintf(err, errlen, "shard count %u is not a power of two from 1 to %u",
                 p->shard_count, FILTER_MAX_SHARDS);
        return -1;
    }
    if (p->bits_per_shard == 0 || p->bits_per_shard % SIZING_BLOCK_BITS != 0 ||
        p->bits_per_shard / 8 > FILTER_MAX_BYTES / p->shard_count) {
        snprintf(err, errlen, "bits per shard %llu is not a non-zero multiple of 512 within %llu bytes in all",
                 (unsigned long long)p->bits_per_shard, (unsigned long long)FILTER_MAX_BYTES);
        return -1;
    }
    if (p->capacity < 1 || p->capacity > FILTER_MAX_CAPACITY) {
        snprintf(err, errlen, "capacity %llu out of range", (unsigned long long)p->capacity);
        return -1;
    }
    if (!(p->fpr_target >= FILTER_MIN_FPR && p->fpr_target <= 0.5)) {
        snprintf(err, errlen, "target rate %g out of range", p->fpr_target);
        return -1;
    }
    return fuse_plan_validate(p, err, errlen);
}

uint64_t filter_plan_bytes(const struct filter_plan *plan)
{
    return plan->bits_per_shard / 8 * plan->shard_count;
}

/* Each shard is its own anonymous mapping: page-aligned (so blocks are cache-line
 * aligned), zero-filled lazily by the kernel, eligible for transparent huge
 * pages (a random probe into gigabytes otherwise pays a TLB miss on top of the
 * cache miss), and returned to the OS at once on free. */
struct filter *filter_create(const struct filter_plan *plan, uint64_t seed, char *err,
                             size_t errlen)
{
    if (filter_plan_validate(plan, err, errlen) != 0)
        return NULL;
    struct filter *f = calloc(1, sizeof(*f));
    if (!f || !(f->shards = calloc(plan->shard_count, sizeof(*f->shards)))) {
        free(f);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->layout = plan->layout;
    f->k = plan->k;
    f->capacity = plan->capacity;
    f->fpr_target = plan->fpr_target;
    f->shard_count = plan->shard_count;
    f->bits_per_shard = plan->bits_per_shard;
    f->blocks_per_shard = plan->bits_per_shard / SIZING_BLOCK_BITS;
    f->fuse_seg_log = plan->fuse_seg_log;
    f->fuse_segments = plan->fuse_segments;
    f->seed = seed;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = plan->bits_per_shard / 8;
    size_t map = (bytes + page - 1) / page * page;
    for (uint32_t i = 0; i < f->shard_count; i++) {
        void *m = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            snprintf(err, errlen, "cannot allocate %zu bytes for shard %u of %u: %s", map, i,
                     f->shard_count, strerror(errno));
            filter_free(f);
            return NULL;
        }
#ifdef MADV_HUGEPAGE
        if (map >= (2u << 20))
            (void)madvise(m, map, MADV_HUGEPAGE);
#endif
        f->shards[i].words = m;
        f->shards[i].map_bytes = map;
    }
    return f;
}

void filter_comp_head(struct filter *head, const struct filter *part, uint64_t capacity,
                      double fpr, void *comp, const struct filter_comp_ops *ops)
{
    *head = *part;
    head->capacity = capacity;
    head->fpr_target = fpr;
    head->comp = comp;
    head->comp_ops = ops;
    head->ring = NULL;
}

void filter_free(struct filter *f)
{
    if (!f)
        return;
    if (f->comp) { /* a head: its shards, if any, are the composite's */
        f->comp_ops->free(f->comp);
        free(f);
        return;
    }
    if (f->shards) {
        for (uint32_t i = 0; i < f->shard_count; i++)
            if (f->shards[i].words)
                munmap((void *)f->shards[i].words, f->shards[i].map_bytes);
        free(f->shards);
    }
    free(f);
}

void filter_clear(struct filter *f)
{
    for (uint32_t i = 0; i < f->shard_count; i++) {
        struct filter_shard *sh = &f->shards[i];
        if (madvise((void *)sh->words, sh->map_bytes, MADV_DONTNEED) != 0)
            for (uint64_t w = 0; w < f->bits_per_shard / 64; w++)
                atomic_store_explicit(&sh->words[w], 0, memory_order_relaxed);
        atomic_store_explicit(&sh->items, 0, memory_order_relaxed);
        atomic_store_explicit(&sh->bits_set, 0, memory_order_relaxed);
    }
}

/* ---- blocked layout ----
 * The block is chosen by h.lo; the k positions inside its 512 bits come from
 * double hashing in 64-bit space, a = mix(h.hi), b = mix(h.lo) | 1, position i
 * being the top 9 bits of a + i*b. The mixes matter: h.hi's top bits are the
 * shard and h.lo's top bits the block, so both are constant within a block. */
static inline _Atomic uint64_t *blocked_block(const struct filter *f, struct hash128 h)
{
    uint32_t s = filter_shard_of(f, h);
    return f->shards[s].words + reduce64(h.lo, f->blocks_per_shard) * 8;
}

static inline uint64_t splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The k positions: 9-bit fields taken from splitmix64 outputs (7 per output),
 * the generator seeded from both hash halves. Plain double hashing inside a
 * 512-bit block measured 4x the target rate at 1e-4: the positions must look
 * independent for the sizing model to hold. */
#define BLOCKED_PROBES(h, k, BODY)                                                         \
    do {                                                                                   \
        uint64_t s_ = (h).hi ^ ((h).lo * MIX_B), z_ = 0;                                   \
        for (unsigned i_ = 0, left_ = 0; i_ < (k); i_++, left_--, z_ <<= 9) {              \
            if (left_ == 0) {                                                              \
                s_ += MIX_A;                                                               \
                z_ = splitmix64(s_);                                                       \
                left_ = 7;                                                                 \
            }                                                                              \
            unsigned pos = (unsigned)(z_ >> 55);                                           \
            BODY;                                                                          \
        }                                                                                  \
    } while (0)

static inline void blocked_masks(struct hash128 h, unsigned k, uint64_t m[8])
{
    for (unsigned i = 0; i < 8; i++)
        m[i] = 0;
    BLOCKED_PROBES(h, k, m[pos >> 6] |= 1ull << (pos & 63));
}

/* The positions of BLOCKED_PROBES as masks, exported so that a windowed
 * filter makes them once per item for all its slices, then tests each
 * slice's block with eight loads (bloom/ring.c): ~240 instructions at
 * k = 16 (callgrind). check_ring tests it against filter_check_hash for
 * every k. */
void filter_block_masks(struct hash128 h, unsigned k, uint64_t m[8])
{
    for (unsigned i = 0; i < 8; i++)
        m[i] = 0;
    uint64_t s = h.hi ^ (h.lo * MIX_B);
    for (unsigned g = 0; g * 7 < k; g++) {
        s += MIX_A;
        uint64_t z = splitmix64(s);
        unsigned n = k - g * 7 < 7 ? k - g * 7 : 7;
        for (unsigned j = 0; j < n; j++) {
            unsigned pos = (unsigned)(z >> (55 - 9 * j)) & 511;
            m[pos >> 6] |= 1ull << (pos & 63);
        }
    }
}

/* Branch-free: all k bits sit in one cache line, so testing them all costs
 * less than the mispredicted branch an early exit would take on half the
 * absent keys. k <= 14 (every rate down to ~1e-6) takes an unrolled path:
 * the switch on k (one indirect jump, always predicted, since k is fixed per
 * filter) enters a run of exactly k probes, each ANDing its word shifted by
 * its bit into one accumulator (x86 masks the shift count, so pos & 63 costs
 * nothing): ~8 instructions a probe. The earlier form tested 14 positions
 * into a bit mask and masked off the unused ones: 198 instructions per lookup
 * at k = 12, against ~130 now (callgrind). tests/check_filter.c checks every
 * k against the plain loop. */
static inline bool blocked_test(const _Atomic uint64_t *blk, struct hash128 h, unsigned k)
{
    if (k <= 14) {
        uint64_t s = h.hi ^ (h.lo * MIX_B);
        uint64_t z1 = splitmix64(s + MIX_A), z2 = k > 7 ? splitmix64(s + 2 * MIX_A) : 0, ok = 1;
#define PROBE(z, j)                                                                            \
    do {                                                                                       \
        unsigned pos = (unsigned)((z) >> (55 - 9 * (j))) & 511;                                \
        ok &= atomic_load_explicit(&blk[pos >> 6], memory_order_relaxed) >> (pos & 63);        \
    } while (0)
        switch (k) {
            SHAPE_PROBES_7(7, PROBE, z2)
            SHAPE_PROBES_7(0, PROBE, z1)
        default:
            break;
        }
#undef PROBE
        return ok & 1;
    }
    uint64_t ok = 1;
    BLOCKED_PROBES(h, k,
                   ok &= atomic_load_explicit(&blk[pos >> 6], memory_order_relaxed) >> (pos & 63));
    return ok & 1;
}

static inline unsigned blocked_set(_Atomic uint64_t *blk, struct hash128 h, unsigned k)
{
    uint64_t m[8];
    unsigned fresh = 0;
    blocked_masks(h, k, m);
    for (unsigned i = 0; i < 8; i++) {
        if (!m[i])
            continue;
        /* Read first: re-adding a known item must not dirty the line. */
        uint64_t cur = atomic_load_explicit(&blk[i], memory_order_relaxed);
        if ((cur & m[i]) == m[i])
            continue;
        uint64_t old = atomic_fetch_or_explicit(&blk[i], m[i], memory_order_relaxed);
        fresh += (unsigned)__builtin_popcountll(m[i] & ~old);
    }
    return fresh;
}

/* ---- classic layout ----
 * Kirsch-Mitzenmacher double hashing over the shard's bits: g_i = h.lo + i*d,
 * d = mix(h.hi) | 1, each reduced onto [0, bits) by multiply-shift. */
static inline bool classic_test(const struct filter *f, struct hash128 h)
{
    const _Atomic uint64_t *w = f->shards[filter_shard_of(f, h)].words;
    uint64_t g = h.lo, d = (h.hi * MIX_A) | 1;
    for (unsigned i = 0; i < f->k; i++) {
        uint64_t idx = reduce64(g, f->bits_per_shard);
        if (!(atomic_load_explicit(&w[idx >> 6], memory_order_relaxed) & (1ull << (idx & 63))))
            return false;
        g += d;
    }
    return true;
}

static inline unsigned classic_set(struct filter *f, struct hash128 h, uint32_t s)
{
    _Atomic uint64_t *w = f->shards[s].words;
    uint64_t g = h.lo, d = (h.hi * MIX_A) | 1;
    unsigned fresh = 0;
    for (unsigned i = 0; i < f->k; i++) {
        uint64_t idx = reduce64(g, f->bits_per_shard);
        uint64_t bit = 1ull << (idx & 63);
        if (!(atomic_load_explicit(&w[idx >> 6], memory_order_relaxed) & bit)) {
            uint64_t old = atomic_fetch_or_explicit(&w[idx >> 6], bit, memory_order_relaxed);
            fresh += !(old & bit);
        }
        g += d;
    }
    return fresh;
}

unsigned filter_add_hash_raw(struct filter *f, struct hash128 h, uint32_t *shard)
{
    uint32_t s = filter_shard_of(f, h);
    if (shard)
        *shard = s;
    /* A composite's raw add is its own add (a fuse builder's collector,
     * tool/build_fuse.c, takes a build's hashes this way); a plain fuse
     * filter takes none: it is built whole (bloom/fuse.h). */
    if (f->comp)
        return f->comp_ops->add_hash(f->comp, h) ? 1 : 0;
    if (f->layout == FILTER_FUSE)
        return 0;
    if (f->layout == FILTER_BLOCKED)
        return blocked_set(blocked_block(f, h), h, f->k);
    if (f->layout == FILTER_COUNTING) { /* every add counts: the shard's figures too */
        bool was;
        return counting_add_hash(f, h, &was);
    }
    return classic_set(f, h, s);
}

bool filter_add_hash(struct filter *f, struct hash128 h)
{
    if (f->comp)
        return f->comp_ops->add_hash(f->comp, h);
    if (f->layout == FILTER_COUNTING) { /* new: it was not present before */
        bool was;
        counting_add_hash(f, h, &was);
        return !was;
    }
    uint32_t s;
    unsigned fresh = filter_add_hash_raw(f, h, &s);
    if (!fresh)
        return false;
    atomic_fetch_add_explicit(&f->shards[s].items, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&f->shards[s].bits_set, fresh, memory_order_relaxed);
    return true;
}

bool filter_add(struct filter *f, const void *item, size_t len)
{
    return filter_add_hash(f, filter_hash(f, item, len));
}

bool filter_check_hash(const struct filter *f, struct hash128 h)
{
    if (__builtin_expect(f->comp != NULL, 0))
        return f->comp_ops->check_hash(f->comp, f, h);
    if (f->layout == FILTER_BLOCKED)
        return blocked_test(blocked_block(f, h), h, f->k);
    if (f->layout == FILTER_COUNTING)
        return counting_check_hash(f, h);
    if (f->layout == FILTER_FUSE)
        return fuse_check_hash(f, h);
    return classic_test(f, h);
}

/* The blocked test for a key that is most likely absent (one of a URL's
 * expressions: at most one of them is usually present): the first four
 * positions first, branch-free, then the rest only if all four are set,
 * which at the design load (about half the bits set) happens for one absent
 * key in 16. The same positions and the same answer as blocked_test; the
 * branch, taken for a present key, is predicted when most keys are absent. */
static inline bool blocked_test_sparse(const _Atomic uint64_t *blk, struct hash128 h, unsigned k)
{
    if (k >= 4 && k <= 14) {
        uint64_t z1 = splitmix64((h.hi ^ (h.lo * MIX_B)) + MIX_A);
        unsigned p0 = (unsigned)(z1 >> 55), p1 = (unsigned)(z1 >> 46) & 511,
                 p2 = (unsigned)(z1 >> 37) & 511, p3 = (unsigned)(z1 >> 28) & 511;
        uint64_t ok = atomic_load_explicit(&blk[p0 >> 6], memory_order_relaxed) >> (p0 & 63) &
                      atomic_load_explicit(&blk[p1 >> 6], memory_order_relaxed) >> (p1 & 63) &
                      atomic_load_explicit(&blk[p2 >> 6], memory_order_relaxed) >> (p2 & 63) &
                      atomic_load_explicit(&blk[p3 >> 6], memory_order_relaxed) >> (p3 & 63);
        if (!(ok & 1))
            return false;
    }
    return blocked_test(blk, h, k);
}

size_t filter_first_present(const struct filter *f, const struct hash128 *h, size_t n)
{
    if (f->comp || f->layout != FILTER_BLOCKED) {
        for (size_t i = 0; i < n; i++)
            if (filter_check_hash(f, h[i]))
                return i;
        return n;
    }
    for (size_t i = 0; i < n; i++)
        if (blocked_test_sparse(blocked_block(f, h[i]), h[i], f->k))
            return i;
    return n;
}

bool filter_check(const struct filter *f, const void *item, size_t len)
{
    return filter_check_hash(f, filter_hash(f, item, len));
}

/* Batch lookup, software-pipelined: keep the next BATCH keys hashed and their
 * cache lines prefetched (the block; for classic, the first probe, which
 * settles most absent keys) while testing the current one. A lone lookup into
 * a filter far larger than the cache waits ~100 ns for DRAM; the window keeps
 * about BATCH misses in flight, continuously rather than in bursts. */
static inline const void *first_line(const struct filter *f, struct hash128 h)
{
    return filter_first_line(f, h);
}

/* The blocked layout's batch loop: the ring keeps each key's block address
 * with its hash, so the block is located once (for the prefetch) rather than
 * again at the test: 522 -> 498 instructions per item of an MCHECK of 100
 * (callgrind). */
static void blocked_check_batch(const struct filter *f, const struct filter_key *keys, size_t n,
                                bool *present)
{
    struct {
        struct hash128 h;
        const _Atomic uint64_t *blk;
    } ring[BATCH];
    unsigned k = f->k;
    size_t ahead = n < BATCH ? n : BATCH;
    for (size_t i = 0; i < ahead; i++) {
        ring[i].h = filter_hash(f, keys[i].data, keys[i].len);
        ring[i].blk = blocked_block(f, ring[i].h);
        __builtin_prefetch((const void *)ring[i].blk, 0, 0);
    }
    for (size_t i = 0; i < n; i++) {
        size_t slot = i % BATCH;
        bool yes = blocked_test(ring[slot].blk, ring[slot].h, k);
        if (i + BATCH < n) {
            ring[slot].h = filter_hash(f, keys[i + BATCH].data, keys[i + BATCH].len);
            ring[slot].blk = blocked_block(f, ring[slot].h);
            __builtin_prefetch((const void *)ring[slot].blk, 0, 0);
        }
        present[i] = yes;
    }
}

void filter_check_batch(const struct filter *f, const struct filter_key *keys, size_t n,
                        bool *present)
{
    if (f->comp) {
        f->comp_ops->check_batch(f->comp, f, keys, n, present);
        return;
    }
    if (f->layout == FILTER_BLOCKED) {
        blocked_check_batch(f, keys, n, present);
        return;
    }
    if (f->layout == FILTER_COUNTING) {
        counting_check_batch(f, keys, n, present);
        return;
    }
    if (f->layout == FILTER_FUSE) {
        fuse_check_batch(f, keys, n, present);
        return;
    }
    struct hash128 ring[BATCH];
    size_t ahead = n < BATCH ? n : BATCH;
    for (size_t i = 0; i < ahead; i++) {
        ring[i] = filter_hash(f, keys[i].data, keys[i].len);
        __builtin_prefetch(first_line(f, ring[i]), 0, 0);
    }
    for (size_t i = 0; i < n; i++) {
        struct hash128 h = ring[i % BATCH];
        if (i + BATCH < n) {
            struct hash128 next = filter_hash(f, keys[i + BATCH].data, keys[i + BATCH].len);
            __builtin_prefetch(first_line(f, next), 0, 0);
            ring[i % BATCH] = next;
        }
        present[i] = filter_check_hash(f, h);
    }
}

void filter_add_batch(struct filter *f, const struct filter_key *keys, size_t n, bool *added)
{
    if (f->comp) {
        f->comp_ops->add_batch(f->comp, f, keys, n, added);
        return;
    }
    struct hash128 h[BATCH];
    for (size_t base = 0; base < n; base += BATCH) {
        size_t m = n - base < BATCH ? n - base : BATCH;
        for (size_t i = 0; i < m; i++) {
            h[i] = filter_hash(f, keys[base + i].data, keys[base + i].len);
            if (f->layout == FILTER_BLOCKED || f->layout == FILTER_COUNTING)
                __builtin_prefetch(filter_first_line(f, h[i]), 1, 0);
        }
        for (size_t i = 0; i < m; i++) {
            bool fresh = filter_add_hash(f, h[i]);
            if (added)
                added[base + i] = fresh;
        }
    }
}

uint64_t filter_room(const struct filter *f)
{
    if (f->comp)
        return f->comp_ops->room ? f->comp_ops->room(f->comp) : UINT64_MAX;
    return f->layout == FILTER_FUSE ? 0 : UINT64_MAX;
}

uint64_t filter_items(const struct filter *f)
{
    if (f->comp)
        return f->comp_ops->items(f->comp);
    uint64_t n = 0;
    for (uint32_t i = 0; i < f->shard_count; i++)
        n += atomic_load_explicit(&f->shards[i].items, memory_order_relaxed);
    return n;
}

uint64_t filter_bits_set(const struct filter *f)
{
    if (f->comp)
        return f->comp_ops->bits_set(f->comp);
    uint64_t n = 0;
    for (uint32_t i = 0; i < f->shard_count; i++)
        n += atomic_load_explicit(&f->shards[i].bits_set, memory_order_relaxed);
    return n;
}

uint64_t filter_bytes(const struct filter *f)
{
    if (f->comp)
        return f->comp_ops->bytes(f->comp);
    return f->bits_per_shard / 8 * f->shard_count;
}

double filter_estimated_fpr(const struct filter *f)
{
    if (f->comp)
        return f->comp_ops->estimated_fpr(f->comp);
    if (f->layout == FILTER_COUNTING)
        return counting_estimated_fpr(f);
    uint64_t total = f->bits_per_shard * f->shard_count;
    if (f->layout == FILTER_FUSE) /* fixed by the fingerprint width, not by a fill */
        return ldexp(1.0, -(int)f->k);
    if (f->layout == FILTER_BLOCKED)
        return sizing_estimate_fpr_blocked(total, filter_bits_set(f), f->k);
    return sizing_estimate_fpr_classic(total, filter_bits_set(f), f->k);
}

void filter_get_plan(const struct filter *f, struct filter_plan *out)
{
    out->layout = f->layout;
    out->capacity = f->capacity;
    out->fpr_target = f->fpr_target;
    out->k = f->k;
    out->shard_count = f->shard_count;
    out->bits_per_shard = f->bits_per_shard;
    out->fuse_seg_log = f->fuse_seg_log;
    out->fuse_segments = f->fuse_segments;
    double m = (double)f->bits_per_shard * f->shard_count;
    out->fpr_expected = f->layout == FILTER_FUSE ? ldexp(1.0, -(int)f->k)
                        : f->layout == FILTER_COUNTING
                            ? counting_plan_fpr(f->bits_per_shard, f->shard_count, f->capacity, f->k)
                        : f->layout == FILTER_BLOCKED
                            ? sizing_blocked_fpr(m / (double)f->capacity, f->k)
                            : sizing_classic_fpr(m, (double)f->capacity, f->k);
}

/* popcnt is not in the x86-64 baseline; let the loader pick it at run time,
 * since a multi-gigabyte load counts every word once. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("popcnt", "default")))
#endif
static uint64_t popcount_words(const uint64_t *w, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (uint64_t)__builtin_popcountll(w[i]);
    return c;
}

uint64_t filter_shard_popcount(const struct filter *f, uint32_t shard)
{
    if (f->layout == FILTER_COUNTING)
        return counting_nonzero((const uint64_t *)f->shards[shard].words, f->bits_per_shard / 64);
    return popcount_words((const uint64_t *)f->shards[shard].words, f->bits_per_shard / 64);
}
