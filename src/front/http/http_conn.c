/* The HTTP front's glue on the net layer's connection (net/conn.h): parse
 * with httpparse.c (pure), answer through http_api.c, in order, pipelined
 * requests included. Why not evhttp: it cost ~53,000 instructions per GET
 * check (a malloc'd header list, a parsed URI, sscanf, a callback chain, an
 * evbuffer and a jansson document per reply), 0.43 x nginx's `return 204` on
 * this machine; this path costs ~4,800. Worker thread only.
 *
 * Memory per connection: the input buffer grows only as the request being read
 * needs (head <= http_max_headers, body <= http_max_body; a chunked body is
 * decoded in place, so its framing does not count) and shrinks when idle. */
#include "config.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/http/http_int.h"
#include "net/worker.h"

#define CHUNK_SLACK 8192 /* room past http_max_body for a chunked body's framing */

/* A framing error: answer it and close, reading nothing more. */
static void framing_error(struct conn *c, const struct catalog *cat, int status, const char *msg)
{
    enum http_err e = status == 413   ? HTTP_ERR_BODY_TOO_LARGE
                      : status == 431 ? HTTP_ERR_HEADERS_TOO_LARGE
                      : status == 501 ? HTTP_ERR_NOT_IMPLEMENTED
                      : status == 505 ? HTTP_ERR_VERSION_NOT_SUPPORTED
                      : status == 408 ? HTTP_ERR_REQUEST_TIMEOUT
                      : status == 503 ? HTTP_ERR_UNAVAILABLE
                                      : HTTP_ERR_BAD_REQUEST;
    struct hreq r = {.c = c, .h = c->fw, .cat = cat, .close = true};
    http_reply_error(&r, e, "%s", msg);
    c->closing = true;
}

/* One request at req, the avail bytes of input not consumed yet
 * (conn_each_request): answered through http_route, and the bytes it used;
 * 0 while it is incomplete (after a 100 Continue if it asks for one) or after
 * a framing error (answered, and the connection closing). Inlined into
 * http_process's loop (conn_each_request is inline too): as a call of its own
 * it cost the GET check measurably (docs/benchmarks.md). */
