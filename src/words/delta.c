/* words/delta: run-time changes beside a compiled list (delta.h).
 *
 * Why a delta scanned beside the list rather than the list rebuilt: a
 * rebuild of a 50,000-word list takes far longer than a request may hold a
 * worker, and a background rebuild would leave a window in which an
 * acknowledged ADD is not found (docs/benchmarks.md, "Run-time
 * changes"). The delta is small, so it is compiled again on every change.
 *
 * What a view holds: the compiled list's words removed (a bitmap over its
 * word ids); a small matcher `dm` of the added words, with the list's own
 * exceptions compiled in as exceptions (so they cover the added words as
 * they cover the listed ones), and its pre-check (delta_pre.c: the added
 * words' first words, looked up word by word in a plain ASCII text, so
 * that dm scans only the texts it could find something in); and a matcher
 * `de` of the added exceptions, compiled as plain words without boundaries:
 * their occurrences are reported and every match they cover is dropped, the
 * list's and the added ones alike. de is apart because it checks no
 * boundary, which turns the ASCII skip off: it is scanned only when there
 * is a match, and then only around the matches. Writer: one thread at a
 * time (delta.h). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words/delta.h"
#include "words/delta_int.h"
#include "words/list_int.h"

static void wd_view_free(struct words_view *v)
{
    if (v == NULL)
        return;
    words_matcher_free(v->dm);
    free(v->dmap);
    wd_pre_free(&v->pre);
    words_matcher_free(v->de);
    free(v->removed);
    free(v);
}

struct words_view **words_view_next_retired(struct words_view *v)
{
    return &v->next_retired;
}

void words_view_free_list(struct words_view *v)
{
    while (v) {
        struct words_view *next = v->next_retired;
        wd_view_free(v);
        v = next;
    }
}

static void wd_ent_free(struct wd_ent *e)
{
    free(e->cps);
    free(e->text);
}

/* A builder with the list's settings and normalisation table, copied from
 * the matcher: an item is normalised exactly as the list was (the Chinese
 * pairs come from the list, so no OpenCC is needed here). */
static struct words_builder *wd_builder(const struct words_matcher *m, char *err, size_t errlen)
{
    struct words_builder *b = calloc(1, sizeof *b);
    if (b == NULL)
        goto oom;
    b->opts = m->opts;
    b->skip = strdup(m->skip ? m->skip : WORDS_SKIP_DEFAULT);
    if (b->skip == NULL)
        goto oom;
    b->opts.skip = b->skip;
    b->opts.opencc_config = NULL;
    b->norm.nfkc = m->norm.nfkc;
    b->norm.zh = m->norm.zh;
    if (wn_parse_skip(&b->norm, b->skip, err, errlen) != 0)
        goto fail;
    if (m->norm.nt2s) {
        b->norm.t2s = malloc(m->norm.nt2s * 2 * sizeof *b->norm.t2s);
        if (b->norm.t2s == NULL)
            goto oom;
        memcpy(b->norm.t2s, m->norm.t2s, m->norm.nt2s * 2 * sizeof *b->norm.t2s);
        b->norm.nt2s = m->norm.nt2s;
    }
    b->norm.bmp = malloc(0x10000 * sizeof *b->norm.bmp);
    if (b->norm.bmp == NULL)
        goto oom;
    memcpy(b->norm.bmp, m->norm.bmp, 0x10000 * sizeof *b->norm.bmp);
    return b;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    words_builder_free(b);
    return NULL;
}

/* The trie's goto edge of state st on code point cp (no failure links):
 * the next state, 0 when there is none. */
static uint32_t wd_goto(const struct words_matcher *m, uint32_t st, uint32_t cp)
{
    uint32_t c = words_symbol(m, cp);
    if (c == 0)
        return 0;
    for (uint32_t a = m->st[st].first, b = m->st[st + 1].first; a < b; a++)
        if (m->edges[a].sym == c)
            return m->edges[a].tgt;
    return 0;
}

/* The pattern of m whose symbols are cps: its index, or -1 when m lists no
 * such entry. */
static long wd_lookup(const struct words_matcher *m, const uint32_t *cps, uint32_t n)
{
    uint32_t st = 0;
    for (uint32_t i = 0; i < n; i++)
        if ((st = wd_goto(m, st, cps[i])) == 0)
            return -1;
    return m->st[st].out ? (long)m->st[st].out - 1 : -1;
}

