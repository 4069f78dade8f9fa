/* fuzz_journal: the journal reader (src/store/journal.h): journal_read_file,
 * the offline tool's path, and journal_open's scan, the daemon's, on the same
 * bytes, then a replay and an append.
 *
 * Input: u8 options, then the file. With option bit 0 the harness seals it so
 * that the fuzzer gets past the checksums (docs/file-format.md, "The journal
 * file"): bit 1 first writes a valid magic, version and zero flags; then the
 * header checksum is computed, and the records are walked from offset 32,
 * each one's checksum computed with the header's salt, up to the first that
 * has no record magic or runs past the end. Without bit 0 the bytes go out as
 * they are.
 *
 * What is checked: the reader and the writer's open agree on what the file
 * holds (records, items, end, torn tail) and both refuse what they refuse;
 * every failure names the file; a replay hands over exactly the items the scan
 * counted, none longer than 1 MiB; after one more append the file reads back
 * with one more record and no torn tail; with option bit 7 a compaction that
 * drops the adds of odd times keeps exactly the others (journal_compact).
 *
 * journal_open writes (it cuts a torn tail, gives an empty file a header), so
 * it runs on a copy in a private temporary directory; the reader runs on a
 * memfd. */
#include "config.h"

#include <fcntl.h>
#include <xxhash.h>

#include "bloom/le.h"
#include "store/journal.h"
#include "fuzz.h"

static char tmpdir[256];
static char tmpfile_path[300];

static void cleanup(void)
{
    unlink(tmpfile_path);
    rmdir(tmpdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/bloomgate-fuzz-journal.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        abort();
    }
    snprintf(tmpfile_path, sizeof(tmpfile_path), "%s/j", tmpdir);
    atexit(cleanup);
    return 0;
}

/* Seal: header checksum, then each record's checksum with the salt. */
static void seal(unsigned char *f, size_t n, uint8_t opt)
{
    if (n < JOURNAL_HEADER_BYTES)
        return;
    if (opt & 2) {
        memcpy(f, JOURNAL_MAGIC, 8);
        le_put32(f + 8, JOURNAL_VERSION);
        le_put32(f + 12, 0);
    }
    le_put64(f + 24, XXH3_64bits(f, 24));
    uint64_t salt = le_get64(f + 16);
    size_t off = JOURNAL_HEADER_BYTES;
    while (n - off >= JOURNAL_RECORD_HEADER && memcmp(f + off, JOURNAL_RECORD_MAGIC, 4) == 0) {
        uint32_t len = le_get32(f + off + 4);
        if (len > n - off - JOURNAL_RECORD_HEADER)
            break;
        XXH3_state_t st;
        memset(&st, 0, sizeof(st));
        XXH3_64bits_reset_withSeed(&st, salt);
        XXH3_64bits_update(&st, f + off, 8);
        XXH3_64bits_update(&st, f + off + JOURNAL_RECORD_HEADER, len);
        le_put64(f + off + 8, XXH3_64bits_digest(&st));
        off += JOURNAL_RECORD_HEADER + len;
    }
}

struct count {
    uint64_t items, bytes;
};

/* Every record's items, of every op (tagged records: docs/file-format.md). */
static int count_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item,
                      size_t len)
{
    struct count *c = ctx;
    (void)time_ms;
    FUZZ_CHECK((unsigned)op < JOURNAL_OP_COUNT, "op %u", (unsigned)op);
    FUZZ_CHECK(len <= JOURNAL_MAX_ITEM, "item of %zu bytes", len);
    FUZZ_CHECK(len == 0 || item != NULL, "NULL item");
    c->items++;
    c->bytes += len;
    return 0;
}

/* The compaction's predicate: adds of odd times go. */
static int keep_even(void *ctx, enum journal_op op, int64_t time_ms)
{
    (void)ctx;
    return op != JOURNAL_OP_ADD || time_ms == JOURNAL_NO_TIME || (time_ms & 1) == 0;
}

static int check_kept(void *ctx, enum journal_op op, int64_t time_ms, const void *item,
                      size_t len)
{
    FUZZ_CHECK(keep_even(NULL, op, time_ms), "a dropped record read back");
    return count_item(ctx, op, time_ms, item, len);
}

static void check_err(const char *err, const char *path)
{
    FUZZ_CHECK(strncmp(err, path, strlen(path)) == 0 && err[strlen(path)] == ':',
               "error does not name the file: %s", err);
}

