/* Unit tests for lookup expressions (src/url/expr.c): the Safe Browsing
 * suffix/prefix examples exactly, in order, the bounds (5 hosts, 6 paths, 30
 * expressions), deduplication, IP hosts, and the parent domains of the `host`
 * key kind with its label cap. */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url/expr.h"

static struct url_canon g_c;
static struct url_exprs g_x;
static char g_err[256];

/* Expand q as kind and compare with the NULL-terminated list of expected
 * expressions, in order. */
static void exprs_are(int line, enum url_kind kind, const char *q, ...)
{
    size_t n = strlen(q);
    char *b = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(b);
    memcpy(b, q, n);
    int rc = url_expr_query(kind, &g_c, b, n, &g_x, g_err, sizeof(g_err));
    free(b);
    ck_assert_msg(rc == 0, "line %d: %s: %s", line, q, g_err);
    va_list ap;
    va_start(ap, q);
    size_t i = 0;
    for (const char *want; (want = va_arg(ap, const char *)) != NULL; i++) {
        ck_assert_msg(i < g_x.n, "line %d: %s: only %zu expressions", line, q, g_x.n);
        ck_assert_msg(g_x.e[i].len == strlen(want) && !memcmp(g_x.e[i].ptr, want, g_x.e[i].len),
                      "line %d: %s: expression %zu is \"%.*s\", want \"%s\"", line, q, i,
                      (int)g_x.e[i].len, g_x.e[i].ptr, want);
    }
    va_end(ap);
    ck_assert_msg(i == g_x.n, "line %d: %s: %zu expressions, want %zu", line, q, g_x.n, i);
}

#define URL_EXPRS(q, ...) exprs_are(__LINE__, URL_KIND_URL, q, __VA_ARGS__, (const char *)NULL)
#define HOST_EXPRS(q, ...) exprs_are(__LINE__, URL_KIND_HOST, q, __VA_ARGS__, (const char *)NULL)

/* The three examples of the spec's "Suffix/Prefix Expressions" section. */
START_TEST(spec_examples)
{
    URL_EXPRS("http://a.b.c/1/2.html?param=1", "a.b.c/1/2.html?param=1", "a.b.c/1/2.html", "a.b.c/",
              "a.b.c/1/", "b.c/1/2.html?param=1", "b.c/1/2.html", "b.c/", "b.c/1/");
    URL_EXPRS("http://a.b.c.d.e.f.g/1.html", "a.b.c.d.e.f.g/1.html", "a.b.c.d.e.f.g/",
              "c.d.e.f.g/1.html", "c.d.e.f.g/", "d.e.f.g/1.html", "d.e.f.g/", "e.f.g/1.html",
              "e.f.g/", "f.g/1.html", "f.g/");
    URL_EXPRS("http://1.2.3.4/1/", "1.2.3.4/1/", "1.2.3.4/");
}
END_TEST

START_TEST(more_urls)
{
    URL_EXPRS("http://a.b.c/1/2/3/4/5/", "a.b.c/1/2/3/4/5/", "a.b.c/", "a.b.c/1/", "a.b.c/1/2/",
              "a.b.c/1/2/3/", "b.c/1/2/3/4/5/", "b.c/", "b.c/1/", "b.c/1/2/", "b.c/1/2/3/");
    URL_EXPRS("http://a.b.c.d.e/1.html", "a.b.c.d.e/1.html", "a.b.c.d.e/", "b.c.d.e/1.html",
              "b.c.d.e/", "c.d.e/1.html", "c.d.e/", "d.e/1.html", "d.e/");
    URL_EXPRS("http://a.b/", "a.b/");
    URL_EXPRS("http://b/", "b/");
    URL_EXPRS("http://a.b/?", "a.b/?", "a.b/");
    URL_EXPRS("http://[2001:470:1:18::114]/a/b", "[2001:470:1:18::114]/a/b",
              "[2001:470:1:18::114]/", "[2001:470:1:18::114]/a/");
    URL_EXPRS("http://[::ffff:1.2.3.4]/a/b", "1.2.3.4/a/b", "1.2.3.4/", "1.2.3.4/a/");
    URL_EXPRS("evil.example", "evil.example/");
    URL_EXPRS("HTTP://WWW.Evil.Example:8080/a/./b/../c?x=1#f", "www.evil.example/a/c?x=1",
              "www.evil.example/a/c", "www.evil.example/", "www.evil.example/a/",
              "evil.example/a/c?x=1", "evil.example/a/c", "evil.example/", "evil.example/a/");
}
END_TEST

