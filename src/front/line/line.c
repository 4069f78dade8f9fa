/* The line protocol's glue, see line.h. Worker thread only.
 *
 * The hot path is a pipelined one-item CHECK (its cost per command is in
 * docs/benchmarks.md): parsed in place, hashed and prefetched CHECK_AHEAD
 * requests before it is answered, counted in a per-read tally, its reply
 * gathered in a per-worker batch and handed to the evbuffer once. It skips the
 * command table on purpose: a CHECK needs no auth, its limits were applied by
 * the parser, and an indirect call with its checks would cost more than the
 * prefetch gains. It is taken for filters of exact keys only (one test per
 * CHECK of a flag set when the filter is looked up, cmd_exact_ring); a host
 * or url filter's CHECK expands its item into several probes, in the table
 * like every other request (core/cmd.h). A filter without an exact table
 * pays nothing for the exact phase: its code is out of line (ahead_confirm). */
#include "config.h"

#include "front/line/line.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "adblock/adblock.h"
#include "base/log.h"
#include "base/util.h"
#include "core/cmd.h"
#include "core/cmd_exact.h"
#include "front/line/proto.h"
#include "front/line/proto_fast.h"
#include "front/line/line_int.h"
#include "net/worker.h"

#define REPLY_BATCH 65536 /* the reply batch holds at least this much */
#define REPLY_SLACK 1024  /* and an error line (512) or a short reply besides */
/* The reply batch is the connection layer's (net/conn.h). */
#define reply_flush conn_reply_flush
#define reply_room conn_reply_room
#define reply_str line_reply_str
#define reply_err line_reply_err

void line_reply_str(struct conn *c, const char *s)
{
    size_t n = strlen(s);
    memcpy(reply_room(c, n), s, n);
    LW(c)->cw.reply_len += n;
}

void line_reply_err(struct conn *c, enum proto_err code, const char *msg)
{
    char buf[512];
    size_t n = proto_format_error(buf, sizeof(buf), code, msg);
    if (n > sizeof(buf))
        n = proto_format_error(buf, sizeof(buf), code, "(message too long)");
    memcpy(reply_room(c, n), buf, n);
    LW(c)->cw.reply_len += n;
    struct stats *s = &c->w->stats->s;
    STAT_ADD(s, errors, 1);
    if ((unsigned)code < STATS_CODE_ERRS)
        STAT_ADD(s, errors_by_code[code], 1);
}

/* The table's errors as line-protocol codes. */
enum proto_err line_err(enum cmd_err e)
{
    switch (e) {
    case CMD_ERR_UNKNOWN_FILTER:
        return PROTO_ERR_UNKNOWN_FILTER;
    case CMD_ERR_AUTH_REQUIRED:
        return PROTO_ERR_AUTH_REQUIRED;
    case CMD_ERR_AUTH_FAILED:
        return PROTO_ERR_AUTH_FAILED;
    case CMD_ERR_TOO_MANY_ITEMS:
        return PROTO_ERR_TOO_MANY_ITEMS;
    case CMD_ERR_ITEM_TOO_LONG:
        return PROTO_ERR_ITEM_TOO_LONG;
    case CMD_ERR_BAD_ITEM:
        return PROTO_ERR_BAD_ITEM;
    case CMD_ERR_EXISTS:
        return PROTO_ERR_EXISTS;
    case CMD_ERR_CONFIGURED:
        return PROTO_ERR_CONFIGURED;
    case CMD_ERR_LIMIT:
        return PROTO_ERR_LIMIT;
    case CMD_ERR_BAD_OPTION:
        return PROTO_ERR_BAD_OPTION;
    case CMD_ERR_NO_STATE_DIR:
        return PROTO_ERR_NO_STATE_DIR;
    case CMD_ERR_FAILED:
        return PROTO_ERR_FAILED;
    case CMD_ERR_WRONG_KIND:
        return PROTO_ERR_WRONG_KIND;
    case CMD_ERR_TEXT_TOO_LONG:
        return PROTO_ERR_TEXT_TOO_LONG;
    default:
        return PROTO_ERR_INTERNAL;
    }
}

/* Add the batch's counters to the worker's stats and zero them. Relaxed
 * stores of the owner, as STAT_ADD; see struct line_worker for when. */
