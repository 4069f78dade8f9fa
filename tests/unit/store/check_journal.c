/* Unit tests for the journal: binary round trips, concurrent appends, a torn
 * tail cut at every byte of the last record, damage in the middle refused, bad
 * headers, write failures (RLIMIT_FSIZE), commit policies and replay ranges.
 * Every test works in its own mkdtemp directory. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloom/hash.h"
#include "store/journal.h"

static char dir[4096];
static char err[1024];

static void make_dir(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/bloomgate-journal.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void remove_dir(void)
{
    chmod(dir, 0700);
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A path in the test's directory; the last 8 results stay valid. */
static char *path_in(const char *name)
{
    static char p[8][4200];
    static unsigned next;
    char *r = p[next++ % 8];
    snprintf(r, sizeof(p[0]), "%s/%s", dir, name);
    return r;
}

/* ---- small helpers ---- */

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void write_all(const char *path, const void *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* Items collected by a replay, in order. */
struct coll {
    size_t n, cap;
    struct {
        unsigned char *d;
        size_t len;
    } * v;
    size_t stop_after; /* 0: never stop */
};

static int collect(void *ctx, const void *item, size_t len)
{
    struct coll *c = ctx;
    if (c->stop_after && c->n == c->stop_after)
        return -1;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->v = realloc(c->v, c->cap * sizeof(*c->v));
    }
    c->v[c->n].d = malloc(len ? len : 1);
    memcpy(c->v[c->n].d, item, len);
    c->v[c->n].len = len;
    c->n++;
    return 0;
}

static void coll_free(struct coll *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].d);
    free(c->v);
    memset(c, 0, sizeof(*c));
}

static void coll_expect(const struct coll *c, const struct filter_key *want, size_t n)
{
    ck_assert_uint_eq(c->n, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(c->v[i].len == want[i].len, "item %zu: length %zu, wanted %zu", i,
                      c->v[i].len, want[i].len);
        ck_assert_msg(memcmp(c->v[i].d, want[i].data, want[i].len) == 0, "item %zu differs", i);
    }
}

static struct filter_key key(const char *s)
{
    return (struct filter_key){s, strlen(s)};
}

static struct journal *open_ok(const char *path, enum conf_fsync pol, struct journal_scan *s)
{
    struct journal *j = journal_open(path, pol, s, err, sizeof(err));
    ck_assert_msg(j != NULL, "journal_open: %s", err);
    return j;
}

static void append_ok(struct journal *j, const struct filter_key *items, size_t n)
{
    ck_assert_msg(journal_append(j, items, n, err, sizeof(err)) == 0, "append: %s", err);
}

static void close_ok(struct journal *j)
{
    ck_assert_msg(journal_close(j, err, sizeof(err)) == 0, "close: %s", err);
}

static void open_fails(const char *path, const char *part)
{
    memset(err, 0, sizeof(err));
    ck_assert_ptr_null(journal_open(path, CONF_FSYNC_EVERYSEC, NULL, err, sizeof(err)));
    ck_assert_msg(strstr(err, part) != NULL, "want \"%s\" in: %s", part, err);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "message does not name the file: %s", err);
}

/* Replay everything of an open journal into c. */
static int64_t replay_all(struct journal *j, struct coll *c)
{
    int64_t n = journal_replay(j, 0, journal_end(j), collect, c, err, sizeof(err));
    ck_assert_msg(n >= 0, "replay: %s", err);
    return n;
}

/* ---- tests ---- */

START_TEST(test_create)
{
    make_dir();
    const char *p = path_in("new.journal");
    struct journal_scan s;
    mode_t old_mask = umask(022);
    struct journal *j = open_ok(p, CONF_FSYNC_EVERYSEC, &s);
    umask(old_mask);
    ck_assert_int_eq(s.created, 1);
    ck_assert_uint_eq(s.records, 0);
    ck_assert_uint_eq(s.torn_at, JOURNAL_NO_TEAR);
    ck_assert_uint_eq(s.end, JOURNAL_HEADER_BYTES);
    ck_assert_uint_eq(journal_end(j), JOURNAL_HEADER_BYTES);
    ck_assert_str_eq(journal_path(j), p);
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_uint_eq(st.st_size, JOURNAL_HEADER_BYTES);
    ck_assert_uint_eq(st.st_mode & 0777, 0640);
    close_ok(j);
    j = open_ok(p, CONF_FSYNC_EVERYSEC, &s);
    ck_assert_int_eq(s.created, 0);
    ck_assert_uint_eq(s.end, JOURNAL_HEADER_BYTES);
    close_ok(j);
    remove_dir();
}
END_TEST

