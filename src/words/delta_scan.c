/* words/delta_scan: a scan of a compiled list with a delta's view
 * (delta.h, words_view_scan): the list's matches less the removed words,
 * the added words' matches where the pre-check cannot rule them out, and
 * every match an added exception covers dropped. Any thread; the view is
 * immutable once published (delta.c). */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "words/delta.h"
#include "words/delta_int.h"

const char *words_view_word(const struct words_matcher *base, const struct words_view *v,
                            uint32_t id, size_t *len)
{
    if (v && v->dm && id >= v->nbase)
        return words_word(v->dm, id - v->nbase, len);
    return words_word(base, id, len);
}

static int wd_match_cmp(const struct words_match *a, const struct words_match *b)
{
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return a->word < b->word ? -1 : a->word > b->word;
}

/* Drops from m[0..n) (sorted by start) the matches an added exception's
 * occurrence covers (rep[0..nrep), sorted by start), and the list's words
 * removed; the delta's matches (base false) take ids past the list's, but
 * a revived listed word's take its id in the list (v->dmap), and lose it
 * when it is removed.
 * Returns how many are left, compacted in place. A sweep: the occurrences
 * starting at or before a match, their furthest end against the match's
 * end. */
static size_t wd_filter(struct words_match *m, size_t n, const struct words_match *rep, size_t nrep,
                        const struct words_view *v, bool base)
{
    size_t r = 0, k = 0, reach = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        for (; r < nrep && rep[r].start <= m[i].start; r++) {
            if (any && rep[r].end <= reach)
                continue;
            reach = rep[r].end;
            any = true;
        }
        uint32_t w = m[i].word;
        if (any && reach >= m[i].end)
            continue;
        bool listed = base || (v->dmap && v->dmap[w] != UINT32_MAX);
        w = base ? w : listed ? v->dmap[w] : w + v->nbase;
        if (listed && v->removed && w < v->nbase && ((v->removed[w / 64] >> (w % 64)) & 1))
            continue;
        struct words_match x = m[i];
        x.word = w;
        m[k++] = x;
    }
    return k;
}

int words_view_scan(const struct words_matcher *base, const struct words_view *v,
                    struct words_scratch *s, const char *text, size_t len, struct words_match *buf,
                    size_t cap, size_t max, size_t *n, bool *capped)
{
    return words_view_scan_how(base, v, s, text, len, buf, cap, max, n, capped, true);
}

/* Any thread. The list's scan, then dm's where the pre-check cannot rule
 * its words out, then de's where there is a match to cover, around it
 * (spare false: dm and de over every text, whole: what the tests and the
 * fuzz harness compare with). */
int words_view_scan_how(const struct words_matcher *base, const struct words_view *v,
                        struct words_scratch *s, const char *text, size_t len,
                        struct words_match *buf, size_t cap, size_t max, size_t *n, bool *capped,
                        bool spare)
{
    if (max > cap)
        max = cap;
    if (v == NULL)
        return words_scan(base, s, text, len, buf, max, n, capped);
    struct words_match *a = buf + cap, *b = buf + 2 * cap, *r = buf;
    size_t na = 0, nb = 0, nr = 0;
    bool ca = false, cb = false, cr = false;
    /* The list's matches may lose some to the delta: ask for all that fit. */
    bool lose = v->nremoved || v->de;
    if (words_scan(base, s, text, len, a, lose ? cap : max, &na, &ca) != 0)
        return -1;
    if (v->dm && (!spare || wd_pre_maybe(&v->pre, &base->fast, text, len)) &&
        words_scan(v->dm, s, text, len, b, cap, &nb, &cb) != 0)
        return -1;
    if (v->de && !spare && words_scan(v->de, s, text, len, r, cap, &nr, &cr) != 0)
        return -1;
    if (v->de && spare && (na || nb) &&
        wd_reports(v->de, &base->fast, s, text, len, a, na, b, nb, r, cap, &nr, &cr) != 0)
        return -1;
    na = wd_filter(a, na, r, nr, v, true);
    size_t nw = wd_filter(b, nb, r, nr, v, false);
    const struct words_match *w = b;
    size_t i = 0, j = 0, k = 0;
    while ((i < na || j < nw) && k < max) {
        const struct words_match *x =
            j == nw || (i < na && wd_match_cmp(&a[i], &w[j]) <= 0) ? &a[i++] : &w[j++];
        /* a revived listed word found where the list found it too: once */
        if (k == 0 || wd_match_cmp(&buf[k - 1], x) != 0)
            buf[k++] = *x;
    }
    *n = k;
    *capped = ca || cb || cr || i < na || j < nw;
    return 0;
}
