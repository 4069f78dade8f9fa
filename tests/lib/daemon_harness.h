/* daemon_harness: start the real bloomgated for an integration test (config
 * from a template, ports the kernel picks, a temporary directory), wait for it,
 * stop it and clean up. It includes line_client.h, the line-protocol client;
 * http_client.h is the HTTP one. For Check tests: the set-up calls
 * (dh_new ... dh_start) fail the running test with ck_abort_msg, quoting the
 * daemon's log, instead of returning an error. Call the daemon functions from
 * the test's main thread (a daemon dies with the thread that spawned it).
 *
 * Cleanup when an assertion fails. Check runs each test in a forked child and
 * a failed assertion ends it with _exit, so no teardown runs. Therefore:
 *   - each daemon runs in its own process group with PR_SET_PDEATHSIG(SIGKILL):
 *     it is killed as soon as the test process ends, however it ends;
 *   - dh_root_init (call it from main, before srunner_run_all) makes one
 *     directory for the whole run, under which every daemon gets its own
 *     mkdtemp directory; dh_root_cleanup (after the run) removes it all, so the
 *     directories of failed tests go too. Set DH_KEEP=1 in the environment to
 *     keep them for a post-mortem (the path is printed);
 *   - dh_cleanup_all is a checked-fixture teardown for the passing path and for
 *     CK_FORK=no runs: it kills and frees whatever the test left.
 * Every wait is bounded (DH_TIMEOUT_MS unless given), so a test never hangs. */
#ifndef BLOOMGATE_DAEMON_HARNESS_H
#define BLOOMGATE_DAEMON_HARNESS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/line_client.h"

#define DH_PATH_MAX 1024
#define DH_TIMEOUT_MS 10000 /* start-up, a reply: long, since ASan is slow */
/* The wait for an exit after SIGTERM (or an expected exit). Longer: under
 * ASan the process still runs LeakSanitizer over its whole heap after it logs
 * "stopped", which took over 10 s for a daemon with large filters on a loaded
 * machine, and a SIGKILL then failed a test whose daemon was exiting fine. A
 * bound, not a timing: a daemon that hangs still fails, later. */
#define DH_EXIT_TIMEOUT_MS 60000

struct dh_daemon {
    char dir[DH_PATH_MAX];  /* this daemon's temporary directory (absolute) */
    char conf[DH_PATH_MAX]; /* dir/bloomgate.conf, written by dh_write_config */
    char log[DH_PATH_MAX];  /* dir/daemon.log: the daemon's stdout and stderr */
    pid_t pid;              /* the running daemon, leader of its own group; 0 if none */
    int port;               /* its first line-protocol port, from the log; 0 until ready */
    int status;             /* waitpid status once it has exited; -1 before */
    long log_from;          /* where the latest run's output starts in the log */
    /* Set before dh_spawn; they apply to every later spawn of this daemon. */
    const char *env[8];    /* extra "NAME=VALUE" entries for its environment, NULL-ended */
    long long fsize_limit; /* RLIMIT_FSIZE in bytes for the daemon (0: inherited) */
    long nofile_limit;     /* RLIMIT_NOFILE for the daemon (0: inherited) */
};

/* ---- the run ---- */

/* One temporary directory for the whole run under $TMPDIR (or /tmp); 0 or -1.
 * Without it, dh_new makes each directory straight under $TMPDIR. */
int dh_root_init(void);
/* Remove the run's directory recursively (unless DH_KEEP is set). */
void dh_root_cleanup(void);
/* Kill, reap and free every daemon still registered (a checked teardown). */
void dh_cleanup_all(void);

/* The programs under test: $BLOOMGATED (set by Makefile.am) or ./bloomgated,
 * and $BLOOMGATE or ./bloomgate. */
const char *dh_daemon_path(void);
const char *dh_tool_path(void);

/* ---- a daemon's directory, config and filters ---- */

/* A fresh temporary directory (mkdtemp) and a registered, not yet started daemon. */
struct dh_daemon *dh_new(void);
/* dir/name into out (DH_PATH_MAX bytes); returns out. */
char *dh_path(const struct dh_daemon *d, const char *name, char *out);
/* Write data to dir/name (created or truncated). */
void dh_write_file(struct dh_daemon *d, const char *name, const void *data, size_t len);
/* Write the config: `listen 127.0.0.1:0` unless body has a listen line,
 * `http_listen off` unless body has an http_listen line, `log_level debug`
 * unless body has a log_level line (every connection is logged), then body. The
 * string "@DIR@" in body is replaced by the daemon's directory. */
void dh_write_config(struct dh_daemon *d, const char *body);
/* Build dir/name from items[0..n) with the library's builder (build_run): a fixed
 * seed, so the filter and every answer it gives are the same on every run.
 * capacity 0 sizes it for n; fpr 0 means 1e-4. */