void line_tally_flush(struct line_worker *lw)
{
    struct stats *s = &lw->cw.w->stats->s;
    if (lw->tally.commands)
        STAT_ADD(s, commands, lw->tally.commands);
    if (lw->tally.checks) {
        STAT_ADD(s, check_requests, lw->tally.checks);
        STAT_ADD(s, items_checked, lw->tally.items);
        STAT_ADD(s, items_hit, lw->tally.hits);
    }
    if (lw->tally.fchecks) {
        struct fstats *fs = stats_fslot(lw->cw.w->stats, lw->cw.env.id_gen, lw->tally.fid);
        STAT_ADD(fs, checks[STATS_LINE], lw->tally.fchecks);
        STAT_ADD(fs, hits[STATS_LINE], lw->tally.fhits);
        if (lw->tally.fconfirms) {
            STAT_ADD(fs, confirms, lw->tally.fconfirms);
            STAT_ADD(fs, fp_caught, lw->tally.fcaught);
        }
    }
    lw->tally.commands = lw->tally.checks = lw->tally.items = lw->tally.hits = 0;
    lw->tally.fchecks = lw->tally.fhits = lw->tally.fconfirms = lw->tally.fcaught = 0;
}

/* Make e the filter the per-filter tally counts, flushing another's. */
static inline void tally_filter(struct line_worker *lw, const struct fentry *e)
{
    if (lw->tally.fid != e->id) {
        if (lw->tally.fchecks)
            line_tally_flush(lw);
        lw->tally.fid = e->id;
    }
}

/* Count n items looked up, yes of them found; with e, on its filter too (the
 * table counts the filter's columns of what it answers: e NULL then). */
static inline void tally_checks(struct line_worker *lw, const struct fentry *e, size_t n,
                                size_t yes)
{
    lw->tally.checks++;
    lw->tally.items += n;
    lw->tally.hits += yes;
    if (!e)
        return;
    tally_filter(lw, e);
    lw->tally.fchecks += n;
    lw->tally.fhits += yes;
}

/* last_mode from last_ring and ahead_fp: a filter without a table takes the
 * inlined path while the ring holds no CHECK of one with a table. */
static inline void ahead_mode(struct line_worker *lw)
{
    lw->last_mode = lw->last_ring == CMD_RING_NONE                     ? AHEAD_NONE
                    : lw->last_ring == CMD_RING_PLAIN && !lw->ahead_fp ? AHEAD_PLAIN
                                                                       : AHEAD_ANY;
}

/* The filter a request names, or NULL. The last one found in this
 * line_process call is tried first (see struct line_worker). */
static inline const struct fentry *lookup_filter(struct line_worker *lw, const struct catalog *cat,
                                                 const struct proto_token *name)
{
    const struct fentry *e = lw->last_e;
    if (e && lw->last_cat == cat && e->name_len == name->len &&
        proto_name_eq(e->name, name->p, name->len))
        return e;
    e = catalog_find(cat, name->p, name->len);
    if (e) {
        lw->last_cat = cat;
        lw->last_e = e;
        lw->last_name = (struct proto_token){e->name, e->name_len};
        lw->last_ring = cmd_exact_ring(e);
        ahead_mode(lw);
    }
    return e;
}

/* The oldest CHECK waiting in the ring, answered hit: taken off the ring,
 * counted, its reply written. */
__attribute__((always_inline)) static inline void ahead_reply(struct conn *c,
                                                              const struct fentry *e, bool hit)
{
    struct line_worker *lw = LW(c);
    lw->ahead_head = (lw->ahead_head + 1) % CHECK_AHEAD;
    lw->n_ahead--;
    tally_checks(lw, e, 1, hit);
    memcpy(reply_room(c, 4), hit ? "YES\n" : "NO\n", 4);
    lw->cw.reply_len += 3 + hit;
}

/* Answer the oldest one-item CHECK waiting in the ring, which holds no
 * filter with an exact table (ahead_fp false). Inlined by force: gcc kept it
 * a call (its two callers), ~20 instructions a CHECK (callgrind). */
