/* Postfix's tcp_table(5) on a connection of the net layer: tcptable.c
 * parses, the command table answers (CHECK for get, ADD for put), this glue
 * writes the replies. The block a connection serves is the one whose listen
 * address it came in on (c->addr indexes conf->tcp_table: the addresses are
 * restart-only, so the index holds across reloads). Worker thread only.
 *
 * Replies: 200 FOUND (the block's `found`) when the filter says YES, 500
 * not-found when it says NO, and also when the filter cannot read the key (a
 * host filter asked for `user@`, a partial key Postfix's access(5) lookups
 * send): such a key cannot be listed, and a 400 would make Postfix defer the
 * mail for as long as it is asked. 400 is for what a retry may cure: a
 * filter not served (failed to load), a journal refusing an add. */
#include "config.h"

#include "front/postfix/tcptable.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/cmd.h"
#include "front/postfix/postfix.h"
#include "net/runtime.h"

struct tt_worker {
    struct conn_worker cw; /* env: proto = STATS_TCP_TABLE (net/conn.h) */
    char *buf;             /* decoded keys: grown to the longest line seen */
    size_t cap;
    char reply[TCPT_REPLY_MAX];
};

static void reply(struct conn *c, int code, const char *text)
{
    struct tt_worker *tw = c->fw;
    size_t n = tcpt_reply(code, text, strlen(text), tw->reply);
    conn_out_add(c, tw->reply, n);
}

/* One get or put through the command table. */
static void answer(struct conn *c, const struct catalog *cat, const struct conf_tcp_table *tt,
                   const struct tcpt_request *r)
{
    struct tt_worker *tw = c->fw;
    struct cmd_call call;
    bool put = r->cmd == TCPT_PUT;
    cmd_call_init(&call, cat, NULL, 1, c->loopback, CMD_CRED_NONE);
    call.filter = tt->filter;
    call.filter_len = strlen(tt->filter);
    tw->cw.env.keys[0].data = r->key;
    tw->cw.env.keys[0].len = r->key_len;
    cmd_run(&tw->cw.env, put ? CMD_ADD : CMD_CHECK, NULL, &call);
    struct stats *s = &c->w->stats->s;
    char msg[sizeof(call.msg) + 32];
    switch (call.err) {
    case CMD_OK:
        if (put)
            reply(c, 200, tw->cw.env.bools[0] ? "NEW" : "EXISTS");
        else
            reply(c, tw->cw.env.bools[0] ? 200 : 500,
                  tw->cw.env.bools[0] ? tt->found : "not-found");
        return;
    case CMD_ERR_BAD_ITEM:
        snprintf(msg, sizeof(msg), "not-found (%s)", call.msg);
        reply(c, 500, msg);
        return;
    case CMD_ERR_AUTH_REQUIRED:
    case CMD_ERR_AUTH_FAILED:
        reply(c, 500, "read-only");
        return;
    default:
        STAT_ADD(s, tcp_table_errors, 1);
        reply(c, 400, call.msg);
        return;
    }
}

/* One line at p, the n bytes of input not consumed yet (conn_each_request),
 * against the block tt: answered, and the bytes it used; 0 while it is not
 * complete. */
static size_t tt_one(struct conn *c, char *p, size_t n, void *arg)
{
    struct tt_worker *tw = c->fw;
    const struct catalog *cat = arg;
    const struct conf *cf = cat->conf;
    struct tcpt_request r;
    size_t used = 0;
    char err[200];
    enum tcpt_status st =
        tcpt_parse(p, n, cf->max_item, tw->buf, tw->cap, &r, &used, err, sizeof(err));
    if (st == TCPT_NEED_MORE) {
        if (n <= cf->max_line)
            return 0;
        reply(c, 400, "request longer than max_line");
        c->closing = true;
        return n;
    }
    STAT_ADD(&c->w->stats->s, tcp_table_requests, 1);
    if (st == TCPT_ERROR) {
        STAT_ADD(&c->w->stats->s, tcp_table_errors, 1);
        reply(c, 400, err);
    } else {
        answer(c, cat, &cf->tcp_table[c->addr], &r);
    }
    return used;
}

/* Answer every complete line at the start of c->in. */
static unsigned tt_process(struct conn *c, bool draining)
{
    struct tt_worker *tw = c->fw;
    const struct catalog *cat = registry_read(c->w->reg);
    const struct conf *cf = cat->conf;
    if (c->addr >= cf->n_tcp_table) { /* cannot happen: see the file's comment */
        reply(c, 400, "no tcp_table block for this address");
        c->closing = true;
        return 0;
    }
    if (tw->cap < cf->max_line + 1) {
        char *nb = realloc(tw->buf, cf->max_line + 1);
        if (!nb) {
            reply(c, 400, "out of memory");
            c->closing = true;
            return 0;
        }
        tw->buf = nb;
        tw->cap = cf->max_line + 1;
    }
    return conn_each_request(c, cf, draining, tt_one, (void *)cat);
}

static size_t tt_in_limit(const struct conf *cf)
{
    return cf->max_line + 2;
}

/* The request passed max_line (CONN_FULL_LIMIT) or would pass max_buffered,
 * the daemon-wide budget of input buffers (CONN_FULL_BUDGET): a temporary
 * fault for Postfix (400, so the mail is deferred, not bounced), then the
 * close. Worker thread. */
static void tt_in_full(struct conn *c, enum conn_full why)
{
    reply(c, 400,
          why == CONN_FULL_BUDGET ? "server request buffers full (max_buffered)"
                                  : "request longer than max_line");
}

/* A request begun more than request_timeout ago that has not ended: 400, then
 * the close. Worker thread. */
static void tt_request_timeout(struct conn *c)
{
    reply(c, 400, "request did not arrive within request_timeout");
}

/* After the worker stopped: the key buffer it grew. */
static void tt_worker_free(struct conn_worker *cw)
{
    free(((struct tt_worker *)cw)->buf);
}

/* Counted as a protocol of its own: tcp_table_* in INFO, protocol="tcp_table"
 * in /metrics (STATS_MAIL_FRONT_, core/stats.h). No error codes of its own,
 * so no err_names. */
const struct conn_ops tcptable_ops = {
    .name = "tcp_table",
    .proto = STATS_TCP_TABLE,
    .worker_size = sizeof(struct tt_worker),
    .worker_free = tt_worker_free,
    .process = tt_process,
    .in_limit = tt_in_limit,
    .in_full = tt_in_full,
    .request_timeout = tt_request_timeout,
    .refusal = "400 too%20many%20connections\n",
    .stop = conn_stop_drain,
};
