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
#define FORMAT_VERSION 4u
#define FORMAT_VERSION_KEYS 2u /* the first version with a key kind */
/* Version 3 adds the fuse layout: its geometry (offsets 100 and 104) and a
 * construction seed per shard (the shard entry's last 8 bytes). Only fuse
 * files are written as version 3, so a reader that predates the layout
 * refuses them as "newer" instead of misreading fingerprints as bits. */
#define FORMAT_VERSION_FUSE 3u
/* Version 4 adds a section after the last shard (offsets 108 and 116): the
 * adblock kind's compiled engine, its own length and checksum at its head.
 * Only files with a section are written as version 4. */
#define FORMAT_VERSION_SECTION 4u
#define FORMAT_SECTION_ADBLOCK 1u /* the section kind of a compiled Adblock engine */
/* The exact table a filter was built with (exact/ref.h): its file name beside
 * the filter file, kind, count and header checksum. Exact, host or url keys. */
#define FORMAT_SECTION_EXACT 3u
#define FORMAT_SECTION_WORDS 4u   /* the section kind of a compiled word list (words_serialize) */
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
    uint64_t section_offset; /* version 4: where the section starts (after the last shard) */
    uint64_t section_bytes;  /* version 4: its size, head included; 0: no section */
    uint32_t section_kind;   /* FORMAT_SECTION_*, 0 for none */
    struct format_shard *shards; /* plan.shard_count entries; free with format_info_free */
};

/* "exact", "host", "url", "adblock", "words"; "?" for a value out of range. */
const char *format_keys_name(enum filter_keys keys);
/* The section kind a file of key kind keys must hold: FORMAT_SECTION_ADBLOCK,
 * FORMAT_SECTION_WORDS, or 0 for the kinds that are bits (which may hold
 * FORMAT_SECTION_EXACT, or none: format_section_fits). */
uint32_t format_section_of(enum filter_keys keys);
/* Whether a file of key kind keys may hold a section of kind kind (0: none). */
int format_section_fits(enum filter_keys keys, uint32_t kind);
/* The kind named s: 0, or -1 if s names none. */
int format_keys_parse(const char *s, enum filter_keys *out);

/* Read and check the header and shard table (not the payloads). */
int format_read_info(const char *path, struct format_info *info, char *err, size_t errlen);
void format_info_free(struct format_info *info);

/* Load a whole filter, verifying every checksum, shards spread over threads
 * (0 = every CPU). NULL with a message naming the file and the fault. */
struct filter *format_load(const char *path, unsigned threads, char *err, size_t errlen);

/* The section of a version-4 file whose header info holds (format_read_info),
 * read whole and checked against its checksum: a malloc'd body in *out, its
 * size in *len. 0, or -1 with a message naming the file and the fault. */
int format_read_section(const char *path, const struct format_info *info, void **out, size_t *len,
                        char *err, size_t errlen);

/* Check every checksum without keeping the filter in memory. Returns the number
 * of bad shards, a bad section counted as one (0 = sound), or -1 if the file
 * could not be checked at all. */
int format_verify(const char *path, unsigned threads, char *err, size_t errlen);

/* Write the filter durably (its key kind included: f->keys): temporary file beside path, fsync,
 * rename, fsync the directory. Counts and checksums are computed here, over threads. */
int format_write(struct filter *f, const char *path, unsigned threads, char *err, size_t errlen);
/* format_write with a section of kind (FORMAT_SECTION_*) holding body after
 * the last shard; the file is version 4. kind 0 is format_write. */
int format_write_section(struct filter *f, const char *path, unsigned threads, uint32_t kind,
                         const void *body, size_t body_len, char *err, size_t errlen);

#endif
