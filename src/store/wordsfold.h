/* wordsfold: a served word list's run-time changes folded into its compiled
 * list on the reload thread (docs/words.md, "Folding"), so that scans stop
 * paying for the delta beside the list and `words_delta_max` bounds only the
 * changes waiting for a fold (the fold of a version not yet published is
 * amend.h's amend_words_fold). Reload thread only. */
#ifndef BLOOMGATE_WORDSFOLD_H
#define BLOOMGATE_WORDSFOLD_H

#include "store/registry.h"

/* Once a second: fold the first words filter whose delta has held changes
 * for its `words_fold_after` seconds, or holds half its `words_delta_max`
 * entries (one fold a tick). A fold that fails is logged, and tried again
 * once `words_fold_after` (at least a minute) has passed. */
void wordsfold_tick(struct registry *reg, unsigned threads);

#endif
