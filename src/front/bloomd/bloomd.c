/* bloomd's text protocol's glue, see bloomd.h. Worker thread only.
 *
 * Every lookup and add goes through the command table (core/cmd.c) with the
 * table's checks: the filter served, the auth rule for adds (loopback, or
 * `auth <token>` when an admin_token is set: bloomd has no credentials),
 * max_items and max_item, the key kind, the journal before an add. list and
 * info read the table's INFO of each filter and the per-filter counters
 * every front keeps (struct fstats), and answer in bloomd's shapes. Replies
 * are gathered in the worker's reply batch and handed to the connection's
 * evbuffer once per read, as the other fronts do. */
#include "config.h"

#include "front/bloomd/bloomd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fname.h"
#include "base/log.h"
#include "base/util.h"
#include "core/cmd.h"
#include "core/gate.h"
#include "net/worker.h"

#define REPLY_BATCH 65536 /* the reply batch holds at least this much */
#define REPLY_SLACK 1024  /* and an error or an info block besides */

/* Per connection. */
struct bloomd_conn {
    size_t scanned; /* bloomd_next's resume hint */
    bool authed;    /* `auth <token>` succeeded on this connection */
    /* The request at the head of the input named a filter not served and
     * waits for the operations queued before it (again: leave it in the
     * input; waited: it has, so its next run answers what it finds). */
    bool again, waited;
};

/* Per worker. */
struct bloomd_worker {
    struct conn_worker cw;     /* env (proto = STATS_BLOOMD) and the reply batch (net/conn.h) */
    struct bloomd_token *keys; /* scratch_items tokens: a request's keys */
};

static inline struct bloomd_worker *BW(struct conn *c)
{
    return c->fw;
}

static inline struct bloomd_conn *BC(struct conn *c)
{
    return conn_priv(c);
}

static void reply_str(struct conn *c, const char *s)
{
    conn_reply_bytes(c, s, strlen(s));
}

/* A reply that is one of bloomd's errors: counted, then written. */
static void reply_fail(struct conn *c, const char *s)
{
    STAT_ADD(&c->w->stats->s, bloomd_errors, 1);
    reply_str(c, s);
}

/* `Client Error: <msg>`, counted. */
static void reply_client_error(struct conn *c, const char *msg)
{
    char buf[512];
    size_t n = bloomd_format_client_error(buf, sizeof(buf), msg);
    if (n > sizeof(buf))
        n = bloomd_format_client_error(buf, sizeof(buf), "(message too long)");
    STAT_ADD(&c->w->stats->s, bloomd_errors, 1);
    conn_reply_bytes(c, buf, n);
}

static void call_init(struct conn *c, struct cmd_call *call, const struct catalog *cat,
                      const struct bloomd_request *r, size_t n_items)
{
    cmd_call_init(call, cat, NULL, n_items, c->loopback,
                  BC(c)->authed ? CMD_CRED_GOOD : CMD_CRED_NONE);
    call->filter = r->has_filter ? r->filter.p : NULL;
    call->filter_len = r->has_filter ? r->filter.len : 0;
}

/* A failed table call in bloomd's words where bloomd has them (Filter does
 * not exist, Internal Error), `Client Error: <why>` for bloomgate's own
 * refusals (auth, limits, a key a host or url filter cannot read, a full
 * `full refuse` filter), which bloomd never makes. */
