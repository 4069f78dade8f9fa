/* check_http: the HTTP API (docs/http-api.md).
 *
 * Most tests start the real daemon ($BLOOMGATED, from make check) with the
 * shared harness (tests/lib/daemon_harness: a config in a fresh temporary
 * directory, ports the kernel picks, parsed from its log), and talk to it with
 * tests/lib/http_client (wrapped below to fail the test on any error) and with
 * the harness's line client.
 * Each test stops its daemon with SIGTERM and requires exit status 0, so a
 * sanitizer report (a leak, a use after free) fails the test that caused it.
 *
 * What the daemon cannot show on demand (a reload that takes its time, or
 * fails; a configured filter missing from the catalog) is tested in process:
 * a server built from the library with a fake reload hook. The query-string parser and the
 * auth helpers are tested as pure functions. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"
#include "front/http/http.h"
#include "store/reload.h"
#include "store/registry.h"
#include "core/stats.h"
#include "front/fronts.h"
#include "net/server.h"
#include "base/util.h"
#include "lib/daemon_harness.h"
#include "lib/http_client.h"
#include "lib/seams.h"

#define IO_TIMEOUT_S 20 /* generous: sanitizer builds are slow */
#define IO_MS (IO_TIMEOUT_S * 1000)

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- the daemon: tests/lib/daemon_harness ----
 * The running test's daemon and its ports. The in-process tests set the
 * ports from their own server and leave D NULL. */

static struct dh_daemon *D;
static int line_port;
static int http_port[4];
static int n_http;

static void read_ports(void)
{
    line_port = dh_port(D, 0);
    for (n_http = 0; n_http < 4 && (http_port[n_http] = dh_http_port(D, (unsigned)n_http)) > 0;)
        n_http++;
}

/* A fresh directory with conf in it (filters' journals land there too), and
 * the daemon on it, ready. */
static void daemon_start(const char *conf)
{
    D = dh_new();
    dh_write_config(D, conf);
    dh_start(D, NULL);
    read_ports();
}

/* Start it again in the same directory (after it exited). */
static void daemon_restart(void)
{
    dh_start(D, NULL);
    read_ports();
}

/* Wait for the daemon (signalled already) to exit; it must exit 0. */
static void expect_exit0(void)
{
    int st = dh_wait_exit(D, DH_EXIT_TIMEOUT_MS);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "bloomgated exited with status 0x%x", st);
}

#define BASE_CONF                                                                                  \
    "listen 127.0.0.1:0\n"                                                                         \
    "http_listen 127.0.0.1:0\n"                                                                    \
    "threads 2\n"                                                                                  \
    "max_item 64\n"                                                                                \
    "http_max_body 256k\n"                                                                         \
    "http_max_headers 4k\n"                                                                        \
    "filter urls {\n    capacity 10000\n}\n"                                                       \
    "filter big {\n    capacity 1000000\n}\n"

static void setup_base(void)
{
    daemon_start(BASE_CONF);
}
/* SIGTERM; exit status 0 and a log without sanitizer reports, or the test fails. */
static void teardown(void)
{
    if (D)
        dh_finish(D);
    D = NULL;
}

/* ---- HTTP: tests/lib/http_client, failing the test on any error ---- */

static struct hc_conn *client_open_at(const char *host, int port)
{
    struct hc_conn *c = malloc(sizeof(*c));
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(hc_open(c, host, port) == 0, "%s", c->err);
    /* Some tests read the socket directly: bound those reads too. */
    struct timeval tv = {IO_TIMEOUT_S, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return c;
}

static struct hc_conn *client_open(void)
{
    return client_open_at("127.0.0.1", http_port[0]);
}

static void client_close(struct hc_conn *c)
{
    hc_close(c);
    free(c);
}

static void send_all(struct hc_conn *c, const void *p, size_t n)
{
    ck_assert_msg(hc_send_raw(c, p, n, IO_MS) == 0, "%s", c->err);
}

/* True when the server closed the connection (EOF or reset), false when it
 * sent more or stayed silent for IO_TIMEOUT_S. */
static bool client_closed(struct hc_conn *c)
{
    return hc_closed(c, IO_MS);
}

/* Read one response; false if the connection closed first. */
static bool read_resp(struct hc_conn *c, bool head_req, struct hc_resp *r)
{
    return hc_recv(c, head_req, r, IO_MS) == 0;
}

static void send_req(struct hc_conn *c, const char *method, const char *target, const char *extra,
                     const char *body, size_t blen)
{
    ck_assert_msg(hc_send(c, method, target, extra, body, blen, IO_MS) == 0, "%s", c->err);
}

static struct hc_resp request(struct hc_conn *c, const char *method, const char *target,
                              const char *extra, const char *body, size_t blen)
{
    struct hc_resp r;
    ck_assert_msg(hc_request(c, method, target, extra, body, blen, &r, IO_MS) == 0, "%s %s: %s",
                  method, target, c->err);
    return r;
}

/* One request on a connection of its own. */
static struct hc_resp req1(const char *method, const char *target, const char *extra,
                           const char *body)
{
    struct hc_conn *c = client_open();
    struct hc_resp r = request(c, method, target, extra, body, body ? strlen(body) : 0);
    client_close(c);
    return r;
}

static json_t *resp_json(const struct hc_resp *r)
{
    char ct[128];
    ck_assert_msg(hc_header(r, "Content-Type", ct, sizeof(ct)), "no Content-Type");
    ck_assert_str_eq(ct, "application/json; charset=utf-8");
    json_error_t e;
    json_t *j = json_loadb(r->body, r->blen, JSON_ALLOW_NUL, &e);
    ck_assert_msg(j != NULL, "not JSON (%s): %s", e.text, r->body);
    return j;
}

/* The body, exactly. */
static void expect_body(struct hc_resp *r, int status, const char *body)
{
    ck_assert_msg(r->status == status, "status %d, wanted %d: %s", r->status, status, r->body);
    ck_assert_str_eq(r->body, body);
    hc_resp_free(r);
}

/* {"error":{"code":code,"message":"..."}} with status; frees r. */
static void expect_error(struct hc_resp *r, int status, const char *code)
{
    ck_assert_msg(r->status == status, "status %d, wanted %d: %s", r->status, status, r->body);
    json_t *j = resp_json(r);
    json_t *e = json_object_get(j, "error");
    ck_assert_msg(json_is_object(e), "no error object: %s", r->body);
    ck_assert_str_eq(json_string_value(json_object_get(e, "code")), code);
    const char *msg = json_string_value(json_object_get(e, "message"));
    ck_assert_msg(msg && *msg, "no message: %s", r->body);
    ck_assert_uint_eq(json_object_size(j), 1);
    json_decref(j);
    hc_resp_free(r);
}

/* One request on a connection of its own and what it must get: with status
 * 2xx the exact body `want`; otherwise a JSON error whose code is `want`.
 * `has`, when set, must appear in the body too. Tests whose bodies were a run
 * of req1 + expect_* calls are tables of these. */
struct http_case {
    const char *method, *target, *extra, *body;
    int status;
    const char *want;
    const char *has;
};

static void run_cases(const struct http_case *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct hc_resp r = req1(t[i].method, t[i].target, t[i].extra, t[i].body);
        ck_assert_msg(r.status == t[i].status, "case %zu (%s %s): status %d, wanted %d: %s", i,
                      t[i].method, t[i].target, r.status, t[i].status, r.body);
        if (t[i].has)
            ck_assert_msg(strstr(r.body, t[i].has), "case %zu: no '%s' in %s", i, t[i].has, r.body);
        if (t[i].status < 300)
            expect_body(&r, t[i].status, t[i].want);
        else
            expect_error(&r, t[i].status, t[i].want);
    }
}
#define RUN_CASES(t) run_cases((t), sizeof(t) / sizeof((t)[0]))

/* ---- the line protocol (tests/lib/daemon_harness), for the cross-protocol checks ---- */

static struct dh_conn *line_open(void)
{
    int fd = dh_connect_fd(line_port);
    ck_assert_msg(fd >= 0, "connect to port %d: %s", line_port, strerror(errno));
    return dh_conn_wrap(fd, D);
}

/* Send cmd, copy the reply line into out. */
static void line_cmd(struct dh_conn *l, const char *cmd, char *out, size_t cap)
{
    snprintf(out, cap, "%s", dh_cmd(l, cmd));
}

/* ---- the tests against the daemon ---- */

START_TEST(test_healthz)
{
    struct hc_resp r = req1("GET", "/healthz", NULL, NULL);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    r = req1("HEAD", "/healthz", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.blen, 0);
    char cl[32];
    ck_assert(hc_header(&r, "Content-Length", cl, sizeof(cl)));
    ck_assert_str_eq(cl, "15");
    hc_resp_free(&r);
}
END_TEST

/* GET /v1/filters/{name} has the fields of INFO <filter>, with the same values. */
START_TEST(test_filters_and_info)
{
    struct hc_resp r = req1("GET", "/v1/filters", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    json_t *j = resp_json(&r);
    json_t *arr = json_object_get(j, "filters");
    ck_assert_uint_eq(json_object_size(j), 1);
    ck_assert_uint_eq(json_array_size(arr), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(arr, 0), "name")), "urls");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(arr, 1), "name")), "big");
    json_decref(j);
    hc_resp_free(&r);

    r = req1("GET", "/v1/filters/urls", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    json_t *http = resp_json(&r);
    hc_resp_free(&r);
    struct dh_conn *fd = line_open();
    char line[8192];
    line_cmd(fd, "INFO urls", line, sizeof(line));
    dh_close(fd);
    json_t *info = json_loads(line, 0, NULL);
    ck_assert_ptr_nonnull(info);
    ck_assert_uint_eq(json_object_size(http), json_object_size(info));
    const char *key;
    json_t *v;
    json_object_foreach(info, key, v)
    {
        json_t *hv = json_object_get(http, key);
        ck_assert_msg(hv != NULL, "HTTP info lacks %s", key);
        if (strcmp(key, "fpr_estimated") != 0)
            ck_assert_msg(json_equal(v, hv), "%s differs", key);
    }
    ck_assert_int_eq(json_integer_value(json_object_get(http, "capacity")), 10000);
    json_decref(info);
    json_decref(http);
}
END_TEST

START_TEST(test_check_and_add)
{
    static const struct http_case t[] = {
        {"POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"a\",\"b\",\"a\"]}", 200,
         "{\"filter\":\"urls\",\"new\":[true,true,false],\"added\":2}", NULL},
        {"POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"b\",\"c\"]}", 200,
         "{\"filter\":\"urls\",\"new\":[false,true],\"added\":1}", NULL},
        {"POST", "/v1/filters/urls/check", NULL, "{\"items\":[\"a\",\"nope\",\"c\"]}", 200,
         "{\"filter\":\"urls\",\"present\":[true,false,true]}", NULL},
        {"GET", "/v1/filters/urls/check?item=a", NULL, NULL, 200,
         "{\"filter\":\"urls\",\"item\":\"a\",\"present\":true}", NULL},
        {"GET", "/v1/filters/urls/check?item=nope", NULL, NULL, 200,
         "{\"filter\":\"urls\",\"item\":\"nope\",\"present\":false}", NULL},
        /* The other filter is another filter. */
        {"GET", "/v1/filters/big/check?item=a", NULL, NULL, 200,
         "{\"filter\":\"big\",\"item\":\"a\",\"present\":false}", NULL},
        /* An empty batch is a batch. */
        {"POST", "/v1/filters/urls/check", NULL, "{\"items\":[]}", 200,
         "{\"filter\":\"urls\",\"present\":[]}", NULL},
        /* Other keys are ignored; so is the request's Content-Type. */
        {"POST", "/v1/filters/urls/check", "Content-Type: text/plain\r\n",
         "{\"x\":1,\"items\":[\"a\"]}", 200, "{\"filter\":\"urls\",\"present\":[true]}", NULL},
        /* An escaped name is the same name. */
        {"GET", "/v1/filters/ur%6Cs/check?item=a", NULL, NULL, 200,
         "{\"filter\":\"urls\",\"item\":\"a\",\"present\":true}", NULL},
    };
    RUN_CASES(t);
}
END_TEST

