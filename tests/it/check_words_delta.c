/* A served word list's run-time changes, through the real daemon: ADD,
 * MADD, REMOVE, ALLOW, UNALLOW (of an added and of a listed exception) on
 * the line protocol and over HTTP, each seen
 * by the next SCAN on the same connection; an added word normalised as the
 * list was; a listed word removed; an added exception covering a listed
 * word; bad items refused; the words_delta_max limit; INFO's delta; and
 * every acknowledged change kept by a restart (the journal replayed), by
 * a SIGHUP that swaps in a rebuilt list (replayed onto it), and by the
 * journal folded into a new file by `bloomgate build --journal`; and the
 * daemon's own folds (store/wordsfold.h) while a client adds without pause,
 * REMOVE, ADD again, ALLOW and UNALLOW across folds, a restart after folds
 * with more changes than words_delta_max, a fold that fails (the list file
 * gone), and one that waits for the reload of a rebuilt list file. */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"
#include "lib/line_client.h"

#define LIST "fuck\nass\n@@class\n@@kick ass\n成人\n@@成人牙刷\n"

static void build(struct dh_daemon *d, const char *list)
{
    char in[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_write_file(d, "words.txt", list, strlen(list));
    dh_path(d, "words.txt", in);
    dh_path(d, "bad.bloom", out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--format", "words", "-o", out, in, NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build --format words failed (status %d); see %s", st, log);
}

static struct dh_daemon *start(void)
{
    struct dh_daemon *d = dh_new();
    build(d, LIST);
    dh_write_config(d, "threads 2\n"
                       "http_listen 127.0.0.1:0\n"
                       "filter bad {\n file @DIR@/bad.bloom\n keys words\n words_delta_max 8\n"
                       " words_fold_after 0\n}\n"); /* the delta as it is: never folded */
    dh_start(d, NULL);
    return d;
}

static void http(struct dh_daemon *d, const char *target, const char *body, struct hc_resp *r)
{
    struct hc_conn h;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_msg(hc_request(&h, "POST", target, NULL, body, strlen(body), r, DH_TIMEOUT_MS) == 0,
                  "POST %s: %s", target, h.err);
    hc_close(&h);
}

/* What the changes below make the list find, asked on connection c. */
static void expect_changed(struct dh_conn *c)
{
    ck_assert_str_eq(dh_cmd(c, "SCAN bad zzyzx road"), "FOUND 1 zzyzx 0 5");
    ck_assert_str_eq(dh_cmd(c, "SCAN bad fuck"), "CLEAN");
    ck_assert_str_eq(dh_cmd(c, "SCAN bad hello ass, ass"), "FOUND 1 ass 11 14");
    ck_assert_str_eq(dh_cmd(c, "SCAN bad two  words"), "FOUND 1 two%20words 0 10");
    ck_assert_str_eq(dh_cmd(c, "SCAN bad asshole"), "FOUND 1 hole 3 7");
    /* The space between two Chinese letters is dropped: 刷牙刷 is one run,
     * yet the exception covers only the first 牙刷. */
    ck_assert_str_eq(dh_cmd(c, "SCAN bad 买成人牙刷 牙刷"), "FOUND 1 牙刷 16 22");
    /* A listed exception turned off: the listed word inside it is found. */
    ck_assert_str_eq(dh_cmd(c, "SCAN bad kick ass"), "FOUND 1 ass 5 8");
}

START_TEST(test_changes_seen_and_kept)
{
    struct dh_daemon *d = start();
    struct dh_conn *c = dh_connect(d);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad zzyzx road"), "CLEAN");
    /* Read-your-writes: the next SCAN on the connection finds it. */
    ck_assert_str_eq(dh_cmd(c, "ADD bad zzyzx"), "NEW");
    ck_assert_str_eq(dh_cmd(c, "SCAN bad zzyzx road"), "FOUND 1 zzyzx 0 5");
    /* Normalised as the list was: full width and case are the same word. */
    ck_assert_str_eq(dh_cmd(c, "ADD bad ＺＺＹＺＸ"), "EXISTS");
    ck_assert_str_eq(dh_cmd(c, "ADD bad ASS"), "EXISTS");
    /* A listed word removed; an exception added covers a listed word. */
    ck_assert_str_eq(dh_cmd(c, "REMOVE bad fuck nope"), "REMOVED ABSENT");
    /* UNALLOW of a listed exception turns it off until an ALLOW or a rebuild. */
    ck_assert_str_eq(dh_cmd(c, "SCAN bad kick ass"), "CLEAN");
    ck_assert_str_eq(dh_cmd(c, "UNALLOW bad kick%20ass kick%20ass"), "REMOVED ABSENT");
    ck_assert_str_eq(dh_cmd(c, "ALLOW bad hello%20ass"), "NEW");
    /* A phrase: %20 is a space; the list's exception covers an added word. */
    ck_assert_str_eq(dh_cmd(c, "MADD bad two%20words 牙刷"), "NEW NEW");
    /* Over HTTP, with `*` for no boundary. */
    struct hc_resp h;
    http(d, "/v1/filters/bad/add", "{\"items\":[\"*hole\"]}", &h);
    ck_assert_msg(h.status == 200 && strstr(h.body, "\"new\":[true]"), "%d %s", h.status, h.body);
    hc_resp_free(&h);
    http(d, "/v1/filters/bad/allow", "{\"items\":[\"no fuck given\"]}", &h);
    ck_assert_int_eq(h.status, 200);
    hc_resp_free(&h);
    http(d, "/v1/filters/bad/unallow", "{\"items\":[\"no fuck given\",\"never\"]}", &h);
    ck_assert_msg(h.status == 200 && strstr(h.body, "[true,false]"), "%d %s", h.status, h.body);
    hc_resp_free(&h);
    http(d, "/v1/filters/bad/scan", "asshole", &h);
    ck_assert_msg(h.status == 200 && strstr(h.body, "\"word\":\"hole\",\"start\":3,\"end\":7"),
                  "%d %s", h.status, h.body);
    hc_resp_free(&h);
    expect_changed(c);
    /* Items the list would reject are refused, nothing journaled. */
    const char *r = dh_cmd(c, "ADD bad ...");
    ck_assert_msg(strncmp(r, "ERR bad_item ", 13) == 0 && strstr(r, "skipped"), "%s", r);
    r = dh_cmd(c, "ALLOW bad *x");
    ck_assert_msg(strncmp(r, "ERR bad_item ", 13) == 0, "%s", r);
    r = dh_cmd(c, "CHECK bad zzyzx");
    ck_assert_msg(strncmp(r, "ERR wrong_kind ", 15) == 0, "%s", r);
    r = dh_cmd(c, "INFO bad");
    const char *dl = strstr(r, "\"delta\":{");
    ck_assert_msg(dl && strstr(dl, "\"words\":4") && strstr(dl, "\"exceptions\":1") &&
                      strstr(dl, "\"removed\":2") && strstr(dl, "\"entries\":5") &&
                      strstr(dl, "\"max\":8"),
                  "%s", r);
    /* The limit: 8 entries; two more fit, a request for four does not. */
    r = dh_cmd(c, "MADD bad w1 w2 w3 w4");
    ck_assert_msg(strncmp(r, "ERR limit ", 10) == 0 && strstr(r, "words_delta_max"), "%s", r);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad w1"), "CLEAN");
    ck_assert_str_eq(dh_cmd(c, "MADD bad w1 w2"), "NEW NEW");
    /* A restart replays the journal. */
    dh_restart(d);
    c = dh_connect(d);
    expect_changed(c);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad w2"), "FOUND 1 w2 0 2");
    /* A rebuilt list, swapped in on SIGHUP, takes the changes too. */
    build(d, LIST "newword\n");
    ck_assert_int_eq(dh_signal(d, SIGHUP), 0);
    for (int i = 0; i < 1000; i++) { /* polled, up to DH_TIMEOUT_MS */
        r = dh_cmd(c, "SCAN bad newword");
        if (strcmp(r, "CLEAN") != 0)
            break;
        nanosleep(&(struct timespec){0, DH_TIMEOUT_MS * 1000000L / 1000}, NULL);
    }
    ck_assert_str_eq(r, "FOUND 1 newword 0 7");
    expect_changed(c);
    /* Made permanent: the journal folded into a new file by the tool, the
     * journal retired, and a daemon on that file alone finds the same. */
    dh_stop_ok(d);
    char in[DH_PATH_MAX], out[DH_PATH_MAX], jn[DH_PATH_MAX], old[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_path(d, "words.txt", in);
    dh_path(d, "folded.bloom", out);
    dh_path(d, "bad.bloom.journal", jn);
    dh_path(d, "retired.journal", old);
    dh_path(d, "fold.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--format", "words", "-o", out,
                          "--journal",    jn,      in,         NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build --journal failed (status %d); see %s", st, log);
    char summary[4096] = "";
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    summary[fread(summary, 1, sizeof summary - 1, f)] = '\0';
    fclose(f);
    ck_assert_msg(strstr(summary, "journals: ") && strstr(summary, " changed the list") &&
                      !strstr(summary, "unreadable"),
                  "%s", summary);
    dh_path(d, "bad.bloom", in);
    ck_assert_int_eq(rename(jn, old), 0);
    ck_assert_int_eq(rename(out, in), 0);
    dh_start(d, NULL);
    c = dh_connect(d);
    expect_changed(c);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad w2"), "FOUND 1 w2 0 2");
    ck_assert_str_eq(dh_cmd(c, "SCAN bad newword"), "FOUND 1 newword 0 7");
    r = dh_cmd(c, "INFO bad");
    ck_assert_msg(strstr(r, "\"entries\":0"), "the folded list has no delta: %s", r);
    dh_finish(d);
}
END_TEST

/* INFO bad's generation, and whether its words.folded is set with an empty
 * delta (no words, exceptions or removals). */
static long info_fold(struct dh_conn *c, bool *folded)
{
    const char *r = dh_cmd(c, "INFO bad");
    json_error_t je;
    json_t *o = json_loads(r, 0, &je);
    ck_assert_msg(o != NULL, "INFO is not JSON (%s): %s", je.text, r);
    json_t *w = json_object_get(o, "words"), *d = json_object_get(w, "delta");
    long gen = (long)json_integer_value(json_object_get(o, "generation"));
    *folded = json_is_object(json_object_get(w, "folded")) &&
              json_integer_value(json_object_get(d, "entries")) == 0 &&
              json_integer_value(json_object_get(d, "removed")) == 0;
    json_decref(o);
    return gen;
}

/* Polls INFO until the list is folded at a generation above `above` (with
 * its delta empty, when `empty`); that generation. */
static long wait_folded(struct dh_conn *c, long above, bool empty)
{
    bool folded = false;
    long gen = 0;
    for (int i = 0; i < 600; i++) { /* 60 s */
        gen = info_fold(c, &folded);
        if ((folded || !empty) && gen > above)
            return gen;
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    }
    ck_abort_msg("not folded above generation %ld in 60 s (generation %ld)", above, gen);
    return 0;
}

/* A client that adds fwN and at once scans for it, until told to stop. */
struct f_writer {
    int port;
    atomic_bool stop;
    atomic_long acked; /* fw0 .. fw(acked-1) were added and found */
    char fail[256];
};

static void *f_main(void *arg)
{
    struct f_writer *w = arg;
    char err[128], want[64];
    struct dh_conn *c = dh_connect_port(w->port, err, sizeof(err));
    if (!c) {
        snprintf(w->fail, sizeof(w->fail), "connect: %s", err);
        return NULL;
    }
    for (long i = 0; !atomic_load(&w->stop); i++) {
        const char *l =
            dh_sendf(c, "ADD bad fw%ld\n", i) == 0 ? dh_read_line(c, DH_TIMEOUT_MS) : NULL;
        if (!l || strcmp(l, "NEW") != 0) {
            snprintf(w->fail, sizeof(w->fail), "ADD fw%ld: %s", i, l ? l : "no answer");
            break;
        }
        int n = snprintf(want, sizeof(want), "FOUND 1 fw%ld 0 ", i);
        l = dh_sendf(c, "SCAN bad fw%ld\n", i) == 0 ? dh_read_line(c, DH_TIMEOUT_MS) : NULL;
        if (!l || strncmp(l, want, (size_t)n) != 0) {
            snprintf(w->fail, sizeof(w->fail), "SCAN fw%ld after its ADD: %s", i,
                     l ? l : "no answer");
            break;
        }
        atomic_store(&w->acked, i + 1);
        /* A breath every ten adds: on a loaded machine the fold, at the
         * lowest priority, must still get some CPU. */
        if (i % 10 == 9)
            nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
    dh_close(c);
    return NULL;
}

/* Every fwN the writer acknowledged is found. */
static void expect_written(struct dh_conn *c, long n)
{
    char cmd[64], want[64];
    for (long i = 0; i < n; i++) {
        snprintf(cmd, sizeof(cmd), "SCAN bad fw%ld", i);
        snprintf(want, sizeof(want), "FOUND 1 fw%ld 0 %d", i, snprintf(NULL, 0, "fw%ld", i));
        ck_assert_str_eq(dh_cmd(c, cmd), want);
    }
}

/* The daemon's own fold (words_fold_after 1): the changes are compiled into
 * the list within seconds, INFO says so with the delta empty, and every
 * change is still seen; while a client adds and scans without pause across
 * three more folds, each add is seen by its next scan and by a scan after
 * them all; a restart (the file and the whole journal) finds the same. */
START_TEST(test_daemon_folds)
{
    struct dh_daemon *d = dh_new();
    build(d, LIST);
    dh_write_config(d, "threads 2\nhttp_listen 127.0.0.1:0\n"
                       "filter bad {\n file @DIR@/bad.bloom\n keys words\n words_delta_max 100000\n"
                       " words_fold_after 1\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    bool folded;
    long gen = info_fold(c, &folded);
    ck_assert(!folded);
    DH_EXPECT(c, "ADD bad zzyzx", "NEW");
    DH_EXPECT(c, "REMOVE bad fuck", "REMOVED");
    DH_EXPECT(c, "UNALLOW bad kick%20ass", "REMOVED");
    DH_EXPECT(c, "ALLOW bad hello%20ass", "NEW");
    DH_EXPECT(c, "MADD bad two%20words 牙刷 *hole", "NEW NEW NEW");
    expect_changed(c);
    gen = wait_folded(c, gen, true);
    expect_changed(c);
    /* /metrics says so too. */
    struct hc_conn h;
    struct hc_resp m;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_int_eq(hc_request(&h, "GET", "/metrics", NULL, NULL, 0, &m, DH_TIMEOUT_MS), 0);
    hc_close(&h);
    const char *ts = strstr(m.body, "\nbloomgate_words_folded_timestamp_seconds{filter=\"bad\"} ");
    ck_assert_msg(m.status == 200 &&
                      strstr(m.body, "\nbloomgate_words_delta_entries{filter=\"bad\"} 0\n") &&
                      strstr(m.body, "\nbloomgate_words_delta_max{filter=\"bad\"} 100000\n") &&
                      strstr(m.body, "\nbloomgate_words_delta_removed{filter=\"bad\"} 0\n") && ts &&
                      strtoll(strchr(ts + 1, '}') + 2, NULL, 10) > 0,
                  "%d %s", m.status, m.body);
    hc_resp_free(&m);
    /* Folded in, a change is an entry of the list like a listed one. */
    DH_EXPECT(c, "ADD bad zzyzx", "EXISTS");
    DH_EXPECT(c, "REMOVE bad fuck", "ABSENT");

    struct f_writer w = {.port = dh_port(d, 0)};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, f_main, &w), 0);
    long g = gen;
    for (int k = 0; k < 3 && !w.fail[0]; k++)
        g = wait_folded(c, g, false); /* adds go on meanwhile */
    atomic_store(&w.stop, true);
    pthread_join(t, NULL);
    ck_assert_msg(!w.fail[0], "%s", w.fail);
    long n = atomic_load(&w.acked);
    fprintf(stderr, "test_daemon_folds: %ld adds across %ld folds\n", n, g - gen);
    expect_written(c, n);
    expect_changed(c);
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    expect_written(c, n);
    expect_changed(c);
    dh_finish(d);
}
END_TEST

/* What m_main does to word mwN, by N % 4, and whether a scan finds it then:
 * ADD; ADD REMOVE; ADD REMOVE ADD; ADD ALLOW UNALLOW (the exception hides
 * the word for good, folded or not). */
static const struct {
    const char *verb[4], *answer[4];
    bool found;
} m_ops[4] = {
    {{"ADD"}, {"NEW"}, true},
    {{"ADD", "REMOVE"}, {"NEW", "REMOVED"}, false},
    {{"ADD", "REMOVE", "ADD"}, {"NEW", "REMOVED", "NEW"}, true},
    {{"ADD", "ALLOW", "UNALLOW"}, {"NEW", "NEW", "REMOVED"}, false},
};

/* A client that changes mwN as m_ops says and at once scans for it, until
 * told to stop: every kind of change meets the folds. */
static void *m_main(void *arg)
{
    struct f_writer *w = arg;
    char err[128], want[64];
    struct dh_conn *c = dh_connect_port(w->port, err, sizeof(err));
    if (!c) {
        snprintf(w->fail, sizeof(w->fail), "connect: %s", err);
        return NULL;
    }
    for (long i = 0; !atomic_load(&w->stop) && !w->fail[0]; i++) {
        for (int k = 0; k < 4 && m_ops[i % 4].verb[k] && !w->fail[0]; k++) {
            const char *verb = m_ops[i % 4].verb[k], *l = NULL;
            if (dh_sendf(c, "%s bad mw%ld\n", verb, i) == 0)
                l = dh_read_line(c, DH_TIMEOUT_MS);
            if (!l || strcmp(l, m_ops[i % 4].answer[k]) != 0)
                snprintf(w->fail, sizeof(w->fail), "%s mw%ld: %s", verb, i, l ? l : "no answer");
        }
        int n = snprintf(want, sizeof(want), "FOUND 1 mw%ld 0 ", i);
        const char *l = dh_sendf(c, "SCAN bad mw%ld\n", i) == 0 ? dh_read_line(c, DH_TIMEOUT_MS)
                                                                : NULL;
        if (!w->fail[0] && (!l || (m_ops[i % 4].found ? strncmp(l, want, (size_t)n) != 0
                                                      : strcmp(l, "CLEAN") != 0)))
            snprintf(w->fail, sizeof(w->fail), "SCAN mw%ld after its changes: %s", i,
                     l ? l : "no answer");
        if (!w->fail[0])
            atomic_store(&w->acked, i + 1);
        if (i % 10 == 9) /* a breath, as f_main */
            nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
    dh_close(c);
    return NULL;
}

static void expect_mixed(struct dh_conn *c, long n)
{
    char cmd[64], want[64];
    for (long i = 0; i < n; i++) {
        snprintf(cmd, sizeof(cmd), "SCAN bad mw%ld", i);
        snprintf(want, sizeof(want), "FOUND 1 mw%ld 0 %d", i, snprintf(NULL, 0, "mw%ld", i));
        ck_assert_str_eq(dh_cmd(c, cmd), m_ops[i % 4].found ? want : "CLEAN");
    }
}

/* REMOVE, ADD again, ALLOW and UNALLOW of words while folds compile and
 * publish: each answer and scan as without a fold, and all of them kept by
 * a restart. */
START_TEST(test_folds_mixed)
{
    struct dh_daemon *d = dh_new();
    build(d, LIST);
    dh_write_config(d, "threads 2\n"
                       "filter bad {\n file @DIR@/bad.bloom\n keys words\n words_delta_max 100000\n"
                       " words_fold_after 1\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    bool folded;
    long gen = info_fold(c, &folded), g = gen;
    struct f_writer w = {.port = dh_port(d, 0)};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, m_main, &w), 0);
    for (int k = 0; k < 3 && !w.fail[0]; k++)
        g = wait_folded(c, g, false);
    atomic_store(&w.stop, true);
    pthread_join(t, NULL);
    ck_assert_msg(!w.fail[0], "%s", w.fail);
    long n = atomic_load(&w.acked);
    fprintf(stderr, "test_folds_mixed: %ld words changed across %ld folds\n", n, g - gen);
    expect_mixed(c, n);
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    expect_mixed(c, n);
    dh_finish(d);
}
END_TEST

/* Folds keep words_delta_max for the changes waiting, but the journal
 * holds them all, and a restart replays the whole journal into the delta:
 * more entries than words_delta_max, which must not refuse the next ADD
 * (the first tick's fold is not waited for). */
START_TEST(test_restart_past_max)
{
    struct dh_daemon *d = dh_new();
    build(d, LIST);
    dh_write_config(d, "threads 2\n"
                       "filter bad {\n file @DIR@/bad.bloom\n keys words\n words_delta_max 4\n"
                       " words_fold_after 1\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    bool folded;
    long gen = info_fold(c, &folded);
    char cmd[64], want[64];
    for (int i = 0; i < 4; i++) { /* 8 words, 2 a fold */
        snprintf(cmd, sizeof(cmd), "MADD bad r%da r%db", i, i);
        ck_assert_str_eq(dh_cmd(c, cmd), "NEW NEW");
        gen = wait_folded(c, gen, true);
    }
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    ck_assert_str_eq(dh_cmd(c, "ADD bad after1"), "NEW");
    ck_assert_str_eq(dh_cmd(c, "SCAN bad after1"), "FOUND 1 after1 0 6");
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof(cmd), "SCAN bad r%db", i);
        snprintf(want, sizeof(want), "FOUND 1 r%db 0 3", i);
        ck_assert_str_eq(dh_cmd(c, cmd), want);
    }
    dh_finish(d);
}
END_TEST

/* How many times needle is in the latest run's log. */
static int log_count(struct dh_daemon *d, const char *needle)
{
    char *l = dh_log_read(d);
    int n = 0;
    for (const char *p = l; (p = strstr(p, needle)); p++)
        n++;
    free(l);
    return n;
}

/* A fold that fails (the list file gone): logged once, not tried again at
 * once, and the delta keeps serving the changes. */
START_TEST(test_fold_fails)
{
    struct dh_daemon *d = dh_new();
    build(d, LIST);
    dh_write_config(d, "threads 2\n"
                       "filter bad {\n file @DIR@/bad.bloom\n keys words\n words_delta_max 100\n"
                       " words_fold_after 1\n}\n");
    dh_start(d, NULL);
    char file[DH_PATH_MAX], away[DH_PATH_MAX];
    dh_path(d, "bad.bloom", file);
    dh_path(d, "away.bloom", away);
    ck_assert_int_eq(rename(file, away), 0);
    struct dh_conn *c = dh_connect(d);
    ck_assert_str_eq(dh_cmd(c, "ADD bad zzyzx"), "NEW");
    const char *failed = "fold of its run-time changes failed";
    for (int i = 0; i < 600 && !log_count(d, failed); i++) /* 60 s */
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    ck_assert_int_eq(log_count(d, failed), 1);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad zzyzx road"), "FOUND 1 zzyzx 0 5");
    ck_assert_str_eq(dh_cmd(c, "ADD bad zzyzy"), "NEW");
    ck_assert_str_eq(dh_cmd(c, "SCAN bad zzyzy"), "FOUND 1 zzyzy 0 5");
    nanosleep(&(struct timespec){3, 0}, NULL); /* three ticks: none tries again */
    ck_assert_int_eq(log_count(d, failed), 1);
    bool folded;
    info_fold(c, &folded);
    ck_assert(!folded);
    ck_assert_int_eq(rename(away, file), 0);
    dh_close(c);
    dh_restart(d); /* the file back: both changes replayed, and folded at once */
    c = dh_connect(d);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad zzyzx zzyzy"), "FOUND 2 zzyzx 0 5 zzyzy 6 11");
    info_fold(c, &folded);
    ck_assert(folded);
    dh_finish(d);
}
END_TEST

/* The list file rebuilt but not yet reloaded while changes wait: no fold
 * (it would serve the new list unasked); the SIGHUP then serves the new
 * list with the changes replayed onto it and folded in. */
START_TEST(test_fold_waits_for_reload)
{
    struct dh_daemon *d = dh_new();
    build(d, LIST);
    dh_write_config(d, "threads 2\n"
                       "filter bad {\n file @DIR@/bad.bloom\n keys words\n words_delta_max 100\n"
                       " words_fold_after 1\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    bool folded;
    long gen = info_fold(c, &folded);
    build(d, LIST "newword\n");
    ck_assert_str_eq(dh_cmd(c, "ADD bad zzyzx"), "NEW");
    ck_assert_str_eq(dh_cmd(c, "REMOVE bad fuck"), "REMOVED");
    const char *waits = "run-time changes not folded: its file changed";
    for (int i = 0; i < 600 && !log_count(d, waits); i++) /* 60 s */
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    ck_assert_int_eq(log_count(d, waits), 1);
    ck_assert_int_eq(info_fold(c, &folded), gen);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad newword zzyzx fuck"), "FOUND 1 zzyzx 8 13");
    ck_assert_int_eq(dh_signal(d, SIGHUP), 0);
    long g = wait_folded(c, gen, true);
    ck_assert_int_gt(g, gen);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad newword zzyzx fuck"),
                     "FOUND 2 newword 0 7 zzyzx 8 13");
    ck_assert_str_eq(dh_cmd(c, "ADD bad zzyzx"), "EXISTS");
    dh_finish(d);
}
END_TEST

/* A filter that takes its kind from its file (no `keys`): the word list
 * replaced by a file of another kind, not yet reloaded, while changes wait.
 * The fold loads it, finds it changed and waits for the reload, as for a
 * rebuilt list; the word list keeps serving. */
START_TEST(test_fold_file_other_kind)
{
    struct dh_daemon *d = dh_new();
    build(d, LIST);
    dh_write_config(d, "threads 2\n"
                       "filter bad {\n file @DIR@/bad.bloom\n words_fold_after 1\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    ck_assert_str_eq(dh_cmd(c, "ADD bad zzyzx"), "NEW");
    char in[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX], file[DH_PATH_MAX];
    dh_write_file(d, "plain.txt", "zzyzx\nother\n", 12);
    dh_path(d, "plain.txt", in);
    dh_path(d, "plain.bloom", out);
    dh_path(d, "plain.log", log);
    dh_path(d, "bad.bloom", file);
    const char *argv[] = {dh_tool_path(), "build", "-o", out, in, NULL};
    ck_assert_int_eq(dh_run(argv, log, 60000), 0);
    ck_assert_int_eq(rename(out, file), 0);
    const char *waits = "run-time changes not folded: its file changed";
    for (int i = 0; i < 600 && !log_count(d, waits); i++) /* 60 s */
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    ck_assert_msg(log_count(d, waits) == 1, "%s", dh_explain(d, "no fold, no crash"));
    ck_assert_str_eq(dh_cmd(c, "SCAN bad zzyzx road"), "FOUND 1 zzyzx 0 5");
    dh_finish(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("words_delta");
    const TTest *const tests[] = {test_changes_seen_and_kept, test_daemon_folds,
                                  test_restart_past_max, test_fold_fails,
                                  test_folds_mixed, test_fold_waits_for_reload,
                                  test_fold_file_other_kind, NULL};
    dh_add_case(s, "words_delta", 300, tests);
    return dh_run_suite(s);
}
