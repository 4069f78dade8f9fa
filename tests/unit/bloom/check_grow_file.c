/* A growing filter's checkpoint file (bloom/grow_file.h): written and
 * loaded back it is the same filter (sub-filters, counts, key kind, seed,
 * every answer), and it goes on growing exactly as the one written would
 * (what a journal replayed after a checkpoint relies on); every flipped
 * byte, cut, trailing byte or foreign file is refused with a message
 * naming the file, never a crash. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloom/filter.h"
#include "bloom/format.h"
#include "bloom/grow.h"
#include "bloom/grow_file.h"

static char dir[256], path[300];

static void setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/growfile.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/g.bloom", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

static struct filter *make(enum filter_layout layout, uint64_t cap, double fpr, uint64_t seed)
{
    char err[256];
    struct filter_plan first;
    ck_assert_int_eq(grow_plan(layout, cap, fpr, 0, &first, err, sizeof(err)), 0);
    struct filter *f = grow_filter_create(&first, fpr, seed, 0, err, sizeof(err));
    ck_assert_msg(f != NULL, "%s", err);
    return f;
}

static void add_range(struct filter *f, const char *prefix, long from, long to)
{
    char k[48];
    for (long i = from; i < to; i++) {
        int n = snprintf(k, sizeof(k), "%s-%ld", prefix, i);
        filter_add(f, k, (size_t)n);
    }
}

/* The two filters answer alike for n keys of prefix; returns how many YES. */
static long same_answers(struct filter *a, struct filter *b, const char *prefix, long n)
{
    char k[48];
    long yes = 0;
    for (long i = 0; i < n; i++) {
        int len = snprintf(k, sizeof(k), "%s-%ld", prefix, i);
        bool x = filter_check(a, k, (size_t)len);
        ck_assert_int_eq(x, filter_check(b, k, (size_t)len));
        yes += x;
    }
    return yes;
}

static void same_subs(struct filter *a, struct filter *b)
{
    struct filter_grow *ga = grow_of(a), *gb = grow_of(b);
    ck_assert_ptr_nonnull(gb);
    ck_assert_uint_eq(grow_count(ga), grow_count(gb));
    for (unsigned i = 0; i < grow_count(ga); i++) {
        struct grow_sub_info x, y;
        grow_sub_info(ga, i, &x);
        grow_sub_info(gb, i, &y);
        ck_assert_uint_eq(x.capacity, y.capacity);
        ck_assert_uint_eq(x.items, y.items);
        ck_assert_uint_eq(x.bits_set, y.bits_set);
        ck_assert_uint_eq(x.bytes, y.bytes);
        ck_assert_uint_eq(x.k, y.k);
    }
    ck_assert_uint_eq(filter_items(a), filter_items(b));
    ck_assert_uint_eq(a->seed, b->seed);
    ck_assert_int_eq(a->keys, b->keys);
}

/* Both layouts: written at several sub-filters, loaded back, then both go
 * on taking the same adds and stay the same. */
