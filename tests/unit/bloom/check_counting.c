/* The counting layout (bloom/counting.h): adds and removals balance, a
 * removal of an item the filter does not hold is refused and changes
 * nothing, a saturated counter sticks, removing one set never hides an item
 * of another (property test over random sets), while removing a false
 * positive can (the reason for the refusal), adds from two threads all
 * count, a batch's multiplicity is checked, a file round trip keeps the
 * counters, and the sizing meets its rate. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/testutil.h"
#include "bloom/counting.h"
#include "bloom/filter.h"
#include "bloom/format.h"

static struct filter *make(uint64_t capacity, double fpr)
{
    struct filter_plan plan;
    char err[256];
    ck_assert_msg(filter_plan_make(FILTER_COUNTING, capacity, fpr, 1, &plan, err, sizeof(err)) ==
                      0,
                  "%s", err);
    struct filter *f = filter_create(&plan, 0x5eed, err, sizeof(err));
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->layout, FILTER_COUNTING);
    return f;
}

static bool has(const struct filter *f, const char *k)
{
    bool single = filter_check(f, k, strlen(k));
    struct filter_key key = {k, strlen(k)};
    bool batch;
    filter_check_batch(f, &key, 1, &batch);
    ck_assert_msg(single == batch, "check and batched check disagree on %s", k);
    return single;
}

static bool rm(struct filter *f, const char *k)
{
    return counting_remove_hash(f, filter_hash(f, k, strlen(k)));
}

static bool all_zero(const struct filter *f)
{
    for (uint32_t s = 0; s < f->shard_count; s++)
        for (uint64_t w = 0; w < f->bits_per_shard / 64; w++)
            if (atomic_load(&f->shards[s].words[w]))
                return false;
    return true;
}

START_TEST(test_balance)
{
    struct filter *f = make(5000, 1e-4);
    char k[32];
    for (unsigned i = 0; i < 3000; i++) {
        tu_key(k, "item-", i);
        for (unsigned r = 0; r <= i % 3; r++) /* 1 to 3 adds each */
            filter_add(f, k, strlen(k));
    }
    ck_assert_uint_eq(filter_items(f), 1000 * (1 + 2 + 3));
    ck_assert_uint_eq(filter_bits_set(f), filter_shard_popcount(f, 0));
    for (unsigned i = 0; i < 3000; i++) {
        tu_key(k, "item-", i);
        ck_assert(has(f, k));
        for (unsigned r = 0; r <= i % 3; r++)
            ck_assert_msg(rm(f, k), "removal %u of %s refused", r + 1, k);
    }
    ck_assert_uint_eq(filter_items(f), 0);
    ck_assert_uint_eq(filter_bits_set(f), 0);
    ck_assert(all_zero(f));
    filter_free(f);
}
END_TEST

START_TEST(test_refuse_absent)
{
    struct filter *f = make(1000, 1e-6);
    filter_add(f, "here", 4);
    size_t bytes = filter_bytes(f);
    void *before = malloc(bytes);
    memcpy(before, (const void *)f->shards[0].words, bytes);
    char k[32];
    unsigned refused = 0;
    for (unsigned i = 0; i < 1000; i++) {
        tu_key(k, "never-", i);
        if (!has(f, k)) /* not a false positive: its removal must be refused */
            refused += !rm(f, k);
    }
    ck_assert_uint_eq(refused, 1000);
    ck_assert_int_eq(memcmp(before, (const void *)f->shards[0].words, bytes), 0);
    ck_assert_uint_eq(filter_items(f), 1);
    /* Added once, removed once: the second removal is refused. */
    ck_assert(rm(f, "here"));
    ck_assert(!has(f, "here"));
    ck_assert(!rm(f, "here"));
    ck_assert(all_zero(f));
    free(before);
    filter_free(f);
}
END_TEST

/* 14 adds count and uncount exactly; at 15 the counters stick: 20 adds and
 * 20 removals leave the item present (a saturated counter may hold more
 * adds than it counts, so it is never decremented). */
