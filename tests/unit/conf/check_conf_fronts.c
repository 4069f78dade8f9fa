/* Unit tests for the mail fronts' config blocks (dnsbl, tcp_table, policy):
 * values, defaults, the checks made when a block closes and once the file is
 * read, their messages, and the reload rules. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fname.h"
#include "conf/conf.h"

#define P "/etc/bloomgate/bloomgate.conf"

static char err[1024];

static struct conf *parse(const char *text)
{
    memset(err, 0, sizeof(err));
    return conf_parse(text, strlen(text), P, err, sizeof(err));
}

#define OK(text)                                                                                   \
    ({                                                                                             \
        struct conf *c_ = parse(text);                                                             \
        ck_assert_msg(c_ != NULL, "unexpected error: %s", err);                                    \
        c_;                                                                                        \
    })

#define FAILS(text, want)                                                                          \
    do {                                                                                           \
        struct conf *c_ = parse(text);                                                             \
        ck_assert_msg(c_ == NULL, "parsed but should not: %s", text);                              \
        ck_assert_str_eq(err, want);                                                               \
    } while (0)

/* Two filters every test may name: an exact one (ips) and a host one (doms). */
#define FILTERS                                                                                    \
    "filter ips {\n capacity 10\n keys exact\n}\n"                                                 \
    "filter doms {\n capacity 10\n keys host\n}\n"                                                 \
    "filter plain {\n capacity 10\n}\n"

START_TEST(test_dnsbl)
{
    struct conf *c = OK("dnsbl {\n"
                        "  listen 127.0.0.1:5353\n"
                        "  zone BL.Example.ORG.\n"
                        "  filter ips\n"
                        "}\n"
                        "dnsbl {\n"
                        "  listen 127.0.0.1:5354\n"
                        "  zone dbl.example.org\n"
                        "  filter doms\n"
                        "  answer 127.0.1.2\n"
                        "  txt \"listed: $ see https://example.org/q?$\"\n"
                        "  ttl 0\n"
                        "}\n" FILTERS);
    ck_assert_uint_eq(c->n_dnsbl, 2);
    const struct conf_dnsbl *a = &c->dnsbl[0], *b = &c->dnsbl[1];
    ck_assert_uint_eq(a->fr.line, 1);
    ck_assert_str_eq(a->fr.listen.text, "127.0.0.1:5353");
    ck_assert_str_eq(a->zone, "bl.example.org"); /* lower case, no trailing dot */
    ck_assert_str_eq(a->filter, "ips");
    ck_assert_str_eq(a->answer, "127.0.0.2");
    ck_assert_uint_eq(a->answer_ip[0], 127);
    ck_assert_uint_eq(a->answer_ip[3], 2);
    ck_assert_ptr_null(a->txt);
    ck_assert_uint_eq(a->ttl, 300);
    ck_assert(!a->domain);
    ck_assert(b->domain);
    ck_assert_uint_eq(b->answer_ip[2], 1);
    ck_assert_str_eq(b->txt, "listed: $ see https://example.org/q?$");
    ck_assert_uint_eq(b->ttl, 0);
    /* The filter directive inside a front block does not open a filter block. */
    ck_assert_uint_eq(c->n_filters, 3);
    conf_free(c);
}
END_TEST

