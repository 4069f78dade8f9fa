/* A served word list's run-time changes, through the real daemon: ADD,
 * MADD, REMOVE, ALLOW, UNALLOW (of an added and of a listed exception) on
 * the line protocol and over HTTP, each seen
 * by the next SCAN on the same connection; an added word normalised as the
 * list was; a listed word removed; an added exception covering a listed
 * word; bad items refused; the words_delta_max limit; INFO's delta; and
 * every acknowledged change kept by a restart (the journal replayed), by
 * a SIGHUP that swaps in a rebuilt list (replayed onto it), and by the
 * journal folded into a new file by `bloomgate build --journal`. */
#include "config.h"

#include <check.h>
#include <signal.h>
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
                       "filter bad {\n file @DIR@/bad.bloom\n keys words\n words_delta_max 8\n}\n");
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

int main(void)
{
    Suite *s = suite_create("words_delta");
    const TTest *const tests[] = {test_changes_seen_and_kept, NULL};
    dh_add_case(s, "words_delta", 300, tests);
    return dh_run_suite(s);
}
