/* exact_int: what table.c, build.c and delta.c share: the header's offsets
 * (docs/file-format.md, "The exact table"), little-endian access, and the
 * loaded table. Not for other modules. */
#ifndef BLOOMGATE_EXACT_INT_H
#define BLOOMGATE_EXACT_INT_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include "exact/exact.h"

enum {
    EH_MAGIC = 0,
    EH_VERSION = 8,
    EH_KIND = 12,
    EH_COUNT = 16,
    EH_SEED = 24,
    EH_PAGE = 32,
    EH_RESERVED = 36,
    EH_FP_OFF = 40,
    EH_FENCE_OFF = 48,
    EH_FENCE_COUNT = 56,
    EH_OFFS_OFF = 64,
    EH_BLOB_OFF = 72,
    EH_BLOB_BYTES = 80,
    EH_FILE_BYTES = 88,
    EH_FP_SUM = 96,
    EH_FENCE_SUM = 104,
    EH_KEYS_SUM = 112,
    EH_HEADER_SUM = 120,
};

static inline uint64_t exact_get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64toh(v);
}
static inline uint32_t exact_get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return le32toh(v);
}
static inline void exact_put64(unsigned char *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, 8);
}
static inline void exact_put32(unsigned char *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, 4);
}
static inline uint64_t exact_align(uint64_t x)
{
    return (x + EXACT_PAGE - 1) / EXACT_PAGE * EXACT_PAGE;
}

struct exact_table {
    char *name;
    const unsigned char *map; /* the whole file, read-only */
    uint64_t map_bytes;
    enum exact_kind kind;
    uint64_t count;
    struct exact_fp_secret secret;
    const uint64_t *fps; /* count little-endian words in the mapping */
    uint64_t *fences;    /* heap: fences[p] = the first fingerprint of page p */
    uint64_t fence_count;
    uint32_t *dir; /* heap: dir[t] = first fence whose top dir_bits are >= t */
    unsigned dir_bits;
    const uint64_t *offs; /* keys: count + 1 offsets into blob */
    const unsigned char *blob;
    uint64_t blob_bytes;
    unsigned char header[EXACT_HEADER_BYTES];
};

/* Fingerprints of keys tables may repeat (two keys, one fingerprint); a
 * fingerprint table's never do. The first position whose fingerprint is >= fp. */
uint64_t exact_lower_bound(const struct exact_table *t, uint64_t fp);

/* The table writer (write.c): entries in order (fingerprint, then key bytes;
 * the caller drops repeats), to a temporary file beside path, committed
 * durably or removed. The builder and the fold both end in it. */
struct exact_writer;
struct exact_writer *exact_writer_open(const char *path, enum exact_kind kind, uint64_t seed,
                                       const char *tmpdir, char *err, size_t errlen);
/* A keys table whose distinct entries and key bytes are known before the
 * first put: every section goes straight to its place in the one file, with
 * no temporary files to append. Commit fails if the puts do not match. */
struct exact_writer *exact_writer_open_sized(const char *path, uint64_t seed, uint64_t count,
                                             uint64_t blob_bytes, char *err, size_t errlen);
int exact_writer_put(struct exact_writer *w, uint64_t fp, const void *key, size_t len);
/* Commit and free w; 0, or -1 with the reason (the temporary file removed). */
int exact_writer_commit(struct exact_writer *w, uint64_t *count, uint64_t *file_bytes, char *err,
                        size_t errlen);
void exact_writer_abort(struct exact_writer *w);
/* An unlinked temporary file in dir (O_TMPFILE, or mkstemp and unlink). */
int exact_tmpfile(const char *dir, char *err, size_t errlen);
/* The directory part of path into buf ("." when it has none). */
void exact_dirname(const char *path, char *buf, size_t len);

#endif
