/* The journal. A 32-byte header (magic, version, flags, a random salt, a
 * checksum), then records: "JRN\x1e", u32 payload length, u64 XXH3-64 seeded
 * with the salt over the record's first 8 bytes and its payload; the payload is
 * items, each a u32 length and its bytes. All little-endian; the full
 * description is in docs/file-format.md.
 *
 * Appends are ordered by a mutex and go out as one write() on an O_APPEND
 * descriptor; the logical end (bytes of complete records) moves only when a
 * write has fully succeeded, so replay ranges never reach a half-written record.
 * fdatasync runs outside that mutex, one at a time, and covers everything
 * appended before it began: concurrent committers share it (group commit). */
#include "config.h"

#include "store/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloom/hash.h"
#include "bloom/le.h"
#include "base/util.h"
#include "store/journal_int.h"
#include "store/jtag.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* Not needed for correctness (fields are encoded byte by byte), only kept in
 * step with format.c, whose payloads are little-endian words. */
#error "bloomgate assumes a little-endian host"
#endif

#define STACK_BATCH 4096u /* appends this small are encoded on the stack */

/* Header field offsets. */
enum { H_MAGIC = 0, H_VERSION = 8, H_FLAGS = 12, H_SALT = 16, H_SUM = 24 };

/* ---- pure encoding and decoding: any thread ---- */
static void header_encode(unsigned char *h, uint64_t salt)
{
    memset(h, 0, JOURNAL_HEADER_BYTES);
    memcpy(h + H_MAGIC, JOURNAL_MAGIC, 8);
    le_put32(h + H_VERSION, JOURNAL_VERSION);
    le_put64(h + H_SALT, salt);
    le_put64(h + H_SUM, hash_checksum(h, H_SUM));
}

/* Check the len bytes of a header read from the file. Returns 0 with the salt;
 * 1 when the file is shorter than a header but starts like one (a header torn
 * while the journal was being created: it holds no record); -1 otherwise.
 * Checked in the order that gives the most useful message. */
static int header_check(const char *path, const unsigned char *h, size_t len, uint64_t *salt,
                        char *err, size_t errlen)
{
    if (memcmp(h, JOURNAL_MAGIC, len < 8 ? len : 8) != 0)
        return util_fail(err, errlen, "%s: not a bloomgate journal (wrong magic)", path);
    if (len < JOURNAL_HEADER_BYTES)
        return 1;
    uint32_t version = le_get32(h + H_VERSION);
    if (version > JOURNAL_VERSION)
        return util_fail(err, errlen,
                         "%s: journal format version %u is newer than this bloomgate reads (%u); "
                         "upgrade bloomgate",
                         path, version, JOURNAL_VERSION);
    if (version == 0)
        return util_fail(err, errlen, "%s: corrupt journal header: version 0", path);
    if (hash_checksum(h, H_SUM) != le_get64(h + H_SUM))
        return util_fail(err, errlen, "%s: corrupt journal header: checksum mismatch", path);
    if (le_get32(h + H_FLAGS) != 0)
        return util_fail(err, errlen, "%s: corrupt journal header: flags are not zero", path);
    *salt = le_get64(h + H_SALT);
    return 0;
}

/* Encode a batch as records of at most JOURNAL_MAX_PAYLOAD bytes into out, or
 * with out NULL only measure it. Returns the bytes. Every item is at most
 * JOURNAL_MAX_ITEM, so it always fits in a record of its own. Each record's
 * payload opens with the tag (tlen bytes; none for a plain add). */
