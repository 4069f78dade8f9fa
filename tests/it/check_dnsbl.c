/* Integration tests of the DNSBL front against a real bloomgated, queried
 * with dig (bind9-dnsutils) over UDP and TCP: A, TXT, NXDOMAIN, REFUSED, the
 * RFC 5782 test points, SOA and NS at the apex, an IPv4, an IPv6 and a
 * domain zone; and hostile packets (garbage, compression loops, other
 * classes and opcodes) sent raw, after which the daemon must still answer;
 * and floods, which must neither grow its memory nor hold its other
 * clients. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/daemon_harness.h"

#define DIG "/usr/bin/dig"

static char out[65536];

/* dig @127.0.0.1 -p port [+tcp] [opt] name type, +norec, with the header
 * comments and the answer and authority sections; its output in out. */
static const char *dig_opt(struct dh_daemon *d, int port, bool tcp, const char *opt,
                           const char *name, const char *type)
{
    char p[16], path[DH_PATH_MAX];
    snprintf(p, sizeof(p), "%d", port);
    dh_path(d, "dig.out", path);
    const char *argv[] = {DIG,       "@127.0.0.1", "-p",        p,         tcp ? "+tcp" : "+notcp",
                          "+norec",  "+noall",     "+comments", "+answer", "+authority",
                          "+time=5", "+tries=2",   opt,         name,      type,
                          NULL};
    int st = dh_run(argv, path, DH_TIMEOUT_MS * 3);
    ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s",
                  dh_explain(d, "dig failed"));
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, sizeof(out) - 1, f);
    fclose(f);
    /* dig aligns its columns with tabs and spaces as the widths fall: one
     * space for each run, so that the tests read the records plainly. */
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        bool ws = out[i] == ' ' || out[i] == '\t';
        if (ws && o > 0 && out[o - 1] == ' ')
            continue;
        out[o++] = ws ? ' ' : out[i];
    }
    out[o] = '\0';
    return out;
}

static const char *dig(struct dh_daemon *d, int port, bool tcp, const char *name, const char *type)
{
    return dig_opt(d, port, tcp, "+noqr", name, type);
}

#define HAS(text, part)                                                                            \
    ck_assert_msg(strstr((text), (part)) != NULL, "want \"%s\" in:\n%s", part, text)
#define HASNT(text, part)                                                                          \
    ck_assert_msg(strstr((text), (part)) == NULL, "unwanted \"%s\" in:\n%s", part, text)

