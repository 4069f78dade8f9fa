/* check_verbs: the fronts' verb tables (front/line/proto_verbs.h and
 * line.c, front/resp/resp.c, front/http/http_api.c, front/bloomd/bloomd.c)
 * against the command table (core/cmd.c), and the filter-name rule (base/fname.h) against every
 * layer that states or checks it. A row that names no handler, a name that
 * does not parse back to its row, a core command no front serves and no
 * front says it leaves out, a mutating command a front lets through without
 * its auth, or a constant or validator that drifts from the rule fails here. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fname.h"
#include "core/cmd.h"
#include "front/bloomd/bloomd.h"
#include "front/http/authz.h"
#include "front/http/http_int.h"
#include "front/line/line.h"
#include "front/line/proto.h"
#include "front/resp/resp.h"
#include "conf/conf.h"
#include "store/registry.h"

/* The core commands a front does not serve, and why: anything else in
 * enum cmd_id must have a row in every front. A new command in core/cmd.c
 * fails here until each front has its row or is listed. */
static bool left_out(const char *front, enum cmd_id id)
{
    static const struct {
        const char *front;
        enum cmd_id id; /* why */
    } out[] = {
        {"line", CMD_HEALTH},  /* INFO says it; HEALTH is HTTP's /healthz */
        {"resp", CMD_FILTERS}, /* Redis has no such verb (INFO lists the filters) */
        {"resp", CMD_RELOAD},  /* the line protocol's and HTTP's */
        {"resp", CMD_HEALTH},  /* HTTP's /healthz */
        {"resp", CMD_MATCH},   /* RedisBloom has no such verb, */
        {"resp", CMD_ALLOW},   /* nor an allow-list, */
        {"resp", CMD_UNALLOW}, /* */
        {"resp", CMD_REMOVE},  /* nor a removal */
        {"http", CMD_PING},    /* /healthz is HTTP's liveness */
        {"resp", CMD_CLEAR},   /* RedisBloom has no clear: DEL and BF.RESERVE again */
        {"resp", CMD_FLUSH},   /* nor a flush: the journal's fsync policy decides */
        {"http", CMD_FLUSH},   /* HTTP neither: bloomd's flush is the line protocol's FLUSH */
        {"resp", CMD_SCAN},    /* Redis has no text scan: the line protocol's and HTTP's */
    };
    for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++)
        if (out[i].id == id && strcmp(out[i].front, front) == 0)
            return true;
    return false;
}

static size_t line_rows_for(enum cmd_id id)
{
    size_t n = 0;
    for (size_t k = 0; k < PROTO_CMD_COUNT_; k++)
        n += line_verbs[k].id == id;
    return n;
}

static size_t resp_rows_for(enum cmd_id id)
{
    size_t n = 0;
    for (size_t k = 0; k < resp_n_verbs; k++)
        n += resp_verbs[k].id == id;
    return n;
}

static size_t http_rows_for(enum cmd_id id)
{
    size_t n = 0;
    for (size_t k = 0; k < http_n_routes; k++)
        n += http_routes[k].id == id;
    for (size_t k = 0; k < http_n_filter_verbs; k++)
        n += http_filter_verbs[k].id == id;
    return n;
}

START_TEST(test_every_command_has_its_rows)
{
    for (int id = 0; id < CMD_COUNT_; id++) {
        ck_assert_msg(cmd_table[id].name != NULL, "core row %d has no name", id);
        size_t line = line_rows_for((enum cmd_id)id), resp = resp_rows_for((enum cmd_id)id),
               http = http_rows_for((enum cmd_id)id);
        ck_assert_msg((line > 0) != left_out("line", (enum cmd_id)id),
                      "%s: %zu line rows (left out: %d)", cmd_table[id].name, line,
                      left_out("line", (enum cmd_id)id));
        ck_assert_msg((resp > 0) != left_out("resp", (enum cmd_id)id),
                      "%s: %zu RESP rows (left out: %d)", cmd_table[id].name, resp,
                      left_out("resp", (enum cmd_id)id));
        ck_assert_msg((http > 0) != left_out("http", (enum cmd_id)id),
                      "%s: %zu HTTP rows (left out: %d)", cmd_table[id].name, http,
                      left_out("http", (enum cmd_id)id));
    }
}
END_TEST