START_TEST(test_saturation)
{
    struct filter *f = make(1000, 1e-6);
    for (int i = 0; i < 14; i++)
        filter_add(f, "fourteen", 8);
    for (int i = 0; i < 14; i++)
        ck_assert(rm(f, "fourteen"));
    ck_assert(!has(f, "fourteen"));
    ck_assert(all_zero(f));
    for (int i = 0; i < 20; i++)
        filter_add(f, "twenty", 6);
    for (int i = 0; i < 20; i++)
        ck_assert(rm(f, "twenty"));
    ck_assert(has(f, "twenty"));
    for (int i = 0; i < 100; i++)
        ck_assert(rm(f, "twenty"));
    ck_assert(has(f, "twenty"));
    /* Every counter of it sits at 15. */
    struct filter_key key = {"twenty", 6};
    ck_assert_uint_eq(counting_can_remove(f, &key, 1), 1);
    uint64_t fifteen = 0;
    for (uint64_t w = 0; w < f->bits_per_shard / 64; w++) {
        uint64_t x = atomic_load(&f->shards[0].words[w]);
        for (unsigned n = 0; n < 16; n++) {
            unsigned c = (unsigned)(x >> (4 * n)) & 15;
            ck_assert(c == 0 || c == 15);
            fifteen += c == 15;
        }
    }
    ck_assert_uint_ge(fifteen, 1);
    ck_assert_uint_le(fifteen, f->k);
    filter_free(f);
}
END_TEST

/* The property: add sets A and B (random sizes and multiplicities,
 * interleaved, into a filter filled to and past capacity so counters are
 * shared), remove all of B as often as each was added: every item of A is
 * still present. Twenty random cases. */
START_TEST(test_removal_never_hides)
{
    uint64_t rs = 0xC0FFEE;
    char k[40];
    for (int round = 0; round < 20; round++) {
        unsigned na = 200 + (unsigned)(tu_rand(&rs) % 2000);
        unsigned nb = 200 + (unsigned)(tu_rand(&rs) % 2000);
        struct filter *f = make(1000 + tu_rand(&rs) % 2000, 1e-2);
        uint8_t *mult = malloc(nb);
        uint64_t tag = tu_rand(&rs);
        unsigned ia = 0, ib = 0;
        while (ia < na || ib < nb) {
            bool take_a = ib == nb || (ia < na && tu_rand(&rs) % 2);
            if (take_a) {
                tu_key(k, "a-", tag + ia++);
                unsigned m = 1 + (unsigned)(tu_rand(&rs) % 4);
                for (unsigned r = 0; r < m; r++)
                    filter_add(f, k, strlen(k));
            } else {
                mult[ib] = (uint8_t)(1 + tu_rand(&rs) % 20); /* some reach saturation */
                tu_key(k, "b-", tag + ib);
                for (unsigned r = 0; r < mult[ib]; r++)
                    filter_add(f, k, strlen(k));
                ib++;
            }
        }
        for (unsigned i = 0; i < nb; i++) {
            tu_key(k, "b-", tag + i);
            for (unsigned r = 0; r < mult[i]; r++)
                ck_assert_msg(rm(f, k), "round %d: removal of %s refused", round, k);
        }
        for (unsigned i = 0; i < na; i++) {
            tu_key(k, "a-", tag + i);
            ck_assert_msg(has(f, k), "round %d: removing B hid %s of A", round, k);
        }
        free(mult);
        filter_free(f);
    }
}
END_TEST

/* Why the daemon refuses a removal it cannot prove: in a full filter, a
 * false positive's counters are all non-zero because other items hold
 * them; removing it takes a count those items own, and some of them
 * disappear (false negatives). */
START_TEST(test_false_positive_removal_hides)
{
    struct filter *f = make(2000, 5e-2);
    char k[40];
    for (unsigned i = 0; i < 4000; i++) { /* twice its capacity */
        tu_key(k, "a-", i);
        filter_add(f, k, strlen(k));
    }
    unsigned fps = 0;
    for (unsigned i = 0; fps < 50 && i < 100000; i++) {
        tu_key(k, "x-", i);
        if (has(f, k)) {
            ck_assert(rm(f, k)); /* undetectable: it looks present */
            fps++;
        }
    }
    ck_assert_uint_eq(fps, 50);
    unsigned lost = 0;
    for (unsigned i = 0; i < 4000; i++) {
        tu_key(k, "a-", i);
        lost += !has(f, k);
    }
    ck_assert_msg(lost > 0, "removing 50 false positives hid no added item");
    filter_free(f);
}
END_TEST

