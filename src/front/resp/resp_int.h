/* resp_int: what the Redis protocol front's files share (resp.c the
 * dispatch and the BF.* verbs, resp_multi.c transactions, resp_keys.c the
 * key-space verbs): the per-connection and per-worker state, the reply
 * helpers over the connection's reply batch, the verbs' functions. Worker
 * thread that owns the connection. */
#ifndef BLOOMGATE_RESP_INT_H
#define BLOOMGATE_RESP_INT_H

#include <stdio.h>
#include <string.h>

#include "front/resp/resp.h"
#include "front/resp/respparse.h"
#include "net/conn.h"
#include "net/worker.h"

#define REPLY_BATCH 65536 /* the reply batch holds at least this much */
#define REPLY_SLACK 1024  /* and an error or a short reply besides */
#define EXTRA_ARGS 8      /* arguments beyond max_items a request may hold (HELLO's) */
#define FRAMING_PER_ARG 16

/* A transaction being queued (MULTI ... EXEC): each command as its verb's
 * row (a pointer into resp.c's table: resp_multi.c never names the table)
 * and its argument count (u32), TX_HEAD bytes, then each argument
 * as its length (u32) and its bytes, in one buffer that grows up to the
 * queue's bound (resp_multi.c). */
#define TX_HEAD (sizeof(const struct resp_verb *) + 4)
struct resp_tx {
    bool on;      /* between MULTI and EXEC or DISCARD */
    bool aborted; /* a command was refused while queued: EXEC answers EXECABORT */
    size_t n;     /* commands queued */
    char *buf;    /* NULL until the first command is queued */
    size_t len, cap;
};

/* Per connection. */
struct resp_conn {
    struct resp_scan scan; /* resp_next's resume hint */
    bool authed;           /* AUTH succeeded on this connection */
    struct resp_tx tx;     /* MULTI's queue */
    /* A request waiting on the reload thread (resp_admin.c): it stays in
     * the input buffer (again: resp_process leaves it there) and is run again
     * once `report` holds the answer to the operation it queued. */
    bool again;
    json_t *report;            /* the answer, for the request run again; NULL: none yet */
    size_t del_next, del_done; /* DEL/UNLINK: the next key to drop, and how many were */
};

/* Per worker. */
struct resp_worker {
    struct conn_worker cw; /* env (proto = STATS_RESP) and the reply batch (net/conn.h) */
    struct resp_arg *args;
    size_t max_args;
};

static inline struct resp_worker *RW(struct conn *c)
{
    return c->fw;
}

static inline struct resp_conn *RC(struct conn *c)
{
    return conn_priv(c);
}

/* The most bytes one multibulk request may take under cf: the line it stands
 * for (max_line) plus framing for each argument (`$N\r\n` and a CRLF). */
static inline size_t resp_max_frame(const struct conf *cf)
{
    return cf->max_line + FRAMING_PER_ARG * ((size_t)cf->max_items + EXTRA_ARGS) + 64;
}

/* The reply batch is the connection layer's (net/conn.h). */
#define reply_flush conn_reply_flush
#define reply_room conn_reply_room
#define reply_bytes conn_reply_bytes

static inline void reply_int(struct conn *c, int64_t v)
{
    conn_reply_used(c, resp_format_int(reply_room(c, 24), 24, v));
}

static inline void reply_header(struct conn *c, char type, int64_t n)
{
    conn_reply_used(c, resp_format_header(reply_room(c, 24), 24, type, n));
}

static inline void reply_simple(struct conn *c, const char *s)
{
    size_t n = strlen(s) + 3;
    conn_reply_used(c, resp_format_simple(reply_room(c, n), n, s));
}

static inline void reply_bulk(struct conn *c, const void *p, size_t len)
{
    reply_header(c, '$', (int64_t)len);
    reply_bytes(c, p, len);
    reply_bytes(c, "\r\n", 2);
}

static inline void reply_cstr(struct conn *c, const char *s)
{
    reply_bulk(c, s, strlen(s));
}

