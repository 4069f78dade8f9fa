/* write: the table writer (exact_int.h). Fingerprints stream into the target's
 * temporary file from offset 4096. A keys table's offsets and bytes go straight
 * to their places in the same file when the builder knows the count and the
 * key bytes beforehand (exact_writer_open_sized); otherwise (the fold) they
 * stream into two unlinked temporary files, appended behind the fences at the
 * end. The fences (one word per 4096-byte page) are all that is held in
 * memory. Caller's thread. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "exact/exact_int.h"

#define BUFW_BYTES (1u << 20)

/* A buffered writer that hashes what it writes. */
struct bufw {
    int fd;
    int64_t pos; /* where the next flush goes (pwrite), or -1: the fd's offset (write) */
    unsigned char *buf;
    size_t used;
    uint64_t written;
    XXH3_state_t st;
    int err; /* errno of the first failure */
};

static int bufw_flush(struct bufw *b)
{
    if (b->used && !b->err) {
        if (b->pos < 0) {
            if (util_write_all(b->fd, b->buf, b->used) != 0)
                b->err = errno ? errno : EIO;
        } else {
            for (size_t done = 0; done < b->used && !b->err;) {
                ssize_t k = pwrite(b->fd, b->buf + done, b->used - done, (off_t)b->pos);
                if (k < 0 && errno == EINTR)
                    continue;
                if (k <= 0)
                    b->err = k < 0 ? errno : EIO;
                else
                    done += (size_t)k, b->pos += k;
            }
        }
    }
    b->used = 0;
    return b->err ? -1 : 0;
}

static void bufw_put(struct bufw *b, const void *p, size_t n)
{
    XXH3_64bits_update(&b->st, p, n);
    b->written += n;
    const unsigned char *c = p;
    while (n) {
        size_t k = BUFW_BYTES - b->used;
        if (k > n)
            k = n;
        memcpy(b->buf + b->used, c, k);
        b->used += k;
        c += k;
        n -= k;
        if (b->used == BUFW_BYTES)
            bufw_flush(b);
    }
}

static void bufw_pad(struct bufw *b)
{
    static const unsigned char zero[EXACT_PAGE];
    size_t k = (size_t)(exact_align(b->written) - b->written);
    if (k)
        bufw_put(b, zero, k);
}

static int bufw_init(struct bufw *b, int fd, int64_t pos)
{
    b->fd = fd;
    b->pos = pos;
    b->buf = malloc(BUFW_BYTES);
    XXH3_64bits_reset(&b->st);
    return b->buf ? 0 : -1;
}

struct exact_writer {
    char path[4096], tmp[4200];
    enum exact_kind kind;
    uint64_t seed;
    struct bufw fp, offs, blob; /* offs and blob: keys tables only */
    uint64_t count, last_fp;
    uint64_t *fences;
    uint64_t fence_cap;
    /* Sized (exact_writer_open_sized): every section written in place in the
     * one file; the count and key bytes promised. */
    bool sized;
    uint64_t want_count, want_blob, offs_off, blob_off;
};

void exact_dirname(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, len, ".");
    else if (slash == path)
        snprintf(buf, len, "/");
    else
        snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

int exact_tmpfile(const char *dir, char *err, size_t errlen)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    char name[4200];
    snprintf(name, sizeof(name), "%s/.bloomgate-exact.XXXXXX", dir);
    fd = mkostemp(name, O_CLOEXEC);
    if (fd < 0)
        return util_fail(err, errlen, "temporary file in %s: %s", dir, util_errno_text(errno));
    unlink(name);
    return fd;
}

void exact_writer_abort(struct exact_writer *w)
{
    if (!w)
        return;
    if (w->fp.fd >= 0) {
        close(w->fp.fd);
        unlink(w->tmp);
    }
    if (w->offs.fd >= 0 && !w->sized)
        close(w->offs.fd);
    if (w->blob.fd >= 0 && !w->sized)
        close(w->blob.fd);
    free(w->fp.buf);
    free(w->offs.buf);
    free(w->blob.buf);
    free(w->fences);
    free(w);
}

