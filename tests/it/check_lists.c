/* Integration tests of allow-lists and removal on a real bloomgated: ALLOW,
 * UNALLOW, REMOVE and MATCH's ALLOWED on the line protocol, the same routes
 * and the "allowed" answers over HTTP, both authenticated as ADD; INFO and
 * /metrics; an allow file swapped by a reload while the journaled runtime
 * exceptions stay; every acknowledged mutation surviving SIGKILL under fsync
 * always; and `bloomgate journal dump` / `build --journal` folding removals
 * into a rebuilt file. */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"

static void http(struct dh_daemon *d, const char *method, const char *target, const char *auth,
                 const char *body, struct hc_resp *r)
{
    struct hc_conn h;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_msg(hc_request(&h, method, target, auth, body, body ? strlen(body) : 0, r,
                             DH_TIMEOUT_MS) == 0,
                  "%s %s: %s", method, target, h.err);
    hc_close(&h);
}

static void expect_http(struct dh_daemon *d, const char *method, const char *target,
                        const char *auth, const char *body, int status, const char *want)
{
    struct hc_resp r;
    http(d, method, target, auth, body, &r);
    ck_assert_msg(r.status == status && (!want || strcmp(r.body, want) == 0),
                  "%s %s: %d %s, wanted %d %s", method, target, r.status, r.body, status,
                  want ? want : "");
    hc_resp_free(&r);
}

static const char *const ex_items[] = {"alpha", "beta", "gamma", "delta"};

static struct dh_daemon *start_lists(const char *extra)
{
    struct dh_daemon *d = dh_new();
    dh_build_filter(d, "ex.bloom", ex_items, 4, 0, 0);
    dh_write_file(d, "ex.allow", "delta\n", 6);
    dh_write_file(d, "hosts.allow", "@@||ok.evil.test^\n", 18);
    char conf[2048];
    snprintf(conf, sizeof(conf),
             "http_listen 127.0.0.1:0\nthreads 2\n%s"
             "filter ex {\n file @DIR@/ex.bloom\n allow @DIR@/ex.allow\n fsync always\n}\n"
             "filter hosts {\n capacity 1000\n keys host\n allow @DIR@/hosts.allow\n"
             " journal @DIR@/hosts.journal\n fsync always\n}\n",
             extra);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

START_TEST(test_line_protocol)
{
    struct dh_daemon *d = start_lists("admin_token \"s3cret\"\n");
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "MCHECK ex alpha beta gamma delta zeta", "YES YES YES NO NO");
    DH_EXPECT(c, "MATCH ex delta", "ALLOWED delta");
    DH_EXPECT(c, "REMOVE ex alpha",
              "ERR auth_required REMOVE needs AUTH <token> first on this connection");
    DH_EXPECT(c, "ALLOW ex beta",
              "ERR auth_required ALLOW needs AUTH <token> first on this connection");
    DH_EXPECT(c, "UNALLOW ex delta",
              "ERR auth_required UNALLOW needs AUTH <token> first on this connection");
    DH_EXPECT(c, "AUTH s3cret", "OK");
    DH_EXPECT(c, "REMOVE ex alpha zeta", "REMOVED ABSENT");
    DH_EXPECT(c, "REMOVE ex alpha", "ABSENT");
    DH_EXPECT(c, "ALLOW ex beta beta", "NEW EXISTS");
    /* The one-item CHECK takes the pipelined path: the same answers. */
    DH_EXPECT(c, "CHECK ex alpha", "NO");
    DH_EXPECT(c, "CHECK ex beta", "NO");
    DH_EXPECT(c, "CHECK ex gamma", "YES");
    DH_EXPECT(c, "MATCH ex alpha", "NO");
    DH_EXPECT(c, "MATCH ex beta", "ALLOWED beta");
    DH_EXPECT(c, "UNALLOW ex beta delta zeta", "REMOVED REMOVED ABSENT");
    DH_EXPECT(c, "MCHECK ex alpha beta delta", "NO YES YES");
    DH_EXPECT(c, "ADD ex alpha", "NEW");
    DH_EXPECT(c, "CHECK ex alpha", "YES");
    DH_EXPECT(c, "ALLOW", "ERR wrong_arity ALLOW takes at least 2 arguments "
                          "(<filter> <item> [<item>...]), got 0");
    DH_EXPECT(c, "REMOVE nope x", "ERR unknown_filter no such filter 'nope'");
    /* host keys: canonical items, exceptions by specificity */
    DH_EXPECT(c, "ADD hosts EVIL.test", "NEW");
    DH_EXPECT(c, "CHECK hosts a.ok.evil.test", "NO");
    DH_EXPECT(c, "MATCH hosts a.ok.evil.test", "ALLOWED ok.evil.test");
    DH_EXPECT(c, "MATCH hosts x.evil.test", "MATCH evil.test");
    const char *bad = dh_cmd(c, "ALLOW hosts http://www.evil.test/a/path");
    ck_assert_msg(strncmp(bad, "ERR bad_item ", 13) == 0, "%s", bad);
    DH_EXPECT(c, "ALLOW hosts WWW.evil.test", "NEW");
    DH_EXPECT(c, "CHECK hosts bob@www.evil.test", "NO");
    DH_EXPECT(c, "REMOVE hosts evil.test", "REMOVED");
    DH_EXPECT(c, "MCHECK hosts x.evil.test www.evil.test", "NO NO");
    DH_EXPECT(c, "MATCH hosts www.evil.test", "NO");
    dh_close(c);

