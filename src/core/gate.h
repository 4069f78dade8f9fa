/* gate: the one path every protocol takes to add items to a served filter and
 * to make the adds of a batch durable before any reply of that batch goes out.
 * Worker threads; each worker owns one struct gate_batch and never shares it. */
#ifndef BLOOMGATE_GATE_H
#define BLOOMGATE_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "bloom/filter.h"
#include "store/journal.h"
#include "store/registry.h"

#define GATE_MAX_DIRTY 8 /* journals awaiting one group commit per batch */

struct journal;

/* The journals appended to since the last gate_commit, on one worker. */
struct gate_batch {
    struct journal *dirty[GATE_MAX_DIRTY];
    unsigned n_dirty;
    /* Where the per-filter settings the gate applies are read (`full`):
     * the worker's registry, set once before the worker runs; NULL (tests
     * that drive the gate alone) applies the defaults. */
    struct registry *reg;
};

/* Add n keys to filter e (journal first, then the version the caller holds,
 * then the version a reload is preparing). added[i], if added is not NULL,
 * says whether key i set a new bit. -1 with the reason in err if the journal
 * refused the add: then nothing was added, and the request must be refused. */
int gate_add(struct gate_batch *b, const struct fentry *e, const struct filter_key *keys, size_t n,
             bool *added, char *err, size_t errlen);

/* Any mutation (store/journal.h's ops), by the same path as gate_add, which
 * is gate_mutate(JOURNAL_OP_ADD). changed[i] (may be NULL) as amend_apply
 * says. -1 with the reason if the journal refused it (nothing was done) or
 * memory ran out (the record is in the journal: the request must be refused,
 * and a replay will apply it). */
int gate_mutate(struct gate_batch *b, const struct fentry *e, enum journal_op op,
                const struct filter_key *keys, size_t n, bool *changed, char *err, size_t errlen);

/* gate_mutate, and a refusal: a REMOVE of an item a counting filter does
 * not hold (as often as the request removes it) refuses the whole request
 * before anything is journaled or changed: GATE_REFUSED, *refused (may be
 * NULL) the index of the first such item, err naming it and why. */
#define GATE_REFUSED (-2)
/* A configured limit of the filter refused the request before anything was
 * journaled (a growing filter's max_memory, a word list's words_delta_max):
 * GATE_LIMIT, err naming the limit. Every other failure is -1. */
#define GATE_LIMIT (-3)
int gate_mutate_ex(struct gate_batch *b, const struct fentry *e, enum journal_op op,
                   const struct filter_key *keys, size_t n, bool *changed, size_t *refused,
                   char *err, size_t errlen);

/* Whether err, from a refused gate_mutate, says the filter is full: a fuse
 * file's delta without room, or a fixed-size filter at its capacity under
 * `full refuse`. Every such refusal reads "filter NAME is full: ...", so a
 * front may answer it in its own words (RESP: RedisBloom's). */
bool gate_is_full(const char *err);

/* Whether the batch appended to a journal that still needs its group commit. */
static inline bool gate_dirty(const struct gate_batch *b)
{
    return b->n_dirty != 0;
}

/* Group commit: make the batch's journal records durable before any reply of
 * the batch is written. False if a commit failed: then no reply may go out. */
bool gate_commit(struct gate_batch *b);

#endif
