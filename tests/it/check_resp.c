/* Integration tests of the Redis protocol front (resp_listen): a real
 * bloomgated, spoken to over a plain socket in exact RESP2 bytes. BF.* must
 * answer as RedisBloom does and as the line protocol does for the same
 * filter (url keys canonicalised and expanded, host keys too), adds must be
 * journaled (a restart finds them), auth and limits must be the line
 * protocol's, and hostile framing must end in an error and a close while the
 * daemon goes on serving. The real clients (redis-cli, Python's redis,
 * redis-benchmark) are driven by tests/it/resp_*_test.sh. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/daemon_harness.h"

#define T_MS 10000

/* Build dir/name from a list (items one a line) with the tool. */
static void build(struct dh_daemon *d, const char *name, const char *format, const char *items)
{
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX], lname[DH_PATH_MAX];
    snprintf(lname, sizeof(lname), "%s.txt", name);
    dh_write_file(d, lname, items, strlen(items));
    dh_path(d, lname, list);
    dh_path(d, name, out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--seed", "7", "--format", format, "-o", out,
                          list, NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build %s failed (status %d); see %s", name, st, log);
}

/* A daemon serving `exact` (a, b, c), `urls` (one URL) and `hosts` (one
 * host), with the Redis protocol on a port of its own; extra is appended to
 * the config. */
static struct dh_daemon *start(const char *extra)
{
    struct dh_daemon *d = dh_new();
    build(d, "exact.bloom", "plain", "a\nb\nc\n");
    build(d, "urls.bloom", "urls", "http://evil.example.com/dropper.exe\n");
    build(d, "hosts.bloom", "hosts", "0.0.0.0 bad.example.org\n");
    char conf[4096];
    snprintf(conf, sizeof(conf),
             "resp_listen 127.0.0.1:0\n"
             "%s\n"
             "filter exact {\n  file @DIR@/exact.bloom\n  journal @DIR@/exact.journal\n"
             "  fsync always\n}\n"
             "filter urls {\n  file @DIR@/urls.bloom\n  journal @DIR@/urls.journal\n}\n"
             "filter hosts {\n  file @DIR@/hosts.bloom\n}\n",
             extra ? extra : "");
    dh_write_config(d, conf);
    dh_start(d, NULL);
    ck_assert_int_gt(dh_resp_port(d, 0), 0);
    return d;
}

static struct dh_conn *rconnect(struct dh_daemon *d)
{
    int fd = dh_connect_fd(dh_resp_port(d, 0));
    ck_assert_msg(fd >= 0, "%s", dh_explain(d, "cannot connect to the Redis port"));
    return dh_conn_wrap(fd, d);
}

/* Send req and read exactly the bytes of want (replies are CRLF lines, so
 * they are read as lines and put back together). */
static void expect(struct dh_conn *c, const char *req, const char *want)
{
    dh_expect_text(c, req, want, T_MS);
}

/* The connection ends (after what the server had to say). */
static void expect_closed(struct dh_conn *c)
{
    enum dh_closed how = dh_wait_closed(c, T_MS);
    ck_assert_msg(how == DH_EOF || how == DH_RESET, "connection not closed (%d)", (int)how);
}

