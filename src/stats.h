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
    X(commands, "Line-protocol requests answered")                                        \
    X(check_requests, "CHECK and MCHECK requests")                                        \
    X(add_requests, "ADD and MADD requests")                                              \
    X(items_checked, "Items looked up")                                                   \
    X(items_hit, "Items answered YES")                                                    \
    X(items_added, "Items given to ADD or MADD")                                          \
    X(items_new, "Items that were new when added")                                        \
    X(errors, "Error replies")                                                            \
    X(idle_timeouts, "Connections closed for idleness")                                   \
    X(output_pauses, "Times a client's unread replies stopped reading from it")

struct stats {
#define STATS_FIELD_(name, help) _Atomic uint64_t name;
    STATS_COUNTERS(STATS_FIELD_)
#undef STATS_FIELD_
    _Atomic uint64_t errors_by_code[16]; /* indexed by enum proto_err */
};

/* Owner-thread increment: a relaxed load and store, not a locked RMW, since
 * only the owning worker ever writes its copy. */
#define STAT_ADD(s, field, n)                                                              \
    atomic_store_explicit(&(s)->field,                                                     \
                          atomic_load_explicit(&(s)->field, memory_order_relaxed) + (n),   \
                          memory_order_relaxed)

#define STAT_GET(s, field) atomic_load_explicit(&(s)->field, memory_order_relaxed)

#endif
