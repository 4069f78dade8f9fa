/* stats: per-worker counters, defined once with an X-macro that names each
 * counter's INFO key and its Prometheus series, so the two views cannot drift.
 * Each worker writes only its own copy (STAT_ADD: relaxed loads and stores,
 * plain moves on x86); any thread may sum the copies (stats_sum*). */
#ifndef BLOOMGATE_STATS_H
#define BLOOMGATE_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* X(field, metric, labels, help): the JSON key INFO shows (field), and the
 * Prometheus series /metrics shows (metric{labels}). Both views are generated
 * from this one table (views.c, metrics.c), so neither can leave a counter out.
 * Entries that share a metric are one family, told apart by their labels. */
#define STATS_COUNTERS(X)                                                                          \
    X(connections_accepted, "bloomgate_connections_accepted_total", "protocol=\"line\"",           \
      "Client connections accepted")                                                               \
    X(connections_closed, "bloomgate_connections_closed_total", "protocol=\"line\"",               \
      "Client connections closed (HTTP: admitted ones)")                                           \
    X(connections_rejected, "bloomgate_connections_rejected_total", "protocol=\"line\"",           \
      "Connections refused because max_connections were open")                                     \
    X(connections_handed_off, "bloomgate_connections_handed_off_total", "",                        \
      "Connections accepted by one worker and handed to a less loaded one")                        \
    X(commands, "bloomgate_requests_total", "protocol=\"line\"",                                   \
      "Requests answered (line: every reply; HTTP: every response bloomgate sent)")                \
    X(check_requests, "bloomgate_line_check_requests_total", "",                                   \
      "Line-protocol CHECK and MCHECK requests")                                                   \
    X(add_requests, "bloomgate_line_add_requests_total", "",                                       \
      "Line-protocol ADD and MADD requests")                                                       \
    X(items_checked, "bloomgate_line_items_checked_total", "",                                     \
      "Items looked up on the line protocol")                                                      \
    X(items_hit, "bloomgate_line_items_hit_total", "", "Items answered YES on the line protocol")  \
    X(items_added, "bloomgate_line_items_added_total", "",                                         \
      "Items given to ADD or MADD on the line protocol")                                           \
    X(items_new, "bloomgate_line_items_new_total", "",                                             \
      "Items that were new when added on the line protocol")                                       \
    X(errors, "bloomgate_line_errors_total", "", "Line-protocol error replies, all codes")         \
    X(idle_timeouts, "bloomgate_line_idle_timeouts_total", "",                                     \
      "Line-protocol connections closed for idleness")                                             \
    X(output_pauses, "bloomgate_line_output_pauses_total", "",                                     \
      "Times a line-protocol client's unread replies stopped reading from it")                     \
    X(http_requests, "bloomgate_requests_total", "protocol=\"http\"",                              \
      "Requests answered (line: every reply; HTTP: every response bloomgate sent)")                \
    X(http_connections_accepted, "bloomgate_connections_accepted_total", "protocol=\"http\"",      \
      "Client connections accepted")                                                               \
    X(http_connections_admitted, "bloomgate_http_connections_admitted_total", "",                  \
      "HTTP connections admitted under max_connections")                                           \
    X(http_connections_closed, "bloomgate_connections_closed_total", "protocol=\"http\"",          \
      "Client connections closed (HTTP: admitted ones)")                                           \
    X(http_connections_rejected, "bloomgate_connections_rejected_total", "protocol=\"http\"",      \
      "Connections refused because max_connections were open")                                     \
    X(request_timeouts, "bloomgate_request_timeouts_total", "protocol=\"line\"",                   \
      "Connections closed because a started request did not arrive within request_timeout")        \
    X(http_request_timeouts, "bloomgate_request_timeouts_total", "protocol=\"http\"",              \
      "Connections closed because a started request did not arrive within request_timeout")        \
    X(buffer_refusals, "bloomgate_buffer_refusals_total", "protocol=\"line\"",                     \
      "Requests refused because the input buffers of all connections were at max_buffered")        \
    X(http_buffer_refusals, "bloomgate_buffer_refusals_total", "protocol=\"http\"",                \
      "Requests refused because the input buffers of all connections were at max_buffered")        \
    X(resp_requests, "bloomgate_requests_total", "protocol=\"resp\"",                              \
      "Requests answered (line: every reply; HTTP: every response bloomgate sent)")                \
    X(resp_connections_accepted, "bloomgate_connections_accepted_total", "protocol=\"resp\"",      \
      "Client connections accepted")                                                               \
    X(resp_connections_closed, "bloomgate_connections_closed_total", "protocol=\"resp\"",          \
      "Client connections closed (HTTP: admitted ones)")                                           \
    X(resp_connections_rejected, "bloomgate_connections_rejected_total", "protocol=\"resp\"",      \
      "Connections refused because max_connections were open")                                     \
    X(resp_request_timeouts, "bloomgate_request_timeouts_total", "protocol=\"resp\"",              \
      "Connections closed because a started request did not arrive within request_timeout")        \
    X(resp_buffer_refusals, "bloomgate_buffer_refusals_total", "protocol=\"resp\"",                \
      "Requests refused because the input buffers of all connections were at max_buffered")        \
    X(output_budget_closes, "bloomgate_output_budget_closes_total", "protocol=\"line\"",           \
      "Connections closed holding the most unread replies when all of them passed max_buffered")   \
    X(bloomd_requests, "bloomgate_requests_total", "protocol=\"bloomd\"",                          \
      "Requests answered (line: every reply; HTTP: every response bloomgate sent)")                \
    X(bloomd_errors, "bloomgate_bloomd_errors_total", "",                                          \
      "bloomd-protocol error replies (Client Error, Filter does not exist, Internal Error)")       \
    X(bloomd_connections_accepted, "bloomgate_connections_accepted_total",                         \
      "protocol=\"bloomd\"", "Client connections accepted")                                       \
    X(bloomd_connections_closed, "bloomgate_connections_closed_total", "protocol=\"bloomd\"",      \
      "Client connections closed (HTTP: admitted ones)")                                           \
    X(bloomd_connections_rejected, "bloomgate_connections_rejected_total",                         \
      "protocol=\"bloomd\"", "Connections refused because max_connections were open")            \
    X(bloomd_request_timeouts, "bloomgate_request_timeouts_total", "protocol=\"bloomd\"",          \
      "Connections closed because a started request did not arrive within request_timeout")        \
    X(bloomd_buffer_refusals, "bloomgate_buffer_refusals_total", "protocol=\"bloomd\"",            \
      "Requests refused because the input buffers of all connections were at max_buffered")        \
    STATS_CONN_EXTRA_(X, http, "http")                                                             \
    STATS_CONN_EXTRA_(X, resp, "resp")                                                             \
    STATS_CONN_EXTRA_(X, bloomd, "bloomd")                                                         \
    STATS_MAIL_FRONT_(X, tcp_table, "tcp_table")                                                   \
    STATS_MAIL_FRONT_(X, policy, "policy")                                                         \
    STATS_MAIL_FRONT_(X, dnsbl, "dnsbl")

