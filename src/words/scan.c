/* words/scan: a text through the matcher (words.h). Streams: the scratch
 * holds the last `maxlen` symbols' byte spans and the hits still waiting
 * for their end boundary or for an exception that could cover them, so its
 * size follows the list, never the text. Any thread, one scratch each. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && defined(__x86_64__)
#define WS_SSE2 1
#include <emmintrin.h>
#endif

#include "words/words_int.h"

/* What the scan keeps of a recent symbol. */
struct ws_ring {
    size_t os, oe;
    uint8_t cls, soft;
};

/* A word found, not yet final. */
struct ws_hit {
    uint64_t s, e; /* symbol positions, inclusive */
    size_t os, oe;
    uint32_t word;
    uint8_t need_end, dead;
    uint8_t fwd; /* the reach of the exceptions containing its word (m->reach) */
};

struct words_scratch {
    struct wn_iter it;
    struct ws_ring *ring;
    size_t rmask; /* ring size - 1, a power of two minus one */
    struct ws_hit *hits;
    size_t nhits, caphits;
};

struct words_scratch *words_scratch_new(void)
{
    return calloc(1, sizeof(struct words_scratch));
}

void words_scratch_free(struct words_scratch *s)
{
    if (s == NULL)
        return;
    free(s->ring);
    free(s->hits);
    free(s);
}

static int ws_ring_fit(struct words_scratch *s, size_t need)
{
    if (s->ring && s->rmask + 1 >= need)
        return 0;
    size_t c = 8;
    while (c < need)
        c *= 2;
    struct ws_ring *r = malloc(c * sizeof *r);
    if (r == NULL)
        return -1;
    free(s->ring);
    s->ring = r;
    s->rmask = c - 1;
    return 0;
}

/* A code point's symbol: the BMP's from the table, the rest by binary
 * search of the alphabet; 0 for one no entry holds. Any thread. */
uint32_t words_symbol(const struct words_matcher *m, uint32_t cp)
{
    if (cp < 0x10000)
        return m->bmpsym[cp];
    size_t lo = 0, hi = m->nsym;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->alpha[mid] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nsym && m->alpha[lo] == cp ? (uint32_t)lo + 1 : 0;
}

/* One transition, following failure links: the root's row is dense, other
 * states' edges are few and sorted. Terminates: a link is always shallower
 * (the loader checks it). */
static inline uint32_t ws_step(const struct words_matcher *m, uint32_t st, uint32_t c)
{
    for (;;) {
        if (st == 0)
            return m->root[c];
        const struct words_state *s = &m->st[st];
        uint32_t a = s->first, b = s[1].first;
        const struct words_edge *e = m->edges;
        while (b - a > 8) {
            uint32_t mid = a + (b - a) / 2;
            if (e[mid].sym < c)
                a = mid + 1;
            else
                b = mid + 1; /* mid may be the edge sought */
        }
        for (; a < b; a++) {
            if (e[a].sym == c)
                return e[a].tgt;
            if (e[a].sym > c)
                break;
        }
        st = s->fail;
    }
}

static int ws_cmp(const void *pa, const void *pb)
{
    const struct words_match *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return a->word < b->word ? -1 : a->word > b->word;
}

/* The scan state one call keeps on its stack. */
struct ws_out {
    struct words_match *out;
    size_t max, n;
    bool capped;
};

static void ws_emit(struct ws_out *o, const struct ws_hit *h)
{
    if (o->n == o->max) {
        o->capped = true;
        return;
    }
    o->out[o->n++] = (struct words_match){h->os, h->oe, h->word};
}

/* Gives the pending hits that nothing can change any more; at the end of
 * the text (p = UINT64_MAX) all of them. */
static void ws_flush(const struct words_matcher *m, struct words_scratch *s, uint64_t p,
                     struct ws_out *o)
{
    size_t j = 0;
    for (size_t i = 0; i < s->nhits; i++) {
        struct ws_hit *h = &s->hits[i];
        if (p == UINT64_MAX)
            h->need_end = 0; /* the end of the text is a boundary */
        bool final = h->dead || (!h->need_end && (p == UINT64_MAX || p + 1 >= h->s + h->fwd));
        if (!final) {
            s->hits[j++] = *h;
            continue;
        }
        if (!h->dead)
            ws_emit(o, h);
    }
    s->nhits = j;
}