static void write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_CHECK(fd >= 0, "cannot create %s", path);
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        FUZZ_CHECK(w > 0, "cannot write %s", path);
        p += w;
        n -= (size_t)w;
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t opt = fuzz_u8(&in);
    size_t n = in.len;
    unsigned char *f = (unsigned char *)fuzz_dup(in.p, n);
    if (opt & 1)
        seal(f, n, opt);

    /* The offline reader, on a memfd. */
    char mpath[64], err[1024] = "";
    int mfd = fuzz_memfd("fuzz.journal", f, n, mpath);
    struct journal_scan a;
    struct count ca = {0, 0};
    memset(&a, 0, sizeof(a));
    int64_t ra = journal_read_file_ops(mpath, count_item, &ca, &a, err, sizeof(err));
    close(mfd);
    if (ra < 0) {
        check_err(err, mpath);
    } else {
        FUZZ_CHECK((uint64_t)ra == a.items && ca.items == a.items, "read %lld items, scan %llu",
                   (long long)ra, (unsigned long long)a.items);
        FUZZ_CHECK(a.end <= n || (n == 0 && a.end == 0), "end %llu past %zu",
                   (unsigned long long)a.end, n);
        if (a.torn_at != JOURNAL_NO_TEAR)
            FUZZ_CHECK(a.torn_at + a.torn_bytes == n && a.torn_why, "torn tail inconsistent");
    }

    /* The daemon's open, on a copy it may cut. */
    write_file(tmpfile_path, f, n);
    struct journal_scan b;
    char err2[1024] = "";
    struct journal *j = journal_open(tmpfile_path, CONF_FSYNC_NO, &b, err2, sizeof(err2));
    FUZZ_CHECK((j != NULL) == (ra >= 0), "journal_open %s, journal_read_file %s: %s / %s",
               j ? "ok" : "failed", ra >= 0 ? "ok" : "failed", err2, err);
    if (!j) {
        check_err(err2, tmpfile_path);
    } else {
        if (!b.created)
            FUZZ_CHECK(b.records == a.records && b.items == a.items && b.end == a.end &&
                           b.torn_at == a.torn_at,
                       "open and read_file disagree: records %llu/%llu end %llu/%llu",
                       (unsigned long long)b.records, (unsigned long long)a.records,
                       (unsigned long long)b.end, (unsigned long long)a.end);
        struct count cb = {0, 0};
        int64_t rb =
            journal_replay_ops(j, 0, journal_end(j), count_item, &cb, err2, sizeof(err2));
        FUZZ_CHECK(rb >= 0 && (uint64_t)rb == b.items && cb.bytes == ca.bytes,
                   "replay gave %lld items of %llu: %s", (long long)rb,
                   (unsigned long long)b.items, err2);
        struct filter_key k = {data, size < 64 ? size : 64};
        /* An add (untagged) or a tagged op, as the input's option bits say. */
        enum journal_op op = (enum journal_op)((opt >> 2) % JOURNAL_OP_COUNT);
        FUZZ_CHECK(journal_append_op(j, op, (opt & 0x40) ? (int64_t)size : JOURNAL_NO_TIME, &k, 1,
                                     err2, sizeof(err2)) == 0,
                   "append failed: %s", err2);
        /* With option bit 7, a compaction (the walk of every record, then
         * the rewrite) that drops the adds of odd times. */
        struct journal_compaction cs = {0, 0, 0, 0};
        if (opt & 0x80) {
            FUZZ_CHECK(journal_compact(j, keep_even, NULL, &cs, err2, sizeof(err2)) == 0,
                       "compaction failed: %s", err2);
            FUZZ_CHECK(cs.records_kept + cs.records_dropped == b.records + 1 &&
                           cs.bytes_after == journal_end(j),
                       "compaction: %llu kept + %llu dropped of %llu",
                       (unsigned long long)cs.records_kept,
                       (unsigned long long)cs.records_dropped,
                       (unsigned long long)b.records + 1);
        }
        FUZZ_CHECK(journal_close(j, err2, sizeof(err2)) == 0, "close failed: %s", err2);
        struct journal_scan c;
        struct count cc = {0, 0};
        int64_t rc = journal_read_file_ops(tmpfile_path, (opt & 0x80) ? check_kept : count_item,
                                           &cc, &c, err2, sizeof(err2));
        if (cs.records_dropped)
            FUZZ_CHECK(rc >= 0 && c.records == cs.records_kept && c.torn_at == JOURNAL_NO_TEAR,
                       "after a compaction: %llu records of %llu kept: %s",
                       (unsigned long long)c.records, (unsigned long long)cs.records_kept, err2);
        else
            FUZZ_CHECK(rc == (int64_t)b.items + 1 && c.records == b.records + 1 &&
                           c.torn_at == JOURNAL_NO_TEAR,
                       "after an append: %lld items, %llu records, torn at %llu: %s",
                       (long long)rc, (unsigned long long)c.records,
                       (unsigned long long)c.torn_at, err2);
    }
    unlink(tmpfile_path);
    free(f);
    return 0;
}
