/* The Redis protocol's glue, see resp.h. Worker thread only.
 *
 * Every BF.* command goes through the command table (core/cmd.c) with the
 * table's own checks: the filter named by the key, the auth rule for adds,
 * max_items and max_item, the key kind (a url filter's BF.EXISTS canonicalises
 * and expands its item as CHECK does), and the journal before an add. The
 * other commands (PING, AUTH, HELLO, COMMAND, INFO, ...) are what Redis
 * clients and tools send on connecting; they are answered here, the
 * transactions in resp_multi.c, the key space (EXISTS, TYPE, KEYS, SCAN) in
 * resp_keys.c. Replies are gathered in a per-worker batch and handed to the
 * connection's evbuffer once per read, as the line protocol does. */
#include "config.h"

#include "front/resp/resp.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/fname.h"
#include "base/log.h"
#include "base/util.h"
#include "core/cmd.h"
#include "core/gate.h"
#include "core/views.h"
#include "front/resp/respparse.h"
#include "front/resp/resp_info.h"
#include "front/resp/resp_int.h"
#include "net/worker.h"

/* Whether key names no filter at all: neither served nor configured. A
 * lookup in it answers 0 as RedisBloom's in a missing key does (an empty
 * filter holds nothing); a configured filter that failed to load stays an
 * error, or a client would take a gap in the protection for a clean answer.
 * The line protocol and HTTP keep unknown_filter for both (docs/resp.md). */
static bool absent(const struct catalog *cat, const struct resp_arg *key)
{
    return !catalog_find(cat, key->p, key->len) && !views_configured(cat, key->p, key->len);
}

/* n zeros: one integer, or an array of them (multi). */
static void reply_zeros(struct conn *c, bool multi, size_t n)
{
    if (multi)
        reply_header(c, '*', (int64_t)n);
    for (size_t i = 0; i < (multi ? n : 1); i++)
        reply_bytes(c, ":0\r\n", 4);
}

/* BF.EXISTS, BF.MEXISTS, BF.ADD, BF.MADD: argv[1] the filter, the rest its
 * items, through the table (limits, auth, key kind, journal). The row's
 * single form answers an integer, its multi form an array, as RedisBloom
 * does. */
