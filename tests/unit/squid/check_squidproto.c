/* Unit tests of squidproto: Squid's external ACL helper lines (channel IDs,
 * values, %-decoding, the request context of --context), the reply builder and its message=
 * quoting, and the readers of the daemon's MCHECK, MATCH and ERR replies. Pure functions: no Squid,
 * no daemon. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "adblock/adblock.h"
#include "squid/squidproto.h"

/* Parse a copy of s; returns the parse status, fills l and err. The copy
 * stays alive in a static buffer, since the values point into it. */
static char linebuf[70000];
static int parse(const char *s, struct squid_line *l, char *err, size_t errlen)
{
    size_t n = strlen(s);
    ck_assert_uint_lt(n, sizeof(linebuf));
    memcpy(linebuf, s, n + 1);
    return squidproto_parse_line(linebuf, n, l, err, errlen);
}

static void assert_value(const struct squid_line *l, size_t i, const char *want)
{
    ck_assert_uint_lt(i, l->n_values);
    ck_assert_msg(l->value_len[i] == strlen(want) && memcmp(l->value[i], want, strlen(want)) == 0,
                  "value %zu: '%.*s', wanted '%s'", i, (int)l->value_len[i], l->value[i], want);
}

START_TEST(test_channel_and_values)
{
    struct squid_line l;
    char err[128];
    /* What Squid 5 sends with concurrency=N and FORMAT %URI %DST %SRC:
     * the %DATA it appends is "-". */
    ck_assert_int_eq(parse("3 http://127.0.0.1:8080/ok 127.0.0.1 10.0.0.1 -", &l, err, sizeof(err)),
                     0);
    ck_assert(l.has_channel);
    ck_assert_str_eq(l.channel, "3");
    ck_assert_uint_eq(l.n_values, 4);
    assert_value(&l, 0, "http://127.0.0.1:8080/ok");
    assert_value(&l, 1, "127.0.0.1");
    assert_value(&l, 2, "10.0.0.1");
    assert_value(&l, 3, "-");
    ck_assert(squidproto_value_absent(l.value[3], l.value_len[3]));
    ck_assert(!squidproto_value_absent(l.value[0], l.value_len[0]));

    /* concurrency=0: no channel; the first token is a value. */
    ck_assert_int_eq(parse("http://a.example/ -", &l, err, sizeof(err)), 0);
    ck_assert(!l.has_channel);
    ck_assert_str_eq(l.channel, "");
    ck_assert_uint_eq(l.n_values, 2);
    assert_value(&l, 0, "http://a.example/");

    /* A lone number is a value, not a channel with nothing after it. */
    ck_assert_int_eq(parse("12345", &l, err, sizeof(err)), 0);
    ck_assert(!l.has_channel);
    assert_value(&l, 0, "12345");

    /* Runs of spaces and tabs separate; a trailing CR is white space. */
    ck_assert_int_eq(parse("  7 \t a.example:443   b\r", &l, err, sizeof(err)), 0);
    ck_assert_str_eq(l.channel, "7");
    ck_assert_uint_eq(l.n_values, 2);
    assert_value(&l, 0, "a.example:443");
    assert_value(&l, 1, "b");

    /* 20 digits is a channel ID, 21 is not (it is a value). */
    ck_assert_int_eq(parse("12345678901234567890 x", &l, err, sizeof(err)), 0);
    ck_assert(l.has_channel);
    ck_assert_int_eq(parse("123456789012345678901 x", &l, err, sizeof(err)), 0);
    ck_assert(!l.has_channel);
    ck_assert_uint_eq(l.n_values, 2);
    /* Not all digits: a value. */
    ck_assert_int_eq(parse("12a x", &l, err, sizeof(err)), 0);
    ck_assert(!l.has_channel);
}
END_TEST

