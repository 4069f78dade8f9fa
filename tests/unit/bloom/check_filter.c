/* Unit tests for the sharded Bloom filter (src/bloom/filter.c): no false negatives,
 * the measured false-positive rate at capacity against the target, odd keys,
 * concurrent adds and checks, and the counters. Every key set and seed is
 * fixed, so the measured figures are the same on every run. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/filter.h"
#include "lib/testutil.h"

#define SEED 0x5eedf00dull
#define KEY_MAX 32 /* bytes per generated key, NUL included */
#define CHUNK 4096 /* keys per batch call */

static struct filter *make_filter(enum filter_layout layout, uint64_t capacity, double p,
                                  uint32_t shards, uint64_t seed)
{
    struct filter_plan plan;
    char err[256] = "";
    ck_assert_msg(filter_plan_make(layout, capacity, p, shards, &plan, err, sizeof(err)) == 0,
                  "plan: %s", err);
    struct filter *f = filter_create(&plan, seed, err, sizeof(err));
    ck_assert_msg(f != NULL, "create: %s", err);
    return f;
}

static enum filter_layout layout_of(int i)
{
    return i ? FILTER_CLASSIC : FILTER_BLOCKED;
}

/* A batch of numbered keys "<prefix><first + j>" in one arena. */
struct keybatch {
    char text[CHUNK][KEY_MAX];
    struct filter_key keys[CHUNK];
    bool out[CHUNK];
};

static size_t fill_batch(struct keybatch *b, const char *prefix, uint64_t first, uint64_t end)
{
    size_t n = end - first < CHUNK ? (size_t)(end - first) : CHUNK;
    for (size_t j = 0; j < n; j++) {
        b->keys[j].len = tu_key(b->text[j], prefix, first + j);
        b->keys[j].data = b->text[j];
    }
    return n;
}

/* How many of keys [0, n) with the prefix the filter says are present. */
static uint64_t count_present(const struct filter *f, const char *prefix, uint64_t n)
{
    struct keybatch *b = malloc(sizeof(*b));
    ck_assert_ptr_nonnull(b);
    uint64_t hits = 0;
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t m = fill_batch(b, prefix, i, n);
        filter_check_batch(f, b->keys, m, b->out);
        for (size_t j = 0; j < m; j++)
            hits += b->out[j];
    }
    free(b);
    return hits;
}

static uint64_t popcount_all(const struct filter *f)
{
    uint64_t n = 0;
    for (uint32_t s = 0; s < f->shard_count; s++)
        n += filter_shard_popcount(f, s);
    return n;
}

/* ---- the blocked probe positions, against the spec ---- */

static uint64_t ref_splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* docs/design.md, written out plainly: the block from h.lo, then k 9-bit
 * fields, 7 from each splitmix64 output of a generator seeded from both
 * halves. The filter's own test is unrolled per k; they must agree. */
static bool ref_blocked_check(const struct filter *f, struct hash128 h)
{
    const _Atomic uint64_t *blk =
        f->shards[filter_shard_of(f, h)].words + filter_reduce64(h.lo, f->blocks_per_shard) * 8;
    uint64_t s = h.hi ^ (h.lo * 0xC2B2AE3D27D4EB4Full), z = 0;
    for (unsigned i = 0; i < f->k; i++) {
        if (i % 7 == 0) {
            s += 0x9E3779B97F4A7C15ull;
            z = ref_splitmix64(s);
        }
        unsigned pos = (unsigned)(z >> (55 - 9 * (i % 7))) & 511;
        if (!((atomic_load(&blk[pos >> 6]) >> (pos & 63)) & 1))
            return false;
    }
    return true;
}

