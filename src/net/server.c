/* Workers, listeners and line-protocol connections. See server.h for the
 * threading model. Memory per connection: an input buffer that grows only as a
 * line needs (to max_line + 1 bytes, then the line is refused) and shrinks when
 * idle, and an output evbuffer that stops the reading of its connection once it
 * passes max_output. */
#include "config.h"

#include "net/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "front/http/http.h"
#include "store/journal.h"
#include "base/log.h"
#include "core/gate.h"
#include "front/line/proto.h"
#include "net/connend.h"
#include "base/util.h"

#define IN_START 4096      /* first input buffer of a connection */
#define IN_IDLE_KEEP 16384 /* a larger one is given back when it empties */
#define TICK_MS 100        /* quiescent-state report and shutdown checks */
#define LISTEN_BACKLOG 1024
#define REPLY_BATCH 65536 /* the reply batch holds at least this much */
#define REPLY_SLACK 1024  /* and an error line (512) or a short reply besides */
#define CHECK_AHEAD 8     /* one-item CHECKs hashed and prefetched before answered */

struct worker;
struct conn;

/* A RELOAD waiting for the reload thread; outlives its connection if need be. */
struct pending_reload {
    struct conn *c; /* NULL once the connection is gone */
};

struct conn {
    struct worker *w;
    evutil_socket_t fd;
    struct event *rev; /* readable, with the idle timeout */
    struct event *wev; /* writable, while output is pending */
    char *in;          /* bytes received and not yet parsed */
    size_t in_len, in_cap;
    size_t scanned;                /* proto_next's resume hint */
    struct evbuffer *out;          /* replies not yet written */
    bool loopback;                 /* peer on 127.0.0.0/8 or ::1: may ADD without a token */
    bool authed;                   /* AUTH succeeded on this connection */
    bool paused;                   /* reading stopped: too much unread output */
    bool closing;                  /* close once out is written (QUIT, fatal error, EOF) */
    struct connend end;            /* how its end goes (a lingering close) */
    struct pending_reload *reload; /* a RELOAD awaiting its answer: later requests wait */
    struct conn *prev, *next;
    char peer[64];
};

/* A connection accepted by one worker and handed to another. */
struct handoff {
    evutil_socket_t fd;
    struct sockaddr_storage ss;
    bool http;
    struct handoff *next;
};

struct worker {
    unsigned id;
    struct server *srv;
    pthread_t tid;
    bool started;
    struct event_base *base;
    struct evconnlistener **listeners; /* one per line-protocol address */
    struct http_front *http;           /* the HTTP API; NULL with http_listen off */
    struct event *tick;
    struct event *ctl; /* activated by server_stop from the main thread */
    bool stopping;
    struct conn *conns;
    unsigned n_conns;
    /* Connections of both protocols open on this worker: written by the
     * worker, read by any worker's accept to pick the least loaded one. */
    _Atomic unsigned load;
    /* Connections other workers accepted and handed to this one, taken by
     * inbox_cb on this worker's thread (see server_balance_accept). */
    pthread_mutex_t inbox_mu;
    bool inbox_mu_ok;
    struct handoff *inbox;
    struct event *inbox_ev;
    struct stats stats;
    struct fstats *fstats;     /* REGISTRY_MAX_FILTERS entries */
    struct latency latency[2]; /* by enum stats_proto */
    struct gate_batch gate;    /* journals appended to in this batch */
    /* Scratch reused by every request (sized for the largest max_items). */
    size_t scratch_items;
    struct proto_token *tokens;
    struct filter_key *keys;
    bool *bools;
    /* The reply batch: the line-protocol replies of the connection being
     * processed, gathered here and handed to its evbuffer in one evbuffer_add
     * (an add per reply cost ~65 instructions, as much as a CHECK's parse of
     * its item). Empty outside conn_process, so it always belongs to the
     * connection being processed; whatever writes to c->out directly calls
     * reply_flush first, which keeps replies in order. */
    char *reply;
    size_t reply_cap; /* >= PROTO_BOOLS_CAP(scratch_items) + REPLY_SLACK */
    size_t reply_len;
    size_t out_queued; /* bytes in c->out as of the last flush (for max_output) */
    /* Counters of the batch, added to stats and fstats by tally_flush (at the
     * end of conn_process and before any request that reads or may wait on
     * them), so the totals stay exact at every point a client can look. */
    struct {
        uint64_t commands, checks, items, hits;
        unsigned fid; /* the filter fchecks and fhits belong to */
        uint64_t fchecks, fhits;
    } tally;
    /* The last filter an item command named in this conn_process call, in the
     * catalog it was found in: consecutive requests nearly always name the same
     * one. Reset on every call, so it never outlives its catalog's grace period. */
    const struct catalog *last_cat;
    const struct fentry *last_e;
    /* One-item CHECKs of the connection being processed, hashed and their
     * blocks prefetched, not yet answered: a ring, oldest at ahead_head. They
     * are the latest requests parsed, so they are answered (in order) before
     * any other reply is written, and all of them by the end of conn_process.
     * A lone probe waits for its cache line (the filter rarely fits in L2);
     * CHECK_AHEAD of them overlap those waits, as filter_check_batch does
     * within an MCHECK. */
    struct {
        const struct fentry *e;
        struct hash128 h;
    } ahead[CHECK_AHEAD];
    unsigned n_ahead, ahead_head;
};

struct server {
    struct registry *reg;
    unsigned n_workers;
    struct worker *workers;
    size_t n_addrs;
    evutil_socket_t *fds;      /* n_workers x n_addrs listening sockets */
    int *ports;                /* bound port per address */
    size_t n_http_addrs;       /* 0 with http_listen off */
    evutil_socket_t *http_fds; /* n_workers x n_http_addrs, until the HTTP fronts take them */
    int *http_ports;           /* bound port per HTTP address */
    _Atomic unsigned conns_open;
    _Atomic bool stopping; /* server_stop has begun: no more hand-offs */
    double started;        /* monotonic */
    int64_t started_wall;
    server_reload_fn reload_fn;
    void *reload_ctx;
};

/* ---- small helpers ---- */

/* Shutdown may end the worker's loop: no line or HTTP connection is left. */
static bool worker_drained(const struct worker *w)
{
    return w->n_conns == 0 && http_front_drained(w->http);
}

static const struct catalog *cat_now(struct worker *w)
{
    return registry_read(w->srv->reg);
}

/* Worker thread: move the reply batch into c->out. Before anything writes to
 * c->out directly, and at the end of every conn_process. */
static void reply_flush(struct conn *c)
{
    struct worker *w = c->w;
    if (w->reply_len) {
        evbuffer_add(c->out, w->reply, w->reply_len);
        w->out_queued += w->reply_len;
        w->reply_len = 0;
    }
}

