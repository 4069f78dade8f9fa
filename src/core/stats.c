/* Sums of the per-worker counters, see stats.h. Any thread: relaxed loads of
 * counters their owners store with relaxed stores, so a sum is not one
 * snapshot, but each counter in it is at least what its owner had stored
 * before the reply a client has seen (owners count before they reply). */
#include "config.h"

#include "core/stats.h"

#include <string.h>

#include "store/registry.h"

void stats_sum(const struct stats_src *src, struct stats *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < src->n_workers; i++) {
        const struct stats *s = &src->blocks[i].s;
#define STATS_SUM_(name, metric, labels, help) STAT_ADD(out, name, STAT_GET(s, name));
        STATS_COUNTERS(STATS_SUM_)
#undef STATS_SUM_
        for (int c = 0; c < STATS_CODE_ERRS; c++)
            STAT_ADD(out, errors_by_code[c], STAT_GET(s, errors_by_code[c]));
        for (int c = 0; c < STATS_HTTP_ERRS; c++)
            STAT_ADD(out, http_errors_by_code[c], STAT_GET(s, http_errors_by_code[c]));
        for (int c = 0; c < STATS_HTTP_SLOTS; c++)
            STAT_ADD(out, http_responses[c], STAT_GET(s, http_responses[c]));
        for (int c = 0; c < STATS_CODE_ERRS; c++)
            STAT_ADD(out, resp_errors_by_code[c], STAT_GET(s, resp_errors_by_code[c]));
    }
}

void stats_sum_filter(const struct stats_src *src, unsigned id, struct fstats *out)
{
    memset(out, 0, sizeof(*out));
    if (id >= REGISTRY_MAX_FILTERS)
        return;
    uint64_t g = atomic_load_explicit(&src->id_gen[id], memory_order_acquire);
    for (unsigned i = 0; i < src->n_workers; i++) {
        const struct fstats *f = &src->blocks[i].fstats[id];
        /* A slot of an older generation belongs to the filter that held the
         * id before: it counts as zero until its owner restarts it. */
        if (atomic_load_explicit(&f->gen, memory_order_acquire) != g)
            continue;
        for (int p = 0; p < STATS_N_PROTO; p++) {
            STAT_ADD(out, checks[p], STAT_GET(f, checks[p]));
            STAT_ADD(out, hits[p], STAT_GET(f, hits[p]));
            STAT_ADD(out, adds[p], STAT_GET(f, adds[p]));
            STAT_ADD(out, added_new[p], STAT_GET(f, added_new[p]));
        }
        for (int v = 0; v < 3; v++)
            STAT_ADD(out, authz[v], STAT_GET(f, authz[v]));
        STAT_ADD(out, confirms, STAT_GET(f, confirms));
        STAT_ADD(out, fp_caught, STAT_GET(f, fp_caught));
    }
}

void stats_sum_latency(const struct stats_src *src, enum stats_proto proto, struct latency *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < src->n_workers; i++) {
        const struct latency *l = &src->blocks[i].latency[proto];
        for (int b = 0; b < STATS_LAT_BUCKETS; b++)
            STAT_ADD(out, buckets[b], STAT_GET(l, buckets[b]));
        STAT_ADD(out, count, STAT_GET(l, count));
        STAT_ADD(out, sum_ns, STAT_GET(l, sum_ns));
    }
}
