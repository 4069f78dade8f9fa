/* Unit tests for the tcp_table(5) parser and reply encoder
 * (src/front/postfix/tcptable.h), hostile inputs included. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "front/postfix/tcptable.h"

static char buf[8192], err[256];
static struct tcpt_request r;
static size_t used;

static enum tcpt_status parse(const char *s)
{
    used = 0;
    err[0] = '\0';
    return tcpt_parse(s, strlen(s), 100, buf, sizeof(buf), &r, &used, err, sizeof(err));
}

START_TEST(test_get)
{
    ck_assert_int_eq(parse("get user@example.com\nget next\n"), TCPT_REQUEST);
    ck_assert_int_eq(r.cmd, TCPT_GET);
    ck_assert_uint_eq(r.key_len, 16);
    ck_assert(memcmp(r.key, "user@example.com", 16) == 0);
    ck_assert_uint_eq(used, 21); /* the first line only */
    /* %-decoding, upper and lower case hex, a CR before the LF. */
    ck_assert_int_eq(parse("get a%20b%2fc%25%00\r\n"), TCPT_REQUEST);
    ck_assert_uint_eq(r.key_len, 7);
    ck_assert(memcmp(r.key, "a b/c%\0", 7) == 0);
    ck_assert_int_eq(parse("get %41\n"), TCPT_REQUEST);
    ck_assert(r.key_len == 1 && r.key[0] == 'A');
}
END_TEST

START_TEST(test_put)
{
    ck_assert_int_eq(parse("put k%20x v%0A\n"), TCPT_REQUEST);
    ck_assert_int_eq(r.cmd, TCPT_PUT);
    ck_assert(r.key_len == 3 && memcmp(r.key, "k x", 3) == 0);
    ck_assert(r.value_len == 2 && memcmp(r.value, "v\n", 2) == 0);
    ck_assert_int_eq(parse("put k\n"), TCPT_ERROR);
    ck_assert_str_eq(err, "put takes a key and a value");
    ck_assert_int_eq(parse("put k v w\n"), TCPT_ERROR);
    ck_assert_int_eq(parse("put k v%4\n"), TCPT_ERROR);
    ck_assert_str_eq(err, "bad %-encoding in the value");
}
END_TEST

START_TEST(test_errors)
{
    ck_assert_int_eq(parse("get abc"), TCPT_NEED_MORE);
    ck_assert_int_eq(parse(""), TCPT_NEED_MORE);
    ck_assert_int_eq(parse("\n"), TCPT_ERROR);
    ck_assert_str_eq(err, "unknown request \"\" (get or put)");
    ck_assert_uint_eq(used, 1);
    ck_assert_int_eq(parse("GET x\n"), TCPT_ERROR);
    ck_assert_str_eq(err, "unknown request \"GET\" (get or put)");
    ck_assert_int_eq(parse("getx\n"), TCPT_ERROR);
    ck_assert_int_eq(parse("get\n"), TCPT_ERROR);
    ck_assert_str_eq(err, "get without a key");
    ck_assert_int_eq(parse("get \n"), TCPT_ERROR);
    ck_assert_int_eq(parse("get a b\n"), TCPT_ERROR);
    ck_assert_str_eq(err, "get takes one key (a space in a key is sent as %20)");
    ck_assert_int_eq(parse("get  a\n"), TCPT_ERROR);
    ck_assert_int_eq(parse("get %\n"), TCPT_ERROR);
    ck_assert_str_eq(err, "bad %-encoding in the key");
    ck_assert_int_eq(parse("get %4\n"), TCPT_ERROR);
    ck_assert_int_eq(parse("get %4g\n"), TCPT_ERROR);
    ck_assert_int_eq(parse("get %%41\n"), TCPT_ERROR);
    char longkey[300];
    memset(longkey, 'k', sizeof(longkey));
    memcpy(longkey, "get ", 4);
    memcpy(longkey + 105, "\n", 2);
    ck_assert_int_eq(parse(longkey), TCPT_ERROR);
    ck_assert_str_eq(err, "key of 101 bytes, the limit is max_item 100");
    /* The decoded length counts: 100 escapes decode to 100 bytes. */
    char esc[400] = "get ";
    for (int i = 0; i < 100; i++)
        strcat(esc, "%41");
    strcat(esc, "\n");
    ck_assert_int_eq(parse(esc), TCPT_REQUEST);
    ck_assert_uint_eq(r.key_len, 100);
    /* A buffer shorter than the line is refused, not overrun. */
    ck_assert_int_eq(tcpt_parse("get abcdef\n", 11, 100, buf, 3, &r, &used, err, sizeof(err)),
                     TCPT_ERROR);
    ck_assert_str_eq(err, "request too long");
}
END_TEST

START_TEST(test_reply)
{
    char out[TCPT_REPLY_MAX];
    size_t n = tcpt_reply(200, "REJECT listed", 13, out);
    ck_assert_uint_eq(n, 20);
    ck_assert(memcmp(out, "200 REJECT%20listed\n", 20) == 0);
    n = tcpt_reply(500, "a%b\t\x01\xff", 6, out);
    ck_assert(memcmp(out, "500 a%25b%09%01%FF\n", n) == 0 && n == 19);
    n = tcpt_reply(400, "", 0, out);
    ck_assert(n == 5 && memcmp(out, "400 \n", 5) == 0);
    /* Never over 4096 bytes with the newline, and never half an escape. */
    static char big[5000];
    memset(big, ' ', sizeof(big));
    n = tcpt_reply(200, big, sizeof(big), out);
    ck_assert_uint_le(n, TCPT_REPLY_MAX);
    ck_assert_int_eq(out[n - 1], '\n');
    ck_assert_uint_eq((n - 5) % 3, 0);
    memset(big, 'x', sizeof(big));
    n = tcpt_reply(200, big, sizeof(big), out);
    ck_assert_uint_eq(n, TCPT_REPLY_MAX);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tcptable");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_get);
    tcase_add_test(tc, test_put);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_reply);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
