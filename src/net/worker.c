/* Workers: threads, the tick, hand-off to the least loaded worker, admission
 * against max_connections, start and stop. See worker.h and server.h.
 *
 * Threading: each worker owns an event_base, its own SO_REUSEPORT listener on
 * every address (listener.c) and every connection it serves (conn.c); a
 * connection never changes thread once served, and no lock is taken on the
 * request path. The main thread creates, starts, stops and frees. */
#include "config.h"

#include "net/worker.h"

#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/seam.h"
#include "base/util.h"
#include "adblock/adblock.h"
#include "words/words.h"
#include "net/conn.h"
#include "net/listener.h"

#define TICK_MS 100 /* quiescent-state report, the reply budget, shutdown checks */

/* A connection accepted by one worker and handed to another (admitted). */
struct handoff {
    evutil_socket_t fd;
    struct sockaddr_storage ss;
    size_t front, addr;
    struct handoff *next;
};

/* Serve fd (admitted) here, with its front's ops. */
static void serve_here(struct worker *w, size_t front, size_t addr, evutil_socket_t fd,
                       const struct sockaddr *sa)
{
    conn_open(w, w->srv->fronts[front].ops, w->fw[front], addr, fd, sa);
}

/* The worker with the fewest open connections, w itself on a tie. */
static struct worker *least_loaded(struct worker *w)
{
    struct server *srv = w->srv;
    struct worker *best = w;
    unsigned best_load = atomic_load_explicit(&w->stats->load, memory_order_relaxed);
    for (unsigned i = 0; i < srv->n_workers; i++) {
        struct worker *o = &srv->workers[i];
        unsigned l = atomic_load_explicit(&o->stats->load, memory_order_relaxed);
        if (l < best_load) {
            best = o;
            best_load = l;
        }
    }
    return best;
}

/* SO_REUSEPORT spreads connections by a hash of their addresses, which with
 * the few long-lived connections of a gateway (say 4) leaves one worker with
 * all of them one time in eight, and 3 to 1 half the time. So a worker that
 * has more open connections than another hands the new one over: the least
 * loaded worker takes it from its inbox before reading a byte. True when
 * handed over (the fd is no longer ours). w's thread; one lock per hand-off. */
static bool hand_off(struct worker *w, size_t front, size_t addr, evutil_socket_t fd,
                     const struct sockaddr *sa)
{
    struct server *srv = w->srv;
    if (srv->n_workers < 2 || atomic_load_explicit(&srv->stopping, memory_order_relaxed))
        return false;
    struct worker *t = least_loaded(w);
    if (t == w || !t->inbox_ev)
        return false;
    struct handoff *h = calloc(1, sizeof(*h));
    if (!h)
        return false;
    h->fd = fd;
    memcpy(&h->ss, sa,
           sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    h->front = front;
    h->addr = addr;
    /* Counted on the target now, so the next accept anywhere sees it. */
    atomic_fetch_add_explicit(&t->stats->load, 1, memory_order_relaxed);
    pthread_mutex_lock(&t->inbox_mu);
    h->next = t->inbox;
    t->inbox = h;
    pthread_mutex_unlock(&t->inbox_mu);
    event_active(t->inbox_ev, EV_READ, 0);
    STAT_ADD(&w->stats->s, connections_handed_off, 1);
    return true;
}

/* The inbox's event, on the target worker's thread: set up every connection
 * handed over (oldest first); while stopping, close them unread. */
static void inbox_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    pthread_mutex_lock(&w->inbox_mu);
    struct handoff *list = w->inbox, *rev = NULL;
    w->inbox = NULL;
    pthread_mutex_unlock(&w->inbox_mu);
    while (list) { /* the inbox is a stack: reverse it */
        struct handoff *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
    }
    while (rev) {
        struct handoff *h = rev;
        rev = h->next;
        atomic_fetch_sub_explicit(&w->stats->load, 1, memory_order_relaxed); /* open counts it */
        if (w->stopping) {
            atomic_fetch_sub_explicit(&w->srv->conns_open, 1, memory_order_relaxed);
            evutil_closesocket(h->fd);
        } else {
            serve_here(w, h->front, h->addr, h->fd, (struct sockaddr *)&h->ss);
        }
        free(h);
    }
}

