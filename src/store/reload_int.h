/* reload_int: what the reload run (reload.c), the reload thread
 * (reloader.c) and the filters made at run time (created.c) share inside
 * src/store. Everything here runs on the registry's single writer: the main
 * thread at start-up, then the reload thread. */
#ifndef BLOOMGATE_RELOAD_INT_H
#define BLOOMGATE_RELOAD_INT_H

#include <jansson.h>
#include <stdint.h>

#include "conf/conf.h"
#include "store/registry.h"

struct journal;

/* One reload: read config_path, load what changed, publish. The report. */
json_t *reload_run(struct registry *reg, const char *config_path, unsigned threads);

/* One filter's entry made from cf: id and state, journal opened and
 * replayed. 0, or -1 with err (e->v NULL). */
int reload_start_entry(struct registry *reg, const struct conf_filter *cf, unsigned threads,
                       struct fentry *e, char *err, size_t errlen);

struct journal *reload_open_journal(const struct conf_filter *cf, char *err, size_t errlen);
void reload_close_journal(struct journal *j);
uint64_t reload_filter_seed(const struct conf_filter *cf, const struct journal *j);
int64_t reload_replay(struct journal *j, struct fversion *v, uint64_t from, uint64_t to,
                      char *err, size_t errlen);
void reload_set_status(struct fstate *st, const char *status, const char *error);

#endif