START_TEST(test_binary_round_trip)
{
    make_dir();
    const char *p = path_in("bin.journal");
    size_t big_len = JOURNAL_MAX_ITEM;
    char *big = malloc(big_len);
    for (size_t i = 0; i < big_len; i++)
        big[i] = (char)(i * 131 + 7);
    struct filter_key want[] = {
        key("plain.example"),
        key("with spaces and\ttabs "),
        {"nul\0inside", 10},
        key("line\nfeed\r\n"),
        {"", 0},
        key("# not a comment"),
        {"\0", 1},
        {big, big_len},
        key("JRN\x1e looks like a record magic"),
    };
    size_t n = sizeof(want) / sizeof(want[0]);
    struct journal *j = open_ok(p, CONF_FSYNC_ALWAYS, NULL);
    append_ok(j, want, 3);     /* one batch */
    append_ok(j, want + 3, 1); /* single items */
    append_ok(j, want + 4, 1);
    append_ok(j, want + 5, n - 5); /* a batch holding the 1 MiB item */
    ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0);
    struct coll c = {0};
    ck_assert_int_eq(replay_all(j, &c), (int64_t)n);
    coll_expect(&c, want, n);
    coll_free(&c);
    close_ok(j);

    struct journal_scan s;
    j = open_ok(p, CONF_FSYNC_ALWAYS, &s);
    ck_assert_uint_eq(s.records, 4);
    ck_assert_uint_eq(s.items, n);
    ck_assert_uint_eq(s.torn_at, JOURNAL_NO_TEAR);
    ck_assert_uint_eq(s.end, file_size(p));
    ck_assert_int_eq(replay_all(j, &c), (int64_t)n);
    coll_expect(&c, want, n);
    coll_free(&c);
    close_ok(j);

    /* The offline reader sees the same, and so does a count-only read. */
    ck_assert_int_eq(journal_read_file(p, collect, &c, &s, err, sizeof(err)), (int64_t)n);
    coll_expect(&c, want, n);
    coll_free(&c);
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), (int64_t)n);
    free(big);
    remove_dir();
}
END_TEST

START_TEST(test_item_limits)
{
    make_dir();
    const char *p = path_in("limits.journal");
    struct journal *j = open_ok(p, CONF_FSYNC_NO, NULL);
    size_t len = JOURNAL_MAX_ITEM + 1;
    char *big = calloc(1, len);
    struct filter_key k[] = {key("fine"), {big, len}};
    ck_assert_int_eq(journal_append(j, k, 2, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "longer than") && strstr(err, p), "%s", err);
    ck_assert_uint_eq(journal_end(j), JOURNAL_HEADER_BYTES); /* nothing of the batch */
    ck_assert_int_eq(journal_append(j, k, 0, err, sizeof(err)), 0);
    ck_assert_uint_eq(journal_end(j), JOURNAL_HEADER_BYTES);

    /* A batch over JOURNAL_MAX_PAYLOAD is several records, all in one append. */
    size_t m = 20;
    struct filter_key *many = calloc(m, sizeof(*many));
    for (size_t i = 0; i < m; i++) {
        big[0] = (char)i;
        many[i].data = memcpy(malloc(JOURNAL_MAX_ITEM), big, JOURNAL_MAX_ITEM);
        many[i].len = JOURNAL_MAX_ITEM;
    }
    append_ok(j, many, m);
    close_ok(j);
    struct journal_scan s;
    struct coll c = {0};
    ck_assert_int_eq(journal_read_file(p, collect, &c, &s, err, sizeof(err)), (int64_t)m);
    ck_assert_uint_eq(s.records, 2);
    coll_expect(&c, many, m);
    coll_free(&c);
    for (size_t i = 0; i < m; i++)
        free((void *)many[i].data);
    free(many);
    free(big);
    remove_dir();
}
END_TEST

/* ---- concurrency ---- */

#define THREADS 4
#define PER_THREAD 1500

struct appender {
    struct journal *j;
    int id;
    int count; /* items to append */
    bool commit;
    int failures;
};

/* Item i of thread t: "t<t>-<i>" padded with a thread-specific byte to a
 * length that varies, so records of different sizes race. */
static size_t make_item(char *buf, int t, int i)
{
    int n = snprintf(buf, 64, "t%d-%d|", t, i);
    size_t len = (size_t)n + (size_t)(i * 7 + t) % 200;
    memset(buf + n, 'a' + t, len - (size_t)n);
    return len;
}

static void *appender_main(void *arg)
{
    struct appender *a = arg;
    char buf[2][300];
    char e[256];
    for (int i = 0; i < a->count; i += 2) {
        struct filter_key k[2] = {{buf[0], make_item(buf[0], a->id, i)},
                                  {buf[1], make_item(buf[1], a->id, i + 1)}};
        /* Alternate single items and batches of two. */
        if (journal_append(a->j, k, 1, e, sizeof(e)) != 0 ||
            journal_append(a->j, k + 1, 1, e, sizeof(e)) != 0)
            a->failures++;
        if (a->commit && journal_commit(a->j, e, sizeof(e)) != 0)
            a->failures++;
    }
    return NULL;
}

struct seen {
    int next[THREADS]; /* next index expected from each thread */
    int bad;
};

