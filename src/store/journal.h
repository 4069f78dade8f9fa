/* journal: the append-only file that makes runtime ADDs durable. Every ADD/MADD
 * is appended (length-framed, checksummed records; any item bytes) before it is
 * acknowledged, and replayed onto the filter at start-up and after every reload.
 * Worker threads append and commit; the main thread ticks; the reload thread
 * replays while appends go on. The offline tool reads journals by path. */
#ifndef BLOOMGATE_JOURNAL_H
#define BLOOMGATE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "bloom/filter.h"

/* The on-disk format is in docs/file-format.md, "The journal file". */
#define JOURNAL_MAGIC "BGJOURN\x1a"
#define JOURNAL_VERSION 1u
#define JOURNAL_HEADER_BYTES 32u        /* offset of the first record */
#define JOURNAL_RECORD_MAGIC "JRN\x1e"  /* first 4 bytes of every record */
#define JOURNAL_RECORD_HEADER 16u       /* magic, length, checksum */
#define JOURNAL_MAX_ITEM (1u << 20)     /* longest item: 1 MiB, as BUILD_MAX_LINE */
#define JOURNAL_MAX_PAYLOAD (16u << 20) /* longest record payload; bigger batches split */
#define JOURNAL_NO_TEAR UINT64_MAX

struct journal;

/* What a scan of a whole journal found (journal_open, journal_read_file). */
struct journal_scan {
    uint64_t records;     /* complete, checksummed records */
    uint64_t items;       /* items in them */
    uint64_t end;         /* offset just past the last complete record */
    uint64_t torn_at;     /* offset of a torn tail, or JOURNAL_NO_TEAR */
    uint64_t torn_bytes;  /* bytes from torn_at to the end of the file */
    const char *torn_why; /* what was wrong at torn_at (a string constant); NULL if none */
    int created;          /* journal_open made a new file, or gave a 0-byte one its header */
};

/* Called once per replayed item, in journal order. Return 0 to go on; anything
 * else stops the replay, which then fails. */
typedef int journal_item_fn(void *ctx, const void *item, size_t len);

/* What a record does to its items (docs/file-format.md, "Record tags"). A
 * record without a tag, which is every record a journal held before tags
 * and every plain ADD still, is an add. */
enum journal_op {
    JOURNAL_OP_ADD = 0,     /* ADD, MADD */
    JOURNAL_OP_ALLOW = 1,   /* ALLOW: an exception */
    JOURNAL_OP_UNALLOW = 2, /* UNALLOW: the exception dropped */
    JOURNAL_OP_REMOVE = 3,  /* REMOVE: no longer reported present */
};
#define JOURNAL_OP_COUNT 4
#define JOURNAL_NO_TIME INT64_MIN /* a record that carries no time */

/* The op-aware replay callback: each item with its record's op and time
 * (milliseconds since the epoch, or JOURNAL_NO_TIME). Return 0 to go on. */
typedef int journal_op_fn(void *ctx, enum journal_op op, int64_t time_ms, const void *item,
                          size_t len);

/* "add", "allow", "unallow", "remove"; "?" out of range. */
const char *journal_op_name(enum journal_op op);

/* Open a journal for appending; any thread that may block (start-up, reload).
 * Creates a missing file (mode 0640; header fsynced, then the directory), and
 * gives a 0-byte file its header. Reads and checks every record. A bad record
 * with no valid record anywhere after it is a torn tail (a crash mid-write): it
 * is cut off (ftruncate + fdatasync) and reported in scan->torn_at; every
 * complete record before it is kept. Anything else unreadable is an error and
 * the file is left alone: wrong magic, a newer version, a bad header, a bad
 * record followed by valid ones, a checksummed record whose payload is
 * malformed, a bad record followed by more candidate record headers than the
 * linear-bounded look-ahead checks. Takes an exclusive flock(): a second open of the same file fails,
 * even from this process, so close the old handle before reopening a path.
 * Then replay with journal_replay(j, 0, journal_end(j), ...). scan may be
 * NULL. NULL on failure with "PATH: reason" in err. */
struct journal *journal_open(const char *path, enum conf_fsync policy, struct journal_scan *scan,
                             char *err, size_t errlen);

/* Flush (unless the policy is `no`), unlock and close. No other call may be in
 * progress. Returns -1 if the final flush failed (the journal is freed anyway). */
int journal_close(struct journal *j, char *err, size_t errlen);

/* Append n items as one write() (records of at most JOURNAL_MAX_PAYLOAD, so a
 * huge batch is several records, still one write). Worker threads, any number
 * at once: a mutex orders the writes, so records never interleave. Does not
 * fsync. On failure ("PATH: cannot append N bytes: No space left on device")
 * nothing of the batch stays in the file (a partial write is truncated away)
 * and the caller must refuse the ADD. If even that truncation, or an earlier
 * fdatasync, failed, the journal takes no more appends until it is reopened.
 * n = 0 writes nothing and succeeds. A process that appends should ignore
 * SIGXFSZ, so that a file-size limit fails the append (EFBIG) instead of
 * killing the process. */
int journal_append(struct journal *j, const struct filter_key *items, size_t n, char *err,
                   size_t errlen);

