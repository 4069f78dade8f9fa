/* views: the JSON that INFO (line protocol) and the HTTP API show of the
 * daemon and of one filter. Any thread that may read the registry (a worker
 * between its quiescent reports); the counters come in as plain data
 * (struct stats_src), so no view calls the network layer. */
#ifndef BLOOMGATE_VIEWS_H
#define BLOOMGATE_VIEWS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/stats.h"
#include "store/registry.h"

/* The whole daemon: version, uptime, connections, every counter of
 * STATS_COUNTERS by its name, reload outcomes, and every filter. */
json_t *views_info_json(const struct stats_src *src, const struct catalog *cat);
/* One filter: sizes, rates, file, its checksum, journal, generation, last
 * reload, and "ready": true (it is served). */
json_t *views_filter_json(const struct fentry *e);
/* The counters of e's exact phase (confirmations, false positives caught),
 * summed over the workers, put into the "exact" object of j (a
 * views_filter_json); nothing for a filter without an exact table. */
void views_exact_counters(json_t *j, const struct stats_src *src, const struct fentry *e);
/* What an adblock filter's compiled lists hold: lines by class, rules by
 * kind, the compiled size. Any thread. */
struct adblock_engine;
json_t *views_adblock_json(const struct adblock_engine *e);
/* What a words filter's compiled list holds and the settings it was built
 * with. Any thread. */
struct words_matcher;
json_t *views_words_json(const struct words_matcher *m);
/* A filter the configuration in force names but no catalog entry serves (a
 * reload could not load it): {"name":..., "ready": false}. What INFO <name>
 * and GET /v1/filters/{name} answer for it, so a shipper or a load balancer
 * polling one filter sees it turn unready instead of "no such filter". */
json_t *views_unloaded_json(const char *name, size_t len);
/* Whether the configuration in force names this filter. */
bool views_configured(const struct catalog *cat, const char *name, size_t len);
/* The configured filters not served, as a JSON array (empty when all are). */
json_t *views_missing_json(const struct catalog *cat);

#endif
