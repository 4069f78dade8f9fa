/* The growing filter (bloom/grow.h): its measured false-positive rate stays
 * at or under the configured fpr at every multiple of its first capacity up
 * to 10x (both layouts, fixed seeds, a million probes a point); re-adds do
 * not grow it; the same seed and the same adds make the same sub-filters
 * (what a journal replay relies on); grow_admit refuses what max_memory has
 * no room for while the adds themselves never refuse; a check running
 * while sub-filters are added never misses an item added before it; adds in
 * batches (repeats inside a batch, growths inside a batch) answer and fill
 * exactly as the same adds one at a time. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bloom/filter.h"
#include "bloom/grow.h"

static struct filter *make(enum filter_layout layout, uint64_t cap, double fpr, uint64_t seed,
                           uint64_t max)
{
    char err[256];
    struct filter_plan first;
    ck_assert_int_eq(grow_plan(layout, cap, fpr, 0, &first, err, sizeof(err)), 0);
    struct filter *f = grow_filter_create(&first, fpr, seed, max, err, sizeof(err));
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_ptr_nonnull(grow_of(f));
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

enum { PROBES = 1000000, BATCH = 100 };

/* The share of PROBES never-added keys a filter answers YES, through the
 * batched check; the one-key check must agree on every key. */
static double measured_rate(struct filter *f)
{
    static char buf[BATCH][32];
    struct filter_key keys[BATCH];
    bool present[BATCH];
    long yes = 0;
    for (long base = 0; base < PROBES; base += BATCH) {
        for (int i = 0; i < BATCH; i++) {
            int n = snprintf(buf[i], sizeof(buf[i]), "absent-%ld", base + i);
            keys[i] = (struct filter_key){buf[i], (size_t)n};
        }
        filter_check_batch(f, keys, BATCH, present);
        for (int i = 0; i < BATCH; i++) {
            yes += present[i];
            if (i == 0 || present[i])
                ck_assert_int_eq(present[i], filter_check(f, keys[i].data, keys[i].len));
        }
    }
    return (double)yes / PROBES;
}

/* C = 10000 at fpr 0.01, filled to 10C in steps of C. Just before
 * sub-filter i+1 is made the model's rate is fpr * (1 - 2^-(i+1)), at
 * most 0.9375 fpr over this range (sub-filters 0-3); a million probes put
 * the measured rate within ~1e-4 (one standard deviation) of the true
 * one, so the margin of >= 6e-4 is six of them: fixed seeds, never flaky,
 * and a rate past fpr would be seen. */
static void rate_over_10x(enum filter_layout layout)
{
    const uint64_t cap = 10000;
    const double fpr = 0.01;
    struct filter *f = make(layout, cap, fpr, 0x5eed0001u + (uint64_t)layout, 0);
    struct filter_grow *g = grow_of(f);
    for (long step = 1; step <= 10; step++) {
        add_range(f, "in", (step - 1) * (long)cap, step * (long)cap);
        double r = measured_rate(f);
        fprintf(stderr, "%s: %ld items, %u sub-filters, measured %.5f, estimated %.5f, bound %.5f\n",
                filter_layout_name(layout), step * (long)cap, grow_count(g), r,
                filter_estimated_fpr(f), grow_fpr_bound(g));
        ck_assert_msg(r <= fpr, "%s at %ldx: measured rate %g over fpr %g",
                      filter_layout_name(layout), step, r, fpr);
        ck_assert_double_lt(grow_fpr_bound(g), fpr);
        ck_assert_double_le(filter_estimated_fpr(f), fpr);
    }
    /* 10C items: sub-filters of C, 2C, 4C, 8C */
    ck_assert_uint_eq(grow_count(g), 4);
    for (unsigned i = 0; i < 4; i++) {
        struct grow_sub_info si;
        grow_sub_info(g, i, &si);
        ck_assert_uint_eq(si.capacity, cap << i);
        ck_assert_double_eq_tol(si.fpr_target, fpr / (double)(2u << i), 1e-15);
        if (i < 3)
            ck_assert_uint_eq(si.items, si.capacity);
    }
    /* No false negative: every item added is there. */
    char k[48];
    for (long i = 0; i < 10 * (long)cap; i++) {
        int n = snprintf(k, sizeof(k), "in-%ld", i);
        ck_assert_msg(filter_check(f, k, (size_t)n), "%s missing", k);
    }
    filter_free(f);
}

