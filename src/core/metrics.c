/* The Prometheus exposition. Names follow the Prometheus conventions: the
 * bloomgate_ prefix, _total on counters, base units (seconds, bytes, ratios).
 * Label values are filter names ([A-Za-z0-9_.-]), protocol names, error codes
 * and the version, none of which needs escaping. Each family is written with
 * its HELP and TYPE lines even when it has no series yet. */
#include "config.h"

#include "core/metrics.h"

#include <event2/buffer.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/filter.h"
#include "front/http/http.h"
#include "front/line/proto.h"
#include "store/registry.h"
#include "net/server.h"
#include "core/stats.h"

static const char *const proto_names[2] = {"line", "http"}; /* by enum stats_proto */

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
        for (int p = 0; p < 2; p++)
            evbuffer_add_printf(o, "%s{filter=\"%s\",protocol=\"%s\"} %" PRIu64 "\n", name,
                                cat->entries[i].name, proto_names[p],
                                fstat_get(&sums[i], which, p));
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
    G_LOAD_SECONDS
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

static void latency_histogram(struct evbuffer *o, struct server *srv)
{
    const char *name = "bloomgate_request_duration_seconds";
    family(o, name, "histogram",
           "Time from a request's arrival to its reply being handed to the socket");
    for (int p = 0; p < 2; p++) {
        struct latency l;
        server_sum_latency(srv, (enum stats_proto)p, &l);
        uint64_t cum = 0;
        for (int b = 0; b < STATS_LAT_BUCKETS; b++) {
            cum += STAT_GET(&l, buckets[b]);
            if (b == STATS_LAT_BUCKETS - 1)
                evbuffer_add_printf(o, "%s_bucket{protocol=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name,
                                    proto_names[p], cum);
            else
                evbuffer_add_printf(o, "%s_bucket{protocol=\"%s\",le=\"%g\"} %" PRIu64 "\n", name,
                                    proto_names[p], stats_lat_bounds[b], cum);
        }
        evbuffer_add_printf(o, "%s_sum{protocol=\"%s\"} %.9f\n", name, proto_names[p],
                            (double)STAT_GET(&l, sum_ns) / 1e9);
        /* The +Inf bucket, not the count field: the two are read at slightly
         * different moments, and Prometheus wants them equal. */
        evbuffer_add_printf(o, "%s_count{protocol=\"%s\"} %" PRIu64 "\n", name, proto_names[p],
                            cum);
    }
}

/* A gauge that is a difference of two counters summed over the workers. The
 * sums are not one snapshot, so clamp rather than show a wrapped number. */