/* The bounds: 5 hosts x 6 paths is the most, and is reached. */
START_TEST(bounds)
{
    URL_EXPRS("http://a.b.c.d.e.f/1/2/3/4/5.html?q", "a.b.c.d.e.f/1/2/3/4/5.html?q",
              "a.b.c.d.e.f/1/2/3/4/5.html", "a.b.c.d.e.f/", "a.b.c.d.e.f/1/", "a.b.c.d.e.f/1/2/",
              "a.b.c.d.e.f/1/2/3/", "b.c.d.e.f/1/2/3/4/5.html?q", "b.c.d.e.f/1/2/3/4/5.html",
              "b.c.d.e.f/", "b.c.d.e.f/1/", "b.c.d.e.f/1/2/", "b.c.d.e.f/1/2/3/",
              "c.d.e.f/1/2/3/4/5.html?q", "c.d.e.f/1/2/3/4/5.html", "c.d.e.f/", "c.d.e.f/1/",
              "c.d.e.f/1/2/", "c.d.e.f/1/2/3/", "d.e.f/1/2/3/4/5.html?q", "d.e.f/1/2/3/4/5.html",
              "d.e.f/", "d.e.f/1/", "d.e.f/1/2/", "d.e.f/1/2/3/", "e.f/1/2/3/4/5.html?q",
              "e.f/1/2/3/4/5.html", "e.f/", "e.f/1/", "e.f/1/2/", "e.f/1/2/3/");
    ck_assert_uint_eq(g_x.n, URL_EXPR_MAX);
    for (size_t i = 0; i < g_x.n; i++)
        for (size_t j = i + 1; j < g_x.n; j++)
            ck_assert(g_x.e[i].len != g_x.e[j].len ||
                      memcmp(g_x.e[i].ptr, g_x.e[j].ptr, g_x.e[i].len) != 0);
    /* Which form each is. */
    ck_assert_int_eq(g_x.e[0].path, URL_EXPR_PATH_QUERY);
    ck_assert_int_eq(g_x.e[1].path, URL_EXPR_PATH_EXACT);
    ck_assert_int_eq(g_x.e[2].path, URL_EXPR_PATH_PREFIX);
    ck_assert_int_eq(g_x.e[0].host_rank, 0);
    ck_assert_int_eq(g_x.e[29].host_rank, 4);
}
END_TEST

START_TEST(hosts)
{
    HOST_EXPRS("a.b.example.org", "a.b.example.org", "b.example.org", "example.org", "org");
    HOST_EXPRS("Example.ORG.", "example.org", "org");
    HOST_EXPRS("localhost", "localhost");
    HOST_EXPRS("1.2.3.4", "1.2.3.4");
    HOST_EXPRS("0x01020304", "1.2.3.4");
    HOST_EXPRS("[2001:DB8::1]", "2001:db8::1");
    HOST_EXPRS("http://[2001:DB8::1]:8080/x", "2001:db8::1");
    HOST_EXPRS("https://user@WWW.Evil.Example/x?y", "www.evil.example", "evil.example", "example");
    HOST_EXPRS("someone@mail.evil.example", "mail.evil.example", "evil.example", "example");
    HOST_EXPRS("evil.example/path", "evil.example", "example");
}
END_TEST

/* Up to 16 labels every parent is tried; beyond, the host and its 15
 * shortest parents. */
START_TEST(host_label_cap)
{
    HOST_EXPRS("p.o.n.m.l.k.j.i.h.g.f.e.d.c.b.a", "p.o.n.m.l.k.j.i.h.g.f.e.d.c.b.a",
               "o.n.m.l.k.j.i.h.g.f.e.d.c.b.a", "n.m.l.k.j.i.h.g.f.e.d.c.b.a",
               "m.l.k.j.i.h.g.f.e.d.c.b.a", "l.k.j.i.h.g.f.e.d.c.b.a", "k.j.i.h.g.f.e.d.c.b.a",
               "j.i.h.g.f.e.d.c.b.a", "i.h.g.f.e.d.c.b.a", "h.g.f.e.d.c.b.a", "g.f.e.d.c.b.a",
               "f.e.d.c.b.a", "e.d.c.b.a", "d.c.b.a", "c.b.a", "b.a", "a");
    HOST_EXPRS("r.q.p.o.n.m.l.k.j.i.h.g.f.e.d.c.b.a", "r.q.p.o.n.m.l.k.j.i.h.g.f.e.d.c.b.a",
               "o.n.m.l.k.j.i.h.g.f.e.d.c.b.a", "n.m.l.k.j.i.h.g.f.e.d.c.b.a",
               "m.l.k.j.i.h.g.f.e.d.c.b.a", "l.k.j.i.h.g.f.e.d.c.b.a", "k.j.i.h.g.f.e.d.c.b.a",
               "j.i.h.g.f.e.d.c.b.a", "i.h.g.f.e.d.c.b.a", "h.g.f.e.d.c.b.a", "g.f.e.d.c.b.a",
               "f.e.d.c.b.a", "e.d.c.b.a", "d.c.b.a", "c.b.a", "b.a", "a");
    ck_assert_uint_eq(g_x.n, URL_EXPR_HOST_LABELS);
    ck_assert_int_eq(g_x.e[0].host_rank, 0);
    ck_assert_int_eq(g_x.e[1].host_rank, 3);
    ck_assert_int_eq(g_x.e[15].host_rank, 17);
}
END_TEST

