/* Unit tests for bloomd's text protocol parser and replies
 * (src/front/bloomd/bloomd_proto.h): bloomd's splitting of each verb's
 * arguments, its create options read as its sscanf reads them, its error
 * words, and the limits bloomd does not have (max_line, max_items). */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/bloomd/bloomd_proto.h"

#define MAX_KEYS 8

static struct bloomd_token keys[MAX_KEYS];
static struct bloomd_request r;
static size_t used;
static struct bloomd_limits lim = {256, MAX_KEYS};

static enum bloomd_status parse_n(const char *s, size_t n)
{
    used = 0;
    return bloomd_next(s, n, &lim, &r, keys, &used, NULL);
}

static enum bloomd_status parse(const char *s)
{
    return parse_n(s, strlen(s));
}

static bool tok_is(struct bloomd_token t, const char *s)
{
    return t.len == strlen(s) && memcmp(t.p, s, t.len) == 0;
}

/* Every verb and its alias, matched as bloomd matches them: whole, case-sensitive. */
START_TEST(test_verbs)
{
    static const struct {
        const char *line;
        enum bloomd_verb v;
    } ok[] = {
        {"check f k\n", BLOOMD_CHECK}, {"c f k\n", BLOOMD_CHECK},     {"multi f k\n", BLOOMD_MULTI},
        {"m f k\n", BLOOMD_MULTI},     {"set f k\n", BLOOMD_SET},     {"s f k\n", BLOOMD_SET},
        {"bulk f k\n", BLOOMD_BULK},   {"b f k\n", BLOOMD_BULK},      {"list\n", BLOOMD_LIST},
        {"info f\n", BLOOMD_INFO},     {"create f\n", BLOOMD_CREATE}, {"drop f\n", BLOOMD_DROP},
        {"close f\n", BLOOMD_CLOSE},   {"clear f\n", BLOOMD_CLEAR},   {"flush\n", BLOOMD_FLUSH},
        {"auth t\n", BLOOMD_AUTH},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ck_assert_int_eq(parse(ok[i].line), BLOOMD_REQUEST);
        ck_assert_int_eq(r.verb, ok[i].v);
        ck_assert_uint_eq(used, strlen(ok[i].line));
    }
    static const char *const bad[] = {"CHECK f k\n", "Check f k\n", "checks f k\n", "l\n",
                                      "\n",          "\r\n",        " c f k\n",     "x\n",
                                      "che\n",       "i f\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(parse(bad[i]), BLOOMD_ERROR);
        ck_assert_str_eq(r.errmsg, BLOOMD_MSG_NOT_SUPPORTED);
        ck_assert_uint_eq(used, strlen(bad[i]));
    }
    ck_assert_str_eq(bloomd_verb_name(BLOOMD_BULK), "bulk");
}
END_TEST

/* check and set: the key is the rest of the line, spaces included, as
 * bloomd's handle_filt_key_cmd takes it; one CR before the LF goes. */
START_TEST(test_single_key)
{
    ck_assert_int_eq(parse("check foobar test\n"), BLOOMD_REQUEST);
    ck_assert(tok_is(r.filter, "foobar") && r.has_filter);
    ck_assert_uint_eq(r.n_keys, 1);
    ck_assert(tok_is(r.keys[0], "test"));
    ck_assert_int_eq(parse("s foobar two words \r\n"), BLOOMD_REQUEST);
    ck_assert(tok_is(r.keys[0], "two words "));
    ck_assert_int_eq(parse("c f k\r\r\n"), BLOOMD_REQUEST);
    ck_assert(tok_is(r.keys[0], "k\r"));
    /* An empty filter name is a name (bloomd answers Filter does not exist). */
    ck_assert_int_eq(parse("c  k\n"), BLOOMD_REQUEST);
    ck_assert(tok_is(r.filter, "") && tok_is(r.keys[0], "k"));
    static const char *const bad[] = {"c\n", "c \n", "c foobar\n", "c foobar \n", "set f \r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(parse(bad[i]), BLOOMD_ERROR);
        ck_assert_str_eq(r.errmsg, BLOOMD_MSG_FILTER_KEY_NEEDED);
    }
}
END_TEST

/* multi and bulk: split on every space; a double space is an empty key, a
 * trailing space adds none (bloomd's loop over buffer_after_terminator). */
