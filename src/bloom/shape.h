/* shape: what every filter layout shares (the plain filter's dispatch in
 * filter.c, the counting layout, the fuse layout, and the composites): the
 * layouts and key kinds, the plan, the struct filter and its shards, the
 * composite ops, and the inline helpers that place a hash. It declares no
 * function of any layout, so a layout's file includes this and not
 * filter.h, and filter.c (which calls each layout) sits above them all. */
#ifndef BLOOMGATE_SHAPE_H
#define BLOOMGATE_SHAPE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/hash.h"

enum filter_layout {
    FILTER_BLOCKED = 1, /* all k bits of an item in one 64-byte block */
    FILTER_CLASSIC = 2, /* k bits anywhere in the shard: least memory */
    FILTER_COUNTING = 3, /* k 4-bit counters in one block: removable (bloom/counting.h) */
    FILTER_FUSE = 4,    /* a binary fuse filter of k-bit fingerprints, built whole (bloom/fuse.h) */
};

/* What a filter's keys are, and so how a query is turned into the strings it is
 * probed with (src/url/keys.h does that; the filter itself only stores the
 * kind, in the file header). Same values as enum keys_kind in url/keys.h. */
enum filter_keys {
    FILTER_KEYS_EXACT = 0, /* the query's bytes as they are (version-1 files) */
    FILTER_KEYS_HOST = 1,  /* host names and IP addresses: host and parent domains */
    FILTER_KEYS_URL = 2,   /* Safe Browsing host/path expressions */
    FILTER_KEYS_ADBLOCK = 3, /* a compiled Adblock engine (the file's section) and a host
                                tier for run-time adds, which is looked up as host keys */
    FILTER_KEYS_WORDS = 4,   /* a compiled word list (the file's section, src/words/), scanned
                                in text; its Bloom part is empty and unused */
};
#define FILTER_KEYS_COUNT 5

/* The kind a filter's own bits are keyed by: an adblock filter's host tier
 * holds host keys. */
static inline enum filter_keys filter_keys_probe(enum filter_keys k)
{
    return k == FILTER_KEYS_ADBLOCK ? FILTER_KEYS_HOST : k;
}

#define FILTER_MAX_SHARDS 65536u
#define FILTER_MAX_BYTES (1ull << 40)      /* 1 TiB: far past any machine we serve */
#define FILTER_MAX_CAPACITY (1ull << 42)   /* items */
#define FILTER_MIN_FPR 1e-12
#define FILTER_SHARD_TARGET_BYTES (64ull << 20) /* default shard size when S is not given */

/* What a filter will be: every figure the allocation and the file header need. */
struct filter_plan {
    enum filter_layout layout;
    uint64_t capacity;       /* items the filter is sized for */
    double fpr_target;       /* the rate asked for at capacity */
    unsigned k;              /* probes per item */
    uint32_t shard_count;    /* power of two */
    uint64_t bits_per_shard; /* multiple of 512 */
    double fpr_expected;     /* the model's rate at capacity for exactly this size */
    uint32_t fuse_seg_log;   /* fuse: segment length 2^fuse_seg_log slots; 0 otherwise */
    uint32_t fuse_segments;  /* fuse: segments per shard (the array has 2 more); 0 otherwise */
};

struct filter_shard {
    _Atomic uint64_t *words;   /* bits_per_shard / 64 words; page-aligned mapping */
    size_t map_bytes;          /* length of the mapping (bits rounded up to a page) */
    _Atomic uint64_t items;    /* adds that set at least one new bit */
    _Atomic uint64_t bits_set; /* how many bits are 1 */
    uint64_t fuse_seed;        /* fuse: the seed this shard's construction succeeded with */
};

/* A key for the batch calls: bytes and length (items may hold NUL). */
struct filter_key {
    const void *data;
    size_t len;
};

struct filter {
    enum filter_layout layout;
    unsigned k;
    uint64_t capacity;
    double fpr_target;
    uint32_t shard_count;
    uint64_t bits_per_shard;
    uint64_t blocks_per_shard; /* bits_per_shard / 512 */
    uint64_t seed;             /* XXH3 seed; stored in the file */
    int64_t build_time;        /* unix seconds; 0 if never written */
    uint64_t file_checksum;    /* header checksum of the file loaded; 0 if not loaded from one */
    enum filter_keys keys;     /* stored in the file; exact for a filter made empty */
    uint32_t fuse_seg_log, fuse_segments; /* fuse: the plan's geometry */
    struct filter_shard *shards;
    /* A composite filter (a windowed ring of slices, bloom/ring.c, or any
     * other filter made of sub-filters), NULL for a plain filter: then this
     * filter is only the composite's head, and the calls below check and add
     * through comp_ops. ring is comp when the composite is a windowed ring,
     * for the callers that need its clock-time calls (bloom/ring.h). */
    void *comp;
    const struct filter_comp_ops *comp_ops;
    struct filter_ring *ring;
};

