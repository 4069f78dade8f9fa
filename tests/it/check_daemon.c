/* Integration tests of bloomgated: each test starts the real daemon (from
 * $BLOOMGATED) on 127.0.0.1 port 0 in its own temporary directory, talks the
 * line protocol to it over TCP and asserts exact replies, then stops it and
 * expects exit status 0 and a log free of sanitizer reports. See
 * tests/lib/daemon_harness.h for the harness and how cleanup survives a failure.
 *
 * Every answer is deterministic: filters are built with a fixed seed, so an
 * item that was never added gets the same NO on every run. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fname.h"
#include "lib/daemon_harness.h"
#include "lib/http_client.h"

#define N_KNOWN 1000 /* item-0 .. item-999 are in filter f */
#define F_CAPACITY 100000

static char msgbuf[8192];

/* ---- shared set-up ---- */

/* Build f.bloom from item-0 .. item-999 (capacity 100000, fpr 1e-4). */
static void build_known(struct dh_daemon *d)
{
    static char names[N_KNOWN][16];
    static const char *items[N_KNOWN];
    for (int i = 0; i < N_KNOWN; i++) {
        snprintf(names[i], sizeof(names[i]), "item-%d", i);
        items[i] = names[i];
    }
    dh_build_filter(d, "f.bloom", items, N_KNOWN, F_CAPACITY, 1e-4);
}

/* A daemon serving f (from f.bloom) and dyn (created empty), with `extra`
 * directives before the filter blocks; started and ready. */
static struct dh_daemon *start_std(const char *extra)
{
    struct dh_daemon *d = dh_new();
    build_known(d);
    char body[4096];
    snprintf(body, sizeof(body),
             "threads 2\n"
             "%s\n"
             "filter f {\n"
             "    file @DIR@/f.bloom\n"
             "}\n"
             "filter dyn {\n"
             "    capacity 1000000\n"
             "}\n",
             extra ? extra : "");
    dh_write_config(d, body);
    dh_start(d, NULL);
    return d;
}

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void expect_closed(struct dh_conn *c, bool reset_ok, const char *what)
{
    enum dh_closed st = dh_wait_closed(c, DH_TIMEOUT_MS);
    static const char *const names[] = {"EOF", "reset", "still open (timeout)", "more data"};
    if (st == DH_DATA)
        ck_abort_msg("%s: expected the server to close, got more data: '%.*s'", what,
                     (int)(c->len - c->off > 200 ? 200 : c->len - c->off), c->buf + c->off);
    ck_assert_msg(st == DH_EOF || (reset_ok && st == DH_RESET),
                  "%s: expected the server to close the connection, got %s", what, names[st]);
}

/* ---- 1. every command and every reply ---- */

static json_t *info_json(struct dh_conn *c, const char *req)
{
    const char *line = dh_cmd(c, req);
    json_error_t jerr;
    json_t *j = json_loads(line, 0, &jerr);
    ck_assert_msg(j != NULL, "%s: not JSON (%s): %.300s", req, jerr.text, line);
    ck_assert_msg(json_is_object(j), "%s: not an object: %.300s", req, line);
    return j;
}

/* A counter from INFO. */
static long long info_counter(struct dh_conn *c, const char *key)
{
    json_t *j = info_json(c, "INFO");
    json_t *v = json_object_get(j, key);
    ck_assert_msg(json_is_integer(v), "INFO has no integer \"%s\"", key);
    long long n = json_integer_value(v);
    json_decref(j);
    return n;
}

