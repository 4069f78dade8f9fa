/* server: the worker threads of bloomgated and the listeners they accept on,
 * serving any set of front ends (struct server_front: a conn_ops and its
 * addresses). server_create binds (main thread, before privileges drop);
 * server_start runs the workers; server_stop drains and joins them (main
 * thread). The stats and reload calls are for the fronts, on worker threads. */
#ifndef BLOOMGATE_SERVER_H
#define BLOOMGATE_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/stats.h"
#include "store/registry.h"
#include "store/reload.h"

struct server;
struct conn_ops;

/* The reload hook (set by the reload machinery; NULL until then). A worker
 * calls it for RELOAD or POST /v1/reload; it starts a reload (or joins the one
 * running) and returns at once: true, and when the reload has finished,
 * done(report, arg) runs on the thread of `base` (the calling worker) from
 * its event loop, never from within the hook, with report NULL if the report
 * could not be copied; or false (out of memory), and done is never called.
 * The report, which done owns:
 *   {"ok": true|false, "error": "...",            (error only when a global step failed)
 *    "filters": [{"name": "urls", "status": "reloaded"|"unchanged"|"added"|"removed"|"failed",
 *                 "error": "..." (failed only), "generation": N}, ...]}
 * The worker must not block while it waits: its other connections go on. */
struct event_base;
typedef reload_done_fn server_reload_done;
/* op: NULL for a reload; else an operation on one filter (store/reload.h),
 * copied, whose report is the one reload.h describes. */
typedef bool (*server_reload_fn)(void *ctx, const struct reload_op *op, struct event_base *base,
                                 server_reload_done done, void *arg);

#define SERVER_MAX_FRONTS 8

/* One protocol served: how its connections behave, and where it listens. */
struct server_front {
    const struct conn_ops *ops;
    const struct conf_addr *addrs;
    size_t n_addrs; /* 0: not served */
    size_t stride;  /* bytes from one address to the next (each in a config block); 0: an array */
};

/* Bind every address of every front once per worker and set the workers up.
 * NULL with the reason (naming the address) in err. Main thread. */
struct server *server_create_fronts(struct registry *reg, unsigned threads,
                                    const struct server_front *fronts, size_t n_fronts, char *err,
                                    size_t errlen);
void server_set_reload(struct server *srv, server_reload_fn fn, void *ctx);
/* Run the workers. On failure none is left running (those started are
 * stopped and joined) and err says why. */
int server_start(struct server *srv, char *err, size_t errlen);
/* Stop accepting, answer what was received, close, join the workers; gives up
 * on connections still open after timeout_s. */
void server_stop(struct server *srv, double timeout_s);
void server_free(struct server *srv);
struct registry *server_registry(const struct server *srv);

/* The port front f's listener idx was bound to (after port 0 was resolved). */
int server_port(const struct server *srv, size_t f, size_t idx);

/* The counters as plain data for the views and the metrics (any thread). */
void server_stats_src(struct server *srv, struct stats_src *out);

#endif
