/* Unit tests for the RESP2 parser and reply formatters
 * (src/front/resp/respparse.c): requests in the multibulk and inline forms,
 * pipelined and in pieces, and hostile framing (negative and huge lengths,
 * nested arrays, truncated frames, frames past the limits). Every expectation
 * is an exact value: status, bytes consumed, arguments, error text. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/resp/respparse.h"

static const struct resp_limits lim_std = {
    .max_inline = 256, .max_bulk = 256, .max_args = 6, .max_frame = 1024};

static const char *status_name(enum resp_status st)
{
    switch (st) {
    case RESP_NEED_MORE:
        return "NEED_MORE";
    case RESP_EMPTY:
        return "EMPTY";
    case RESP_REQUEST:
        return "REQUEST";
    case RESP_ERROR:
        return "ERROR";
    case RESP_FATAL:
        return "FATAL";
    }
    return "?";
}

/* One result as text: `STATUS/consumed [arg] [arg]` or `STATUS/consumed
 * code: message`; arguments with bytes outside printable ASCII as \xHH. */
static void describe(char *out, size_t cap, enum resp_status st, const struct resp_request *r,
                     size_t consumed)
{
    size_t n = (size_t)snprintf(out, cap, "%s/%zu", status_name(st), consumed);
    if (st == RESP_REQUEST) {
        for (size_t i = 0; i < r->argc; i++) {
            n += (size_t)snprintf(out + n, cap - n, " [");
            for (size_t j = 0; j < r->argv[i].len; j++) {
                unsigned char ch = (unsigned char)r->argv[i].p[j];
                n += (size_t)snprintf(out + n, cap - n, ch >= 0x20 && ch < 0x7f ? "%c" : "\\x%02x",
                                      ch);
            }
            n += (size_t)snprintf(out + n, cap - n, "]");
        }
    } else if (st == RESP_ERROR || st == RESP_FATAL) {
        snprintf(out + n, cap - n, " %s: %s", resp_err_name(r->err), r->errmsg);
    }
}

/* Every request of s (a copy: inline unescaping writes), described one a
 * line, until NEED_MORE or FATAL. */
static char *parse_all(const char *s, size_t len, const struct resp_limits *lim)
{
    static char acc[8192];
    char *buf = malloc(len + 1);
    struct resp_arg *st = calloc(lim->max_args, sizeof(*st));
    ck_assert_ptr_nonnull(buf);
    ck_assert_ptr_nonnull(st);
    memcpy(buf, s, len);
    size_t off = 0, used = 0;
    struct resp_scan scan = {0};
    acc[0] = '\0';
    for (;;) {
        struct resp_request req;
        size_t consumed;
        enum resp_status r = resp_next(buf + off, len - off, lim, &req, st, &consumed, &scan);
        char line[1024];
        describe(line, sizeof(line), r, &req, consumed);
        used += (size_t)snprintf(acc + used, sizeof(acc) - used, "%s%s", used ? "\n" : "", line);
        if (r == RESP_NEED_MORE || r == RESP_FATAL)
            break;
        off += consumed;
    }
    free(buf);
    free(st);
    return acc;
}

#define ck_parse(input, lim, want)                                                                 \
    do {                                                                                           \
        const char *got_ = parse_all((input), sizeof(input) - 1, (lim));                           \
        ck_assert_msg(strcmp(got_, (want)) == 0, "input %s\n got:\n%s\nwant:\n%s", #input, got_,   \
                      (want));                                                                     \
    } while (0)

START_TEST(test_multibulk)
{
    ck_parse("*3\r\n$9\r\nBF.EXISTS\r\n$1\r\nf\r\n$3\r\na b\r\n", &lim_std,
             "REQUEST/35 [BF.EXISTS] [f] [a b]\nNEED_MORE/0");
    /* Binary-safe: CR, LF and NUL inside a bulk are data. */
    ck_parse("*2\r\n$4\r\nECHO\r\n$4\r\n\r\n\0x\r\n", &lim_std,
             "REQUEST/24 [ECHO] [\\x0d\\x0a\\x00x]\nNEED_MORE/0");
    /* An empty bulk is an argument. */
    ck_parse("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", &lim_std, "REQUEST/20 [ECHO] []\nNEED_MORE/0");
    /* Pipelined, with Redis's empty arrays skipped without a reply. */
    ck_parse("*1\r\n$4\r\nPING\r\n*0\r\n*-1\r\n*1\r\n$4\r\nQUIT\r\n", &lim_std,
             "REQUEST/14 [PING]\nEMPTY/4\nEMPTY/5\nREQUEST/14 [QUIT]\nNEED_MORE/0");
}
END_TEST