/* What a composite filter's head hands to its parts (the composite's module
 * sets comp_ops when it makes the head). The plain filter calls through these
 * and knows nothing else of the composite, so composites build on the plain
 * filter and not the other way round. c is the head's comp. */
struct filter_comp_ops {
    void (*free)(void *c);
    bool (*add_hash)(void *c, struct hash128 h);
    void (*add_batch)(void *c, const struct filter *head, const struct filter_key *keys,
                      size_t n, bool *added);
    bool (*check_hash)(void *c, const struct filter *head, struct hash128 h);
    void (*check_batch)(void *c, const struct filter *head, const struct filter_key *keys,
                        size_t n, bool *present);
    uint64_t (*items)(void *c);
    uint64_t (*bits_set)(void *c);
    uint64_t (*bytes)(void *c); /* memory every part takes */
    double (*estimated_fpr)(void *c);
    /* How many more new items it takes (a fuse filter's delta is bounded);
     * NULL: no bound. See filter_room. */
    uint64_t (*room)(void *c);
};

/* A composite's table: each (grow.c, ring.c, fusedelta.c) names its functions
 * ops_<member>, and its table is { FILTER_COMP_OPS_EACH } plus what it has
 * of the optional ones (room): one list, so a member every composite must
 * have is added here once and fails to build where one is missing. */
#define FILTER_COMP_OPS_EACH                                                                       \
    .free = ops_free, .add_hash = ops_add_hash, .add_batch = ops_add_batch,                        \
    .check_hash = ops_check_hash, .check_batch = ops_check_batch, .items = ops_items,              \
    .bits_set = ops_bits_set, .bytes = ops_bytes, .estimated_fpr = ops_estimated_fpr

/* Where an item's hash lands: the shard index. */
static inline uint32_t filter_shard_of(const struct filter *f, struct hash128 h)
{
    return (uint32_t)(((h.hi >> 32) * (uint64_t)f->shard_count) >> 32);
}

/* Lemire's multiply-shift: maps x uniformly onto [0, n) without a division,
 * so shard and block counts need not be powers of two. */
static inline uint64_t filter_reduce64(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/* The cache line a check of h reads first (blocked: the whole block; classic:
 * the first probe's word, which settles most absent keys). A caller that knows
 * its next hashes prefetches these lines so the misses overlap. */
static inline const void *filter_first_line(const struct filter *f, struct hash128 h)
{
    const _Atomic uint64_t *w = f->shards[filter_shard_of(f, h)].words;
    if (f->layout == FILTER_BLOCKED || f->layout == FILTER_COUNTING)
        return (const void *)(w + filter_reduce64(h.lo, f->blocks_per_shard) * 8);
    return (const void *)&w[filter_reduce64(h.lo, f->bits_per_shard) >> 6];
}

/* Whether the block blk (filter_first_line of a blocked filter) holds every
 * bit of m: eight loads, no branch. */
static inline bool filter_block_has(const void *blk, const uint64_t m[8])
{
    const _Atomic uint64_t *w = (const _Atomic uint64_t *)blk;
    uint64_t miss = 0;
    for (unsigned i = 0; i < 8; i++)
        miss |= m[i] & ~atomic_load_explicit(&w[i], memory_order_relaxed);
    return miss == 0;
}

/* The unrolled checks' switch (filter.c's blocked_test, counting.c's
 * block_test): `switch (k) { ... }` whose case k enters a run of exactly k
 * probes and falls through to the end, P(z, j) probing the j-th position
 * drawn from the splitmix64 output z. SHAPE_PROBES_7(b, P, z) are the cases
 * b+7 down to b+1, probing z's positions 6 down to 0 (the blocked layout
 * draws seven 9-bit positions from a word); SHAPE_PROBES_9 the cases b+9 down
 * to b+1, positions 8 down to 0 (the counting layout draws nine 7-bit ones).
 * One switch on k, fixed per filter, so its one indirect jump is always
 * predicted. */
#define SHAPE_FALL __attribute__((fallthrough))
/* clang-format off */
#define SHAPE_PROBES_7(b, P, z)                                                                    \
    case (b) + 7: P(z, 6); SHAPE_FALL;                                                             \
    case (b) + 6: P(z, 5); SHAPE_FALL;                                                             \
    case (b) + 5: P(z, 4); SHAPE_FALL;                                                             \
    case (b) + 4: P(z, 3); SHAPE_FALL;                                                             \
    case (b) + 3: P(z, 2); SHAPE_FALL;                                                             \
    case (b) + 2: P(z, 1); SHAPE_FALL;                                                             \
    case (b) + 1: P(z, 0); SHAPE_FALL;
#define SHAPE_PROBES_9(b, P, z)                                                                    \
    case (b) + 9: P(z, 8); SHAPE_FALL;                                                             \
    case (b) + 8: P(z, 7); SHAPE_FALL;                                                             \
    SHAPE_PROBES_7(b, P, z)
/* clang-format on */

static inline struct hash128 filter_hash(const struct filter *f, const void *item, size_t len)
{
    return hash_item(item, len, f->seed);
}

#endif
