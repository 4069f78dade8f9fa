/* Filters made at run time on the Redis protocol: BF.RESERVE, BF.INSERT,
 * DEL and UNLINK, and a missing key created by BF.ADD, BF.MADD and BF.INSERT
 * with RedisBloom's defaults (auto_create). Each creation or drop is an
 * operation of the reload thread (store/created.h): the request queues it
 * (conn_admin), stays in the input buffer, and runs again when the answer
 * is back (resp_process), then finding the key made or gone; replies stay in
 * order because the connection reads nothing meanwhile. Worker thread that
 * owns the connection. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fname.h"
#include "core/views.h"
#include "front/resp/resp_int.h"

/* RedisBloom's defaults for a key BF.ADD, BF.MADD or BF.INSERT creates. */
#define AUTO_CAPACITY "100"
#define AUTO_ERROR "0.01"

/* The answer to the operation a request queued: kept for its second run. */
static void admin_done(struct conn *c, json_t *report, const void *note)
{
    (void)note;
    json_decref(RC(c)->report);
    RC(c)->report = report ? report
                           : json_pack("{s:b, s:s, s:s}", "ok", 0, "code", "internal", "error",
                                       "the operation ran, but its report was lost");
}

void resp_admin_free(struct conn *c)
{
    json_decref(RC(c)->report);
    RC(c)->report = NULL;
}

/* The answer for the request running now, if it is its second run. */
static json_t *take_report(struct conn *c)
{
    json_t *r = RC(c)->report;
    RC(c)->report = NULL;
    return r;
}

/* Queue op; the request runs again once it is answered. */
static void queue_op(struct conn *c, const struct reload_op *op)
{
    if (!conn_admin(c, op, admin_done, NULL, 0)) {
        reply_coded(c, RESP_ERR_INTERNAL, "out of memory: nothing was queued");
        return;
    }
    RC(c)->again = true;
}

/* An operation's failure, in RedisBloom's words where its clients know them
 * ("item exists", "not found"), else `ERR <code> <message>`. */
static void reply_failure(struct conn *c, enum cmd_err e, const char *msg)
{
    if (e == CMD_ERR_EXISTS)
        reply_error(c, RESP_ERR_EXISTS, "ERR", "item exists");
    else if (e == CMD_ERR_UNKNOWN_FILTER)
        reply_error(c, RESP_ERR_UNKNOWN_FILTER, "ERR", "not found");
    else
        reply_coded(c, resp_code(e), msg);
}

/* Creating and dropping are admin operations (docs/resp.md): the table's
 * rule. false after replying the refusal. */
static bool may_admin(struct conn *c, const struct catalog *cat, const struct resp_verb *v)
{
    struct cmd_call call;
    resp_call_init(c, &call, cat, NULL, 0);
    call.err = cmd_authorize(cat->conf, c->loopback, call.cred);
    if (call.err == CMD_OK)
        return true;
    resp_reply_call_err(c, &call, v->name, 0);
    return false;
}

/* The key as a filter name; false after replying why not (as every BF.*
 * verb words it, and the line protocol's CREATE). */
static bool key_name(struct conn *c, const struct resp_arg *key, struct reload_op *op)
{
    if (!resp_filter_name_ok(c, key))
        return false;
    memcpy(op->name, key->p, key->len);
    op->name[key->len] = '\0';
    return true;
}

/* A CREATE of key as RedisBloom would make it: capacity and error rate,
 * scaling (growth on, doubling) unless NONSCALING, which refuses adds past
 * capacity as RedisBloom does. false after replying why not. */
