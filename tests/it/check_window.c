/* Windowed filters in the real daemon, built with the tests' clock
 * (tests/lib/bloomgated_clock: bloomgated with tests/lib/test_clock.c in
 * place of src/base/clock.c) and moved by the test through
 * BLOOMGATE_TEST_CLOCK_FILE: every item expires at the boundary the
 * guarantee names (docs/protocol.md, "Windowed filters"), across a restart
 * (the journal's times are replayed into their slices) and a reload; INFO
 * shows the window; every acknowledged add survives SIGKILL under fsync
 * always. And the bloomgated that ships has no such seam. */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/daemon_harness.h"

enum { L = 10000 };                          /* window 40s, 4 slices of 10 s */
static const long long T0 = 1700000000000LL; /* a multiple of L */

static char clock_env[DH_PATH_MAX + 64];

/* Write the daemon's clock (ms); the daemon reads it on every check. */
static void set_clock(struct dh_daemon *d, long long ms)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%lld\n", ms);
    char tmp[DH_PATH_MAX], path[DH_PATH_MAX];
    dh_path(d, "clock.tmp", tmp);
    dh_path(d, "clock", path);
    FILE *f = fopen(tmp, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq((int)fwrite(buf, 1, (size_t)n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(rename(tmp, path), 0); /* whole: a reader never sees half a number */
}

static struct dh_daemon *start_window_cap(const char *extra, long capacity)
{
    struct dh_daemon *d = dh_new();
    char path[DH_PATH_MAX];
    snprintf(clock_env, sizeof(clock_env), "BLOOMGATE_TEST_CLOCK_FILE=%s",
             dh_path(d, "clock", path));
    d->env[0] = clock_env;
    set_clock(d, T0);
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "threads 2\nfilter w {\n capacity %ld\n window 40s\n slices 4\n"
             " journal @DIR@/w.journal\n fsync always\n%s}\n",
             capacity, extra);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

static struct dh_daemon *start_window(const char *extra)
{
    return start_window_cap(extra, 10000);
}

static void expect_at(struct dh_daemon *d, struct dh_conn *c, long long ms, const char *req,
                      const char *want)
{
    set_clock(d, ms);
    const char *got = dh_cmd(c, req);
    ck_assert_msg(strcmp(got, want) == 0, "at T0%+lld ms: %s: got %s, want %s", ms - T0, req, got,
                  want);
}

/* Whether `bloomgate journal dump` of w's journal (read while the daemon
 * runs) prints the item. */
static bool journal_has(struct dh_daemon *d, const char *item)
{
    char journal[DH_PATH_MAX], out[DH_PATH_MAX], line[256];
    dh_path(d, "w.journal", journal);
    dh_path(d, "has.txt", out);
    const char *dump[] = {dh_tool_path(), "journal", "dump", journal, NULL};
    ck_assert_int_eq(dh_run(dump, out, DH_TIMEOUT_MS), 0);
    FILE *f = fopen(out, "r");
    ck_assert_ptr_nonnull(f);
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        found = strcmp(line, item) == 0;
    }
    fclose(f);
    return found;
}

/* a and b in the slice [T0, T0+L), c in the next one: a and b expire at
 * T0 + 5L, c at T0 + 6L. */
START_TEST(test_expiry_restart_reload)
{
    struct dh_daemon *d = start_window("");
    struct dh_conn *c = dh_connect(d);
    expect_at(d, c, T0, "ADD w a", "NEW");
    expect_at(d, c, T0 + L - 1, "ADD w b", "NEW");
    expect_at(d, c, T0 + L, "ADD w c", "NEW");
    expect_at(d, c, T0 + 4 * L - 1, "MCHECK w a b c", "YES YES YES");
    expect_at(d, c, T0 + 4 * L, "MCHECK w a b c", "YES YES YES");     /* a: t + window */
    expect_at(d, c, T0 + 5 * L - 1, "MCHECK w a b c", "YES YES YES"); /* b: t + window */
    expect_at(d, c, T0 + 5 * L - 1, "CHECK w a", "YES");              /* the one-item path */
    expect_at(d, c, T0 + 5 * L, "MCHECK w a b c", "NO NO YES");       /* a: t + window + L */
    expect_at(d, c, T0 + 5 * L, "CHECK w b", "NO");
    /* INFO: the window, the next rotation, the live slices */
    set_clock(d, T0 + 5 * L + 5);
    const char *line = dh_cmd(c, "INFO w");
    json_error_t jerr;
    json_t *j = json_loads(line, 0, &jerr);
    ck_assert_msg(j != NULL, "%s", line);
    json_t *w = json_object_get(j, "window");
    ck_assert_msg(json_is_object(w), "%s", line);
    ck_assert_int_eq(json_integer_value(json_object_get(w, "window_ms")), 4 * L);
    ck_assert_int_eq(json_integer_value(json_object_get(w, "slices")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(w, "next_rotation_ms")), T0 + 6 * L);
    json_t *sl = json_object_get(w, "live_slices");
    ck_assert_int_eq((int)json_array_size(sl), 5);
    json_t *oldest = json_array_get(sl, 0);
    ck_assert_int_eq(json_integer_value(json_object_get(oldest, "starts_ms")), T0 + L);
    ck_assert_int_eq(json_integer_value(json_object_get(oldest, "items")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "items")), 1);
    json_decref(j);
    expect_at(d, c, T0 + 5 * L, "ADD w a", "NEW"); /* a again: until T0 + 10L */
    dh_close(c);

    /* A restart replays each add into the slice of its own time. */
    set_clock(d, T0 + 6 * L - 1);
    dh_restart(d);
    c = dh_connect(d);
    expect_at(d, c, T0 + 6 * L - 1, "MCHECK w a b c", "YES NO YES");
    expect_at(d, c, T0 + 6 * L, "MCHECK w a b c", "YES NO NO");
    dh_close(c);
    /* Back in time (a clock stepped back): b and c stay gone once the
     * reload thread has compacted them out of the journal (it does so
     * within a second of their expiry); a, added again at T0 + 5L, is
     * replayed into the current slice. */
    for (int i = 0; i < 600 && journal_has(d, "c"); i++)
        usleep(100 * 1000);
    ck_assert_msg(!journal_has(d, "c"), "c, expired, not compacted out within a minute");
    set_clock(d, T0 + 2 * L);
    dh_restart(d);
    c = dh_connect(d);
    expect_at(d, c, T0 + 2 * L, "MCHECK w a b c", "YES NO NO");
    /* A reload that rebuilds the filter (a new fpr) replays it the same way. */
    set_clock(d, T0 + 9 * L);
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "threads 2\nfilter w {\n capacity 10000\n window 40s\n"
             " slices 4\n journal @DIR@/w.journal\n fsync always\n"
             " fpr 0.001\n}\n");
    dh_write_config(d, conf);
    expect_at(d, c, T0 + 9 * L, "RELOAD", "OK w=reloaded");
    expect_at(d, c, T0 + 10 * L - 1, "MCHECK w a b c", "YES NO NO");
    expect_at(d, c, T0 + 10 * L, "MCHECK w a b c", "NO NO NO");
    /* A reload that changes the window: 4 slices of 20 s from the same
     * journal; a (added at T0 + 5L, in the 20 s slice from T0 + 4L) lives
     * until that slice's start + 5 slices, T0 + 14L. */
    snprintf(conf, sizeof(conf),
             "threads 2\nfilter w {\n capacity 10000\n window 80s\n"
             " slices 4\n journal @DIR@/w.journal\n fsync always\n}\n");
    dh_write_config(d, conf);
    expect_at(d, c, T0 + 10 * L, "RELOAD", "OK w=reloaded");
    expect_at(d, c, T0 + 13 * L, "CHECK w a", "YES");
    expect_at(d, c, T0 + 14 * L - 1, "CHECK w a", "YES");
    expect_at(d, c, T0 + 14 * L, "CHECK w a", "NO");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- every acknowledged add survives SIGKILL (fsync always) ---- */