/* The daemon of these tests, extra (e.g. "threads 1\n") first in its config. */
static struct dh_daemon *start_with(const char *extra)
{
    struct dh_daemon *d = dh_new();
    static const char *const ips[] = {"192.0.2.1", "2001:db8::1"};
    dh_build_filter(d, "ips.bloom", ips, 2, 1000, 1e-6);
    char list[DH_PATH_MAX], bloom[DH_PATH_MAX];
    dh_path(d, "doms.txt", list);
    dh_path(d, "doms.bloom", bloom);
    FILE *f = fopen(list, "w");
    ck_assert_ptr_nonnull(f);
    fputs("spam.test\nevil.example\n", f);
    fclose(f);
    const char *argv[] = {dh_tool_path(), "build", "-q", "-k",  "host", "-S", "7",
                          "-p",           "1e-6",  "-o", bloom, list,   NULL};
    ck_assert_int_eq(dh_run(argv, NULL, DH_TIMEOUT_MS), 0);
    char conf[2048];
    snprintf(conf, sizeof(conf),
             "%slisten 127.0.0.1:0\n"
             "filter ips {\n file @DIR@/ips.bloom\n keys exact\n}\n"
             "filter doms {\n file @DIR@/doms.bloom\n keys host\n}\n"
             "dnsbl {\n listen 127.0.0.1:0\n zone bl.example.org\n filter ips\n"
             " txt \"$ is listed, see https://example.org/q?ip=$\"\n ttl 120\n}\n"
             "dnsbl {\n listen 127.0.0.1:0\n zone DBL.example.org.\n filter doms\n"
             " answer 127.0.1.2\n}\n",
             extra);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

static struct dh_daemon *start(void)
{
    return start_with("");
}

static int zone_port(struct dh_daemon *d, unsigned idx)
{
    int p = dh_tagged_port(d, "dnsbl ", idx);
    ck_assert_int_gt(p, 0);
    return p;
}

START_TEST(test_ipv4_zone)
{
    struct dh_daemon *d = start();
    int port = zone_port(d, 0);
    for (int tcp = 0; tcp < 2; tcp++) {
        const char *r = dig(d, port, tcp, "1.2.0.192.bl.example.org", "A");
        HAS(r, "status: NOERROR");
        HAS(r, "flags: qr aa;");
        HAS(r, "1.2.0.192.bl.example.org. 120 IN A 127.0.0.2");
        r = dig(d, port, tcp, "1.2.0.192.BL.Example.ORG", "TXT");
        HAS(r, "\"192.0.2.1 is listed, see https://example.org/q?ip=192.0.2.1\"");
        r = dig(d, port, tcp, "2.2.0.192.bl.example.org", "A");
        HAS(r, "status: NXDOMAIN");
        HAS(r, "bl.example.org. 120 IN SOA bl.example.org. hostmaster.bl.example.org. ");
        HAS(r, " 3600 600 86400 120");
        /* RFC 5782 section 5: the test points. */
        r = dig(d, port, tcp, "2.0.0.127.bl.example.org", "A");
        HAS(r, "status: NOERROR");
        HAS(r, "IN A 127.0.0.2");
        r = dig(d, port, tcp, "2.0.0.127.bl.example.org", "TXT");
        HAS(r, "\"127.0.0.2 is listed");
        r = dig(d, port, tcp, "1.0.0.127.bl.example.org", "A");
        HAS(r, "status: NXDOMAIN");
        /* Names that are no address, outside the zone, another class. */
        r = dig(d, port, tcp, "5.1.2.0.192.bl.example.org", "A");
        HAS(r, "status: NXDOMAIN");
        r = dig(d, port, tcp, "1.2.0.192.example.com", "A");
        HAS(r, "status: REFUSED");
        HASNT(r, " aa;");
        r = dig(d, port, tcp, "1.2.0.192.bl.example.org", "-c CH A");
        (void)r;
        /* The apex: SOA, NS; other types NODATA with the SOA. */
        r = dig(d, port, tcp, "bl.example.org", "SOA");
        HAS(r, "ANSWER: 1");
        HAS(r, "IN SOA bl.example.org. hostmaster.bl.example.org.");
        r = dig(d, port, tcp, "bl.example.org", "NS");
        HAS(r, "IN NS bl.example.org.");
        r = dig(d, port, tcp, "bl.example.org", "A");
        HAS(r, "status: NOERROR");
        HAS(r, "ANSWER: 0, AUTHORITY: 1");
        /* Listed, a type it has no record of: NODATA. */
        r = dig(d, port, tcp, "1.2.0.192.bl.example.org", "MX");
        HAS(r, "status: NOERROR");
        HAS(r, "ANSWER: 0, AUTHORITY: 1");
    }
    dh_finish(d);
}
END_TEST

START_TEST(test_ipv6_and_domain_zones)
{
    struct dh_daemon *d = start();
    int v6 = zone_port(d, 0), dom = zone_port(d, 1);
    for (int tcp = 0; tcp < 2; tcp++) {
        const char *r = dig(d, v6, tcp,
                            "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2."
                            "bl.example.org",
                            "TXT");
        HAS(r, "\"2001:db8::1 is listed");
        r = dig(d, v6, tcp,
                "2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.bl.example.org",
                "A");
        HAS(r, "status: NXDOMAIN");
        r = dig(d, v6, tcp,
                "2.0.0.0.0.0.f.7.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.bl.example.org",
                "A");
        HAS(r, "IN A 127.0.0.2");
        r = dig(d, v6, tcp,
                "1.0.0.0.0.0.f.7.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.bl.example.org",
                "A");
        HAS(r, "status: NXDOMAIN");
        /* The domain zone: the domain and its parents, the answer configured. */
        r = dig(d, dom, tcp, "deep.sub.Spam.Test.dbl.example.org", "A");
        HAS(r, "IN A 127.0.1.2");
        r = dig(d, dom, tcp, "evil.example.dbl.example.org", "A");
        HAS(r, "IN A 127.0.1.2");
        r = dig(d, dom, tcp, "notspam.test.dbl.example.org", "A");
        HAS(r, "status: NXDOMAIN");
        r = dig(d, dom, tcp, "test.dbl.example.org", "A");
        HAS(r, "IN A 127.0.1.2");
        r = dig(d, dom, tcp, "invalid.dbl.example.org", "A");
        HAS(r, "status: NXDOMAIN");
        r = dig(d, dom, tcp, "dbl.example.org", "SOA");
        HAS(r, "IN SOA dbl.example.org. hostmaster.dbl.example.org.");
    }
    dh_finish(d);
}
END_TEST

/* An opcode other than QUERY (dig +opcode=...) for a listed name is NOTIMP,
 * over UDP and TCP, in an answer with the request's opcode (dig rejects
 * another: "Opcode mismatch"), and never the record. */
START_TEST(test_other_opcodes_are_notimp)
{
    struct dh_daemon *d = start();
    int port = zone_port(d, 0);
    static const char *const ops[] = {"iquery", "status", "notify", "update"};
    static const char *const shown[] = {"IQUERY", "STATUS", "NOTIFY", "UPDATE"};
    for (int tcp = 0; tcp < 2; tcp++) {
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
            char opt[32], want[64];
            snprintf(opt, sizeof(opt), "+opcode=%s", ops[i]);
            const char *r = dig_opt(d, port, tcp, opt, "1.2.0.192.bl.example.org", "A");
            snprintf(want, sizeof(want), "opcode: %s, status: NOTIMP", shown[i]);
            HAS(r, want);
            HASNT(r, "mismatch");
            HASNT(r, "127.0.0.2");
        }
        /* A query still answers. */
        HAS(dig(d, port, tcp, "1.2.0.192.bl.example.org", "A"), "IN A 127.0.0.2");
    }
    dh_finish(d);
}
END_TEST

