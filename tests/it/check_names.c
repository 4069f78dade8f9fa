/* check_names: filter names of the wider rule (base/fname.h) through every
 * front of a real bloomgated: the config (quoted names, the default journal
 * of a name with '/' and '%'), the line protocol, the HTTP API (names raw and
 * percent-encoded in the path, a bad escape, a name outside the rule), the
 * authorization endpoint, /metrics (the exposition stays parseable with ':'
 * '{' '}' in label values), RESP, and a restart (the journals are found
 * again). The names at the edges: FNAME_MAX bytes served, one more refused
 * with the rule; space, quotes, backslash, control and non-ASCII bytes
 * refused. */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fname.h"
#include "lib/daemon_harness.h"
#include "lib/http_client.h"

#define T_MS 20000 /* generous: sanitizer builds are slow */

#define SEEN "seen:{sku123}:2026-11-27"
#define SEEN_PCT "seen%3A%7Bsku123%7D%3A2026-11-27"
#define SLASHED "bf/block%list" /* '/' and '%': the default journal escapes both */
#define SLASHED_PCT "bf%2Fblock%25list"
#define HOSTS "hosts:{eu}"

/* A name of FNAME_MAX bytes with the wider set in it, and one a byte longer. */
static char longest[FNAME_MAX + 1], too_long[FNAME_MAX + 2];

static void make_names(void)
{
    static const char mix[] = "a:{b}|c@d#e=f~g+h!i$j&k*l?m^n;o,p<q>r[s](t)";
    for (size_t i = 0; i < FNAME_MAX; i++)
        longest[i] = mix[i % (sizeof(mix) - 1)];
    longest[FNAME_MAX] = '\0';
    memcpy(too_long, longest, FNAME_MAX);
    too_long[FNAME_MAX] = 'z';
    too_long[FNAME_MAX + 1] = '\0';
}

static struct dh_daemon *start(void)
{
    make_names();
    struct dh_daemon *d = dh_new();
    char conf[2048];
    snprintf(conf, sizeof(conf),
             "http_listen 127.0.0.1:0\n"
             "resp_listen 127.0.0.1:0\n"
             "threads 2\n"
             "filter \"%s\" {\n  capacity 1000\n  fsync always\n}\n"
             "filter \"%s\" {\n  capacity 1000\n  fsync always\n}\n"
             "filter \"%s\" {\n  capacity 1000\n  keys host\n}\n"
             "filter \"%s\" {\n  capacity 100\n}\n"
             "filter plain {\n  capacity 100\n}\n",
             SEEN, SLASHED, HOSTS, longest);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

/* ---- the line protocol ---- */

/* verb name item answers want. */
static void line_cmd3(struct dh_conn *c, const char *verb, const char *name, const char *item,
                      const char *want)
{
    char req[512];
    snprintf(req, sizeof(req), "%s %s %s", verb, name, item);
    DH_EXPECT(c, req, want);
}

static void line_names(struct dh_daemon *d)
{
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "ADD " SEEN " u1", "NEW");
    DH_EXPECT(c, "MADD " SEEN " u1 u2", "EXISTS NEW");
    DH_EXPECT(c, "CHECK " SEEN " u2", "YES");
    DH_EXPECT(c, "ADD " SLASHED " s1", "NEW");
    DH_EXPECT(c, "ADD " HOSTS " bad.example", "NEW");
    line_cmd3(c, "ADD", longest, "l1", "NEW");
    line_cmd3(c, "CHECK", longest, "l1", "YES");
    char want[512];
    snprintf(want, sizeof(want),
             "ERR unknown_filter invalid filter name '%.32s...': use " FNAME_RULE, too_long);
    line_cmd3(c, "CHECK", too_long, "l1", want);
    DH_EXPECT(c, "CHECK a\"b x", "ERR unknown_filter invalid filter name 'a\"b': use " FNAME_RULE);
    DH_EXPECT(c, "CHECK a\\b x", "ERR unknown_filter invalid filter name 'a\\b': use " FNAME_RULE);
    DH_EXPECT(c, "CHECK it's x", "ERR unknown_filter invalid filter name 'it's': use " FNAME_RULE);
    DH_EXPECT(c, "CHECK a\001b x", "ERR unknown_filter invalid filter name 'a?b': use " FNAME_RULE);
    DH_EXPECT(c, "CHECK caf\xc3\xa9 x",
              "ERR unknown_filter invalid filter name 'caf\?\?': use " FNAME_RULE);
    DH_EXPECT(c, "CHECK seen:{sku999} x", "ERR unknown_filter no such filter 'seen:{sku999}'");
    /* A name of FNAME_MAX bytes that is not served: named whole. */
    char other[FNAME_MAX + 1];
    memcpy(other, longest, sizeof(other));
    other[FNAME_MAX - 1] = '~';
    snprintf(want, sizeof(want), "ERR unknown_filter no such filter '%s'", other);
    line_cmd3(c, "CHECK", other, "x", want);