__attribute__((always_inline)) static inline void ahead_answer(struct conn *c)
{
    struct line_worker *lw = LW(c);
    const struct fentry *e = lw->ahead[lw->ahead_head].e;
    ahead_reply(c, e, cmd_exact_answer(e, lw->ahead[lw->ahead_head].h));
}

/* ahead_answer for a ring that may hold a filter with an exact table
 * (ahead_fp): a YES of such a filter is confirmed from the item's
 * fingerprint, and counted on its tally. Out of line, with the rest of the
 * exact phase's ring (check_ahead_any, ahead_drain_any), so that a filter
 * without a table runs none of it and its inlined CHECK is the code it was
 * before the exact phase existed (docs/benchmarks.md). */
__attribute__((noinline)) static void ahead_answer_any(struct conn *c)
{
    struct line_worker *lw = LW(c);
    const struct fentry *e = lw->ahead[lw->ahead_head].e;
    bool hit = cmd_exact_answer(e, lw->ahead[lw->ahead_head].h);
    if (hit && e->v->xd) {
        hit = cmd_exact_confirm_fp(e->v, lw->ahead_fps[lw->ahead_head]);
        tally_filter(lw, e); /* before the counts: it may flush another filter's */
        lw->tally.fconfirms++;
        lw->tally.fcaught += !hit;
    }
    ahead_reply(c, e, hit);
}

/* Answer every CHECK in a ring that may hold a filter with a table; the
 * ring empty, the inlined path is open again. */
__attribute__((noinline)) static void ahead_drain_any(struct conn *c)
{
    struct line_worker *lw = LW(c);
    while (lw->n_ahead)
        ahead_answer_any(c);
    lw->ahead_fp = false;
    ahead_mode(lw);
}

/* Answer every CHECK waiting in the ring, oldest first. Before any other
 * reply is written, and at the end of line_process. */
static void ahead_drain(struct conn *c)
{
    struct line_worker *lw = LW(c);
    if (__builtin_expect(lw->ahead_fp, 0)) {
        ahead_drain_any(c);
        return;
    }
    while (lw->n_ahead)
        ahead_answer(c);
}

/* Put the CHECK of e, h its item's hash, in the ring's next slot. */
__attribute__((always_inline)) static inline unsigned
ahead_push(struct line_worker *lw, const struct fentry *e, struct hash128 h)
{
    unsigned slot = (lw->ahead_head + lw->n_ahead) % CHECK_AHEAD;
    lw->ahead[slot].e = e;
    lw->ahead[slot].h = h;
    lw->n_ahead++;
    lw->tally.commands++;
    return slot;
}

/* A one-item CHECK of filter e (last_mode AHEAD_PLAIN): hash it and prefetch
 * its first cache line now (cmd_exact_hash), answer it once CHECK_AHEAD later
 * ones are parsed (or at a drain) by the table's rule (cmd_exact_answer). The
 * hash is all that is kept of the item, so the input buffer may move under
 * the ring. (The hash taken here rather than by the caller: gcc's code for
 * the loop is 3 instructions a CHECK shorter so, by callgrind.) */
__attribute__((always_inline)) static inline void
check_ahead(struct conn *c, const struct fentry *e, const struct proto_token *item)
{
    struct line_worker *lw = LW(c);
    struct hash128 h = cmd_exact_hash(e, item->p, item->len);
    if (lw->n_ahead == CHECK_AHEAD)
        ahead_answer(c);
    ahead_push(lw, e, h);
}

/* check_ahead for last_mode AHEAD_ANY: e has a fingerprint table (the item's
 * fingerprint is kept beside its hash, and the ring is marked ahead_fp), or
 * the ring already holds such a filter's CHECK. Its hash is computed out of
 * line (cmd_exact_hash_fp): a second inlined copy, gcc made a call of both. */
__attribute__((noinline)) static void check_ahead_any(struct conn *c, const struct fentry *e,
                                                      const struct proto_token *item)
{
    struct line_worker *lw = LW(c);
    uint64_t fp = 0;
    struct hash128 h = cmd_exact_hash_fp(e, item->p, item->len, &fp);
    if (lw->n_ahead == CHECK_AHEAD)
        ahead_answer_any(c);
    unsigned slot = ahead_push(lw, e, h);
    if (e->v->xd) { /* CMD_RING_FP: AHEAD_ANY never names a CMD_RING_NONE filter */
        lw->ahead_fps[slot] = fp;
        lw->ahead_fp = true;
        ahead_mode(lw);
    }
}

