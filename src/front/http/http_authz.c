/* The authorization endpoint (docs/gateways.md, docs/http-api.md):
 * /v1/authz/{filter}[,{filter}...][;client=NAME][/...], any method, for a
 * gateway's auth sub-request (nginx auth_request, Envoy ext_authz in HTTP
 * mode, HAProxy's auth-request, Traefik forwardAuth). authz.c derives the
 * URL and the client address from the headers (pure); this file looks them
 * up through the command table (MATCH, which names the key that matched,
 * with the request's context from Sec-Fetch-Dest, Referer or Origin, and
 * the original method, for an adblock filter) and answers 204 (nothing
 * matched; 200 below an Envoy prefix) or 403 with X-Bloomgate-Filter and
 * X-Bloomgate-Match (and X-Bloomgate-Rule for an adblock filter's rule).
 * Worker thread; never blocks. */
#include "config.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adblock/adblock.h"
#include "base/fname.h"
#include "front/http/authz.h"
#include "front/http/http_int.h"
#include "url/canon.h"

/* The canonical URL an exact filter is probed with (about 16 KiB: never on
 * the stack; per thread, like the command table's expansions). */
static _Thread_local struct url_canon tl_canon;

/* One request's state: the filters named, the URL and client address. */
struct authz_req {
    const struct fentry *e[AUTHZ_MAX_FILTERS + 1]; /* the URL filters, then the client filter */
    size_t n;                                      /* URL filters */
    bool client;                                   /* e[n] is the client filter */
    const char *url;                               /* in the worker's qbuf */
    size_t url_len;
    const char *addr; /* the client address, in the head */
    size_t addr_len;
    bool canon_done;    /* tl_canon holds url's canonical form */
    struct cmd_ctx ctx; /* the request's context, for the URL filters */
};

/* Count the request's verdict on its filters (enum stats_verdict): deny only
 * on the one that matched (hit), allow or error on every filter named. */
static void count(struct hreq *r, const struct authz_req *a, enum stats_verdict v,
                  const struct fentry *hit)
{
    struct cmd_env *env = &r->h->cw.env;
    size_t all = a->n + (a->client ? 1 : 0);
    for (size_t i = 0; i < all; i++) {
        if (!a->e[i] || (hit && a->e[i] != hit))
            continue;
        struct fstats *fs = stats_fslot(env->stats, env->id_gen, a->e[i]->id);
        STAT_ADD(fs, authz[v], 1);
    }
}

/* 400 with the reason, counted as an error on the filters found so far. */
static void bad(struct hreq *r, const struct authz_req *a, const char *msg)
{
    count(r, a, STATS_VERDICT_ERROR, NULL);
    http_reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", msg);
}

/* s[0..n) as a header value at p: bytes below 0x20 and 0x7f as %XX. */
static char *put_header_value(char *p, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) {
            *p++ = '%';
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
        } else {
            *p++ = (char)c;
        }
    }
    return p;
}

/* 403: the filter and the key it matched as headers (nginx copies them with
 * auth_request_set), and the same as a small JSON body for a person with
 * curl; an adblock filter's match is the block rule as written in its list,
 * named X-Bloomgate-Rule (and "rule") too. A header value must not break the
 * head: bytes below 0x20 and 0x7f are written %XX (canonical keys have none;
 * an exact client filter's key is the address as sent). The buffers are on
 * the stack unless the match is long (over ~100 bytes). */
