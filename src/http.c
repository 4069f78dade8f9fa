/* The HTTP API on libevent's evhttp. Routing, validation and the replies are
 * here; the filters are reached through the registry exactly as the line
 * protocol reaches them (one acquire load of the catalog per request, a
 * quiescent report after it), and the counters are the worker's own.
 *
 * Connections. evhttp 2.1 tells us nothing when it accepts or closes a
 * connection, so a connection is tracked from its first request on: it is
 * counted against max_connections then, gets our close callback (which is how
 * a pending reload learns that its client is gone, and how shutdown knows when
 * the last one closed), and is found again by its socket (an fd-indexed table,
 * one load per request). A connection that never sends a request is counted
 * as accepted only, and closed by evhttp on idle_timeout or at exit. */
#include "config.h"

#include "http.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "metrics.h"
#include "registry.h"
#include "server.h"
#include "util.h"

#define DRAIN_MS 20 /* while stopping: how often idle keep-alive connections are closed */
#define JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))
#define CT_JSON "application/json; charset=utf-8"

/* Methods evhttp passes to us; for any other it answers 501 itself. */
#define ALLOWED_METHODS                                                                            \
    (EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |     \
     EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH)
#define M_GET (EVHTTP_REQ_GET | EVHTTP_REQ_HEAD)
#define M_POST EVHTTP_REQ_POST

struct hreload;

/* A connection that has sent a request; freed by its close callback. */
struct hconn {
    struct http_front *h;
    struct evhttp_connection *evcon;
    evutil_socket_t fd;
    struct hreload *reload; /* a POST /v1/reload awaiting its report */
    struct hconn *prev, *next;
};

/* A POST /v1/reload waiting for the reload thread. It outlives its
 * connection if need be: then req (freed by libevent) and c are NULL. */
struct hreload {
    struct http_front *h;
    struct evhttp_request *req;
    struct hconn *c;
    double t0;
};

struct http_front {
    struct http_env env;
    struct evhttp *http;
    struct evhttp_bound_socket **bound; /* NULL once stopped */
    size_t n_bound;
    struct hconn *conns;
    size_t n_open;
    struct hconn **by_fd; /* tracked connections by socket */
    size_t by_fd_cap;
    struct event *drain;
    size_t max_body, max_headers; /* the limits evhttp was last given */
    unsigned idle_timeout;
    bool stopping;
    bool freeing;
};

/* One request being answered. */
struct hreq {
    struct http_front *h;
    struct evhttp_request *req;
    const struct catalog *cat; /* valid until the handler returns */
    struct hconn *c;           /* NULL if untracked (out of memory) */
    double t0;
    bool head;  /* HEAD: send the headers GET would, no body */
    bool close; /* ask evhttp to close after this response */
};

#define HTTP_ERR_NAME_(sym, name, status) name,
static const char *const err_names[] = {HTTP_ERRORS(HTTP_ERR_NAME_)};
#undef HTTP_ERR_NAME_
#define HTTP_ERR_STATUS_(sym, name, status) status,
static const int err_statuses[] = {HTTP_ERRORS(HTTP_ERR_STATUS_)};
#undef HTTP_ERR_STATUS_

const char *http_err_name(enum http_err err)
{
    return (unsigned)err < HTTP_ERR_COUNT_ ? err_names[err] : "internal";
}

int http_err_status(enum http_err err)
{
    return (unsigned)err < HTTP_ERR_COUNT_ ? err_statuses[err] : 500;
}

/* ---- query strings ---- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decode s[0..len) into out (room for len bytes): %XX is a byte, '+' a space
 * (form encoding, which is what most clients send). -1 on a bad escape. */
