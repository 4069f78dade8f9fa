/* check_util: util_random_u64 (src/base/util.c) retries getrandom on EINTR
 * only; any other error is an error naming the cause, never a loop, for it
 * and for its callers (a journal's salt, an empty filter's seed). The test
 * program defines getrandom itself, so the library (linked statically) calls
 * this one: it can pass through to the kernel, fail with EINTR a few times,
 * or fail for good. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf.h"
#include "store/journal.h"
#include "store/loader.h"
#include "store/registry.h"

static int fail_with;  /* errno to fail with for good; 0: do not */
static int eintr_left; /* EINTRs to return before the real call */
static int calls;

ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
    calls++;
    if (fail_with) {
        errno = fail_with;
        return -1;
    }
    if (eintr_left > 0) {
        eintr_left--;
        errno = EINTR;
        return -1;
    }
    return syscall(SYS_getrandom, buf, len, flags);
}

static void reset(int fail, int eintrs)
{
    fail_with = fail;
    eintr_left = eintrs;
    calls = 0;
}

START_TEST(test_eintr_is_retried)
{
    reset(0, 3);
    uint64_t v = 0;
    char err[256];
    ck_assert_int_eq(util_random_u64(&v, err, sizeof(err)), 0);
    ck_assert_int_eq(calls, 4);
}
END_TEST

START_TEST(test_hard_error_is_an_error)
{
    reset(ENOSYS, 0);
    uint64_t v = 0;
    char err[256];
    ck_assert_int_eq(util_random_u64(&v, err, sizeof(err)), -1);
    ck_assert_int_eq(calls, 1);
    ck_assert_msg(strstr(err, "getrandom") && strstr(err, strerror(ENOSYS)), "%s", err);
}
END_TEST

/* Creating a journal draws its salt: it used to spin forever on ENOSYS. */
START_TEST(test_journal_create_fails)
{
    char dir[] = "/tmp/check_util.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256], err[1024];
    snprintf(path, sizeof(path), "%s/j.journal", dir);
    reset(EPERM, 0);
    struct journal_scan scan;
    struct journal *j = journal_open(path, CONF_FSYNC_NO, &scan, err, sizeof(err));
    reset(0, 0);
    ck_assert_ptr_null(j);
    ck_assert_msg(strstr(err, "getrandom") && strstr(err, strerror(EPERM)), "%s", err);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* An empty filter draws its seed: the same. */
START_TEST(test_empty_filter_fails)
{
    struct conf_filter cf = {.name = "f", .capacity = 1000, .fpr = 0.01,
                             .layout = CONF_LAYOUT_BLOCKED};
    char err[1024];
    reset(EPERM, 0);
    struct fversion *v = loader_load_filter(&cf, 1, err, sizeof(err));
    reset(0, 0);
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err, "filter f") && strstr(err, "getrandom"), "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 10); /* the old loop never returned: a timeout is the failure */
    tcase_add_test(tc, test_eintr_is_retried);
    tcase_add_test(tc, test_hard_error_is_an_error);
    tcase_add_test(tc, test_journal_create_fails);
    tcase_add_test(tc, test_empty_filter_fails);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
