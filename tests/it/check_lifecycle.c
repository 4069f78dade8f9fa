/* check_lifecycle: the daemon's start-up and shutdown order against the real
 * bloomgated: the reload hook at shutdown, the privileges filters and journals
 * are opened with, and what a reload does with a setting that needs a restart.
 * Each test starts the daemon with tests/lib/daemon_harness.h in its own
 * temporary directory. No test asserts a timing; every wait is bounded. */
#include "config.h"

#include <check.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/daemon_harness.h"

/* ---- shutdown: no reload may reach a freed reloader ---- */

#define PIPE_CLIENTS 4
#define PIPE_RELOADS 400

/* Clients pipeline RELOADs (each is answered when its reload is over, then the
 * next one buffered behind it starts another), and SIGTERM arrives while they
 * are still coming. The reloader used to be freed while the workers ran: the
 * next buffered RELOAD called the hook with the freed context (ASan: a
 * heap-use-after-free in reloader_request). Now the hook refuses once the
 * shutdown has begun and the reloader is freed after the workers stopped: the
 * daemon exits 0 with a clean log, and every RELOAD answered got OK or an
 * error line, never a crash. */
START_TEST(test_shutdown_with_reloads_pipelined)
{
    struct dh_daemon *d = dh_new();
    dh_write_config(d, "threads 2\n"
                       "log_level info\n"
                       "filter f {\n"
                       "    capacity 1000\n"
                       "    journal off\n"
                       "}\n");
    dh_start(d, NULL);
    static char req[PIPE_RELOADS * 7 + 1];
    size_t len = 0;
    for (int i = 0; i < PIPE_RELOADS; i++)
        len += (size_t)sprintf(req + len, "RELOAD\n");
    struct dh_conn *c[PIPE_CLIENTS];
    for (int i = 0; i < PIPE_CLIENTS; i++) {
        c[i] = dh_connect(d);
        ck_assert_int_eq(dh_send(c[i], req, len, DH_TIMEOUT_MS), 0);
    }
    /* Let a few reloads run, so that answers are on their way at the stop. */
    for (int i = 0; i < PIPE_CLIENTS; i++) {
        const char *l = dh_read_line(c[i], DH_TIMEOUT_MS);
        ck_assert_msg(l && strncmp(l, "OK", 2) == 0, "first RELOAD: %s", l ? l : "(none)");
    }
    ck_assert_int_eq(dh_signal(d, SIGTERM), 0);
    int st = dh_wait_exit(d, 60000);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "exit status 0x%x; log:\n%.4000s", st, dh_log_read(d));
    dh_assert_log_clean(d);
    for (int i = 0; i < PIPE_CLIENTS; i++) {
        const char *l;
        while ((l = dh_read_line(c[i], 2000)) != NULL)
            ck_assert_msg(strncmp(l, "OK", 2) == 0 || strncmp(l, "ERR ", 4) == 0,
                          "a RELOAD answered \"%s\"", l);
        dh_close(c[i]);
    }
    dh_free(d);
}
END_TEST

/* ---- max_items needs a restart ---- */

static void write_max_items(struct dh_daemon *d, unsigned max_items)
{
    char body[256];
    snprintf(body, sizeof(body),
             "threads 1\nmax_items %u\nfilter f {\n    capacity 1000\n    journal off\n}\n",
             max_items);
    dh_write_config(d, body);
}

/* The workers' per-request buffers are sized from max_items once, at start:
 * it used to be marked reloadable, so a reload published a value the workers
 * silently clamped (raised) or applied (lowered). Now a reload that changes
 * it says so in the log and keeps the running value both ways. */
START_TEST(test_max_items_needs_restart)
{
    struct dh_daemon *d = dh_new();
    write_max_items(d, 5);
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "MCHECK f a b c d e", "NO NO NO NO NO");
    const char *l = dh_cmd(c, "MCHECK f a b c d e f");
    ck_assert_msg(strncmp(l, "ERR too_many_items ", 19) == 0, "%s", l);

    write_max_items(d, 50); /* raised: still 5 */
    l = dh_cmd(c, "RELOAD");
    ck_assert_msg(strncmp(l, "OK", 2) == 0, "%s", l);
    ck_assert_msg(dh_log_contains(d, "max_items: a change needs a restart; still 5"),
                  "no warning in the log:\n%.4000s", dh_log_read(d));
    l = dh_cmd(c, "MCHECK f a b c d e f");
    ck_assert_msg(strncmp(l, "ERR too_many_items 6 items; the limit is 5", 42) == 0, "%s", l);

    write_max_items(d, 3); /* lowered: still 5 too */
    l = dh_cmd(c, "RELOAD");
    ck_assert_msg(strncmp(l, "OK", 2) == 0, "%s", l);
    DH_EXPECT(c, "MCHECK f a b c d e", "NO NO NO NO NO");

    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- the suite ---- */

static Suite *lifecycle_suite(void)
{
    Suite *s = suite_create("lifecycle");
    dh_add_case(s, "lifecycle", 300,
                (const TTest *const[]){test_shutdown_with_reloads_pipelined,
                                       test_max_items_needs_restart, NULL});
    return s;
}

int main(void)
{
    return dh_run_suite(lifecycle_suite());
}
