/* entry: one filter's catalog entry made from its config block (its id and
 * state, its journal opened and replayed onto the version loaded), and the
 * journal and status helpers around it; shared by the start-up load and the
 * reload (reload.c) and the filters made at run time (created.c). The
 * registry's writer only: the main thread at start-up, then the reload
 * thread. */
#ifndef BLOOMGATE_ENTRY_H
#define BLOOMGATE_ENTRY_H

#include <stdint.h>

#include "conf/conf.h"
#include "store/registry.h"

struct journal;

/* One filter's entry made from cf: id and state, journal opened and
 * replayed. 0, or -1 with err (e->v NULL). */
int entry_start(struct registry *reg, const struct conf_filter *cf, unsigned threads,
                struct fentry *e, char *err, size_t errlen);

/* cf's journal opened (a torn tail cut and logged); NULL with err. */
struct journal *entry_open_journal(const struct conf_filter *cf, char *err, size_t errlen);
/* Close j (NULL: nothing), logging a failed final flush. */
void entry_close_journal(struct journal *j);
/* The seed of a filter loaded to be replayed from j (a growing one's comes
 * from the journal, so a replay makes the same sub-filters). */
uint64_t entry_filter_seed(const struct conf_filter *cf, const struct journal *j);
/* Replay [from, to) of j onto v; the records replayed, or -1 with err. */
int64_t entry_replay(struct journal *j, struct fversion *v, uint64_t from, uint64_t to, char *err,
                     size_t errlen);
/* The status INFO shows for st ("loaded", "created", "failed" ...). */
void entry_set_status(struct fstate *st, const char *status, const char *error);

#endif