static int check_order(void *ctx, const void *item, size_t len)
{
    struct seen *s = ctx;
    char want[300], text[300];
    int t, i;
    if (len >= sizeof(text)) {
        s->bad++;
        return 0;
    }
    memcpy(text, item, len);
    text[len] = '\0';
    if (sscanf(text, "t%d-%d|", &t, &i) != 2 || t < 0 || t >= THREADS) {
        s->bad++;
        return 0;
    }
    /* Each thread's items arrive once each, in its own order, intact. */
    if (i != s->next[t] || make_item(want, t, i) != len || memcmp(want, item, len) != 0)
        s->bad++;
    s->next[t] = i + 1;
    return 0;
}

static void run_concurrent(enum conf_fsync pol, bool commit, int per_thread)
{
    make_dir();
    const char *p = path_in("conc.journal");
    struct journal *j = open_ok(p, pol, NULL);
    pthread_t tid[THREADS];
    struct appender a[THREADS];
    for (int t = 0; t < THREADS; t++) {
        a[t] = (struct appender){j, t, per_thread, commit, 0};
        ck_assert_int_eq(pthread_create(&tid[t], NULL, appender_main, &a[t]), 0);
    }
    /* The main thread ticks meanwhile, as the daemon's would. */
    for (int k = 0; k < 20; k++) {
        ck_assert_int_eq(journal_tick(j, err, sizeof(err)), 0);
        usleep(1000);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(tid[t], NULL);
        ck_assert_int_eq(a[t].failures, 0);
    }
    ck_assert_uint_eq(journal_end(j), file_size(p));
    close_ok(j);
    struct journal_scan s;
    struct seen seen = {{0}, 0};
    int64_t n = journal_read_file(p, check_order, &seen, &s, err, sizeof(err));
    ck_assert_msg(n == (int64_t)THREADS * per_thread, "%lld items: %s", (long long)n, err);
    ck_assert_uint_eq(s.records, (uint64_t)THREADS * per_thread);
    ck_assert_uint_eq(s.torn_at, JOURNAL_NO_TEAR);
    ck_assert_int_eq(seen.bad, 0);
    for (int t = 0; t < THREADS; t++)
        ck_assert_int_eq(seen.next[t], per_thread);
    remove_dir();
}

START_TEST(test_concurrent_appends)
{
    run_concurrent(CONF_FSYNC_EVERYSEC, false, PER_THREAD);
}
END_TEST

/* The daemon's `always` path: append, then commit before replying. Committers
 * share fdatasyncs; nothing here asserts how many (that would be a timing). */
START_TEST(test_concurrent_commits)
{
    run_concurrent(CONF_FSYNC_ALWAYS, true, PER_THREAD);
}
END_TEST

/* ---- torn tails and corruption ---- */

/* A journal of three records (the last with a 20-byte item) and their offsets. */
static const char *const three[] = {"first.example", "second.example", "third-20-bytes-item!"};

static void make_three(const char *p, uint64_t off[4])
{
    struct journal *j = open_ok(p, CONF_FSYNC_NO, NULL);
    off[0] = journal_end(j);
    for (int i = 0; i < 3; i++) {
        struct filter_key k = key(three[i]);
        append_ok(j, &k, 1);
        off[i + 1] = journal_end(j);
    }
    close_ok(j);
}

START_TEST(test_torn_tail_every_offset)
{
    make_dir();
    const char *p = path_in("torn.journal");
    uint64_t off[4];
    make_three(p, off);
    size_t len;
    unsigned char *full = read_all(p, &len);
    ck_assert_uint_eq(len, off[3]);
    struct filter_key first2[] = {key(three[0]), key(three[1]), key("after the cut")};
    for (uint64_t cut = off[2] + 1; cut < off[3]; cut++) {
        write_all(p, full, (size_t)cut);
        struct journal_scan s;
        /* The offline reader reports the tear and leaves the file alone. */
        ck_assert_int_eq(journal_read_file(p, NULL, NULL, &s, err, sizeof(err)), 2);
        ck_assert_uint_eq(s.torn_at, off[2]);
        ck_assert_uint_eq(file_size(p), cut);
        /* Opening for writing cuts it. */
        struct journal *j = open_ok(p, CONF_FSYNC_ALWAYS, &s);
        ck_assert_uint_eq(s.torn_at, off[2]);
        ck_assert_uint_eq(s.torn_bytes, cut - off[2]);
        ck_assert_ptr_nonnull(s.torn_why);
        ck_assert_uint_eq(s.records, 2);
        ck_assert_uint_eq(s.end, off[2]);
        ck_assert_uint_eq(file_size(p), off[2]);
        struct coll c = {0};
        ck_assert_int_eq(replay_all(j, &c), 2);
        coll_free(&c);
        append_ok(j, first2 + 2, 1);
        ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0);
        close_ok(j);
        j = open_ok(p, CONF_FSYNC_ALWAYS, &s);
        ck_assert_uint_eq(s.torn_at, JOURNAL_NO_TEAR);
        ck_assert_int_eq(replay_all(j, &c), 3);
        coll_expect(&c, first2, 3);
        coll_free(&c);
        close_ok(j);
    }
    free(full);
    remove_dir();
}
END_TEST

/* What a crash can also leave: the size grew but the data blocks are zeros,
 * or a whole last record whose bytes did not all reach the disk. */