/* A failed item command's ERR line: a bad item of a multi-item request is
 * named by its place ("item 3: bad URL: no host"), the one item of
 * CHECK/ADD/MATCH needs no number. */
static void reply_call_err(struct conn *c, const struct proto_request *r,
                           const struct cmd_call *call)
{
    if (call->err == CMD_ERR_BAD_ITEM && r->n_items > 1) {
        char msg[sizeof(call->msg) + 32];
        snprintf(msg, sizeof(msg), "item %zu: %s", call->bad_item, call->msg);
        reply_err(c, PROTO_ERR_BAD_ITEM, msg);
        return;
    }
    reply_err(c, line_err(call->err), call->msg);
}

/* One context word into cur, a type= word read through the worker's memo
 * (line_worker.type_memo). adblock_context_word's result: 1 read, -1 bad
 * (why filled). */
static int line_ctx_word(struct line_worker *lw, const struct proto_token *t, struct cmd_ctx *cur,
                         char *why, size_t whylen)
{
    const char *w = t->p;
    size_t n = t->len;
    bool memo = n > 5 && n <= TYPE_WORD_MAX && (w[0] | 0x20) == 't' && (w[1] | 0x20) == 'y' &&
                (w[2] | 0x20) == 'p' && (w[3] | 0x20) == 'e' && w[4] == '=';
    unsigned h =
        memo ? (unsigned)(n * 7 + (unsigned char)w[5] + (unsigned char)w[n - 1] * 3) % TYPE_MEMO
             : 0;
    if (memo && lw->type_memo[h].len == n && memcmp(lw->type_memo[h].word, w, n) == 0) {
        cur->type = lw->type_memo[h].type;
        return 1;
    }
    int rc = adblock_context_word(w, n, &cur->type, &cur->method, &cur->from, &cur->from_len, why,
                                  whylen);
    if (memo && rc == 1) {
        memcpy(lw->type_memo[h].word, w, n);
        lw->type_memo[h].len = n;
        lw->type_memo[h].type = cur->type;
    }
    return rc;
}

/* The request's context words into call: CHECK's and MATCH's into
 * call->ctx, MCHECK's into one context per item (env->ctxs), each word
 * applying from its item on. False after an ERR bad_request naming a word
 * whose value cannot be read. Every filter takes them; only an adblock
 * filter reads them. */
static bool line_ctx(struct conn *c, const struct proto_request *r, struct cmd_call *call)
{
    if (r->n_ctx == 0)
        return true;
    struct line_worker *lw = LW(c);
    struct cmd_ctx cur = CMD_CTX_NONE;
    bool batch = r->cmd == PROTO_MCHECK;
    size_t w = 0;
    for (size_t i = 0; i <= r->n_items; i++) {
        for (; w < r->n_ctx && (!batch || r->ctx[w].from_item <= i); w++) {
            char why[160];
            if (line_ctx_word(lw, &r->ctx[w].word, &cur, why, sizeof(why)) != 1) {
                reply_err(c, PROTO_ERR_BAD_REQUEST, why);
                return false;
            }
        }
        if (!batch) {
            call->ctx = cur;
            return true;
        }
        if (i < r->n_items)
            lw->cw.env.ctxs[i] = cur;
    }
    call->item_ctx = lw->cw.env.ctxs;
    return true;
}

/* CHECK (unknown filter, host or url keys)/MCHECK/ADD/MADD/ALLOW/UNALLOW/
 * REMOVE through the table; the reply, the row's yes and no words, is
 * written straight into the reply batch. */
