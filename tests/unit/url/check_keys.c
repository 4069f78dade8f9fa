/* Unit tests for key kinds applied to a query (src/url/keys.c): exact keys
 * probe the item itself, untouched and uncopied; host keys the host and its
 * parents from a host, a URL or an e-mail address; url keys the Safe Browsing
 * expressions in their order; bad input is an error with a reason, never a
 * probe; MATCH's choice is the most specific expression present. */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url/keys.h"

static struct keys_query g_q; /* 16 KiB: not on the test's stack */
static char g_err[256];

/* Expand q as kind and compare the probes with the NULL-terminated list. */
static void probes_are(int line, enum keys_kind kind, const char *item, ...)
{
    size_t n = strlen(item);
    char *b = malloc(n ? n : 1); /* exactly n bytes: ASan sees a read past the item */
    ck_assert_ptr_nonnull(b);
    memcpy(b, item, n);
    g_err[0] = '\0';
    int rc = keys_expand(kind, b, n, &g_q, g_err, sizeof(g_err));
    ck_assert_msg(rc == 0, "line %d: %s: %s", line, item, g_err);
    ck_assert_int_eq(g_q.kind, kind);
    va_list ap;
    va_start(ap, item);
    size_t i = 0;
    for (const char *want; (want = va_arg(ap, const char *)) != NULL; i++) {
        ck_assert_msg(i < g_q.n, "line %d: %s: only %zu probes", line, item, g_q.n);
        ck_assert_msg(g_q.p[i].len == strlen(want) && !memcmp(g_q.p[i].data, want, g_q.p[i].len),
                      "line %d: %s: probe %zu is \"%.*s\", want \"%s\"", line, item, i,
                      (int)g_q.p[i].len, (const char *)g_q.p[i].data, want);
    }
    va_end(ap);
    ck_assert_msg(i == g_q.n, "line %d: %s: %zu probes, want %zu", line, item, g_q.n, i);
    free(b);
}

static void refused(int line, enum keys_kind kind, const char *item, size_t n, const char *word)
{
    g_err[0] = '\0';
    g_q.n = 99;
    ck_assert_msg(keys_expand(kind, item, n, &g_q, g_err, sizeof(g_err)) == -1,
                  "line %d: %.60s accepted", line, item);
    ck_assert_msg(strstr(g_err, word) != NULL, "line %d: \"%s\" lacks \"%s\"", line, g_err, word);
    ck_assert_uint_eq(g_q.n, 0);
}

START_TEST(test_exact)
{
    /* The item itself: same pointer, same length, whatever the bytes. */
    static const char item[] = "HTTP://Evil.Example:80/a/../b";
    char err[64];
    ck_assert_int_eq(keys_expand(KEYS_EXACT, item, sizeof(item) - 1, &g_q, err, sizeof(err)), 0);
    ck_assert_uint_eq(g_q.n, 1);
    ck_assert_ptr_eq(g_q.p[0].data, item);
    ck_assert_uint_eq(g_q.p[0].len, sizeof(item) - 1);
    static const char nul[] = {'a', '\0', 'b', '\n'};
    ck_assert_int_eq(keys_expand(KEYS_EXACT, nul, 4, &g_q, err, sizeof(err)), 0);
    ck_assert_uint_eq(g_q.n, 1);
    ck_assert_uint_eq(g_q.p[0].len, 4);
    ck_assert_int_eq(keys_expand(KEYS_EXACT, "", 0, &g_q, err, sizeof(err)), 0);
    ck_assert_uint_eq(g_q.n, 1);
    ck_assert_uint_eq(g_q.p[0].len, 0);
    /* Any length: the daemon's max_item bounds it, not the kind. */
    size_t big = 1u << 20;
    char *b = malloc(big);
    ck_assert_ptr_nonnull(b);
    memset(b, 'x', big);
    ck_assert_int_eq(keys_expand(KEYS_EXACT, b, big, &g_q, err, sizeof(err)), 0);
    ck_assert_uint_eq(g_q.p[0].len, big);
    free(b);
}
END_TEST

START_TEST(test_host)
{
    probes_are(__LINE__, KEYS_HOST, "a.b.example.org", "a.b.example.org", "b.example.org",
               "example.org", "org", NULL);
    /* The gateway's URL: its host, lower-cased, trailing dot and port gone. */
    probes_are(__LINE__, KEYS_HOST, "http://Login.EVIL.com.:8080/a/./b/../c?x=1#top",
               "login.evil.com", "evil.com", "com", NULL);
    /* The mail server's address: the part after '@'. */
    probes_are(__LINE__, KEYS_HOST, "bob@mx.sub.spam.example", "mx.sub.spam.example",
               "sub.spam.example", "spam.example", "example", NULL);
    probes_are(__LINE__, KEYS_HOST, "<bob@Spam.Example>", "spam.example", "example", NULL);
    /* IP addresses exactly, in any spelling; no parents. */
    probes_are(__LINE__, KEYS_HOST, "http://0x7f.1/x", "127.0.0.1", NULL);
    probes_are(__LINE__, KEYS_HOST, "3279880203", "195.127.0.11", NULL);
    probes_are(__LINE__, KEYS_HOST, "[2001:DB8:0:0:0::1]", "2001:db8::1", NULL);
    probes_are(__LINE__, KEYS_HOST, "http://[2001:db8::1]:443/", "2001:db8::1", NULL);
    /* IDN to punycode. */
    probes_are(__LINE__, KEYS_HOST,
               "b\xc3\xbc"
               "cher.example",
               "xn--bcher-kva.example", "example", NULL);
}
END_TEST

