/* Listening sockets and the accept loop, see listener.h. */
#include "config.h"

#include "net/listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "net/runtime.h"
#include "conf/conf.h"

/* Connections the kernel queues per listening socket while the workers do not
 * accept (out of descriptors, busy): one over it and a client's SYN is dropped,
 * so its connect() hangs on SYN retries. listen_socket sets it; libevent must
 * not (see listener_create). */
#define LISTEN_BACKLOG 1024

/* Listeners paused for lack of descriptors, process-wide: the log says so
 * when the first pauses and when the last resumes, not once per listener or
 * per failed accept (a saturated daemon would otherwise write a line per
 * retry per worker). */
static _Atomic unsigned paused_listeners;

/* Open one listening socket. SO_REUSEPORT lets every worker bind the same
 * address; the kernel then spreads new connections over the workers. */
static evutil_socket_t listen_socket(const struct conf_addr *a, int port, char *err, size_t errlen)
{
    struct sockaddr_storage ss = a->ss;
    if (ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
    evutil_socket_t fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "listen %s: socket: %s", a->text, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, a->len) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        snprintf(err, errlen, "listen %s: %s", a->text, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* SO_REUSEPORT would let a second bloomgated (same user) bind the same port and
 * silently take half the connections. Probe first with a plain bind, which
 * fails if anything listens there. */
static int probe_free(const struct conf_addr *a, char *err, size_t errlen)
{
    if ((a->ss.ss_family == AF_INET && ((const struct sockaddr_in *)&a->ss)->sin_port == 0) ||
        (a->ss.ss_family == AF_INET6 && ((const struct sockaddr_in6 *)&a->ss)->sin6_port == 0))
        return 0;
    evutil_socket_t fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (a->ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    int rc = bind(fd, (const struct sockaddr *)&a->ss, a->len);
    int e = errno;
    close(fd);
    if (rc != 0) {
        snprintf(err, errlen, "listen %s: %s", a->text, strerror(e));
        return -1;
    }
    return 0;
}

static int bound_port(evutil_socket_t fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static void accept_cb(struct evconnlistener *el, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    struct listener *l = arg;
    (void)el;
    (void)salen;
    if (l->pause_ms) {
        /* An accept succeeded: descriptors are back. */
        l->pause_ms = 0;
        if (atomic_fetch_sub(&paused_listeners, 1) == 1)
            log_info("accepting connections again");
    }
    l->w->srv->accept(l->w, l->front, l->addr, fd, sa);
}

/* The pause is over: accept again. A listener that fails again pauses twice
 * as long (up to LISTENER_RETRY_MAX_MS). Worker thread. */
static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
    struct listener *l = arg;
    (void)fd;
    (void)what;
    if (l->l && !l->w->stopping)
        evconnlistener_enable(l->l);
}

/* accept failed. Out of descriptors or memory: the socket stays readable, so
 * a loop that just returned would spin at 100% CPU; stop accepting on this
 * listener and retry on a timer (the connections queued in the backlog wait;
 * a client closing frees a descriptor). Other errors (a connection reset
 * before it was accepted) are the client's: go on. Worker thread. */
static void error_cb(struct evconnlistener *el, void *arg)
{
    struct listener *l = arg;
    int e = EVUTIL_SOCKET_ERROR();
    if (e != EMFILE && e != ENFILE && e != ENOBUFS && e != ENOMEM)
        return;
    evconnlistener_disable(el);
    if (l->pause_ms == 0) {
        l->pause_ms = LISTENER_RETRY_MIN_MS;
        if (atomic_fetch_add(&paused_listeners, 1) == 0)
            log_warn("accept on %s: %s; pausing accepts, retrying every %d to %d ms", l->text,
                     strerror(e), LISTENER_RETRY_MIN_MS, LISTENER_RETRY_MAX_MS);
    } else if (l->pause_ms < LISTENER_RETRY_MAX_MS) {
        l->pause_ms =
            l->pause_ms * 2 < LISTENER_RETRY_MAX_MS ? l->pause_ms * 2 : LISTENER_RETRY_MAX_MS;
    }
    struct timeval tv = {l->pause_ms / 1000, (l->pause_ms % 1000) * 1000};
    event_add(l->retry, &tv);
}

/* Main thread, before the workers run: every address of every front, bound
 * once per worker (probe first, see probe_free), the accept loops on the
 * workers' bases. */
int listener_create(struct server *srv, char *err, size_t errlen)
{
    size_t per_worker = 0;
    for (size_t f = 0; f < srv->n_fronts; f++) {
        srv->port_base[f] = per_worker;
        per_worker += srv->fronts[f].n_addrs;
    }
    srv->n_ls = per_worker * srv->n_workers;
    srv->ls = calloc(srv->n_ls ? srv->n_ls : 1, sizeof(*srv->ls));
    srv->ports = calloc(per_worker ? per_worker : 1, sizeof(*srv->ports));
    if (!srv->ls || !srv->ports) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < srv->n_ls; i++)
        srv->ls[i].fd = -1;
    for (size_t f = 0; f < srv->n_fronts; f++) {
        for (size_t a = 0; a < srv->fronts[f].n_addrs; a++) {
            const struct server_front *fr = &srv->fronts[f];
            const struct conf_addr *addr = (const void *)((const char *)fr->addrs +
                                                          a * (fr->stride ? fr->stride
                                                                          : sizeof(*addr)));
            if (probe_free(addr, err, errlen) != 0)
                return -1;
            int port = addr->ss.ss_family == AF_INET
                           ? ntohs(((const struct sockaddr_in *)&addr->ss)->sin_port)
                           : ntohs(((const struct sockaddr_in6 *)&addr->ss)->sin6_port);
            size_t slot = srv->port_base[f] + a;
            for (unsigned t = 0; t < srv->n_workers; t++) {
                struct listener *l = &srv->ls[t * per_worker + slot];
                l->w = &srv->workers[t];
                l->front = f;
                l->addr = a;
                snprintf(l->text, sizeof(l->text), "%s", addr->text);
                if ((l->fd = listen_socket(addr, port, err, errlen)) < 0)
                    return -1;
                if (port == 0)
                    port = bound_port(l->fd); /* the others join the port the kernel chose */
                l->retry = event_new(l->w->base, -1, 0, retry_cb, l);
                /* Backlog 0: the socket already listens with LISTEN_BACKLOG;
                 * libevent's -1 would listen() again with its default of 128. */
                l->l = l->retry ? evconnlistener_new(l->w->base, accept_cb, l,
                                                     LEV_OPT_CLOSE_ON_FREE, 0, l->fd)
                                : NULL;
                if (!l->l) {
                    snprintf(err, errlen, "listen %s: cannot set up the listener", addr->text);
                    return -1;
                }
                l->fd = -1; /* owned by the listener now */
                evconnlistener_set_error_cb(l->l, error_cb);
            }
            srv->ports[slot] = port;
        }
    }
    return 0;
}

void listener_stop_worker(struct server *srv, struct worker *w)
{
    for (size_t i = 0; i < srv->n_ls; i++) {
        struct listener *l = &srv->ls[i];
        if (l->w != w)
            continue;
        if (l->l) {
            evconnlistener_free(l->l);
            l->l = NULL;
        }
        if (l->retry)
            event_del(l->retry);
        if (l->pause_ms) {
            l->pause_ms = 0;
            atomic_fetch_sub(&paused_listeners, 1);
        }
    }
}

void listener_free_all(struct server *srv)
{
    for (size_t i = 0; srv->ls && i < srv->n_ls; i++) {
        struct listener *l = &srv->ls[i];
        if (l->l)
            evconnlistener_free(l->l);
        if (l->pause_ms)
            atomic_fetch_sub(&paused_listeners, 1);
        if (l->retry)
            event_free(l->retry);
        if (l->fd >= 0)
            close(l->fd);
    }
    free(srv->ls);
    srv->ls = NULL;
    free(srv->ports);
    srv->ports = NULL;
}
