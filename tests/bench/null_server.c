/* null_server: bloomgated without the filters, to show the ceiling that the
 * loopback, the line protocol and the threading model allow. It reads the line
 * protocol with the daemon's own parser (proto_next) and answers NO to every
 * item of CHECK and MCHECK without hashing anything. Same model as bloomgated
 * (src/net/): one SO_REUSEPORT listener and one event_base per thread, a
 * flat input buffer per connection, replies into an evbuffer, one write per
 * read. A benchmark tool: it prints, it asserts nothing.
 *
 *   null_server [--host 127.0.0.1] [--port N] [--threads T] [--in-keep BYTES]
 *
 * The input buffer grows to max_line + 1 as needed and, unlike bloomgated's,
 * is kept: the ceiling is what a server that reads in large pieces gets.
 * --in-keep 16384 gives it back when it empties, as bloomgated does, to see
 * what that policy costs. Port 0 takes a free port. The bound address is printed on stdout once
 * every thread listens; SIGINT or SIGTERM stops it. */
#include "config.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "front/line/proto.h"
#include "base/util.h"

/* bloomgated's defaults (conf/bloomgate.conf), so both parse alike. */
#define MAX_LINE (64u << 10)
#define MAX_ITEM (8u << 10)
#define MAX_ITEMS 10000u
#define MAX_OUTPUT (4u << 20)
#define IN_START 4096
#define IN_READ_MAX 65536 /* grown to while reads fill it, as src/net/conn.c does */

/* --in-keep: a larger input buffer is given back when it empties (bloomgated
 * does this at 64 KiB, src/net/conn.c IN_IDLE_KEEP). 0, the default: never. */
static size_t in_keep;

struct nworker {
    pthread_t tid;
    struct event_base *base;
    struct evconnlistener *listener;
    struct proto_token *tokens; /* MAX_ITEMS, reused by every request */
    struct nconn *conns;        /* open connections, closed at exit */
};

struct nconn {
    struct nworker *w;
    evutil_socket_t fd;
    struct event *rev, *wev;
    char *in;
    size_t in_len, in_cap, scanned;
    bool in_more; /* the last read filled in[]: grow it (bloomgated's rule) */
    struct evbuffer *out;
    bool closing;
    bool paused; /* reading stopped: too much unread output */
    struct nconn *prev, *next;
};

/* "NO NO NO ... NO": an MCHECK of n gets the first 3n bytes, its last space
 * made an LF. */
static char nos[MAX_ITEMS * 3];

static void nconn_close(struct nconn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        c->w->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    event_free(c->rev);
    event_free(c->wev);
    evbuffer_free(c->out);
    evutil_closesocket(c->fd);
    free(c->in);
    free(c);
}

static void reply_error(struct nconn *c, enum proto_err code, const char *msg)
{
    char buf[512];
    size_t n = proto_format_error(buf, sizeof(buf), code, msg);
    if (n <= sizeof(buf))
        evbuffer_add(c->out, buf, n);
}

static void answer(struct nconn *c, const struct proto_request *r)
{
    switch (r->cmd) {
    case PROTO_CHECK:
    case PROTO_MCHECK: {
        struct evbuffer_iovec v;
        size_t n = r->n_items * 3;
        if (evbuffer_reserve_space(c->out, (ev_ssize_t)n, &v, 1) < 1)
            return;
        memcpy(v.iov_base, nos, n);
        ((char *)v.iov_base)[n - 1] = '\n';
        v.iov_len = n;
        evbuffer_commit_space(c->out, &v, 1);
        break;
    }
    case PROTO_PING:
        evbuffer_add(c->out, "PONG\n", 5);
        break;
    case PROTO_QUIT:
        evbuffer_add(c->out, "BYE\n", 4);
        c->closing = true;
        break;
    default:
        reply_error(c, PROTO_ERR_INTERNAL, "the null server answers CHECK, MCHECK, PING and QUIT");
        break;
    }
}

static void nconn_flush(struct nconn *c)
{
    if (evbuffer_get_length(c->out) > 0 && evbuffer_write(c->out, c->fd) < 0 && errno != EAGAIN &&
        errno != EINTR) {
        nconn_close(c);
        return;
    }
    if (evbuffer_get_length(c->out) > 0) {
        event_add(c->wev, NULL);
        if (!c->paused && evbuffer_get_length(c->out) >= MAX_OUTPUT) {
            c->paused = true; /* the client is not reading: stop reading it */
            event_del(c->rev);
        }
        return;
    }
    event_del(c->wev);
    if (c->closing) {
        nconn_close(c);
        return;
    }
    if (c->paused) {
        c->paused = false;
        event_add(c->rev, NULL);
    }
}