/* A clean point: a byte where an exact run may start (or stop) with nothing
 * before it looked at, giving the symbols a run over the whole text would
 * give from there: the text's start, or an ASCII letter after ASCII
 * whitespace or a skipped ASCII character (the letter's symbol starts a word
 * either way, so whatever came before cannot change it or what follows). */
static inline bool ws_clean(const struct words_fast *f, const unsigned char *p, size_t x)
{
    return x == 0 || (f->cls[p[x]] == WF_WORD && f->cls[p[x - 1]] >= WF_SPACE);
}

/* The first byte >= 0x80 in p[i..lim), or lim. */
static size_t ws_ascii_to(const unsigned char *p, size_t i, size_t lim)
{
#ifdef WS_SSE2
    for (; i + 16 <= lim; i += 16) {
        unsigned hi = (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(p + i)));
        if (hi)
            return i + (unsigned)__builtin_ctz(hi);
    }
#endif
    while (i < lim && p[i] < 0x80)
        i++;
    return i;
}

/* The exact scan from byte `from` (a clean point): for each normalised
 * symbol, settle the end boundary of the hits ending just before it, record
 * it in the ring, step the automaton, follow the output links (exceptions
 * kill the pending hits they cover; words become pending hits once their
 * start boundary holds), then give the hits nothing can change any more.
 * With `stop` set it ends at the first clean point after `past` where the
 * automaton is at its root with nothing pending and ASCII text follows (the
 * skip can take over); *end is where it ended (len: the text's end). With
 * `quit` set, at a word that an exception starting before `from` could
 * cover (m->reach) the run ends with *end SIZE_MAX: the caller runs again
 * from further back. A word starting before byte `keep` is not given (an
 * earlier run, which ended there with nothing pending, gave it or not).
 * -1: memory. */
static int ws_exact(const struct words_matcher *m, struct words_scratch *s, const char *text,
                    size_t len, size_t from, size_t past, size_t keep, bool stop, bool quit,
                    struct ws_out *o, size_t *end)
{
    const unsigned char *tp = (const unsigned char *)text;
    const struct words_fast *f = &m->fast;
    s->nhits = 0;
    wn_iter_init_at(&s->it, &m->norm, text, len, from);
    uint32_t st = 0;
    uint64_t p = 0;
    for (unsigned nb; !o->capped && (nb = wn_batch(&s->it)) != 0;) {
        for (unsigned bi = 0; bi < nb && !o->capped; bi++) {
            const struct wn_sym sym = s->it.out[bi];
            if (stop && st == 0 && s->nhits == 0 && sym.os > past && ws_clean(f, tp, sym.os)) {
                /* Worth stopping only when a stretch of ASCII follows:
                 * otherwise the skip would hand back at once. */
                size_t lim = len - sym.os > 128 ? sym.os + 128 : len;
                size_t i = ws_ascii_to(tp, sym.os, lim);
                if (i == lim) {
                    *end = sym.os;
                    return 0;
                }
                past = i; /* not before that byte */
            }
            bool word_here = sym.cls == WN_WORD && !sym.soft;
            if (s->nhits) {
                for (size_t i = 0; i < s->nhits; i++) {
                    struct ws_hit *h = &s->hits[i];
                    if (h->need_end && h->e + 1 == p) {
                        h->need_end = 0;
                        h->dead |= word_here;
                    }
                }
            }
            struct ws_ring *r = &s->ring[p & s->rmask];
            r->os = sym.os, r->oe = sym.oe, r->cls = sym.cls, r->soft = sym.soft;
            uint32_t c = sym.cp < 0x10000 ? m->bmpsym[sym.cp] : words_symbol(m, sym.cp);
            st = c ? ws_step(m, st, c) : 0;
            uint32_t t = m->st[st].out ? st : m->st[st].dict;
            uint64_t exc_s = UINT64_MAX; /* the earliest start of an exception ending here */
            for (; t; t = m->st[t].dict) {
                const struct words_pat *pt = &m->pats[m->st[t].out - 1];
                if (pt->len > p + 1)
                    continue; /* only a damaged block's links could get here */
                uint64_t start = p + 1 - pt->len;
                if (pt->flags & WP_EXC) {
                    /* Covers every pending word starting at or after it; those
                     * end at or before p already. Longer patterns come first in
                     * this chain, so exc_s covers the words found below. */
                    for (size_t i = 0; i < s->nhits; i++)
                        if (s->hits[i].s >= start)
                            s->hits[i].dead = 1;
                    if (start < exc_s)
                        exc_s = start;
                    continue;
                }
                if (exc_s <= start || s->ring[start & s->rmask].os < keep)
                    continue; /* covered, or an earlier run's to give */
                if (pt->flags & WP_START) {
                    const struct ws_ring *first = &s->ring[start & s->rmask];
                    if (start > 0 && !first->soft && s->ring[(start - 1) & s->rmask].cls == WN_WORD)
                        continue;
                }
                if (s->nhits == s->caphits) {
                    size_t c2 = s->caphits ? s->caphits * 2 : 16;
                    struct ws_hit *nh = realloc(s->hits, c2 * sizeof *nh);
                    if (nh == NULL)
                        return -1;
                    s->hits = nh;
                    s->caphits = c2;
                }
                const uint8_t *reach = m->reach[pt - m->pats];
                if (quit && start < reach[0]) {
                    /* An exception could cover it from before the run. */
                    s->nhits = 0;
                    *end = SIZE_MAX;
                    return 0;
                }
                s->hits[s->nhits++] = (struct ws_hit){start,
                                                      p,
                                                      s->ring[start & s->rmask].os,
                                                      sym.oe,
                                                      pt->word,
                                                      (uint8_t)((pt->flags & WP_END) != 0),
                                                      0,
                                                      reach[1]};
            }
            if (s->nhits)
                ws_flush(m, s, p, o);
            p++;
        }
    }
    if (!o->capped)
        ws_flush(m, s, UINT64_MAX, o);
    s->nhits = 0;
    *end = len;
    return 0;
}

