/* fuse: the `fuse` layout, a binary fuse filter (Graf and Lemire, "Binary
 * Fuse Filters: Fast and Smaller Than Xor Filters", 2022), one per shard.
 * An item is an f-bit fingerprint spread over three slots of the shard's
 * array: it is present when the XOR of the three slots equals its
 * fingerprint, which a foreign item does with probability 2^-f. The array
 * holds about 1.125 slots per item, so about 1.125 f bits per item.
 *
 * A fuse filter is built whole from all of a shard's keys at once
 * (fuse_build_shard) and takes no adds afterwards: the daemon puts a small
 * blocked Bloom filter beside it for runtime adds (bloom/fusedelta.h).
 * Lookups are lock-free reads from any thread. See docs/design.md, "The fuse
 * layout", and docs/file-format.md for where an item's slots are. */
#ifndef BLOOMGATE_FUSE_H
#define BLOOMGATE_FUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/shape.h"

#define FUSE_MIN_BITS 1u
#define FUSE_MAX_BITS 32u
#define FUSE_MAX_SEG_LOG 20u   /* segment length at most 2^20 slots */
#define FUSE_MAX_ATTEMPTS 64u  /* seeds tried per shard before construction gives up */
/* Default shard size: about 4M keys, so a shard's construction (~45 bytes
 * per key) takes under 200 MB per building thread. */
#define FUSE_SHARD_TARGET_ITEMS (1ull << 22)

/* The smallest f with 2^-f <= p, or 0 when p is below 2^-32. */
unsigned fuse_bits_for(double p);

/* The array of a shard designed for n keys: segment length 2^seg_log,
 * segments (the array has segments + 2 of them), and the payload's bits
 * (fingerprints packed at f bits, plus 64 bits so a fingerprint is read by
 * one unaligned 8-byte load, rounded up to 512). Pure. */
void fuse_geometry(uint64_t n, unsigned f, uint32_t *seg_log, uint32_t *segments, uint64_t *bits);
uint64_t fuse_shard_bits(uint32_t seg_log, uint32_t segments, unsigned f);

/* filter_plan_make and filter_plan_validate for the fuse layout. */
int fuse_plan_make(uint64_t capacity, double fpr, uint32_t shards, struct filter_plan *out,
                   char *err, size_t errlen);
int fuse_plan_validate(const struct filter_plan *p, char *err, size_t errlen);

bool fuse_check_hash(const struct filter *f, struct hash128 h);
/* Hash every key, prefetch its three slots BATCH keys ahead, then test. */
void fuse_check_batch(const struct filter *f, const struct filter_key *keys, size_t n,
                      bool *present);
/* The same, an item also present when `also` (a plain filter of the same
 * seed: the delta, bloom/fusedelta.h) holds it, as also_has says (the
 * caller's filter_check_hash: this file calls nothing of filter.c, which
 * calls it): both probed in one pass. */
void fuse_check_batch_also(const struct filter *f, const struct filter *also,
                           bool (*also_has)(const struct filter *, struct hash128),
                           const struct filter_key *keys, size_t n, bool *present);

/* Build shard s of f (a fuse filter fresh from filter_create) from its keys:
 * the hashes of the items whose shard is s, in any order, duplicates allowed
 * (the array is sorted and deduplicated in place). Tries seeds derived from
 * base_seed until the construction succeeds; sets the shard's fuse_seed,
 * fingerprints and item count (the distinct keys). -1 with err when the keys
 * do not fit (more than the shard was sized for) or memory runs out. Any
 * thread; shards may be built in parallel. */
int fuse_build_shard(struct filter *f, uint32_t s, struct hash128 *keys, size_t n,
                     uint64_t base_seed, char *err, size_t errlen);

#endif