START_TEST(test_multi_keys)
{
    ck_assert_int_eq(parse("multi foobar test test1 test2\n"), BLOOMD_REQUEST);
    ck_assert_uint_eq(r.n_keys, 3);
    ck_assert(tok_is(r.keys[0], "test") && tok_is(r.keys[1], "test1") &&
              tok_is(r.keys[2], "test2"));
    ck_assert_int_eq(parse("m f a  b \n"), BLOOMD_REQUEST);
    ck_assert_uint_eq(r.n_keys, 3);
    ck_assert(tok_is(r.keys[0], "a") && tok_is(r.keys[1], "") && tok_is(r.keys[2], "b"));
    ck_assert_int_eq(parse("b f a  \n"), BLOOMD_REQUEST);
    ck_assert_uint_eq(r.n_keys, 2);
    ck_assert(tok_is(r.keys[0], "a") && tok_is(r.keys[1], ""));
    ck_assert_int_eq(parse("m f  \n"), BLOOMD_REQUEST); /* rest " ": one empty key */
    ck_assert_uint_eq(r.n_keys, 1);
    ck_assert(tok_is(r.keys[0], ""));
    ck_assert_int_eq(parse("m f\n"), BLOOMD_ERROR);
    ck_assert_str_eq(r.errmsg, BLOOMD_MSG_FILTER_KEY_NEEDED);
    ck_assert_int_eq(parse("m f \n"), BLOOMD_ERROR);
    /* max_keys exactly, then one more: refused whole, the count named. */
    ck_assert_int_eq(parse("m f 1 2 3 4 5 6 7 8\n"), BLOOMD_REQUEST);
    ck_assert_uint_eq(r.n_keys, MAX_KEYS);
    ck_assert(tok_is(r.keys[7], "8"));
    ck_assert_int_eq(parse("m f 1 2 3 4 5 6 7 8 9 10\n"), BLOOMD_ERROR);
    ck_assert_str_eq(r.errmsg, "10 keys, the limit is max_items 8");
}
END_TEST

/* info, drop, close, clear, flush <f>: a name and nothing after it; list's
 * prefix is the rest of the line. */
START_TEST(test_filter_verbs)
{
    static const char *const verbs[] = {"info", "drop", "close", "clear", "flush"};
    char line[64];
    for (size_t i = 0; i < 5; i++) {
        snprintf(line, sizeof(line), "%s foobar\n", verbs[i]);
        ck_assert_int_eq(parse(line), BLOOMD_REQUEST);
        ck_assert(r.has_filter && tok_is(r.filter, "foobar"));
        snprintf(line, sizeof(line), "%s foobar x\n", verbs[i]);
        ck_assert_int_eq(parse(line), BLOOMD_ERROR);
        ck_assert_str_eq(r.errmsg, BLOOMD_MSG_UNEXPECTED_ARGS);
        snprintf(line, sizeof(line), "%s foobar \n", verbs[i]);
        ck_assert_int_eq(parse(line), BLOOMD_ERROR);
        ck_assert_str_eq(r.errmsg, BLOOMD_MSG_UNEXPECTED_ARGS);
        snprintf(line, sizeof(line), "%s \n", verbs[i]); /* the empty name */
        ck_assert_int_eq(parse(line), BLOOMD_REQUEST);
        ck_assert(r.has_filter && r.filter.len == 0);
        snprintf(line, sizeof(line), "%s\n", verbs[i]);
        if (i == 4) { /* flush alone: every filter */
            ck_assert_int_eq(parse(line), BLOOMD_REQUEST);
            ck_assert(!r.has_filter);
        } else {
            ck_assert_int_eq(parse(line), BLOOMD_ERROR);
            ck_assert_str_eq(r.errmsg, BLOOMD_MSG_FILTER_NEEDED);
        }
    }
    ck_assert_int_eq(parse("list\n"), BLOOMD_REQUEST);
    ck_assert(r.arg.len == 0 && !r.has_filter);
    ck_assert_int_eq(parse("list test:create:filter\r\n"), BLOOMD_REQUEST);
    ck_assert(tok_is(r.arg, "test:create:filter"));
    ck_assert_int_eq(parse("list a b\n"), BLOOMD_REQUEST);
    ck_assert(tok_is(r.arg, "a b"));
    ck_assert_int_eq(parse("auth s3cret token\n"), BLOOMD_REQUEST);
    ck_assert(tok_is(r.arg, "s3cret token"));
    ck_assert_int_eq(parse("auth\n"), BLOOMD_ERROR);
}
END_TEST