static void verb_items(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                       const struct line_verb *v)
{
    enum cmd_id id = v->id;
    bool add = id == CMD_ADD;
    struct line_worker *lw = LW(c);
    struct cmd_call call;
    cmd_call_init(&call, cat, lookup_filter(lw, cat, &r->filter), r->n_items, c->loopback,
                  LC(c)->authed ? CMD_CRED_GOOD : CMD_CRED_NONE);
    call.filter = r->filter.p;
    call.filter_len = r->filter.len;
    call.limits_applied = true; /* proto_next applied them (line_process's lim) */
    if (!line_ctx(c, r, &call))
        return;
    for (size_t i = 0; i < r->n_items; i++) {
        lw->cw.env.keys[i].data = r->items[i].p;
        lw->cw.env.keys[i].len = r->items[i].len;
    }
    cmd_run(&lw->cw.env, id, NULL, &call);
    if (call.err == CMD_ERR_AUTH_REQUIRED || call.err == CMD_ERR_AUTH_FAILED) {
        /* Named as the table names it: MADD is an ADD. */
        char msg[128], name[16];
        size_t i = 0;
        for (const char *p = cmd_table[id].name; *p && i + 1 < sizeof(name); p++)
            name[i++] = (char)(*p - 'a' + 'A');
        name[i] = '\0';
        snprintf(msg, sizeof(msg),
                 cat->conf->admin_token
                     ? "%s needs AUTH <token> first on this connection"
                     : "%s is accepted only from loopback clients when no admin_token is set",
                 name);
        reply_err(c, PROTO_ERR_AUTH_REQUIRED, msg);
        return;
    }
    if (call.err != CMD_OK) {
        reply_call_err(c, r, &call);
        return;
    }
    struct stats *s = &c->w->stats->s;
    if (add) {
        STAT_ADD(s, add_requests, 1);
        STAT_ADD(s, items_added, r->n_items);
        STAT_ADD(s, items_new, call.yes);
    } else if (id == CMD_CHECK) {
        tally_checks(lw, NULL, r->n_items, call.yes);
    }
    /* reply_cap leaves PROTO_BOOLS_CAP(max_items) + REPLY_SLACK, so this fits. */
    size_t cap = PROTO_BOOLS_CAP(r->n_items) + 8;
    size_t n =
        proto_format_bools(reply_room(c, cap), cap, lw->cw.env.bools, r->n_items, v->yes, v->no);
    lw->cw.reply_len += n;
}

/* A rule as written in its list, as one word of a reply line: its rare
 * spaces and tabs as %20 and %09, and so its '%' as %25 (a rule may hold
 * "%20" itself: EasyList's do). */
static void out_rule(struct conn *c, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ' ' && s[j] != '\t' && s[j] != '%')
            j++;
        conn_out_add(c, s + i, j - i);
        if (j < n)
            conn_out_add(c, s[j] == ' ' ? "%20" : s[j] == '\t' ? "%09" : "%25", 3);
        i = j + 1;
    }
}

/* MATCH on an adblock filter: `MATCH <rule>` (the block rule that
 * decided), `ALLOWED <exception> [<rule>]` (the @@ rule, or allow-list
 * entry, that un-blocked, and the rule it overrode if one matched), or
 * `NO`. Written past the batch (rules may be long; MATCH is a debugging
 * verb). */
static void match_adblock(struct conn *c, const struct cmd_call *call)
{
    reply_flush(c);
    if (call->except) {
        conn_out_add(c, "ALLOWED ", 8);
        out_rule(c, call->except, call->except_len);
        if (call->match) {
            conn_out_add(c, " ", 1);
            out_rule(c, call->match, call->match_len);
        }
    } else if (call->match) {
        conn_out_add(c, "MATCH ", 6);
        out_rule(c, call->match, call->match_len);
    } else {
        conn_out_add(c, "NO", 2);
    }
    conn_out_add(c, "\n", 1);
}

/* MATCH <filter> <item> through the table: `MATCH <key>` (the most specific
 * expression of a host or url filter that is present; an exact filter's
 * item itself) or `NO`. Keys are canonical (escaped, no space) or, for an
 * exact filter, the item, which holds no separator: one line either way. */