/* Each line verb: a handler, a core row (or the front's own), its name
 * parsed back to it, an item reply's words within PROTO_BOOLS_CAP. */
START_TEST(test_line_rows_resolve)
{
    struct proto_limits lim = {1024, 256, 16};
    struct proto_token items[16];
    for (int k = 0; k < PROTO_CMD_COUNT_; k++) {
        const struct line_verb *v = &line_verbs[k];
        const char *name = proto_cmd_name((enum proto_cmd)k);
        ck_assert_msg(v->run != NULL, "%s has no handler", name);
        ck_assert_msg(v->id < CMD_COUNT_ || v->id == LINE_OWN, "%s: id %d", name, (int)v->id);
        /* The word, with as many arguments as the verb takes at least. */
        char line[128];
        size_t n = (size_t)snprintf(line, sizeof(line), "%s", name);
        struct proto_request req;
        size_t used = 0;
        bool items_verb = false;
        for (int a = 0;; a++) {
            ck_assert_msg(a < 4, "%s: no argument count parses", name);
            line[n] = '\n';
            enum proto_status st = proto_next(line, n + 1, &lim, &req, items, &used, NULL);
            if (st == PROTO_REQUEST) {
                items_verb = req.n_items > 0;
                break;
            }
            ck_assert_msg(st == PROTO_ERROR && req.err == PROTO_ERR_WRONG_ARITY, "%s: %s", name,
                          req.errmsg);
            n += (size_t)snprintf(line + n, sizeof(line) - n, a == 0 ? " f" : " x");
        }
        ck_assert_msg(req.cmd == (enum proto_cmd)k, "%s parsed as %s", name,
                      proto_cmd_name(req.cmd));
        if (v->id == LINE_OWN)
            continue;
        /* An item verb is an item command of the core table, and back. */
        ck_assert_msg(items_verb == cmd_table[v->id].items, "%s: items %d, core %s items %d", name,
                      items_verb, cmd_table[v->id].name, cmd_table[v->id].items);
        if (items_verb && v->id != CMD_MATCH) {
            ck_assert_msg(v->yes && v->no, "%s has no reply words", name);
            ck_assert_msg(strlen(v->yes) < 8 && strlen(v->no) < 8,
                          "%s: PROTO_BOOLS_CAP assumes words of at most 7 bytes", name);
        }
    }
}
END_TEST

/* Each bloomd verb: a handler, a core row (or the front's own), its name
 * (and its alias) parsed back to it with a filter and a key; an item verb
 * is an item command of the core table, and back. */
START_TEST(test_bloomd_rows_resolve)
{
    struct bloomd_limits lim = {1024, 16};
    struct bloomd_token keys[16];
    for (int k = 0; k < BLOOMD_VERB_COUNT_; k++) {
        const struct bloomd_verb_row *v = &bloomd_verbs[k];
        const char *name = bloomd_verb_name((enum bloomd_verb)k);
        ck_assert_msg(v->run != NULL, "%s has no handler", name);
        ck_assert_msg(v->id < CMD_COUNT_ || v->id == BLOOMD_OWN, "%s: id %d", name, (int)v->id);
        char line[128];
        int n = snprintf(line, sizeof(line), "%s f capacity=20000\n", name);
        if (k == BLOOMD_CHECK || k == BLOOMD_MULTI || k == BLOOMD_SET || k == BLOOMD_BULK)
            n = snprintf(line, sizeof(line), "%c f x\n", name[0]); /* the alias */
        else if (k != BLOOMD_CREATE)
            n = snprintf(line, sizeof(line), "%s f\n", name);
        struct bloomd_request req;
        size_t used = 0;
        ck_assert_msg(bloomd_next(line, (size_t)n, &lim, &req, keys, &used, NULL) == BLOOMD_REQUEST,
                      "%s: %s", name, req.errmsg);
        ck_assert_msg(req.verb == (enum bloomd_verb)k, "%s parsed as %s", name,
                      bloomd_verb_name(req.verb));
        if (v->id == BLOOMD_OWN)
            continue;
        ck_assert_msg((req.n_keys > 0) == cmd_table[v->id].items, "%s: keys %zu, core %s", name,
                      req.n_keys, cmd_table[v->id].name);
    }
}
END_TEST

