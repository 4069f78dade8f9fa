/* The journal's record reader: checksums, the read-ahead window, the scan of
 * a whole journal at open (with the bounded look-ahead after a bad record) and
 * replays. pread only, through buffers of the caller's own, so any thread may
 * read while others append (journal.c). The format is in docs/file-format.md. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/hash.h"
#include "bloom/le.h"
#include "base/util.h"
#include "store/journal.h"
#include "store/journal_int.h"
#include "store/jtag.h"

#define READ_CHUNK (1u << 20) /* read-ahead of the record reader */

static _Atomic uint64_t bytes_hashed, bytes_read; /* journal_io_counters */

/* XXH3-64, seeded with the salt, over a record's magic and length, then its
 * payload. The salt is random per journal, so an item whose bytes happen to be a
 * whole record (of this or any other journal) never checks as one: only records
 * this journal wrote do, which the torn-tail test below relies on. */

uint64_t journal_record_sum(uint64_t salt, const unsigned char *head8, const unsigned char *payload,
                            size_t len)
{
    atomic_fetch_add_explicit(&bytes_hashed, 8u + len, memory_order_relaxed);
    XXH3_state_t st;
    /* reset_withSeed compares the state's old seed to skip re-deriving its
     * secret: on an uninitialised state that could keep a stale secret. */
    memset(&st, 0, sizeof(st));
    XXH3_64bits_reset_withSeed(&st, salt);
    XXH3_64bits_update(&st, head8, 8);
    XXH3_64bits_update(&st, payload, len);
    return XXH3_64bits_digest(&st);
}

/* Walk a checksummed payload's items, handing each to fn with the record's
 * op and time (NULL: only count). Returns the count; -1 if the framing is
 * wrong (why says how); -2 if fn stopped the walk. */
static int64_t payload_items(const unsigned char *p, size_t len, journal_op_fn *fn, void *ctx,
                             const char **why)
{
    enum journal_op op;
    int64_t t;
    long tl = jtag_decode(p, len, &op, &t, why);
    if (tl < 0)
        return -1;
    size_t pos = (size_t)tl;
    int64_t n = 0;
    while (pos < len) {
        if (len - pos < 4) {
            *why = "malformed payload: a truncated item length";
            return -1;
        }
        uint32_t il = le_get32(p + pos);
        pos += 4;
        if (il > JOURNAL_MAX_ITEM) {
            *why = "malformed payload: an item longer than 1 MiB";
            return -1;
        }
        if (len - pos < il) {
            *why = "malformed payload: an item runs past the end of the record";
            return -1;
        }
        if (fn && fn(ctx, op, t, p + pos, il) != 0)
            return -2;
        pos += il;
        n++;
    }
    return n;
}
/* ---- reading records: pread only, through a window of the caller's own, so
 * any thread may read while others append ---- */

/* A read-ahead window over the file, so a journal of many small records costs
 * one pread per megabyte rather than two per record. */
struct rbuf {
    int fd;
    unsigned char *buf;
    size_t cap;
    uint64_t off; /* file offset of buf[0] */
    size_t len;   /* bytes of buf that hold file data */
};

/* Bytes [off, off + n) of the file, with off + n <= limit; reads ahead but never
 * at or past limit (the reload thread's `to`). Valid until the next call. NULL
 * with errno on failure (errno 0: the file ended before limit). */
static const unsigned char *rbuf_get(struct rbuf *r, uint64_t off, size_t n, uint64_t limit)
{
    if (n == 0)
        return (const unsigned char *)"";
    if (off >= r->off && off - r->off <= r->len && n <= r->len - (off - r->off))
        return r->buf + (off - r->off);
    size_t want = n > READ_CHUNK ? n : READ_CHUNK;
    if (want > limit - off)
        want = (size_t)(limit - off);
    if (want > r->cap) {
        unsigned char *nb = realloc(r->buf, want);
        if (!nb) {
            errno = ENOMEM;
            return NULL;
        }
        r->buf = nb;
        r->cap = want;
    }
    r->len = 0;
    atomic_fetch_add_explicit(&bytes_read, want, memory_order_relaxed);
    if (util_pread_all(r->fd, r->buf, want, (off_t)off) != 0)
        return NULL;
    r->off = off;
    r->len = want;
    return r->buf;
}

enum rec { REC_OK, REC_BAD, REC_IO };

