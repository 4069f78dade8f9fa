/* Start-up when libevent cannot be made thread-safe (src/net/worker.c):
 * server_create must fail, saying why, instead of starting workers whose
 * cross-thread event_active / event_base_once would run unlocked. The
 * failure is made by link-time substitution: this program defines
 * evthread_use_pthreads itself, and its definition takes precedence over
 * libevent_pthreads'. Main thread only; no daemon is started. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "front/fronts.h"
#include "net/server.h"
#include "conf/conf.h"
#include "store/registry.h"
#include "store/reload.h"

static int calls;

/* libevent's, replaced: it fails (as it does when it cannot allocate its locks). */
int evthread_use_pthreads(void);
int evthread_use_pthreads(void)
{
    calls++;
    return -1;
}

START_TEST(test_start_fails_without_thread_safe_libevent)
{
    static const char text[] = "listen 127.0.0.1:0\nthreads 2\n"
                               "filter f {\n    capacity 1000\n    journal off\n}\n";
    char err[512] = "";
    struct conf *cf = conf_parse(text, sizeof(text) - 1, NULL, err, sizeof(err));
    ck_assert_msg(cf != NULL, "%s", err);
    struct registry *reg = registry_create(2);
    ck_assert_ptr_nonnull(reg);
    ck_assert_msg(reload_initial(reg, cf, 2, err, sizeof(err)) == 0, "%s", err);
    struct server *srv = server_create(reg, 2, err, sizeof(err));
    ck_assert_int_eq(calls, 1);
    ck_assert_msg(srv == NULL, "the server was created with libevent unlocked");
    ck_assert_msg(strstr(err, "evthread_use_pthreads") != NULL, "%s", err);
    registry_free(reg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("evthread");
    TCase *tc = tcase_create("evthread");
    tcase_add_test(tc, test_start_fails_without_thread_safe_libevent);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
