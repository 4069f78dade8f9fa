/* The HTTP API's routes and handlers (docs/http-api.md): each maps a request
 * onto the command table (core/cmd.h) and writes its answer with
 * http_resp.c. Worker thread; never blocks. */
#include "config.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fname.h"
#include "base/log.h"
#include "base/util.h"
#include "core/metrics.h"
#include "core/views.h"
#include "front/http/http_int.h"
#include "net/server.h"
#include "net/worker.h"

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

/* The methods of a mask as an Allow header's value: "GET, HEAD, POST". */
static void methods_text(int mask, char *out, size_t cap)
{
    static const struct {
        int bit;
        const char *name;
    } m[] = {{HTTP_M_GET, "GET"},
             {HTTP_M_HEAD, "HEAD"},
             {HTTP_M_POST, "POST"},
             {HTTP_M_PUT, "PUT"},
             {HTTP_M_DELETE, "DELETE"}};
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
        if ((mask & m[i].bit) && len < cap)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", m[i].name);
}

/* 405 with the Allow header listing what the path takes. */
static int method_bit(const struct hreq *r)
{
    return r->hd->method == HTTPPARSE_GET      ? HTTP_M_GET
           : r->hd->method == HTTPPARSE_HEAD   ? HTTP_M_HEAD
           : r->hd->method == HTTPPARSE_POST   ? HTTP_M_POST
           : r->hd->method == HTTPPARSE_PUT    ? HTTP_M_PUT
           : r->hd->method == HTTPPARSE_DELETE ? HTTP_M_DELETE
                                               : 0;
}

static bool method_ok(struct hreq *r, int mask)
{
    if (method_bit(r) & mask)
        return true;
    char allow[32], line[64];
    methods_text(mask, allow, sizeof(allow));
    snprintf(line, sizeof(line), "Allow: %s", allow);
    http_add_header(r, line);
    http_reply_error(r, HTTP_ERR_METHOD_NOT_ALLOWED, "this path takes %s", allow);
    return false;
}

/* What the request proves: Authorization: Bearer <admin_token> (the table
 * decides whether that, or loopback, is enough: core/cmd.c). */
enum cmd_cred http_credential(struct hreq *r)
{
    const char *tok = r->cat->conf->admin_token;
    const char *auth = r->hd->auth;
    size_t alen = r->hd->auth_len;
    if (!auth)
        return CMD_CRED_NONE;
    bool bearer = alen > 7 && strncasecmp(auth, "Bearer ", 7) == 0;
    const char *given = auth + 7;
    size_t glen = bearer ? alen - 7 : 0;
    while (glen && (*given == ' ' || *given == '\t')) {
        given++;
        glen--;
    }
    return bearer && tok && util_token_equal(given, glen, tok) ? CMD_CRED_GOOD : CMD_CRED_WRONG;
}

/* A call of the table for this request. The credential is parsed only for
 * commands that may need it (a GET check never does: it is the hot path). */
static void call_for(struct cmd_call *call, struct hreq *r, const struct fentry *e, size_t n,
                     enum cmd_id id)
{
    cmd_call_init(call, r->cat, e, n, r->c->loopback,
                  cmd_table[id].mutating ? http_credential(r) : CMD_CRED_NONE);
}

/* ---- handlers ---- */

static void do_list(struct hreq *r)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < r->cat->n; i++)
        json_array_append_new(arr, views_filter_json(&r->cat->entries[i]));
    http_reply_json(r, 200, json_pack("{s:o}", "filters", arr));
}

static void do_healthz(struct hreq *r)
{
    struct cmd_call call;
    call_for(&call, r, NULL, 0, CMD_HEALTH);
    cmd_run(&r->h->cw.env, CMD_HEALTH, NULL, &call);
    if (!call.json) {
        static const char ok[] = "{\"status\":\"ok\"}";
        http_respond(r, 200, CT_JSON, ok, sizeof(ok) - 1);
        return;
    }
    http_reply_json(r, 503,
                    json_pack("{s:s,s:s,s:o}", "status", "unavailable", "message",
                              "configured filters are not loaded", "missing", call.json));
}