void dh_build_filter(struct dh_daemon *d, const char *name, const char *const *items, size_t n,
                     uint64_t capacity, double fpr);

/* ---- starting and stopping ---- */

/* Spawn `bloomgated -c CONF [args...]` (args NULL-terminated, may be NULL),
 * output to the log, and return without waiting. Again after it has exited:
 * a restart in the same directory. */
void dh_spawn(struct dh_daemon *d, const char *const *args);
/* Wait for `ready:` in the log and read the port. 0, or -1 if the daemon
 * exited first or the time ran out (the log says why). */
int dh_wait_ready(struct dh_daemon *d, int timeout_ms);
/* The port of the idx-th `listen` (from 0) of a ready daemon, from its log; 0 if none. */
int dh_port(const struct dh_daemon *d, unsigned idx);
/* The same for the idx-th `http_listen`. */
int dh_http_port(const struct dh_daemon *d, unsigned idx);
/* The same for the idx-th `resp_listen` (the Redis protocol). */
int dh_resp_port(const struct dh_daemon *d, unsigned idx);
/* The port of the idx-th log line that holds tag ("tcp_table listening on "). */
int dh_tagged_port(const struct dh_daemon *d, const char *tag, unsigned idx);
/* dh_spawn + dh_wait_ready; fails the test (quoting the log) if it is not ready. */
void dh_start(struct dh_daemon *d, const char *const *args);
/* Wait for the daemon to exit. Its waitpid status, or -1 if still running. */
int dh_wait_exit(struct dh_daemon *d, int timeout_ms);
/* Whether the daemon is still running (reaps it if it has exited). */
bool dh_alive(struct dh_daemon *d);
/* Send a signal to the daemon; 0 or -1. */
int dh_signal(struct dh_daemon *d, int sig);
/* SIGSTOP the daemon and wait until every thread of it has stopped, so that
 * what a test sends next waits in the kernel, unread; 0 or -1. dh_thaw sends
 * SIGCONT (signals sent in between are handled then). */
int dh_freeze(struct dh_daemon *d);
int dh_thaw(struct dh_daemon *d);
/* SIGTERM (and SIGCONT, in case it is frozen), wait up to timeout_ms, then
 * SIGKILL the group. The waitpid status. */
int dh_stop(struct dh_daemon *d, int timeout_ms);
/* dh_stop, then fail the test unless it exited 0 with a clean log; the
 * daemon stays registered, so dh_start may run it again in its directory. */
void dh_stop_ok(struct dh_daemon *d);
/* dh_stop_ok, then dh_start with no arguments: a clean restart. */
void dh_restart(struct dh_daemon *d);
/* Wait for a daemon already told to stop (a signal, SHUTDOWN) and fail the
 * test unless it exited 0; what names the cause in the message. */
void dh_expect_exit0(struct dh_daemon *d, const char *what);
/* dh_stop_ok, then dh_free. */
void dh_finish(struct dh_daemon *d);
/* Kill (if running), reap, remove the directory, unregister, free. */
void dh_free(struct dh_daemon *d);

/* ---- the log ---- */

/* The latest run's part of the log (a daemon spawned again in the same
 * directory appends to it), NUL-terminated (malloc'd; never NULL). */
char *dh_log_read(const struct dh_daemon *d);
bool dh_log_contains(const struct dh_daemon *d, const char *needle);
/* what, and, if the daemon has died or its log holds a sanitizer report, that
 * with the end of its log: for failure messages (static buffer; d may be NULL). */
const char *dh_explain(struct dh_daemon *d, const char *what);
/* Fail the test if the log (every run's) holds a sanitizer report ("ERROR:
 * AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"). dh_finish calls it. */
void dh_assert_log_clean(const struct dh_daemon *d);

/* CPU time (user + system) a process has used, in seconds, from
 * /proc/PID/stat; -1 if unknown. */
double dh_cpu_seconds(pid_t pid);

/* Resident memory of a process in KiB (VmRSS in /proc/PID/status); -1 if unknown. */
long dh_rss_kib(pid_t pid);

/* Run argv (argv[0] a path) with stdout and stderr to out_path (may be NULL:
 * /dev/null), bounded by timeout_ms. The waitpid status, or -1 on timeout. */
int dh_run(const char *const *argv, const char *out_path, int timeout_ms);

/* ---- the test program ---- */

/* A test case named name in s: dh_cleanup_all as its checked teardown, a
 * timeout of timeout_s, and tests[] (NULL-terminated). */
TCase *dh_add_case(Suite *s, const char *name, int timeout_s, const TTest *const *tests);
/* The main of an integration test: dh_root_init, run every test of s (CK_ENV
 * verbosity), dh_root_cleanup. The exit status automake reads. */
int dh_run_suite(Suite *s);

#endif
