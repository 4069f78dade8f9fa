/* Unit tests for the HTTP front's status lines (src/front/http/http_resp.c):
 * every status the daemon can send has its reason phrase (RFC 9110 15).
 * The statuses sent are those of HTTP_ERRORS (http.h), the ones the metrics
 * count one by one (STATS_HTTP_STATUSES, core/stats.h: 200, 204, 403 from
 * the API and /v1/authz, 500, 503, and the error statuses, httpparse.c's
 * among them), and 100 Continue (http_conn.c); a grep of src/front/http
 * for the codes passed to http_respond, http_reply_json and framing_error
 * finds no other. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "front/http/http.h"

/* RFC 9110's phrases, for the codes an HTTP server may send at all. */
static const struct {
    int code;
    const char *text;
} rfc9110[] = {
    {100, "Continue"},
    {101, "Switching Protocols"},
    {200, "OK"},
    {201, "Created"},
    {202, "Accepted"},
    {204, "No Content"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {406, "Not Acceptable"},
    {408, "Request Timeout"},
    {409, "Conflict"},
    {411, "Length Required"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {415, "Unsupported Media Type"},
    {417, "Expectation Failed"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
    {505, "HTTP Version Not Supported"},
    {507, "Insufficient Storage"}, /* RFC 4918, 11.5 */
};

static void expect_phrase(int code)
{
    const char *want = NULL;
    for (size_t i = 0; i < sizeof(rfc9110) / sizeof(rfc9110[0]); i++)
        if (rfc9110[i].code == code)
            want = rfc9110[i].text;
    ck_assert_msg(want != NULL, "status %d is not in the test's RFC 9110 table", code);
    const char *got = http_status_text(code);
    ck_assert_msg(got != NULL, "status %d has no reason phrase", code);
    ck_assert_str_eq(got, want);
}

START_TEST(test_every_status_sent_has_its_phrase)
{
    expect_phrase(100);
    for (int i = 1; i < STATS_HTTP_SLOTS; i++)
        expect_phrase(stats_http_codes[i]);
    for (int e = 0; e < HTTP_ERR_COUNT_; e++) {
        int code = http_err_status((enum http_err)e);
        expect_phrase(code);
        /* Counted one by one, too: not lumped into "any other". */
        ck_assert_msg(stats_http_slot(code) != 0, "%s's status %d has no metrics slot",
                      http_err_name((enum http_err)e), code);
    }
}
END_TEST

START_TEST(test_unknown_status_has_none)
{
    ck_assert_ptr_null(http_status_text(0));
    ck_assert_ptr_null(http_status_text(299));
    ck_assert_ptr_null(http_status_text(-1));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("http_resp");
    TCase *tc = tcase_create("http_resp");
    tcase_add_test(tc, test_every_status_sent_has_its_phrase);
    tcase_add_test(tc, test_unknown_status_has_none);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