/* Worker thread: room for n <= reply_cap bytes at the end of the reply batch,
 * flushing it first if need be. The caller then adds what it wrote to
 * w->reply_len. */
static inline char *reply_room(struct conn *c, size_t n)
{
    struct worker *w = c->w;
    if (w->reply_cap - w->reply_len < n)
        reply_flush(c);
    return w->reply + w->reply_len;
}

static void reply_str(struct conn *c, const char *s)
{
    size_t n = strlen(s);
    memcpy(reply_room(c, n), s, n);
    c->w->reply_len += n;
}

static void reply_err(struct conn *c, enum proto_err code, const char *msg)
{
    char buf[512];
    size_t n = proto_format_error(buf, sizeof(buf), code, msg);
    if (n > sizeof(buf)) {
        n = proto_format_error(buf, sizeof(buf), code, "(message too long)");
    }
    memcpy(reply_room(c, n), buf, n);
    c->w->reply_len += n;
    STAT_ADD(&c->w->stats, errors, 1);
    if ((unsigned)code < 16)
        STAT_ADD(&c->w->stats, errors_by_code[code], 1);
}

/* ---- JSON for INFO ---- */

static json_t *iso_time(int64_t t)
{
    char ts[32];
    struct tm tm;
    time_t tt = (time_t)t;
    gmtime_r(&tt, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(ts);
}

json_t *server_filter_json(const struct fentry *e)
{
    struct fversion *v = e->v;
    const struct filter *f = v->f;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(e->name));
    json_object_set_new(o, "layout", json_string(filter_layout_name(f->layout)));
    json_object_set_new(o, "capacity", json_integer((json_int_t)f->capacity));
    json_object_set_new(o, "fpr_target", json_real(f->fpr_target));
    json_object_set_new(o, "fpr_estimated", json_real(fversion_estimated_fpr(v)));
    json_object_set_new(o, "items", json_integer((json_int_t)filter_items(f)));
    json_object_set_new(o, "k", json_integer(f->k));
    json_object_set_new(o, "shards", json_integer(f->shard_count));
    json_object_set_new(o, "bytes", json_integer((json_int_t)filter_bytes(f)));
    json_object_set_new(o, "file", v->file ? json_string(v->file) : json_null());
    json_object_set_new(o, "generation", json_integer((json_int_t)v->generation));
    json_object_set_new(o, "loaded_at", iso_time(v->loaded_at));
    struct journal *j = e->st ? atomic_load(&e->st->journal) : NULL;
    json_object_set_new(o, "journal", j ? json_string(journal_path(j)) : json_null());
    if (e->st) {
        pthread_mutex_lock(&e->st->mu);
        json_object_set_new(o, "last_reload_at",
                            e->st->last_reload_at ? iso_time(e->st->last_reload_at) : json_null());
        json_object_set_new(o, "last_reload_status", json_string(e->st->last_status));
        json_object_set_new(o, "last_reload_error",
                            e->st->last_error[0] ? json_string(e->st->last_error) : json_null());
        pthread_mutex_unlock(&e->st->mu);
    }
    return o;
}

json_t *server_info_json(struct server *srv, const struct catalog *cat)
{
    struct stats s;
    server_sum_stats(srv, &s);
    json_t *o = json_object();
    json_object_set_new(o, "version", json_string(PACKAGE_VERSION));
    json_object_set_new(o, "pid", json_integer(getpid()));
    json_object_set_new(o, "uptime_s", json_integer((json_int_t)(util_now() - srv->started)));
    json_object_set_new(o, "started_at", iso_time(srv->started_wall));
    json_object_set_new(o, "threads", json_integer(srv->n_workers));
    json_object_set_new(o, "connections", json_integer(server_connections_open(srv)));
    json_t *per = json_array();
    for (unsigned i = 0; i < srv->n_workers; i++)
        json_array_append_new(per, json_integer(server_worker_load(srv, i)));
    json_object_set_new(o, "worker_connections", per);
#define STATS_JSON_(name, help)                                                                    \
    json_object_set_new(o, #name, json_integer((json_int_t)STAT_GET(&s, name)));
    STATS_COUNTERS(STATS_JSON_)
#undef STATS_JSON_
    struct registry *reg = srv->reg;
    json_object_set_new(o, "reloads_ok", json_integer((json_int_t)atomic_load(&reg->reloads_ok)));
    json_object_set_new(o, "reloads_failed",
                        json_integer((json_int_t)atomic_load(&reg->reloads_failed)));
    int64_t last = atomic_load(&reg->last_reload_at);
    json_object_set_new(o, "last_reload_at", last ? iso_time(last) : json_null());
    json_object_set_new(o, "last_reload_ok",
                        last ? json_boolean(atomic_load(&reg->last_reload_ok)) : json_null());
    json_t *arr = json_array();
    for (size_t i = 0; i < cat->n; i++)
        json_array_append_new(arr, server_filter_json(&cat->entries[i]));
    json_object_set_new(o, "filters", arr);
    return o;
}

void server_sum_stats(const struct server *srv, struct stats *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < srv->n_workers; i++) {
        const struct stats *s = &srv->workers[i].stats;
#define STATS_SUM_(name, help) STAT_ADD(out, name, STAT_GET(s, name));
        STATS_COUNTERS(STATS_SUM_)
#undef STATS_SUM_
        for (int c = 0; c < 16; c++)
            STAT_ADD(out, errors_by_code[c], STAT_GET(s, errors_by_code[c]));
        for (int c = 0; c < STATS_HTTP_ERRS; c++)
            STAT_ADD(out, http_errors_by_code[c], STAT_GET(s, http_errors_by_code[c]));
        for (int c = 0; c < STATS_HTTP_SLOTS; c++)
            STAT_ADD(out, http_responses[c], STAT_GET(s, http_responses[c]));
    }
}

void server_sum_filter_stats(const struct server *srv, unsigned id, struct fstats *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < srv->n_workers && id < REGISTRY_MAX_FILTERS; i++) {
        const struct fstats *f = &srv->workers[i].fstats[id];
        for (int p = 0; p < 2; p++) {
            STAT_ADD(out, checks[p], STAT_GET(f, checks[p]));
            STAT_ADD(out, hits[p], STAT_GET(f, hits[p]));
            STAT_ADD(out, adds[p], STAT_GET(f, adds[p]));
            STAT_ADD(out, added_new[p], STAT_GET(f, added_new[p]));
        }
    }
}

void server_sum_latency(const struct server *srv, enum stats_proto proto, struct latency *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < srv->n_workers; i++) {
        const struct latency *l = &srv->workers[i].latency[proto];
        for (int b = 0; b < STATS_LAT_BUCKETS; b++)
            STAT_ADD(out, buckets[b], STAT_GET(l, buckets[b]));
        STAT_ADD(out, count, STAT_GET(l, count));
        STAT_ADD(out, sum_ns, STAT_GET(l, sum_ns));
    }
}

