/* journal_int: what the journal's two files share (journal.c: open, append,
 * sync; journal_read.c: checksums, scans, replays). Not for other modules. */
#ifndef BLOOMGATE_JOURNAL_INT_H
#define BLOOMGATE_JOURNAL_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "store/journal.h"

/* "PATH: ..." into err; returns -1 so that callers can `return journal_fail(...)`. */
__attribute__((format(printf, 3, 4))) static inline int journal_fail(char *err, size_t errlen,
                                                                     const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* errno's text, or what a read that came up short means. */
static inline const char *errno_text(int e)
{
    return e ? strerror(e) : "the file ended early";
}

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

#endif
