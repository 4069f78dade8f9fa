/* The line protocol's verbs that the reload thread answers (RELOAD, and
 * CREATE, DROP, CLEAR, FLUSH on filters made at run time): each queues its
 * work (conn_reload, conn_admin), the connection stops reading, and the
 * answer is written when the report comes back, on the connection's worker
 * thread, in the order of the requests. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/cmd.h"
#include "front/line/line_int.h"
#include "net/runtime.h"
#include "store/reload.h"

#define reply_flush conn_reply_flush
#define reply_err line_reply_err
#define reply_str line_reply_str

/* The reload is over (conn.h): one reply line, OK with per-filter statuses or
 * ERR reload_failed naming the first failed filter and its reason. A report
 * that was lost, or a field that is not a string, still gets an answer. */
static void reload_answer(struct conn *c, json_t *report, const void *note)
{
    (void)note;
    reply_flush(c);
    if (!report) {
        reply_err(c, PROTO_ERR_INTERNAL, "the reload ran, but its report was lost (out of memory)");
        reply_flush(c);
        return;
    }
    bool ok = json_is_true(json_object_get(report, "ok"));
    json_t *filters = json_object_get(report, "filters");
    char line[1024];
    size_t len = 0, i;
    json_t *f;
    if (ok) {
        len += (size_t)snprintf(line, sizeof(line), "OK");
        json_array_foreach(filters, i, f)
        {
            const char *name = json_string_value(json_object_get(f, "name"));
            const char *status = json_string_value(json_object_get(f, "status"));
            if (len < sizeof(line))
                len += (size_t)snprintf(line + len, sizeof(line) - len, " %s=%s", name ? name : "?",
                                        status ? status : "?");
        }
        if (len >= sizeof(line) - 1)
            len = sizeof(line) - 2;
        line[len++] = '\n';
        conn_out_add(c, line, len);
    } else {
        const char *msg = json_string_value(json_object_get(report, "error"));
        json_array_foreach(filters, i, f)
        {
            const char *status = json_string_value(json_object_get(f, "status"));
            if (!msg && status && strcmp(status, "failed") == 0) {
                const char *name = json_string_value(json_object_get(f, "name"));
                const char *why = json_string_value(json_object_get(f, "error"));
                snprintf(line, sizeof(line), "%s: %s", name ? name : "?", why ? why : "failed");
                msg = line;
            }
        }
        reply_err(c, PROTO_ERR_RELOAD_FAILED, msg ? msg : "reload failed");
        reply_flush(c);
    }
    json_decref(report);
}

void verb_reload(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                 const struct line_verb *v)
{
    (void)r;
    (void)v;
    enum cmd_err e =
        cmd_authorize(cat->conf, c->loopback, line_authed(c) ? CMD_CRED_GOOD : CMD_CRED_NONE);
    if (e != CMD_OK)
        reply_err(c, PROTO_ERR_AUTH_REQUIRED,
                  "RELOAD needs AUTH (or a loopback client without admin_token)");
    else if (!c->w->srv->reload_fn)
        reply_err(c, PROTO_ERR_INTERNAL, "reload is not available");
    else if (!conn_reload(c, reload_answer, NULL, 0))
        reply_err(c, PROTO_ERR_INTERNAL, "out of memory: the reload was not started");
}

/* An admin operation is over: `OK`, or `ERR <code> <message>`. */
static void admin_answer(struct conn *c, json_t *report, const void *note)
{
    (void)note;
    reply_flush(c);
    const char *msg;
    enum cmd_err e = cmd_admin_outcome(report, &msg);
    if (e == CMD_OK)
        reply_str(c, "OK\n");
    else
        reply_err(c, line_err(e), msg);
    json_decref(report);
    reply_flush(c);
}

/* CREATE <filter> [option=value ...], DROP <filter>, CLEAR <filter>,
 * FLUSH [<filter>]: the admin rule, then the operation queued. */
void verb_admin(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                const struct line_verb *v)
{
    if (cmd_authorize(cat->conf, c->loopback, line_authed(c) ? CMD_CRED_GOOD : CMD_CRED_NONE) !=
        CMD_OK) {
        char msg[128];
        snprintf(msg, sizeof(msg), "%s needs AUTH (or a loopback client without admin_token)",
                 cmd_table[v->id].name);
        reply_err(c, PROTO_ERR_AUTH_REQUIRED, msg);
        return;
    }
    struct reload_op op;
    memset(&op, 0, sizeof(op));
    op.kind = cmd_op_kind(v->id);
    if (r->has_filter)
        memcpy(op.name, r->filter.p, r->filter.len); /* the parser held it to FNAME_MAX */
    for (size_t i = 0; i < r->n_items; i++) {
        const struct proto_token *t = &r->items[i];
        const char *eq = memchr(t->p, '=', t->len);
        char why[160];
        if (!eq) {
            snprintf(why, sizeof(why), "option %zu is not name=value", i + 1);
            reply_err(c, PROTO_ERR_BAD_OPTION, why);
            return;
        }
        if (reload_op_opt(&op, t->p, (size_t)(eq - t->p), eq + 1, t->len - (size_t)(eq - t->p) - 1,
                          why, sizeof(why)) != 0) {
            reply_err(c, PROTO_ERR_BAD_OPTION, why);
            return;
        }
    }
    if (!c->w->srv->reload_fn)
        reply_err(c, PROTO_ERR_INTERNAL, "run-time filters are not available");
    else if (!conn_admin(c, &op, admin_answer, NULL, 0))
        reply_err(c, PROTO_ERR_INTERNAL, "out of memory: nothing was queued");
}