    /* A restart replays every record in order. */
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "MCHECK ex alpha beta gamma delta", "YES YES YES YES");
    DH_EXPECT(c, "MCHECK hosts x.evil.test a.ok.evil.test", "NO NO");
    dh_close(c);
    dh_finish(d);
}
END_TEST

START_TEST(test_http_and_views)
{
    struct dh_daemon *d = start_lists("admin_token \"s3cret\"\n");
    const char *bearer = "Authorization: Bearer s3cret\r\n";
    expect_http(d, "POST", "/v1/filters/ex/remove", NULL, "{\"items\":[\"alpha\"]}", 401, NULL);
    expect_http(d, "POST", "/v1/filters/ex/allow", "Authorization: Bearer no\r\n",
                "{\"items\":[\"alpha\"]}", 401, NULL);
    expect_http(d, "GET", "/v1/filters/ex/remove", bearer, NULL, 405, NULL);
    expect_http(d, "POST", "/v1/filters/ex/remove", bearer, "{\"items\":[\"alpha\",\"zeta\"]}",
                200, "{\"filter\":\"ex\",\"changed\":[true,false],\"count\":1}");
    expect_http(d, "POST", "/v1/filters/ex/allow", bearer, "{\"items\":[\"beta\"]}", 200,
                "{\"filter\":\"ex\",\"changed\":[true],\"count\":1}");
    expect_http(d, "POST", "/v1/filters/ex/unallow", bearer, "{\"items\":[\"nope\"]}", 200,
                "{\"filter\":\"ex\",\"changed\":[false],\"count\":0}");
    expect_http(d, "GET", "/v1/filters/ex/check?item=beta", NULL, NULL, 200,
                "{\"filter\":\"ex\",\"item\":\"beta\",\"present\":false,\"allowed\":true}");
    expect_http(d, "GET", "/v1/filters/ex/check?item=alpha", NULL, NULL, 200,
                "{\"filter\":\"ex\",\"item\":\"alpha\",\"present\":false}");
    expect_http(d, "POST", "/v1/filters/ex/check", NULL,
                "{\"items\":[\"alpha\",\"beta\",\"gamma\",\"delta\"]}", 200,
                "{\"filter\":\"ex\",\"present\":[false,false,true,false],"
                "\"allowed\":[false,true,false,true]}");
    expect_http(d, "POST", "/v1/filters/ex/check", NULL, "{\"items\":[\"gamma\"]}", 200,
                "{\"filter\":\"ex\",\"present\":[true]}");
    expect_http(d, "POST", "/v1/filters/hosts/add", bearer, "{\"items\":[\"evil.test\"]}", 200,
                NULL);
    expect_http(d, "GET", "/v1/filters/hosts/check?item=a.ok.evil.test", NULL, NULL, 200,
                "{\"filter\":\"hosts\",\"item\":\"a.ok.evil.test\",\"present\":false,"
                "\"allowed\":true,\"match\":null,\"exception\":\"ok.evil.test\"}");
    expect_http(d, "POST", "/v1/filters/hosts/check", NULL,
                "{\"items\":[\"x.evil.test\",\"a.ok.evil.test\"]}", 200,
                "{\"filter\":\"hosts\",\"present\":[true,false],\"allowed\":[false,true],"
                "\"matches\":[\"evil.test\",null]}");

    struct hc_resp r;
    http(d, "GET", "/v1/filters/ex", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    /* zeta was named by a REMOVE too: a removal is kept whether or not the
     * filter held the item (the journal is a pure list of requests). */
    ck_assert_msg(strstr(r.body, "\"exceptions\":2,\"removals\":2,") != NULL, "%s", r.body);
    ck_assert_msg(strstr(r.body, "ex.allow\"") != NULL, "%s", r.body);
    hc_resp_free(&r);
    http(d, "GET", "/metrics", NULL, NULL, &r);
    ck_assert_msg(strstr(r.body, "bloomgate_filter_removals{filter=\"ex\"} 2\n") != NULL, "%s",
                  r.body);
    ck_assert_msg(strstr(r.body, "bloomgate_filter_allow_exceptions{filter=\"hosts\"} 1\n"), "%s",
                  r.body);
    hc_resp_free(&r);
    struct dh_conn *c = dh_connect(d);
    const char *info = dh_cmd(c, "INFO hosts");
    ck_assert_msg(strstr(info, "\"allow\":{\"file\":") != NULL, "%s", info);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* A changed allow file is swapped in by a reload, the runtime exceptions
 * (journaled) kept on top of it. */
START_TEST(test_reload_allow_file)
{
    struct dh_daemon *d = start_lists("");
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "ALLOW ex gamma", "NEW");
    DH_EXPECT(c, "MCHECK ex alpha beta gamma delta", "YES YES NO NO");
    dh_write_file(d, "ex.allow", "alpha\n", 6);
    const char *rep = dh_cmd(c, "RELOAD");
    ck_assert_msg(strncmp(rep, "OK", 2) == 0, "%s", rep);
    DH_EXPECT(c, "MCHECK ex alpha beta gamma delta", "NO YES NO YES");
    /* An allow file that cannot be read fails the reload; the old version serves. */
    dh_write_file(d, "hosts.allow", "http://x.test/a/path\n", 21);
    rep = dh_cmd(c, "RELOAD");
    ck_assert_msg(strstr(rep, "hosts.allow:1:") != NULL, "%s", rep);
    DH_EXPECT(c, "ADD hosts evil.test", "NEW");
    DH_EXPECT(c, "CHECK hosts a.ok.evil.test", "NO");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* A counting filter: ADD of a present item counts again, REMOVE decrements,
 * and a REMOVE of an item it does not hold (as often as asked) is refused
 * whole, naming the item, on the line protocol and over HTTP; INFO and
 * /metrics name the layout. */
START_TEST(test_counting)
{
    struct dh_daemon *d = dh_new();
    dh_write_config(d, "http_listen 127.0.0.1:0\nthreads 2\n"
                       "filter cnt {\n capacity 10000\n layout counting\n"
                       " journal @DIR@/cnt.journal\n fsync always\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "ADD cnt follow", "NEW");
    DH_EXPECT(c, "ADD cnt follow", "EXISTS");
    DH_EXPECT(c, "REMOVE cnt follow", "REMOVED");
    DH_EXPECT(c, "CHECK cnt follow", "YES");
    DH_EXPECT(c, "REMOVE cnt follow", "REMOVED");
    DH_EXPECT(c, "CHECK cnt follow", "NO");
    DH_EXPECT(c, "REMOVE cnt follow",
              "ERR bad_item 'follow' is not in counting filter cnt (a counter of it is zero: "
              "never added, or removed as often as added); removing it would take counts other "
              "items hold: nothing removed");
    DH_EXPECT(c, "MADD cnt b1 b2", "NEW NEW");
    /* The whole request is refused: b1 stays. */
    const char *got = dh_cmd(c, "REMOVE cnt b1 zz");
    ck_assert_msg(strncmp(got, "ERR bad_item item 2: 'zz' is not in counting filter cnt", 55) ==
                      0,
                  "%s", got);
    got = dh_cmd(c, "REMOVE cnt b2 b2");
    ck_assert_msg(strncmp(got, "ERR bad_item item 2: 'b2' is not", 32) == 0, "%s", got);
    DH_EXPECT(c, "MCHECK cnt b1 b2 zz", "YES YES NO");
    const char *info = dh_cmd(c, "INFO cnt");
    ck_assert_msg(strstr(info, "\"layout\":\"counting\"") != NULL, "%s", info);
    ck_assert_msg(strstr(info, "\"items\":2,") != NULL, "%s", info);
    dh_close(c);

    expect_http(d, "POST", "/v1/filters/cnt/remove", NULL, "{\"items\":[\"b1\"]}", 200,
                "{\"filter\":\"cnt\",\"changed\":[true],\"count\":1}");
    struct hc_resp r;
    http(d, "POST", "/v1/filters/cnt/remove", NULL, "{\"items\":[\"b2\",\"b1\"]}", &r);
    ck_assert_msg(r.status == 400 && strstr(r.body, "item 2: 'b1' is not in counting filter cnt"),
                  "%d %s", r.status, r.body);
    hc_resp_free(&r);
    expect_http(d, "GET", "/v1/filters/cnt/check?item=b2", NULL, NULL, 200,
                "{\"filter\":\"cnt\",\"item\":\"b2\",\"present\":true}");
    http(d, "GET", "/metrics", NULL, NULL, &r);
    ck_assert_msg(strstr(r.body, "bloomgate_filter_layout_info{filter=\"cnt\",layout=\"counting\"} 1\n"),
                  "%s", r.body);
    ck_assert_msg(strstr(r.body, "bloomgate_filter_items{filter=\"cnt\"} 1\n"), "%s", r.body);
    hc_resp_free(&r);

    /* The journal replays the counts: b2 once, follow none. */
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "MCHECK cnt follow b1 b2", "NO NO YES");
    DH_EXPECT(c, "REMOVE cnt b2", "REMOVED");
    got = dh_cmd(c, "REMOVE cnt b2");
    ck_assert_msg(strncmp(got, "ERR bad_item 'b2' is not", 24) == 0, "%s", got);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- every acknowledged mutation survives SIGKILL (fsync always) ---- */

enum { M_ROUNDS = 3, M_WINDOW = 8, M_MAX_REQ = 100000 };

struct m_stream {
    int port;
    int round;
    bool counting; /* the requests of filter c (m_request_c) */
    atomic_bool killed;
    atomic_long started;
    long acked; /* requests 0 .. acked-1 were answered */
    char fail[512];
};

/* Request k of a round: k % 3 == 0 adds 10 new items m<round>-<k>-0..9;
 * 1 removes items 0..4 of the add before it; 2 allows items 5..6 of the add
 * two before it. */
static size_t m_request(char *req, int round, long k)
{
    size_t len;
    if (k % 3 == 0) {
        len = (size_t)sprintf(req, "MADD d");
        for (int i = 0; i < 10; i++)
            len += (size_t)sprintf(req + len, " m%d-%ld-%d", round, k, i);
    } else if (k % 3 == 1) {
        len = (size_t)sprintf(req, "REMOVE d");
        for (int i = 0; i < 5; i++)
            len += (size_t)sprintf(req + len, " m%d-%ld-%d", round, k - 1, i);
    } else {
        len = (size_t)sprintf(req, "ALLOW d m%d-%ld-5 m%d-%ld-6", round, k - 2, round, k - 2);
    }
    req[len++] = '\n';
    return len;
}

/* The same on the counting filter c: k % 3 == 0 adds n<round>-<k>-0..9
 * and 5..6 a second time; 1 removes items 0..4 of the add before it; 2
 * removes items 5..6 of the add two before it once (they stay, counted
 * once). */
static size_t m_request_c(char *req, int round, long k)
{
    size_t len;
    if (k % 3 == 0) {
        len = (size_t)sprintf(req, "MADD c");
        for (int i = 0; i < 10; i++)
            len += (size_t)sprintf(req + len, " n%d-%ld-%d", round, k, i);
        len += (size_t)sprintf(req + len, " n%d-%ld-5 n%d-%ld-6", round, k, round, k);
    } else if (k % 3 == 1) {
        len = (size_t)sprintf(req, "REMOVE c");
        for (int i = 0; i < 5; i++)
            len += (size_t)sprintf(req + len, " n%d-%ld-%d", round, k - 1, i);
    } else {
        len = (size_t)sprintf(req, "REMOVE c n%d-%ld-5 n%d-%ld-6", round, k - 2, round, k - 2);
    }
    req[len++] = '\n';
    return len;
}

static void *m_stream_main(void *arg)
{
    struct m_stream *s = arg;
    struct dh_conn *c = dh_connect_port(s->port, s->fail, sizeof(s->fail));
    if (!c)
        return NULL;
    long next = 0, inflight = 0;
    char req[512];
    for (;;) {
        while (inflight < M_WINDOW && next < M_MAX_REQ) {
            size_t len = s->counting ? m_request_c(req, s->round, next)
                                     : m_request(req, s->round, next);
            if (dh_send(c, req, len, 60000) != 0)
                break;
            next++;
            inflight++;
            atomic_fetch_add(&s->started, 1);
        }
        if (inflight == 0)
            break;
        const char *line = dh_read_line(c, 60000);
        if (!line)
            break;
        if (strncmp(line, "ERR", 3) == 0) {
            snprintf(s->fail, sizeof(s->fail), "round %d: %.200s", s->round, line);
            break;
        }
        s->acked++;
        inflight--;
    }
    if (!s->fail[0] && !atomic_load(&s->killed))
        snprintf(s->fail, sizeof(s->fail), "round %d: the connection ended before the kill",
                 s->round);
    dh_close(c);
    return NULL;
}

/* What a check of item i of add k must say after the restart, given the
 * requests acknowledged: 1 YES, 0 NO, -1 either (its mutation was sent but
 * not acknowledged). */
static int m_expect(long acked, long k, int i)
{
    if (i < 5)
        return k + 1 < acked ? 0 : -1;
    if (i < 7)
        return k + 2 < acked ? 0 : -1;
    return 1;
}

/* The same for filter c: items 5..6 were added twice and removed once at
 * most, so they stay. */
static int m_expect_c(long acked, long k, int i)
{
    if (i < 5)
        return k + 1 < acked ? 0 : -1;
    return 1;
}

/* Check every add of rounds 0..round of one stream after a restart. */
static void m_verify(struct dh_conn *c, bool counting, const long *acked, int round)
{
    for (int r = 0; r <= round; r++) {
        for (long k = 0; k < acked[r]; k += 3) {
            char req[512];
            size_t len = (size_t)sprintf(req, "MCHECK %s", counting ? "c" : "d");
            for (int i = 0; i < 10; i++)
                len += (size_t)sprintf(req + len, " %s%d-%ld-%d", counting ? "n" : "m", r, k, i);
            const char *got = dh_cmd(c, req);
            const char *p = got;
            for (int i = 0; i < 10; i++) {
                bool yes = strncmp(p, "YES", 3) == 0;
                int want = counting ? m_expect_c(acked[r], k, i) : m_expect(acked[r], k, i);
                ck_assert_msg(want < 0 || yes == (want == 1),
                              "%s: round %d, after kill %d: %d-%ld-%d is %s (%ld acked): %s",
                              counting ? "c" : "d", r, round, r, k, i, yes ? "YES" : "NO",
                              acked[r], got);
                p += yes ? 4 : 3;
            }
        }
    }
}

/* Rounds of streamed mutations on filter d (dbody: its block's body) and on
 * a counting filter c, each round ended by SIGKILL; after each restart every
 * acknowledged one holds. min_subs: d grows, and is grown to at least that
 * many sub-filters before the first kill. */
static void crash_mutations(const char *dbody, size_t min_subs)
{
    struct dh_daemon *d = dh_new();
    char conf[512];
    snprintf(conf, sizeof(conf),
             "threads 2\nfilter d {\n%s journal @DIR@/d.journal\n fsync always\n}\n"
             "filter c {\n capacity 1000000\n layout counting\n"
             " journal @DIR@/c.journal\n fsync always\n}\n",
             dbody);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    char pre[16384];
    if (min_subs) { /* a growing filter: grown before the first kill, whatever the load */
        struct dh_conn *c = dh_connect(d);
        size_t len = (size_t)sprintf(pre, "MADD d");
        for (int i = 0; i < 1000; i++)
            len += (size_t)sprintf(pre + len, " pre%d", i);
        const char *got = dh_cmd(c, pre);
        ck_assert_msg(strncmp(got, "NEW", 3) == 0, "%.100s", got);
        dh_close(c);
    }
    long acked[M_ROUNDS], acked_c[M_ROUNDS];
    uint64_t seed = 0xbb67ae8584caa73bull;
    for (int round = 0; round < M_ROUNDS; round++) {
        struct m_stream s = {.port = d->port, .round = round};
        struct m_stream sc = {.port = d->port, .round = round, .counting = true};
        pthread_t t, tc;
        ck_assert_int_eq(pthread_create(&t, NULL, m_stream_main, &s), 0);
        ck_assert_int_eq(pthread_create(&tc, NULL, m_stream_main, &sc), 0);
        for (int w = 0; w < 60000 && (atomic_load(&s.started) == 0 ||
                                      atomic_load(&sc.started) == 0) && !s.fail[0] && !sc.fail[0];
             w++)
            usleep(1000);
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        usleep((useconds_t)(50 + seed % 251) * 1000);
        atomic_store(&s.killed, true);
        atomic_store(&sc.killed, true);
        ck_assert_int_eq(dh_signal(d, SIGKILL), 0);
        int st = dh_wait_exit(d, DH_EXIT_TIMEOUT_MS);
        ck_assert_msg(st != -1 && WIFSIGNALED(st), "status 0x%x", st);
        pthread_join(t, NULL);
        pthread_join(tc, NULL);
        ck_assert_msg(s.fail[0] == '\0', "%s", s.fail);
        ck_assert_msg(sc.fail[0] == '\0', "%s", sc.fail);
        acked[round] = s.acked;
        acked_c[round] = sc.acked;
        dh_start(d, NULL);
        struct dh_conn *c = dh_connect(d);
        m_verify(c, false, acked, round);
        m_verify(c, true, acked_c, round);
        dh_close(c);
        fprintf(stderr,
                "test_crash_mutations: round %d: %ld + %ld (counting) requests acknowledged, "
                "all held\n",
                round, acked[round], acked_c[round]);
    }
    /* The counts themselves came back: an add whose removals were all
     * acknowledged holds items 5..6 exactly once (one more REMOVE each
     * works, a second is refused) and items 0..4 not at all. */
    struct dh_conn *c = dh_connect(d);
    int r = M_ROUNDS - 1;
    for (long k = 0; k + 2 < acked_c[r] && k < 30; k += 3) {
        char req[256];
        sprintf(req, "REMOVE c n%d-%ld-5 n%d-%ld-6", r, k, r, k);
        DH_EXPECT(c, req, "REMOVED REMOVED");
        const char *got = dh_cmd(c, req);
        ck_assert_msg(strncmp(got, "ERR bad_item", 12) == 0, "%s: %s", req, got);
        sprintf(req, "REMOVE c n%d-%ld-0", r, k);
        got = dh_cmd(c, req);
        ck_assert_msg(strncmp(got, "ERR bad_item", 12) == 0, "%s: %s", req, got);
    }
    dh_close(c);
    ck_assert_int_gt(acked[0] + acked[1] + acked[2], 6);
    ck_assert_int_gt(acked_c[0] + acked_c[1] + acked_c[2], 6);
    if (min_subs) { /* the kills did land on a filter that had grown */
        c = dh_connect(d);
        const char *line = dh_cmd(c, "INFO d");
        json_error_t jerr;
        json_t *j = json_loads(line, 0, &jerr);
        ck_assert_msg(j != NULL, "%s", line);
        json_t *subs = json_object_get(json_object_get(j, "growth"), "sub_filters");
        ck_assert_msg(json_array_size(subs) >= min_subs, "%s", line);
        json_decref(j);
        size_t len = (size_t)sprintf(pre, "MCHECK d");
        for (int i = 0; i < 1000; i++)
            len += (size_t)sprintf(pre + len, " pre%d", i);
        ck_assert_ptr_null(strstr(dh_cmd(c, pre), "NO"));
        dh_close(c);
    }
    dh_finish(d);
}

START_TEST(test_crash_mutations)
{
    crash_mutations(" capacity 1000000\n", 0);
}
END_TEST

/* The same on a growing filter that starts at 100 items, given 1000 items
 * first (4 sub-filters: 100, 200, 400 full, 800 part full): the kills land
 * while it goes on growing, and each restart rebuilds it. */
START_TEST(test_crash_mutations_growth)
{
    crash_mutations(" capacity 100\n growth on\n", 4);
}
END_TEST

/* journal dump and build --journal fold what the daemon did. */
START_TEST(test_tool_fold)
{
    struct dh_daemon *d = start_lists("");
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "MADD ex e1 e2 e3", "NEW NEW NEW");
    DH_EXPECT(c, "REMOVE ex alpha e2 e3", "REMOVED REMOVED REMOVED");
    DH_EXPECT(c, "ADD ex e3", "NEW");
    DH_EXPECT(c, "ALLOW ex gamma", "NEW");
    dh_close(c);
    dh_stop_ok(d);
    char journal[DH_PATH_MAX], out[DH_PATH_MAX], list[DH_PATH_MAX], rebuilt[DH_PATH_MAX];
    dh_path(d, "ex.bloom.journal", journal);
    dh_path(d, "out.txt", out);
    dh_path(d, "list.txt", list);
    dh_path(d, "rebuilt.bloom", rebuilt);
    const char *dump[] = {dh_tool_path(), "journal", "dump", journal, NULL};
    ck_assert_int_eq(dh_run(dump, out, DH_TIMEOUT_MS), 0);
    FILE *f = fopen(out, "r");
    char buf[512] = "";
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    /* e3 was added twice (removed in between): both adds print. */
    ck_assert_msg(strncmp(buf, "e1\ne3\ne3\nbloomgate: note:", 25) == 0, "%s", buf);
    const char *removed[] = {dh_tool_path(), "journal", "dump", "--removed", journal, NULL};
    ck_assert_int_eq(dh_run(removed, out, DH_TIMEOUT_MS), 0);
    f = fopen(out, "r");
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_str_eq(buf, "alpha\ne2\n");
    dh_write_file(d, "list.txt", "alpha\nbeta\ngamma\ndelta\n", 23);
    const char *build[] = {dh_tool_path(), "build", "-q", "-S", "7", "-o", rebuilt,
                           "--journal", journal, list, NULL};
    ck_assert_int_eq(dh_run(build, out, DH_TIMEOUT_MS), 0);
    const char *check[] = {dh_tool_path(), "check", rebuilt, "alpha", "beta", "gamma",
                           "e1",           "e2",    "e3",    NULL};
    ck_assert_int_eq(dh_run(check, out, DH_TIMEOUT_MS), 0);
    f = fopen(out, "r");
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_str_eq(buf, "NO\nYES\nYES\nYES\nNO\nYES\n");
    dh_free(d);
}
END_TEST

static Suite *lists_suite(void)
{
    Suite *s = suite_create("lists");
    dh_add_case(s, "lists", 300,
                (const TTest *const[]){test_line_protocol, test_http_and_views,
                                       test_reload_allow_file, test_counting,
                                       test_crash_mutations, test_crash_mutations_growth,
                                       test_tool_fold, NULL});
    return s;
}

int main(void)
{
    return dh_run_suite(lists_suite());
}
