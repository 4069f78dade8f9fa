/* views: the JSON that INFO (line protocol) and the HTTP API show of the
 * daemon and of one filter. Any thread that may read the registry (a worker
 * between its quiescent reports); the counters come in as plain data
 * (struct stats_src), so no view calls the network layer. */
#ifndef BLOOMGATE_VIEWS_H
#define BLOOMGATE_VIEWS_H

#include <jansson.h>

#include "core/stats.h"
#include "store/registry.h"

/* The whole daemon: version, uptime, connections, every counter of
 * STATS_COUNTERS by its name, reload outcomes, and every filter. */
json_t *views_info_json(const struct stats_src *src, const struct catalog *cat);
/* One filter: sizes, rates, file, journal, generation, last reload. */
json_t *views_filter_json(const struct fentry *e);

#endif
