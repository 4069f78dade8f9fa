/* Unit tests for the Adblock line parser (src/adblock/rule.c, options.c):
 * every class of line, anchors and the host part of `||`, each option and
 * its negation, the rejections with their reasons. Lines are copied to
 * exact-length heap buffers so ASan sees any read past their end. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adblock/rule.h"

static struct adblock_rule g_r;
static char *g_buf;

static enum adblock_class parse(const char *s)
{
    size_t n = strlen(s);
    free(g_buf);
    g_buf = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(g_buf);
    memcpy(g_buf, s, n);
    enum adblock_class c = adblock_rule_parse(g_buf, n, &g_r);
    ck_assert_int_eq(c, g_r.cls);
    return c;
}

static void teardown(void)
{
    free(g_buf);
    g_buf = NULL;
}

#define IS(line, cls)                                                                              \
    do {                                                                                           \
        enum adblock_class got_ = parse(line);                                                     \
        ck_assert_msg(got_ == (cls), "%s: %s, not %s (%s)", line, adblock_class_name(got_),        \
                      adblock_class_name(cls), g_r.why);                                           \
    } while (0)

/* The pattern the parser found, as text. */
static void pattern_is(const char *want)
{
    size_t n = g_r.pat_end - g_r.pat_off;
    ck_assert_msg(n == strlen(want) && memcmp(g_r.line + g_r.pat_off, want, n) == 0,
                  "pattern `%.*s`, want `%s`", (int)n, g_r.line + g_r.pat_off, want);
}

START_TEST(test_classes)
{
    IS("", ADBLOCK_CLASS_COMMENT);
    IS("   ", ADBLOCK_CLASS_COMMENT);
    IS("! Title: EasyList", ADBLOCK_CLASS_COMMENT);
    IS("[Adblock Plus 2.0]", ADBLOCK_CLASS_COMMENT);
    IS("# a hosts-file comment", ADBLOCK_CLASS_COMMENT);
    IS("##.ad-banner", ADBLOCK_CLASS_COSMETIC);
    IS("example.com##.ad", ADBLOCK_CLASS_COSMETIC);
    IS("example.com#@#.ad", ADBLOCK_CLASS_COSMETIC);
    IS("example.com#?#div:has(> .ad)", ADBLOCK_CLASS_COSMETIC);
    IS("example.com#$#body { color: red }", ADBLOCK_CLASS_COSMETIC);
    IS("example.com##+js(aopr, ads)", ADBLOCK_CLASS_COSMETIC);
    IS("example.com#%#window.x=1", ADBLOCK_CLASS_COSMETIC);
    IS("example.com##^script:has-text(ad)", ADBLOCK_CLASS_COSMETIC);
    IS("0.0.0.0 ads.example", ADBLOCK_CLASS_HOSTS);
    IS("127.0.0.1\tads.example", ADBLOCK_CLASS_HOSTS);
    IS("||ads.example^", ADBLOCK_CLASS_NETWORK);
    IS("  ||ads.example^  ", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.len, strlen("||ads.example^")); /* trimmed: the text a verdict names */
    IS("/banner/ad.", ADBLOCK_CLASS_NETWORK);
    IS("-ad-banner.", ADBLOCK_CLASS_NETWORK);
}
END_TEST

START_TEST(test_anchors)
{
    IS("||connect.facebook.net^*/fbevents.js", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.anchor, ADBLOCK_ANCHOR_HOST);
    pattern_is("connect.facebook.net^*/fbevents.js");
    ck_assert_uint_eq(g_r.host_len, strlen("connect.facebook.net"));
    IS("|http://example.com/|", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.anchor, ADBLOCK_ANCHOR_START | ADBLOCK_ANCHOR_END);
    pattern_is("http://example.com/");
    IS("|https://x.y/path", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.anchor, ADBLOCK_ANCHOR_START);
    IS("/pagead/conversion.", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.anchor, 0);
    ck_assert(!g_r.regex);
    pattern_is("/pagead/conversion.");
    IS("@@||evil.example^", ADBLOCK_CLASS_NETWORK);
    ck_assert(g_r.exception);
    pattern_is("evil.example^");
    IS("||foo", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.host_len, 3);
}
END_TEST

START_TEST(test_regex)
{
    IS("/^https?:\\/\\/[a-z]{8,15}\\.xyz\\//$script", ADBLOCK_CLASS_NETWORK);
    ck_assert(g_r.regex);
    pattern_is("^https?:\\/\\/[a-z]{8,15}\\.xyz\\/");
    ck_assert_uint_eq(g_r.types, 1u << ADBLOCK_TYPE_SCRIPT);
    IS("/ad$/", ADBLOCK_CLASS_NETWORK); /* the `$` ends the regex, it starts no options */
    ck_assert(g_r.regex);
    pattern_is("ad$");
    IS("/a[^ ]b/$script", ADBLOCK_CLASS_NETWORK); /* a blank inside a regex */
    IS("/(.*\\/x\\?.*)%2C(.*)/$xhr,uritransform=//$1$2/,domain=a.example",
       ADBLOCK_CLASS_TRANSFORM); /* the options start after the regex's `/` */
    IS("/ad(/", ADBLOCK_CLASS_REJECTED);
    ck_assert_msg(strstr(g_r.why, "regex") != NULL, "%s", g_r.why);
}
END_TEST

