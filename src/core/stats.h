/* stats: per-worker counters, defined once with an X-macro so the INFO JSON and
 * the Prometheus text cannot drift. Each worker writes only its own copy with
 * relaxed atomic loads and stores (plain moves on x86, no lock prefix, no
 * shared cache line); readers on other threads sum the copies. */
#ifndef BLOOMGATE_STATS_H
#define BLOOMGATE_STATS_H

#include <stdatomic.h>
#include <stdint.h>

/* X(field, help) */
#define STATS_COUNTERS(X)                                                                  \
    X(connections_accepted, "Connections accepted on the line protocol")                  \
    X(connections_closed, "Line-protocol connections closed")                             \
    X(connections_rejected, "Connections refused over max_connections")                   \
    X(connections_handed_off, "Connections accepted by one worker and served by another")  \
    X(commands, "Line-protocol requests answered")                                        \
    X(check_requests, "CHECK and MCHECK requests")                                        \
    X(add_requests, "ADD and MADD requests")                                              \
    X(items_checked, "Items looked up")                                                   \
    X(items_hit, "Items answered YES")                                                    \
    X(items_added, "Items given to ADD or MADD")                                          \
    X(items_new, "Items that were new when added")                                        \
    X(errors, "Error replies")                                                            \
    X(idle_timeouts, "Connections closed for idleness")                                   \
    X(output_pauses, "Times a client's unread replies stopped reading from it")            \
    X(http_requests, "HTTP requests answered")                                            \
    X(http_connections_accepted, "HTTP connections accepted")                             \
    X(http_connections_admitted, "HTTP connections admitted under max_connections")       \
    X(http_connections_closed, "Admitted HTTP connections closed")                        \
    X(http_connections_rejected, "HTTP connections refused over max_connections")

/* The statuses the HTTP API answers with, each counted on its own; slot 0
 * counts any other (100 Continue is not a response of its own). */
#define STATS_HTTP_STATUSES(X)                                                             \
    X(200) X(400) X(401) X(404) X(405) X(413) X(431) X(500) X(501) X(503) X(505)
#define STATS_HTTP_SLOTS 12
#define STATS_HTTP_ERRS 24 /* enum http_err fits */
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
#define STATS_FIELD_(name, help) _Atomic uint64_t name;
    STATS_COUNTERS(STATS_FIELD_)
#undef STATS_FIELD_
    _Atomic uint64_t errors_by_code[16];      /* indexed by enum proto_err */
    _Atomic uint64_t http_errors_by_code[STATS_HTTP_ERRS]; /* indexed by enum http_err */
    _Atomic uint64_t http_responses[STATS_HTTP_SLOTS]; /* by status, see STATS_HTTP_STATUSES */
};

/* The two front ends, for counters kept per protocol. */
enum stats_proto { STATS_LINE = 0, STATS_HTTP = 1 };

/* Per filter (indexed by the registry's filter id), per protocol. */
struct fstats {
    _Atomic uint64_t checks[2];    /* items looked up */
    _Atomic uint64_t hits[2];      /* items answered YES */
    _Atomic uint64_t adds[2];      /* items added */
    _Atomic uint64_t added_new[2]; /* items that were new */
};

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
#define STAT_ADD(s, field, n)                                                              \
    atomic_store_explicit(&(s)->field,                                                     \
                          atomic_load_explicit(&(s)->field, memory_order_relaxed) + (n),   \
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

#endif