struct k_stream {
    int port;
    atomic_bool killed;
    atomic_long started;
    long acked;
    char fail[512];
};

static void *k_stream_main(void *arg)
{
    struct k_stream *s = arg;
    struct dh_conn *c = dh_connect_port(s->port, s->fail, sizeof(s->fail));
    if (!c)
        return NULL;
    long next = 0, inflight = 0;
    char req[256];
    for (;;) {
        while (inflight < 8 && next < 100000) {
            size_t len = (size_t)sprintf(req, "MADD w k%ld-0 k%ld-1 k%ld-2\n", next, next, next);
            if (dh_send(c, req, len, 60000) != 0)
                break;
            next++;
            inflight++;
            atomic_fetch_add(&s->started, 1);
        }
        if (inflight == 0)
            break;
        const char *line = dh_read_line(c, 60000);
        if (!line)
            break;
        if (strncmp(line, "ERR", 3) == 0) {
            snprintf(s->fail, sizeof(s->fail), "%.200s", line);
            break;
        }
        s->acked++;
        inflight--;
    }
    if (!s->fail[0] && !atomic_load(&s->killed))
        snprintf(s->fail, sizeof(s->fail), "the connection ended before the kill");
    dh_close(c);
    return NULL;
}

START_TEST(test_sigkill)
{
    struct dh_daemon *d = start_window("");
    struct k_stream s = {.port = d->port};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, k_stream_main, &s), 0);
    for (int w = 0; w < 60000 && atomic_load(&s.started) < 50 && !s.fail[0]; w++)
        usleep(1000);
    usleep(150 * 1000);
    atomic_store(&s.killed, true);
    ck_assert_int_eq(dh_signal(d, SIGKILL), 0);
    int st = dh_wait_exit(d, DH_EXIT_TIMEOUT_MS);
    ck_assert_msg(st != -1 && WIFSIGNALED(st), "status 0x%x", st);
    pthread_join(t, NULL);
    ck_assert_msg(s.fail[0] == '\0', "%s", s.fail);
    ck_assert_int_gt(s.acked, 0);
    set_clock(d, T0 + 5 * L - 1); /* the last instant of the adds' window */
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    char req[256];
    for (long k = 0; k < s.acked; k++) {
        snprintf(req, sizeof(req), "MCHECK w k%ld-0 k%ld-1 k%ld-2", k, k, k);
        const char *got = dh_cmd(c, req);
        ck_assert_msg(strcmp(got, "YES YES YES") == 0, "request %ld of %ld acked: %s", k, s.acked,
                      got);
    }
    dh_close(c);
    dh_stop_ok(d);
    /* Past the window the replay keeps none of them (false positives aside:
     * at most a handful of the items may answer YES). */
    set_clock(d, T0 + 5 * L);
    dh_start(d, NULL);
    c = dh_connect(d);
    long yes = 0;
    for (long k = 0; k < s.acked; k++) {
        snprintf(req, sizeof(req), "MCHECK w k%ld-0 k%ld-1 k%ld-2", k, k, k);
        const char *got = dh_cmd(c, req);
        for (const char *p = strstr(got, "YES"); p; p = strstr(p + 1, "YES"))
            yes++;
    }
    ck_assert_int_eq(yes, 0);
    fprintf(stderr, "test_sigkill: %ld requests acknowledged, all held, all expired\n", s.acked);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- the journal is compacted as slices expire ---- */