/* Items are bytes: spaces and NUL over HTTP, and the same bytes across protocols. */
START_TEST(test_items_are_bytes)
{
    static const struct http_case t[] = {
        {"POST", "/v1/filters/urls/add", NULL,
         "{\"items\":[\"with space\",\"nul\\u0000inside\",\"caf\\u00e9\"]}", 200,
         "{\"filter\":\"urls\",\"new\":[true,true,true],\"added\":3}", NULL},
        {"GET", "/v1/filters/urls/check?item=with%20space", NULL, NULL, 200,
         "{\"filter\":\"urls\",\"item\":\"with space\",\"present\":true}", NULL},
        {"GET", "/v1/filters/urls/check?item=with+space", NULL, NULL, 200,
         "{\"filter\":\"urls\",\"item\":\"with space\",\"present\":true}", NULL},
        {"GET", "/v1/filters/urls/check?item=nul%00inside", NULL, NULL, 200,
         "{\"filter\":\"urls\",\"item\":\"nul\\u0000inside\",\"present\":true}", NULL},
        {"GET", "/v1/filters/urls/check?item=caf%C3%A9", NULL, NULL, 200,
         "{\"filter\":\"urls\",\"item\":\"café\",\"present\":true}", NULL},
        /* The NUL is part of the item: its prefix and the joined bytes are others. */
        {"POST", "/v1/filters/urls/check", NULL,
         "{\"items\":[\"nul\",\"nulinside\",\"nul\\u0000inside\",\"with\"]}", 200,
         "{\"filter\":\"urls\",\"present\":[false,false,true,false]}", NULL},
    };
    RUN_CASES(t);

    /* HTTP add, line check; line add, HTTP check. */
    static const struct http_case add[] = {
        {"POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"http://x.example/added-by-http\"]}",
         200, "{\"filter\":\"urls\",\"new\":[true],\"added\":1}", NULL},
    };
    RUN_CASES(add);
    struct dh_conn *fd = line_open();
    DH_EXPECT(fd, "CHECK urls http://x.example/added-by-http", "YES");
    DH_EXPECT(fd, "CHECK urls http://x.example/never-added", "NO");
    DH_EXPECT(fd, "ADD urls http://x.example/added-by-line?a=1&b=2", "NEW");
    DH_EXPECT(fd, "ADD urls caf\xc3\xa9", "EXISTS");
    dh_close(fd);
    static const struct http_case seen[] = {
        {"GET",
         "/v1/filters/urls/check?item=http%3A%2F%2Fx.example%2Fadded-by-line%3Fa%3D1%26b%3D2", NULL,
         NULL, 200,
         "{\"filter\":\"urls\",\"item\":\"http://x.example/"
         "added-by-line?a=1&b=2\",\"present\":true}",
         NULL},
        {"POST", "/v1/filters/urls/check", NULL,
         "{\"items\":[\"http://x.example/added-by-line?a=1&b=2\"]}", 200,
         "{\"filter\":\"urls\",\"present\":[true]}", NULL},
    };
    RUN_CASES(seen);
}
END_TEST

START_TEST(test_keepalive_1000)
{
    struct hc_conn *c = client_open();
    struct hc_resp r =
        request(c, "POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"even\"]}", 18);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[true],\"added\":1}");
    for (int i = 0; i < 1000; i++) {
        bool even = i % 2 == 0;
        r = request(c, "GET",
                    even ? "/v1/filters/urls/check?item=even" : "/v1/filters/urls/check?item=odd",
                    NULL, NULL, 0);
        ck_assert_msg(r.status == 200, "request %d: %d", i, r.status);
        char conn[32];
        ck_assert(!hc_header(&r, "Connection", conn, sizeof(conn)));
        ck_assert_str_eq(r.body, even ? "{\"filter\":\"urls\",\"item\":\"even\",\"present\":true}"
                                      : "{\"filter\":\"urls\",\"item\":\"odd\",\"present\":false}");
        hc_resp_free(&r);
    }
    /* Pipelined: three requests sent at once, three answers in order. */
    send_req(c, "GET", "/healthz", NULL, NULL, 0);
    send_req(c, "GET", "/v1/filters/nosuch", NULL, NULL, 0);
    send_req(c, "GET", "/v1/filters/urls/check?item=even", NULL, NULL, 0);
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    ck_assert(read_resp(c, false, &r));
    expect_error(&r, 404, "unknown_filter");
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"filter\":\"urls\",\"item\":\"even\",\"present\":true}");
    client_close(c);
}
END_TEST

/* {"items":["<prefix><i>",...]} for i in [0, n). */
static char *batch_body(size_t n, const char *prefix)
{
    size_t cap = n * 32 + 32, len = 0;
    char *b = malloc(cap);
    len += (size_t)sprintf(b, "{\"items\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            b[len++] = ',';
        len += (size_t)sprintf(b + len, "\"%s%05zu\"", prefix, i);
    }
    strcpy(b + len, "]}");
    return b;
}

static void expect_bools(struct hc_resp *r, const char *key, size_t n, bool want)
{
    ck_assert_msg(r->status == 200, "status %d: %.200s", r->status, r->body);
    json_t *j = resp_json(r);
    json_t *a = json_object_get(j, key);
    ck_assert_uint_eq(json_array_size(a), n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(json_is_true(json_array_get(a, i)) == want, "%s[%zu]", key, i);
    json_decref(j);
}

START_TEST(test_batch_10000)
{
    char *body = batch_body(10000, "batch-item-");
    struct hc_conn *c = client_open();
    struct hc_resp r = request(c, "POST", "/v1/filters/big/check", NULL, body, strlen(body));
    expect_bools(&r, "present", 10000, false);
    hc_resp_free(&r);
    r = request(c, "POST", "/v1/filters/big/add", NULL, body, strlen(body));
    expect_bools(&r, "new", 10000, true);
    json_t *j = resp_json(&r);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "added")), 10000);
    json_decref(j);
    hc_resp_free(&r);
    r = request(c, "POST", "/v1/filters/big/check", NULL, body, strlen(body));
    expect_bools(&r, "present", 10000, true);
    hc_resp_free(&r);
    free(body);
    /* One more than max_items (10000). */
    body = batch_body(10001, "x");
    r = request(c, "POST", "/v1/filters/big/check", NULL, body, strlen(body));
    expect_error(&r, 400, "too_many_items");
    free(body);
    client_close(c);
}
END_TEST

/* 64 bytes: max_item in BASE_CONF. */
#define Z64 "0000000000000000000000000000000000000000000000000000000000000000"

START_TEST(test_errors_400)
{
    static const struct http_case t[] = {
        {"POST", "/v1/filters/urls/check", NULL, "{\"items\":[\"a\"", 400, "bad_json", NULL},
        {"POST", "/v1/filters/urls/check", NULL, "{\"items\":[\"a\"]} trailing", 400, "bad_json",
         NULL},
        {"POST", "/v1/filters/urls/check", NULL, "", 400, "bad_json", NULL},
        /* Issue 15: two "items" keys were read as the last one; a proxy that
         * checks the body may read the first. */
        {"POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"a\"],\"items\":[\"b\"]}", 400,
         "bad_json", "duplicate object key"},
        {"POST", "/v1/filters/urls/check", NULL, "{}", 400, "missing_items", NULL},
        {"POST", "/v1/filters/urls/check", NULL, "[\"a\"]", 400, "missing_items", NULL},
        {"POST", "/v1/filters/urls/add", NULL, "{\"items\":\"a\"}", 400, "missing_items", NULL},
        {"GET", "/v1/filters/urls/check", NULL, NULL, 400, "missing_items", NULL},
        {"GET", "/v1/filters/urls/check?items=a", NULL, NULL, 400, "missing_items", NULL},
        {"POST", "/v1/filters/urls/check", NULL, "{\"items\":[\"a\",1]}", 400, "not_a_string",
         "item 2 "},
        {"POST", "/v1/filters/urls/add", NULL, "{\"items\":[null]}", 400, "not_a_string", NULL},
        /* max_item is 64 here: 64 bytes pass, 65 do not, over GET and POST. */
        {"POST", "/v1/filters/urls/check", NULL, "{\"items\":[\"" Z64 "\"]}", 200,
         "{\"filter\":\"urls\",\"present\":[false]}", NULL},
        {"POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"a\",\"" Z64 "0\"]}", 400,
         "item_too_long", "item 2 "},
        {"GET", "/v1/filters/urls/check?item=" Z64 "0", NULL, NULL, 400, "item_too_long", NULL},
        /* Malformed queries. */
        {"GET", "/v1/filters/urls/check?item=%zz", NULL, NULL, 400, "bad_request", NULL},
        {"GET", "/v1/filters/urls/check?item=a&item=b", NULL, NULL, 400, "bad_request", NULL},
        {"GET", "/v1/filters/urls/check?item=%ff", NULL, NULL, 400, "bad_request", NULL},
    };
    RUN_CASES(t);
    /* None of this changed the filter. */
    struct hc_resp r = req1("GET", "/v1/filters/urls", NULL, NULL);
    json_t *j = resp_json(&r);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "items")), 0);
    json_decref(j);
    hc_resp_free(&r);
}
END_TEST

START_TEST(test_errors_404)
{
    static const struct http_case t[] = {
        {"GET", "/v1/filters/nosuch", NULL, NULL, 404, "unknown_filter", NULL},
        {"GET", "/v1/filters/nosuch/check?item=a", NULL, NULL, 404, "unknown_filter", NULL},
        {"POST", "/v1/filters/nosuch/check", NULL, "{\"items\":[\"a\"]}", 404, "unknown_filter",
         NULL},
        {"POST", "/v1/filters/nosuch/add", NULL, "{\"items\":[\"a\"]}", 404, "unknown_filter",
         NULL},
        {"GET", "/v1/filters/bad%2Fname/check?item=a", NULL, NULL, 404, "unknown_filter", NULL},
        {"GET", "/v1/filters//check?item=a", NULL, NULL, 404, "unknown_filter", NULL},
        {"GET", "/", NULL, NULL, 404, "not_found", NULL},
        {"GET", "/v1/nope", NULL, NULL, 404, "not_found", NULL},
        {"GET", "/v1/filters/urls/delete", NULL, NULL, 404, "not_found", NULL},
        {"GET", "/v1/filters/", NULL, NULL, 404, "unknown_filter", NULL},
    };
    RUN_CASES(t);
}
END_TEST