/* delta_int.h. A walk of the trie from the root that keeps the path. */
int wd_each_pattern(const struct words_matcher *m, wd_pat_fn *fn, void *ctx)
{
    uint32_t state[WORDS_MAX_SYMBOLS + 2], edge[WORDS_MAX_SYMBOLS + 2], path[WORDS_MAX_SYMBOLS + 1];
    int depth = 0;
    state[0] = 0;
    edge[0] = m->st[0].first;
    while (depth >= 0) {
        uint32_t s = state[depth];
        if (edge[depth] >= m->st[s + 1].first || depth > WORDS_MAX_SYMBOLS) {
            depth--;
            continue;
        }
        uint32_t t = m->edges[edge[depth]].tgt, sym = m->edges[edge[depth]].sym;
        edge[depth]++;
        if (sym == 0 || sym > m->nsym || t == 0 || t >= m->nstates)
            continue; /* a loaded matcher's edges are checked; keep the walk safe */
        path[depth] = m->alpha[sym - 1];
        uint32_t o = m->st[t].out;
        if (o && o <= m->npat) {
            int rc = fn(ctx, o - 1, path, (uint32_t)depth + 1);
            if (rc)
                return rc;
        }
        if (depth + 1 <= WORDS_MAX_SYMBOLS) {
            depth++;
            state[depth] = t;
            edge[depth] = m->st[t].first;
        }
    }
    return 0;
}

/* wd_pat_fn for wd_base_exceptions: a listed exception with its symbols. */
static int wd_bexc_pat(void *ctx, uint32_t p, const uint32_t *path, uint32_t n)
{
    struct words_delta *d = ctx;
    const struct words_matcher *m = d->base;
    if (!(m->pats[p].flags & WP_EXC))
        return 0;
    struct wd_ent *e = &d->bexc[d->nbexc];
    size_t wl;
    const char *w = words_word(m, m->pats[p].word, &wl);
    e->n = n;
    e->cps = malloc(e->n * sizeof *e->cps);
    e->text = malloc(wl ? wl : 1);
    if (e->cps == NULL || e->text == NULL) {
        wd_ent_free(e);
        return -1;
    }
    memcpy(e->cps, path, e->n * sizeof *e->cps);
    memcpy(e->text, w, wl);
    e->tlen = (uint32_t)wl;
    e->flags = WP_EXC;
    e->word = m->pats[p].word;
    d->nbexc++;
    return 0;
}

/* The list's exceptions with their symbols, from its trie. Once per delta. */
static int wd_base_exceptions(struct words_delta *d)
{
    const struct words_matcher *m = d->base;
    size_t cap = 0;
    for (uint32_t p = 0; p < m->npat; p++)
        cap += (m->pats[p].flags & WP_EXC) != 0;
    d->bexc = calloc(cap ? cap : 1, sizeof *d->bexc);
    if (d->bexc == NULL)
        return -1;
    /* A pattern is one state's: the walk meets at most cap exceptions. */
    return wd_each_pattern(m, wd_bexc_pat, d) != 0 ? -1 : 0;
}

struct words_delta *words_delta_new(const struct words_matcher *base, size_t max, char *err,
                                    size_t errlen)
{
    struct words_delta *d = calloc(1, sizeof *d);
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    d->base = base;
    d->max = max;
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->ret_mu, NULL);
    d->removed = calloc(base->nwords / 64 + 1, sizeof *d->removed);
    if (d->removed == NULL || !(d->b = wd_builder(base, err, errlen)) ||
        wd_base_exceptions(d) != 0) {
        if (d->removed == NULL || d->b)
            snprintf(err, errlen, "out of memory");
        words_delta_free(d);
        return NULL;
    }
    return d;
}

void words_delta_free(struct words_delta *d)
{
    if (d == NULL)
        return;
    wd_view_free(atomic_load(&d->view));
    words_view_free_list(d->retired);
    for (size_t i = 0; i < d->nents; i++)
        wd_ent_free(&d->ents[i]);
    for (size_t i = 0; i < d->nbexc; i++)
        wd_ent_free(&d->bexc[i]);
    free(d->ents);
    free(d->bexc);
    free(d->removed);
    words_builder_free(d->b);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->ret_mu);
    free(d);
}

/* Parses item as op reads it into d->b (one entry, b->ents[0]), under
 * d->mu: 0, or -1 with why. An exception is an `@@` line: ALLOW and
 * UNALLOW give the phrase, the parser is handed `@@` + it. */