START_TEST(describe)
{
    char d[256];
    URL_EXPRS("http://a.b.c/1/2.html?param=1", "a.b.c/1/2.html?param=1", "a.b.c/1/2.html", "a.b.c/",
              "a.b.c/1/", "b.c/1/2.html?param=1", "b.c/1/2.html", "b.c/", "b.c/1/");
    url_expr_describe(&g_x, 0, d, sizeof(d));
    ck_assert_str_eq(d, "\"a.b.c/1/2.html?param=1\" (host a.b.c, exact path and query)");
    url_expr_describe(&g_x, 5, d, sizeof(d));
    ck_assert_str_eq(d, "\"b.c/1/2.html\" (parent domain b.c, exact path)");
    url_expr_describe(&g_x, 7, d, sizeof(d));
    ck_assert_str_eq(d, "\"b.c/1/\" (parent domain b.c, directory /1/)");
    url_expr_describe(&g_x, 8, d, sizeof(d));
    ck_assert_str_eq(d, "(no expression 8)");
    HOST_EXPRS("a.example.org", "a.example.org", "example.org", "org");
    url_expr_describe(&g_x, 0, d, sizeof(d));
    ck_assert_str_eq(d, "\"a.example.org\" (exact host)");
    url_expr_describe(&g_x, 1, d, sizeof(d));
    ck_assert_str_eq(d, "\"example.org\" (parent domain)");
    /* A short buffer is cut, still terminated. */
    ck_assert_int_gt(url_expr_describe(&g_x, 1, d, 5), 5);
    ck_assert_str_eq(d, "\"exa");
}
END_TEST

/* url_canon_url's fast path notes the host's last dots and the path's first
 * slashes, and url_expr_url uses them instead of scanning: the same
 * expressions, in the same order, as a scan of the same canonical URL. */
START_TEST(fast_notes)
{
    static const char *const urls[] = {
        "http://a.b.c/1/2.html?param=1",
        "http://a.b.c.d.e.f.g/1.html",
        "HTTPS://Www.Example.COM",
        "http://example.com?q=1",
        "http://x/",
        "http://x",
        "http://a.b/1/2/3/4/5/6/7",
        "http://a.b.c.d.e/1/2/",
        "http://a.b.c.d.e.f/1/2/3/4/",
        "https://E220A8.EXAMPLE.COM:8080/p/0/x",
        "a.b.c.d.e.f.g.h.i.j.k/p/q?r=/s/t",
        "http://one.two/?",
        "http://w.x.y.z/a/b/c/d/e?x/y",
    };
    static struct url_exprs fast;
    for (size_t u = 0; u < sizeof(urls) / sizeof(urls[0]); u++) {
        ck_assert_int_eq(url_canon_url(&g_c, urls[u], strlen(urls[u]), g_err, sizeof(g_err)), 0);
        ck_assert_msg(g_c.marked, "%s: not taken by the fast path", urls[u]);
        url_expr_url(&g_c, &fast);
        g_c.marked = false;
        url_expr_url(&g_c, &g_x);
        ck_assert_uint_eq(fast.n, g_x.n);
        for (size_t i = 0; i < g_x.n; i++)
            ck_assert_msg(fast.e[i].ptr == g_x.e[i].ptr && fast.e[i].len == g_x.e[i].len &&
                              fast.e[i].host_rank == g_x.e[i].host_rank &&
                              fast.e[i].path == g_x.e[i].path,
                          "%s: expression %zu \"%.*s\", scanned \"%.*s\"", urls[u], i,
                          (int)fast.e[i].len, fast.e[i].ptr, (int)g_x.e[i].len, g_x.e[i].ptr);
    }
    /* The general path leaves no notes. */
    ck_assert_int_eq(url_canon_url(&g_c, "http://a..b/%41", 15, g_err, sizeof(g_err)), 0);
    ck_assert(!g_c.marked);
}
END_TEST

START_TEST(errors)
{
    ck_assert_int_eq(url_expr_query(URL_KIND_URL, &g_c, "/x", 2, &g_x, g_err, sizeof(g_err)), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "no host"));
    ck_assert_int_eq(url_expr_query(URL_KIND_HOST, &g_c, "", 0, &g_x, g_err, sizeof(g_err)), -1);
}
END_TEST

static Suite *url_expr_suite(void)
{
    Suite *s = suite_create("expr");
    TCase *tc = tcase_create("url");
    tcase_add_test(tc, spec_examples);
    tcase_add_test(tc, more_urls);
    tcase_add_test(tc, bounds);
    suite_add_tcase(s, tc);
    tc = tcase_create("host");
    tcase_add_test(tc, hosts);
    tcase_add_test(tc, host_label_cap);
    tcase_add_test(tc, describe);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, fast_notes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(url_expr_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