static void assert_filter_json(json_t *o, const char *name, const char *file, long long items)
{
    static const char *const keys[] = {"name",          "layout", "capacity",   "fpr_target",
                                       "fpr_estimated", "items",  "k",          "shards",
                                       "bytes",         "file",   "generation", "loaded_at"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        ck_assert_msg(json_object_get(o, keys[i]) != NULL, "filter %s: no \"%s\"", name, keys[i]);
    ck_assert_str_eq(json_string_value(json_object_get(o, "name")), name);
    ck_assert_str_eq(json_string_value(json_object_get(o, "layout")), "blocked");
    json_t *cap = json_object_get(o, "capacity");
    ck_assert(json_is_integer(cap));
    ck_assert_int_eq(json_integer_value(cap), strcmp(name, "f") == 0 ? F_CAPACITY : 1000000);
    ck_assert(json_is_real(json_object_get(o, "fpr_target")));
    ck_assert_double_eq_tol(json_real_value(json_object_get(o, "fpr_target")), 1e-4, 1e-12);
    json_t *est = json_object_get(o, "fpr_estimated");
    ck_assert(json_is_number(est));
    ck_assert(json_number_value(est) >= 0 && json_number_value(est) < 1e-4);
    if (items >= 0)
        ck_assert_int_eq(json_integer_value(json_object_get(o, "items")), items);
    ck_assert(json_integer_value(json_object_get(o, "k")) >= 1);
    ck_assert(json_integer_value(json_object_get(o, "shards")) >= 1);
    ck_assert(json_integer_value(json_object_get(o, "bytes")) >= 4096);
    if (file)
        ck_assert_str_eq(json_string_value(json_object_get(o, "file")), file);
    else
        ck_assert(json_is_null(json_object_get(o, "file")));
    ck_assert_int_eq(json_integer_value(json_object_get(o, "generation")), 1);
    const char *at = json_string_value(json_object_get(o, "loaded_at"));
    ck_assert_ptr_nonnull(at);
    regex_t re;
    ck_assert_int_eq(
        regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", REG_EXTENDED), 0);
    int m = regexec(&re, at, 0, NULL, 0);
    regfree(&re);
    ck_assert_msg(m == 0, "loaded_at '%s' is not ISO 8601 UTC", at);
}

START_TEST(test_every_command)
{
    struct dh_daemon *d = start_std(NULL);
    struct dh_conn *c = dh_connect(d);

    DH_EXPECT(c, "PING", "PONG");
    DH_EXPECT(c, "ping", "PONG");
    DH_EXPECT(c, "PING\r", "PONG"); /* CRLF */
    /* Blank lines get no reply: the next line read is PING's. */
    ck_assert_int_eq(dh_send(c, "\n \t \n", 5, DH_TIMEOUT_MS), 0);
    DH_EXPECT(c, "PING", "PONG");

    DH_EXPECT(c, "CHECK f item-1", "YES");
    DH_EXPECT(c, "check f item-999", "YES");
    DH_EXPECT(c, "CHECK f other-1", "NO");
    DH_EXPECT(c, "CHECK f Item-1", "NO"); /* items are case-sensitive */
    DH_EXPECT(c, "  CHECK \t f   item-2  ", "YES");
    DH_EXPECT(c, "MCHECK f item-1 other-1 item-2 other-2 item-3", "YES NO YES NO YES");
    DH_EXPECT(c, "MCHECK f other-3", "NO");
    ck_assert_int_eq(dh_sendf(c, "MCHECK f item-%d other-%d\n", 42, 42), 0);
    ck_assert_str_eq(dh_read_line(c, DH_TIMEOUT_MS), "YES NO");

    DH_EXPECT(c, "ADD f new-1", "NEW");
    DH_EXPECT(c, "ADD f new-1", "EXISTS");
    DH_EXPECT(c, "CHECK f new-1", "YES");
    DH_EXPECT(c, "MADD f new-2 new-3 new-2", "NEW NEW EXISTS");
    DH_EXPECT(c, "MADD f item-5 new-4", "EXISTS NEW");
    DH_EXPECT(c, "MCHECK f new-2 new-3 new-4 new-5", "YES YES YES NO");
    DH_EXPECT(c, "CHECK dyn x", "NO");
    DH_EXPECT(c, "ADD dyn x", "NEW");
    DH_EXPECT(c, "CHECK dyn x", "YES");

    DH_EXPECT(c, "FILTERS", "f dyn");

    json_t *info = info_json(c, "INFO");
    ck_assert_str_eq(json_string_value(json_object_get(info, "version")), PACKAGE_VERSION);
    ck_assert_int_eq(json_integer_value(json_object_get(info, "threads")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(info, "connections")), 1);
    json_t *filters = json_object_get(info, "filters");
    ck_assert(json_is_array(filters));
    ck_assert_uint_eq(json_array_size(filters), 2);
    char fpath[DH_PATH_MAX];
    dh_path(d, "f.bloom", fpath);
    assert_filter_json(json_array_get(filters, 0), "f", fpath, N_KNOWN + 4);
    assert_filter_json(json_array_get(filters, 1), "dyn", NULL, 1);
    json_decref(info);

    json_t *fi = info_json(c, "INFO f");
    assert_filter_json(fi, "f", fpath, N_KNOWN + 4);
    json_decref(fi);
    fi = info_json(c, "info dyn");
    assert_filter_json(fi, "dyn", NULL, 1);
    json_decref(fi);

    /* Without admin_token, AUTH always fails; ADD from loopback needs none. */
    DH_EXPECT(c, "AUTH s3cret", "ERR auth_failed no admin_token is configured on this server");

    DH_EXPECT(c, "QUIT", "BYE");
    expect_closed(c, false, "after QUIT");
    dh_close(c);

    /* A second connection sees the ADDs of the first. */
    c = dh_connect(d);
    DH_EXPECT(c, "MCHECK f new-1 new-4", "YES YES");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- 2. every error code ---- */

static int lines_in(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* Out of descriptors (EMFILE): a daemon under a low RLIMIT_NOFILE with more
 * idle clients than descriptors must pause accepting (not spin on a listener
 * that stays readable, not write a log line per failed accept), and serve new
 * clients on both protocols once the idle ones have gone. idle clients, on
 * both ports in turn, or (http_only) all on the HTTP port; the clients it
 * cannot accept wait in its listen backlog, so each must still connect (in a
 * bounded wait: a full backlog drops the SYN and a plain connect() would hang
 * on the kernel's retries). threads workers. */
static void emfile_run(long nofile, int idle, bool http_only, int threads)
{
    struct dh_daemon *d = dh_new();
    build_known(d);
    d->nofile_limit = nofile;
    char conf[512];
    snprintf(conf, sizeof(conf),
             "threads %d\nlog_level info\nhttp_listen 127.0.0.1:0\n"
             "max_connections 1000\nidle_timeout 0\n"
             "filter f {\n    file @DIR@/f.bloom\n}\n",
             threads);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    int port = dh_port(d, 0), hport = dh_http_port(d, 0);
    char *log = dh_log_read(d);
    size_t log_before = strlen(log);
    free(log);
    int *fds = calloc((size_t)idle, sizeof(*fds));
    ck_assert_ptr_nonnull(fds);
    for (int i = 0; i < idle; i++) {
        fds[i] = dh_connect_fd(i % 2 || http_only ? hport : port);
        ck_assert_msg(fds[i] >= 0,
                      "idle client %d of %d could not connect: %s (listen backlog full?)", i + 1,
                      idle, strerror(errno));
    }
    /* Saturated: the backlog holds connections the daemon cannot accept. */
    struct timespec pause = {0, 300 * 1000000L};
    nanosleep(&pause, NULL);
    double cpu0 = dh_cpu_seconds(d->pid);
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
    double cpu = dh_cpu_seconds(d->pid) - cpu0;
    ck_assert_msg(cpu0 >= 0 && cpu < 0.3, "the daemon used %.2f s of CPU in 1 s of saturation",
                  cpu);
    log = dh_log_read(d);
    int lines = lines_in(log + (strlen(log) >= log_before ? log_before : 0));
    ck_assert_msg(lines < 20, "%d log lines in 1.3 s of saturation:\n%.2000s", lines,
                  log + log_before);
    ck_assert_msg(strstr(log, "pausing accepts"), "descriptors never ran out:\n%.2000s",
                  log + log_before);
    free(log);
    for (int i = 0; i < idle; i++)
        close(fds[i]);
    free(fds);
    /* New clients are served on both ports once descriptors are free again. */
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "PING", "PONG");
    dh_close(c);
    struct hc_conn h;
    struct hc_resp r;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", hport), 0);
    ck_assert_msg(hc_request(&h, "GET", "/healthz", NULL, NULL, 0, &r, DH_TIMEOUT_MS) == 0,
                  "no HTTP answer after the saturation");
    ck_assert_int_eq(r.status, 200);
    hc_resp_free(&r);
    hc_close(&h);
    dh_finish(d);
}

START_TEST(test_emfile_pauses_accepting)
{
    emfile_run(64, 120, false, 2);
}
END_TEST

/* Issue 15's wording: `ulimit -n 512` and 700 idle connections, all through
 * the HTTP port (HTTP connections are admitted before they send anything). */
START_TEST(test_emfile_http_port)
{
    emfile_run(512, 700, true, 2);
}
END_TEST

/* The listen backlog is the daemon's (1024), not libevent's default (128):
 * one worker, so one listening socket, out of descriptors after a few dozen
 * clients, must hold a few hundred more waiting to be accepted. */
START_TEST(test_emfile_backlog)
{
    emfile_run(64, 400, true, 1);
}
END_TEST

START_TEST(test_every_error)
{
    struct dh_daemon *d = start_std("max_line 1k\n"
                                    "max_item 16\n"
                                    "max_items 3\n"
                                    "max_connections 2\n"
                                    "admin_token \"s3cret\"\n");
    struct dh_conn *c = dh_connect(d);

    DH_EXPECT(c, "FOO bar", "ERR unknown_command unknown command 'FOO'");
    DH_EXPECT(c, "GET / HTTP/1.1", "ERR unknown_command unknown command 'GET'");
    DH_EXPECT(c, "CHECK f", "ERR wrong_arity CHECK takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 1");
    DH_EXPECT(c, "CHECK f a b", "ERR wrong_arity CHECK takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 3");
    DH_EXPECT(c, "MCHECK f",
              "ERR wrong_arity MCHECK takes at least 2 arguments (<filter> <item> [<item>...]), "
              "got 1");
    DH_EXPECT(c, "PING now", "ERR wrong_arity PING takes no arguments, got 1");
    DH_EXPECT(c, "AUTH", "ERR wrong_arity AUTH takes 1 argument (<token>), got 0");
    DH_EXPECT(c, "CHECK nosuch x", "ERR unknown_filter no such filter 'nosuch'");
    DH_EXPECT(c, "INFO nosuch", "ERR unknown_filter no such filter 'nosuch'");
    DH_EXPECT(c, "ADD nosuch x", "ERR unknown_filter no such filter 'nosuch'");
    DH_EXPECT(c, "CHECK bad\\name x",
              "ERR unknown_filter invalid filter name 'bad\\name': use " FNAME_RULE);
    DH_EXPECT(c, "CHECK f 0123456789abcdef", "NO"); /* 16 bytes: at the limit */
    DH_EXPECT(c, "CHECK f 0123456789abcdefX",
              "ERR item_too_long item 1 of 1 is 17 bytes; the limit is 16");
    DH_EXPECT(c, "MCHECK f a 0123456789abcdefX c",
              "ERR item_too_long item 2 of 3 is 17 bytes; the limit is 16");
    DH_EXPECT(c, "MCHECK f item-1 b c", "YES NO NO"); /* 3 items: at the limit */
    DH_EXPECT(c, "MCHECK f a b c d", "ERR too_many_items 4 items; the limit is 3");
    DH_EXPECT(c, "MADD f a b c d", "ERR too_many_items 4 items; the limit is 3");

    DH_EXPECT(c, "ADD f x", "ERR auth_required ADD needs AUTH <token> first on this connection");
    DH_EXPECT(c, "MADD f x y", "ERR auth_required ADD needs AUTH <token> first on this connection");
    DH_EXPECT(c, "AUTH nope", "ERR auth_failed wrong token");
    DH_EXPECT(c, "ADD f x", "ERR auth_required ADD needs AUTH <token> first on this connection");

    /* bad_request: a NUL, or a CR not right before the LF; the connection goes on. */
    ck_assert_int_eq(dh_send(c, "CHECK f a\0b\n", 12, DH_TIMEOUT_MS), 0);
    ck_assert_str_eq(dh_read_line(c, DH_TIMEOUT_MS), "ERR bad_request request contains a NUL byte");
    DH_EXPECT(c, "CHECK f a\rb", "ERR bad_request CR is allowed only right before the LF");
    DH_EXPECT(c, "PING", "PONG");

    /* line_too_long: max_line + 1 bytes without an LF are refused at once (the
     * server does not wait for the LF), then the connection is closed. A line
     * of exactly max_line bytes is fine. */
    struct dh_conn *l = dh_connect(d);
    char line[1100];
    memset(line, ' ', sizeof(line));
    memcpy(line, "PING", 4);
    line[1024] = '\n';
    ck_assert_int_eq(dh_send(l, line, 1025, DH_TIMEOUT_MS), 0);
    ck_assert_str_eq(dh_read_line(l, DH_TIMEOUT_MS), "PONG");
    memset(line, 'A', sizeof(line));
    ck_assert_int_eq(dh_send(l, line, 1025, DH_TIMEOUT_MS), 0);
    const char *r = dh_read_line(l, DH_TIMEOUT_MS);
    ck_assert_msg(r != NULL, "no reply to an over-long line");
    ck_assert_str_eq(r, "ERR line_too_long line longer than 1024 bytes");
    expect_closed(l, false, "after line_too_long");
    dh_close(l);

    /* too_many_connections (max_connections 2): c and a second one are
     * accepted (each has answered, so the server has counted them); the third
     * gets the error and is closed. */
    static const char too_many[] = "ERR too_many_connections the server is at max_connections";
    struct dh_conn *c2 = NULL;
    long long deadline = mono_ms() + DH_TIMEOUT_MS;
    int refused = 0;
    do {
        /* conn_close closes the socket before it gives the slot back, so l
         * may still count for a moment after we saw it closed: try again. */
        if (c2)
            refused++;
        dh_close(c2);
        c2 = dh_connect(d);
        dh_send(c2, "PING\n", 5, DH_TIMEOUT_MS);
        r = dh_read_line(c2, DH_TIMEOUT_MS);
    } while (r && strcmp(r, too_many) == 0 && mono_ms() < deadline);
    ck_assert_msg(r != NULL, "second connection: no reply");
    ck_assert_str_eq(r, "PONG");
    struct dh_conn *c3 = dh_connect(d);
    r = dh_read_line(c3, DH_TIMEOUT_MS);
    ck_assert_msg(r != NULL, "third connection: no reply");
    ck_assert_str_eq(r, too_many);
    expect_closed(c3, false, "the refused connection");
    dh_close(c3);
    ck_assert_int_eq(info_counter(c, "connections_rejected"), refused + 1);
    DH_EXPECT(c, "PING", "PONG");
    DH_EXPECT(c2, "PING", "PONG");
    /* Once one closes, a new connection is accepted again (the slot is freed). */
    dh_close(c2);
    deadline = mono_ms() + DH_TIMEOUT_MS;
    for (;;) {
        c3 = dh_connect(d);
        dh_send(c3, "PING\n", 5, DH_TIMEOUT_MS);
        r = dh_read_line(c3, DH_TIMEOUT_MS);
        if ((r && strcmp(r, "PONG") == 0) || mono_ms() >= deadline)
            break;
        dh_close(c3);
        usleep(20000);
    }
    ck_assert_msg(r != NULL && strcmp(r, "PONG") == 0,
                  "a closed connection's slot was not given back: %s", r ? r : "(nothing)");
    dh_close(c3);

    /* With the token, ADD works. */
    DH_EXPECT(c, "AUTH s3cret", "OK");
    DH_EXPECT(c, "ADD f x", "NEW");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- 3. 10,000 pipelined commands in one write ---- */

/* Append request i of the mix to buf and its expected reply to want. */
static void mix_request(int i, char *buf, size_t *len, const char **want)
{
    switch (i % 5) {
    case 0:
        *len += (size_t)sprintf(buf + *len, "CHECK f item-%d\n", i % N_KNOWN);
        *want = "YES";
        break;
    case 1:
        *len += (size_t)sprintf(buf + *len, "ADD f p-%d\n", i);
        *want = "NEW";
        break;
    case 2:
        *len += (size_t)sprintf(buf + *len, "PING\n");
        *want = "PONG";
        break;
    case 3:
        *len += (size_t)sprintf(buf + *len, "CHECK f p-%d\n", i - 2); /* the ADD above */
        *want = "YES";
        break;
    default:
        *len += (size_t)sprintf(buf + *len, "MCHECK f other-%d item-%d\n", i, i % N_KNOWN);
        *want = "NO YES";
        break;
    }
}

START_TEST(test_pipeline_10k)
{
    enum { N = 10000 };
    struct dh_daemon *d = start_std(NULL);
    char *buf = malloc((size_t)N * 48);
    const char **want = malloc(sizeof(*want) * N);
    ck_assert(buf && want);
    size_t len = 0;
    for (int i = 0; i < N; i++)
        mix_request(i, buf, &len, &want[i]);

    struct dh_conn *c = dh_connect(d);
    ck_assert_int_eq(dh_send(c, buf, len, DH_TIMEOUT_MS), 0);
    char **got = dh_read_lines(c, N, DH_TIMEOUT_MS);
    for (int i = 0; i < N; i++)
        if (strcmp(got[i], want[i]) != 0)
            ck_abort_msg("reply %d: got '%s', want '%s'", i + 1, got[i], want[i]);
    dh_lines_free(got);
    /* Exactly N: the next line is the reply to the next request. */
    DH_EXPECT(c, "PING", "PONG");
    dh_close(c);

    /* The same again, then a half-close: every reply arrives, then EOF. */
    len = 0;
    for (int i = 0; i < N; i++) {
        mix_request(i, buf, &len, &want[i]);
        if (i % 5 == 1)
            want[i] = "EXISTS"; /* added by the first round */
    }
    c = dh_connect(d);
    ck_assert_int_eq(dh_send(c, buf, len, DH_TIMEOUT_MS), 0);
    ck_assert_int_eq(shutdown(c->fd, SHUT_WR), 0);
    for (int i = 0; i < N; i++) {
        const char *r = dh_read_line(c, DH_TIMEOUT_MS);
        ck_assert_msg(r != NULL, "after a half-close: reply %d of %d missing", i + 1, N);
        if (strcmp(r, want[i]) != 0)
            ck_abort_msg("after a half-close: reply %d: got '%s', want '%s'", i + 1, r, want[i]);
    }
    expect_closed(c, false, "after the half-close");
    dh_close(c);
    free(buf);
    free(want);
    dh_finish(d);
}
END_TEST

/* Runs of 1 to 20 one-item CHECKs (which the server answers a few requests
 * late, after prefetching), each run ended by another kind of request: every
 * reply must still come in order, a CHECK must see an ADD before it and not
 * one after it, and the counters must be exact. */
START_TEST(test_check_runs)
{
    enum { RUNS = 400 };
    struct dh_daemon *d = start_std(NULL);
    size_t cap = (size_t)RUNS * 24 * 40;
    char *buf = malloc(cap);
    const char **want = malloc(sizeof(*want) * RUNS * 24);
    ck_assert(buf && want);
    size_t len = 0, n = 0;
    long long checks = 0, items = 0, hits = 0, commands = 0;
    for (int r = 0; r < RUNS; r++) {
        for (int i = 0; i < 1 + r % 20; i++) {
            bool known = (r + i) % 3 != 0;
            if (known)
                len += (size_t)sprintf(buf + len, "CHECK f item-%d\n", (r * 7 + i) % N_KNOWN);
            else
                len += (size_t)sprintf(buf + len, "check f absent-%d-%d\n", r, i);
            want[n++] = known ? "YES" : "NO";
            checks++, items++, hits += known, commands++;
        }
        switch (r % 7) {
        case 0:
            len += (size_t)sprintf(buf + len, "MCHECK f absent-%d item-%d\n", r, r % N_KNOWN);
            want[n++] = "NO YES";
            checks++, items += 2, hits++, commands++;
            break;
        case 1:
            len += (size_t)sprintf(buf + len, "CHECK nope item-1\n");
            want[n++] = "ERR unknown_filter";
            commands++;
            break;
        case 2:
            len += (size_t)sprintf(buf + len,
                                   "CHECK dyn run-%d\nADD dyn run-%d\nCHECK dyn run-%d\n", r, r, r);
            want[n++] = "NO";
            want[n++] = "NEW";
            want[n++] = "YES";
            checks += 2, items += 2, hits++, commands += 3;
            break;
        case 3:
            len += (size_t)sprintf(buf + len, "PING\n");
            want[n++] = "PONG";
            commands++;
            break;
        case 4:
            len += (size_t)sprintf(buf + len, "\n"); /* no reply */
            break;
        case 5:
            len += (size_t)sprintf(buf + len, "FOO bar\n");
            want[n++] = "ERR unknown_command";
            break;
        default:
            len += (size_t)sprintf(buf + len, "CHECK f\n");
            want[n++] = "ERR wrong_arity";
            break;
        }
    }
    ck_assert(len < cap);
    struct dh_conn *c = dh_connect(d);
    ck_assert_int_eq(dh_send(c, buf, len, DH_TIMEOUT_MS), 0);
    char **got = dh_read_lines(c, n, DH_TIMEOUT_MS);
    for (size_t i = 0; i < n; i++)
        if (strncmp(got[i], want[i], strlen(want[i])) != 0 ||
            (strncmp(want[i], "ERR", 3) != 0 && strlen(got[i]) != strlen(want[i])))
            ck_abort_msg("reply %zu: got '%s', want '%s'", i + 1, got[i], want[i]);
    dh_lines_free(got);
    DH_EXPECT(c, "PING", "PONG");
    commands++;
    json_t *j = info_json(c, "INFO");
    commands++;
    ck_assert_int_eq(json_integer_value(json_object_get(j, "commands")), commands);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "check_requests")), checks);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "items_checked")), items);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "items_hit")), hits);
    json_decref(j);
    dh_close(c);
    free(buf);
    free(want);
    dh_finish(d);
}
END_TEST

