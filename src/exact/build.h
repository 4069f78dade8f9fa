/* build: writing exact tables. A builder takes keys from any number of
 * threads at once, fingerprints them on the caller's thread, sorts full
 * buffers on every core and spills them as sorted runs, then merges the runs
 * into the table, written durably (temporary file beside the target, fsync,
 * rename, fsync of the directory). Memory stays under the budget given, about
 * whatever the number of keys (docs/design.md, "The exact phase"). */
#ifndef BLOOMGATE_EXACT_BUILD_H
#define BLOOMGATE_EXACT_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "exact/exact.h"

struct exact_build_opts {
    const char *path; /* the table to write */
    enum exact_kind kind;
    uint64_t seed;      /* the fingerprint seed (exact/fp.h) */
    uint64_t mem_bytes; /* the budget for buffered keys; 0: 1 GiB; at least 1 MiB */
    unsigned threads;   /* sorting threads; 0: every CPU */
    const char *tmpdir; /* where runs spill (unlinked files); NULL: the table's directory */
};

struct exact_build_stats {
    uint64_t keys_in; /* keys added, repeats included */
    uint64_t count;   /* distinct entries written */
    uint64_t runs;    /* sorted runs spilled to disk (0: sorted in memory) */
    uint64_t file_bytes;
};

struct exact_builder;

/* NULL with the reason in err (a bad option, no memory). Any thread. */
struct exact_builder *exact_builder_new(const struct exact_build_opts *o, char *err, size_t errlen);
/* Add n keys. Any number of threads may call at once: each hashes its own keys,
 * then appends them under the builder's lock (and, when the buffer is full,
 * sorts and spills it there, on every core). 0, or -1 with the reason (a key
 * longer than EXACT_MAX_KEY, a failed write); after a failure every call fails. */
int exact_builder_add(struct exact_builder *b, const void *const *keys, const size_t *lens,
                      size_t n, char *err, size_t errlen);
/* Add fingerprints already computed under the seed (fingerprint tables only). */
int exact_builder_add_fps(struct exact_builder *b, const uint64_t *fps, size_t n, char *err,
                          size_t errlen);
/* Sort, merge, write and commit the table. Once, after every add has returned. */
int exact_builder_finish(struct exact_builder *b, struct exact_build_stats *st, char *err,
                         size_t errlen);
void exact_builder_free(struct exact_builder *b);

/* A random seed for a new table (getrandom). 0, or -1 with the reason. */
int exact_seed_random(uint64_t *seed, char *err, size_t errlen);

#endif