static void verb_items(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                       const struct resp_verb *v)
{
    struct resp_worker *rw = RW(c);
    size_t n = r->argc - 2;
    const struct resp_arg *key = &r->argv[1];
    /* One lookup, handed to the table: a filter found has a name (every
     * name in the catalog passed the rule), so only a key that names none
     * is asked the rule, and told if it fails it. */
    const struct fentry *e = catalog_find(cat, key->p, key->len);
    if (!e && !resp_filter_name_ok(c, key))
        return;
    struct cmd_call call;
    resp_call_init(c, &call, cat, key, n);
    call.e = e;
    if (n > rw->cw.env.scratch_items) { /* cannot pass the table's max_items either */
        char msg[128];
        snprintf(msg, sizeof(msg), "%zu items, the limit is max_items %zu", n,
                 cmd_limits(cat->conf, rw->cw.env.scratch_items).max_items);
        reply_coded(c, RESP_ERR_TOO_MANY_ITEMS, msg);
        return;
    }
    if (v->id == CMD_CHECK && !e && !views_configured(cat, key->p, key->len)) {
        reply_zeros(c, v->multi, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        rw->cw.env.keys[i].data = r->argv[i + 2].p;
        rw->cw.env.keys[i].len = r->argv[i + 2].len;
    }
    cmd_run(&rw->cw.env, v->id, NULL, &call);
    if (call.err != CMD_OK) {
        resp_reply_call_err(c, &call, v->name, n);
        return;
    }
    if (!v->multi) {
        memcpy(reply_room(c, 4), rw->cw.env.bools[0] ? ":1\r\n" : ":0\r\n", 4);
        conn_reply_used(c, 4);
        return;
    }
    size_t cap = RESP_BOOLS_CAP(n);
    conn_reply_used(c, resp_format_bools(reply_room(c, cap), cap, rw->cw.env.bools, n));
}

/* The filter named by argv[1] as INFO JSON, through the table; NULL after
 * replying the error. */
static json_t *filter_info(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                           const struct resp_verb *v)
{
    struct cmd_call call;
    if (!resp_filter_name_ok(c, &r->argv[1]))
        return NULL;
    resp_call_init(c, &call, cat, &r->argv[1], 0);
    cmd_run(&RW(c)->cw.env, v->id, NULL, &call);
    if (call.err != CMD_OK) {
        resp_reply_call_err(c, &call, v->name, 0);
        return NULL;
    }
    return call.json;
}

static int64_t jint(json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

/* Growth's factor: each sub-filter of a growing filter is sized for twice
 * the items of the one before (bloom/grow.h), RedisBloom's default
 * EXPANSION. */
#define GROWTH_EXPANSION 2

/* BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION], in RESP2 the shape
 * every RedisBloom release answers (2.4 to 8.x: RedisModule_ReplyWithArray,
 * later ReplyWithMapOrArray, which is an array in RESP2): the five pairs as
 * a flat array, or one field's value as a one-element array. Size is the
 * bytes of the bits. A growing filter answers as RedisBloom's scaling one:
 * its sub-filters, their capacities summed, expansion 2; any other filter
 * as a NONSCALING one: 1 filter (shards and a window's slices are not
 * sub-filters), its capacity, expansion nil. */
static void verb_bf_info(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                         const struct resp_verb *v)
{
    static const struct {
        const char *field, *label;
    } rows[] = {
        {"CAPACITY", "Capacity"},         {"SIZE", "Size"},
        {"FILTERS", "Number of filters"}, {"ITEMS", "Number of items inserted"},
        {"EXPANSION", "Expansion rate"},
    };
    size_t pick = 5;
    if (r->argc == 3) {
        for (size_t i = 0; i < 5 && pick == 5; i++)
            if (resp_arg_is(&r->argv[2], rows[i].field))
                pick = i;
    }
    json_t *j = filter_info(c, cat, r, v);
    if (!j)
        return;
    if (r->argc == 3 && pick == 5) {
        reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "Invalid information value");
        json_decref(j);
        return;
    }
    json_t *subs = json_object_get(json_object_get(j, "growth"), "sub_filters");
    int64_t val[5] = {jint(j, "capacity"), jint(j, "bytes"), 1, jint(j, "items"), -1};
    if (json_is_array(subs) && json_array_size(subs) > 0) {
        size_t i;
        json_t *sub;
        val[0] = 0;
        json_array_foreach(subs, i, sub)
        {
            val[0] += jint(sub, "capacity");
        }
        val[2] = (int64_t)json_array_size(subs);
        val[4] = GROWTH_EXPANSION;
    }
    size_t from = r->argc == 3 ? pick : 0, to = r->argc == 3 ? pick + 1 : 5;
    reply_header(c, '*', (int64_t)(r->argc == 3 ? 1 : 10));
    for (size_t i = from; i < to; i++) {
        if (r->argc != 3)
            reply_simple(c, rows[i].label);
        if (val[i] >= 0)
            reply_int(c, val[i]);
        else
            reply_bytes(c, "$-1\r\n", 5);
    }
    json_decref(j);
}

/* BF.CARD key: the items in the filter (adds that set a new bit); 0 for a
 * key that names no filter, as RedisBloom answers. */
static void verb_bf_card(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                         const struct resp_verb *v)
{
    if (!resp_filter_name_ok(c, &r->argv[1]))
        return;
    if (absent(cat, &r->argv[1])) {
        reply_int(c, 0);
        return;
    }
    json_t *j = filter_info(c, cat, r, v);
    if (!j)
        return;
    reply_int(c, jint(j, "items"));
    json_decref(j);
}

/* A wrong token, from AUTH or HELLO ... AUTH: the connection loses its
 * credential, and the log gets a line, rate-limited as the line protocol's
 * and HTTP's are (anyone may send wrong tokens as fast as they like). */
static void auth_refused(struct conn *c)
{
    RC(c)->authed = false;
    log_warn_limited("AUTH failed from %s (Redis protocol)", c->peer);
    reply_error(c, RESP_ERR_AUTH_FAILED, "WRONGPASS",
                "invalid username-password pair or user is disabled.");
}

/* AUTH <token> or AUTH default <token> (Redis 6's form, which redis-cli
 * --user and client libraries send): the admin_token, as the line protocol's
 * AUTH and HTTP's bearer token. */
static void do_auth(struct conn *c, const struct catalog *cat, const struct resp_arg *user,
                    const struct resp_arg *pass)
{
    const char *tok = cat->conf->admin_token;
    if (!tok) {
        reply_coded(c, RESP_ERR_AUTH_FAILED, "no admin_token is configured on this server");
        return;
    }
    if ((!user || resp_arg_is(user, "default")) && util_token_equal(pass->p, pass->len, tok)) {
        RC(c)->authed = true;
        reply_simple(c, "OK");
        return;
    }
    auth_refused(c);
}

/* HELLO [2 [AUTH user pass] [SETNAME name]]: RESP2 only. The reply is
 * Redis's map, flattened as RESP2 does; server names bloomgate. */
static void do_hello(struct conn *c, const struct catalog *cat, const struct resp_request *r)
{
    if (r->argc >= 2 && !resp_arg_is(&r->argv[1], "2")) {
        reply_error(c, RESP_ERR_BAD_ARGUMENT, "NOPROTO",
                    "unsupported protocol version (bloomgate speaks RESP2)");
        return;
    }
    for (size_t i = 2; i < r->argc; i++) {
        if (resp_arg_is(&r->argv[i], "AUTH") && i + 2 < r->argc) {
            const char *tok = cat->conf->admin_token;
            if (!tok || !resp_arg_is(&r->argv[i + 1], "default") ||
                !util_token_equal(r->argv[i + 2].p, r->argv[i + 2].len, tok)) {
                auth_refused(c);
                return;
            }
            RC(c)->authed = true;
            i += 2;
        } else if (resp_arg_is(&r->argv[i], "SETNAME") && i + 1 < r->argc) {
            i += 1;
        } else {
            reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "syntax error in HELLO");
            return;
        }
    }
    reply_header(c, '*', 14);
    reply_cstr(c, "server");
    reply_cstr(c, "bloomgate");
    reply_cstr(c, "version");
    reply_cstr(c, PACKAGE_VERSION);
    reply_cstr(c, "proto");
    reply_int(c, 2);
    reply_cstr(c, "id");
    reply_int(c, (int64_t)c->fd);
    reply_cstr(c, "mode");
    reply_cstr(c, "standalone");
    reply_cstr(c, "role");
    reply_cstr(c, "master");
    reply_cstr(c, "modules");
    reply_header(c, '*', 0);
}

