/* runtime: the state the network layer's files share, data only: a worker
 * (one thread and its event_base, its connections, counters and scratch) and
 * the server (every worker, the fronts, the listeners). conn.c and listener.c
 * read it and call nothing in worker.c, which owns the threads; that keeps the
 * net files in one direction: worker -> conn, listener -> runtime. */
#ifndef BLOOMGATE_RUNTIME_H
#define BLOOMGATE_RUNTIME_H

#include <event2/event.h>
#include <event2/util.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "core/cmd.h"
#include "core/gate.h"
#include "core/stats.h"
#include "net/server.h"

struct conn;
struct handoff;
struct listener;

struct worker {
    unsigned id;
    struct server *srv;
    struct registry *reg;
    pthread_t tid;
    bool started;
    struct event_base *base;
    struct event *tick;
    struct event *ctl; /* activated by server_stop from the main thread */
    bool stopping;
    struct conn *conns; /* every connection, all fronts */
    unsigned n_conns;
    void *fw[SERVER_MAX_FRONTS]; /* each front's per-worker state */
    /* Connections other workers accepted and handed to this one, taken by
     * inbox_cb on this worker's thread (see worker_accept). */
    pthread_mutex_t inbox_mu;
    bool inbox_mu_ok;
    struct handoff *inbox;
    struct event *inbox_ev;
    struct stats_block *stats; /* srv's blocks[id] */
    struct gate_batch gate;    /* journals appended to in this batch */
    /* The command table's view of this worker; each front's copy, with its
     * proto, is in its struct conn_worker. */
    struct cmd_env env;
    struct filter_key *keys; /* scratch_items entries */
    bool *bools;
    bool *allowed; /* scratch_items entries: which checks an exception answered */
    struct cmd_ctx *ctxs;   /* scratch_items entries: per-item request contexts */
    struct adblock_ctx *ab; /* the Adblock matcher's scratch */
    struct words_scratch *ws; /* a SCAN's scratch (words.h) */
    struct words_match *wm;   /* a SCAN's matches: 3 * CONF_SCAN_MATCHES_MAX (words_view_scan) */
    size_t scratch_items; /* sized for max_items at start (restart-only) */
};

struct server {
    struct registry *reg;
    unsigned n_workers;
    struct worker *workers;
    struct stats_block *blocks;
    _Atomic uint64_t *id_gen; /* REGISTRY_MAX_FILTERS: see struct fstats */
    struct server_front fronts[SERVER_MAX_FRONTS];
    size_t n_fronts;
    struct listener *ls; /* n_workers x (all addresses of all fronts) */
    size_t n_ls;
    int *ports; /* per front and address: fronts[f] starts at port_base[f] */
    size_t port_base[SERVER_MAX_FRONTS];
    _Atomic unsigned conns_open;
    _Atomic size_t buffered; /* input buffer bytes of every connection (max_buffered) */
    _Atomic size_t out_held; /* unread reply bytes charged by conn_flush (max_buffered too) */
    _Atomic bool stopping; /* server_stop has begun: no more hand-offs */
    double started;        /* monotonic */
    int64_t started_wall;
    server_reload_fn reload_fn;
    void *reload_ctx;
    /* worker_accept (worker.c): what a listener does with a new connection.
     * A pointer, so the listeners sit below the workers, not beside them. */
    void (*accept)(struct worker *w, size_t front, size_t addr, evutil_socket_t fd,
                   const struct sockaddr *sa);
};

/* A connection closed or a front drained: end the loop if w is stopping and
 * nothing is left. w's thread. */
static inline void worker_check_drained(struct worker *w)
{
    if (w->stopping && w->n_conns == 0)
        event_base_loopexit(w->base, NULL);
}

#endif
