/* The DNSBL front (RFC 5782) on the net layer: UDP through libevent's own
 * DNS server (evdns), TCP (libevent 2.1's evdns has no TCP server) framed
 * here with its 2-byte length on the one connection implementation and
 * parsed by dnswire.c. dnsbl.c decides every answer; the command table looks
 * the item up. Worker threads.
 *
 * Which thread serves UDP: every worker. Each binds its own SO_REUSEPORT UDP
 * socket on each dnsbl address and runs an evdns server port on its own
 * event_base, as it runs its own TCP listeners; the kernel spreads queries
 * over them by a hash of the source, so one resolver's queries stay on one
 * worker. evdns reads a socket until it is empty, answering as it goes (each
 * reply is written before the next query is read, so memory stays bounded
 * by evdns's one request at a time); a client that floods faster than that
 * worker answers keeps it in the read loop, where the callback reports
 * quiescent states itself so reloads still complete, while the other
 * workers serve everything else.
 *
 * The block a query belongs to is the one whose address it came in on: the
 * port's block index (UDP) or c->addr (TCP); the addresses are restart-only,
 * so the index holds across reloads. */
#include "config.h"

#include "front/dns/dns.h"

#include <errno.h>
#include <linux/filter.h>
#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/dns_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "core/cmd.h"
#include "front/dns/dnsbl.h"
#include "front/dns/dnswire.h"
#include "net/runtime.h"

#define TCP_MSG_MAX 65535
#define QUIESCE_EVERY 64 /* UDP queries between quiescent reports in a long read loop */

struct dns_port {
    struct dnsbl_worker *dw;
    size_t block;
    struct evdns_server_port *port;
};

struct dnsbl_worker {
    struct conn_worker cw; /* the worker and its env, proto = STATS_DNSBL (net/conn.h) */
    struct dns_port *ports;
    size_t n_ports;
    unsigned since_quiescent;
    struct dns_answer ans;
    uint8_t out[2 + TCP_MSG_MAX];
};

/* Look the name up in block b and fill dw->ans. */
static void resolve(struct dnsbl_worker *dw, const struct catalog *cat, const struct conf_dnsbl *b,
                    const char *name, size_t len, bool odd, uint16_t qtype, uint16_t qclass)
{
    char item[DNSBL_ITEM_MAX + 1];
    size_t il = 0;
    enum dnsbl_where where = dnsbl_classify(b->zone, b->domain, name, len, item, &il);
    if (odd && where != DNSBL_OUTSIDE && where != DNSBL_APEX)
        where = DNSBL_BAD_NAME; /* a label holding a dot: its text is not its name */
    bool listed = false;
    struct stats *s = &dw->cw.w->stats->s;
    STAT_ADD(s, dnsbl_requests, 1);
    if (where == DNSBL_ITEM && (qclass == DNS_CLASS_IN || qclass == DNS_CLASS_ANY)) {
        struct cmd_call call;
        cmd_call_init(&call, cat, NULL, 1, true, CMD_CRED_NONE);
        call.filter = b->filter;
        call.filter_len = strlen(b->filter);
        dw->cw.env.keys[0].data = item;
        dw->cw.env.keys[0].len = il;
        cmd_run(&dw->cw.env, CMD_CHECK, NULL, &call);
        if (call.err == CMD_OK) {
            listed = dw->cw.env.bools[0];
        } else if (call.err != CMD_ERR_BAD_ITEM) { /* a name the filter cannot read: NXDOMAIN */
            STAT_ADD(s, dnsbl_errors, 1);
            dnsbl_answer_servfail(&dw->ans);
            return;
        }
    }
    dnsbl_answer(b, name, where, listed, item, il, qtype, qclass,
                 (uint32_t)dw->cw.w->srv->started_wall, &dw->ans);
}