    /* FILTERS lists them as words; INFO names them in valid JSON. */
    const char *list = dh_cmd(c, "FILTERS");
    char words[4096];
    snprintf(words, sizeof(words), " %s ", list);
    ck_assert_msg(strstr(words, " " SEEN " ") && strstr(words, " " SLASHED " ") &&
                      strstr(words, longest),
                  "FILTERS: %s", list);
    const char *info = dh_cmd(c, "INFO " SEEN);
    json_error_t je;
    json_t *j = json_loads(info, 0, &je);
    ck_assert_msg(j != NULL, "INFO: %s: %s", je.text, info);
    ck_assert_str_eq(json_string_value(json_object_get(j, "name")), SEEN);
    json_decref(j);
    dh_close(c);
}

/* ---- HTTP ---- */

static struct hc_resp get(struct dh_daemon *d, const char *target)
{
    struct hc_conn c;
    ck_assert_msg(hc_open(&c, "127.0.0.1", dh_http_port(d, 0)) == 0, "%s", c.err);
    struct hc_resp r;
    ck_assert_msg(hc_request(&c, "GET", target, NULL, NULL, 0, &r, T_MS) == 0, "%s: %s", target,
                  c.err);
    hc_close(&c);
    return r;
}

/* GET target answers status; with a JSON body whose key holds want. */
static void expect_json(struct dh_daemon *d, const char *target, int status, const char *key,
                        const char *want)
{
    struct hc_resp r = get(d, target);
    ck_assert_msg(r.status == status, "%s: %d %s", target, r.status, r.body);
    json_error_t je;
    json_t *j = json_loads(r.body, 0, &je);
    ck_assert_msg(j != NULL, "%s: %s: %s", target, je.text, r.body);
    json_t *v = json_object_get(j, key);
    if (!v && json_object_get(j, "error"))
        v = json_object_get(json_object_get(j, "error"), key);
    ck_assert_msg(json_is_string(v) && strstr(json_string_value(v), want), "%s: %s lacks %s",
                  target, r.body, want);
    json_decref(j);
    hc_resp_free(&r);
}

static void http_names(struct dh_daemon *d)
{
    /* Raw and percent-encoded: the same filter. */
    expect_json(d, "/v1/filters/" SEEN "/check?item=u1", 200, "filter", SEEN);
    expect_json(d, "/v1/filters/" SEEN_PCT "/check?item=u1", 200, "filter", SEEN);
    struct hc_resp r = get(d, "/v1/filters/" SEEN_PCT "/check?item=u1");
    ck_assert_msg(strstr(r.body, "\"present\":true"), "%s", r.body);
    hc_resp_free(&r);
    expect_json(d, "/v1/filters/bf%2Fblock%25list/check?item=s1", 200, "filter", SLASHED);
    /* A raw '/' ends the name; '%' alone is a bad escape. */
    expect_json(d, "/v1/filters/bf/block%25list/check?item=s1", 404, "message", "no such path");
    expect_json(d, "/v1/filters/bf%2Fblock%list/check?item=s1", 400, "message",
                "bad %-escape in the filter name");
    expect_json(d, "/v1/filters/a%2/check?item=x", 400, "code", "bad_request");
    /* Outside the rule: 404 with the rule. */
    static const char *const bad[] = {"a%20b", "a%22b", "a%5Cb",     "a%27b",
                                      "a%60b", "a%01b", "caf%C3%A9", "a\"b"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char t[128];
        snprintf(t, sizeof(t), "/v1/filters/%s/check?item=x", bad[i]);
        expect_json(d, t, 404, "message", "invalid filter name");
        expect_json(d, t, 404, "message", "use " FNAME_RULE);
    }
    /* FNAME_MAX bytes (escaped where a URL needs it) served, one more not. */
    char t[4 * FNAME_MAX], *p = t + sprintf(t, "/v1/filters/");
    for (const char *s = longest; *s; s++)
        p += strchr("#?%[]", *s) ? sprintf(p, "%%%02X", (unsigned char)*s) : sprintf(p, "%c", *s);
    strcpy(p, "/check?item=l1");
    expect_json(d, t, 200, "filter", longest);
    strcpy(p, "z/check?item=l1");
    expect_json(d, t, 404, "message", "invalid filter name");
    /* The list names them in valid JSON. */
    r = get(d, "/v1/filters");
    ck_assert_int_eq(r.status, 200);
    json_t *j = json_loads(r.body, 0, NULL);
    ck_assert_msg(j != NULL, "%s", r.body);
    ck_assert_msg(strstr(r.body, "\"" SEEN "\"") && strstr(r.body, "\"" SLASHED "\""), "%s",
                  r.body);
    json_decref(j);
    hc_resp_free(&r);
}