START_TEST(test_rate_blocked)
{
    rate_over_10x(FILTER_BLOCKED);
}
END_TEST

START_TEST(test_rate_classic)
{
    rate_over_10x(FILTER_CLASSIC);
}
END_TEST

/* An item held by an older sub-filter is not added to the newest: re-adds
 * neither count nor grow. */
START_TEST(test_readd)
{
    struct filter *f = make(FILTER_BLOCKED, 1000, 0.001, 7, 0);
    struct filter_grow *g = grow_of(f);
    add_range(f, "x", 0, 2500);
    unsigned m = grow_count(g);
    uint64_t items = filter_items(f);
    ck_assert_uint_eq(m, 2);
    ck_assert_uint_le(items, 2500);
    ck_assert_uint_ge(items, 2490); /* a few adds may find all their bits set */
    for (int round = 0; round < 3; round++) {
        struct filter_key keys[2];
        bool added[2] = {true, true};
        keys[0] = (struct filter_key){"x-5", 3};
        keys[1] = (struct filter_key){"x-2400", 6};
        filter_add_batch(f, keys, 2, added);
        ck_assert(!added[0] && !added[1]);
        add_range(f, "x", 0, 2500);
    }
    ck_assert_uint_eq(grow_count(g), m);
    ck_assert_uint_eq(filter_items(f), items);
    filter_free(f);
}
END_TEST

/* Same seed, same adds (one by one, or in batches: a replay hands them
 * one at a time): the same sub-filters, item for item. */
START_TEST(test_same_seed_same_filters)
{
    struct filter *a = make(FILTER_BLOCKED, 500, 0.01, 0xabcdef, 0);
    struct filter *b = make(FILTER_BLOCKED, 500, 0.01, 0xabcdef, 0);
    add_range(a, "r", 0, 6000);
    char buf[64][16];
    struct filter_key keys[64];
    for (long base = 0; base < 6000; base += 64) {
        for (int i = 0; i < 64; i++)
            keys[i] = (struct filter_key){buf[i], (size_t)snprintf(buf[i], 16, "r-%ld", base + i)};
        filter_add_batch(b, keys, base + 64 <= 6000 ? 64 : (size_t)(6000 - base), NULL);
    }
    struct filter_grow *ga = grow_of(a), *gb = grow_of(b);
    ck_assert_uint_eq(grow_count(ga), grow_count(gb));
    ck_assert_uint_eq(grow_count(ga), 4);
    for (unsigned i = 0; i < grow_count(ga); i++) {
        struct grow_sub_info x, y;
        grow_sub_info(ga, i, &x);
        grow_sub_info(gb, i, &y);
        ck_assert_uint_eq(x.items, y.items);
        ck_assert_uint_eq(x.bits_set, y.bits_set);
        ck_assert_uint_eq(x.capacity, y.capacity);
    }
    /* reseed: only while empty */
    ck_assert_int_eq(grow_reseed(a, 99), -1);
    struct filter *c = make(FILTER_BLOCKED, 500, 0.01, 1, 0);
    ck_assert_int_eq(grow_reseed(c, 0xabcdef), 0);
    ck_assert_uint_eq(c->seed, 0xabcdef);
    add_range(c, "r", 0, 6000);
    for (unsigned i = 0; i < grow_count(ga); i++) {
        struct grow_sub_info x, y;
        grow_sub_info(ga, i, &x);
        grow_sub_info(grow_of(c), i, &y);
        ck_assert_uint_eq(x.bits_set, y.bits_set);
    }
    filter_free(a);
    filter_free(b);
    filter_free(c);
}
END_TEST

/* max_bytes with room for sub-filters 0 and 1: adds up to 3C are admitted,
 * one more is refused naming the limit and the items held; the add path
 * itself (a replay) still grows past it. */