/* journal_append for any op: records tagged with op and time_ms (or untagged,
 * as before tags, for an add without a time, so a journal of adds alone stays
 * readable by a bloomgate that predates tags). Otherwise as journal_append. */
int journal_append_op(struct journal *j, enum journal_op op, int64_t time_ms,
                      const struct filter_key *items, size_t n, char *err, size_t errlen);

/* Policy `always`: make everything appended so far durable (fdatasync) unless a
 * concurrent commit already covered it, so callers that commit once per batch of
 * requests, before sending any reply of the batch, share one fdatasync (group
 * commit). On failure the caller must refuse every ADD of the batch (its items
 * are in the file, not known to be on disk), and the journal takes no more
 * appends until reopened. Policies `everysec` and `no`: returns 0 at once.
 * Worker threads; blocks for the sync. */
int journal_commit(struct journal *j, char *err, size_t errlen);

/* Policy `everysec`: fdatasync if anything was appended since the last sync;
 * call once a second. Other policies: nothing. Blocks for the sync, so call it
 * from a thread that may wait on the disk (not a worker). A failed sync is
 * sticky, as for journal_commit: later appends fail, so ADDs are refused. */
int journal_tick(struct journal *j, char *err, size_t errlen);

/* Offset just past the last appended record: take it as `to` for a replay.
 * Any thread. */
uint64_t journal_end(struct journal *j);

/* Replay the records in [from, to), both record boundaries (from below
 * JOURNAL_HEADER_BYTES means the first record; `to` a value of journal_end),
 * calling fn for each item. Reads with pread up to `to` and never past it, so
 * the reload thread may replay while workers append. Every record's checksum
 * is checked again before any of its items is handed over. Returns the number
 * of items, or -1 with "PATH: ..." in err. */
int64_t journal_replay(struct journal *j, uint64_t from, uint64_t to, journal_item_fn *fn,
                       void *ctx, char *err, size_t errlen);
/* journal_replay and journal_read_file hand over adds only: a record of
 * another op stops them (-1). These hand over every record's items with the
 * record's op and time; what a daemon and the tools use. */
int64_t journal_replay_ops(struct journal *j, uint64_t from, uint64_t to, journal_op_fn *fn,
                           void *ctx, char *err, size_t errlen);
int64_t journal_read_file_ops(const char *path, journal_op_fn *fn, void *ctx,
                              struct journal_scan *scan, char *err, size_t errlen);

/* For the offline tool: check a journal by path without modifying it (a torn
 * tail is reported in scan, never cut; a missing file is an error), then hand
 * every item of the complete records to fn (fn NULL: only count them). Safe on
 * a journal a daemon is appending to: it reads the file as it was when opened.
 * Any thread. Returns the number of items, or -1 with "PATH: ..." in err. */
int64_t journal_read_file(const char *path, journal_item_fn *fn, void *ctx,
                          struct journal_scan *scan, char *err, size_t errlen);

const char *journal_path(const struct journal *j);

/* A filter seed drawn from the journal's salt (random when the file was
 * made, kept in its header): what a filter rebuilt from this journal is
 * seeded with when its shape depends on the seed (a growing filter's
 * sub-filter boundaries), so every replay makes the same filter. Never 0.
 * Any thread. */
uint64_t journal_seed(const struct journal *j);

/* Change the fsync policy of an open journal (a reload changed `fsync`); it
 * applies to the next commit or tick. Any thread. */
void journal_set_policy(struct journal *j, enum conf_fsync policy);

/* Whether the path no longer names the open journal: 1 if it was moved aside,
 * deleted or replaced by another file (appends still go to the open one, so a
 * reload should open the path again), 0 if it still does, -1 with err if it
 * cannot be told. The reload thread; never blocks on the disk beyond stat. */
int journal_replaced(const struct journal *j, char *err, size_t errlen);

/* What journal_compact keeps: nonzero keeps a record of op and time_ms
 * (JOURNAL_NO_TIME: a record without a time). */
typedef int journal_keep_fn(void *ctx, enum journal_op op, int64_t time_ms);

struct journal_compaction {
    uint64_t records_kept, records_dropped; /* of those before the compaction began */
    uint64_t bytes_before, bytes_after;     /* the journal's end before and after */
};

/* Rewrite the journal without the records appended before the call that
 * keep() refuses; every record appended while it runs is kept, in order.
 * The new file (PATH.compact: the same header and salt, records copied byte
 * for byte) is synced, renamed over PATH, the directory synced, and appends
 * go on into it; they wait only while the last appends are copied and
 * synced. When keep() refuses nothing the journal is left as it is. The
 * journal's offsets change (journal_end): the reload thread only, between
 * replays. 0 with what was done in st, or -1 with err: the journal is then
 * unchanged (unless the directory could not be synced after the rename: it
 * then takes no more appends, as after a failed fdatasync). */
int journal_compact(struct journal *j, journal_keep_fn *keep, void *ctx,
                    struct journal_compaction *st, char *err, size_t errlen);

/* Bytes that every journal reader of this process has checksummed, and read
 * from files, since it started: what the tests measure a scan's cost with (the
 * look-ahead after a bad record must stay linear in the file's size). Any
 * thread. */
void journal_io_counters(uint64_t *hashed, uint64_t *read);

#endif
