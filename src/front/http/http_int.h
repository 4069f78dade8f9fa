/* http_int: what the HTTP front's files share (http_conn.c: the connection
 * glue; http_api.c: routing and handlers; http_resp.c: writing responses).
 * Not for other modules. Everything here runs on the worker thread that owns
 * the connection. */
#ifndef BLOOMGATE_HTTP_INT_H
#define BLOOMGATE_HTTP_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/cmd.h"
#include "front/http/http.h"
#include "front/http/httpparse.h"
#include "net/conn.h"

#define JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))
#define CT_JSON "application/json; charset=utf-8"

/* Per connection (conn_priv). */
struct hconn {
    size_t scan;                    /* httpparse_head's resume hint for the request at in[0] */
    struct httpparse_chunked chunk; /* a chunked body's decoding state, for in[0]'s request */
    bool continue_sent;             /* "100 Continue" went out for in[0]'s request */
    unsigned answered;              /* requests answered since the read began (latency) */
};

/* Per worker: the HTTP front's buffers. */
struct http_worker {
    struct conn_worker cw; /* the worker and its env, proto = STATS_HTTP (net/conn.h) */
    char *qbuf;         /* a decoded query value */
    size_t qcap;
    char *rbuf; /* a response being built */
    size_t rcap;
    time_t date_sec; /* the second `date` was formatted for */
    char date[40];   /* "Sun, 22 Nov 2026 07:17:46 GMT" */
};

/* One request being answered. */
struct hreq {
    struct conn *c;
    struct http_worker *h;
    const struct httpparse_head *hd;
    const char *body;
    size_t body_len;
    const struct catalog *cat; /* valid until the read's callback returns */
    bool head;                 /* HEAD: the headers GET would get, no body */
    bool close;                /* Connection: close after this response */
    char extra[192];           /* more header lines (Allow, WWW-Authenticate), CRLF-ended */
    const char *xhdr;          /* header lines of any length, CRLF-ended (authz's match) */
    size_t xhdr_len;           /* 0: none */
    const char *name;          /* /v1/filters/{name}: the name decoded (a .any_name row) */
    size_t name_len;
};

static inline struct hconn *HC(struct conn *c)
{
    return conn_priv(c);
}

/* ---- http_resp.c ---- */
static inline char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}
#define PUT_LIT(p, lit) put((p), (lit), sizeof(lit) - 1)
char *put_u64(char *p, uint64_t v);
/* Room for n bytes in the worker's response buffer; NULL if out of memory. */
char *http_rbuf_room(struct http_worker *h, size_t n);
/* s[0..len) as the inside of a JSON string, escaped; p has room for 6 * len. */
char *put_json_escaped(char *p, const char *s, size_t len);
/* Status line and headers, ending in the blank line, at p (room for 512 +
 * extra + xhdr_len). Decides the connection's fate (Connection: close). */
char *http_put_head(struct hreq *r, char *p, int code, const char *ctype, size_t body_len);
void http_count_response(struct hreq *r, int code);
/* Queue a response whose body is body[0..len) (copied); for HEAD the body is
 * measured, not sent. Every request ends in exactly one response. */
