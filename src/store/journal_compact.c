/* Compaction: a journal rewritten without the records its filter no longer
 * needs (a windowed filter's adds older than its window), see journal.h.
 *
 * The new file is PATH.compact: the old header (so the same salt, and every
 * kept record is copied byte for byte, its checksum still valid), the kept
 * records of [header, end0) in order, then every byte appended since, which
 * is all kept. The bulk is copied and synced with appends going on; only the
 * last stretch is copied under the journal's sync_mu and mu, synced, renamed
 * over PATH and the directory synced, and then the descriptor is swapped, so
 * an append waits for that short tail and its fdatasync at most. Checks never
 * touch the journal. The rename is atomic: a crash leaves the old journal or
 * the new one whole, and a stale PATH.compact that the next compaction
 * truncates. */
#include "config.h"

#include "store/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/seam.h"
#include "base/util.h"
#include "store/journal_int.h"

#define COPY_CHUNK (1u << 20)     /* bytes a tail copy reads at once */
#define OUT_BUF (1u << 20)        /* kept records are written in runs this long */
#define TAIL_UNLOCKED (64u << 10) /* tails longer than this are copied before the lock */

struct cpass {
    int fd;                 /* the new file */
    journal_keep_fn *keep;
    void *ctx;
    unsigned char *buf;     /* kept records not yet written */
    size_t used;
    uint64_t written;       /* bytes of the new file */
    struct journal_compaction *st;
};

static int flush_out(struct cpass *c)
{
    if (c->used && util_write_all(c->fd, c->buf, c->used) != 0)
        return -1;
    c->written += c->used;
    c->used = 0;
    return 0;
}

/* One record of the old file: kept (buffered) or counted as dropped. */
static int on_record(void *ctx, uint64_t off, const unsigned char *head,
                     const unsigned char *payload, uint32_t len, enum journal_op op,
                     int64_t time_ms)
{
    struct cpass *c = ctx;
    (void)off;
    if (!c->keep(c->ctx, op, time_ms)) {
        c->st->records_dropped++;
        return 0;
    }
    c->st->records_kept++;
    size_t need = JOURNAL_RECORD_HEADER + len;
    if (c->used + need > OUT_BUF && flush_out(c) != 0)
        return -1;
    if (need > OUT_BUF) { /* one record past the buffer: written on its own */
        if (util_write_all(c->fd, head, JOURNAL_RECORD_HEADER) != 0 ||
            util_write_all(c->fd, payload, len) != 0)
            return -1;
        c->written += need;
        return 0;
    }
    memcpy(c->buf + c->used, head, JOURNAL_RECORD_HEADER);
    memcpy(c->buf + c->used + JOURNAL_RECORD_HEADER, payload, len);
    c->used += need;
    return 0;
}

/* Copy the old file's bytes [from, to) to the end of the new one. */
static int copy_range(struct journal *j, int out, unsigned char *buf, uint64_t from, uint64_t to,
                      uint64_t *written)
{
    while (from < to) {
        size_t n = to - from < COPY_CHUNK ? (size_t)(to - from) : COPY_CHUNK;
        if (util_pread_all(j->fd, buf, n, (off_t)from) != 0 || util_write_all(out, buf, n) != 0)
            return -1;
        from += n;
        *written += n;
    }
    return 0;
}

/* The reload thread: nothing else swaps or replays j meanwhile. ~100 lines:
 * the four stages (records, unlocked tail, locked tail, swap) share one
 * clean-up, which a split would pass a half-written file through. */
