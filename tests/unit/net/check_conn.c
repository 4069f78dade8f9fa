/* check_conn: the connection layer (src/net/conn.[ch]) with every front on
 * it, in process: the states a connection's flags may encode and the
 * transitions between them (enum conn_state), a lost reply closing the
 * connection on every front (an allocator that fails on demand, given to
 * libevent with event_set_mem_functions before anything else runs), the
 * counters kept per protocol (output_pauses, idle_timeouts), and a RELOAD
 * answered before the close when the client shut its side down after it,
 * and an illegal state transition (a front that breaks the rules) closing
 * its connection while the server goes on.
 * The server is the real one (server_create, every front) on 127.0.0.1 ports
 * the kernel picks; no test asserts a timing: waits are bounded polls. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/stats.h"
#include "front/fronts.h"
#include "lib/seams.h"
#include "net/conn.h"
#include "net/runtime.h"
#include "net/server.h"
#include "conf/conf.h"
#include "store/registry.h"
#include "store/reload.h"

#define WAIT_MS 20000 /* a bound, not a timing: ASan under load is slow */

/* ---- an allocator that fails on demand (libevent's only) ---- */

static atomic_bool fail_alloc;
static atomic_uint failed_allocs;

static void *t_malloc(size_t n)
{
    if (atomic_load(&fail_alloc)) {
        atomic_fetch_add(&failed_allocs, 1);
        return NULL;
    }
    return malloc(n);
}

static void *t_realloc(void *p, size_t n)
{
    if (atomic_load(&fail_alloc)) {
        atomic_fetch_add(&failed_allocs, 1);
        return NULL;
    }
    return realloc(p, n);
}

/* ---- the states ---- */

static struct conn flags(bool paused, bool closing, bool wait, bool lingering, bool lost)
{
    static struct conn_wait *const some_wait = (struct conn_wait *)16;
    struct conn c;
    memset(&c, 0, sizeof(c));
    c.paused = paused;
    c.closing = closing;
    c.wait = wait ? some_wait : NULL;
    c.end.lingering = lingering;
    c.out_lost = lost;
    return c;
}

/* Every combination of the five flags maps to the state conn.h's table names,
 * or to CONN_BAD: counted, so a row that goes missing or appears fails. */
START_TEST(test_state_of_flags)
{
    unsigned per[CONN_BAD + 1] = {0};
    for (unsigned m = 0; m < 32; m++) {
        bool p = m & 1, cl = m & 2, wt = m & 4, lg = m & 8, lo = m & 16;
        struct conn c = flags(p, cl, wt, lg, lo);
        enum conn_state st = conn_state(&c);
        per[st]++;
        enum conn_state want = CONN_BAD;
        if (!p && !cl && !wt && !lg && !lo)
            want = CONN_READING;
        else if (p && !cl && !wt && !lg && !lo)
            want = CONN_PAUSED;
        else if (!p && !cl && wt && !lg && !lo)
            want = CONN_WAITING;
        else if (!p && cl && !lg && !lo)
            want = CONN_CLOSING; /* with or without a waited answer */
        else if (!p && cl && !lg && lo)
            want = CONN_LOST;
        else if (!p && cl && !wt && lg && !lo)
            want = CONN_LINGERING;
        ck_assert_msg(st == want, "flags %u: state %d, want %d", m, st, want);
    }
    ck_assert_uint_eq(per[CONN_READING], 1);
    ck_assert_uint_eq(per[CONN_PAUSED], 1);
    ck_assert_uint_eq(per[CONN_WAITING], 1);
    ck_assert_uint_eq(per[CONN_CLOSING], 2);
    ck_assert_uint_eq(per[CONN_LOST], 2);
    ck_assert_uint_eq(per[CONN_LINGERING], 1);
    ck_assert_uint_eq(per[CONN_BAD], 32 - 8);
}
END_TEST