/* evdns's callback, on the worker's thread: one UDP query. */
static void udp_query(struct evdns_server_request *req, void *arg)
{
    struct dns_port *dp = arg;
    struct dnsbl_worker *dw = dp->dw;
    const struct catalog *cat = registry_read(dw->cw.w->reg);
    const struct conf *cf = cat->conf;
    if (dp->block >= cf->n_dnsbl || req->nquestions != 1) {
        evdns_server_request_respond(req, dp->block >= cf->n_dnsbl ? DNS_ERR_SERVERFAILED
                                                                   : DNS_ERR_FORMAT);
    } else {
        const struct evdns_server_question *q = req->questions[0];
        resolve(dw, cat, &cf->dnsbl[dp->block], q->name, strlen(q->name), false, (uint16_t)q->type,
                (uint16_t)q->dns_question_class);
        const struct dns_answer *a = &dw->ans;
        if (a->aa)
            evdns_server_request_set_flags(req, EVDNS_FLAGS_AA);
        for (size_t i = 0; i < a->n; i++) {
            const struct dns_rr *rr = &a->rr[i];
            evdns_server_request_add_reply(
                req, rr->section == DNS_ANSWER ? EVDNS_ANSWER_SECTION : EVDNS_AUTHORITY_SECTION,
                rr->owner, rr->type, EVDNS_CLASS_INET, (int)rr->ttl, rr->rdlen, 0,
                (const char *)rr->rdata);
        }
        evdns_server_request_respond(req, a->rcode);
    }
    /* registry_read's pointer is not used past here: a quiescent state. */
    if (++dw->since_quiescent >= QUIESCE_EVERY) {
        dw->since_quiescent = 0;
        registry_quiescent(dw->cw.w->reg, dw->cw.w->id);
    }
}

/* One TCP message (its length already taken off): the response, framed,
 * into c->out; nothing for what is not a query. */
static void tcp_message(struct conn *c, const struct catalog *cat, const struct conf_dnsbl *b,
                        const uint8_t *msg, size_t len)
{
    struct dnsbl_worker *dw = c->fw;
    struct dns_query q;
    char why[120];
    enum dns_status st = dns_parse_query(msg, len, &q, why, sizeof(why));
    size_t n = 0;
    if (st == DNS_DROP) {
        log_debug("dnsbl %s: dropped a message: %s", c->peer, why);
        return;
    }
    if (st == DNS_FORMERR || st == DNS_NOTIMP) {
        n = dns_build_error(q.id, q.flags, st == DNS_FORMERR ? DNS_RCODE_FORMERR : DNS_RCODE_NOTIMP,
                            dw->out + 2);
    } else {
        resolve(dw, cat, b, q.name, q.name_len, q.odd_name, q.qtype, q.qclass);
        n = dns_build_response(&q, &dw->ans, dw->out + 2, TCP_MSG_MAX, TCP_MSG_MAX);
    }
    if (n == 0)
        return;
    dw->out[0] = (uint8_t)(n >> 8);
    dw->out[1] = (uint8_t)n;
    conn_out_add(c, dw->out, n + 2);
}

/* DNS over TCP (RFC 1035 4.2.2, RFC 7766): messages framed by a 2-byte
 * length, answered in order, the connection kept open. */
static unsigned tcp_process(struct conn *c, bool draining)
{
    const struct catalog *cat = registry_read(c->w->reg);
    const struct conf *cf = cat->conf;
    if (c->addr >= cf->n_dnsbl) {
        c->closing = true;
        return 0;
    }
    const struct conf_dnsbl *b = &cf->dnsbl[c->addr];
    const uint8_t *in = (const uint8_t *)c->in;
    unsigned answered = 0;
    size_t off = 0;
    while (!c->closing && c->in_len - off >= 2) {
        size_t len = (size_t)in[off] << 8 | in[off + 1];
        if (c->in_len - off - 2 < len)
            break;
        if (conn_output_full(c, cf, draining))
            break;
        tcp_message(c, cat, b, in + off + 2, len);
        off += 2 + len;
        answered++;
    }
    conn_consume(c, off);
    return answered;
}