START_TEST(test_errors)
{
    struct squid_line l;
    char err[128];
    ck_assert_int_eq(parse("", &l, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "empty request line");
    ck_assert_int_eq(parse(" \t ", &l, err, sizeof(err)), -1);
    /* 16 values fit; 17 do not, and the channel is still known for the BH. */
    ck_assert_int_eq(parse("9 a b c d e f g h i j k l m n o p", &l, err, sizeof(err)), 0);
    ck_assert_uint_eq(l.n_values, 16);
    ck_assert_int_eq(parse("9 a b c d e f g h i j k l m n o p q", &l, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "more than 16 values in a request line");
    ck_assert(l.has_channel);
    ck_assert_str_eq(l.channel, "9");
    ck_assert_int_eq(parse("a b c d e f g h i j k l m n o p q r s t u v", &l, err, sizeof(err)),
                     -1);
    ck_assert(!l.has_channel);
}
END_TEST

/* Squid escapes each value with rfc1738_escape: white space, controls,
 * quotes, bytes >= 0x80 and " # ' < > [ \ ] ^ ` { | } ~, but not '%' (seen
 * with Squid 5.7: a URL's own %41 arrives as %41). The helper decodes exactly
 * those escapes, once, and leaves the value's own %XX as written. */
START_TEST(test_unescape)
{
    struct squid_line l;
    char err[128];
    ck_assert_int_eq(
        parse("1 http://a.example/b%2520c?q=a%22b%20c%2F %5b::1%5D", &l, err, sizeof(err)), 0);
    assert_value(&l, 0, "http://a.example/b%2520c?q=a\"b c%2F");
    assert_value(&l, 1, "[::1]");
    /* What Squid 5.7 sent for a Referer of: http://news.example/a b"%41<>{}|\^~[]`'é */
    ck_assert_int_eq(parse("2 http://news.example/a%20b%22%41%3C%3E%7B%7D%7C%5C%5E%7E%5B%5D%60%27"
                           "%C3%A9",
                           &l, err, sizeof(err)),
                     0);
    assert_value(&l, 0, "http://news.example/a b\"%41<>{}|\\^~[]`'\xc3\xa9");

    char out[64];
    /* Letters, digits and the reserved characters are never Squid's escapes. */
    ck_assert_uint_eq(squidproto_unescape("%41%4a%3A%2f%25%c3%a9%7e%7E", 27, out), 19);
    ck_assert(memcmp(out, "%41%4a%3A%2f%25\xc3\xa9~~", 19) == 0);
    /* '%' without two hex digits stays as it is, at the end too. */
    ck_assert_uint_eq(squidproto_unescape("100%", 4, out), 4);
    ck_assert(memcmp(out, "100%", 4) == 0);
    ck_assert_uint_eq(squidproto_unescape("%2", 2, out), 2);
    ck_assert(memcmp(out, "%2", 2) == 0);
    ck_assert_uint_eq(squidproto_unescape("%zz%%20", 7, out), 5);
    ck_assert(memcmp(out, "%zz% ", 5) == 0);
    /* %00 decodes to a NUL byte (the item escaper turns it back into %00);
     * so do every control byte and DEL. */
    ck_assert_uint_eq(squidproto_unescape("a%00b%1f%7F%09", 14, out), 6);
    ck_assert(memcmp(out, "a\0b\x1f\x7f\t", 6) == 0);
    /* Every byte: decoded exactly when Squid would have escaped it. */
    for (unsigned c = 0; c < 256; c++) {
        char in[4];
        snprintf(in, sizeof(in), "%%%02X", c);
        bool esc = c <= 0x20 || c >= 0x7f || strchr("\"#'<>[\\]^`{|}~", (int)c);
        ck_assert_uint_eq(squidproto_unescape(in, 3, out), esc ? 1 : 3);
        if (esc)
            ck_assert_uint_eq((unsigned char)out[0], c);
    }
}
END_TEST

/* --context's argument. */
START_TEST(test_ctx_spec)
{
    struct squid_ctx_spec sp;
    char err[128];
    ck_assert_int_eq(squidproto_ctx_spec_parse("referer,dest,method", &sp, err, sizeof(err)), 0);
    ck_assert_uint_eq(sp.n, 3);
    ck_assert(sp.field[0] == SQUID_CTX_REFERER && sp.field[1] == SQUID_CTX_DEST &&
              sp.field[2] == SQUID_CTX_METHOD);
    ck_assert_int_eq(squidproto_ctx_spec_parse("Method,ORIGIN", &sp, err, sizeof(err)), 0);
    ck_assert(sp.n == 2 && sp.field[0] == SQUID_CTX_METHOD && sp.field[1] == SQUID_CTX_ORIGIN);
    ck_assert_int_eq(squidproto_ctx_spec_parse("referer,origin,dest,method", &sp, err, sizeof(err)),
                     0);
    ck_assert_uint_eq(sp.n, 4);
    ck_assert_int_eq(squidproto_ctx_spec_parse("referer,referer", &sp, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "'referer' is named twice");
    ck_assert_int_eq(squidproto_ctx_spec_parse("referer,type", &sp, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "'type' is not a context field (referer, origin, dest, method)");
    ck_assert_int_eq(squidproto_ctx_spec_parse("", &sp, err, sizeof(err)), -1);
    ck_assert_int_eq(squidproto_ctx_spec_parse("dest,", &sp, err, sizeof(err)), -1);
}
END_TEST

static bool is(const char *p, size_t n, const char *want)
{
    return p && n == strlen(want) && memcmp(p, want, n) == 0;
}

/* The fields come out of the line; what is left is checked. */
START_TEST(test_take_context)
{
    struct squid_ctx_spec sp;
    struct squid_line l;
    struct squid_ctx c;
    char err[128];
    ck_assert_int_eq(squidproto_ctx_spec_parse("referer,origin,dest,method", &sp, err, sizeof(err)),
                     0);
    /* The FORMAT of docs/gateways.md, then %SRC and the %DATA Squid appends. */
    ck_assert_int_eq(parse("4 http://t.example/a.js http://news.example/p%20q http://news.example "
                           "script GET 10.0.0.1 -",
                           &l, err, sizeof(err)),
                     0);
    ck_assert_int_eq(squidproto_take_context(&l, &sp, &c, err, sizeof(err)), 0);
    ck_assert(is(c.from, c.from_len, "http://news.example/p q")); /* the Referer wins */
    ck_assert_str_eq(c.type, "script");
    ck_assert_str_eq(c.method, "get");
    ck_assert_uint_eq(l.n_values, 3);
    assert_value(&l, 0, "http://t.example/a.js");
    assert_value(&l, 1, "10.0.0.1");
    assert_value(&l, 2, "-");

    /* Absent ('-'): none; the Origin when there is no Referer, but not "null". */
    ck_assert_int_eq(parse("http://t.example/ - http://o.example - - -", &l, err, sizeof(err)), 0);
    ck_assert_int_eq(squidproto_take_context(&l, &sp, &c, err, sizeof(err)), 0);
    ck_assert(is(c.from, c.from_len, "http://o.example"));
    ck_assert(c.type == NULL && c.method == NULL);
    ck_assert_uint_eq(l.n_values, 2);
    ck_assert_int_eq(parse("http://t.example/ - null - CONNECT", &l, err, sizeof(err)), 0);
    ck_assert_int_eq(squidproto_take_context(&l, &sp, &c, err, sizeof(err)), 0);
    ck_assert(c.from == NULL && c.type == NULL);
    ck_assert_str_eq(c.method, "connect");
    ck_assert_uint_eq(l.n_values, 1);

    /* Too few values: an error (the BH names it). */
    ck_assert_int_eq(parse("7 http://t.example/ - -", &l, err, sizeof(err)), 0);
    ck_assert_int_eq(squidproto_take_context(&l, &sp, &c, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "3 values; --context wants the URL and 4 fields after it");

    /* No --context: the line is untouched. */
    struct squid_ctx_spec none = {0};
    ck_assert_int_eq(parse("http://t.example/ script -", &l, err, sizeof(err)), 0);
    ck_assert_int_eq(squidproto_take_context(&l, &none, &c, err, sizeof(err)), 0);
    ck_assert(c.from == NULL && c.type == NULL && c.method == NULL);
    ck_assert_uint_eq(l.n_values, 3);
}
END_TEST

/* Every Sec-Fetch-Dest value of the Fetch standard and every method the
 * helper may send is one the daemon's context words read
 * (adblock_fetch_dest_parse, adblock_method_parse): an unknown word would
 * make the daemon refuse the whole MCHECK. Unknown destinations go as
 * "other", unknown methods not at all. */
START_TEST(test_dest_and_method)
{
    static const char *const dests[] = {
        "audio",        "audioworklet",
        "document",     "embed",
        "empty",        "font",
        "frame",        "iframe",
        "image",        "json",
        "manifest",     "object",
        "paintworklet", "report",
        "script",       "serviceworker",
        "sharedworker", "style",
        "track",        "video",
        "webidentity",  "worker",
        "xslt",         "speculationrules",
        "SCRIPT",       "x",
    };
    for (size_t i = 0; i < sizeof dests / sizeof dests[0]; i++) {
        const char *t = squidproto_dest_type(dests[i], strlen(dests[i]));
        ck_assert_ptr_nonnull(t);
        ck_assert_msg(adblock_fetch_dest_parse(t, strlen(t)) >= 0, "'%s' sent as '%s'", dests[i],
                      t);
        /* A known destination goes as it is (the daemon maps it). */
        if (adblock_fetch_dest_parse(dests[i], strlen(dests[i])) >= 0)
            ck_assert_msg(strcasecmp(t, dests[i]) == 0, "'%s' sent as '%s'", dests[i], t);
        else
            ck_assert_str_eq(t, "other");
    }
    ck_assert_ptr_null(squidproto_dest_type("-", 1));
    static const char *const methods[] = {"GET",     "POST",  "PUT",     "DELETE", "HEAD",
                                          "OPTIONS", "PATCH", "CONNECT", "get"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        const char *m = squidproto_method(methods[i], strlen(methods[i]));
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(adblock_method_parse(m, strlen(m)),
                         adblock_method_parse(methods[i], strlen(methods[i])));
    }
    ck_assert_ptr_null(squidproto_method("PROPFIND", 8));
    ck_assert_ptr_null(squidproto_method("TRACE", 5));
    ck_assert_int_lt(adblock_method_parse("PROPFIND", 8), 0);
}
END_TEST

START_TEST(test_item_escape)
{
    char out[64];
    size_t n = squidproto_item_escape("a b\tc\r\n\0d%e", 11, out);
    ck_assert_uint_eq(n, 21);
    ck_assert(memcmp(out, "a%20b%09c%0D%0A%00d%e", n) == 0);
    n = squidproto_item_escape("http://x/\xc3\xa9", 11, out);
    ck_assert(n == 11 && memcmp(out, "http://x/\xc3\xa9", 11) == 0);
}
END_TEST

START_TEST(test_peek_channel)
{
    char ch[SQUIDPROTO_CHANNEL_MAX + 1];
    ck_assert(squidproto_peek_channel("42 http://x", 11, ch));
    ck_assert_str_eq(ch, "42");
    ck_assert(!squidproto_peek_channel("42", 2, ch));
    ck_assert(!squidproto_peek_channel("http://x", 8, ch));
    ck_assert(!squidproto_peek_channel("123456789012345678901 x", 23, ch));
}
END_TEST

static const char *reply(const char *channel, enum squid_result r, const char *msg)
{
    static char out[SQUIDPROTO_REPLY_MAX + 1];
    size_t n = squidproto_reply(out, channel, r, msg, msg ? strlen(msg) : 0);
    ck_assert_uint_le(n, SQUIDPROTO_REPLY_MAX);
    out[n] = '\0';
    return out;
}

START_TEST(test_reply)
{
    ck_assert_str_eq(reply("3", SQUID_OK, NULL), "3 OK\n");
    ck_assert_str_eq(reply(NULL, SQUID_ERR, ""), "ERR\n");
    ck_assert_str_eq(reply("", SQUID_BH, "down"), "BH message=\"down\"\n");
    ck_assert_str_eq(reply("17", SQUID_OK, "bloomgate: listed in urls as evil.example/"),
                     "17 OK message=\"bloomgate: listed in urls as evil.example/\"\n");
    /* Quotes and backslashes are escaped, CR and LF spelled, other control
     * bytes replaced; '%' and UTF-8 pass (the quoted form is not decoded). */
    ck_assert_str_eq(reply("1", SQUID_OK, "a\"b\\c\r\nd\x01\x7f%20\xc3\xa9"),
                     "1 OK message=\"a\\\"b\\\\c\\r\\nd??%20\xc3\xa9\"\n");
}
END_TEST

/* A long message is cut to SQUIDPROTO_MESSAGE_MAX bytes with "...", never in
 * the middle of a UTF-8 sequence, and with every byte a quote still fits. */
START_TEST(test_reply_long)
{
    static char msg[2000];
    memset(msg, '"', sizeof(msg) - 1);
    const char *r = reply("12345678901234567890", SQUID_BH, msg);
    size_t n = strlen(r);
    ck_assert_uint_le(n, SQUIDPROTO_REPLY_MAX);
    ck_assert_str_eq(r + n - 5, "...\"\n");
    /* 509 quotes kept, each escaped. */
    ck_assert_uint_eq(n, strlen("12345678901234567890 BH message=\"") + 2 * 509 + 5);

    for (size_t i = 0; i + 2 < sizeof(msg); i += 2)
        memcpy(msg + i, "\xc3\xa9", 2);
    r = reply(NULL, SQUID_OK, msg);
    n = strlen(r);
    /* 509 bytes would split a two-byte sequence: 508 are kept. */
    ck_assert_uint_eq(n, strlen("OK message=\"") + 508 + 5);
    ck_assert_str_eq(r + n - 5, "...\"\n");
}
END_TEST

START_TEST(test_mcheck_reply)
{
    bool p[4];
    ck_assert_int_eq(squidproto_mcheck_reply("YES NO YES", 10, 3, p), 0);
    ck_assert(p[0] && !p[1] && p[2]);
    ck_assert_int_eq(squidproto_mcheck_reply("NO", 2, 1, p), 0);
    ck_assert(!p[0]);
    ck_assert_int_eq(squidproto_mcheck_reply("YES NO", 6, 3, p), -1);    /* too few */
    ck_assert_int_eq(squidproto_mcheck_reply("YES NO NO", 9, 2, p), -1); /* too many */
    ck_assert_int_eq(squidproto_mcheck_reply("YES MAYBE", 9, 2, p), -1);
    ck_assert_int_eq(squidproto_mcheck_reply("ERR bad_item item 1: x", 22, 1, p), -1);
    ck_assert_int_eq(squidproto_mcheck_reply("", 0, 0, p), -1);
}
END_TEST

START_TEST(test_match_reply)
{
    const char *key;
    size_t kl;
    ck_assert_int_eq(squidproto_match_reply("MATCH evil.example/", 19, &key, &kl), 1);
    ck_assert(kl == 13 && memcmp(key, "evil.example/", 13) == 0);
    ck_assert_int_eq(squidproto_match_reply("NO", 2, &key, &kl), 0);
    ck_assert_int_eq(squidproto_match_reply("MATCH ", 6, &key, &kl), -1);
    ck_assert_int_eq(squidproto_match_reply("MATCH a b", 9, &key, &kl), -1);
    ck_assert_int_eq(squidproto_match_reply("YES", 3, &key, &kl), -1);
}
END_TEST

START_TEST(test_daemon_error)
{
    const char *code, *msg;
    size_t cl, ml, item;
    const char *l = "ERR bad_item item 2: bad URL: bad port";
    ck_assert_int_eq(squidproto_daemon_error(l, strlen(l), &code, &cl, &msg, &ml, &item), 0);
    ck_assert(cl == 8 && memcmp(code, "bad_item", 8) == 0);
    ck_assert(ml == strlen("item 2: bad URL: bad port") && memcmp(msg, "item 2:", 7) == 0);
    ck_assert_uint_eq(item, 2);
    l = "ERR item_too_long item 3 of 4 is 9000 bytes; the limit is 8192";
    ck_assert_int_eq(squidproto_daemon_error(l, strlen(l), &code, &cl, &msg, &ml, &item), 0);
    ck_assert_uint_eq(item, 3);
    l = "ERR unknown_filter no such filter 'x'";
    ck_assert_int_eq(squidproto_daemon_error(l, strlen(l), &code, &cl, &msg, &ml, &item), 0);
    ck_assert_uint_eq(item, 0);
    ck_assert(cl == 14 && memcmp(code, "unknown_filter", 14) == 0);
    l = "ERR internal";
    ck_assert_int_eq(squidproto_daemon_error(l, strlen(l), &code, &cl, &msg, &ml, &item), 0);
    ck_assert_uint_eq(ml, 0);
    l = "ERR x itemize 3: y";
    ck_assert_int_eq(squidproto_daemon_error(l, strlen(l), &code, &cl, &msg, &ml, &item), 0);
    ck_assert_uint_eq(item, 0);
    ck_assert_int_eq(squidproto_daemon_error("YES", 3, &code, &cl, &msg, &ml, &item), -1);
    ck_assert_int_eq(squidproto_daemon_error("ERR", 3, &code, &cl, &msg, &ml, &item), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("squidproto");
    TCase *tc = tcase_create("helper_line");
    tcase_add_test(tc, test_channel_and_values);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_unescape);
    tcase_add_test(tc, test_item_escape);
    tcase_add_test(tc, test_peek_channel);
    suite_add_tcase(s, tc);
    tc = tcase_create("context");
    tcase_add_test(tc, test_ctx_spec);
    tcase_add_test(tc, test_take_context);
    tcase_add_test(tc, test_dest_and_method);
    suite_add_tcase(s, tc);
    tc = tcase_create("reply");
    tcase_add_test(tc, test_reply);
    tcase_add_test(tc, test_reply_long);
    suite_add_tcase(s, tc);
    tc = tcase_create("daemon");
    tcase_add_test(tc, test_mcheck_reply);
    tcase_add_test(tc, test_match_reply);
    tcase_add_test(tc, test_daemon_error);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