/* Where an exact run must start to see every exception that could cover a
 * word found at or after cand: at least the longest exception's length in
 * symbols before it (at most one symbol a letter: whitespace runs and
 * skipped bytes between count for nothing here), at a clean point. It may
 * be before where the last run ended: an exception can begin before a run
 * that ended at its root (that run started without the text before it).
 * The walk back stops after maxexc letters, so a text's rewinds cost at
 * most maxexc times its length. */
static size_t ws_rewind(const struct words_matcher *m, const unsigned char *p, size_t cand)
{
    const struct words_fast *f = &m->fast;
    size_t need = m->maxexc, got = 0, r = cand;
    while (r > 0 && (got < need || !ws_clean(f, p, r))) {
        r--;
        got += f->cls[p[r]] == WF_WORD;
    }
    return r;
}

/* Any thread, with its own scratch. Plain ASCII is skipped word by word
 * (words_skip); what the skip cannot rule out goes through the exact scan,
 * from the word it stopped at, until the automaton is back at its root. A
 * run that finds a word is made again from far enough back to see the
 * exceptions that could cover it, so the matches are those of one exact
 * run over the whole text. */
int words_scan(const struct words_matcher *m, struct words_scratch *s, const char *text, size_t len,
               struct words_match *out, size_t max, size_t *n, bool *capped)
{
    return words_scan_how(m, s, text, len, out, max, n, capped, m->fast.on);
}

/* words_scan with the skip on or off: the fuzz harness and the bench compare
 * the two. Any thread. */