START_TEST(test_blocked_positions)
{
    uint64_t x = 88172645463325252ull;
    for (unsigned k = 1; k <= 20; k++) {
        struct filter_plan plan;
        char err[256] = "";
        ck_assert_msg(filter_plan_make(FILTER_BLOCKED, 2000, 0.01, 2, &plan, err, sizeof(err)) == 0,
                      "plan: %s", err);
        plan.k = k;
        struct filter *f = filter_create(&plan, SEED, err, sizeof(err));
        ck_assert_msg(f != NULL, "create: %s", err);
        /* Each bit set with probability 2^(-1/k): about half the lookups pass. */
        uint64_t thresh = (uint64_t)(pow(0.5, 1.0 / k) * 4294967296.0);
        for (uint32_t sh = 0; sh < f->shard_count; sh++)
            for (uint64_t w = 0; w < f->bits_per_shard / 64; w++) {
                uint64_t v = 0;
                for (int b = 0; b < 64; b++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    v |= (uint64_t)((x >> 32) < thresh) << b;
                }
                atomic_store(&f->shards[sh].words[w], v);
            }
        unsigned yes = 0;
        struct hash128 last[5];
        bool last_want[5];
        for (int i = 0; i < 20000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            struct hash128 h = {x, x * 0x9E3779B97F4A7C15ull + (uint64_t)i};
            bool want = ref_blocked_check(f, h);
            ck_assert_msg(filter_check_hash(f, h) == want, "k=%u lookup %d: got %d want %d", k, i,
                          !want, want);
            /* The early-exit test of a query's probes gives the same answers. */
            ck_assert_msg(filter_first_present(f, &h, 1) == (want ? 0u : 1u),
                          "k=%u lookup %d: filter_first_present disagrees", k, i);
            last[i % 5] = h;
            last_want[i % 5] = want;
            if (i % 5 == 4) {
                size_t first = 5;
                for (size_t j = 5; j-- > 0;)
                    if (last_want[j])
                        first = j;
                ck_assert_msg(filter_first_present(f, last, 5) == first,
                              "k=%u lookups %d-%d: first present %zu, want %zu", k, i - 4, i,
                              filter_first_present(f, last, 5), first);
            }
            yes += want;
        }
        ck_assert_msg(yes > 2000 && yes < 18000, "k=%u: %u of 20000 passed", k, yes);
        filter_free(f);
    }
}
END_TEST

/* ---- no false negatives ---- */

START_TEST(test_no_false_negative)
{
    /* Sized ten times over, so no add of a distinct key can collide. */
    const uint64_t n = 200000;
    struct filter *f = make_filter(layout_of(_i), 10 * n, 1e-4, 4, SEED);
    char key[KEY_MAX];
    for (uint64_t i = 0; i < n; i++) {
        size_t len = tu_key(key, "item-", i);
        ck_assert_msg(filter_add(f, key, len), "add %s: not new", key);
    }
    ck_assert_uint_eq(filter_items(f), n);
    ck_assert_uint_eq(filter_bits_set(f), popcount_all(f));
    uint64_t bits = filter_bits_set(f);
    for (uint64_t i = 0; i < n; i++) {
        size_t len = tu_key(key, "item-", i);
        ck_assert_msg(filter_check(f, key, len), "%s missing", key);
        ck_assert_msg(!filter_add(f, key, len), "re-add %s: new", key);
    }
    /* Re-adding changed nothing. */
    ck_assert_uint_eq(filter_items(f), n);
    ck_assert_uint_eq(filter_bits_set(f), bits);
    ck_assert_uint_eq(popcount_all(f), bits);
    ck_assert_uint_eq(count_present(f, "item-", n), n);
    /* Items spread over all four shards. */
    for (uint32_t s = 0; s < 4; s++)
        ck_assert_uint_gt(atomic_load(&f->shards[s].items), n / 4 - n / 20);
    filter_free(f);
}
END_TEST