static void do_metrics(struct hreq *r)
{
    struct evbuffer *b = evbuffer_new();
    struct stats_src src;
    server_stats_src(r->c->w->srv, &src);
    if (!b || metrics_render(&src, r->cat, b) != 0) {
        if (b)
            evbuffer_free(b);
        http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    http_respond_buffer(r, 200, METRICS_CONTENT_TYPE, b);
}

/* GET .../check?item=X[&type=T][&from=URL][&method=M]: one item and its
 * context from the query string, decoded into the front's buffer, the item
 * echoed back escaped. The hot path: no allocation once the buffers have
 * grown, no jansson. */
static void do_check_get(struct hreq *r, const struct fentry *e)
{
    struct http_worker *h = r->h;
    const struct httpparse_head *hd = r->hd;
    if (hd->query_len + 1 > h->qcap) {
        size_t cap = h->qcap ? h->qcap : 1024;
        while (cap < hd->query_len + 1)
            cap *= 2;
        char *nb = realloc(h->qbuf, cap);
        if (!nb) {
            http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
            return;
        }
        h->qbuf = nb;
        h->qcap = cap;
    }
    char err[192];
    /* One pass over the query; the values go one after another into qbuf. */
    struct httpparse_param ps[] = {
        {.name = "item"}, {.name = "type"}, {.name = "from"}, {.name = "method"}};
    if (httpparse_query_params(hd->query, hd->query_len, ps, 4, h->qbuf, err, sizeof(err)) != 0) {
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", err);
        return;
    }
    if (!ps[0].value) {
        http_reply_error(r, HTTP_ERR_MISSING_ITEMS,
                         "GET .../check needs ?item=<percent-encoded item>");
        return;
    }
    const char *item = ps[0].value;
    size_t len = ps[0].len;
    /* JSON strings are Unicode: an item that is not UTF-8 cannot be echoed
     * (nor sent in a POST body). The line protocol takes any bytes. */
    if (!httpparse_utf8_valid(item, len)) {
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "the item is not valid UTF-8");
        return;
    }
    /* The context: read (and refused if bad) whatever the filter. */
    struct cmd_ctx ctx = CMD_CTX_NONE;
    for (int f = HTTP_CTX_TYPE; f <= HTTP_CTX_METHOD; f++)
        if (ps[1 + f].value && http_ctx_set(&ctx, (enum http_ctx_field)f, ps[1 + f].value,
                                            ps[1 + f].len, err, sizeof(err)) != 0) {
            http_reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", err);
            return;
        }
    struct cmd_call call;
    call_for(&call, r, e, 1, CMD_CHECK);
    call.ctx = ctx;
    h->cw.env.keys[0].data = item;
    h->cw.env.keys[0].len = len;
    cmd_run(&h->cw.env, CMD_CHECK, NULL, &call);
    if (call.err != CMD_OK) {
        http_cmd_error(r, &call);
        return;
    }
    bool yes = call.yes != 0;
    /* A host or url filter's answer names the key that matched (or null);
     * an adblock filter's the rule and the exception; an exact filter's is
     * unchanged (its match would be the item). */
    bool ab = e->v->ab != NULL;
    bool keyed = e->v->f->keys != FILTER_KEYS_EXACT;
    /* {"filter":"NAME","item":"ITEM","present":true[,"match":...]}; the body
     * is built after the room for the head, then the head is put in front of
     * it. */
    size_t body_max = e->name_len + 6 * len + 96 + (keyed ? 6 * call.match_len + 16 : 0) +
                      (call.except ? 6 * call.except_len + 32 : 0);
    char *b = http_rbuf_room(h, 1024 + sizeof(r->extra) + body_max);
    if (!b) {
        http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    char *body = b + 512 + sizeof(r->extra), *p = body;
    p = PUT_LIT(p, "{\"filter\":\"");
    p = put(p, e->name, e->name_len);
    p = PUT_LIT(p, "\",\"item\":\"");
    p = put_json_escaped(p, item, len);
    if (ab) {
        *p++ = '"';
        p = http_put_adblock_answer(p, &call);
        *p++ = '}';
    } else if (call.except) {
        /* An exception answered: "allowed", and for a host or url filter the
         * allow-list entry that did. */
        p = PUT_LIT(p, "\",\"present\":false,\"allowed\":true");
        if (keyed) {
            p = PUT_LIT(p, ",\"match\":null,\"exception\":\"");
            p = put_json_escaped(p, call.except, call.except_len);
            *p++ = '"';
        }
        *p++ = '}';
    } else if (!keyed) {
        /* "confirmed": the YES was confirmed by the filter's exact table. */
        p = !yes       ? PUT_LIT(p, "\",\"present\":false}")
            : e->v->xd ? PUT_LIT(p, "\",\"present\":true,\"confirmed\":true}")
                       : PUT_LIT(p, "\",\"present\":true}");
    } else if (call.match) {
        p = PUT_LIT(p, "\",\"present\":true,\"match\":\"");
        p = put_json_escaped(p, call.match, call.match_len);
        p = e->v->xd ? PUT_LIT(p, "\",\"confirmed\":true}") : PUT_LIT(p, "\"}");
    } else {
        p = PUT_LIT(p, "\",\"present\":false,\"match\":null}");
    }
    size_t blen = (size_t)(p - body);
    char head[512 + sizeof(r->extra)];
    char *he = http_put_head(r, head, 200, CT_JSON, blen);
    size_t hlen = (size_t)(he - head);
    memcpy(body - hlen, head, hlen);
    conn_out_add(r->c, body - hlen, hlen + (r->head ? 0 : blen));
    http_count_response(r, 200);
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

/* The inside of a POST check's "matches" array, built while the items are
 * still there: "key" for an item found, null for one not. */
struct matches {
    char *p;
    size_t len, cap;
};

static int matches_room(struct matches *m, size_t n)
{
    if (m->cap - m->len >= n)
        return 0;
    size_t cap = m->cap ? m->cap : 256;
    while (cap - m->len < n)
        cap *= 2;
    char *np = realloc(m->p, cap);
    if (!np)
        return -1;
    m->p = np;
    m->cap = cap;
    return 0;
}

static int matches_write(struct matches *m, const struct fentry *e, const struct filter_key *keys,
                         const bool *found, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *k = NULL;
        size_t klen = 0;
        char why[160];
        /* Found, so it canonicalised; it matches again (bits are never
         * cleared), but a null is the safe answer if not. */
        if (found[i] &&
            cmd_match_again(e, keys[i].data, keys[i].len, &k, &klen, why, sizeof(why)) != 1)
            k = NULL;
        if (matches_room(m, 6 * klen + 8) != 0)
            return -1;
        char *p = m->p + m->len;
        if (i)
            *p++ = ',';
        if (k) {
            *p++ = '"';
            p = put_json_escaped(p, k, klen);
            *p++ = '"';
        } else {
            p = PUT_LIT(p, "null");
        }
        m->len = (size_t)(p - m->p);
    }
    return 0;
}

/* POST .../check, .../add, .../allow, .../unallow, .../remove:
 * {"items":[...]} through the filter's batch call (hash all, prefetch all,
 * then test or set), the reply written directly. */
static void do_items_post(struct hreq *r, const struct fentry *e, enum cmd_id id)
{
    bool add = id == CMD_ADD, check = id == CMD_CHECK;
    struct http_worker *h = r->h;
    size_t max = cmd_limits(r->cat->conf, h->cw.env.scratch_items).max_items;
    /* A bound before parsing: jansson's tree costs ~50 bytes a value. */
    size_t elements = json_elements_upper_bound(r->body, r->body_len);
    if (elements > max + 8) {
        http_reply_error(r, HTTP_ERR_TOO_MANY_ITEMS, "about %zu items, the limit is max_items %zu",
                         elements, max);
        return;
    }
    json_error_t jerr;
    json_t *root = json_loadb(r->body_len ? r->body : "", r->body_len,
                              JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        http_reply_error(r, HTTP_ERR_BAD_JSON, "line %d column %d: %s", jerr.line, jerr.column,
                         jerr.text);
        return;
    }
    json_t *items = json_is_object(root) ? json_object_get(root, "items") : NULL;
    if (!json_is_array(items)) {
        json_decref(root);
        http_reply_error(r, HTTP_ERR_MISSING_ITEMS,
                         "the body must be {\"items\": [<string>, ...]}");
        return;
    }
    /* A check's context: the body's defaults, then each item object's. */
    struct cmd_ctx dflt = CMD_CTX_NONE;
    char err[256];
    if (check && http_ctx_json(root, &dflt, err, sizeof(err)) != 0) {
        json_decref(root);
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", err);
        return;
    }
    size_t n = json_array_size(items);
    bool objects = false;
    for (size_t i = 0; i < n && i < max; i++) {
        json_t *v = json_array_get(items, i);
        if (check) /* each item's context, the defaults unless its object says */
            h->cw.env.ctxs[i] = dflt;
        if (check && json_is_object(v)) {
            enum http_err code;
            if (http_item_object(v, i, &h->cw.env.ctxs[i], &h->cw.env.keys[i], &code, err,
                                 sizeof(err)) != 0) {
                json_decref(root);
                http_reply_error(r, code, "%s", err);
                return;
            }
            objects = true;
            continue;
        }
        if (!json_is_string(v)) {
            json_decref(root);
            http_reply_error(r, HTTP_ERR_NOT_A_STRING, "item %zu is not a string", i + 1);
            return;
        }
        h->cw.env.keys[i].data = json_string_value(v);
        h->cw.env.keys[i].len = json_string_length(v);
    }
    /* An adblock filter names each item's rule and exception: the batch
     * call and its answer in http_context.c. */
    if (check && e->v->ab) {
        if (n > max) /* the table's limit, before items that were not read */
            http_reply_error(r, HTTP_ERR_TOO_MANY_ITEMS, "%zu items, the limit is max_items %zu", n,
                             max);
        else
            http_adblock_batch(r, e, n, &dflt, objects ? h->cw.env.ctxs : NULL);
        json_decref(root);
        return;
    }
    /* The table: auth, max_items, max_item; then the batch call (hash all,
     * prefetch all, then test or set; an add through the journal first). */
    struct cmd_call call;
    call_for(&call, r, e, n, id);
    call.ctx = dflt;
    call.item_ctx = objects ? h->cw.env.ctxs : NULL;
    cmd_run(&h->cw.env, id, NULL, &call);
    /* A check of a host or url filter names each item's match: the items
     * found are looked up again (rare, and cheaper than keeping every
     * item's expansion), while the body still holds them. */
    struct matches m = {NULL, 0, 0};
    bool keyed = check && call.err == CMD_OK && e->v->f->keys != FILTER_KEYS_EXACT;
    if (keyed && matches_write(&m, e, h->cw.env.keys, h->cw.env.bools, n) != 0) {
        free(m.p);
        json_decref(root);
        http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    json_decref(root);
    if (call.err != CMD_OK) {
        http_cmd_error(r, &call);
        return;
    }
    /* Durable (as the filter's fsync policy promises) before a reply says
     * "new"; HTTP answers a failed sync with 503 rather than a closed
     * connection. */
    if (!check && !gate_commit(h->cw.env.gate)) {
        http_reply_error(r, HTTP_ERR_UNAVAILABLE,
                         "the journal could not be synced; the %s was not acknowledged",
                         cmd_table[id].name);
        return;
    }
    size_t yes = call.yes;

    /* {"filter":"NAME","present":[true,...]} or {...,"new":[...],"added":N}:
     * the name needs no escaping (base/fname.h), the rest is fixed words. */
    size_t cap = e->name_len + 96 + n * 12 + m.len + 16;
    char *body = malloc(cap);
    if (!body) {
        free(m.p);
        http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
        return;
    }
    char *p = PUT_LIT(body, "{\"filter\":\"");
    p = put(p, e->name, e->name_len);
    p = add     ? PUT_LIT(p, "\",\"new\":[")
        : check ? PUT_LIT(p, "\",\"present\":[")
                : PUT_LIT(p, "\",\"changed\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        p = h->cw.env.bools[i] ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
    }
    *p++ = ']';
    if (!check) {
        p = add ? PUT_LIT(p, ",\"added\":") : PUT_LIT(p, ",\"count\":");
        p = put_u64(p, yes);
    }
    /* Which items an exception answered NO, when one did. */
    if (check && call.allowed) {
        p = PUT_LIT(p, ",\"allowed\":[");
        for (size_t i = 0; i < n; i++) {
            if (i)
                *p++ = ',';
            p = h->cw.env.allowed[i] ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
        }
        *p++ = ']';
    }
    if (keyed) {
        p = PUT_LIT(p, ",\"matches\":[");
        if (m.len) /* no items: m.p is NULL */
            p = put(p, m.p, m.len);
        *p++ = ']';
    }
    *p++ = '}';
    free(m.p);
    http_respond(r, 200, CT_JSON, body, (size_t)(p - body));
    free(body);
}

/* What the reload's answer needs of its request (conn_reload copies it). */
struct reload_note {
    double t0;
    bool keep_alive;
    int minor;
};

/* The reload is over (conn.h), on this worker's thread: 200 with the report,
 * 500 if it failed, or 500 internal if the report was lost on the way. */
static void reload_answer(struct conn *c, json_t *report, const void *note)
{
    struct reload_note n;
    memcpy(&n, note, sizeof(n));
    struct httpparse_head hd = {.keep_alive = n.keep_alive, .minor = n.minor};
    struct hreq r = {.c = c, .h = c->fw, .hd = &hd, .cat = registry_read(c->w->reg)};
    HC(c)->answered = 0;
    if (!report) {
        http_reply_error(&r, HTTP_ERR_INTERNAL,
                         "the reload ran, but its report was lost (out of memory)");
    } else {
        bool ok = json_is_true(json_object_get(report, "ok"));
        http_reply_json(&r, ok ? 200 : 500, report);
    }
    stats_latency_add(&c->w->stats->latency[STATS_HTTP], util_now() - n.t0, 1);
}

static void do_reload(struct hreq *r)
{
    struct cmd_call call;
    call_for(&call, r, NULL, 0, CMD_RELOAD);
    cmd_run(&r->h->cw.env, CMD_RELOAD, NULL, &call);
    if (call.err != CMD_OK) {
        http_cmd_error(r, &call);
        return;
    }
    struct reload_note n = {util_now(), r->hd->keep_alive, r->hd->minor};
    if (!conn_reload(r->c, reload_answer, &n, sizeof(n)))
        http_reply_error(r, HTTP_ERR_UNAVAILABLE,
                         "the reload could not be started (no reload hook, or out of memory)");
    /* Otherwise reload_answer answers, later, on this thread. */
}

/* GET/HEAD /v1/filters/{name}: the filter's INFO. */
static void verb_filter_info(struct hreq *r, const struct http_filter_verb *v,
                             const struct fentry *e)
{
    json_t *j = views_filter_json(e);
    if (e->v->xd) { /* the exact phase's counters (views_exact_counters) */
        struct stats_src src;
        server_stats_src(r->c->w->srv, &src);
        views_exact_counters(j, &src, e);
    }
    http_reply_json(r, 200, j);
}

/* .../check: GET one item from the query, POST a batch in the body. */
static void verb_check(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e)
{
    if (r->hd->method == HTTPPARSE_POST)
        do_items_post(r, e, v->id);
    else
        do_check_get(r, e);
}

/* .../add, .../allow, .../unallow, .../remove: a batch in the body. */
static void verb_mutate(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e)
{
    do_items_post(r, e, v->id);
}

/* The verbs of /v1/filters/{name}[/sub], hottest first. */
const struct http_filter_verb http_filter_verbs[] = {
    {"check", HTTP_M_GET | HTTP_M_HEAD | HTTP_M_POST, CMD_CHECK, verb_check, false},
    {"", HTTP_M_GET | HTTP_M_HEAD, CMD_INFO, verb_filter_info, false},
    {"add", HTTP_M_POST, CMD_ADD, verb_mutate, false},
    {"allow", HTTP_M_POST, CMD_ALLOW, verb_mutate, false},
    {"unallow", HTTP_M_POST, CMD_UNALLOW, verb_mutate, false},
    {"remove", HTTP_M_POST, CMD_REMOVE, verb_mutate, false},
    {"", HTTP_M_PUT, CMD_CREATE, http_verb_create, .any_name = true},
    {"", HTTP_M_DELETE, CMD_DROP, http_verb_drop, .any_name = true},
    {"clear", HTTP_M_POST, CMD_CLEAR, http_verb_clear, .any_name = true},
    {"scan", HTTP_M_POST, CMD_SCAN, http_scan, false},
};
const size_t http_n_filter_verbs = sizeof(http_filter_verbs) / sizeof(http_filter_verbs[0]);

/* /v1/filters/{name}[/sub]; rest is the path after the prefix. The order of
 * the answers: an unknown sub-path (404), the method (405), a mutation's
 * auth (401, before the filter is looked up or the body parsed), the
 * filter (404, or 503 for a configured one that is not loaded), then the
 * row's handler. */
static void route_filter(struct hreq *r, const struct http_route *rt, const char *rest,
                         size_t rest_len)
{
    const char *slash = memchr(rest, '/', rest_len);
    size_t raw = slash ? (size_t)(slash - rest) : rest_len;
    const char *sub = slash ? slash + 1 : "";
    size_t sub_len = slash ? rest_len - raw - 1 : 0;
    /* The row of this sub-path and method; else 405 with every method the
     * sub-path takes. */
    const struct http_filter_verb *v = NULL;
    int methods = 0, mb = method_bit(r);
    for (size_t i = 0; i < http_n_filter_verbs && !v; i++)
        if (strlen(http_filter_verbs[i].sub) == sub_len &&
            memcmp(sub, http_filter_verbs[i].sub, sub_len) == 0) {
            methods |= http_filter_verbs[i].methods;
            if (mb & http_filter_verbs[i].methods)
                v = &http_filter_verbs[i];
        }
    if (!methods || (slash && sub_len == 0)) {
        http_reply_error(r, HTTP_ERR_NOT_FOUND, "no such path");
        return;
    }
    if (!v) {
        method_ok(r, methods);
        return;
    }
    if (cmd_table[v->id].mutating) {
        /* The table's auth rule before the filter is looked up and the body
         * parsed: an HTTP client without the right to add learns no more than
         * that (docs/http-api.md). cmd_run applies it again, to the same end. */
        enum cmd_err ae = cmd_authorize(r->cat->conf, r->c->loopback, http_credential(r));
        if (ae != CMD_OK) {
            http_auth_error(r, ae);
            return;
        }
    }
    /* The name is percent-decoded once the path is cut at its '/' (RFC
     * 3986): "%2F" is a '/' of the name, "%3A" and ':' the same byte. */
    char name[3 * FNAME_MAX]; /* the longest escaped form of a name */
    long len = raw > sizeof(name) ? FNAME_MAX + 1 : httpparse_pct_decode(rest, raw, name, false);
    if (len < 0) {
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "bad %%-escape in the filter name '%.*s'",
                         (int)(raw > 64 ? 64 : raw), rest);
        return;
    }
    /* Looked up first: a name found passed the rule when it was made, so
     * only a name no filter has is asked it. */
    const struct fentry *e =
        len > 0 && len <= FNAME_MAX ? catalog_find(r->cat, name, (size_t)len) : NULL;
    bool valid = e || conf_is_valid_name(name, (size_t)len);
    if (v->any_name && len > 0 && len <= FNAME_MAX) { /* the op says what is wrong with it */
        r->name = name;
        r->name_len = (size_t)len;
        v->fn(r, v, e);
        return;
    }
    if (!e && !slash && valid && views_configured(r->cat, name, (size_t)len)) {
        /* Configured, not loaded: 503, so an `option httpchk` on this path
         * takes the replica out while its filter is missing. */
        http_reply_json(r, 503, views_unloaded_json(name, (size_t)len));
        return;
    }
    if (!e) {
        if (valid)
            http_reply_error(r, HTTP_ERR_UNKNOWN_FILTER, "no such filter '%.*s'", (int)len, name);
        else if (len > FNAME_MAX)
            http_reply_error(r, HTTP_ERR_UNKNOWN_FILTER,
                             "invalid filter name: longer than %d bytes (use " FNAME_RULE ")",
                             FNAME_MAX);
        else
            http_reply_error(r, HTTP_ERR_UNKNOWN_FILTER,
                             "invalid filter name '%.*s': use " FNAME_RULE, (int)len, name);
        return;
    }
    v->fn(r, v, e);
}

static void route_authz(struct hreq *r, const struct http_route *rt, const char *rest,
                        size_t rest_len)
{
    http_authz(r, rest, rest_len);
}

static void route_list(struct hreq *r, const struct http_route *rt, const char *rest,
                       size_t rest_len)
{
    do_list(r);
}

static void route_reload(struct hreq *r, const struct http_route *rt, const char *rest,
                         size_t rest_len)
{
    do_reload(r);
}

static void route_healthz(struct hreq *r, const struct http_route *rt, const char *rest,
                          size_t rest_len)
{
    do_healthz(r);
}

static void route_metrics(struct hreq *r, const struct http_route *rt, const char *rest,
                          size_t rest_len)
{
    do_metrics(r);
}

/* The paths, hottest first: a prefix row takes every path that starts with
 * it (its handler reads the rest), any other the path alone. */
/* clang-format off */
#define ROUTE_(path, prefix, methods, id, fn) {path, sizeof(path) - 1, prefix, methods, id, fn}
const struct http_route http_routes[] = {
    ROUTE_("/v1/filters/", true, HTTP_M_ANY, HTTP_OWN, route_filter), /* its rows' methods */
    ROUTE_("/v1/authz/", true, HTTP_M_ANY, CMD_MATCH, route_authz),
    ROUTE_("/v1/authz", false, HTTP_M_ANY, CMD_MATCH, route_authz),
    ROUTE_("/v1/filters", false, HTTP_M_GET | HTTP_M_HEAD, CMD_FILTERS, route_list),
    ROUTE_("/v1/reload", false, HTTP_M_POST, CMD_RELOAD, route_reload),
    ROUTE_("/healthz", false, HTTP_M_GET | HTTP_M_HEAD, CMD_HEALTH, route_healthz),
    ROUTE_("/metrics", false, HTTP_M_GET | HTTP_M_HEAD, HTTP_OWN, route_metrics),
};
#undef ROUTE_
/* clang-format on */
const size_t http_n_routes = sizeof(http_routes) / sizeof(http_routes[0]);

void http_route(struct hreq *r)
{
    const struct httpparse_head *hd = r->hd;
    for (size_t i = 0; i < http_n_routes; i++) {
        const struct http_route *rt = &http_routes[i];
        if (rt->prefix ? hd->path_len < rt->len : hd->path_len != rt->len)
            continue;
        if (memcmp(hd->path, rt->path, rt->len) != 0)
            continue;
        if (rt->methods == HTTP_M_ANY || method_ok(r, rt->methods))
            rt->fn(r, rt, hd->path + rt->len, hd->path_len - rt->len);
        return;
    }
    http_reply_error(r, HTTP_ERR_NOT_FOUND, "no such path");
}