/* ---- 4. a line in 1-byte writes ---- */

START_TEST(test_tiny_writes)
{
    struct dh_daemon *d = start_std(NULL);
    struct dh_conn *c = dh_connect(d);
    static const char req[] = "MCHECK f item-1 other-1 item-7\r\n"
                              "ADD f tiny-1\n"
                              "CHECK  f\ttiny-1\n"
                              "\n"
                              "PING\r\n";
    for (size_t i = 0; i < sizeof(req) - 1; i++) {
        ck_assert_int_eq(send(c->fd, req + i, 1, MSG_NOSIGNAL), 1);
        if (i % 8 == 0)
            usleep(1000); /* let some bytes arrive alone */
    }
    static const char *const want[] = {"YES NO YES", "NEW", "YES", "PONG"};
    for (size_t i = 0; i < 4; i++) {
        const char *r = dh_read_line(c, DH_TIMEOUT_MS);
        ck_assert_msg(r != NULL, "reply %zu missing", i + 1);
        ck_assert_str_eq(r, want[i]);
    }
    DH_EXPECT(c, "PING", "PONG");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- 5. over-long lines ---- */

START_TEST(test_long_line)
{
    struct dh_daemon *d = start_std(NULL); /* max_line 64k */
    enum { MAX_LINE = 65536, BIG = 4 << 20 };
    char *big = malloc(BIG);
    ck_assert_ptr_nonnull(big);

    /* Exactly max_line bytes, then LF: accepted. One more: refused. */
    struct dh_conn *c = dh_connect(d);
    memset(big, ' ', MAX_LINE + 1);
    memcpy(big + 100, "PING", 4);
    big[MAX_LINE] = '\n';
    ck_assert_int_eq(dh_send(c, big, MAX_LINE + 1, DH_TIMEOUT_MS), 0);
    ck_assert_str_eq(dh_read_line(c, DH_TIMEOUT_MS), "PONG");
    big[MAX_LINE] = ' ';
    big[MAX_LINE + 1] = '\n';
    ck_assert_int_eq(dh_send(c, big, MAX_LINE + 2, DH_TIMEOUT_MS), 0);
    snprintf(msgbuf, sizeof(msgbuf), "ERR line_too_long line longer than %d bytes", MAX_LINE);
    const char *r = dh_read_line(c, DH_TIMEOUT_MS);
    ck_assert_msg(r != NULL, "no reply to a line of max_line + 1 bytes");
    ck_assert_str_eq(r, msgbuf);
    expect_closed(c, true, "after line_too_long");
    dh_close(c);

    /* Several clients each send 4 MB without an LF: each gets the error and is
     * closed (they may see a reset: the server closes with their bytes
     * unread), and the daemon's memory does not follow the bytes sent. */
    memset(big, 'x', BIG);
    struct dh_conn *cs[8];
    for (int i = 0; i < 8; i++) {
        cs[i] = dh_connect(d);
        dh_send(cs[i], big, BIG, 3000); /* stops when the server closes */
    }
    for (int i = 0; i < 8; i++) {
        r = dh_read_line(cs[i], DH_TIMEOUT_MS);
        ck_assert_msg(r != NULL, "client %d: no reply to an over-long line (%s)", i,
                      cs[i]->err   ? strerror(cs[i]->err)
                      : cs[i]->eof ? "EOF"
                                   : "timeout");
        ck_assert_str_eq(r, msgbuf);
        expect_closed(cs[i], true, "after line_too_long");
        dh_close(cs[i]);
    }
    long rss = dh_rss_kib(d->pid);
    fprintf(stderr, "test_long_line: daemon RSS %ld KiB after 8 x 4 MB lines\n", rss);
    ck_assert_msg(rss > 0 && rss < 200 * 1024, "daemon RSS %ld KiB after over-long lines", rss);
    dh_expect_ping(d);
    free(big);
    dh_finish(d);
}
END_TEST

/* ---- 6. binary garbage ---- */

static uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

START_TEST(test_garbage)
{
    enum { SIZE = 1 << 20 };
    struct dh_daemon *d = start_std(NULL);
    unsigned char *junk = malloc(SIZE);
    ck_assert_ptr_nonnull(junk);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < SIZE; i += 8) {
        uint64_t v = xorshift64(&seed);
        memcpy(junk + i, &v, 8);
    }
    struct dh_conn *c = dh_connect(d);
    ck_assert_int_eq(dh_send(c, junk, SIZE, DH_TIMEOUT_MS), 0);
    /* End the last partial line, then PING: every line before PONG is an error. */
    ck_assert_int_eq(dh_send(c, "\nPING\n", 6, DH_TIMEOUT_MS), 0);
    size_t errors = 0;
    for (;;) {
        const char *r = dh_read_line(c, DH_TIMEOUT_MS);
        ck_assert_msg(r != NULL, "no PONG after the garbage (%zu error replies, %s)", errors,
                      c->eof ? "closed" : "timeout");
        if (strcmp(r, "PONG") == 0)
            break;
        ck_assert_msg(strncmp(r, "ERR ", 4) == 0, "a reply to garbage is not an error: %.200s", r);
        errors++;
    }
    ck_assert_uint_gt(errors, 1000); /* ~4000 lines in 1 MB of random bytes */
    dh_close(c);

    /* The same garbage from several connections at once, closed unread. */
    for (int k = 0; k < 4; k++) {
        c = dh_connect(d);
        dh_send(c, junk, SIZE, DH_TIMEOUT_MS);
        dh_close(c);
    }
    ck_assert(dh_alive(d));
    c = dh_connect(d);
    DH_EXPECT(c, "PING", "PONG");
    DH_EXPECT(c, "CHECK f item-3", "YES");
    dh_close(c);
    free(junk);
    dh_finish(d);
}
END_TEST