struct r_stream {
    int port;
    atomic_bool stop;
    atomic_long acked; /* requests 0 .. acked-1 were answered */
    char fail[512];
};

/* MADD w r<k>-0 r<k>-1 until told to stop, 8 requests in flight. */
static void *r_stream_main(void *arg)
{
    struct r_stream *s = arg;
    struct dh_conn *c = dh_connect_port(s->port, s->fail, sizeof(s->fail));
    if (!c)
        return NULL;
    long next = 0, inflight = 0;
    char req[128];
    for (;;) {
        while (inflight < 8 && !atomic_load(&s->stop)) {
            size_t len = (size_t)sprintf(req, "MADD w r%ld-0 r%ld-1\n", next, next);
            if (dh_send(c, req, len, 60000) != 0)
                break;
            next++;
            inflight++;
        }
        if (inflight == 0)
            break;
        const char *line = dh_read_line(c, 60000);
        if (!line || strncmp(line, "ERR", 3) == 0) {
            snprintf(s->fail, sizeof(s->fail), "%.200s", line ? line : "connection lost");
            break;
        }
        atomic_fetch_add(&s->acked, 1);
        inflight--;
        usleep(500); /* a steady stream, not a flood: the slice holds them all */
    }
    dh_close(c);
    return NULL;
}

static long file_size(struct dh_daemon *d, const char *name)
{
    char p[DH_PATH_MAX];
    struct stat st;
    return stat(dh_path(d, name, p), &st) == 0 ? (long)st.st_size : -1;
}

/* Adds across three slices (and a removal, an exception); the clock moves
 * past the first slice's expiry while adds stream in: the reload thread
 * compacts the journal (it shrinks, the log says so), every live add and
 * every streamed one survives a restart, the expired ones are gone, the
 * removal and the exception stay, and `bloomgate journal dump` reads the
 * compacted file. */
