/* amend: the mutations of a filter version (ADD, ALLOW, UNALLOW, REMOVE) as
 * one function over its bits and its allow set, which a worker's request
 * (through core/gate.c), a journal replay and `bloomgate build --journal` all
 * call, so that the three cannot disagree; and the `allow` file, read into a
 * version when it is loaded. Any thread: the bits take atomic ORs, the allow
 * set orders its writers; callers order mutations of one filter (fstate's
 * mut_mu). */
#ifndef BLOOMGATE_AMEND_H
#define BLOOMGATE_AMEND_H

#include <stdbool.h>
#include <stddef.h>

#include "bloom/filter.h"
#include "store/journal.h"
#include "store/registry.h"
#include "words/delta.h"

/* Apply op to the n keys (a host or url filter's keys canonical already) of
 * v. changed[i] (changed may be NULL) says whether key i changed what v
 * answers: ADD a new bit set or a removal undone; ALLOW a new exception;
 * UNALLOW an exception dropped; REMOVE an item the filter reported present
 * (its bits set, not removed already) that no longer is. 0, or -1 when out
 * of memory (err; keys before the failing one are applied). */
int amend_apply(struct fversion *v, enum journal_op op, const struct filter_key *keys, size_t n,
                bool *changed, char *err, size_t errlen);

/* Whether v can take op on n keys, asked before the mutation is journaled
 * (a refused one must leave no record): an ADD to a growing filter that
 * could need a sub-filter past its max_memory is refused (bloom/grow.h).
 * 0, or -1 with why in err. The adding thread. */
int amend_admit(struct fversion *v, enum journal_op op, size_t n, char *err, size_t errlen);

/* amend_apply for a mutation made at time_ms (unix ms, or JOURNAL_NO_TIME:
 * now): a windowed filter's ADD goes into the slice of that time, or
 * nowhere if the slice has expired (bloom/ring.h). */
int amend_apply_at(struct fversion *v, enum journal_op op, int64_t time_ms,
                   const struct filter_key *keys, size_t n, bool *changed, char *err,
                   size_t errlen);

/* A words filter's changes applied without a publish (a replay's) made
 * visible to scans: 0, or -1 on no memory. The replaying thread. */
int amend_words_publish(struct fversion *v, char *err, size_t errlen);

/* Compiles v's delta into its list (words_delta_fold), with a new empty
 * delta of max entries in place of the old; *changes: the words,
 * exceptions and removals it held. v must not be published yet. 0, or -1
 * with err (v unchanged). */
int amend_words_fold(struct fversion *v, size_t max, uint64_t *changes, char *err, size_t errlen);

/* A words filter's version just loaded and replayed from its journal, not
 * yet published: served folded when cf folds (words_fold_after), so that a
 * start-up or a reload, which replay the whole journal, begin with an empty
 * delta; the journal's changes folded as they came may hold more entries
 * than words_delta_max, which would refuse every ADD until the first tick's
 * fold. 0 (also when there is nothing to fold), or -1 with err. */
int amend_words_fold_loaded(const struct conf_filter *cf, struct fversion *v, char *err,
                            size_t errlen);

/* The word-list delta's op for a journal record's: what a words filter's
 * replay applies, and `bloomgate build --journal` for a words file. */
enum words_delta_op amend_words_op(enum journal_op op);

/* A journal_op_fn that applies each record's item to the version ctx: what a
 * replay hands journal_replay_ops. */
int amend_replay_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item, size_t len);

/* Read the allow file path into v's allow set as exceptions, one item per
 * line, as the filter's keys read it: an exact filter takes each line's
 * bytes (trailing white space trimmed; empty lines and lines starting with
 * '#' skipped, as `bloomgate build` reads a plain list); a host or url filter
 * takes each line as ADD does (a host, a URL), or an Adblock exception rule
 * (`@@||host^`, `@@|url`). Remembers the file's identity in v. 0, or -1
 * with "PATH:LINE: why" in err. The loading thread. */
int amend_load_allow_file(struct fversion *v, const char *path, char *err, size_t errlen);

#endif
