/* server: the listeners and worker threads of bloomgated. Each worker owns an
 * event_base, its own SO_REUSEPORT listener on every line-protocol address (the
 * kernel spreads connections over them), and the connections it accepted; no
 * connection ever moves between threads. The line protocol's libevent glue is
 * here; parsing is proto.c, the filters are reached through the registry. The
 * same workers serve the HTTP API (http.c): each serves HTTP connections on its
 * own SO_REUSEPORT socket per http_listen address, bound here beside the others.
 * server_create binds (main thread, before privileges are dropped);
 * server_start runs the workers; server_stop drains them (main thread). */
#ifndef BLOOMGATE_SERVER_H
#define BLOOMGATE_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/registry.h"
#include "core/stats.h"

struct server;

/* The reload hook (set by the reload machinery; NULL until then). A worker
 * calls it for RELOAD or POST /v1/reload; it starts a reload (or joins the one
 * running) and returns at once: true, and when the reload has finished,
 * done(report, arg) runs on the thread of `base` (the calling worker) from
 * its event loop, never from within the hook; or false (out of memory), and
 * done is never called. The report, which done owns:
 *   {"ok": true|false, "error": "...",            (error only when a global step failed)
 *    "filters": [{"name": "urls", "status": "reloaded"|"unchanged"|"added"|"removed"|"failed",
 *                 "error": "..." (failed only), "generation": N}, ...]}
 * The worker must not block while it waits: its other connections go on. */
struct event_base;
typedef void (*server_reload_done)(json_t *report, void *arg);
typedef bool (*server_reload_fn)(void *ctx, struct event_base *base, server_reload_done done,
                                 void *arg);

/* Bind every listener of conf (the catalog's config) for `threads` workers.
 * NULL with the reason (naming the address) in err. */
struct server *server_create(struct registry *reg, unsigned threads, char *err, size_t errlen);
void server_set_reload(struct server *srv, server_reload_fn fn, void *ctx);
int server_start(struct server *srv, char *err, size_t errlen);
/* Stop accepting, answer what was received, close, join the workers; gives up
 * on connections still open after timeout_s. */
void server_stop(struct server *srv, double timeout_s);
void server_free(struct server *srv);
struct registry *server_registry(const struct server *srv);

/* The port a line listener was bound to (after port 0 was resolved). */
int server_line_port(const struct server *srv, size_t listen_idx);

/* Figures summed over the workers (any thread). */
void server_sum_stats(const struct server *srv, struct stats *out);
unsigned server_connections_open(const struct server *srv);
void server_sum_filter_stats(const struct server *srv, unsigned id, struct fstats *out);
void server_sum_latency(const struct server *srv, enum stats_proto proto, struct latency *out);

/* JSON for INFO and the HTTP API (any thread that may read the registry). */
json_t *server_info_json(struct server *srv, const struct catalog *cat);
json_t *server_filter_json(const struct fentry *e);

/* ---- for the HTTP front end (http.c) and the metrics (metrics.c) ---- */

/* The port an HTTP listener was bound to (after port 0 was resolved). */
int server_http_port(const struct server *srv, size_t listen_idx);

/* Count one more open connection (of either protocol) against max; false,
 * counting nothing, when max are open already. Any worker thread. */
bool server_conn_admit(struct server *srv, unsigned max);
void server_conn_release(struct server *srv);

/* Start a reload through the hook (see server_reload_fn); false when no hook
 * is set or the hook could not queue it. Worker thread of base. */
bool server_reload(struct server *srv, struct event_base *base, server_reload_done done,
                   void *arg);

unsigned server_threads(const struct server *srv);
/* Connections (both protocols) open on worker i, hand-offs on their way included. */
unsigned server_worker_load(const struct server *srv, unsigned i);

/* Worker thread, on accepting fd: hand it to the worker with the fewest open
 * connections if that is not this one (SO_REUSEPORT spreads connections by
 * address hash, unevenly when they are few). True when handed over: the
 * target sets it up (http: http_front_adopt) and the caller forgets fd. */
struct sockaddr;
struct worker;
bool server_balance_accept(struct worker *w, int fd, const struct sockaddr *sa, bool http);
int64_t server_started_wall(const struct server *srv); /* unix seconds */

#endif
