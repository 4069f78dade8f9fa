/* Writing HTTP responses: the status line and headers, JSON error bodies,
 * escaping, the cached Date header. See http_int.h. Worker thread. */
#include "config.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "base/log.h"
#include "front/http/http_int.h"
#include "net/worker.h"

/* The HTTP errors' names and statuses (http.h), here with the responses that
 * carry them. */
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

/* Every status the front sends, with RFC 9110's reason phrase (a test checks
 * that each status in HTTP_ERRORS and STATS_HTTP_STATUSES is here). */
#define HTTP_STATUS_TEXTS(X)                                                                       \
    X(100, "Continue")                                                                             \
    X(200, "OK")                                                                                   \
    X(201, "Created")                                                                              \
    X(204, "No Content")                                                                           \
    X(400, "Bad Request")                                                                          \
    X(401, "Unauthorized")                                                                         \
    X(403, "Forbidden")                                                                            \
    X(404, "Not Found")                                                                            \
    X(405, "Method Not Allowed")                                                                   \
    X(408, "Request Timeout")                                                                      \
    X(409, "Conflict")                                                                             \
    X(413, "Content Too Large")                                                                    \
    X(431, "Request Header Fields Too Large")                                                      \
    X(500, "Internal Server Error")                                                                \
    X(501, "Not Implemented")                                                                      \
    X(503, "Service Unavailable")                                                                  \
    X(505, "HTTP Version Not Supported")                                                           \
    X(507, "Insufficient Storage")

const char *http_status_text(int code)
{
    switch (code) {
#define HTTP_STATUS_CASE_(c, text)                                                                 \
    case c:                                                                                        \
        return text;
        HTTP_STATUS_TEXTS(HTTP_STATUS_CASE_)
#undef HTTP_STATUS_CASE_
    default:
        return NULL;
    }
}

/* Room for n more bytes in the front's response buffer; NULL if out of memory. */

char *http_rbuf_room(struct http_worker *h, size_t n)
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

char *put_u64(char *p, uint64_t v)
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
static const char *date_now(struct http_worker *h)
{
    struct timeval tv;
    if (event_base_gettimeofday_cached(h->cw.w->base, &tv) != 0)
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
char *put_json_escaped(char *p, const char *s, size_t len)
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
 * extra + xhdr_len). Decides the connection's fate: closing after this response when
 * the request or the server says so. */
char *http_put_head(struct hreq *r, char *p, int code, const char *ctype, size_t body_len)
{
    struct conn *c = r->c;
    if (c->w->stopping || !r->hd || !r->hd->keep_alive)
        r->close = true;
    p = PUT_LIT(p, "HTTP/1.1 ");
    p = put_u64(p, (uint64_t)code);
    *p++ = ' ';
    const char *txt = http_status_text(code);
    if (txt) /* else an empty reason phrase, which RFC 9112 allows */
        p = put(p, txt, strlen(txt));
    p = PUT_LIT(p, "\r\nDate: ");
    const char *d = date_now(r->h);
    p = put(p, d, strlen(d));
    /* A 204 has no body, and no Content-Length (RFC 9110 8.6). */
    if (code != 204) {
        p = PUT_LIT(p, "\r\nContent-Type: ");
        p = put(p, ctype, strlen(ctype));
        p = PUT_LIT(p, "\r\nContent-Length: ");
        p = put_u64(p, body_len);
    }
    p = PUT_LIT(p, "\r\n");
    if (r->close)
        p = PUT_LIT(p, "Connection: close\r\n");
    else if (r->hd && r->hd->minor == 0)
        p = PUT_LIT(p, "Connection: keep-alive\r\n");
    p = put(p, r->extra, strlen(r->extra));
    if (r->xhdr_len)
        p = put(p, r->xhdr, r->xhdr_len);
    p = PUT_LIT(p, "\r\n");
    if (r->close)
        c->closing = true;
    return p;
}

/* Count one response on the worker's counters. */
void http_count_response(struct hreq *r, int code)
{
    struct stats *s = &r->c->w->stats->s;
    STAT_ADD(s, http_requests, 1);
    STAT_ADD(s, http_responses[stats_http_slot(code)], 1);
    HC(r->c)->answered++;
}

/* Queue a response whose body is body[0..len) (copied). For HEAD the body is
 * measured, not sent. Every request ends in exactly one respond(). */
void http_respond(struct hreq *r, int code, const char *ctype, const char *body, size_t len)
{
    size_t room = 512 + sizeof(r->extra) + r->xhdr_len + (r->head ? 0 : len);
    char *b = http_rbuf_room(r->h, room);
    if (!b) {
        r->c->closing = true; /* out of memory: nothing sensible to send */
        http_count_response(r, 500);
        return;
    }
    char *p = http_put_head(r, b, code, ctype, len);
    if (!r->head)
        p = put(p, body, len);
    conn_out_add(r->c, b, (size_t)(p - b));
    http_count_response(r, code);
}

