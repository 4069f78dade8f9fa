/* The HTTP API: its own HTTP/1.1 connections on the worker's event_base,
 * parsed by httpparse.c (pure), routed and answered here. The filters are
 * reached through the registry exactly as the line protocol reaches them (one
 * acquire load of the catalog per read, a quiescent report after it), and the
 * counters are the worker's own.
 *
 * Why not evhttp: it cost ~53,000 instructions per GET check (a malloc'd
 * header list, a parsed URI, sscanf, a callback chain, an evbuffer and a
 * jansson document per reply), 0.43 x nginx's `return 204` on this machine.
 * This connection model is the line protocol's (src/server.c): a flat input
 * buffer per connection, requests parsed in place, pipelined requests answered
 * in order, one writev per read, reading paused while too much output is
 * unread, a persistent read event carrying the idle timeout.
 *
 * Memory per connection: the input buffer grows only as the request being read
 * needs (head <= http_max_headers, body <= http_max_body; a chunked body is
 * decoded in place, so its framing does not count) and shrinks when idle. */
#include "config.h"

#include "front/http/http.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "front/http/httpparse.h"
#include "base/log.h"
#include "core/gate.h"
#include "core/metrics.h"
#include "store/registry.h"
#include "net/server.h"
#include "net/connend.h"
#include "base/util.h"

#define JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))
#define CT_JSON "application/json; charset=utf-8"
#define IN_START 4096      /* first input buffer of a connection */
#define IN_IDLE_KEEP 16384 /* a larger one is given back when it empties */
#define CHUNK_SLACK 8192   /* room past http_max_body for a chunked body's framing */

enum { M_GET = 1, M_HEAD = 2, M_POST = 4 };

struct hreload;

/* One HTTP connection, owned by one worker. */
struct hconn {
    struct http_front *h;
    evutil_socket_t fd;
    struct event *rev; /* readable, with the idle timeout */
    struct event *wev; /* writable, while output is pending */
    char *in;          /* bytes received and not yet answered; in[0] starts a request */
    size_t in_len, in_cap;
    size_t scan;                    /* httpparse_head's resume hint for the request at in[0] */
    struct httpparse_chunked chunk; /* a chunked body's decoding state, for in[0]'s request */
    bool continue_sent;             /* "100 Continue" went out for in[0]'s request */
    struct evbuffer *out;           /* responses not yet written */
    bool loopback;                  /* peer on loopback: may add/reload without a token */
    bool admitted;                  /* counted against max_connections (holds a slot) */
    bool paused;                    /* reading stopped: too much unread output */
    bool closing;                   /* close once out is written */
    struct connend end;             /* how its end goes (a lingering close) */
    struct hreload *reload;         /* a POST /v1/reload awaiting its report: later requests wait */
    unsigned answered;              /* requests answered since the read began (latency) */
    struct hconn *prev, *next;
    char peer[64];
};

/* A POST /v1/reload waiting for the reload thread; outlives its connection if
 * need be (then c is NULL). */
struct hreload {
    struct hconn *c;
    double t0;
    bool keep_alive;
    int minor;
};

struct http_front {
    struct http_env env;
    struct evconnlistener **listeners; /* NULL entries once stopped */
    size_t n_listeners;
    struct hconn *conns;
    size_t n_open; /* connections open, admitted or not */
    bool stopping;
    bool freeing; /* no drained callback from inside stop/free */
    char *qbuf;   /* a decoded query value */
    size_t qcap;
    char *rbuf; /* a response being built */
    size_t rcap;
    time_t date_sec; /* the second `date` was formatted for */
    char date[40];   /* "Sun, 22 Nov 2026 07:17:46 GMT" */
};