static int wd_parse(struct words_delta *d, enum words_delta_op op, const char *item, size_t len,
                    char *why, size_t whylen)
{
    struct words_builder *b = d->b;
    bool exc = op == WORDS_DELTA_ALLOW || op == WORDS_DELTA_UNALLOW;
    if (len > WORDS_MAX_LINE) {
        snprintf(why, whylen, "longer than %d bytes", WORDS_MAX_LINE);
        return -1;
    }
    if (memchr(item, '\n', len) || memchr(item, '\r', len)) {
        snprintf(why, whylen, "a line break: an entry is one line of the list");
        return -1;
    }
    char line[WORDS_MAX_LINE + 2];
    size_t ll = 0;
    if (exc) {
        line[0] = line[1] = '@';
        ll = 2;
    }
    memcpy(line + ll, item, len);
    ll += len;
    words_builder_clear(b);
    char err[128];
    if (words_builder_add_line(b, line, ll, err, sizeof err) != 0) {
        snprintf(why, whylen, "%s", err);
        return -1;
    }
    if (b->sum.rejects) {
        snprintf(why, whylen, "%s", b->sum.first[0].reason);
        return -1;
    }
    if (b->nents != 1) {
        snprintf(why, whylen, "nothing listed (a blank, or a comment: write `\\#` for a `#`)");
        return -1;
    }
    if (!exc && (b->ents[0].flags & WP_EXC)) {
        snprintf(why, whylen, "an exception: %s takes words; ALLOW and UNALLOW take exceptions",
                 op == WORDS_DELTA_ADD ? "ADD" : "REMOVE");
        return -1;
    }
    return 0;
}