START_TEST(test_inline)
{
    ck_parse("PING\r\nBF.EXISTS f a\n  \r\n\nbf.mexists  f\ta  b \r\n", &lim_std,
             "REQUEST/6 [PING]\nREQUEST/14 [BF.EXISTS] [f] [a]\nEMPTY/4\nEMPTY/1\n"
             "REQUEST/21 [bf.mexists] [f] [a] [b]\nNEED_MORE/0");
    /* Redis's quoting (sdssplitargs): escapes in double quotes, \' in single. */
    ck_parse("ECHO \"a b\\n\\x41\\\"\" 'it\\'s' x\"y z\"\n", &lim_std,
             "REQUEST/34 [ECHO] [a b\\x0aA\"] [it's] [xy z]\nNEED_MORE/0");
    ck_parse("ECHO \"\"\n", &lim_std, "REQUEST/8 [ECHO] []\nNEED_MORE/0");
    ck_parse("ECHO \"abc\n", &lim_std,
             "FATAL/0 protocol: Protocol error: unbalanced quotes in request");
    ck_parse("ECHO \"abc\"x\n", &lim_std,
             "FATAL/0 protocol: Protocol error: unbalanced quotes in request");
    ck_parse("ECHO 'abc\n", &lim_std,
             "FATAL/0 protocol: Protocol error: unbalanced quotes in request");
}
END_TEST

/* Over max_args: the whole request is consumed and refused, the next one
 * is parsed as usual. */
START_TEST(test_too_many_args)
{
    ck_parse("*7\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n"
             "*1\r\n$4\r\nPING\r\n",
             &lim_std,
             "ERROR/53 too_many_items: 7 arguments, the limit is 6\nREQUEST/14 [PING]\nNEED_MORE/0");
    ck_parse("a b c d e f g\nPING\n", &lim_std,
             "ERROR/14 too_many_items: 7 arguments, the limit is 6\nREQUEST/5 [PING]\nNEED_MORE/0");
    ck_parse("a b c d e f\n", &lim_std, "REQUEST/12 [a] [b] [c] [d] [e] [f]\nNEED_MORE/0");
}
END_TEST

/* Hostile framing: an error and a close (FATAL), never a wait for bytes
 * that would exceed the limits. */
START_TEST(test_hostile)
{
    ck_parse("*1\r\n$-1\r\n", &lim_std, "FATAL/0 protocol: Protocol error: invalid bulk length");
    ck_parse("*1\r\n$-5\r\nabc\r\n", &lim_std,
             "FATAL/0 protocol: Protocol error: invalid bulk length");
    ck_parse("*1\r\n$99999999999999999999\r\n", &lim_std,
             "FATAL/0 protocol: Protocol error: invalid bulk length");
    ck_parse("*1\r\n$257\r\n", &lim_std,
             "FATAL/0 protocol: Protocol error: invalid bulk length 257 (the limit is 256)");
    ck_parse("*1\r\n$03\r\nabc\r\n", &lim_std,
             "FATAL/0 protocol: Protocol error: invalid bulk length");
    ck_parse("*-2\r\n", &lim_std, "FATAL/0 protocol: Protocol error: invalid multibulk length");
    ck_parse("*+1\r\n", &lim_std, "FATAL/0 protocol: Protocol error: invalid multibulk length");
    ck_parse("*1048577\r\n", &lim_std,
             "FATAL/0 protocol: Protocol error: invalid multibulk length");
    ck_parse("*1x\r\n", &lim_std, "FATAL/0 protocol: Protocol error: invalid multibulk length");
    /* Nested arrays and other types where a bulk must be. */
    ck_parse("*2\r\n*1\r\n$4\r\nPING\r\n", &lim_std,
             "FATAL/0 protocol: Protocol error: expected '$', got '*'");
    ck_parse("*1\r\n:1\r\n", &lim_std, "FATAL/0 protocol: Protocol error: expected '$', got ':'");
    /* The data must be followed by CRLF; headers must end with CRLF. */
    ck_parse("*1\r\n$3\r\nabcd\r\n", &lim_std,
             "FATAL/0 protocol: Protocol error: expected CRLF after the bulk data");
    ck_parse("*1\r\n$3\rxabc\r\n", &lim_std,
             "FATAL/0 protocol: Protocol error: expected CRLF after the bulk length");
    ck_parse("*1\nPING\n", &lim_std,
             "FATAL/0 protocol: Protocol error: expected CRLF after the multibulk length");
    ck_parse("*111111111111111111111111111111111111", &lim_std,
             "FATAL/0 protocol: Protocol error: too big multibulk count string");
    ck_parse("*1\r\n$111111111111111111111111111111111111", &lim_std,
             "FATAL/0 protocol: Protocol error: too big bulk count string");
    /* A frame larger than max_frame is refused as soon as a header shows it. */
    ck_parse("*5\r\n$200\r\n", &((struct resp_limits){256, 256, 6, 100}),
             "FATAL/0 protocol: Protocol error: a request of more than 100 bytes");
    /* An inline line past max_inline without its LF. */
    char longline[300];
    memset(longline, 'a', sizeof(longline));
    const char *got = parse_all(longline, sizeof(longline), &lim_std);
    ck_assert_str_eq(got,
                     "FATAL/0 protocol: Protocol error: too big inline request (the limit is 256 bytes)");
}
END_TEST

