/* Growing filters (growth on) in the real daemon: adds past the first
 * capacity make sub-filters, which INFO (line and HTTP) and /metrics list;
 * a restart and a reload rebuild exactly the same sub-filters from the
 * journal; max_memory refuses an add with an error naming the filter, the
 * limit and the items held, and nothing of the refused add is kept. (The
 * SIGKILL test of a growing filter is in check_lists.c, beside the plain
 * filter's.) */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"

enum { PER_REQ = 500 };

static void write_conf(struct dh_daemon *d, const char *max)
{
    char conf[512];
    snprintf(conf, sizeof(conf),
             "http_listen 127.0.0.1:0\nthreads 2\n"
             "filter g {\n capacity 1000\n fpr 0.01\n growth on\n"
             " max_memory %s\n journal @DIR@/g.journal\n fsync always\n}\n",
             max);
    dh_write_config(d, conf);
}

/* CMD g i<from> .. i<end-1> (at most PER_REQ items): the reply line. */
static const char *batch(struct dh_conn *c, const char *cmd, long from, long end)
{
    static char req[PER_REQ * 16 + 16];
    size_t len = (size_t)sprintf(req, "%s g", cmd);
    for (long i = from; i < end; i++)
        len += (size_t)sprintf(req + len, " i%ld", i);
    return dh_cmd(c, req);
}

/* MADD g i<from> .. i<from+PER_REQ-1>: the reply line. */
static const char *madd(struct dh_conn *c, long from)
{
    return batch(c, "MADD", from, from + PER_REQ);
}

static json_t *info(struct dh_conn *c)
{
    const char *line = dh_cmd(c, "INFO g");
    json_error_t jerr;
    json_t *j = json_loads(line, 0, &jerr);
    ck_assert_msg(j != NULL, "%s", line);
    return j;
}

/* The sub-filters as "capacity:items,..." for comparing two INFOs. */
static void subs_of(json_t *j, char *out, size_t cap)
{
    json_t *g = json_object_get(j, "growth");
    ck_assert_msg(json_is_object(g), "no growth object");
    json_t *arr = json_object_get(g, "sub_filters");
    size_t n = 0, idx;
    json_t *x;
    out[0] = '\0';
    json_array_foreach(arr, idx, x)
    {
        n += (size_t)snprintf(out + n, cap - n, "%lld:%lld,",
                              (long long)json_integer_value(json_object_get(x, "capacity")),
                              (long long)json_integer_value(json_object_get(x, "items")));
        ck_assert_uint_lt(n, cap);
    }
}

