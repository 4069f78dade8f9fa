/* delta: the run-time changes to an exact table (ADD and REMOVE between two
 * builds): a hash set of fingerprints (a keys table's: of keys) marked added,
 * or removed from the table below (a tombstone), and the fold that writes
 * table and delta as the next table. Readers are lock-free (a sequence lock:
 * a reader that overlaps a change reads again) and may run on any thread at
 * any time; changes and the fold come from one writer at a time (the caller
 * serialises them, as the daemon's ADD path already does). */
#ifndef BLOOMGATE_EXACT_DELTA_H
#define BLOOMGATE_EXACT_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exact/build.h"
#include "exact/exact.h"

struct exact_delta;

enum exact_delta_state {
    EXACT_DELTA_NONE = 0,    /* the table's answer stands */
    EXACT_DELTA_ADDED = 1,   /* listed, though the table has no such entry */
    EXACT_DELTA_REMOVED = 2, /* the table's entry was removed */
};

/* A delta over base (kept, not owned: it must outlive the delta), or over no
 * table (base NULL; then kind and seed say what its fold writes). NULL and
 * err on failure (no memory). Writer thread. */
struct exact_delta *exact_delta_new(const struct exact_table *base, enum exact_kind kind,
                                    uint64_t seed, char *err, size_t errlen);
/* Frees the delta and everything it ever held (removed entries' memory is
 * kept until here, since a reader may still be looking at it). No reader may
 * be inside a lookup. */
void exact_delta_free(struct exact_delta *d);

/* Add / remove a key. 1 when the answer for it changed, 0 when it already
 * was so, -1 on no memory. Writer thread. */
int exact_delta_add(struct exact_delta *d, const void *key, size_t len);
int exact_delta_remove(struct exact_delta *d, const void *key, size_t len);

/* What the delta says of a key (keys compared in a keys delta). Any thread, lock-free. */
enum exact_delta_state exact_delta_state(const struct exact_delta *d, const void *key, size_t len);
/* The whole answer: the delta's, else the table's. Any thread, lock-free. */
bool exact_delta_contains(const struct exact_delta *d, const void *key, size_t len);

/* For a caller that keeps a key's fingerprint and not its bytes (the line
 * front's CHECK ring): the secret to compute it under (the table's), whether
 * the delta answers from fingerprints alone (a fingerprint delta: true; a
 * keys delta compares bytes: false), and the whole answer from fp, as
 * exact_delta_contains gives it (false for a keys delta). Any thread, lock-free. */
const struct exact_fp_secret *exact_delta_secret(const struct exact_delta *d);
bool exact_delta_by_fp(const struct exact_delta *d);
bool exact_delta_contains_fp(const struct exact_delta *d, uint64_t fp);

/* Entries added and tombstones held. Any thread (a moment's view). */
void exact_delta_counts(const struct exact_delta *d, uint64_t *added, uint64_t *removed);

/* Write the table with the delta applied (the base's entries less the removed,
 * with the added) to o->path, in one merge of the sorted table with the sorted
 * delta; o's kind and seed are replaced by the delta's. The writer thread, or
 * any thread while no change is made. 0, or -1 with the reason in err. */
int exact_delta_fold(const struct exact_delta *d, const struct exact_build_opts *o,
                     struct exact_build_stats *st, char *err, size_t errlen);

#endif