/* ---- 7. a client that never reads ---- */

START_TEST(test_slow_reader)
{
    struct dh_daemon *d = start_std("idle_timeout 0\n");
    /* One request: MCHECK f x x ... x (500 items), reply "NO NO ... NO". */
    enum { ITEMS = 500, TOTAL = 50 << 20 };
    char req[16 + 2 * ITEMS];
    size_t rl = (size_t)sprintf(req, "MCHECK f");
    for (int i = 0; i < ITEMS; i++)
        rl += (size_t)sprintf(req + rl, " x");
    req[rl++] = '\n';
    char want[3 * ITEMS + 1];
    size_t wl = 0;
    for (int i = 0; i < ITEMS; i++)
        wl += (size_t)sprintf(want + wl, i ? " NO" : "NO");

    enum { CHUNK = 64 * 1024 };
    /* Whole requests back to back; a send starts at most rl - 1 bytes in. */
    size_t chunk_len = CHUNK + 2 * rl;
    char *chunk = malloc(chunk_len);
    ck_assert_ptr_nonnull(chunk);
    for (size_t off = 0; off + rl <= chunk_len; off += rl)
        memcpy(chunk + off, req, rl);

    /* The slow client: non-blocking, sends until send() stays blocked. */
    struct dh_conn *slow = dh_connect(d);
    int fl = fcntl(slow->fd, F_GETFL);
    ck_assert_int_eq(fcntl(slow->fd, F_SETFL, fl | O_NONBLOCK), 0);
    size_t sent = 0;
    bool blocked = false;
    while (sent < TOTAL) {
        size_t at = sent % rl; /* keep the stream a sequence of whole requests */
        ssize_t n = send(slow->fd, chunk + at, CHUNK, MSG_NOSIGNAL);
        if (n > 0) {
            sent += (size_t)n;
            continue;
        }
        ck_assert_msg(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
                      "send to the daemon failed: %s", strerror(errno));
        /* Blocked: is the daemon still reading? Give it 2 s to make room. */
        struct pollfd pfd = {slow->fd, POLLOUT, 0};
        if (poll(&pfd, 1, 2000) == 0) {
            blocked = true;
            break;
        }
    }
    ck_assert_msg(blocked, "sent all %d bytes: the daemon never stopped reading", TOTAL);

    /* Meanwhile another client is served. */
    struct dh_conn *c = dh_connect(d);
    for (int i = 0; i < 20; i++) {
        DH_EXPECT(c, "PING", "PONG");
        DH_EXPECT(c, "MCHECK f item-1 x", "YES NO");
    }
    long rss = dh_rss_kib(d->pid);
    fprintf(stderr, "test_slow_reader: send() blocked after %zu bytes; daemon RSS %ld KiB\n", sent,
            rss);
    ck_assert_msg(rss > 0 && rss < 200 * 1024,
                  "daemon RSS %ld KiB with a client not reading (sent %zu bytes)", rss, sent);
    /* The daemon says it stopped reading that client (not that it was slow). */
    ck_assert_int_ge(info_counter(c, "output_pauses"), 1);

    /* The slow client now finishes its last request and reads everything: each
     * request it sent gets its reply, in order, and the connection works. */
    ck_assert_int_eq(fcntl(slow->fd, F_SETFL, fl), 0);
    size_t n_req = (sent + rl - 1) / rl;
    size_t rest = n_req * rl - sent;
    ck_assert_int_eq(dh_send(slow, req + (rl - rest), rest, 30000), 0);
    for (size_t i = 0; i < n_req; i++) {
        const char *r = dh_read_line(slow, DH_TIMEOUT_MS);
        ck_assert_msg(r != NULL, "slow client: reply %zu of %zu missing", i + 1, n_req);
        if (strcmp(r, want) != 0)
            ck_abort_msg("slow client: reply %zu of %zu is wrong: %.100s", i + 1, n_req, r);
    }
    DH_EXPECT(slow, "PING", "PONG");
    dh_close(slow);
    DH_EXPECT(c, "PING", "PONG");
    dh_close(c);
    free(chunk);
    dh_finish(d);
}
END_TEST

