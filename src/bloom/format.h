/* format: the filter file. A little-endian header with a checksum, a table of
 * per-shard item counts, set-bit counts and checksums, then page-aligned shard
 * payloads (see docs/file-format.md). Loading never trusts a byte it has not
 * checked. Any thread; loads and writes spread shards over worker threads. */
#ifndef BLOOMGATE_FORMAT_H
#define BLOOMGATE_FORMAT_H

#include <stdint.h>

#include "bloom/filter.h"

#define FORMAT_MAGIC "BLOOMGT\x1a"
/* Version 2 adds the key kind (offset 96). An exact filter is still written as
 * version 1, which every reader takes; a host or url filter is version 2, so
 * that an older reader refuses it as "newer" instead of answering exact
 * lookups on expression keys (always NO) or calling it corrupt. */
#define FORMAT_VERSION 3u
#define FORMAT_VERSION_KEYS 2u /* the first version with a key kind */
/* Version 3 adds the fuse layout: its geometry (offsets 100 and 104) and a
 * construction seed per shard (the shard entry's last 8 bytes). Only fuse
 * files are written as version 3, so a reader that predates the layout
 * refuses them as "newer" instead of misreading fingerprints as bits. */
#define FORMAT_VERSION_FUSE 3u
#define FORMAT_FIXED_HEADER 128u
#define FORMAT_SHARD_ENTRY 32u
#define FORMAT_ALIGN 4096u

struct format_shard {
    uint64_t items;    /* adds that set a new bit */
    uint64_t bits_set; /* popcount of the payload */
    uint64_t checksum; /* XXH3-64 of the payload (bits_per_shard / 8 bytes) */
    uint64_t fuse_seed; /* fuse: the shard's construction seed; 0 otherwise */
};

/* Everything the header says, checked. */
struct format_info {
    uint32_t version;
    enum filter_keys keys; /* exact for a version-1 file */
    struct filter_plan plan;
    uint64_t items;
    uint64_t bits_set;
    uint64_t seed;
    int64_t build_time;
    uint64_t payload_offset;
    uint64_t shard_stride;
    uint64_t file_size;
    uint64_t checksum; /* the header's checksum: it covers every shard's, so it names the content */
    struct format_shard *shards; /* plan.shard_count entries; free with format_info_free */
};

/* "exact", "host", "url"; "?" for a value out of range. */
const char *format_keys_name(enum filter_keys keys);
/* The kind named s: 0, or -1 if s names none. */
int format_keys_parse(const char *s, enum filter_keys *out);

/* Read and check the header and shard table (not the payloads). */
int format_read_info(const char *path, struct format_info *info, char *err, size_t errlen);
void format_info_free(struct format_info *info);

/* Load a whole filter, verifying every checksum, shards spread over threads
 * (0 = every CPU). NULL with a message naming the file and the fault. */
struct filter *format_load(const char *path, unsigned threads, char *err, size_t errlen);

/* Check every checksum without keeping the filter in memory. Returns the number
 * of bad shards (0 = sound), or -1 if the file could not be checked at all. */
int format_verify(const char *path, unsigned threads, char *err, size_t errlen);

/* Write the filter durably (its key kind included: f->keys): temporary file beside path, fsync,
 * rename, fsync the directory. Counts and checksums are computed here, over threads. */
int format_write(struct filter *f, const char *path, unsigned threads, char *err, size_t errlen);

#endif