struct exact_writer *exact_writer_open(const char *path, enum exact_kind kind, uint64_t seed,
                                       const char *tmpdir, char *err, size_t errlen)
{
    struct exact_writer *w = calloc(1, sizeof(*w));
    if (!w) {
        util_fail(err, errlen, "out of memory");
        return NULL;
    }
    w->fp.fd = w->offs.fd = w->blob.fd = -1;
    w->kind = kind;
    w->seed = seed;
    snprintf(w->path, sizeof(w->path), "%s", path);
    int fd = util_tmpfile_beside(path, w->tmp, sizeof(w->tmp), err, errlen);
    if (fd < 0) {
        free(w);
        return NULL;
    }
    if (bufw_init(&w->fp, fd, -1) != 0 || lseek(fd, EXACT_PAGE, SEEK_SET) < 0)
        goto oom;
    if (kind == EXACT_KIND_KEYS) {
        char dir[4096];
        if (tmpdir)
            snprintf(dir, sizeof(dir), "%s", tmpdir);
        else
            exact_dirname(path, dir, sizeof(dir));
        if ((w->offs.fd = exact_tmpfile(dir, err, errlen)) < 0 ||
            (w->blob.fd = exact_tmpfile(dir, err, errlen)) < 0) {
            exact_writer_abort(w);
            return NULL;
        }
        if (bufw_init(&w->offs, w->offs.fd, -1) != 0 || bufw_init(&w->blob, w->blob.fd, -1) != 0)
            goto oom;
    }
    return w;
oom:
    util_fail(err, errlen, "%s: out of memory", path);
    exact_writer_abort(w);
    return NULL;
}

struct exact_writer *exact_writer_open_sized(const char *path, uint64_t seed, uint64_t count,
                                             uint64_t blob_bytes, char *err, size_t errlen)
{
    struct exact_writer *w = calloc(1, sizeof(*w));
    if (!w) {
        util_fail(err, errlen, "out of memory");
        return NULL;
    }
    w->fp.fd = w->offs.fd = w->blob.fd = -1;
    w->kind = EXACT_KIND_KEYS;
    w->seed = seed;
    w->sized = true;
    w->want_count = count;
    w->want_blob = blob_bytes;
    uint64_t fences = (count + EXACT_PER_PAGE - 1) / EXACT_PER_PAGE;
    w->offs_off = EXACT_PAGE + exact_align(count * 8) + exact_align(fences * 8);
    w->blob_off = w->offs_off + exact_align((count + 1) * 8);
    snprintf(w->path, sizeof(w->path), "%s", path);
    int fd = util_tmpfile_beside(path, w->tmp, sizeof(w->tmp), err, errlen);
    if (fd < 0) {
        free(w);
        return NULL;
    }
    w->fp.fd = w->offs.fd = w->blob.fd = fd;
    if (bufw_init(&w->fp, fd, EXACT_PAGE) != 0 ||
        bufw_init(&w->offs, fd, (int64_t)w->offs_off) != 0 ||
        bufw_init(&w->blob, fd, (int64_t)w->blob_off) != 0) {
        util_fail(err, errlen, "%s: out of memory", path);
        exact_writer_abort(w);
        return NULL;
    }
    return w;
}

int exact_writer_put(struct exact_writer *w, uint64_t fp, const void *key, size_t len)
{
    if (w->count % EXACT_PER_PAGE == 0) {
        if (w->count / EXACT_PER_PAGE == w->fence_cap) {
            uint64_t cap = w->fence_cap ? w->fence_cap * 2 : 1024;
            uint64_t *f = realloc(w->fences, cap * sizeof(*f));
            if (!f) {
                w->fp.err = ENOMEM;
                return -1;
            }
            w->fences = f;
            w->fence_cap = cap;
        }
        w->fences[w->count / EXACT_PER_PAGE] = fp;
    }
    uint64_t le = htole64(fp);
    bufw_put(&w->fp, &le, 8);
    if (w->kind == EXACT_KIND_KEYS) {
        le = htole64(w->blob.written);
        bufw_put(&w->offs, &le, 8);
        bufw_put(&w->blob, key, len);
    }
    w->count++;
    w->last_fp = fp;
    return w->fp.err || w->offs.err || w->blob.err ? -1 : 0;
}

/* Append the whole of the unlinked file src (n bytes) to dst, hashing it. */
static int append_file(struct bufw *dst, int src, uint64_t n)
{
    if (bufw_flush(dst) != 0)
        return -1;
    unsigned char *buf = malloc(BUFW_BYTES);
    if (!buf) {
        dst->err = ENOMEM;
        return -1;
    }
    for (uint64_t off = 0; off < n && !dst->err;) {
        size_t k = n - off > BUFW_BYTES ? BUFW_BYTES : (size_t)(n - off);
        if (util_pread_all(src, buf, k, (off_t)off) != 0) {
            dst->err = errno ? errno : EIO;
            break;
        }
        bufw_put(dst, buf, k);
        off += k;
    }
    free(buf);
    return bufw_flush(dst);
}

/* XXH3-64 of the file's bytes [from, to), read back (a sized keys table's
 * offsets and key bytes, written in two streams at once). */
static int hash_back(int fd, uint64_t from, uint64_t to, uint64_t *sum)
{
    unsigned char *buf = malloc(BUFW_BYTES);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    int rc = buf ? 0 : -1;
    for (uint64_t off = from; rc == 0 && off < to;) {
        size_t k = to - off > BUFW_BYTES ? BUFW_BYTES : (size_t)(to - off);
        rc = util_pread_all(fd, buf, k, (off_t)off);
        XXH3_64bits_update(&st, buf, k);
        off += k;
    }
    free(buf);
    *sum = XXH3_64bits_digest(&st);
    return rc;
}

