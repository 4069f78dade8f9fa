/* fusedelta: a fuse filter as the daemon serves it, with a small blocked
 * Bloom filter beside it (the delta) that takes the adds a fuse filter
 * cannot (bloom/fuse.h). The returned head is a composite (struct
 * filter_comp_ops): every filter_* call accepts it. A check is a hit when
 * either part holds the item (one batched pass probes both); an add of an
 * item the fuse filter holds already changes nothing, any other goes into
 * the delta, which is sized for delta_capacity items at the rate the fuse
 * filter leaves over: its target minus 2^-f (at least a tenth of the
 * target), so that the two together stay at the target when the delta is
 * full. Past that, filter_room is 0 and the gate refuses adds; the next
 * `bloomgate build --journal` folds the journal's adds into a new fuse file.
 * Checks from any thread, lock-free; adds ordered by the caller (the gate's
 * per-filter mutex, the replay's one thread), as for a plain filter. */
#ifndef BLOOMGATE_FUSEDELTA_H
#define BLOOMGATE_FUSEDELTA_H

#include <stddef.h>
#include <stdint.h>

#include "bloom/filter.h"

#define FUSEDELTA_MIN_DEFAULT 1000u /* the default delta capacity's floor */

/* The default delta capacity of a fuse filter holding items: 1% of them,
 * at least FUSEDELTA_MIN_DEFAULT. */
uint64_t fusedelta_default_capacity(uint64_t items);

/* A head over fuse (a plain fuse filter, loaded or built: the head owns it
 * from now on, also when this fails) with a delta for delta_capacity adds.
 * NULL with err. Loading thread. */
struct filter *fusedelta_create(struct filter *fuse, uint64_t delta_capacity, char *err,
                                size_t errlen);

/* What INFO shows of a head's delta; false when f has none. Any thread. */
struct fusedelta_info {
    uint64_t capacity, items, bytes;
    double fpr_estimated; /* the delta's own */
};
bool fusedelta_get_info(const struct filter *f, struct fusedelta_info *out);

#endif
