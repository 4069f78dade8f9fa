/* Unit tests of squidproto: Squid's external ACL helper lines (channel IDs,
 * values, %-decoding), the reply builder and its message= quoting, and the
 * readers of the daemon's MCHECK, MATCH and ERR replies. Pure functions: no
 * Squid, no daemon. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

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

/* Squid URL-escapes each value (rfc1738: '%' itself, white space, quotes,
 * bytes >= 0x80); the helper decodes exactly once. */
START_TEST(test_unescape)
{
    struct squid_line l;
    char err[128];
    ck_assert_int_eq(
        parse("1 http://a.example/b%2520c?q=a%22b%20c %5b::1%5D", &l, err, sizeof(err)), 0);
    assert_value(&l, 0, "http://a.example/b%20c?q=a\"b c");
    assert_value(&l, 1, "[::1]");

    char out[64];
    ck_assert_uint_eq(squidproto_unescape("%41%4a%4A%c3%a9", 15, out), 5);
    ck_assert(memcmp(out, "AJJ\xc3\xa9", 5) == 0);
    /* '%' without two hex digits stays as it is, at the end too. */
    ck_assert_uint_eq(squidproto_unescape("100%", 4, out), 4);
    ck_assert(memcmp(out, "100%", 4) == 0);
    ck_assert_uint_eq(squidproto_unescape("%4", 2, out), 2);
    ck_assert(memcmp(out, "%4", 2) == 0);
    ck_assert_uint_eq(squidproto_unescape("%zz%%41", 7, out), 5);
    ck_assert(memcmp(out, "%zz%A", 5) == 0);
    /* %00 decodes to a NUL byte (the item escaper turns it back into %00). */
    ck_assert_uint_eq(squidproto_unescape("a%00b", 5, out), 3);
    ck_assert(memcmp(out, "a\0b", 3) == 0);
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