static void reply_call_err(struct conn *c, const struct cmd_call *call, enum bloomd_verb v,
                           size_t n_items)
{
    char msg[sizeof(call->msg) + 96];
    switch (call->err) {
    case CMD_ERR_UNKNOWN_FILTER:
        reply_fail(c, BLOOMD_NOT_EXIST);
        return;
    case CMD_ERR_AUTH_REQUIRED:
        snprintf(msg, sizeof(msg),
                 call->cat->conf->admin_token
                     ? "%s needs auth <token> first on this connection"
                     : "%s is accepted only from loopback clients when no admin_token is set",
                 bloomd_verb_name(v));
        reply_client_error(c, msg);
        return;
    case CMD_ERR_AUTH_FAILED:
        reply_client_error(c, "wrong token");
        return;
    case CMD_ERR_BAD_ITEM:
        if (n_items > 1) {
            snprintf(msg, sizeof(msg), "key %zu: %s", call->bad_item, call->msg);
            reply_client_error(c, msg);
            return;
        }
        reply_client_error(c, call->msg);
        return;
    case CMD_ERR_TOO_MANY_ITEMS:
    case CMD_ERR_ITEM_TOO_LONG:
        reply_client_error(c, call->msg);
        return;
    case CMD_ERR_UNAVAILABLE:
        if (gate_is_full(call->msg)) {
            reply_client_error(c, call->msg);
            return;
        }
        /* the journal refused; the log says why */
        __attribute__((fallthrough));
    default:
        log_warn_limited("bloomd protocol: %s from %s: %s", bloomd_verb_name(v), c->peer,
                         call->msg);
        reply_fail(c, BLOOMD_INTERNAL);
        return;
    }
}

/* An access of bloomd's (check, set, multi, bulk, info, flush) to a closed
 * filter: bloomd pages it back in, so it is no longer closed and clear
 * refuses it again (docs/bloomd.md). */
static void fault_in(const struct fentry *e)
{
    if (e && atomic_load_explicit(&e->st->closed, memory_order_relaxed))
        atomic_store(&e->st->closed, false);
}

/* The barrier's answer: the request that waited runs again (the
 * connection layer resumes processing its input). Worker thread. */
static void barrier_done(struct conn *c, json_t *report, const void *note)
{
    (void)note;
    json_decref(report);
    BC(c)->waited = true;
}

/* A key command naming a filter not served, on a server that makes filters
 * at run time: wait for the operations queued before it (a barrier on the
 * reload thread) and run it again, so a create another connection sent
 * first is served by then, as bloomd's synchronous create would be. Once a
 * request: false when it has waited already (answer "Filter does not
 * exist") or nothing could be queued. Worker thread. */
static bool wait_for_creates(struct conn *c, const struct catalog *cat)
{
    if (BC(c)->waited || !cat->conf->state_dir)
        return false;
    struct reload_op op;
    memset(&op, 0, sizeof(op));
    op.kind = RELOAD_OP_BARRIER;
    if (!conn_admin(c, &op, barrier_done, NULL, 0))
        return false;
    BC(c)->again = true;
    return true;
}

/* check, multi, set, bulk: the keys through the table (CHECK or ADD), the
 * answers as bloomd's Yes/No words: a check's Yes is "found", a set's Yes
 * is "new" (bloomd's set_hits), as ADD's NEW. */
static void verb_keys(struct conn *c, const struct catalog *cat, const struct bloomd_request *r,
                      const struct bloomd_verb_row *v)
{
    struct bloomd_worker *bw = BW(c);
    size_t n = r->n_keys;
    for (size_t i = 0; i < n; i++) {
        bw->cw.env.keys[i].data = r->keys[i].p;
        bw->cw.env.keys[i].len = r->keys[i].len;
    }
    struct cmd_call call;
    call_init(c, &call, cat, r, n);
    cmd_run(&bw->cw.env, v->id, NULL, &call);
    if (call.err == CMD_ERR_UNKNOWN_FILTER && wait_for_creates(c, cat))
        return;
    if (call.err != CMD_OK) {
        reply_call_err(c, &call, r->verb, n);
        return;
    }
    fault_in(call.e);
    size_t cap = BLOOMD_BOOLS_CAP(n);
    conn_reply_used(c, bloomd_format_bools(conn_reply_room(c, cap), cap, bw->cw.env.bools, n));
}

/* What list and info say of a filter, from the table's INFO of it. */
struct figures {
    double prob;
    uint64_t capacity, bytes, items;
};

static uint64_t jint(json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 ? (uint64_t)v : 0;
}

/* e's figures through the table's INFO; false if it answered none. A
 * growing filter's capacity is its sub-filters' summed, as bloomd's
 * scalable filter counts its layers. */