/* Check the record at off, which must end by limit: magic, length, bounds,
 * checksum (not the payload's framing). REC_OK with the payload (valid until
 * the next rbuf_get); REC_BAD with why; REC_IO with errno. */
static enum rec record_at(struct rbuf *r, uint64_t salt, uint64_t off, uint64_t limit,
                          const unsigned char **payload, uint32_t *len, const char **why)
{
    if (limit - off < JOURNAL_RECORD_HEADER) {
        *why = "incomplete record header";
        return REC_BAD;
    }
    const unsigned char *h = rbuf_get(r, off, JOURNAL_RECORD_HEADER, limit);
    if (!h)
        return REC_IO;
    if (memcmp(h, JOURNAL_RECORD_MAGIC, 4) != 0) {
        *why = "bad record magic";
        return REC_BAD;
    }
    unsigned char head8[8];
    memcpy(head8, h, 8);
    uint32_t n = le_get32(h + 4);
    uint64_t sum = le_get64(h + 8);
    if (n > JOURNAL_MAX_PAYLOAD) {
        *why = "record length out of range";
        return REC_BAD;
    }
    if (limit - off - JOURNAL_RECORD_HEADER < n) {
        *why = "incomplete record";
        return REC_BAD;
    }
    const unsigned char *p = rbuf_get(r, off + JOURNAL_RECORD_HEADER, n, limit);
    if (!p)
        return REC_IO;
    if (journal_record_sum(salt, head8, p, n) != sum) {
        *why = "checksum mismatch";
        return REC_BAD;
    }
    *payload = p;
    *len = n;
    return REC_OK;
}

/* The record that would follow a bad one at off if only its payload or
 * checksum were damaged: checked first, so that a damaged record full of
 * planted headers cannot hide the valid one right after it. 1 with its
 * offset, 0 if there is none (or the length is itself implausible), -1 on a
 * read error. */
static int natural_follower(struct rbuf *r, uint64_t salt, uint64_t off, uint64_t limit,
                            uint64_t *budget, uint64_t *found)
{
    const unsigned char *h = rbuf_get(r, off, JOURNAL_RECORD_HEADER, limit);
    if (!h)
        return -1;
    uint32_t n = le_get32(h + 4);
    if (n > JOURNAL_MAX_PAYLOAD || limit - off - JOURNAL_RECORD_HEADER < n)
        return 0;
    uint64_t next = off + JOURNAL_RECORD_HEADER + n;
    if (limit - next < JOURNAL_RECORD_HEADER)
        return 0;
    h = rbuf_get(r, next, JOURNAL_RECORD_HEADER, limit);
    if (!h)
        return -1;
    uint32_t claim = le_get32(h + 4);
    if (claim > JOURNAL_MAX_PAYLOAD || limit - next - JOURNAL_RECORD_HEADER < claim ||
        *budget < 8u + claim)
        return 0;
    *budget -= 8u + claim;
    const unsigned char *p;
    uint32_t len;
    const char *why;
    enum rec st = record_at(r, salt, next, limit, &p, &len, &why);
    if (st == REC_IO)
        return -1;
    if (st != REC_OK)
        return 0;
    *found = next;
    return 1;
}

/* After a bad record at offset bad: is there a valid record anywhere after it?
 * (length_ok: its header was sound and only its checksum failed.) A torn
 * tail (a crash mid-write) can only be followed by nothing, so one valid record
 * means the damage is in the middle, where cutting would drop acknowledged adds.
 *
 * Items are client bytes, so the look-ahead must stay linear whatever they
 * hold: every "JRN\x1e" in them is a candidate whose claimed payload would cost
 * a checksum, and candidates overlap (issue 15: 65,536 fake headers of 512 KiB
 * each in a 1 MiB tail hashed 16 GiB). So the magic is searched through a
 * window of its own that reads each byte once; a candidate is first checked
 * on its header alone (claimed length in range and inside the file); and the
 * checksums of candidates together may hash at most LOOKAHEAD_FACTOR times the
 * bytes after the damage. A real follower is a record this journal wrote, and
 * normal items almost never hold the magic, so the budget only runs out on
 * planted headers; the caller then refuses the file rather than guess. Returns
 * 1 with the offset of a follower, 0 if none, 2 if the budget ran out first
 * (*found: the candidate it stopped at), -1 on a read error (errno). Any
 * thread, on the caller's own buffers. */
