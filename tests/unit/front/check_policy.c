/* Unit tests for the Postfix policy delegation parser and reply formatter
 * (src/front/postfix/policy.h), hostile inputs included. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "front/postfix/policy.h"

static struct policy_request r;
static size_t used;
static char err[200];

static enum policy_status parse(const char *s)
{
    return policy_parse(s, strlen(s), &r, &used, err, sizeof(err));
}

static bool val_is(enum policy_attr a, const char *want)
{
    return r.attr[a].given && r.attr[a].len == strlen(want) &&
           memcmp(r.attr[a].p, want, r.attr[a].len) == 0;
}

START_TEST(test_request)
{
    const char *req = "request=smtpd_access_policy\nprotocol_state=RCPT\nprotocol_name=ESMTP\n"
                      "client_address=192.0.2.1\nclient_name=mail.example.com\n"
                      "reverse_client_name=mail.example.com\nhelo_name=mail.example.com\n"
                      "sender=foo@bar.example\nrecipient=bar@foo.example\nrecipient_count=0\n"
                      "queue_id=\ninstance=123.456.7\nsize=12345\nunknown_future_attr=x=y\n\n"
                      "request=smtpd_access_policy\n\n";
    ck_assert_int_eq(parse(req), POLICY_REQUEST);
    ck_assert_uint_eq(used, strlen(req) - strlen("request=smtpd_access_policy\n\n"));
    ck_assert(val_is(POLICY_CLIENT_ADDRESS, "192.0.2.1"));
    ck_assert(val_is(POLICY_CLIENT_NAME, "mail.example.com"));
    ck_assert(val_is(POLICY_SENDER, "foo@bar.example"));
    ck_assert(val_is(POLICY_RECIPIENT, "bar@foo.example"));
    ck_assert_uint_eq(r.n_lines, 14);
    ck_assert(r.request.given && r.request.len == 19);
    /* Any order, CRLF, an empty value, a name given twice (the last counts). */
    ck_assert_int_eq(parse("sender=\r\nrecipient=a@b\r\nrecipient=c@d\r\n\r\n"), POLICY_REQUEST);
    ck_assert(r.attr[POLICY_SENDER].given && r.attr[POLICY_SENDER].len == 0);
    ck_assert(val_is(POLICY_RECIPIENT, "c@d"));
    ck_assert(!r.attr[POLICY_CLIENT_ADDRESS].given);
    /* An empty request. */
    ck_assert_int_eq(parse("\n"), POLICY_REQUEST);
    ck_assert_uint_eq(used, 1);
}
END_TEST

START_TEST(test_errors)
{
    ck_assert_int_eq(parse(""), POLICY_NEED_MORE);
    ck_assert_int_eq(parse("sender=a@b\n"), POLICY_NEED_MORE);
    ck_assert_int_eq(parse("sender=a@b"), POLICY_NEED_MORE);
    ck_assert_int_eq(parse("sender\n\n"), POLICY_ERROR);
    ck_assert_str_eq(err, "line 1 is not NAME=VALUE");
    ck_assert_int_eq(parse("sender=a\n=x\n\n"), POLICY_ERROR);
    ck_assert_str_eq(err, "line 2 is not NAME=VALUE");
    ck_assert_int_eq(parse("Sender=a\n\n"), POLICY_ERROR);
    ck_assert_int_eq(parse("se nder=a\n\n"), POLICY_ERROR);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\n\r\n"), POLICY_ERROR);
}
END_TEST

START_TEST(test_complete)
{
    size_t sc = 0;
    ck_assert_uint_eq(policy_complete("a=b\n", 4, &sc), 0);
    ck_assert_uint_eq(sc, 4);
    ck_assert_uint_eq(policy_complete("a=b\n\nc", 6, &sc), 5);
    sc = 0;
    ck_assert_uint_eq(policy_complete("\n", 1, &sc), 1);
    sc = 0;
    ck_assert_uint_eq(policy_complete("\r\n", 2, &sc), 2);
    /* Arriving a byte at a time, CRLF straddling the reads. */
    const char *s = "a=b\r\nc=d\r\n\r\n";
    sc = 0;
    size_t got = 0;
    for (size_t n = 1; n <= strlen(s) && !got; n++)
        got = policy_complete(s, n, &sc);
    ck_assert_uint_eq(got, strlen(s));
    sc = 0;
    ck_assert_uint_eq(policy_complete("a=\rb\n\rx\n", 8, &sc), 0);
}
END_TEST

START_TEST(test_reply)
{
    char out[POLICY_REPLY_MAX];
    size_t n = policy_reply("REJECT listed by $filter ($attribute $match) $other $", "ips",
                            "client_address", "192.0.2.1", 9, out);
    const char *want = "action=REJECT listed by ips (client_address 192.0.2.1) $other $\n\n";
    ck_assert_uint_eq(n, strlen(want));
    ck_assert(memcmp(out, want, n) == 0);
    /* A newline in a substituted match cannot end the reply early. */
    n = policy_reply("REJECT $match", "f", "a", "x\ny\r", 4, out);
    ck_assert(memcmp(out, "action=REJECT x y \n\n", n) == 0);
    /* Too long: cut, still ending in the empty line. */
    static char big[5000];
    memset(big, 'm', sizeof(big) - 1);
    n = policy_reply("$match$match", "f", "a", big, strlen(big), out);
    ck_assert_uint_eq(n, POLICY_REPLY_MAX);
    ck_assert(out[n - 1] == '\n' && out[n - 2] == '\n' && out[n - 3] == 'm');
    ck_assert_int_eq(policy_attr_parse("recipient"), POLICY_RECIPIENT);
    ck_assert_int_eq(policy_attr_parse("size"), -1);
    ck_assert_str_eq(policy_attr_name(POLICY_HELO_NAME), "helo_name");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_request);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_complete);
    tcase_add_test(tc, test_reply);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