static bool create_op(struct conn *c, const struct resp_arg *key, const struct resp_bf_opts *o,
                      struct reload_op *op)
{
    memset(op, 0, sizeof(*op));
    op->kind = RELOAD_OP_CREATE;
    if (!key_name(c, key, op))
        return false;
    if (o->expansion && o->expansion != 2) {
        reply_coded(c, RESP_ERR_BAD_OPTION,
                    "bloomgate's growing filters double: EXPANSION 2 only (docs/resp.md)");
        return false;
    }
    char why[160];
    const char *capv = o->capacity ? o->capacity->p : AUTO_CAPACITY;
    size_t capl = o->capacity ? o->capacity->len : strlen(AUTO_CAPACITY);
    const char *errv = o->error ? o->error->p : AUTO_ERROR;
    size_t errl = o->error ? o->error->len : strlen(AUTO_ERROR);
    const char *growth = o->nonscaling ? "off" : "on", *full = o->nonscaling ? "refuse" : "accept";
    if (reload_op_opt(op, "capacity", 8, capv, capl, why, sizeof(why)) != 0 ||
        reload_op_opt(op, "fpr", 3, errv, errl, why, sizeof(why)) != 0 ||
        reload_op_opt(op, "growth", 6, growth, strlen(growth), why, sizeof(why)) != 0 ||
        reload_op_opt(op, "full", 4, full, strlen(full), why, sizeof(why)) != 0) {
        reply_coded(c, RESP_ERR_BAD_OPTION, why);
        return false;
    }
    return true;
}

/* BF.RESERVE's or BF.INSERT's options (respparse.c); false after replying
 * the error as RedisBloom words it. */
static bool read_opts(struct conn *c, const struct resp_request *r, bool insert,
                      struct resp_bf_opts *o)
{
    enum resp_err code;
    char msg[128];
    if (resp_bf_opts_parse(r->argv, r->argc, insert, o, &code, msg, sizeof(msg)) == 0)
        return true;
    reply_error(c, code, "ERR", msg);
    return false;
}

/* BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING]: +OK once
 * made; "item exists" if the key is served. */
RESP_VERB_FN_(resp_verb_reserve)
{
    json_t *rep = take_report(c);
    if (rep) {
        const char *msg;
        enum cmd_err e = cmd_admin_outcome(rep, &msg);
        if (e == CMD_OK)
            reply_simple(c, "OK");
        else
            reply_failure(c, e, msg);
        json_decref(rep);
        return;
    }
    struct resp_bf_opts o = {.error = &r->argv[2], .capacity = &r->argv[3]};
    struct reload_op op;
    if (!may_admin(c, cat, v) || !read_opts(c, r, false, &o) ||
        !create_op(c, &r->argv[1], &o, &op))
        return;
    queue_op(c, &op);
}

/* Before BF.ADD, BF.MADD and BF.INSERT (v->creates): a key that is neither
 * served nor configured is created first, with RedisBloom's defaults or
 * BF.INSERT's options, unless auto_create is off or BF.INSERT says
 * NOCREATE. Inside MULTI too, before the command is queued: EXEC then finds
 * the key. */
bool resp_admin_first(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *v)
{
    json_t *rep = take_report(c);
    const struct resp_arg *key = &r->argv[1];
    if (catalog_find(cat, key->p, key->len) || views_configured(cat, key->p, key->len)) {
        json_decref(rep);
        return false;
    }
    if (rep) {
        /* The second run: made (or made by another client meanwhile) goes
         * on; a refusal is this request's answer. */
        const char *msg;
        enum cmd_err e = cmd_admin_outcome(rep, &msg);
        bool failed = e != CMD_OK;
        if (failed) {
            reply_failure(c, e, msg);
            if (RC(c)->tx.on)
                resp_multi_refused(c);
        }
        json_decref(rep);
        return failed;
    }
    struct resp_bf_opts o = {0};
    bool insert = v->fn == resp_verb_insert;
    if (!cat->conf->auto_create)
        return false;
    if (insert && !read_opts(c, r, true, &o)) {
        if (RC(c)->tx.on)
            resp_multi_refused(c);
        return true;
    }
    if (o.nocreate)
        return false;
    struct reload_op op;
    if (!may_admin(c, cat, v) || !create_op(c, key, &o, &op)) {
        if (RC(c)->tx.on)
            resp_multi_refused(c);
        return true;
    }
    op.if_missing = true;
    queue_op(c, &op);
    return true;
}