#define LOOKAHEAD_FACTOR 2u
static int find_follower(struct rbuf *r, uint64_t salt, uint64_t bad, bool length_ok,
                         uint64_t limit, uint64_t *found)
{
    uint64_t budget = LOOKAHEAD_FACTOR * (limit - bad);
    if (length_ok) {
        int nf = natural_follower(r, salt, bad, limit, &budget, found);
        if (nf != 0)
            return nf;
    }
    struct rbuf win_buf = {.fd = r->fd};
    uint64_t y = bad + 1;
    int rc = 0;
    while (y <= limit && limit - y >= JOURNAL_RECORD_HEADER) {
        size_t win = limit - y > READ_CHUNK ? READ_CHUNK : (size_t)(limit - y);
        const unsigned char *w = rbuf_get(&win_buf, y, win, limit);
        if (!w) {
            rc = -1;
            break;
        }
        const unsigned char *m = memmem(w, win, JOURNAL_RECORD_MAGIC, 4);
        if (!m) {
            y += win - 3; /* a magic may straddle two windows */
            continue;
        }
        uint64_t cand = y + (uint64_t)(m - w);
        y = cand + 1;
        if (limit - cand < JOURNAL_RECORD_HEADER)
            break; /* no room for a record header: nothing further can be one */
        /* Screen the candidate on its header (from the window when it is there)
         * and charge its checksum to the budget before it is computed. */
        const unsigned char *hd = (size_t)(m - w) + JOURNAL_RECORD_HEADER <= win
                                      ? m
                                      : rbuf_get(r, cand, JOURNAL_RECORD_HEADER, limit);
        if (!hd) {
            rc = -1;
            break;
        }
        uint32_t claim = le_get32(hd + 4);
        if (claim > JOURNAL_MAX_PAYLOAD || limit - cand - JOURNAL_RECORD_HEADER < claim)
            continue;
        if (budget < 8u + claim) {
            *found = cand;
            rc = 2;
            break;
        }
        budget -= 8u + claim;
        const unsigned char *p;
        uint32_t n;
        const char *why;
        enum rec st = record_at(r, salt, cand, limit, &p, &n, &why);
        if (st == REC_IO) {
            rc = -1;
            break;
        }
        if (st == REC_OK) {
            *found = cand;
            rc = 1;
            break;
        }
    }
    free(win_buf.buf);
    return rc;
}

/* Check every record from the header to size, filling s (records, items, end,
 * a torn tail). Cuts nothing. -1 with err on corruption that is not a torn tail
 * or on a read error. */
int journal_scan_records(const char *path, int fd, uint64_t salt, uint64_t size,
                         struct journal_scan *s, char *err, size_t errlen)
{
    struct rbuf r = {.fd = fd};
    uint64_t off = JOURNAL_HEADER_BYTES;
    int rc = -1;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    while (off < size) {
        const unsigned char *p;
        uint32_t n;
        const char *why;
        enum rec st = record_at(&r, salt, off, size, &p, &n, &why);
        if (st == REC_IO) {
            util_fail(err, errlen, "%s: read failed at offset %llu: %s", path,
                      (unsigned long long)off, util_errno_text(errno));
            goto out;
        }
        if (st == REC_OK) {
            int64_t items = payload_items(p, n, NULL, NULL, &why);
            if (items < 0) {
                util_fail(err, errlen,
                          "%s: record at offset %llu: %s (its checksum matches, so it was written "
                          "this way: not a torn tail)",
                          path, (unsigned long long)off, why);
                goto out;
            }
            s->records++;
            s->items += (uint64_t)items;
            off += JOURNAL_RECORD_HEADER + n;
            continue;
        }
        uint64_t next = 0;
        int f = find_follower(&r, salt, off, strcmp(why, "checksum mismatch") == 0, size, &next);
        if (f < 0) {
            util_fail(err, errlen, "%s: read failed after offset %llu: %s", path,
                      (unsigned long long)off, util_errno_text(errno));
            goto out;
        }
        if (f == 2) {
            util_fail(err, errlen,
                      "%s: corrupt record at offset %llu (%s), followed by more record headers "
                      "than can be checked (the look-ahead stopped at offset %llu after hashing %u "
                      "times the %llu bytes after it), so it cannot be told from damage in the "
                      "middle; to keep the records before it and drop the rest, truncate the file "
                      "to %llu bytes",
                      path, (unsigned long long)off, why, (unsigned long long)next,
                      LOOKAHEAD_FACTOR, (unsigned long long)(size - off), (unsigned long long)off);
            goto out;
        }
        if (f == 1) {
            util_fail(
                err, errlen,
                "%s: corrupt record at offset %llu (%s); a valid record follows at offset %llu, "
                "so this is not a torn tail",
                path, (unsigned long long)off, why, (unsigned long long)next);
            goto out;
        }
        s->torn_at = off;
        s->torn_bytes = size - off;
        s->torn_why = why;
        break;
    }
    s->end = off;
    rc = 0;
out:
    free(r.buf);
    return rc;
}