/* The connection counters a front has beside those above (line's are
 * idle_timeouts, output_pauses and output_budget_closes): p_... in INFO, the
 * protocol label in /metrics (line's first two keep their older names). */
#define STATS_CONN_EXTRA_(X, p, proto)                                                             \
    X(p##_idle_timeouts, "bloomgate_idle_timeouts_total", "protocol=\"" proto "\"",                \
      "Connections closed for idleness (line: bloomgate_line_idle_timeouts_total)")                \
    X(p##_output_pauses, "bloomgate_output_pauses_total", "protocol=\"" proto "\"",                \
      "Times a client's unread replies stopped reading from it (line: "                            \
      "bloomgate_line_output_pauses_total)")                                                       \
    X(p##_output_budget_closes, "bloomgate_output_budget_closes_total", "protocol=\"" proto "\"",  \
      "Connections closed holding the most unread replies when all of them passed max_buffered")

/* The counters of a mail front (tcp_table, policy, dnsbl over TCP), named
 * p_... in INFO and told apart by the protocol label in /metrics. Their
 * lookups are counted per filter and protocol (struct fstats), as every
 * front's are. */
#define STATS_MAIL_FRONT_(X, p, proto)                                                             \
    X(p##_requests, "bloomgate_requests_total", "protocol=\"" proto "\"",                          \
      "Requests answered (line: every reply; HTTP: every response bloomgate sent)")                \
    X(p##_errors, "bloomgate_mail_errors_total", "protocol=\"" proto "\"",                         \
      "Mail-front requests answered with a fault (tcp_table 400, policy DEFER, DNS SERVFAIL)")     \
    X(p##_connections_accepted, "bloomgate_connections_accepted_total", "protocol=\"" proto "\"",  \
      "Client connections accepted")                                                               \
    X(p##_connections_closed, "bloomgate_connections_closed_total", "protocol=\"" proto "\"",      \
      "Client connections closed (HTTP: admitted ones)")                                           \
    X(p##_connections_rejected, "bloomgate_connections_rejected_total", "protocol=\"" proto "\"",  \
      "Connections refused because max_connections were open")                                     \
    X(p##_request_timeouts, "bloomgate_request_timeouts_total", "protocol=\"" proto "\"",          \
      "Connections closed because a started request did not arrive within request_timeout")        \
    X(p##_buffer_refusals, "bloomgate_buffer_refusals_total", "protocol=\"" proto "\"",            \
      "Requests refused because the input buffers of all connections were at max_buffered")        \
    STATS_CONN_EXTRA_(X, p, proto)