START_TEST(test_compaction)
{
    struct dh_daemon *d = start_window_cap("", 400000); /* 100000 adds a slice */
    struct dh_conn *c = dh_connect(d);
    char req[8192];
    size_t len = (size_t)sprintf(req, "MADD w");
    for (int i = 0; i < 400; i++)
        len += (size_t)sprintf(req + len, " old-%03d", i);
    set_clock(d, T0 + 10);
    ck_assert_str_eq(dh_cmd(c, "ADD w a"), "NEW");
    const char *got = dh_cmd(c, req);
    ck_assert_msg(strncmp(got, "NEW", 3) == 0, "%.100s", got);
    expect_at(d, c, T0 + L, "ADD w b", "NEW");
    expect_at(d, c, T0 + L, "ALLOW w x", "NEW");
    expect_at(d, c, T0 + 2 * L, "MADD w c y", "NEW NEW");
    expect_at(d, c, T0 + 2 * L, "REMOVE w y", "REMOVED");
    long before = file_size(d, "w.journal");
    ck_assert_int_gt(before, 400 * 8);
    /* The first slice expires at T0 + 5L: adds stream in across it. */
    struct r_stream s = {.port = d->port};
    pthread_t t;
    set_clock(d, T0 + 5 * L - 2);
    ck_assert_int_eq(pthread_create(&t, NULL, r_stream_main, &s), 0);
    for (int w = 0; w < 60000 && atomic_load(&s.acked) < 50 && !s.fail[0]; w++)
        usleep(1000);
    set_clock(d, T0 + 5 * L);
    long after = before;
    for (int w = 0; w < 60000 && !s.fail[0]; w++) {
        if (dh_log_contains(d, "compacted")) {
            after = file_size(d, "w.journal");
            break;
        }
        usleep(1000);
    }
    long at_compaction = atomic_load(&s.acked);
    for (int w = 0; w < 60000 && atomic_load(&s.acked) < at_compaction + 50 && !s.fail[0]; w++)
        usleep(1000);
    atomic_store(&s.stop, true);
    pthread_join(t, NULL);
    ck_assert_msg(s.fail[0] == '\0', "%s", s.fail);
    ck_assert_msg(dh_log_contains(d, "compacted"), "no compaction within a minute");
    long streamed = atomic_load(&s.acked);
    long final = file_size(d, "w.journal");
    fprintf(stderr,
            "test_compaction: journal %ld bytes, %ld at the compaction, %ld after %ld "
            "racing adds\n",
            before, after, final, streamed);
    /* Exactly the two expired records (ADD a: 16 + 12 + 4 + 1 bytes; the
     * MADD of old-*: 16 + 12 + 400 * 11) are gone, and every streamed
     * record (16 + 12 + two items) is there. */
    long want = before - 33 - 4428;
    for (long k = 0; k < streamed; k++)
        want += 16 + 12 + 2 * (4 + snprintf(req, sizeof(req), "r%ld-0", k));
    ck_assert_int_eq(final, want);
    ck_assert(dh_log_contains(d, "2 records of expired adds dropped"));
    DH_EXPECT(c, "MCHECK w a old-000 old-399 b c y", "NO NO NO YES YES NO");
    DH_EXPECT(c, "MATCH w x", "NO");
    dh_close(c);
    /* A restart replays the compacted journal: the same answers. */
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "MCHECK w a old-000 old-399 b c y", "NO NO NO YES YES NO");
    DH_EXPECT(c, "ADD w x", "NEW");
    DH_EXPECT(c, "MATCH w x", "ALLOWED x"); /* the exception survived */
    for (long k = 0; k < streamed; k++) {
        snprintf(req, sizeof(req), "MCHECK w r%ld-0 r%ld-1", k, k);
        got = dh_cmd(c, req);
        ck_assert_msg(strcmp(got, "YES YES") == 0, "streamed add %ld of %ld: %s", k, streamed, got);
    }
    dh_close(c);
    dh_stop_ok(d);
    /* The offline reader reads it: no expired add, the live ones. */
    char journal[DH_PATH_MAX], out[DH_PATH_MAX];
    dh_path(d, "w.journal", journal);
    dh_path(d, "dump.txt", out);
    const char *dump[] = {dh_tool_path(), "journal", "dump", "--ops", journal, NULL};
    ck_assert_int_eq(dh_run(dump, out, DH_TIMEOUT_MS), 0);
    FILE *f = fopen(out, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    const char *head = "add\tb\nallow\tx\nadd\tc\nadd\ty\nremove\ty\n";
    ck_assert_msg(strncmp(buf, head, strlen(head)) == 0, "%.200s", buf);
    ck_assert_ptr_null(strstr(buf, "old-"));
    ck_assert_ptr_nonnull(strstr(buf, "\nadd\tr0-0\nadd\tr0-1\n"));
    dh_finish(d);
}
END_TEST