/* Each RESP verb: a handler, a unique upper-case name, COMMAND's flags as
 * the core row says (write exactly when mutating), the item verbs' arity
 * and reply form. */
START_TEST(test_resp_rows_resolve)
{
    ck_assert_uint_gt(resp_n_verbs, 0);
    for (size_t k = 0; k < resp_n_verbs; k++) {
        const struct resp_verb *v = &resp_verbs[k];
        ck_assert_msg(v->fn != NULL, "%s has no handler", v->name);
        ck_assert_uint_eq(v->len, strlen(v->name));
        for (size_t i = 0; i < v->len; i++)
            ck_assert_msg(!(v->name[i] >= 'a' && v->name[i] <= 'z'), "%s: upper case", v->name);
        for (size_t j = 0; j < k; j++)
            ck_assert_msg(strcmp(resp_verbs[j].name, v->name) != 0, "%s twice", v->name);
        ck_assert_msg(v->id < CMD_COUNT_ || v->id == RESP_OWN, "%s: id %d", v->name, (int)v->id);
        bool mutating = v->id != RESP_OWN && cmd_table[v->id].mutating;
        ck_assert_msg(mutating == (strcmp(v->flags, "write") == 0), "%s: flags %s, mutating %d",
                      v->name, v->flags, mutating);
        if (v->id != RESP_OWN && cmd_table[v->id].items) {
            ck_assert_int_eq(v->first_key, 1);
            ck_assert_msg(v->multi ? v->arity <= -3 : v->arity == 3, "%s: arity %d", v->name,
                          v->arity);
        }
    }
}
END_TEST

/* Each HTTP row: a handler; a prefix ends in '/'; a filter verb that
 * mutates takes one of POST, PUT, DELETE alone (its auth comes before the
 * lookup), one that does not takes GET; no sub-path and method twice. */
START_TEST(test_http_rows_resolve)
{
    for (size_t k = 0; k < http_n_routes; k++) {
        const struct http_route *rt = &http_routes[k];
        ck_assert_msg(rt->fn != NULL, "%s has no handler", rt->path);
        ck_assert_uint_eq(rt->len, strlen(rt->path));
        ck_assert_msg(!rt->prefix || rt->path[rt->len - 1] == '/', "%s", rt->path);
        ck_assert_msg(rt->id < CMD_COUNT_ || rt->id == HTTP_OWN, "%s", rt->path);
        if (rt->id < CMD_COUNT_ && cmd_table[rt->id].mutating)
            ck_assert_msg(rt->methods == HTTP_M_POST, "%s mutates: POST only", rt->path);
    }
    for (size_t k = 0; k < http_n_filter_verbs; k++) {
        const struct http_filter_verb *v = &http_filter_verbs[k];
        ck_assert_msg(v->fn != NULL, "/%s has no handler", v->sub);
        ck_assert_msg(v->id < CMD_COUNT_, "/%s", v->sub);
        if (cmd_table[v->id].mutating)
            ck_assert_msg(v->methods == HTTP_M_POST || v->methods == HTTP_M_PUT ||
                              v->methods == HTTP_M_DELETE,
                          "/%s mutates: POST, PUT or DELETE alone", v->sub);
        else if (v->id != CMD_SCAN) /* a scan's text is a body: POST */
            ck_assert_msg(v->methods & HTTP_M_GET, "/%s reads: GET", v->sub);
        for (size_t j = 0; j < k; j++)
            ck_assert_msg(strcmp(http_filter_verbs[j].sub, v->sub) != 0 ||
                              !(http_filter_verbs[j].methods & v->methods),
                          "/%s twice", v->sub);
    }
}
END_TEST

