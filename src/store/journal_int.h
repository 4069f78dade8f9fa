/* journal_int: what the journal's files share (journal.c: open, append,
 * sync; journal_read.c: checksums, scans, replays; journal_compact.c: the
 * rewrite of a windowed filter's journal). Not for other modules. */
#ifndef BLOOMGATE_JOURNAL_INT_H
#define BLOOMGATE_JOURNAL_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "store/journal.h"

/* The open journal (journal.c; journal_compact.c swaps its file). */
struct journal {
    char *path;
    /* O_RDWR | O_APPEND, holding an exclusive flock; appends write() to it,
     * replays pread() from it, both at once. journal_compact swaps it under
     * sync_mu and mu (the reload thread, which alone replays). */
    int fd;
    _Atomic int policy;      /* enum conf_fsync; a reload may change it */
    uint64_t salt;           /* seed of every record checksum (from the header) */
    pthread_mutex_t mu;      /* orders appends; guards failed and failure */
    _Atomic uint64_t end;    /* bytes of complete records: the logical end */
    pthread_mutex_t sync_mu; /* one fdatasync at a time; taken before mu, never after */
    _Atomic uint64_t synced; /* every byte before this is on disk */
    bool failed;             /* sticky: an fdatasync or a cleanup truncation failed */
    char failure[512];       /* why, repeated to every later append */
};

/* XXH3-64 seeded with the journal's salt over a record's first 8 bytes and
 * its payload (counted in journal_io_counters). Any thread. */
uint64_t journal_record_sum(uint64_t salt, const unsigned char *head8, const unsigned char *payload,
                            size_t len);

/* Check every record of fd from the header to size, filling s (records,
 * items, end, a torn tail); cuts nothing. -1 with err on corruption that is
 * not a torn tail, or a read error. Any thread. */
int journal_scan_records(const char *path, int fd, uint64_t salt, uint64_t size,
                         struct journal_scan *s, char *err, size_t errlen);

/* Hand every item of the records in [from, to) to fn, each record checked
 * (checksum, then framing) first. The count, or -1 with err. Any thread. */
int64_t journal_replay_range(const char *path, int fd, uint64_t salt, uint64_t from, uint64_t to,
                             journal_op_fn *fn, void *ctx, char *err, size_t errlen);

/* One checked record of a walk: its offset, its 16-byte header, its payload
 * (valid during the call) and what its tag says. Return 0 to go on. */
typedef int journal_rec_fn(void *ctx, uint64_t off, const unsigned char *head,
                           const unsigned char *payload, uint32_t len, enum journal_op op,
                           int64_t time_ms);

/* Hand every record of [from, to) to fn, each checked (checksum, then
 * framing) first. The number of records, or -1 with err. Any thread. */
int64_t journal_walk_records(const char *path, int fd, uint64_t salt, uint64_t from, uint64_t to,
                             journal_rec_fn *fn, void *ctx, char *err, size_t errlen);

/* Mark the journal failed for good (journal.c). sync_mu or nothing held. */
void journal_set_failed(struct journal *j, const char *msg);

#endif