static void expect_405(const char *method, const char *target, const char *allow)
{
    struct hc_resp r = req1(method, target, NULL, NULL);
    char got[64];
    ck_assert_msg(hc_header(&r, "Allow", got, sizeof(got)), "%s %s: no Allow", method, target);
    ck_assert_str_eq(got, allow);
    if (strcmp(method, "HEAD") == 0) {
        ck_assert_int_eq(r.status, 405);
        hc_resp_free(&r);
    } else {
        expect_error(&r, 405, "method_not_allowed");
    }
}

START_TEST(test_405)
{
    expect_405("PUT", "/v1/filters/urls/add", "POST");
    expect_405("GET", "/v1/filters/urls/add", "POST");
    expect_405("HEAD", "/v1/filters/urls/add", "POST");
    expect_405("PATCH", "/v1/filters/urls", "GET, HEAD, PUT, DELETE");
    expect_405("PUT", "/v1/filters/urls/clear", "POST");
    expect_405("POST", "/v1/filters", "GET, HEAD");
    expect_405("PATCH", "/v1/filters/urls/check", "GET, HEAD, POST");
    expect_405("GET", "/v1/reload", "POST");
    expect_405("POST", "/healthz", "GET, HEAD");
    expect_405("OPTIONS", "/metrics", "GET, HEAD");
    /* The method is checked before the filter. */
    expect_405("PUT", "/v1/filters/nosuch/check", "GET, HEAD, POST");
}
END_TEST

/* Framing errors: 413 body_too_large for a body over http_max_body, 431
 * headers_too_large for a head over http_max_headers, 400 bad_request for
 * what is not HTTP; each answered in JSON, then the connection is closed. */
START_TEST(test_oversized)
{
    struct hc_conn *c = client_open();
    const char *big = "POST /v1/filters/urls/check HTTP/1.1\r\nHost: x\r\n"
                      "Content-Length: 262145\r\n\r\n";
    send_all(c, big, strlen(big));
    struct hc_resp r;
    ck_assert(read_resp(c, false, &r));
    expect_error(&r, 413, "body_too_large");
    ck_assert(client_closed(c)); /* closed */
    client_close(c);

    /* Exactly http_max_body is fine. */
    size_t max = 262144;
    char *body = malloc(max + 1);
    memset(body, ' ', max);
    memcpy(body, "{\"items\":[\"a\"]}", 15);
    body[max] = '\0';
    r = req1("POST", "/v1/filters/urls/check", NULL, body);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"present\":[false]}");
    /* One byte more, sent in full: 413 (the client may see the close first). */
    c = client_open();
    char head[256];
    snprintf(head, sizeof(head),
             "POST /v1/filters/urls/check HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n",
             max + 1);
    send_all(c, head, strlen(head));
    body = realloc(body, max + 2);
    body[max] = ' ';
    if (send(c->fd, body, max + 1, MSG_NOSIGNAL) > 0 && read_resp(c, false, &r)) {
        ck_assert_int_eq(r.status, 413);
        hc_resp_free(&r);
    }
    client_close(c);
    free(body);

    /* Headers over http_max_headers (4k). */
    c = client_open();
    char *hdr = malloc(8192);
    int n = snprintf(hdr, 8192, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(hdr + n, 'a', 6000);
    strcpy(hdr + n + 6000, "\r\n\r\n");
    send_all(c, hdr, strlen(hdr));
    free(hdr);
    ck_assert(read_resp(c, false, &r));
    expect_error(&r, 431, "headers_too_large");
    ck_assert(client_closed(c));
    client_close(c);

    /* Garbage is a 400; and the daemon goes on. */
    c = client_open();
    send_all(c, "NOT HTTP AT ALL\r\n\r\n", 19);
    ck_assert(read_resp(c, false, &r));
    expect_error(&r, 400, "bad_request");
    ck_assert(client_closed(c));
    client_close(c);
    r = req1("GET", "/healthz", NULL, NULL);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
}
END_TEST

/* A client that sends half a body and goes away, or stops halfway; a client
 * that connects and never speaks. The daemon answers everyone else, and
 * (teardown) exits cleanly with nothing leaked. */
/* Read exactly the bytes `want` (an interim response, say) from c. */
static void expect_raw(struct hc_conn *c, const char *want)
{
    size_t n = strlen(want);
    while (c->len < n)
        ck_assert_msg(hc_fill(c, IO_MS) == 0, "closed before '%s'", want);
    ck_assert_msg(memcmp(c->buf, want, n) == 0, "got '%.*s', wanted '%s'", (int)n, c->buf, want);
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

/* The HTTP/1.1 framing our own parser handles (src/httpparse.c): chunked
 * bodies, 100-continue, pipelining, HTTP/1.0, absolute-form targets, bare-LF
 * lines, a request trickling in a byte at a time; and the framing it refuses,
 * each with a JSON error and a close. */
START_TEST(test_framing)
{
    struct hc_resp r;
    /* Chunked, with an extension and a trailer, sent in pieces. */
    struct hc_conn *c = client_open();
    const char *parts[] = {"POST /v1/filters/urls/add HTTP/1.1\r\nHost: x\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n",
                           "6;ext=1\r\n{\"item\r\n", "f\r\ns\":[\"ch1\",\"ch2\"\r\n", "2\r\n]}\r\n",
                           "0\r\nX-Trailer: y\r\n\r\n"};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        send_all(c, parts[i], strlen(parts[i]));
        usleep(2000);
    }
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[true,true],\"added\":2}");
    /* The same connection goes on; the same body a byte at a time. */
    const char *one = "POST /v1/filters/urls/check HTTP/1.1\r\nHost: x\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n"
                      "b\r\n{\"items\":[\"\r\n9\r\nch1\",\"no\"\r\n2\r\n]}\r\n0\r\n\r\n";
    for (const char *p = one; *p; p++)
        send_all(c, p, 1);
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"filter\":\"urls\",\"present\":[true,false]}");

    /* Expect: 100-continue: the interim response, then the real one. */
    const char *body = "{\"items\":[\"ch2\"]}";
    char head[256];
    snprintf(head, sizeof(head),
             "POST /v1/filters/urls/check HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
             "Content-Length: %zu\r\n\r\n",
             strlen(body));
    send_all(c, head, strlen(head));
    expect_raw(c, "HTTP/1.1 100 Continue\r\n\r\n");
    send_all(c, body, strlen(body));
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"filter\":\"urls\",\"present\":[true]}");

    /* Three requests in one write: three responses, in order. */
    const char *pipe3 = "GET /v1/filters/urls/check?item=ch1 HTTP/1.1\r\nHost: x\r\n\r\n"
                        "GET /v1/filters/urls/check?item=zz HTTP/1.1\r\nHost: x\r\n\r\n"
                        "HEAD /v1/filters/urls/check?item=ch2 HTTP/1.1\r\nHost: x\r\n\r\n";
    send_all(c, pipe3, strlen(pipe3));
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"filter\":\"urls\",\"item\":\"ch1\",\"present\":true}");
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"filter\":\"urls\",\"item\":\"zz\",\"present\":false}");
    ck_assert(read_resp(c, true, &r));
    char cl[32];
    ck_assert_int_eq(r.status, 200);
    ck_assert(hc_header(&r, "Content-Length", cl, sizeof(cl)));
    ck_assert_int_eq(atoi(cl),
                     (int)strlen("{\"filter\":\"urls\",\"item\":\"ch2\",\"present\":true}"));
    hc_resp_free(&r);
    /* Absolute-form target and bare-LF lines. */
    send_all(c, "GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: x\r\n\r\n", 50);
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    send_all(c, "GET /healthz HTTP/1.1\nHost: x\n\n", 31);
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    client_close(c);

    /* HTTP/1.0: closed after the response unless it asks for keep-alive. */
    c = client_open();
    send_all(c, "GET /healthz HTTP/1.0\r\n\r\n", 25);
    ck_assert(read_resp(c, false, &r));
    ck_assert(hc_header(&r, "Connection", cl, sizeof(cl)));
    ck_assert_str_eq(cl, "close");
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    ck_assert(client_closed(c));
    client_close(c);
    c = client_open();
    for (int i = 0; i < 2; i++) {
        send_all(c, "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 49);
        ck_assert(read_resp(c, false, &r));
        ck_assert(hc_header(&r, "Connection", cl, sizeof(cl)));
        ck_assert_str_eq(cl, "keep-alive");
        expect_body(&r, 200, "{\"status\":\"ok\"}");
    }
    client_close(c);
    /* Connection: close on 1.1 is honoured. */
    c = client_open();
    r = request(c, "GET", "/healthz", "Connection: close\r\n", NULL, 0);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    ck_assert(client_closed(c));
    client_close(c);

    /* Refused framing: answered in JSON, then closed. */
    struct {
        const char *req;
        int status;
        const char *code;
    } bad[] = {
        {"GET /healthz HTTP/2.0\r\n\r\n", 505, "version_not_supported"},
        {"POST /v1/filters/urls/check HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
         "not_implemented"},
        {"POST /v1/filters/urls/check HTTP/1.1\r\nContent-Length: 3\r\n"
         "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
         400, "bad_request"},
        {"POST /v1/filters/urls/check HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
         400, "bad_request"},
        {"GET /healthz HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, "bad_request"},
        {"GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n", 400, "bad_request"},
        {"POST /v1/filters/urls/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400,
         "bad_request"},
        {"POST /v1/filters/urls/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
         "40001\r\n",
         413, "body_too_large"},
        /* Issue 15: leniencies a front proxy may read differently. */
        {"GET /healthz HTTP/1.9\r\n\r\n", 505, "version_not_supported"},
        {"POST /v1/filters/urls/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
         "f 5\r\n{\"items\":[\"a\"]}\r\n0\r\n\r\n",
         400, "bad_request"},
        {"POST /v1/filters/urls/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
         "f;x\ry\r\n{\"items\":[\"a\"]}\r\n0\r\n\r\n",
         400, "bad_request"},
        {"POST /v1/filters/urls/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
         "f\n{\"items\":[\"a\"]}\n0\n\n",
         400, "bad_request"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        c = client_open();
        send_all(c, bad[i].req, strlen(bad[i].req));
        ck_assert_msg(read_resp(c, false, &r), "no response to case %zu", i);
        expect_error(&r, bad[i].status, bad[i].code);
        ck_assert_msg(client_closed(c), "case %zu: not closed", i);
        client_close(c);
    }
    /* Every one of those was counted. */
    r = req1("GET", "/metrics", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(
        r.body, "bloomgate_errors_total{protocol=\"http\",code=\"version_not_supported\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(r.body, "bloomgate_errors_total{protocol=\"http\",code=\"not_implemented\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(r.body, "bloomgate_http_responses_total{code=\"505\"} 2\n"));
    hc_resp_free(&r);
}
END_TEST

/* HTTP connections count towards the spread over the workers, and one
 * handed to the other worker is served there: 6 keep-alive HTTP connections
 * and 4 line connections, opened one after another, end up 5 and 5. */
START_TEST(test_balanced_workers)
{
    struct hc_conn *hc[6];
    struct dh_conn *lc[4];
    for (int i = 0; i < 6; i++) {
        hc[i] = client_open();
        struct hc_resp r = request(hc[i], "GET", "/healthz", NULL, NULL, 0);
        expect_body(&r, 200, "{\"status\":\"ok\"}");
        if (i < 4) {
            lc[i] = line_open();
            DH_EXPECT(lc[i], "PING", "PONG");
        }
    }
    struct hc_resp r = request(hc[0], "GET", "/metrics", NULL, NULL, 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_msg(strstr(r.body, "bloomgate_worker_connections{worker=\"0\"} 5\n") &&
                      strstr(r.body, "bloomgate_worker_connections{worker=\"1\"} 5\n"),
                  "not 5 and 5:\n%.2000s", strstr(r.body, "bloomgate_worker_connections"));
    hc_resp_free(&r);
    for (int i = 0; i < 6; i++) {
        r = request(hc[i], "GET", "/v1/filters/urls/check?item=spread", NULL, NULL, 0);
        expect_body(&r, 200, "{\"filter\":\"urls\",\"item\":\"spread\",\"present\":false}");
        client_close(hc[i]);
    }
    for (int i = 0; i < 4; i++)
        dh_close(lc[i]);
}
END_TEST

START_TEST(test_half_body)
{
    for (int i = 0; i < 20; i++) {
        struct hc_conn *c = client_open();
        const char *h = "POST /v1/filters/urls/add HTTP/1.1\r\nHost: x\r\n"
                        "Content-Length: 1000\r\n\r\n{\"items\":[\"half";
        send_all(c, h, strlen(h));
        if (i % 2) { /* RST instead of FIN */
            struct linger lg = {1, 0};
            setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        }
        client_close(c);
    }
    struct hc_conn *stalled = client_open();
    const char *h = "POST /v1/filters/urls/add HTTP/1.1\r\nHost: x\r\n"
                    "Content-Length: 1000\r\n\r\n{\"items\":[";
    send_all(stalled, h, strlen(h));
    struct hc_conn *silent = client_open();
    struct hc_resp r = req1("GET", "/v1/filters/urls/check?item=half", NULL, NULL);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"item\":\"half\",\"present\":false}");
    r = req1("GET", "/v1/filters/urls", NULL, NULL);
    json_t *j = resp_json(&r);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "items")), 0);
    json_decref(j);
    hc_resp_free(&r);
    client_close(stalled);
    client_close(silent);
}
END_TEST

/* A body that stops halfway is closed after idle_timeout (1 s here). */
START_TEST(test_stalled_body_times_out)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 1\nidle_timeout 1\n"
                 "filter urls {\n    capacity 1000\n}\n");
    struct hc_conn *c = client_open();
    const char *h = "POST /v1/filters/urls/add HTTP/1.1\r\nHost: x\r\n"
                    "Content-Length: 100\r\n\r\n{\"items\":[";
    send_all(c, h, strlen(h));
    char b;
    ssize_t n = recv(c->fd, &b, 1, 0); /* blocks until the server closes (or 20 s) */
    ck_assert_int_eq(n, 0);
    client_close(c);
    struct hc_resp r = req1("GET", "/healthz", NULL, NULL);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
}
END_TEST