START_TEST(test_dnsbl_errors)
{
    FAILS("dnsbl {\n zone z\n filter ips\n}\n" FILTERS, P ":1: dnsbl block needs a listen address");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n filter ips\n}\n", P ":1: dnsbl block needs a zone");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n}\n", P ":1: dnsbl block needs a filter");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone a..b\n filter ips\n}\n",
          P ":3: zone: \"a..b\" has an empty label");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone \"a b\"\n filter ips\n}\n",
          P ":3: zone: \"a b\" has a character a zone name cannot hold (0x20)");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone "
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.b\n filter ips\n}\n",
          P
          ":3: zone: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.b\" has a "
          "label over 63 bytes in a label");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n filter ips\n answer 10.0.0.2\n}\n",
          P ":5: answer: \"10.0.0.2\" is not an IPv4 address in 127.0.0.0/8 (RFC 5782)");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n filter ips\n answer 127.0.0.256\n}\n",
          P ":5: answer: \"127.0.0.256\" is not an IPv4 address in 127.0.0.0/8 (RFC 5782)");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n filter ips\n ttl 604801\n}\n",
          P ":5: ttl: 604801 is out of range (0 to 604800)");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n filter nope\n}\n",
          P ":4: dnsbl: filter \"nope\" is not defined");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n filter plain\n}\n" FILTERS,
          P ":4: dnsbl: filter \"plain\" (line 14) must say `keys exact` (an IP zone) or `keys "
            "host` (a domain zone)");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n zone y\n}\n",
          P ":4: zone: already set on line 3");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n listen 127.0.0.1:2\n}\n",
          P ":3: listen: already set on line 2");
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n filter ips\n", P ":1: dnsbl block is not closed "
                                                                    "(missing \"}\")");
    FAILS("dnsbl {\n dnsbl {\n",
          P ":2: dnsbl blocks cannot be nested (\"dnsbl\" from line 1 is open)");
    FAILS("dnsbl {\n filter ips {\n", P ":2: filter: too many values (quote a value that contains "
                                        "spaces)");
    FAILS("filter a {\n dnsbl {\n",
          P ":2: dnsbl blocks cannot be nested (\"a\" from line 1 is open)");
    FAILS("dnsbl\n", P ":1: dnsbl: expected \"{\" after the word, on the same line");
    FAILS("dnsbl { x\n", P ":1: dnsbl: unexpected text after \"{\"");
    FAILS("zone z\n", P ":1: zone: only allowed inside a dnsbl block");
    FAILS("dnsbl {\n threads 2\n}\n", P ":2: threads: not allowed inside a dnsbl block");
    FAILS("dnsbl {\n capacity 2\n}\n", P ":2: capacity: only allowed inside a filter block");
    FAILS("dnsbl {\n found x\n}\n", P ":2: found: only allowed inside a tcp_table block");
}
END_TEST

START_TEST(test_listen_clashes)
{
    FAILS("listen 127.0.0.1:7000\ndnsbl {\n listen 127.0.0.1:7000\n}\n",
          P ":3: listen: 127.0.0.1:7000 is already a listener (listen on line 1)");
    FAILS("tcp_table {\n listen 127.0.0.1:7000\n filter ips\n}\npolicy {\n listen "
          "127.0.0.1:7000\n}\n",
          P ":6: listen: 127.0.0.1:7000 is already a listener (tcp_table on line 2)");
    FAILS("tcp_table {\n listen 127.0.0.1:7878\n filter ips\n}\n" FILTERS,
          P ":2: listen: 127.0.0.1:7878 is also the default of listen (set listen explicitly)");
    FAILS("dnsbl {\n listen 127.0.0.1:5353\n zone z\n filter ips\n}\nhttp_listen 127.0.0.1:5353\n",
          P ":6: http_listen: 127.0.0.1:5353 is already a listener (dnsbl on line 2)");
    FAILS("dnsbl {\n listen nowhere\n}\n",
          P ":2: listen: \"nowhere\" has no port (expected HOST:PORT, [IPV6]:PORT or *:PORT)");
    /* Port 0: each bind gets its own. */
    struct conf *c = OK("listen 127.0.0.1:0\ntcp_table {\n listen 127.0.0.1:0\n filter ips\n}\n"
                        "policy {\n listen 127.0.0.1:0\n check client_address ips\n}\n" FILTERS);
    conf_free(c);
}
END_TEST

START_TEST(test_tcp_table)
{
    struct conf *c = OK("tcp_table {\n listen 127.0.0.1:10023\n filter plain\n}\n"
                        "tcp_table {\n listen [::1]:10023\n filter doms\n found \"REJECT spam "
                        "source\"\n}\n" FILTERS);
    ck_assert_uint_eq(c->n_tcp_table, 2);
    ck_assert_str_eq(c->tcp_table[0].filter, "plain");
    ck_assert_str_eq(c->tcp_table[0].found, "REJECT listed");
    ck_assert_str_eq(c->tcp_table[1].found, "REJECT spam source");
    ck_assert_uint_eq(c->tcp_table[1].filter_line, 7);
    conf_free(c);
    FAILS("tcp_table {\n listen 127.0.0.1:1\n}\n", P ":1: tcp_table block needs a filter");
    FAILS("tcp_table {\n listen 127.0.0.1:1\n filter x\n}\n",
          P ":3: tcp_table: filter \"x\" is not defined");
    FAILS("tcp_table {\n listen 127.0.0.1:1\n filter \"a b\"\n}\n",
          P ":3: filter: filter name \"a b\" is invalid: use " FNAME_RULE);
}
END_TEST

