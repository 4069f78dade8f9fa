/* housekeep: what the reload thread does once a second between reloads (and
 * after each one): sync the journals (fsync everysec), clear windowed filters'
 * expired slices and compact their journals, plan growing filters' next
 * sub-filter, free the allow tables workers outgrew. Reload thread only (the
 * main thread at shutdown, once that thread has exited). */
#ifndef BLOOMGATE_HOUSEKEEP_H
#define BLOOMGATE_HOUSEKEEP_H

#include "store/registry.h"
#include "store/wcompact.h"

/* The tick's state: the registry it walks and each filter id's compaction
 * schedule. Zeroed, then reg set; nothing to free. */
struct housekeep {
    struct registry *reg;
    struct wcompact compact[REGISTRY_MAX_FILTERS]; /* per filter id (wcompact.h) */
};

/* One tick over every served filter; errors are logged, never fatal. */
void housekeep_tick(struct housekeep *h);

#endif