/* ---- 8. two clients adding and checking at once ---- */

enum { CC_ITEMS = 20000, CC_BATCH = 100 };

struct cc_shared {
    int port;
    _Atomic int acked[2]; /* items of each thread the server has acknowledged */
    char fail[2][512];    /* first failure of each thread; "" if none */
};

struct cc_arg {
    struct cc_shared *sh;
    int me;
};

/* MCHECK dyn with the other thread's items [from, to); all must be YES. */
static int cc_check(struct dh_conn *c, int other, int from, int to, char *fail)
{
    char *req = malloc(16 + (size_t)(to - from) * 16);
    size_t n = (size_t)sprintf(req, "MCHECK dyn");
    for (int i = from; i < to; i++)
        n += (size_t)sprintf(req + n, " t%d-%d", other, i);
    req[n++] = '\n';
    int rc = dh_send(c, req, n, DH_TIMEOUT_MS);
    free(req);
    const char *r = rc == 0 ? dh_read_line(c, DH_TIMEOUT_MS) : NULL;
    if (!r) {
        snprintf(fail, 512, "MCHECK: no reply");
        return -1;
    }
    const char *p = r;
    for (int i = from; i < to; i++) {
        if (strncmp(p, "YES", 3) != 0 || (p[3] != ' ' && p[3] != '\0')) {
            snprintf(fail, 512, "false negative: t%d-%d (acknowledged) checked %.8s", other, i, p);
            return -1;
        }
        p += p[3] ? 4 : 3;
    }
    if (*p) {
        snprintf(fail, 512, "MCHECK: extra words: %.40s", p);
        return -1;
    }
    return 0;
}

static void *cc_thread(void *arg)
{
    struct cc_arg *a = arg;
    struct cc_shared *sh = a->sh;
    int me = a->me, other = 1 - me;
    char *fail = sh->fail[me];
    struct dh_conn *c = dh_connect_port(sh->port, fail, 512);
    if (!c)
        return NULL;
    char *req = malloc(16 + CC_BATCH * 16);
    for (int b = 0; b < CC_ITEMS / CC_BATCH && !fail[0]; b++) {
        size_t n = (size_t)sprintf(req, "MADD dyn");
        for (int i = b * CC_BATCH; i < (b + 1) * CC_BATCH; i++)
            n += (size_t)sprintf(req + n, " t%d-%d", me, i);
        req[n++] = '\n';
        const char *r =
            dh_send(c, req, n, DH_TIMEOUT_MS) == 0 ? dh_read_line(c, DH_TIMEOUT_MS) : NULL;
        if (!r) {
            snprintf(fail, 512, "MADD batch %d: no reply", b);
            break;
        }
        size_t words = 1;
        for (const char *p = r; *p; p++)
            words += *p == ' ';
        if (words != CC_BATCH || (strncmp(r, "NEW", 3) != 0 && strncmp(r, "EXISTS", 6) != 0)) {
            snprintf(fail, 512, "MADD batch %d: bad reply %.60s", b, r);
            break;
        }
        atomic_store_explicit(&sh->acked[me], (b + 1) * CC_BATCH, memory_order_release);
        /* The other's newest acknowledged batch, and a window further back. */
        int seen = atomic_load_explicit(&sh->acked[other], memory_order_acquire);
        if (seen > 0) {
            int from = seen > CC_BATCH ? seen - CC_BATCH : 0;
            if (cc_check(c, other, from, seen, fail) != 0)
                break;
            int back = (b * 7919) % seen;
            int to = back + 50 < seen ? back + 50 : seen;
            if (cc_check(c, other, back, to, fail) != 0)
                break;
        }
    }
    /* At the end, every item of both threads that was acknowledged. */
    for (int who = 0; who < 2 && !fail[0]; who++) {
        int all = atomic_load_explicit(&sh->acked[who], memory_order_acquire);
        for (int i = 0; i < all && !fail[0]; i += 1000)
            cc_check(c, who, i, i + 1000 < all ? i + 1000 : all, fail);
    }
    free(req);
    dh_close(c);
    return NULL;
}

