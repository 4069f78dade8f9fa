/* Unit tests for the authorization endpoint's pure part (src/front/http/authz.c):
 * the filter list in the path, the headers found in a head, the URL derived
 * from them in each gateway's way (nginx, Envoy, Traefik, X-Original-URL),
 * the client address, and every refusal with its reason. Inputs are copied
 * into heap buffers of exactly their length, so ASan sees any read past it. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/http/authz.h"

static char *g_copy; /* the last input, exactly its length */
static char g_err[256];

static const char *copy(const char *s, size_t n)
{
    free(g_copy);
    g_copy = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(g_copy);
    memcpy(g_copy, s, n);
    return g_copy;
}

static void teardown(void)
{
    free(g_copy);
    g_copy = NULL;
}

/* ---- the path ---- */

static int route(const char *path, struct authz_route *rt)
{
    g_err[0] = '\0';
    return authz_parse_path(copy(path, strlen(path)), strlen(path), rt, g_err, sizeof(g_err));
}

static void assert_name(struct authz_name n, const char *want)
{
    ck_assert_uint_eq(n.len, strlen(want));
    ck_assert_int_eq(memcmp(n.p, want, n.len), 0);
}

START_TEST(test_path_one)
{
    struct authz_route rt;
    ck_assert_int_eq(route("urls", &rt), 0);
    ck_assert_uint_eq(rt.n, 1);
    assert_name(rt.filter[0], "urls");
    ck_assert_uint_eq(rt.client.len, 0);
    ck_assert_uint_eq(rt.below_len, 0);
}
END_TEST

START_TEST(test_path_several_client_below)
{
    struct authz_route rt;
    ck_assert_int_eq(route("urls,hosts,ex.v2_a-b;client=ips/a/b?c", &rt), 0);
    ck_assert_uint_eq(rt.n, 3);
    assert_name(rt.filter[0], "urls");
    assert_name(rt.filter[1], "hosts");
    assert_name(rt.filter[2], "ex.v2_a-b");
    assert_name(rt.client, "ips");
    ck_assert_uint_eq(rt.below_len, strlen("/a/b?c"));
    ck_assert_int_eq(memcmp(rt.below, "/a/b?c", rt.below_len), 0);
    /* Envoy with a prefix and the root below it. */
    ck_assert_int_eq(route("urls/", &rt), 0);
    ck_assert_uint_eq(rt.below_len, 1);
}
END_TEST