/* Truncated frames wait (within the limits) and parse once whole. */
START_TEST(test_truncated)
{
    ck_parse("*2\r\n$4\r\nECHO\r\n$3\r\nab", &lim_std, "NEED_MORE/0");
    ck_parse("*2\r\n$4\r\nECHO\r\n$3\r\nabc\r", &lim_std, "NEED_MORE/0");
    ck_parse("*2\r\n$4\r\nECHO\r\n$3", &lim_std, "NEED_MORE/0");
    ck_parse("*2\r\n$4\r\nECHO\r\n", &lim_std, "NEED_MORE/0");
    ck_parse("*2\r", &lim_std, "NEED_MORE/0");
    ck_parse("PING", &lim_std, "NEED_MORE/0");
}
END_TEST

/* Many small bulks declared by a large count: the buffer never needs more
 * than max_frame; past it the request is refused. */
START_TEST(test_frame_bound)
{
    struct resp_limits lim = {256, 256, 6, 1024};
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    len += (size_t)snprintf(buf, cap, "*100000\r\n");
    while (len + 7 < cap)
        len += (size_t)snprintf(buf + len, cap - len, "$1\r\na\r\n");
    struct resp_arg st[6];
    struct resp_scan scan = {0};
    struct resp_request req;
    size_t consumed;
    /* Fed in pieces with the resume hint, as a connection does. */
    enum resp_status r = RESP_NEED_MORE;
    size_t have;
    for (have = 1; have <= len && r == RESP_NEED_MORE; have++) {
        r = resp_next(buf, have, &lim, &req, st, &consumed, &scan);
        if (r == RESP_NEED_MORE)
            ck_assert_uint_le(have, lim.max_frame);
    }
    ck_assert_int_eq(r, RESP_FATAL);
    ck_assert_str_eq(req.errmsg, "Protocol error: a request of more than 1024 bytes");
    ck_assert_uint_le(have, lim.max_frame + 8);
    free(buf);
}
END_TEST

/* The same stream, whole or one byte at a time (with the resume hint), gives
 * the same requests. */