START_TEST(test_torn_tail_shapes)
{
    make_dir();
    const char *p = path_in("shapes.journal");
    uint64_t off[4];
    make_three(p, off);
    size_t len;
    unsigned char *full = read_all(p, &len);
    unsigned char *buf = calloc(1, len + 4096);
    memcpy(buf, full, len);
    struct journal_scan s;

    write_all(p, buf, len + 4096); /* 4 KiB of zeros after the last record */
    struct journal *j = open_ok(p, CONF_FSYNC_EVERYSEC, &s);
    ck_assert_uint_eq(s.torn_at, off[3]);
    ck_assert_uint_eq(s.torn_bytes, 4096);
    ck_assert_uint_eq(s.records, 3);
    close_ok(j);

    memset(buf + off[2] + 20, 0, len - off[2] - 20); /* the last record's tail zeroed */
    write_all(p, buf, len);
    j = open_ok(p, CONF_FSYNC_EVERYSEC, &s);
    ck_assert_uint_eq(s.torn_at, off[2]);
    ck_assert_str_eq(s.torn_why, "checksum mismatch");
    close_ok(j);
    free(buf);
    free(full);
    remove_dir();
}
END_TEST

static void expect_refused(const char *p, const unsigned char *bytes, size_t len, uint64_t at)
{
    char want[64];
    snprintf(want, sizeof(want), "offset %llu", (unsigned long long)at);
    write_all(p, bytes, len);
    open_fails(p, want);
    ck_assert_msg(strstr(err, "not a torn tail"), "%s", err);
    /* Nothing was cut: every byte is still there. */
    size_t got;
    unsigned char *after = read_all(p, &got);
    ck_assert_uint_eq(got, len);
    ck_assert_int_eq(memcmp(after, bytes, len), 0);
    free(after);
    struct coll c = {0};
    ck_assert_int_eq(journal_read_file(p, collect, &c, NULL, err, sizeof(err)), -1);
    ck_assert_uint_eq(c.n, 0); /* nothing handed over before the whole file was checked */
    ck_assert_msg(strstr(err, want), "%s", err);
}

START_TEST(test_corrupt_middle)
{
    make_dir();
    const char *p = path_in("mid.journal");
    uint64_t off[4];
    make_three(p, off);
    size_t len;
    unsigned char *full = read_all(p, &len);
    unsigned char *bad = malloc(len);
    /* Every byte of the middle record, flipped in turn: payload, checksum,
     * length, magic. Each is refused naming the record's offset. */
    for (uint64_t b = off[1]; b < off[2]; b++) {
        memcpy(bad, full, len);
        bad[b] ^= 0x40;
        expect_refused(p, bad, len, off[1]);
    }
    /* A flipped byte in the first record, too. */
    memcpy(bad, full, len);
    bad[off[0] + 18] ^= 1;
    expect_refused(p, bad, len, off[0]);
    free(bad);
    free(full);
    remove_dir();
}
END_TEST

/* A torn record's payload can hold anything, even the bytes of a whole record:
 * because record checksums are seeded with the journal's own salt, a record
 * from another journal (what an item could carry) is not taken for a valid
 * follower, and the tear is still cut. */
START_TEST(test_torn_record_holding_a_record)
{
    make_dir();
    const char *other = path_in("other.journal");
    const char *p = path_in("host.journal");
    struct journal *j = open_ok(other, CONF_FSYNC_NO, NULL);
    struct filter_key k = key("smuggled");
    append_ok(j, &k, 1);
    close_ok(j);
    size_t olen;
    unsigned char *ob = read_all(other, &olen);
    /* The item: the other journal's record, then some bytes. */
    size_t rlen = olen - JOURNAL_HEADER_BYTES;
    unsigned char item[256];
    memcpy(item, ob + JOURNAL_HEADER_BYTES, rlen);
    memset(item + rlen, 'z', 40);
    j = open_ok(p, CONF_FSYNC_NO, NULL);
    struct filter_key a = key("a"), it = {item, rlen + 40};
    append_ok(j, &a, 1);
    uint64_t last = journal_end(j);
    append_ok(j, &it, 1);
    close_ok(j);
    /* Tear the last record just after the embedded one. */
    ck_assert_int_eq(truncate(p, (off_t)(last + JOURNAL_RECORD_HEADER + 4 + rlen + 10)), 0);
    struct journal_scan s;
    j = open_ok(p, CONF_FSYNC_NO, &s);
    ck_assert_uint_eq(s.torn_at, last);
    ck_assert_uint_eq(s.items, 1);
    close_ok(j);
    free(ob);
    remove_dir();
}
END_TEST

/* A record whose checksum matches but whose items do not fill it exactly was
 * written that way: never a torn tail, always refused. */