START_TEST(test_url)
{
    /* The specification's example, exactly its eight expressions, in order. */
    probes_are(__LINE__, KEYS_URL, "http://a.b.c/1/2.html?param=1", "a.b.c/1/2.html?param=1",
               "a.b.c/1/2.html", "a.b.c/", "a.b.c/1/", "b.c/1/2.html?param=1", "b.c/1/2.html",
               "b.c/", "b.c/1/", NULL);
    probes_are(__LINE__, KEYS_URL, "http://Login.EVIL.com.:8080/a/./b/../c?x=1#top",
               "login.evil.com/a/c?x=1", "login.evil.com/a/c", "login.evil.com/",
               "login.evil.com/a/", "evil.com/a/c?x=1", "evil.com/a/c", "evil.com/", "evil.com/a/",
               NULL);
    /* No scheme: read as http://. */
    probes_are(__LINE__, KEYS_URL, "evil.example", "evil.example/", NULL);
    probes_are(__LINE__, KEYS_URL, "http://1.2.3.4/1/", "1.2.3.4/1/", "1.2.3.4/", NULL);
    /* At most 30. */
    g_err[0] = '\0';
    static const char deep[] = "http://a.b.c.d.e.f.g/1/2/3/4/5/6.html?q";
    ck_assert_int_eq(keys_expand(KEYS_URL, deep, sizeof(deep) - 1, &g_q, g_err, sizeof(g_err)), 0);
    ck_assert_uint_eq(g_q.n, 30);
}
END_TEST

START_TEST(test_bad_input)
{
    refused(__LINE__, KEYS_URL, "", 0, "bad URL");
    refused(__LINE__, KEYS_URL, "mailto:bob@example.org", 22, "bad URL");
    refused(__LINE__, KEYS_URL, "http://host:99999/", 18, "port");
    refused(__LINE__, KEYS_HOST, "", 0, "bad host");
    refused(__LINE__, KEYS_HOST, "bob@", 4, "bad host");
    refused(__LINE__, (enum keys_kind)3, "x", 1, "unknown key kind 3");
    /* Over-long: an error naming the limit, never a truncated probe. */
    size_t n = URL_CANON_MAX + 100;
    char *b = malloc(n);
    ck_assert_ptr_nonnull(b);
    memcpy(b, "http://h/", 9);
    memset(b + 9, 'a', n - 9);
    refused(__LINE__, KEYS_URL, b, n, "longer than");
    refused(__LINE__, KEYS_HOST, b, n, "longer than");
    memset(b, 'a', 300); /* a 300-byte host */
    refused(__LINE__, KEYS_HOST, b, 300, "longer than");
    free(b);
    /* A query that failed leaves nothing behind for the next one to use. */
    probes_are(__LINE__, KEYS_URL, "evil.example/x", "evil.example/x", "evil.example/", NULL);
}
END_TEST

START_TEST(test_first_present_and_describe)
{
    probes_are(__LINE__, KEYS_URL, "http://a.b.c/1/2.html?param=1", "a.b.c/1/2.html?param=1",
               "a.b.c/1/2.html", "a.b.c/", "a.b.c/1/", "b.c/1/2.html?param=1", "b.c/1/2.html",
               "b.c/", "b.c/1/", NULL);
    bool present[KEYS_MAX] = {false};
    ck_assert_uint_eq(keys_first_present(&g_q, present), g_q.n);
    present[7] = present[6] = true; /* b.c/1/ and b.c/ listed: the order decides */
    ck_assert_uint_eq(keys_first_present(&g_q, present), 6);
    present[3] = true;
    ck_assert_uint_eq(keys_first_present(&g_q, present), 3);
    char d[256];
    keys_describe(&g_q, 7, d, sizeof(d));
    ck_assert_str_eq(d, "\"b.c/1/\" (parent domain b.c, directory /1/)");
    keys_describe(&g_q, 99, d, sizeof(d));
    ck_assert_str_eq(d, "(no probe 99)");
    char err[64];
    ck_assert_int_eq(keys_expand(KEYS_HOST, "x.evil.example", 14, &g_q, err, sizeof(err)), 0);
    keys_describe(&g_q, 1, d, sizeof(d));
    ck_assert_str_eq(d, "\"evil.example\" (parent domain)");
    ck_assert_int_eq(keys_expand(KEYS_EXACT, "an item", 7, &g_q, err, sizeof(err)), 0);
    keys_describe(&g_q, 0, d, sizeof(d));
    ck_assert_str_eq(d, "\"an item\" (exact item)");
}
END_TEST

START_TEST(test_kind_names)
{
    enum keys_kind k;
    for (unsigned i = 0; i < KEYS_KIND_COUNT; i++) {
        ck_assert_int_eq(keys_kind_parse(keys_kind_name((enum keys_kind)i), &k), 0);
        ck_assert_uint_eq(k, i);
    }
    ck_assert_str_eq(keys_kind_name(KEYS_URL), "url");
    ck_assert_str_eq(keys_kind_name((enum keys_kind)3), "?");
    ck_assert_int_eq(keys_kind_parse("domain", &k), -1);
    ck_assert_int_eq(keys_kind_parse("Exact", &k), -1);
}
END_TEST

static Suite *url_keys_suite(void)
{
    Suite *s = suite_create("keys");
    TCase *tc = tcase_create("keys");
    tcase_add_test(tc, test_exact);
    tcase_add_test(tc, test_host);
    tcase_add_test(tc, test_url);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_first_present_and_describe);
    tcase_add_test(tc, test_kind_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(url_keys_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