/* Registry hook (writer thread): an id now names a different filter, so its
 * counters start again from zero. No worker uses an unassigned id. */
static void zero_filter_id(void *ctx, unsigned id)
{
    struct server *srv = ctx;
    for (unsigned i = 0; i < srv->n_workers; i++)
        memset((void *)&srv->workers[i].fstats[id], 0, sizeof(struct fstats));
}

unsigned server_connections_open(const struct server *srv)
{
    return atomic_load_explicit(&((struct server *)srv)->conns_open, memory_order_relaxed);
}

/* ---- requests ---- */

static void reply_json(struct conn *c, json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(j);
    if (!s) {
        reply_err(c, PROTO_ERR_INTERNAL, "cannot encode JSON");
        return;
    }
    reply_flush(c);
    evbuffer_add(c->out, s, strlen(s));
    evbuffer_add(c->out, "\n", 1);
    free(s);
}

/* Worker thread: add the batch's counters to the worker's stats and zero them.
 * Relaxed stores of the owner, as STAT_ADD; see struct worker for when. */
static void tally_flush(struct worker *w)
{
    if (w->tally.commands)
        STAT_ADD(&w->stats, commands, w->tally.commands);
    if (w->tally.checks) {
        STAT_ADD(&w->stats, check_requests, w->tally.checks);
        STAT_ADD(&w->stats, items_checked, w->tally.items);
        STAT_ADD(&w->stats, items_hit, w->tally.hits);
    }
    if (w->tally.fchecks) {
        struct fstats *fs = &w->fstats[w->tally.fid];
        STAT_ADD(fs, checks[STATS_LINE], w->tally.fchecks);
        STAT_ADD(fs, hits[STATS_LINE], w->tally.fhits);
    }
    w->tally.commands = w->tally.checks = w->tally.items = w->tally.hits = 0;
    w->tally.fchecks = w->tally.fhits = 0;
}

/* Worker thread: count n items looked up in filter e, yes of them found. */
static inline void tally_checks(struct worker *w, const struct fentry *e, size_t n, size_t yes)
{
    if (w->tally.fid != e->id) {
        if (w->tally.fchecks)
            tally_flush(w);
        w->tally.fid = e->id;
    }
    w->tally.checks++;
    w->tally.items += n;
    w->tally.hits += yes;
    w->tally.fchecks += n;
    w->tally.fhits += yes;
}

/* a[0..n) == b[0..n) with a few overlapping word loads (filter names are
 * short; a memcmp call cost ~20 instructions of a CHECK's ~1,200). Reads only
 * inside both ranges. */
