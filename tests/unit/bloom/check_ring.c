/* The windowed filter's ring (bloom/ring.h) under an injected clock: an
 * item is reported through t + window and never from
 * (epoch(t) + N + 1) * L on, at every boundary; re-adds refresh it; a
 * replayed add of an expired time is dropped; a check never misses a live
 * item while slots are reused under it. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/test_clock.h"
#include "bloom/filter.h"
#include "bloom/ring.h"

static _Atomic int64_t test_now;

static int64_t test_clock(void)
{
    return atomic_load(&test_now);
}

static void set_now(int64_t t)
{
    atomic_store(&test_now, t);
}

/* A ring of `slices` over window_ms, 1000 items per slice at 1e-9. */
static struct filter *make_ring(unsigned slices, int64_t window_ms)
{
    struct filter_plan plan;
    char err[256];
    ck_assert_int_eq(filter_plan_make(FILTER_BLOCKED, 1000, 1e-9, 1, &plan, err, sizeof(err)), 0);
    struct filter *f =
        ring_filter_create(&plan, 12345, slices, window_ms, 4000, 1e-8, err, sizeof(err));
    ck_assert_msg(f != NULL, "%s", err);
    test_clock_source = test_clock;
    return f;
}

static bool has(struct filter *f, const char *k)
{
    bool single = filter_check(f, k, strlen(k));
    struct filter_key key = {k, strlen(k)};
    bool batch;
    filter_check_batch(f, &key, 1, &batch);
    ck_assert_msg(single == batch, "check and batched check disagree on %s", k);
    return single;
}

static void add_at(struct filter *f, const char *k, int64_t t)
{
    set_now(t);
    filter_add(f, k, strlen(k));
}

/* Every add time at and around each boundary of several slices: reported at
 * t, at t + window, at the last millisecond of its last live slice; not at
 * the expiry, and not from t + window + L on. */
START_TEST(test_every_boundary)
{
    const unsigned n = 4;
    const int64_t w = 4000, l = w / n, base = 1700000000000; /* base: a multiple of L */
    const int64_t offs[] = {0, 1, 499, 998, 999};
    for (int64_t s = 0; s < 6; s++) {
        for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
            struct filter *f = make_ring(n, w);
            int64_t t = base + s * l + offs[o];
            int64_t expiry = (base / l + s + n + 1) * l;
            char k[32];
            snprintf(k, sizeof(k), "item-%lld", (long long)t);
            add_at(f, k, t);
            for (int64_t at = t; at < expiry; at += 97) {
                set_now(at);
                ck_assert_msg(has(f, k), "added at %lld, missing at +%lld", (long long)t,
                              (long long)(at - t));
            }
            set_now(t + w);
            ck_assert_msg(has(f, k), "added at %lld, missing at t + window", (long long)t);
            set_now(expiry - 1);
            ck_assert(has(f, k));
            ck_assert_int_gt(expiry - t, w);
            ck_assert_int_le(expiry - t, w + l);
            set_now(expiry);
            ck_assert_msg(!has(f, k), "added at %lld, still there at its expiry", (long long)t);
            set_now(t + w + l);
            ck_assert(!has(f, k));
            filter_free(f);
        }
    }
}
END_TEST

/* A re-add moves the item's expiry to its last add; INFO's figures count
 * live slices only; ring_expire clears what expired. */
START_TEST(test_readd_and_expire)
{
    struct filter *f = make_ring(4, 4000);
    int64_t t0 = 1000000;
    add_at(f, "a", t0);
    add_at(f, "b", t0);
    add_at(f, "a", t0 + 3000);
    set_now(t0 + 3000);
    ck_assert_uint_eq(filter_items(f), 3);
    set_now(t0 + 5000); /* b's slice (epoch 1000) expired; a's from t0 + 3000 is live */
    ck_assert(!has(f, "b"));
    ck_assert(has(f, "a"));
    ck_assert_uint_eq(filter_items(f), 1);
    ck_assert_uint_eq(ring_expire(f->ring, t0 + 5000), 1);
    ck_assert_uint_eq(ring_expire(f->ring, t0 + 5000), 0);
    set_now(t0 + 3000 + 4000);
    ck_assert(has(f, "a"));
    set_now(t0 + 3000 + 5000);
    ck_assert(!has(f, "a"));
    ck_assert_uint_eq(filter_items(f), 0);
    filter_free(f);
}
END_TEST

/* A journal replayed later: an add's own time picks its slice; an add
 * whose slice expired is dropped; one from a clock ahead counts as now. */