int words_delta_check(struct words_delta *d, enum words_delta_op op, const char *item, size_t len,
                      char *why, size_t whylen)
{
    pthread_mutex_lock(&d->mu);
    int rc = wd_parse(d, op, item, len, why, whylen);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

int words_delta_admit(const struct words_delta *d, enum words_delta_op op, size_t n, char *why,
                      size_t whylen)
{
    if (op == WORDS_DELTA_REMOVE || op == WORDS_DELTA_UNALLOW || d->nents + n <= d->max)
        return 0;
    snprintf(why, whylen,
             "the word list's run-time delta holds %zu entries of its %zu (words_delta_max), "
             "and this asks for %zu more: retry once they are folded into the list "
             "(words_fold_after), build them into the list file (bloomgate build --format "
             "words), or raise words_delta_max",
             d->nents, d->max, n);
    return -1;
}

/* The delta entry with these symbols, or -1. Linear: the delta is small and
 * changed rarely. */
static long wd_find(const struct words_delta *d, const uint32_t *cps, uint32_t n)
{
    for (size_t i = 0; i < d->nents; i++)
        if (d->ents[i].n == n && memcmp(d->ents[i].cps, cps, n * sizeof *cps) == 0)
            return (long)i;
    return -1;
}

static void wd_drop(struct words_delta *d, size_t i)
{
    wd_ent_free(&d->ents[i]);
    d->ents[i] = d->ents[--d->nents];
}

/* The parsed entry (b->ents[0]) stored at slot i (a new one when i is
 * nents). 0, or -1 on no memory. */
static int wd_store(struct words_delta *d, size_t i)
{
    const struct wl_ent *pe = &d->b->ents[0];
    struct wd_ent e = {malloc(pe->cp_len * sizeof *e.cps),      pe->cp_len,   pe->flags,
                       malloc(pe->text_len ? pe->text_len : 1), pe->text_len, 0};
    if (e.cps == NULL || e.text == NULL) {
        wd_ent_free(&e);
        return -1;
    }
    memcpy(e.cps, d->b->cps + pe->cp_off, e.n * sizeof *e.cps);
    memcpy(e.text, d->b->text + pe->text_off, e.tlen);
    if (i == d->nents) {
        if (d->nents == d->capents) {
            size_t c = d->capents ? d->capents * 2 : 16;
            struct wd_ent *ne = realloc(d->ents, c * sizeof *ne);
            if (ne == NULL) {
                wd_ent_free(&e);
                return -1;
            }
            d->ents = ne;
            d->capents = c;
        }
        d->nents++;
    } else {
        wd_ent_free(&d->ents[i]);
    }
    d->ents[i] = e;
    return 0;
}

bool wd_removed(const struct words_delta *d, uint32_t w)
{
    return (d->removed[w / 64] >> (w % 64)) & 1;
}

static void wd_set_removed(struct words_delta *d, uint32_t w, bool on)
{
    if (wd_removed(d, w) == on)
        return;
    d->removed[w / 64] ^= 1ull << (w % 64);
    d->nremoved += on ? 1 : (size_t)-1;
}

/* The rules, with the list's for equal entries (docs/words.md): an
 * exception wins over a word of the same normalised text; a word the list
 * holds with the same `*` ends is the list's (an ADD brings it back if it
 * was removed), with other ends it is replaced by the one added. Under
 * d->mu, the item parsed into b->ents[0]. */
static int wd_apply(struct words_delta *d, enum words_delta_op op)
{
    const struct wl_ent *pe = &d->b->ents[0];
    const uint32_t *cps = d->b->cps + pe->cp_off;
    const struct words_matcher *m = d->base;
    long p = wd_lookup(m, cps, pe->cp_len);
    const struct words_pat *bp = p >= 0 && !(m->pats[p].flags & WP_EXC) ? &m->pats[p] : NULL;
    /* a listed exception, and whether UNALLOW turned it off */
    const struct words_pat *be = p >= 0 && (m->pats[p].flags & WP_EXC) ? &m->pats[p] : NULL;
    bool boff = be && wd_removed(d, be->word), bexc = be && !boff;
    long i = wd_find(d, cps, pe->cp_len);
    bool dexc = i >= 0 && (d->ents[i].flags & WP_EXC);
    switch (op) {
    case WORDS_DELTA_ADD:
        if (bexc || dexc)
            return 0; /* an exception of that text wins */
        if (bp && (bp->flags & WD_ENDS) == (pe->flags & WD_ENDS)) {
            bool was = wd_removed(d, bp->word);
            wd_set_removed(d, bp->word, false);
            if (i >= 0)
                wd_drop(d, (size_t)i);
            return was || i >= 0;
        }
        if (bp)
            wd_set_removed(d, bp->word, true);
        if (i >= 0 && (d->ents[i].flags & WD_ENDS) == (pe->flags & WD_ENDS))
            return 0;
        return wd_store(d, i >= 0 ? (size_t)i : d->nents) != 0 ? -1 : 1;
    case WORDS_DELTA_REMOVE: {
        bool changed = false;
        if (bp && !wd_removed(d, bp->word)) {
            wd_set_removed(d, bp->word, true);
            changed = true;
        }
        if (i >= 0 && !dexc) {
            wd_drop(d, (size_t)i);
            changed = true;
        }
        return changed;
    }
    case WORDS_DELTA_ALLOW:
        if (boff) { /* the listed one back, over a word added with its text */
            wd_set_removed(d, be->word, false);
            if (i >= 0)
                wd_drop(d, (size_t)i);
            return 1;
        }
        if (bexc || dexc)
            return 0;
        /* A listed word of that text is hidden for good, as a list holding
         * both lines drops the word: an UNALLOW after does not bring it
         * back, so the delta means what its fold into the list means. */
        if (bp)
            wd_set_removed(d, bp->word, true);
        return wd_store(d, i >= 0 ? (size_t)i : d->nents) != 0 ? -1 : 1;
    case WORDS_DELTA_UNALLOW:
        if (bexc) { /* a listed one: off until ALLOW or a rebuild */
            wd_set_removed(d, be->word, true);
            return 1;
        }
        if (!dexc)
            return 0;
        wd_drop(d, (size_t)i);
        return 1;
    }
    return 0;
}

int words_delta_apply(struct words_delta *d, enum words_delta_op op, const char *item, size_t len,
                      char *why, size_t whylen)
{
    pthread_mutex_lock(&d->mu);
    int rc = wd_parse(d, op, item, len, why, whylen);
    if (rc == 0) {
        rc = wd_apply(d, op);
        if (rc < 0)
            snprintf(why, whylen, "out of memory for the word list's delta");
        if (rc > 0)
            d->dirty = true;
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* An entry into the builder as it is, flags given (no parsing: its symbols
 * are the delta's). */
int wd_push(struct words_builder *b, const struct wd_ent *e, uint32_t flags)
{
    if (b->nents == b->capents) {
        size_t c = b->capents ? b->capents * 2 : 64;
        struct wl_ent *ne = realloc(b->ents, c * sizeof *ne);
        if (ne == NULL)
            return -1;
        b->ents = ne, b->capents = c;
    }
    if (b->ncps + e->n > b->capcps) {
        size_t c = b->capcps ? b->capcps : 256;
        while (c < b->ncps + e->n)
            c *= 2;
        uint32_t *nc = realloc(b->cps, c * sizeof *nc);
        uint8_t *nl = realloc(b->cls, c);
        if (nc)
            b->cps = nc;
        if (nl)
            b->cls = nl;
        if (nc == NULL || nl == NULL)
            return -1;
        b->capcps = b->capcls = c;
    }
    if (b->ntext + e->tlen > b->captext) {
        size_t c = b->captext ? b->captext : 256;
        while (c < b->ntext + e->tlen)
            c *= 2;
        char *nt = realloc(b->text, c);
        if (nt == NULL)
            return -1;
        b->text = nt, b->captext = c;
    }
    struct wl_ent *w = &b->ents[b->nents];
    *w = (struct wl_ent){b->ncps, b->ntext, e->n, e->tlen, flags, (uint32_t)b->nents};
    memcpy(b->cps + b->ncps, e->cps, e->n * sizeof *e->cps);
    memset(b->cls + b->ncps, 0, e->n);
    memcpy(b->text + b->ntext, e->text, e->tlen);
    b->ncps += e->n, b->ntext += e->tlen, b->nents++;
    return 0;
}

/* The added words (copies of the entries, sharing their memory), then the
 * listed words that occur inside a listed exception UNALLOW turned off (any
 * run of its symbols that is a listed word, boundaries aside), not removed,
 * each once: compiled into dm, they are found where the exception hid them
 * from the list's scan (and, found elsewhere too, given once). *rev is the
 * caller's to free. 0, or -1 on no memory. Under d->mu. */
static int wd_revive(const struct words_delta *d, struct wd_ent **rev, size_t nwords, size_t *nrev)
{
    const struct words_matcher *m = d->base;
    size_t cap = nwords + 16, n = 0;
    struct wd_ent *r = malloc(cap * sizeof *r);
    uint64_t *seen = calloc(m->nwords / 64 + 1, sizeof *seen);
    if (r == NULL || seen == NULL)
        goto oom;
    for (size_t i = 0; i < d->nents; i++)
        if (!(d->ents[i].flags & WP_EXC))
            r[n++] = d->ents[i];
    for (size_t x = 0; x < d->nbexc; x++) {
        const struct wd_ent *e = &d->bexc[x];
        if (!wd_removed(d, e->word))
            continue;
        for (uint32_t i = 0; i < e->n; i++)
            for (uint32_t j = i, st = 0; j < e->n && (st = wd_goto(m, st, e->cps[j])) != 0; j++) {
                uint32_t o = m->st[st].out;
                if (o == 0 || o > m->npat)
                    continue;
                const struct words_pat *pt = &m->pats[o - 1];
                uint32_t w = pt->word;
                if ((pt->flags & WP_EXC) || w >= m->nwords || wd_removed(d, w) ||
                    (seen[w / 64] >> (w % 64) & 1))
                    continue;
                seen[w / 64] |= 1ull << (w % 64);
                if (n == cap) {
                    struct wd_ent *nr = realloc(r, (cap *= 2) * sizeof *r);
                    if (nr == NULL)
                        goto oom;
                    r = nr;
                }
                size_t tl;
                const char *t = words_word(m, w, &tl);
                r[n++] = (struct wd_ent){(uint32_t *)e->cps + i, j - i + 1, pt->flags, (char *)t,
                                         (uint32_t)tl,           w};
            }
    }
    free(seen);
    *rev = r;
    *nrev = n - nwords;
    return 0;
oom:
    free(r);
    free(seen);
    return -1;
}

/* v->dmap: the listed word id of each dm word that is a revived listed one
 * (rev[0..n)), so that its matches carry the list's id. 0, or -1. */
static int wd_map(struct words_view *v, const struct wd_ent *rev, size_t n)
{
    v->dmap = malloc((v->dm->nwords ? v->dm->nwords : 1) * sizeof *v->dmap);
    if (v->dmap == NULL)
        return -1;
    for (uint32_t i = 0; i < v->dm->nwords; i++)
        v->dmap[i] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        long p = wd_lookup(v->dm, rev[i].cps, rev[i].n);
        if (p >= 0 && !(v->dm->pats[p].flags & WP_EXC) && v->dm->pats[p].word < v->dm->nwords)
            v->dmap[v->dm->pats[p].word] = rev[i].word;
    }
    return 0;
}

/* The view of the delta as it is: dm compiled from the added words (with
 * the list's exceptions, to cover them), de from the added exceptions, as
 * plain words with no boundary (an exception checks none), whose
 * occurrences are reported. Two matchers, so that de, which needs the exact
 * scan of every symbol, is scanned only when there is a match it could
 * cover, and dm keeps the ASCII skip and its pre-check. Under d->mu. */
static struct words_view *wd_view(struct words_delta *d, char *err, size_t errlen)
{
    struct words_view *v = calloc(1, sizeof *v);
    if (v == NULL)
        goto oom;
    v->nbase = d->base->nwords;
    v->nremoved = d->nremoved;
    if (d->nremoved) {
        size_t nw = d->base->nwords / 64 + 1;
        v->removed = malloc(nw * sizeof *v->removed);
        if (v->removed == NULL)
            goto oom;
        memcpy(v->removed, d->removed, nw * sizeof *v->removed);
    }
    size_t nwords = 0, nrev = 0;
    for (size_t i = 0; i < d->nents; i++)
        nwords += !(d->ents[i].flags & WP_EXC);
    struct wd_ent *rev = NULL; /* the added words, then the listed ones revived */
    if (wd_revive(d, &rev, nwords, &nrev) != 0)
        goto oom;
    struct words_builder *b = d->b;
    if (nwords + nrev) {
        words_builder_clear(b);
        for (size_t i = 0; i < d->nbexc; i++)
            if (!wd_removed(d, d->bexc[i].word) && wd_push(b, &d->bexc[i], WP_EXC) != 0)
                goto oom_rev;
        for (size_t i = 0; i < nwords + nrev; i++)
            if (wd_push(b, &rev[i], rev[i].flags & WD_ENDS) != 0)
                goto oom_rev;
        if (!(v->dm = words_builder_compile(b, err, errlen))) {
            free(rev);
            goto fail;
        }
        if (wd_pre_build(&v->pre, &d->base->fast, rev, nwords + nrev) != 0)
            goto oom_rev;
        if (nrev && wd_map(v, rev + nwords, nrev) != 0)
            goto oom_rev;
        v->memory += words_memory(v->dm) + wd_pre_memory(&v->pre) + v->dm->nwords * 4;
    }
    free(rev);
    if (nwords < d->nents) {
        words_builder_clear(b);
        for (size_t i = 0; i < d->nents; i++)
            if ((d->ents[i].flags & WP_EXC) && wd_push(b, &d->ents[i], 0) != 0)
                goto oom;
        if (!(v->de = words_builder_compile(b, err, errlen)))
            goto fail;
        v->memory += words_memory(v->de);
    }
    v->memory += sizeof *v + (v->removed ? (d->base->nwords / 64 + 1) * 8 : 0);
    return v;
oom_rev:
    free(rev);
oom:
    snprintf(err, errlen, "out of memory compiling the word list's delta");
fail:
    wd_view_free(v);
    return NULL;
}

int words_delta_publish(struct words_delta *d, char *err, size_t errlen)
{
    pthread_mutex_lock(&d->mu);
    if (!d->dirty) {
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    struct words_view *v = NULL;
    if (d->nents || d->nremoved) {
        v = wd_view(d, err, errlen);
        if (v == NULL) {
            pthread_mutex_unlock(&d->mu);
            return -1;
        }
    }
    size_t nw = 0;
    for (size_t i = 0; i < d->nents; i++)
        nw += !(d->ents[i].flags & WP_EXC);
    atomic_store(&d->c_words, nw);
    atomic_store(&d->c_exc, d->nents - nw);
    atomic_store(&d->c_removed, d->nremoved);
    atomic_store(&d->c_mem, v ? v->memory : 0);
    d->dirty = false;
    pthread_mutex_unlock(&d->mu);
    struct words_view *old = atomic_exchange_explicit(&d->view, v, memory_order_acq_rel);
    if (old) {
        pthread_mutex_lock(&d->ret_mu);
        old->next_retired = d->retired;
        d->retired = old;
        pthread_mutex_unlock(&d->ret_mu);
    }
    return 0;
}

const struct words_view *words_delta_view(const struct words_delta *d)
{
    return atomic_load_explicit(&d->view, memory_order_acquire);
}

void words_delta_counts(const struct words_delta *d, struct words_delta_counts *c)
{
    c->words = atomic_load(&d->c_words);
    c->exceptions = atomic_load(&d->c_exc);
    c->removed = atomic_load(&d->c_removed);
    c->memory = atomic_load(&d->c_mem);
    c->max = d->max;
}

struct words_view *words_delta_take_retired(struct words_delta *d)
{
    pthread_mutex_lock(&d->ret_mu);
    struct words_view *v = d->retired;
    d->retired = NULL;
    pthread_mutex_unlock(&d->ret_mu);
    return v;
}