/* Send pkt over UDP to port; the reply's length (0 if none within 2 s). */
static ssize_t udp_ask(int port, const void *pkt, size_t len, uint8_t *reply, size_t cap)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(sendto(fd, pkt, len, 0, (struct sockaddr *)&sa, sizeof(sa)), (ssize_t)len);
    struct pollfd pfd = {fd, POLLIN, 0};
    ssize_t n = 0;
    if (poll(&pfd, 1, 2000) == 1)
        n = recv(fd, reply, cap, 0);
    close(fd);
    return n < 0 ? 0 : n;
}

START_TEST(test_hostile)
{
    struct dh_daemon *d = start();
    int port = zone_port(d, 0);
    uint8_t reply[4096];
    /* Garbage, a response, a pointer loop, two questions, another opcode. */
    static const uint8_t loop[] = {0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1};
    static const uint8_t two[] = {0,   2, 1, 0, 0, 2, 0, 0,   0, 0, 0, 0, 1,
                                  'x', 0, 0, 1, 0, 1, 1, 'y', 0, 0, 1, 0, 1};
    static const uint8_t notify[] = {0, 3, 0x20, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 1};
    /* Shorter than a header: no answer (libevent 2.1.12's evdns, which
     * served UDP before, crashed on these: its issue #1231). */
    ck_assert_int_eq(udp_ask(port, "xyz", 3, reply, sizeof(reply)), 0);
    ck_assert_int_eq(udp_ask(port, "", 0, reply, sizeof(reply)), 0);
    ck_assert_int_eq(udp_ask(port, "0123456789a", 11, reply, sizeof(reply)), 0);
    ssize_t n = udp_ask(port, loop, sizeof(loop), reply, sizeof(reply));
    ck_assert_int_ge(n, 12);
    ck_assert_int_eq(reply[3] & 15, 1); /* FORMERR */
    n = udp_ask(port, two, sizeof(two), reply, sizeof(reply));
    ck_assert_int_ge(n, 12);
    ck_assert_int_eq(reply[3] & 15, 1); /* FORMERR */
    /* Not a query: NOTIMP, as over TCP (evdns 2.1 cleared the opcode before
     * it checked it, so a NOTIFY reached the zone as a query for the root). */
    n = udp_ask(port, notify, sizeof(notify), reply, sizeof(reply));
    ck_assert_int_ge(n, 12);
    ck_assert_int_eq(reply[3] & 15, 4);
    ck_assert_int_eq(reply[2], 0x80 | 0x20); /* QR, opcode NOTIFY */
    /* The same over TCP: framed; answered in order, the connection kept. */
    struct dh_conn *c = dh_conn_wrap(dh_connect_fd(port), d);
    uint8_t framed[64];
    framed[0] = 0;
    framed[1] = sizeof(loop);
    memcpy(framed + 2, loop, sizeof(loop));
    ck_assert_int_eq(dh_send(c, framed, 2 + sizeof(loop), DH_TIMEOUT_MS), 0);
    framed[1] = sizeof(two);
    memcpy(framed + 2, two, sizeof(two));
    ck_assert_int_eq(dh_send(c, framed, 2 + sizeof(two), DH_TIMEOUT_MS), 0);
    framed[1] = sizeof(notify);
    memcpy(framed + 2, notify, sizeof(notify));
    ck_assert_int_eq(dh_send(c, framed, 2 + sizeof(notify), DH_TIMEOUT_MS), 0);
    /* FORMERR, FORMERR, NOTIMP: 12 bytes each, each with its length. */
    uint8_t got[42];
    size_t have = 0;
    int fd = c->fd;
    while (have < sizeof(got)) {
        struct pollfd pfd = {fd, POLLIN, 0};
        ck_assert_int_eq(poll(&pfd, 1, DH_TIMEOUT_MS), 1);
        ssize_t r = recv(fd, got + have, sizeof(got) - have, 0);
        ck_assert_int_gt(r, 0);
        have += (size_t)r;
    }
    ck_assert(got[0] == 0 && got[1] == 12 && (got[5] & 15) == 1 && got[2] == 0 && got[3] == 1);
    ck_assert(got[14] == 0 && got[15] == 12 && (got[19] & 15) == 1 && got[16] == 0 && got[17] == 2);
    ck_assert(got[28] == 0 && got[29] == 12 && (got[33] & 15) == 4 && got[31] == 3);
    ck_assert_int_eq(got[32], 0x80 | 0x20); /* QR, opcode NOTIFY */
    dh_close(c);
    /* Still answering. */
    const char *r = dig(d, port, false, "1.2.0.192.bl.example.org", "A");
    HAS(r, "IN A 127.0.0.2");
    dh_finish(d);
}
END_TEST