static long pct_decode(const char *s, size_t len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%') {
            if (i + 2 >= len)
                return -1;
            int hi = hexval((unsigned char)s[i + 1]), lo = hexval((unsigned char)s[i + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            out[n++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[n++] = s[i] == '+' ? ' ' : s[i];
        }
    }
    return (long)n;
}

int http_query_param(const char *query, const char *name, char **out, size_t *outlen, char *err,
                     size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    if (!query)
        return 0;
    size_t nlen = strlen(name);
    const char *p = query;
    while (*p) {
        const char *end = strchr(p, '&');
        if (!end)
            end = p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        const char *kend = eq ? eq : end;
        /* Keys are decoded too (it%65m is item); a key longer than 3 bytes per
         * byte of name cannot be name. */
        char key[64];
        long klen = -2;
        if ((size_t)(kend - p) < sizeof(key))
            klen = pct_decode(p, (size_t)(kend - p), key);
        if (klen == -1) {
            snprintf(err, errlen, "bad %%-escape in the query string");
            free(*out);
            *out = NULL;
            return -1;
        }
        if (klen >= 0 && (size_t)klen == nlen && memcmp(key, name, nlen) == 0) {
            if (*out) {
                snprintf(err, errlen, "parameter '%s' given more than once", name);
                free(*out);
                *out = NULL;
                return -1;
            }
            const char *v = eq ? eq + 1 : end;
            size_t vlen = (size_t)(end - v);
            char *buf = malloc(vlen + 1);
            if (!buf) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            long n = pct_decode(v, vlen, buf);
            if (n < 0) {
                free(buf);
                snprintf(err, errlen, "bad %%-escape in parameter '%s'", name);
                return -1;
            }
            buf[n] = '\0';
            *out = buf;
            *outlen = (size_t)n;
        }
        p = *end ? end + 1 : end;
    }
    return *out ? 1 : 0;
}

/* ---- connections ---- */

static void untrack(struct http_front *h, struct hconn *c)
{
    if ((size_t)c->fd < h->by_fd_cap && h->by_fd[c->fd] == c)
        h->by_fd[c->fd] = NULL;
    if (c->prev)
        c->prev->next = c->next;
    else
        h->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    h->n_open--;
    if (c->reload)
        c->reload->c = NULL;
    free(c);
    server_conn_release(h->env.srv);
    STAT_ADD(h->env.stats, http_connections_closed, 1);
    if (h->stopping && !h->freeing && h->n_open == 0 && h->env.drained)
        h->env.drained(h->env.drained_arg);
}

/* evhttp is about to free a tracked connection (client gone, idle timeout,
 * Connection: close, shutdown). A reload still waiting on it must not touch
 * the request afterwards if libevent frees it with the connection; a request
 * libevent has already detached (evcon NULL) stays ours, and answering it
 * frees it. */
static void on_conn_close(struct evhttp_connection *evcon, void *arg)
{
    struct hconn *c = arg;
    struct hreload *p = c->reload;
    if (p && p->req && evhttp_request_get_connection(p->req) == evcon)
        p->req = NULL;
    untrack(c->h, c);
}

/* The tracked connection a request came on, tracking it if it is new.
 * 0 (with *out NULL when it cannot be tracked: no socket, out of memory), or
 * -1 when tracking it would pass max_connections. */
static int track(struct http_front *h, struct evhttp_connection *evcon, struct hconn **out)
{
    *out = NULL;
    struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    evutil_socket_t fd = bev ? bufferevent_getfd(bev) : -1;
    if (fd < 0)
        return 0;
    if ((size_t)fd < h->by_fd_cap && h->by_fd[fd]) {
        struct hconn *c = h->by_fd[fd];
        if (c->evcon == evcon) {
            *out = c;
            return 0;
        }
        /* Cannot happen (evhttp reports every close of an incoming
         * connection); if it did, the socket was reused: forget the old one. */
        log_warn("HTTP connection on fd %d was closed without notice", (int)fd);
        untrack(h, c);
    }
    if (!server_conn_admit(h->env.srv, registry_read(h->env.reg)->conf->max_connections)) {
        STAT_ADD(h->env.stats, http_connections_rejected, 1);
        return -1;
    }
    if ((size_t)fd >= h->by_fd_cap) {
        size_t cap = h->by_fd_cap ? h->by_fd_cap : 64;
        while (cap <= (size_t)fd)
            cap *= 2;
        struct hconn **grown = realloc(h->by_fd, cap * sizeof(*grown));
        if (!grown) {
            server_conn_release(h->env.srv);
            return 0;
        }
        memset(grown + h->by_fd_cap, 0, (cap - h->by_fd_cap) * sizeof(*grown));
        h->by_fd = grown;
        h->by_fd_cap = cap;
    }
    struct hconn *c = calloc(1, sizeof(*c));
    if (!c) {
        server_conn_release(h->env.srv);
        return 0;
    }
    c->h = h;
    c->evcon = evcon;
    c->fd = fd;
    c->next = h->conns;
    if (h->conns)
        h->conns->prev = c;
    h->conns = c;
    h->by_fd[fd] = c;
    h->n_open++;
    STAT_ADD(h->env.stats, http_connections_seen, 1);
    evhttp_connection_set_closecb(evcon, on_conn_close, c);
    *out = c;
    return 0;
}

/* Idle: waiting for a request with nothing received or left to write, and no
 * reload pending. A request half received is not idle (its bytes sit in the
 * input buffer), nor is one being answered (evhttp stops reading meanwhile). */
static bool conn_idle(const struct hconn *c)
{
    struct bufferevent *bev = evhttp_connection_get_bufferevent(c->evcon);
    return !c->reload && (bufferevent_get_enabled(bev) & EV_READ) &&
           evbuffer_get_length(bufferevent_get_input(bev)) == 0 &&
           evbuffer_get_length(bufferevent_get_output(bev)) == 0;
}

static void close_idle(struct http_front *h)
{
    struct hconn *c = h->conns;
    while (c) {
        struct hconn *next = c->next;
        if (conn_idle(c))
            evhttp_connection_free(c->evcon); /* runs on_conn_close: c is freed */
        c = next;
    }
}

static void drain_cb(evutil_socket_t fd, short what, void *arg)
{
    struct http_front *h = arg;
    (void)fd;
    (void)what;
    close_idle(h);
    if (h->n_open == 0)
        event_del(h->drain);
}

/* evhttp asks for a bufferevent for each connection it accepts: the one place
 * it tells us of a new connection. New connections take the limits in force
 * now (evhttp copies them right after this), so a reload's limits apply to
 * every connection accepted after it. */
static struct bufferevent *on_accept(struct event_base *base, void *arg)
{
    struct http_front *h = arg;
    (void)base;
    STAT_ADD(h->env.stats, http_connections_accepted, 1);
    const struct conf *cf = registry_read(h->env.reg)->conf;
    if (cf->http_max_body != h->max_body) {
        h->max_body = cf->http_max_body;
        evhttp_set_max_body_size(h->http, (ev_ssize_t)h->max_body);
    }
    if (cf->http_max_headers != h->max_headers) {
        h->max_headers = cf->http_max_headers;
        evhttp_set_max_headers_size(h->http, (ev_ssize_t)h->max_headers);
    }
    if (cf->idle_timeout != h->idle_timeout) {
        h->idle_timeout = cf->idle_timeout;
        evhttp_set_timeout(h->http, h->idle_timeout ? (int)h->idle_timeout : -1);
    }
    return NULL; /* evhttp's own socket bufferevent */
}

/* ---- replies: every handler path ends in exactly one of these ---- */

/* Send body (consumed) with code. For HEAD the body is measured, not sent. */
static void reply(struct hreq *r, int code, const char *ctype, struct evbuffer *body)
{
    struct http_front *h = r->h;
    struct evkeyvalq *oh = evhttp_request_get_output_headers(r->req);
    evhttp_add_header(oh, "Content-Type", ctype);
    if (r->close || h->stopping)
        evhttp_add_header(oh, "Connection", "close");
    if (r->head) {
        char len[32];
        snprintf(len, sizeof(len), "%zu", evbuffer_get_length(body));
        evhttp_add_header(oh, "Content-Length", len);
        evbuffer_drain(body, evbuffer_get_length(body));
    }
    evhttp_send_reply(r->req, code, NULL, body);
    evbuffer_free(body);
    STAT_ADD(h->env.stats, http_requests, 1);
    STAT_ADD(h->env.stats, http_responses[stats_http_slot(code)], 1);
    stats_latency_add(&h->env.latency[STATS_HTTP], util_now() - r->t0, 1);
}

/* The only way out when not even an evbuffer can be had: evhttp's own page. */
static void reply_oom(struct hreq *r)
{
    evhttp_send_error(r->req, 500, NULL);
    STAT_ADD(r->h->env.stats, http_requests, 1);
    STAT_ADD(r->h->env.stats, http_responses[stats_http_slot(500)], 1);
    STAT_ADD(r->h->env.stats, http_errors_by_code[HTTP_ERR_INTERNAL], 1);
}

static void reply_error(struct hreq *r, enum http_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reply_json(struct hreq *r, int code, json_t *j)
{
    char *s = j ? json_dumps(j, JSON_FLAGS) : NULL;
    json_decref(j);
    if (!s) {
        reply_error(r, HTTP_ERR_INTERNAL, "cannot encode the reply");
        return;
    }
    struct evbuffer *b = evbuffer_new();
    if (!b || evbuffer_add(b, s, strlen(s)) != 0) {
        free(s);
        if (b)
            evbuffer_free(b);
        reply_oom(r);
        return;
    }
    free(s);
    reply(r, code, CT_JSON, b);
}

/* {"error":{"code":...,"message":...}} with the code's status. The message is
 * ours (ASCII, or a filter name that passed validation), so it always encodes. */
static void reply_error(struct hreq *r, enum http_err e, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    STAT_ADD(r->h->env.stats, http_errors_by_code[e], 1);
    struct evbuffer *b = evbuffer_new();
    json_t *inner = json_pack("{s:s,s:s?}", "code", http_err_name(e), "message", msg);
    json_t *j = inner ? json_pack("{s:o}", "error", inner) : NULL;
    char *s = j ? json_dumps(j, JSON_FLAGS) : NULL;
    json_decref(j);
    if (!b || !s || evbuffer_add(b, s, strlen(s)) != 0) {
        free(s);
        if (b)
            evbuffer_free(b);
        reply_oom(r);
        return;
    }
    free(s);
    reply(r, http_err_status(e), CT_JSON, b);
}

/* 405 with the Allow header listing what the path takes. */
static bool method_ok(struct hreq *r, int mask, const char *allow)
{
    enum evhttp_cmd_type m = evhttp_request_get_command(r->req);
    if ((int)m & mask)
        return true;
    evhttp_add_header(evhttp_request_get_output_headers(r->req), "Allow", allow);
    reply_error(r, HTTP_ERR_METHOD_NOT_ALLOWED, "this path takes %s", allow);
    return false;
}

/* Mutations (add, reload): with admin_token set, the request must carry
 * Authorization: Bearer <token>; without one, only loopback clients may. */
static bool authorized(struct hreq *r)
{
    const char *tok = r->cat->conf->admin_token;
    struct evhttp_connection *evcon = evhttp_request_get_connection(r->req);
    if (!tok) {
        if (evcon && util_addr_is_loopback(evhttp_connection_get_addr(evcon)))
            return true;
        evhttp_add_header(evhttp_request_get_output_headers(r->req), "WWW-Authenticate",
                          "Bearer realm=\"bloomgate\"");
        reply_error(r, HTTP_ERR_AUTH_REQUIRED,
                    "changes are accepted only from loopback clients when no admin_token is set");
        return false;
    }
    struct evkeyvalq *oh = evhttp_request_get_output_headers(r->req);
    const char *auth =
        evhttp_find_header(evhttp_request_get_input_headers(r->req), "Authorization");
    if (!auth) {
        evhttp_add_header(oh, "WWW-Authenticate", "Bearer realm=\"bloomgate\"");
        reply_error(r, HTTP_ERR_AUTH_REQUIRED, "this needs Authorization: Bearer <admin_token>");
        return false;
    }
    size_t alen = strlen(auth);
    bool bearer = alen > 7 && strncasecmp(auth, "Bearer ", 7) == 0;
    const char *given = auth + 7;
    size_t glen = bearer ? alen - 7 : 0;
    while (glen && (*given == ' ' || *given == '\t')) {
        given++;
        glen--;
    }
    while (glen && (given[glen - 1] == ' ' || given[glen - 1] == '\t'))
        glen--;
    if (!bearer || !util_token_equal(given, glen, tok)) {
        char *host = NULL;
        ev_uint16_t port = 0;
        if (evcon)
            evhttp_connection_get_peer(evcon, &host, &port);
        log_warn("HTTP: wrong admin token from %s:%u", host ? host : "?", (unsigned)port);
        evhttp_add_header(oh, "WWW-Authenticate",
                          "Bearer realm=\"bloomgate\", error=\"invalid_token\"");
        reply_error(r, HTTP_ERR_AUTH_FAILED,
                    bearer ? "wrong token" : "use Authorization: Bearer <admin_token>");
        return false;
    }
    return true;
}

/* ---- handlers ---- */

static void do_list(struct hreq *r)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < r->cat->n; i++)
        json_array_append_new(arr, server_filter_json(&r->cat->entries[i]));
    reply_json(r, 200, json_pack("{s:o}", "filters", arr));
}

