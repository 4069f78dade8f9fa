/* Unit tests for the exact delta (src/exact/delta.c): random adds and removes
 * against a naive set, over a fingerprint table, a keys table and no table;
 * the fold writes exactly the naive set as the next table; readers on other
 * threads never see a wrong answer for keys the writer does not touch while it
 * changes others (and the slot array grows under them). */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/build.h"
#include "exact/delta.h"
#include "exact/exact.h"
#include "lib/testutil.h"

static const uint64_t SEED = 0x5eed5eed0badf00dull;
enum { UNIVERSE = 3000, BASE = 1000, OPS = 20000 };

static size_t key_of(char *buf, uint64_t i)
{
    return tu_key(buf, "d-", i);
}

/* A table of keys 0..n-1 at path (n may be 0). */
static struct exact_table *base_table(const char *path, enum exact_kind kind, uint64_t n)
{
    char err[512] = "", buf[32];
    struct exact_build_opts o = {.path = path, .kind = kind, .seed = SEED};
    struct exact_builder *b = exact_builder_new(&o, err, sizeof(err));
    ck_assert_msg(b != NULL, "%s", err);
    for (uint64_t i = 0; i < n; i++) {
        const void *k = buf;
        size_t len = key_of(buf, i);
        ck_assert_int_eq(exact_builder_add(b, &k, &len, 1, err, sizeof(err)), 0);
    }
    ck_assert_msg(exact_builder_finish(b, NULL, err, sizeof(err)) == 0, "%s", err);
    exact_builder_free(b);
    struct exact_table *t = exact_table_open(path, err, sizeof(err));
    ck_assert_msg(t != NULL, "%s", err);
    return t;
}

/* A key's fingerprint under d's secret, out of line: inlined over a short
 * stack buffer, XXH3's paths for long keys draw gcc's -Warray-bounds under
 * the sanitizers. */
__attribute__((noinline)) static uint64_t fp_of(const struct exact_delta *d, const void *k,
                                                size_t n)
{
    return exact_fp(exact_delta_secret(d), k, n);
}

/* Every key of the universe answers as the naive set says, by its bytes
 * and (a fingerprint delta) by its fingerprint. */
static void check_all(const struct exact_delta *d, const bool *naive)
{
    char buf[32];
    for (uint64_t i = 0; i < UNIVERSE; i++) {
        size_t n = key_of(buf, i);
        ck_assert_msg(exact_delta_contains(d, buf, n) == naive[i], "key %s", buf);
        /* From the fingerprint alone (the line front's ring): the same answer
         * in a fingerprint delta; a keys delta cannot give one. */
        uint64_t fp = fp_of(d, buf, n);
        ck_assert_msg(exact_delta_contains_fp(d, fp) == (exact_delta_by_fp(d) && naive[i]),
                      "key %s by its fingerprint", buf);
    }
}

/* Random adds and removes against a naive set, then the fold, for a delta
 * over the given kind of table with `base` keys (none: no table). */
