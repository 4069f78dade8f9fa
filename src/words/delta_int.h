/* words/delta: what the delta's two files share (delta.c, delta_pre.c): an
 * entry of the delta, and the pre-check that rules out the added words for
 * a plain ASCII text without scanning it with the delta's matcher. Built by
 * the writer with a view, immutable after; any thread reads it. */
#ifndef BLOOMGATE_WORDS_DELTA_INT_H
#define BLOOMGATE_WORDS_DELTA_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "words/delta.h"
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

#define WD_ENDS (WP_START | WP_END) /* a word's `*` ends, as flags */

/* The delta (delta.c; words_delta_fold in fold.c). */
struct words_delta {
    const struct words_matcher *base;
    size_t max;
    pthread_mutex_t mu;      /* the parser b (words_delta_check runs outside the writer) */
    struct words_builder *b; /* the list's settings and tables: parses items, compiles dm */
    struct wd_ent *ents;     /* added words and exceptions */
    size_t nents, capents;
    struct wd_ent *bexc; /* the list's exceptions, their symbols (compiled into dm) */
    size_t nbexc;
    uint64_t *removed; /* [words/64] the list's words removed */
    size_t nremoved;
    bool dirty; /* changed since the last publish */
    _Atomic(struct words_view *) view;
    pthread_mutex_t ret_mu; /* guards retired */
    struct words_view *retired;
    _Atomic size_t c_words, c_exc, c_removed, c_mem;
};

/* An entry into the builder as it is, flags given (its symbols are the
 * delta's, no parsing). 0, or -1 on no memory. */
int wd_push(struct words_builder *b, const struct wd_ent *e, uint32_t flags);
/* Whether the list's word (or exception) w is removed (turned off). */
bool wd_removed(const struct words_delta *d, uint32_t w);
/* Each pattern of m with its symbols (code points): fn(ctx, pattern index,
 * path, length); a non-zero return stops the walk and is returned. */
typedef int wd_pat_fn(void *ctx, uint32_t p, const uint32_t *path, uint32_t n);
int wd_each_pattern(const struct words_matcher *m, wd_pat_fn *fn, void *ctx);

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

/* A published view of the delta (delta.c makes it, delta_scan.c scans
 * with it): immutable once published. */
struct words_view {
    struct words_view *next_retired;
    struct words_matcher *dm; /* added words and the list's exceptions; NULL: none */
    uint32_t *dmap;    /* [dm words] a revived listed word's id in the list, else UINT32_MAX */
    struct wd_pre pre; /* rules dm out for most texts (delta_pre.c) */
    struct words_matcher *de; /* added exceptions, their occurrences reported; NULL: none */
    uint64_t *removed;        /* bitmap over the list's word ids; NULL: none removed */
    size_t nremoved;
    uint32_t nbase; /* the list's word count: ids from here are dm's */
    size_t memory;
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
