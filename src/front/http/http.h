/* http: the HTTP/1.1 JSON API (docs/http-api.md), served by the same worker
 * threads, on the same filters, as the line protocol. Each worker accepts on
 * its own SO_REUSEPORT sockets and serves those connections on its own
 * event_base (parsing: httpparse.c), so a request never leaves the thread
 * that accepted it. Every http_front_* call runs on the owning worker's
 * thread and never blocks (http_front_free also after that thread has been
 * joined); http_query_param is pure. */
#ifndef BLOOMGATE_HTTP_H
#define BLOOMGATE_HTTP_H

#include <event2/util.h>
#include <stdbool.h>
#include <stddef.h>

#include "bloom/filter.h"
#include "core/stats.h"

struct event_base;
struct registry;
struct server;
struct worker;

/* The codes of {"error":{"code":..., "message":...}}, with their statuses,
 * defined once so the enum, the wire names, the docs table and the metrics
 * cannot drift. The last five are framing errors: answered, then the
 * connection is closed. */
#define HTTP_ERRORS(X)                                                                             \
    X(BAD_REQUEST, "bad_request", 400)                                                             \
    X(BAD_JSON, "bad_json", 400)                                                                   \
    X(MISSING_ITEMS, "missing_items", 400)                                                         \
    X(NOT_A_STRING, "not_a_string", 400)                                                           \
    X(ITEM_TOO_LONG, "item_too_long", 400)                                                         \
    X(TOO_MANY_ITEMS, "too_many_items", 400)                                                       \
    X(AUTH_REQUIRED, "auth_required", 401)                                                         \
    X(AUTH_FAILED, "auth_failed", 401)                                                             \
    X(UNKNOWN_FILTER, "unknown_filter", 404)                                                       \
    X(NOT_FOUND, "not_found", 404)                                                                 \
    X(METHOD_NOT_ALLOWED, "method_not_allowed", 405)                                               \
    X(INTERNAL, "internal", 500)                                                                   \
    X(UNAVAILABLE, "unavailable", 503)                                                             \
    X(TOO_MANY_CONNECTIONS, "too_many_connections", 503)                                           \
    X(BODY_TOO_LARGE, "body_too_large", 413)                                                       \
    X(HEADERS_TOO_LARGE, "headers_too_large", 431)                                                 \
    X(NOT_IMPLEMENTED, "not_implemented", 501)                                                     \
    X(VERSION_NOT_SUPPORTED, "version_not_supported", 505)

/* clang-format off */
#define HTTP_ERR_ENUM_(sym, name, status) HTTP_ERR_##sym,
enum http_err {
    HTTP_ERRORS(HTTP_ERR_ENUM_)
    HTTP_ERR_COUNT_ /* not a code: one past the last */
};
#undef HTTP_ERR_ENUM_
/* clang-format on */
_Static_assert(HTTP_ERR_COUNT_ <= STATS_HTTP_ERRS,
               "struct stats holds STATS_HTTP_ERRS HTTP error counters");

const char *http_err_name(enum http_err err);
int http_err_status(enum http_err err);

/* What a worker lends its HTTP front end: its counters and its scratch (the
 * line protocol's too: both run on the one worker thread, never at once). */
struct gate_batch;
struct http_env {
    struct server *srv;
    struct worker *worker;   /* for server_balance_accept */
    struct gate_batch *gate; /* the worker's: adds and their group commit */
    struct registry *reg;
    unsigned worker_id;         /* the worker's reader slot in reg */
    struct event_base *base;    /* the worker's */
    struct stats *stats;        /* the worker's counters */
    struct fstats *fstats;      /* REGISTRY_MAX_FILTERS entries */
    struct latency *latency;    /* indexed by enum stats_proto */
    struct filter_key *keys;    /* scratch_items entries */
    bool *bools;                /* scratch_items entries */
    size_t scratch_items;       /* largest batch the scratch holds */
    _Atomic unsigned *load;     /* the worker's open connections (both protocols) */
    void (*drained)(void *arg); /* after http_front_stop: its last connection closed */
    void *drained_arg;
};

struct http_front;

/* The HTTP API on env->base, accepting on the n_fds listening sockets in fds
 * (bound and listening already). Each socket taken over is set to -1 in fds;
 * the caller closes what is left. NULL with the reason in err. */
struct http_front *http_front_create(const struct http_env *env, evutil_socket_t *fds, size_t n_fds,
                                     char *err, size_t errlen);

/* Serve fd, accepted by another worker and handed to this one
 * (server_balance_accept). */
void http_front_adopt(struct http_front *h, evutil_socket_t fd, const struct sockaddr *sa);

/* Shutdown: stop accepting, close idle keep-alive connections, answer the
 * requests in progress with Connection: close; env->drained is called once
 * the last one is gone (not from within this call). */
void http_front_stop(struct http_front *h);
bool http_front_drained(const struct http_front *h);

/* Close everything (requests in progress are dropped) and free. */
void http_front_free(struct http_front *h);

/* Find parameter `name` in a raw query string (no leading '?'; may be NULL)
 * and percent-decode its value into a new buffer (*out, NUL-terminated for
 * convenience; *outlen bytes, NULs included: "%00" is a NUL byte, '+' a space).
 * 1 found, 0 absent, -1 malformed (a bad %-escape, or `name` twice) with the
 * reason in err; the caller frees *out. */
int http_query_param(const char *query, const char *name, char **out, size_t *outlen, char *err,
                     size_t errlen);

#endif