/* An error reply `-<prefix> <msg>`, counted under code. */
static inline void reply_error(struct conn *c, enum resp_err code, const char *prefix,
                               const char *msg)
{
    char buf[512];
    size_t n = resp_format_error(buf, sizeof(buf), prefix, msg);
    if (n > sizeof(buf))
        n = resp_format_error(buf, sizeof(buf), prefix, "(message too long)");
    reply_bytes(c, buf, n);
    if ((unsigned)code < STATS_CODE_ERRS)
        STAT_ADD(&c->w->stats->s, resp_errors_by_code[code], 1);
}

/* `-ERR <code> <msg>`: bloomgate's own errors, worded as on the line protocol. */
static inline void reply_coded(struct conn *c, enum resp_err code, const char *msg)
{
    char buf[400];
    snprintf(buf, sizeof(buf), "%s %s", resp_err_name(code), msg);
    reply_error(c, code, "ERR", buf);
}

/* Redis's own wording for a wrong argument count. */
static inline void reply_arity(struct conn *c, const struct resp_arg *name)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "wrong number of arguments for '%.*s' command",
             (int)(name->len < 64 ? name->len : 64), name->p);
    for (char *p = buf; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p + 32);
    reply_error(c, RESP_ERR_WRONG_ARITY, "ERR", buf);
}

#define RESP_VERB_FN_(name)                                                                        \
    void name(struct conn *c, const struct catalog *cat, const struct resp_request *r,             \
              const struct resp_verb *v)

/* resp.c: whether key is a filter name (base/fname.h); if not, replies the
 * error that states the rule. Every verb whose key names a filter asks it
 * first. */
bool resp_filter_name_ok(struct conn *c, const struct resp_arg *key);

/* resp_multi.c: MULTI, EXEC, DISCARD, WATCH, UNWATCH. */
RESP_VERB_FN_(resp_verb_multi);
RESP_VERB_FN_(resp_verb_exec);
RESP_VERB_FN_(resp_verb_discard);
RESP_VERB_FN_(resp_verb_watch);
RESP_VERB_FN_(resp_verb_unwatch);
/* Inside MULTI, a request for verb d (NULL: an unknown command; arity_ok:
 * its argument count passed) is queued and answered +QUEUED, or refused
 * at once and the transaction marked to fail at EXEC. */
void resp_multi_queue(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *d, bool arity_ok);
/* A request refused whole by the parser (too many arguments) while queuing:
 * the transaction fails at EXEC. */
void resp_multi_refused(struct conn *c);
/* The connection closes: free its queue. */
void resp_multi_free(struct conn *c);
/* Reply to an unknown command as Redis words it (resp.c). */
void resp_reply_unknown(struct conn *c, const struct resp_arg *name);

/* resp.c: the RESP code of a command table error. */
enum resp_err resp_code(enum cmd_err e);
/* A call through the command table for key (NULL: none), with the
 * connection's credential; inline, as it is on every BF.EXISTS. */
static inline void resp_call_init(struct conn *c, struct cmd_call *call, const struct catalog *cat,
                                  const struct resp_arg *key, size_t n_items)
{
    cmd_call_init(call, cat, NULL, n_items, c->loopback,
                  RC(c)->authed ? CMD_CRED_GOOD : CMD_CRED_NONE);
    call->filter = key ? key->p : NULL;
    call->filter_len = key ? key->len : 0;
}
/* resp_call.c: a table call's error replied as RedisBloom's clients expect. */
void resp_reply_call_err(struct conn *c, const struct cmd_call *call, const char *cmd,
                         size_t n_items);

/* resp_admin.c: filters made at run time. BF.RESERVE, BF.INSERT, DEL,
 * UNLINK; and before BF.ADD, BF.MADD and BF.INSERT run (or are queued in
 * MULTI), the creation of a missing key (auto_create): true when the request
 * was deferred (c waits for the reload thread; it runs again after) or
 * answered. */
RESP_VERB_FN_(resp_verb_reserve);
RESP_VERB_FN_(resp_verb_insert);
RESP_VERB_FN_(resp_verb_del);
bool resp_admin_first(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *v);
/* The connection closes: what resp_admin.c holds for it. */
void resp_admin_free(struct conn *c);

/* resp_keys.c: EXISTS, TYPE, KEYS, SCAN over the served filter names. */
RESP_VERB_FN_(resp_verb_exists);
RESP_VERB_FN_(resp_verb_type);
RESP_VERB_FN_(resp_verb_keys);
RESP_VERB_FN_(resp_verb_scan);

#endif
