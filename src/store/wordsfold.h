/* wordsfold: a served word list's run-time changes folded into its compiled
 * list on the reload thread (docs/words.md, "Folding"), so that scans stop
 * paying for the delta beside the list and `words_delta_max` bounds only the
 * changes waiting for a fold. wordsfold_tick: reload thread only; the
 * others: the thread loading a version not yet published. */
#ifndef BLOOMGATE_WORDSFOLD_H
#define BLOOMGATE_WORDSFOLD_H

#include "store/registry.h"

/* Once a second: fold the first words filter whose delta has held changes
 * for its `words_fold_after` seconds, or holds half its `words_delta_max`
 * entries (one fold a tick). A fold that fails is logged, and tried again
 * once `words_fold_after` (at least a minute) has passed. */
void wordsfold_tick(struct registry *reg, unsigned threads);

/* Compiles v's delta into its list (words_delta_fold), with a new empty
 * delta of max entries in place of the old; *changes: the words,
 * exceptions and removals it held. v must not be published yet. 0, or -1
 * with err (v unchanged). */
int wordsfold_compile(struct fversion *v, size_t max, uint64_t *changes, char *err, size_t errlen);

/* A words filter's version just loaded and replayed from its journal, not
 * yet published: served folded when cf folds (words_fold_after), so that a
 * start-up or a reload, which replay the whole journal, begin with an empty
 * delta; the journal's changes folded as they came may hold more entries
 * than words_delta_max, which would refuse every ADD until the first tick's
 * fold. 0 (also when there is nothing to fold), or -1 with err. */
int wordsfold_loaded(const struct conf_filter *cf, struct fversion *v, char *err, size_t errlen);

#endif