static void do_client(struct conn *c, const struct resp_request *r)
{
    if (resp_arg_is(&r->argv[1], "SETNAME") && r->argc == 3) {
        reply_simple(c, "OK");
    } else if (resp_arg_is(&r->argv[1], "SETINFO") && r->argc == 4) {
        reply_simple(c, "OK");
    } else {
        char msg[128];
        snprintf(msg, sizeof(msg), "unknown subcommand '%.*s' of CLIENT (SETNAME, SETINFO)",
                 (int)(r->argv[1].len < 48 ? r->argv[1].len : 48), r->argv[1].p);
        reply_error(c, RESP_ERR_UNKNOWN_COMMAND, "ERR", msg);
    }
}

static void verb_ping(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *v)
{
    if (r->argc == 2)
        reply_bulk(c, r->argv[1].p, r->argv[1].len);
    else
        reply_simple(c, "PONG");
}
static void verb_echo(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *v)
{
    reply_bulk(c, r->argv[1].p, r->argv[1].len);
}
static void verb_auth(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *v)
{
    do_auth(c, cat, r->argc == 3 ? &r->argv[1] : NULL, &r->argv[r->argc - 1]);
}
static void verb_quit(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *v)
{
    reply_simple(c, "OK");
    c->closing = true;
}
static void verb_select(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                        const struct resp_verb *v)
{
    if (resp_arg_is(&r->argv[1], "0"))
        reply_simple(c, "OK");
    else
        reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "DB index is out of range");
}
static void verb_hello(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                       const struct resp_verb *v)
{
    do_hello(c, cat, r);
}
static void verb_client(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                        const struct resp_verb *v)
{
    do_client(c, r);
}
static void verb_command(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                         const struct resp_verb *v);
static void verb_info(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *v);