/* A query for name (type A, class IN) with the given id into pkt; its length. */
static size_t make_query(uint8_t *pkt, uint16_t id, const char *name)
{
    size_t n = 12;
    memset(pkt, 0, 12);
    pkt[0] = (uint8_t)(id >> 8);
    pkt[1] = (uint8_t)id;
    pkt[5] = 1;
    for (const char *p = name; *p;) {
        const char *dot = strchr(p, '.');
        size_t l = dot ? (size_t)(dot - p) : strlen(p);
        pkt[n++] = (uint8_t)l;
        memcpy(pkt + n, p, l);
        n += l;
        p += l + (dot != NULL);
    }
    memcpy(pkt + n, "\0\0\1\0\1", 5);
    return n + 5;
}

/* A flood from one source that never reads its answers: answered as fast as
 * the worker goes (the kernel drops what the client's socket cannot hold),
 * memory bounded, and the zone still answers others afterwards. */
START_TEST(test_flood)
{
    struct dh_daemon *d = start();
    int port = zone_port(d, 0);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    long rss0 = dh_rss_kib(d->pid), rss_max = rss0;
    uint8_t pkt[64];
    for (int i = 0; i < 20000; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%d.%d.2.1.bl.example.org", i % 256, (i / 256) % 256);
        size_t n = make_query(pkt, (uint16_t)i, name);
        /* A full send buffer is the kernel's to drop: never block the flood. */
        (void)sendto(fd, pkt, n, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa));
        if (i % 2000 == 0) {
            long rss = dh_rss_kib(d->pid);
            if (rss > rss_max)
                rss_max = rss;
        }
    }
    close(fd);
    const char *r = dig(d, port, false, "1.2.0.192.bl.example.org", "A");
    HAS(r, "IN A 127.0.0.2");
    long rss = dh_rss_kib(d->pid);
    if (rss > rss_max)
        rss_max = rss;
    ck_assert_msg(rss_max < rss0 + 64 * 1024, "RSS grew from %ld to %ld KiB", rss0, rss_max);
    dh_finish(d);
}
END_TEST