/* BF.INSERT key [options] ITEMS item...: the adds, an array of 0/1 as
 * BF.MADD answers (the key made already by resp_admin_first, if it could
 * be). */
RESP_VERB_FN_(resp_verb_insert)
{
    struct resp_bf_opts o = {0};
    if (!read_opts(c, r, true, &o))
        return;
    const struct resp_arg *key = &r->argv[1];
    if (!catalog_find(cat, key->p, key->len) && !views_configured(cat, key->p, key->len)) {
        reply_error(c, RESP_ERR_UNKNOWN_FILTER, "ERR", "not found");
        return;
    }
    struct resp_worker *rw = RW(c);
    size_t n = r->argc - o.items;
    if (n > rw->cw.env.scratch_items) {
        char msg[128];
        snprintf(msg, sizeof(msg), "%zu items, the limit is max_items %zu", n,
                 cmd_limits(cat->conf, rw->cw.env.scratch_items).max_items);
        reply_coded(c, RESP_ERR_TOO_MANY_ITEMS, msg);
        return;
    }
    struct cmd_call call;
    resp_call_init(c, &call, cat, key, n);
    for (size_t i = 0; i < n; i++) {
        rw->cw.env.keys[i].data = r->argv[o.items + i].p;
        rw->cw.env.keys[i].len = r->argv[o.items + i].len;
    }
    cmd_run(&rw->cw.env, CMD_ADD, NULL, &call);
    if (call.err != CMD_OK) {
        resp_reply_call_err(c, &call, v->name, n);
        return;
    }
    size_t cap = RESP_BOOLS_CAP(n);
    conn_reply_used(c, resp_format_bools(reply_room(c, cap), cap, rw->cw.env.bools, n));
}

/* DEL/UNLINK key [key ...]: each served key that was created at run time is
 * dropped, one operation at a time (the request runs again after each);
 * the count dropped, as Redis answers. A key of the config is refused: it
 * is dropped only by editing the config (docs/resp.md). */
RESP_VERB_FN_(resp_verb_del)
{
    struct resp_conn *rc = RC(c);
    json_t *rep = take_report(c);
    if (rep) {
        const char *msg;
        enum cmd_err e = cmd_admin_outcome(rep, &msg);
        json_decref(rep);
        if (e == CMD_OK) {
            rc->del_done++;
        } else if (e != CMD_ERR_UNKNOWN_FILTER) { /* gone meanwhile: not counted */
            reply_failure(c, e, msg);
            rc->del_next = rc->del_done = 0;
            return;
        }
    } else {
        rc->del_next = 1;
        rc->del_done = 0;
        if (!may_admin(c, cat, v)) {
            rc->del_next = 0;
            return;
        }
    }
    for (size_t i = rc->del_next; i < r->argc; i++) {
        const struct fentry *e = catalog_find(cat, r->argv[i].p, r->argv[i].len);
        if (!e)
            continue;
        if (!e->created) {
            char msg[FNAME_MAX + 96];
            snprintf(msg, sizeof(msg), "%.*s is defined in the config: remove it there and reload",
                     (int)e->name_len, e->name);
            reply_coded(c, RESP_ERR_CONFIGURED, msg);
            rc->del_next = rc->del_done = 0;
            return;
        }
        struct reload_op op;
        memset(&op, 0, sizeof(op));
        op.kind = RELOAD_OP_DROP;
        memcpy(op.name, e->name, e->name_len);
        rc->del_next = i + 1;
        queue_op(c, &op);
        if (rc->again)
            return;
        rc->del_next = rc->del_done = 0; /* queue_op replied the error */
        return;
    }
    reply_int(c, (int64_t)rc->del_done);
    rc->del_next = rc->del_done = 0;
}
