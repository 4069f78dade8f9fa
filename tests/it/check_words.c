/* A word list served by the real daemon: built by the real tool (`bloomgate
 * build --format words`), scanned over the line protocol (SCAN) and HTTP
 * (POST .../scan, text/plain and JSON), the two fronts agreeing; every
 * offset checked against the text as sent, found in it by the test (so a
 * full-width word, one with symbols or a zero-width space inside, a
 * traditional Chinese spelling and a decomposed accent each point at their
 * own bytes); exceptions; the mask option; the cap on matches and the limit
 * on text size; the lookups refused on a words filter and SCAN refused
 * on another kind; INFO; a rebuilt list swapped in on SIGHUP; and a config
 * whose words_* setting disagrees with the file refused, by --check-config
 * as by start-up. */
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
#include "words/words.h"

#define WORDS_LINE_OVER (WORDS_MAX_LINE + 10) /* a list line over the limit */

#define LIST "fuck\nass\n@@class\n# a comment\n成人\n@@成人牙刷\n赌博\ncafé\n"

/* The text as sent, and each listed word's place in it, as the pieces the
 * scan must find (in order), each as written in the text. */
#define T_FULLWIDTH "ＦＵＣＫ"
#define T_DOTS "f.u.c.k"
#define T_ZH "成人"
#define T_ZWSP                                                                                     \
    "fu\xe2\x80\x8b"                                                                               \
    "ck"
#define T_TRAD "賭博"
#define T_ACCENT "cafe\xcc\x81"
static const char text[] = "Hello " T_FULLWIDTH " and " T_DOTS ", class 成人牙刷 " T_ZH
                           "电影 " T_ZWSP " " T_TRAD " " T_ACCENT "!";
static const struct {
    const char *piece, *word;
} want[] = {{T_FULLWIDTH, "fuck"}, {T_DOTS, "fuck"}, {T_ZH "电影", "成人"},
            {T_ZWSP, "fuck"},      {T_TRAD, "赌博"}, {T_ACCENT, "café"}};
#define N_WANT (sizeof(want) / sizeof(want[0]))

/* Bytes [start, end) of want[i] in text: found by search, the first place
 * after the previous one. */
static void span(size_t i, size_t *start, size_t *end)
{
    const char *from = text;
    for (size_t j = 0; j <= i; j++) {
        const char *p = strstr(from, want[j].piece);
        ck_assert_ptr_nonnull(p);
        *start = (size_t)(p - text);
        from = p + strlen(want[j].piece);
    }
    /* 成人电影's match is 成人 alone. */
    *end = *start + (strcmp(want[i].word, "成人") == 0 ? strlen(T_ZH) : strlen(want[i].piece));
}

/* Build dir/name from list with the real tool, extra options before it. */
static void build(struct dh_daemon *d, const char *name, const char *list, const char *opt)
{
    char in[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_write_file(d, "words.txt", list, strlen(list));
    dh_path(d, "words.txt", in);
    dh_path(d, name, out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--format", "words", "-o", out, in, opt, NULL};
    if (!opt)
        argv[7] = NULL;
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build --format words failed (status %d); see %s", st, log);
}

/* bad: the list above; ex: an exact filter. */
static struct dh_daemon *start(void)
{
    struct dh_daemon *d = dh_new();
    build(d, "bad.bloom", LIST, NULL);
    static const char *const ex[] = {"a"};
    dh_build_filter(d, "ex.bloom", ex, 1, 100, 1e-4);
    dh_write_config(d, "threads 2\n"
                       "log_level info\n"
                       "http_listen 127.0.0.1:0\n"
                       "scan_max_text 4k\n"
                       "scan_max_matches 8\n"
                       "filter bad {\n file @DIR@/bad.bloom\n keys words\n words_zh on\n}\n"
                       "filter ex {\n file @DIR@/ex.bloom\n}\n");
    dh_start(d, NULL);
    return d;
}

static void http(struct dh_daemon *d, const char *target, const char *headers, const char *body,
                 struct hc_resp *r)
{
    struct hc_conn h;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_msg(hc_request(&h, "POST", target, headers, body, strlen(body), r, DH_TIMEOUT_MS) ==
                      0,
                  "POST %s: %s", target, h.err);
    hc_close(&h);
}

/* The line reply the list and the text call for. */
static void want_line(char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "FOUND %zu", N_WANT);
    for (size_t i = 0; i < N_WANT; i++) {
        size_t s, e;
        span(i, &s, &e);
        k += (size_t)snprintf(out + k, cap - k, " %s %zu %zu", want[i].word, s, e);
    }
}

/* The HTTP answer's matches, as JSON. */
static void want_json(char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "{\"blocked\":true,\"matches\":[");
    for (size_t i = 0; i < N_WANT; i++) {
        size_t s, e;
        span(i, &s, &e);
        k += (size_t)snprintf(out + k, cap - k, "%s{\"word\":\"%s\",\"start\":%zu,\"end\":%zu}",
                              i ? "," : "", want[i].word, s, e);
    }
    snprintf(out + k, cap - k, "],\"capped\":false");
}

