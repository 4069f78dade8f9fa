/* The line protocol's verbs outside the item path (line_int.h): AUTH,
 * INFO, FILTERS, PING and QUIT.
 * Rows of proto_verbs.h like line.c's, kept apart so that line.c holds the
 * request loop and the lookups. Worker thread that owns the connection. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "front/line/line_int.h"
#include "net/worker.h"

static void reply_json(struct conn *c, json_t *j)
{
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(j);
    if (!s) {
        line_reply_err(c, PROTO_ERR_INTERNAL, "cannot encode JSON");
        return;
    }
    if (conn_out_add(c, s, strlen(s)))
        conn_out_add(c, "\n", 1);
    free(s);
}

bool line_authed(struct conn *c)
{
    return LC(c)->authed;
}

void verb_auth(struct conn *c, const struct catalog *cat, const struct proto_request *r,
               const struct line_verb *v)
{
    (void)v;
    const char *tok = cat->conf->admin_token;
    if (!tok) {
        line_reply_err(c, PROTO_ERR_AUTH_FAILED, "no admin_token is configured on this server");
    } else if (util_token_equal(r->arg.p, r->arg.len, tok)) {
        LC(c)->authed = true;
        line_reply_str(c, "OK\n");
    } else {
        LC(c)->authed = false;
        log_warn_limited("AUTH failed from %s", c->peer);
        line_reply_err(c, PROTO_ERR_AUTH_FAILED, "wrong token");
    }
}

/* INFO [<filter>] through the table, as JSON. */
void verb_info(struct conn *c, const struct catalog *cat, const struct proto_request *r,
               const struct line_verb *v)
{
    struct line_worker *lw = LW(c);
    line_tally_flush(lw); /* INFO counts every request before it, itself included */
    struct stats_src src;
    server_stats_src(c->w->srv, &src);
    struct cmd_call call;
    cmd_call_init(&call, cat, NULL, 0, c->loopback, CMD_CRED_NONE);
    call.filter = r->has_filter ? r->filter.p : NULL;
    call.filter_len = r->has_filter ? r->filter.len : 0;
    cmd_run(&lw->cw.env, v->id, &src, &call);
    if (call.err != CMD_OK)
        line_reply_err(c, line_err(call.err), call.msg);
    else
        reply_json(c, call.json);
}

/* FILTERS: the names served, one line. */
void verb_names(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                const struct line_verb *v)
{
    (void)r;
    (void)v;
    for (size_t i = 0; i < cat->n; i++)
        if ((i && !conn_out_add(c, " ", 1)) ||
            !conn_out_add(c, cat->entries[i].name, cat->entries[i].name_len))
            return;
    conn_out_add(c, "\n", 1);
}

/* PING, QUIT: the row's word, and for QUIT the close once it is written. */
void verb_word(struct conn *c, const struct catalog *cat, const struct proto_request *r,
               const struct line_verb *v)
{
    (void)cat;
    (void)r;
    struct line_worker *lw = LW(c);
    size_t n = strlen(v->yes);
    char *o = conn_reply_room(c, n + 1);
    memcpy(o, v->yes, n);
    o[n] = '\n';
    lw->cw.reply_len += n + 1;
    if (v->closes)
        c->closing = true;
}
