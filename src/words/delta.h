/* words/delta: a served word list's run-time changes (ADD and REMOVE of
 * words, ALLOW and UNALLOW of exception phrases), kept beside the compiled
 * list and scanned with it, so that a change is seen by the next scan
 * without rebuilding the list (docs/words.md, "Run-time changes"). Changes
 * and publishes come from one writer at a time (the caller serialises them:
 * the daemon's per-filter mutation lock); scans read the published view
 * lock-free from any thread; a replaced view is retired, and freed by the
 * caller once no scan can still hold it (a grace period). */
#ifndef BLOOMGATE_WORDS_DELTA_H
#define BLOOMGATE_WORDS_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "words/words.h"

#define WORDS_DELTA_MAX_DEFAULT 10000 /* entries (words and exceptions) a delta holds */

enum words_delta_op {
    WORDS_DELTA_ADD,     /* a word or phrase, list syntax (`*` ends, `\` escape) */
    WORDS_DELTA_REMOVE,  /* a word, listed or added: it no longer matches */
    WORDS_DELTA_ALLOW,   /* an exception phrase, as an `@@` line without its `@@` */
    WORDS_DELTA_UNALLOW, /* an exception added by ALLOW dropped, or a listed one turned off */
};

struct words_delta;
struct words_view;

/* A delta over base (kept, not owned: it must outlive the delta) holding at
 * most max entries. NULL with the reason on no memory. Any thread. */
struct words_delta *words_delta_new(const struct words_matcher *base, size_t max, char *err,
                                    size_t errlen);
/* Frees the delta, its view and the retired ones: no scan may hold any. */
void words_delta_free(struct words_delta *d);

/* Whether item reads as op reads it (a word of the list's syntax for ADD
 * and REMOVE, an exception phrase for ALLOW and UNALLOW), normalised with
 * the list's own settings: 0, or -1 with why (invalid UTF-8, only skipped
 * characters, too long, a line break...). Any thread. */
int words_delta_check(struct words_delta *d, enum words_delta_op op, const char *item, size_t len,
                      char *why, size_t whylen);

/* Whether n more items of op fit the delta's max (ADD and ALLOW may add an
 * entry each; REMOVE and UNALLOW never add one): 0, or -1 with why. Writer. */
int words_delta_admit(const struct words_delta *d, enum words_delta_op op, size_t n, char *why,
                      size_t whylen);

/* Applies one item: 1 when what a scan finds changed, 0 when it did not
 * (already so), -1 with why (a bad item, no memory). Not seen by scans
 * until words_delta_publish. Writer. */
int words_delta_apply(struct words_delta *d, enum words_delta_op op, const char *item, size_t len,
                      char *why, size_t whylen);

/* Compiles the changes applied since the last publish into a new view and
 * publishes it (the old one retired); nothing to do when none were. 0, or
 * -1 on no memory (the old view stays). Writer. */
int words_delta_publish(struct words_delta *d, char *err, size_t errlen);

/* The view scans read, NULL when the delta holds nothing (the list's own
 * answer stands): one acquire load. Any thread. */
const struct words_view *words_delta_view(const struct words_delta *d);

/* What the delta holds (a moment's view). Any thread. */
struct words_delta_counts {
    size_t words;      /* words added (not in the list, or with other `*` ends) */
    size_t exceptions; /* exception phrases added */
    size_t removed;    /* entries of the compiled list removed (words) or turned off (exceptions) */
    size_t max;        /* entries it may hold */
    size_t memory;     /* bytes of its compiled view */
};
void words_delta_counts(const struct words_delta *d, struct words_delta_counts *c);

/* Detaches the retired views (NULL if none): the caller frees them with
 * words_view_free_list once no scan can hold one. Any thread. */
struct words_view *words_delta_take_retired(struct words_delta *d);
void words_view_free_list(struct words_view *v);
/* The link of a retired view to the next: for a caller that joins lists. */
struct words_view **words_view_next_retired(struct words_view *v);

/* words_scan of base with the view's changes: the list's matches less the
 * removed words, with the added words' matches and the listed words a
 * listed exception turned off no longer hides, less every match an added
 * exception covers (in bytes of the text: [start, end) inside one of its
 * occurrences). buf holds 3 * cap matches; the answer is buf[0..*n), at
 * most max (<= cap), sorted by start, *capped when there were more. Match
 * ids are words_view_word's. -1 when the scratch cannot grow. Any thread. */
int words_view_scan(const struct words_matcher *base, const struct words_view *v,
                    struct words_scratch *s, const char *text, size_t len, struct words_match *buf,
                    size_t cap, size_t max, size_t *n, bool *capped);
/* The list with the delta's changes in it, compiled with the list's own
 * settings: every listed entry the delta has not removed, then every entry
 * it added (an added exception as an exception); the list's rules for equal
 * entries decide as in a list file. What `bloomgate build --journal` writes
 * for a words filter. *sum (may be NULL): the new list's counts (no lines
 * read). NULL with err. The writer's thread. */
struct words_matcher *words_delta_fold(struct words_delta *d, struct words_summary *sum, char *err,
                                       size_t errlen);

/* words_view_scan with its shortcuts (spare: the added words scanned only
 * where a pre-check cannot rule them out, the added exceptions only around
 * the matches) or without them: the same results (tests, fuzz). */
int words_view_scan_how(const struct words_matcher *base, const struct words_view *v,
                        struct words_scratch *s, const char *text, size_t len,
                        struct words_match *buf, size_t cap, size_t max, size_t *n, bool *capped,
                        bool spare);
/* A match's word as listed or added (v NULL: base's words_word). */
const char *words_view_word(const struct words_matcher *base, const struct words_view *v,
                            uint32_t id, size_t *len);

#endif