/* One request being answered. */
struct hreq {
    struct hconn *c;
    struct http_front *h;
    const struct httpparse_head *hd;
    const char *body;
    size_t body_len;
    const struct catalog *cat; /* valid until the read's callback returns */
    bool head;                 /* HEAD: the headers GET would get, no body */
    bool close;                /* Connection: close after this response */
    char extra[192];           /* more header lines (Allow, WWW-Authenticate), CRLF-ended */
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

int http_query_param(const char *query, const char *name, char **out, size_t *outlen, char *err,
                     size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    if (!query)
        return 0;
    size_t qlen = strlen(query);
    char *buf = malloc(qlen + 1);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = httpparse_query(query, qlen, name, buf, outlen, err, errlen);
    if (rc != 1) {
        free(buf);
        return rc;
    }
    buf[*outlen] = '\0';
    *out = buf;
    return 1;
}

/* ---- building responses ---- */

static const char *status_text(int code)
{
    switch (code) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 413:
        return "Content Too Large";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

/* Room for n more bytes in the front's response buffer; NULL if out of memory. */
static char *rbuf_room(struct http_front *h, size_t n)
{
    if (n > h->rcap) {
        size_t cap = h->rcap ? h->rcap : 4096;
        while (cap < n)
            cap *= 2;
        char *nb = realloc(h->rbuf, cap);
        if (!nb)
            return NULL;
        h->rbuf = nb;
        h->rcap = cap;
    }
    return h->rbuf;
}

static char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

#define PUT_LIT(p, lit) put((p), (lit), sizeof(lit) - 1)

static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* The Date header's value, formatted once a second (the event loop's cached
 * clock: no system call per request). */
static const char *date_now(struct http_front *h)
{
    struct timeval tv;
    if (event_base_gettimeofday_cached(h->env.base, &tv) != 0)
        gettimeofday(&tv, NULL);
    if (tv.tv_sec != h->date_sec) {
        struct tm tm;
        gmtime_r(&tv.tv_sec, &tm);
        strftime(h->date, sizeof(h->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        h->date_sec = tv.tv_sec;
    }
    return h->date;
}

/* Write s[0..len) as the inside of a JSON string, escaped as jansson escapes
 * (", \, \b \f \n \r \t, other controls as \u00XX); p has room for 6 * len. */
static char *put_json_escaped(char *p, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    for (size_t i = 0; i < len; i++) {
        /* Eight bytes at a time while none is a control, '"' or '\\'. */
        while (len - i >= 8) {
            uint64_t w, q, b;
            memcpy(&w, s + i, 8);
            q = w ^ (ones * '"');
            b = w ^ (ones * '\\');
            if (((w - ones * 0x20) & ~w) & highs || ((q - ones) & ~q & highs) ||
                ((b - ones) & ~b & highs))
                break;
            memcpy(p, s + i, 8);
            p += 8;
            i += 8;
        }
        if (i >= len)
            break;
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') {
            *p++ = (char)ch;
            continue;
        }
        *p++ = '\\';
        switch (ch) {
        case '"':
            *p++ = '"';
            break;
        case '\\':
            *p++ = '\\';
            break;
        case '\b':
            *p++ = 'b';
            break;
        case '\f':
            *p++ = 'f';
            break;
        case '\n':
            *p++ = 'n';
            break;
        case '\r':
            *p++ = 'r';
            break;
        case '\t':
            *p++ = 't';
            break;
        default:
            p = PUT_LIT(p, "u00");
            *p++ = hex[ch >> 4];
            *p++ = hex[ch & 15];
        }
    }
    return p;
}

/* Status line and headers, ending in the blank line, at p (room for 512 +
 * extra). Decides the connection's fate: closing after this response when
 * the request or the server says so. */
static char *put_head(struct hreq *r, char *p, int code, const char *ctype, size_t body_len)
{
    struct hconn *c = r->c;
    if (r->h->stopping || !r->hd || !r->hd->keep_alive)
        r->close = true;
    p = PUT_LIT(p, "HTTP/1.1 ");
    p = put_u64(p, (uint64_t)code);
    *p++ = ' ';
    const char *txt = status_text(code);
    p = put(p, txt, strlen(txt));
    p = PUT_LIT(p, "\r\nDate: ");
    const char *d = date_now(r->h);
    p = put(p, d, strlen(d));
    p = PUT_LIT(p, "\r\nContent-Type: ");
    p = put(p, ctype, strlen(ctype));
    p = PUT_LIT(p, "\r\nContent-Length: ");
    p = put_u64(p, body_len);
    p = PUT_LIT(p, "\r\n");
    if (r->close)
        p = PUT_LIT(p, "Connection: close\r\n");
    else if (r->hd && r->hd->minor == 0)
        p = PUT_LIT(p, "Connection: keep-alive\r\n");
    p = put(p, r->extra, strlen(r->extra));
    p = PUT_LIT(p, "\r\n");
    if (r->close)
        c->closing = true;
    return p;
}

/* Count one response on the worker's counters. */
static void count_response(struct hreq *r, int code)
{
    STAT_ADD(r->h->env.stats, http_requests, 1);
    STAT_ADD(r->h->env.stats, http_responses[stats_http_slot(code)], 1);
    r->c->answered++;
}

/* Queue a response whose body is body[0..len) (copied). For HEAD the body is
 * measured, not sent. Every request ends in exactly one respond(). */
static void respond(struct hreq *r, int code, const char *ctype, const char *body, size_t len)
{
    size_t room = 512 + sizeof(r->extra) + (r->head ? 0 : len);
    char *b = rbuf_room(r->h, room);
    if (!b) {
        r->c->closing = true; /* out of memory: nothing sensible to send */
        count_response(r, 500);
        return;
    }
    char *p = put_head(r, b, code, ctype, len);
    if (!r->head)
        p = put(p, body, len);
    evbuffer_add(r->c->out, b, (size_t)(p - b));
    count_response(r, code);
}

/* The same with the body in an evbuffer (consumed): /metrics. */
static void respond_buffer(struct hreq *r, int code, const char *ctype, struct evbuffer *body)
{
    char head[512 + sizeof(r->extra)];
    char *p = put_head(r, head, code, ctype, evbuffer_get_length(body));
    evbuffer_add(r->c->out, head, (size_t)(p - head));
    if (!r->head)
        evbuffer_add_buffer(r->c->out, body);
    evbuffer_free(body);
    count_response(r, code);
}

/* A message for a JSON string: ours are ASCII, but a jansson parse error may
 * quote bytes of the body, which need not be UTF-8. */
static void sanitize_utf8(char *s)
{
    if (httpparse_utf8_valid(s, strlen(s)))
        return;
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            *s = '?';
}

static void reply_error(struct hreq *r, enum http_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* {"error":{"code":...,"message":...}} with the code's status. */
static void reply_error(struct hreq *r, enum http_err e, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sanitize_utf8(msg);
    STAT_ADD(r->h->env.stats, http_errors_by_code[e], 1);
    char body[64 + 6 * sizeof(msg)];
    char *p = PUT_LIT(body, "{\"error\":{\"code\":\"");
    const char *name = http_err_name(e);
    p = put(p, name, strlen(name));
    p = PUT_LIT(p, "\",\"message\":\"");
    p = put_json_escaped(p, msg, strlen(msg));
    p = PUT_LIT(p, "\"}}");
    respond(r, http_err_status(e), CT_JSON, body, (size_t)(p - body));
}

static void reply_json(struct hreq *r, int code, json_t *j)
{
    char *s = j ? json_dumps(j, JSON_FLAGS) : NULL;
    json_decref(j);
    if (!s) {
        reply_error(r, HTTP_ERR_INTERNAL, "cannot encode the reply");
        return;
    }
    respond(r, code, CT_JSON, s, strlen(s));
    free(s);
}

static void add_header(struct hreq *r, const char *line)
{
    size_t used = strlen(r->extra), n = strlen(line);
    if (used + n + 3 <= sizeof(r->extra)) {
        memcpy(r->extra + used, line, n);
        memcpy(r->extra + used + n, "\r\n", 3);
    }
}

/* 405 with the Allow header listing what the path takes. */
static bool method_ok(struct hreq *r, int mask, const char *allow)
{
    int m = r->hd->method == HTTPPARSE_GET    ? M_GET
            : r->hd->method == HTTPPARSE_HEAD ? M_HEAD
            : r->hd->method == HTTPPARSE_POST ? M_POST
                                              : 0;
    if (m & mask)
        return true;
    char line[64];
    snprintf(line, sizeof(line), "Allow: %s", allow);
    add_header(r, line);
    reply_error(r, HTTP_ERR_METHOD_NOT_ALLOWED, "this path takes %s", allow);
    return false;
}

/* Mutations (add, reload): with admin_token set, the request must carry
 * Authorization: Bearer <token>; without one, only loopback clients may. */
static bool authorized(struct hreq *r)
{
    const char *tok = r->cat->conf->admin_token;
    if (!tok) {
        if (r->c->loopback)
            return true;
        add_header(r, "WWW-Authenticate: Bearer realm=\"bloomgate\"");
        reply_error(r, HTTP_ERR_AUTH_REQUIRED,
                    "changes are accepted only from loopback clients when no admin_token is set");
        return false;
    }
    const char *auth = r->hd->auth;
    size_t alen = r->hd->auth_len;
    if (!auth) {
        add_header(r, "WWW-Authenticate: Bearer realm=\"bloomgate\"");
        reply_error(r, HTTP_ERR_AUTH_REQUIRED, "this needs Authorization: Bearer <admin_token>");
        return false;
    }
    bool bearer = alen > 7 && strncasecmp(auth, "Bearer ", 7) == 0;
    const char *given = auth + 7;
    size_t glen = bearer ? alen - 7 : 0;
    while (glen && (*given == ' ' || *given == '\t')) {
        given++;
        glen--;
    }
    if (!bearer || !util_token_equal(given, glen, tok)) {
        log_warn("HTTP: wrong admin token from %s", r->c->peer);
        add_header(r, "WWW-Authenticate: Bearer realm=\"bloomgate\", error=\"invalid_token\"");
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
    bool all = true;
    for (size_t i = 0; i < cf->n_filters && all; i++)
        all = catalog_find(r->cat, cf->filters[i].name, strlen(cf->filters[i].name)) != NULL;
    if (all) {
        static const char ok[] = "{\"status\":\"ok\"}";
        respond(r, 200, CT_JSON, ok, sizeof(ok) - 1);
        return;
    }
    json_t *missing = json_array();
    for (size_t i = 0; i < cf->n_filters; i++) {
        const char *name = cf->filters[i].name;
        if (!catalog_find(r->cat, name, strlen(name)))
            json_array_append_new(missing, json_string(name));
    }
    reply_json(r, 503,
               json_pack("{s:s,s:s,s:o}", "status", "unavailable", "message",
                         "configured filters are not loaded", "missing", missing));
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
    respond_buffer(r, 200, METRICS_CONTENT_TYPE, b);
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

/* GET .../check?item=X: one item from the query string, decoded into the
 * front's buffer, echoed back escaped. The hot path: no allocation once the
 * buffers have grown, no jansson. */
static void do_check_get(struct hreq *r, const struct fentry *e)
{
    struct http_front *h = r->h;
    const struct httpparse_head *hd = r->hd;
    if (hd->query_len + 1 > h->qcap) {
        size_t cap = h->qcap ? h->qcap : 1024;
        while (cap < hd->query_len + 1)
            cap *= 2;
        char *nb = realloc(h->qbuf, cap);
        if (!nb) {
            reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
            return;
        }
        h->qbuf = nb;
        h->qcap = cap;
    }
    char err[128];
    size_t len = 0;
    int rc = hd->query ? httpparse_query(hd->query, hd->query_len, "item", h->qbuf, &len, err,
                                         sizeof(err))
                       : 0;
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
        reply_error(r, HTTP_ERR_ITEM_TOO_LONG, "item 1 is %zu bytes, the limit is max_item %zu",
                    len, cf->max_item);
        return;
    }
    /* JSON strings are Unicode: an item that is not UTF-8 cannot be echoed
     * (nor sent in a POST body). The line protocol takes any bytes. */
    if (!httpparse_utf8_valid(h->qbuf, len)) {
        reply_error(r, HTTP_ERR_BAD_REQUEST, "the item is not valid UTF-8");
        return;
    }
    bool yes = filter_check(e->v->f, h->qbuf, len);
    count_items(r, e, 1, yes, false);
    /* {"filter":"NAME","item":"ITEM","present":true}; the body is built after
     * the room for the head, then the head is put in front of it. */
    size_t body_max = e->name_len + 6 * len + 64;
    char *b = rbuf_room(h, 1024 + sizeof(r->extra) + body_max);
    if (!b) {
        reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    char *body = b + 512 + sizeof(r->extra), *p = body;
    p = PUT_LIT(p, "{\"filter\":\"");
    p = put(p, e->name, e->name_len);
    p = PUT_LIT(p, "\",\"item\":\"");
    p = put_json_escaped(p, h->qbuf, len);
    p = yes ? PUT_LIT(p, "\",\"present\":true}") : PUT_LIT(p, "\",\"present\":false}");
    size_t blen = (size_t)(p - body);
    char head[512 + sizeof(r->extra)];
    char *he = put_head(r, head, 200, CT_JSON, blen);
    size_t hlen = (size_t)(he - head);
    memcpy(body - hlen, head, hlen);
    evbuffer_add(r->c->out, body - hlen, hlen + (r->head ? 0 : blen));
    count_response(r, 200);
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
    size_t max = cf->max_items < h->env.scratch_items ? cf->max_items : h->env.scratch_items;
    size_t elements = json_elements_upper_bound(r->body, r->body_len);
    if (elements > max + 8) {
        reply_error(r, HTTP_ERR_TOO_MANY_ITEMS, "about %zu items, the limit is max_items %zu",
                    elements, max);
        return;
    }
    json_error_t jerr;
    json_t *root = json_loadb(r->body_len ? r->body : "", r->body_len, JSON_ALLOW_NUL, &jerr);
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
        if (gate_add(h->env.gate, e, h->env.keys, n, h->env.bools, why, sizeof(why)) !=
            0) {
            json_decref(root);
            reply_error(r, HTTP_ERR_UNAVAILABLE, "%s", why);
            return;
        }
        if (!gate_commit(h->env.gate)) {
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
    size_t cap = e->name_len + 64 + n * 6;
    char *body = malloc(cap);
    if (!body) {
        reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    char *p = PUT_LIT(body, "{\"filter\":\"");
    p = put(p, e->name, e->name_len);
    p = add ? PUT_LIT(p, "\",\"new\":[") : PUT_LIT(p, "\",\"present\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        p = h->env.bools[i] ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
    }
    *p++ = ']';
    if (add) {
        p = PUT_LIT(p, ",\"added\":");
        p = put_u64(p, yes);
    }
    *p++ = '}';
    respond(r, 200, CT_JSON, body, (size_t)(p - body));
    free(body);
}

static void conn_process(struct hconn *c, bool draining);
static void conn_flush(struct hconn *c);
static void conn_arm_read(struct hconn *c);

/* The reload thread is done: answer on this worker's thread, unless the
 * connection went away meanwhile; then go on with what the client sent
 * after the reload request. */
static void reload_done(json_t *report, void *arg)
{
    struct hreload *p = arg;
    struct hconn *c = p->c;
    if (!c) {
        json_decref(report);
        free(p);
        return;
    }
    c->reload = NULL;
    struct httpparse_head hd = {.keep_alive = p->keep_alive, .minor = p->minor};
    struct hreq r = {.c = c, .h = c->h, .hd = &hd};
    bool ok = json_is_true(json_object_get(report, "ok"));
    c->answered = 0;
    reply_json(&r, ok ? 200 : 500, report);
    stats_latency_add(&c->h->env.latency[STATS_HTTP], util_now() - p->t0, 1);
    free(p);
    conn_process(c, false);
    if (!c->paused && !c->closing && !c->reload)
        conn_arm_read(c);
    conn_flush(c); /* may close (and free) c */
}

static void do_reload(struct hreq *r)
{
    if (!authorized(r))
        return;
    struct hreload *p = calloc(1, sizeof(*p));
    if (!p) {
        reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    p->c = r->c;
    p->t0 = util_now();
    p->keep_alive = r->hd->keep_alive;
    p->minor = r->hd->minor;
    r->c->reload = p;
    event_del(r->c->rev); /* later requests wait in the kernel, not in our buffer */
    if (!server_reload(r->h->env.srv, r->h->env.base, reload_done, p)) {
        r->c->reload = NULL;
        free(p);
        conn_arm_read(r->c);
        reply_error(r, HTTP_ERR_UNAVAILABLE,
                    "the reload could not be started (no reload hook, or out of memory)");
    }
    /* Otherwise reload_done answers, later, on this thread. */
}

/* /v1/filters/{name}[/check|/add]; rest is the path after the prefix. */
static void route_filter(struct hreq *r, const char *rest, size_t rest_len)
{
    const char *slash = memchr(rest, '/', rest_len);
    size_t raw = slash ? (size_t)(slash - rest) : rest_len;
    const char *sub = slash ? slash + 1 : NULL;
    size_t sub_len = slash ? rest_len - raw - 1 : 0;
    bool is_check = sub && sub_len == 5 && memcmp(sub, "check", 5) == 0;
    bool add = sub && sub_len == 3 && memcmp(sub, "add", 3) == 0;
    int mask;
    const char *allow;
    if (!sub) {
        mask = M_GET | M_HEAD;
        allow = "GET, HEAD";
    } else if (is_check) {
        mask = M_GET | M_HEAD | M_POST;
        allow = "GET, HEAD, POST";
    } else if (add) {
        mask = M_POST;
        allow = "POST";
    } else {
        reply_error(r, HTTP_ERR_NOT_FOUND, "no such path");
        return;
    }
    if (!method_ok(r, mask, allow))
        return;
    bool post = r->hd->method == HTTPPARSE_POST;
    if (add && !authorized(r))
        return;
    /* Names are [A-Za-z0-9_.-], which never needs escaping, but an escaped
     * one is the same name (RFC 3986), so decode before looking it up. */
    char name[3 * REGISTRY_NAME_MAX + 1];
    long len = raw < sizeof(name) ? httpparse_pct_decode(rest, raw, name, false) : -1;
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

static bool path_is(const struct httpparse_head *hd, const char *lit, size_t n)
{
    return hd->path_len == n && memcmp(hd->path, lit, n) == 0;
}

#define PATH_IS(hd, lit) path_is((hd), (lit), sizeof(lit) - 1)

static void route(struct hreq *r)
{
    const struct httpparse_head *hd = r->hd;
    static const char filters_prefix[] = "/v1/filters/";
    size_t fp = sizeof(filters_prefix) - 1;
    if (hd->path_len >= fp && memcmp(hd->path, filters_prefix, fp) == 0) {
        route_filter(r, hd->path + fp, hd->path_len - fp);
    } else if (PATH_IS(hd, "/v1/filters")) {
        if (method_ok(r, M_GET | M_HEAD, "GET, HEAD"))
            do_list(r);
    } else if (PATH_IS(hd, "/v1/reload")) {
        if (method_ok(r, M_POST, "POST"))
            do_reload(r);
    } else if (PATH_IS(hd, "/healthz")) {
        if (method_ok(r, M_GET | M_HEAD, "GET, HEAD"))
            do_healthz(r);
    } else if (PATH_IS(hd, "/metrics")) {
        if (method_ok(r, M_GET | M_HEAD, "GET, HEAD"))
            do_metrics(r);
    } else {
        reply_error(r, HTTP_ERR_NOT_FOUND, "no such path");
    }
}

/* ---- connections ---- */

static void conn_close(struct hconn *c, const char *why)
{
    struct http_front *h = c->h;
    log_debug("HTTP connection %s closed: %s", c->peer, why);
    if (c->reload)
        c->reload->c = NULL; /* the reload's answer will find nobody */
    if (c->prev)
        c->prev->next = c->next;
    else
        h->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    h->n_open--;
    atomic_fetch_sub_explicit(h->env.load, 1, memory_order_relaxed);
    event_free(c->rev);
    event_free(c->wev);
    evbuffer_free(c->out);
    /* Give the slot back before the client can see the close: a client that
     * reconnects at once must find it free. */
    if (c->admitted) {
        server_conn_release(h->env.srv);
        STAT_ADD(h->env.stats, http_connections_closed, 1);
    }
    evutil_closesocket(c->fd);
    free(c->in);
    free(c);
    if (h->stopping && !h->freeing && h->n_open == 0 && h->env.drained)
        h->env.drained(h->env.drained_arg);
}

static void conn_arm_read(struct hconn *c)
{
    unsigned idle = registry_read(c->h->env.reg)->conf->idle_timeout;
    struct timeval tv = {(time_t)idle, 0};
    event_add(c->rev, idle ? &tv : NULL);
}

/* A framing error: answer it and close, reading nothing more. */
static void framing_error(struct hconn *c, const struct catalog *cat, int status, const char *msg)
{
    enum http_err e = status == 413   ? HTTP_ERR_BODY_TOO_LARGE
                      : status == 431 ? HTTP_ERR_HEADERS_TOO_LARGE
                      : status == 501 ? HTTP_ERR_NOT_IMPLEMENTED
                      : status == 505 ? HTTP_ERR_VERSION_NOT_SUPPORTED
                                      : HTTP_ERR_BAD_REQUEST;
    struct hreq r = {.c = c, .h = c->h, .cat = cat, .close = true};
    reply_error(&r, e, "%s", msg);
    c->closing = true;
}

/* Parse and answer every complete request at the start of the input buffer,
 * in order, until one is incomplete, a reload must be waited for, the
 * connection is closing, or the unread output passes max_output (then stop
 * reading: the client is not reading its responses). `draining` ignores that
 * limit (end of input, shutdown). */
static void conn_process(struct hconn *c, bool draining)
{
    struct http_front *h = c->h;
    const struct catalog *cat = registry_read(h->env.reg);
    const struct conf *cf = cat->conf;
    size_t off = 0;
    while (!c->closing && !c->reload && off < c->in_len) {
        if (!draining && evbuffer_get_length(c->out) >= cf->max_output) {
            if (!c->paused) {
                c->paused = true;
                event_del(c->rev);
            }
            break;
        }
        char *req = c->in + off;
        size_t avail = c->in_len - off;
        struct httpparse_head hd;
        int status = 0;
        char err[160];
        enum httpparse_status st = httpparse_head(req, avail, cf->http_max_headers, &c->scan, &hd,
                                                  &status, err, sizeof(err));
        if (st == HTTPPARSE_NEED_MORE)
            break;
        if (st == HTTPPARSE_ERROR) {
            framing_error(c, cat, status, err);
            break;
        }
        size_t consumed = hd.head_len, body_len = 0;
        bool complete = true;
        if (hd.chunked) {
            st = httpparse_chunked(req + hd.head_len, avail - hd.head_len, cf->http_max_body,
                                   &c->chunk, &status, err, sizeof(err));
            if (st == HTTPPARSE_ERROR) {
                framing_error(c, cat, status, err);
                break;
            }
            complete = st == HTTPPARSE_OK;
            /* Keep the buffer to head + decoded body + undecoded input: move
             * what is not decoded yet down over the framing already read. */
            size_t rest = avail - hd.head_len - c->chunk.in;
            if (!complete && c->chunk.in > c->chunk.out) {
                memmove(req + hd.head_len + c->chunk.out, req + hd.head_len + c->chunk.in, rest);
                c->in_len -= c->chunk.in - c->chunk.out;
                c->chunk.in = c->chunk.out;
            }
            body_len = c->chunk.out;
            consumed += c->chunk.in;
        } else if (hd.has_length) {
            if (hd.content_length > cf->http_max_body) {
                framing_error(c, cat, 413, "the body is longer than http_max_body");
                break;
            }
            body_len = (size_t)hd.content_length;
            consumed += body_len;
            complete = avail >= consumed;
        }
        if (!complete) {
            if (hd.expect_continue && hd.minor >= 1 && !c->continue_sent) {
                evbuffer_add(c->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
                c->continue_sent = true;
            }
            break;
        }
        struct hreq r = {.c = c,
                         .h = h,
                         .hd = &hd,
                         .body = req + hd.head_len,
                         .body_len = body_len,
                         .cat = cat,
                         .head = hd.method == HTTPPARSE_HEAD};
        if (!c->admitted) {
            STAT_ADD(h->env.stats, http_connections_rejected, 1);
            r.close = true;
            reply_error(&r, HTTP_ERR_TOO_MANY_CONNECTIONS, "the server is at max_connections");
        } else {
            route(&r);
        }
        off += consumed;
        c->scan = 0;
        c->continue_sent = false;
        memset(&c->chunk, 0, sizeof(c->chunk));
    }
    if (off > 0) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    if (c->in_len == 0 && c->in_cap > IN_IDLE_KEEP) {
        char *small = realloc(c->in, IN_START);
        if (small) {
            c->in = small;
            c->in_cap = IN_START;
        }
    }
}

/* Every response is in the kernel: end the connection without losing them
 * (connend.h). Worker thread. */
static void conn_linger(struct hconn *c)
{
    if (connend_linger(&c->end, c->fd, c->rev))
        conn_close(c, "done");
}

/* Write what is pending with one writev; arm the write event for the rest.
 * While the server stops, a connection with nothing left to answer closes. */
static void conn_flush(struct hconn *c)
{
    if (evbuffer_get_length(c->out) > 0) {
        int n = evbuffer_write(c->out, c->fd);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            conn_close(c, "write failed");
            return;
        }
    }
    if (evbuffer_get_length(c->out) > 0) {
        unsigned idle = registry_read(c->h->env.reg)->conf->idle_timeout;
        struct timeval tv = {(time_t)idle, 0};
        event_add(c->wev, idle ? &tv : NULL);
        return;
    }
    event_del(c->wev);
    if (c->closing || (c->h->stopping && c->in_len == 0 && !c->reload)) {
        c->closing = true;
        conn_linger(c);
        return;
    }
    if (c->paused) {
        /* The client caught up: answer what it already sent, then read again.
         * Arm the read before the flush: the flush may write it all, and then
         * nothing else would ever arm it. */
        c->paused = false;
        conn_process(c, false);
        if (!c->paused && !c->closing && !c->reload)
            conn_arm_read(c);
        if (evbuffer_get_length(c->out) > 0 || c->closing)
            conn_flush(c); /* may close (and free) c */
    }
}

/* Room to read into: the buffer grows (doubling) when full, up to what the
 * request being read may need; false when it cannot (then the request is
 * over a limit the parser has not seen yet, or memory ran out). */
static bool conn_room(struct hconn *c, const struct conf *cf)
{
    if (c->in_len < c->in_cap)
        return true;
    size_t limit = cf->http_max_headers + cf->http_max_body + CHUNK_SLACK;
    size_t ncap = c->in_cap * 2 < limit ? c->in_cap * 2 : limit;
    if (ncap <= c->in_cap)
        return false;
    char *nb = realloc(c->in, ncap);
    if (!nb)
        return false;
    c->in = nb;
    c->in_cap = ncap;
    return true;
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct hconn *c = arg;
    struct http_front *h = c->h;
    if (what & EV_TIMEOUT) {
        if (c->end.lingering) {
            conn_close(c, "no EOF from the client after the last response");
            return;
        }
        /* Not idle while responses are still being written: a client that
         * reads them slowly would get one cut off in the middle. The write
         * event's own timeout closes a client that stops reading. */
        if (evbuffer_get_length(c->out) == 0)
            conn_close(c, "idle timeout");
        return;
    }
    if (c->closing) {
        /* The connection ends once its responses are written: what the client
         * sends meanwhile is read and dropped, neither buffered nor answered.
         * Not left unread either: closing a socket with unread input makes
         * the kernel send a reset, which throws away the responses it has not
         * delivered yet. */
        const char *why = connend_drain(&c->end, fd, c->rev);
        if (why)
            conn_close(c, why);
        return;
    }
    const struct catalog *cat = registry_read(h->env.reg);
    if (!conn_room(c, cat->conf)) {
        framing_error(c, cat, 413, "the request is longer than http_max_headers + http_max_body");
        conn_flush(c); /* may close (and free) c; if not, the rest is read and dropped */
        registry_quiescent(h->env.reg, h->env.worker_id);
        return;
    }
    ssize_t n = recv(fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        conn_close(c, strerror(errno));
        return;
    }
    double t0 = util_now();
    c->answered = 0;
    if (n == 0) {
        /* The client shut down its side: answer what it sent, then close. */
        c->end.peer_eof = true;
        event_del(c->rev);
        conn_process(c, true);
        c->closing = true;
    } else {
        c->in_len += (size_t)n;
        conn_process(c, false);
    }
    unsigned answered = c->answered;
    struct latency *lat = &h->env.latency[STATS_HTTP];
    conn_flush(c); /* may close (and free) c */
    /* Every request answered from this read is timed from the read to the
     * write: two clock reads per read, not per request. */
    if (answered)
        stats_latency_add(lat, util_now() - t0, answered);
    registry_quiescent(h->env.reg, h->env.worker_id);
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
    struct hconn *c = arg;
    struct http_front *h = c->h;
    (void)fd;
    if (what & EV_TIMEOUT) {
        conn_close(c, "client did not read its responses");
        return;
    }
    conn_flush(c);
    registry_quiescent(h->env.reg, h->env.worker_id);
}

/* A new connection: admitted against max_connections now; one over the limit
 * is kept just long enough to answer its first request with 503 (a response
 * sent before the request could be lost to a reset). */
static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    struct http_front *h = arg;
    (void)l;
    (void)salen;
    STAT_ADD(h->env.stats, http_connections_accepted, 1);
    if (!server_balance_accept(h->env.worker, fd, sa, true))
        http_front_adopt(h, fd, sa);
}

/* Set up an HTTP connection on this worker (its thread): accepted here, or
 * handed over by another worker. */
void http_front_adopt(struct http_front *h, evutil_socket_t fd, const struct sockaddr *sa)
{
    struct hconn *c = calloc(1, sizeof(*c));
    if (c) {
        c->in = malloc(IN_START);
        c->out = evbuffer_new();
        c->rev = event_new(h->env.base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
        c->wev = event_new(h->env.base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, c);
    }
    if (!c || !c->in || !c->out || !c->rev || !c->wev) {
        log_error("out of memory accepting an HTTP connection");
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
    const struct conf *cf = registry_read(h->env.reg)->conf;
    c->admitted = server_conn_admit(h->env.srv, cf->max_connections);
    if (c->admitted)
        STAT_ADD(h->env.stats, http_connections_admitted, 1);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->h = h;
    c->fd = fd;
    c->in_cap = IN_START;
    c->loopback = util_addr_is_loopback(sa);
    util_addr_text(sa, c->peer, sizeof(c->peer));
    c->next = h->conns;
    if (h->conns)
        h->conns->prev = c;
    h->conns = c;
    h->n_open++;
    atomic_fetch_add_explicit(h->env.load, 1, memory_order_relaxed);
    conn_arm_read(c);
}

/* ---- life cycle ---- */

struct http_front *http_front_create(const struct http_env *env, evutil_socket_t *fds, size_t n_fds,
                                     char *err, size_t errlen)
{
    struct http_front *h = calloc(1, sizeof(*h));
    if (!h || !(h->listeners = calloc(n_fds ? n_fds : 1, sizeof(*h->listeners)))) {
        snprintf(err, errlen, "out of memory setting up HTTP");
        free(h);
        return NULL;
    }
    h->env = *env;
    for (size_t i = 0; i < n_fds; i++) {
        h->listeners[i] =
            evconnlistener_new(env->base, accept_cb, h, LEV_OPT_CLOSE_ON_FREE, -1, fds[i]);
        if (!h->listeners[i]) {
            snprintf(err, errlen, "cannot accept HTTP connections on socket %d", (int)fds[i]);
            http_front_free(h);
            return NULL;
        }
        fds[i] = -1; /* the listener closes it */
        h->n_listeners++;
    }
    return h;
}

void http_front_stop(struct http_front *h)
{
    if (!h || h->stopping)
        return;
    h->stopping = true;
    for (size_t i = 0; i < h->n_listeners; i++) {
        if (h->listeners[i]) {
            evconnlistener_free(h->listeners[i]);
            h->listeners[i] = NULL;
        }
    }
    /* Idle connections now; the others once their response is written (it
     * says Connection: close). A request still arriving is read and answered
     * (bounded by shutdown_timeout). */
    h->freeing = true; /* no drained callback from inside this call */
    struct hconn *c = h->conns;
    while (c) {
        struct hconn *next = c->next;
        if (c->in_len == 0 && !c->reload && evbuffer_get_length(c->out) == 0)
            conn_close(c, "shutdown");
        c = next;
    }
    h->freeing = false;
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
    for (size_t i = 0; h->listeners && i < h->n_listeners; i++)
        if (h->listeners[i])
            evconnlistener_free(h->listeners[i]);
    while (h->conns)
        conn_close(h->conns, "server freed");
    free(h->listeners);
    free(h->qbuf);
    free(h->rbuf);
    free(h);
}
