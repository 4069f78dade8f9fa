/* journal_compact: the dropped records are gone and every other record is
 * kept in order (allow, unallow, remove and untimed adds included); records
 * appended while it runs (at the two test stages, and from a thread
 * appending throughout) are all kept; the file shrinks, reopens without a
 * torn tail, takes appends, and the offline reader reads it; a compaction
 * that would drop nothing leaves the file alone. */
#include "config.h"

#include <check.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/journal.h"
#include "lib/seams.h"

static char dir[4096], jpath[4200];
static char err[1024];

static void make_dir(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/bloomgate-compact.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(jpath, sizeof(jpath), "%s/w.journal", dir);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void remove_dir(void)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void put(struct journal *j, enum journal_op op, int64_t t, const char *item)
{
    struct filter_key k = {item, strlen(item)};
    ck_assert_msg(journal_append_op(j, op, t, &k, 1, err, sizeof(err)) == 0, "%s", err);
}

/* The records as "op:time:item" lines, in order. */
struct seen {
    char text[8 << 20];
    size_t len;
    long n;
};

static int collect(void *ctx, enum journal_op op, int64_t t, const void *item, size_t len)
{
    struct seen *s = ctx;
    int w = snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s:%lld:%.*s\n",
                     journal_op_name(op), t == JOURNAL_NO_TIME ? -1LL : (long long)t, (int)len,
                     (const char *)item);
    ck_assert_int_lt(w, (int)(sizeof(s->text) - s->len));
    s->len += (size_t)w;
    s->n++;
    return 0;
}

/* Keep all but adds timed before 5000. */
static int keep_recent(void *ctx, enum journal_op op, int64_t t)
{
    (void)ctx;
    return op != JOURNAL_OP_ADD || t == JOURNAL_NO_TIME || t >= 5000;
}

static int keep_all(void *ctx, enum journal_op op, int64_t t)
{
    (void)ctx, (void)op, (void)t;
    return 1;
}

static off_t size_of(const char *p)
{
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    return st.st_size;
}

static struct seen seen_a, seen_b;

