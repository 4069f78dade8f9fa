/* grow_file: a growing filter (bloom/grow.h) as a file, so that a filter
 * filled at run time can be checkpointed and loaded back whole (every
 * sub-filter, its counts, the growth state) instead of replaying every add
 * its journal ever held (docs/file-format.md, "Growing filter
 * checkpoints"). Loading checks every byte before trusting it: a bad,
 * truncated or foreign file is refused with a message naming it. Any
 * thread; a write needs the filter's adds stopped (the caller's lock). */
#ifndef BLOOMGATE_GROW_FILE_H
#define BLOOMGATE_GROW_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "bloom/filter.h"

#define GROW_FILE_MAGIC "BLOOMGW\x1a"
#define GROW_FILE_VERSION 1u
#define GROW_FILE_FIXED 64u       /* the fixed header */
#define GROW_FILE_SUB_ENTRY 64u   /* one sub-filter's plan and counts */
#define GROW_FILE_SHARD_ENTRY 24u /* one shard's items, bits set, XXH3-64 */

/* What a file's header says, checked (grow_file_info). */
struct grow_file_info {
    enum filter_layout layout;
    enum filter_keys keys;
    uint64_t capacity; /* the first sub-filter's */
    double fpr;        /* the compound bound */
    uint64_t seed;
    unsigned subs;
    uint64_t items; /* every sub-filter's, summed */
    uint64_t bytes; /* the sub-filters' bits */
};

/* Write head, a growing filter, to path durably: a temporary file beside
 * it, fsynced, renamed into place, the directory fsynced. No add may run
 * meanwhile (the caller holds what orders them); the filter's own lock is
 * taken too. 0, or -1 with err naming the file. */
int grow_file_write(struct filter *head, const char *path, char *err, size_t errlen);

/* Read and check path's header (not the payloads). 0, or -1 with err. */
int grow_file_info(const char *path, struct grow_file_info *out, char *err, size_t errlen);

/* Load path as a growing filter whose adds are bounded by max_bytes (0: no
 * bound; a file past it is served, refusing new adds, as grow.h says),
 * every checksum and count verified; the file's key kind is the head's.
 * NULL with err naming the file and the fault. The loading thread. */
struct filter *grow_file_load(const char *path, uint64_t max_bytes, char *err, size_t errlen);

#endif
