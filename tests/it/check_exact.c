/* The exact phase in the real daemon (issue 30): filters built with
 * `--exact` at a false-positive rate of 0.3, so that the bits answer YES for
 * hundreds of absent items, served beside the same filters built without
 * the table (same seed, so the same bits). With the table no absent item is
 * answered YES, on the line protocol (CHECK's fast path, MCHECK's batch) and
 * over HTTP, every listed one still is, and INFO counts the false positives
 * caught; without it some absent items are YES (so the test can fail). ADDs
 * and REMOVEs go to the table's delta and survive a restart and a reload of
 * a rebuilt file (the journal replayed into a new delta); a table that is not the one the filter
 * names is refused at start-up with a clear error. */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exact/exact.h"
#include "lib/daemon_harness.h"
#include "lib/http_client.h"
#include "tool/build.h"

#define N 2000      /* listed items */
#define ABSENT 2000 /* absent probes */
#define BATCH 50
#define FPR 0.3

/* Build name from N items "listed-I" (url keys: "http://listed.example/I"),
 * with an exact table of kind exact (0: none). The seed is fixed, so two
 * builds differ only in the table. */
static void build(struct dh_daemon *d, const char *name, bool url, int exact)
{
    char list[DH_PATH_MAX], out[DH_PATH_MAX], ln[DH_PATH_MAX];
    snprintf(ln, sizeof(ln), "%s.items", name);
    dh_path(d, ln, list);
    dh_path(d, name, out);
    FILE *f = fopen(list, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < N; i++)
        fprintf(f, url ? "http://listed.example/%d\n" : "listed-%d\n", i);
    ck_assert_int_eq(fclose(f), 0);
    const char *inputs[] = {list};
    struct build_opts o = {
        .inputs = inputs,
        .n_inputs = 1,
        .output = out,
        .layout = FILTER_BLOCKED,
        .keys = url ? FILTER_KEYS_URL : FILTER_KEYS_EXACT,
        .format = url ? LISTS_URLS : LISTS_PLAIN,
        .capacity = N,
        .fpr = FPR,
        .threads = 2,
        .seed = 0x5eedb10f,
        .exact = exact,
    };
    struct build_result res;
    char err[1024];
    ck_assert_msg(build_run(&o, &res, err, sizeof(err)) == 0, "building %s: %s", out, err);
    ck_assert_uint_eq(res.exact_count, exact ? N : 0);
}

/* The items a probe names: absent ones "absent-I" (url: a URL below an
 * unlisted path), listed ones as built. */
static void item(char *out, size_t cap, bool url, bool listed, int i)
{
    if (url)
        snprintf(out, cap, "http://%s.example/%d", listed ? "listed" : "absent", i);
    else
        snprintf(out, cap, "%s-%d", listed ? "listed" : "absent", i);
}

/* YES answers of filter to count items (listed or not), by MCHECK batches. */
static int mcheck_yes(struct dh_conn *c, const char *filter, bool url, bool listed, int count)
{
    static char req[BATCH * 64 + 64];
    char it[64];
    int yes = 0;
    for (int base = 0; base < count; base += BATCH) {
        size_t n = (size_t)snprintf(req, sizeof(req), "MCHECK %s", filter);
        for (int i = base; i < base + BATCH && i < count; i++) {
            item(it, sizeof(it), url, listed, i);
            n += (size_t)snprintf(req + n, sizeof(req) - n, " %s", it);
        }
        const char *got = dh_cmd(c, req);
        for (const char *p = got; (p = strstr(p, "YES")) != NULL; p += 3)
            yes++;
    }
    return yes;
}

/* YES answers of filter to count one-item CHECKs (the line front's ring for
 * an exact filter without a table, cmd_run with one). */
static int check_yes(struct dh_conn *c, const char *filter, bool url, bool listed, int count)
{
    char req[128], it[64];
    int yes = 0;
    for (int i = 0; i < count; i++) {
        item(it, sizeof(it), url, listed, i);
        snprintf(req, sizeof(req), "CHECK %s %s", filter, it);
        const char *got = dh_cmd(c, req);
        ck_assert_msg(strcmp(got, "YES") == 0 || strcmp(got, "NO") == 0, "%s: %s", req, got);
        yes += strcmp(got, "YES") == 0;
    }
    return yes;
}