START_TEST(test_can_remove_batch)
{
    struct filter *f = make(1000, 1e-6);
    filter_add(f, "x", 1);
    filter_add(f, "y", 1);
    filter_add(f, "y", 1);
    struct filter_key xx[2] = {{"x", 1}, {"x", 1}};
    ck_assert_uint_eq(counting_can_remove(f, xx, 2), 1);
    struct filter_key yy[3] = {{"y", 1}, {"x", 1}, {"y", 1}};
    ck_assert_uint_eq(counting_can_remove(f, yy, 3), 3);
    struct filter_key zx[2] = {{"x", 1}, {"absent", 6}};
    ck_assert_uint_eq(counting_can_remove(f, zx, 2), 1);
    struct filter_key yyy[4] = {{"y", 1}, {"y", 1}, {"x", 1}, {"y", 1}};
    ck_assert_uint_eq(counting_can_remove(f, yyy, 4), 3);
    filter_free(f);
}
END_TEST

struct adder {
    struct filter *f;
    const char *prefix;
    unsigned n;
};

static void *add_thread(void *arg)
{
    struct adder *a = arg;
    char k[40];
    for (unsigned i = 0; i < a->n; i++) {
        tu_key(k, a->prefix, i);
        filter_add(a->f, k, strlen(k));
        filter_add(a->f, "shared", 6); /* the same counters from both threads */
    }
    return NULL;
}

/* Two threads add at once into one small filter (their items share blocks
 * and words): every add counts. A filter holding one item added 7 times by
 * each thread has its counters at exactly 14. */
START_TEST(test_two_threads)
{
    struct filter *f = make(40000, 1e-3);
    struct adder a = {f, "t1-", 20000}, b = {f, "t2-", 20000};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, add_thread, &a);
    pthread_create(&tb, NULL, add_thread, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ck_assert_uint_eq(filter_items(f), 80000);
    ck_assert_uint_eq(filter_bits_set(f), filter_shard_popcount(f, 0));
    char k[40];
    for (unsigned i = 0; i < 20000; i++) {
        tu_key(k, "t1-", i);
        ck_assert(has(f, k));
        ck_assert(rm(f, k));
        tu_key(k, "t2-", i);
        ck_assert(rm(f, k));
    }
    ck_assert(has(f, "shared")); /* saturated */
    filter_free(f);

    f = make(1000, 1e-6);
    struct adder c = {f, "", 7}, d = {f, "", 7};
    /* keys "0".."6" from both: each twice; "shared" 14 times */
    pthread_create(&ta, NULL, add_thread, &c);
    pthread_create(&tb, NULL, add_thread, &d);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    for (unsigned i = 0; i < 7; i++) {
        tu_key(k, "", i);
        ck_assert(rm(f, k));
        ck_assert(rm(f, k));
    }
    for (int i = 0; i < 14; i++)
        ck_assert_msg(rm(f, "shared"), "removal %d of 14 refused", i + 1);
    ck_assert(!rm(f, "shared"));
    ck_assert(all_zero(f));
    filter_free(f);
}
END_TEST

START_TEST(test_file_round_trip)
{
    struct filter *f = make(2000, 1e-4);
    char k[40], path[4096], err[512];
    for (unsigned i = 0; i < 1500; i++) {
        tu_key(k, "f-", i);
        filter_add(f, k, strlen(k));
        if (i % 2)
            filter_add(f, k, strlen(k));
    }
    tu_path(path, sizeof(path), "counting.bloom");
    ck_assert_msg(format_write(f, path, 1, err, sizeof(err)) == 0, "%s", err);
    struct filter *g = format_load(path, 1, err, sizeof(err));
    ck_assert_msg(g != NULL, "%s", err);
    ck_assert_int_eq(g->layout, FILTER_COUNTING);
    ck_assert_uint_eq(filter_items(g), filter_items(f));
    ck_assert_uint_eq(filter_bits_set(g), filter_bits_set(f));
    ck_assert_int_eq(memcmp((const void *)f->shards[0].words, (const void *)g->shards[0].words,
                            filter_bytes(f)),
                     0);
    for (unsigned i = 0; i < 1500; i++) {
        tu_key(k, "f-", i);
        ck_assert(rm(g, k));
        ck_assert_int_eq(has(g, k), i % 2 == 1);
    }
    filter_free(f);
    filter_free(g);
}
END_TEST

