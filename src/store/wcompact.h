/* wcompact: when a windowed filter's journal is compacted (docs/design.md,
 * "Windowed filters"): the reload thread's tick asks every second, and the
 * journal is rewritten (journal_compact) without the adds whose slice has
 * expired once the oldest add it kept last time has expired. Reload thread
 * only. */
#ifndef BLOOMGATE_WCOMPACT_H
#define BLOOMGATE_WCOMPACT_H

#include <stdint.h>

#include "bloom/ring.h"
#include "store/journal.h"

/* One filter's schedule: zeroed, it compacts at the first tick. */
struct wcompact {
    const struct journal *j; /* the journal due_ms was reckoned for */
    int64_t due_ms;          /* when the oldest add kept expires */
};

/* Compact j, the journal of the windowed filter name whose ring is ring, if
 * it is due; log what was done or why it failed. */
void wcompact_tick(struct wcompact *w, const char *name, const struct filter_ring *ring,
                   struct journal *j);

#endif