/* A front names a filter of the wider set as the filter block does: quoted. */
START_TEST(test_wide_names)
{
    struct conf *c = OK("filter \"ips:{v4}\" {\n capacity 10\n keys exact\n}\n"
                        "filter \"doms/#1\" {\n capacity 10\n keys host\n}\n"
                        "dnsbl {\n listen 127.0.0.1:5353\n zone z\n filter \"ips:{v4}\"\n}\n"
                        "tcp_table {\n listen 127.0.0.1:10023\n filter \"doms/#1\" # a comment\n}\n"
                        "policy {\n listen 127.0.0.1:10040\n check sender \"doms/#1\"\n"
                        " check client_address \"ips:{v4}\"\n}\n");
    ck_assert_str_eq(c->dnsbl[0].filter, "ips:{v4}");
    ck_assert_str_eq(c->tcp_table[0].filter, "doms/#1");
    ck_assert_str_eq(c->policy[0].checks[0].filter, "doms/#1");
    ck_assert_str_eq(c->policy[0].checks[1].filter, "ips:{v4}");
    conf_free(c);
    FAILS("dnsbl {\n listen 127.0.0.1:1\n zone z\n filter ips:{v4}\n}\n",
          P ":4: filter: filter name ips:{v4} must be quoted, \"ips:{v4}\" (only a name of A-Z "
            "a-z 0-9 _ . - may go bare)");
    FAILS("tcp_table {\n listen 127.0.0.1:1\n filter \"caf\xc3\xa9\"\n}\n",
          P ":3: filter: filter name \"caf\xc3\xa9\" is invalid: use " FNAME_RULE);
}
END_TEST

START_TEST(test_policy)
{
    struct conf *c = OK("policy {\n listen 127.0.0.1:10040\n"
                        " check client_address ips\n"
                        " check client_name doms\n"
                        " check sender doms\n"
                        " check recipient ips\n"
                        "}\n" FILTERS);
    ck_assert_uint_eq(c->n_policy, 1);
    const struct conf_policy *p = &c->policy[0];
    ck_assert_uint_eq(p->n_checks, 4);
    ck_assert_str_eq(p->checks[0].attr, "client_address");
    ck_assert_str_eq(p->checks[0].filter, "ips");
    ck_assert_uint_eq(p->checks[0].line, 3);
    ck_assert_str_eq(p->checks[3].attr, "recipient");
    ck_assert_str_eq(p->action, "REJECT listed by $filter");
    ck_assert_str_eq(p->def, "DUNNO");
    conf_free(c);
    c = OK("policy {\n listen 127.0.0.1:1\n check helo_name doms\n action \"554 5.7.1 $match\"\n"
           " default OK\n}\n" FILTERS);
    ck_assert_str_eq(c->policy[0].action, "554 5.7.1 $match");
    ck_assert_str_eq(c->policy[0].def, "OK");
    conf_free(c);

    FAILS("policy {\n listen 127.0.0.1:1\n}\n",
          P ":1: policy block needs at least one check (check ATTRIBUTE FILTER)");
    FAILS("policy {\n listen 127.0.0.1:1\n check client_address\n}\n",
          P ":3: check: expected two values, ATTRIBUTE FILTER");
    FAILS("policy {\n listen 127.0.0.1:1\n check client_address ips x\n}\n",
          P ":3: check: expected two values, ATTRIBUTE FILTER");
    FAILS("policy {\n listen 127.0.0.1:1\n check size ips\n}\n",
          P ":3: check: unknown attribute \"size\" (client_address, client_name, "
            "reverse_client_name, helo_name, sender, recipient)");
    FAILS("policy {\n listen 127.0.0.1:1\n check sender \"a b\"\n}\n",
          P ":3: check: filter name \"a b\" is invalid: use " FNAME_RULE);
    FAILS("policy {\n listen 127.0.0.1:1\n check sender a/b\n}\n",
          P ":3: check: filter name a/b must be quoted, \"a/b\" (only a name of A-Z a-z 0-9 _ . - "
            "may go bare)");
    FAILS("policy {\n listen 127.0.0.1:1\n check sender none\n}\n",
          P ":3: check: filter \"none\" is not defined");
    FAILS("policy {\n listen 127.0.0.1:1\n check client_address doms\n}\n" FILTERS,
          P ":3: check: client_address needs a filter with `keys exact`; \"doms\" (line 9) has "
            "host");
    FAILS("policy {\n listen 127.0.0.1:1\n check client_address plain\n}\n" FILTERS,
          P ":3: check: client_address needs a filter with `keys exact`; \"plain\" (line 13) "
            "has (as the file says)");
    FAILS("policy {\n listen 127.0.0.1:1\n check sender u\n}\nfilter u {\n capacity 1\n keys "
          "url\n}\n",
          P ":3: check: sender needs a filter with `keys host` or `keys exact`; \"u\" (line 5) "
            "has url");
    FAILS("policy {\n listen 127.0.0.1:1\n check sender ips\n action x\n action y\n}\n",
          P ":5: action: already set on line 4");
    FAILS("check sender ips\n", P ":1: check: only allowed inside a policy block");
}
END_TEST