/* The verbs, hottest first (see struct resp_verb). */
/* clang-format off */
const struct resp_verb resp_verbs[] = {
#define VERB_(name, arity, max, fn, flags, key, ...) \
    {name, sizeof(name) - 1, arity, max, fn, flags, key, __VA_ARGS__}
    VERB_("BF.EXISTS", 3, 0, verb_items, "readonly", 1, .id = CMD_CHECK),
    VERB_("BF.MEXISTS", -3, 0, verb_items, "readonly", 1, .id = CMD_CHECK, .multi = true),
    VERB_("BF.ADD", 3, 0, verb_items, "write", 1, .id = CMD_ADD, .creates = true),
    VERB_("BF.MADD", -3, 0, verb_items, "write", 1, .id = CMD_ADD, .multi = true,
          .creates = true),
    VERB_("BF.INSERT", -4, 0, resp_verb_insert, "write", 1, .id = CMD_ADD, .multi = true,
          .creates = true),
    VERB_("BF.RESERVE", -4, 7, resp_verb_reserve, "write", 1, .id = CMD_CREATE),
    VERB_("DEL", -2, 0, resp_verb_del, "write", 1, .id = CMD_DROP),
    VERB_("UNLINK", -2, 0, resp_verb_del, "write", 1, .id = CMD_DROP),
    VERB_("BF.INFO", -2, 3, verb_bf_info, "readonly", 1, .id = CMD_INFO),
    VERB_("BF.CARD", 2, 0, verb_bf_card, "readonly", 1, .id = CMD_INFO),
    VERB_("PING", -1, 2, verb_ping, "fast", 0, .id = CMD_PING),
    VERB_("ECHO", 2, 0, verb_echo, "fast", 0, .id = RESP_OWN),
    VERB_("AUTH", -2, 3, verb_auth, "fast", 0, .id = RESP_OWN),
    VERB_("QUIT", -1, 0, verb_quit, "fast", 0, .id = RESP_OWN, .now = true),
    VERB_("SELECT", 2, 0, verb_select, "fast", 0, .id = RESP_OWN),
    VERB_("HELLO", -1, 7, verb_hello, "fast", 0, .id = RESP_OWN),
    VERB_("CLIENT", -2, 4, verb_client, "fast", 0, .id = RESP_OWN),
    VERB_("COMMAND", -1, 0, verb_command, "loading", 0, .id = RESP_OWN),
    VERB_("INFO", -1, 0, verb_info, "loading", 0, .id = CMD_INFO),
    VERB_("MULTI", 1, 0, resp_verb_multi, "fast", 0, .id = RESP_OWN, .now = true),
    VERB_("EXEC", 1, 0, resp_verb_exec, "slow", 0, .id = RESP_OWN, .now = true),
    VERB_("DISCARD", 1, 0, resp_verb_discard, "fast", 0, .id = RESP_OWN, .now = true),
    VERB_("WATCH", -2, 0, resp_verb_watch, "fast", 1, .id = RESP_OWN, .now = true),
    VERB_("UNWATCH", 1, 0, resp_verb_unwatch, "fast", 0, .id = RESP_OWN),
    VERB_("EXISTS", -2, 0, resp_verb_exists, "readonly", 1, .id = RESP_OWN),
    VERB_("TYPE", 2, 0, resp_verb_type, "readonly", 1, .id = RESP_OWN),
    VERB_("KEYS", 2, 0, resp_verb_keys, "readonly", 0, .id = RESP_OWN),
    VERB_("SCAN", -2, 8, resp_verb_scan, "readonly", 0, .id = RESP_OWN),
#undef VERB_
};
/* clang-format on */
#define N_CMDS (sizeof(resp_verbs) / sizeof(resp_verbs[0]))
const size_t resp_n_verbs = N_CMDS;

/* One COMMAND entry in Redis 7's shape: name, arity, flags, first key, last
 * key, step, ACL categories, tips, key specs, subcommands. */
static void command_entry(struct conn *c, const struct resp_verb *d)
{
    char lower[16];
    size_t n = d->len < sizeof(lower) ? d->len : sizeof(lower) - 1;
    for (size_t i = 0; i < n; i++)
        lower[i] = (char)(d->name[i] >= 'A' && d->name[i] <= 'Z' ? d->name[i] + 32 : d->name[i]);
    reply_header(c, '*', 10);
    reply_bulk(c, lower, n);
    reply_int(c, d->arity);
    reply_header(c, '*', 1);
    reply_simple(c, d->flags);
    reply_int(c, d->first_key);
    reply_int(c, d->first_key);
    reply_int(c, d->first_key ? 1 : 0);
    for (int i = 0; i < 4; i++)
        reply_header(c, '*', 0);
}

/* COMMAND, COMMAND COUNT, COMMAND INFO name..., COMMAND DOCS [name...]:
 * enough for redis-cli's interactive mode (its hints and completion). DOCS
 * has nothing to add to what redis-cli knows: an empty map. */