/* dnsbl_requests in the reply to INFO on c (the worker's own count, since
 * the tests that use it run one worker). */
static long dnsbl_requests(struct dh_conn *c, bool send)
{
    if (send)
        ck_assert_int_eq(dh_sendf(c, "INFO\n"), 0);
    const char *r = dh_read_line(c, DH_TIMEOUT_MS);
    ck_assert_msg(r != NULL, "%s", dh_explain(c->d, "no reply to INFO"));
    const char *p = strstr(r, "\"dnsbl_requests\":");
    ck_assert_msg(p != NULL, "%s", r);
    return strtol(p + strlen("\"dnsbl_requests\":"), NULL, 10);
}

/* A UDP flood must not starve the TCP connections of the worker it lands
 * on. Shown without depending on speed: with one worker (so the flood and a
 * line client share it), the daemon is frozen while a backlog of queries
 * fills its UDP socket and then an INFO arrives on the line connection; once
 * thawed, the worker finds both ready, the UDP socket first. INFO's count of
 * DNS requests says how many queries the worker answered before it: fewer
 * than the backlog, because the worker reads a batch per pass of its loop,
 * then serves its other ready connections. (Reading until the socket was
 * empty, as evdns did, answered the whole backlog first: under a flood that
 * outruns the worker, the socket is never empty and the line client waits
 * for as long as the flood lasts.) */
START_TEST(test_udp_backlog_does_not_hold_tcp)
{
    struct dh_daemon *d = start_with("threads 1\n");
    int port = zone_port(d, 0);
    struct dh_conn *c = dh_connect(d);
    long before = dnsbl_requests(c, true);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    int big = 4 << 20; /* room for every answer (capped at rmem_max) */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    uint8_t pkt[64];
    ck_assert_int_eq(dh_freeze(d), 0);
    /* More than the socket holds: the kernel drops the rest. */
    for (int i = 0; i < 4000; i++) {
        size_t n = make_query(pkt, (uint16_t)i, "1.2.0.192.bl.example.org");
        (void)send(fd, pkt, n, MSG_DONTWAIT);
    }
    ck_assert_int_eq(dh_sendf(c, "INFO\n"), 0);
    ck_assert_int_eq(dh_thaw(d), 0);
    long at_info = dnsbl_requests(c, false) - before;
    /* Every query of the backlog gets its answer (our socket has room for
     * them all). A last query after them says when all have come: it is sent
     * again until answered, since the daemon's socket may still count itself
     * full and drop it. */
    uint8_t pkt_last[64], reply[600];
    size_t n_last = make_query(pkt_last, 0xfffe, "1.2.0.192.bl.example.org");
    long answered = 0;
    bool last = false;
    for (int waited = 0; !last; waited += 200) {
        ck_assert_msg(waited < 3 * DH_TIMEOUT_MS, "no answer to the last query");
        if (waited % 1000 == 0)
            ck_assert_int_eq(send(fd, pkt_last, n_last, 0), (ssize_t)n_last);
        struct pollfd pfd = {fd, POLLIN, 0};
        while (poll(&pfd, 1, 200) == 1) {
            ssize_t r = recv(fd, reply, sizeof(reply), 0);
            if (r >= 2 && reply[0] == 0xff && reply[1] == 0xfe)
                last = true;
            else if (r >= 12)
                answered++;
        }
    }
    close(fd);
    ck_assert_msg(answered > 2 * 64, "only %ld queries held by the socket", answered);
    ck_assert_msg(at_info < answered,
                  "INFO waited for the whole UDP backlog (%ld queries answered before it, of %ld)",
                  at_info, answered);
    dh_close(c);
    dh_finish(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dnsbl");
    const TTest *const tests[] = {test_ipv4_zone,
                                  test_ipv6_and_domain_zones,
                                  test_hostile,
                                  test_other_opcodes_are_notimp,
                                  test_flood,
                                  test_udp_backlog_does_not_hold_tcp,
                                  NULL};
    dh_add_case(s, "dnsbl", 300, tests);
    return dh_run_suite(s);
}