/* Whether the file at path holds needle[0..nl). */
static bool file_holds_n(const char *path, const char *needle, size_t nl)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    size_t have = 0;
    static char buf[1 << 16];
    bool found = false;
    for (size_t n; !found && (n = fread(buf + have, 1, sizeof(buf) - have, f)) > 0;) {
        have += n;
        found = memmem(buf, have, needle, nl) != NULL;
        /* Keep the last nl - 1 bytes: a needle may straddle two reads. */
        size_t keep = have < nl ? have : nl - 1;
        memmove(buf, buf + have - keep, keep);
        have = keep;
    }
    fclose(f);
    return found;
}

static bool file_holds(const char *path, const char *needle)
{
    return file_holds_n(path, needle, strlen(needle));
}

/* The seams are the tests' alone (docs/testing.md, "Seams"): the bloomgated
 * that ships does not know the clock's variable (nothing in its environment
 * can move its clock), the daemon these tests start does; and none of the
 * tests' switches (tests/lib/seams.h) is in the shipped one's symbol table. */
START_TEST(test_shipped_daemon_has_no_seams)
{
    const char *shipped = getenv("BLOOMGATED_SHIPPED");
    ck_assert_msg(shipped && *shipped, "BLOOMGATED_SHIPPED is not set");
    ck_assert_msg(!file_holds(shipped, "BLOOMGATE_TEST_CLOCK_FILE"), "%s reads a test clock",
                  shipped);
    ck_assert(file_holds(dh_daemon_path(), "BLOOMGATE_TEST_CLOCK_FILE"));
    static const char *const switches[] = {
        "gate_test_after_append",   "reload_test_after_swap", "reload_fault_delivery",
        "server_fault_thread_fail", "loader_test_idle_hook",  "journal_test_compact_hook",
        "build_fuse_mem_bytes",     "clock_test_source",      "test_clock_source",
    };
    /* A symbol's whole name, NUL-delimited in the string table: not a part
     * of another's (seam_build_fuse_mem_bytes is the daemon's own). */
    for (size_t i = 0; i < sizeof(switches) / sizeof(switches[0]); i++) {
        char sym[64];
        size_t n = (size_t)snprintf(sym, sizeof(sym), "%c%s", '\0', switches[i]);
        ck_assert_msg(!file_holds_n(shipped, sym, n + 1), "%s holds %s", shipped, switches[i]);
    }
    /* The search finds a symbol where there is one (not a stripped binary). */
    ck_assert(file_holds_n(dh_daemon_path(), "\0test_clock_source", sizeof("\0test_clock_source")));
}
END_TEST

static Suite *window_suite(void)
{
    Suite *s = suite_create("window");
    dh_add_case(s, "window", 300,
                (const TTest *const[]){test_expiry_restart_reload, test_sigkill, test_compaction,
                                       test_shipped_daemon_has_no_seams, NULL});
    return s;
}

/* The daemon under test is bloomgated_clock, beside bloomgated's build
 * directory's tests/lib (or $BLOOMGATED_CLOCK); $BLOOMGATED stays known as
 * the shipped one. */
int main(void)
{
    static char shipped[4096], clocked[4096];
    const char *d = getenv("BLOOMGATED");
    snprintf(shipped, sizeof(shipped), "%s", d && *d ? d : "./bloomgated");
    const char *c = getenv("BLOOMGATED_CLOCK");
    if (c && *c) {
        snprintf(clocked, sizeof(clocked), "%s", c);
    } else {
        const char *slash = strrchr(shipped, '/');
        int dir = slash ? (int)(slash - shipped) : 1;
        snprintf(clocked, sizeof(clocked), "%.*s/tests/lib/bloomgated_clock", dir,
                 slash ? shipped : ".");
    }
    setenv("BLOOMGATED_SHIPPED", shipped, 1);
    setenv("BLOOMGATED", clocked, 1);
    return dh_run_suite(window_suite());
}
