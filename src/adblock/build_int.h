/* build_int: the builder's containers (growing arrays, a (key, rule) pair
 * list, a token count map) and the layout of one token table, shared by
 * engine.c's finish and kept apart from it for size. The builder's thread
 * only. */
#ifndef BLOOMGATE_ADBLOCK_BUILD_INT_H
#define BLOOMGATE_ADBLOCK_BUILD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adblock/engine_int.h"

/* A growing array of (key, rule) pairs, one per kind and table. */
struct pairs {
    uint64_t *v; /* key << 32 | rule */
    size_t n, cap;
};
/* A plain counting map from token hash to how many rules offer it. */
struct counts {
    uint32_t *k, *v;
    size_t cap, n;
};

/* Grow *p (of *cap elements of size bytes) to hold need: false when out of
 * memory (*p unchanged). */
bool ab_grow(void **p, size_t *cap, size_t need, size_t size);
bool ab_pairs_add(struct pairs *p, uint32_t key, uint32_t rule);
int ab_cmp_u64(const void *a, const void *b);
/* The count of key (added at 0 when add), or NULL (absent, or out of memory). */
uint32_t *ab_counts_at(struct counts *c, uint32_t key, bool add);
/* Lay out table t from its pairs (sorted here): its slots, its bitmap, and
 * the id lists of keys with several rules (build_index.c says the load). */
bool ab_table_build(struct ab_table *t, struct pairs *p, uint32_t **ids, size_t *nids,
                    size_t *ids_cap);
/* Lay out the host table from its (host hash, value) pairs (sorted here, so
 * a host filed twice is found in the order of its values). */
bool ab_htable_build(struct ab_htable *t, struct pairs *p);

#endif