START_TEST(test_line_offsets)
{
    struct dh_daemon *d = start();
    struct dh_conn *c = dh_connect(d);
    char req[512], line[1024];
    snprintf(req, sizeof(req), "SCAN bad %s", text);
    want_line(line, sizeof(line));
    ck_assert_str_eq(dh_cmd(c, req), line);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad a class act, 买成人牙刷, scunthorpe"), "CLEAN");
    /* The text is the rest of the line: a leading space counts. */
    ck_assert_str_eq(dh_cmd(c, "SCAN bad  ass"), "FOUND 1 ass 1 4");
    ck_assert_str_eq(dh_cmd(c, "scan bad ASS\t!"), "FOUND 1 ass 0 3");
    dh_finish(d);
}
END_TEST

START_TEST(test_http_offsets_and_mask)
{
    struct dh_daemon *d = start();
    char w[2048], got[4096];
    want_json(w, sizeof(w));
    struct hc_resp r;
    http(d, "/v1/filters/bad/scan", "Content-Type: text/plain; charset=utf-8\r\n", text, &r);
    ck_assert_int_eq(r.status, 200);
    snprintf(got, sizeof(got), "%s}", w);
    ck_assert_str_eq(r.body, got);
    hc_resp_free(&r);
    /* The same text in JSON: the offsets are the text's, not the body's. */
    char body[1024];
    snprintf(body, sizeof(body), "{\"text\": \"%s\", \"mask\": \"#\"}", text);
    http(d, "/v1/filters/bad/scan", "Content-Type: application/json\r\n", body, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_msg(strncmp(r.body, w, strlen(w)) == 0, "got %s\nwant %s...", r.body, w);
    /* Each matched code point one '#'. */
    char masked[512];
    size_t k = 0;
    for (size_t b = 0, i = 0; text[b]; b++) {
        size_t s = 0, e = 0;
        while (i < N_WANT && (span(i, &s, &e), e <= b))
            i++;
        bool in = i < N_WANT && b >= s && b < e;
        if (!in)
            masked[k++] = text[b];
        else if (((unsigned char)text[b] & 0xC0) != 0x80)
            masked[k++] = '#';
    }
    masked[k] = '\0';
    snprintf(got, sizeof(got), "%s,\"masked\":\"%s\"}", w, masked);
    ck_assert_str_eq(r.body, got);
    hc_resp_free(&r);
    /* The query's mask, on a text/plain body. */
    http(d, "/v1/filters/bad/scan?mask=%2A", NULL, "no, ＦＵＣＫ!", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"blocked\":true,\"matches\":[{\"word\":\"fuck\",\"start\":4,"
                             "\"end\":16}],\"capped\":false,\"masked\":\"no, ****!\"}");
    hc_resp_free(&r);
    http(d, "/v1/filters/bad/scan", NULL, "clean text", &r);
    ck_assert_str_eq(r.body, "{\"blocked\":false,\"matches\":[],\"capped\":false}");
    hc_resp_free(&r);
    http(d, "/v1/filters/bad/scan?mask=ab", NULL, "x", &r);
    ck_assert_int_eq(r.status, 400);
    hc_resp_free(&r);
    http(d, "/v1/filters/bad/scan", "Content-Type: application/json\r\n", "{\"txt\":1}", &r);
    ck_assert_int_eq(r.status, 400);
    hc_resp_free(&r);
    dh_finish(d);
}
END_TEST

START_TEST(test_limits_and_kinds)
{
    struct dh_daemon *d = start();
    struct dh_conn *c = dh_connect(d);
    /* Nine matches, eight returned, and said so. */
    const char *nine = "SCAN bad ass ass ass ass ass ass ass ass ass";
    const char *r = dh_cmd(c, nine);
    ck_assert_msg(strncmp(r, "FOUND 8+ ass 0 3 ass 4 7 ", 25) == 0, "%s", r);
    struct hc_resp h;
    http(d, "/v1/filters/bad/scan", NULL, nine + 9, &h);
    ck_assert_int_eq(h.status, 200);
    ck_assert_ptr_nonnull(strstr(h.body, "\"capped\":true"));
    hc_resp_free(&h);
    /* scan_max_text 4k: a longer text is refused, whole. */
    size_t n = 4097;
    char *big = malloc(n + 16);
    memcpy(big, "SCAN bad ", 9);
    memset(big + 9, 'a', n);
    big[9 + n] = '\0';
    r = dh_cmd(c, big);
    ck_assert_msg(strncmp(r, "ERR text_too_long ", 18) == 0, "%s", r);
    http(d, "/v1/filters/bad/scan", NULL, big + 9, &h);
    ck_assert_int_eq(h.status, 413);
    hc_resp_free(&h);
    free(big);
    /* Other verbs on a words filter, SCAN on another kind. */
    r = dh_cmd(c, "CHECK bad fuck");
    ck_assert_msg(strncmp(r, "ERR wrong_kind ", 15) == 0 && strstr(r, "SCAN"), "%s", r);
    r = dh_cmd(c, "MATCH bad fuck");
    ck_assert_msg(strncmp(r, "ERR wrong_kind ", 15) == 0, "%s", r);
    r = dh_cmd(c, "SCAN ex a");
    ck_assert_msg(strncmp(r, "ERR wrong_kind ", 15) == 0 && strstr(r, "exact"), "%s", r);
    r = dh_cmd(c, "SCAN nope a");
    ck_assert_msg(strncmp(r, "ERR unknown_filter ", 19) == 0, "%s", r);
    r = dh_cmd(c, "SCAN bad");
    ck_assert_msg(strncmp(r, "ERR wrong_arity ", 16) == 0, "%s", r);
    http(d, "/v1/filters/ex/scan", NULL, "a", &h);
    ck_assert_int_eq(h.status, 400);
    ck_assert_ptr_nonnull(strstr(h.body, "words filter"));
    hc_resp_free(&h);
    r = dh_cmd(c, "INFO bad");
    ck_assert_msg(strstr(r, "\"keys\":\"words\"") && strstr(r, "\"entries\":5") &&
                      strstr(r, "\"exceptions\":2") && strstr(r, "\"zh\":true"),
                  "%s", r);
    dh_finish(d);
}
END_TEST

START_TEST(test_sighup_swap)
{
    struct dh_daemon *d = start();
    struct dh_conn *c = dh_connect(d);
    ck_assert_str_eq(dh_cmd(c, "SCAN bad zzyzx road"), "CLEAN");
    build(d, "bad.bloom", LIST "zzyzx\n", NULL);
    ck_assert_int_eq(dh_signal(d, SIGHUP), 0);
    const char *r = NULL;
    for (int i = 0; i < 1000; i++) { /* polled, up to DH_TIMEOUT_MS */
        r = dh_cmd(c, "SCAN bad zzyzx road");
        if (strcmp(r, "CLEAN") != 0)
            break;
        nanosleep(&(struct timespec){0, DH_TIMEOUT_MS * 1000000L / 1000}, NULL);
    }
    ck_assert_str_eq(r, "FOUND 1 zzyzx 0 5");
    dh_finish(d);
}
END_TEST

/* A whole file, NUL-terminated (malloc'ed); its length in *len. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: cannot open", path);
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            buf = realloc(buf, cap *= 2);
            ck_assert_ptr_nonnull(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* build --format words --rejects FILE: every rejected line of every input
 * (more of them than the eight the summary names on stderr), in the order
 * read, each as INPUT:OFFSET, the reason, why, the line as read: the shape
 * of the other formats' rejects files. Offsets are found by the test as it
 * writes the lists. */
START_TEST(test_rejects_file)
{
    char long_word[140], long_line[WORDS_LINE_OVER + 1];
    memset(long_word, 'a', sizeof(long_word) - 1); /* 139 letters: over 128 */
    long_word[sizeof(long_word) - 1] = '\0';
    memset(long_line, 'x', sizeof(long_line) - 1); /* over 4096 bytes */
    long_line[sizeof(long_line) - 1] = '\0';
    /* Each list: its lines and the reason each is rejected for (NULL: kept). */
    static const struct {
        const char *line, *reason;
    } a_lines[] = {{"fuck", NULL},
                   {"bad\xffword", "invalid-utf8"},
                   {"# a comment", NULL},
                   {"...", "only-skipped"},
                   {"", NULL},
                   {NULL, "word-too-long"}, /* long_word */
                   {"@@", "nothing-listed"},
                   {"成人", NULL},
                   {NULL, "line-too-long"}, /* long_line */
                   {"@@*foo", "exception-star"},
                   {"caf\xc3", "invalid-utf8"},
                   {"\xe3\x80\x82\xe3\x80\x82", "only-skipped"}, /* 。。 */
                   {"*", "nothing-listed"},
                   {"ass", NULL}},
      b_lines[] = {{"赌博", NULL}, {"@@ \r", "nothing-listed"}, {"zzyzx\r", NULL}};
    struct dh_daemon *d = dh_new();
    char expect[16384] = "", path[2][DH_PATH_MAX];
    size_t nrej = 0;
    for (int f = 0; f < 2; f++) {
        size_t n = f ? sizeof(b_lines) / sizeof(b_lines[0]) : sizeof(a_lines) / sizeof(a_lines[0]);
        char list[16384] = "";
        for (size_t i = 0; i < n; i++) {
            const char *line = f ? b_lines[i].line : a_lines[i].line;
            const char *reason = f ? b_lines[i].reason : a_lines[i].reason;
            if (!line)
                line = strcmp(reason, "word-too-long") == 0 ? long_word : long_line;
            size_t off = strlen(list);
            if (reason) {
                /* the why is the reason's text: not checked here, past the second tab */
                snprintf(expect + strlen(expect), sizeof(expect) - strlen(expect),
                         "%s:%zu\t%s\t\t%s\n", f ? "b.txt" : "a.txt", off, reason, line);
                nrej++;
            }
            ck_assert_uint_lt(off + strlen(line) + 1, sizeof(list));
            strcat(strcat(list, line), "\n");
        }
        dh_write_file(d, f ? "b.txt" : "a.txt", list, strlen(list));
        dh_path(d, f ? "b.txt" : "a.txt", path[f]);
    }
    ck_assert_uint_gt(nrej, WORDS_REJECTS_KEPT);
    char out[DH_PATH_MAX], rej[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_path(d, "bad.bloom", out);
    dh_path(d, "bad.rejects", rej);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--format", "words", "-o", out,
                          "--rejects",    rej,     path[0],    path[1], NULL};
    ck_assert_msg(dh_run(argv, log, 60000) == 0, "build --rejects failed; see %s", log);
    size_t len;
    char *got = read_all(rej, &len), *summary = read_all(log, &len);
    char count[64];
    snprintf(count, sizeof(count), "%zu rejected", nrej);
    ck_assert_msg(strstr(summary, count) && strstr(summary, rej), "%s", summary);
    /* Line by line: the input (the path as given, then the offset), the
     * reason, a why, then the line exactly; the whys dropped from got to
     * compare with expect. */
    char *p = got, *w = expect;
    size_t lines = 0;
    while (*p) {
        char *nl = strchr(p, '\n'), *t1 = strchr(p, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL,
             *t3 = t2 ? strchr(t2 + 1, '\t') : NULL;
        ck_assert_msg(nl && t3 && t3 < nl && t3 > t2 + 1, "rejects line %zu: %.80s", lines, p);
        const char *wnl = strchr(w, '\n');
        ck_assert_msg(wnl != NULL, "more rejects than wanted: %.80s", p);
        /* path[f] ends in the name expect holds: compare from the name on */
        const char *slash = memrchr(p, '/', (size_t)(t1 - p));
        ck_assert_msg(slash && strncmp(p, path[0], (size_t)(slash - p)) == 0, "%.80s", p);
        size_t head = (size_t)(t2 - slash - 1), tail = (size_t)(nl - t3);
        ck_assert_msg(head + 1 + tail == (size_t)(wnl - w) && memcmp(slash + 1, w, head + 1) == 0 &&
                          memcmp(t3, w + head + 1, tail) == 0,
                      "rejects line %zu:\n got    %.*s\n wanted %.*s", lines, (int)(nl - p), p,
                      (int)(wnl - w), w);
        w = (char *)wnl + 1;
        p = nl + 1;
        lines++;
    }
    ck_assert_msg(*w == '\0', "rejects file ends after %zu of %zu lines", lines, nrej);
    free(got);
    free(summary);
    dh_free(d);
}
END_TEST

/* `bloomgated --check-config` on d's config: its status, its output in out. */
static int check_config(struct dh_daemon *d, char *out, size_t cap)
{
    char path[DH_PATH_MAX];
    dh_path(d, "check-config.out", path);
    const char *argv[] = {dh_daemon_path(), "--check-config", "-c", d->conf, NULL};
    int st = dh_run(argv, path, 60000);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
    return st;
}

START_TEST(test_settings_must_agree)
{
    struct dh_daemon *d = dh_new();
    char out[4096];
    build(d, "bad.bloom", LIST, "--zh=off");
    /* --check-config says what start-up would: each setting that disagrees,
     * and passes the ones that agree. */
    static const struct {
        const char *stmt, *names;
    } cases[] = {{"words_zh on", "words_zh"},
                 {"words_nfkc off", "words_nfkc"},
                 {"words_whole_word off", "words_whole_word"},
                 {"words_skip \"P S\"", "words_skip"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char conf[256];
        snprintf(conf, sizeof(conf), "filter bad {\n file @DIR@/bad.bloom\n %s\n}\n",
                 cases[i].stmt);
        dh_write_config(d, conf);
        ck_assert_int_ne(check_config(d, out, sizeof(out)), 0);
        ck_assert_msg(strstr(out, cases[i].names) && strstr(out, "zh off") &&
                          strstr(out, "rebuild"),
                      "%s: %s", cases[i].stmt, out);
    }
    dh_write_config(d, "filter bad {\n file @DIR@/bad.bloom\n words_zh off\n words_nfkc on\n"
                       " words_whole_word on\n words_skip \"P S Cf space\"\n}\n");
    ck_assert_msg(check_config(d, out, sizeof(out)) == 0, "%s", out);
    dh_write_config(d, "filter bad {\n file @DIR@/bad.bloom\n words_zh on\n}\n");
    dh_spawn(d, NULL);
    ck_assert_int_eq(dh_wait_ready(d, DH_TIMEOUT_MS), -1);
    ck_assert_msg(dh_log_contains(d, "words_zh") && dh_log_contains(d, "zh off"), "%s",
                  dh_explain(d, "the log names the setting"));
    dh_free(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("words");
    const TTest *const tests[] = {test_line_offsets,
                                  test_http_offsets_and_mask,
                                  test_limits_and_kinds,
                                  test_sighup_swap,
                                  test_settings_must_agree,
                                  test_rejects_file,
                                  NULL};
    dh_add_case(s, "words", 300, tests);
    return dh_run_suite(s);
}