START_TEST(test_malformed_payload)
{
    make_dir();
    const char *p = path_in("framing.journal");
    struct journal *j = open_ok(p, CONF_FSYNC_NO, NULL);
    close_ok(j);
    size_t len;
    unsigned char *h = read_all(p, &len);
    uint64_t salt = 0;
    for (int i = 7; i >= 0; i--)
        salt = salt << 8 | h[16 + i];
    unsigned char rec[JOURNAL_RECORD_HEADER + 6] = "JRN\x1e\x06\0\0\0";
    memcpy(rec + JOURNAL_RECORD_HEADER, "\x09\0\0\0ab", 6); /* says 9 bytes, holds 2 */
    XXH3_state_t st;
    memset(&st, 0, sizeof(st));
    XXH3_64bits_reset_withSeed(&st, salt);
    XXH3_64bits_update(&st, rec, 8);
    XXH3_64bits_update(&st, rec + JOURNAL_RECORD_HEADER, 6);
    uint64_t sum = XXH3_64bits_digest(&st);
    for (int i = 0; i < 8; i++)
        rec[8 + i] = (unsigned char)(sum >> (8 * i));
    unsigned char *file = malloc(len + sizeof(rec));
    memcpy(file, h, len);
    memcpy(file + len, rec, sizeof(rec));
    write_all(p, file, len + sizeof(rec));
    open_fails(p, "malformed payload");
    ck_assert_uint_eq(file_size(p), len + sizeof(rec));
    free(file);
    free(h);
    remove_dir();
}
END_TEST

/* ---- headers ---- */

static void put32le(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrite the header's checksum after editing it, so only the edit is wrong. */
static void reseal(unsigned char *h)
{
    uint64_t sum = hash_checksum(h, 24);
    for (int i = 0; i < 8; i++)
        h[24 + i] = (unsigned char)(sum >> (8 * i));
}

START_TEST(test_bad_headers)
{
    make_dir();
    const char *p = path_in("hdr.journal");
    struct journal *j = open_ok(p, CONF_FSYNC_NO, NULL);
    struct filter_key k = key("kept");
    append_ok(j, &k, 1);
    close_ok(j);
    size_t len;
    unsigned char *good = read_all(p, &len);
    unsigned char *b = malloc(len);

    write_all(p, "this is not a journal, just text\n", 33);
    open_fails(p, "not a bloomgate journal (wrong magic)");
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "wrong magic"));

    memcpy(b, good, len);
    put32le(b + 8, 2);
    reseal(b);
    write_all(p, b, len);
    open_fails(p, "journal format version 2 is newer than this bloomgate reads (1)");

    memcpy(b, good, len);
    put32le(b + 8, 0);
    reseal(b);
    write_all(p, b, len);
    open_fails(p, "corrupt journal header: version 0");

    memcpy(b, good, len);
    b[17] ^= 1; /* the salt, checksum left as it was */
    write_all(p, b, len);
    open_fails(p, "corrupt journal header: checksum mismatch");

    memcpy(b, good, len);
    b[12] = 1;
    reseal(b);
    write_all(p, b, len);
    open_fails(p, "corrupt journal header: flags are not zero");

    /* A bad header is never "repaired": the file is as it was. */
    size_t got;
    unsigned char *after = read_all(p, &got);
    ck_assert_uint_eq(got, len);
    ck_assert_int_eq(memcmp(after, b, len), 0);
    free(after);
    free(b);
    free(good);
    remove_dir();
}
END_TEST

/* A 0-byte file is a new journal (a crash between creating the file and
 * writing its header leaves one; so does `: > FILE` on a stopped daemon's
 * journal). A file shorter than a header that starts like one is a header torn
 * at creation: no record can be in it, so it is reported and rewritten. */
START_TEST(test_empty_and_short_files)
{
    make_dir();
    const char *p = path_in("empty.journal");
    write_all(p, "", 0);
    struct journal_scan s;
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, &s, err, sizeof(err)), 0);
    ck_assert_uint_eq(s.torn_at, JOURNAL_NO_TEAR);
    ck_assert_uint_eq(file_size(p), 0);
    struct journal *j = open_ok(p, CONF_FSYNC_EVERYSEC, &s);
    ck_assert_int_eq(s.created, 1);
    ck_assert_uint_eq(s.torn_at, JOURNAL_NO_TEAR);
    ck_assert_uint_eq(file_size(p), JOURNAL_HEADER_BYTES);
    struct filter_key k = key("x");
    append_ok(j, &k, 1);
    close_ok(j);
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), 1);

    write_all(p, "BGJOURN\x1a\x01\0", 10);
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, &s, err, sizeof(err)), 0);
    ck_assert_uint_eq(s.torn_at, 0);
    j = open_ok(p, CONF_FSYNC_EVERYSEC, &s);
    ck_assert_uint_eq(s.torn_at, 0);
    ck_assert_uint_eq(s.torn_bytes, 10);
    ck_assert_int_eq(s.created, 1);
    close_ok(j);
    ck_assert_uint_eq(file_size(p), JOURNAL_HEADER_BYTES);

    write_all(p, "BGX", 3);
    open_fails(p, "wrong magic");
    remove_dir();
}
END_TEST

