/* The DNSBL front (RFC 5782) on the net layer: UDP read and answered here
 * in batches, TCP framed here with its 2-byte length on the one connection
 * implementation; both parsed and built by dnswire.c. dnsbl.c decides every
 * answer; the command table looks the item up. Worker threads.
 *
 * Which thread serves UDP: every worker. Each binds its own SO_REUSEPORT UDP
 * socket on each dnsbl address, watched by an event on its own event_base,
 * as it runs its own TCP listeners; the kernel spreads queries over them by
 * a hash of the source, so one resolver's queries stay on one worker. A
 * readable socket is read at most UDP_BATCH datagrams at a time (one
 * recvmmsg), answered (one sendmmsg), and the worker goes back to its loop,
 * whose other ready events (TCP connections, the tick) run before the
 * level-triggered UDP event fires again: a flood from one source costs that
 * worker's other clients a batch of latency per pass, not the worker. (The
 * evdns server this replaced read until the socket was empty, which under a
 * flood it never is, and cleared the opcode before it checked it.) An answer
 * the socket cannot take now is dropped, as UDP may: the client asks again.
 *
 * The block a query belongs to is the one whose address it came in on: the
 * port's block index (UDP) or c->addr (TCP); the addresses are restart-only,
 * so the index holds across reloads. */
#include "config.h"

#include "front/dns/dns.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
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
#define UDP_BATCH 64    /* datagrams read and answered per pass of the worker's loop */
#define UDP_IN_MAX 1500 /* a longer datagram is read cut (its question comes first) */
#define UDP_OUT_MAX 512 /* RFC 1035 4.2.1: no EDNS, so 512 bytes, and TC beyond */

/* One UDP socket of a worker: the block (dnsbl address) it serves. */
struct dns_port {
    struct dnsbl_worker *dw;
    size_t block;
    evutil_socket_t fd; /* -1 until bound */
    struct event *ev;   /* readable, level-triggered, persistent */
};

/* A batch of datagrams in flight: the queries read, the answers to send. */
struct udp_batch {
    struct mmsghdr in_msg[UDP_BATCH], out_msg[UDP_BATCH];
    struct iovec in_iov[UDP_BATCH], out_iov[UDP_BATCH];
    struct sockaddr_storage from[UDP_BATCH];
    uint8_t in[UDP_BATCH][UDP_IN_MAX];
    uint8_t out[UDP_BATCH][UDP_OUT_MAX];
};

struct dnsbl_worker {
    struct conn_worker cw; /* the worker and its env, proto = STATS_DNSBL (net/conn.h) */
    struct dns_port *ports;
    size_t n_ports;
    struct udp_batch *udp; /* allocated when the UDP sockets are bound */
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

/* The answer to one message msg[0..len) for block b (NULL: the block is gone,
 * SERVFAIL) into out, at most limit bytes: its length, or 0 for nothing to
 * send (not a query; why says so). Shared by UDP and TCP, so both answer
 * alike. Worker thread. */
static size_t answer_message(struct dnsbl_worker *dw, const struct catalog *cat,
                             const struct conf_dnsbl *b, const uint8_t *msg, size_t len,
                             uint8_t *out, size_t limit, char *why, size_t whylen)
{
    struct dns_query q;
    enum dns_status st = dns_parse_query(msg, len, &q, why, whylen);
    if (st == DNS_DROP)
        return 0;
    if (st == DNS_FORMERR || st == DNS_NOTIMP)
        return dns_build_error(q.id, q.flags,
                               st == DNS_FORMERR ? DNS_RCODE_FORMERR : DNS_RCODE_NOTIMP, out);
    if (!b)
        return dns_build_error(q.id, q.flags, DNS_RCODE_SERVFAIL, out);
    resolve(dw, cat, b, q.name, q.name_len, q.odd_name, q.qtype, q.qclass);
    size_t n = dns_build_response(&q, &dw->ans, out, limit, limit);
    if (n == 0)
        snprintf(why, whylen, "the question does not fit an answer");
    return n;
}

/* The UDP socket is readable (worker thread): one batch of at most UDP_BATCH
 * queries read, answered and sent, then back to the loop (see the top of
 * this file). */
static void udp_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct dns_port *dp = arg;
    struct dnsbl_worker *dw = dp->dw;
    struct udp_batch *u = dw->udp;
    for (unsigned i = 0; i < UDP_BATCH; i++) {
        u->in_iov[i] = (struct iovec){u->in[i], UDP_IN_MAX};
        u->in_msg[i].msg_hdr = (struct msghdr){.msg_name = &u->from[i],
                                               .msg_namelen = sizeof(u->from[i]),
                                               .msg_iov = &u->in_iov[i],
                                               .msg_iovlen = 1};
    }
    int got = recvmmsg(fd, u->in_msg, UDP_BATCH, MSG_DONTWAIT, NULL);
    if (got <= 0)
        return; /* EAGAIN (woken for nothing) or an error: nothing to answer now */
    const struct catalog *cat = registry_read(dw->cw.w->reg);
    const struct conf *cf = cat->conf;
    const struct conf_dnsbl *b = dp->block < cf->n_dnsbl ? &cf->dnsbl[dp->block] : NULL;
    unsigned n = 0;
    for (int i = 0; i < got; i++) {
        char why[120];
        size_t len = answer_message(dw, cat, b, u->in[i], u->in_msg[i].msg_len, u->out[n],
                                    UDP_OUT_MAX, why, sizeof(why));
        if (len == 0)
            continue;
        u->out_iov[n] = (struct iovec){u->out[n], len};
        u->out_msg[n].msg_hdr = (struct msghdr){.msg_name = &u->from[i],
                                                .msg_namelen = u->in_msg[i].msg_hdr.msg_namelen,
                                                .msg_iov = &u->out_iov[n],
                                                .msg_iovlen = 1};
        n++;
    }
    /* registry_read's pointer is not used past here: a quiescent state. */
    registry_quiescent(dw->cw.w->reg, dw->cw.w->id);
    for (unsigned sent = 0; sent < n;) {
        int r = sendmmsg(fd, u->out_msg + sent, n - sent, MSG_DONTWAIT);
        if (r > 0)
            sent += (unsigned)r;
        else if (r < 0 && errno == EINTR)
            continue;
        else if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS)
            sent++; /* this one's address is refused (a firewall, say): skip it */
        else
            break; /* the socket is full: drop the rest, the clients ask again */
    }
}