int exact_writer_commit(struct exact_writer *w, uint64_t *count, uint64_t *file_bytes, char *err,
                        size_t errlen)
{
    unsigned char h[EXACT_PAGE] = {0};
    uint64_t n = w->count, fences = (n + EXACT_PER_PAGE - 1) / EXACT_PER_PAGE;
    uint64_t fp_sum = XXH3_64bits_digest(&w->fp.st);
    bufw_pad(&w->fp);
    XXH3_64bits_reset(&w->fp.st);
    for (uint64_t i = 0; i < fences; i++) {
        uint64_t le = htole64(w->fences[i]);
        bufw_put(&w->fp, &le, 8);
    }
    uint64_t fence_sum = XXH3_64bits_digest(&w->fp.st);
    bufw_pad(&w->fp);
    uint64_t end = EXACT_PAGE + w->fp.written, offs_off = 0, blob_off = 0, keys_sum = 0;
    if (w->sized) {
        if (n != w->want_count || w->blob.written != w->want_blob) {
            util_fail(err, errlen,
                      "%s: %llu entries and %llu key bytes written, %llu and %llu promised", w->tmp,
                      (unsigned long long)n, (unsigned long long)w->blob.written,
                      (unsigned long long)w->want_count, (unsigned long long)w->want_blob);
            exact_writer_abort(w);
            return -1;
        }
        uint64_t le = htole64(w->blob.written);
        bufw_put(&w->offs, &le, 8);
        bufw_pad(&w->offs);
        if (bufw_flush(&w->fp) != 0 || bufw_flush(&w->offs) != 0 || bufw_flush(&w->blob) != 0 ||
            hash_back(w->fp.fd, w->offs_off, w->blob_off + w->blob.written, &keys_sum) != 0)
            goto io;
        offs_off = w->offs_off;
        blob_off = w->blob_off;
        end = blob_off + w->blob.written;
    } else if (w->kind == EXACT_KIND_KEYS) {
        uint64_t le = htole64(w->blob.written);
        bufw_put(&w->offs, &le, 8);
        bufw_pad(&w->offs);
        if (bufw_flush(&w->offs) != 0 || bufw_flush(&w->blob) != 0)
            goto io;
        offs_off = end;
        blob_off = offs_off + w->offs.written;
        XXH3_64bits_reset(&w->fp.st);
        if (append_file(&w->fp, w->offs.fd, w->offs.written) != 0 ||
            append_file(&w->fp, w->blob.fd, w->blob.written) != 0)
            goto io;
        keys_sum = XXH3_64bits_digest(&w->fp.st);
        end = blob_off + w->blob.written;
    }
    if (bufw_flush(&w->fp) != 0)
        goto io;
    memcpy(h + EH_MAGIC, EXACT_MAGIC, 8);
    exact_put32(h + EH_VERSION, EXACT_VERSION);
    exact_put32(h + EH_KIND, w->kind);
    exact_put64(h + EH_COUNT, n);
    exact_put64(h + EH_SEED, w->seed);
    exact_put32(h + EH_PAGE, EXACT_PAGE);
    exact_put64(h + EH_FP_OFF, EXACT_PAGE);
    exact_put64(h + EH_FENCE_OFF, EXACT_PAGE + exact_align(n * 8));
    exact_put64(h + EH_FENCE_COUNT, fences);
    exact_put64(h + EH_OFFS_OFF, offs_off);
    exact_put64(h + EH_BLOB_OFF, blob_off);
    exact_put64(h + EH_BLOB_BYTES, w->kind == EXACT_KIND_KEYS ? w->blob.written : 0);
    exact_put64(h + EH_FILE_BYTES, end);
    exact_put64(h + EH_FP_SUM, fp_sum);
    exact_put64(h + EH_FENCE_SUM, fence_sum);
    exact_put64(h + EH_KEYS_SUM, keys_sum);
    exact_put64(h + EH_HEADER_SUM, XXH3_64bits(h, EH_HEADER_SUM));
    if (pwrite(w->fp.fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
        goto io;
    if (util_commit_file(w->fp.fd, w->tmp, w->path, err, errlen) != 0) {
        w->fp.fd = -1; /* util_commit_file closed it (and left tmp: removed below) */
        unlink(w->tmp);
        exact_writer_abort(w);
        return -1;
    }
    w->fp.fd = -1;
    if (count)
        *count = n;
    if (file_bytes)
        *file_bytes = end;
    exact_writer_abort(w); /* frees; the file is committed */
    return 0;
io:;
    int e = w->fp.err ? w->fp.err : w->offs.err ? w->offs.err : w->blob.err ? w->blob.err : errno;
    util_fail(err, errlen, "%s: write: %s", w->tmp, util_errno_text(e));
    exact_writer_abort(w);
    return -1;
}