START_TEST(test_bf_commands)
{
    struct dh_daemon *d = start(NULL);
    struct dh_conn *c = rconnect(d);
    /* Multibulk, one request at a time. */
    expect(c, "*3\r\n$9\r\nBF.EXISTS\r\n$5\r\nexact\r\n$1\r\na\r\n", ":1\r\n");
    expect(c, "*3\r\n$9\r\nbf.exists\r\n$5\r\nexact\r\n$1\r\nz\r\n", ":0\r\n");
    expect(c, "*5\r\n$10\r\nBF.MEXISTS\r\n$5\r\nexact\r\n$1\r\nb\r\n$1\r\nx\r\n$1\r\nc\r\n",
           "*3\r\n:1\r\n:0\r\n:1\r\n");
    /* Pipelined in one write, multibulk and inline mixed. */
    expect(c,
           "*3\r\n$6\r\nBF.ADD\r\n$5\r\nexact\r\n$3\r\nnew\r\n"
           "BF.ADD exact new\r\n"
           "BF.MADD exact new fresh\r\n"
           "BF.CARD exact\r\nPING\r\nECHO \"hi there\"\r\n",
           ":1\r\n:0\r\n*2\r\n:0\r\n:1\r\n:5\r\n+PONG\r\n$8\r\nhi there\r\n");
    /* BF.INFO: RedisBloom 2.4's shapes (a non-scaling filter: nil expansion). */
    expect(c, "BF.INFO exact\r\n",
           "*10\r\n+Capacity\r\n:3\r\n+Size\r\n:64\r\n+Number of filters\r\n:1\r\n"
           "+Number of items inserted\r\n:5\r\n+Expansion rate\r\n$-1\r\n");
    expect(c, "BF.INFO exact items\r\nBF.INFO exact EXPANSION\r\nBF.INFO exact bogus\r\n",
           "*1\r\n:5\r\n*1\r\n$-1\r\n-ERR Invalid information value\r\n");
    /* A key that names no filter holds nothing, as RedisBloom answers for a
     * missing key; BF.INFO of it is an error, as in RedisBloom. */
    expect(c, "BF.EXISTS nope a\r\nBF.MEXISTS nope a b\r\nBF.CARD nope\r\nBF.INFO nope\r\n",
           ":0\r\n*2\r\n:0\r\n:0\r\n:0\r\n"
           "-ERR unknown_filter no such filter 'nope'\r\n");
    /* Anything else names the command; arity as Redis words it. */
    expect(c, "GET x\r\nBF.EXISTS exact\r\nBF.SCANDUMP x 0\r\n",
           "-ERR unknown command 'GET'\r\n"
           "-ERR wrong number of arguments for 'bf.exists' command\r\n"
           "-ERR unknown command 'BF.SCANDUMP'\r\n");
    /* What clients send on connecting. */
    expect(c,
           "SELECT 0\r\nSELECT 1\r\nCLIENT SETNAME t\r\nCLIENT SETINFO LIB-NAME x\r\n"
           "COMMAND COUNT\r\nCOMMAND DOCS\r\nHELLO 3\r\n",
           "+OK\r\n-ERR DB index is out of range\r\n+OK\r\n+OK\r\n:28\r\n*0\r\n"
           "-NOPROTO unsupported protocol version (bloomgate speaks RESP2)\r\n");
    expect(c, "QUIT\r\n", "+OK\r\n");
    expect_closed(c);
    dh_finish(d);
}
END_TEST

/* A url (host) filter's BF.EXISTS reads its item as CHECK does: the same
 * answers as the line protocol, item by item. */
START_TEST(test_key_kinds)
{
    struct dh_daemon *d = start(NULL);
    struct dh_conn *c = rconnect(d);
    struct dh_conn *l = dh_connect(d);
    static const char *const urls[] = {
        "http://EVIL.example.com/dropper.exe", "https://evil.example.com:8443/dropper.exe?x=1",
        "http://evil.example.com/other.exe",   "http://www.debian.org/",
        "evil.example.com/dropper.exe",
    };
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        char req[512], want[512];
        snprintf(req, sizeof(req), "CHECK urls %s", urls[i]);
        const char *line = dh_cmd(l, req);
        if (strncmp(line, "ERR ", 4) == 0)
            snprintf(want, sizeof(want), "-%s\r\n", line);
        else
            snprintf(want, sizeof(want), ":%d\r\n", strcmp(line, "YES") == 0);
        snprintf(req, sizeof(req), "BF.EXISTS urls %s\r\n", urls[i]);
        expect(c, req, want);
    }
    expect(c, "BF.MEXISTS urls HTTP://Evil.Example.COM/dropper.exe http://www.debian.org/\r\n",
           "*2\r\n:1\r\n:0\r\n");
    expect(c, "BF.MEXISTS hosts deep.sub.bad.example.org bob@bad.example.org ok.example.org\r\n",
           "*3\r\n:1\r\n:1\r\n:0\r\n");
    /* An item the kind cannot read fails the request, as on the line protocol. */
    expect(c, "BF.EXISTS urls mailto:bob@evil.example.com\r\n",
           "-ERR bad_item bad URL: not a URL with a host (scheme without \"//\")\r\n");
    expect(c, "BF.MEXISTS urls http://x.example/ mailto:x\r\n",
           "-ERR bad_item item 2: bad URL: not a URL with a host (scheme without \"//\")\r\n");
    /* BF.ADD on a url filter adds the canonical key, journaled. */
    expect(c, "BF.ADD urls http://Drop.Example:80/Payload.bin\r\n", ":1\r\n");
    expect(c, "BF.EXISTS urls https://cdn.drop.example/Payload.bin?id=7\r\n", ":1\r\n");
    expect(c, "BF.ADD exact journaled\r\n", ":1\r\n");
    dh_close(c);
    dh_close(l);
    dh_restart(d); /* the journals are replayed */
    c = rconnect(d);
    expect(c, "BF.EXISTS urls http://drop.example/Payload.bin\r\nBF.EXISTS exact journaled\r\n",
           ":1\r\n:1\r\n");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* AUTH is the admin_token, as on the other fronts; checks need none. */
