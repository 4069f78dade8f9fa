/* check_stats: the per-worker counters' sums, and the restart of a filter
 * id's counters by generation (the registry's writer never writes a worker's
 * counters: it bumps the id's generation; the owner zeroes its own slot). */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "core/stats.h"
#include "store/registry.h"

static struct stats_block blocks[2];
static _Atomic uint64_t id_gen[REGISTRY_MAX_FILTERS];

static void setup(void)
{
    for (int i = 0; i < 2; i++) {
        blocks[i] = (struct stats_block){0};
        blocks[i].fstats = calloc(REGISTRY_MAX_FILTERS, sizeof(struct fstats));
    }
    for (int i = 0; i < REGISTRY_MAX_FILTERS; i++)
        atomic_store(&id_gen[i], 0);
}

static void teardown(void)
{
    for (int i = 0; i < 2; i++)
        free(blocks[i].fstats);
}

static struct stats_src src_of(void)
{
    struct stats_src s = {.blocks = blocks, .n_workers = 2, .id_gen = id_gen};
    return s;
}

START_TEST(test_sums)
{
    STAT_ADD(&blocks[0].s, commands, 3);
    STAT_ADD(&blocks[1].s, commands, 4);
    STAT_ADD(&blocks[1].s, http_requests, 1);
    struct stats_src src = src_of();
    struct stats out;
    stats_sum(&src, &out);
    ck_assert_uint_eq(STAT_GET(&out, commands), 7);
    ck_assert_uint_eq(STAT_GET(&out, http_requests), 1);
}
END_TEST

/* An id that starts naming another filter reads as zero at once, without any
 * thread writing another's counters, and its owners restart from zero. */
START_TEST(test_fresh_id_by_generation)
{
    struct stats_src src = src_of();
    struct fstats out;
    STAT_ADD(stats_fslot(&blocks[0], id_gen, 3), checks[STATS_LINE], 5);
    STAT_ADD(stats_fslot(&blocks[1], id_gen, 3), checks[STATS_HTTP], 2);
    stats_sum_filter(&src, 3, &out);
    ck_assert_uint_eq(STAT_GET(&out, checks[STATS_LINE]), 5);
    ck_assert_uint_eq(STAT_GET(&out, checks[STATS_HTTP]), 2);
    /* The registry's writer: id 3 now names another filter. */
    atomic_fetch_add(&id_gen[3], 1);
    stats_sum_filter(&src, 3, &out);
    ck_assert_uint_eq(STAT_GET(&out, checks[STATS_LINE]), 0);
    ck_assert_uint_eq(STAT_GET(&out, checks[STATS_HTTP]), 0);
    /* The slots still hold the old counts: nobody but the owner wrote them. */
    ck_assert_uint_eq(STAT_GET(&blocks[0].fstats[3], checks[STATS_LINE]), 5);
    /* Worker 0 counts for the new filter: from zero, not from 5. */
    STAT_ADD(stats_fslot(&blocks[0], id_gen, 3), checks[STATS_LINE], 1);
    stats_sum_filter(&src, 3, &out);
    ck_assert_uint_eq(STAT_GET(&out, checks[STATS_LINE]), 1);
    ck_assert_uint_eq(STAT_GET(&out, checks[STATS_HTTP]), 0);
    /* Other ids are untouched. */
    STAT_ADD(stats_fslot(&blocks[1], id_gen, 4), adds[STATS_LINE], 9);
    stats_sum_filter(&src, 4, &out);
    ck_assert_uint_eq(STAT_GET(&out, adds[STATS_LINE]), 9);
}
END_TEST

static Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("stats");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_sums);
    tcase_add_test(tc, test_fresh_id_by_generation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(stats_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