static size_t tcp_in_limit(const struct conf *cf)
{
    (void)cf;
    return 2 + TCP_MSG_MAX;
}

/* After the worker stopped: the UDP ports (dnsbl_bind_udp). */
static void dnsbl_worker_free(struct conn_worker *cw)
{
    struct dnsbl_worker *dw = (struct dnsbl_worker *)cw;
    for (size_t i = 0; i < dw->n_ports; i++)
        if (dw->ports[i].port)
            evdns_close_server_port(dw->ports[i].port); /* closes its socket */
    free(dw->ports);
}

/* libevent 2.1.12's evdns dereferences a NULL request when a datagram is
 * shorter than a DNS header (libevent issue #1231, fixed after 2.1.12; the
 * version Debian 12 ships): three bytes from anyone would crash the daemon.
 * So the kernel drops such datagrams before evdns reads them: a classic BPF
 * filter on the socket keeps a datagram only if it is at least 20 bytes,
 * which counts the 8-byte UDP header the filter sees (were it to see the
 * payload alone, it would still drop every short one, and a query is 17
 * bytes at the very least, for the root, which no zone answers anyway). */
static int drop_short_datagrams(evutil_socket_t fd)
{
    static struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 8 + DNS_HEADER, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(code) / sizeof(code[0])), code};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/* A UDP socket on a's address at port, SO_REUSEPORT like the TCP listeners. */
static evutil_socket_t udp_socket(const struct conf_addr *a, int port, char *err, size_t errlen)
{
    struct sockaddr_storage ss = a->ss;
    if (ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
    evutil_socket_t fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "dnsbl %s: UDP socket: %s", a->text, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (drop_short_datagrams(fd) != 0) {
        snprintf(err, errlen, "dnsbl %s: UDP: cannot attach the socket filter: %s", a->text,
                 strerror(errno));
        close(fd);
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&ss, a->len) != 0) {
        snprintf(err, errlen, "dnsbl %s: UDP: %s", a->text, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int dnsbl_bind_udp(struct server *srv, size_t front, char *err, size_t errlen)
{
    const struct server_front *fr = &srv->fronts[front];
    for (unsigned t = 0; t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        struct dnsbl_worker *dw = w->fw[front];
        dw->ports = calloc(fr->n_addrs, sizeof(*dw->ports));
        if (!dw->ports) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        dw->n_ports = fr->n_addrs;
        for (size_t i = 0; i < fr->n_addrs; i++) {
            const struct conf_addr *a = (const void *)((const char *)fr->addrs +
                                                       i * (fr->stride ? fr->stride : sizeof(*a)));
            /* The TCP port, which the kernel chose if the config said 0. */
            evutil_socket_t fd = udp_socket(a, server_port(srv, front, i), err, errlen);
            if (fd < 0)
                return -1;
            dw->ports[i] = (struct dns_port){dw, i, NULL};
            dw->ports[i].port =
                evdns_add_server_port_with_base(w->base, fd, 0, udp_query, &dw->ports[i]);
            if (!dw->ports[i].port) {
                close(fd);
                snprintf(err, errlen, "dnsbl %s: cannot set up the DNS server", a->text);
                return -1;
            }
        }
    }
    return 0;
}

/* Counted with the line protocol, as the Postfix fronts are (see
 * tcptable_conn.c). */
const struct conn_ops dnsbl_tcp_ops = {
    .name = "dnsbl",
    .proto = STATS_DNSBL,
    .worker_size = sizeof(struct dnsbl_worker),
    .worker_free = dnsbl_worker_free,
    .process = tcp_process,
    .in_limit = tcp_in_limit,
    /* A message over max_buffered (the buffer holds the largest there is),
     * or begun request_timeout ago and not arrived: DNS has no word for
     * either; the connection closes (RFC 7766 lets a server close a slow TCP
     * connection). */
    /* Over max_connections: closed without a word (DNS has none to say). */
    .stop = conn_stop_drain,
};