START_TEST(test_keeps_live_and_untimed)
{
    make_dir();
    struct journal *j = journal_open(jpath, CONF_FSYNC_ALWAYS, NULL, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    char item[32];
    for (int i = 0; i < 10; i++) {
        snprintf(item, sizeof(item), "a%d", i);
        put(j, JOURNAL_OP_ADD, 1000 * i, item);
        if (i == 2) {
            put(j, JOURNAL_OP_REMOVE, JOURNAL_NO_TIME, "r");
            put(j, JOURNAL_OP_ALLOW, JOURNAL_NO_TIME, "x");
            put(j, JOURNAL_OP_ADD, JOURNAL_NO_TIME, "untimed");
            put(j, JOURNAL_OP_UNALLOW, 2500, "x");
        }
    }
    ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0);
    off_t before = size_of(jpath);
    struct journal_compaction st;
    ck_assert_msg(journal_compact(j, keep_recent, NULL, &st, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(st.records_dropped, 5);
    ck_assert_uint_eq(st.records_kept, 9);
    ck_assert_uint_eq(st.bytes_before, (uint64_t)before);
    ck_assert_uint_eq(st.bytes_after, journal_end(j));
    ck_assert_int_lt(size_of(jpath), before);
    ck_assert_int_eq((off_t)journal_end(j), size_of(jpath));
    ck_assert_int_eq(journal_replaced(j, err, sizeof(err)), 0);
    char tmp[4300];
    snprintf(tmp, sizeof(tmp), "%s.compact", jpath);
    ck_assert_int_ne(access(tmp, F_OK), 0);
    const char *want = "remove:-1:r\nallow:-1:x\nadd:-1:untimed\nunallow:2500:x\n"
                       "add:5000:a5\nadd:6000:a6\nadd:7000:a7\nadd:8000:a8\nadd:9000:a9\n";
    memset(&seen_a, 0, sizeof(seen_a));
    ck_assert_int_eq(journal_replay_ops(j, 0, journal_end(j), collect, &seen_a, err, sizeof(err)),
                     9);
    ck_assert_str_eq(seen_a.text, want);
    /* It takes appends and commits, and reads back whole. */
    put(j, JOURNAL_OP_ADD, 9500, "late");
    ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0);
    ck_assert_int_eq(journal_close(j, err, sizeof(err)), 0);
    memset(&seen_b, 0, sizeof(seen_b));
    struct journal_scan scan;
    ck_assert_int_eq(journal_read_file_ops(jpath, collect, &seen_b, &scan, err, sizeof(err)), 10);
    ck_assert_uint_eq(scan.torn_at, JOURNAL_NO_TEAR);
    ck_assert_ptr_nonnull(strstr(seen_b.text, want));
    ck_assert_ptr_nonnull(strstr(seen_b.text, "add:9500:late\n"));
    j = journal_open(jpath, CONF_FSYNC_ALWAYS, &scan, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(scan.records, 10);
    ck_assert_uint_eq(scan.torn_at, JOURNAL_NO_TEAR);
    /* Nothing more to drop: the file is left alone. */
    struct stat s1, s2;
    ck_assert_int_eq(stat(jpath, &s1), 0);
    ck_assert_int_eq(journal_compact(j, keep_recent, NULL, &st, err, sizeof(err)), 0);
    ck_assert_uint_eq(st.records_dropped, 0);
    ck_assert_int_eq(stat(jpath, &s2), 0);
    ck_assert_uint_eq(s1.st_ino, s2.st_ino);
    ck_assert_int_ne(access(tmp, F_OK), 0);
    ck_assert_int_eq(journal_close(j, err, sizeof(err)), 0);
    remove_dir();
}
END_TEST

/* Appends racing a compaction: one at each test stage (with a time the
 * compaction would drop, had it been there before), and a thread
 * appending throughout. All are kept, in their order. */
struct racer {
    struct journal *j;
    atomic_bool stop;
    long n;
};

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    char item[32], why[512];
    while ((!atomic_load(&r->stop) || r->n < 200) && r->n < 200000) {
        snprintf(item, sizeof(item), "t%ld", r->n);
        struct filter_key k = {item, strlen(item)};
        if (journal_append_op(r->j, JOURNAL_OP_ADD, 7000, &k, 1, why, sizeof(why)) != 0)
            break;
        r->n++;
    }
    return NULL;
}

static struct journal *hook_j;

static void hook(struct journal *j, int stage)
{
    ck_assert_ptr_eq(j, hook_j);
    put(j, JOURNAL_OP_ADD, 1, stage == 1 ? "stage1" : "stage2");
}

START_TEST(test_racing_appends)
{
    make_dir();
    struct journal *j = journal_open(jpath, CONF_FSYNC_EVERYSEC, NULL, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    char item[32];
    for (int i = 0; i < 20000; i++) { /* a journal worth a while to copy */
        snprintf(item, sizeof(item), "old%d", i);
        put(j, JOURNAL_OP_ADD, i % 2 ? 100 : 6000, item);
    }
    struct racer r = {.j = j};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, racer_main, &r), 0);
    hook_j = j;
    journal_test_compact_hook = hook;
    struct journal_compaction st;
    int rc = journal_compact(j, keep_recent, NULL, &st, err, sizeof(err));
    journal_test_compact_hook = NULL;
    atomic_store(&r.stop, true);
    pthread_join(t, NULL);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_uint_ge(st.records_dropped, 10000);
    ck_assert_int_eq(journal_close(j, err, sizeof(err)), 0);
    memset(&seen_a, 0, sizeof(seen_a));
    struct journal_scan scan;
    ck_assert_int_ge(journal_read_file_ops(jpath, collect, &seen_a, &scan, err, sizeof(err)), 0);
    ck_assert_uint_eq(scan.torn_at, JOURNAL_NO_TEAR);
    ck_assert_ptr_nonnull(strstr(seen_a.text, "add:1:stage1\n"));
    ck_assert_ptr_nonnull(strstr(seen_a.text, "add:1:stage2\n"));
    ck_assert_ptr_null(strstr(seen_a.text, ":100:"));
    ck_assert_ptr_nonnull(strstr(seen_a.text, "add:6000:old19998\n"));
    /* the racer's records, each once, in order */
    const char *p = seen_a.text;
    for (long i = 0; i < r.n; i++) {
        char want[48];
        snprintf(want, sizeof(want), "add:7000:t%ld\n", i);
        const char *q = strstr(p, want);
        ck_assert_msg(q != NULL, "t%ld of %ld missing or out of order", i, r.n);
        p = q + strlen(want);
    }
    ck_assert_int_eq(seen_a.n, 10000 + 2 + r.n);
    remove_dir();
}
END_TEST

/* keep_all: nothing dropped, the same file. */
START_TEST(test_keep_all)
{
    make_dir();
    struct journal *j = journal_open(jpath, CONF_FSYNC_NO, NULL, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    put(j, JOURNAL_OP_ADD, 1, "a");
    struct stat s1, s2;
    ck_assert_int_eq(stat(jpath, &s1), 0);
    struct journal_compaction st;
    ck_assert_int_eq(journal_compact(j, keep_all, NULL, &st, err, sizeof(err)), 0);
    ck_assert_uint_eq(st.records_kept, 1);
    ck_assert_int_eq(stat(jpath, &s2), 0);
    ck_assert_uint_eq(s1.st_ino, s2.st_ino);
    ck_assert_int_eq(journal_close(j, err, sizeof(err)), 0);
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("journal_compact");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_keeps_live_and_untimed);
    tcase_add_test(tc, test_racing_appends);
    tcase_add_test(tc, test_keep_all);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