/* The statuses the HTTP API answers with, each counted on its own; slot 0
 * counts any other (100 Continue is not a response of its own). */
#define STATS_HTTP_STATUSES(X)                                                                     \
    X(200) X(201) X(204) X(400) X(401) X(403) X(404) X(405) X(408) X(409) X(413) X(431) X(500)    \
    X(501) X(503) X(505) X(507)
#define STATS_HTTP_SLOTS 18
#define STATS_HTTP_ERRS 32 /* enum http_err fits */
#define STATS_CODE_ERRS 32 /* enum proto_err and enum resp_err fit */
#define STATS_HTTP_CODE_(code) code,
static const int stats_http_codes[STATS_HTTP_SLOTS] = {0, STATS_HTTP_STATUSES(STATS_HTTP_CODE_)};
#undef STATS_HTTP_CODE_

/* The slot of an HTTP status in stats.http_responses (0: any other). */
static inline int stats_http_slot(int code)
{
    for (int i = 1; i < STATS_HTTP_SLOTS; i++)
        if (stats_http_codes[i] == code)
            return i;
    return 0;
}

struct stats {
#define STATS_FIELD_(name, metric, labels, help) _Atomic uint64_t name;
    STATS_COUNTERS(STATS_FIELD_)
#undef STATS_FIELD_
    _Atomic uint64_t errors_by_code[STATS_CODE_ERRS];                   /* indexed by enum proto_err */
    _Atomic uint64_t http_errors_by_code[STATS_HTTP_ERRS]; /* indexed by enum http_err */
    _Atomic uint64_t http_responses[STATS_HTTP_SLOTS];     /* by status, see STATS_HTTP_STATUSES */
    _Atomic uint64_t resp_errors_by_code[STATS_CODE_ERRS];              /* indexed by enum resp_err */
};

/* The front ends, for counters kept per protocol. */
enum stats_proto {
    STATS_LINE = 0,
    STATS_HTTP = 1,
    STATS_RESP = 2,
    STATS_TCP_TABLE = 3,
    STATS_POLICY = 4,
    STATS_DNSBL = 5,
    STATS_BLOOMD = 6
};
#define STATS_N_PROTO 7
/* The protocol label of each, by enum stats_proto. */
static const char *const stats_proto_names[STATS_N_PROTO] = {
    "line", "http", "resp", "tcp_table", "policy", "dnsbl", "bloomd"};

/* Where each front's connection counters are in struct stats, so that the
 * one connection implementation (net/conn.c, net/worker.c) counts for every
 * front without knowing them: offsets of _Atomic uint64_t fields. accepted
 * is counted once a connection is admitted under max_connections (HTTP also
 * counts every accepted one, admitted or not, in http_connections_accepted). */
