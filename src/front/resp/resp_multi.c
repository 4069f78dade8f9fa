/* Transactions on the Redis protocol front: MULTI, EXEC, DISCARD, WATCH,
 * UNWATCH, as Redis answers them (multi.c), so a client's default pipeline
 * (redis-py's r.pipeline(), which wraps its commands in MULTI ... EXEC)
 * works. Worker thread that owns the connection.
 *
 * After MULTI each command is checked (known, its argument count) and
 * copied into the connection's queue, answered +QUEUED; a refused one is
 * answered at once and makes EXEC answer -EXECABORT, as Redis does. EXEC
 * runs the queue in order, within the one call that read it, and answers
 * one array of their replies. What that gives (docs/resp.md): no other
 * command of this connection, nor of any connection of this worker, runs
 * between them, and they all see the same catalog (a reload publishes
 * before or after them); other workers' connections may add to the same
 * filters meanwhile; each add is journaled as it runs, and a command that
 * fails does not undo the others. WATCH is refused: there is no version of
 * a filter to compare at EXEC. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/resp/resp_int.h"

#define QUEUE_START 4096 /* the queue's first allocation */

/* -ERR unknown command, naming it (resp.c's dispatch, and a verb refused
 * while queued). */
void resp_reply_unknown(struct conn *c, const struct resp_arg *name)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "unknown command '%.*s'", (int)(name->len < 64 ? name->len : 64),
             name->p);
    reply_error(c, RESP_ERR_UNKNOWN_COMMAND, "ERR", msg);
}

static void tx_reset(struct resp_tx *tx)
{
    free(tx->buf);
    *tx = (struct resp_tx){0};
}

void resp_multi_free(struct conn *c)
{
    tx_reset(&RC(c)->tx);
}

/* The queue's bounds under cf: what one request may hold, max_items
 * commands and the bytes of one multibulk request (resp_max_frame), so a
 * transaction costs a connection no more than a large request would. */
static size_t tx_max_cmds(const struct conf *cf)
{
    return cf->max_items;
}

static void put_u32(char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static uint32_t get_u32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Refuse the command being queued: say why (msg, counted under code) and
 * make EXEC fail. */
static void refuse(struct conn *c, enum resp_err code, const char *msg)
{
    reply_coded(c, code, msg);
    RC(c)->tx.aborted = true;
}

void resp_multi_refused(struct conn *c)
{
    RC(c)->tx.aborted = true;
}

void resp_multi_queue(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *d, bool arity_ok)
{
    struct resp_tx *tx = &RC(c)->tx;
    if (!d) {
        resp_reply_unknown(c, &r->argv[0]);
        tx->aborted = true;
        return;
    }
    if (!arity_ok) {
        reply_arity(c, &r->argv[0]);
        tx->aborted = true;
        return;
    }
    size_t need = TX_HEAD;
    for (size_t i = 0; i < r->argc; i++)
        need += 4 + r->argv[i].len;
    const struct conf *cf = cat->conf;
    size_t max_bytes = resp_max_frame(cf);
    char msg[160];
    if (tx->n >= tx_max_cmds(cf)) {
        snprintf(msg, sizeof(msg),
                 "the transaction holds %zu commands, the limit is max_items (%zu): EXEC will "
                 "discard it",
                 tx->n, tx_max_cmds(cf));
        refuse(c, RESP_ERR_TOO_MANY_ITEMS, msg);
        return;
    }
    if (tx->len + need > max_bytes) {
        snprintf(msg, sizeof(msg),
                 "the transaction would take %zu bytes, the limit is %zu (one request's): EXEC "
                 "will discard it",
                 tx->len + need, max_bytes);
        refuse(c, RESP_ERR_TOO_MANY_ITEMS, msg);
        return;
    }
    if (tx->len + need > tx->cap) {
        size_t cap = tx->cap ? tx->cap : QUEUE_START;
        while (cap < tx->len + need)
            cap *= 2;
        if (cap > max_bytes)
            cap = max_bytes;
        char *nb = realloc(tx->buf, cap);
        if (!nb) {
            refuse(c, RESP_ERR_INTERNAL,
                   "out of memory queuing the command: EXEC will discard "
                   "the transaction");
            return;
        }
        tx->buf = nb;
        tx->cap = cap;
    }
    char *o = tx->buf + tx->len;
    memcpy(o, &d, sizeof d);
    put_u32(o + sizeof d, (uint32_t)r->argc);
    o += TX_HEAD;
    for (size_t i = 0; i < r->argc; i++) {
        put_u32(o, (uint32_t)r->argv[i].len);
        if (r->argv[i].len)
            memcpy(o + 4, r->argv[i].p, r->argv[i].len);
        o += 4 + r->argv[i].len;
    }
    tx->len += need;
    tx->n++;
    reply_simple(c, "QUEUED");
}

RESP_VERB_FN_(resp_verb_multi)
{
    struct resp_tx *tx = &RC(c)->tx;
    if (tx->on) { /* Redis answers it and leaves the transaction as it was */
        reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "MULTI calls can not be nested");
        return;
    }
    tx_reset(tx);
    tx->on = true;
    reply_simple(c, "OK");
}

RESP_VERB_FN_(resp_verb_discard)
{
    struct resp_tx *tx = &RC(c)->tx;
    if (!tx->on) {
        reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "DISCARD without MULTI");
        return;
    }
    tx_reset(tx);
    reply_simple(c, "OK");
}

/* EXEC: the queued commands in order, each answered in one array, within
 * this call (see the file's comment for what that makes atomic). Their
 * arguments are rebuilt in the worker's argument storage, which the parser
 * lends each request: EXEC's own arguments are no longer needed. */
RESP_VERB_FN_(resp_verb_exec)
{
    struct resp_tx *tx = &RC(c)->tx;
    if (!tx->on) {
        reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "EXEC without MULTI");
        return;
    }
    if (tx->aborted) {
        tx_reset(tx);
        reply_error(c, RESP_ERR_BAD_ARGUMENT, "EXECABORT",
                    "Transaction discarded because of previous errors.");
        return;
    }
    struct resp_tx q = *tx;
    *tx = (struct resp_tx){0}; /* out of MULTI before the queue runs */
    struct resp_worker *rw = RW(c);
    reply_header(c, '*', (int64_t)q.n);
    const char *p = q.buf;
    for (size_t k = 0; k < q.n; k++) {
        const struct resp_verb *d;
        memcpy(&d, p, sizeof d);
        struct resp_request qr = {.argv = rw->args, .argc = get_u32(p + sizeof d)};
        p += TX_HEAD;
        for (size_t i = 0; i < qr.argc; i++) {
            rw->args[i].len = get_u32(p);
            rw->args[i].p = p + 4;
            p += 4 + rw->args[i].len;
        }
        d->fn(c, cat, &qr, d);
    }
    free(q.buf);
}

/* WATCH makes EXEC fail if a watched key changed since. A filter has no
 * version to compare: adds come from every connection and front, and a
 * reload swaps it whole; answering +OK and then never aborting would break
 * a client's optimistic lock without a word, so WATCH is refused. */
RESP_VERB_FN_(resp_verb_watch)
{
    reply_error(c, RESP_ERR_UNKNOWN_COMMAND, "ERR",
                "WATCH is not supported: bloomgate keeps no per-filter version for EXEC to "
                "compare (MULTI/EXEC without WATCH works)");
}

RESP_VERB_FN_(resp_verb_unwatch)
{
    reply_simple(c, "OK");
}