START_TEST(test_concurrent_add_check)
{
    struct dh_daemon *d = start_std("max_items 2000\n");
    struct cc_shared sh = {.port = d->port};
    struct cc_arg args[2] = {{&sh, 0}, {&sh, 1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, cc_thread, &args[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    ck_assert_msg(sh.fail[0][0] == '\0', "thread 0: %s", sh.fail[0]);
    ck_assert_msg(sh.fail[1][0] == '\0', "thread 1: %s", sh.fail[1]);
    ck_assert_int_eq(sh.acked[0], CC_ITEMS);
    ck_assert_int_eq(sh.acked[1], CC_ITEMS);
    dh_finish(d);
}
END_TEST

/* ---- 9. AUTH ---- */

START_TEST(test_auth)
{
    struct dh_daemon *d = start_std("admin_token \"s3cret\"\n");
    struct dh_conn *c = dh_connect(d);
    static const char need[] = "ERR auth_required ADD needs AUTH <token> first on this connection";
    DH_EXPECT(c, "CHECK f item-1", "YES"); /* reads never need it */
    DH_EXPECT(c, "ADD f a1", need);
    DH_EXPECT(c, "MADD f a1 a2", need);
    DH_EXPECT(c, "AUTH wrong", "ERR auth_failed wrong token");
    DH_EXPECT(c, "AUTH s3cre", "ERR auth_failed wrong token");
    DH_EXPECT(c, "AUTH s3crets", "ERR auth_failed wrong token");
    DH_EXPECT(c, "AUTH S3CRET", "ERR auth_failed wrong token"); /* case-sensitive */
    DH_EXPECT(c, "ADD f a1", need);
    DH_EXPECT(c, "auth s3cret", "OK"); /* the command word is not case-sensitive */
    DH_EXPECT(c, "ADD f a1", "NEW");
    DH_EXPECT(c, "MADD f a1 a2", "EXISTS NEW");
    DH_EXPECT(c, "CHECK f a2", "YES");

    /* AUTH is per connection. */
    struct dh_conn *c2 = dh_connect(d);
    DH_EXPECT(c2, "CHECK f a1", "YES");
    DH_EXPECT(c2, "ADD f a3", need);
    DH_EXPECT(c2, "AUTH s3cret", "OK");
    DH_EXPECT(c2, "ADD f a3", "NEW");
    dh_close(c2);
    dh_close(c);
    dh_finish(d);

    /* Without a token, a loopback client may ADD without AUTH. */
    d = start_std(NULL);
    c = dh_connect(d);
    DH_EXPECT(c, "ADD f a1", "NEW");
    DH_EXPECT(c, "MADD dyn a1 a1", "NEW EXISTS");
    DH_EXPECT(c, "AUTH s3cret", "ERR auth_failed no admin_token is configured on this server");
    DH_EXPECT(c, "ADD f a2", "NEW");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- 10. SIGTERM with requests in flight ----
 * The daemon is frozen (SIGSTOP) while the clients send, so every request is
 * surely in flight, sent but unread, when SIGTERM arrives. */

START_TEST(test_sigterm_in_flight)
{
    enum { N = 100000, CLIENTS = 3 };
    struct dh_daemon *d = start_std("shutdown_timeout 5\n");
    char *buf = malloc((size_t)N * 48);
    const char **want = malloc(sizeof(*want) * N);
    ck_assert(buf && want);
    size_t len = 0;
    for (int i = 0; i < N; i++) {
        if (i % 2) {
            len += (size_t)sprintf(buf + len, "CHECK f item-%d\n", i % N_KNOWN);
            want[i] = "YES";
        } else {
            len += (size_t)sprintf(buf + len, "PING\n");
            want[i] = "PONG";
        }
    }
    struct dh_conn *c[CLIENTS];
    for (int k = 0; k < CLIENTS; k++)
        c[k] = dh_connect(d);
    for (int k = 0; k < CLIENTS; k++)
        DH_EXPECT(c[k], "PING", "PONG"); /* accepted before the signal */
    ck_assert_int_eq(dh_freeze(d), 0);
    for (int k = 0; k < CLIENTS; k++)
        ck_assert_int_eq(dh_send(c[k], buf, len, DH_TIMEOUT_MS), 0);
    ck_assert_int_eq(dh_signal(d, SIGTERM), 0);
    ck_assert_int_eq(dh_thaw(d), 0);
    for (int k = 0; k < CLIENTS; k++) {
        for (int i = 0; i < N; i++) {
            const char *r = dh_read_line(c[k], DH_TIMEOUT_MS);
            ck_assert_msg(r != NULL, "client %d: reply %d of %d lost at shutdown (%s)", k, i + 1, N,
                          c[k]->eof   ? "closed"
                          : c[k]->err ? strerror(c[k]->err)
                                      : "timeout");
            if (strcmp(r, want[i]) != 0)
                ck_abort_msg("client %d: reply %d: got '%s', want '%s'", k, i + 1, r, want[i]);
        }
        expect_closed(c[k], false, "at shutdown");
        dh_close(c[k]);
    }
    int st = dh_wait_exit(d, 5000 + DH_EXIT_TIMEOUT_MS);
    ck_assert_msg(st != -1, "the daemon did not exit after SIGTERM");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status 0x%x", st);
    dh_assert_log_clean(d);
    ck_assert(dh_log_contains(d, "stopped"));
    free(buf);
    free(want);
    dh_free(d);
}
END_TEST

/* A client that does not read its replies does not hold up the shutdown
 * past shutdown_timeout; the daemon still exits 0. */
START_TEST(test_sigterm_stuck_client)
{
    struct dh_daemon *d = start_std("shutdown_timeout 1\nidle_timeout 0\n");
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "PING", "PONG");
    enum { CHUNK = 1 << 20 };
    char *chunk = malloc(CHUNK);
    for (size_t i = 0; i + 5 <= CHUNK; i += 5)
        memcpy(chunk + i, "PING\n", 5);
    int fl = fcntl(c->fd, F_GETFL);
    fcntl(c->fd, F_SETFL, fl | O_NONBLOCK);
    for (int i = 0; i < 64; i++) {
        ssize_t n = send(c->fd, chunk, CHUNK - CHUNK % 5, MSG_NOSIGNAL);
        if (n < 0) {
            struct pollfd pfd = {c->fd, POLLOUT, 0};
            if (poll(&pfd, 1, 1000) == 0)
                break;
        }
    }
    ck_assert_int_eq(dh_signal(d, SIGTERM), 0);
    int st = dh_wait_exit(d, 1000 + DH_EXIT_TIMEOUT_MS);
    ck_assert_msg(st != -1, "the daemon did not exit with a stuck client");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status 0x%x", st);
    dh_assert_log_clean(d);
    dh_close(c);
    free(chunk);
    dh_free(d);
}
END_TEST

/* ---- 11. bad configs and filter files ---- */

/* Run `bloomgated --check-config -c conf`: its status; its output in out. */
static int check_config(struct dh_daemon *d, char **out)
{
    char outp[DH_PATH_MAX];
    dh_path(d, "check-config.out", outp);
    const char *argv[] = {dh_daemon_path(), "--check-config", "-c", d->conf, NULL};
    int st = dh_run(argv, outp, DH_TIMEOUT_MS);
    ck_assert_msg(st != -1, "--check-config timed out");
    FILE *f = fopen(outp, "r");
    ck_assert_ptr_nonnull(f);
    static char text[8192];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    *out = text;
    return st;
}

/* Start a daemon that must refuse to start: it exits non-zero, never says
 * ready, and its log holds `want`. */
static void expect_start_fails(struct dh_daemon *d, const char *want)
{
    dh_spawn(d, NULL);
    int st = dh_wait_exit(d, DH_EXIT_TIMEOUT_MS);
    char *log = dh_log_read(d);
    ck_assert_msg(st != -1, "bloomgated started with a bad config; its log:\n%s", log);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0, "exit status 0x%x; log:\n%s", st, log);
    ck_assert_msg(strstr(log, want) != NULL, "log lacks '%s':\n%s", want, log);
    ck_assert_msg(strstr(log, " ready: ") == NULL, "it said ready:\n%s", log);
    free(log);
    dh_assert_log_clean(d);
}

START_TEST(test_bad_config)
{
    struct dh_daemon *d = dh_new();
    char *out;

    /* A bad value on line 3: --check-config and start-up both say file:line. */
    static const char bad[] = "listen 127.0.0.1:0\nhttp_listen off\nmax_line lots\nthreads 1\n";
    dh_write_file(d, "bloomgate.conf", bad, sizeof(bad) - 1);
    int st = check_config(d, &out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--check-config: status 0x%x", st);
    snprintf(msgbuf, sizeof(msgbuf), "bloomgated: %s:3: max_line", d->conf);
    ck_assert_msg(strncmp(out, msgbuf, strlen(msgbuf)) == 0, "want '%s...', got: %s", msgbuf, out);
    snprintf(msgbuf, sizeof(msgbuf), "%s:3: max_line", d->conf);
    expect_start_fails(d, msgbuf);

    /* An unknown directive, a missing brace: the line is named. */
    static const char bad2[] = "threads 1\n\nfilter f {\n    capacity 1000\n    colour red\n}\n";
    dh_write_file(d, "bloomgate.conf", bad2, sizeof(bad2) - 1);
    st = check_config(d, &out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--check-config: status 0x%x", st);
    snprintf(msgbuf, sizeof(msgbuf), "%s:5: ", d->conf);
    ck_assert_msg(strstr(out, msgbuf) != NULL, "want '%s' in: %s", msgbuf, out);
    expect_start_fails(d, msgbuf);

    /* A missing filter file without a capacity. */
    char missing[DH_PATH_MAX];
    dh_path(d, "missing.bloom", missing);
    dh_write_config(d, "threads 1\nfilter lost {\n    file @DIR@/missing.bloom\n}\n");
    st = check_config(d, &out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--check-config: status 0x%x", st);
    ck_assert_msg(strstr(out, "filter lost") && strstr(out, missing), "got: %s", out);
    snprintf(msgbuf, sizeof(msgbuf), "filter lost: file %s: No such file or directory", missing);
    expect_start_fails(d, msgbuf);

    /* Issue 15: a filter with no file that is too large to create (87 TB, over
     * the 1 TiB limit) passed --check-config and failed at start-up. Both
     * run the same sizing check now, and say the same. */
    dh_write_config(d, "threads 1\nfilter huge {\n    capacity 4398046511104\n"
                       "    fpr 1e-12\n    journal off\n}\n");
    st = check_config(d, &out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--check-config: status 0x%x: %s", st,
                  out);
    static const char too_big[] = "filter huge: capacity 4398046511104 at fpr 1e-12: filter would "
                                  "take";
    ck_assert_msg(strstr(out, too_big) && strstr(out, "over the limit of 1099511627776"),
                  "got: %s", out);
    expect_start_fails(d, too_big);

    /* Not a filter file at all. */
    dh_write_file(d, "junk.bloom", "this is not a filter\n", 21);
    dh_write_config(d, "threads 1\nfilter junk {\n    file @DIR@/junk.bloom\n}\n");
    st = check_config(d, &out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--check-config: status 0x%x", st);
    ck_assert_msg(strstr(out, "filter junk") != NULL, "got: %s", out);
    expect_start_fails(d, "filter junk: ");

    /* A filter whose payload was damaged after it was written: the header is
     * sound, the shard checksum is not; it must never be served. */
    build_known(d);
    char fpath[DH_PATH_MAX];
    dh_path(d, "f.bloom", fpath);
    FILE *f = fopen(fpath, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 4096 + 100, SEEK_SET), 0);
    int byte = fgetc(f);
    ck_assert_int_ne(byte, EOF);
    ck_assert_int_eq(fseek(f, 4096 + 100, SEEK_SET), 0);
    fputc(byte ^ 0x10, f);
    ck_assert_int_eq(fclose(f), 0);
    dh_write_config(d, "threads 1\nfilter f {\n    file @DIR@/f.bloom\n}\n");
    snprintf(msgbuf, sizeof(msgbuf), "filter f: %s", fpath);
    expect_start_fails(d, msgbuf);

    /* A missing file with a capacity starts empty; a good config checks out. */
    dh_write_config(d, "threads 1\nfilter lost {\n    file @DIR@/missing.bloom\n"
                       "    capacity 1000\n}\n");
    st = check_config(d, &out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--check-config: status 0x%x: %s", st,
                  out);
    snprintf(msgbuf, sizeof(msgbuf), "%s: ok\n", d->conf);
    ck_assert_str_eq(out, msgbuf);
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CHECK lost x", "NO");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* Usage errors exit 2; --version and --help exit 0. */
START_TEST(test_command_line)
{
    struct dh_daemon *d = dh_new();
    char outp[DH_PATH_MAX];
    dh_path(d, "out", outp);
    const char *bin = dh_daemon_path();
    const char *bogus[] = {bin, "--bogus", NULL};
    const char *extra[] = {bin, "extra-arg", NULL};
    const char *level[] = {bin, "--log-level", "loud", "-c", "/nonexistent", NULL};
    const char *version[] = {bin, "--version", NULL};
    const char *help[] = {bin, "--help", NULL};
    int st = dh_run(bogus, outp, DH_TIMEOUT_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--bogus: status 0x%x", st);
    st = dh_run(extra, outp, DH_TIMEOUT_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "extra argument: status 0x%x", st);
    st = dh_run(level, outp, DH_TIMEOUT_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--log-level loud: status 0x%x", st);
    st = dh_run(version, outp, DH_TIMEOUT_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--version: status 0x%x", st);
    st = dh_run(help, outp, DH_TIMEOUT_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--help: status 0x%x", st);
    dh_free(d);
}
END_TEST

/* A port another daemon holds: start-up fails naming the address. The
 * pidfile is written at start and removed at exit; SIGINT stops like SIGTERM. */
START_TEST(test_port_in_use_pidfile_sigint)
{
    struct dh_daemon *a = start_std("pidfile @DIR@/bloomgated.pid\n");
    char pidpath[DH_PATH_MAX];
    dh_path(a, "bloomgated.pid", pidpath);
    FILE *f = fopen(pidpath, "r");
    ck_assert_msg(f != NULL, "no pidfile %s", pidpath);
    int pid = 0;
    ck_assert_int_eq(fscanf(f, "%d", &pid), 1);
    fclose(f);
    ck_assert_int_eq(pid, a->pid);

    struct dh_daemon *b = dh_new();
    char body[256];
    snprintf(body, sizeof(body), "listen 127.0.0.1:%d\nthreads 1\n", a->port);
    dh_write_config(b, body);
    snprintf(msgbuf, sizeof(msgbuf), "listen 127.0.0.1:%d: Address already in use", a->port);
    expect_start_fails(b, msgbuf);
    dh_free(b);

    dh_expect_ping(a);
    ck_assert_int_eq(dh_signal(a, SIGINT), 0);
    dh_expect_exit0(a, "SIGINT");
    ck_assert_msg(access(pidpath, F_OK) != 0, "pidfile %s left behind", pidpath);
    dh_free(a);
}
END_TEST

/* Two listeners, the second on ::1 when this host has it: each answers, and a
 * client on ::1 counts as loopback (may ADD without a token). */
/* Connections are spread evenly over the workers whatever SO_REUSEPORT's
 * address hash says: 16 connections opened one after another (each answers
 * before the next opens) end up 8 and 8 on two workers. By the hash alone an
 * even split happens one time in five. */
START_TEST(test_balanced_workers)
{
    struct dh_daemon *d = start_std(NULL);
    enum { N = 16 };
    struct dh_conn *c[N];
    for (int i = 0; i < N; i++) {
        c[i] = dh_connect(d);
        DH_EXPECT(c[i], "PING", "PONG");
    }
    json_t *j = info_json(c[0], "INFO");
    json_t *per = json_object_get(j, "worker_connections");
    ck_assert_msg(json_array_size(per) == 2, "INFO worker_connections: %zu entries",
                  json_array_size(per));
    long long a = json_integer_value(json_array_get(per, 0)),
              b = json_integer_value(json_array_get(per, 1));
    ck_assert_msg(a == N / 2 && b == N / 2, "connections per worker: %lld and %lld", a, b);
    json_decref(j);
    /* Every connection is served where it landed. */
    for (int i = 0; i < N; i++) {
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "ADD dyn spread-%d", i);
        DH_EXPECT(c[i], cmd, "NEW");
        snprintf(cmd, sizeof(cmd), "CHECK dyn spread-%d", i);
        DH_EXPECT(c[(i + 1) % N], cmd, "YES");
    }
    for (int i = 0; i < N; i++)
        dh_close(c[i]);
    dh_finish(d);
}
END_TEST

/* A raw client socket; with rcvbuf, a small receive buffer, so that the
 * server's replies back up in its output while the test is not reading. */
static int raw_connect_small(struct dh_daemon *d, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rcvbuf)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)dh_port(d, 0))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

static void send_all_fd(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        ck_assert_msg(w > 0, "send: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

/* Read until EOF; the bytes (NUL-terminated), or abort on a reset. */
static char *read_to_eof(int fd, size_t *len)
{
    size_t cap = 1 << 20, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (cap - n < 65536)
            b = realloc(b, cap *= 2);
        ssize_t k = recv(fd, b + n, cap - n - 1, 0);
        ck_assert_msg(k >= 0, "after %zu bytes: %s", n, strerror(errno));
        if (k == 0)
            break;
        n += (size_t)k;
    }
    b[n] = '\0';
    *len = n;
    return b;
}

/* After QUIT the server writes its replies and closes; what the client sends
 * meanwhile is read and dropped, not buffered (until max_line refuses it) nor
 * left unread (closing a socket with unread input resets it, and the kernel
 * then throws away the replies it had not delivered). */
START_TEST(test_quit_with_input_after_it)
{
    struct dh_daemon *d = start_std("max_line 4k\nmax_item 1k\nmax_output 64M\n");
    int fd = raw_connect_small(d, 4096);
    enum { N = 3000 };
    char *batch = malloc(N * 16 + 16), *p = batch;
    for (int i = 0; i < N; i++)
        p += sprintf(p, "INFO f\n");
    p += sprintf(p, "QUIT\n");
    send_all_fd(fd, batch, (size_t)(p - batch));
    free(batch);
    usleep(200 * 1000); /* the server has read QUIT and is writing */
    char junk[4096];
    memset(junk, 'X', sizeof(junk));
    for (int i = 0; i < 16; i++) /* 64 KB without an LF: far past max_line */
        send_all_fd(fd, junk, sizeof(junk));
    size_t len;
    char *all = read_to_eof(fd, &len);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += all[i] == '\n';
    ck_assert_msg(lines == N + 1, "%zu replies of %d", lines, N + 1);
    ck_assert_msg(len >= 4 && strcmp(all + len - 4, "BYE\n") == 0, "does not end in BYE");
    ck_assert_ptr_null(strstr(all, "ERR"));
    free(all);
    close(fd);
    dh_finish(d);
}
END_TEST

/* idle_timeout is about a silent client, not a slow reader: a client that
 * has sent everything and reads its replies slowly gets all of them. */
START_TEST(test_slow_reader_not_cut_by_idle_timeout)
{
    struct dh_daemon *d = start_std("idle_timeout 1\nmax_output 64M\n");
    int fd = raw_connect_small(d, 0);
    enum { N = 30000 }; /* ~12 MB of replies: more than the socket buffers hold */
    char *batch = malloc((size_t)N * 16), *p = batch;
    for (int i = 0; i < N; i++)
        p += sprintf(p, "INFO f\n");
    send_all_fd(fd, batch, (size_t)(p - batch));
    free(batch);
    /* Read slowly (at most 64 KB per 10 ms: 2 s or more for the lot), past
     * the 1 s idle timeout, while the client sends nothing. */
    size_t lines = 0, got = 0;
    char buf[65536];
    long long t0 = mono_ms();
    while (lines < N) {
        ssize_t k = recv(fd, buf, sizeof(buf), 0);
        ck_assert_msg(k > 0, "cut after %zu replies (%zu bytes, %lld ms): %s", lines, got,
                      mono_ms() - t0, k == 0 ? "EOF" : strerror(errno));
        got += (size_t)k;
        for (ssize_t i = 0; i < k; i++)
            lines += buf[i] == '\n';
        usleep(10000);
    }
    ck_assert_msg(mono_ms() - t0 > 1100, "read in %lld ms: too fast to test", mono_ms() - t0);
    close(fd);
    dh_finish(d);
}
END_TEST

START_TEST(test_two_listeners)
{
    int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    bool v6 = probe >= 0 && bind(probe, (struct sockaddr *)&a6, sizeof(a6)) == 0;
    if (probe >= 0)
        close(probe);
    if (!v6)
        fprintf(stderr, "test_two_listeners: no ::1 on this host; two IPv4 listeners instead\n");
    const char *ip2 = v6 ? "::1" : "127.0.0.1";
    struct dh_daemon *d = start_std(v6 ? "listen 127.0.0.1:0\nlisten [::1]:0\n"
                                       : "listen 127.0.0.1:0\nlisten 127.0.0.1:0\n");
    int port2 = dh_port(d, 1);
    ck_assert_int_gt(port2, 0);
    int fd = dh_connect_to(ip2, port2);
    ck_assert_msg(fd >= 0, "cannot connect to %s port %d: %s", ip2, port2, strerror(errno));
    struct dh_conn *c2 = dh_conn_wrap(fd, d);
    struct dh_conn *c1 = dh_connect(d);
    DH_EXPECT(c2, "PING", "PONG");
    DH_EXPECT(c2, "ADD f second-listener", "NEW");
    DH_EXPECT(c1, "CHECK f second-listener", "YES");
    DH_EXPECT(c1, "ADD f first-listener", "NEW");
    DH_EXPECT(c2, "CHECK f first-listener", "YES");
    ck_assert_int_eq(info_counter(c1, "connections"), 2);
    dh_close(c1);
    dh_close(c2);
    dh_finish(d);
}
END_TEST

/* ---- 12. idle timeout ---- */

START_TEST(test_idle_timeout)
{
    struct dh_daemon *d = start_std("idle_timeout 1\n");
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "PING", "PONG");
    enum dh_closed st = dh_wait_closed(c, 3000);
    ck_assert_msg(st == DH_EOF, "an idle connection was not closed within 3 s (%d)", (int)st);
    dh_close(c);
    /* A connection that never sent anything is closed too. */
    c = dh_connect(d);
    ck_assert_int_eq(dh_wait_closed(c, 3000), DH_EOF);
    dh_close(c);
    ck_assert(dh_alive(d));
    c = dh_connect(d);
    DH_EXPECT(c, "PING", "PONG");
    ck_assert_int_eq(info_counter(c, "idle_timeouts"), 2);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- 13. SIGHUP ---- */

START_TEST(test_sighup)
{
    struct dh_daemon *d = start_std(NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "ADD dyn before-hup", "NEW");
    char *before = dh_log_read(d);
    size_t before_len = strlen(before);
    free(before);
    ck_assert_int_eq(dh_signal(d, SIGHUP), 0);
    /* Wait until the daemon has logged something about it (bounded). */
    long long deadline = mono_ms() + DH_TIMEOUT_MS;
    for (;;) {
        char *log = dh_log_read(d);
        size_t len = strlen(log);
        free(log);
        if (len > before_len || mono_ms() > deadline)
            break;
        usleep(10000);
    }
    ck_assert(dh_alive(d));
    DH_EXPECT(c, "PING", "PONG");
    DH_EXPECT(c, "CHECK dyn before-hup", "YES");
    dh_close(c);
    dh_expect_ping(d);
    dh_finish(d);
}
END_TEST

/* RELOAD is answered when the reload is over, and the requests pipelined
 * behind it wait for it, in order; QUIT right behind it then closes the
 * connection. Twice: once with QUIT alone after RELOAD. */
START_TEST(test_reload_pipelined)
{
    struct dh_daemon *d = start_std(NULL);
    struct dh_conn *c = dh_connect(d);
    dh_expect_lines(
        c, "PING\nRELOAD\nPING\nCHECK f item-1\nQUIT\n",
        (const char *const[]){"PONG", "OK f=unchanged dyn=unchanged", "PONG", "YES", "BYE", NULL});
    expect_closed(c, false, "after RELOAD and QUIT");
    dh_close(c);

    c = dh_connect(d);
    dh_expect_lines(c, "RELOAD\nQUIT\n",
                    (const char *const[]){"OK f=unchanged dyn=unchanged", "BYE", NULL});
    expect_closed(c, false, "after RELOAD and QUIT");
    dh_close(c);

    dh_expect_ping(d);
    dh_finish(d);
}
END_TEST

/* What was added survives a restart (the journal is replayed), and only the
 * latest run's log is searched for `ready:`. */
START_TEST(test_restart_keeps_adds)
{
    struct dh_daemon *d = start_std(NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "MADD f kept-1 kept-2", "NEW NEW");
    DH_EXPECT(c, "ADD dyn kept-3", "NEW");
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "MCHECK f kept-1 kept-2 item-1 other-1", "YES YES YES NO");
    DH_EXPECT(c, "CHECK dyn kept-3", "YES");
    DH_EXPECT(c, "ADD f kept-1", "EXISTS");
    dh_close(c);
    dh_finish(d);
}
END_TEST

static Suite *daemon_suite(void)
{
    Suite *s = suite_create("daemon");
    const TTest *daemon[] = {test_every_command,
                             test_pipeline_10k,
                             test_check_runs,
                             test_tiny_writes,
                             test_long_line,
                             test_garbage,
                             test_slow_reader,
                             test_concurrent_add_check,
                             test_auth,
                             test_sigterm_in_flight,
                             test_sigterm_stuck_client,
                             test_bad_config,
                             test_command_line,
                             test_port_in_use_pidfile_sigint,
                             test_balanced_workers,
                             test_quit_with_input_after_it,
                             test_slow_reader_not_cut_by_idle_timeout,
                             test_two_listeners,
                             test_idle_timeout,
                             test_sighup,
                             test_reload_pipelined,
                             test_restart_keeps_adds,
                             NULL};
    dh_add_case(s, "daemon", 120, daemon);
    /* Cases of their own, so that CK_RUN_CASE runs one alone (the every_error
     * case ran 50 times under load to show the counters are not flaky). */
    dh_add_case(s, "every_error", 120, (const TTest *const[]){test_every_error, NULL});
    dh_add_case(s, "emfile", 120,
                (const TTest *const[]){test_emfile_pauses_accepting, test_emfile_http_port,
                                       test_emfile_backlog, NULL});
    return s;
}

int main(void)
{
    return dh_run_suite(daemon_suite());
}