static void verb_match(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                       const struct line_verb *v)
{
    struct line_worker *lw = LW(c);
    struct cmd_call call;
    cmd_call_init(&call, cat, lookup_filter(lw, cat, &r->filter), 1, c->loopback, CMD_CRED_NONE);
    call.filter = r->filter.p;
    call.filter_len = r->filter.len;
    call.limits_applied = true;
    if (!line_ctx(c, r, &call))
        return;
    lw->cw.env.keys[0].data = r->items[0].p;
    lw->cw.env.keys[0].len = r->items[0].len;
    cmd_run(&lw->cw.env, v->id, NULL, &call);
    if (call.err != CMD_OK) {
        reply_call_err(c, r, &call);
        return;
    }
    tally_checks(lw, NULL, 1, call.yes);
    if (call.e && call.e->v->ab) {
        match_adblock(c, &call);
        return;
    }
    /* An exception decided: `ALLOWED <the allow-list entry>`. */
    const char *word = call.except ? "ALLOWED " : "MATCH ";
    const char *key = call.except ? call.except : call.match;
    size_t wl = strlen(word), kl = call.except ? call.except_len : call.match_len;
    if (!key) {
        reply_str(c, "NO\n");
        return;
    }
    if (kl + wl + 1 > lw->cw.reply_cap) { /* an exact item longer than the batch */
        if (conn_out_add(c, word, wl) && conn_out_add(c, key, kl))
            conn_out_add(c, "\n", 1);
        return;
    }
    char *o = reply_room(c, kl + wl + 1);
    memcpy(o, word, wl);
    memcpy(o + wl, key, kl);
    o[wl + kl] = '\n';
    lw->cw.reply_len += kl + wl + 1;
}

/* Every verb's row, from proto_verbs.h: indexed by enum proto_cmd. */
#define LINE_VERB_(sym, name, args, min, max, usage, ...) [PROTO_##sym] = {__VA_ARGS__},
const struct line_verb line_verbs[PROTO_CMD_COUNT_] = {PROTO_VERBS(LINE_VERB_)};
#undef LINE_VERB_

/* One request that is not a prefetched CHECK: its row's reply. Replies keep
 * their order: whatever writes to c->out directly (conn_out_add), now or
 * later (RELOAD), flushes the reply batch first. */
static inline void do_request(struct conn *c, const struct catalog *cat,
                              const struct proto_request *r)
{
    struct line_worker *lw = LW(c);
    const struct line_verb *v = &line_verbs[r->cmd];
    lw->tally.commands++;
    v->run(c, cat, r, v);
}

/* Parse and answer every complete request in the input buffer, unless the
 * unread output passes max_output (conn_output_full: the client is not
 * reading its replies). `draining` ignores that limit (EOF, shutdown).
 * Returns the requests answered. */
static unsigned line_process(struct conn *c, bool draining)
{
    struct line_worker *lw = LW(c);
    const struct catalog *cat = registry_read(c->w->reg);
    const struct conf *cf = cat->conf;
    struct cmd_limits cl = cmd_limits(cf, lw->cw.env.scratch_items);
    struct proto_limits lim = {cf->max_line, cl.max_item, cl.max_items};
    size_t max_output = cf->max_output;
    struct conn_worker *cw = &lw->cw;
    size_t *scanned = &LC(c)->scanned;
    uint64_t before = lw->tally.commands;
    unsigned answered;
    lw->last_cat = NULL;
    lw->last_e = NULL;
    size_t off = 0;
    while (!c->closing && !c->wait && off < c->in_len) {
        /* The waiting CHECKs are answered before the limit is judged exactly. */
        if (!draining && cw->out_queued + cw->reply_len + 4 * lw->n_ahead >= max_output) {
            ahead_drain(c);
            if (conn_output_full(c, cf, draining))
                break;
        }
        struct proto_request req;
        size_t used = 0;
        enum proto_status st = PROTO_REQUEST;
        struct proto_token fast[2]; /* the fast path's name and item */
        const struct proto_token *name = NULL, *item = NULL;
        bool known = false; /* name is last_e's: no lookup */
        if (proto_check_fast(c->in + off, c->in_len - off, &lim, *scanned,
                             lw->last_e ? &lw->last_name : NULL, &fast[0], &fast[1], &used,
                             &known)) {
            name = &fast[0];
            item = &fast[1];
        } else {
            st = proto_next(c->in + off, c->in_len - off, &lim, &req, lw->tokens, &used, scanned);
            if (st == PROTO_NEED_MORE)
                break;
            if (st == PROTO_REQUEST && req.cmd == PROTO_CHECK && req.n_ctx == 0) {
                name = &req.filter;
                item = &req.items[0];
            }
        }
        if (name) {
            /* A filter found is last_e (lookup_filter), and last_mode says
             * how its CHECK is answered: the one branch on the key kind and
             * the exact table (a host or url filter's CHECK expands its item
             * into many probes, which the table does). */
            const struct fentry *e = known ? lw->last_e : lookup_filter(lw, cat, name);
            if (e && lw->last_mode == AHEAD_PLAIN) {
                off += used;
                check_ahead(c, e, item);
                continue;
            }
            if (e && lw->last_mode == AHEAD_ANY) {
                off += used;
                check_ahead_any(c, e, item);
                continue;
            }
            if (name == &fast[0]) /* the request proto_next would have made */
                proto_check_request(&req, fast[0], fast[1], lw->tokens);
        }
        ahead_drain(c);
        if (st == PROTO_FATAL) {
            reply_err(c, req.err, req.errmsg);
            c->closing = true;
            off = c->in_len;
            break;
        }
        off += used;
        if (st == PROTO_ERROR) {
            reply_err(c, req.err, req.errmsg);
        } else if (st == PROTO_REQUEST) {
            do_request(c, cat, &req);
        }
    }
    ahead_drain(c);
    answered = (unsigned)(lw->tally.commands - before);
    line_tally_flush(lw);
    reply_flush(c);
    conn_consume(c, off);
    return answered;
}