static void run_ops(enum exact_kind kind, uint64_t base)
{
    char path[4200], next[4200], err[512] = "", buf[32];
    tu_path(path, sizeof(path), "base.exact");
    tu_path(next, sizeof(next), "next.exact");
    struct exact_table *t = base ? base_table(path, kind, base) : NULL;
    struct exact_delta *d = exact_delta_new(t, kind, SEED, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    bool naive[UNIVERSE];
    for (uint64_t i = 0; i < UNIVERSE; i++)
        naive[i] = i < base;
    check_all(d, naive);
    uint64_t rng = 42 + base + kind;
    for (int op = 0; op < OPS; op++) {
        uint64_t r = tu_rand(&rng), i = r % UNIVERSE;
        bool add = (r >> 32) & 1;
        size_t n = key_of(buf, i);
        int rc = add ? exact_delta_add(d, buf, n) : exact_delta_remove(d, buf, n);
        ck_assert_int_eq(rc, naive[i] != add); /* 1 when the answer changed */
        naive[i] = add;
        ck_assert(exact_delta_contains(d, buf, n) == add);
        enum exact_delta_state st = exact_delta_state(d, buf, n);
        if (i < base)
            ck_assert_int_eq(st, add ? EXACT_DELTA_NONE : EXACT_DELTA_REMOVED);
        else
            ck_assert_int_eq(st, add ? EXACT_DELTA_ADDED : EXACT_DELTA_NONE);
    }
    check_all(d, naive);
    uint64_t added, removed, want_added = 0, want_removed = 0, listed = 0;
    for (uint64_t i = 0; i < UNIVERSE; i++) {
        want_added += naive[i] && i >= base;
        want_removed += !naive[i] && i < base;
        listed += naive[i];
    }
    exact_delta_counts(d, &added, &removed);
    ck_assert_uint_eq(added, want_added);
    ck_assert_uint_eq(removed, want_removed);
    /* The fold is the naive set. */
    struct exact_build_opts o = {.path = next};
    struct exact_build_stats st;
    ck_assert_msg(exact_delta_fold(d, &o, &st, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(st.count, listed);
    struct exact_table *nt = exact_table_open(next, err, sizeof(err));
    ck_assert_msg(nt != NULL, "%s", err);
    ck_assert_msg(exact_table_verify(nt, err, sizeof(err)) == 0, "%s", err);
    struct exact_info info;
    exact_table_info(nt, &info);
    ck_assert_int_eq(info.kind, kind);
    ck_assert_uint_eq(info.seed, SEED);
    ck_assert_uint_eq(info.count, listed);
    for (uint64_t i = 0; i < UNIVERSE; i++) {
        size_t n = key_of(buf, i);
        uint64_t at;
        ck_assert_msg(exact_table_find(nt, buf, n, &at) == naive[i], "key %s after the fold", buf);
        if (naive[i] && kind == EXACT_KIND_KEYS) {
            size_t elen;
            const void *e = exact_table_entry(nt, at, &elen);
            ck_assert(e && elen == n && memcmp(e, buf, n) == 0);
        }
    }
    /* A fresh delta over the folded table says the same. */
    struct exact_delta *d2 = exact_delta_new(nt, kind, 0, err, sizeof(err));
    check_all(d2, naive);
    exact_delta_free(d2);
    exact_table_close(nt);
    exact_delta_free(d);
    exact_table_close(t);
}

START_TEST(test_ops_fp)
{
    run_ops(EXACT_KIND_FP, BASE);
}
END_TEST
START_TEST(test_ops_keys)
{
    run_ops(EXACT_KIND_KEYS, BASE);
}
END_TEST
START_TEST(test_ops_no_table)
{
    run_ops(EXACT_KIND_FP, 0);
}
END_TEST
START_TEST(test_ops_keys_no_table)
{
    run_ops(EXACT_KIND_KEYS, 0);
}
END_TEST

struct reader {
    const struct exact_delta *d;
    atomic_bool *stop;
    uint64_t wrong, reads;
};

/* Keys 0..BASE-1 are in the table and never touched; keys 100000+ are added
 * and never removed before the stop... only the untouched ones are asserted. */
static void *read_loop(void *arg)
{
    struct reader *r = arg;
    char buf[32];
    uint64_t i = 0;
    while (!atomic_load(r->stop)) {
        size_t n = key_of(buf, i % BASE);
        if (!exact_delta_contains(r->d, buf, n))
            r->wrong++;
        n = key_of(buf, 5000000 + i % 1000); /* never added */
        if (exact_delta_contains(r->d, buf, n))
            r->wrong++;
        r->reads += 2;
        i++;
    }
    return NULL;
}

START_TEST(test_readers_during_writes)
{
    char path[4200], err[512], buf[32];
    tu_path(path, sizeof(path), "base.exact");
    for (int kind = EXACT_KIND_FP; kind <= EXACT_KIND_KEYS; kind++) {
        struct exact_table *t = base_table(path, (enum exact_kind)kind, BASE);
        struct exact_delta *d = exact_delta_new(t, (enum exact_kind)kind, 0, err, sizeof(err));
        atomic_bool stop;
        atomic_init(&stop, false);
        struct reader r[2] = {{d, &stop, 0, 0}, {d, &stop, 0, 0}};
        pthread_t tid[2];
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(pthread_create(&tid[k], NULL, read_loop, &r[k]), 0);
        /* 200,000 adds (the array grows many times), removes of half of them. */
        for (uint64_t i = 0; i < 200000; i++) {
            size_t n = key_of(buf, 100000 + i);
            ck_assert_int_eq(exact_delta_add(d, buf, n), 1);
            if (i % 2) {
                n = key_of(buf, 100000 + i - 1);
                ck_assert_int_eq(exact_delta_remove(d, buf, n), 1);
            }
        }
        atomic_store(&stop, true);
        for (int k = 0; k < 2; k++) {
            pthread_join(tid[k], NULL);
            ck_assert_uint_eq(r[k].wrong, 0);
            ck_assert_uint_gt(r[k].reads, 0);
        }
        exact_delta_free(d);
        exact_table_close(t);
    }
}
END_TEST

static Suite *delta_suite(void)
{
    Suite *s = suite_create("exact_delta");
    TCase *tc = tcase_create("delta");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ops_fp);
    tcase_add_test(tc, test_ops_keys);
    tcase_add_test(tc, test_ops_no_table);
    tcase_add_test(tc, test_ops_keys_no_table);
    tcase_add_test(tc, test_readers_during_writes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(delta_suite());
}