static void read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct nconn *c = arg;
    (void)what;
    bool full = c->in_len == c->in_cap;
    if (full || (c->in_more && c->in_cap < IN_READ_MAX)) {
        c->in_more = false;
        size_t ncap = c->in_cap * 2 > MAX_LINE + 1 ? MAX_LINE + 1 : c->in_cap * 2;
        char *nb = ncap > c->in_cap ? realloc(c->in, ncap) : NULL;
        if (nb) {
            c->in = nb;
            c->in_cap = ncap;
        } else if (full) {
            nconn_close(c);
            return;
        }
    }
    size_t room = c->in_cap - c->in_len;
    ssize_t n = recv(fd, c->in + c->in_len, room, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        nconn_close(c);
        return;
    }
    c->in_more = (size_t)n == room;
    c->in_len += (size_t)n;
    struct proto_limits lim = {MAX_LINE, MAX_ITEM, MAX_ITEMS};
    size_t off = 0;
    while (!c->closing && off < c->in_len) {
        struct proto_request req;
        size_t used = 0;
        enum proto_status st =
            proto_next(c->in + off, c->in_len - off, &lim, &req, c->w->tokens, &used, &c->scanned);
        if (st == PROTO_NEED_MORE)
            break;
        if (st == PROTO_FATAL) {
            reply_error(c, req.err, req.errmsg);
            c->closing = true;
            off = c->in_len;
            break;
        }
        off += used;
        if (st == PROTO_ERROR)
            reply_error(c, req.err, req.errmsg);
        else if (st == PROTO_REQUEST)
            answer(c, &req);
    }
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
    if (in_keep && c->in_len == 0 && c->in_cap > in_keep) {
        char *small = realloc(c->in, IN_START);
        if (small) {
            c->in = small;
            c->in_cap = IN_START;
        }
    }
    nconn_flush(c);
}

static void write_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    nconn_flush(arg);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    struct nworker *w = arg;
    (void)l;
    (void)sa;
    (void)salen;
    struct nconn *c = calloc(1, sizeof(*c));
    if (c) {
        c->in = malloc(IN_START);
        c->out = evbuffer_new();
        c->rev = event_new(w->base, fd, EV_READ | EV_PERSIST, read_cb, c);
        c->wev = event_new(w->base, fd, EV_WRITE | EV_PERSIST, write_cb, c);
    }
    if (!c || !c->in || !c->out || !c->rev || !c->wev) {
        fprintf(stderr, "null_server: out of memory\n");
        if (c) {
            free(c->in);
            if (c->out)
                evbuffer_free(c->out);
            if (c->rev)
                event_free(c->rev);
            if (c->wev)
                event_free(c->wev);
            free(c);
        }
        evutil_closesocket(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->w = w;
    c->fd = fd;
    c->in_cap = IN_START;
    c->next = w->conns;
    if (w->conns)
        w->conns->prev = c;
    w->conns = c;
    event_add(c->rev, NULL);
}

static evutil_socket_t listen_on(const struct addrinfo *ai, int port)
{
    struct sockaddr_storage ss;
    memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
    if (ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
    evutil_socket_t fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void *worker_main(void *arg)
{
    struct nworker *w = arg;
    event_base_dispatch(w->base);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1";
    uint64_t port = 0, threads = 1, keep = 0;
    static const struct option lo[] = {{"host", 1, 0, 'h'}, {"in-keep", 1, 0, 'k'},
                                       {"port", 1, 0, 'p'}, {"threads", 1, 0, 't'},
                                       {"help", 0, 0, '?'}, {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (opt == 'h')
            host = optarg;
        else if (opt == 'p' && util_parse_u64(optarg, &port) == 0 && port <= 65535)
            continue;
        else if (opt == 't' && util_parse_u64(optarg, &threads) == 0 && threads >= 1 &&
                 threads <= 256)
            continue;
        else if (opt == 'k' && util_parse_u64(optarg, &keep) == 0)
            in_keep = (size_t)keep;
        else {
            fprintf(stderr, "usage: null_server [--host 127.0.0.1] [--port N] [--threads T] "
                            "[--in-keep BYTES]\n");
            return 2;
        }
    }
    for (size_t i = 0; i < sizeof(nos); i += 3)
        memcpy(nos + i, "NO ", 3);
    evthread_use_pthreads();
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    int rc = getaddrinfo(host, NULL, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "null_server: %s: %s\n", host, gai_strerror(rc));
        return 1;
    }
    /* Signals go to the main thread only: block them before the workers start. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct nworker *ws = calloc(threads, sizeof(*ws));
    if (!ws)
        return 1;
    int bound = (int)port;
    for (unsigned t = 0; t < threads; t++) {
        struct nworker *w = &ws[t];
        evutil_socket_t fd = listen_on(ai, bound);
        if (fd < 0) {
            fprintf(stderr, "null_server: listen %s:%d: %s\n", host, bound, strerror(errno));
            return 1;
        }
        if (bound == 0) {
            struct sockaddr_storage ss;
            socklen_t len = sizeof(ss);
            getsockname(fd, (struct sockaddr *)&ss, &len);
            bound = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                  : ((struct sockaddr_in6 *)&ss)->sin6_port);
        }
        w->base = event_base_new();
        w->tokens = calloc(MAX_ITEMS, sizeof(*w->tokens));
        w->listener = w->base
                          ? evconnlistener_new(w->base, accept_cb, w, LEV_OPT_CLOSE_ON_FREE, -1, fd)
                          : NULL;
        if (!w->listener || !w->tokens) {
            fprintf(stderr, "null_server: cannot set up thread %u\n", t);
            return 1;
        }
    }
    freeaddrinfo(ai);
    for (unsigned t = 0; t < threads; t++)
        if (pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]) != 0) {
            fprintf(stderr, "null_server: cannot start thread %u\n", t);
            return 1;
        }
    printf("null_server: listening on %s:%d with %u thread(s)\n", host, bound, (unsigned)threads);
    fflush(stdout);
    int sig;
    sigwait(&sigs, &sig);
    for (unsigned t = 0; t < threads; t++)
        event_base_loopexit(ws[t].base, NULL);
    for (unsigned t = 0; t < threads; t++) {
        pthread_join(ws[t].tid, NULL);
        while (ws[t].conns)
            nconn_close(ws[t].conns);
        evconnlistener_free(ws[t].listener);
        event_base_free(ws[t].base);
        free(ws[t].tokens);
    }
    free(ws);
    return 0;
}