START_TEST(test_batch_matches_single)
{
    /* Batches of every size around the internal batch of 16, and the add batch
     * reporting exactly what single adds report. */
    struct filter *f = make_filter(layout_of(_i), 1000, 1e-2, 2, SEED);
    struct filter *g = make_filter(layout_of(_i), 1000, 1e-2, 2, SEED);
    static char text[600][KEY_MAX];
    struct filter_key keys[600];
    bool added[600], present[600];
    for (size_t j = 0; j < 600; j++) {
        keys[j].len = tu_key(text[j], "k", j % 500); /* 100 repeats */
        keys[j].data = text[j];
    }
    filter_add_batch(f, keys, 600, added);
    size_t fresh = 0;
    for (size_t j = 0; j < 600; j++) {
        bool single = filter_add(g, keys[j].data, keys[j].len);
        ck_assert_msg(added[j] == single, "key %zu: batch %d, single %d", j, added[j], single);
        fresh += added[j];
        if (j >= 500)
            ck_assert_msg(!added[j], "repeat %zu counted new", j);
    }
    ck_assert_uint_eq(filter_items(f), fresh);
    ck_assert_uint_eq(filter_items(g), fresh);
    ck_assert_uint_eq(filter_bits_set(f), filter_bits_set(g));
    for (size_t n = 0; n <= 40; n++) {
        memset(present, 0, sizeof(present));
        filter_check_batch(f, keys + 3, n, present);
        for (size_t j = 0; j < n; j++)
            ck_assert(present[j]);
        ck_assert(!present[n]); /* wrote no further than n */
    }
    /* Absent keys: the batch agrees with filter_check one by one. */
    for (size_t j = 0; j < 600; j++) {
        keys[j].len = tu_key(text[j], "absent", j);
        keys[j].data = text[j];
    }
    filter_check_batch(f, keys, 600, present);
    for (size_t j = 0; j < 600; j++)
        ck_assert(present[j] == filter_check(f, keys[j].data, keys[j].len));
    /* filter_first_present (both layouts) names the first of them present. */
    struct hash128 hs[600];
    size_t first = 600;
    for (size_t j = 0; j < 600; j++) {
        hs[j] = filter_hash(f, keys[j].data, keys[j].len);
        if (present[j] && first == 600)
            first = j;
    }
    ck_assert_uint_eq(filter_first_present(f, hs, 600), first);
    ck_assert_uint_eq(filter_first_present(f, hs, 0), 0);
    filter_add_batch(f, keys, 600, NULL); /* added may be NULL */
    ck_assert_uint_eq(count_present(f, "absent", 600), 600);
    filter_free(f);
    filter_free(g);
}
END_TEST

/* ---- measured false-positive rate at capacity ---- */

#define FPR_CAPACITY 200000
static const double fpr_rates[] = {1e-2, 1e-3, 1e-4};

START_TEST(test_fpr_at_capacity)
{
    /* Loop index: layout (blocked, classic) by rate. Fill to exactly capacity
     * with distinct keys, then query keys never added: enough of them that the
     * expected count is ~1000 or more, so the measured rate is within a few
     * percent of the true rate of this filter. */
    enum filter_layout layout = layout_of(_i / 3);
    double p = fpr_rates[_i % 3];
    uint64_t queries = p < 5e-4 ? 10000000 : 1000000;
    struct filter *f = make_filter(layout, FPR_CAPACITY, p, 0, SEED);
    struct filter_plan plan;
    filter_get_plan(f, &plan);

    struct keybatch *b = malloc(sizeof(*b));
    ck_assert_ptr_nonnull(b);
    uint64_t fresh = 0;
    for (uint64_t i = 0; i < FPR_CAPACITY; i += CHUNK) {
        size_t m = fill_batch(b, "in-", i, FPR_CAPACITY);
        filter_add_batch(f, b->keys, m, b->out);
        for (size_t j = 0; j < m; j++)
            fresh += b->out[j];
    }
    free(b);
    ck_assert_uint_eq(filter_items(f), fresh);
    ck_assert_uint_le(fresh, FPR_CAPACITY);
    ck_assert_uint_eq(filter_bits_set(f), popcount_all(f));
    ck_assert_uint_eq(count_present(f, "in-", FPR_CAPACITY), FPR_CAPACITY);

    uint64_t hits = count_present(f, "out-", queries);
    double measured = (double)hits / (double)queries;
    double est = filter_estimated_fpr(f);
    printf("FPR %s p=%g: k=%u, %.3f bits/item, %llu of %llu absent keys present: measured %.4g "
           "(%.3f p), model %.4g, estimated from fill %.4g, %llu adds collided\n",
           filter_layout_name(layout), p, plan.k, (double)filter_bytes(f) * 8 / FPR_CAPACITY,
           (unsigned long long)hits, (unsigned long long)queries, measured, measured / p,
           plan.fpr_expected, est, (unsigned long long)(FPR_CAPACITY - fresh));
    fflush(stdout);
    ck_assert_msg(measured >= 0.3 * p && measured <= 1.1 * p,
                  "%s p=%g: measured %.4g outside [0.3 p, 1.1 p]", filter_layout_name(layout), p,
                  measured);
    /* The fill-based estimate (what the daemon reports) agrees with the model. */
    ck_assert_msg(fabs(est / plan.fpr_expected - 1) < 0.2, "estimated %.4g, model %.4g", est,
                  plan.fpr_expected);
    filter_free(f);
}
END_TEST