static size_t batch_encode(unsigned char *out, uint64_t salt, const unsigned char *tag,
                           size_t tlen, const struct filter_key *items, size_t n)
{
    size_t total = 0, i = 0;
    while (i < n) {
        unsigned char *rec = out ? out + total : NULL;
        size_t plen = tlen;
        if (rec && tlen)
            memcpy(rec + JOURNAL_RECORD_HEADER, tag, tlen);
        while (i < n && (plen == tlen || plen + 4 + items[i].len <= JOURNAL_MAX_PAYLOAD)) {
            if (rec) {
                le_put32(rec + JOURNAL_RECORD_HEADER + plen, (uint32_t)items[i].len);
                if (items[i].len)
                    memcpy(rec + JOURNAL_RECORD_HEADER + plen + 4, items[i].data, items[i].len);
            }
            plen += 4 + items[i].len;
            i++;
        }
        if (rec) {
            memcpy(rec, JOURNAL_RECORD_MAGIC, 4);
            le_put32(rec + 4, (uint32_t)plen);
            le_put64(rec + 8, journal_record_sum(salt, rec, rec + JOURNAL_RECORD_HEADER, plen));
        }
        total += JOURNAL_RECORD_HEADER + plen;
    }
    return total;
}
/* ---- the writer ---- */

/* Give an empty (or torn-header) file a fresh header with a new salt. */
static int header_init(const char *path, int fd, uint64_t *salt, char *err, size_t errlen)
{
    unsigned char h[JOURNAL_HEADER_BYTES];
    char why[256];
    if (util_random_u64(salt, why, sizeof(why)) != 0)
        return util_fail(err, errlen, "%s: a salt for the new journal: %s", path, why);
    header_encode(h, *salt);
    if (ftruncate(fd, 0) != 0)
        return util_fail(err, errlen, "%s: cannot truncate the incomplete header: %s", path,
                         strerror(errno));
    if (util_write_all(fd, h, sizeof(h)) != 0) {
        int e = errno;
        (void)ftruncate(fd, 0); /* an empty file is a new journal to the next open */
        return util_fail(err, errlen, "%s: cannot write the journal header: %s", path, strerror(e));
    }
    if (fdatasync(fd) != 0)
        return util_fail(err, errlen, "%s: fdatasync failed: %s", path, strerror(errno));
    return util_fsync_dir_of(path, err, errlen);
}

/* Open (or create) a journal, take its lock, check its header and scan its
 * records; the reload thread or the main thread. One sequence of ~90 lines:
 * every step can fail and all share the one clean-up at its end, which a
 * split would have to pass a half-open journal through. */
