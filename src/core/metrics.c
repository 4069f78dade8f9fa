/* The Prometheus exposition. Names follow the Prometheus conventions: the
 * bloomgate_ prefix, _total on counters, base units (seconds, bytes, ratios).
 * Label values are filter names (base/fname.h: never a '"', '\' or line
 * break, the three bytes the format escapes, so ':' '{' '}' and the rest go
 * inside the quotes as they are), protocol names, error codes and the
 * version. Each family is written with its HELP and TYPE lines even when it
 * has no series yet. */
#include "config.h"

#include "core/metrics.h"

#include <event2/buffer.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/filter.h"
#include "bloom/grow.h"
#include "core/stats.h"
#include "exact/exact.h"
#include "store/allow.h"
#include "store/registry.h"
#include "words/delta.h"

static void family(struct evbuffer *o, const char *name, const char *type, const char *help)
{
    evbuffer_add_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Per filter and protocol: one family from one fstats field. */
enum ffield { F_CHECKS, F_HITS, F_ADDS, F_NEW };

static uint64_t fstat_get(const struct fstats *f, enum ffield which, int p)
{
    switch (which) {
    case F_CHECKS:
        return STAT_GET(f, checks[p]);
    case F_HITS:
        return STAT_GET(f, hits[p]);
    case F_ADDS:
        return STAT_GET(f, adds[p]);
    case F_NEW:
        return STAT_GET(f, added_new[p]);
    }
    return 0;
}

static void filter_counters(struct evbuffer *o, const struct catalog *cat,
                            const struct fstats *sums, const char *name, enum ffield which,
                            const char *help)
{
    family(o, name, "counter", help);
    for (size_t i = 0; i < cat->n; i++)
        for (int p = 0; p < STATS_N_PROTO; p++)
            evbuffer_add_printf(o, "%s{filter=\"%s\",protocol=\"%s\"} %" PRIu64 "\n", name,
                                cat->entries[i].name, stats_proto_names[p],
                                fstat_get(&sums[i], which, p));
}

/* The authorization endpoint's verdicts by filter (enum stats_verdict). */
static void authz_counters(struct evbuffer *o, const struct catalog *cat, const struct fstats *sums)
{
    static const char *const verdicts[3] = {"allow", "deny", "error"};
    const char *name = "bloomgate_authz_requests_total";
    family(o, name, "counter",
           "/v1/authz requests by filter and verdict: allow on every filter of a request "
           "answered 204, deny on the filter that matched, error on every filter of a request "
           "answered 400");
    for (size_t i = 0; i < cat->n; i++)
        for (int v = 0; v < 3; v++)
            evbuffer_add_printf(o, "%s{filter=\"%s\",verdict=\"%s\"} %" PRIu64 "\n", name,
                                cat->entries[i].name, verdicts[v], STAT_GET(&sums[i], authz[v]));
}

/* The exact phase by filter: confirmations and the false positives they
 * caught (counters), and the table's entries (a gauge); only filters served
 * with an exact table, so a dashboard sees which are confirmed. */
static void exact_families(struct evbuffer *o, const struct catalog *cat, const struct fstats *sums)
{
    family(o, "bloomgate_exact_confirmations_total", "counter",
           "YES answers of a filter's bits confirmed against its exact table");
    for (size_t i = 0; i < cat->n; i++)
        if (cat->entries[i].v->xd)
            evbuffer_add_printf(o,
                                "bloomgate_exact_confirmations_total{filter=\"%s\"} %" PRIu64 "\n",
                                cat->entries[i].name, STAT_GET(&sums[i], confirms));
    family(o, "bloomgate_exact_false_positives_caught_total", "counter",
           "YES answers of a filter's bits its exact table turned into NO");
    for (size_t i = 0; i < cat->n; i++)
        if (cat->entries[i].v->xd)
            evbuffer_add_printf(o,
                                "bloomgate_exact_false_positives_caught_total{filter=\"%s\"} "
                                "%" PRIu64 "\n",
                                cat->entries[i].name, STAT_GET(&sums[i], fp_caught));
    family(o, "bloomgate_exact_entries", "gauge",
           "Entries in a filter's exact table (the file; run-time changes not counted)");
    for (size_t i = 0; i < cat->n; i++) {
        if (!cat->entries[i].v->xt)
            continue;
        struct exact_info xi;
        exact_table_info(cat->entries[i].v->xt, &xi);
        evbuffer_add_printf(o, "bloomgate_exact_entries{filter=\"%s\"} %" PRIu64 "\n",
                            cat->entries[i].name, xi.count);
    }
}

/* A word list's run-time changes (words/delta.h): what waits in the delta
 * against its limit, and when the list served last folded them in
 * (store/wordsfold.h); words filters only. */
static void words_families(struct evbuffer *o, const struct catalog *cat)
{
    static const char *const names[] = {
        "bloomgate_words_delta_entries", "bloomgate_words_delta_max",
        "bloomgate_words_delta_removed", "bloomgate_words_folded_timestamp_seconds"};
    static const char *const helps[] = {
        "Words and exceptions a word list holds in its run-time delta (against its max)",
        "The word list's words_delta_max",
        "Listed words removed and listed exceptions turned off in the delta",
        "When the list served last folded its run-time changes in (0: never)"};
    for (int k = 0; k < 4; k++) {
        family(o, names[k], "gauge", helps[k]);
        for (size_t i = 0; i < cat->n; i++) {
            const struct fversion *v = cat->entries[i].v;
            if (!v->wd)
                continue;
            struct words_delta_counts dc;
            words_delta_counts(v->wd, &dc);
            uint64_t x = k == 0   ? dc.words + dc.exceptions
                         : k == 1 ? dc.max
                         : k == 2 ? dc.removed
                                  : (uint64_t)v->folded_at;
            evbuffer_add_printf(o, "%s{filter=\"%s\"} %" PRIu64 "\n", names[k],
                                cat->entries[i].name, x);
        }
    }
}

/* Per filter gauges, read from the version being served. */
enum gfield {
    G_ITEMS,
    G_BYTES,
    G_CAPACITY,
    G_FPR_EST,
    G_FPR_TARGET,
    G_GENERATION,
    G_LOADED,
    G_LOAD_SECONDS,
    G_EXCEPTIONS,
    G_REMOVALS,
    G_ALLOW_BYTES
};

static double gauge_get(const struct fentry *e, enum gfield which)
{
    struct fversion *v = e->v;
    switch (which) {
    case G_ITEMS:
        return (double)filter_items(v->f);
    case G_BYTES:
        return (double)filter_bytes(v->f);
    case G_CAPACITY:
        return (double)v->f->capacity;
    case G_FPR_EST:
        return fversion_estimated_fpr(v);
    case G_FPR_TARGET:
        return v->f->fpr_target;
    case G_GENERATION:
        return (double)v->generation;
    case G_LOADED:
        return (double)v->loaded_at;
    case G_LOAD_SECONDS:
        return v->load_seconds;
    case G_EXCEPTIONS:
        return (double)allow_count(v->allow, ALLOW_EXCEPT);
    case G_REMOVALS:
        return (double)allow_count(v->allow, ALLOW_REMOVED);
    case G_ALLOW_BYTES:
        return (double)allow_bytes(v->allow);
    }
    return 0;
}

static void filter_gauges(struct evbuffer *o, const struct catalog *cat, const char *name,
                          enum gfield which, const char *help)
{
    family(o, name, "gauge", help);
    for (size_t i = 0; i < cat->n; i++)
        evbuffer_add_printf(o, "%s{filter=\"%s\"} %.17g\n", name, cat->entries[i].name,
                            gauge_get(&cat->entries[i], which));
}

static void latency_histogram(struct evbuffer *o, const struct stats_src *src)
{
    const char *name = "bloomgate_request_duration_seconds";
    family(o, name, "histogram",
           "Time from a request's arrival to its reply being handed to the socket");
    for (int p = 0; p < STATS_N_PROTO; p++) {
        struct latency l;
        stats_sum_latency(src, (enum stats_proto)p, &l);
        uint64_t cum = 0;
        for (int b = 0; b < STATS_LAT_BUCKETS; b++) {
            cum += STAT_GET(&l, buckets[b]);
            if (b == STATS_LAT_BUCKETS - 1)
                evbuffer_add_printf(o, "%s_bucket{protocol=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name,
                                    stats_proto_names[p], cum);
            else
                evbuffer_add_printf(o, "%s_bucket{protocol=\"%s\",le=\"%g\"} %" PRIu64 "\n", name,
                                    stats_proto_names[p], stats_lat_bounds[b], cum);
        }
        evbuffer_add_printf(o, "%s_sum{protocol=\"%s\"} %.9f\n", name, stats_proto_names[p],
                            (double)STAT_GET(&l, sum_ns) / 1e9);
        /* The +Inf bucket, not the count field: the two are read at slightly
         * different moments, and Prometheus wants them equal. */
        evbuffer_add_printf(o, "%s_count{protocol=\"%s\"} %" PRIu64 "\n", name,
                            stats_proto_names[p], cum);
    }
}

/* A gauge that is a difference of two counters summed over the workers. The
 * sums are not one snapshot, so clamp rather than show a wrapped number. */
static uint64_t diff0(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

/* A growing filter's sub-filters (bloom/grow.h), one series per filter and
 * sub-filter (oldest 0); none for other filters. */
enum sfield { S_CAPACITY, S_ITEMS, S_FPR_TARGET, S_BYTES };

static void sub_gauges(struct evbuffer *o, const struct catalog *cat, const char *name,
                       enum sfield which, const char *help)
{
    family(o, name, "gauge", help);
    for (size_t i = 0; i < cat->n; i++) {
        struct filter_grow *g = grow_of(cat->entries[i].v->f);
        unsigned m = g ? grow_count(g) : 0;
        for (unsigned j = 0; j < m; j++) {
            /* Read directly: grow_sub_info would also run the rate model. */
            const struct filter *sf = g->sub[j];
            double v = which == S_CAPACITY     ? (double)sf->capacity
                       : which == S_ITEMS      ? (double)filter_items(sf)
                       : which == S_FPR_TARGET ? sf->fpr_target
                                               : (double)filter_bytes(sf);
            evbuffer_add_printf(o, "%s{filter=\"%s\",sub=\"%u\"} %.17g\n", name,
                                cat->entries[i].name, j, v);
        }
    }
}

static void growth_families(struct evbuffer *o, const struct catalog *cat)
{
    family(o, "bloomgate_filter_sub_filters", "gauge",
           "Sub-filters of a growing filter (growth on)");
    for (size_t i = 0; i < cat->n; i++) {
        struct filter_grow *g = grow_of(cat->entries[i].v->f);
        if (g)
            evbuffer_add_printf(o, "bloomgate_filter_sub_filters{filter=\"%s\"} %u\n",
                                cat->entries[i].name, grow_count(g));
    }
    family(o, "bloomgate_filter_fpr_bound", "gauge",
           "A growing filter's bound on its compound false-positive rate: the sum of its "
           "sub-filters' targets, under fpr");
    for (size_t i = 0; i < cat->n; i++) {
        struct filter_grow *g = grow_of(cat->entries[i].v->f);
        if (g)
            evbuffer_add_printf(o, "bloomgate_filter_fpr_bound{filter=\"%s\"} %.17g\n",
                                cat->entries[i].name, grow_fpr_bound(g));
    }
    family(o, "bloomgate_filter_max_memory_bytes", "gauge",
           "A growing filter's max_memory (adds that could pass it are refused)");
    for (size_t i = 0; i < cat->n; i++) {
        struct filter_grow *g = grow_of(cat->entries[i].v->f);
        uint64_t max = g ? atomic_load_explicit(&g->max_bytes, memory_order_relaxed) : 0;
        if (max)
            evbuffer_add_printf(o, "bloomgate_filter_max_memory_bytes{filter=\"%s\"} %" PRIu64 "\n",
                                cat->entries[i].name, max);
    }
    sub_gauges(o, cat, "bloomgate_filter_sub_filter_capacity", S_CAPACITY,
               "Items a growing filter's sub-filter is sized for");
    sub_gauges(o, cat, "bloomgate_filter_sub_filter_items", S_ITEMS,
               "Items in a growing filter's sub-filter");
    sub_gauges(o, cat, "bloomgate_filter_sub_filter_fpr_target", S_FPR_TARGET,
               "False-positive rate a growing filter's sub-filter is sized for");
    sub_gauges(o, cat, "bloomgate_filter_sub_filter_bytes", S_BYTES,
               "Memory a growing filter's sub-filter takes");
}

/* The per-filter families: counters summed over the workers (sums, in
 * catalog order), gauges read from the version being served. */
static void filter_families(struct evbuffer *o, const struct catalog *cat,
                            const struct fstats *sums)
{
    filter_counters(o, cat, sums, "bloomgate_items_checked_total", F_CHECKS,
                    "Items looked up, by filter and protocol");
    filter_counters(o, cat, sums, "bloomgate_items_hit_total", F_HITS,
                    "Items looked up and found (YES / true)");
    filter_counters(o, cat, sums, "bloomgate_items_added_total", F_ADDS, "Items given to add");
    filter_counters(o, cat, sums, "bloomgate_items_new_total", F_NEW,
                    "Items that were new when added (NEW / true)");
    authz_counters(o, cat, sums);
    exact_families(o, cat, sums);
    words_families(o, cat);

    filter_gauges(o, cat, "bloomgate_filter_items", G_ITEMS,
                  "Items in the filter (adds that set at least one bit)");
    filter_gauges(o, cat, "bloomgate_filter_bytes", G_BYTES, "Memory the filter's bits take");
    filter_gauges(o, cat, "bloomgate_filter_capacity", G_CAPACITY, "Items the filter is sized for");
    filter_gauges(o, cat, "bloomgate_filter_fpr_estimated", G_FPR_EST,
                  "False-positive rate estimated from the filter's fill");
    filter_gauges(o, cat, "bloomgate_filter_fpr_target", G_FPR_TARGET,
                  "False-positive rate the filter was sized for at capacity");
    filter_gauges(o, cat, "bloomgate_filter_generation", G_GENERATION,
                  "1 for the first load, +1 on each reload (or word-list fold) that replaced the "
                  "filter");
    filter_gauges(o, cat, "bloomgate_filter_loaded_timestamp_seconds", G_LOADED,
                  "When the filter being served was loaded, in unix seconds");
    filter_gauges(o, cat, "bloomgate_filter_load_duration_seconds", G_LOAD_SECONDS,
                  "How long loading the filter being served took");
    filter_gauges(o, cat, "bloomgate_filter_allow_exceptions", G_EXCEPTIONS,
                  "Exceptions in the filter's allow-list (the allow file and ALLOW)");
    filter_gauges(o, cat, "bloomgate_filter_removals", G_REMOVALS,
                  "Items REMOVE hides until a rebuild folds the removal in");
    filter_gauges(o, cat, "bloomgate_filter_allow_bytes", G_ALLOW_BYTES,
                  "Memory the allow-list's hash set takes");
    /* An info gauge (always 1): the layout as a label, so a dashboard can
     * tell a counting filter, whose items REMOVE takes out, from the rest. */
    family(o, "bloomgate_filter_layout_info", "gauge",
           "1, labelled with the layout of the filter being served");
    for (size_t i = 0; i < cat->n; i++)
        evbuffer_add_printf(o, "bloomgate_filter_layout_info{filter=\"%s\",layout=\"%s\"} 1\n",
                            cat->entries[i].name, filter_layout_name(cat->entries[i].v->f->layout));
    growth_families(o, cat);
}

/* The reload outcomes the reload thread records in the registry. */
static void reload_families(struct evbuffer *o, struct registry *reg)
{
    family(o, "bloomgate_reloads_total", "counter",
           "Reloads (SIGHUP, RELOAD, POST /v1/reload) by result: failed if any filter or the "
           "config failed");
    evbuffer_add_printf(o, "bloomgate_reloads_total{result=\"ok\"} %" PRIu64 "\n",
                        (uint64_t)atomic_load(&reg->reloads_ok));
    evbuffer_add_printf(o, "bloomgate_reloads_total{result=\"failed\"} %" PRIu64 "\n",
                        (uint64_t)atomic_load(&reg->reloads_failed));
    family(o, "bloomgate_last_reload_timestamp_seconds", "gauge",
           "When the last reload ended, in unix seconds; 0 before the first");
    evbuffer_add_printf(o, "bloomgate_last_reload_timestamp_seconds %" PRId64 "\n",
                        (int64_t)atomic_load(&reg->last_reload_at));
    family(o, "bloomgate_last_reload_success", "gauge",
           "1 if the last reload changed everything it meant to, else 0");
    evbuffer_add_printf(o, "bloomgate_last_reload_success %d\n",
                        atomic_load(&reg->last_reload_at) ? atomic_load(&reg->last_reload_ok) : 1);
}

/* The counters of STATS_COUNTERS, one family per metric name, its series in
 * table order. A family's entries need not be adjacent in the table (INFO keeps
 * its order): each family is written whole at its first entry. */
static void table_counters(struct evbuffer *o, const struct stats *s)
{
    static const struct {
        const char *metric, *labels, *help;
    } rows[] = {
#define STATS_ROW_(name, metric, labels, help) {metric, labels, help},
        STATS_COUNTERS(STATS_ROW_)
#undef STATS_ROW_
    };
    uint64_t vals[] = {
#define STATS_VAL_(name, metric, labels, help) STAT_GET(s, name),
        STATS_COUNTERS(STATS_VAL_)
#undef STATS_VAL_
    };
    size_t n = sizeof(rows) / sizeof(rows[0]);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(rows[j].metric, rows[i].metric) == 0;
        if (seen)
            continue;
        family(o, rows[i].metric, "counter", rows[i].help);
        for (size_t j = i; j < n; j++) {
            if (strcmp(rows[j].metric, rows[i].metric) != 0)
                continue;
            if (rows[j].labels[0])
                evbuffer_add_printf(o, "%s{%s} %" PRIu64 "\n", rows[j].metric, rows[j].labels,
                                    vals[j]);
            else
                evbuffer_add_printf(o, "%s %" PRIu64 "\n", rows[j].metric, vals[j]);
        }
    }
}

/* Any worker thread, between its requests: the whole exposition from plain
 * data (src), so that the metrics never call up into the network layer. */
int metrics_render(const struct stats_src *src, const struct catalog *cat, struct evbuffer *o)
{
    struct stats s;
    stats_sum(src, &s);
    struct fstats *sums = NULL;
    if (cat->n && !(sums = calloc(cat->n, sizeof(*sums))))
        return -1;
    for (size_t i = 0; i < cat->n; i++)
        stats_sum_filter(src, cat->entries[i].id, &sums[i]);

    family(o, "bloomgate_build_info", "gauge", "Always 1; the version is a label");
    evbuffer_add_printf(o, "bloomgate_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
    family(o, "bloomgate_start_time_seconds", "gauge", "When the daemon started, in unix seconds");
    evbuffer_add_printf(o, "bloomgate_start_time_seconds %" PRId64 "\n", src->started_wall);
    family(o, "bloomgate_worker_threads", "gauge", "Worker threads serving every protocol");
    evbuffer_add_printf(o, "bloomgate_worker_threads %u\n", src->n_workers);

    family(o, "bloomgate_connections_open", "gauge",
           "Client connections open (HTTP: admitted under max_connections)");
    for (int p = 0; p < STATS_N_PROTO; p++) {
        const struct stats_conn_fields *f = &stats_conn_fields[p];
        const char *base = (const char *)&s;
        uint64_t opened = atomic_load_explicit(
            (const _Atomic uint64_t *)(const void *)(base + f->accepted), memory_order_relaxed);
        uint64_t closed = atomic_load_explicit(
            (const _Atomic uint64_t *)(const void *)(base + f->closed), memory_order_relaxed);
        evbuffer_add_printf(o, "bloomgate_connections_open{protocol=\"%s\"} %" PRIu64 "\n",
                            stats_proto_names[p], diff0(opened, closed));
    }
    family(o, "bloomgate_worker_connections", "gauge",
           "Connections open on each worker thread, all protocols");
    for (unsigned i = 0; i < src->n_workers; i++)
        evbuffer_add_printf(o, "bloomgate_worker_connections{worker=\"%u\"} %u\n", i,
                            atomic_load_explicit(&src->blocks[i].load, memory_order_relaxed));
    family(o, "bloomgate_request_buffer_bytes", "gauge",
           "Bytes of input buffers all client connections hold (requests being read)");
    evbuffer_add_printf(o, "bloomgate_request_buffer_bytes %" PRIu64 "\n", src->buffered);
    family(o, "bloomgate_request_buffer_limit_bytes", "gauge",
           "max_buffered: past it, new request bytes are refused");
    evbuffer_add_printf(o, "bloomgate_request_buffer_limit_bytes %zu\n", cat->conf->max_buffered);
    family(o, "bloomgate_reply_buffer_bytes", "gauge",
           "Bytes of replies written by the daemon and not yet read by their clients "
           "(held to max_buffered too)");
    evbuffer_add_printf(o, "bloomgate_reply_buffer_bytes %" PRIu64 "\n", src->out_held);
    table_counters(o, &s);

    family(o, "bloomgate_http_responses_total", "counter", "HTTP responses by status");
    for (int i = 1; i < STATS_HTTP_SLOTS; i++)
        if (stats_http_codes[i])
            evbuffer_add_printf(o, "bloomgate_http_responses_total{code=\"%d\"} %" PRIu64 "\n",
                                stats_http_codes[i], STAT_GET(&s, http_responses[i]));
    evbuffer_add_printf(o, "bloomgate_http_responses_total{code=\"other\"} %" PRIu64 "\n",
                        STAT_GET(&s, http_responses[0]));

    family(o, "bloomgate_errors_total", "counter", "Error replies by protocol and error code");
    for (unsigned e = 0; e < src->n_err[STATS_LINE] && e < STATS_CODE_ERRS; e++)
        if (src->err_names[STATS_LINE][e])
            evbuffer_add_printf(
                o, "bloomgate_errors_total{protocol=\"line\",code=\"%s\"} %" PRIu64 "\n",
                src->err_names[STATS_LINE][e], STAT_GET(&s, errors_by_code[e]));
    for (unsigned e = 0; e < src->n_err[STATS_HTTP] && e < STATS_HTTP_ERRS; e++)
        if (src->err_names[STATS_HTTP][e])
            evbuffer_add_printf(
                o, "bloomgate_errors_total{protocol=\"http\",code=\"%s\"} %" PRIu64 "\n",
                src->err_names[STATS_HTTP][e], STAT_GET(&s, http_errors_by_code[e]));
    for (unsigned e = 0; e < src->n_err[STATS_RESP] && e < STATS_CODE_ERRS; e++)
        if (src->err_names[STATS_RESP][e])
            evbuffer_add_printf(
                o, "bloomgate_errors_total{protocol=\"resp\",code=\"%s\"} %" PRIu64 "\n",
                src->err_names[STATS_RESP][e], STAT_GET(&s, resp_errors_by_code[e]));

    filter_families(o, cat, sums);
    free(sums);
    reload_families(o, src->reg);
    latency_histogram(o, src);
    return 0;
}