/* The transitions conn.h's comment lists, and no others. */
START_TEST(test_transitions)
{
    static const char *const legal[] = {
        "READING PAUSED",  "READING WAITING", "READING CLOSING",   "READING LOST",
        "PAUSED READING",  "PAUSED CLOSING",  "PAUSED LOST",       "WAITING READING",
        "WAITING CLOSING", "WAITING LOST",    "CLOSING LINGERING", "CLOSING LOST",
    };
    static const char *const names[CONN_N_STATES] = {"READING", "PAUSED", "WAITING",
                                                     "CLOSING", "LOST",   "LINGERING"};
    unsigned n_ok = 0;
    for (int f = 0; f < CONN_N_STATES; f++) {
        for (int t = 0; t < CONN_N_STATES; t++) {
            char pair[32];
            snprintf(pair, sizeof(pair), "%s %s", names[f], names[t]);
            bool want = f == t;
            for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
                want = want || strcmp(legal[i], pair) == 0;
            ck_assert_msg(conn_transition_ok((enum conn_state)f, (enum conn_state)t) == want,
                          "%s: %d", pair, !want);
            n_ok += want;
        }
    }
    ck_assert_uint_eq(n_ok, CONN_N_STATES + sizeof(legal) / sizeof(legal[0]));
    ck_assert(!conn_transition_ok(CONN_BAD, CONN_READING));
    ck_assert(!conn_transition_ok(CONN_READING, CONN_BAD));
}
END_TEST

/* ---- an in-process server with every front ---- */

struct fake_reload {
    server_reload_done done;
    void *arg;
    int calls;
};

static void fake_fire(evutil_socket_t fd, short what, void *arg)
{
    struct fake_reload *f = arg;
    (void)fd;
    (void)what;
    server_reload_done done = f->done;
    f->done = NULL;
    done(json_pack("{s:b,s:[]}", "ok", 1, "filters"), f->arg);
}

/* Answers 200 ms later, on the worker's loop, as the reload thread would. */
static bool fake_reload_fn(void *ctx, const struct reload_op *op, struct event_base *base,
                           server_reload_done done, void *arg)
{
    struct fake_reload *f = ctx;
    f->calls++;
    f->done = done;
    f->arg = arg;
    struct timeval tv = {0, 200000};
    event_base_once(base, -1, EV_TIMEOUT, fake_fire, f, &tv);
    return true;
}

static struct registry *reg;
static struct server *srv;
static struct fake_reload fake;
/* Called between server_create and server_start when set. */
static void (*before_start)(struct server *s);

static void serve(const char *extra)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "listen 127.0.0.1:0\nhttp_listen 127.0.0.1:0\nresp_listen 127.0.0.1:0\nthreads 1\n"
             "bloomd_listen 127.0.0.1:0\nlog_level error\n%s"
             "filter l {\n    capacity 1000\n    keys exact\n    journal off\n}\n"
             "tcp_table {\n listen 127.0.0.1:0\n filter l\n}\n"
             "policy {\n listen 127.0.0.1:0\n check client_address l\n action REJECT\n}\n"
             "dnsbl {\n listen 127.0.0.1:0\n zone bl.example.org\n filter l\n}\n",
             extra ? extra : "");
    char err[512];
    struct conf *cf = conf_parse(text, strlen(text), NULL, err, sizeof(err));
    ck_assert_msg(cf != NULL, "%s", err);
    reg = registry_create(1);
    ck_assert_msg(reload_initial(reg, cf, 1, err, sizeof(err)) == 0, "%s", err);
    srv = server_create(reg, 1, err, sizeof(err));
    ck_assert_msg(srv != NULL, "%s", err);
    memset(&fake, 0, sizeof(fake));
    server_set_reload(srv, fake_reload_fn, &fake);
    if (before_start)
        before_start(srv);
    ck_assert_int_eq(server_start(srv, err, sizeof(err)), 0);
}

static void unserve(void)
{
    server_stop(srv, 2.0);
    server_free(srv);
    registry_free(reg);
    srv = NULL;
    reg = NULL;
}

/* A connection to front's first address; rcvbuf > 0 sets SO_RCVBUF first. */
static int dial_buf(int front, int rcvbuf)
{
    int port = server_port(srv, (size_t)front, 0);
    ck_assert_int_gt(port, 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect: %s",
                  strerror(errno));
    return fd;
}

