/* build_fuse: how `bloomgate build --layout fuse` makes a fuse filter. A fuse
 * filter is built from all of a shard's keys at once, so the build's
 * workers do not insert: they hand each key's hash to a collector (a
 * composite head, struct filter_comp_ops, that every filter_add_hash_raw
 * of the builder reaches), and once every input and journal is read the
 * shards are built in parallel from what was collected (bloom/fuse.h).
 *
 * Memory: the hashes (16 bytes a key, duplicates included) are kept in
 * memory while they fit in BUILD_FUSE_MEM_BYTES; a larger build spills them
 * to unlinked temporary files beside the output, one per group of shards,
 * each group under that size, and builds one group at a time. So a build
 * holds the filter, one group's hashes twice (read and sorted by shard), and
 * ~45 bytes a key of each shard being built per thread. */
#ifndef BLOOMGATE_BUILD_FUSE_H
#define BLOOMGATE_BUILD_FUSE_H

#include <stddef.h>
#include <stdint.h>

#include "bloom/filter.h"

/* The memory a build's hashes may take before they spill to files (a test
 * lowers it through seam_build_fuse_mem_bytes so that a small build spills:
 * tests/unit/tool/check_build_fuse.c). */
#define BUILD_FUSE_MEM_BYTES (256ull << 20)

/* A head for plan (a fuse plan) with the seed items are hashed with: adds
 * reach its collector from any number of threads. output names the
 * directory for spill files. NULL with err. Calling thread. */
struct filter *build_fuse_collector(const struct filter_plan *plan, uint64_t seed,
                                    const char *output, char *err, size_t errlen);

/* The builder's filter: a collector for a fuse plan, else filter_create's. */
struct filter *build_fuse_filter_create(const struct filter_plan *plan, uint64_t seed,
                                        const char *output, char *err, size_t errlen);

/* Build the fuse filter from what *f (a collector head) collected, on
 * threads threads (0: every CPU); *f is freed and replaced by the built
 * filter (same seed, keys and plan; shard item counts are the distinct
 * keys); nothing for any other filter. Every thread that added must have exited, except the calling
 * one. -1 with err (*f then is left for the caller to free). */
int build_fuse_finish(struct filter **f, unsigned threads, char *err, size_t errlen);

#endif