static void verb_command(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                         const struct resp_verb *v)
{
    if (r->argc == 1) {
        reply_header(c, '*', (int64_t)N_CMDS);
        for (size_t i = 0; i < N_CMDS; i++)
            command_entry(c, &resp_verbs[i]);
    } else if (resp_arg_is(&r->argv[1], "COUNT") && r->argc == 2) {
        reply_int(c, (int64_t)N_CMDS);
    } else if (resp_arg_is(&r->argv[1], "DOCS")) {
        reply_header(c, '*', 0);
    } else if (resp_arg_is(&r->argv[1], "INFO")) {
        reply_header(c, '*', (int64_t)(r->argc - 2));
        for (size_t a = 2; a < r->argc; a++) {
            size_t i = 0;
            while (i < N_CMDS && !resp_arg_is(&r->argv[a], resp_verbs[i].name))
                i++;
            if (i < N_CMDS)
                command_entry(c, &resp_verbs[i]);
            else
                reply_bytes(c, "*-1\r\n", 5);
        }
    } else {
        char msg[128];
        snprintf(msg, sizeof(msg), "unknown subcommand '%.*s' of COMMAND (COUNT, INFO, DOCS)",
                 (int)(r->argv[1].len < 48 ? r->argv[1].len : 48), r->argv[1].p);
        reply_error(c, RESP_ERR_UNKNOWN_COMMAND, "ERR", msg);
    }
}

/* INFO [section]: the daemon's INFO (the line protocol's, through the
 * table) in Redis's text form: `# Server` with the daemon's figures, then
 * `# Filters` with one line a filter, `name:keys=url,items=N,...` as Redis's
 * keyspace lines (which client libraries parse into a map). The section
 * argument is accepted and everything is answered. */
static void verb_info(struct conn *c, const struct catalog *cat, const struct resp_request *r,
                      const struct resp_verb *v)
{
    struct stats_src src;
    server_stats_src(c->w->srv, &src);
    struct cmd_call call;
    resp_call_init(c, &call, cat, NULL, 0);
    cmd_run(&RW(c)->cw.env, v->id, &src, &call);
    struct evbuffer *b = evbuffer_new();
    if (call.err != CMD_OK || !call.json || !b) {
        json_decref(call.json);
        if (b)
            evbuffer_free(b);
        reply_coded(c, RESP_ERR_INTERNAL, "cannot render INFO");
        return;
    }
    resp_info_text(call.json, b);
    json_decref(call.json);
    reply_header(c, '$', (int64_t)evbuffer_get_length(b));
    if (conn_out_add_buffer(c, b))
        reply_bytes(c, "\r\n", 2);
    evbuffer_free(b);
}

/* One parsed request: find the command, check its argument count, run it;
 * inside MULTI, queue it instead (resp_multi.c), unless it is one of the
 * verbs that act at once (MULTI, EXEC, DISCARD, WATCH, QUIT). */
static void dispatch(struct conn *c, const struct catalog *cat, const struct resp_request *r)
{
    const struct resp_arg *name = &r->argv[0];
    const struct resp_verb *d = NULL;
    for (size_t i = 0; i < N_CMDS && !d; i++)
        if (resp_verbs[i].len == name->len && resp_arg_is(name, resp_verbs[i].name))
            d = &resp_verbs[i];
    size_t argc = r->argc;
    bool ok = d && (d->arity > 0 ? argc == (size_t)d->arity : argc >= (size_t)-d->arity) &&
              (!d->max || argc <= d->max);
    if (d && ok && d->creates && resp_admin_first(c, cat, r, d))
        return;
    if (RC(c)->tx.on && d && (d->id == CMD_CREATE || d->id == CMD_DROP)) {
        /* Each waits for the reload thread, which EXEC cannot (docs/resp.md). */
        char msg[96];
        snprintf(msg, sizeof(msg), "%s cannot be queued in MULTI: send it outside the transaction",
                 d->name);
        reply_coded(c, RESP_ERR_BAD_ARGUMENT, msg);
        resp_multi_refused(c);
        return;
    }
    if (RC(c)->tx.on && !(d && d->now)) {
        resp_multi_queue(c, cat, r, d, ok);
        return;
    }
    if (!d)
        resp_reply_unknown(c, name);
    else if (!ok)
        reply_arity(c, name);
    else
        d->fn(c, cat, r, d);
}

/* Parse and answer every complete request in the input buffer, unless the
 * unread output passes max_output (conn_output_full). `draining` ignores that limit
 * (EOF, shutdown). Returns the requests answered. */