/* YES answers of GET /v1/filters/FILTER/check to count absent items. */
static int http_yes(struct dh_daemon *d, const char *filter, bool url, int count)
{
    struct hc_conn h;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    char target[256], it[64];
    int yes = 0;
    for (int i = 0; i < count; i++) {
        item(it, sizeof(it), url, false, i);
        snprintf(target, sizeof(target), "/v1/filters/%s/check?item=%s", filter, it);
        struct hc_resp r;
        ck_assert_msg(hc_request(&h, "GET", target, NULL, NULL, 0, &r, DH_TIMEOUT_MS) == 0,
                      "%s: %s", target, h.err);
        ck_assert_msg(r.status == 200, "%s: %d %s", target, r.status, r.body);
        yes += strstr(r.body, "\"present\":true") != NULL;
        hc_resp_free(&r);
    }
    hc_close(&h);
    return yes;
}

/* INFO filter's exact object: field (a number), or -1 if there is none. */
static long long info_exact(struct dh_conn *c, const char *filter, const char *field)
{
    char req[64];
    snprintf(req, sizeof(req), "INFO %s", filter);
    const char *line = dh_cmd(c, req);
    json_error_t jerr;
    json_t *j = json_loads(line, 0, &jerr);
    ck_assert_msg(j != NULL, "%s", line);
    json_t *x = json_object_get(j, "exact");
    long long v = json_is_object(x) ? json_integer_value(json_object_get(x, field)) : -1;
    json_decref(j);
    return v;
}