START_TEST(test_types)
{
    IS("||scholar.google.com^$ping", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.types, 1u << ADBLOCK_TYPE_PING);
    IS("||a.example^$script,image", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.types, (1u << ADBLOCK_TYPE_SCRIPT) | (1u << ADBLOCK_TYPE_IMAGE));
    IS("||a.example^$~script", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.types, ADBLOCK_TYPES_ALL & ~(1u << ADBLOCK_TYPE_SCRIPT));
    IS("||a.example^$xhr,xmlhttprequest", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.types, 1u << ADBLOCK_TYPE_XHR);
    IS("||a.example^$css,frame,doc,beacon", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.types, (1u << ADBLOCK_TYPE_STYLESHEET) |
                                     (1u << ADBLOCK_TYPE_SUBDOCUMENT) |
                                     (1u << ADBLOCK_TYPE_DOCUMENT) | (1u << ADBLOCK_TYPE_PING));
    IS("||a.example^$all", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.types, ADBLOCK_TYPES_ALL);
    IS("||a.example^$popup", ADBLOCK_CLASS_POPUP);
    IS("||a.example^$popup,script", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.types, 1u << ADBLOCK_TYPE_SCRIPT);
    IS("||a.example^$script,~script", ADBLOCK_CLASS_REJECTED);
    IS("||a.example^$fetch", ADBLOCK_CLASS_REJECTED); /* neither engine has $fetch */
}
END_TEST

START_TEST(test_options)
{
    IS("||analytics.google.com^$third-party", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.party, ADBLOCK_PARTY_THIRD);
    IS("||a.example^$~third-party", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.party, ADBLOCK_PARTY_FIRST);
    IS("||a.example^$1p", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.party, ADBLOCK_PARTY_FIRST);
    IS("||a.example^$3p", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.party, ADBLOCK_PARTY_THIRD);
    IS("||a.example^$strict3p", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.party, ADBLOCK_PARTY_THIRD | ADBLOCK_PARTY_STRICT);
    IS("||a.example^$domain=b.example|~c.b.example|shop.*", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.ndom, 1);
    ck_assert_int_eq(g_r.dom[0].kind, ADBLOCK_DOM_FROM);
    IS("||a.example^$from=b.example,to=c.example,denyallow=d.example", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.ndom, 3);
    ck_assert_int_eq(g_r.dom[1].kind, ADBLOCK_DOM_TO);
    ck_assert_int_eq(g_r.dom[2].kind, ADBLOCK_DOM_DENYALLOW);
    IS("||a.example^$domain=", ADBLOCK_CLASS_REJECTED);
    IS("||a.example^$domain=a||b", ADBLOCK_CLASS_REJECTED);
    IS("||a.example^$method=post|~get", ADBLOCK_CLASS_NETWORK);
    ck_assert_uint_eq(g_r.methods, 1u << ADBLOCK_METHOD_POST);
    IS("||a.example^$method=~get", ADBLOCK_CLASS_NETWORK);
    ck_assert(!(g_r.methods & (1u << ADBLOCK_METHOD_GET)));
    ck_assert(g_r.methods & (1u << ADBLOCK_METHOD_POST));
    IS("||a.example^$method=fly", ADBLOCK_CLASS_REJECTED);
    IS("||a.example^$important", ADBLOCK_CLASS_NETWORK);
    ck_assert(g_r.important);
    IS("||a.example^$Match-Case", ADBLOCK_CLASS_NETWORK);
    ck_assert(g_r.match_case);
    IS("||a.example^$script,badfilter", ADBLOCK_CLASS_NETWORK);
    ck_assert(g_r.badfilter);
    ck_assert_uint_eq(g_r.bad_len, strlen(",badfilter"));
    IS("@@||a.example^$document", ADBLOCK_CLASS_NETWORK);
    ck_assert(g_r.page);
    IS("||a.example^$document", ADBLOCK_CLASS_NETWORK);
    ck_assert(!g_r.page);
    IS("||a.example^$redirect=noop.js", ADBLOCK_CLASS_NETWORK);
    IS("||a.example^$redirect-rule=noop.js", ADBLOCK_CLASS_REDIRECT_RULE);
    IS("||a.example^$_,script", ADBLOCK_CLASS_NETWORK);
    IS("||a.example^$script,__", ADBLOCK_CLASS_NETWORK); /* found by fuzz_adblock_rule */
    IS("||a.example^$_x", ADBLOCK_CLASS_REJECTED);
}
END_TEST