static void do_healthz(struct hreq *r)
{
    const struct conf *cf = r->cat->conf;
    json_t *missing = json_array();
    for (size_t i = 0; i < cf->n_filters; i++) {
        const char *name = cf->filters[i].name;
        if (!catalog_find(r->cat, name, strlen(name)))
            json_array_append_new(missing, json_string(name));
    }
    if (json_array_size(missing) == 0) {
        json_decref(missing);
        reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
    } else {
        reply_json(r, 503,
                   json_pack("{s:s,s:s,s:o}", "status", "unavailable", "message",
                             "configured filters are not loaded", "missing", missing));
    }
}

static void do_metrics(struct hreq *r)
{
    struct evbuffer *b = evbuffer_new();
    if (!b || metrics_render(r->h->env.srv, r->cat, b) != 0) {
        if (b)
            evbuffer_free(b);
        reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    reply(r, 200, METRICS_CONTENT_TYPE, b);
}

/* Count a batch's items on the filter's per-protocol counters. */
static void count_items(struct hreq *r, const struct fentry *e, size_t n, size_t yes, bool add)
{
    struct fstats *fs = &r->h->env.fstats[e->id];
    if (add) {
        STAT_ADD(fs, adds[STATS_HTTP], n);
        STAT_ADD(fs, added_new[STATS_HTTP], yes);
    } else {
        STAT_ADD(fs, checks[STATS_HTTP], n);
        STAT_ADD(fs, hits[STATS_HTTP], yes);
    }
}

/* GET .../check?item=X: one item from the query string. */
static void do_check_get(struct hreq *r, const struct fentry *e)
{
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(r->req);
    char err[128];
    char *item = NULL;
    size_t len = 0;
    int rc =
        http_query_param(u ? evhttp_uri_get_query(u) : NULL, "item", &item, &len, err, sizeof(err));
    if (rc < 0) {
        reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", err);
        return;
    }
    if (rc == 0) {
        reply_error(r, HTTP_ERR_MISSING_ITEMS, "GET .../check needs ?item=<percent-encoded item>");
        return;
    }
    const struct conf *cf = r->cat->conf;
    if (len > cf->max_item) {
        free(item);
        reply_error(r, HTTP_ERR_ITEM_TOO_LONG, "item 1 is %zu bytes, the limit is max_item %zu",
                    len, cf->max_item);
        return;
    }
    /* JSON strings are Unicode: an item that is not UTF-8 cannot be echoed
     * (nor sent in a POST body). The line protocol takes any bytes. */
    json_t *js = json_stringn(item, len);
    if (!js) {
        free(item);
        reply_error(r, HTTP_ERR_BAD_REQUEST, "the item is not valid UTF-8");
        return;
    }
    bool yes = filter_check(e->v->f, item, len);
    free(item);
    count_items(r, e, 1, yes, false);
    reply_json(r, 200,
               json_pack("{s:s,s:o,s:b}", "filter", e->name, "item", js, "present", (int)yes));
}

/* An upper bound on the values in a JSON text: commas outside strings, plus
 * one. jansson builds the whole tree before we can count the array, at ~50
 * bytes a value, so an 8 MiB body of "1,1,1,..." would take ~200 MB; counting
 * first keeps a request's memory within a small multiple of max_items. */
static size_t json_elements_upper_bound(const char *p, size_t n)
{
    size_t commas = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == ',') {
            commas++;
        }
    }
    return commas + 1;
}