/* Nothing changed on disk: a successful reload that keeps both filters
 * (loopback, no token: allowed). */
START_TEST(test_reload)
{
    struct hc_conn *c = client_open();
    struct hc_resp r = request(c, "POST", "/v1/reload", NULL, NULL, 0);
    ck_assert_msg(r.status == 200, "%d: %s", r.status, r.body);
    json_t *j = resp_json(&r);
    ck_assert(json_is_true(json_object_get(j, "ok")));
    json_t *fs = json_object_get(j, "filters");
    ck_assert_uint_eq(json_array_size(fs), 2);
    for (size_t i = 0; i < 2; i++)
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(fs, i), "status")),
                         "unchanged");
    json_decref(j);
    hc_resp_free(&r);
    /* The connection goes on after the deferred answer. */
    r = request(c, "GET", "/healthz", NULL, NULL, 0);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    client_close(c);
}
END_TEST

/* An add over HTTP goes to the filter's journal: it survives a restart. */
START_TEST(test_http_adds_are_journaled)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 2\n"
                 "filter urls {\n    capacity 1000\n    fsync always\n}\n");
    struct hc_resp r =
        req1("POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"kept\",\"nul\\u0000kept\"]}");
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[true,true],\"added\":2}");
    dh_signal(D, SIGTERM);
    expect_exit0();
    daemon_restart();
    r = req1("POST", "/v1/filters/urls/check", NULL,
             "{\"items\":[\"kept\",\"nul\\u0000kept\",\"nul\"]}");
    expect_body(&r, 200, "{\"filter\":\"urls\",\"present\":[true,true,false]}");
}
END_TEST

START_TEST(test_loopback_may_add)
{
    struct hc_resp r = req1("POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"x\"]}");
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[true],\"added\":1}");
}
END_TEST

START_TEST(test_auth_token)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 2\n"
                 "admin_token \"s3cret-token\"\nfilter urls {\n    capacity 1000\n}\n");
    const char *add = "/v1/filters/urls/add";
    const char *body = "{\"items\":[\"t\"]}";
    struct hc_resp r = req1("POST", add, NULL, body);
    char www[128];
    ck_assert(hc_header(&r, "WWW-Authenticate", www, sizeof(www)));
    expect_error(&r, 401, "auth_required");
    r = req1("POST", add, "Authorization: Bearer wrong\r\n", body);
    expect_error(&r, 401, "auth_failed");
    r = req1("POST", add, "Authorization: Bearer s3cret-toke\r\n", body);
    expect_error(&r, 401, "auth_failed");
    r = req1("POST", add, "Authorization: Bearer s3cret-token-\r\n", body);
    expect_error(&r, 401, "auth_failed");
    r = req1("POST", add, "Authorization: Basic czNjcmV0LXRva2Vu\r\n", body);
    expect_error(&r, 401, "auth_failed");
    r = req1("POST", "/v1/reload", NULL, NULL);
    expect_error(&r, 401, "auth_required");
    /* Auth comes before the filter and the body. */
    r = req1("POST", "/v1/filters/nosuch/add", NULL, "not json");
    expect_error(&r, 401, "auth_required");
    r = req1("GET", "/v1/filters/urls/check?item=t", NULL, NULL);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"item\":\"t\",\"present\":false}");
    r = req1("POST", add, "Authorization: Bearer s3cret-token\r\n", body);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[true],\"added\":1}");
    r = req1("POST", add, "authorization: bearer   s3cret-token  \r\n", body);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[false],\"added\":0}");
    /* Reads never need the token; checks of the added item agree. */
    r = req1("POST", "/v1/filters/urls/check", NULL, body);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"present\":[true]}");
    r = req1("POST", "/v1/reload", "Authorization: Bearer s3cret-token\r\n", NULL);
    ck_assert_int_eq(r.status, 200);
    hc_resp_free(&r);
}
END_TEST

START_TEST(test_max_connections)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 2\nmax_connections 3\n"
                 "filter urls {\n    capacity 1000\n}\n");
    struct hc_conn *c[3];
    struct hc_resp r;
    for (int i = 0; i < 3; i++) {
        c[i] = client_open();
        r = request(c[i], "GET", "/healthz", NULL, NULL, 0);
        expect_body(&r, 200, "{\"status\":\"ok\"}");
    }
    struct hc_conn *extra = client_open();
    r = request(extra, "GET", "/healthz", NULL, NULL, 0);
    char conn[32];
    ck_assert(hc_header(&r, "Connection", conn, sizeof(conn)));
    ck_assert_str_eq(conn, "close");
    expect_error(&r, 503, "too_many_connections");
    ck_assert(client_closed(extra));
    client_close(extra);
    /* Refused at once, before it sends anything (it used to be kept, holding
     * a descriptor, until it sent a request or idle_timeout passed). */
    extra = client_open();
    ck_assert_msg(read_resp(extra, false, &r), "no 503 before the request was sent");
    ck_assert(hc_header(&r, "Connection", conn, sizeof(conn)));
    ck_assert_str_eq(conn, "close");
    expect_error(&r, 503, "too_many_connections");
    ck_assert(client_closed(extra));
    client_close(extra);
    /* A line-protocol connection counts too: refused at once. */
    struct dh_conn *lfd = line_open();
    const char *refused = dh_read_line(lfd, IO_MS);
    ck_assert_ptr_nonnull(refused);
    ck_assert_str_eq(refused, "ERR too_many_connections the server is at max_connections");
    dh_close(lfd);
    client_close(c[0]);
    /* The server learns of the close asynchronously: try for a while. */
    int status = 0;
    for (int i = 0; i < 200 && status != 200; i++) {
        sleep_ms(10);
        r = req1("GET", "/healthz", NULL, NULL);
        status = r.status;
        hc_resp_free(&r);
    }
    ck_assert_int_eq(status, 200);
    client_close(c[1]);
    client_close(c[2]);
}
END_TEST

START_TEST(test_http_off)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen off\nthreads 1\n"
                 "filter urls {\n    capacity 1000\n}\n");
    ck_assert_int_eq(n_http, 0);
    char *log = dh_log_read(D);
    ck_assert_ptr_null(strstr(log, "HTTP listening"));
    free(log);
    struct dh_conn *fd = line_open();
    DH_EXPECT(fd, "PING", "PONG");
    dh_close(fd);
}
END_TEST

static bool have_ipv6_loopback(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* http_listen is repeatable, IPv6 included; every address serves the API. */
START_TEST(test_two_addresses)
{
    bool v6 = have_ipv6_loopback();
    char conf[512];
    snprintf(conf, sizeof(conf),
             "listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nhttp_listen %s\nthreads 2\n"
             "filter urls {\n    capacity 1000\n}\n",
             v6 ? "[::1]:0" : "127.0.0.2:0");
    daemon_start(conf);
    ck_assert_int_eq(n_http, 2);
    struct hc_conn *c = client_open_at("127.0.0.1", http_port[0]);
    struct hc_resp r = request(c, "POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"v\"]}", 15);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[true],\"added\":1}");
    client_close(c);
    c = client_open_at(v6 ? "::1" : "127.0.0.2", http_port[1]);
    r = request(c, "POST", "/v1/filters/urls/add", NULL, "{\"items\":[\"v\"]}", 15);
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[false],\"added\":0}");
    client_close(c);
}
END_TEST

/* SIGTERM with idle keep-alive clients: they are closed at once, not waited
 * for until shutdown_timeout (an hour here; Check gives the test 120 s). */
START_TEST(test_shutdown_with_keepalive)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 2\n"
                 "shutdown_timeout 3600\nfilter urls {\n    capacity 1000\n}\n");
    struct hc_conn *c[4];
    for (int i = 0; i < 4; i++) {
        c[i] = client_open();
        struct hc_resp r = request(c[i], "GET", "/healthz", NULL, NULL, 0);
        expect_body(&r, 200, "{\"status\":\"ok\"}");
    }
    dh_signal(D, SIGTERM);
    for (int i = 0; i < 4; i++) {
        ck_assert(client_closed(c[i]));
        client_close(c[i]);
    }
    /* Reaped here: a second SIGTERM during its clean-up would kill it. */
    expect_exit0();
}
END_TEST

/* ---- connections that end while responses are in flight ---- */

/* A client whose receive buffer is small (set before connect, so the window
 * is small too): the server's responses pile up unwritten in its output. */