START_TEST(test_open_errors)
{
    make_dir();
    open_fails(path_in("no/such/dir/x.journal"),
               "cannot create journal: No such file or directory");
    write_all(path_in("plain"), "x", 1);
    open_fails(path_in("plain/x.journal"), "Not a directory");
    ck_assert_int_eq(mkdir(path_in("adir"), 0700), 0);
    open_fails(path_in("adir"), "Is a directory");
    ck_assert_int_eq(journal_read_file(path_in("nope"), NULL, NULL, NULL, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "nope: cannot open: No such file"), "%s", err);
    if (geteuid() != 0) { /* root ignores permissions */
        ck_assert_int_eq(mkdir(path_in("ro"), 0500), 0);
        open_fails(path_in("ro/x.journal"), "cannot create journal: Permission denied");
        write_all(path_in("ro.journal"), "", 0);
        ck_assert_int_eq(chmod(path_in("ro.journal"), 0400), 0);
        open_fails(path_in("ro.journal"), "cannot open journal: Permission denied");
    }
    remove_dir();
}
END_TEST

START_TEST(test_exclusive_lock)
{
    make_dir();
    const char *p = path_in("lock.journal");
    struct journal *j = open_ok(p, CONF_FSYNC_EVERYSEC, NULL);
    open_fails(p, "locked by another writer");
    /* A reader does not need the lock. */
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), 0);
    close_ok(j);
    j = open_ok(p, CONF_FSYNC_EVERYSEC, NULL);
    close_ok(j);
    remove_dir();
}
END_TEST

/* A write that fails half way (here RLIMIT_FSIZE: a short write, then EFBIG)
 * fails the append, names the file and the cause, and leaves no partial
 * record behind: later appends work and the journal still loads. */
START_TEST(test_write_failure)
{
    make_dir();
    const char *p = path_in("full.journal");
    signal(SIGXFSZ, SIG_IGN);
    struct journal *j = open_ok(p, CONF_FSYNC_ALWAYS, NULL);
    struct filter_key before = key("before");
    append_ok(j, &before, 1);
    uint64_t end = journal_end(j);
    struct rlimit old, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = end + 100;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char item[1000];
    memset(item, 'q', sizeof(item));
    struct filter_key k = {item, sizeof(item)};
    ck_assert_int_eq(journal_append(j, &k, 1, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, p) && strstr(err, "cannot append") && strstr(err, "File too large"),
                  "%s", err);
    ck_assert_uint_eq(journal_end(j), end);
    ck_assert_uint_eq(file_size(p), end); /* the partial write was taken back */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    struct filter_key after = key("after");
    append_ok(j, &after, 1);
    ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0);
    close_ok(j);
    struct journal_scan s;
    struct coll c = {0};
    ck_assert_int_eq(journal_read_file(p, collect, &c, &s, err, sizeof(err)), 2);
    ck_assert_uint_eq(s.torn_at, JOURNAL_NO_TEAR);
    struct filter_key want[] = {before, after};
    coll_expect(&c, want, 2);
    coll_free(&c);
    remove_dir();
}
END_TEST

START_TEST(test_policies)
{
    make_dir();
    static const enum conf_fsync pols[] = {CONF_FSYNC_ALWAYS, CONF_FSYNC_EVERYSEC, CONF_FSYNC_NO};
    for (size_t i = 0; i < 3; i++) {
        const char *p = path_in("pol.journal");
        unlink(p);
        struct journal *j = open_ok(p, pols[i], NULL);
        ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0); /* nothing to sync */
        ck_assert_int_eq(journal_tick(j, err, sizeof(err)), 0);
        struct filter_key k = key("x");
        append_ok(j, &k, 1);
        ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0);
        ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0); /* already covered */
        ck_assert_int_eq(journal_tick(j, err, sizeof(err)), 0);
        append_ok(j, &k, 1);
        ck_assert_int_eq(journal_tick(j, err, sizeof(err)), 0);
        close_ok(j);
        ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), 2);
    }
    remove_dir();
}
END_TEST

