/* http: the HTTP/1.1 JSON API (docs/http-api.md), served by the same worker
 * threads, on the same filters, as the line protocol: http_ops drives the net
 * layer's connections (http_conn.c), http_api.c routes and answers,
 * http_resp.c writes responses, httpparse.c parses. The ops run on the owning
 * worker's thread; http_err_* and http_query_param are pure (any thread). */
#ifndef BLOOMGATE_HTTP_H
#define BLOOMGATE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/stats.h"
#include "net/conn.h"

/* The codes of {"error":{"code":..., "message":...}}, with their statuses,
 * defined once so the enum, the wire names, the docs table and the metrics
 * cannot drift. The last six are framing errors: answered, then the
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
    X(EXISTS, "exists", 409)                                                                       \
    X(CONFIGURED, "configured", 409)                                                               \
    X(LIMIT, "limit", 507)                                                                         \
    X(BAD_OPTION, "bad_option", 400)                                                               \
    X(NO_STATE_DIR, "no_state_dir", 409)                                                           \
    X(FAILED, "failed", 500)                                                                       \
    X(BODY_TOO_LARGE, "body_too_large", 413)                                                       \
    X(HEADERS_TOO_LARGE, "headers_too_large", 431)                                                 \
    X(NOT_IMPLEMENTED, "not_implemented", 501)                                                     \
    X(VERSION_NOT_SUPPORTED, "version_not_supported", 505)                                         \
    X(REQUEST_TIMEOUT, "request_timeout", 408)

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
/* The reason phrase of a status the front sends ("Not Found"); NULL for
 * any other. */
const char *http_status_text(int code);

/* The HTTP front end's connection ops, for server_create. */
extern const struct conn_ops http_ops;

/* Find parameter `name` in a raw query string (no leading '?'; may be NULL)
 * and percent-decode its value into a new buffer (*out, NUL-terminated for
 * convenience; *outlen bytes, NULs included: "%00" is a NUL byte, '+' a space).
 * 1 found, 0 absent, -1 malformed (a bad %-escape, or `name` twice) with the
 * reason in err; the caller frees *out. */
int http_query_param(const char *query, const char *name, char **out, size_t *outlen, char *err,
                     size_t errlen);

#endif