static struct hc_conn *client_open_small_rcvbuf(void)
{
    struct hc_conn *c = calloc(1, sizeof(*c));
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(c->fd, 0);
    int sz = 4096;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)http_port[0])};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert_int_eq(connect(c->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    struct timeval tv = {IO_TIMEOUT_S, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    c->cap = 65536;
    c->buf = malloc(c->cap);
    return c;
}

/* n pipelined GET /metrics (about 10 KB of response each) in one write. */
static void send_metrics_pipeline(struct hc_conn *c, int n)
{
    static const char one[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t len = sizeof(one) - 1;
    char *all = malloc(len * (size_t)n);
    for (int i = 0; i < n; i++)
        memcpy(all + len * (size_t)i, one, len);
    send_all(c, all, len * (size_t)n);
    free(all);
}

/* Responses pipelined before a Connection: close are all delivered, even when
 * the client goes on sending while they are written: what comes after the
 * closing request is neither answered (no 413 once it fills the buffer) nor
 * left unread in the socket (a close with unread input is a reset, which
 * throws away the responses still in flight). */
START_TEST(test_close_with_input_after_it)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 1\n"
                 "http_max_body 1k\nhttp_max_headers 1k\nmax_output 64M\n"
                 "filter urls {\n    capacity 1000\n}\n");
    struct hc_conn *c = client_open_small_rcvbuf();
    int n = 300;
    send_metrics_pipeline(c, n);
    const char *last = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    send_all(c, last, strlen(last));
    sleep_ms(200); /* the server has read the closing request and is writing */
    char junk[4096];
    memset(junk, 'X', sizeof(junk));
    for (int i = 0; i < 16; i++) /* 64 KB: more than the buffer the request could use */
        send_all(c, junk, sizeof(junk));
    struct hc_resp r;
    for (int i = 0; i < n; i++) {
        ck_assert_msg(read_resp(c, false, &r), "response %d of %d lost", i + 1, n + 1);
        ck_assert_int_eq(r.status, 200);
        hc_resp_free(&r);
    }
    ck_assert_msg(read_resp(c, false, &r), "the last response was lost");
    char v[32];
    ck_assert(hc_header(&r, "Connection", v, sizeof(v)));
    ck_assert_str_eq(v, "close");
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    ck_assert_msg(c->len == 0, "more after Connection: close: %.200s", c->buf);
    char b;
    ck_assert_msg(recv(c->fd, &b, 1, 0) == 0, "not a clean close: %s", strerror(errno));
    client_close(c);
}
END_TEST

/* idle_timeout is for a silent connection: one whose client is reading its
 * responses, slowly, is not cut off in the middle of them. */
START_TEST(test_slow_reader_not_cut)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 1\n"
                 "idle_timeout 1\nmax_output 64M\n"
                 "filter urls {\n    capacity 1000\n}\n");
    struct hc_conn *c = client_open_small_rcvbuf();
    int n = 600; /* ~6 MB: more than the socket buffers take */
    send_metrics_pipeline(c, n);
    struct hc_resp r;
    double t0 = util_now();
    for (int i = 0; i < n; i++) {
        ck_assert_msg(read_resp(c, false, &r), "response %d of %d lost after %.1f s", i + 1, n,
                      util_now() - t0);
        ck_assert_int_eq(r.status, 200);
        hc_resp_free(&r);
        if (i % 5 == 0)
            sleep_ms(20); /* ~2.5 MB/s at most: ~2.5 s in all */
    }
    client_close(c);
}
END_TEST

/* ---- fuzzing the daemon ---- */

static uint64_t fz_state;
static uint32_t fz_rand(void) /* xorshift64*, fixed seed: the same run every time */
{
    fz_state ^= fz_state >> 12;
    fz_state ^= fz_state << 25;
    fz_state ^= fz_state >> 27;
    return (uint32_t)((fz_state * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Every response in out[0..len) is HTTP/1.1 with a status line, Date and a
 * Content-Length its body matches (a HEAD's body is absent); interim 100s
 * are skipped. The number of final responses, or -1 with the reason. */
static int check_responses(const char *out, size_t len, const bool *is_head, int n_req, char *why,
                           size_t whylen)
{
    size_t p = 0;
    int n = 0;
    while (p < len) {
        const char *end = memmem(out + p, len - p, "\r\n\r\n", 4);
        if (!end || len - p < 12 || memcmp(out + p, "HTTP/1.1 ", 9) != 0) {
            snprintf(why, whylen, "not a response at byte %zu: %.60s", p, out + p);
            return -1;
        }
        size_t hlen = (size_t)(end - (out + p)) + 4;
        char head[2048];
        if (hlen >= sizeof(head)) {
            snprintf(why, whylen, "head too long");
            return -1;
        }
        memcpy(head, out + p, hlen);
        head[hlen] = '\0';
        struct hc_resp hr = {.head = head};
        int status = atoi(head + 9);
        if (status == 100) {
            p += hlen;
            continue;
        }
        char cl[32], date[64];
        if (status < 200 || status > 599 || !hc_header(&hr, "Content-Length", cl, sizeof(cl)) ||
            !hc_header(&hr, "Date", date, sizeof(date))) {
            snprintf(why, whylen, "bad head: %s", head);
            return -1;
        }
        size_t blen = strtoull(cl, NULL, 10);
        bool head_req = n < n_req && is_head[n];
        /* A request too malformed to parse is not known to be a HEAD: its
         * error has a body, and is the last response. */
        char conn[32];
        if (head_req && status >= 400 && blen > 0 && len - p - hlen == blen &&
            hc_header(&hr, "Connection", conn, sizeof(conn)) && strcmp(conn, "close") == 0)
            head_req = false;
        if (!head_req && len - p - hlen < blen) {
            snprintf(why, whylen, "body shorter than Content-Length %zu: %s", blen, head);
            return -1;
        }
        p += hlen + (head_req ? 0 : blen);
        n++;
    }
    return n;
}

/* Thousands of valid requests, some with random byte flips, deletions and
 * repeats, pipelined a few at a time and sent in random pieces, then a
 * half-close: the daemon answers each connection with well-formed responses
 * only (a HEAD answered as a HEAD, whatever was sent), closes it, stays up
 * with bounded memory, and still answers /healthz; every connection it
 * counted is gone afterwards. */
START_TEST(test_fuzz_requests)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 2\nmax_item 64\n"
                 "http_max_body 4k\nhttp_max_headers 1k\nidle_timeout 5\n"
                 "filter urls {\n    capacity 10000\n}\n");
    static const char *const base[] = {
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /v1/filters/urls/check?item=a%20b+c HTTP/1.1\r\n\r\n",
        "HEAD /v1/filters/urls/check?item=abc HTTP/1.1\r\n\r\n",
        "HEAD /v1/filters HTTP/1.1\r\n\r\n",
        "POST /v1/filters/urls/check HTTP/1.1\r\nContent-Length: 16\r\n\r\n{\"items\":[\"a\"]}\n",
        "POST /v1/filters/urls/add HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5;x=y\r\n{\"ite\r\na\r\nms\":[\"b\"]}\r\n0\r\nT: 1\r\n\r\n",
        "POST /v1/filters/urls/check HTTP/1.1\r\nExpect: 100-continue\r\n"
        "Content-Length: 16\r\n\r\n{\"items\":[\"a\"]}\n",
        "GET /v1/filters HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "GET /v1/filters/ur%6cs HTTP/1.1\r\nConnection: close\r\n\r\n",
        "GET /metrics HTTP/1.1\n\n",
        "DELETE /v1/filters/urls HTTP/1.1\r\n\r\n",
        "POST /v1/reload HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    };
    static const char spice[] = "\r\n:%0123456789abcdefx ;\"\\\t\x00\xff";
    size_t nbase = sizeof(base) / sizeof(base[0]);
    fz_state = 0x9E3779B97F4A7C15ull;
    long rss0 = dh_rss_kib(D->pid), rss_max = rss0;
    char *data = malloc(1 << 16), *out = malloc(1 << 20);
    for (int it = 0; it < 1000; it++) {
        size_t len = 0;
        int n_req = 1 + (int)(fz_rand() % 4);
        bool is_head[8] = {false}, mutated = false;
        for (int k = 0; k < n_req; k++) {
            const char *b = base[fz_rand() % nbase];
            size_t bl = strlen(b), start = len;
            is_head[k] = strncmp(b, "HEAD ", 5) == 0;
            memcpy(data + len, b, bl);
            len += bl;
            if (strstr(b, "Connection: close")) { /* the last one answered */
                n_req = k + 1;
                break;
            }
            if (fz_rand() % 2) {
                for (int m = (int)(fz_rand() % 4); m >= 0 && len > start; m--) {
                    size_t at = start + fz_rand() % (len - start);
                    unsigned op = fz_rand() % 4;
                    if (op == 0) {
                        data[at] = (char)fz_rand();
                    } else if (op == 1) {
                        memmove(data + at, data + at + 1, len - at - 1);
                        len--;
                    } else if (op == 2) {
                        memmove(data + at + 1, data + at, len - at);
                        data[at] = spice[fz_rand() % (sizeof(spice) - 1)];
                        len++;
                    } else {
                        size_t rl = 1 + fz_rand() % 16, reps = 1 + fz_rand() % 8;
                        if (at + rl > len)
                            rl = len - at;
                        if (len + rl * reps < (1 << 15)) {
                            memmove(data + at + rl * reps, data + at, len - at);
                            for (size_t q = 1; q <= reps; q++)
                                memcpy(data + at + rl * (reps - q), data + at + rl * reps, rl);
                            len += rl * reps;
                        }
                    }
                }
                /* A mutated method may no longer be a HEAD: judge by the bytes sent. */
                is_head[k] = len - start >= 5 && memcmp(data + start, "HEAD ", 5) == 0;
                /* Anything after a mutated request may be read as its body;
                 * a repeat may make two requests of one. */
                n_req = k + 1;
                mutated = true;
                break;
            }
        }
        struct hc_conn *c = client_open();
        for (size_t p = 0; p < len;) {
            size_t k = 1 + fz_rand() % (len - p);
            send(c->fd, data + p, k, MSG_NOSIGNAL);
            p += k;
            if (fz_rand() % 8 == 0)
                usleep(200);
        }
        shutdown(c->fd, SHUT_WR);
        size_t olen = 0;
        for (;;) {
            ssize_t r = recv(c->fd, out + olen, (1 << 20) - olen, 0);
            if (r <= 0) {
                ck_assert_msg(r == 0 || errno == ECONNRESET, "iteration %d: %s", it,
                              strerror(errno));
                break;
            }
            olen += (size_t)r;
        }
        client_close(c);
        char why[2300];
        int got = check_responses(out, olen, is_head, n_req, why, sizeof(why));
        ck_assert_msg(got >= 0, "iteration %d: %s\nsent: %.*s", it, why, (int)len, data);
        ck_assert_msg(mutated ? got >= 0 : got == n_req,
                      "iteration %d: %d responses to %d requests: %.*s", it, got, n_req, (int)len,
                      data);
        if (it % 100 == 0) {
            long rss = dh_rss_kib(D->pid);
            if (rss > rss_max)
                rss_max = rss;
        }
    }
    free(data);
    free(out);
    struct hc_resp r = req1("GET", "/healthz", NULL, NULL);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    ck_assert_msg(rss_max < rss0 + 64 * 1024, "RSS grew from %ld to %ld KiB", rss0, rss_max);
    /* Every connection is closed and uncounted: only this line connection is left. */
    char line[8192];
    const char *wc = NULL;
    for (int t = 0; t < 200; t++) {
        struct dh_conn *fd = line_open();
        line_cmd(fd, "INFO", line, sizeof(line));
        dh_close(fd);
        wc = strstr(line, "\"worker_connections\":");
        ck_assert_ptr_nonnull(wc);
        if (strncmp(wc, "\"worker_connections\":[1,0]", 26) == 0 ||
            strncmp(wc, "\"worker_connections\":[0,1]", 26) == 0)
            break;
        sleep_ms(10);
    }
    ck_assert_msg(strncmp(wc, "\"worker_connections\":[1,0]", 26) == 0 ||
                      strncmp(wc, "\"worker_connections\":[0,1]", 26) == 0,
                  "connections left: %.60s", wc);
}
END_TEST

/* ---- /metrics ---- */

/* The value of one series ("name{labels}"), which must be there exactly once. */
static double metric(const char *text, const char *series)
{
    size_t n = strlen(series);
    const char *found = NULL;
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ') {
            ck_assert_msg(found == NULL, "%s twice", series);
            found = p + n + 1;
        }
    }
    ck_assert_msg(found != NULL, "no series %s", series);
    return strtod(found, NULL);
}

/* Every sample belongs to a family announced by HELP and TYPE before it;
 * histogram buckets are cumulative and end in +Inf == _count. */
static void check_exposition(const char *text)
{
    char fam[128] = "";
    char type[32] = "";
    bool help = false;
    double last_bucket = -1;
    int lines = 0;
    char *copy = strdup(text);
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        lines++;
        if (strncmp(l, "# HELP ", 7) == 0) {
            sscanf(l + 7, "%127s", fam);
            help = true;
            type[0] = '\0';
            last_bucket = -1;
            continue;
        }
        if (strncmp(l, "# TYPE ", 7) == 0) {
            char name[128];
            ck_assert_int_eq(sscanf(l + 7, "%127s %31s", name, type), 2);
            ck_assert_str_eq(name, fam);
            ck_assert(help);
            ck_assert_msg(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0 ||
                              strcmp(type, "histogram") == 0,
                          "type %s", type);
            continue;
        }
        ck_assert_msg(l[0] != '#', "stray comment: %s", l);
        ck_assert_msg(type[0], "sample before TYPE: %s", l);
        size_t fl = strlen(fam);
        ck_assert_msg(strncmp(l, fam, fl) == 0, "%s outside its family %s", l, fam);
        const char *rest = l + fl;
        if (strcmp(type, "histogram") == 0)
            ck_assert_msg(strncmp(rest, "_bucket{", 8) == 0 || strncmp(rest, "_sum{", 5) == 0 ||
                              strncmp(rest, "_count{", 7) == 0,
                          "%s", l);
        else
            ck_assert_msg(*rest == '{' || *rest == ' ', "%s", l);
        if (strcmp(type, "counter") == 0)
            ck_assert_msg(strstr(fam, "_total") == fam + fl - 6, "counter %s lacks _total", fam);
        const char *sp = strrchr(l, ' ');
        char *end;
        double v = strtod(sp + 1, &end);
        ck_assert_msg(*end == '\0' && v >= 0, "bad value in %s", l);
        if (strncmp(rest, "_bucket{", 8) == 0) {
            if (strstr(rest, "le=\"1e-05\""))
                last_bucket = -1;
            ck_assert_msg(v >= last_bucket, "buckets not cumulative at %s", l);
            last_bucket = v;
        } else if (strncmp(rest, "_count{", 7) == 0) {
            ck_assert_msg(v == last_bucket, "_count != +Inf bucket: %s", l);
        }
    }
    free(copy);
    ck_assert_int_gt(lines, 50);
}