/* The same with the body in an evbuffer (consumed): /metrics. */
void http_respond_buffer(struct hreq *r, int code, const char *ctype, struct evbuffer *body)
{
    char head[512 + sizeof(r->extra)];
    char *p = http_put_head(r, head, code, ctype, evbuffer_get_length(body));
    if (conn_out_add(r->c, head, (size_t)(p - head)) && !r->head)
        conn_out_add_buffer(r->c, body);
    evbuffer_free(body);
    http_count_response(r, code);
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

/* {"error":{"code":...,"message":...}} with the code's status. */
void http_reply_error(struct hreq *r, enum http_err e, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sanitize_utf8(msg);
    STAT_ADD(&r->c->w->stats->s, http_errors_by_code[e], 1);
    char body[64 + 6 * sizeof(msg)];
    char *p = PUT_LIT(body, "{\"error\":{\"code\":\"");
    const char *name = http_err_name(e);
    p = put(p, name, strlen(name));
    p = PUT_LIT(p, "\",\"message\":\"");
    p = put_json_escaped(p, msg, strlen(msg));
    p = PUT_LIT(p, "\"}}");
    http_respond(r, http_err_status(e), CT_JSON, body, (size_t)(p - body));
}

void http_reply_json(struct hreq *r, int code, json_t *j)
{
    char *s = j ? json_dumps(j, JSON_FLAGS) : NULL;
    json_decref(j);
    if (!s) {
        http_reply_error(r, HTTP_ERR_INTERNAL, "cannot encode the reply");
        return;
    }
    http_respond(r, code, CT_JSON, s, strlen(s));
    free(s);
}

void http_add_header(struct hreq *r, const char *line)
{
    size_t used = strlen(r->extra), n = strlen(line);
    if (used + n + 3 <= sizeof(r->extra)) {
        memcpy(r->extra + used, line, n);
        memcpy(r->extra + used + n, "\r\n", 3);
    }
}

/* The table refused a mutation: 401 with the WWW-Authenticate header, in the
 * words HTTP clients need (which header to send). */
void http_auth_error(struct hreq *r, enum cmd_err e)
{
    const char *tok = r->cat->conf->admin_token;
    if (!tok) {
        http_add_header(r, "WWW-Authenticate: Bearer realm=\"bloomgate\"");
        http_reply_error(
            r, HTTP_ERR_AUTH_REQUIRED,
            "changes are accepted only from loopback clients when no admin_token is set");
    } else if (e == CMD_ERR_AUTH_REQUIRED) {
        http_add_header(r, "WWW-Authenticate: Bearer realm=\"bloomgate\"");
        http_reply_error(r, HTTP_ERR_AUTH_REQUIRED,
                         "this needs Authorization: Bearer <admin_token>");
    } else {
        bool bearer = r->hd->auth_len > 7 && strncasecmp(r->hd->auth, "Bearer ", 7) == 0;
        log_warn_limited("HTTP: wrong admin token from %s", r->c->peer);
        http_add_header(r, "WWW-Authenticate: Bearer realm=\"bloomgate\", error=\"invalid_token\"");
        http_reply_error(r, HTTP_ERR_AUTH_FAILED,
                         bearer ? "wrong token" : "use Authorization: Bearer <admin_token>");
    }
}

/* The table's other errors as HTTP codes. */
void http_cmd_error(struct hreq *r, const struct cmd_call *call)
{
    switch (call->err) {
    case CMD_ERR_AUTH_REQUIRED:
    case CMD_ERR_AUTH_FAILED:
        http_auth_error(r, call->err);
        return;
    case CMD_ERR_UNKNOWN_FILTER:
        http_reply_error(r, HTTP_ERR_UNKNOWN_FILTER, "%s", call->msg);
        return;
    case CMD_ERR_TOO_MANY_ITEMS:
        http_reply_error(r, HTTP_ERR_TOO_MANY_ITEMS, "%s", call->msg);
        return;
    case CMD_ERR_ITEM_TOO_LONG:
        http_reply_error(r, HTTP_ERR_ITEM_TOO_LONG, "%s", call->msg);
        return;
    case CMD_ERR_UNAVAILABLE:
        http_reply_error(r, HTTP_ERR_UNAVAILABLE, "%s", call->msg);
        return;
    case CMD_ERR_BAD_ITEM:
        /* A host or url filter cannot read the item: the client's fault, so
         * 400, naming the item as the other per-item errors do. */
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "item %zu: %s", call->bad_item, call->msg);
        return;
    case CMD_ERR_EXISTS:
        http_reply_error(r, HTTP_ERR_EXISTS, "%s", call->msg);
        return;
    case CMD_ERR_CONFIGURED:
        http_reply_error(r, HTTP_ERR_CONFIGURED, "%s", call->msg);
        return;
    case CMD_ERR_LIMIT:
        http_reply_error(r, HTTP_ERR_LIMIT, "%s", call->msg);
        return;
    case CMD_ERR_BAD_OPTION:
        http_reply_error(r, HTTP_ERR_BAD_OPTION, "%s", call->msg);
        return;
    case CMD_ERR_NO_STATE_DIR:
        http_reply_error(r, HTTP_ERR_NO_STATE_DIR, "%s", call->msg);
        return;
    case CMD_ERR_FAILED:
        http_reply_error(r, HTTP_ERR_FAILED, "%s", call->msg);
        return;
    case CMD_ERR_WRONG_KIND:
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", call->msg);
        return;
    case CMD_ERR_TEXT_TOO_LONG:
        http_reply_error(r, HTTP_ERR_BODY_TOO_LARGE, "%s", call->msg);
        return;
    default:
        http_reply_error(r, HTTP_ERR_INTERNAL, "%s", call->msg);
    }
}
