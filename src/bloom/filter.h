/* filter: the sharded filter's calls. S independent shards (bit arrays with
 * their own item count), one XXH3-128 per item, four layouts (blocked: k bits
 * in one cache line; classic; counting, bloom/counting.h; fuse, bloom/fuse.h),
 * and composites of sub-filters (struct filter_comp_ops). The types are in
 * bloom/shape.h. Lookups are lock-free reads; Bloom adds set bits with
 * atomic OR on 64-bit words, so any number of threads may check and add at
 * once. */
#ifndef BLOOMGATE_FILTER_H
#define BLOOMGATE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/hash.h"
#include "bloom/shape.h"

const char *filter_layout_name(enum filter_layout layout);
int filter_layout_parse(const char *s, enum filter_layout *out);

/* Size a filter. shards = 0 picks a power of two from the size. Allocates
 * nothing; this is what `build --dry-run` prints. */
int filter_plan_make(enum filter_layout layout, uint64_t capacity, double fpr, uint32_t shards,
                     struct filter_plan *out, char *err, size_t errlen);

/* Check a plan that came from outside (a file header): every field in range and
 * the sizes consistent, so that nothing derived from it can overflow. */
int filter_plan_validate(const struct filter_plan *plan, char *err, size_t errlen);

uint64_t filter_plan_bytes(const struct filter_plan *plan);

/* Allocate an empty filter for a validated plan. NULL with err on failure. */
struct filter *filter_create(const struct filter_plan *plan, uint64_t seed, char *err,
                             size_t errlen);
void filter_free(struct filter *f);
/* Make head (zeroed memory of the composite's own) the head of a composite:
 * part's geometry and seed, so a caller hashes an item once for every part
 * and may prefetch through the head (its shards are part's, never written
 * through the head), the filter's own sizing, and comp and its ops. The
 * composite's module calls it once, before the head is shared. */
void filter_comp_head(struct filter *head, const struct filter *part, uint64_t capacity,
                      double fpr, void *comp, const struct filter_comp_ops *ops);
/* Zero every bit and counter (the pages go back to the kernel, which hands
 * out zeroes on the next touch). No add may run meanwhile; a concurrent
 * check reads old bits or zeroes (bloom/ring.c discards what it reads). */
void filter_clear(struct filter *f);

/* The blocked layout's k bits of h as eight 64-bit masks over its block:
 * the same in every filter of equal k, so a caller probing several filters
 * with one hash (bloom/ring.c) makes them once. */
void filter_block_masks(struct hash128 h, unsigned k, uint64_t m[8]);

/* Set an item's bits; returns how many were newly set (0: it was there) and
 * the shard. Touches no counter, so a builder can keep its own tallies. */
unsigned filter_add_hash_raw(struct filter *f, struct hash128 h, uint32_t *shard);

/* Add, updating the shard's counters. True if the item was new. */
bool filter_add(struct filter *f, const void *item, size_t len);
bool filter_add_hash(struct filter *f, struct hash128 h);
bool filter_check(const struct filter *f, const void *item, size_t len);
bool filter_check_hash(const struct filter *f, struct hash128 h);
/* The index of the first of the hashes h[0..n) the filter holds, n if none:
 * for the probes of one query (a URL's expressions, most of them absent),
 * each tested with an early exit after its first positions (the blocked
 * layout). Same answers as filter_check_hash, in order. */
size_t filter_first_present(const struct filter *f, const struct hash128 *h, size_t n);

/* Hash every key, prefetch every block, then test: the memory latency of a
 * batch overlaps instead of adding up. */
void filter_check_batch(const struct filter *f, const struct filter_key *keys, size_t n,
                        bool *present);
void filter_add_batch(struct filter *f, const struct filter_key *keys, size_t n, bool *added);

/* How many more new items adds may bring: UINT64_MAX for a Bloom filter
 * (it takes any number, its rate growing), 0 for a plain fuse filter (it
 * takes none), the room left in its delta for a fuse filter served with one
 * (bloom/fusedelta.h). The gate refuses an add past it. */
uint64_t filter_room(const struct filter *f);

uint64_t filter_items(const struct filter *f);
uint64_t filter_bits_set(const struct filter *f);
uint64_t filter_bytes(const struct filter *f); /* memory the bits take */
double filter_estimated_fpr(const struct filter *f);
void filter_get_plan(const struct filter *f, struct filter_plan *out);

/* Recount a shard's set bits from its words (after a load or a build); a
 * counting filter's non-zero counters. */
uint64_t filter_shard_popcount(const struct filter *f, uint32_t shard);

#endif