START_TEST(test_pieces)
{
    static const char stream[] = "*3\r\n$9\r\nBF.EXISTS\r\n$1\r\nf\r\n$3\r\nabc\r\n"
                                 "PING\r\n"
                                 "*4\r\n$10\r\nBF.MEXISTS\r\n$1\r\nf\r\n$1\r\nx\r\n$2\r\nyz\r\n"
                                 "ECHO \"q r\"\n";
    size_t len = sizeof(stream) - 1;
    char whole[2048], pieces[2048];
    snprintf(whole, sizeof(whole), "%s", parse_all(stream, len, &lim_std));

    char *buf = malloc(len);
    memcpy(buf, stream, len);
    struct resp_arg st[6];
    struct resp_scan scan = {0};
    size_t off = 0, have = 0, used = 0;
    pieces[0] = '\0';
    while (have <= len) {
        struct resp_request req;
        size_t consumed;
        enum resp_status r = resp_next(buf + off, have - off, &lim_std, &req, st, &consumed, &scan);
        if (r == RESP_NEED_MORE) {
            if (have == len) {
                used += (size_t)snprintf(pieces + used, sizeof(pieces) - used, "%sNEED_MORE/0",
                                         used ? "\n" : "");
                break;
            }
            have++;
            continue;
        }
        char line[512];
        describe(line, sizeof(line), r, &req, consumed);
        used += (size_t)snprintf(pieces + used, sizeof(pieces) - used, "%s%s", used ? "\n" : "",
                                 line);
        off += consumed;
    }
    free(buf);
    ck_assert_str_eq(pieces, whole);
    ck_assert_str_eq(whole, "REQUEST/35 [BF.EXISTS] [f] [abc]\nREQUEST/6 [PING]\n"
                            "REQUEST/43 [BF.MEXISTS] [f] [x] [yz]\nREQUEST/11 [ECHO] [q r]\n"
                            "NEED_MORE/0");
}
END_TEST

START_TEST(test_formatters)
{
    char out[128];
    size_t n;
    n = resp_format_int(out, sizeof(out), -42);
    ck_assert_uint_eq(n, 6);
    ck_assert_int_eq(memcmp(out, ":-42\r\n", n), 0);
    n = resp_format_int(out, sizeof(out), 0);
    ck_assert_int_eq(memcmp(out, ":0\r\n", n), 0);
    bool v[3] = {true, false, true};
    n = resp_format_bools(out, sizeof(out), v, 3);
    ck_assert_uint_eq(n, 16);
    ck_assert_int_eq(memcmp(out, "*3\r\n:1\r\n:0\r\n:1\r\n", n), 0);
    ck_assert_uint_le(n, RESP_BOOLS_CAP(3));
    n = resp_format_bulk(out, sizeof(out), "a\r\nb", 4);
    ck_assert_int_eq(memcmp(out, "$4\r\na\r\nb\r\n", n), 0);
    n = resp_format_simple(out, sizeof(out), "OK");
    ck_assert_int_eq(memcmp(out, "+OK\r\n", n), 0);
    n = resp_format_error(out, sizeof(out), "ERR", "bad\r\nthing\x01");
    ck_assert_uint_eq(n, 18);
    ck_assert_int_eq(memcmp(out, "-ERR bad  thing?\r\n", n - 2), 0);
    /* Too small: nothing written, the size needed returned. */
    memset(out, 'z', sizeof(out));
    ck_assert_uint_eq(resp_format_int(out, 3, 12345), 8);
    ck_assert_int_eq(out[0], 'z');
    ck_assert_uint_eq(resp_format_bools(out, 4, v, 3), 16);
    ck_assert_int_eq(out[0], 'z');
    struct resp_arg a = {"bf.Exists", 9};
    ck_assert(resp_arg_is(&a, "BF.EXISTS"));
    ck_assert(!resp_arg_is(&a, "BF.EXIST"));
    ck_assert_str_eq(resp_err_name(RESP_ERR_PROTOCOL), "protocol");
    ck_assert_str_eq(resp_err_name(RESP_ERR_COUNT_), "internal");
}
END_TEST

/* glob: Redis's KEYS/SCAN MATCH reading of a pattern. */
static bool glob(const char *p, const char *s)
{
    return resp_glob(p, strlen(p), s, strlen(s));
}

