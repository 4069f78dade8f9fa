/* counting: the counting layout (FILTER_COUNTING), a blocked Bloom filter in
 * which every bit is a 4-bit counter, so an item can be removed again
 * (docs/design.md, "Counting filters"). A struct filter of this layout has
 * the usual shards; its words hold 16 counters each, a 64-byte block 128,
 * and all k counters of an item lie in one block (one cache line), chosen as
 * the blocked layout chooses its block. bits_per_shard is the memory in
 * bits (4 per counter); a shard's bits_set counts its non-zero counters, its
 * items the adds less the removals.
 *
 * An add increments each of the item's (distinct) counters, a removal
 * decrements them, a check asks whether all are non-zero. A counter that
 * reaches 15 saturates and sticks: it is never incremented or decremented
 * again. It may then hold more adds than it can count, so a decrement could
 * bring it to zero while items that still hold it are in the filter: a
 * false negative. Stuck at 15, it can only keep a false positive.
 *
 * Threads: checks from any thread, lock-free (relaxed loads of the block's
 * words). Adds and removals from any thread: each word of the block is
 * changed by one compare-and-swap, so concurrent adds all count. A removal
 * refuses (changes nothing) when any of the item's counters is zero; two
 * removals racing for the last count of a shared counter are told apart by
 * the CAS (the loser undoes the words it had already decremented), but the
 * daemon orders all mutations of a filter anyway (store/amend.h). */
#ifndef BLOOMGATE_COUNTING_H
#define BLOOMGATE_COUNTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/shape.h"

#define COUNTING_MAX 15u       /* a counter at this value saturates and sticks */
#define COUNTING_PER_WORD 16u  /* 4-bit counters in a 64-bit word */
#define COUNTING_PER_BLOCK 128u

/* Size a counting filter: the blocked model over 128-counter blocks gives
 * counters per item and k; the memory is 4 bits a counter. Fills what
 * filter_plan_make fills (bits_per_shard = memory bits). */
int counting_plan_make(uint64_t capacity, double fpr, uint32_t shards, struct filter_plan *out,
                       char *err, size_t errlen);
/* The model's rate for a counting plan (for filter_get_plan). */
double counting_plan_fpr(uint64_t bits_per_shard, uint32_t shards, uint64_t capacity, unsigned k);

bool counting_check_hash(const struct filter *f, struct hash128 h);
void counting_check_batch(const struct filter *f, const struct filter_key *keys, size_t n,
                          bool *present);

/* Increment h's counters (saturated ones stay at 15). Returns how many went
 * from zero to one and *was_present whether every counter was non-zero
 * before; updates the shard's figures (items + 1). */
unsigned counting_add_hash(struct filter *f, struct hash128 h, bool *was_present);

/* Decrement h's counters (saturated ones stay at 15). False, and nothing
 * changed, if any of them is zero: the filter does not hold the item. */
bool counting_remove_hash(struct filter *f, struct hash128 h);

/* Whether every key is held with the multiplicity the batch asks for:
 * removing keys[0..n) in order would never find a zero counter. The index
 * of the first key that would, or n; COUNTING_NO_MEMORY if it could not
 * tell. Read-only; the caller keeps other mutations out while it acts on
 * the answer. */
#define COUNTING_NO_MEMORY SIZE_MAX
size_t counting_can_remove(const struct filter *f, const struct filter_key *keys, size_t n);

/* Non-zero counters among n words (a loaded shard's bits_set). */
uint64_t counting_nonzero(const uint64_t *w, size_t n);
/* The model's rate from how many counters are non-zero. */
double counting_estimated_fpr(const struct filter *f);

#endif