START_TEST(test_max_memory)
{
    struct filter_plan p0, p1, p2;
    char err[512];
    ck_assert_int_eq(grow_plan(FILTER_CLASSIC, 1000, 0.01, 0, &p0, err, sizeof(err)), 0);
    ck_assert_int_eq(grow_plan(FILTER_CLASSIC, 1000, 0.01, 1, &p1, err, sizeof(err)), 0);
    ck_assert_int_eq(grow_plan(FILTER_CLASSIC, 1000, 0.01, 2, &p2, err, sizeof(err)), 0);
    uint64_t max = filter_plan_bytes(&p0) + filter_plan_bytes(&p1);
    struct filter *f = make(FILTER_CLASSIC, 1000, 0.01, 3, max);
    struct filter_grow *g = grow_of(f);
    ck_assert_int_eq(grow_admit(g, 3000, err, sizeof(err)), 0);
    ck_assert_int_eq(grow_admit(g, 3001, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "max_memory") && strstr(err, "holds 0 items"), "%s", err);
    long i = 0;
    char k[32];
    while (grow_admit(g, 1, err, sizeof(err)) == 0) {
        int n = snprintf(k, sizeof(k), "m-%ld", i++);
        filter_add(f, k, (size_t)n);
        ck_assert_int_lt(i, 10000);
    }
    ck_assert_uint_eq(filter_items(f), 3000);
    ck_assert_uint_eq(grow_count(g), 2);
    ck_assert_uint_le(filter_bytes(f), max);
    char want[64];
    snprintf(want, sizeof(want), "max_memory %llu bytes", (unsigned long long)max);
    ck_assert_msg(strstr(err, want) && strstr(err, "holds 3000 items in 2 sub-filters"), "%s",
                  err);
    /* A replay does not refuse. */
    add_range(f, "late", 0, 10);
    ck_assert_uint_eq(grow_count(g), 3);
    ck_assert_uint_eq(filter_bytes(f), max + filter_plan_bytes(&p2));
    filter_free(f);
    /* max_bytes below the first sub-filter, a layout that cannot grow */
    ck_assert_int_eq(grow_plan(FILTER_CLASSIC, 1000, 0.01, 0, &p0, err, sizeof(err)), 0);
    ck_assert_ptr_null(grow_filter_create(&p0, 0.01, 1, filter_plan_bytes(&p0) - 1, err,
                                          sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "max_memory"));
    p0.layout = (enum filter_layout)99;
    ck_assert_ptr_null(grow_filter_create(&p0, 0.01, 1, 0, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "growth is for"));
    /* the least rate bounds the series */
    ck_assert_int_eq(grow_plan(FILTER_BLOCKED, 10, 1e-11, 4, &p0, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "below the least"));
}
END_TEST

/* Checks on one thread while another adds (and so makes sub-filters): an
 * item acknowledged before a check began is always found. */
struct race {
    struct filter *f;
    atomic_long done; /* items 0 .. done-1 are added */
    atomic_bool stop;
    long misses;
};

static void *race_adder(void *arg)
{
    struct race *r = arg;
    char k[32];
    for (long i = 0; i < 200000; i++) {
        int n = snprintf(k, sizeof(k), "q-%ld", i);
        filter_add(r->f, k, (size_t)n);
        atomic_store(&r->done, i + 1);
    }
    atomic_store(&r->stop, true);
    return NULL;
}

START_TEST(test_check_while_growing)
{
    struct race r = {.f = make(FILTER_BLOCKED, 1000, 0.01, 11, 0)};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, race_adder, &r), 0);
    char buf[8][32];
    struct filter_key keys[8];
    bool present[8];
    uint64_t x = 88172645463325252ull;
    while (!atomic_load(&r.stop)) {
        long done = atomic_load(&r.done);
        if (done == 0)
            continue;
        for (int i = 0; i < 8; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            keys[i] = (struct filter_key){
                buf[i], (size_t)snprintf(buf[i], 32, "q-%ld", (long)(x % (uint64_t)done))};
        }
        filter_check_batch(r.f, keys, 8, present);
        for (int i = 0; i < 8; i++)
            r.misses += !present[i] + !filter_check(r.f, keys[i].data, keys[i].len);
    }
    pthread_join(t, NULL);
    ck_assert_int_eq(r.misses, 0);
    ck_assert_uint_ge(grow_count(grow_of(r.f)), 7);
    filter_free(r.f);
}
END_TEST

/* The running count of the newest sub-filter's items is its shards' sum. */
static void assert_count_honest(struct filter *f)
{
    struct filter_grow *g = grow_of(f);
    ck_assert_uint_eq(g->newest_items, filter_items(g->sub[grow_count(g) - 1]));
}