START_TEST(test_path_refused)
{
    static const struct {
        const char *path, *why;
    } cases[] = {
        {"", "no filter named"},
        {"/x", "no filter named"},
        {";client=ips", "no filter named"},
        {"urls,", "an empty filter name"},
        {",urls", "an empty filter name"},
        {"urls,,hosts", "an empty filter name"},
        {"a b", "invalid filter name 'a b': use " FNAME_RULE},
        {"a%20b", "invalid filter name 'a%20b'"},
        {"a\"b", "invalid filter name"},
        {"caf%C3%A9", "invalid filter name"},
        {"a%0Ab", "invalid filter name"},
        {"a%2", "a bad %-escape in the filter name 'a%2'"},
        {"urls,a%zz", "a bad %-escape in the filter name 'a%zz'"},
        {"urls;client=a%", "a bad %-escape in the client filter name"},
        {"a,b,c,d,e,f,g,h,i", "more than 8 filters"},
        {"urls;client=", "an empty client filter name"},
        {"urls;client=a'b", "invalid client filter name 'a'b'"},
        {"urls;fail=open", "unknown parameter ';fail=open'"},
        {"urls;", "unknown parameter"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct authz_route rt;
        ck_assert_msg(route(cases[i].path, &rt) == -1, "'%s' accepted", cases[i].path);
        ck_assert_msg(strstr(g_err, cases[i].why), "'%s': '%s' lacks '%s'", cases[i].path, g_err,
                      cases[i].why);
    }
    struct authz_route rt;
    ck_assert_int_eq(route("a,b,c,d,e,f,g,h", &rt), 0); /* exactly the most */
    ck_assert_uint_eq(rt.n, 8);
}
END_TEST

/* Names of the wider rule: raw, or percent-decoded once the path is cut at
 * '/', ';' and ',' (so an escaped separator is a byte of the name); the
 * length limit after decoding. */
START_TEST(test_path_names_decoded)
{
    struct authz_route rt;
    ck_assert_int_eq(route("seen:{sku1}:2026,bf%3Ablock%2Flist%2C2;client=ips%3B%7Bv4%7D/x", &rt),
                     0);
    ck_assert_uint_eq(rt.n, 2);
    assert_name(rt.filter[0], "seen:{sku1}:2026");
    assert_name(rt.filter[1], "bf:block/list,2");
    assert_name(rt.client, "ips;{v4}");
    assert_name((struct authz_name){rt.below, rt.below_len}, "/x");
    ck_assert_int_eq(route("ur%6Cs", &rt), 0);
    assert_name(rt.filter[0], "urls");
    ck_assert_int_eq(route("urls;client=a,b", &rt), 0); /* one client filter: ',' is its */
    ck_assert_uint_eq(rt.n, 1);
    assert_name(rt.client, "a,b");
    ck_assert_int_eq(route("a+b", &rt), 0); /* a path's '+' is a '+' */
    assert_name(rt.filter[0], "a+b");

    /* FNAME_MAX bytes, raw or escaped; one more is refused. */
    char path[3 * (FNAME_MAX + 1) + 1], want[FNAME_MAX + 2];
    memset(path, 'a', FNAME_MAX);
    path[FNAME_MAX] = '\0';
    ck_assert_int_eq(route(path, &rt), 0);
    ck_assert_uint_eq(rt.filter[0].len, FNAME_MAX);
    strcat(path, "a");
    ck_assert_int_eq(route(path, &rt), -1);
    ck_assert_msg(strstr(g_err, "a filter name longer than 200 bytes"), "%s", g_err);
    for (size_t i = 0; i < FNAME_MAX; i++)
        memcpy(path + 3 * i, "%3A", 3);
    path[3 * FNAME_MAX] = '\0';
    memset(want, ':', FNAME_MAX);
    want[FNAME_MAX] = '\0';
    ck_assert_int_eq(route(path, &rt), 0);
    assert_name(rt.filter[0], want);
    strcat(path, "%3A");
    ck_assert_int_eq(route(path, &rt), -1);
    ck_assert_msg(strstr(g_err, "longer than 200 bytes"), "%s", g_err);
    path[3 * FNAME_MAX] = 'b'; /* 601 bytes that decode to 201 */
    path[3 * FNAME_MAX + 1] = '\0';
    ck_assert_int_eq(route(path, &rt), -1);
    ck_assert_msg(strstr(g_err, "longer than 200 bytes"), "%s", g_err);
}
END_TEST

/* ---- the headers ---- */

static void scan(const char *head, struct authz_headers *h)
{
    authz_scan_headers(copy(head, strlen(head)), strlen(head), h);
}

static void assert_hdr(struct authz_hdr h, const char *want, unsigned count)
{
    ck_assert_uint_eq(h.count, count);
    if (!want) {
        ck_assert_ptr_null(h.p);
        return;
    }
    ck_assert_uint_eq(h.len, strlen(want));
    ck_assert_int_eq(memcmp(h.p, want, h.len), 0);
}

START_TEST(test_scan_headers)
{
    struct authz_headers h;
    scan("GET /v1/authz/urls HTTP/1.1\r\n"
         "host: 127.0.0.1:7879\r\n"
         "X-ORIGINAL-URI:   /a/b?c=d  \r\n"
         "X-Forwarded-Host: Evil.Example:8080\r\n"
         "x-forwarded-proto:https\r\n"
         "X-Real-IP: 192.0.2.1\r\n"
         "X-Forwarded-For: 192.0.2.7, 10.0.0.1\r\n"
         "X-Forwarded-For: 10.0.0.2\r\n"
         "X-Forwarded-Uri: /t\r\n"
         "X-Original-URL-Not: x\r\n"
         "X-Original-URL: http://u/\r\n"
         "Content-Length: 0\r\n"
         "\r\n"
         "X-Real-IP: body, not a header\r\n",
         &h);
    assert_hdr(h.host, "127.0.0.1:7879", 1);
    assert_hdr(h.original_uri, "/a/b?c=d", 1);
    assert_hdr(h.forwarded_host, "Evil.Example:8080", 1);
    assert_hdr(h.forwarded_proto, "https", 1);
    assert_hdr(h.real_ip, "192.0.2.1", 1);
    assert_hdr(h.forwarded_for, "192.0.2.7, 10.0.0.1", 2);
    assert_hdr(h.forwarded_uri, "/t", 1);
    assert_hdr(h.original_url, "http://u/", 1);
    /* Bare LF line ends, an empty value, no headers at all. */
    scan("HEAD / HTTP/1.0\nHost:\nX-Original-URI: /x\n\n", &h);
    assert_hdr(h.host, "", 1);
    assert_hdr(h.original_uri, "/x", 1);
    scan("GET / HTTP/1.1\r\n\r\n", &h);
    assert_hdr(h.host, NULL, 0);
    scan("GET / HTTP/1.1", &h); /* no line end: nothing, and no read past it */
    assert_hdr(h.host, NULL, 0);
}
END_TEST

/* ---- the URL ---- */

static char g_url[512];
static size_t g_url_len;

/* Derive from a head and the path below the prefix (and the query). */
static int derive(const char *head, const char *below, const char *query)
{
    struct authz_headers h;
    char hb[1024];
    snprintf(hb, sizeof(hb), "GET /v1/authz/urls HTTP/1.1\r\n%s\r\n", head);
    scan(hb, &h);
    g_err[0] = '\0';
    int rc =
        authz_derive_url(&h, below, strlen(below), query, query ? strlen(query) : 0, query != NULL,
                         g_url, sizeof(g_url) - 1, &g_url_len, g_err, sizeof(g_err));
    g_url[rc >= 0 ? g_url_len : 0] = '\0';
    return rc;
}

START_TEST(test_url_nginx)
{
    /* The documented nginx config: X-Original-URI $request_uri,
     * X-Forwarded-Host $host, X-Forwarded-Proto $scheme. */
    ck_assert_int_eq(derive("Host: 127.0.0.1:7879\r\n"
                            "X-Original-URI: /dl/a%20b.exe?x=1&y=%2F\r\n"
                            "X-Forwarded-Host: Files.Example.COM\r\n"
                            "X-Forwarded-Proto: https\r\n",
                            "", "not-this=1"),
                     AUTHZ_FROM_HEADER);
    ck_assert_str_eq(g_url, "https://Files.Example.COM/dl/a%20b.exe?x=1&y=%2F");
    /* Host when there is no X-Forwarded-Host; http by default; a port kept. */
    ck_assert_int_eq(derive("Host: evil.example:8080\r\nX-Original-URI: /\r\n", "", NULL),
                     AUTHZ_FROM_HEADER);
    ck_assert_str_eq(g_url, "http://evil.example:8080/");
    /* The first element of a chained X-Forwarded-Host / -Proto; the scheme lower-cased. */
    ck_assert_int_eq(derive("X-Forwarded-Host: a.example, b.example\r\n"
                            "X-Forwarded-Proto: HTTPS, http\r\n"
                            "X-Original-URI: /p\r\n",
                            "", NULL),
                     AUTHZ_FROM_HEADER);
    ck_assert_str_eq(g_url, "https://a.example/p");
    /* X-Original-URI wins over the path below the prefix. */
    ck_assert_int_eq(derive("Host: h\r\nX-Original-URI: /from-header\r\n", "/below", "q"),
                     AUTHZ_FROM_HEADER);
    ck_assert_str_eq(g_url, "http://h/from-header");
}
END_TEST

START_TEST(test_url_traefik_envoy_full)
{
    /* Traefik forwardAuth: X-Forwarded-Uri. */
    ck_assert_int_eq(derive("X-Forwarded-Proto: http\r\nX-Forwarded-Host: t.example\r\n"
                            "X-Forwarded-Uri: /x/y?z\r\nX-Forwarded-Method: GET\r\n",
                            "", NULL),
                     AUTHZ_FROM_HEADER);
    ck_assert_str_eq(g_url, "http://t.example/x/y?z");
    /* X-Original-URI is preferred to X-Forwarded-Uri. */
    ck_assert_int_eq(derive("Host: h\r\nX-Forwarded-Uri: /b\r\nX-Original-URI: /a\r\n", "", NULL),
                     AUTHZ_FROM_HEADER);
    ck_assert_str_eq(g_url, "http://h/a");
    /* Envoy: the original path (and query) below the prefix, the original Host. */
    ck_assert_int_eq(
        derive("Host: envoy.example\r\nX-Forwarded-Proto: https\r\n", "/a/b.exe", "id=7&client=x"),
        AUTHZ_FROM_PATH);
    ck_assert_str_eq(g_url, "https://envoy.example/a/b.exe?id=7&client=x");
    ck_assert_int_eq(derive("Host: envoy.example\r\n", "/", ""), AUTHZ_FROM_PATH);
    ck_assert_str_eq(g_url, "http://envoy.example/?");
    /* X-Original-URL: as it is, whatever else is there. */
    ck_assert_int_eq(derive("X-Original-URL: HTTP://Whole.Example:81/p?q#f\r\nHost: other\r\n"
                            "X-Original-URI: /ignored\r\n",
                            "/ignored", NULL),
                     AUTHZ_FROM_URL);
    ck_assert_str_eq(g_url, "HTTP://Whole.Example:81/p?q#f");
}
END_TEST

START_TEST(test_url_refused)
{
    static const struct {
        const char *head, *below, *why;
    } cases[] = {
        {"Host: h\r\n", "", "no URL to judge"},
        {"", "", "no URL to judge"},
        {"X-Original-URI: /x\r\n", "", "no host"},
        {"X-Original-URL:\r\n", "", "X-Original-URL is empty"},
        {"X-Original-URL: a\r\nX-Original-URL: b\r\n", "", "X-Original-URL given 2 times"},
        {"Host: h\r\nX-Original-URI: /a\r\nX-Original-URI: /b\r\n", "", "X-Original-URI given 2"},
        {"Host: a\r\nHost: b\r\nX-Original-URI: /\r\n", "", "Host given 2 times"},
        {"Host: h\r\nX-Original-URI: x/y\r\n", "", "X-Original-URI 'x/y' does not start with '/'"},
        {"Host: h\r\nX-Forwarded-Uri:\r\n", "", "X-Forwarded-Uri '' does not start"},
        {"Host: good.example@evil.example\r\nX-Original-URI: /\r\n", "", "(it has '@')"},
        {"Host: good.example/evil\r\nX-Original-URI: /\r\n", "", "(it has '/')"},
        {"Host: a\\b\r\nX-Original-URI: /\r\n", "", "(it has '\\')"},
        {"Host: a#b\r\nX-Original-URI: /\r\n", "", "(it has '#')"},
        {"Host: a?b\r\nX-Original-URI: /\r\n", "", "(it has '?')"},
        {"Host: a b\r\nX-Original-URI: /\r\n", "", "white space or a control byte"},
        {"Host:\r\nX-Original-URI: /\r\n", "", "Host is empty"},
        {"X-Forwarded-Host: , b\r\nX-Original-URI: /\r\n", "", "X-Forwarded-Host is empty"},
        {"Host: h\r\nX-Forwarded-Proto: 1http\r\nX-Original-URI: /\r\n", "", "not a scheme"},
        {"Host: h\r\nX-Forwarded-Proto: ht tp\r\nX-Original-URI: /\r\n", "", "not a scheme"},
        {"Host: h\r\nX-Forwarded-Proto:\r\nX-Original-URI: /\r\n", "", "not a scheme"},
        {"Host: h\r\nX-Forwarded-Proto: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", "/",
         "not a scheme"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_msg(derive(cases[i].head, cases[i].below, NULL) == -1, "'%s' accepted: %s",
                      cases[i].head, g_url);
        ck_assert_msg(strstr(g_err, cases[i].why), "'%s': '%s' lacks '%s'", cases[i].head, g_err,
                      cases[i].why);
    }
}
END_TEST

/* Exactly as long as the buffer fits, and one byte over. */
START_TEST(test_url_bounds)
{
    struct authz_headers h;
    const char *head = "GET / HTTP/1.1\r\nHost: h\r\nX-Original-URI: /abc\r\n\r\n";
    scan(head, &h);
    char out[11]; /* "http://h/abc" is 12 bytes */
    size_t len = 99;
    ck_assert_int_eq(
        authz_derive_url(&h, "", 0, NULL, 0, false, out, 11, &len, g_err, sizeof(g_err)), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "longer than 11 bytes"));
    ck_assert_uint_eq(len, 0);
    char out2[12];
    ck_assert_int_eq(
        authz_derive_url(&h, "", 0, NULL, 0, false, out2, 12, &len, g_err, sizeof(g_err)),
        AUTHZ_FROM_HEADER);
    ck_assert_uint_eq(len, 12);
    ck_assert_int_eq(memcmp(out2, "http://h/abc", 12), 0);
    scan("GET / HTTP/1.1\r\nX-Original-URL: http://x/\r\n\r\n", &h);
    ck_assert_int_eq(
        authz_derive_url(&h, "", 0, NULL, 0, false, out, 8, &len, g_err, sizeof(g_err)), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "X-Original-URL is longer than 8 bytes"));
}
END_TEST