struct stats_conn_fields {
    size_t accepted, closed, rejected, request_timeouts, buffer_refusals;
    size_t idle_timeouts, output_pauses, output_budget_closes;
};
#define STATS_CONN_FIELDS_(acc, p)                                                                 \
    {offsetof(struct stats, acc),                                                                  \
     offsetof(struct stats, p##connections_closed),                                                \
     offsetof(struct stats, p##connections_rejected),                                              \
     offsetof(struct stats, p##request_timeouts),                                                  \
     offsetof(struct stats, p##buffer_refusals),                                                   \
     offsetof(struct stats, p##idle_timeouts),                                                     \
     offsetof(struct stats, p##output_pauses),                                                     \
     offsetof(struct stats, p##output_budget_closes)}
static const struct stats_conn_fields stats_conn_fields[STATS_N_PROTO] = {
    [STATS_LINE] = STATS_CONN_FIELDS_(connections_accepted, ),
    [STATS_HTTP] = STATS_CONN_FIELDS_(http_connections_admitted, http_),
    [STATS_RESP] = STATS_CONN_FIELDS_(resp_connections_accepted, resp_),
    [STATS_TCP_TABLE] = STATS_CONN_FIELDS_(tcp_table_connections_accepted, tcp_table_),
    [STATS_POLICY] = STATS_CONN_FIELDS_(policy_connections_accepted, policy_),
    [STATS_DNSBL] = STATS_CONN_FIELDS_(dnsbl_connections_accepted, dnsbl_),
    [STATS_BLOOMD] = STATS_CONN_FIELDS_(bloomd_connections_accepted, bloomd_),
};
#undef STATS_CONN_FIELDS_

/* Owner-thread increment of the counter at offset off of struct stats (a
 * stats_conn_fields entry). */
#define STAT_ADD_AT(s, off, n)                                                                     \
    do {                                                                                           \
        _Atomic uint64_t *at_ = (_Atomic uint64_t *)(void *)((char *)(s) + (off));                 \
        atomic_store_explicit(at_, atomic_load_explicit(at_, memory_order_relaxed) + (n),          \
                              memory_order_relaxed);                                               \
    } while (0)

/* Per filter (indexed by the registry's filter id), per protocol. An id that
 * starts naming another filter starts from zero by generation, not by another
 * thread writing these (single writer): the registry's writer bumps
 * stats_src.id_gen[id]; the owner, before its next write, sees gen differ,
 * zeroes its slot and stores the new gen (release, after the zeroing); readers
 * sum a slot only when its gen (acquire) matches id_gen[id]. */
struct fstats {
    _Atomic uint64_t gen;          /* the id_gen[id] these counters belong to */
    _Atomic uint64_t checks[STATS_N_PROTO];    /* items looked up */
    _Atomic uint64_t hits[STATS_N_PROTO];      /* items answered YES */
    _Atomic uint64_t adds[STATS_N_PROTO];      /* items added */
    _Atomic uint64_t added_new[STATS_N_PROTO]; /* items that were new */
    _Atomic uint64_t authz[3];     /* /v1/authz requests, by enum stats_verdict */
    _Atomic uint64_t confirms;     /* YES answers of the bits an exact table was asked about */
    _Atomic uint64_t fp_caught;    /* ... that it turned into NO: false positives caught */
};

/* An authorization request's verdict as one filter counts it: allow on every
 * filter of a request answered 204, deny on the filter that matched, error
 * on every filter of a request answered 400 (front/http/http_authz.c). */
enum stats_verdict { STATS_ALLOW = 0, STATS_DENY = 1, STATS_VERDICT_ERROR = 2 };

/* Request latency histogram: upper bounds in seconds, the last is +Inf. */
#define STATS_LAT_BUCKETS 16
static const double stats_lat_bounds[STATS_LAT_BUCKETS] = {
    10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3,
    5e-3,  10e-3, 25e-3, 50e-3,  100e-3, 250e-3, 1.0,  1e300};

struct latency {
    _Atomic uint64_t buckets[STATS_LAT_BUCKETS]; /* not cumulative; summed when exported */
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
};

/* Owner-thread increment: a relaxed load and store, not a locked RMW, since
 * only the owning worker ever writes its copy. */
#define STAT_ADD(s, field, n)                                                                      \
    atomic_store_explicit(&(s)->field,                                                             \
                          atomic_load_explicit(&(s)->field, memory_order_relaxed) + (n),           \
                          memory_order_relaxed)

#define STAT_GET(s, field) atomic_load_explicit(&(s)->field, memory_order_relaxed)

/* Owner thread: record n requests that each took `seconds`. */
static inline void stats_latency_add(struct latency *l, double seconds, uint64_t n)
{
    int b = 0;
    while (b < STATS_LAT_BUCKETS - 1 && seconds > stats_lat_bounds[b])
        b++;
    STAT_ADD(l, buckets[b], n);
    STAT_ADD(l, count, n);
    STAT_ADD(l, sum_ns, (uint64_t)(seconds * 1e9) * n);
}

/* One worker's counters, written only by that worker's thread. */
struct stats_block {
    struct stats s;
    struct fstats *fstats;     /* REGISTRY_MAX_FILTERS entries, by filter id */
    struct latency latency[STATS_N_PROTO]; /* by enum stats_proto */
    _Atomic unsigned load;     /* connections open on this worker, hand-offs included */
};

/* Owner thread: filter id's counters in b, restarted from zero if the id has
 * named a new filter since the last write (see struct fstats). One load and a
 * compare per call: callers call it once per batch, not per item. */
static inline struct fstats *stats_fslot(struct stats_block *b, const _Atomic uint64_t *id_gen,
                                         unsigned id)
{
    struct fstats *f = &b->fstats[id];
    uint64_t g = atomic_load_explicit(&id_gen[id], memory_order_acquire);
    if (atomic_load_explicit(&f->gen, memory_order_relaxed) != g) {
        for (int p = 0; p < STATS_N_PROTO; p++) {
            atomic_store_explicit(&f->checks[p], 0, memory_order_relaxed);
            atomic_store_explicit(&f->hits[p], 0, memory_order_relaxed);
            atomic_store_explicit(&f->adds[p], 0, memory_order_relaxed);
            atomic_store_explicit(&f->added_new[p], 0, memory_order_relaxed);
        }
        for (int v = 0; v < 3; v++)
            atomic_store_explicit(&f->authz[v], 0, memory_order_relaxed);
        atomic_store_explicit(&f->confirms, 0, memory_order_relaxed);
        atomic_store_explicit(&f->fp_caught, 0, memory_order_relaxed);
        atomic_store_explicit(&f->gen, g, memory_order_release);
    }
    return f;
}

struct registry;

/* What the views and the metrics read, lent as plain data by the server (core
 * never calls the network layer). Any thread: every field is summed with
 * relaxed loads. */
struct stats_src {
    const struct stats_block *blocks; /* n_workers of them */
    unsigned n_workers;
    const _Atomic uint64_t *id_gen; /* REGISTRY_MAX_FILTERS generations (struct fstats) */
    unsigned conns_open;            /* connections open, both protocols */
    uint64_t buffered;              /* bytes of input buffers held (max_buffered) */
    uint64_t out_held;              /* bytes of unread replies held (max_buffered) */
    double started;                 /* monotonic seconds */
    int64_t started_wall;           /* unix seconds */
    struct registry *reg;
    /* The error codes' wire names by protocol (the fronts own them), for
     * bloomgate_errors_total: names[p][i] counts errors_by_code[i] (line) or
     * http_errors_by_code[i] (HTTP); NULL entries are skipped. */
    const char *const *err_names[STATS_N_PROTO];
    unsigned n_err[STATS_N_PROTO];
};

/* Sums over the workers (any thread). */
void stats_sum(const struct stats_src *src, struct stats *out);
void stats_sum_filter(const struct stats_src *src, unsigned id, struct fstats *out);
void stats_sum_latency(const struct stats_src *src, enum stats_proto proto, struct latency *out);

#endif