/* Admission, on the accepting worker's thread: one more open connection
 * against max_connections, or the front's refusal at once (its error line,
 * or 503), never a connection kept until it sends a request. The refusal is
 * counted before it is written: a client that read it and then asks INFO
 * must find it counted. */
void worker_accept(struct worker *w, size_t front, size_t addr, evutil_socket_t fd,
                   const struct sockaddr *sa)
{
    struct server *srv = w->srv;
    const struct conn_ops *ops = srv->fronts[front].ops;
    const struct stats_conn_fields *sf = &stats_conn_fields[ops->proto];
    const struct conf *cf = registry_read(w->reg)->conf;
    if (ops->proto == STATS_HTTP)
        STAT_ADD(&w->stats->s, http_connections_accepted, 1); /* admitted or not */
    unsigned open = atomic_fetch_add_explicit(&srv->conns_open, 1, memory_order_relaxed) + 1;
    if (open > cf->max_connections) {
        atomic_fetch_sub_explicit(&srv->conns_open, 1, memory_order_relaxed);
        STAT_ADD_AT(&w->stats->s, sf->rejected, 1);
        conn_refuse(ops, fd, &w->stats->s);
        evutil_closesocket(fd);
        return;
    }
    STAT_ADD_AT(&w->stats->s, sf->accepted, 1);
    if (!hand_off(w, front, addr, fd, sa))
        serve_here(w, front, addr, fd, sa);
}

/* Every TICK_MS: a quiescent state, and this worker's share of shedding
 * unread replies past max_buffered (conn_shed), which another worker's
 * writes may have spent. */
static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    conn_shed(w, NULL);
    registry_quiescent(w->reg, w->id);
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    log_warn("worker %u: %u connection(s) still open at the shutdown deadline; closing them", w->id,
             w->n_conns);
    event_base_loopbreak(w->base);
}

/* Shutdown, on the worker's own thread: stop accepting, let each front end
 * its connections its way (ops->stop), end the loop once none is left. */
static void ctl_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    w->stopping = true;
    listener_stop_worker(w->srv, w);
    struct conn *c = w->conns;
    while (c) {
        struct conn *next = c->next;
        c->ops->stop(c); /* may close (and free) c */
        c = next;
    }
    worker_check_drained(w);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    registry_quiescent(w->reg, w->id);
    event_base_dispatch(w->base);
    /* Whatever is left (deadline passed) is closed without further ado. */
    while (w->conns)
        conn_close(w->conns, "shutdown");
    registry_offline(w->reg, w->id);
    return NULL;
}

/* Registry hook (writer thread): an id now names a different filter, so its
 * counters start again from zero: by generation (struct fstats), so that no
 * thread but a counter's owner ever writes it. */
static void fresh_filter_id(void *ctx, unsigned id)
{
    struct server *srv = ctx;
    atomic_fetch_add_explicit(&srv->id_gen[id], 1, memory_order_release);
}