START_TEST(test_unenforceable)
{
    IS("||a.example^$csp=script-src 'none'", ADBLOCK_CLASS_CSP);
    IS("||a.example^$inline-script", ADBLOCK_CLASS_CSP);
    IS("||a.example^$removeparam=utm_source", ADBLOCK_CLASS_REMOVEPARAM);
    IS("||a.example^$header=via:1.1 google", ADBLOCK_CLASS_HEADER);
    IS("||a.example^$replace=/ad/x/", ADBLOCK_CLASS_REPLACE);
    IS("||a.example^$permissions=browsing-topics=()", ADBLOCK_CLASS_PERMISSIONS);
    IS("||a.example^$urlskip=?url", ADBLOCK_CLASS_TRANSFORM);
    IS("@@||a.example^$generichide", ADBLOCK_CLASS_PAGE_HIDING);
    IS("@@||a.example^$elemhide", ADBLOCK_CLASS_PAGE_HIDING);
    IS("*$ghide,domain=a.example", ADBLOCK_CLASS_PAGE_HIDING);
    IS("@@||a.example^$cname", ADBLOCK_CLASS_CNAME);
    IS("||com^$doc,ipaddress=192.0.2.1", ADBLOCK_CLASS_IPADDRESS);
    IS("@@||a.example^$redirect=noop.js", ADBLOCK_CLASS_REDIRECT_RULE);
}
END_TEST

/* A rejected line and the reason a rejects file names. */
#define REJ(line, rej)                                                                             \
    do {                                                                                           \
        IS(line, ADBLOCK_CLASS_REJECTED);                                                          \
        ck_assert_msg(g_r.reason == (rej), "%s: %s, not %s (%s)", line,                            \
                      adblock_reject_name(g_r.reason), adblock_reject_name(rej), g_r.why);         \
    } while (0)

START_TEST(test_rejections)
{
    REJ("||a.example^$frobnicate", ADBLOCK_REJ_UNKNOWN_OPTION);
    ck_assert_msg(strstr(g_r.why, "frobnicate") != NULL, "%s", g_r.why);
    REJ("||a.example^$~important", ADBLOCK_REJ_NOT_NEGATABLE);
    REJ("||a.example^$", ADBLOCK_REJ_EMPTY_OPTIONS);
    REJ("||a.example^$script=1", ADBLOCK_REJ_TAKES_NO_VALUE);
    REJ("||a.example^$domain=", ADBLOCK_REJ_NEEDS_VALUE);
    REJ("||a.example^$domain=a||b", ADBLOCK_REJ_BAD_DOMAIN_LIST);
    REJ("||a.example^$method=fly", ADBLOCK_REJ_UNKNOWN_METHOD);
    REJ("||a.example^$method=get|~get", ADBLOCK_REJ_NO_METHOD_LEFT);
    REJ("||a.example^$script,~script", ADBLOCK_REJ_NO_TYPE_LEFT);
    REJ("||a.example^$domain=a,domain=b,domain=c,domain=d,domain=e,domain=f,domain=g,"
        "domain=h,domain=i",
        ADBLOCK_REJ_TOO_MANY_DOMAINS);
    REJ("/ad(/", ADBLOCK_REJ_BAD_REGEX);
    REJ("||a b^", ADBLOCK_REJ_WHITE_SPACE);
    char *big = malloc(ADBLOCK_LINE_MAX + 10);
    memset(big, 'a', ADBLOCK_LINE_MAX + 9);
    big[ADBLOCK_LINE_MAX + 9] = 0;
    REJ(big, ADBLOCK_REJ_LINE_TOO_LONG);
    free(big);
    /* Each reason its own name, for a rejects file. */
    for (int i = 0; i < ADBLOCK_REJ_COUNT; i++) {
        const char *n = adblock_reject_name((enum adblock_reject)i);
        ck_assert_msg(strcmp(n, "unknown") != 0 && strchr(n, ' ') == NULL, "%d: %s", i, n);
        for (int k = 0; k < i; k++)
            ck_assert_str_ne(n, adblock_reject_name((enum adblock_reject)k));
    }
    ck_assert_str_eq(adblock_reject_name(ADBLOCK_REJ_COUNT), "unknown");
}
END_TEST

/* Which classes a rejects file names: every line not served, but not the
 * comments and cosmetic filters a network engine leaves alone. */
START_TEST(test_unserved)
{
    for (int c = 0; c < ADBLOCK_CLASS_COUNT; c++) {
        bool left_out =
            c == ADBLOCK_CLASS_NETWORK || c == ADBLOCK_CLASS_COMMENT || c == ADBLOCK_CLASS_COSMETIC;
        const char *why = adblock_unserved_why((enum adblock_class)c);
        ck_assert_msg((why == NULL) == left_out, "%s: %s", adblock_class_name(c),
                      why ? why : "left out");
        ck_assert(why == NULL || why[0] != '\0');
    }
    ck_assert_ptr_null(adblock_unserved_why(ADBLOCK_CLASS_COUNT));
}
END_TEST

static Suite *adblock_rule_suite(void)
{
    Suite *s = suite_create("adblock_rule");
    TCase *tc = tcase_create("rule");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_classes);
    tcase_add_test(tc, test_anchors);
    tcase_add_test(tc, test_regex);
    tcase_add_test(tc, test_types);
    tcase_add_test(tc, test_options);
    tcase_add_test(tc, test_unenforceable);
    tcase_add_test(tc, test_rejections);
    tcase_add_test(tc, test_unserved);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(adblock_rule_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