/* The same keys added one at a time into a and in batches into b (sizes
 * 1 to 300, each with keys repeated inside it and keys of earlier batches,
 * spanning growths): the same answer to every add, the same sub-filters
 * after every batch, item for item, and the same answers to checks. */
static void batch_same_as_single(enum filter_layout layout)
{
    enum { KEYS = 40000, MAXB = 300 };
    struct filter *a = make(layout, 100, 0.01, 0x5eed, 0);
    struct filter *b = make(layout, 100, 0.01, 0x5eed, 0);
    struct filter_grow *ga = grow_of(a), *gb = grow_of(b);
    static char buf[MAXB][24];
    struct filter_key keys[MAXB];
    bool added[MAXB];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    long next = 0, dups = 0, grew_inside = 0;
    while (next < KEYS) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = 1 + (size_t)(x % MAXB);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            long id;
            if (i > 0 && x % 8 == 0) { /* a key of this batch again */
                size_t j = (size_t)(x >> 8) % i;
                memcpy(buf[i], buf[j], sizeof(buf[i]));
                keys[i] = (struct filter_key){buf[i], keys[j].len};
                dups++;
                continue;
            }
            id = x % 8 == 1 && next > 0 ? (long)((x >> 8) % (uint64_t)next) : next++;
            keys[i] = (struct filter_key){buf[i], (size_t)snprintf(buf[i], 24, "k-%ld", id)};
        }
        unsigned before = grow_count(gb);
        bool got[MAXB];
        for (size_t i = 0; i < n; i++) {
            added[i] = filter_add(a, keys[i].data, keys[i].len);
            got[i] = !added[i]; /* the batch must set every answer */
        }
        filter_add_batch(b, keys, n, got);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(got[i] == added[i], "add %zu of a batch of %zu differs", i, n);
        grew_inside += grow_count(gb) > before;
        ck_assert_uint_eq(grow_count(ga), grow_count(gb));
        ck_assert_uint_eq(filter_items(a), filter_items(b));
        assert_count_honest(a);
        assert_count_honest(b);
    }
    ck_assert_uint_ge(grow_count(ga), 8);
    ck_assert_int_gt(dups, 1000);
    ck_assert_int_gt(grew_inside, 4);
    for (unsigned i = 0; i < grow_count(ga); i++) {
        struct grow_sub_info p, q;
        grow_sub_info(ga, i, &p);
        grow_sub_info(gb, i, &q);
        ck_assert_uint_eq(p.items, q.items);
        ck_assert_uint_eq(p.bits_set, q.bits_set);
        ck_assert_uint_eq(p.capacity, q.capacity);
    }
    /* every key added, and as many absent ones: the same answers */
    for (long base = 0; base < 2 * KEYS; base += MAXB) {
        size_t n = 0;
        for (; n < MAXB; n++)
            keys[n] = (struct filter_key){
                buf[n], (size_t)snprintf(buf[n], 24, base + (long)n < KEYS ? "k-%ld" : "z-%ld",
                                         base + (long)n)};
        bool pa[MAXB], pb[MAXB];
        filter_check_batch(a, keys, n, pa);
        filter_check_batch(b, keys, n, pb);
        for (size_t i = 0; i < n; i++) {
            ck_assert(pa[i] == pb[i]);
            ck_assert(pb[i] == filter_check(b, keys[i].data, keys[i].len));
            if (base + (long)i < KEYS)
                ck_assert(pb[i]);
        }
    }
    filter_free(a);
    filter_free(b);
}

START_TEST(test_batch_same_as_single_blocked)
{
    batch_same_as_single(FILTER_BLOCKED);
}
END_TEST

START_TEST(test_batch_same_as_single_classic)
{
    batch_same_as_single(FILTER_CLASSIC);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("grow");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_rate_blocked);
    tcase_add_test(tc, test_rate_classic);
    tcase_add_test(tc, test_readd);
    tcase_add_test(tc, test_same_seed_same_filters);
    tcase_add_test(tc, test_max_memory);
    tcase_add_test(tc, test_check_while_growing);
    tcase_add_test(tc, test_batch_same_as_single_blocked);
    tcase_add_test(tc, test_batch_same_as_single_classic);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