int journal_compact(struct journal *j, journal_keep_fn *keep, void *ctx,
                    struct journal_compaction *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    size_t plen = strlen(j->path);
    char *tmp = malloc(plen + sizeof(".compact"));
    struct cpass c = {.fd = -1, .keep = keep, .ctx = ctx, .st = st};
    c.buf = malloc(OUT_BUF);
    int rc = -1;
    bool locked = false, renamed = false;
    if (!tmp || !c.buf) {
        util_fail(err, errlen, "%s: out of memory for a compaction", j->path);
        goto out;
    }
    memcpy(tmp, j->path, plen);
    memcpy(tmp + plen, ".compact", sizeof(".compact"));
    uint64_t end0 = journal_end(j);
    st->bytes_before = end0;
    c.fd = open(tmp, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (c.fd < 0 || flock(c.fd, LOCK_EX | LOCK_NB) != 0) {
        util_fail(err, errlen, "%s: cannot create %s: %s", j->path, tmp, strerror(errno));
        goto out;
    }
    /* The header as it is: the same salt keeps every record's checksum. */
    if (copy_range(j, c.fd, c.buf, 0, JOURNAL_HEADER_BYTES, &c.written) != 0) {
        util_fail(err, errlen, "%s: copying the header to %s: %s", j->path, tmp,
                  util_errno_text(errno));
        goto out;
    }
    if (journal_walk_records(j->path, j->fd, j->salt, JOURNAL_HEADER_BYTES, end0, on_record, &c,
                             err, errlen) < 0)
        goto out;
    if (flush_out(&c) != 0) {
        util_fail(err, errlen, "%s: writing %s: %s", j->path, tmp, strerror(errno));
        goto out;
    }
    if (st->records_dropped == 0) { /* nothing to gain: the journal stays */
        rc = 0;
        st->bytes_after = end0;
        goto out;
    }
    seam_journal_compact(j, 1);
    /* What was appended meanwhile, while appends go on; then the sync of the
     * bulk, so that the locked stretch syncs only its tail. */
    uint64_t done = end0;
    for (uint64_t e; (e = journal_end(j)) - done > TAIL_UNLOCKED; done = e)
        if (copy_range(j, c.fd, c.buf, done, e, &c.written) != 0) {
            util_fail(err, errlen, "%s: copying appends to %s: %s", j->path, tmp,
                      util_errno_text(errno));
            goto out;
        }
    if (fdatasync(c.fd) != 0) {
        util_fail(err, errlen, "%s: fdatasync of %s failed: %s", j->path, tmp, strerror(errno));
        goto out;
    }
    seam_journal_compact(j, 2);
    pthread_mutex_lock(&j->sync_mu);
    pthread_mutex_lock(&j->mu);
    locked = true;
    if (j->failed) {
        util_fail(err, errlen, "%s", j->failure);
        goto out;
    }
    uint64_t end1 = atomic_load_explicit(&j->end, memory_order_relaxed);
    if (copy_range(j, c.fd, c.buf, done, end1, &c.written) != 0 ||
        (end1 > done && fdatasync(c.fd) != 0)) {
        util_fail(err, errlen, "%s: the last appends into %s: %s", j->path, tmp,
                  util_errno_text(errno));
        goto out;
    }
    if (rename(tmp, j->path) != 0) {
        util_fail(err, errlen, "%s: cannot rename %s over it: %s", j->path, tmp, strerror(errno));
        goto out;
    }
    renamed = true;
    /* From here the new file is the journal: appends go to it whatever
     * follows. A directory that cannot be synced may bring the old file
     * back after a crash, without the appends to come: the journal then
     * takes none (as after a failed fdatasync). */
    int old = j->fd;
    j->fd = c.fd;
    c.fd = -1;
    close(old);
    atomic_store_explicit(&j->end, c.written, memory_order_release);
    atomic_store_explicit(&j->synced, c.written, memory_order_release);
    st->bytes_after = c.written;
    char why[256];
    if (util_fsync_dir_of(j->path, why, sizeof(why)) != 0) {
        j->failed = true;
        snprintf(j->failure, sizeof(j->failure),
                 "%s: journal takes no more appends until reopened: after its compaction the "
                 "directory could not be synced (%s)",
                 j->path, why);
        util_fail(err, errlen, "%s", j->failure);
        goto out;
    }
    rc = 0;
out:
    if (locked) {
        pthread_mutex_unlock(&j->mu);
        pthread_mutex_unlock(&j->sync_mu);
    }
    if (c.fd >= 0) {
        close(c.fd);
        if (!renamed && tmp)
            unlink(tmp);
    }
    free(tmp);
    free(c.buf);
    return rc;
}