/* ---- the filter-name rule ---- */

START_TEST(test_name_constants_agree)
{
    ck_assert_int_eq(CONF_NAME_MAX, FNAME_MAX);
    ck_assert_int_eq(REGISTRY_NAME_MAX, FNAME_MAX);
    ck_assert_uint_eq(sizeof(((struct fentry *)0)->name), FNAME_MAX + 1);
    char lead[32];
    snprintf(lead, sizeof(lead), "1 to %d ", FNAME_MAX);
    ck_assert_msg(strncmp(FNAME_RULE, lead, strlen(lead)) == 0, "%s", FNAME_RULE);
    /* Pasted into printf formats. */
    ck_assert_ptr_null(strchr(FNAME_RULE, '%'));
    /* The longest name, escaped as a file name, with ".journal". */
    ck_assert_uint_ge(FNAME_FILE_MAX, 3 * FNAME_MAX + 1);
}
END_TEST

/* What the rule promises the places that write a name as it is: the JSON
 * bodies (no '"', '\\' or control byte), the Prometheus label values (no
 * '"', '\\' or LF), HTTP header values (X-Bloomgate-Filter: visible ASCII),
 * the line protocol's words and FILTERS list and RELOAD's reply (no space or
 * tab), Squid's quoted message=, the config's quoted strings. And what it
 * takes: Redis's key separators and bloomd's names. */
START_TEST(test_rule_is_safe_to_write)
{
    for (int b = 0; b < 256; b++) {
        if (!fname_byte[b])
            continue;
        ck_assert_msg(b > 0x20 && b < 0x7f, "byte 0x%02x", b);
        ck_assert_msg(b != '"' && b != '\\' && b != '\'' && b != '`', "byte '%c'", b);
    }
    int n = 0;
    for (int b = 0; b < 256; b++)
        n += fname_byte[b];
    ck_assert_int_eq(n, 0x7e - 0x20 - 4); /* printable ASCII but space and the four */
    static const char redis[] =
        "seen:{sku123}:2026-11-27|a/b@c#d.e_f-g=h~i+j!k$l%m&n*o?p^q;r,s<t>u[v](w)";
    ck_assert(fname_valid(redis, sizeof(redis) - 1));
    for (int b = 0; b < 128; b++) /* bloomd: [a-zA-Z0-9._-]{1,200} */
        if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
            b == '.' || b == '_' || b == '-')
            ck_assert(fname_byte[b]);
}
END_TEST

/* The name as a file name: '/' and '%' escaped, the rest kept; two names
 * never share one. */
START_TEST(test_file_name)
{
    char out[FNAME_FILE_MAX];
    ck_assert_uint_eq(fname_file("a.b-c_D9", 8, out), 8);
    ck_assert_str_eq(out, "a.b-c_D9");
    ck_assert_uint_eq(fname_file("../a/%2F", 8, out), 14);
    ck_assert_str_eq(out, "..%2Fa%2F%252F");
    char name[FNAME_MAX];
    memset(name, '/', sizeof(name));
    ck_assert_uint_eq(fname_file(name, sizeof(name), out), FNAME_FILE_MAX - 1);
    ck_assert_ptr_null(strchr(out, '/'));
    char a[FNAME_FILE_MAX];
    fname_file("a/b", 3, a);
    fname_file("a%2Fb", 5, out);
    ck_assert_str_ne(a, out);
}
END_TEST