/* POST .../check and .../add: {"items":[...]} through the filter's batch call
 * (hash all, prefetch all, then test or set), the reply written directly. */
static void do_items_post(struct hreq *r, const struct fentry *e, bool add)
{
    struct http_front *h = r->h;
    const struct conf *cf = r->cat->conf;
    struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
    size_t blen = evbuffer_get_length(in);
    const char *body = blen ? (const char *)evbuffer_pullup(in, -1) : "";
    if (!body) {
        reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    size_t max = cf->max_items < h->env.scratch_items ? cf->max_items : h->env.scratch_items;
    size_t elements = json_elements_upper_bound(body, blen);
    if (elements > max + 8) {
        reply_error(r, HTTP_ERR_TOO_MANY_ITEMS, "about %zu items, the limit is max_items %zu",
                    elements, max);
        return;
    }
    json_error_t jerr;
    json_t *root = json_loadb(body, blen, JSON_ALLOW_NUL, &jerr);
    if (!root) {
        reply_error(r, HTTP_ERR_BAD_JSON, "line %d column %d: %s", jerr.line, jerr.column,
                    jerr.text);
        return;
    }
    json_t *items = json_is_object(root) ? json_object_get(root, "items") : NULL;
    if (!json_is_array(items)) {
        json_decref(root);
        reply_error(r, HTTP_ERR_MISSING_ITEMS, "the body must be {\"items\": [<string>, ...]}");
        return;
    }
    size_t n = json_array_size(items);
    if (n > max) {
        json_decref(root);
        reply_error(r, HTTP_ERR_TOO_MANY_ITEMS, "%zu items, the limit is max_items %zu", n, max);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(items, i);
        if (!json_is_string(v)) {
            json_decref(root);
            reply_error(r, HTTP_ERR_NOT_A_STRING, "item %zu is not a string", i + 1);
            return;
        }
        size_t len = json_string_length(v);
        if (len > cf->max_item) {
            json_decref(root);
            reply_error(r, HTTP_ERR_ITEM_TOO_LONG,
                        "item %zu is %zu bytes, the limit is max_item %zu", i + 1, len,
                        cf->max_item);
            return;
        }
        h->env.keys[i].data = json_string_value(v);
        h->env.keys[i].len = len;
    }
    struct filter *f = e->v->f;
    if (add) {
        /* Into the journal before the filter, and durable (as the filter's
         * fsync policy promises) before a reply says "new". */
        char why[512];
        if (server_add_items(h->env.worker, e, h->env.keys, n, h->env.bools, why, sizeof(why)) !=
            0) {
            json_decref(root);
            reply_error(r, HTTP_ERR_UNAVAILABLE, "%s", why);
            return;
        }
        if (!server_journal_commit(h->env.worker)) {
            json_decref(root);
            reply_error(r, HTTP_ERR_UNAVAILABLE,
                        "the journal could not be synced; the add was not acknowledged");
            return;
        }
    } else {
        filter_check_batch(f, h->env.keys, n, h->env.bools);
    }
    json_decref(root);
    size_t yes = 0;
    for (size_t i = 0; i < n; i++)
        yes += h->env.bools[i];
    count_items(r, e, n, yes, add);

    /* {"filter":"NAME","present":[true,...]} or {...,"new":[...],"added":N}:
     * the name needs no escaping ([A-Za-z0-9_.-]), the rest is fixed words. */
    struct evbuffer *b = evbuffer_new();
    struct evbuffer_iovec v;
    size_t cap = e->name_len + 64 + n * 6;
    if (!b || evbuffer_reserve_space(b, (ev_ssize_t)cap, &v, 1) < 1) {
        if (b)
            evbuffer_free(b);
        reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    char *p = v.iov_base;
    p += sprintf(p, "{\"filter\":\"%s\",\"%s\":[", e->name, add ? "new" : "present");
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        if (h->env.bools[i]) {
            memcpy(p, "true", 4);
            p += 4;
        } else {
            memcpy(p, "false", 5);
            p += 5;
        }
    }
    *p++ = ']';
    if (add)
        p += sprintf(p, ",\"added\":%zu", yes);
    *p++ = '}';
    v.iov_len = (size_t)(p - (char *)v.iov_base);
    evbuffer_commit_space(b, &v, 1);
    reply(r, 200, CT_JSON, b);
}

/* The reload thread is done: answer on this worker's thread, unless the
 * connection went away meanwhile. */
static void reload_done(json_t *report, void *arg)
{
    struct hreload *p = arg;
    if (p->c)
        p->c->reload = NULL;
    if (!p->req) {
        json_decref(report);
        free(p);
        return;
    }
    struct hreq r = {.h = p->h, .req = p->req, .c = p->c, .t0 = p->t0};
    free(p);
    bool ok = json_is_true(json_object_get(report, "ok"));
    reply_json(&r, ok ? 200 : 500, report);
}

static void do_reload(struct hreq *r)
{
    if (!authorized(r))
        return;
    if (!r->c) {
        reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    struct hreload *p = calloc(1, sizeof(*p));
    if (!p) {
        reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    p->h = r->h;
    p->req = r->req;
    p->c = r->c;
    p->t0 = r->t0;
    r->c->reload = p;
    if (!server_reload(r->h->env.srv, r->h->env.base, reload_done, p)) {
        r->c->reload = NULL;
        free(p);
        reply_error(r, HTTP_ERR_UNAVAILABLE, "reload is not available in this server");
    }
    /* Otherwise reload_done answers, later, on this thread. */
}

/* /v1/filters/{name}[/check|/add] */
static void route_filter(struct hreq *r, const char *rest)
{
    const char *slash = strchr(rest, '/');
    size_t raw = slash ? (size_t)(slash - rest) : strlen(rest);
    const char *sub = slash ? slash + 1 : NULL;
    int mask;
    const char *allow;
    if (!sub) {
        mask = M_GET;
        allow = "GET, HEAD";
    } else if (strcmp(sub, "check") == 0) {
        mask = M_GET | M_POST;
        allow = "GET, HEAD, POST";
    } else if (strcmp(sub, "add") == 0) {
        mask = M_POST;
        allow = "POST";
    } else {
        reply_error(r, HTTP_ERR_NOT_FOUND, "no such path");
        return;
    }
    if (!method_ok(r, mask, allow))
        return;
    bool post = evhttp_request_get_command(r->req) == EVHTTP_REQ_POST;
    bool add = sub && strcmp(sub, "add") == 0;
    if (add && !authorized(r))
        return;
    /* Names are [A-Za-z0-9_.-], which never needs escaping, but an escaped
     * one is the same name (RFC 3986), so decode before looking it up. */
    char name[3 * REGISTRY_NAME_MAX + 1];
    long len = raw < sizeof(name) ? pct_decode(rest, raw, name) : -1;
    const struct fentry *e = len > 0 ? catalog_find(r->cat, name, (size_t)len) : NULL;
    if (!e) {
        if (len > 0 && conf_is_valid_name(name, (size_t)len))
            reply_error(r, HTTP_ERR_UNKNOWN_FILTER, "no such filter '%.*s'", (int)len, name);
        else
            reply_error(r, HTTP_ERR_UNKNOWN_FILTER,
                        "invalid filter name: use 1 to 64 of A-Z a-z 0-9 _ . -");
        return;
    }
    if (!sub)
        reply_json(r, 200, server_filter_json(e));
    else if (add || post)
        do_items_post(r, e, add);
    else
        do_check_get(r, e);
}

static void route(struct hreq *r)
{
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(r->req);
    const char *path = u ? evhttp_uri_get_path(u) : NULL;
    static const char filters_prefix[] = "/v1/filters/";
    if (!path) {
        reply_error(r, HTTP_ERR_BAD_REQUEST, "cannot parse the request URI");
    } else if (strcmp(path, "/v1/filters") == 0) {
        if (method_ok(r, M_GET, "GET, HEAD"))
            do_list(r);
    } else if (strncmp(path, filters_prefix, sizeof(filters_prefix) - 1) == 0) {
        route_filter(r, path + sizeof(filters_prefix) - 1);
    } else if (strcmp(path, "/v1/reload") == 0) {
        if (method_ok(r, M_POST, "POST"))
            do_reload(r);
    } else if (strcmp(path, "/healthz") == 0) {
        if (method_ok(r, M_GET, "GET, HEAD"))
            do_healthz(r);
    } else if (strcmp(path, "/metrics") == 0) {
        if (method_ok(r, M_GET, "GET, HEAD"))
            do_metrics(r);
    } else {
        reply_error(r, HTTP_ERR_NOT_FOUND, "no such path");
    }
}

/* evhttp's one callback for every request it has read in full. */
static void on_request(struct evhttp_request *req, void *arg)
{
    struct http_front *h = arg;
    struct hreq r = {.h = h, .req = req, .t0 = util_now(), .cat = registry_read(h->env.reg)};
    r.head = evhttp_request_get_command(req) == EVHTTP_REQ_HEAD;
    if (track(h, evhttp_request_get_connection(req), &r.c) != 0) {
        r.close = true;
        reply_error(&r, HTTP_ERR_TOO_MANY_CONNECTIONS, "the server is at max_connections");
    } else {
        route(&r);
    }
    /* Nothing read from the registry is used past this point (a pending
     * reload holds no catalog pointer). */
    registry_quiescent(h->env.reg, h->env.worker_id);
}

/* ---- life cycle ---- */

struct http_front *http_front_create(const struct http_env *env, evutil_socket_t *fds, size_t n_fds,
                                     char *err, size_t errlen)
{
    struct http_front *h = calloc(1, sizeof(*h));
    if (!h || !(h->bound = calloc(n_fds ? n_fds : 1, sizeof(*h->bound))) ||
        !(h->http = evhttp_new(env->base)) ||
        !(h->drain = event_new(env->base, -1, EV_PERSIST, drain_cb, h))) {
        snprintf(err, errlen, "out of memory setting up HTTP");
        http_front_free(h);
        return NULL;
    }
    h->env = *env;
    const struct conf *cf = registry_read(env->reg)->conf;
    h->max_body = cf->http_max_body;
    h->max_headers = cf->http_max_headers;
    h->idle_timeout = cf->idle_timeout;
    evhttp_set_max_body_size(h->http, (ev_ssize_t)h->max_body);
    evhttp_set_max_headers_size(h->http, (ev_ssize_t)h->max_headers);
    if (h->idle_timeout)
        evhttp_set_timeout(h->http, (int)h->idle_timeout);
    evhttp_set_allowed_methods(h->http, ALLOWED_METHODS);
    evhttp_set_gencb(h->http, on_request, h);
    evhttp_set_bevcb(h->http, on_accept, h);
    for (size_t i = 0; i < n_fds; i++) {
        h->bound[i] = evhttp_accept_socket_with_handle(h->http, fds[i]);
        if (!h->bound[i]) {
            snprintf(err, errlen, "cannot accept HTTP connections on socket %d", (int)fds[i]);
            http_front_free(h);
            return NULL;
        }
        fds[i] = -1; /* the listener closes it */
        h->n_bound++;
    }
    return h;
}

void http_front_stop(struct http_front *h)
{
    if (!h || h->stopping)
        return;
    h->stopping = true;
    for (size_t i = 0; i < h->n_bound; i++) {
        if (h->bound[i]) {
            evhttp_del_accept_socket(h->http, h->bound[i]);
            h->bound[i] = NULL;
        }
    }
    /* Idle connections now; the others once their response is written (it
     * says Connection: close, or the drain finds them idle after it). */
    h->freeing = true; /* no drained callback from inside this call */
    close_idle(h);
    h->freeing = false;
    if (h->n_open > 0) {
        struct timeval tv = {0, DRAIN_MS * 1000};
        event_add(h->drain, &tv);
    }
}

bool http_front_drained(const struct http_front *h)
{
    return !h || h->n_open == 0;
}

void http_front_free(struct http_front *h)
{
    if (!h)
        return;
    h->freeing = true;
    if (h->drain)
        event_free(h->drain);
    if (h->http)
        evhttp_free(h->http); /* closes every connection: on_conn_close untracks each */
    while (h->conns)
        untrack(h, h->conns);
    free(h->by_fd);
    free(h->bound);
    free(h);
}