START_TEST(test_estimated_fpr_empty)
{
    struct filter *f = make_filter(layout_of(_i), 1000, 1e-3, 0, SEED);
    ck_assert_double_eq(filter_estimated_fpr(f), 0.0);
    ck_assert_uint_eq(filter_items(f), 0);
    ck_assert_uint_eq(filter_bits_set(f), 0);
    ck_assert(filter_add(f, "x", 1));
    ck_assert(filter_estimated_fpr(f) > 0.0);
    ck_assert(filter_estimated_fpr(f) < 1e-6);
    filter_free(f);
}
END_TEST

/* ---- odd keys ---- */

START_TEST(test_nul_and_empty_keys)
{
    struct filter *f = make_filter(layout_of(_i), 100000, 1e-6, 0, SEED);
    static const char ab[] = {'a', '\0', 'b'};
    static const char ac[] = {'a', '\0', 'c'};
    static const char a0[] = {'a', '\0'};
    static const char zeros[8] = {0};
    /* Length is part of the key: "a", "a\0", "a\0b" are three keys. */
    struct hash128 h1 = filter_hash(f, "a", 1), h2 = filter_hash(f, a0, 2);
    struct hash128 h3 = filter_hash(f, ab, 3);
    ck_assert(h1.lo != h2.lo && h1.lo != h3.lo && h2.lo != h3.lo);

    ck_assert(!filter_check(f, "", 0));
    ck_assert(filter_add(f, "", 0));
    ck_assert(filter_check(f, "", 0));
    ck_assert(filter_check(f, NULL, 0)); /* no bytes: the pointer is not read */
    ck_assert(!filter_add(f, "ignored", 0));

    ck_assert(filter_add(f, ab, 3));
    ck_assert(filter_check(f, ab, 3));
    ck_assert(!filter_check(f, ac, 3));
    ck_assert(!filter_check(f, "a", 1));
    ck_assert(!filter_check(f, a0, 2));
    ck_assert(filter_add(f, zeros, 8));
    ck_assert(filter_check(f, zeros, 8));
    ck_assert(!filter_check(f, zeros, 7));
    ck_assert(!filter_check(f, zeros, 1));
    ck_assert_uint_eq(filter_items(f), 3);

    struct filter_key keys[] = {{ab, 3}, {ac, 3}, {"", 0}, {zeros, 8}, {zeros, 4}, {a0, 2}};
    bool present[6];
    filter_check_batch(f, keys, 6, present);
    ck_assert(present[0] && !present[1] && present[2] && present[3] && !present[4] && !present[5]);
    filter_free(f);
}
END_TEST