static bool figures_of(struct conn *c, const struct catalog *cat, const struct fentry *e,
                       struct figures *fig)
{
    struct cmd_call call;
    cmd_call_init(&call, cat, e, 0, c->loopback, CMD_CRED_NONE);
    cmd_run(&BW(c)->cw.env, CMD_INFO, NULL, &call);
    if (call.err != CMD_OK || !json_is_object(call.json)) {
        json_decref(call.json);
        return false;
    }
    json_t *j = call.json;
    fig->prob = json_number_value(json_object_get(j, "fpr_target"));
    fig->capacity = jint(j, "capacity");
    fig->bytes = jint(j, "bytes");
    fig->items = jint(j, "items");
    json_t *subs = json_object_get(json_object_get(j, "growth"), "sub_filters");
    if (json_is_array(subs) && json_array_size(subs) > 0) {
        size_t i;
        json_t *sub;
        fig->capacity = 0;
        json_array_foreach(subs, i, sub)
        {
            fig->capacity += jint(sub, "capacity");
        }
    }
    json_decref(j);
    return true;
}

static int by_name(const void *a, const void *b)
{
    const struct fentry *x = *(const struct fentry *const *)a,
                        *y = *(const struct fentry *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int d = memcmp(x->name, y->name, n);
    return d ? d : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

/* list [prefix]: START, `name prob bytes capacity size` for each served
 * filter whose name starts with prefix, in name order as bloomd's radix
 * tree gives them, END. */
static void verb_list(struct conn *c, const struct catalog *cat, const struct bloomd_request *r,
                      const struct bloomd_verb_row *v)
{
    const struct fentry **sorted = cat->n ? malloc(cat->n * sizeof(*sorted)) : NULL;
    if (cat->n && !sorted) {
        reply_fail(c, BLOOMD_INTERNAL);
        return;
    }
    size_t m = 0;
    for (size_t i = 0; i < cat->n; i++) {
        const struct fentry *e = &cat->entries[i];
        if (r->arg.len == 0 ||
            (e->name_len >= r->arg.len && memcmp(e->name, r->arg.p, r->arg.len) == 0))
            sorted[m++] = e;
    }
    if (m > 1)
        qsort(sorted, m, sizeof(*sorted), by_name);
    reply_str(c, BLOOMD_START);
    for (size_t i = 0; i < m; i++) {
        struct figures fig;
        if (!figures_of(c, cat, sorted[i], &fig))
            continue; /* bloomd skips a filter it cannot read, too */
        char line[REGISTRY_NAME_MAX + 160];
        size_t n = bloomd_format_list_line(line, sizeof(line), sorted[i]->name, sorted[i]->name_len,
                                           fig.prob, fig.bytes, fig.capacity, fig.items);
        if (n <= sizeof(line))
            conn_reply_bytes(c, line, n);
    }
    reply_str(c, BLOOMD_END);
    free(sorted);
}

/* info <filter>: bloomd's 13 figures. capacity, probability, size (items)
 * and storage (bytes) are the filter's; checks and sets are the filter's
 * counters summed over every front since it was loaded (or the daemon
 * started), as bloomd counts since it loaded the filter; page_ins and
 * page_outs are 0 and in_memory 1, since bloomgate never unmaps a served
 * filter (docs/bloomd.md). */
static void verb_info(struct conn *c, const struct catalog *cat, const struct bloomd_request *r,
                      const struct bloomd_verb_row *v)
{
    struct cmd_call call;
    call_init(c, &call, cat, r, 0);
    if (cmd_admit(&call, v->id) != CMD_OK) {
        reply_call_err(c, &call, r->verb, 0);
        return;
    }
    if (!call.e) { /* configured, not loaded: not a filter bloomd would list */
        reply_fail(c, BLOOMD_NOT_EXIST);
        return;
    }
    fault_in(call.e);
    struct figures fig;
    if (!figures_of(c, cat, call.e, &fig)) {
        reply_fail(c, BLOOMD_INTERNAL);
        return;
    }
    struct stats_src src;
    server_stats_src(c->w->srv, &src);
    struct fstats fs;
    stats_sum_filter(&src, call.e->id, &fs);
    struct bloomd_info in = {.capacity = fig.capacity,
                             .in_memory = 1,
                             .probability = fig.prob,
                             .size = fig.items,
                             .storage = fig.bytes};
    for (int p = 0; p < STATS_N_PROTO; p++) {
        uint64_t checks = STAT_GET(&fs, checks[p]), hits = STAT_GET(&fs, hits[p]);
        uint64_t adds = STAT_GET(&fs, adds[p]), news = STAT_GET(&fs, added_new[p]);
        in.check_hits += hits;
        in.check_misses += checks > hits ? checks - hits : 0;
        in.set_hits += news;
        in.set_misses += adds > news ? adds - news : 0;
    }
    char buf[1024];
    size_t n = bloomd_format_info(buf, sizeof(buf), &in);
    if (n == 0 || n > sizeof(buf)) {
        reply_fail(c, BLOOMD_INTERNAL);
        return;
    }
    conn_reply_bytes(c, buf, n);
}

/* flush [filter]: Done, or Filter does not exist for a name not served.
 * bloomd writes its dirty pages out; bloomgate's journal is synced by its
 * `fsync` setting whatever the client asks, so there is nothing to start
 * here (the line protocol's FLUSH, a created filter's checkpoint, comes
 * with the wiring of bloomd_admin to filters made at run time). */
static void verb_flush(struct conn *c, const struct catalog *cat, const struct bloomd_request *r,
                       const struct bloomd_verb_row *v)
{
    const struct fentry *e = r->has_filter ? catalog_find(cat, r->filter.p, r->filter.len) : NULL;
    if (r->has_filter && !e) {
        reply_fail(c, BLOOMD_NOT_EXIST);
        return;
    }
    fault_in(e);
    reply_str(c, BLOOMD_DONE);
}

/* auth <token>: bloomgate's own verb (bloomd has no credentials): the
 * admin_token, as the line protocol's AUTH, for sets from off loopback. */
static void verb_auth(struct conn *c, const struct catalog *cat, const struct bloomd_request *r,
                      const struct bloomd_verb_row *v)
{
    const char *tok = cat->conf->admin_token;
    if (!tok) {
        reply_client_error(c, "no admin_token is configured on this server");
        return;
    }
    if (util_token_equal(r->arg.p, r->arg.len, tok)) {
        BC(c)->authed = true;
        reply_str(c, BLOOMD_DONE);
        return;
    }
    BC(c)->authed = false;
    log_warn_limited("auth failed from %s (bloomd protocol)", c->peer);
    reply_client_error(c, "wrong token");
}

/* create, drop or clear is over (the reload thread's report): bloomd's
 * words. Done; Exists for a name served; Filter does not exist; Filter is
 * not proxied (clear of a filter not closed); a refusal of
 * bloomgate's own (a config filter, a limit, a bad option) as a Client
 * Error naming it; Internal Error when the disk refused. */
static void admin_answer(struct conn *c, json_t *report, const void *note)
{
    (void)note;
    conn_reply_flush(c);
    const char *msg;
    enum cmd_err e = cmd_admin_outcome(report, &msg);
    const char *code = json_string_value(json_object_get(report, "code"));
    if (code && strcmp(code, "not_closed") == 0) {
        reply_fail(c, BLOOMD_NOT_PROXIED);
        json_decref(report);
        conn_reply_flush(c);
        return;
    }
    switch (e) {
    case CMD_OK:
        reply_str(c, json_is_true(json_object_get(report, "existed")) ? BLOOMD_EXISTS
                                                                       : BLOOMD_DONE);
        break;
    case CMD_ERR_EXISTS:
        reply_fail(c, BLOOMD_EXISTS);
        break;
    case CMD_ERR_UNKNOWN_FILTER:
        reply_fail(c, BLOOMD_NOT_EXIST);
        break;
    case CMD_ERR_FAILED:
    case CMD_ERR_INTERNAL:
        log_warn_limited("bloomd front: %s", msg);
        reply_fail(c, BLOOMD_INTERNAL);
        break;
    default:
        reply_client_error(c, msg);
        break;
    }
    json_decref(report);
    conn_reply_flush(c);
}

/* create, drop, close, clear: filters made at run time (docs/created.md).
 * create, drop and clear are operations of the reload thread (conn_admin),
 * answered when done, the connection reading nothing meanwhile; the name
 * and options are copied into the operation (r's tokens point into c->in).
 * close only marks the filter (struct fstate's closed), which clear needs.
 * bloomd's in_memory is taken and ignored: every bloomgate filter is in
 * memory, its journal on disk. */
void bloomd_admin(struct conn *c, const struct catalog *cat, const struct bloomd_request *r,
                  const struct bloomd_verb_row *v)
{
    (void)v;
    if (r->verb == BLOOMD_CLOSE) {
        /* bloomd unmaps the filter and keeps it listed; a check pages it
         * back in. bloomgate keeps its bits in memory and only marks it
         * closed, until the next access of this front (fault_in). */
        const struct fentry *e = catalog_find(cat, r->filter.p, r->filter.len);
        if (!e) {
            reply_fail(c, BLOOMD_NOT_EXIST);
            return;
        }
        atomic_store(&e->st->closed, true);
        reply_str(c, BLOOMD_DONE);
        return;
    }
    if (cmd_authorize(cat->conf, c->loopback, BC(c)->authed ? CMD_CRED_GOOD : CMD_CRED_NONE) !=
        CMD_OK) {
        reply_client_error(c, "create, drop and clear need auth <token> (or a loopback client "
                              "without admin_token)");
        return;
    }
    struct reload_op op;
    memset(&op, 0, sizeof(op));
    op.kind = r->verb == BLOOMD_CREATE  ? RELOAD_OP_CREATE
              : r->verb == BLOOMD_CLEAR ? RELOAD_OP_SHELVE
                                        : RELOAD_OP_DROP;
    if (r->filter.len > FNAME_MAX || !fname_valid(r->filter.p, r->filter.len)) {
        reply_client_error(c, BLOOMD_MSG_BAD_FILTER_NAME);
        return;
    }
    memcpy(op.name, r->filter.p, r->filter.len);
    if (r->verb == BLOOMD_CREATE) {
        char cap[32], prob[40], why[160];
        snprintf(cap, sizeof(cap), "%llu", (unsigned long long)r->create.capacity);
        snprintf(prob, sizeof(prob), "%.17g", r->create.prob);
        /* bloomd's filters are scalable: a growing filter, prob its
         * compound bound (docs/bloomd.md). */
        if (reload_op_opt(&op, "capacity", 8, cap, strlen(cap), why, sizeof(why)) != 0 ||
            reload_op_opt(&op, "fpr", 3, prob, strlen(prob), why, sizeof(why)) != 0 ||
            reload_op_opt(&op, "growth", 6, "on", 2, why, sizeof(why)) != 0) {
            reply_client_error(c, why);
            return;
        }
    }
    if (!conn_admin(c, &op, admin_answer, NULL, 0))
        reply_fail(c, BLOOMD_INTERNAL);
}

/* Every verb's row, from bloomd_proto.h: indexed by enum bloomd_verb. */
#define BLOOMD_VERB_ROW_(sym, name, alias, args, ...) [BLOOMD_##sym] = {__VA_ARGS__},
const struct bloomd_verb_row bloomd_verbs[BLOOMD_VERB_COUNT_] = {BLOOMD_VERBS(BLOOMD_VERB_ROW_)};
#undef BLOOMD_VERB_ROW_

struct process_arg {
    const struct catalog *cat;
    struct bloomd_limits lim;
    bool fatal; /* a line over max_line was answered (conn_each_request does not count it) */
};

/* conn_each_request's step: the line at p, answered; 0 when it is not
 * complete, or after a line over max_line (answered, then the close). */
static size_t one_request(struct conn *c, char *p, size_t n, void *arg)
{
    struct process_arg *a = arg;
    struct bloomd_request req;
    size_t used = 0;
    enum bloomd_status st = bloomd_next(p, n, &a->lim, &req, BW(c)->keys, &used, &BC(c)->scanned);
    switch (st) {
    case BLOOMD_NEED_MORE:
        return 0;
    case BLOOMD_FATAL:
        reply_client_error(c, req.errmsg);
        c->closing = true;
        a->fatal = true;
        return 0;
    case BLOOMD_ERROR:
        reply_client_error(c, req.errmsg);
        return used;
    case BLOOMD_REQUEST:
        bloomd_verbs[req.verb].run(c, a->cat, &req, &bloomd_verbs[req.verb]);
        if (BC(c)->again) { /* it waits, and runs again from the input */
            BC(c)->again = false;
            return 0;
        }
        BC(c)->waited = false;
        return used;
    }
    return used;
}

/* Parse and answer every complete line in the input buffer, unless the
 * unread output passes max_output (conn_output_full); `draining` ignores
 * that limit (EOF, shutdown). Returns the requests answered. */
static unsigned bloomd_process(struct conn *c, bool draining)
{
    struct process_arg a;
    a.cat = registry_read(c->w->reg);
    struct cmd_limits cl = cmd_limits(a.cat->conf, BW(c)->cw.env.scratch_items);
    a.lim = (struct bloomd_limits){a.cat->conf->max_line, cl.max_items};
    a.fatal = false;
    unsigned answered = conn_each_request(c, a.cat->conf, draining, one_request, &a);
    if (a.fatal) {
        answered++;
        conn_consume(c, c->in_len); /* the rest of a connection that closes */
    }
    STAT_ADD(&c->w->stats->s, bloomd_requests, answered);
    conn_reply_flush(c);
    return answered;
}

static size_t bloomd_in_limit(const struct conf *cf)
{
    return cf->max_line + 1;
}

/* CONN_FULL_BUDGET: a partial line would pass max_buffered, the budget of
 * every connection's input buffers: say so (the connection then closes).
 * CONN_FULL_LIMIT cannot happen: the parser refuses a line over max_line. */
static void bloomd_in_full(struct conn *c, enum conn_full why)
{
    if (why == CONN_FULL_BUDGET)
        reply_client_error(c,
                           "the server's request buffers are full (max_buffered); try again later");
}

/* A line begun more than request_timeout ago that has not ended: say so
 * (then the close). */
static void bloomd_request_timeout(struct conn *c)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "the line did not end within request_timeout (%u s)",
             registry_read(c->w->reg)->conf->request_timeout);
    reply_client_error(c, msg);
}