/* Every counter of the stats table is in both views, INFO and /metrics, with
 * the same value (the daemon is idle between the two reads; the HTTP
 * connection is open before INFO, and /metrics counts itself after it has
 * rendered). INFO iterated the table while /metrics wrote each family by
 * hand, so counters went missing from /metrics. */
START_TEST(test_stats_views_agree)
{
    daemon_start("listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 2\n"
                 "filter urls {\n    capacity 1000\n}\n");
    char line[8192];
    struct dh_conn *fd = line_open();
    line_cmd(fd, "ADD urls a", line, sizeof(line));
    line_cmd(fd, "MCHECK urls a b", line, sizeof(line));
    line_cmd(fd, "BOGUS", line, sizeof(line));
    struct hc_conn *c = client_open();
    struct hc_resp r = request(c, "GET", "/v1/filters/urls/check?item=a", NULL, NULL, 0);
    hc_resp_free(&r);
    line_cmd(fd, "INFO", line, sizeof(line));
    json_error_t jerr;
    json_t *info = json_loads(line, 0, &jerr);
    ck_assert_msg(info != NULL, "INFO: %s", jerr.text);
    r = request(c, "GET", "/metrics", NULL, NULL, 0);
    ck_assert_int_eq(r.status, 200);
    static const struct {
        const char *name, *metric, *labels;
    } table[] = {
#define ROW_(name, metric, labels, help) {#name, metric, labels},
        STATS_COUNTERS(ROW_)
#undef ROW_
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        json_t *v = json_object_get(info, table[i].name);
        ck_assert_msg(json_is_integer(v), "INFO lacks %s", table[i].name);
        char series[256];
        snprintf(series, sizeof(series), table[i].labels[0] ? "%s{%s}" : "%s%s", table[i].metric,
                 table[i].labels);
        double m = metric(r.body, series);
        ck_assert_msg(m == (double)json_integer_value(v), "%s: INFO %lld, /metrics %s %g",
                      table[i].name, (long long)json_integer_value(v), series, m);
    }
    json_decref(info);
    hc_resp_free(&r);
    client_close(c);
    dh_close(fd);
}
END_TEST

START_TEST(test_metrics)
{
    /* Known traffic: over HTTP 7 single checks (3 hits), 2 batches of 5 (4
     * hits), 1 add of 4 (3 new); over the line protocol 2 checks (1 hit) and
     * 1 add; and one error of each kind below. */
    struct hc_conn *c = client_open();
    int http_requests = 0;
    const char *add = "{\"items\":[\"m1\",\"m2\",\"m3\",\"m1\"]}";
    struct hc_resp r = request(c, "POST", "/v1/filters/urls/add", NULL, add, strlen(add));
    expect_body(&r, 200, "{\"filter\":\"urls\",\"new\":[true,true,true,false],\"added\":3}");
    http_requests++;
    const char *singles[7] = {"m1", "m2", "m3", "x1", "x2", "x3", "x4"};
    for (int i = 0; i < 7; i++) {
        char t[128];
        snprintf(t, sizeof(t), "/v1/filters/urls/check?item=%s", singles[i]);
        r = request(c, "GET", t, NULL, NULL, 0);
        ck_assert_int_eq(r.status, 200);
        hc_resp_free(&r);
        http_requests++;
    }
    for (int i = 0; i < 2; i++) {
        const char *b = i ? "{\"items\":[\"m1\",\"y\",\"y\",\"y\",\"y\"]}"
                          : "{\"items\":[\"m1\",\"m2\",\"m3\",\"y\",\"y\"]}";
        r = request(c, "POST", "/v1/filters/urls/check", NULL, b, strlen(b));
        ck_assert_int_eq(r.status, 200);
        hc_resp_free(&r);
        http_requests++;
    }
    r = request(c, "GET", "/v1/filters/nosuch", NULL, NULL, 0);
    expect_error(&r, 404, "unknown_filter");
    r = request(c, "POST", "/v1/filters/urls/check", NULL, "{", 1);
    expect_error(&r, 400, "bad_json");
    r = request(c, "PUT", "/metrics", NULL, NULL, 0);
    expect_error(&r, 405, "method_not_allowed");
    http_requests += 3;
    struct dh_conn *fd = line_open();
    char line[256];
    DH_EXPECT(fd, "CHECK urls m1", "YES");
    DH_EXPECT(fd, "CHECK urls zz", "NO");
    DH_EXPECT(fd, "ADD urls line-added", "NEW");
    line_cmd(fd, "BOGUS", line, sizeof(line));
    dh_close(fd);

    r = request(c, "GET", "/metrics", NULL, NULL, 0);
    ck_assert_int_eq(r.status, 200);
    char ct[64];
    ck_assert(hc_header(&r, "Content-Type", ct, sizeof(ct)));
    ck_assert_str_eq(ct, "text/plain; version=0.0.4; charset=utf-8");
    const char *m = r.body;
    check_exposition(m);
    ck_assert_double_eq(
        metric(m, "bloomgate_items_checked_total{filter=\"urls\",protocol=\"http\"}"), 17);
    ck_assert_double_eq(metric(m, "bloomgate_items_hit_total{filter=\"urls\",protocol=\"http\"}"),
                        7);
    ck_assert_double_eq(metric(m, "bloomgate_items_added_total{filter=\"urls\",protocol=\"http\"}"),
                        4);
    ck_assert_double_eq(metric(m, "bloomgate_items_new_total{filter=\"urls\",protocol=\"http\"}"),
                        3);
    ck_assert_double_eq(
        metric(m, "bloomgate_items_checked_total{filter=\"urls\",protocol=\"line\"}"), 2);
    ck_assert_double_eq(metric(m, "bloomgate_items_hit_total{filter=\"urls\",protocol=\"line\"}"),
                        1);
    ck_assert_double_eq(metric(m, "bloomgate_items_added_total{filter=\"urls\",protocol=\"line\"}"),
                        1);
    ck_assert_double_eq(
        metric(m, "bloomgate_items_checked_total{filter=\"big\",protocol=\"http\"}"), 0);
    ck_assert_double_eq(metric(m, "bloomgate_filter_items{filter=\"urls\"}"), 4);
    ck_assert_double_eq(metric(m, "bloomgate_filter_capacity{filter=\"big\"}"), 1000000);
    ck_assert_double_eq(metric(m, "bloomgate_filter_generation{filter=\"urls\"}"), 1);
    ck_assert(metric(m, "bloomgate_filter_bytes{filter=\"urls\"}") > 0);
    double fpr = metric(m, "bloomgate_filter_fpr_estimated{filter=\"urls\"}");
    ck_assert(fpr >= 0 && fpr < 1e-3);
    double loaded = metric(m, "bloomgate_filter_loaded_timestamp_seconds{filter=\"urls\"}");
    ck_assert(loaded > 1.6e9 && loaded <= (double)time(NULL));
    ck_assert_double_eq(
        metric(m, "bloomgate_errors_total{protocol=\"http\",code=\"unknown_filter\"}"), 1);
    ck_assert_double_eq(metric(m, "bloomgate_errors_total{protocol=\"http\",code=\"bad_json\"}"),
                        1);
    ck_assert_double_eq(
        metric(m, "bloomgate_errors_total{protocol=\"http\",code=\"method_not_allowed\"}"), 1);
    ck_assert_double_eq(
        metric(m, "bloomgate_errors_total{protocol=\"line\",code=\"unknown_command\"}"), 1);
    ck_assert_double_eq(metric(m, "bloomgate_http_responses_total{code=\"200\"}"), 10);
    ck_assert_double_eq(metric(m, "bloomgate_http_responses_total{code=\"404\"}"), 1);
    /* The /metrics request itself is counted once its reply is sent. */
    ck_assert_double_eq(metric(m, "bloomgate_requests_total{protocol=\"http\"}"), http_requests);
    ck_assert_double_eq(metric(m, "bloomgate_request_duration_seconds_count{protocol=\"http\"}"),
                        http_requests);
    /* Line requests answered: the parser's own errors (BOGUS) are not among them. */
    ck_assert_double_eq(metric(m, "bloomgate_requests_total{protocol=\"line\"}"), 3);
    ck_assert_double_eq(metric(m, "bloomgate_connections_open{protocol=\"http\"}"), 1);
    ck_assert_double_eq(metric(m, "bloomgate_connections_accepted_total{protocol=\"http\"}"), 1);
    ck_assert_double_eq(metric(m, "bloomgate_connections_accepted_total{protocol=\"line\"}"), 1);
    ck_assert_double_eq(metric(m, "bloomgate_worker_threads"), 2);
    hc_resp_free(&r);
    /* HEAD: the same headers, no body. */
    r = request(c, "HEAD", "/metrics", NULL, NULL, 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.blen, 0);
    hc_resp_free(&r);
    client_close(c);
}
END_TEST