/* The authorization endpoint: names in the list raw or escaped, the 403's
 * header names the filter as it is. */
static void authz_names(struct dh_daemon *d)
{
    static const char *const paths[] = {"/v1/authz/" HOSTS, "/v1/authz/hosts%3A%7Beu%7D",
                                        "/v1/authz/plain," HOSTS};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        struct hc_conn c;
        ck_assert_msg(hc_open(&c, "127.0.0.1", dh_http_port(d, 0)) == 0, "%s", c.err);
        struct hc_resp r;
        ck_assert_msg(hc_request(&c, "GET", paths[i], "X-Original-URL: http://bad.example/x\r\n",
                                 NULL, 0, &r, T_MS) == 0,
                      "%s", c.err);
        ck_assert_msg(r.status == 403, "%s: %d %s", paths[i], r.status, r.body);
        char h[64];
        ck_assert(hc_header(&r, "X-Bloomgate-Filter", h, sizeof(h)));
        ck_assert_str_eq(h, HOSTS);
        hc_resp_free(&r);
        hc_close(&c);
    }
    expect_json(d, "/v1/authz/plain,hosts%3A%7", 400, "message", "a bad %-escape");
}

/* ---- /metrics ---- */

/* One sample line of the exposition format: a metric name, labels whose
 * values are quoted with only \\, \" and \n escaped, a space and a number. */
