/* store/loader.c's reload path: loader_load_filter_idle loads on a thread
 * of its own in SCHED_BATCH at nice 19 (so a reload yields the CPUs to the
 * workers) and gives exactly what loader_load_filter gives, checksums
 * included. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bloom/filter.h"
#include "bloom/format.h"
#include "conf/conf.h"
#include "store/loader.h"
#include "store/registry.h"
#include "lib/testutil.h"
#include "lib/seams.h"

static int seen_policy = -2, seen_nice = -100; /* the loading thread's, from the hook */
static void record_policy(void)
{
    seen_policy = sched_getscheduler(0);
    errno = 0;
    seen_nice = getpriority(PRIO_PROCESS, (id_t)gettid());
}

/* A 4-shard filter of 20,000 items at path (shards: the load runs in parallel). */
static void write_filter(const char *path)
{
    struct filter_plan plan;
    char why[256];
    ck_assert_msg(filter_plan_make(FILTER_BLOCKED, 20000, 1e-4, 4, &plan, why, sizeof(why)) == 0,
                  "%s", why);
    struct filter *f = filter_create(&plan, 42, why, sizeof(why));
    ck_assert_msg(f != NULL, "%s", why);
    char item[32];
    for (int i = 0; i < 20000; i++)
        filter_add(f, item, (size_t)snprintf(item, sizeof(item), "item-%d", i));
    ck_assert_msg(format_write(f, path, 2, why, sizeof(why)) == 0, "%s", why);
    filter_free(f);
}

static struct conf *conf_for(const char *path)
{
    char text[8192], err[1024];
    snprintf(text, sizeof(text), "filter f {\n    file %s\n    journal off\n}\n", path);
    struct conf *c = conf_parse(text, strlen(text), NULL, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    return c;
}

START_TEST(test_idle_load_is_the_load)
{
    char path[4096], err[1024] = "";
    tu_path(path, sizeof(path), "f.bgf");
    write_filter(path);
    struct conf *c = conf_for(path);
    struct fversion *a = loader_load_filter(&c->filters[0], 2, err, sizeof(err));
    ck_assert_msg(a != NULL, "%s", err);
    int policy = sched_getscheduler(0);
    int nice = getpriority(PRIO_PROCESS, (id_t)gettid());
    loader_test_idle_hook = record_policy;
    struct fversion *b = loader_load_filter_idle(&c->filters[0], 2, 0, err, sizeof(err));
    loader_test_idle_hook = NULL;
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq(seen_policy, SCHED_BATCH);
    ck_assert_int_eq(seen_nice, 19);
    ck_assert_int_eq(sched_getscheduler(0), policy); /* the caller is not lowered */
    ck_assert_int_eq(getpriority(PRIO_PROCESS, (id_t)gettid()), nice);
    ck_assert_uint_eq(filter_items(b->f), filter_items(a->f));
    ck_assert_uint_eq(filter_bits_set(b->f), filter_bits_set(a->f));
    ck_assert_uint_eq(b->f->shard_count, 4);
    uint64_t bytes = b->f->bits_per_shard / 8;
    for (uint32_t i = 0; i < b->f->shard_count; i++)
        ck_assert(memcmp((const void *)a->f->shards[i].words, (const void *)b->f->shards[i].words,
                         bytes) == 0);
    char item[32];
    for (int i = 0; i < 20000; i++)
        ck_assert(filter_check(b->f, item, (size_t)snprintf(item, sizeof(item), "item-%d", i)));
    ck_assert_uint_eq(b->size, a->size);
    fversion_free(a);
    fversion_free(b);
    conf_free(c);
}
END_TEST

/* A flipped payload byte in the last shard: refused as corrupt, as by the
 * normal load, and nothing is handed back. */
START_TEST(test_idle_load_verifies_checksums)
{
    char path[4096], err[1024] = "";
    tu_path(path, sizeof(path), "bad.bgf");
    write_filter(path);
    struct format_info fi;
    ck_assert_msg(format_read_info(path, &fi, err, sizeof(err)) == 0, "%s", err);
    off_t off = (off_t)(fi.payload_offset + fi.shard_stride * 3 + 100);
    format_info_free(&fi);
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    unsigned char byte;
    ck_assert_int_eq(pread(fd, &byte, 1, off), 1);
    byte ^= 0x10;
    ck_assert_int_eq(pwrite(fd, &byte, 1, off), 1);
    close(fd);
    struct conf *c = conf_for(path);
    struct fversion *v = loader_load_filter_idle(&c->filters[0], 2, 0, err, sizeof(err));
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err, "filter f:") && strstr(err, "shard 3") &&
                      strstr(err, "checksum mismatch"),
                  "%s", err);
    conf_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("idle");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_idle_load_is_the_load);
    tcase_add_test(tc, test_idle_load_verifies_checksums);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