/* Main thread: one worker's base, events, scratch and fronts' state. */
static int worker_init(struct server *srv, unsigned t, size_t items, char *err, size_t errlen)
{
    struct worker *w = &srv->workers[t];
    w->id = t;
    w->srv = srv;
    w->reg = srv->reg;
    w->gate.reg = srv->reg; /* the per-filter settings the gate applies (core/gate.h) */
    w->stats = &srv->blocks[t];
    w->stats->fstats = calloc(REGISTRY_MAX_FILTERS, sizeof(*w->stats->fstats));
    w->scratch_items = items;
    w->keys = calloc(items, sizeof(*w->keys));
    w->bools = calloc(items, sizeof(*w->bools));
    w->allowed = calloc(items, sizeof(*w->allowed));
    w->ctxs = calloc(items, sizeof(*w->ctxs));
    w->ab = adblock_ctx_new();
    w->ws = words_scratch_new();
    w->wm = calloc(3 * CONF_SCAN_MATCHES_MAX, sizeof(*w->wm)); /* words_view_scan */
    w->base = event_base_new();
    w->inbox_mu_ok = pthread_mutex_init(&w->inbox_mu, NULL) == 0;
    w->inbox_ev = w->base ? event_new(w->base, -1, 0, inbox_cb, w) : NULL;
    if (!w->stats->fstats || !w->keys || !w->bools || !w->allowed || !w->ctxs || !w->ab ||
        !w->ws || !w->wm ||
        !w->base || !w->inbox_mu_ok || !w->inbox_ev) {
        snprintf(err, errlen, "out of memory setting up worker %u", t);
        return -1;
    }
    w->env = (struct cmd_env){.gate = &w->gate,
                              .stats = w->stats,
                              .id_gen = srv->id_gen,
                              .keys = w->keys,
                              .bools = w->bools,
                              .allowed = w->allowed,
                              .ctxs = w->ctxs,
                              .ab = w->ab,
                              .ws = w->ws,
                              .wm = w->wm,
                              .scratch_items = items};
    for (size_t f = 0; f < srv->n_fronts; f++) {
        if (!srv->fronts[f].n_addrs)
            continue;
        if (!(w->fw[f] = conn_worker_new(w, srv->fronts[f].ops, &w->env))) {
            snprintf(err, errlen, "out of memory setting up %s on worker %u",
                     srv->fronts[f].ops->name, t);
            return -1;
        }
    }
    struct timeval tick = {0, TICK_MS * 1000};
    w->tick = event_new(w->base, -1, EV_PERSIST, tick_cb, w);
    w->ctl = event_new(w->base, -1, 0, ctl_cb, w);
    if (!w->tick || !w->ctl || event_add(w->tick, &tick) != 0 || event_add(w->ctl, NULL) != 0) {
        snprintf(err, errlen, "cannot set up worker %u events", t);
        return -1;
    }
    return 0;
}

/* evthread_use_pthreads's result, kept by use_pthreads_once (pthread_once's
 * routine returns nothing, and evthread_use_pthreads must not be called
 * through a pointer of that type: undefined behaviour). */
static int evthread_rc = -1;

static void use_pthreads_once(void)
{
    evthread_rc = evthread_use_pthreads();
}