static void bloomd_refuse(struct stats *s)
{
    STAT_ADD(s, bloomd_errors, 1);
}

/* The reply batch's size: a multi's whole reply fits (conn_worker_new). */
static size_t bloomd_reply_batch(size_t scratch_items)
{
    size_t cap = BLOOMD_BOOLS_CAP(scratch_items) + REPLY_SLACK;
    return cap < REPLY_BATCH ? REPLY_BATCH : cap;
}

/* Main thread, before the worker runs. */
static int bloomd_worker_init(struct conn_worker *cw)
{
    struct bloomd_worker *bw = (struct bloomd_worker *)cw;
    bw->keys = calloc(cw->env.scratch_items ? cw->env.scratch_items : 1, sizeof(*bw->keys));
    return bw->keys ? 0 : -1;
}

static void bloomd_worker_free(struct conn_worker *cw)
{
    free(((struct bloomd_worker *)cw)->keys);
}

const struct conn_ops bloomd_ops = {
    .name = "bloomd",
    .proto = STATS_BLOOMD,
    .priv_size = sizeof(struct bloomd_conn),
    .worker_size = sizeof(struct bloomd_worker),
    .worker_init = bloomd_worker_init,
    .worker_free = bloomd_worker_free,
    .reply_batch = bloomd_reply_batch,
    .process = bloomd_process,
    .in_limit = bloomd_in_limit,
    .in_full = bloomd_in_full,
    .request_timeout = bloomd_request_timeout,
    .refusal = "Client Error: the server is at max_connections\n",
    .refuse = bloomd_refuse,
    .stop = conn_stop_drain,
};