/* One TCP message (its length already taken off): the response, framed,
 * into c->out; nothing for what is not a query. */
static void tcp_message(struct conn *c, const struct catalog *cat, const struct conf_dnsbl *b,
                        const uint8_t *msg, size_t len)
{
    struct dnsbl_worker *dw = c->fw;
    char why[120];
    size_t n = answer_message(dw, cat, b, msg, len, dw->out + 2, TCP_MSG_MAX, why, sizeof(why));
    if (n == 0) {
        log_debug("dnsbl %s: dropped a message: %s", c->peer, why);
        return;
    }
    dw->out[0] = (uint8_t)(n >> 8);
    dw->out[1] = (uint8_t)n;
    conn_out_add(c, dw->out, n + 2);
}

/* One message at p, the n bytes of input not consumed yet
 * (conn_each_request), framed by a 2-byte length: answered, and the bytes it
 * used; 0 while it is not complete. */
static size_t tcp_one(struct conn *c, char *p, size_t n, void *arg)
{
    const struct catalog *cat = arg;
    const uint8_t *in = (const uint8_t *)p;
    if (n < 2)
        return 0;
    size_t len = (size_t)in[0] << 8 | in[1];
    if (n - 2 < len)
        return 0;
    tcp_message(c, cat, &cat->conf->dnsbl[c->addr], in + 2, len);
    return 2 + len;
}

/* DNS over TCP (RFC 1035 4.2.2, RFC 7766): messages framed by a 2-byte
 * length, answered in order, the connection kept open. */
static unsigned tcp_process(struct conn *c, bool draining)
{
    const struct catalog *cat = registry_read(c->w->reg);
    if (c->addr >= cat->conf->n_dnsbl) {
        c->closing = true;
        return 0;
    }
    return conn_each_request(c, cat->conf, draining, tcp_one, (void *)cat);
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
    for (size_t i = 0; i < dw->n_ports; i++) {
        if (dw->ports[i].ev)
            event_free(dw->ports[i].ev);
        if (dw->ports[i].fd >= 0)
            close(dw->ports[i].fd);
    }
    free(dw->ports);
    free(dw->udp);
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
        dw->udp = calloc(1, sizeof(*dw->udp));
        if (!dw->ports || !dw->udp) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        dw->n_ports = fr->n_addrs;
        for (size_t i = 0; i < fr->n_addrs; i++)
            dw->ports[i] = (struct dns_port){dw, i, -1, NULL};
        for (size_t i = 0; i < fr->n_addrs; i++) {
            const struct conf_addr *a = (const void *)((const char *)fr->addrs +
                                                       i * (fr->stride ? fr->stride : sizeof(*a)));
            /* The TCP port, which the kernel chose if the config said 0. */
            struct dns_port *dp = &dw->ports[i];
            dp->fd = udp_socket(a, server_port(srv, front, i), err, errlen);
            if (dp->fd < 0)
                return -1;
            dp->ev = event_new(w->base, dp->fd, EV_READ | EV_PERSIST, udp_readable, dp);
            if (!dp->ev || event_add(dp->ev, NULL) != 0) {
                snprintf(err, errlen, "dnsbl %s: cannot watch the UDP socket", a->text);
                return -1;
            }
        }
    }
    return 0;
}

/* Counted as a protocol of its own (dnsbl_*), as the Postfix fronts are (see
 * tcptable_conn.c); UDP queries count in dnsbl_requests and dnsbl_errors too. */
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