static uint64_t diff0(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

int metrics_render(struct server *srv, const struct catalog *cat, struct evbuffer *o)
{
    struct stats s;
    server_sum_stats(srv, &s);
    struct fstats *sums = NULL;
    if (cat->n && !(sums = calloc(cat->n, sizeof(*sums))))
        return -1;
    for (size_t i = 0; i < cat->n; i++)
        server_sum_filter_stats(srv, cat->entries[i].id, &sums[i]);

    family(o, "bloomgate_build_info", "gauge", "Always 1; the version is a label");
    evbuffer_add_printf(o, "bloomgate_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
    family(o, "bloomgate_start_time_seconds", "gauge", "When the daemon started, in unix seconds");
    evbuffer_add_printf(o, "bloomgate_start_time_seconds %" PRId64 "\n", server_started_wall(srv));
    family(o, "bloomgate_worker_threads", "gauge", "Worker threads serving both protocols");
    evbuffer_add_printf(o, "bloomgate_worker_threads %u\n", server_threads(srv));

    family(o, "bloomgate_connections_open", "gauge",
           "Client connections open (HTTP: admitted under max_connections)");
    evbuffer_add_printf(
        o, "bloomgate_connections_open{protocol=\"line\"} %" PRIu64 "\n",
        diff0(STAT_GET(&s, connections_accepted), STAT_GET(&s, connections_closed)));
    evbuffer_add_printf(
        o, "bloomgate_connections_open{protocol=\"http\"} %" PRIu64 "\n",
        diff0(STAT_GET(&s, http_connections_admitted), STAT_GET(&s, http_connections_closed)));
    family(o, "bloomgate_connections_accepted_total", "counter", "Client connections accepted");
    evbuffer_add_printf(o, "bloomgate_connections_accepted_total{protocol=\"line\"} %" PRIu64 "\n",
                        STAT_GET(&s, connections_accepted));
    evbuffer_add_printf(o, "bloomgate_connections_accepted_total{protocol=\"http\"} %" PRIu64 "\n",
                        STAT_GET(&s, http_connections_accepted));
    family(o, "bloomgate_worker_connections", "gauge",
           "Connections open on each worker thread, both protocols");
    for (unsigned i = 0; i < server_threads(srv); i++)
        evbuffer_add_printf(o, "bloomgate_worker_connections{worker=\"%u\"} %u\n", i,
                            server_worker_load(srv, i));
    family(o, "bloomgate_connections_handed_off_total", "counter",
           "Connections accepted by one worker and handed to a less loaded one");
    evbuffer_add_printf(o, "bloomgate_connections_handed_off_total %" PRIu64 "\n",
                        STAT_GET(&s, connections_handed_off));
    family(o, "bloomgate_connections_rejected_total", "counter",
           "Connections refused because max_connections were open");
    evbuffer_add_printf(o, "bloomgate_connections_rejected_total{protocol=\"line\"} %" PRIu64 "\n",
                        STAT_GET(&s, connections_rejected));
    evbuffer_add_printf(o, "bloomgate_connections_rejected_total{protocol=\"http\"} %" PRIu64 "\n",
                        STAT_GET(&s, http_connections_rejected));
    family(o, "bloomgate_line_idle_timeouts_total", "counter",
           "Line-protocol connections closed for idleness");
    evbuffer_add_printf(o, "bloomgate_line_idle_timeouts_total %" PRIu64 "\n",
                        STAT_GET(&s, idle_timeouts));
    family(o, "bloomgate_line_output_pauses_total", "counter",
           "Times a line-protocol client's unread replies stopped reading from it");
    evbuffer_add_printf(o, "bloomgate_line_output_pauses_total %" PRIu64 "\n",
                        STAT_GET(&s, output_pauses));

    family(o, "bloomgate_requests_total", "counter",
           "Requests answered (line: every reply; HTTP: every response bloomgate sent)");
    evbuffer_add_printf(o, "bloomgate_requests_total{protocol=\"line\"} %" PRIu64 "\n",
                        STAT_GET(&s, commands));
    evbuffer_add_printf(o, "bloomgate_requests_total{protocol=\"http\"} %" PRIu64 "\n",
                        STAT_GET(&s, http_requests));
    family(o, "bloomgate_http_responses_total", "counter", "HTTP responses by status");
    for (int i = 1; i < STATS_HTTP_SLOTS; i++)
        if (stats_http_codes[i])
            evbuffer_add_printf(o, "bloomgate_http_responses_total{code=\"%d\"} %" PRIu64 "\n",
                                stats_http_codes[i], STAT_GET(&s, http_responses[i]));
    evbuffer_add_printf(o, "bloomgate_http_responses_total{code=\"other\"} %" PRIu64 "\n",
                        STAT_GET(&s, http_responses[0]));

    family(o, "bloomgate_errors_total", "counter", "Error replies by protocol and error code");
    for (int e = 1; e < PROTO_ERR_COUNT_; e++)
        evbuffer_add_printf(o,
                            "bloomgate_errors_total{protocol=\"line\",code=\"%s\"} %" PRIu64 "\n",
                            proto_err_name((enum proto_err)e), STAT_GET(&s, errors_by_code[e]));
    for (int e = 0; e < HTTP_ERR_COUNT_; e++)
        evbuffer_add_printf(o,
                            "bloomgate_errors_total{protocol=\"http\",code=\"%s\"} %" PRIu64 "\n",
                            http_err_name((enum http_err)e), STAT_GET(&s, http_errors_by_code[e]));

    filter_counters(o, cat, sums, "bloomgate_items_checked_total", F_CHECKS,
                    "Items looked up, by filter and protocol");
    filter_counters(o, cat, sums, "bloomgate_items_hit_total", F_HITS,
                    "Items looked up and found (YES / true)");
    filter_counters(o, cat, sums, "bloomgate_items_added_total", F_ADDS, "Items given to add");
    filter_counters(o, cat, sums, "bloomgate_items_new_total", F_NEW,
                    "Items that were new when added (NEW / true)");
    free(sums);

    filter_gauges(o, cat, "bloomgate_filter_items", G_ITEMS,
                  "Items in the filter (adds that set at least one bit)");
    filter_gauges(o, cat, "bloomgate_filter_bytes", G_BYTES, "Memory the filter's bits take");
    filter_gauges(o, cat, "bloomgate_filter_capacity", G_CAPACITY, "Items the filter is sized for");
    filter_gauges(o, cat, "bloomgate_filter_fpr_estimated", G_FPR_EST,
                  "False-positive rate estimated from the filter's fill");
    filter_gauges(o, cat, "bloomgate_filter_fpr_target", G_FPR_TARGET,
                  "False-positive rate the filter was sized for at capacity");
    filter_gauges(o, cat, "bloomgate_filter_generation", G_GENERATION,
                  "1 for the first load, +1 on each reload that replaced the filter");
    filter_gauges(o, cat, "bloomgate_filter_loaded_timestamp_seconds", G_LOADED,
                  "When the filter being served was loaded, in unix seconds");
    filter_gauges(o, cat, "bloomgate_filter_load_duration_seconds", G_LOAD_SECONDS,
                  "How long loading the filter being served took");

    struct registry *reg = server_registry(srv);
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

    latency_histogram(o, srv);
    return 0;
}
