/* words/fold: a list's delta folded into the list (delta.h,
 * words_delta_fold): what `bloomgate build --journal` writes for a words
 * filter. The writer's thread. */
#include "config.h"

#include <stdio.h>

#include "words/delta_int.h"
#include "words/list_int.h"

/* wd_pat_fn for words_delta_fold: a listed entry into the builder, unless
 * the delta removed it (or turned it off). */
static int wd_fold_pat(void *ctx, uint32_t p, const uint32_t *path, uint32_t n)
{
    struct words_delta *d = ctx;
    const struct words_pat *pt = &d->base->pats[p];
    if (pt->word < d->base->nwords && wd_removed(d, pt->word))
        return 0; /* a word removed, or an exception UNALLOW turned off */
    size_t wl;
    const char *w = words_word(d->base, pt->word, &wl);
    uint32_t fl = pt->flags & (WP_EXC | WD_ENDS);
    for (uint32_t i = 0; i < n && !(fl & WP_EXC); i++)
        fl |= path[i] == WN_SPACE_CP ? WL_PHRASE : 0;
    if (!(fl & WP_EXC) && (fl & WD_ENDS) != WD_ENDS)
        fl |= WL_SUBSTR;
    struct wd_ent e = {(uint32_t *)path, n, fl, (char *)w, (uint32_t)wl, pt->word};
    return wd_push(d->b, &e, fl) != 0 ? -1 : 0;
}

struct words_matcher *words_delta_fold(struct words_delta *d, struct words_summary *sum, char *err,
                                       size_t errlen)
{
    pthread_mutex_lock(&d->mu);
    struct words_builder *b = d->b;
    struct words_matcher *m = NULL;
    words_builder_clear(b);
    if (wd_each_pattern(d->base, wd_fold_pat, d) != 0)
        goto oom;
    for (size_t i = 0; i < d->nents; i++)
        if (wd_push(b, &d->ents[i], d->ents[i].flags) != 0)
            goto oom;
    if ((m = words_builder_compile(b, err, errlen)) && sum)
        *sum = *words_builder_summary(b);
    words_builder_clear(b);
    pthread_mutex_unlock(&d->mu);
    return m;
oom:
    words_builder_clear(b);
    pthread_mutex_unlock(&d->mu);
    snprintf(err, errlen, "out of memory folding the word list's delta");
    return NULL;
}