/* How many times the word w appears in a reply of space-separated words. */
static int count_word(const char *reply, const char *w)
{
    int k = 0;
    size_t n = strlen(w);
    for (const char *p = reply; (p = strstr(p, w)) != NULL; p += n)
        if ((p == reply || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            k++;
    return k;
}

/* Every item i0 .. i<n-1> answers YES. */
static void all_there(struct dh_conn *c, long n)
{
    for (long base = 0; base < n; base += PER_REQ) {
        const char *got = batch(c, "MCHECK", base, base + PER_REQ < n ? base + PER_REQ : n);
        ck_assert_msg(strstr(got, "NO") == NULL, "items from i%ld: %.200s", base, got);
    }
}

START_TEST(test_grow_restart_reload_limit)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "64K");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    /* Fill until max_memory refuses. */
    long n = 0;
    const char *got = NULL;
    for (;;) {
        got = madd(c, n);
        if (strncmp(got, "ERR", 3) == 0)
            break;
        n += PER_REQ;
        ck_assert_msg(n < 1000000, "never refused");
    }
    ck_assert_msg(strncmp(got, "ERR limit ", 10) == 0 &&
                      strstr(got, "filter g: add refused: max_memory 65536 bytes reached: holds ") &&
                      strstr(got, " items in "),
                  "%s", got);
    ck_assert_int_ge(n, 10000); /* 10x the first capacity fitted */
    fprintf(stderr, "check_growth: %ld items added, then: %s\n", n, got);
    json_t *j = info(c);
    json_t *g = json_object_get(j, "growth");
    size_t subs = json_array_size(json_object_get(g, "sub_filters"));
    ck_assert_uint_ge(subs, 4);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "max_memory")), 65536);
    ck_assert_int_le(json_integer_value(json_object_get(j, "bytes")), 65536);
    ck_assert_double_lt(json_real_value(json_object_get(g, "fpr_bound")), 0.01);
    ck_assert_double_le(json_real_value(json_object_get(g, "fpr_compound")), 0.01);
    long long items = json_integer_value(json_object_get(j, "items"));
    ck_assert_int_le(items, n);
    ck_assert_int_ge(items, n - n / 50); /* some adds found their bits set */
    char before[2048], after[2048];
    subs_of(j, before, sizeof(before));
    json_decref(j);
    /* The refused batch left nothing. Not one item's NO: at fpr_compound up
     * to 0.01 an absent item answers YES in about one run in a hundred (the
     * seed is drawn per daemon; this failed once in CI). Of the batch's 500
     * an added batch would answer 500 YES; the filter's false positives,
     * about 5 (more than 50 has a chance far below 1e-20). */
    int yes = count_word(batch(c, "MCHECK", n, n + PER_REQ), "YES");
    ck_assert_msg(yes <= PER_REQ / 10, "%d of the refused batch's %d items answer YES", yes,
                  (int)PER_REQ);
    all_there(c, n);

    /* HTTP INFO and /metrics */
    struct hc_conn h;
    struct hc_resp r;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_int_eq(hc_request(&h, "GET", "/v1/filters/g", NULL, NULL, 0, &r, DH_TIMEOUT_MS), 0);
    ck_assert_int_eq(r.status, 200);
    json_error_t jerr;
    json_t *hj = json_loads(r.body, 0, &jerr);
    ck_assert_msg(hj != NULL, "%s", r.body);
    subs_of(hj, after, sizeof(after));
    ck_assert_str_eq(before, after);
    json_decref(hj);
    hc_resp_free(&r);
    ck_assert_int_eq(hc_request(&h, "GET", "/metrics", NULL, NULL, 0, &r, DH_TIMEOUT_MS), 0);
    char want[128];
    snprintf(want, sizeof(want), "bloomgate_filter_sub_filters{filter=\"g\"} %zu\n", subs);
    ck_assert_msg(strstr(r.body, want), "no %s", want);
    ck_assert_ptr_nonnull(strstr(r.body, "bloomgate_filter_sub_filter_capacity{filter=\"g\",sub=\"0\"} 1000\n"));
    ck_assert_ptr_nonnull(strstr(r.body, "bloomgate_filter_max_memory_bytes{filter=\"g\"} 65536\n"));
    ck_assert_ptr_nonnull(strstr(r.body, "bloomgate_filter_sub_filter_items{filter=\"g\",sub=\"0\"} 1000\n"));
    hc_resp_free(&r);
    hc_close(&h);
    dh_close(c);

    /* A restart replays the journal into the same sub-filters. */
    dh_restart(d);
    c = dh_connect(d);
    j = info(c);
    subs_of(j, after, sizeof(after));
    ck_assert_str_eq(before, after);
    json_decref(j);
    all_there(c, n);
    got = madd(c, n);
    ck_assert_msg(strstr(got, "max_memory 65536 bytes reached"), "%s", got);

    /* A reload that raises max_memory rebuilds the filter from the journal:
     * the same sub-filters, and room for more. */
    write_conf(d, "1M");
    DH_EXPECT(c, "RELOAD", "OK g=reloaded");
    j = info(c);
    subs_of(j, after, sizeof(after));
    ck_assert_str_eq(before, after);
    json_decref(j);
    /* Taken now. Each item is NEW but for the filter's false positives
     * (EXISTS, about 1 %: a run here had one on the first item), as above. */
    got = madd(c, n);
    ck_assert_msg(strncmp(got, "ERR", 3) != 0 && count_word(got, "NEW") >= PER_REQ * 9 / 10,
                  "%.200s", got);
    n += PER_REQ;
    all_there(c, n);
    j = info(c);
    subs_of(j, before, sizeof(before));
    json_decref(j);
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    j = info(c);
    subs_of(j, after, sizeof(after));
    ck_assert_str_eq(before, after);
    json_decref(j);
    all_there(c, n);
    dh_close(c);
    dh_finish(d);
}
END_TEST

static Suite *growth_suite(void)
{
    Suite *s = suite_create("growth");
    dh_add_case(s, "growth", 300, (const TTest *const[]){test_grow_restart_reload_limit, NULL});
    return s;
}

int main(void)
{
    return dh_run_suite(growth_suite());
}
