/* The authorization endpoint against the real bloomgated, without a gateway
 * (tests/it/check_authz_nginx.c runs it behind nginx): the statuses and
 * headers of each way a gateway asks (nginx's headers, Envoy's path below a
 * prefix, Traefik's X-Forwarded-Uri, X-Original-URL), an exact filter probed
 * with the canonical URL, several filters in order, the client filter, every
 * refusal with its status, HEAD and POST, and the counters in /metrics. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"

static struct dh_daemon *D;

static void build_list(struct dh_daemon *d)
{
    const char *src = getenv("srcdir");
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    snprintf(list, sizeof(list), "%s/data/urlhaus-filter-online.txt", src ? src : ".");
    dh_path(d, "urls.bloom", out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--seed", "7", "--format", "adblock",
                          "--keys",       "url",   "-o",     out, list,       NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build failed (status %d); see %s", st, log);
}

/* urls (url keys: URLhaus), exact (canonical URLs and one address), hosts
 * (host keys: one host, one address). */
static void start(void)
{
    D = dh_new();
    build_list(D);
    static const char *const ex[] = {"http://exact.example/a/b?q", "198.51.100.9"};
    dh_build_filter(D, "exact.bloom", ex, 2, 100, 1e-4);
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_path(D, "hosts.txt", list);
    dh_write_file(D, "hosts.txt", "hosts.example\n192.0.2.66\n", 25);
    dh_path(D, "hosts.bloom", out);
    dh_path(D, "build2.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--seed", "7",  "--keys",
                          "host",         "-o",    out,      list, NULL};
    ck_assert_int_eq(dh_run(argv, log, 60000), 0);
    dh_write_config(D, "threads 2\n"
                       "log_level info\n"
                       "http_listen 127.0.0.1:0\n"
                       "filter urls {\n file @DIR@/urls.bloom\n keys url\n}\n"
                       "filter exact {\n file @DIR@/exact.bloom\n}\n"
                       "filter hosts {\n file @DIR@/hosts.bloom\n keys host\n}\n");
    dh_start(D, NULL);
}

/* One request; the response in r (hc_resp_free it). */
static void req(const char *method, const char *target, const char *headers, struct hc_resp *r)
{
    struct hc_conn h;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(D, 0)), 0);
    ck_assert_msg(hc_request(&h, method, target, headers, NULL, 0, r, DH_TIMEOUT_MS) == 0,
                  "%s %s: %s", method, target, h.err);
    hc_close(&h);
}

/* status, and the two verdict headers (NULL: absent) */
static void expect(const char *method, const char *target, const char *headers, int status,
                   const char *filter, const char *match)
{
    struct hc_resp r;
    req(method, target, headers, &r);
    char v[1024];
    ck_assert_msg(r.status == status, "%s %s [%s]: %d, wanted %d: %s", method, target, headers,
                  r.status, status, r.body);
    if (filter) {
        ck_assert_msg(hc_header(&r, "X-Bloomgate-Filter", v, sizeof(v)), "no filter header");
        ck_assert_str_eq(v, filter);
        ck_assert(hc_header(&r, "X-Bloomgate-Match", v, sizeof(v)));
        ck_assert_str_eq(v, match);
        char body[2048];
        snprintf(body, sizeof(body), "{\"filter\":\"%s\",\"match\":\"%s\"}", filter, match);
        if (strcmp(method, "HEAD") != 0)
            ck_assert_str_eq(r.body, body);
    } else {
        ck_assert(!hc_header(&r, "X-Bloomgate-Filter", v, sizeof(v)));
    }
    if (status == 204) {
        ck_assert(!hc_header(&r, "Content-Length", v, sizeof(v)));
        ck_assert_uint_eq(r.blen, 0);
    }
    hc_resp_free(&r);
}

/* A 4xx with its error code and a message holding why. */
static void expect_error(const char *target, const char *headers, int status, const char *code,
                         const char *why)
{
    struct hc_resp r;
    req("GET", target, headers, &r);
    ck_assert_msg(r.status == status, "%s [%s]: %d, wanted %d: %s", target, headers, r.status,
                  status, r.body);
    char c[64];
    snprintf(c, sizeof(c), "\"code\":\"%s\"", code);
    ck_assert_msg(strstr(r.body, c) && strstr(r.body, why), "%s [%s]: '%s' lacks %s / %s", target,
                  headers, r.body, c, why);
    hc_resp_free(&r);
}

#define SCI "2024.sci-hub.se/2294/7a43bb4cf6c57229b02a9604a1f4614e/skidmore1966.pdf"