struct journal *journal_open(const char *path, enum conf_fsync policy, struct journal_scan *scan,
                             char *err, size_t errlen)
{
    struct journal_scan s = {.torn_at = JOURNAL_NO_TEAR};
    struct journal *j = calloc(1, sizeof(*j));
    if (!j || !(j->path = strdup(path))) {
        free(j);
        util_fail(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    atomic_init(&j->policy, (int)policy);
    j->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (j->fd < 0 && errno == ENOENT) {
        j->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL, 0640);
        if (j->fd < 0 && errno == EEXIST) /* created meanwhile: the flock decides */
            j->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
        else if (j->fd < 0) {
            util_fail(err, errlen, "%s: cannot create journal: %s", path, strerror(errno));
            goto fail;
        }
    }
    if (j->fd < 0) {
        util_fail(err, errlen, "%s: cannot open journal: %s", path, strerror(errno));
        goto fail;
    }
    /* Two writers would cut each other's records (a torn tail that is only
     * another writer's write in progress, a failed append's cleanup). */
    if (flock(j->fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            util_fail(err, errlen,
                      "%s: journal is locked by another writer (another bloomgated, or still open "
                      "in this one)",
                      path);
        else
            util_fail(err, errlen, "%s: cannot lock journal: %s", path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(j->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        util_fail(err, errlen, "%s: not a regular file", path);
        goto fail;
    }
    uint64_t size = (uint64_t)st.st_size;
    unsigned char h[JOURNAL_HEADER_BYTES];
    size_t hlen = size < sizeof(h) ? (size_t)size : sizeof(h);
    if (hlen && util_pread_all(j->fd, h, hlen, 0) != 0) {
        util_fail(err, errlen, "%s: cannot read the header: %s", path, util_errno_text(errno));
        goto fail;
    }
    int hc = hlen ? header_check(path, h, hlen, &j->salt, err, errlen) : 1;
    if (hc < 0)
        goto fail;
    if (hc == 1) {
        /* Empty, or a header torn at creation: no record can be lost. */
        if (size > 0) {
            s.torn_at = 0;
            s.torn_bytes = size;
            s.torn_why = "incomplete header";
        }
        if (header_init(path, j->fd, &j->salt, err, errlen) != 0)
            goto fail;
        s.created = 1;
        s.end = JOURNAL_HEADER_BYTES;
    } else {
        if (journal_scan_records(path, j->fd, j->salt, size, &s, err, errlen) != 0)
            goto fail;
        if (s.torn_at != JOURNAL_NO_TEAR && ftruncate(j->fd, (off_t)s.torn_at) != 0) {
            util_fail(err, errlen, "%s: cannot cut the torn tail at offset %llu: %s", path,
                      (unsigned long long)s.torn_at, strerror(errno));
            goto fail;
        }
        /* What we replay must be on disk before we build on it: a previous
         * process may have died with its writes still in the page cache. */
        if (fdatasync(j->fd) != 0) {
            util_fail(err, errlen, "%s: fdatasync failed: %s", path, strerror(errno));
            goto fail;
        }
    }
    atomic_init(&j->end, s.end);
    atomic_init(&j->synced, s.end);
    pthread_mutex_init(&j->mu, NULL);
    pthread_mutex_init(&j->sync_mu, NULL);
    if (scan)
        *scan = s;
    return j;
fail:
    if (j->fd >= 0)
        close(j->fd);
    free(j->path);
    free(j);
    return NULL;
}

/* Mark the journal failed for good. Called with sync_mu or nothing held. */
void journal_set_failed(struct journal *j, const char *msg)
{
    pthread_mutex_lock(&j->mu);
    if (!j->failed) {
        j->failed = true;
        snprintf(j->failure, sizeof(j->failure), "%s", msg);
    }
    pthread_mutex_unlock(&j->mu);
}

int journal_append(struct journal *j, const struct filter_key *items, size_t n, char *err,
                   size_t errlen)
{
    return journal_append_op(j, JOURNAL_OP_ADD, JOURNAL_NO_TIME, items, n, err, errlen);
}

int journal_append_op(struct journal *j, enum journal_op op, int64_t time_ms,
                      const struct filter_key *items, size_t n, char *err, size_t errlen)
{
    unsigned char tag[JTAG_MAX];
    size_t tlen = jtag_encode(tag, op, time_ms);
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (items[i].len > JOURNAL_MAX_ITEM)
            return util_fail(err, errlen,
                             "%s: an item of %zu bytes is longer than the journal's limit "
                             "(1 MiB)",
                             j->path, items[i].len);
    size_t total = batch_encode(NULL, 0, tag, tlen, items, n);
    unsigned char stack[STACK_BATCH];
    unsigned char *buf = total <= sizeof(stack) ? stack : malloc(total);
    if (!buf)
        return util_fail(err, errlen, "%s: out of memory for a %zu-byte append", j->path, total);
    /* Encode and checksum outside the lock: only the write is serialised. */
    batch_encode(buf, j->salt, tag, tlen, items, n);
    int rc = 0;
    pthread_mutex_lock(&j->mu);
    uint64_t end = atomic_load_explicit(&j->end, memory_order_relaxed);
    if (j->failed) {
        rc = util_fail(err, errlen, "%s", j->failure);
    } else if (util_write_all(j->fd, buf, total) != 0) {
        int e = errno;
        /* Take back whatever part of the batch reached the file: otherwise the
         * next record would land after a torn one, and the journal would no
         * longer load. */
        if (ftruncate(j->fd, (off_t)end) == 0) {
            rc = util_fail(err, errlen, "%s: cannot append %zu bytes: %s", j->path, total,
                           strerror(e));
        } else {
            int e2 = errno;
            j->failed = true;
            snprintf(j->failure, sizeof(j->failure),
                     "%s: journal takes no more appends until reopened: after a failed append "
                     "(%s) it could not be truncated back to offset %llu (%s)",
                     j->path, strerror(e), (unsigned long long)end, strerror(e2));
            rc = util_fail(err, errlen, "%s", j->failure);
        }
    } else {
        atomic_store_explicit(&j->end, end + total, memory_order_release);
    }
    pthread_mutex_unlock(&j->mu);
    if (buf != stack)
        free(buf);
    return rc;
}

/* Make every byte before target durable, unless a sync already did. Worker
 * threads (commit), the ticking thread and the closing one may all call it.
 * One fdatasync at a time; whoever gets the lock syncs everything appended so
 * far, so the threads queued behind it usually find their bytes covered. */
static int sync_to(struct journal *j, uint64_t target, char *err, size_t errlen)
{
    if (atomic_load_explicit(&j->synced, memory_order_acquire) >= target)
        return 0;
    int rc = 0;
    pthread_mutex_lock(&j->sync_mu);
    if (atomic_load_explicit(&j->synced, memory_order_acquire) < target) {
        pthread_mutex_lock(&j->mu);
        bool failed = j->failed;
        if (failed)
            util_fail(err, errlen, "%s", j->failure);
        pthread_mutex_unlock(&j->mu);
        /* After a failed fdatasync the kernel may have dropped the dirty pages
         * and a retry may "succeed": never trust this descriptor again. */
        uint64_t upto = atomic_load_explicit(&j->end, memory_order_acquire);
        if (failed) {
            rc = -1;
        } else if (fdatasync(j->fd) == 0) {
            atomic_store_explicit(&j->synced, upto, memory_order_release);
        } else {
            char msg[sizeof(j->failure)];
            snprintf(msg, sizeof(msg),
                     "%s: fdatasync failed: %s; the journal takes no more appends until reopened",
                     j->path, strerror(errno));
            journal_set_failed(j, msg);
            rc = util_fail(err, errlen, "%s", msg);
        }
    }
    pthread_mutex_unlock(&j->sync_mu);
    return rc;
}

int journal_commit(struct journal *j, char *err, size_t errlen)
{
    if (atomic_load_explicit(&j->policy, memory_order_relaxed) != CONF_FSYNC_ALWAYS)
        return 0;
    return sync_to(j, atomic_load_explicit(&j->end, memory_order_acquire), err, errlen);
}

int journal_tick(struct journal *j, char *err, size_t errlen)
{
    if (atomic_load_explicit(&j->policy, memory_order_relaxed) != CONF_FSYNC_EVERYSEC)
        return 0;
    return sync_to(j, atomic_load_explicit(&j->end, memory_order_acquire), err, errlen);
}

uint64_t journal_end(struct journal *j)
{
    return atomic_load_explicit(&j->end, memory_order_acquire);
}

void journal_set_policy(struct journal *j, enum conf_fsync policy)
{
    atomic_store(&j->policy, (int)policy);
}

const char *journal_path(const struct journal *j)
{
    return j->path;
}

/* XXH3-128 of the salt under a seed of its own, so the filter's seed and
 * the record checksums' seed are not one number. */
uint64_t journal_seed(const struct journal *j)
{
    unsigned char b[8];
    le_put64(b, j->salt);
    struct hash128 h = hash_item(b, sizeof(b), 0x67726f7773656564ull); /* "growseed" */
    uint64_t s = h.lo ^ h.hi;
    return s ? s : 1;
}

/* Compares the inode the path names now with the open one. */
int journal_replaced(const struct journal *j, char *err, size_t errlen)
{
    struct stat open_st, path_st;
    if (fstat(j->fd, &open_st) != 0)
        return util_fail(err, errlen, "%s: fstat failed: %s", j->path, strerror(errno));
    if (stat(j->path, &path_st) != 0) {
        if (errno == ENOENT)
            return 1;
        return util_fail(err, errlen, "%s: stat failed: %s", j->path, strerror(errno));
    }
    return path_st.st_dev != open_st.st_dev || path_st.st_ino != open_st.st_ino;
}

int journal_close(struct journal *j, char *err, size_t errlen)
{
    if (!j)
        return 0;
    int rc = 0;
    if (atomic_load(&j->policy) != CONF_FSYNC_NO)
        rc = sync_to(j, atomic_load(&j->end), err, errlen);
    if (close(j->fd) != 0 && rc == 0)
        rc = util_fail(err, errlen, "%s: close failed: %s", j->path, strerror(errno));
    pthread_mutex_destroy(&j->mu);
    pthread_mutex_destroy(&j->sync_mu);
    free(j->path);
    free(j);
    return rc;
}

int64_t journal_replay_ops(struct journal *j, uint64_t from, uint64_t to, journal_op_fn *fn,
                           void *ctx, char *err, size_t errlen)
{
    uint64_t end = journal_end(j);
    if (from < JOURNAL_HEADER_BYTES)
        from = JOURNAL_HEADER_BYTES;
    if (to > end || from > to)
        return util_fail(
            err, errlen, "%s: replay range [%llu, %llu) is outside the journal (%llu bytes)",
            j->path, (unsigned long long)from, (unsigned long long)to, (unsigned long long)end);
    return journal_replay_range(j->path, j->fd, j->salt, from, to, fn, ctx, err, errlen);
}
/* ---- the offline reader ---- */

int64_t journal_read_file_ops(const char *path, journal_op_fn *fn, void *ctx,
                              struct journal_scan *scan, char *err, size_t errlen)
{
    struct journal_scan s = {.torn_at = JOURNAL_NO_TEAR};
    int64_t rc = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return util_fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        util_fail(err, errlen, "%s: not a regular file", path);
        goto out;
    }
    uint64_t size = (uint64_t)st.st_size, salt = 0;
    unsigned char h[JOURNAL_HEADER_BYTES];
    size_t hlen = size < sizeof(h) ? (size_t)size : sizeof(h);
    if (hlen && util_pread_all(fd, h, hlen, 0) != 0) {
        util_fail(err, errlen, "%s: cannot read the header: %s", path, util_errno_text(errno));
        goto out;
    }
    int hc = hlen ? header_check(path, h, hlen, &salt, err, errlen) : 1;
    if (hc < 0)
        goto out;
    if (hc == 1) { /* empty, or torn while being created: no records */
        if (size > 0) {
            s.torn_at = 0;
            s.torn_bytes = size;
            s.torn_why = "incomplete header";
        }
        rc = 0;
    } else if (journal_scan_records(path, fd, salt, size, &s, err, errlen) == 0) {
        rc = fn ? journal_replay_range(path, fd, salt, JOURNAL_HEADER_BYTES, s.end, fn, ctx, err,
                                       errlen)
                : (int64_t)s.items;
    }
out:
    close(fd);
    if (scan && rc >= 0)
        *scan = s;
    return rc;
}

/* ---- the add-only readers, for callers that predate record tags ---- */

struct adds_only {
    journal_item_fn *fn;
    void *ctx;
};

/* A reader that knows only adds must not skip a removal (it would bring the
 * item back): any other op stops it. */
static int adds_only_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item,
                          size_t len)
{
    struct adds_only *a = ctx;
    (void)time_ms;
    return op == JOURNAL_OP_ADD ? a->fn(a->ctx, item, len) : 1;
}

int64_t journal_replay(struct journal *j, uint64_t from, uint64_t to, journal_item_fn *fn,
                       void *ctx, char *err, size_t errlen)
{
    struct adds_only a = {fn, ctx};
    return journal_replay_ops(j, from, to, adds_only_item, &a, err, errlen);
}

int64_t journal_read_file(const char *path, journal_item_fn *fn, void *ctx,
                          struct journal_scan *scan, char *err, size_t errlen)
{
    struct adds_only a = {fn, ctx};
    return journal_read_file_ops(path, fn ? adds_only_item : NULL, &a, scan, err, errlen);
}

const char *journal_op_name(enum journal_op op)
{
    static const char *const names[JOURNAL_OP_COUNT] = {"add", "allow", "unallow", "remove"};
    return (unsigned)op < JOURNAL_OP_COUNT ? names[op] : "?";
}