int words_scan_how(const struct words_matcher *m, struct words_scratch *s, const char *text,
                   size_t len, struct words_match *out, size_t max, size_t *n, bool *capped,
                   bool skip)
{
    struct ws_out o = {out, max, 0, false};
    *n = 0;
    *capped = false;
    if (ws_ring_fit(s, (size_t)m->maxlen + 2) != 0)
        return -1;
    const unsigned char *tp = (const unsigned char *)text;
    bool fast = skip && m->fast.on;
    size_t pos = 0;
    while (pos < len && !o.capped) {
        size_t cand = fast ? words_skip(&m->fast, tp, pos, len) : pos;
        if (cand >= len)
            break;
        size_t end, n0 = o.n;
        /* From further back only when a word an exception could cover from
         * before cand is found: most runs find none. */
        size_t r = fast && m->maxexc ? ws_rewind(m, tp, cand) : cand;
        if (ws_exact(m, s, text, len, cand, cand, 0, fast, r < cand, &o, &end) != 0)
            return -1;
        if (end == SIZE_MAX) {
            o.n = n0, o.capped = false; /* what the first run gave, it gives again */
            if (ws_exact(m, s, text, len, r, cand, pos, fast, false, &o, &end) != 0)
                return -1;
        }
        pos = end;
    }
    s->nhits = 0;
    qsort(out, o.n, sizeof *out, ws_cmp);
    *n = o.n;
    *capped = o.capped;
    return 0;
}

/* Caller's thread; pure. Overlapping matches mask once. */
size_t words_mask(const char *text, size_t len, const struct words_match *mm, size_t n, char mask,
                  bool per_byte, char *out)
{
    size_t o = 0, i = 0, k = 0, cover = 0; /* cover: masked up to here */
    while (i < len) {
        while (k < n && mm[k].start <= i) {
            if (mm[k].end > cover && mm[k].end <= len)
                cover = mm[k].end;
            k++;
        }
        if (i >= cover) {
            out[o++] = text[i++];
            continue;
        }
        if (per_byte) {
            out[o++] = mask;
            i++;
            continue;
        }
        uint32_t cp;
        size_t l = wn_decode((const unsigned char *)text + i, len - i, &cp);
        if (l == 0 || i + l > cover)
            l = 1;
        out[o++] = mask;
        i += l;
    }
    return o;
}

/* Builder or loader thread, once the automaton is packed: each exception's
 * symbols walked through the automaton (a depth-first walk of the trie
 * gives them), and every word found in it, wherever its boundaries, noted
 * with how much of the exception lies before its start and from it on. A
 * hit of a word no exception contains is final once its end boundary is
 * known, and needs no run from further back. */
int words_reach_init(struct words_matcher *m)
{
    free(m->reach);
    m->reach = calloc(m->npat ? m->npat : 1, sizeof *m->reach);
    if (m->reach == NULL)
        return -1;
    if (m->maxexc == 0)
        return 0;
    uint32_t *stack = malloc(((size_t)m->maxlen + 1) * 2 * sizeof *stack);
    if (stack == NULL)
        return -1;
    uint32_t path[WORDS_MAX_SYMBOLS + 1];
    /* stack[2d] the state at depth d, stack[2d + 1] its next edge. */
    size_t d = 0;
    stack[0] = 0, stack[1] = m->st[0].first;
    for (;;) {
        uint32_t st = stack[2 * d], e = stack[2 * d + 1];
        if (e < m->st[st + 1].first && d < m->maxlen && d < WORDS_MAX_SYMBOLS) {
            stack[2 * d + 1] = e + 1;
            uint32_t v = m->edges[e].tgt;
            path[d++] = m->edges[e].sym;
            stack[2 * d] = v, stack[2 * d + 1] = m->st[v].first;
            if (m->st[v].out == 0 || !(m->pats[m->st[v].out - 1].flags & WP_EXC))
                continue;
            uint32_t a = 0;
            for (size_t j = 0; j < d; j++) {
                a = ws_step(m, a, path[j]);
                for (uint32_t t = m->st[a].out ? a : m->st[a].dict; t; t = m->st[t].dict) {
                    const struct words_pat *pt = &m->pats[m->st[t].out - 1];
                    if ((pt->flags & WP_EXC) || pt->len > j + 1)
                        continue;
                    size_t k = j + 1 - pt->len;
                    uint8_t *r = m->reach[pt - m->pats];
                    if (k > r[0])
                        r[0] = (uint8_t)k;
                    if (d - k > r[1])
                        r[1] = (uint8_t)(d - k);
                }
            }
            continue;
        }
        if (d == 0)
            break;
        d--;
    }
    free(stack);
    return 0;
}