static inline __attribute__((always_inline)) size_t http_one(struct conn *c, char *req,
                                                             size_t avail, void *arg)
{
    struct http_worker *h = c->fw;
    struct hconn *hc = HC(c);
    const struct catalog *cat = arg;
    const struct conf *cf = cat->conf;
    struct httpparse_head hd;
    int status = 0;
    char err[160];
    enum httpparse_status st =
        httpparse_head(req, avail, cf->http_max_headers, &hc->scan, &hd, &status, err, sizeof(err));
    if (st == HTTPPARSE_NEED_MORE)
        return 0;
    if (st == HTTPPARSE_ERROR) {
        framing_error(c, cat, status, err);
        return 0;
    }
    size_t consumed = hd.head_len, body_len = 0;
    bool complete = true;
    if (hd.chunked) {
        st = httpparse_chunked(req + hd.head_len, avail - hd.head_len, cf->http_max_body,
                               &hc->chunk, &status, err, sizeof(err));
        if (st == HTTPPARSE_ERROR) {
            framing_error(c, cat, status, err);
            return 0;
        }
        complete = st == HTTPPARSE_OK;
        /* Keep the buffer to head + decoded body + undecoded input: move
         * what is not decoded yet down over the framing already read. */
        size_t rest = avail - hd.head_len - hc->chunk.in;
        if (!complete && hc->chunk.in > hc->chunk.out) {
            memmove(req + hd.head_len + hc->chunk.out, req + hd.head_len + hc->chunk.in, rest);
            c->in_len -= hc->chunk.in - hc->chunk.out;
            hc->chunk.in = hc->chunk.out;
        }
        body_len = hc->chunk.out;
        consumed += hc->chunk.in;
    } else if (hd.has_length) {
        if (hd.content_length > cf->http_max_body) {
            framing_error(c, cat, 413, "the body is longer than http_max_body");
            return 0;
        }
        body_len = (size_t)hd.content_length;
        consumed += body_len;
        complete = avail >= consumed;
    }
    if (!complete) {
        if (hd.expect_continue && hd.minor >= 1 && !hc->continue_sent) {
            conn_out_add(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
            hc->continue_sent = true;
        }
        return 0;
    }
    struct hreq r = {.c = c,
                     .h = h,
                     .hd = &hd,
                     .body = req + hd.head_len,
                     .body_len = body_len,
                     .cat = cat,
                     .head = hd.method == HTTPPARSE_HEAD};
    http_route(&r);
    hc->scan = 0;
    hc->continue_sent = false;
    memset(&hc->chunk, 0, sizeof(hc->chunk));
    return consumed;
}

/* Parse and answer every complete request at the start of the input buffer,
 * in order, until one is incomplete, a reload must be waited for, the
 * connection is closing, or the unread output passes max_output
 * (conn_output_full: the client is not reading its responses). `draining`
 * ignores that limit (end of input, shutdown). */
static unsigned http_process(struct conn *c, bool draining)
{
    struct hconn *hc = HC(c);
    const struct catalog *cat = registry_read(c->w->reg);
    unsigned before = hc->answered;
    conn_each_request(c, cat->conf, draining, http_one, (void *)cat);
    return hc->answered - before;
}

static size_t http_in_limit(const struct conf *cf)
{
    return cf->http_max_headers + cf->http_max_body + CHUNK_SLACK;
}

/* The request is over a limit the parser has not seen yet (or memory ran
 * out): 413; or its buffer would pass max_buffered, the budget of every
 * connection's input buffers: 503. Then the rest is read and dropped. */
static void http_in_full(struct conn *c, enum conn_full why)
{
    const struct catalog *cat = registry_read(c->w->reg);
    if (why == CONN_FULL_BUDGET)
        framing_error(c, cat, 503,
                      "the server's request buffers are full (max_buffered); try again later");
    else
        framing_error(c, cat, 413, "the request is longer than http_max_headers + http_max_body");
}

/* A request begun more than request_timeout ago (net/conn.c) is still
 * incomplete: 408, and the connection closes once it is written. */
static void http_request_timeout(struct conn *c)
{
    const struct catalog *cat = registry_read(c->w->reg);
    char msg[128];
    snprintf(msg, sizeof(msg), "the request did not arrive within request_timeout (%u s)",
             cat->conf->request_timeout);
    framing_error(c, cat, 408, msg);
}

/* Over max_connections: 503 at once, before the client sent anything (it is
 * never kept until it sends a request); conn_refuse writes it. */
static void http_refuse(struct stats *s)
{
    STAT_ADD(s, http_errors_by_code[HTTP_ERR_TOO_MANY_CONNECTIONS], 1);
    STAT_ADD(s, http_requests, 1);
    STAT_ADD(s, http_responses[stats_http_slot(503)], 1);
}

#define REFUSAL_BODY                                                                               \
    "{\"error\":{\"code\":\"too_many_connections\",\"message\":\"the server is at "                \
    "max_connections\"}}"
_Static_assert(sizeof(REFUSAL_BODY) - 1 == 86, "the refusal's Content-Length");

/* Shutdown: an idle keep-alive connection closes now; one with a request in
 * progress is answered with Connection: close (http_put_head sees the worker
 * stopping), and conn_flush closes it once written. */
static void http_stop(struct conn *c)
{
    if (c->in_len == 0 && !c->wait && evbuffer_get_length(c->out) == 0)
        conn_close(c, "shutdown");
}

/* After the worker stopped: the buffers it grew. */
static void http_worker_free(struct conn_worker *cw)
{
    struct http_worker *h = (struct http_worker *)cw;
    free(h->qbuf);
    free(h->rbuf);
}

#define HTTP_ERR_NAME_(sym, name, status) name,
static const char *const http_err_names[] = {HTTP_ERRORS(HTTP_ERR_NAME_)};
#undef HTTP_ERR_NAME_

const struct conn_ops http_ops = {
    .name = "HTTP",
    .proto = STATS_HTTP,
    .priv_size = sizeof(struct hconn),
    .err_names = http_err_names,
    .n_err = sizeof(http_err_names) / sizeof(http_err_names[0]),
    .worker_size = sizeof(struct http_worker),
    .worker_free = http_worker_free,
    .process = http_process,
    .in_limit = http_in_limit,
    .in_full = http_in_full,
    .request_timeout = http_request_timeout,
    .refusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " CT_JSON
               "\r\nContent-Length: 86\r\nConnection: close\r\n\r\n" REFUSAL_BODY,
    .refuse = http_refuse,
    .stop = http_stop,
};