/* The plan meets its rate by the model and by measurement at capacity; it
 * takes about four times the blocked layout's memory; the estimate from
 * the non-zero counters agrees with the model. */
START_TEST(test_sizing)
{
    struct filter_plan pc, pb;
    char err[256], k[40];
    ck_assert(filter_plan_make(FILTER_COUNTING, 50000, 1e-3, 1, &pc, err, sizeof(err)) == 0);
    ck_assert(filter_plan_make(FILTER_BLOCKED, 50000, 1e-3, 1, &pb, err, sizeof(err)) == 0);
    ck_assert(pc.fpr_expected <= 1e-3);
    double ratio = (double)filter_plan_bytes(&pc) / (double)filter_plan_bytes(&pb);
    ck_assert_msg(ratio >= 4.0 && ratio < 5.5, "counting takes %.2fx blocked", ratio);
    struct filter *f = make(50000, 1e-3);
    for (unsigned i = 0; i < 50000; i++) {
        tu_key(k, "in-", i);
        filter_add(f, k, strlen(k));
    }
    unsigned fp = 0;
    for (unsigned i = 0; i < 400000; i++) {
        tu_key(k, "out-", i);
        fp += filter_check(f, k, strlen(k));
    }
    double rate = fp / 400000.0;
    ck_assert_msg(rate < 1.5e-3, "measured rate %g at capacity, target 1e-3", rate);
    double est = filter_estimated_fpr(f);
    ck_assert_msg(est > 0.5e-3 && est < 1.5e-3, "estimated rate %g", est);
    struct filter_plan back;
    filter_get_plan(f, &back);
    ck_assert(back.fpr_expected <= 1e-3 && back.fpr_expected > 0);
    filter_free(f);
}
END_TEST

/* The check's unrolled probes (k <= 18) and its loop (k > 18) find the
 * counters the add's masks set, for every k: each added item is present,
 * and once every item is removed, all counters are zero and none is. */
START_TEST(test_every_k)
{
    char k[40], err[256];
    for (unsigned kk = 1; kk <= 32; kk++) {
        struct filter_plan plan = {.layout = FILTER_COUNTING, .capacity = 1000, .fpr_target = 1e-2,
                                   .k = kk, .shard_count = 2, .bits_per_shard = 512 * 64};
        struct filter *f = filter_create(&plan, kk, err, sizeof(err));
        ck_assert_msg(f != NULL, "%s", err);
        for (unsigned i = 0; i < 300; i++) {
            tu_key(k, "k-", i);
            filter_add(f, k, strlen(k));
        }
        for (unsigned i = 0; i < 300; i++) {
            tu_key(k, "k-", i);
            ck_assert_msg(has(f, k), "k = %u: %s absent", kk, k);
        }
        for (unsigned i = 0; i < 300; i++) {
            tu_key(k, "k-", i);
            ck_assert_msg(rm(f, k), "k = %u: removal of %s refused", kk, k);
        }
        ck_assert(all_zero(f));
        for (unsigned i = 0; i < 300; i++) {
            tu_key(k, "k-", i);
            ck_assert(!has(f, k));
        }
        filter_free(f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("counting");
    TCase *tc = tcase_create("counting");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_balance);
    tcase_add_test(tc, test_refuse_absent);
    tcase_add_test(tc, test_saturation);
    tcase_add_test(tc, test_removal_never_hides);
    tcase_add_test(tc, test_false_positive_removal_hides);
    tcase_add_test(tc, test_can_remove_batch);
    tcase_add_test(tc, test_two_threads);
    tcase_add_test(tc, test_file_round_trip);
    tcase_add_test(tc, test_sizing);
    tcase_add_test(tc, test_every_k);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
