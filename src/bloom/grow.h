/* grow: a filter that grows (docs/design.md, "Growing filters"): a scalable
 * Bloom filter (Almeida, Baquero, Preguica, Hutchison 2007). Sub-filter i
 * is sized for C * 2^i items at the rate P * (1 - r) * r^i with r = 1/2,
 * that is P/2, P/4, P/8, ...: a check is a false positive when any
 * sub-filter's is, so the compound rate is at most the sum of theirs,
 * P * (1 - r^n) < P, however many sub-filters there are. Each sub-filter is
 * planned by filter_plan_make, whose rate at capacity is at most its target.
 *
 * An add goes to the newest sub-filter unless some sub-filter already holds
 * the item; once the newest holds its capacity (its item count: adds that
 * set a new bit), the next add first makes sub-filter n. The sub-filters
 * and their boundaries follow from the seed and the order of the adds
 * alone, so a journal replayed onto a filter of the same seed (the daemon
 * derives it from the journal's salt) makes the same sub-filters.
 *
 * Memory: max_bytes bounds the sum of the sub-filters' bytes. grow_admit
 * says whether an add of n items could need a sub-filter past it, before
 * the add is journaled; the add itself never refuses (a journal replay must
 * put back every acknowledged item), so a max_bytes lowered since the adds
 * were made holds the filter at its old size and refuses new adds.
 *
 * Threads: checks from any thread, lock-free: sub-filters are published by a
 * release store of the count and never freed before the head. Adds (and
 * grow_admit) take the filter's mutex. */
#ifndef BLOOMGATE_GROW_H
#define BLOOMGATE_GROW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/filter.h"

#define GROW_MAX_SUBS 40 /* 2^40 times the first capacity: past FILTER_MAX_CAPACITY */
#define GROW_AHEAD 4     /* plans kept for the next sub-filters */

struct filter_grow {
    enum filter_layout layout;
    uint64_t capacity; /* C: the first sub-filter's */
    double fpr;        /* P: the compound bound */
    uint64_t seed;     /* every sub-filter's: an item is hashed once */
    _Atomic uint64_t max_bytes; /* 0: no bound */
    _Atomic unsigned n;         /* sub-filters made; sub[0..n) are readable */
    /* filter_items(sub[n - 1]), kept under mu by every add and growth (no
     * other writer adds to a sub-filter) rather than summed over its shards
     * on each add. */
    uint64_t newest_items;
    struct filter *sub[GROW_MAX_SUBS];
    pthread_mutex_t mu; /* adds, growth, the plans */
    /* Plans of the next sub-filters (a blocked plan costs ~0.1 s of the
     * exact model: made once, ahead of need by grow_prepare, not on every
     * add): sub-filter i's in slot i % GROW_AHEAD, since only the next few
     * are ever wanted, and a slot taken by another is made again. A few
     * slots and not one per sub-filter: every created filter carries this. */
    struct {
        unsigned i; /* the sub-filter the plan is for */
        bool made;  /* plan holds it */
        struct filter_plan plan;
    } ahead[GROW_AHEAD];
    /* Each sub-filter's model rate at capacity (its plan's), made when it
     * was: its checkpoint keeps it (bloom/grow_file.h). */
    double fpr_expected[GROW_MAX_SUBS];
    /* Each sub-filter's estimated rate and the bits_set + 1 it was made at
     * (the blocked estimate costs milliseconds; a full sub-filter's never
     * changes). Any thread; a race stores the same value twice. */
    _Atomic uint64_t est_bits[GROW_MAX_SUBS], est_fpr[GROW_MAX_SUBS];
};

/* What INFO shows of one sub-filter. */
struct grow_sub_info {
    uint64_t capacity, items, bytes, bits_set;
    double fpr_target, fpr_estimated;
    unsigned k;
};

/* The plan of sub-filter i of a filter of capacity C and rate P. -1 with
 * err when it cannot be made (its rate below FILTER_MIN_FPR, its capacity
 * past FILTER_MAX_CAPACITY). Any thread. */
int grow_plan(enum filter_layout layout, uint64_t capacity, double fpr, unsigned i,
              struct filter_plan *out, char *err, size_t errlen);

/* A growing filter of rate fpr: a head every filter_* call accepts, with
 * its first sub-filter made from first (grow_plan's plan 0). max_bytes 0:
 * no bound; else at least the first sub-filter's bytes. Only the blocked
 * and classic layouts. NULL with err. The loading thread. */
struct filter *grow_filter_create(const struct filter_plan *first, double fpr, uint64_t seed,
                                  uint64_t max_bytes, char *err, size_t errlen);
void grow_free(struct filter_grow *g);

/* A growing filter made of sub-filters already filled (a checkpoint read
 * back, bloom/grow_file.h): subs[0..n) become its own (freed with it, or
 * here on failure), sub i made from plans[i], the plan grow_plan(layout,
 * capacity, fpr, i) made, all of seed `seed`: the caller has checked that.
 * Their model rates are kept, not made again (a blocked plan's model is
 * slow).
 * NULL with err. The loading thread. */
struct filter *grow_filter_adopt(enum filter_layout layout, uint64_t capacity, double fpr,
                                 uint64_t seed, uint64_t max_bytes, struct filter **subs,
                                 const struct filter_plan *plans, unsigned n, char *err,
                                 size_t errlen);

/* The growing filter behind head, or NULL when head is not one. */
struct filter_grow *grow_of(const struct filter *head);

/* Give a filter that holds nothing yet a new seed (the daemon's, derived
 * from its journal). -1 if it holds something. The loading thread, before
 * the filter is shared. */
int grow_reseed(struct filter *head, uint64_t seed);

/* Whether n more items fit: 0, or -1 with why (max_memory, the items held,
 * the sub-filters) when adding them could need a sub-filter that max_bytes
 * has no room for, or one that cannot be made. Counts every item as new.
 * The adding thread (callers order adds). */
int grow_admit(struct filter_grow *g, size_t n, char *err, size_t errlen);

/* Make the plan of the next sub-filter once the newest is half full, if it
 * is not made yet, outside the adds' lock, so that the add that needs it
 * does not wait for the model.
 * The reload thread, once a second; any thread. */
void grow_prepare(struct filter_grow *g);

static inline unsigned grow_count(struct filter_grow *g)
{
    return atomic_load_explicit(&g->n, memory_order_acquire);
}

/* Sub-filter i (i < grow_count), as INFO shows it. Any thread. */
void grow_sub_info(struct filter_grow *g, unsigned i, struct grow_sub_info *out);

/* The bound on the compound rate of the sub-filters made: the sum of their
 * targets, below the configured rate. Any thread. */
double grow_fpr_bound(struct filter_grow *g);

#endif