/* create: bloomd's name rule and its defaults. */
START_TEST(test_create_name)
{
    ck_assert_int_eq(parse("create foobar\n"), BLOOMD_REQUEST);
    ck_assert(tok_is(r.filter, "foobar"));
    ck_assert(!r.create.has_capacity && !r.create.has_prob && !r.create.has_in_memory);
    ck_assert_uint_eq(r.create.capacity, BLOOMD_DEFAULT_CAPACITY);
    ck_assert(r.create.prob == BLOOMD_DEFAULT_PROB && r.create.in_memory == 0);
    ck_assert_int_eq(parse("create test:create:filter:with:long:prefix:1\n"), BLOOMD_REQUEST);
    char line[300];
    memset(line, 'a', sizeof(line));
    memcpy(line, "create ", 7);
    line[7 + 200] = '\n'; /* 200 bytes: the most */
    ck_assert_int_eq(parse_n(line, 7 + 201), BLOOMD_REQUEST);
    ck_assert_uint_eq(r.filter.len, 200);
    line[7 + 200] = 'a';
    line[7 + 201] = '\n';
    ck_assert_int_eq(parse_n(line, 7 + 202), BLOOMD_ERROR);
    ck_assert_str_eq(r.errmsg, BLOOMD_MSG_BAD_FILTER_NAME);
    static const char *const bad[] = {"create \n", "create a\tb\n", "create a\rb\n",
                                      "create  capacity=20000\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(parse(bad[i]), BLOOMD_ERROR);
        ck_assert_str_eq(r.errmsg, BLOOMD_MSG_BAD_FILTER_NAME);
    }
    ck_assert_int_eq(parse_n("create a\0b\n", 11), BLOOMD_ERROR);
    ck_assert_int_eq(parse("create\n"), BLOOMD_ERROR);
    ck_assert_str_eq(r.errmsg, BLOOMD_MSG_FILTER_NEEDED);
    ck_assert(bloomd_valid_name("x", 1) && !bloomd_valid_name("", 0));
}
END_TEST

/* create's options as bloomd's three sscanf patterns read them. */
START_TEST(test_create_options)
{
    ck_assert_int_eq(parse("create f capacity=20000 prob=0.001 in_memory=1\n"), BLOOMD_REQUEST);
    ck_assert(r.create.has_capacity && r.create.capacity == 20000);
    ck_assert(r.create.has_prob && fabs(r.create.prob - 0.001) < 1e-15);
    ck_assert(r.create.has_in_memory && r.create.in_memory == 1);
    /* A later option wins, as bloomd overwrites its config. */
    ck_assert_int_eq(parse("create f capacity=20000 capacity=30000\n"), BLOOMD_REQUEST);
    ck_assert_uint_eq(r.create.capacity, 30000);
    /* sscanf's EOF before a conversion counts as a match: these are no-ops. */
    static const char *const noop[] = {"create f in_memory\n",  "create f cap\n",   "create f \n",
                                       "create f  \n",          "create f prob=\n", "create f p\n",
                                       "create f capacity=\t\n"};
    for (size_t i = 0; i < sizeof(noop) / sizeof(noop[0]); i++) {
        ck_assert_msg(parse(noop[i]) == BLOOMD_REQUEST, "%s", noop[i]);
        ck_assert(!r.create.has_capacity && !r.create.has_prob && !r.create.has_in_memory);
    }
    /* Trailing bytes after a number are ignored, leading whitespace skipped. */
    ck_assert_int_eq(parse("create f capacity=20000abc prob=\t0.01x\n"), BLOOMD_REQUEST);
    ck_assert_uint_eq(r.create.capacity, 20000);
    ck_assert(fabs(r.create.prob - 0.01) < 1e-15);
    ck_assert_int_eq(parse("create f prob=1e-3\n"), BLOOMD_REQUEST);
    ck_assert(fabs(r.create.prob - 1e-3) < 1e-15);
    /* No pattern matches, or a value out of bloomd's bounds. */
    static const char *const bad[] = {
        "create f x\n",
        "create f capacity=abc\n",
        "create f size=5\n",
        "create f capacity=10000\n",
        "create f capacity=-5\n",
        "create f prob=0.1\n",
        "create f prob=0\n",
        "create f prob=-0.01\n",
        "create f prob=1\n",
        "create f prob=nan\n",
        "create f in_memory=2\n",
        "create f in_memory=-1\n",
        "create f capacity=20000 x\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(parse(bad[i]) == BLOOMD_ERROR, "%s", bad[i]);
        ck_assert_str_eq(r.errmsg, BLOOMD_MSG_BAD_ARGS);
    }
    ck_assert_int_eq(parse("create f capacity=10001 prob=0.0999 in_memory=0\n"), BLOOMD_REQUEST);
    /* An option longer than the copy sscanf reads is refused. */
    char line[400] = "create f capacity=";
    size_t n = strlen(line);
    memset(line + n, '0', 300);
    memcpy(line + n + 300, "20000\n", 7);
    lim.max_line = 1024;
    ck_assert_int_eq(parse(line), BLOOMD_ERROR);
    ck_assert_str_eq(r.errmsg, BLOOMD_MSG_BAD_ARGS);
    lim.max_line = 256;
}
END_TEST

