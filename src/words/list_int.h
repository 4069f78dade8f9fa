/* words: the builder's state, shared by the list parser (list.c) and the
 * compiler (build.c). One thread at a time. */
#ifndef BLOOMGATE_WORDS_LIST_INT_H
#define BLOOMGATE_WORDS_LIST_INT_H

#include "words/words_int.h"

#define WL_PHRASE 0x100u /* listed with a space inside */
#define WL_SUBSTR 0x200u /* listed with a * end */

/* One accepted line: its symbols (in cps/cls) and its text as listed. */
struct wl_ent {
    size_t cp_off, text_off;
    uint32_t cp_len, text_len;
    uint32_t flags; /* WP_* | WL_* */
    uint32_t order; /* the line's rank: the first of equal entries is kept */
};

struct words_builder {
    struct words_opts opts;
    char *skip;
    struct wn_norm norm;
    struct words_summary sum;
    size_t line;
    words_reject_fn on_reject; /* NULL: rejects are only counted (and the first kept) */
    void *on_reject_ctx;
    const char *raw; /* the line being added, as given (for on_reject) */
    size_t raw_len;
    struct wl_ent *ents;
    size_t nents, capents;
    uint32_t *cps;
    uint8_t *cls;
    size_t ncps, capcps, capcls;
    char *text;
    size_t ntext, captext;
};

#endif