static int dial(int front)
{
    return dial_buf(front, 0);
}

static void send_all(int fd, const void *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        ck_assert_msg(k > 0, "send: %s", strerror(errno));
        p = (const char *)p + k;
        n -= (size_t)k;
    }
}

/* Read until want bytes came (or the end): how many did; bounded by WAIT_MS. */
static size_t recv_some(int fd, char *buf, size_t want)
{
    size_t got = 0;
    while (got < want) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, WAIT_MS) != 1)
            break;
        ssize_t k = recv(fd, buf + got, want - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

/* Whether the server closed fd before sending a byte more (EOF or a reset). */
static bool closed_silently(int fd, char *first, size_t cap)
{
    first[0] = '\0';
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, WAIT_MS) != 1)
        return false;
    ssize_t k = recv(fd, first, cap - 1, 0);
    first[k > 0 ? k : 0] = '\0';
    return k == 0 || (k < 0 && errno == ECONNRESET);
}

/* A DNS-over-TCP query for name (type A), framed. */
static size_t dns_query(uint8_t *b, const char *name)
{
    size_t n = 2;
    static const uint8_t head[12] = {0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    memcpy(b + n, head, 12);
    n += 12;
    for (const char *p = name; *p;) {
        const char *dot = strchr(p, '.');
        size_t l = dot ? (size_t)(dot - p) : strlen(p);
        b[n++] = (uint8_t)l;
        memcpy(b + n, p, l);
        n += l;
        p += l + (dot ? 1 : 0);
    }
    b[n++] = 0;
    b[n++] = 0;
    b[n++] = 1; /* A */
    b[n++] = 0;
    b[n++] = 1; /* IN */
    b[0] = (uint8_t)((n - 2) >> 8);
    b[1] = (uint8_t)(n - 2);
    return n;
}

/* One request of each front (two of them pipelined are sent at once), and
 * the size of its reply's first bytes that the round trip reads. */
struct probe {
    int front;
    const char *name;
    char req[256];
    size_t req_len;
    size_t reply_len; /* bytes the first round trip reads */
};

static struct probe probe_of(int front)
{
    struct probe p = {.front = front};
    switch (front) {
    case FRONT_LINE:
        p.name = "line";
        p.req_len = (size_t)snprintf(p.req, sizeof(p.req), "PING\n");
        p.reply_len = 5;
        break;
    case FRONT_RESP:
        p.name = "resp";
        p.req_len = (size_t)snprintf(p.req, sizeof(p.req), "*1\r\n$4\r\nPING\r\n");
        p.reply_len = 7;
        break;
    case FRONT_BLOOMD:
        p.name = "bloomd";
        p.req_len = (size_t)snprintf(p.req, sizeof(p.req), "c l x\n");
        p.reply_len = 3; /* "No\n" */
        break;
    case FRONT_HTTP:
        p.name = "http";
        p.req_len =
            (size_t)snprintf(p.req, sizeof(p.req), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        p.reply_len = 12; /* "HTTP/1.1 200": the rest is read by the drain below */
        break;
    case FRONT_TCP_TABLE:
        p.name = "tcp_table";
        p.req_len = (size_t)snprintf(p.req, sizeof(p.req), "get x\n");
        p.reply_len = 14; /* "500 not-found\n" */
        break;
    case FRONT_POLICY:
        p.name = "policy";
        p.req_len = (size_t)snprintf(p.req, sizeof(p.req),
                                     "request=smtpd_access_policy\nclient_address=192.0.2.1\n\n");
        p.reply_len = 0; /* measured */
        break;
    default:
        p.name = "dnsbl";
        p.req_len = dns_query((uint8_t *)p.req, "1.2.0.192.bl.example.org");
        p.reply_len = 0;
        break;
    }
    return p;
}

/* Read whatever the server sends within a short while (the rest of a reply
 * whose length the test does not know). */
static size_t drain_reply(int fd, char *buf, size_t cap)
{
    size_t got = 0;
    struct pollfd pf = {fd, POLLIN, 0};
    while (got < cap && poll(&pf, 1, got ? 300 : WAIT_MS) == 1) {
        ssize_t k = recv(fd, buf + got, cap - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

/* On every front: a reply that cannot be queued (libevent's allocator fails)
 * closes the connection before anything more is written, so a pipelining
 * client never pairs a later reply with the wrong request. It used to drop
 * the reply and go on serving: the next request's reply then came back as
 * the answer to the lost one. */
START_TEST(test_lost_reply_closes)
{
    static const int fronts[] = {FRONT_LINE,   FRONT_RESP,  FRONT_HTTP,  FRONT_TCP_TABLE,
                                 FRONT_POLICY, FRONT_DNSBL, FRONT_BLOOMD};
    serve(NULL);
    for (size_t i = 0; i < sizeof(fronts) / sizeof(fronts[0]); i++) {
        struct probe p = probe_of(fronts[i]);
        int fd = dial(p.front);
        char buf[4096];
        /* A round trip first: served, and its output chain freed once sent. */
        send_all(fd, p.req, p.req_len);
        size_t got = p.reply_len ? recv_some(fd, buf, p.reply_len) : drain_reply(fd, buf, 4096);
        ck_assert_msg(got > 0 && (!p.reply_len || got == p.reply_len), "%s: first reply %zu",
                      p.name, got);
        if (p.front == FRONT_HTTP)
            drain_reply(fd, buf, sizeof(buf));
        char two[512];
        memcpy(two, p.req, p.req_len);
        memcpy(two + p.req_len, p.req, p.req_len);
        atomic_store(&failed_allocs, 0);
        atomic_store(&fail_alloc, true);
        send_all(fd, two, 2 * p.req_len);
        bool closed = closed_silently(fd, buf, sizeof(buf));
        atomic_store(&fail_alloc, false);
        ck_assert_msg(atomic_load(&failed_allocs) > 0, "%s: no allocation failed", p.name);
        ck_assert_msg(closed, "%s: the connection went on after a lost reply (sent \"%s\")", p.name,
                      buf);
        close(fd);
        /* The server itself goes on. */
        fd = dial(p.front);
        send_all(fd, p.req, p.req_len);
        got = p.reply_len ? recv_some(fd, buf, p.reply_len) : drain_reply(fd, buf, 4096);
        ck_assert_msg(got > 0, "%s: no reply after the failure", p.name);
        close(fd);
    }
    unserve();
}
END_TEST

static uint64_t counter_at(size_t off)
{
    struct stats_src src;
    struct stats s;
    server_stats_src(srv, &src);
    stats_sum(&src, &s);
    return atomic_load((_Atomic uint64_t *)(void *)((char *)&s + off));
}

/* Wait (bounded) until the counter at off reaches want. */
static uint64_t wait_counter(size_t off, uint64_t want)
{
    uint64_t v = counter_at(off);
    for (int i = 0; i < WAIT_MS / 10 && v < want; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        v = counter_at(off);
    }
    return v;
}

/* Every front's client that stops reading pauses its connection (counted
 * under its own protocol), and once it reads again every reply comes: PAUSED
 * -> READING. The client's receive buffer is small, so the replies of a few
 * thousand requests pass max_output (64 KiB) on the server's side. */
START_TEST(test_output_pauses_per_protocol)
{
    static const int fronts[] = {FRONT_LINE,   FRONT_RESP,  FRONT_HTTP,  FRONT_TCP_TABLE,
                                 FRONT_POLICY, FRONT_DNSBL, FRONT_BLOOMD};
    static const enum stats_proto protos[] = {STATS_LINE,   STATS_RESP,  STATS_HTTP,
                                              STATS_TCP_TABLE, STATS_POLICY, STATS_DNSBL,
                                              STATS_BLOOMD};
    serve("max_output 64k\n");
    for (size_t i = 0; i < sizeof(fronts) / sizeof(fronts[0]); i++) {
        struct probe p = probe_of(fronts[i]);
        enum stats_proto proto = protos[i];
        ck_assert_str_eq(stats_proto_names[proto], p.name);
        size_t off = stats_conn_fields[proto].output_pauses;
        uint64_t before = counter_at(off);
        int fd = dial_buf(p.front, 4096);
        /* Requests until the server has paused (it then stops reading them):
         * a stream of whole requests sent from wherever the last send ended. */
        char block[64 * sizeof(p.req)];
        size_t block_len = 0, pos = 0, sent = 0;
        for (int k = 0; k < 64; k++, block_len += p.req_len)
            memcpy(block + block_len, p.req, p.req_len);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            if (counter_at(off) != before)
                break;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if ((t1.tv_sec - t0.tv_sec) * 1000 > WAIT_MS)
                break;
            ssize_t k = send(fd, block + pos, block_len - pos, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) {
                pos = (pos + (size_t)k) % block_len;
                sent += (size_t)k;
                continue;
            }
            ck_assert_msg(errno == EAGAIN || errno == EWOULDBLOCK, "%s: send: %s", p.name,
                          strerror(errno));
            struct pollfd pf = {fd, POLLOUT, 0};
            poll(&pf, 1, 10);
        }
        size_t n = sent / p.req_len;
        ck_assert_msg(wait_counter(off, before + 1) > before, "%s: no pause after %zu requests",
                      p.name, n);
        /* Now read: the connection resumes and answers everything it read. */
        size_t got = 0;
        char buf[65536];
        struct pollfd pf = {fd, POLLIN, 0};
        while (poll(&pf, 1, 1000) == 1) {
            ssize_t k = recv(fd, buf, sizeof(buf), 0);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        ck_assert_msg(got > 64 * 1024, "%s: %zu bytes after the pause", p.name, got);
        close(fd);
    }
    unserve();
}
END_TEST

/* idle_timeout closes a silent connection of every front, counted under its
 * own protocol (it was counted for the line protocol only). */
START_TEST(test_idle_timeouts_per_protocol)
{
    static const int fronts[] = {FRONT_LINE,   FRONT_RESP,  FRONT_HTTP,  FRONT_TCP_TABLE,
                                 FRONT_POLICY, FRONT_DNSBL, FRONT_BLOOMD};
    static const enum stats_proto protos[] = {STATS_LINE,   STATS_RESP,  STATS_HTTP,
                                              STATS_TCP_TABLE, STATS_POLICY, STATS_DNSBL,
                                              STATS_BLOOMD};
    serve("idle_timeout 1\n");
    enum { N_FRONTS = sizeof(fronts) / sizeof(fronts[0]) };
    int fds[N_FRONTS];
    uint64_t before[N_FRONTS];
    for (size_t i = 0; i < N_FRONTS; i++) {
        before[i] = counter_at(stats_conn_fields[protos[i]].idle_timeouts);
        fds[i] = dial(fronts[i]);
    }
    for (size_t i = 0; i < N_FRONTS; i++) {
        char b[16];
        ck_assert_msg(closed_silently(fds[i], b, sizeof(b)), "%s: not closed",
                      stats_proto_names[protos[i]]);
        close(fds[i]);
        ck_assert_msg(wait_counter(stats_conn_fields[protos[i]].idle_timeouts, before[i] + 1) ==
                          before[i] + 1,
                      "%s: idle_timeouts not counted once", stats_proto_names[protos[i]]);
    }
    unserve();
}
END_TEST

/* RELOAD, a request after it, then the client shuts its side down at once:
 * WAITING (reading stopped, the EOF unread), READING once answered (the PING
 * answered after it, in order), then CLOSING at the EOF and LINGERING: both
 * replies arrive before the close. */
START_TEST(test_reload_answered_before_close)
{
    serve(NULL);
    int fd = dial(FRONT_LINE);
    send_all(fd, "RELOAD\nPING\n", 12);
    shutdown(fd, SHUT_WR);
    char buf[256];
    size_t got = drain_reply(fd, buf, sizeof(buf) - 1);
    buf[got] = '\0';
    ck_assert_int_eq(fake.calls, 1);
    ck_assert_msg(strncmp(buf, "OK", 2) == 0 && strstr(buf, "\nPONG\n"), "got \"%s\"", buf);
    close(fd);
    unserve();
}
END_TEST

/* ---- a front that breaks the state rules ---- */

/* The tcp_table front, but "get pause" marks its connection closing then
 * pauses it (CLOSING -> PAUSED), and "get wait" starts a RELOAD on it
 * closing (CLOSING -> WAITING): transitions enum conn_state forbids. */
static struct conn_ops rogue_ops;
static const struct conn_ops *table_ops;

static void rogue_answer(struct conn *c, json_t *report, const void *note)
{
    (void)c;
    (void)note;
    json_decref(report);
}

static unsigned rogue_process(struct conn *c, bool draining)
{
    bool pause = c->in_len >= 10 && memcmp(c->in, "get pause\n", 10) == 0;
    bool wait = c->in_len >= 9 && memcmp(c->in, "get wait\n", 9) == 0;
    if (!pause && !wait)
        return table_ops->process(c, draining);
    conn_consume(c, c->in_len);
    c->closing = true;
    if (pause)
        conn_pause(c);
    else
        ck_assert(!conn_reload(c, rogue_answer, NULL, 0));
    return 1;
}

static void use_rogue(struct server *s)
{
    table_ops = s->fronts[FRONT_TCP_TABLE].ops;
    rogue_ops = *table_ops;
    rogue_ops.process = rogue_process;
    s->fronts[FRONT_TCP_TABLE].ops = &rogue_ops;
}

/* An illegal transition does not abort the daemon (it did: an assert): it is
 * logged, the connection closes without another byte, the next connection of
 * the same front and of another are served. A test build otherwise aborts at
 * it (tests/lib/seams.c): here it is expected and counted. */
START_TEST(test_illegal_transition_closes)
{
    static const char *const reqs[] = {"get pause\n", "get wait\n"};
    before_start = use_rogue;
    serve(NULL);
    before_start = NULL;
    atomic_store(&conn_illegal_expected, true);
    for (size_t i = 0; i < 2; i++) {
        unsigned seen = atomic_load(&conn_illegal_seen);
        int fd = dial(FRONT_TCP_TABLE);
        send_all(fd, reqs[i], strlen(reqs[i]));
        char buf[256];
        ck_assert_msg(closed_silently(fd, buf, sizeof(buf)), "%s: not closed (got \"%s\")", reqs[i],
                      buf);
        close(fd);
        ck_assert_uint_eq(atomic_load(&conn_illegal_seen), seen + 1);
        /* The server goes on, on this front and the others. */
        fd = dial(FRONT_TCP_TABLE);
        send_all(fd, "get x\n", 6);
        ck_assert_uint_eq(recv_some(fd, buf, 14), 14);
        ck_assert(memcmp(buf, "500 not-found\n", 14) == 0);
        close(fd);
        fd = dial(FRONT_LINE);
        send_all(fd, "PING\n", 5);
        ck_assert_uint_eq(recv_some(fd, buf, 5), 5);
        ck_assert(memcmp(buf, "PONG\n", 5) == 0);
        close(fd);
    }
    atomic_store(&conn_illegal_expected, false);
    unserve();
}
END_TEST

static Suite *conn_suite(void)
{
    Suite *s = suite_create("conn");
    TCase *tc = tcase_create("states");
    tcase_add_test(tc, test_state_of_flags);
    tcase_add_test(tc, test_transitions);
    suite_add_tcase(s, tc);
    tc = tcase_create("served");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_lost_reply_closes);
    tcase_add_test(tc, test_output_pauses_per_protocol);
    tcase_add_test(tc, test_idle_timeouts_per_protocol);
    tcase_add_test(tc, test_reload_answered_before_close);
    tcase_add_test(tc, test_illegal_transition_closes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* Before libevent allocates anything: every allocation of its own
     * (evbuffer chains among them) goes through t_malloc. */
    event_set_mem_functions(t_malloc, t_realloc, free);
    SRunner *sr = srunner_create(conn_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