START_TEST(test_gateways)
{
    start();
    /* nginx: X-Original-URI, X-Forwarded-Host, X-Forwarded-Proto. */
    expect("GET", "/v1/authz/urls",
           "X-Forwarded-Host: 2024.SCI-HUB.SE:8080\r\n"
           "X-Forwarded-Proto: https\r\n"
           "X-Original-URI: /2294/7a43bb4cf6c57229b02a9604a1f4614e/skidmore1966.pdf?x=1\r\n",
           403, "urls", SCI);
    expect("GET", "/v1/authz/urls", "X-Forwarded-Host: www.debian.org\r\nX-Original-URI: /\r\n",
           204, NULL, NULL);
    /* Envoy: the original path below the prefix; allowed is 200 there. */
    expect("GET", "/v1/authz/urls/2294/7a43bb4cf6c57229b02a9604a1f4614e/skidmore1966.pdf?a=b",
           "X-Forwarded-Host: www.2024.sci-hub.se\r\n", 403, "urls", SCI);
    expect("POST", "/v1/authz/urls/index.html?client=x", "X-Forwarded-Host: www.debian.org\r\n",
           200, NULL, NULL);
    /* Traefik: X-Forwarded-Uri; HAProxy sends HEAD. */
    expect("GET", "/v1/authz/urls",
           "X-Forwarded-Host: deep.111101111.ru\r\nX-Forwarded-Uri: /x\r\n", 403, "urls",
           "111101111.ru/");
    expect("HEAD", "/v1/authz/urls", "X-Forwarded-Host: 111101111.ru\r\nX-Original-URI: /y\r\n",
           403, "urls", "111101111.ru/");
    /* X-Original-URL wins over everything else. */
    expect("GET", "/v1/authz/urls",
           "X-Original-URL: HTTP://user@111101111.RU:81/q#f\r\nHost: www.debian.org\r\n"
           "X-Original-URI: /\r\n",
           403, "urls", "111101111.ru/");
    dh_finish(D);
}
END_TEST

START_TEST(test_kinds_order_client)
{
    start();
    /* An exact filter is probed with the canonical URL. */
    expect("GET", "/v1/authz/exact",
           "X-Original-URL: HTTP://EXACT.example:8080/x/../a/./b?q#frag\r\n", 403, "exact",
           "http://exact.example/a/b?q");
    expect("GET", "/v1/authz/exact", "X-Original-URL: http://exact.example/a/b?r\r\n", 204, NULL,
           NULL);
    /* A host filter judges the URL's host and its parents. */
    expect("GET", "/v1/authz/hosts",
           "X-Forwarded-Host: a.b.HOSTS.example\r\nX-Original-URI: /p\r\n", 403, "hosts",
           "hosts.example");
    /* Several filters: the first that matches decides. */
    expect("GET", "/v1/authz/exact,hosts,urls",
           "X-Forwarded-Host: 111101111.ru\r\nX-Original-URI: /\r\n", 403, "urls", "111101111.ru/");
    expect("GET", "/v1/authz/urls,hosts", "X-Original-URL: http://hosts.example/\r\n", 403, "hosts",
           "hosts.example");
    /* The client filter: X-Real-IP, else the first X-Forwarded-For. */
    expect("GET", "/v1/authz/urls?client=hosts",
           "X-Forwarded-Host: www.debian.org\r\nX-Original-URI: /\r\nX-Real-IP: 192.0.2.66\r\n",
           403, "hosts", "192.0.2.66");
    expect("GET", "/v1/authz/urls?client=exact",
           "X-Forwarded-Host: www.debian.org\r\nX-Original-URI: /\r\n"
           "X-Forwarded-For: 198.51.100.9, 10.0.0.1\r\n",
           403, "exact", "198.51.100.9");
    expect("GET", "/v1/authz/urls;client=hosts/ok",
           "X-Forwarded-Host: www.debian.org\r\n"
           "X-Forwarded-For: 192.0.2.66\r\n",
           403, "hosts", "192.0.2.66");
    expect("GET", "/v1/authz/urls?client=hosts",
           "X-Forwarded-Host: www.debian.org\r\nX-Original-URI: /\r\nX-Real-IP: 192.0.2.67\r\n",
           204, NULL, NULL);
    /* Below an Envoy prefix the query is the client's: ?client= is not read. */
    expect("GET", "/v1/authz/urls/x?client=nosuch", "X-Forwarded-Host: www.debian.org\r\n", 200,
           NULL, NULL);
    dh_finish(D);
}
END_TEST

