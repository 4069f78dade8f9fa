/* words/delta: what the delta's two files share (delta.c, delta_pre.c): an
 * entry of the delta, and the pre-check that rules out the added words for
 * a plain ASCII text without scanning it with the delta's matcher. Built by
 * the writer with a view, immutable after; any thread reads it. */
#ifndef BLOOMGATE_WORDS_DELTA_INT_H
#define BLOOMGATE_WORDS_DELTA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "words/words_int.h"

/* One entry of the delta: an added word, or an added exception (WP_EXC). */
struct wd_ent {
    uint32_t *cps; /* the normalised symbols (code points) */
    uint32_t n;
    uint32_t flags; /* WP_* | WL_*, as the list parser set them */
    char *text;     /* as added, syntax removed (what a match reports) */
    uint32_t tlen;
    uint32_t word; /* a listed exception's (delta.c's bexc): its word id in the list */
};

/* The pre-check (delta_pre.c): the added words' first words (their symbols
 * before the first space) as hashed keys, so that one pass over a plain
 * ASCII text's bytes tells whether any could occur in it. */
struct wd_pre {
    bool always;     /* an added word it cannot rule out: every text is scanned */
    uint32_t maxf;   /* the longest whole first word in keys, letters */
    uint64_t lens;   /* bit l - 1: a whole first word of l letters (64: or more) */
    uint32_t minf;   /* the shortest first word in keys or pkeys (UINT32_MAX: none) */
    bool space_skip; /* the list's: a space between single letters may be dropped */
    uint64_t *keys;  /* [kmask + 1] first words to be met whole, 0: empty */
    uint64_t *pkeys; /* [pmask + 1] first words of `*`-ended words (met as a prefix) */
    uint32_t kmask, pmask;
    uint32_t npl;                         /* lengths in plens */
    uint8_t plens[WORDS_MAX_SYMBOLS + 1]; /* the lengths of pkeys' words, ascending */
};

/* Makes p from the delta's entries (the added exceptions are passed over)
 * with the list's byte classes f. 0, or -1 on no memory. Writer. */
int wd_pre_build(struct wd_pre *p, const struct words_fast *f, const struct wd_ent *ents, size_t n);
void wd_pre_free(struct wd_pre *p);
size_t wd_pre_memory(const struct wd_pre *p);
/* Whether an added word could occur in text: false only when it cannot (a
 * plain ASCII text none of whose words is a key). Any thread. */
bool wd_pre_maybe(const struct wd_pre *p, const struct words_fast *f, const char *text, size_t len);

/* The added exceptions' occurrences (de's matches) that could cover one of
 * the matches a[0..na) and b[0..nb): de scanned only in windows around
 * them where the text there is plain ASCII, else over the whole text.
 * r[0..*nr), sorted by start, at most cap. -1: the scratch cannot grow. Any
 * thread, with its scratch. */
int wd_reports(const struct words_matcher *de, const struct words_fast *f, struct words_scratch *s,
               const char *text, size_t len, const struct words_match *a, size_t na,
               const struct words_match *b, size_t nb, struct words_match *r, size_t cap,
               size_t *nr, bool *capped);

#endif