static size_t line_in_limit(const struct conf *cf)
{
    return cf->max_line + 1;
}

/* CONN_FULL_BUDGET: a partial line would pass max_buffered, the budget of
 * every connection's input buffers: say so (what was read of the line is
 * dropped; the connection closes). CONN_FULL_LIMIT cannot happen: a full
 * buffer of max_line + 1 bytes without an LF was refused by the parser. */
static void line_in_full(struct conn *c, enum conn_full why)
{
    if (why == CONN_FULL_BUDGET)
        reply_err(c, PROTO_ERR_INTERNAL,
                  "the server's request buffers are full (max_buffered); try again later");
}

/* A line begun more than request_timeout ago (net/conn.c) that has not ended:
 * say so (the connection closes once it is written). */
static void line_request_timeout(struct conn *c)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "the line did not end within request_timeout (%u s)",
             registry_read(c->w->reg)->conf->request_timeout);
    reply_err(c, PROTO_ERR_BAD_REQUEST, msg);
}

static void line_refuse(struct stats *s)
{
    STAT_ADD(s, errors_by_code[PROTO_ERR_TOO_MANY_CONNECTIONS], 1);
}

/* The reply batch's size: an MCHECK's whole reply fits (conn_worker_new). */
static size_t line_reply_batch(size_t scratch_items)
{
    size_t cap = PROTO_BOOLS_CAP(scratch_items) + REPLY_SLACK;
    return cap < REPLY_BATCH ? REPLY_BATCH : cap;
}

/* Main thread, before the worker runs. */
static int line_worker_init(struct conn_worker *cw)
{
    struct line_worker *lw = (struct line_worker *)cw;
    lw->tokens = calloc(cw->env.scratch_items, sizeof(*lw->tokens));
    return lw->tokens ? 0 : -1;
}

static void line_worker_free(struct conn_worker *cw)
{
    free(((struct line_worker *)cw)->tokens);
}

#define LINE_ERR_NAME_(sym, name) name,
static const char *const line_err_names[] = {NULL, PROTO_ERRORS(LINE_ERR_NAME_)};
#undef LINE_ERR_NAME_

const struct conn_ops line_ops = {
    .name = "line",
    .proto = STATS_LINE,
    .priv_size = sizeof(struct line_conn),
    .err_names = line_err_names,
    .n_err = sizeof(line_err_names) / sizeof(line_err_names[0]),
    .worker_size = sizeof(struct line_worker),
    .worker_init = line_worker_init,
    .worker_free = line_worker_free,
    .reply_batch = line_reply_batch,
    .process = line_process,
    .in_limit = line_in_limit,
    .in_full = line_in_full,
    .request_timeout = line_request_timeout,
    .refusal = "ERR too_many_connections the server is at max_connections\n",
    .refuse = line_refuse,
    .stop = conn_stop_drain,
};