/* ---- in process: the reload hook and health ---- */

/* Written by a worker thread, polled by the test: volatile is enough for
 * these flags (x86, one writer). */
struct fake_reload {
    int delay_ms; /* < 0: never answer by itself */
    bool ok;
    bool refuse; /* cannot queue the reload (as when out of memory) */
    bool odd;    /* a report whose names, statuses and errors are not strings */
    volatile int calls;
    server_reload_done volatile done;
    void *volatile arg;
};

static json_t *fake_report(bool ok)
{
    return json_pack("{s:b,s:[{s:s,s:s,s:i}]}", "ok", ok, "filters", "name", "urls", "status",
                     ok ? "unchanged" : "failed", "generation", 1);
}

static void fake_fire(evutil_socket_t fd, short what, void *arg)
{
    struct fake_reload *f = arg;
    (void)fd;
    (void)what;
    server_reload_done done = f->done;
    void *a = f->arg;
    f->done = NULL;
    f->arg = NULL; /* so that the sanitizer sees a leak of it as one */
    done(f->odd ? json_pack("{s:b,s:[{s:i,s:n,s:b}]}", "ok", f->ok, "filters", "name", 7, "status",
                            "error", 1)
                : fake_report(f->ok),
         a);
}

static bool fake_reload_fn(void *ctx, const struct reload_op *op, struct event_base *base,
                           server_reload_done done, void *arg)
{
    struct fake_reload *f = ctx;
    f->calls++;
    if (f->refuse)
        return false;
    f->done = done;
    f->arg = arg;
    if (f->delay_ms >= 0) {
        struct timeval tv = {f->delay_ms / 1000, (f->delay_ms % 1000) * 1000};
        event_base_once(base, -1, EV_TIMEOUT, fake_fire, f, &tv);
    }
    return true;
}

struct inproc {
    struct registry *reg;
    struct server *srv;
    struct fake_reload fake;
};

static struct inproc P;

/* drop_last: serve the catalog without its last configured filter, as a
 * reload that failed to load one would. */
static void inproc_start(bool drop_last)
{
    static const char text[] = "listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 2\n"
                               "filter urls {\n    capacity 1000\n    journal off\n}\n"
                               "filter gone {\n    capacity 1000\n    journal off\n}\n";
    char err[512];
    struct conf *cf = conf_parse(text, sizeof(text) - 1, NULL, err, sizeof(err));
    ck_assert_msg(cf != NULL, "%s", err);
    P.reg = registry_create(2);
    ck_assert_msg(reload_initial(P.reg, cf, 1, err, sizeof(err)) == 0, "%s", err);
    if (drop_last) {
        /* The same config, the filters but the last: versions are shared
         * with the catalog it replaces, which frees the one it alone held. */
        const struct catalog *cur = registry_read(P.reg);
        struct catalog *next = calloc(1, sizeof(*next));
        next->conf = conf_parse(text, sizeof(text) - 1, NULL, err, sizeof(err));
        ck_assert_ptr_nonnull(next->conf);
        next->n = cur->n - 1;
        next->entries = calloc(next->n, sizeof(*next->entries));
        memcpy(next->entries, cur->entries, next->n * sizeof(*next->entries));
        registry_publish(P.reg, next);
    }
    P.srv = server_create(P.reg, 2, err, sizeof(err));
    ck_assert_msg(P.srv != NULL, "%s", err);
    memset((void *)&P.fake, 0, sizeof(P.fake));
    server_set_reload(P.srv, fake_reload_fn, &P.fake);
    ck_assert_int_eq(server_start(P.srv, err, sizeof(err)), 0);
    http_port[0] = server_http_port(P.srv, 0);
    line_port = server_line_port(P.srv, 0);
}

static void inproc_stop(void)
{
    server_stop(P.srv, 2.0);
    server_free(P.srv);
    /* A reload the fake never answered: answer it now, as the reload thread
     * would; its connection is gone, so this only frees. */
    if (P.fake.done)
        fake_fire(-1, 0, &P.fake);
    registry_free(P.reg);
}

/* A reload whose report is lost on its way back (out of memory in the
 * completion path, by fault injection) must still be answered, on both
 * protocols, and the connection must go on: it used to stay with reading
 * stopped for ever. The real reloader, in process. */
START_TEST(test_inproc_reload_report_lost)
{
    static const char text[] = "listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 2\n"
                               "filter urls {\n    capacity 1000\n    journal off\n}\n";
    /* Only a directory for the config (no daemon is started): under the
     * run's, so it goes even if the test fails. */
    struct dh_daemon *home = dh_new();
    dh_write_file(home, "bloomgate.conf", text, sizeof(text) - 1);
    char path[DH_PATH_MAX];
    dh_path(home, "bloomgate.conf", path);
    char err[512];
    struct conf *cf = conf_parse(text, sizeof(text) - 1, NULL, err, sizeof(err));
    ck_assert_msg(cf != NULL, "%s", err);
    struct registry *reg = registry_create(2);
    ck_assert_msg(reload_initial(reg, cf, 1, err, sizeof(err)) == 0, "%s", err);
    struct server *srv = server_create(reg, 2, err, sizeof(err));
    ck_assert_msg(srv != NULL, "%s", err);
    struct reloader *rl = reloader_start(reg, path, 1);
    ck_assert_ptr_nonnull(rl);
    server_set_reload(srv, reloader_hook, rl);
    ck_assert_int_eq(server_start(srv, err, sizeof(err)), 0);
    http_port[0] = server_http_port(srv, 0);
    line_port = server_line_port(srv, 0);

    char line[512];
    struct dh_conn *lfd = line_open();
    atomic_store(&reload_fault_delivery, 1);
    line_cmd(lfd, "RELOAD", line, sizeof(line));
    ck_assert_msg(strncmp(line, "ERR internal ", 13) == 0, "RELOAD answered: %s", line);
    DH_EXPECT(lfd, "PING", "PONG");
    dh_close(lfd);

    struct hc_conn *c = client_open();
    atomic_store(&reload_fault_delivery, 1);
    struct hc_resp r = request(c, "POST", "/v1/reload", NULL, NULL, 0);
    expect_error(&r, 500, "internal");
    r = request(c, "GET", "/healthz", NULL, NULL, 0);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    client_close(c);

    reloader_stop(rl);
    server_stop(srv, 2.0);
    reloader_free(rl);
    server_free(srv);
    registry_free(reg);
    dh_free(home);
}
END_TEST

static int threads_now(void)
{
    int n = 0;
    DIR *dir = opendir("/proc/self/task");
    for (struct dirent *de; dir && (de = readdir(dir)) != NULL;)
        n += de->d_name[0] != '.';
    if (dir)
        closedir(dir);
    return n;
}

/* A start that fails part way (the third worker thread cannot be created,
 * by fault injection) leaves no worker running, says why in pthread_create's
 * words (it returns its error, it does not set errno), and frees cleanly. */
START_TEST(test_inproc_partial_start)
{
    static const char text[] = "listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nthreads 3\n"
                               "filter urls {\n    capacity 1000\n    journal off\n}\n";
    char err[512];
    struct conf *cf = conf_parse(text, sizeof(text) - 1, NULL, err, sizeof(err));
    ck_assert_msg(cf != NULL, "%s", err);
    struct registry *reg = registry_create(3);
    ck_assert_msg(reload_initial(reg, cf, 1, err, sizeof(err)) == 0, "%s", err);
    struct server *srv = server_create(reg, 3, err, sizeof(err));
    ck_assert_msg(srv != NULL, "%s", err);
    int before = threads_now();
    server_fault_thread_after = 2;
    server_fault_thread_fail = 1;
    errno = 0;
    ck_assert_int_eq(server_start(srv, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "cannot start worker thread 2: Resource temporarily unavailable");
    /* The started workers were joined; a joined thread may still be listed in
     * /proc/self/task for a moment (the kernel wakes the joiner before it has
     * reaped the task), so wait for the count to come back, with a deadline. */
    int now = threads_now();
    for (int i = 0; i < 2000 && now != before; i++) {
        usleep(5000);
        now = threads_now();
    }
    ck_assert_int_eq(now, before);
    server_free(srv);
    registry_free(reg);
}
END_TEST

START_TEST(test_inproc_reload_ok_and_failed)
{
    inproc_start(false);
    P.fake.delay_ms = 50;
    P.fake.ok = true;
    struct hc_conn *c = client_open();
    struct hc_resp r = request(c, "POST", "/v1/reload", NULL, NULL, 0);
    ck_assert_int_eq(r.status, 200);
    json_t *j = resp_json(&r);
    ck_assert(json_is_true(json_object_get(j, "ok")));
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(j, "filters"), 0), "status")),
                     "unchanged");
    json_decref(j);
    hc_resp_free(&r);
    /* The connection goes on after the deferred answer. */
    r = request(c, "GET", "/healthz", NULL, NULL, 0);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    P.fake.ok = false;
    r = request(c, "POST", "/v1/reload", NULL, NULL, 0);
    ck_assert_int_eq(r.status, 500);
    j = resp_json(&r);
    ck_assert(json_is_false(json_object_get(j, "ok")));
    json_decref(j);
    hc_resp_free(&r);
    ck_assert_int_eq(P.fake.calls, 2);
    client_close(c);
    inproc_stop();
}
END_TEST

/* A reload that cannot even be queued (out of memory) is refused at once, over
 * both protocols, and the requests pipelined after it are answered once each,
 * in order. */
START_TEST(test_inproc_reload_refused)
{
    inproc_start(false);
    P.fake.refuse = true;
    struct hc_conn *c = client_open();
    const char *two = "POST /v1/reload HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
                      "GET /healthz HTTP/1.1\r\n\r\n";
    send_all(c, two, strlen(two));
    struct hc_resp r;
    ck_assert(read_resp(c, false, &r));
    expect_error(&r, 503, "unavailable");
    ck_assert(read_resp(c, false, &r));
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    r = request(c, "GET", "/healthz", NULL, NULL, 0);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    client_close(c);
    struct dh_conn *fd = line_open();
    ck_assert_int_eq(dh_send(fd, "RELOAD\nPING\nPING\n", 17, IO_MS), 0);
    char **lines = dh_read_lines(fd, 3, IO_MS); /* three replies, nothing more */
    ck_assert_str_eq(lines[0], "ERR internal out of memory: the reload was not started");
    ck_assert_str_eq(lines[1], "PONG");
    ck_assert_str_eq(lines[2], "PONG");
    dh_lines_free(lines);
    dh_close(fd);
    ck_assert_int_eq(P.fake.calls, 2);
    inproc_stop();
}
END_TEST

