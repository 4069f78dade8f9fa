/* The request context over HTTP against the real daemon: an Adblock list
 * built by the real tool (`bloomgate build --format adblock`) and served as
 * filter ads, beside an exact filter. GET .../check with and without
 * type/from/method, the same on the line protocol's MATCH (both fronts must
 * agree), POST .../check with the body's defaults and per-item objects, the
 * rule and the exception named in the answers, a bad context refused with a
 * 400 naming it, an exact filter that ignores a context, the items counted
 * in /metrics, and the authorization endpoint reading Sec-Fetch-Dest,
 * Referer, Origin and the original method from a gateway's headers. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"
#include "lib/line_client.h"

#define R_TRACKER "||tracker.example^$third-party,script"
#define R_ADS "||ads.example^"
#define X_ADS "@@||ads.example/ok/*"
#define R_PING "||pinger.example^$ping"
#define R_POST "||posty.example/collect$method=post"
#define R_BANNER "/banner/*$image"

static const char list[] = "! bloomgate's test list\n" R_TRACKER "\n" R_ADS "\n" X_ADS "\n" R_PING
                           "\n" R_POST "\n" R_BANNER "\n";

/* ads: the list above, compiled by the real tool; ex: exact keys. */
static struct dh_daemon *start(void)
{
    struct dh_daemon *d = dh_new();
    dh_write_file(d, "ads.txt", list, strlen(list));
    char in[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_path(d, "ads.txt", in);
    dh_path(d, "ads.bloom", out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--format", "adblock", "-o", out, in, NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build --format adblock failed (status %d); see %s", st, log);
    static const char *const ex[] = {"a", "http://tracker.example/t.js"};
    dh_build_filter(d, "ex.bloom", ex, 2, 100, 1e-4);
    dh_write_config(d, "threads 2\n"
                       "log_level info\n"
                       "http_listen 127.0.0.1:0\n"
                       "max_items 16\n"
                       "max_item 1k\n"
                       "filter ads {\n file @DIR@/ads.bloom\n}\n"
                       "filter ex {\n file @DIR@/ex.bloom\n}\n");
    dh_start(d, NULL);
    return d;
}

/* method target [headers] [body] on the daemon's HTTP port; the answer in r. */
static void http(struct dh_daemon *d, const char *method, const char *target, const char *headers,
                 const char *body, struct hc_resp *r)
{
    struct hc_conn h;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_msg(hc_request(&h, method, target, headers, body, body ? strlen(body) : 0, r,
                             DH_TIMEOUT_MS) == 0,
                  "%s %s: %s", method, target, h.err);
    hc_close(&h);
}

static void expect(struct dh_daemon *d, const char *method, const char *target, const char *body,
                   int status, const char *want)
{
    struct hc_resp r;
    http(d, method, target, NULL, body, &r);
    ck_assert_msg(r.status == status && strcmp(r.body, want) == 0,
                  "%s %s %s:\n got %d %s\nwant %d %s", method, target, body ? body : "", r.status,
                  r.body, status, want);
    hc_resp_free(&r);
}

/* A 400 whose message holds every one of the needles (NULL-ended). */
static void expect_400(struct dh_daemon *d, const char *method, const char *target,
                       const char *body, const char *code, const char *const *needles)
{
    struct hc_resp r;
    http(d, method, target, NULL, body, &r);
    char want[96];
    snprintf(want, sizeof(want), "{\"error\":{\"code\":\"%s\"", code);
    ck_assert_msg(r.status == 400 && strncmp(r.body, want, strlen(want)) == 0,
                  "%s %s %s: %d %s, wanted 400 %s", method, target, body ? body : "", r.status,
                  r.body, code);
    for (size_t i = 0; needles[i]; i++)
        ck_assert_msg(strstr(r.body, needles[i]), "'%s' not in %s", needles[i], r.body);
    hc_resp_free(&r);
}

/* s percent-encoded for a query (unreserved bytes kept). */
static void pct(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (; *s && k + 4 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-._~", c)) {
            out[k++] = (char)c;
        } else {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    out[k] = '\0';
}

/* One request and its context, what the list says of it: blocked or not,
 * the block rule named (the one an exception overrode too), the exception. */
struct ab_case {
    const char *url, *type, *from, *method;
    bool block;
    const char *rule, *exception;
};

static const struct ab_case cases[] = {
    /* No context: a top-level document with no initiator, to which a rule
     * limited to third-party scripts does not apply. */
    {"http://tracker.example/t.js", NULL, NULL, NULL, false, NULL, NULL},
    {"http://tracker.example/t.js", "script", "https://news.example/", NULL, true, R_TRACKER, NULL},
    /* The tracker's own page loads its script: first party. */
    {"http://tracker.example/t.js", "script", "https://www.tracker.example/a", NULL, false, NULL,
     NULL},
    {"http://tracker.example/t.js", "document", "https://news.example/", NULL, false, NULL, NULL},
    {"http://tracker.example/t.js", "image", "https://news.example/", NULL, false, NULL, NULL},
    /* Sec-Fetch-Dest's words: a worker is a script; the page as an origin. */
    {"http://cdn.tracker.example/w.js", "worker", "news.example", NULL, true, R_TRACKER, NULL},
    {"http://ads.example/banner.gif", NULL, NULL, NULL, true, R_ADS, NULL},
    {"http://ads.example/ok/x.js", "script", "https://news.example/", NULL, false, R_ADS, X_ADS},
    {"http://pinger.example/p", "ping", NULL, NULL, true, R_PING, NULL},
    {"http://pinger.example/p", "beacon", NULL, NULL, true, R_PING, NULL},
    {"http://pinger.example/p", NULL, NULL, NULL, false, NULL, NULL},
    {"http://posty.example/collect", NULL, NULL, "POST", true, R_POST, NULL},
    {"http://posty.example/collect", NULL, NULL, "get", false, NULL, NULL},
    {"http://x.example/banner/1.png", "img", NULL, NULL, true, R_BANNER, NULL},
    {"http://x.example/banner/1.png", "script", NULL, NULL, false, NULL, NULL},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* The JSON answer GET .../check gives a case. */
static void case_json(const struct ab_case *c, char *out, size_t cap)
{
    char rule[128] = "null", exc[128] = "null";
    if (c->rule)
        snprintf(rule, sizeof(rule), "\"%s\"", c->rule);
    if (c->exception)
        snprintf(exc, sizeof(exc), "\"%s\"", c->exception);
    snprintf(out, cap,
             "{\"filter\":\"ads\",\"item\":\"%s\",\"present\":%s%s,\"rule\":%s,"
             "\"exception\":%s}",
             c->url, c->block ? "true" : "false", c->exception ? ",\"allowed\":true" : "", rule,
             exc);
}

/* The query of a case: item=...[&type=...][&from=...][&method=...]. */
static void case_query(const struct ab_case *c, char *out, size_t cap)
{
    char e[512];
    pct(c->url, e, sizeof(e));
    size_t k = (size_t)snprintf(out, cap, "item=%s", e);
    const char *names[] = {"type", "from", "method"};
    const char *vals[] = {c->type, c->from, c->method};
    for (int i = 0; i < 3; i++)
        if (vals[i]) {
            pct(vals[i], e, sizeof(e));
            k += (size_t)snprintf(out + k, cap - k, "&%s=%s", names[i], e);
        }
}

START_TEST(test_get_and_match_agree)
{
    struct dh_daemon *d = start();
    struct dh_conn *lc = dh_connect(d);
    char q[2048], target[2200], want[1024], line[1024], wl[512];
    for (size_t i = 0; i < N_CASES; i++) {
        const struct ab_case *c = &cases[i];
        case_query(c, q, sizeof(q));
        snprintf(target, sizeof(target), "/v1/filters/ads/check?%s", q);
        case_json(c, want, sizeof(want));
        expect(d, "GET", target, NULL, 200, want);
        /* The line protocol's MATCH, with the same context words. */
        int k = snprintf(line, sizeof(line), "MATCH ads %s", c->url);
        if (c->type)
            k += snprintf(line + k, sizeof(line) - (size_t)k, " type=%s", c->type);
        if (c->from)
            k += snprintf(line + k, sizeof(line) - (size_t)k, " from=%s", c->from);
        if (c->method)
            snprintf(line + k, sizeof(line) - (size_t)k, " method=%s", c->method);
        if (c->exception)
            snprintf(wl, sizeof(wl), "ALLOWED %s%s%s", c->exception, c->rule ? " " : "",
                     c->rule ? c->rule : "");
        else if (c->block)
            snprintf(wl, sizeof(wl), "MATCH %s", c->rule);
        else
            snprintf(wl, sizeof(wl), "NO");
        const char *got = dh_cmd(lc, line);
        ck_assert_msg(strcmp(got, wl) == 0, "%s: %s, wanted %s", line, got, wl);
    }
    dh_close(lc);
    dh_finish(d);
}
END_TEST

START_TEST(test_get_bad_context)
{
    struct dh_daemon *d = start();
    /* A bad context is refused whatever the filter: an exact one too. */
    static const char *const filters[] = {"ads", "ex"};
    for (size_t f = 0; f < 2; f++) {
        char t[256];
        snprintf(t, sizeof(t), "/v1/filters/%s/check?item=http%%3A%%2F%%2Fa.example%%2F&type=bogus",
                 filters[f]);
        expect_400(d, "GET", t, NULL, "bad_request",
                   (const char *const[]){"bad type 'bogus'", "not a request type", NULL});
        snprintf(t, sizeof(t), "/v1/filters/%s/check?item=a&method=FETCH", filters[f]);
        expect_400(d, "GET", t, NULL, "bad_request",
                   (const char *const[]){"bad method 'FETCH'", NULL});
        snprintf(t, sizeof(t), "/v1/filters/%s/check?item=a&from=", filters[f]);
        expect_400(d, "GET", t, NULL, "bad_request",
                   (const char *const[]){"bad from", "the page's URL", NULL});
        snprintf(t, sizeof(t), "/v1/filters/%s/check?type=script&item=a&t%%79pe=image", filters[f]);
        expect_400(d, "GET", t, NULL, "bad_request",
                   (const char *const[]){"'type' given more than once", NULL});
        snprintf(t, sizeof(t), "/v1/filters/%s/check?type=script&from=x.example", filters[f]);
        expect_400(d, "GET", t, NULL, "missing_items", (const char *const[]){"?item=", NULL});
    }
    /* A value that is not text is shown without its bytes. */
    expect_400(d, "GET", "/v1/filters/ads/check?item=a&type=%00%FF", NULL, "bad_request",
               (const char *const[]){"bad type '\?\?'", NULL});
    dh_finish(d);
}
END_TEST

/* bloomgate_items_checked_total (or _hit_) of filter over HTTP. */
static long counted(struct dh_daemon *d, const char *family, const char *filter)
{
    struct hc_resp r;
    http(d, "GET", "/metrics", NULL, NULL, &r);
    char needle[160];
    snprintf(needle, sizeof(needle), "bloomgate_items_%s_total{filter=\"%s\",protocol=\"http\"} ",
             family, filter);
    const char *at = strstr(r.body, needle);
    ck_assert_msg(at != NULL, "no %s in /metrics", needle);
    long v = atol(at + strlen(needle));
    hc_resp_free(&r);
    return v;
}

START_TEST(test_post_batch)
{
    struct dh_daemon *d = start();
    /* Without context. */
    expect(d, "POST", "/v1/filters/ads/check",
           "{\"items\":[\"http://tracker.example/t.js\",\"http://ads.example/a\"]}", 200,
           "{\"filter\":\"ads\",\"present\":[false,true],\"rules\":[null,\"" R_ADS
           "\"],\"exceptions\":[null,null]}");
    expect(d, "POST", "/v1/filters/ads/check", "{\"items\":[]}", 200,
           "{\"filter\":\"ads\",\"present\":[],\"rules\":[],\"exceptions\":[]}");
    /* The body's defaults, and items that are objects with their own
     * context: each field over the default, null for none. */
    long checked = counted(d, "checked", "ads"), hit = counted(d, "hit", "ads");
    expect(d, "POST", "/v1/filters/ads/check",
           "{\"type\":\"script\",\"from\":\"https://news.example/\",\"items\":["
           "\"http://tracker.example/t.js\","
           "{\"item\":\"http://tracker.example/t.js\",\"from\":\"https://tracker.example/\"},"
           "{\"item\":\"http://tracker.example/t.js\",\"type\":null},"
           "{\"item\":\"http://tracker.example/t.js\",\"from\":null},"
           "\"http://ads.example/ok/a.js\","
           "{\"item\":\"http://x.example/banner/1.png\",\"type\":\"image\"},"
           "{\"item\":\"http://posty.example/collect\",\"method\":\"POST\"}]}",
           200,
           "{\"filter\":\"ads\",\"present\":[true,false,false,false,false,true,true],"
           "\"allowed\":[false,false,false,false,true,false,false],"
           "\"rules\":[\"" R_TRACKER "\",null,null,null,\"" R_ADS "\",\"" R_BANNER "\",\"" R_POST
           "\"],\"exceptions\":[null,null,null,null,\"" X_ADS "\",null,null]}");
    ck_assert_int_eq(counted(d, "checked", "ads"), checked + 7);
    ck_assert_int_eq(counted(d, "hit", "ads"), hit + 3);
    /* Every case as a one-item batch answers as GET does. */
    for (size_t i = 0; i < N_CASES; i++) {
        const struct ab_case *c = &cases[i];
        char body[1024], want[1024], rule[128] = "null", exc[128] = "null";
        snprintf(
            body, sizeof(body),
            "{\"items\":[{\"item\":\"%s\",\"type\":%s%s%s,\"from\":%s%s%s,\"method\":%s%s%s}]}",
            c->url, c->type ? "\"" : "", c->type ? c->type : "null", c->type ? "\"" : "",
            c->from ? "\"" : "", c->from ? c->from : "null", c->from ? "\"" : "",
            c->method ? "\"" : "", c->method ? c->method : "null", c->method ? "\"" : "");
        if (c->rule)
            snprintf(rule, sizeof(rule), "\"%s\"", c->rule);
        if (c->exception)
            snprintf(exc, sizeof(exc), "\"%s\"", c->exception);
        snprintf(want, sizeof(want),
                 "{\"filter\":\"ads\",\"present\":[%s]%s,\"rules\":[%s],\"exceptions\":[%s]}",
                 c->block ? "true" : "false", c->exception ? ",\"allowed\":[true]" : "", rule, exc);
        expect(d, "POST", "/v1/filters/ads/check", body, 200, want);
    }
    dh_finish(d);
}
END_TEST

/* A batch's expected answer, grown item by item from single GETs. */
struct want_batch {
    char present[256], allowed[256], rules[2048], excepts[2048];
    bool any_allowed;
};

/* Append c's answer, as GET .../check gives it, to w: GET's "present",
 * "allowed", "rule" and "exception" read from its body (the JSON text of
 * each value, a string's quotes and escapes kept). Item i of the batch. */
static void want_from_get(struct dh_daemon *d, const struct ab_case *c, size_t i,
                          struct want_batch *w)
{
    char q[2048], target[2200];
    case_query(c, q, sizeof(q));
    snprintf(target, sizeof(target), "/v1/filters/ads/check?%s", q);
    struct hc_resp r;
    http(d, "GET", target, NULL, NULL, &r);
    ck_assert_msg(r.status == 200, "GET %s: %d %s", target, r.status, r.body);
    const char *pr = strstr(r.body, ",\"present\":"), *ru = strstr(r.body, ",\"rule\":"),
               *ex = strstr(r.body, ",\"exception\":");
    ck_assert_msg(pr && ru && ex, "GET %s: %s", target, r.body);
    bool yes = strncmp(pr + 11, "true", 4) == 0, allowed = strstr(r.body, ",\"allowed\":true");
    const char *sep = i ? "," : "";
    size_t k;
    k = strlen(w->present);
    snprintf(w->present + k, sizeof(w->present) - k, "%s%s", sep, yes ? "true" : "false");
    k = strlen(w->allowed);
    snprintf(w->allowed + k, sizeof(w->allowed) - k, "%s%s", sep, allowed ? "true" : "false");
    w->any_allowed |= allowed;
    k = strlen(w->rules);
    snprintf(w->rules + k, sizeof(w->rules) - k, "%s%.*s", sep, (int)(ex - ru - 8), ru + 8);
    k = strlen(w->excepts);
    snprintf(w->excepts + k, sizeof(w->excepts) - k, "%s%.*s", sep, (int)(strlen(ex + 13) - 1),
             ex + 13);
    hc_resp_free(&r);
}

/* c as an item object of a POST body: only the context it has (the
 * daemon bounds a body's JSON values by max_items before it reads them). */
static void item_object(const struct ab_case *c, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "{\"item\":\"%s\"", c->url);
    const char *names[] = {"type", "from", "method"};
    const char *vals[] = {c->type, c->from, c->method};
    for (int i = 0; i < 3; i++)
        if (vals[i])
            k += (size_t)snprintf(out + k, cap - k, ",\"%s\":\"%s\"", names[i], vals[i]);
    snprintf(out + k, cap - k, "}");
}

/* POST the items cs[0..n) in one batch, each with its own context; the
 * answer must be the items' single GETs' side by side. */
static void expect_batch_as_gets(struct dh_daemon *d, const struct ab_case *const *cs, size_t n)
{
    struct want_batch w;
    memset(&w, 0, sizeof(w));
    char body[8192], obj[1024], want[8192];
    size_t k = (size_t)snprintf(body, sizeof(body), "{\"items\":[");
    for (size_t i = 0; i < n; i++) {
        want_from_get(d, cs[i], i, &w);
        item_object(cs[i], obj, sizeof(obj));
        k += (size_t)snprintf(body + k, sizeof(body) - k, "%s%s", i ? "," : "", obj);
    }
    snprintf(body + k, sizeof(body) - k, "]}");
    snprintf(want, sizeof(want),
             "{\"filter\":\"ads\",\"present\":[%s]%s%s%s,\"rules\":[%s],\"exceptions\":[%s]}",
             w.present, w.any_allowed ? ",\"allowed\":[" : "", w.any_allowed ? w.allowed : "",
             w.any_allowed ? "]" : "", w.rules, w.excepts);
    expect(d, "POST", "/v1/filters/ads/check", body, 200, want);
}

/* One batch of items with mixed contexts answers item for item as single
 * GETs do: the lists' rules and exceptions, then the host tier's run-time
 * adds and the allow-list's entries (whose names the thread's scratch holds
 * while an item is looked up), several of each in one batch. */
START_TEST(test_post_mixed_batch_as_gets)
{
    struct dh_daemon *d = start();
    /* Every case, backwards (the context changes item to item), in
     * batches of 5: max_items 16 bounds a body's JSON values too. */
    const struct ab_case *cs[N_CASES];
    for (size_t i = 0; i < N_CASES; i++)
        cs[i] = &cases[N_CASES - 1 - i];
    for (size_t i = 0; i < N_CASES; i += 5)
        expect_batch_as_gets(d, cs + i, N_CASES - i < 5 ? N_CASES - i : 5);

    struct dh_conn *lc = dh_connect(d);
    DH_EXPECT(lc, "ADD ads tier-one.example", "NEW");
    DH_EXPECT(lc, "ADD ads tier-two.example", "NEW");
    DH_EXPECT(lc, "ALLOW ads good.tier-one.example", "NEW");
    DH_EXPECT(lc, "ALLOW ads x.example", "NEW");
    dh_close(lc);
    static const struct ab_case tier[] = {
        {"http://tier-one.example/a", NULL, NULL, NULL, false, NULL, NULL},
        {"http://sub.tier-two.example/b.js", "script", "https://news.example/", NULL, false, NULL,
         NULL},
        {"http://good.tier-one.example/c", "image", NULL, NULL, false, NULL, NULL},
        {"http://x.example/banner/1.png", "img", NULL, NULL, false, NULL, NULL},
        {"http://tier-two.example/", NULL, NULL, "POST", false, NULL, NULL},
    };
    const struct ab_case *mixed[] = {&tier[0],  &cases[1],  &tier[1],  &tier[2],
                                     &cases[7], &tier[3],   &tier[4],  &tier[2],
                                     &tier[0],  &cases[11], &cases[0], &tier[3]};
    for (size_t i = 0; i < 12; i += 4)
        expect_batch_as_gets(d, mixed + i, 4);
    dh_finish(d);
}
END_TEST

START_TEST(test_post_errors)
{
    struct dh_daemon *d = start();
    expect_400(d, "POST", "/v1/filters/ads/check",
               "{\"items\":[\"a\",{\"item\":\"http://b.example/\",\"type\":\"scrip\"}]}",
               "bad_request", (const char *const[]){"item 2: bad type 'scrip'", NULL});
    expect_400(d, "POST", "/v1/filters/ex/check", "{\"type\":5,\"items\":[\"a\"]}", "bad_request",
               (const char *const[]){"\\\"type\\\" must be a string or null", NULL});
    expect_400(d, "POST", "/v1/filters/ex/check", "{\"method\":\"FETCH\",\"items\":[\"a\"]}",
               "bad_request", (const char *const[]){"bad method 'FETCH'", NULL});
    expect_400(d, "POST", "/v1/filters/ads/check",
               "{\"items\":[{\"item\":\"http://a.example/\",\"form\":\"https://b.example/\"}]}",
               "bad_request", (const char *const[]){"item 1: unknown key 'form'", NULL});
    expect_400(d, "POST", "/v1/filters/ads/check", "{\"items\":[\"a\",{\"type\":\"script\"}]}",
               "not_a_string", (const char *const[]){"item 2", "\\\"item\\\": <string>", NULL});
    expect_400(d, "POST", "/v1/filters/ads/check", "{\"items\":[{\"item\":7}]}", "not_a_string",
               (const char *const[]){"item 1", NULL});
    /* Objects are a check's: an add takes strings only. */
    expect_400(d, "POST", "/v1/filters/ex/add", "{\"items\":[{\"item\":\"z\"}]}", "not_a_string",
               (const char *const[]){"item 1 is not a string", NULL});
    /* The table's limits hold for an adblock batch (max_items 16, max_item
     * 1k), and an item the engine cannot read names its position. */
    char body[4096];
    size_t k = (size_t)snprintf(body, sizeof(body), "{\"items\":[");
    for (int i = 0; i < 17; i++)
        k += (size_t)snprintf(body + k, sizeof(body) - k, "%s\"http://a.example/%d\"", i ? "," : "",
                              i);
    snprintf(body + k, sizeof(body) - k, "]}");
    expect_400(d, "POST", "/v1/filters/ads/check", body, "too_many_items",
               (const char *const[]){"17 items, the limit is max_items 16", NULL});
    char longu[1100];
    memset(longu, 'a', sizeof(longu) - 1);
    longu[sizeof(longu) - 1] = '\0';
    snprintf(body, sizeof(body),
             "{\"items\":[\"http://a.example/\",{\"item\":\"http://a.example/%s\"}]}", longu);
    expect_400(d, "POST", "/v1/filters/ads/check", body, "item_too_long",
               (const char *const[]){"item 2 is", "max_item 1024", NULL});
    dh_finish(d);
}
END_TEST

/* An exact filter takes a context and ignores it: the same answers. */
START_TEST(test_exact_ignores_context)
{
    struct dh_daemon *d = start();
    static const char *const ctxs[] = {"", "&type=script&from=https%3A%2F%2Fnews.example%2F",
                                       "&type=document&method=POST", "&from=tracker.example"};
    for (size_t i = 0; i < 4; i++) {
        char t[256];
        snprintf(t, sizeof(t),
                 "/v1/filters/ex/check?item=http%%3A%%2F%%2Ftracker.example%%2Ft.js%s", ctxs[i]);
        expect(d, "GET", t, NULL, 200,
               "{\"filter\":\"ex\",\"item\":\"http://tracker.example/t.js\",\"present\":true}");
        snprintf(t, sizeof(t), "/v1/filters/ex/check?item=zz%s", ctxs[i]);
        expect(d, "GET", t, NULL, 200, "{\"filter\":\"ex\",\"item\":\"zz\",\"present\":false}");
    }
    expect(d, "POST", "/v1/filters/ex/check",
           "{\"type\":\"image\",\"items\":[\"a\",{\"item\":\"http://tracker.example/t.js\","
           "\"type\":\"script\",\"from\":\"https://news.example/\"},{\"item\":\"zz\"}]}",
           200, "{\"filter\":\"ex\",\"present\":[true,true,false]}");
    dh_finish(d);
}
END_TEST

/* The authorization endpoint: the context from the gateway's headers. */
static void authz(struct dh_daemon *d, const char *method, const char *target, const char *headers,
                  int status, const char *rule)
{
    struct hc_resp r;
    http(d, method, target, headers, NULL, &r);
    ck_assert_msg(r.status == status, "%s %s [%s]: %d %s, wanted %d", method, target, headers,
                  r.status, r.body, status);
    char v[256];
    if (rule) {
        ck_assert_msg(hc_header(&r, "X-Bloomgate-Rule", v, sizeof(v)) && strcmp(v, rule) == 0,
                      "X-Bloomgate-Rule: wanted %s in\n%s", rule, r.head);
        ck_assert(hc_header(&r, "X-Bloomgate-Match", v, sizeof(v)) && strcmp(v, rule) == 0);
        char body[512];
        snprintf(body, sizeof(body), "{\"filter\":\"ads\",\"match\":\"%s\",\"rule\":\"%s\"}", rule,
                 rule);
        ck_assert_str_eq(r.body, body);
    } else {
        ck_assert_msg(!hc_header(&r, "X-Bloomgate-Rule", v, sizeof(v)), "a rule on %d", r.status);
    }
    hc_resp_free(&r);
}

#define TRACKER "X-Forwarded-Host: tracker.example\r\nX-Original-URI: /t.js\r\n"
#define POSTY "X-Forwarded-Host: posty.example\r\nX-Original-URI: /collect\r\n"

START_TEST(test_authz_context)
{
    struct dh_daemon *d = start();
    /* A third party's script: refused; the same URL as a page, or loaded
     * by the tracker's own page, passes. */
    authz(d, "GET", "/v1/authz/ads",
          TRACKER "Sec-Fetch-Dest: script\r\nReferer: https://news.example/story\r\n", 403,
          R_TRACKER);
    authz(d, "GET", "/v1/authz/ads", TRACKER "Sec-Fetch-Dest: document\r\n", 204, NULL);
    authz(d, "GET", "/v1/authz/ads", TRACKER, 204, NULL);
    authz(d, "GET", "/v1/authz/ads",
          TRACKER "Sec-Fetch-Dest: script\r\nReferer: https://tracker.example/\r\n", 204, NULL);
    /* Origin when there is no Referer; an opaque one names no page. */
    authz(d, "GET", "/v1/authz/ads",
          TRACKER "Sec-Fetch-Dest: script\r\nOrigin: https://news.example\r\n", 403, R_TRACKER);
    authz(d, "GET", "/v1/authz/ads", TRACKER "Sec-Fetch-Dest: script\r\nOrigin: null\r\n", 204,
          NULL);
    /* An unknown destination is no type, not an error. */
    authz(d, "GET", "/v1/authz/ads",
          TRACKER "Sec-Fetch-Dest: hologram\r\nReferer: https://news.example/\r\n", 204, NULL);
    authz(d, "GET", "/v1/authz/ads",
          TRACKER "Sec-Fetch-Dest: serviceworker\r\nReferer: https://news.example/\r\n", 403,
          R_TRACKER);
    /* The original method: X-Original-Method, X-Forwarded-Method, or below
     * a prefix (Envoy) the request's own. */
    authz(d, "GET", "/v1/authz/ads", POSTY "X-Original-Method: POST\r\n", 403, R_POST);
    authz(d, "POST", "/v1/authz/ads", POSTY, 204, NULL);
    authz(d, "GET", "/v1/authz/ads", POSTY "X-Forwarded-Method: post\r\n", 403, R_POST);
    authz(d, "GET", "/v1/authz/ads", POSTY "X-Original-Method: GET\r\n", 204, NULL);
    authz(d, "POST", "/v1/authz/ads/collect", "X-Forwarded-Host: posty.example\r\n", 403, R_POST);
    authz(d, "GET", "/v1/authz/ads/collect", "X-Forwarded-Host: posty.example\r\n", 200, NULL);
    /* An exception: passes. */
    authz(d, "GET", "/v1/authz/ads",
          "X-Forwarded-Host: ads.example\r\nX-Original-URI: /ok/a.js\r\n", 204, NULL);
    authz(d, "GET", "/v1/authz/ads", "X-Forwarded-Host: ads.example\r\nX-Original-URI: /a.js\r\n",
          403, R_ADS);
    /* An exact filter ignores the context, and names no rule. */
    struct hc_resp r;
    http(d, "GET", "/v1/authz/ex", TRACKER "Sec-Fetch-Dest: document\r\n", NULL, &r);
    ck_assert_int_eq(r.status, 403);
    ck_assert_str_eq(r.body, "{\"filter\":\"ex\",\"match\":\"http://tracker.example/t.js\"}");
    char v[64];
    ck_assert(!hc_header(&r, "X-Bloomgate-Rule", v, sizeof(v)));
    hc_resp_free(&r);
    http(d, "GET", "/metrics", NULL, NULL, &r);
    ck_assert_ptr_nonnull(
        strstr(r.body, "bloomgate_authz_requests_total{filter=\"ads\",verdict=\"deny\"} 7\n"));
    ck_assert_ptr_nonnull(
        strstr(r.body, "bloomgate_authz_requests_total{filter=\"ads\",verdict=\"allow\"} 9\n"));
    hc_resp_free(&r);
    dh_finish(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adblock_http");
    TCase *tc = tcase_create("adblock_http");
    tcase_add_checked_fixture(tc, NULL, dh_cleanup_all);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_get_and_match_agree);
    tcase_add_test(tc, test_get_bad_context);
    tcase_add_test(tc, test_post_batch);
    tcase_add_test(tc, test_post_mixed_batch_as_gets);
    tcase_add_test(tc, test_post_errors);
    tcase_add_test(tc, test_exact_ignores_context);
    tcase_add_test(tc, test_authz_context);
    suite_add_tcase(s, tc);
    return dh_run_suite(s);
}