START_TEST(test_no_false_positive)
{
    struct dh_daemon *d = dh_new();
    build(d, "plain.bf", false, 0);
    build(d, "exact.bf", false, EXACT_KIND_FP);
    build(d, "keys.bf", false, EXACT_KIND_KEYS);
    build(d, "uplain.bf", true, 0);
    build(d, "uexact.bf", true, EXACT_KIND_FP);
    dh_write_config(d, "threads 2\nhttp_listen 127.0.0.1:0\n"
                       "filter plain {\n file @DIR@/plain.bf\n}\n"
                       "filter exact {\n file @DIR@/exact.bf\n}\n"
                       "filter keys {\n file @DIR@/keys.bf\n}\n"
                       "filter uplain {\n file @DIR@/uplain.bf\n}\n"
                       "filter uexact {\n file @DIR@/uexact.bf\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);

    /* Without the table, the bits at 0.3 answer YES for absent items. */
    int fp_batch = mcheck_yes(c, "plain", false, false, ABSENT);
    int fp_single = check_yes(c, "plain", false, false, ABSENT);
    ck_assert_msg(fp_batch > ABSENT / 20, "only %d false positives at fpr %g", fp_batch, FPR);
    ck_assert_int_eq(fp_single, fp_batch);
    ck_assert_int_gt(mcheck_yes(c, "uplain", true, false, ABSENT), ABSENT / 20);
    ck_assert_int_eq(info_exact(c, "plain", "confirmations"), -1);

    /* With it, none; every listed item still YES. */
    const char *const fl[] = {"exact", "keys"};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(mcheck_yes(c, fl[k], false, false, ABSENT), 0);
        ck_assert_int_eq(check_yes(c, fl[k], false, false, ABSENT), 0);
        ck_assert_int_eq(mcheck_yes(c, fl[k], false, true, N), N);
        ck_assert_int_eq(check_yes(c, fl[k], false, true, 200), 200);
        /* The same bits: each of the plain filter's false positives was
         * caught, once by MCHECK, once by CHECK. */
        ck_assert_int_eq(info_exact(c, fl[k], "false_positives_caught"), 2 * fp_batch);
        ck_assert_int_eq(info_exact(c, fl[k], "confirmations"), 2 * fp_batch + N + 200);
        ck_assert_int_eq(info_exact(c, fl[k], "entries"), N);
    }
    ck_assert_int_eq(mcheck_yes(c, "uexact", true, false, ABSENT), 0);
    ck_assert_int_eq(check_yes(c, "uexact", true, false, 300), 0);
    ck_assert_int_eq(mcheck_yes(c, "uexact", true, true, N), N);
    DH_EXPECT(c, "MATCH uexact http://listed.example/7?x=1", "MATCH listed.example/7");

    /* HTTP: the same. */
    ck_assert_int_gt(http_yes(d, "plain", false, 400), 0);
    ck_assert_int_eq(http_yes(d, "exact", false, ABSENT), 0);
    ck_assert_int_eq(http_yes(d, "uexact", true, 400), 0);
    struct hc_conn h;
    struct hc_resp r;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_int_eq(hc_request(&h, "GET", "/v1/filters/exact/check?item=listed-5", NULL, NULL, 0,
                                &r, DH_TIMEOUT_MS),
                     0);
    ck_assert_str_eq(
        r.body, "{\"filter\":\"exact\",\"item\":\"listed-5\",\"present\":true,\"confirmed\":true}");
    hc_resp_free(&r);
    ck_assert_int_eq(hc_request(&h, "GET", "/metrics", NULL, NULL, 0, &r, DH_TIMEOUT_MS), 0);
    ck_assert_msg(strstr(r.body, "bloomgate_exact_false_positives_caught_total{filter=\"exact\"}"),
                  "no exact metrics");
    hc_resp_free(&r);
    hc_close(&h);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* One-item CHECKs of filters with and without a table, interleaved in one
 * pipelined write, so that the line front's ring holds both kinds at once,
 * a CHECK of one answers a CHECK of the other when the ring is full, and the
 * ring is drained in the middle (a keys table's CHECK, PING) and at the end
 * of each read: each answer
 * is the one its filter gives alone (MCHECK), and the table's counters grow
 * by the YES answers of the bits it was asked to confirm. */
START_TEST(test_pipelined_mix)
{
    struct dh_daemon *d = dh_new();
    build(d, "plain.bf", false, 0);
    build(d, "exact.bf", false, EXACT_KIND_FP);
    build(d, "keys.bf", false, EXACT_KIND_KEYS);
    dh_write_config(d, "threads 1\n"
                       "filter plain {\n file @DIR@/plain.bf\n}\n"
                       "filter exact {\n file @DIR@/exact.bf\n}\n"
                       "filter keys {\n file @DIR@/keys.bf\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    enum { M = 600, PER = 14 };
    static bool bits[M]; /* the plain filter's answer for absent-I */
    for (int i = 0; i < M; i++) {
        char req[64];
        snprintf(req, sizeof(req), "MCHECK plain absent-%d", i);
        bits[i] = strcmp(dh_cmd(c, req), "YES") == 0;
    }
    static char buf[M * PER * 40];
    static const char *want[M * PER + 1];
    size_t len = 0, n = 0;
    long long fps = 0;
#define REQ(ans, ...)                                                                              \
    do {                                                                                           \
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, __VA_ARGS__);                        \
        want[n++] = (ans);                                                                         \
    } while (0)
    for (int i = 0; i < M; i++) {
        const char *b = bits[i] ? "YES" : "NO";
        REQ(b, "CHECK plain absent-%d\n", i);
        REQ("NO", "CHECK exact absent-%d\n", i);
        REQ(b, "CHECK plain absent-%d\n", i);
        REQ("YES", "CHECK exact listed-%d\n", i);
        for (int k = 0; k < 8; k++) /* the ring full of them: each answers an older one */
            REQ("YES", "CHECK plain listed-%d\n", (i + k) % M);
        REQ("NO", "CHECK keys absent-%d\n", i);
        if (i % 50 == 49)
            REQ("PONG", "PING\n");
        else
            REQ(b, "CHECK plain absent-%d\n", i);
        fps += bits[i];
    }
#undef REQ
    ck_assert_int_eq(dh_send(c, buf, len, DH_TIMEOUT_MS), 0);
    char **got = dh_read_lines(c, n, DH_TIMEOUT_MS);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strcmp(got[i], want[i]) == 0, "reply %zu: %s, want %s", i, got[i], want[i]);
    dh_lines_free(got);
    ck_assert_int_eq(info_exact(c, "exact", "confirmations"), fps + M);
    ck_assert_int_eq(info_exact(c, "exact", "false_positives_caught"), fps);
    ck_assert_int_eq(info_exact(c, "keys", "false_positives_caught"), fps);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* The first absent item the plain filter's bits answer YES for: the item an
 * ADD must make exact, whose bits say "present" already. */
static int first_false_positive(struct dh_conn *c)
{
    char req[64];
    for (int i = 0; i < ABSENT; i++) {
        snprintf(req, sizeof(req), "CHECK plain absent-%d", i);
        if (strcmp(dh_cmd(c, req), "YES") == 0)
            return i;
    }
    ck_abort_msg("no false positive at fpr %g", FPR);
    return -1;
}

/* The answers an add and a remove must leave, before and after a restart. */
static void expect_changes(struct dh_conn *c, int fp)
{
    char req[96];
    snprintf(req, sizeof(req), "MCHECK exact absent-%d absent-new listed-3 listed-4", fp);
    DH_EXPECT(c, req, "YES YES NO YES");
    snprintf(req, sizeof(req), "CHECK exact absent-%d", fp);
    DH_EXPECT(c, req, "YES");
    DH_EXPECT(c, "CHECK exact listed-3", "NO");
    DH_EXPECT(c, "CHECK exact absent-new", "YES");
    ck_assert_int_eq(info_exact(c, "exact", "delta_added"), 2);
    ck_assert_int_eq(info_exact(c, "exact", "delta_removed"), 1);
}

START_TEST(test_adds_removes_restart)
{
    struct dh_daemon *d = dh_new();
    build(d, "plain.bf", false, 0);
    build(d, "exact.bf", false, EXACT_KIND_FP);
    dh_write_config(d, "threads 2\n"
                       "filter plain {\n file @DIR@/plain.bf\n}\n"
                       "filter exact {\n file @DIR@/exact.bf\n journal @DIR@/exact.journal\n"
                       " fsync always\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    int fp = first_false_positive(c);
    char req[96];
    snprintf(req, sizeof(req), "CHECK exact absent-%d", fp);
    DH_EXPECT(c, req, "NO");
    /* Its bits are set already, but the table did not list it: new. */
    snprintf(req, sizeof(req), "ADD exact absent-%d", fp);
    DH_EXPECT(c, req, "NEW");
    DH_EXPECT(c, req, "EXISTS");
    DH_EXPECT(c, "ADD exact absent-new", "NEW");
    DH_EXPECT(c, "ADD exact listed-4", "EXISTS");
    DH_EXPECT(c, "REMOVE exact listed-3", "REMOVED");
    expect_changes(c, fp);
    dh_close(c);

    dh_restart(d);
    c = dh_connect(d);
    expect_changes(c, fp);
    /* A reload of a rebuilt file (a new table: another seed) replays the
     * journal into the new version's delta: the same answers. */
    build(d, "exact.bf", false, EXACT_KIND_FP);
    const char *got = dh_cmd(c, "RELOAD");
    ck_assert_msg(strncmp(got, "OK ", 3) == 0 && strstr(got, "exact=reloaded"), "%s", got);
    expect_changes(c, fp);
    dh_close(c);
    dh_stop_ok(d);

    /* A table that is not the one the filter names (another build's, put
     * in its place) is refused by name; a truncated one too. */
    char a[DH_PATH_MAX], b[DH_PATH_MAX];
    build(d, "other.bf", false, EXACT_KIND_FP);
    ck_assert_int_eq(rename(dh_path(d, "other.bf.exact", a), dh_path(d, "exact.bf.exact", b)), 0);
    dh_spawn(d, NULL);
    ck_assert_int_ne(dh_wait_exit(d, DH_EXIT_TIMEOUT_MS), 0);
    ck_assert_msg(dh_log_contains(d, "is not the one this filter was built with"), "%s",
                  dh_explain(d, "another table"));
    ck_assert_int_eq(truncate(b, 4096), 0);
    dh_spawn(d, NULL);
    ck_assert_int_ne(dh_wait_exit(d, DH_EXIT_TIMEOUT_MS), 0);
    ck_assert_msg(dh_log_contains(d, "exact table"), "%s", dh_explain(d, "truncated table"));
    dh_free(d);
}
END_TEST

static Suite *exact_suite(void)
{
    Suite *s = suite_create("exact");
    dh_add_case(s, "exact", 300,
                (const TTest *const[]){test_no_false_positive, test_pipelined_mix,
                                       test_adds_removes_restart, NULL});
    return s;
}

int main(void)
{
    return dh_run_suite(exact_suite());
}