/* Lines in pieces, pipelined, and over max_line. */
START_TEST(test_framing)
{
    const char *two = "c f a\nc f b\n";
    ck_assert_int_eq(parse(two), BLOOMD_REQUEST);
    ck_assert_uint_eq(used, 6);
    ck_assert_int_eq(parse(two + used), BLOOMD_REQUEST);
    ck_assert(tok_is(r.keys[0], "b"));
    ck_assert_int_eq(parse("c f a"), BLOOMD_NEED_MORE);
    ck_assert_uint_eq(used, 0);
    /* The resume hint: a line delivered in pieces is not rescanned. */
    size_t scanned = 0;
    char buf[64] = "check foo ba";
    ck_assert_int_eq(bloomd_next(buf, strlen(buf), &lim, &r, keys, &used, &scanned),
                     BLOOMD_NEED_MORE);
    ck_assert_uint_eq(scanned, strlen(buf));
    strcat(buf, "r\nx");
    ck_assert_int_eq(bloomd_next(buf, strlen(buf), &lim, &r, keys, &used, &scanned),
                     BLOOMD_REQUEST);
    ck_assert(tok_is(r.keys[0], "bar") && scanned == 0 && used == 14);
    /* max_line bytes before the LF pass; one more is fatal, with or without its LF. */
    char line[300];
    memset(line, 'k', sizeof(line));
    memcpy(line, "c f ", 4);
    line[256] = '\n';
    ck_assert_int_eq(parse_n(line, 257), BLOOMD_REQUEST);
    ck_assert_uint_eq(r.keys[0].len, 252);
    line[256] = 'k';
    line[257] = '\n';
    ck_assert_int_eq(parse_n(line, 258), BLOOMD_FATAL);
    ck_assert_uint_eq(used, 0);
    ck_assert(strstr(r.errmsg, "max_line") != NULL);
    ck_assert_int_eq(parse_n(line, 257), BLOOMD_FATAL); /* no LF yet, already over */
    ck_assert_int_eq(parse_n(line, 256), BLOOMD_NEED_MORE);
}
END_TEST

START_TEST(test_replies)
{
    char out[1024];
    bool v[3] = {true, false, true};
    size_t n = bloomd_format_bools(out, sizeof(out), v, 3);
    ck_assert(n == 11 && memcmp(out, "Yes No Yes\n", 11) == 0);
    n = bloomd_format_bools(out, sizeof(out), v + 1, 1);
    ck_assert(n == 3 && memcmp(out, "No\n", 3) == 0);
    ck_assert_uint_le(bloomd_format_bools(out, sizeof(out), v, 3), BLOOMD_BOOLS_CAP(3));
    ck_assert_uint_eq(bloomd_format_bools(out, 10, v, 3), 11); /* too small: nothing written */
    n = bloomd_format_client_error(out, sizeof(out), "Bad\r\nthing\x01");
    ck_assert(n == 26 && memcmp(out, "Client Error: Bad  thing?\n", 26) == 0);
    n = bloomd_format_list_line(out, sizeof(out), "foobar", 6, 1e-4, 275392, 100000, 3);
    ck_assert(n == 32 && memcmp(out, "foobar 0.000100 275392 100000 3\n", 32) == 0);
    struct bloomd_info in = {.capacity = 100000,
                             .check_hits = 2,
                             .check_misses = 4,
                             .in_memory = 1,
                             .probability = 1e-4,
                             .set_hits = 3,
                             .set_misses = 1,
                             .size = 3,
                             .storage = 275392};
    const char *want = "START\ncapacity 100000\nchecks 6\ncheck_hits 2\ncheck_misses 4\n"
                       "in_memory 1\npage_ins 0\npage_outs 0\nprobability 0.000100\nsets 4\n"
                       "set_hits 3\nset_misses 1\nsize 3\nstorage 275392\nEND\n";
    n = bloomd_format_info(out, sizeof(out), &in);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert(memcmp(out, want, n) == 0);
    ck_assert_uint_eq(bloomd_format_info(out, 10, &in), strlen(want));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bloomd_proto");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_verbs);
    tcase_add_test(tc, test_single_key);
    tcase_add_test(tc, test_multi_keys);
    tcase_add_test(tc, test_filter_verbs);
    tcase_add_test(tc, test_create_name);
    tcase_add_test(tc, test_create_options);
    tcase_add_test(tc, test_framing);
    tcase_add_test(tc, test_replies);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