START_TEST(test_seed_changes_positions)
{
    struct filter *f = make_filter(layout_of(_i), 100000, 1e-4, 0, 1);
    struct filter *g = make_filter(layout_of(_i), 100000, 1e-4, 0, 2);
    struct hash128 a = filter_hash(f, "example.com", 11), b = filter_hash(g, "example.com", 11);
    ck_assert(a.lo != b.lo && a.hi != b.hi);
    ck_assert(filter_add(f, "example.com", 11));
    ck_assert(filter_add(g, "example.com", 11));
    /* Same key, different bits. */
    ck_assert_int_ne(memcmp((const void *)f->shards[0].words, (const void *)g->shards[0].words,
                            f->bits_per_shard / 8),
                     0);
    filter_free(f);
    filter_free(g);
}
END_TEST

/* ---- concurrency ---- */

#define THREADS 4
#define PER_THREAD 100000

struct racer {
    struct filter *f;
    int id;
    _Atomic uint64_t *progress; /* THREADS counters: keys each thread has added */
    uint64_t not_new;           /* adds that returned false (collisions) */
    uint64_t checked;           /* other threads' keys looked up */
    uint64_t missing;           /* of those, not found: must stay 0 */
};

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    char prefix[8], key[KEY_MAX];
    uint64_t rng = 1000 + (uint64_t)r->id;
    snprintf(prefix, sizeof(prefix), "t%d-", r->id);
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        size_t len = tu_key(key, prefix, i);
        if (!filter_add(r->f, key, len))
            r->not_new++;
        /* Release: a thread that sees i + 1 sees this key's bits. */
        atomic_store_explicit(&r->progress[r->id], i + 1, memory_order_release);
        if (i % 4 == 0) {
            int other = (r->id + 1 + (int)(tu_rand(&rng) % (THREADS - 1))) % THREADS;
            uint64_t done = atomic_load_explicit(&r->progress[other], memory_order_acquire);
            if (done) {
                char okey[KEY_MAX], opre[8];
                snprintf(opre, sizeof(opre), "t%d-", other);
                size_t olen = tu_key(okey, opre, tu_rand(&rng) % done);
                r->checked++;
                if (!filter_check(r->f, okey, olen))
                    r->missing++;
            }
        }
    }
    return NULL;
}

START_TEST(test_concurrent_add_check)
{
    const uint64_t total = (uint64_t)THREADS * PER_THREAD;
    struct filter *f = make_filter(layout_of(_i), total, 1e-4, 4, SEED);
    _Atomic uint64_t progress[THREADS];
    struct racer r[THREADS];
    pthread_t tid[THREADS];
    for (int t = 0; t < THREADS; t++) {
        atomic_init(&progress[t], 0);
        r[t] = (struct racer){.f = f, .id = t, .progress = progress};
    }
    for (int t = 0; t < THREADS; t++)
        ck_assert_int_eq(pthread_create(&tid[t], NULL, racer_main, &r[t]), 0);
    uint64_t not_new = 0, checked = 0;
    for (int t = 0; t < THREADS; t++) {
        ck_assert_int_eq(pthread_join(tid[t], NULL), 0);
        ck_assert_msg(r[t].missing == 0, "thread %d: %llu of %llu keys of other threads missing", t,
                      (unsigned long long)r[t].missing, (unsigned long long)r[t].checked);
        not_new += r[t].not_new;
        checked += r[t].checked;
    }
    /* No lost bit: every key of every thread is there. */
    for (int t = 0; t < THREADS; t++) {
        char prefix[8];
        snprintf(prefix, sizeof(prefix), "t%d-", t);
        ck_assert_uint_eq(count_present(f, prefix, PER_THREAD), PER_THREAD);
    }
    /* The counters are exact under contention: items counts the adds that
     * returned true, bits_set the bits the adds turned on. */
    ck_assert_uint_eq(filter_items(f), total - not_new);
    ck_assert_uint_eq(filter_bits_set(f), popcount_all(f));
    ck_assert_msg(not_new <= total / 1000, "%llu adds collided", (unsigned long long)not_new);
    printf("concurrent %s: %d threads, %llu items, %llu adds collided, %llu cross-thread checks\n",
           filter_layout_name(f->layout), THREADS, (unsigned long long)filter_items(f),
           (unsigned long long)not_new, (unsigned long long)checked);
    fflush(stdout);
    ck_assert_uint_gt(checked, total / 8);
    filter_free(f);
}
END_TEST

