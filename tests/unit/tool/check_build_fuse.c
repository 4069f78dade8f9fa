/* build_run with --layout fuse (src/tool/build_fuse.c): the hashes collected
 * in memory and spilled to temporary files give the same filter, as do one
 * and two threads; duplicates are dropped; every item is found. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/filter.h"
#include "bloom/format.h"
#include "lib/testutil.h"
#include "lib/seams.h"
#include "tool/build.h"
#include "tool/build_fuse.h"

#define N 60000

/* Items 0..N-1, every third one twice. */
static void write_list(const char *path)
{
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    for (int i = 0; i < N; i++) {
        fprintf(fp, "item-%d\n", i);
        if (i % 3 == 0)
            fprintf(fp, "item-%d\n", i);
    }
    ck_assert_int_eq(fclose(fp), 0);
}

static struct filter *build(const char *in, const char *name, unsigned threads)
{
    char out[4096], err[1024] = "";
    tu_path(out, sizeof(out), name);
    const char *inputs[] = {in};
    struct build_opts o = {.inputs = inputs, .n_inputs = 1, .output = out,
                           .layout = FILTER_FUSE, .fpr = 1e-4, .shards = 8,
                           .threads = threads, .seed = 0xfeed};
    struct build_result r;
    ck_assert_msg(build_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(r.lines, N + N / 3);
    ck_assert_uint_eq(r.items, N);
    struct filter *f = format_load(out, 2, err, sizeof(err));
    ck_assert_msg(f != NULL, "%s", err);
    return f;
}

static void expect_same(const struct filter *a, const struct filter *b)
{
    ck_assert_uint_eq(a->shard_count, b->shard_count);
    for (uint32_t s = 0; s < a->shard_count; s++) {
        ck_assert_uint_eq(a->shards[s].fuse_seed, b->shards[s].fuse_seed);
        ck_assert_int_eq(memcmp((const void *)a->shards[s].words, (const void *)b->shards[s].words,
                                a->bits_per_shard / 8),
                         0);
    }
}

START_TEST(test_spill_same_filter)
{
    char in[4096], key[32];
    tu_path(in, sizeof(in), "list.txt");
    write_list(in);
    struct filter *mem = build(in, "mem.bgf", 2);
    /* 64 KiB for ~1.3 MB of hashes: 8 groups (one per shard), each spilled. */
    build_fuse_mem_bytes = 64 << 10;
    struct filter *spill = build(in, "spill.bgf", 2);
    struct filter *one = build(in, "one.bgf", 1);
    build_fuse_mem_bytes = 0; /* the production budget again */
    expect_same(mem, spill);
    expect_same(mem, one);
    for (int i = 0; i < N; i++) {
        size_t len = (size_t)snprintf(key, sizeof(key), "item-%d", i);
        ck_assert_msg(filter_check(spill, key, len), "%s missing", key);
    }
    ck_assert_uint_eq(filter_items(spill), N);
    filter_free(mem);
    filter_free(spill);
    filter_free(one);
}
END_TEST

static Suite *build_fuse_suite(void)
{
    Suite *s = suite_create("build_fuse");
    TCase *tc = tcase_create("spill");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_spill_same_filter);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(build_fuse_suite());
}