/* Hand every item of the records in [from, to) to fn. Each record is checked
 * (checksum, then framing) before any of its items is handed over. */
int64_t journal_replay_range(const char *path, int fd, uint64_t salt, uint64_t from, uint64_t to,
                             journal_op_fn *fn, void *ctx, char *err, size_t errlen)
{
    struct rbuf r = {.fd = fd};
    int64_t total = 0;
    for (uint64_t off = from; off < to;) {
        const unsigned char *p;
        uint32_t n;
        const char *why;
        enum rec st = record_at(&r, salt, off, to, &p, &n, &why);
        if (st == REC_IO) {
            util_fail(err, errlen, "%s: read failed at offset %llu: %s", path,
                      (unsigned long long)off, util_errno_text(errno));
            total = -1;
            break;
        }
        int64_t k = st == REC_OK ? payload_items(p, n, NULL, NULL, &why) : -1;
        if (k >= 0)
            k = payload_items(p, n, fn, ctx, &why);
        if (k == -2) {
            util_fail(err, errlen, "%s: replay stopped by the caller in the record at offset %llu",
                      path, (unsigned long long)off);
            total = -1;
            break;
        }
        if (k < 0) {
            util_fail(err, errlen, "%s: record at offset %llu: %s", path, (unsigned long long)off,
                      why);
            total = -1;
            break;
        }
        total += k;
        off += JOURNAL_RECORD_HEADER + n;
    }
    free(r.buf);
    return total;
}
int64_t journal_walk_records(const char *path, int fd, uint64_t salt, uint64_t from, uint64_t to,
                             journal_rec_fn *fn, void *ctx, char *err, size_t errlen)
{
    struct rbuf r = {.fd = fd};
    int64_t total = 0;
    for (uint64_t off = from; off < to;) {
        unsigned char head[JOURNAL_RECORD_HEADER];
        const unsigned char *p = NULL, *h = NULL;
        uint32_t n = 0;
        const char *why = "incomplete record header";
        enum rec st = REC_BAD;
        if (to - off >= JOURNAL_RECORD_HEADER) {
            h = rbuf_get(&r, off, JOURNAL_RECORD_HEADER, to);
            if (h)
                memcpy(head, h, sizeof(head)); /* record_at may move the window */
            st = h ? record_at(&r, salt, off, to, &p, &n, &why) : REC_IO;
        }
        if (st == REC_IO) {
            util_fail(err, errlen, "%s: read failed at offset %llu: %s", path,
                      (unsigned long long)off, util_errno_text(errno));
            total = -1;
            break;
        }
        enum journal_op op = JOURNAL_OP_ADD;
        int64_t t = JOURNAL_NO_TIME;
        if (st != REC_OK || payload_items(p, n, NULL, NULL, &why) < 0 ||
            jtag_decode(p, n, &op, &t, &why) < 0) {
            util_fail(err, errlen, "%s: record at offset %llu: %s", path, (unsigned long long)off,
                      why);
            total = -1;
            break;
        }
        if (fn(ctx, off, head, p, n, op, t) != 0) {
            util_fail(err, errlen, "%s: walk stopped by the caller at offset %llu", path,
                      (unsigned long long)off);
            total = -1;
            break;
        }
        total++;
        off += JOURNAL_RECORD_HEADER + n;
    }
    free(r.buf);
    return total;
}

void journal_io_counters(uint64_t *hashed, uint64_t *read)
{
    *hashed = atomic_load_explicit(&bytes_hashed, memory_order_relaxed);
    *read = atomic_load_explicit(&bytes_read, memory_order_relaxed);
}