/* A report whose fields are not strings (json_string_value gives NULL) is
 * still answered on the line protocol, and nothing reaches %s or strcmp
 * with NULL (a crash before: strcmp(NULL, "failed")). */
START_TEST(test_inproc_reload_odd_report)
{
    inproc_start(false);
    P.fake.delay_ms = 10;
    P.fake.odd = true;
    struct dh_conn *fd = line_open();
    P.fake.ok = true;
    DH_EXPECT(fd, "RELOAD", "OK ?=?");
    P.fake.ok = false;
    DH_EXPECT(fd, "RELOAD", "ERR reload_failed reload failed");
    DH_EXPECT(fd, "PING", "PONG");
    dh_close(fd);
    inproc_stop();
}
END_TEST

/* The client goes away while its reload runs; the answer finds nobody. */
START_TEST(test_inproc_reload_client_gone)
{
    inproc_start(false);
    P.fake.delay_ms = 200;
    P.fake.ok = true;
    for (int i = 0; i < 2; i++) {
        struct hc_conn *c = client_open();
        send_req(c, "POST", "/v1/reload", NULL, NULL, 0);
        for (int t = 0; t < 500 && P.fake.calls <= i; t++)
            sleep_ms(2);
        if (i) {
            struct linger lg = {1, 0};
            setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        }
        client_close(c);
        for (int t = 0; t < 500 && P.fake.done; t++)
            sleep_ms(2);
        ck_assert_ptr_null(P.fake.done);
    }
    struct hc_resp r = req1("GET", "/healthz", NULL, NULL);
    expect_body(&r, 200, "{\"status\":\"ok\"}");
    ck_assert_int_eq(P.fake.calls, 2);
    inproc_stop();
}
END_TEST

/* Shutdown while a reload is pending: the worker gives up at the deadline,
 * the connection is freed with the server, and the late answer frees only. */
START_TEST(test_inproc_stop_with_reload_pending)
{
    inproc_start(false);
    P.fake.delay_ms = -1;
    struct hc_conn *c = client_open();
    send_req(c, "POST", "/v1/reload", NULL, NULL, 0);
    for (int t = 0; t < 1000 && P.fake.calls == 0; t++)
        sleep_ms(2);
    ck_assert_int_eq(P.fake.calls, 1);
    server_stop(P.srv, 0.2);
    server_free(P.srv);
    ck_assert_ptr_nonnull(P.fake.done);
    fake_fire(-1, 0, &P.fake);
    registry_free(P.reg);
    client_close(c);
}
END_TEST

START_TEST(test_inproc_healthz_missing_filter)
{
    inproc_start(true);
    struct hc_resp r = req1("GET", "/healthz", NULL, NULL);
    ck_assert_int_eq(r.status, 503);
    json_t *j = resp_json(&r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "unavailable");
    json_t *missing = json_object_get(j, "missing");
    ck_assert_uint_eq(json_array_size(missing), 1);
    ck_assert_str_eq(json_string_value(json_array_get(missing, 0)), "gone");
    json_decref(j);
    hc_resp_free(&r);
    /* Configured, not loaded: not "no such filter", but not ready, on both
     * protocols, so a check of the filter's own path takes the replica out. */
    r = req1("GET", "/v1/filters/gone", NULL, NULL);
    ck_assert_int_eq(r.status, 503);
    j = resp_json(&r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "gone");
    ck_assert(json_is_false(json_object_get(j, "ready")));
    json_decref(j);
    hc_resp_free(&r);
    r = req1("GET", "/v1/filters/nosuch", NULL, NULL);
    expect_error(&r, 404, "unknown_filter");
    r = req1("GET", "/v1/filters/urls", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    j = resp_json(&r);
    ck_assert(json_is_true(json_object_get(j, "ready")));
    json_decref(j);
    hc_resp_free(&r);
    struct dh_conn *l = line_open();
    char line[8192];
    line_cmd(l, "INFO gone", line, sizeof(line));
    ck_assert_str_eq(line, "{\"name\":\"gone\",\"ready\":false}");
    line_cmd(l, "INFO nosuch", line, sizeof(line));
    ck_assert_msg(strncmp(line, "ERR unknown_filter", 18) == 0, "INFO nosuch: %s", line);
    line_cmd(l, "INFO", line, sizeof(line));
    j = json_loads(line, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert(json_is_false(json_object_get(j, "ready")));
    missing = json_object_get(j, "missing");
    ck_assert_uint_eq(json_array_size(missing), 1);
    ck_assert_str_eq(json_string_value(json_array_get(missing, 0)), "gone");
    json_decref(j);
    dh_close(l);
    inproc_stop();
}
END_TEST

/* ---- pure functions ---- */

static void expect_param(const char *query, int rc, const char *want, size_t wlen)
{
    char *out = NULL, err[128] = "";
    size_t len = 0;
    int got = http_query_param(query, "item", &out, &len, err, sizeof(err));
    ck_assert_msg(got == rc, "'%s': %d, wanted %d (%s)", query ? query : "(null)", got, rc, err);
    if (rc == 1) {
        ck_assert_uint_eq(len, wlen);
        ck_assert(memcmp(out, want, wlen) == 0);
    } else {
        ck_assert_ptr_null(out);
    }
    if (rc < 0)
        ck_assert(err[0]);
    free(out);
}

START_TEST(test_query_param)
{
    expect_param("item=abc", 1, "abc", 3);
    expect_param("x=1&item=a%20b&y=2", 1, "a b", 3);
    expect_param("item=a+b", 1, "a b", 3);
    expect_param("item=a%2Bb", 1, "a+b", 3);
    expect_param("item=%00z%00", 1, "\0z\0", 3);
    expect_param("item=%e2%82%AC", 1, "\xe2\x82\xac", 3);
    expect_param("item=", 1, "", 0);
    expect_param("item", 1, "", 0);
    expect_param("it%65m=q", 1, "q", 1);
    expect_param("item=a=b", 1, "a=b", 3);
    expect_param("items=1&xitem=2", 0, NULL, 0);
    expect_param("", 0, NULL, 0);
    expect_param(NULL, 0, NULL, 0);
    expect_param("item=%zz", -1, NULL, 0);
    expect_param("item=%4", -1, NULL, 0);
    expect_param("item=%", -1, NULL, 0);
    expect_param("item=a&item=b", -1, NULL, 0);
    expect_param("%zz=1&item=a", -1, NULL, 0);
}
END_TEST

START_TEST(test_auth_helpers)
{
    ck_assert(util_token_equal("secret", 6, "secret"));
    ck_assert(!util_token_equal("secre", 5, "secret"));
    ck_assert(!util_token_equal("secret!", 7, "secret"));
    ck_assert(!util_token_equal("", 0, "secret"));
    ck_assert(!util_token_equal("secreT", 6, "secret"));
    ck_assert(!util_token_equal("sec\0et", 6, "secret"));
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert(util_addr_is_loopback((struct sockaddr *)&a));
    inet_pton(AF_INET, "127.9.8.7", &a.sin_addr);
    ck_assert(util_addr_is_loopback((struct sockaddr *)&a));
    inet_pton(AF_INET, "10.0.0.1", &a.sin_addr);
    ck_assert(!util_addr_is_loopback((struct sockaddr *)&a));
    inet_pton(AF_INET, "128.0.0.1", &a.sin_addr);
    ck_assert(!util_addr_is_loopback((struct sockaddr *)&a));
    struct sockaddr_in6 b = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::1", &b.sin6_addr);
    ck_assert(util_addr_is_loopback((struct sockaddr *)&b));
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &b.sin6_addr);
    ck_assert(util_addr_is_loopback((struct sockaddr *)&b));
    inet_pton(AF_INET6, "::ffff:192.168.1.1", &b.sin6_addr);
    ck_assert(!util_addr_is_loopback((struct sockaddr *)&b));
    inet_pton(AF_INET6, "2001:db8::1", &b.sin6_addr);
    ck_assert(!util_addr_is_loopback((struct sockaddr *)&b));
    ck_assert(!util_addr_is_loopback(NULL));
    ck_assert_str_eq(http_err_name(HTTP_ERR_BAD_JSON), "bad_json");
    ck_assert_int_eq(http_err_status(HTTP_ERR_METHOD_NOT_ALLOWED), 405);
    ck_assert_int_eq(http_err_status(HTTP_ERR_TOO_MANY_CONNECTIONS), 503);
}
END_TEST

static Suite *http_suite(void)
{
    Suite *s = suite_create("http");

    TCase *api = tcase_create("api");
    tcase_add_checked_fixture(api, setup_base, teardown);
    tcase_set_timeout(api, 120);
    tcase_add_test(api, test_healthz);
    tcase_add_test(api, test_filters_and_info);
    tcase_add_test(api, test_check_and_add);
    tcase_add_test(api, test_items_are_bytes);
    tcase_add_test(api, test_keepalive_1000);
    tcase_add_test(api, test_batch_10000);
    tcase_add_test(api, test_errors_400);
    tcase_add_test(api, test_errors_404);
    tcase_add_test(api, test_405);
    tcase_add_test(api, test_oversized);
    tcase_add_test(api, test_framing);
    tcase_add_test(api, test_balanced_workers);
    tcase_add_test(api, test_half_body);
    tcase_add_test(api, test_reload);
    tcase_add_test(api, test_loopback_may_add);
    tcase_add_test(api, test_metrics);
    suite_add_tcase(s, api);

    TCase *own = tcase_create("own_config");
    tcase_add_checked_fixture(own, NULL, teardown);
    tcase_set_timeout(own, 120);
    tcase_add_test(own, test_auth_token);
    tcase_add_test(own, test_max_connections);
    tcase_add_test(own, test_stats_views_agree);
    tcase_add_test(own, test_http_off);
    tcase_add_test(own, test_two_addresses);
    tcase_add_test(own, test_stalled_body_times_out);
    tcase_add_test(own, test_shutdown_with_keepalive);
    tcase_add_test(own, test_http_adds_are_journaled);
    suite_add_tcase(s, own);

    TCase *conns = tcase_create("connections");
    tcase_add_checked_fixture(conns, NULL, teardown);
    tcase_set_timeout(conns, 120);
    tcase_add_test(conns, test_close_with_input_after_it);
    tcase_add_test(conns, test_slow_reader_not_cut);
    tcase_add_test(conns, test_fuzz_requests);
    suite_add_tcase(s, conns);

    TCase *inproc = tcase_create("in_process");
    tcase_set_timeout(inproc, 60);
    tcase_add_test(inproc, test_inproc_reload_ok_and_failed);
    tcase_add_test(inproc, test_inproc_partial_start);
    tcase_add_test(inproc, test_inproc_reload_report_lost);
    tcase_add_test(inproc, test_inproc_reload_refused);
    tcase_add_test(inproc, test_inproc_reload_client_gone);
    tcase_add_test(inproc, test_inproc_reload_odd_report);
    tcase_add_test(inproc, test_inproc_stop_with_reload_pending);
    tcase_add_test(inproc, test_inproc_healthz_missing_filter);
    suite_add_tcase(s, inproc);

    TCase *pure = tcase_create("pure");
    tcase_add_test(pure, test_query_param);
    tcase_add_test(pure, test_auth_helpers);
    suite_add_tcase(s, pure);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (dh_root_init() != 0)
        return EXIT_FAILURE;
    SRunner *sr = srunner_create(http_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    dh_root_cleanup();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