/* What authz_parse_path says of "/v1/authz/NAME": 1 accepted, 0 refused. */
static int authz_accepts(const char *p, size_t len, char *err, size_t errlen)
{
    struct authz_route rt;
    err[0] = '\0';
    if (authz_parse_path(p, len, &rt, err, errlen) != 0)
        return 0;
    return rt.n == 1 && rt.filter[0].len == len;
}

/* Whether authz_parse_path takes "/v1/authz/P" as the one filter name want. */
static int authz_decodes(const char *p, size_t len, const char *want, char *err, size_t errlen)
{
    struct authz_route rt;
    err[0] = '\0';
    if (authz_parse_path(p, len, &rt, err, errlen) != 0)
        return 0;
    return rt.n == 1 && rt.filter[0].len == strlen(want) &&
           memcmp(rt.filter[0].p, want, strlen(want)) == 0;
}

/* Every validator gives the rule's answer: every byte alone and inside a
 * name, and every length to one past the limit. */
START_TEST(test_validators_agree)
{
    char err[256];
    char name[FNAME_MAX + 2];
    for (int b = 0; b < 256; b++) {
        for (int at = 0; at < 2; at++) {
            char s[3] = {'a', 'b', 0};
            s[at] = (char)b;
            size_t len = 2;
            bool want = fname_valid(s, len);
            ck_assert_int_eq(conf_is_valid_name(s, len), want);
            ck_assert_int_eq(proto_valid_filter_name(s, len), want);
            if (b != '/' && b != ',' && b != ';' && b != '%') /* the authz path's own */
                ck_assert_msg(authz_accepts(s, len, err, sizeof(err)) == want, "byte %d: %s", b,
                              err);
            /* Any byte, percent-encoded in the authz path. */
            char e[8];
            snprintf(e, sizeof(e), at ? "a%%%02X" : "%%%02Xb", b);
            ck_assert_msg(authz_decodes(e, 4, s, err, sizeof(err)) == want, "byte %d escaped: %s",
                          b, err);
        }
    }
    for (size_t len = 0; len <= FNAME_MAX + 1; len++) {
        memset(name, 'x', len);
        bool want = len >= 1 && len <= FNAME_MAX;
        ck_assert_int_eq(fname_valid(name, len), want);
        ck_assert_int_eq(conf_is_valid_name(name, len), want);
        ck_assert_int_eq(proto_valid_filter_name(name, len), want);
        if (len > 0)
            ck_assert_int_eq(authz_accepts(name, len, err, sizeof(err)), want);
    }
}
END_TEST

/* The refusals say the rule in its one wording. */
START_TEST(test_refusals_state_the_rule)
{
    struct proto_limits lim = {1024, 256, 16};
    struct proto_token items[16];
    struct proto_request req;
    size_t used;
    static const char line[] = "CHECK bad\\name a\n";
    ck_assert_int_eq(proto_next(line, sizeof(line) - 1, &lim, &req, items, &used, NULL),
                     PROTO_ERROR);
    ck_assert_ptr_nonnull(strstr(req.errmsg, "use " FNAME_RULE));
    char err[256];
    ck_assert_int_eq(authz_accepts("b\\d", 3, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "use " FNAME_RULE) != NULL, "%s", err);
    ck_assert_int_eq(authz_accepts("b%27d", 5, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "use " FNAME_RULE) != NULL, "%s", err);
}
END_TEST

static Suite *verbs_suite(void)
{
    Suite *s = suite_create("verbs");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_every_command_has_its_rows);
    tcase_add_test(tc, test_line_rows_resolve);
    tcase_add_test(tc, test_resp_rows_resolve);
    tcase_add_test(tc, test_bloomd_rows_resolve);
    tcase_add_test(tc, test_http_rows_resolve);
    tcase_add_test(tc, test_name_constants_agree);
    tcase_add_test(tc, test_validators_agree);
    tcase_add_test(tc, test_rule_is_safe_to_write);
    tcase_add_test(tc, test_file_name);
    tcase_add_test(tc, test_refusals_state_the_rule);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(verbs_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