START_TEST(test_glob)
{
    static const struct {
        const char *p, *s;
        bool want;
    } cases[] = {
        {"*", "", true},
        {"*", "bf:blocklist", true},
        {"", "", true},
        {"", "a", false},
        {"a", "", false},
        {"exact", "exact", true},
        {"exact", "Exact", false}, /* case-sensitive, as Redis's KEYS */
        {"ex*", "exact", true},
        {"*act", "exact", true},
        {"*c*", "exact", true},
        {"*z*", "exact", false},
        {"e?act", "exact", true},
        {"e?act", "eact", false},
        {"??", "ab", true},
        {"??", "abc", false},
        {"[eu]*", "urls", true},
        {"[eu]*", "hosts", false},
        {"[^eu]*", "hosts", true},
        {"[^eu]*", "exact", false},
        {"[a-f]xact", "exact", true},
        {"[f-a]xact", "exact", true}, /* a reversed range, swapped as Redis does */
        {"[g-z]xact", "exact", false},
        {"[]x", "x", false}, /* an empty class matches nothing */
        {"\\*", "*", true},
        {"\\*", "a", false},
        {"a\\?", "a?", true},
        {"a\\?", "ab", false},
        {"[\\]]", "]", true},
        {"[ab", "a", true},   /* an unclosed class ends with the pattern */
        {"a\\", "a\\", true}, /* a trailing backslash is itself */
        {"seen:{*}:2026-*", "seen:{sku123}:2026-11-27", true},
        {"seen:{*}:2026-*", "seen:{sku123}:2025-11-27", false},
        {"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
        {"a*b*c", "aXbYc", true},
        {"a*b*c", "aXbYcZ", false},
        {"**", "x", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(glob(cases[i].p, cases[i].s) == cases[i].want, "glob(%s, %s) != %d",
                      cases[i].p, cases[i].s, cases[i].want);
}
END_TEST

/* The reference: the recursive reading, exponential but plain, on short
 * inputs (what resp_glob's one-backtrack loop must agree with). */
static bool ref_glob(const char *p, size_t pl, const char *s, size_t sl)
{
    if (pl == 0)
        return sl == 0;
    if (p[0] == '*') {
        for (size_t k = 0; k <= sl; k++)
            if (ref_glob(p + 1, pl - 1, s + k, sl - k))
                return true;
        return false;
    }
    if (sl == 0)
        return false;
    if (p[0] == '?')
        return ref_glob(p + 1, pl - 1, s + 1, sl - 1);
    if (p[0] == '\\' && pl >= 2)
        return p[1] == s[0] && ref_glob(p + 2, pl - 2, s + 1, sl - 1);
    if (p[0] == '[') {
        size_t k = 1;
        bool neg = k < pl && p[k] == '^', hit = false;
        k += neg;
        while (k < pl && p[k] != ']') {
            if (p[k] == '\\' && k + 1 < pl) {
                hit |= p[k + 1] == s[0];
                k += 2;
            } else if (k + 2 < pl && p[k + 1] == '-' && p[k + 2] != ']') {
                char lo = p[k] < p[k + 2] ? p[k] : p[k + 2], hi = p[k] < p[k + 2] ? p[k + 2] : p[k];
                hit |= s[0] >= lo && s[0] <= hi;
                k += 3;
            } else {
                hit |= p[k] == s[0];
                k++;
            }
        }
        size_t next = k < pl ? k + 1 : pl;
        return hit != neg && ref_glob(p + next, pl - next, s + 1, sl - 1);
    }
    return p[0] == s[0] && ref_glob(p + 1, pl - 1, s + 1, sl - 1);
}

START_TEST(test_glob_reference)
{
    static const char pal[] = "ab*?[]^-\\";
    static const char sal[] = "ab-]^";
    uint32_t rng = 12345;
    for (int t = 0; t < 200000; t++) {
        char p[10], s[10];
        rng = rng * 1103515245u + 12345u;
        size_t pl = (rng >> 16) % 9, sl = (rng >> 8) % 9;
        for (size_t i = 0; i < pl; i++) {
            rng = rng * 1103515245u + 12345u;
            p[i] = pal[(rng >> 16) % (sizeof(pal) - 1)];
        }
        for (size_t i = 0; i < sl; i++) {
            rng = rng * 1103515245u + 12345u;
            s[i] = sal[(rng >> 16) % (sizeof(sal) - 1)];
        }
        ck_assert_msg(resp_glob(p, pl, s, sl) == ref_glob(p, pl, s, sl),
                      "pattern '%.*s' string '%.*s': %d, the reference %d", (int)pl, p, (int)sl, s,
                      resp_glob(p, pl, s, sl), ref_glob(p, pl, s, sl));
    }
}
END_TEST

static Suite *respparse_suite(void)
{
    Suite *s = suite_create("respparse");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_multibulk);
    tcase_add_test(tc, test_inline);
    tcase_add_test(tc, test_too_many_args);
    tcase_add_test(tc, test_hostile);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_frame_bound);
    tcase_add_test(tc, test_pieces);
    tcase_add_test(tc, test_formatters);
    tcase_add_test(tc, test_glob);
    tcase_add_test(tc, test_glob_reference);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(respparse_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