struct server *server_create_fronts(struct registry *reg, unsigned threads,
                                    const struct server_front *fronts, size_t n_fronts, char *err,
                                    size_t errlen)
{
    /* Workers wake each other with event_active and event_base_once, which
     * are safe across threads only once libevent has its locks: no server
     * without them. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (pthread_once(&once, use_pthreads_once) != 0 || evthread_rc != 0) {
        snprintf(err, errlen, "cannot make libevent thread-safe (evthread_use_pthreads failed)");
        return NULL;
    }
    const struct conf *cf = registry_read(reg)->conf;
    struct server *srv = calloc(1, sizeof(*srv));
    if (!srv || n_fronts > SERVER_MAX_FRONTS) {
        snprintf(err, errlen, srv ? "too many front ends" : "out of memory");
        free(srv);
        return NULL;
    }
    srv->reg = reg;
    srv->accept = worker_accept;
    srv->n_workers = threads;
    srv->n_fronts = n_fronts;
    memcpy(srv->fronts, fronts, n_fronts * sizeof(*fronts));
    srv->started = util_now();
    srv->started_wall = util_wall_seconds();
    srv->workers = calloc(threads, sizeof(*srv->workers));
    srv->blocks = calloc(threads, sizeof(*srv->blocks));
    srv->id_gen = calloc(REGISTRY_MAX_FILTERS, sizeof(*srv->id_gen));
    if (!srv->workers || !srv->blocks || !srv->id_gen) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (unsigned t = 0; t < threads; t++)
        if (worker_init(srv, t, cf->max_items, err, errlen) != 0)
            goto fail;
    if (listener_create(srv, err, errlen) != 0)
        goto fail;
    reg->on_fresh_id = fresh_filter_id;
    reg->on_fresh_ctx = srv;
    return srv;
fail:
    server_free(srv);
    return NULL;
}

void server_set_reload(struct server *srv, server_reload_fn fn, void *ctx)
{
    srv->reload_fn = fn;
    srv->reload_ctx = ctx;
}

/* Main thread. pthread_create returns its error (it does not set errno). A
 * worker that cannot start leaves the others running with event bases that
 * server_free would then free under them: stop and join those first. */
int server_start(struct server *srv, char *err, size_t errlen)
{
    for (unsigned t = 0; t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        int rc;
        if (seam_server_fail_thread(t)) {
            rc = EAGAIN;
        } else {
            rc = pthread_create(&w->tid, NULL, worker_main, w);
        }
        if (rc != 0) {
            snprintf(err, errlen, "cannot start worker thread %u: %s", t, strerror(rc));
            server_stop(srv, 0);
            return -1;
        }
        w->started = true;
    }
    return 0;
}

void server_stop(struct server *srv, double timeout_s)
{
    atomic_store(&srv->stopping, true);
    struct timeval tv = {(time_t)timeout_s, (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6)};
    for (unsigned t = 0; t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        if (!w->started)
            continue;
        /* The deadline is armed from here: event_base_once is thread-safe with
         * evthread_use_pthreads, and so is event_active. */
        event_base_once(w->base, -1, EV_TIMEOUT, deadline_cb, w, &tv);
        event_active(w->ctl, EV_TIMEOUT, 0);
    }
    for (unsigned t = 0; t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        if (w->started) {
            pthread_join(w->tid, NULL);
            w->started = false;
        }
    }
}

void server_free(struct server *srv)
{
    if (!srv)
        return;
    if (srv->reg && srv->reg->on_fresh_ctx == srv)
        srv->reg->on_fresh_id = NULL;
    listener_free_all(srv);
    for (unsigned t = 0; srv->workers && t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        while (w->conns)
            conn_close(w->conns, "server freed");
        /* Hand-offs that arrived after the loop ended: never served. */
        while (w->inbox) {
            struct handoff *h = w->inbox;
            w->inbox = h->next;
            evutil_closesocket(h->fd);
            free(h);
        }
        for (size_t f = 0; f < srv->n_fronts; f++)
            if (w->fw[f])
                conn_worker_free(srv->fronts[f].ops, w->fw[f]);
        if (w->inbox_ev)
            event_free(w->inbox_ev);
        if (w->inbox_mu_ok)
            pthread_mutex_destroy(&w->inbox_mu);
        if (w->tick)
            event_free(w->tick);
        if (w->ctl)
            event_free(w->ctl);
        if (w->base)
            event_base_free(w->base);
        if (w->stats)
            free(w->stats->fstats);
        free(w->keys);
        free(w->bools);
        free(w->allowed);
        free(w->ctxs);
        adblock_ctx_free(w->ab);
        words_scratch_free(w->ws);
        free(w->wm);
    }
    free(srv->workers);
    free(srv->blocks);
    free((void *)srv->id_gen);
    free(srv);
}

struct registry *server_registry(const struct server *srv)
{
    return srv->reg;
}

int server_port(const struct server *srv, size_t f, size_t idx)
{
    if (f >= srv->n_fronts || idx >= srv->fronts[f].n_addrs || !srv->ports)
        return -1;
    return srv->ports[srv->port_base[f] + idx];
}

void server_stats_src(struct server *srv, struct stats_src *out)
{
    memset(out, 0, sizeof(*out));
    out->blocks = srv->blocks;
    out->n_workers = srv->n_workers;
    out->id_gen = srv->id_gen;
    out->conns_open = atomic_load_explicit(&srv->conns_open, memory_order_relaxed);
    out->buffered = atomic_load_explicit(&srv->buffered, memory_order_relaxed);
    out->out_held = atomic_load_explicit(&srv->out_held, memory_order_relaxed);
    out->started = srv->started;
    out->started_wall = srv->started_wall;
    out->reg = srv->reg;
    for (size_t f = 0; f < srv->n_fronts; f++) {
        const struct conn_ops *ops = srv->fronts[f].ops;
        if (!ops->err_names)
            continue; /* a front without error codes of its own (the mail fronts) */
        out->err_names[ops->proto] = ops->err_names;
        out->n_err[ops->proto] = ops->n_err;
    }
}