static unsigned resp_process(struct conn *c, bool draining)
{
    struct resp_worker *rw = RW(c);
    const struct catalog *cat = registry_read(c->w->reg);
    const struct conf *cf = cat->conf;
    struct resp_limits lim = {.max_inline = cf->max_line,
                              .max_bulk = cf->max_line,
                              .max_args = rw->max_args,
                              .max_frame = resp_max_frame(cf)};
    unsigned answered = 0;
    size_t off = 0;
    while (!c->closing && !c->wait && off < c->in_len) {
        if (conn_output_full(c, cf, draining))
            break;
        struct resp_request req;
        size_t used = 0;
        enum resp_status st =
            resp_next(c->in + off, c->in_len - off, &lim, &req, rw->args, &used, &RC(c)->scan);
        if (st == RESP_NEED_MORE)
            break;
        if (st == RESP_FATAL) {
            reply_error(c, req.err, "ERR", req.errmsg);
            answered++;
            c->closing = true;
            off = c->in_len;
            break;
        }
        off += used;
        if (st == RESP_EMPTY)
            continue;
        answered++;
        if (st == RESP_ERROR) {
            reply_coded(c, req.err, req.errmsg);
            if (RC(c)->tx.on)
                resp_multi_refused(c);
        } else {
            dispatch(c, cat, &req);
            if (RC(c)->again) {
                /* It waits for the reload thread and runs again after. */
                RC(c)->again = false;
                off -= used;
                answered--;
            }
        }
    }
    STAT_ADD(&c->w->stats->s, resp_requests, answered);
    reply_flush(c);
    conn_consume(c, off);
    return answered;
}

static size_t resp_in_limit(const struct conf *cf)
{
    return resp_max_frame(cf) + 1;
}

/* CONN_FULL_BUDGET: the request would pass max_buffered, the budget of every
 * connection's input buffers: say so as Redis would (an error; the
 * connection then closes). CONN_FULL_LIMIT cannot happen (the parser refuses
 * a frame over max_frame first). Worker thread. */
static void resp_in_full(struct conn *c, enum conn_full why)
{
    if (why == CONN_FULL_BUDGET)
        reply_coded(c, RESP_ERR_INTERNAL,
                    "the server's request buffers are full (max_buffered); try again later");
}

/* A request begun more than request_timeout ago (net/conn.c) that has not
 * ended: an error (then the close). Worker thread. */
static void resp_request_timeout(struct conn *c)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "the request did not arrive within request_timeout (%u s)",
             registry_read(c->w->reg)->conf->request_timeout);
    reply_coded(c, RESP_ERR_PROTOCOL, msg);
}

static void resp_refuse(struct stats *s)
{
    STAT_ADD(s, resp_errors_by_code[RESP_ERR_TOO_MANY_CONNECTIONS], 1);
}

/* The reply batch's size: a BF.MEXISTS's whole reply fits (conn_worker_new). */
static size_t resp_reply_batch(size_t scratch_items)
{
    size_t cap = RESP_BOOLS_CAP(scratch_items) + REPLY_SLACK;
    return cap < REPLY_BATCH ? REPLY_BATCH : cap;
}

/* Main thread, before the worker runs. */
static int resp_worker_init(struct conn_worker *cw)
{
    struct resp_worker *rw = (struct resp_worker *)cw;
    rw->max_args = cw->env.scratch_items + EXTRA_ARGS;
    rw->args = calloc(rw->max_args, sizeof(*rw->args));
    return rw->args ? 0 : -1;
}

static void resp_worker_free(struct conn_worker *cw)
{
    free(((struct resp_worker *)cw)->args);
}

#define RESP_ERR_NAME_(sym, name) name,
static const char *const resp_err_names[] = {NULL, RESP_ERRORS(RESP_ERR_NAME_)};
#undef RESP_ERR_NAME_

/* The connection closes: its MULTI queue and what resp_admin.c holds. */
static void resp_conn_free(struct conn *c)
{
    resp_multi_free(c);
    resp_admin_free(c);
}

const struct conn_ops resp_ops = {
    .name = "resp",
    .proto = STATS_RESP,
    .priv_size = sizeof(struct resp_conn),
    .err_names = resp_err_names,
    .n_err = sizeof(resp_err_names) / sizeof(resp_err_names[0]),
    .worker_size = sizeof(struct resp_worker),
    .worker_init = resp_worker_init,
    .worker_free = resp_worker_free,
    .reply_batch = resp_reply_batch,
    .process = resp_process,
    .in_limit = resp_in_limit,
    .in_full = resp_in_full,
    .request_timeout = resp_request_timeout,
    .refusal = "-ERR too_many_connections the server is at max_connections\r\n",
    .refuse = resp_refuse,
    .stop = conn_stop_drain,
    .close = resp_conn_free,
};