void http_respond(struct hreq *r, int code, const char *ctype, const char *body, size_t len);
/* The same with the body in an evbuffer (consumed): /metrics. */
void http_respond_buffer(struct hreq *r, int code, const char *ctype, struct evbuffer *body);
/* {"error":{"code":...,"message":...}} with the code's status. */
void http_reply_error(struct hreq *r, enum http_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void http_reply_json(struct hreq *r, int code, json_t *j);
void http_add_header(struct hreq *r, const char *line);

/* ---- http_api.c ---- */
/* Route one complete request to its handler; exactly one response. */
void http_route(struct hreq *r);

/* The methods a route takes (a mask); HTTP_M_ANY: its handler decides. */
enum {
    HTTP_M_GET = 1,
    HTTP_M_HEAD = 2,
    HTTP_M_POST = 4,
    HTTP_M_PUT = 8,
    HTTP_M_DELETE = 16,
    HTTP_M_ANY = 0
};

/* A row's .id for a route the front answers alone (/metrics, the filter
 * prefix whose own rows name theirs). */
#define HTTP_OWN CMD_COUNT_

/* One path (or path prefix): the methods it takes, the command table's row
 * it serves, its handler (rest: the path after a prefix). */
struct http_route {
    const char *path;
    size_t len;
    bool prefix;
    int methods;
    enum cmd_id id;
    void (*fn)(struct hreq *r, const struct http_route *rt, const char *rest, size_t rest_len);
};
extern const struct http_route http_routes[];
extern const size_t http_n_routes;

/* One verb of /v1/filters/{name}[/sub] ("" for none): the methods it takes,
 * the command table's row it runs (a mutating one is authorized before the
 * filter is looked up), its handler, given the filter. */
struct http_filter_verb {
    const char *sub;
    int methods;
    enum cmd_id id;
    void (*fn)(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e);
    bool any_name; /* the filter need not be served (e NULL then; r->name says it) */
};

/* ---- http_admin.c: filters made at run time ---- */
/* PUT /v1/filters/{name} (its options a JSON object), DELETE
 * /v1/filters/{name}, POST /v1/filters/{name}/clear: queued on the reload
 * thread, answered when it is done. */
void http_verb_create(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e);
void http_verb_drop(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e);
void http_verb_clear(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e);
/* The request's credential for a mutating row (Authorization: Bearer). */
enum cmd_cred http_credential(struct hreq *r);
extern const struct http_filter_verb http_filter_verbs[];
extern const size_t http_n_filter_verbs;

/* The table's errors (core/cmd.h) as HTTP answers. */
void http_cmd_error(struct hreq *r, const struct cmd_call *call);
/* 401 for a mutation without the credential it needs, with the
 * WWW-Authenticate header that names what to send (http_resp.c). */
void http_auth_error(struct hreq *r, enum cmd_err e);

/* ---- http_context.c ---- */
/* The request context's fields, as query parameters and JSON keys name them. */
enum http_ctx_field { HTTP_CTX_TYPE, HTTP_CTX_FROM, HTTP_CTX_METHOD };
/* Field f from the value v[0..n) into c (from points into v); -1 with the
 * reason, naming the field and the value, in err. */
int http_ctx_set(struct cmd_ctx *c, enum http_ctx_field f, const char *v, size_t n, char *err,
                 size_t errlen);
/* The "type", "from" and "method" keys of a JSON object into c: each a
 * string, or null for none (over a default). -1 with err. */
int http_ctx_json(const json_t *obj, struct cmd_ctx *c, char *err, size_t errlen);
/* Element i of a check's "items" that is an object: {"item": <string>,
 * "type"/"from"/"method"...}: the item into *k, its context over c. -1 with
 * the error's code and message (naming item i + 1). */
int http_item_object(const json_t *v, size_t i, struct cmd_ctx *c, struct filter_key *k,
                     enum http_err *code, char *err, size_t errlen);
/* s[0..len) as the inside of a JSON string, valid JSON even if s is not
 * UTF-8 (such bytes as U+FFFD); p has room for 6 * len. */
char *http_put_json_text(char *p, const char *s, size_t len);
/* A one-item check's answer on an adblock filter after its "item":
 * ,"present":B[,"allowed":true],"rule":R|null,"exception":X|null. p has
 * room for 6 * (match_len + except_len) + 80. */
char *http_put_adblock_answer(char *p, const struct cmd_call *call);
/* POST .../check on an adblock filter, in one call through the table: every
 * item answered with the rule and the exception that decided it
 * (env->keys[0..n), each with ctxs[i], or *dflt when ctxs is NULL); the
 * answer or the error written. */
void http_adblock_batch(struct hreq *r, const struct fentry *e, size_t n,
                        const struct cmd_ctx *dflt, const struct cmd_ctx *ctxs);

/* ---- http_scan.c ---- */
/* POST /v1/filters/{name}/scan: the text (the body, or a JSON body's
 * "text") scanned by e's word list; the matches, masked text if asked. */
void http_scan(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e);

/* ---- http_authz.c ---- */
/* /v1/authz/{filter}[,...][/...]: rest[0..len) is the path after
 * "/v1/authz/"; 204, 403, or an error. */
void http_authz(struct hreq *r, const char *rest, size_t len);

#endif
