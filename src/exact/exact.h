/* exact: the exact second phase behind a filter (issue 30). A table of every
 * listed key's 64-bit fingerprint (or the keys themselves), sorted, memory-mapped
 * read-only, with a small index in the heap so that one lookup reads one page
 * of the file (docs/file-format.md, "The exact table"). Pure: base/ and xxHash.
 * A loaded table is immutable: any thread may look up in it at once. */
#ifndef BLOOMGATE_EXACT_H
#define BLOOMGATE_EXACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exact/fp.h"

#define EXACT_MAGIC "BGEXACT\x1a"
#define EXACT_VERSION 1u
#define EXACT_HEADER_BYTES 128u
#define EXACT_PAGE 4096u
#define EXACT_PER_PAGE (EXACT_PAGE / 8u) /* fingerprints in one table page */

/* What a table holds: every key's fingerprint, or the keys too (sorted by
 * fingerprint, then bytes), so that a YES is exact outright and names the entry. */
enum exact_kind {
    EXACT_KIND_FP = 1,
    EXACT_KIND_KEYS = 2,
};

/* A key longer than this is refused by the builder (the filter's items are far
 * shorter; the bound keeps a run record's length field and a reader's buffer small). */
#define EXACT_MAX_KEY 65535u

struct exact_table;

/* What the header says, checked (exact_table_info). */
struct exact_info {
    enum exact_kind kind;
    uint64_t count;       /* distinct entries */
    uint64_t seed;        /* the fingerprint seed (exact/fp.h) */
    uint64_t file_bytes;  /* the whole file */
    uint64_t index_bytes; /* heap a loaded table holds: fences and directory */
    uint64_t blob_bytes;  /* keys tables: the keys' bytes */
    /* The header checksum, which covers every section's checksum: what a
     * filter file records to name the table it was built with. */
    uint64_t checksum;
};

/* Map the table at path, after checking its header, its sizes against the
 * file's, and its fence index (read into the heap, checksum and order). The
 * fingerprint pages are not read: exact_table_verify does that. NULL with the
 * file named and the fault in err. The table keeps its own mapping: the file
 * may be renamed or unlinked afterwards. Any thread. */
struct exact_table *exact_table_open(const char *path, char *err, size_t errlen);
/* The same over an open descriptor (not closed; the mapping outlives it); name
 * is for messages. */
struct exact_table *exact_table_open_fd(int fd, const char *name, char *err, size_t errlen);
void exact_table_close(struct exact_table *t);

/* The full checksum pass: every section's checksum, the fence index against
 * the pages, the order of the fingerprints (and the keys' offsets, and that
 * every key hashes to its fingerprint in a keys table). Reads the whole file;
 * 0, or -1 with the fault in err. Any thread. */
int exact_table_verify(const struct exact_table *t, char *err, size_t errlen);

void exact_table_info(const struct exact_table *t, struct exact_info *out);
/* The hasher for this table's fingerprints. */
const struct exact_fp_secret *exact_table_secret(const struct exact_table *t);
const char *exact_table_name(const struct exact_table *t);

/* Whether the fingerprint fp is in the table. In a keys table this answers
 * for the fingerprint only; exact_table_find compares the bytes. Reads at most
 * one page of the file (none when fp is a page's first). Any thread. */
bool exact_table_has_fp(const struct exact_table *t, uint64_t fp);

/* Whether the key is listed: its fingerprint in a fingerprint table, the key
 * itself in a keys table. In a keys table *entry (when not NULL) receives the
 * listed entry's position, for exact_table_entry. Any thread. */
bool exact_table_find(const struct exact_table *t, const void *key, size_t len, uint64_t *entry);
/* The same with the key's fingerprint already computed (exact_fp under
 * exact_table_secret), so a caller that also asks a delta hashes once. */
bool exact_table_find_fp(const struct exact_table *t, uint64_t fp, const void *key, size_t len,
                         uint64_t *entry);

/* The bytes of entry i of a keys table (a pointer into the mapping, valid until
 * close), or NULL (a fingerprint table, i out of range, or bad offsets: a
 * table that exact_table_verify would refuse). */
const void *exact_table_entry(const struct exact_table *t, uint64_t i, size_t *len);
/* The fingerprint of entry i (0 past the end). */
uint64_t exact_table_fp_at(const struct exact_table *t, uint64_t i);

/* One question of a batch: fp = exact_fp(exact_table_secret(t), key, len);
 * key/len are compared in a keys table (NULL there asks for the fingerprint
 * only); slot says where the answer goes. */
struct exact_probe {
    uint64_t fp;
    const void *key;
    size_t len;
    size_t slot;
};

/* Ask to read the pages ahead (madvise(MADV_WILLNEED) on each distinct page
 * before any is read): the kernel then reads them in parallel; worth it when the
 * table is not in the page cache, a system call per page when it is. */
#define EXACT_BATCH_WILLNEED 1u

/* Ask the kernel (as EXACT_BATCH_WILLNEED) only when the batch's pages look
 * out of the page cache (mincore on up to four of them, one missing is
 * enough): what a server wants when it cannot know whether its table is
 * cached; a cached table pays four system calls a batch, not one a page. */
#define EXACT_BATCH_WILLNEED_AUTO 2u

/* Answer a batch: out[p[i].slot] = whether p[i] is listed. Sorts p in place by
 * fingerprint, so that each page is read once and in file order; prefetches
 * each page's middle line before the searches (and with EXACT_BATCH_WILLNEED,
 * asks the kernel for every page first; with EXACT_BATCH_WILLNEED_AUTO, only
 * if a sample of its pages is not all resident). A keys table's batch does the same
 * for the probes' offsets, then their keys' bytes, a round each. Returns the
 * distinct fingerprint pages read (out may alias nothing in p). Allocates a
 * word a probe for a keys table (without memory, it answers one by one).
 * Any thread. */
size_t exact_table_confirm(const struct exact_table *t, struct exact_probe *p, size_t n, bool *out,
                           unsigned flags);

#endif