static void deny(struct hreq *r, const struct authz_req *a, const struct fentry *e, const char *m,
                 size_t mlen, bool rule)
{
    count(r, a, STATS_DENY, e);
    size_t hcap = 96 + e->name_len + 6 * mlen;
    size_t bcap = 64 + e->name_len + 12 * mlen;
    char hsmall[768], bsmall[1280];
    bool heap = hcap > sizeof(hsmall) || bcap > sizeof(bsmall);
    char *hb = heap ? malloc(hcap) : hsmall, *body = heap ? malloc(bcap) : bsmall;
    if (!hb || !body) {
        free(heap ? hb : NULL);
        free(heap ? body : NULL);
        http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    char *p = PUT_LIT(hb, "X-Bloomgate-Filter: ");
    p = put(p, e->name, e->name_len);
    p = PUT_LIT(p, "\r\nX-Bloomgate-Match: ");
    p = put_header_value(p, m, mlen);
    if (rule) {
        p = PUT_LIT(p, "\r\nX-Bloomgate-Rule: ");
        p = put_header_value(p, m, mlen);
    }
    p = PUT_LIT(p, "\r\n");
    r->xhdr = hb;
    r->xhdr_len = (size_t)(p - hb);
    p = PUT_LIT(body, "{\"filter\":\"");
    p = put(p, e->name, e->name_len);
    p = PUT_LIT(p, "\",\"match\":\"");
    p = http_put_json_text(p, m, mlen);
    if (rule) {
        p = PUT_LIT(p, "\",\"rule\":\"");
        p = http_put_json_text(p, m, mlen);
    }
    p = PUT_LIT(p, "\"}");
    http_respond(r, 403, CT_JSON, body, (size_t)(p - body));
    r->xhdr = NULL;
    r->xhdr_len = 0;
    if (heap) {
        free(hb);
        free(body);
    }
}

/* Look item up in e with the table's MATCH (auth, limits, the key kind,
 * the match named). 1 matched (*m set), 0 not, -1 answered with an error. */
static int judge(struct hreq *r, const struct authz_req *a, const struct fentry *e,
                 const char *item, size_t len, const char *what, const struct cmd_ctx *ctx,
                 const char **m, size_t *mlen)
{
    struct http_worker *h = r->h;
    struct cmd_call call;
    cmd_call_init(&call, r->cat, e, 1, r->c->loopback, CMD_CRED_NONE);
    call.ctx = *ctx;
    h->cw.env.keys[0].data = item;
    h->cw.env.keys[0].len = len;
    cmd_run(&h->cw.env, CMD_MATCH, NULL, &call);
    if (call.err == CMD_OK) {
        *m = call.match;
        *mlen = call.match_len;
        return call.yes != 0;
    }
    char msg[512];
    switch (call.err) {
    case CMD_ERR_BAD_ITEM:
    case CMD_ERR_ITEM_TOO_LONG:
        snprintf(msg, sizeof(msg), "filter '%s' cannot judge the %s: %s", e->name, what, call.msg);
        bad(r, a, msg);
        break;
    default:
        count(r, a, STATS_VERDICT_ERROR, NULL);
        http_reply_error(r, HTTP_ERR_INTERNAL, "%s", call.msg);
    }
    return -1;
}

/* The item a URL filter is probed with: the URL as derived for host and url
 * keys (the key kind canonicalises it), its canonical form (Safe Browsing:
 * scheme kept, port and fragment dropped) for exact keys, so that an exact
 * list of canonical URLs is met however the client wrote the URL. */
static int url_item(struct hreq *r, struct authz_req *a, const struct fentry *e, const char **item,
                    size_t *len)
{
    if (e->v->f->keys != FILTER_KEYS_EXACT) {
        *item = a->url;
        *len = a->url_len;
        return 0;
    }
    if (!a->canon_done) {
        char err[160], msg[sizeof(err) + FNAME_MAX + 48];
        if (url_canon_url(&tl_canon, a->url, a->url_len, err, sizeof(err)) != 0) {
            snprintf(msg, sizeof(msg), "filter '%s' cannot judge the URL: %s", e->name, err);
            bad(r, a, msg);
            return -1;
        }
        a->canon_done = true;
    }
    *item = tl_canon.url;
    *len = tl_canon.len;
    return 0;
}

/* Room in the worker's query buffer for n bytes. */
static char *qroom(struct http_worker *h, size_t n)
{
    if (n > h->qcap) {
        size_t cap = h->qcap ? h->qcap : 1024;
        while (cap < n)
            cap *= 2;
        char *nb = realloc(h->qbuf, cap);
        if (!nb)
            return NULL;
        h->qbuf = nb;
        h->qcap = cap;
    }
    return h->qbuf;
}

/* The filters the path and ?client= name, looked up: 0, or -1 answered (an
 * unknown filter is 404, as elsewhere in the API). */
static int find_filters(struct hreq *r, const struct authz_route *rt, const char *cname,
                        size_t clen, struct authz_req *a)
{
    for (size_t i = 0; i <= rt->n; i++) {
        const char *name = i < rt->n ? rt->filter[i].p : cname;
        size_t len = i < rt->n ? rt->filter[i].len : clen;
        if (i == rt->n && !cname)
            break;
        const struct fentry *e = catalog_find(r->cat, name, len);
        if (!e) {
            http_reply_error(r, HTTP_ERR_UNKNOWN_FILTER, "no such filter '%.*s'", (int)len, name);
            return -1;
        }
        a->e[i] = e;
        if (i < rt->n)
            a->n = i + 1;
        else
            a->client = true;
    }
    return 0;
}

/* The client filter's name from ?client=, when the query is this request's
 * own (the URL came from headers); into out (room for the query's length).
 * 1 found, 0 not, -1 answered. */
static int client_param(struct hreq *r, char *out, size_t *len)
{
    const struct httpparse_head *hd = r->hd;
    char err[128];
    int rc = hd->query
                 ? httpparse_query(hd->query, hd->query_len, "client", out, len, err, sizeof(err))
                 : 0;
    if (rc < 0)
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", err);
    return rc;
}

void http_authz(struct hreq *r, const char *rest, size_t rest_len)
{
    struct http_worker *h = r->h;
    const struct httpparse_head *hd = r->hd;
    struct authz_req a;
    memset(&a, 0, sizeof(a));
    char err[256];
    struct authz_route rt;
    if (authz_parse_path(rest, rest_len, &rt, err, sizeof(err)) != 0) {
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", err);
        return;
    }
    /* The head as parsed: from the request line to the blank line. */
    const char *head = hd->method_s;
    struct authz_headers ah;
    authz_scan_headers(head, (size_t)(r->body - head), &ah);
    /* The URL is made of header bytes and the path: head_len + 64 is room
     * for it; the query (for ?client=) goes after it. */
    size_t ucap = hd->head_len + 64;
    char *buf = qroom(h, ucap + hd->query_len + 1);
    if (!buf) {
        http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    int src = authz_derive_url(&ah, rt.below, rt.below_len, hd->query, hd->query_len,
                               hd->query != NULL, buf, ucap, &a.url_len, err, sizeof(err));
    /* ?client= is read only when the query is this request's own: below
     * the prefix (Envoy) it is the original request's, which the client
     * wrote, and ;client=NAME in the path says it instead. */
    const char *cname = rt.client.len ? rt.client.p : NULL;
    size_t clen = rt.client.len;
    if (src >= 0 && src != AUTHZ_FROM_PATH) {
        int c = client_param(r, buf + ucap, &clen);
        if (c < 0)
            return;
        if (c == 1 && cname) {
            http_reply_error(r, HTTP_ERR_BAD_REQUEST,
                             "the client filter is named twice (;client= and ?client=)");
            return;
        }
        if (c == 1)
            cname = buf + ucap;
        else
            clen = rt.client.len;
    }
    if (find_filters(r, &rt, cname, clen, &a) != 0)
        return;
    if (src < 0) {
        bad(r, &a, err);
        return;
    }
    a.url = buf;
    /* The context the gateway's headers give (nginx passes the browser's
     * on); the method, when no header says it, is this request's own below
     * an Envoy prefix, where it is the original's. Unknown words are no
     * context, never an error: they only narrow which rules apply. */
    struct authz_context ax;
    authz_context(&ah, &ax);
    a.ctx = CMD_CTX_NONE;
    if (ax.dest)
        a.ctx.type = adblock_fetch_dest_parse(ax.dest, ax.dest_len);
    a.ctx.from = ax.from;
    a.ctx.from_len = ax.from_len;
    if (!ax.method && src == AUTHZ_FROM_PATH) {
        ax.method = hd->method_s;
        ax.method_len = hd->method_len;
    }
    if (ax.method)
        a.ctx.method = adblock_method_parse(ax.method, ax.method_len);
    if (a.client) {
        int c = authz_client_addr(&ah, &a.addr, &a.addr_len, err, sizeof(err));
        if (c <= 0) {
            bad(r, &a,
                c < 0 ? err
                      : "a client filter is named, but neither X-Real-IP nor X-Forwarded-For "
                        "gives the client address");
            return;
        }
    }
    /* The filters in the order named: the first that matches decides. */
    for (size_t i = 0; i <= a.n; i++) {
        if (i == a.n && !a.client)
            break;
        const struct fentry *e = a.e[i];
        const char *item = a.addr, *m = NULL;
        size_t len = a.addr_len, mlen = 0;
        if (i < a.n && url_item(r, &a, e, &item, &len) != 0)
            return;
        static const struct cmd_ctx none = CMD_CTX_NONE;
        int hit = judge(r, &a, e, item, len, i < a.n ? "URL" : "client address",
                        i < a.n ? &a.ctx : &none, &m, &mlen);
        if (hit < 0)
            return;
        if (hit) {
            deny(r, &a, e, m ? m : item, m ? mlen : len, e->v->ab && m);
            return;
        }
    }
    /* Allowed: 204, except below a prefix (only Envoy sends that), where
     * Envoy's HTTP ext_authz takes 200 alone as "allowed" (any other 2xx
     * would deny); nginx, HAProxy and Traefik take any 2xx. */
    count(r, &a, STATS_ALLOW, NULL);
    http_respond(r, src == AUTHZ_FROM_PATH ? 200 : 204, CT_JSON, "", 0);
}
