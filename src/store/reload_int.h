/* reload_int: the reload run, for the reload thread (reloader.c). The
 * registry's writer only. */
#ifndef BLOOMGATE_RELOAD_INT_H
#define BLOOMGATE_RELOAD_INT_H

#include <jansson.h>

#include "store/registry.h"

/* One reload: read config_path, load what changed, publish. The report. */
json_t *reload_run(struct registry *reg, const char *config_path, unsigned threads);

#endif