/* ---- the client address ---- */

static int client(const char *head, char *out, size_t cap)
{
    struct authz_headers h;
    char hb[512];
    snprintf(hb, sizeof(hb), "GET / HTTP/1.1\r\n%s\r\n", head);
    scan(hb, &h);
    const char *p;
    size_t len;
    int rc = authz_client_addr(&h, &p, &len, g_err, sizeof(g_err));
    snprintf(out, cap, "%.*s", (int)len, p ? p : "");
    return rc;
}

START_TEST(test_client_addr)
{
    char a[128];
    ck_assert_int_eq(client("X-Real-IP: 192.0.2.1\r\nX-Forwarded-For: 198.51.100.1\r\n", a, 128),
                     1);
    ck_assert_str_eq(a, "192.0.2.1");
    ck_assert_int_eq(client("X-Forwarded-For:  198.51.100.1 , 10.0.0.1\r\n", a, 128), 1);
    ck_assert_str_eq(a, "198.51.100.1");
    ck_assert_int_eq(
        client("X-Forwarded-For: 2001:db8::1\r\nX-Forwarded-For: 10.0.0.9\r\n", a, 128), 1);
    ck_assert_str_eq(a, "2001:db8::1");
    /* An empty X-Real-IP falls back to X-Forwarded-For. */
    ck_assert_int_eq(client("X-Real-IP:\r\nX-Forwarded-For: 203.0.113.5\r\n", a, 128), 1);
    ck_assert_str_eq(a, "203.0.113.5");
    ck_assert_int_eq(client("Host: h\r\n", a, 128), 0);
    ck_assert_int_eq(client("X-Forwarded-For: , 10.0.0.1\r\n", a, 128), 0);
    ck_assert_int_eq(client("X-Real-IP: 1.1.1.1\r\nX-Real-IP: 2.2.2.2\r\n", a, 128), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "X-Real-IP given 2 times"));
}
END_TEST

