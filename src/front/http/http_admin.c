/* Filters made at run time over HTTP (docs/http-api.md): PUT
 * /v1/filters/{name} with the options as a JSON object, DELETE
 * /v1/filters/{name}, POST /v1/filters/{name}/clear. Each is an operation of
 * the reload thread (store/created.h): the request queues it (conn_admin)
 * and the connection reads nothing more until the answer is written, on the
 * connection's worker thread, so responses keep their order. The admin rule
 * was applied by the router (a mutating row). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "core/views.h"
#include "net/worker.h"
#include "front/http/http_int.h"

/* What the answer needs of the request, copied (the request is gone then). */
struct admin_note {
    double t0;
    bool keep_alive;
    int minor;
    enum cmd_id id;
};

/* The operation is over: 201 (made) or 200 with the filter's INFO, 200
 * {"name","dropped"} for a drop, or the error. */
static void admin_answer(struct conn *c, json_t *report, const void *note)
{
    struct admin_note n;
    memcpy(&n, note, sizeof(n));
    struct httpparse_head hd = {.keep_alive = n.keep_alive, .minor = n.minor};
    struct hreq r = {.c = c, .h = c->fw, .hd = &hd, .cat = registry_read(c->w->reg)};
    HC(c)->answered = 0;
    const char *msg;
    enum cmd_err e = cmd_admin_outcome(report, &msg);
    const char *name = json_string_value(json_object_get(report, "name"));
    const struct fentry *fe = name ? catalog_find(r.cat, name, strlen(name)) : NULL;
    if (e != CMD_OK) {
        struct cmd_call call;
        cmd_call_init(&call, r.cat, NULL, 0, c->loopback, CMD_CRED_NONE);
        call.err = e;
        snprintf(call.msg, sizeof(call.msg), "%s", msg);
        http_cmd_error(&r, &call);
    } else if (n.id == CMD_DROP || !fe) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(name ? name : ""));
        json_object_set_new(o, n.id == CMD_DROP ? "dropped" : "done", json_true());
        http_reply_json(&r, 200, o);
    } else {
        http_reply_json(&r, n.id == CMD_CREATE ? 201 : 200, views_filter_json(fe));
    }
    json_decref(report);
    stats_latency_add(&c->w->stats->latency[STATS_HTTP], util_now() - n.t0, 1);
}

/* Queue op for r; the answer comes later (admin_answer). */
static void queue(struct hreq *r, const struct reload_op *op, enum cmd_id id)
{
    struct admin_note n = {util_now(), r->hd->keep_alive, r->hd->minor, id};
    if (!conn_admin(r->c, op, admin_answer, &n, sizeof(n)))
        http_reply_error(r, HTTP_ERR_UNAVAILABLE,
                         "the operation could not be queued (no reload thread, or out of memory)");
}

/* The op for r's name; false after answering a name too long to hold. */
static bool op_for(struct hreq *r, enum reload_op_kind kind, struct reload_op *op)
{
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    if (r->name_len > FNAME_MAX) {
        http_reply_error(r, HTTP_ERR_BAD_OPTION, "bad filter name: use " FNAME_RULE);
        return false;
    }
    memcpy(op->name, r->name, r->name_len);
    return true;
}

/* One option's JSON value as the config would write it: a number, a
 * string, or a boolean as on/off. false for anything else. */
static bool value_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%.17g", json_real_value(v));
    else if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, len, "%s", json_is_true(v) ? "on" : "off");
    else
        return false;
    return true;
}

/* PUT /v1/filters/{name}: its options (capacity, fpr, keys, layout,
 * growth, max_memory, window, slices, fsync, full) as a JSON object; an
 * empty body takes the defaults. */
void http_verb_create(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e)
{
    (void)v;
    (void)e; /* a served one is refused by the reload thread: one place says exists */
    struct reload_op op;
    if (!op_for(r, RELOAD_OP_CREATE, &op))
        return;
    if (r->body_len) {
        json_error_t jerr;
        json_t *o = json_loadb(r->body, r->body_len, 0, &jerr);
        if (!json_is_object(o)) {
            json_decref(o);
            http_reply_error(r, HTTP_ERR_BAD_JSON, "the body must be a JSON object of options%s%s",
                             o ? "" : ": ", o ? "" : jerr.text);
            return;
        }
        const char *key;
        json_t *val;
        json_object_foreach(o, key, val)
        {
            char text[RELOAD_OP_VAL_MAX + 2], why[160];
            if (!value_text(val, text, sizeof(text))) {
                http_reply_error(r, HTTP_ERR_BAD_OPTION,
                                 "option %s: use a number, a string or a boolean", key);
                json_decref(o);
                return;
            }
            if (reload_op_opt(&op, key, strlen(key), text, strlen(text), why, sizeof(why)) != 0) {
                http_reply_error(r, HTTP_ERR_BAD_OPTION, "%s", why);
                json_decref(o);
                return;
            }
        }
        json_decref(o);
    }
    queue(r, &op, CMD_CREATE);
}

/* DELETE /v1/filters/{name}. */
void http_verb_drop(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e)
{
    (void)v;
    (void)e;
    struct reload_op op;
    if (op_for(r, RELOAD_OP_DROP, &op))
        queue(r, &op, CMD_DROP);
}

/* POST /v1/filters/{name}/clear. */
void http_verb_clear(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e)
{
    (void)v;
    (void)e;
    struct reload_op op;
    if (op_for(r, RELOAD_OP_CLEAR, &op))
        queue(r, &op, CMD_CLEAR);
}