START_TEST(test_round_trip)
{
    enum filter_layout layout = _i ? FILTER_CLASSIC : FILTER_BLOCKED;
    struct filter *f = make(layout, 50, 0.01, 0x1234abcdULL + (uint64_t)_i);
    f->keys = FILTER_KEYS_HOST;
    add_range(f, "in", 0, 3000);
    ck_assert_uint_ge(grow_count(grow_of(f)), 5);
    char err[512];
    ck_assert_msg(grow_file_write(f, path, err, sizeof(err)) == 0, "%s", err);
    struct grow_file_info gi;
    ck_assert_msg(grow_file_info(path, &gi, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(gi.subs, grow_count(grow_of(f)));
    ck_assert_uint_eq(gi.items, filter_items(f));
    ck_assert_uint_eq(gi.capacity, 50);
    ck_assert_int_eq(gi.keys, FILTER_KEYS_HOST);
    struct filter *g = grow_file_load(path, 0, err, sizeof(err));
    ck_assert_msg(g != NULL, "%s", err);
    same_subs(f, g);
    struct filter_grow *gg = grow_of(g); /* the newest's running count, read back */
    ck_assert_uint_eq(gg->newest_items, filter_items(gg->sub[grow_count(gg) - 1]));
    ck_assert_int_eq(same_answers(f, g, "in", 3000), 3000);
    same_answers(f, g, "out", 20000);
    /* The growth state came back: the next adds make the same sub-filters
     * at the same boundaries. */
    add_range(f, "more", 0, 5000);
    add_range(g, "more", 0, 5000);
    same_subs(f, g);
    ck_assert_int_eq(same_answers(f, g, "more", 5000), 5000);
    same_answers(f, g, "out", 20000);
    filter_free(f);
    filter_free(g);
}
END_TEST

static void write_bytes(const unsigned char *b, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
    close(fd);
}

static unsigned char *read_bytes(size_t *n)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    unsigned char *b = malloc((size_t)st.st_size);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_int_eq(read(fd, b, (size_t)st.st_size), st.st_size);
    close(fd);
    *n = (size_t)st.st_size;
    return b;
}

/* The load refuses, with a message naming the file (and contains). */
static void refused(const char *contains)
{
    char err[512] = "";
    struct filter *g = grow_file_load(path, 0, err, sizeof(err));
    ck_assert_msg(g == NULL, "a bad file was loaded");
    ck_assert_msg(strstr(err, path) != NULL, "no file name in: %s", err);
    if (contains)
        ck_assert_msg(strstr(err, contains) != NULL, "\"%s\" not in: %s", contains, err);
}

/* Every byte of the header and a sample of the payload flipped, the file
 * cut at every length up to past the header and then at a sample, a
 * trailing byte: each refused. */
START_TEST(test_corrupt)
{
    struct filter *f = make(FILTER_BLOCKED, 20, 0.01, 99);
    add_range(f, "in", 0, 500);
    char err[512];
    ck_assert_msg(grow_file_write(f, path, err, sizeof(err)) == 0, "%s", err);
    filter_free(f);
    size_t n;
    unsigned char *good = read_bytes(&n);
    struct grow_file_info gi;
    ck_assert_int_eq(grow_file_info(path, &gi, err, sizeof(err)), 0);
    size_t header = n - gi.bytes;
    ck_assert_uint_gt(header, GROW_FILE_FIXED);
    unsigned char *b = malloc(n + 1);
    for (size_t i = 0; i < n; i += i < header ? 1 : 7) {
        memcpy(b, good, n);
        b[i] ^= 0x10;
        write_bytes(b, n);
        refused(NULL);
    }
    for (size_t cut = 0; cut < n; cut += cut < header + 64 ? 1 : 61) {
        write_bytes(good, cut);
        refused(cut >= 8 ? NULL : "not a growing filter's checkpoint");
    }
    memcpy(b, good, n);
    b[n] = 0;
    write_bytes(b, n + 1);
    refused("trailing bytes");
    write_bytes(good, n);
    struct filter *g = grow_file_load(path, 0, err, sizeof(err));
    ck_assert_msg(g != NULL, "%s", err);
    filter_free(g);
    free(b);
    free(good);
}
END_TEST

/* A plain filter file, an empty file and a missing one are not
 * checkpoints; a plain filter cannot be written as one. */
START_TEST(test_foreign)
{
    char err[512];
    struct filter_plan plan;
    ck_assert_int_eq(filter_plan_make(FILTER_BLOCKED, 1000, 0.01, 0, &plan, err, sizeof(err)), 0);
    struct filter *p = filter_create(&plan, 7, err, sizeof(err));
    ck_assert_int_eq(format_write(p, path, 1, err, sizeof(err)), 0);
    refused("wrong magic");
    ck_assert_int_eq(grow_file_write(p, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a growing filter"));
    filter_free(p);
    write_bytes((const unsigned char *)"", 0);
    refused("too short");
    unlink(path);
    refused("cannot open");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("grow_file");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_round_trip, 0, 2);
    tcase_add_test(tc, test_corrupt);
    tcase_add_test(tc, test_foreign);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