/* ---- the request's context ---- */

static struct authz_context g_ctx;

static void context(const char *head)
{
    struct authz_headers h;
    char hb[1024];
    snprintf(hb, sizeof(hb), "GET / HTTP/1.1\r\n%s\r\n", head);
    scan(hb, &h);
    memset(&g_ctx, 0x5a, sizeof(g_ctx)); /* stale: every field must be written */
    authz_context(&h, &g_ctx);
}

static void assert_span(const char *p, size_t len, const char *want)
{
    if (!want) {
        ck_assert_ptr_null(p);
        ck_assert_uint_eq(len, 0);
        return;
    }
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(len, strlen(want));
    ck_assert_int_eq(memcmp(p, want, len), 0);
}

START_TEST(test_context)
{
    /* A browser's headers as nginx passes them on, the method set by the
     * config. */
    context("Host: tracker.example\r\nsec-fetch-dest:  script \r\n"
            "Referer: https://news.example/a?b\r\nOrigin: https://other.example\r\n"
            "X-Original-Method: POST\r\nX-Forwarded-Method: GET\r\n");
    assert_span(g_ctx.dest, g_ctx.dest_len, "script");
    assert_span(g_ctx.from, g_ctx.from_len, "https://news.example/a?b");
    assert_span(g_ctx.method, g_ctx.method_len, "POST");
    /* Origin when there is no Referer; Traefik's X-Forwarded-Method. */
    context("ORIGIN: https://news.example\r\nX-Forwarded-Method: DELETE\r\n");
    assert_span(g_ctx.dest, g_ctx.dest_len, NULL);
    assert_span(g_ctx.from, g_ctx.from_len, "https://news.example");
    assert_span(g_ctx.method, g_ctx.method_len, "DELETE");
    /* None of them. */
    context("Host: h\r\n");
    assert_span(g_ctx.dest, g_ctx.dest_len, NULL);
    assert_span(g_ctx.from, g_ctx.from_len, NULL);
    assert_span(g_ctx.method, g_ctx.method_len, NULL);
    /* Given twice or empty: absent, and the next source is used; an opaque
     * origin names no page. */
    context("Sec-Fetch-Dest: script\r\nSec-Fetch-Dest: image\r\nReferer:\r\n"
            "Origin: null\r\nX-Original-Method: GET\r\nX-Original-Method: POST\r\n"
            "X-Forwarded-Method: PUT\r\n");
    assert_span(g_ctx.dest, g_ctx.dest_len, NULL);
    assert_span(g_ctx.from, g_ctx.from_len, NULL);
    assert_span(g_ctx.method, g_ctx.method_len, "PUT");
    context("Referer: https://a.example/\r\nReferer: https://b.example/\r\n"
            "Origin: https://c.example\r\n");
    assert_span(g_ctx.from, g_ctx.from_len, "https://c.example");
    /* Names are whole: a longer header that starts alike is another one. */
    context("Sec-Fetch-Destination: script\r\nReferrer: https://a.example/\r\n"
            "X-Original-Methods: POST\r\n");
    assert_span(g_ctx.dest, g_ctx.dest_len, NULL);
    assert_span(g_ctx.from, g_ctx.from_len, NULL);
    assert_span(g_ctx.method, g_ctx.method_len, NULL);
}
END_TEST

static Suite *authz_suite(void)
{
    Suite *s = suite_create("authz");
    TCase *tc = tcase_create("path");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_path_one);
    tcase_add_test(tc, test_path_several_client_below);
    tcase_add_test(tc, test_path_refused);
    tcase_add_test(tc, test_path_names_decoded);
    suite_add_tcase(s, tc);
    tc = tcase_create("headers");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_scan_headers);
    tcase_add_test(tc, test_client_addr);
    tcase_add_test(tc, test_context);
    suite_add_tcase(s, tc);
    tc = tcase_create("url");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_url_nginx);
    tcase_add_test(tc, test_url_traefik_envoy_full);
    tcase_add_test(tc, test_url_refused);
    tcase_add_test(tc, test_url_bounds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(authz_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