START_TEST(test_auth)
{
    struct dh_daemon *d = start("admin_token s3cret");
    struct dh_conn *c = rconnect(d);
    expect(c, "BF.EXISTS exact a\r\nBF.ADD exact x\r\nBF.MADD exact x y\r\n",
           ":1\r\n-NOPERM BF.ADD needs AUTH <token> first on this connection\r\n"
           "-NOPERM BF.MADD needs AUTH <token> first on this connection\r\n");
    expect(c, "AUTH wrong\r\nAUTH someone s3cret\r\nBF.ADD exact x\r\n",
           "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
           "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
           "-NOPERM BF.ADD needs AUTH <token> first on this connection\r\n");
    expect(c, "AUTH s3cret\r\nBF.ADD exact x\r\n", "+OK\r\n:1\r\n");
    dh_close(c);
    c = rconnect(d);
    expect(c, "AUTH default s3cret\r\nBF.ADD exact y\r\n", "+OK\r\n:1\r\n");
    dh_close(c);
    c = rconnect(d);
    expect(c, "HELLO 2 AUTH default wrong\r\n",
           "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    /* HELLO's map (flattened: RESP2) ends with an empty modules array. */
    ck_assert_int_eq(dh_send(c, "HELLO 2 AUTH default s3cret\r\nBF.ADD exact z\r\n", 45, T_MS), 0);
    expect(c, "", "*14\r\n$6\r\nserver\r\n$9\r\nbloomgate\r\n");
    const char *l;
    while ((l = dh_read_line(c, T_MS)) && strcmp(l, "modules\r") != 0)
        ;
    ck_assert_ptr_nonnull(l);
    expect(c, "", "*0\r\n:1\r\n");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* max_items and max_item are the line protocol's, as RESP errors; the
 * connection goes on. */
START_TEST(test_limits)
{
    struct dh_daemon *d = start("max_items 4\nmax_item 8\nmax_line 1024");
    struct dh_conn *c = rconnect(d);
    expect(c, "BF.MEXISTS exact a b c d e\r\nPING\r\n",
           "-ERR too_many_items 5 items, the limit is max_items 4\r\n+PONG\r\n");
    expect(c, "*3\r\n$9\r\nBF.EXISTS\r\n$5\r\nexact\r\n$9\r\n123456789\r\nPING\r\n",
           "-ERR item_too_long item 1 is 9 bytes, the limit is max_item 8\r\n+PONG\r\n");
    /* More arguments than any command takes: refused whole, then go on. */
    expect(c, "BF.MEXISTS exact 1 2 3 4 5 6 7 8 9 10 11 12 13\r\nPING\r\n",
           "-ERR too_many_items 15 arguments, the limit is 12\r\n+PONG\r\n");
    /* A bulk longer than max_line is framing: an error and a close. */
    expect(c, "*3\r\n$9\r\nBF.EXISTS\r\n$5\r\nexact\r\n$1025\r\n",
           "-ERR Protocol error: invalid bulk length 1025 (the limit is 1024)\r\n");
    expect_closed(c);
    /* So is an inline line past max_line. */
    c = rconnect(d);
    char line[1100];
    memset(line, 'a', sizeof(line));
    ck_assert_int_eq(dh_send(c, line, sizeof(line), T_MS), 0);
    expect(c, "", "-ERR Protocol error: too big inline request (the limit is 1024 bytes)\r\n");
    expect_closed(c);
    dh_expect_ping(d);
    dh_finish(d);
}
END_TEST

/* Framing attacks: each gets an error and a close, and the daemon serves on. */
START_TEST(test_hostile_framing)
{
    struct dh_daemon *d = start(NULL);
    static const struct {
        const char *send, *want;
    } cases[] = {
        {"*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
        {"*1\r\n$-7\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
        {"*1\r\n$99999999999\r\n",
         "-ERR Protocol error: invalid bulk length 99999999999 (the limit is 65536)\r\n"},
        {"*-3\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
        {"*1048577\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
        {"*2\r\n*1\r\n$4\r\nPING\r\n", "-ERR Protocol error: expected '$', got '*'\r\n"},
        {"*1\r\n$4\r\nPINGPONG\r\n", "-ERR Protocol error: expected CRLF after the bulk data\r\n"},
        {"PING\r\n*1\r\n$4\r\nPING\r\n*9\r\n:1\r\n",
         "+PONG\r\n+PONG\r\n-ERR Protocol error: expected '$', got ':'\r\n"},
        {"ECHO \"open\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct dh_conn *c = rconnect(d);
        expect(c, cases[i].send, cases[i].want);
        expect_closed(c);
        dh_close(c);
    }
    /* A frame that declares a million arguments and keeps sending small ones:
     * refused once it passes the request limit (max_line 64K plus framing per
     * argument), not buffered to the end. */
    struct dh_conn *c = rconnect(d);
    size_t cap = 2u << 20, len = 0;
    char *big = malloc(cap);
    len += (size_t)snprintf(big, cap, "*1000000\r\n");
    while (len + 16 < cap)
        len += (size_t)snprintf(big + len, cap - len, "$1\r\na\r\n");
    dh_send(c, big, len, T_MS); /* may fail once the server has closed */
    free(big);
    const char *l = dh_read_line(c, T_MS);
    ck_assert_ptr_nonnull(l);
    ck_assert_msg(strncmp(l, "-ERR Protocol error: a request of more than ", 44) == 0, "got %s", l);
    expect_closed(c);
    /* A truncated frame and a close from the client: nothing to answer. */
    c = rconnect(d);
    ck_assert_int_eq(dh_send(c, "*3\r\n$9\r\nBF.EXISTS\r\n$5\r\nex", 25, T_MS), 0);
    dh_close(c);
    dh_expect_ping(d);
    c = rconnect(d);
    expect(c, "PING\r\n", "+PONG\r\n");
    dh_finish(d);
}
END_TEST

/* MULTI ... EXEC, as Redis answers it: +QUEUED, then one array of the
 * replies in order; a command refused while queuing fails EXEC. */
START_TEST(test_multi)
{
    struct dh_daemon *d = start("max_items 4");
    struct dh_conn *c = rconnect(d);
    expect(c, "MULTI\r\nBF.EXISTS exact a\r\nBF.MADD exact tx1 a\r\nPING\r\nUNWATCH\r\nEXEC\r\n",
           "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n"
           "*4\r\n:1\r\n*2\r\n:1\r\n:0\r\n+PONG\r\n+OK\r\n");
    /* Out of MULTI again: commands answer at once. */
    expect(c, "BF.EXISTS exact tx1\r\n", ":1\r\n");
    /* Multibulk, in one write, the way redis-py's pipeline sends it. */
    expect(c,
           "*1\r\n$5\r\nMULTI\r\n*3\r\n$9\r\nBF.EXISTS\r\n$5\r\nexact\r\n$1\r\nz\r\n"
           "*1\r\n$4\r\nEXEC\r\n",
           "+OK\r\n+QUEUED\r\n*1\r\n:0\r\n");
    /* Errors while queuing: answered at once, then EXEC aborts. A command
     * that fails when it runs does not stop the others. */
    expect(c, "MULTI\r\nNOPE\r\nBF.EXISTS exact a\r\nEXEC\r\nBF.EXISTS exact a\r\n",
           "+OK\r\n-ERR unknown command 'NOPE'\r\n+QUEUED\r\n"
           "-EXECABORT Transaction discarded because of previous errors.\r\n:1\r\n");
    expect(c, "MULTI\r\nBF.EXISTS exact a\r\nBF.EXISTS exact\r\nEXEC\r\n",
           "+OK\r\n+QUEUED\r\n-ERR wrong number of arguments for 'bf.exists' command\r\n"
           "-EXECABORT Transaction discarded because of previous errors.\r\n");
    expect(
        c, "MULTI\r\nBF.INFO nope\r\nBF.EXISTS exact a\r\nEXEC\r\n",
        "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n-ERR unknown_filter no such filter 'nope'\r\n:1\r\n");
    /* A request the parser refuses whole (too many arguments) aborts too. */
    expect(c, "MULTI\r\nBF.MEXISTS exact 1 2 3 4 5 6 7 8 9 10 11 12 13\r\nEXEC\r\n",
           "+OK\r\n-ERR too_many_items 15 arguments, the limit is 12\r\n"
           "-EXECABORT Transaction discarded because of previous errors.\r\n");
    /* The queue holds max_items commands. */
    expect(c, "MULTI\r\nPING\r\nPING\r\nPING\r\nPING\r\nPING\r\nEXEC\r\n",
           "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n"
           "-ERR too_many_items the transaction holds 4 commands, the limit is max_items (4): "
           "EXEC will discard it\r\n"
           "-EXECABORT Transaction discarded because of previous errors.\r\n");
    /* DISCARD, nesting, and the verbs out of place. */
    expect(c,
           "MULTI\r\nMULTI\r\nBF.ADD exact discarded\r\nDISCARD\r\nBF.EXISTS exact discarded\r\n",
           "+OK\r\n-ERR MULTI calls can not be nested\r\n+QUEUED\r\n+OK\r\n:0\r\n");
    expect(c, "EXEC\r\nDISCARD\r\nUNWATCH\r\nMULTI\r\nEXEC\r\n",
           "-ERR EXEC without MULTI\r\n-ERR DISCARD without MULTI\r\n+OK\r\n+OK\r\n*0\r\n");
    expect(c, "WATCH exact\r\n",
           "-ERR WATCH is not supported: bloomgate keeps no per-filter version for EXEC to "
           "compare (MULTI/EXEC without WATCH works)\r\n");
    /* QUIT acts at once, even inside MULTI; a queue left behind is freed. */
    expect(c, "MULTI\r\nBF.ADD exact never\r\nQUIT\r\n", "+OK\r\n+QUEUED\r\n+OK\r\n");
    expect_closed(c);
    dh_close(c);
    /* What EXEC added was journaled: a restart finds it. */
    dh_restart(d);
    c = rconnect(d);
    expect(c, "BF.MEXISTS exact tx1 never\r\n", "*2\r\n:1\r\n:0\r\n");
    dh_finish(d);
}
END_TEST

/* EXISTS, TYPE, KEYS, SCAN over the served filter names. */
START_TEST(test_keyspace)
{
    struct dh_daemon *d = start(NULL);
    struct dh_conn *c = rconnect(d);
    expect(c, "EXISTS exact\r\nEXISTS nope\r\nEXISTS exact nope urls exact\r\n",
           ":1\r\n:0\r\n:3\r\n");
    expect(c, "TYPE hosts\r\nTYPE nope\r\n", "+MBbloom--\r\n+none\r\n");
    expect(c, "KEYS *\r\n", "*3\r\n$5\r\nexact\r\n$4\r\nurls\r\n$5\r\nhosts\r\n");
    expect(c, "KEYS *s\r\nKEYS [eu]*\r\nKEYS ?xact\r\nKEYS x*\r\n",
           "*2\r\n$4\r\nurls\r\n$5\r\nhosts\r\n*2\r\n$5\r\nexact\r\n$4\r\nurls\r\n"
           "*1\r\n$5\r\nexact\r\n*0\r\n");
    expect(c, "SCAN 0\r\n", "*2\r\n$1\r\n0\r\n*3\r\n$5\r\nexact\r\n$4\r\nurls\r\n$5\r\nhosts\r\n");
    expect(c, "SCAN 0 MATCH h* COUNT 1\r\nSCAN 0 TYPE string\r\nSCAN 0 TYPE MBbloom-- MATCH u*\r\n",
           "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nhosts\r\n*2\r\n$1\r\n0\r\n*0\r\n"
           "*2\r\n$1\r\n0\r\n*1\r\n$4\r\nurls\r\n");
    expect(c, "SCAN 17\r\nSCAN x\r\nSCAN 0 COUNT x\r\nSCAN 0 MATCH\r\nSCAN 0 BOGUS 1\r\n",
           "*2\r\n$1\r\n0\r\n*0\r\n-ERR invalid cursor\r\n"
           "-ERR value is not an integer or out of range\r\n-ERR syntax error\r\n"
           "-ERR syntax error\r\n");
    dh_finish(d);
}
END_TEST

/* A growing filter's BF.INFO as RedisBloom's scaling filter answers
 * (tests/flow test_expansion: capacity 4, rate 0.01, 100 adds, expansion
 * 2: 5 sub-filters, capacity 4+8+16+32+64). A full fixed-size filter under
 * `full refuse` refuses with RedisBloom's words on RESP, "is full" on the
 * line protocol; under the default it takes the add. */
START_TEST(test_growth_and_full)
{
    struct dh_daemon *d = start("filter grow {\n  capacity 4\n  fpr 0.01\n  growth on\n}\n"
                                "filter small {\n  capacity 3\n  fpr 0.01\n  full refuse\n}\n"
                                "filter loose {\n  capacity 3\n  fpr 0.01\n}\n");
    struct dh_conn *c = rconnect(d);
    char req[2048];
    size_t o = (size_t)snprintf(req, sizeof(req), "BF.MADD grow");
    for (int i = 0; i < 100; i++)
        o += (size_t)snprintf(req + o, sizeof(req) - o, " item%d", i);
    snprintf(req + o, sizeof(req) - o, "\r\n");
    ck_assert_int_eq(dh_send(c, req, strlen(req), T_MS), 0);
    for (int i = 0; i < 101; i++)
        ck_assert_ptr_nonnull(dh_read_line(c, T_MS));
    expect(c, "BF.INFO grow CAPACITY\r\nBF.INFO grow FILTERS\r\nBF.INFO grow EXPANSION\r\n",
           "*1\r\n:124\r\n*1\r\n:5\r\n*1\r\n:2\r\n");
    expect(c, "BF.INFO small\r\n",
           "*10\r\n+Capacity\r\n:3\r\n+Size\r\n:64\r\n+Number of filters\r\n:1\r\n"
           "+Number of items inserted\r\n:0\r\n+Expansion rate\r\n$-1\r\n");
    expect(c, "BF.MADD small a b c\r\nBF.ADD small d\r\nBF.MADD small a d\r\nBF.MADD small a b\r\n",
           "*3\r\n:1\r\n:1\r\n:1\r\n-ERR non scaling filter is full\r\n"
           "-ERR non scaling filter is full\r\n*2\r\n:0\r\n:0\r\n");
    expect(c, "BF.MEXISTS small d\r\nBF.MADD loose a b c d\r\n",
           "*1\r\n:0\r\n*4\r\n:1\r\n:1\r\n:1\r\n:1\r\n");
    struct dh_conn *l = dh_connect(d);
    const char *got = dh_cmd(l, "ADD small e");
    ck_assert_msg(strncmp(got, "ERR ", 4) == 0 && strstr(got, "filter small is full: it holds 3 "
                                                              "items of its capacity 3"),
                  "%s", got);
    dh_finish(d);
}
END_TEST

/* BF.RESERVE's and BF.INSERT's argument errors in RedisBloom's words (its
 * tests/flow match them): an EXPANSION outside RedisBloom's range, one that
 * is no integer, one bloomgate does not grow by; ITEMS with no item. */
START_TEST(test_create_arguments)
{
    struct dh_daemon *d = start("state_dir @DIR@");
    struct dh_conn *c = rconnect(d);
    expect(c,
           "BF.RESERVE b 0.1 1 EXPANSION -1\r\nBF.RESERVE b 0.1 1 EXPANSION 0\r\n"
           "BF.RESERVE b 0.1 1 EXPANSION big\r\nBF.RESERVE b 0.1 1 EXPANSION 4\r\n",
           "-ERR expansion must be in the range [1, 32768]\r\n"
           "-ERR expansion must be in the range [1, 32768]\r\n-ERR bad expansion\r\n"
           "-ERR bad_option bloomgate's growing filters double: EXPANSION 2 only "
           "(docs/resp.md)\r\n");
    expect(c, "BF.RESERVE b 0.1 10\r\nBF.INSERT b NOCREATE ITEMS\r\nBF.INSERT b ITEMS x y\r\n",
           "+OK\r\n-ERR wrong number of arguments for 'bf.insert' command\r\n*2\r\n:1\r\n:1\r\n");
    dh_finish(d);
}
END_TEST

/* Its counters show in the line protocol's INFO. */
START_TEST(test_counted)
{
    struct dh_daemon *d = start(NULL);
    struct dh_conn *c = rconnect(d);
    expect(c, "BF.MEXISTS exact a b z\r\nNOPE\r\n", "*3\r\n:1\r\n:1\r\n:0\r\n-ERR unknown command 'NOPE'\r\n");
    struct dh_conn *l = dh_connect(d);
    const char *info = dh_cmd(l, "INFO");
    ck_assert_msg(strstr(info, "\"resp_requests\":2") != NULL, "%s", info);
    ck_assert_msg(strstr(info, "\"resp_connections_accepted\":1") != NULL, "%s", info);
    dh_finish(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("resp");
    const TTest *tests[] = {test_bf_commands,
                            test_key_kinds,
                            test_auth,
                            test_limits,
                            test_multi,
                            test_keyspace,
                            test_growth_and_full,
                            test_hostile_framing,
                            test_counted,
                            test_create_arguments,
                            NULL};
    dh_add_case(s, "resp", 120, tests);
    return dh_run_suite(s);
}