static char warned[1024];
static void collect(void *ctx, const char *msg)
{
    (void)ctx;
    size_t n = strlen(warned);
    snprintf(warned + n, sizeof(warned) - n, "%s|", msg);
}

/* A block's listen address is restart-only; the rest of it reloads. */
START_TEST(test_reload)
{
    struct conf *x = OK("dnsbl {\n listen 127.0.0.1:5353\n zone a.org\n filter ips\n}\n"
                        "tcp_table {\n listen 127.0.0.1:7000\n filter ips\n}\n" FILTERS);
    struct conf *y =
        OK("dnsbl {\n listen 127.0.0.1:5353\n zone b.org\n filter doms\n ttl 60\n}\n"
           "tcp_table {\n listen 127.0.0.1:7000\n filter doms\n found OK\n}\n" FILTERS);
    char e[256];
    ck_assert_int_eq(conf_check_reload(x, y, e, sizeof(e)), 0);
    warned[0] = '\0';
    ck_assert_int_eq(conf_keep_running(y, x, collect, NULL), 0);
    ck_assert_str_eq(warned, "");
    ck_assert_str_eq(y->dnsbl[0].zone, "b.org"); /* reloaded */
    ck_assert_str_eq(y->tcp_table[0].found, "OK");
    conf_free(y);

    y = OK("dnsbl {\n listen 127.0.0.1:5354\n zone b.org\n filter doms\n}\n"
           "tcp_table {\n listen 127.0.0.1:7000\n filter doms\n found OK\n}\n"
           "policy {\n listen 127.0.0.1:7001\n check sender doms\n}\n" FILTERS);
    ck_assert_int_eq(conf_check_reload(x, y, e, sizeof(e)), -1);
    ck_assert_str_eq(e, P ": the listen addresses of the dnsbl blocks changed; that takes effect "
                          "only on a restart");
    warned[0] = '\0';
    ck_assert_int_eq(conf_keep_running(y, x, collect, NULL), 0);
    ck_assert_str_eq(warned, "dnsbl: a change of the blocks' listen addresses needs a restart; "
                             "the running dnsbl blocks stay|"
                             "policy: a change of the blocks' listen addresses needs a restart; "
                             "the running policy blocks stay|");
    ck_assert_uint_eq(y->n_dnsbl, 1);
    ck_assert_str_eq(y->dnsbl[0].zone, "a.org"); /* kept, with its address */
    ck_assert_str_eq(y->dnsbl[0].fr.listen.text, "127.0.0.1:5353");
    ck_assert_str_eq(y->tcp_table[0].found, "OK"); /* same address: the new block */
    ck_assert_uint_eq(y->n_policy, 0);
    ck_assert_int_eq(conf_check_reload(x, y, e, sizeof(e)), 0);
    conf_free(x);
    conf_free(y);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conf_fronts");
    TCase *tc = tcase_create("blocks");
    tcase_add_test(tc, test_dnsbl);
    tcase_add_test(tc, test_dnsbl_errors);
    tcase_add_test(tc, test_listen_clashes);
    tcase_add_test(tc, test_tcp_table);
    tcase_add_test(tc, test_wide_names);
    tcase_add_test(tc, test_policy);
    tcase_add_test(tc, test_reload);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
