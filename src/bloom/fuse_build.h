/* fuse_build: a whole fuse filter (bloom/fuse.h) made from hashes in memory.
 * Above filter.c, which it allocates through, and fuse.c, whose shard
 * construction it runs on threads. */
#ifndef BLOOMGATE_FUSE_BUILD_H
#define BLOOMGATE_FUSE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "bloom/filter.h"

/* A whole fuse filter for plan from n hashes in memory (made with seed, any
 * order, duplicates allowed; not modified), shards built on threads threads
 * (0: every CPU). For tests, the benchmark and small builds: the build tool
 * collects hashes with bounded memory instead (tool/build_fuse.h). NULL
 * with err. */
struct filter *fuse_filter_build(const struct filter_plan *plan, uint64_t seed,
                                 const struct hash128 *hashes, size_t n, unsigned threads,
                                 char *err, size_t errlen);

#endif