START_TEST(test_replay_ranges)
{
    make_dir();
    const char *p = path_in("ranges.journal");
    struct journal *j = open_ok(p, CONF_FSYNC_EVERYSEC, NULL);
    struct filter_key a[] = {key("a1"), key("a2")}, b = key("b"), c3 = key("c");
    append_ok(j, a, 2);
    uint64_t e1 = journal_end(j);
    append_ok(j, &b, 1);
    uint64_t e2 = journal_end(j);
    append_ok(j, &c3, 1);
    uint64_t e3 = journal_end(j);
    struct coll c = {0};
    ck_assert_int_eq(journal_replay(j, 0, e1, collect, &c, err, sizeof(err)), 2);
    coll_expect(&c, a, 2);
    coll_free(&c);
    ck_assert_int_eq(journal_replay(j, JOURNAL_HEADER_BYTES, e1, collect, &c, err, sizeof(err)), 2);
    coll_free(&c);
    struct filter_key bc[] = {b, c3};
    ck_assert_int_eq(journal_replay(j, e1, e3, collect, &c, err, sizeof(err)), 2);
    coll_expect(&c, bc, 2);
    coll_free(&c);
    ck_assert_int_eq(journal_replay(j, e2, e2, collect, &c, err, sizeof(err)), 0);
    ck_assert_uint_eq(c.n, 0);

    /* Not on a record boundary, past the end, backwards: errors. */
    ck_assert_int_eq(journal_replay(j, e1 + 1, e2, collect, &c, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "record at offset") && strstr(err, p), "%s", err);
    ck_assert_int_eq(journal_replay(j, e1, e2 - 1, collect, &c, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "incomplete record"), "%s", err);
    ck_assert_int_eq(journal_replay(j, e1, e3 + 1, collect, &c, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "outside the journal"), "%s", err);
    ck_assert_int_eq(journal_replay(j, e2, e1, collect, &c, err, sizeof(err)), -1);
    ck_assert_uint_eq(c.n, 0);

    /* The callback may stop a replay: that is an error too. */
    c.stop_after = 1;
    ck_assert_int_eq(journal_replay(j, 0, e3, collect, &c, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "stopped"), "%s", err);
    coll_free(&c);

    /* Appends go on while a replay reads up to an earlier end. */
    uint64_t to = journal_end(j);
    append_ok(j, &b, 1);
    ck_assert_int_eq(journal_replay(j, 0, to, collect, &c, err, sizeof(err)), 4);
    coll_free(&c);
    ck_assert_int_eq(journal_replay(j, to, journal_end(j), collect, &c, err, sizeof(err)), 1);
    coll_free(&c);
    close_ok(j);
    remove_dir();
}
END_TEST

/* The operator retires a journal by moving it aside; the open handle still
 * writes to the moved file, and journal_replaced tells the reload to reopen. */
START_TEST(test_replaced)
{
    make_dir();
    const char *p = path_in("live.journal");
    const char *aside = path_in("live.journal.old");
    struct journal *j = open_ok(p, CONF_FSYNC_EVERYSEC, NULL);
    ck_assert_int_eq(journal_replaced(j, err, sizeof(err)), 0);
    ck_assert_int_eq(rename(p, aside), 0);
    ck_assert_int_eq(journal_replaced(j, err, sizeof(err)), 1); /* gone */
    struct journal *fresh =
        open_ok(p, CONF_FSYNC_EVERYSEC, NULL);                  /* another inode: no lock clash */
    ck_assert_int_eq(journal_replaced(j, err, sizeof(err)), 1); /* another file */
    ck_assert_int_eq(journal_replaced(fresh, err, sizeof(err)), 0);
    struct filter_key k = key("late");
    append_ok(j, &k, 1);
    close_ok(j);
    close_ok(fresh);
    ck_assert_int_eq(journal_read_file(aside, NULL, NULL, NULL, err, sizeof(err)), 1);
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), 0);
    remove_dir();
}
END_TEST

/* ---- the look-ahead after a bad record stays linear (issue 15) ---- */

/* A journal with one valid record, then what tests/fuzz/gen_slow_journal
 * writes after its header: a record with a wrong checksum, then `headers`
 * fake record headers each claiming half of their total size. Returns the
 * file's size; *bad is the bad record's offset. */
static uint64_t make_planted(const char *p, size_t headers, uint64_t *bad)
{
    struct journal *j = open_ok(p, CONF_FSYNC_NO, NULL);
    struct filter_key k = key("kept");
    append_ok(j, &k, 1);
    *bad = journal_end(j);
    close_ok(j);
    FILE *f = fopen(p, "ab");
    ck_assert_ptr_nonnull(f);
    unsigned char rec[JOURNAL_RECORD_HEADER + 4] = "JRN\x1e\x04";
    ck_assert_uint_eq(fwrite(rec, 1, sizeof(rec), f), sizeof(rec));
    unsigned char fake[JOURNAL_RECORD_HEADER] = "JRN\x1e";
    uint32_t claim = (uint32_t)(headers * sizeof(fake) / 2);
    for (int i = 0; i < 4; i++)
        fake[4 + i] = (unsigned char)(claim >> (8 * i));
    for (size_t i = 0; i < headers; i++)
        ck_assert_uint_eq(fwrite(fake, 1, sizeof(fake), f), sizeof(fake));
    ck_assert_int_eq(fclose(f), 0);
    return file_size(p);
}

/* The bytes the reader hashes and reads for a file of 65,536 planted headers
 * (1 MiB) and of four times as many: both bounded by a small multiple of the
 * file's size, and the larger about four times the smaller (the quadratic
 * scan hashed 16 GiB for the first and 256 GiB for the second). The file is
 * refused, not cut, with the offset to truncate at. */