START_TEST(test_replay_times)
{
    struct filter *f = make_ring(4, 4000);
    int64_t now = 10000000;
    set_now(now);
    struct filter_key k = {"old", 3};
    bool added = true;
    ring_add_batch(f->ring, f, &k, 1, &added, now - 5000, now); /* expired */
    ck_assert(!added);
    ck_assert(!has(f, "old"));
    struct filter_key k2 = {"mid", 3};
    ring_add_batch(f->ring, f, &k2, 1, &added, now - 3500, now);
    ck_assert(added);
    ck_assert(has(f, "mid"));
    set_now(now - 3500 + 4000);
    ck_assert(has(f, "mid"));
    set_now(now + 1000); /* epoch(now - 3500) + 5 slices */
    ck_assert(!has(f, "mid"));
    struct filter_key k3 = {"ahead", 5};
    ring_add_batch(f->ring, f, &k3, 1, &added, now + 60000, now + 1000);
    ck_assert(added);
    set_now(now + 1000 + 4000);
    ck_assert(has(f, "ahead"));
    set_now(now + 1000 + 5000);
    ck_assert(!has(f, "ahead"));
    filter_free(f);
}
END_TEST

/* Slots reused while checks run: an item re-added at the start of every
 * slice is live throughout, so no check may miss it, while other slices
 * are filled and cleared under the readers. */
struct race {
    struct filter *f;
    _Atomic bool stop;
    _Atomic unsigned long misses, checks;
};

static void *reader(void *arg)
{
    struct race *r = arg;
    while (!atomic_load(&r->stop)) {
        struct filter_key k = {"always", 6};
        bool p;
        filter_check_batch(r->f, &k, 1, &p);
        if (!p || !filter_check(r->f, "always", 6))
            atomic_fetch_add(&r->misses, 1);
        atomic_fetch_add(&r->checks, 1);
    }
    return NULL;
}

START_TEST(test_rotation_race)
{
    struct race r = {.f = make_ring(2, 2000)};
    int64_t t = 5000000;
    add_at(r.f, "always", t);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, reader, &r), 0);
    char k[32];
    for (int s = 0; s < 3000; s++) {
        t += 1000; /* the next slice: add there first, then let readers see it */
        struct filter_key key = {"always", 6};
        ring_add_batch(r.f->ring, r.f, &key, 1, NULL, t, t);
        for (int i = 0; i < 50; i++) {
            snprintf(k, sizeof(k), "x%d-%d", s, i);
            struct filter_key x = {k, strlen(k)};
            ring_add_batch(r.f->ring, r.f, &x, 1, NULL, t, t);
        }
        set_now(t);
        ring_expire(r.f->ring, t);
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    ck_assert_uint_gt(atomic_load(&r.checks), 0);
    ck_assert_uint_eq(atomic_load(&r.misses), 0);
    filter_free(r.f);
}
END_TEST

/* The masks a ring probes its slices with say what filter_check_hash says,
 * for every k the blocked layout takes. */
START_TEST(test_block_masks)
{
    char err[256];
    for (unsigned k = 1; k <= 32; k++) {
        struct filter_plan plan;
        ck_assert_int_eq(filter_plan_make(FILTER_BLOCKED, 2000, 0.01, 1, &plan, err, sizeof(err)),
                         0);
        plan.k = k;
        struct filter *f = filter_create(&plan, 99, err, sizeof(err));
        ck_assert_msg(f != NULL, "%s", err);
        char buf[32];
        for (int i = 0; i < 2000; i++) {
            snprintf(buf, sizeof(buf), "in-%d", i);
            filter_add(f, buf, strlen(buf));
        }
        for (int i = 0; i < 4000; i++) {
            snprintf(buf, sizeof(buf), i < 2000 ? "in-%d" : "out-%d", i);
            struct hash128 h = filter_hash(f, buf, strlen(buf));
            uint64_t m[8];
            filter_block_masks(h, k, m);
            unsigned bits = 0;
            for (int w = 0; w < 8; w++)
                bits += (unsigned)__builtin_popcountll(m[w]);
            ck_assert_uint_le(bits, k);
            ck_assert_msg(filter_block_has(filter_first_line(f, h), m) == filter_check_hash(f, h),
                          "k %u, %s", k, buf);
        }
        filter_free(f);
    }
}
END_TEST

START_TEST(test_bad_shape)
{
    struct filter_plan plan;
    char err[256];
    ck_assert_int_eq(filter_plan_make(FILTER_BLOCKED, 1000, 1e-6, 1, &plan, err, sizeof(err)), 0);
    ck_assert_ptr_null(ring_filter_create(&plan, 1, 3, 1000, 1000, 1e-6, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "slices"));
    ck_assert_ptr_null(ring_filter_create(&plan, 1, 0, 1000, 1000, 1e-6, err, sizeof(err)));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_boundary);
    tcase_add_test(tc, test_readd_and_expire);
    tcase_add_test(tc, test_replay_times);
    tcase_add_test(tc, test_rotation_race);
    tcase_add_test(tc, test_block_masks);
    tcase_add_test(tc, test_bad_shape);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