static inline bool name_eq(const char *a, const char *b, size_t n)
{
    if (n >= 8) {
        uint64_t x, y, d = 0;
        size_t i = 0;
        for (; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            d |= x ^ y;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return (d | (x ^ y)) == 0;
    }
    if (n >= 4) {
        uint32_t x1, y1, x2, y2;
        memcpy(&x1, a, 4);
        memcpy(&y1, b, 4);
        memcpy(&x2, a + n - 4, 4);
        memcpy(&y2, b + n - 4, 4);
        return ((x1 ^ y1) | (x2 ^ y2)) == 0;
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Worker thread: the filter a request names, or NULL. The last one found in
 * this conn_process call is tried first (see struct worker). */
static inline const struct fentry *lookup_filter(struct worker *w, const struct catalog *cat,
                                                 const struct proto_token *name)
{
    const struct fentry *e = w->last_e;
    if (e && w->last_cat == cat && e->name_len == name->len && name_eq(e->name, name->p, name->len))
        return e;
    e = catalog_find(cat, name->p, name->len);
    if (e) {
        w->last_cat = cat;
        w->last_e = e;
    }
    return e;
}

/* Worker thread: the filter a request names, or NULL after replying
 * unknown_filter. */
static const struct fentry *find_filter(struct conn *c, const struct catalog *cat,
                                        const struct proto_token *name)
{
    const struct fentry *e = lookup_filter(c->w, cat, name);
    if (!e) {
        char msg[128];
        snprintf(msg, sizeof(msg), "no such filter '%.*s'", (int)name->len, name->p);
        reply_err(c, PROTO_ERR_UNKNOWN_FILTER, msg);
    }
    return e;
}

/* Worker thread: answer the oldest one-item CHECK waiting in the ring. */
static inline void ahead_answer(struct conn *c)
{
    struct worker *w = c->w;
    const struct fentry *e = w->ahead[w->ahead_head].e;
    bool hit = filter_check_hash(e->v->f, w->ahead[w->ahead_head].h);
    w->ahead_head = (w->ahead_head + 1) % CHECK_AHEAD;
    w->n_ahead--;
    tally_checks(w, e, 1, hit);
    memcpy(reply_room(c, 4), hit ? "YES\n" : "NO\n", 4);
    w->reply_len += 3 + hit;
}

/* Worker thread: answer every CHECK waiting in the ring, oldest first. Before
 * any other reply is written, and at the end of conn_process. */
static void ahead_drain(struct conn *c)
{
    while (c->w->n_ahead)
        ahead_answer(c);
}

/* Worker thread: a one-item CHECK of filter e: hash it and prefetch its first
 * cache line now, answer it once CHECK_AHEAD later ones are parsed (or at a
 * drain). The hash is all that is kept of the item, so the input buffer may
 * move under the ring. */
static inline void check_ahead(struct conn *c, const struct fentry *e,
                               const struct proto_token *item)
{
    struct worker *w = c->w;
    const struct filter *f = e->v->f;
    struct hash128 h = filter_hash(f, item->p, item->len);
    __builtin_prefetch(filter_first_line(f, h), 0, 0);
    if (w->n_ahead == CHECK_AHEAD)
        ahead_answer(c);
    unsigned slot = (w->ahead_head + w->n_ahead) % CHECK_AHEAD;
    w->ahead[slot].e = e;
    w->ahead[slot].h = h;
    w->n_ahead++;
    w->tally.commands++;
}

/* CHECK/MCHECK/ADD/MADD, worker thread: the items go through the filter's
 * batch call (hash all, prefetch all, then test or set), and the reply is
 * written straight into the reply batch. A CHECK of one item skips the batch
 * machinery: one filter_check and a 3 or 4 byte reply. */
static void do_items(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                     bool add)
{
    struct worker *w = c->w;
    const struct fentry *e = find_filter(c, cat, &r->filter);
    if (!e)
        return;
    if (add) {
        const char *tok = cat->conf->admin_token;
        if (tok ? !c->authed : !c->loopback) {
            reply_err(
                c, PROTO_ERR_AUTH_REQUIRED,
                tok ? "ADD needs AUTH <token> first on this connection"
                    : "ADD is accepted only from loopback clients when no admin_token is set");
            return;
        }
    }
    struct filter *f = e->v->f;
    if (!add && r->n_items == 1) {
        bool hit = filter_check(f, r->items[0].p, r->items[0].len);
        tally_checks(w, e, 1, hit);
        memcpy(reply_room(c, 4), hit ? "YES\n" : "NO\n", 4);
        w->reply_len += 3 + hit;
        return;
    }
    for (size_t i = 0; i < r->n_items; i++) {
        w->keys[i].data = r->items[i].p;
        w->keys[i].len = r->items[i].len;
    }
    size_t yes = 0;
    if (add) {
        char why[512];
        if (gate_add(&w->gate, e, w->keys, r->n_items, w->bools, why, sizeof(why)) != 0) {
            reply_err(c, PROTO_ERR_INTERNAL, why);
            return;
        }
        STAT_ADD(&w->stats, add_requests, 1);
        STAT_ADD(&w->stats, items_added, r->n_items);
    } else {
        filter_check_batch(f, w->keys, r->n_items, w->bools);
    }
    for (size_t i = 0; i < r->n_items; i++)
        yes += w->bools[i];
    if (add) {
        struct fstats *fs = &w->fstats[e->id];
        STAT_ADD(&w->stats, items_new, yes);
        STAT_ADD(fs, adds[STATS_LINE], r->n_items);
        STAT_ADD(fs, added_new[STATS_LINE], yes);
    } else {
        tally_checks(w, e, r->n_items, yes);
    }
    /* reply_cap leaves PROTO_BOOLS_CAP(max_items) + REPLY_SLACK, so this fits. */
    size_t cap = PROTO_BOOLS_CAP(r->n_items) + 8;
    size_t n = proto_format_bools(reply_room(c, cap), cap, w->bools, r->n_items,
                                  add ? "NEW" : "YES", add ? "EXISTS" : "NO");
    w->reply_len += n;
}

static void conn_start_reload(struct conn *c);

static void do_request(struct conn *c, const struct catalog *cat, const struct proto_request *r)
{
    struct worker *w = c->w;
    w->tally.commands++;
    switch (r->cmd) {
    case PROTO_PING:
        reply_str(c, "PONG\n");
        break;
    case PROTO_CHECK:
    case PROTO_MCHECK:
        do_items(c, cat, r, false);
        break;
    case PROTO_ADD:
    case PROTO_MADD:
        do_items(c, cat, r, true);
        break;
    case PROTO_INFO:
        tally_flush(w); /* INFO counts every request before it, itself included */
        if (r->has_filter) {
            const struct fentry *e = find_filter(c, cat, &r->filter);
            if (e)
                reply_json(c, server_filter_json(e));
        } else {
            reply_json(c, server_info_json(w->srv, cat));
        }
        break;
    case PROTO_FILTERS:
        reply_flush(c);
        for (size_t i = 0; i < cat->n; i++) {
            if (i)
                evbuffer_add(c->out, " ", 1);
            evbuffer_add(c->out, cat->entries[i].name, cat->entries[i].name_len);
        }
        evbuffer_add(c->out, "\n", 1);
        break;
    case PROTO_AUTH: {
        const char *tok = cat->conf->admin_token;
        if (!tok) {
            reply_err(c, PROTO_ERR_AUTH_FAILED, "no admin_token is configured on this server");
        } else if (util_token_equal(r->arg.p, r->arg.len, tok)) {
            c->authed = true;
            reply_str(c, "OK\n");
        } else {
            c->authed = false;
            log_warn("AUTH failed from %s", c->peer);
            reply_err(c, PROTO_ERR_AUTH_FAILED, "wrong token");
        }
        break;
    }
    case PROTO_QUIT:
        reply_str(c, "BYE\n");
        c->closing = true;
        break;
    case PROTO_RELOAD: {
        const char *tok = cat->conf->admin_token;
        if (tok ? !c->authed : !c->loopback)
            reply_err(c, PROTO_ERR_AUTH_REQUIRED,
                      "RELOAD needs AUTH (or a loopback client without admin_token)");
        else if (!w->srv->reload_fn)
            reply_err(c, PROTO_ERR_INTERNAL, "reload is not available");
        else
            conn_start_reload(c);
        break;
    }
    }
}

/* ---- connections ---- */

/* A request whose answer may go to c->out directly, or come later (RELOAD). */
static inline bool r_direct(enum proto_cmd cmd)
{
    return !(cmd == PROTO_PING || cmd == PROTO_CHECK || cmd == PROTO_MCHECK || cmd == PROTO_ADD ||
             cmd == PROTO_MADD);
}

static void conn_close(struct conn *c, const char *why)
{
    struct worker *w = c->w;
    log_debug("connection %s closed: %s", c->peer, why);
    if (c->reload)
        c->reload->c = NULL; /* the reload's answer will find nobody */
    if (c->prev)
        c->prev->next = c->next;
    else
        w->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    w->n_conns--;
    atomic_fetch_sub_explicit(&w->load, 1, memory_order_relaxed);
    event_free(c->rev);
    event_free(c->wev);
    evbuffer_free(c->out);
    /* Give the slot back before the client can see the close: a client that
     * reconnects at once must find it free. */
    atomic_fetch_sub_explicit(&w->srv->conns_open, 1, memory_order_relaxed);
    evutil_closesocket(c->fd);
    free(c->in);
    free(c);
    STAT_ADD(&w->stats, connections_closed, 1);
    if (w->stopping && worker_drained(w))
        event_base_loopexit(w->base, NULL);
}

static void conn_arm_read(struct conn *c)
{
    unsigned idle = cat_now(c->w)->conf->idle_timeout;
    struct timeval tv = {(time_t)idle, 0};
    event_add(c->rev, idle ? &tv : NULL);
}

/* Parse and answer every complete request in the input buffer, unless the
 * unread output passes max_output (then stop and stop reading: the client is
 * not reading its replies). `draining` ignores that limit (shutdown). */
static void conn_process(struct conn *c, bool draining)
{
    struct worker *w = c->w;
    const struct catalog *cat = cat_now(w);
    const struct conf *cf = cat->conf;
    struct proto_limits lim = {cf->max_line, cf->max_item, cf->max_items};
    if (lim.max_items > w->scratch_items)
        lim.max_items = w->scratch_items; /* a reload raised it: takes effect on restart */
    size_t max_output = cf->max_output;
    reply_flush(c); /* a reply written before the call (reload_done) */
    w->out_queued = evbuffer_get_length(c->out);
    w->last_cat = NULL;
    w->last_e = NULL;
    size_t off = 0;
    while (!c->closing && !c->reload && off < c->in_len) {
        /* The waiting CHECKs are answered before the limit is judged exactly. */
        if (!draining && w->out_queued + w->reply_len + 4 * w->n_ahead >= max_output)
            ahead_drain(c);
        if (!draining && w->out_queued + w->reply_len >= max_output) {
            if (!c->paused) {
                c->paused = true;
                event_del(c->rev);
                STAT_ADD(&w->stats, output_pauses, 1);
            }
            break;
        }
        struct proto_request req;
        size_t used = 0;
        enum proto_status st =
            proto_next(c->in + off, c->in_len - off, &lim, &req, w->tokens, &used, &c->scanned);
        if (st == PROTO_NEED_MORE)
            break;
        if (st == PROTO_REQUEST && req.cmd == PROTO_CHECK) {
            const struct fentry *e = lookup_filter(w, cat, &req.filter);
            if (e) {
                off += used;
                check_ahead(c, e, &req.items[0]);
                continue;
            }
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
            /* Only PING and the item commands write nothing but the batch. */
            if (r_direct(req.cmd)) {
                reply_flush(c);
                w->out_queued = evbuffer_get_length(c->out);
            }
        }
    }
    ahead_drain(c);
    tally_flush(w);
    reply_flush(c);
    if (off > 0) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    if (c->in_len == 0 && c->in_cap > IN_IDLE_KEEP) {
        char *small = realloc(c->in, IN_START);
        if (small) {
            c->in = small;
            c->in_cap = IN_START;
        }
    }
}

/* Every reply is in the kernel: end the connection without losing them
 * (connend.h). Worker thread. */
static void conn_linger(struct conn *c)
{
    if (connend_linger(&c->end, c->fd, c->rev))
        conn_close(c, "done");
}

/* Write what is pending with one writev; arm the write event for the rest.
 * First the group commit of the batch's journal records: a reply that says
 * NEW must not leave before its add is durable as the policy promises. */
static void conn_flush(struct conn *c)
{
    if (gate_dirty(&c->w->gate) && !gate_commit(&c->w->gate)) {
        conn_close(c, "journal commit failed: replies withheld");
        return;
    }
    if (evbuffer_get_length(c->out) > 0) {
        int n = evbuffer_write(c->out, c->fd);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            conn_close(c, "write failed");
            return;
        }
    }
    if (evbuffer_get_length(c->out) > 0) {
        unsigned idle = cat_now(c->w)->conf->idle_timeout;
        struct timeval tv = {(time_t)idle, 0};
        event_add(c->wev, idle ? &tv : NULL);
        return;
    }
    event_del(c->wev);
    if (c->closing) {
        conn_linger(c);
        return;
    }
    if (c->paused) {
        /* The client caught up: answer what it already sent, then read again.
         * Arm the read before the flush: the flush may write it all, and then
         * nothing else would ever arm it. */
        c->paused = false;
        conn_process(c, false);
        if (!c->paused && !c->closing && !c->reload)
            conn_arm_read(c);
        if (evbuffer_get_length(c->out) > 0)
            conn_flush(c); /* may close (and free) c */
    }
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    struct worker *w = c->w;
    if (what & EV_TIMEOUT) {
        if (c->end.lingering) {
            conn_close(c, "no EOF from the client after the last reply");
            return;
        }
        /* Not idle while replies are still being written: a client reading
         * them slowly would lose the rest. The write event's own timeout
         * closes a client that stops reading. */
        if (evbuffer_get_length(c->out) == 0) {
            STAT_ADD(&w->stats, idle_timeouts, 1);
            conn_close(c, "idle timeout");
        }
        return;
    }
    if (c->closing) {
        /* After QUIT or a fatal error the connection ends once its replies
         * are written: what the client sends meanwhile is read and dropped.
         * Left unread, it would make the close a reset, and the kernel would
         * throw away the replies it had not delivered yet. */
        const char *why = connend_drain(&c->end, fd, c->rev);
        if (why)
            conn_close(c, why);
        return;
    }
    size_t max_line = cat_now(w)->conf->max_line;
    if (c->in_len == c->in_cap) {
        size_t ncap = c->in_cap * 2;
        if (ncap > max_line + 1)
            ncap = max_line + 1;
        if (ncap <= c->in_cap) {
            /* Cannot happen: a full buffer of max_line + 1 bytes without an LF
             * was refused by the parser. Close rather than spin. */
            conn_close(c, "input buffer full");
            return;
        }
        char *nb = realloc(c->in, ncap);
        if (!nb) {
            conn_close(c, "out of memory");
            return;
        }
        c->in = nb;
        c->in_cap = ncap;
    }
    ssize_t n = recv(fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        conn_close(c, strerror(errno));
        return;
    }
    if (n == 0) {
        /* The client shut down its side: answer what it sent, then close. */
        c->end.peer_eof = true;
        event_del(c->rev);
        conn_process(c, true);
        c->closing = true;
        conn_flush(c);
        registry_quiescent(w->srv->reg, w->id);
        return;
    }
    c->in_len += (size_t)n;
    double t0 = util_now();
    uint64_t before = STAT_GET(&w->stats, commands);
    conn_process(c, false);
    conn_flush(c);
    /* Latency per read: every request answered from it is counted with the
     * time from the read to the write, two clock reads per read not per request. */
    uint64_t answered = STAT_GET(&w->stats, commands) - before;
    if (answered)
        stats_latency_add(&w->latency[STATS_LINE], util_now() - t0, answered);
    registry_quiescent(w->srv->reg, w->id);
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    (void)fd;
    if (what & EV_TIMEOUT) {
        STAT_ADD(&c->w->stats, idle_timeouts, 1);
        conn_close(c, "client did not read its replies");
        return;
    }
    conn_flush(c);
    registry_quiescent(c->w->srv->reg, c->w->id);
}

/* Set up a line-protocol connection on worker w (its thread), admitted
 * against max_connections already. */
static void conn_setup(struct worker *w, evutil_socket_t fd, const struct sockaddr *sa)
{
    struct server *srv = w->srv;
    struct conn *c = calloc(1, sizeof(*c));
    if (c) {
        c->in = malloc(IN_START);
        c->out = evbuffer_new();
        c->rev = event_new(w->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
        c->wev = event_new(w->base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, c);
    }
    if (!c || !c->in || !c->out || !c->rev || !c->wev) {
        log_error("out of memory accepting a connection");
        if (c) {
            free(c->in);
            if (c->out)
                evbuffer_free(c->out);
            if (c->rev)
                event_free(c->rev);
            if (c->wev)
                event_free(c->wev);
            free(c);
        }
        atomic_fetch_sub_explicit(&srv->conns_open, 1, memory_order_relaxed);
        evutil_closesocket(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->w = w;
    c->fd = fd;
    c->in_cap = IN_START;
    c->loopback = util_addr_is_loopback(sa);
    util_addr_text(sa, c->peer, sizeof(c->peer));
    c->next = w->conns;
    if (w->conns)
        w->conns->prev = c;
    w->conns = c;
    w->n_conns++;
    atomic_fetch_add_explicit(&w->load, 1, memory_order_relaxed);
    log_debug("connection from %s on worker %u", c->peer, w->id);
    conn_arm_read(c);
}

/* ---- spreading connections over the workers ---- */

/* The worker with the fewest open connections, w itself on a tie. */
static struct worker *least_loaded(struct worker *w)
{
    struct server *srv = w->srv;
    struct worker *best = w;
    unsigned best_load = atomic_load_explicit(&w->load, memory_order_relaxed);
    for (unsigned i = 0; i < srv->n_workers; i++) {
        struct worker *o = &srv->workers[i];
        unsigned l = atomic_load_explicit(&o->load, memory_order_relaxed);
        if (l < best_load) {
            best = o;
            best_load = l;
        }
    }
    return best;
}

/* Worker thread, on accept: SO_REUSEPORT spreads connections by a hash of
 * their addresses, which with the few long-lived connections of a gateway
 * (say 4) leaves one worker with all of them one time in eight, and 3 to 1
 * half the time. So a worker that has more open connections than another
 * hands the new one over: the least loaded worker takes it from its inbox
 * before reading a byte. True when handed over (the fd is no longer ours). */
bool server_balance_accept(struct worker *w, evutil_socket_t fd, const struct sockaddr *sa,
                           bool http)
{
    struct server *srv = w->srv;
    if (srv->n_workers < 2 || atomic_load_explicit(&srv->stopping, memory_order_relaxed))
        return false;
    struct worker *t = least_loaded(w);
    if (t == w || !t->inbox_ev)
        return false;
    struct handoff *h = calloc(1, sizeof(*h));
    if (!h)
        return false;
    h->fd = fd;
    memcpy(&h->ss, sa,
           sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    h->http = http;
    /* Counted on the target now, so the next accept anywhere sees it. */
    atomic_fetch_add_explicit(&t->load, 1, memory_order_relaxed);
    pthread_mutex_lock(&t->inbox_mu);
    h->next = t->inbox;
    t->inbox = h;
    pthread_mutex_unlock(&t->inbox_mu);
    event_active(t->inbox_ev, EV_READ, 0);
    STAT_ADD(&w->stats, connections_handed_off, 1);
    return true;
}

/* The inbox's event, on the target worker's thread: set up every connection
 * handed over (oldest first); while stopping, close them unread. */
static void inbox_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    pthread_mutex_lock(&w->inbox_mu);
    struct handoff *list = w->inbox, *rev = NULL;
    w->inbox = NULL;
    pthread_mutex_unlock(&w->inbox_mu);
    while (list) { /* the inbox is a stack: reverse it */
        struct handoff *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
    }
    while (rev) {
        struct handoff *h = rev;
        rev = h->next;
        atomic_fetch_sub_explicit(&w->load, 1, memory_order_relaxed); /* setup counts it again */
        if (w->stopping || (h->http && !w->http)) {
            if (!h->http)
                atomic_fetch_sub_explicit(&w->srv->conns_open, 1, memory_order_relaxed);
            evutil_closesocket(h->fd);
        } else if (h->http) {
            http_front_adopt(w->http, h->fd, (struct sockaddr *)&h->ss);
        } else {
            conn_setup(w, h->fd, (struct sockaddr *)&h->ss);
        }
        free(h);
    }
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    struct worker *w = arg;
    struct server *srv = w->srv;
    (void)l;
    (void)salen;
    const struct conf *cf = cat_now(w)->conf;
    unsigned open = atomic_fetch_add_explicit(&srv->conns_open, 1, memory_order_relaxed) + 1;
    if (open > cf->max_connections) {
        static const char msg[] = "ERR too_many_connections the server is at max_connections\n";
        ssize_t ignored = send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)ignored;
        atomic_fetch_sub_explicit(&srv->conns_open, 1, memory_order_relaxed);
        evutil_closesocket(fd);
        STAT_ADD(&w->stats, connections_rejected, 1);
        STAT_ADD(&w->stats, errors_by_code[PROTO_ERR_TOO_MANY_CONNECTIONS], 1);
        return;
    }
    STAT_ADD(&w->stats, connections_accepted, 1);
    if (!server_balance_accept(w, fd, sa, false))
        conn_setup(w, fd, sa);
}

/* ---- RELOAD: answered when the reload is over, without blocking the worker ---- */

/* Format the report as the one reply line: OK with per-filter statuses, or
 * ERR reload_failed naming the first failed filter and its reason. */
static void reload_done(json_t *report, void *arg)
{
    struct pending_reload *p = arg;
    struct conn *c = p->c;
    free(p);
    if (!c) {
        json_decref(report);
        return;
    }
    c->reload = NULL;
    bool ok = json_is_true(json_object_get(report, "ok"));
    json_t *filters = json_object_get(report, "filters");
    char line[1024];
    size_t len = 0;
    if (ok) {
        len += (size_t)snprintf(line, sizeof(line), "OK");
        size_t i;
        json_t *f;
        json_array_foreach(filters, i, f)
        {
            if (len < sizeof(line))
                len += (size_t)snprintf(line + len, sizeof(line) - len, " %s=%s",
                                        json_string_value(json_object_get(f, "name")),
                                        json_string_value(json_object_get(f, "status")));
        }
        if (len >= sizeof(line) - 1)
            len = sizeof(line) - 2;
        line[len++] = '\n';
        reply_flush(c);
        evbuffer_add(c->out, line, len);
    } else {
        const char *msg = json_string_value(json_object_get(report, "error"));
        size_t i;
        json_t *f;
        json_array_foreach(filters, i, f)
        {
            if (!msg && strcmp(json_string_value(json_object_get(f, "status")), "failed") == 0) {
                snprintf(line, sizeof(line), "%s: %s",
                         json_string_value(json_object_get(f, "name")),
                         json_string_value(json_object_get(f, "error")));
                msg = line;
            }
        }
        reply_err(c, PROTO_ERR_RELOAD_FAILED, msg ? msg : "reload failed");
    }
    json_decref(report);
    /* Requests that came after RELOAD waited for it (replies stay in order).
     * Arm the read before the flush: the flush may close and free c. */
    conn_process(c, false);
    if (!c->paused && !c->closing && c->in_len < c->in_cap && !c->reload)
        conn_arm_read(c);
    conn_flush(c); /* may close (and free) c */
}

static void conn_start_reload(struct conn *c)
{
    struct pending_reload *p = calloc(1, sizeof(*p));
    if (!p) {
        reply_err(c, PROTO_ERR_INTERNAL, "out of memory");
        return;
    }
    p->c = c;
    c->reload = p;
    if (!c->w->srv->reload_fn(c->w->srv->reload_ctx, c->w->base, reload_done, p)) {
        c->reload = NULL;
        free(p);
        reply_err(c, PROTO_ERR_INTERNAL, "out of memory: the reload was not started");
        return;
    }
    event_del(c->rev); /* later requests wait in the kernel, not in our buffer */
}

/* ---- workers ---- */

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    registry_quiescent(w->srv->reg, w->id);
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    log_warn("worker %u: %u connection(s) still open at the shutdown deadline; closing them", w->id,
             w->n_conns);
    event_base_loopbreak(w->base);
}

/* Shutdown, on the worker's own thread: stop accepting, read and answer what
 * clients have already sent (until their sockets are empty, or max_output of
 * replies is queued), and close each connection once its replies are written.
 * The loop ends when none is left. */
static void ctl_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    w->stopping = true;
    for (size_t i = 0; i < w->srv->n_addrs; i++) {
        if (w->listeners[i]) {
            evconnlistener_free(w->listeners[i]);
            w->listeners[i] = NULL;
        }
    }
    http_front_stop(w->http);
    size_t max_output = cat_now(w)->conf->max_output;
    struct conn *c = w->conns;
    while (c) {
        struct conn *next = c->next;
        event_del(c->rev);
        c->paused = false;
        conn_process(c, true);
        /* Read and answer until the socket is empty, a buffer at a time. Nothing
         * is written before the loop ends, so max_output bounds the replies
         * queued, and the loop even if the client keeps sending. */
        while (!c->closing && c->in_len < c->in_cap && evbuffer_get_length(c->out) < max_output) {
            ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
            if (n <= 0)
                break;
            c->in_len += (size_t)n;
            conn_process(c, true);
        }
        c->closing = true;
        conn_flush(c); /* may close (and free) c */
        c = next;
    }
    if (worker_drained(w))
        event_base_loopexit(w->base, NULL);
}

/* The HTTP side of a stopping worker closed its last connection. */
static void http_drained(void *arg)
{
    struct worker *w = arg;
    if (w->stopping && worker_drained(w))
        event_base_loopexit(w->base, NULL);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    registry_quiescent(w->srv->reg, w->id);
    event_base_dispatch(w->base);
    /* Whatever is left (deadline passed) is closed without further ado. */
    while (w->conns)
        conn_close(w->conns, "shutdown");
    registry_offline(w->srv->reg, w->id);
    return NULL;
}

/* Open one listening socket. SO_REUSEPORT lets every worker bind the same
 * address; the kernel then spreads new connections over the workers. */
static evutil_socket_t listen_socket(const struct conf_addr *a, int port, char *err, size_t errlen)
{
    struct sockaddr_storage ss = a->ss;
    if (ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
    evutil_socket_t fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "listen %s: socket: %s", a->text, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, a->len) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        snprintf(err, errlen, "listen %s: %s", a->text, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* SO_REUSEPORT would let a second bloomgated (same user) bind the same port and
 * silently take half the connections. Probe first with a plain bind, which
 * fails if anything listens there. */
static int probe_free(const struct conf_addr *a, char *err, size_t errlen)
{
    if ((a->ss.ss_family == AF_INET && ((const struct sockaddr_in *)&a->ss)->sin_port == 0) ||
        (a->ss.ss_family == AF_INET6 && ((const struct sockaddr_in6 *)&a->ss)->sin6_port == 0))
        return 0;
    evutil_socket_t fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (a->ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    int rc = bind(fd, (const struct sockaddr *)&a->ss, a->len);
    int e = errno;
    close(fd);
    if (rc != 0) {
        snprintf(err, errlen, "listen %s: %s", a->text, strerror(e));
        return -1;
    }
    return 0;
}

static int bound_port(evutil_socket_t fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* Bind every address of addrs once per worker: fds[t * n + a] for worker t,
 * address a. Port 0 is resolved by the first bind and shared by the others. */
static int bind_addrs(const struct conf_addr *addrs, size_t n, unsigned threads,
                      evutil_socket_t *fds, int *ports, char *err, size_t errlen)
{
    for (size_t a = 0; a < n; a++) {
        const struct conf_addr *addr = &addrs[a];
        if (probe_free(addr, err, errlen) != 0)
            return -1;
        int port = addr->ss.ss_family == AF_INET
                       ? ntohs(((const struct sockaddr_in *)&addr->ss)->sin_port)
                       : ntohs(((const struct sockaddr_in6 *)&addr->ss)->sin6_port);
        for (unsigned t = 0; t < threads; t++) {
            evutil_socket_t fd = listen_socket(addr, port, err, errlen);
            if (fd < 0)
                return -1;
            fds[t * n + a] = fd;
            if (port == 0)
                port = bound_port(fd); /* the others join the port the kernel chose */
        }
        ports[a] = port;
    }
    return 0;
}

struct server *server_create(struct registry *reg, unsigned threads, char *err, size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, (void (*)(void))evthread_use_pthreads);
    const struct conf *cf = registry_read(reg)->conf;
    struct server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    srv->reg = reg;
    srv->n_workers = threads;
    srv->n_addrs = cf->n_listen;
    srv->started = util_now();
    srv->started_wall = util_wall_seconds();
    srv->workers = calloc(threads, sizeof(*srv->workers));
    srv->fds = malloc(sizeof(*srv->fds) * threads * (cf->n_listen ? cf->n_listen : 1));
    srv->ports = calloc(cf->n_listen ? cf->n_listen : 1, sizeof(int));
    if (!srv->workers || !srv->fds || !srv->ports) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < threads * cf->n_listen; i++)
        srv->fds[i] = -1;
    if (bind_addrs(cf->listen, cf->n_listen, threads, srv->fds, srv->ports, err, errlen) != 0)
        goto fail;
    srv->n_http_addrs = cf->http_off ? 0 : cf->n_http_listen;
    size_t nh = srv->n_http_addrs;
    srv->http_fds = malloc(sizeof(*srv->http_fds) * threads * (nh ? nh : 1));
    srv->http_ports = calloc(nh ? nh : 1, sizeof(int));
    if (!srv->http_fds || !srv->http_ports) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < threads * nh; i++)
        srv->http_fds[i] = -1;
    if (bind_addrs(cf->http_listen, nh, threads, srv->http_fds, srv->http_ports, err, errlen) != 0)
        goto fail;
    size_t items = cf->max_items;
    for (unsigned t = 0; t < threads; t++) {
        struct worker *w = &srv->workers[t];
        w->id = t;
        w->srv = srv;
        w->scratch_items = items;
        w->tokens = calloc(items, sizeof(*w->tokens));
        w->keys = calloc(items, sizeof(*w->keys));
        w->bools = calloc(items, sizeof(*w->bools));
        w->reply_cap = PROTO_BOOLS_CAP(items) + REPLY_SLACK;
        if (w->reply_cap < REPLY_BATCH)
            w->reply_cap = REPLY_BATCH;
        w->reply = malloc(w->reply_cap);
        w->listeners = calloc(cf->n_listen ? cf->n_listen : 1, sizeof(*w->listeners));
        w->fstats = calloc(REGISTRY_MAX_FILTERS, sizeof(*w->fstats));
        w->base = event_base_new();
        w->inbox_mu_ok = pthread_mutex_init(&w->inbox_mu, NULL) == 0;
        w->inbox_ev = w->base ? event_new(w->base, -1, 0, inbox_cb, w) : NULL;
        if (!w->tokens || !w->keys || !w->bools || !w->reply || !w->listeners || !w->fstats ||
            !w->base || !w->inbox_mu_ok || !w->inbox_ev) {
            snprintf(err, errlen, "out of memory setting up worker %u", t);
            goto fail;
        }
        for (size_t a = 0; a < cf->n_listen; a++) {
            w->listeners[a] = evconnlistener_new(w->base, accept_cb, w, LEV_OPT_CLOSE_ON_FREE, -1,
                                                 srv->fds[t * cf->n_listen + a]);
            if (!w->listeners[a]) {
                snprintf(err, errlen, "listen %s: cannot set up the listener", cf->listen[a].text);
                goto fail;
            }
            srv->fds[t * cf->n_listen + a] = -1; /* owned by the listener now */
        }
        if (nh) {
            struct http_env env = {.srv = srv,
                                   .worker = w,
                                   .gate = &w->gate,
                                   .reg = reg,
                                   .worker_id = t,
                                   .base = w->base,
                                   .stats = &w->stats,
                                   .fstats = w->fstats,
                                   .latency = w->latency,
                                   .keys = w->keys,
                                   .bools = w->bools,
                                   .scratch_items = w->scratch_items,
                                   .load = &w->load,
                                   .drained = http_drained,
                                   .drained_arg = w};
            w->http = http_front_create(&env, srv->http_fds + (size_t)t * nh, nh, err, errlen);
            if (!w->http)
                goto fail;
        }
        struct timeval tick = {0, TICK_MS * 1000};
        w->tick = event_new(w->base, -1, EV_PERSIST, tick_cb, w);
        w->ctl = event_new(w->base, -1, 0, ctl_cb, w);
        if (!w->tick || !w->ctl || event_add(w->tick, &tick) != 0 || event_add(w->ctl, NULL) != 0) {
            snprintf(err, errlen, "cannot set up worker %u events", t);
            goto fail;
        }
    }
    reg->on_fresh_id = zero_filter_id;
    reg->on_fresh_ctx = srv;
    return srv;
fail:
    server_free(srv);
    return NULL;
}

void server_set_reload(struct server *srv, server_reload_fn fn, void *ctx)
{
    srv->reload_fn = fn;
    srv->reload_ctx = ctx;
}

int server_start(struct server *srv, char *err, size_t errlen)
{
    for (unsigned t = 0; t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
            snprintf(err, errlen, "cannot start worker thread %u: %s", t, strerror(errno));
            return -1;
        }
        w->started = true;
    }
    return 0;
}

void server_stop(struct server *srv, double timeout_s)
{
    atomic_store(&srv->stopping, true);
    struct timeval tv = {(time_t)timeout_s, (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6)};
    for (unsigned t = 0; t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        if (!w->started)
            continue;
        /* The deadline is armed from here: event_base_once is thread-safe with
         * evthread_use_pthreads, and so is event_active. */
        event_base_once(w->base, -1, EV_TIMEOUT, deadline_cb, w, &tv);
        event_active(w->ctl, EV_TIMEOUT, 0);
    }
    for (unsigned t = 0; t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        if (w->started) {
            pthread_join(w->tid, NULL);
            w->started = false;
        }
    }
}

void server_free(struct server *srv)
{
    if (!srv)
        return;
    if (srv->reg && srv->reg->on_fresh_ctx == srv)
        srv->reg->on_fresh_id = NULL;
    for (unsigned t = 0; srv->workers && t < srv->n_workers; t++) {
        struct worker *w = &srv->workers[t];
        if (w->listeners)
            for (size_t a = 0; a < srv->n_addrs; a++)
                if (w->listeners[a])
                    evconnlistener_free(w->listeners[a]);
        while (w->conns)
            conn_close(w->conns, "server freed");
        http_front_free(w->http);
        w->http = NULL;
        /* Hand-offs that arrived after the loop ended: never served. */
        while (w->inbox) {
            struct handoff *h = w->inbox;
            w->inbox = h->next;
            evutil_closesocket(h->fd);
            free(h);
        }
        if (w->inbox_ev)
            event_free(w->inbox_ev);
        if (w->inbox_mu_ok)
            pthread_mutex_destroy(&w->inbox_mu);
        if (w->tick)
            event_free(w->tick);
        if (w->ctl)
            event_free(w->ctl);
        if (w->base)
            event_base_free(w->base);
        free(w->listeners);
        free(w->fstats);
        free(w->tokens);
        free(w->keys);
        free(w->bools);
        free(w->reply);
    }
    if (srv->fds)
        for (size_t i = 0; i < srv->n_workers * srv->n_addrs; i++)
            if (srv->fds[i] >= 0)
                close(srv->fds[i]);
    free(srv->fds);
    free(srv->ports);
    if (srv->http_fds)
        for (size_t i = 0; i < srv->n_workers * srv->n_http_addrs; i++)
            if (srv->http_fds[i] >= 0)
                close(srv->http_fds[i]);
    free(srv->http_fds);
    free(srv->http_ports);
    free(srv->workers);
    free(srv);
}

struct registry *server_registry(const struct server *srv)
{
    return srv->reg;
}

int server_line_port(const struct server *srv, size_t idx)
{
    return idx < srv->n_addrs ? srv->ports[idx] : -1;
}

/* ---- for the HTTP front end and the metrics ---- */

int server_http_port(const struct server *srv, size_t idx)
{
    return idx < srv->n_http_addrs ? srv->http_ports[idx] : -1;
}

bool server_conn_admit(struct server *srv, unsigned max)
{
    unsigned open = atomic_fetch_add_explicit(&srv->conns_open, 1, memory_order_relaxed) + 1;
    if (open <= max)
        return true;
    atomic_fetch_sub_explicit(&srv->conns_open, 1, memory_order_relaxed);
    return false;
}

void server_conn_release(struct server *srv)
{
    atomic_fetch_sub_explicit(&srv->conns_open, 1, memory_order_relaxed);
}

bool server_reload(struct server *srv, struct event_base *base, server_reload_done done, void *arg)
{
    return srv->reload_fn && srv->reload_fn(srv->reload_ctx, base, done, arg);
}

unsigned server_threads(const struct server *srv)
{
    return srv->n_workers;
}

unsigned server_worker_load(const struct server *srv, unsigned i)
{
    return i < srv->n_workers ? atomic_load_explicit(&srv->workers[i].load, memory_order_relaxed)
                              : 0;
}

int64_t server_started_wall(const struct server *srv)
{
    return srv->started_wall;
}