static bool sample_ok(const char *l)
{
    const char *p = l;
    if (!(*p == '_' || *p == ':' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
        return false;
    while (*p == '_' || *p == ':' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
           (*p >= '0' && *p <= '9'))
        p++;
    if (*p == '{') {
        p++;
        while (*p != '}') {
            while (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
                p++;
            if (p[0] != '=' || p[1] != '"')
                return false;
            for (p += 2; *p != '"'; p++) {
                if (*p == '\0' || *p == '\n')
                    return false;
                if (*p == '\\' && !(p[1] == '\\' || p[1] == '"' || p[1] == 'n'))
                    return false;
                p += *p == '\\';
            }
            p++;
            if (*p == ',')
                p++;
            else if (*p != '}')
                return false;
        }
        p++;
    }
    if (*p++ != ' ')
        return false;
    char *end;
    strtod(p, &end);
    return end != p && *end == '\0';
}

static void metrics_names(struct dh_daemon *d)
{
    struct hc_resp r = get(d, "/metrics");
    ck_assert_int_eq(r.status, 200);
    int samples = 0;
    char *copy = strdup(r.body);
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (l[0] == '#')
            continue;
        ck_assert_msg(sample_ok(l), "not a sample: %s", l);
        samples++;
    }
    free(copy);
    ck_assert_int_gt(samples, 20);
    /* ADD u1, MADD u1 u2 on the line protocol. */
    ck_assert_msg(
        strstr(r.body, "bloomgate_items_added_total{filter=\"" SEEN "\",protocol=\"line\"} 3\n"),
        "%s", r.body);
    ck_assert_msg(strstr(r.body, "{filter=\"" SLASHED "\""), "no series of %s", SLASHED);
    hc_resp_free(&r);
}

/* ---- RESP ---- */

static void resp_expect(struct dh_conn *c, const char *req, size_t len, const char *want)
{
    ck_assert_int_eq(dh_send(c, req, len, T_MS), 0);
    const char *l = dh_read_line(c, T_MS);
    ck_assert_msg(l != NULL, "%s", dh_explain(c->d, "no RESP reply"));
    char got[1024];
    snprintf(got, sizeof(got), "%s\n", l);
    ck_assert_str_eq(got, want);
}

#define RESP(c, req, want) resp_expect((c), (req), sizeof(req) - 1, (want))

static void resp_names(struct dh_daemon *d)
{
    int fd = dh_connect_fd(dh_resp_port(d, 0));
    ck_assert_msg(fd >= 0, "%s", dh_explain(d, "cannot connect to the Redis port"));
    struct dh_conn *c = dh_conn_wrap(fd, d);
    RESP(c, "BF.ADD " SEEN " r1\r\n", ":1\r\n");
    RESP(c, "*3\r\n$9\r\nBF.EXISTS\r\n$24\r\n" SEEN "\r\n$2\r\nu1\r\n", ":1\r\n");
    RESP(c, "BF.EXISTS \"a b\" x\r\n",
         "-ERR unknown_filter invalid filter name 'a b': use " FNAME_RULE "\r\n");
    RESP(c, "*3\r\n$9\r\nBF.EXISTS\r\n$3\r\na\001b\r\n$1\r\nx\r\n",
         "-ERR unknown_filter invalid filter name 'a?b': use " FNAME_RULE "\r\n");
    RESP(c, "*2\r\n$7\r\nBF.CARD\r\n$5\r\ncaf\xc3\xa9\r\n",
         "-ERR unknown_filter invalid filter name 'caf\?\?': use " FNAME_RULE "\r\n");
    RESP(c, "*2\r\n$7\r\nBF.INFO\r\n$4\r\nit's\r\n",
         "-ERR unknown_filter invalid filter name 'it's': use " FNAME_RULE "\r\n");
    RESP(c, "BF.EXISTS seen:{sku999} x\r\n", ":0\r\n"); /* a name, absent: RedisBloom's 0 */
    char req[512], want[512];
    snprintf(req, sizeof(req), "*3\r\n$6\r\nBF.ADD\r\n$%d\r\n%s\r\n$2\r\nr2\r\n", FNAME_MAX,
             longest);
    resp_expect(c, req, strlen(req), ":1\r\n");
    snprintf(req, sizeof(req), "*3\r\n$6\r\nBF.ADD\r\n$%d\r\n%s\r\n$2\r\nr2\r\n", FNAME_MAX + 1,
             too_long);
    snprintf(want, sizeof(want),
             "-ERR unknown_filter invalid filter name '%.64s...': use " FNAME_RULE "\r\n",
             too_long);
    resp_expect(c, req, strlen(req), want);
    /* INFO's line of a filter: the name's ':' ',' '=' '%' escaped, so a
     * client's split at ':' then ',' and '=' reads it. Last: the rest of
     * the bulk string is left unread. */
    ck_assert_int_eq(dh_send(c, "INFO\r\n", 6, T_MS), 0);
    bool seen = false, slashed = false;
    for (int i = 0; i < 400 && !(seen && slashed); i++) {
        const char *l = dh_read_line(c, T_MS);
        ck_assert_msg(l != NULL, "INFO ended before the filters' lines");
        seen = seen || strncmp(l, "seen%3A{sku123}%3A2026-11-27:keys=", 34) == 0;
        slashed = slashed || strncmp(l, "bf/block%25list:keys=", 21) == 0;
    }
    ck_assert(seen && slashed);
    dh_close(c);
}

START_TEST(test_names_every_front)
{
    struct dh_daemon *d = start();
    line_names(d);
    http_names(d);
    authz_names(d);
    metrics_names(d);
    resp_names(d);

    /* The journals are files in the directory named after the filters, '/'
     * and '%' escaped; a restart finds the adds in them. */
    char path[DH_PATH_MAX];
    ck_assert_msg(access(dh_path(d, "bf%2Fblock%25list.journal", path), F_OK) == 0, "%s", path);
    ck_assert_msg(access(dh_path(d, SEEN ".journal", path), F_OK) == 0, "%s", path);
    dh_restart(d);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "MCHECK " SEEN " u1 u2 r1 zz", "YES YES YES NO");
    DH_EXPECT(c, "CHECK " SLASHED " s1", "YES");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* Filters made at run time take the same names on every front, and their
 * state (a block written with the name quoted) reads back after a restart. */
START_TEST(test_created_names)
{
    make_names();
    struct dh_daemon *d = dh_new();
    dh_write_config(d, "http_listen 127.0.0.1:0\nresp_listen 127.0.0.1:0\nthreads 2\n"
                       "state_dir @DIR@/state\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE " SEEN " capacity=100", "OK");
    DH_EXPECT(c, "ADD " SEEN " u1", "NEW");
    line_cmd3(c, "CREATE", longest, "capacity=100", "OK");
    char want[512];
    snprintf(want, sizeof(want),
             "ERR unknown_filter invalid filter name '%.32s...': use " FNAME_RULE, too_long);
    line_cmd3(c, "CREATE", too_long, "capacity=100", want);
    DH_EXPECT(c, "CREATE a\"b capacity=100",
              "ERR unknown_filter invalid filter name 'a\"b': use " FNAME_RULE);
    /* HTTP: the name percent-encoded, '/' in it. */
    struct hc_conn h;
    struct hc_resp r;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    static const char cap[] = "{\"capacity\": 100}";
    ck_assert_int_eq(
        hc_request(&h, "PUT", "/v1/filters/" SLASHED_PCT, NULL, cap, strlen(cap), &r, T_MS), 0);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    hc_resp_free(&r);
    ck_assert_int_eq(hc_request(&h, "PUT", "/v1/filters/a%22b", NULL, cap, strlen(cap), &r, T_MS),
                     0);
    json_t *j = json_loads(r.body, 0, NULL);
    const char *m = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
    ck_assert_msg(r.status == 400 && m && strstr(m, "use " FNAME_RULE), "%d %s", r.status, r.body);
    json_decref(j);
    hc_resp_free(&r);
    hc_close(&h);
    DH_EXPECT(c, "ADD " SLASHED " s1", "NEW");
    /* RESP: BF.ADD creates the key (auto_create); a key outside the rule is
     * refused as every BF.* verb refuses it. */
    struct dh_conn *rc = dh_conn_wrap(dh_connect_fd(dh_resp_port(d, 0)), d);
    RESP(rc, "BF.ADD " HOSTS " bad.example\r\n", ":1\r\n");
    RESP(rc, "BF.RESERVE \"a b\" 0.01 100\r\n",
         "-ERR unknown_filter invalid filter name 'a b': use " FNAME_RULE "\r\n");
    RESP(rc, "BF.ADD \"a b\" x\r\n",
         "-ERR unknown_filter invalid filter name 'a b': use " FNAME_RULE "\r\n");
    dh_close(rc);
    dh_close(c);

    /* Their blocks read back: names, adds. */
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "CHECK " SEEN " u1", "YES");
    DH_EXPECT(c, "CHECK " SLASHED " s1", "YES");
    DH_EXPECT(c, "CHECK " HOSTS " bad.example", "YES");
    line_cmd3(c, "CHECK", longest, "u1", "NO");
    DH_EXPECT(c, "DROP " SEEN, "OK");
    DH_EXPECT(c, "CHECK " SEEN " u1", "ERR unknown_filter no such filter '" SEEN "'");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* The config refuses what the rule refuses, naming it, and asks for quotes
 * around a name that is not plain. */
START_TEST(test_config_refusals)
{
    make_names();
    static const struct {
        const char *name, *why;
    } cases[] = {
        {"seen:{x}", "must be quoted"},
        {"\"a b\"", "is invalid: use " FNAME_RULE},
        {"\"a\\\"b\"", "is invalid: use " FNAME_RULE},
        {"\"caf\xc3\xa9\"", "is invalid: use " FNAME_RULE},
        {NULL, "is 201 bytes long: use " FNAME_RULE},
    };
    struct dh_daemon *d = dh_new();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char conf[1024], quoted[FNAME_MAX + 8], out[DH_PATH_MAX];
        snprintf(quoted, sizeof(quoted), "\"%s\"", too_long);
        snprintf(conf, sizeof(conf), "filter %s {\n  capacity 10\n}\n",
                 cases[i].name ? cases[i].name : quoted);
        dh_write_config(d, conf);
        dh_path(d, "check-config.out", out);
        const char *argv[] = {dh_daemon_path(), "--check-config", "-c", d->conf, NULL};
        int st = dh_run(argv, out, T_MS);
        ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s: status 0x%x", conf,
                      st);
        char text[4096] = "";
        FILE *f = fopen(out, "r");
        ck_assert_ptr_nonnull(f);
        text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
        fclose(f);
        ck_assert_msg(strstr(text, cases[i].why), "want '%s' in: %s", cases[i].why, text);
    }
    dh_free(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("names");
    const TTest *tests[] = {test_names_every_front, test_created_names, test_config_refusals, NULL};
    dh_add_case(s, "names", 120, tests);
    return dh_run_suite(s);
}