START_TEST(test_planted_headers_linear)
{
    make_dir();
    uint64_t hashed[2], readb[2], size[2];
    const size_t headers[2] = {65536, 4 * 65536};
    for (int t = 0; t < 2; t++) {
        const char *p = path_in(t ? "planted4.journal" : "planted1.journal");
        uint64_t bad;
        size[t] = make_planted(p, headers[t], &bad);
        char want[96];
        snprintf(want, sizeof(want), "truncate the file to %llu bytes", (unsigned long long)bad);
        uint64_t h0, r0, h1, r1;
        journal_io_counters(&h0, &r0);
        ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), -1);
        journal_io_counters(&h1, &r1);
        ck_assert_msg(strstr(err, "cannot be told from damage in the middle"), "%s", err);
        ck_assert_msg(strstr(err, want), "%s", err);
        hashed[t] = h1 - h0;
        readb[t] = r1 - r0;
        open_fails(p, want);
        ck_assert_uint_eq(file_size(p), size[t]); /* left alone */
        fprintf(stderr, "planted headers: %zu in %llu bytes: %llu hashed, %llu read\n",
                headers[t], (unsigned long long)size[t], (unsigned long long)hashed[t],
                (unsigned long long)readb[t]);
        ck_assert_uint_le(hashed[t], 2 * size[t] + 4096);
        ck_assert_uint_le(readb[t], 4 * size[t] + (4u << 20));
    }
    /* Linear: four times the file, at most five times the work. */
    ck_assert_uint_le(hashed[1], 5 * hashed[0]);
    ck_assert_uint_le(readb[1], 5 * readb[0]);
    remove_dir();
}
END_TEST

/* A few planted headers in a torn last record stay under the look-ahead's
 * budget: the tear is still found to be one and cut. */
START_TEST(test_torn_record_with_planted_headers)
{
    make_dir();
    const char *p = path_in("torn-planted.journal");
    unsigned char item[4000];
    memset(item, 'x', sizeof(item));
    for (size_t at = 0; at + JOURNAL_RECORD_HEADER <= 2000; at += 20) {
        memcpy(item + at, "JRN\x1e\x10\0\0\0", 8); /* claims 16 bytes: inside the file */
    }
    struct journal *j = open_ok(p, CONF_FSYNC_NO, NULL);
    struct filter_key a = key("a"), it = {item, sizeof(item)};
    append_ok(j, &a, 1);
    uint64_t last = journal_end(j);
    append_ok(j, &it, 1);
    close_ok(j);
    ck_assert_int_eq(truncate(p, (off_t)(last + 3000)), 0);
    struct journal_scan s;
    j = open_ok(p, CONF_FSYNC_NO, &s);
    ck_assert_uint_eq(s.torn_at, last);
    ck_assert_uint_eq(s.items, 1);
    close_ok(j);
    remove_dir();
}
END_TEST

/* Damage inside a record full of planted headers that claim long payloads:
 * the record right after the damaged one (where its intact length points) is
 * checked first, so the damage is still found to be in the middle. */
START_TEST(test_middle_damage_behind_planted_headers)
{
    make_dir();
    const char *p = path_in("mid-planted.journal");
    size_t ilen = 256u << 10;
    unsigned char *item = malloc(ilen);
    memset(item, 'y', ilen);
    for (size_t at = 0; at + JOURNAL_RECORD_HEADER <= ilen; at += JOURNAL_RECORD_HEADER)
        memcpy(item + at, "JRN\x1e\0\0\x03\0", 8); /* claims 192 KiB each */
    struct journal *j = open_ok(p, CONF_FSYNC_NO, NULL);
    struct filter_key big = {item, ilen}, b = key("b");
    uint64_t first = journal_end(j);
    append_ok(j, &big, 1);
    uint64_t second = journal_end(j);
    append_ok(j, &b, 1);
    close_ok(j);
    size_t len;
    unsigned char *bytes = read_all(p, &len);
    bytes[first + JOURNAL_RECORD_HEADER + 100] ^= 1;
    write_all(p, bytes, len);
    char want[64];
    snprintf(want, sizeof(want), "a valid record follows at offset %llu",
             (unsigned long long)second);
    open_fails(p, want);
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, want), "%s", err);
    free(bytes);
    free(item);
    remove_dir();
}
END_TEST

static Suite *journal_suite(void)
{
    Suite *s = suite_create("journal");
    TCase *tc = tcase_create("journal");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_create);
    tcase_add_test(tc, test_binary_round_trip);
    tcase_add_test(tc, test_item_limits);
    tcase_add_test(tc, test_concurrent_appends);
    tcase_add_test(tc, test_concurrent_commits);
    tcase_add_test(tc, test_torn_tail_every_offset);
    tcase_add_test(tc, test_torn_tail_shapes);
    tcase_add_test(tc, test_corrupt_middle);
    tcase_add_test(tc, test_torn_record_holding_a_record);
    tcase_add_test(tc, test_malformed_payload);
    tcase_add_test(tc, test_bad_headers);
    tcase_add_test(tc, test_empty_and_short_files);
    tcase_add_test(tc, test_open_errors);
    tcase_add_test(tc, test_exclusive_lock);
    tcase_add_test(tc, test_write_failure);
    tcase_add_test(tc, test_policies);
    tcase_add_test(tc, test_replay_ranges);
    tcase_add_test(tc, test_replaced);
    tcase_add_test(tc, test_planted_headers_linear);
    tcase_add_test(tc, test_torn_record_with_planted_headers);
    tcase_add_test(tc, test_middle_damage_behind_planted_headers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(journal_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