START_TEST(test_refusals_and_metrics)
{
    start();
    expect_error("/v1/authz/urls", "X-Forwarded-Host: www.debian.org\r\n", 400, "bad_request",
                 "no URL to judge");
    /* (The test client always sends Host: a request without one, raw.) */
    struct hc_conn h;
    struct hc_resp r;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(D, 0)), 0);
    static const char nohost[] = "GET /v1/authz/urls HTTP/1.1\r\nX-Original-URI: /\r\n\r\n";
    ck_assert_int_eq(hc_send_raw(&h, nohost, sizeof(nohost) - 1, DH_TIMEOUT_MS), 0);
    ck_assert_int_eq(hc_recv(&h, false, &r, DH_TIMEOUT_MS), 0);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "no host: send X-Forwarded-Host or Host"));
    hc_resp_free(&r);
    hc_close(&h);
    expect_error("/v1/authz/urls", "X-Forwarded-Host: a@b\r\nX-Original-URI: /\r\n", 400,
                 "bad_request", "is not a host (it has '@')");
    expect_error("/v1/authz/urls", "X-Original-URL: mailto:bob@example.com\r\n", 400, "bad_request",
                 "filter 'urls' cannot judge the URL: bad URL");
    expect_error("/v1/authz/exact", "X-Original-URL: http://a.example:99999/\r\n", 400,
                 "bad_request", "filter 'exact' cannot judge the URL: bad port");
    expect_error("/v1/authz/urls?client=hosts", "X-Forwarded-Host: h\r\nX-Original-URI: /\r\n", 400,
                 "bad_request", "neither X-Real-IP nor X-Forwarded-For");
    expect_error("/v1/authz/urls;client=hosts?client=exact",
                 "X-Forwarded-Host: h\r\nX-Original-URI: /\r\n", 400, "bad_request", "named twice");
    expect_error("/v1/authz/urls", "Host: i\r\nX-Original-URI: /\r\n", 400, "bad_request",
                 "Host given 2 times");
    expect_error("/v1/authz/", "X-Forwarded-Host: h\r\nX-Original-URI: /\r\n", 400, "bad_request",
                 "no filter named");
    expect_error("/v1/authz", "X-Forwarded-Host: h\r\nX-Original-URI: /\r\n", 400, "bad_request",
                 "no filter named");
    expect_error("/v1/authz/urls,ur%22s", "X-Forwarded-Host: h\r\nX-Original-URI: /\r\n", 400,
                 "bad_request", "invalid filter name");
    expect_error("/v1/authz/urls,ur%2", "X-Forwarded-Host: h\r\nX-Original-URI: /\r\n", 400,
                 "bad_request", "a bad %-escape in the filter name");
    expect_error("/v1/authz/urls,nosuch", "X-Forwarded-Host: h\r\nX-Original-URI: /\r\n", 404,
                 "unknown_filter", "no such filter 'nosuch'");
    expect_error("/v1/authz/urls?client=nosuch", "X-Forwarded-Host: h\r\nX-Original-URI: /\r\n",
                 404, "unknown_filter", "no such filter 'nosuch'");
    /* So far: urls 6 errors (the 400s once its filters were known: a bad
     * path or a client filter named twice comes before), exact 1, hosts 1
     * (as the client filter). Then one allow and one deny. */
    expect("GET", "/v1/authz/urls,hosts",
           "X-Forwarded-Host: www.debian.org\r\nX-Original-URI: /\r\n", 204, NULL, NULL);
    expect("GET", "/v1/authz/urls,hosts",
           "X-Forwarded-Host: hosts.example\r\nX-Original-URI: /\r\n", 403, "hosts",
           "hosts.example");
    req("GET", "/metrics", NULL, &r);
    static const char *const want[] = {
        "bloomgate_authz_requests_total{filter=\"urls\",verdict=\"allow\"} 1\n",
        "bloomgate_authz_requests_total{filter=\"urls\",verdict=\"deny\"} 0\n",
        "bloomgate_authz_requests_total{filter=\"urls\",verdict=\"error\"} 6\n",
        "bloomgate_authz_requests_total{filter=\"hosts\",verdict=\"allow\"} 1\n",
        "bloomgate_authz_requests_total{filter=\"hosts\",verdict=\"deny\"} 1\n",
        "bloomgate_authz_requests_total{filter=\"hosts\",verdict=\"error\"} 1\n",
        "bloomgate_authz_requests_total{filter=\"exact\",verdict=\"error\"} 1\n",
        "bloomgate_http_responses_total{code=\"204\"} 1\n",
        "bloomgate_http_responses_total{code=\"403\"} 1\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        ck_assert_msg(strstr(r.body, want[i]), "/metrics lacks %s", want[i]);
    hc_resp_free(&r);
    dh_finish(D);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("authz");
    const TTest *const tests[] = {test_gateways, test_kinds_order_client, test_refusals_and_metrics,
                                  NULL};
    dh_add_case(s, "authz", 300, tests);
    return dh_run_suite(s);
}
