/* build_journal: how `bloomgate build --journal` folds journals into a new
 * filter: every record as the daemon applies it, removals included. The
 * calling thread of a build. */
#ifndef BLOOMGATE_BUILD_JOURNAL_H
#define BLOOMGATE_BUILD_JOURNAL_H

#include <stdint.h>

#include "bloom/filter.h"
#include "store/allow.h"
#include "tool/build.h"
#include "tool/build_exact.h"

/* Every journal of o, read in order into a set keyed by f's hash: an item's
 * ALLOW_REMOVED flag says its last add/remove record is a removal,
 * ALLOW_EXCEPT that its last allow/unallow record is an allow. NULL with err. */
struct allow_set *build_journal_state(const struct build_opts *o, struct filter *f, char *err,
                                      size_t errlen);

/* Add every add record's item whose state is not removed to f (and to the
 * exact table's builder xb, unless NULL); *items counts the records' items
 * (all ops). 0, or -1 with err. */
int build_journal_fold(const struct build_opts *o, struct filter *f,
                       const struct allow_set *state, struct exact_builder *xb, uint64_t *items,
                       char *err, size_t errlen);

#endif