/* ---- creation and the plan ---- */

START_TEST(test_create_and_plan)
{
    struct filter_plan plan, back;
    char err[256];
    ck_assert_int_eq(filter_plan_make(layout_of(_i), 123456, 1e-3, 8, &plan, err, sizeof(err)), 0);
    struct filter *f = filter_create(&plan, 42, err, sizeof(err));
    ck_assert_ptr_nonnull(f);
    filter_get_plan(f, &back);
    ck_assert_int_eq(back.layout, plan.layout);
    ck_assert_uint_eq(back.capacity, plan.capacity);
    ck_assert_double_eq(back.fpr_target, plan.fpr_target);
    ck_assert_uint_eq(back.k, plan.k);
    ck_assert_uint_eq(back.shard_count, plan.shard_count);
    ck_assert_uint_eq(back.bits_per_shard, plan.bits_per_shard);
    ck_assert_double_eq(back.fpr_expected, plan.fpr_expected);
    ck_assert_uint_eq(filter_bytes(f), filter_plan_bytes(&plan));
    ck_assert_uint_eq(f->blocks_per_shard * 512, plan.bits_per_shard);
    ck_assert_uint_eq(f->seed, 42);
    ck_assert_int_eq(f->build_time, 0);
    for (uint32_t s = 0; s < f->shard_count; s++) {
        ck_assert_uint_eq((uintptr_t)f->shards[s].words % 64, 0); /* cache-line aligned */
        ck_assert_uint_ge(f->shards[s].map_bytes, plan.bits_per_shard / 8);
        ck_assert_uint_eq(filter_shard_popcount(f, s), 0);
    }
    filter_free(f);
    filter_free(NULL);

    plan.k = 0;
    err[0] = '\0';
    ck_assert_ptr_null(filter_create(&plan, 1, err, sizeof(err)));
    ck_assert_msg(strstr(err, "k = 0") != NULL, "%s", err);
}
END_TEST

START_TEST(test_layout_names)
{
    enum filter_layout l = FILTER_CLASSIC;
    ck_assert_str_eq(filter_layout_name(FILTER_BLOCKED), "blocked");
    ck_assert_str_eq(filter_layout_name(FILTER_CLASSIC), "classic");
    ck_assert_str_eq(filter_layout_name((enum filter_layout)9), "unknown");
    ck_assert_int_eq(filter_layout_parse("BLOCKED", &l), 0);
    ck_assert_int_eq(l, FILTER_BLOCKED);
    ck_assert_int_eq(filter_layout_parse("classic", &l), 0);
    ck_assert_int_eq(l, FILTER_CLASSIC);
    ck_assert_int_eq(filter_layout_parse("block", &l), -1);
    ck_assert_int_eq(filter_layout_parse("", &l), -1);
    ck_assert_int_eq(l, FILTER_CLASSIC);
}
END_TEST

static Suite *filter_suite(void)
{
    Suite *s = suite_create("filter");
    TCase *tc = tcase_create("basic");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_no_false_negative, 0, 2);
    tcase_add_loop_test(tc, test_batch_matches_single, 0, 2);
    tcase_add_loop_test(tc, test_nul_and_empty_keys, 0, 2);
    tcase_add_loop_test(tc, test_seed_changes_positions, 0, 2);
    tcase_add_loop_test(tc, test_estimated_fpr_empty, 0, 2);
    tcase_add_loop_test(tc, test_create_and_plan, 0, 2);
    tcase_add_test(tc, test_layout_names);
    tcase_add_test(tc, test_blocked_positions);
    suite_add_tcase(s, tc);

    /* Tens of millions of lookups; sanitizers slow them several times over. */
    tc = tcase_create("fpr");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_fpr_at_capacity, 0, 6);
    suite_add_tcase(s, tc);

    tc = tcase_create("concurrency");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_concurrent_add_check, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(filter_suite());
}
