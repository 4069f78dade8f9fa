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
        bool final = h->dead || (!h->need_end && (m->maxexc == 0 || p >= h->s + m->maxexc - 1));
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
 * skip can take over); *end is where it ended (len: the text's end). *pushed:
 * a word hit was found (even one an exception later killed). -1: memory. */
static int ws_exact(const struct words_matcher *m, struct words_scratch *s, const char *text,
                    size_t len, size_t from, size_t past, bool stop, struct ws_out *o, bool *pushed,
                    size_t *end)
{
    const unsigned char *tp = (const unsigned char *)text;
    const struct words_fast *f = &m->fast;
    s->nhits = 0;
    *pushed = false;
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
                if (exc_s <= start)
                    continue;
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
                *pushed = true;
                s->hits[s->nhits++] =
                    (struct ws_hit){start,  p,        s->ring[start & s->rmask].os,
                                    sym.oe, pt->word, (uint8_t)((pt->flags & WP_END) != 0),
                                    0};
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

/* The key of an ASCII word: its folded bytes in 8-byte chunks (little-endian,
 * the last one zero-padded, two at least) and its length; the Bloom filter's
 * bits for it, all in one 64-bit word. */
#define WF_SEED 0xcbf29ce484222325ull
#define WF_MUL 0x9e3779b97f4a7c15ull

static inline uint64_t wf_key2(uint64_t c0, uint64_t c1, size_t n)
{
    uint64_t h = ((c0 ^ WF_SEED) * WF_MUL) ^ ((c1 + n) * 0xff51afd7ed558ccdull);
    return h ^ (h >> 29);
}

/* The key of folded bytes s[0..n), any n (the long way; the skip's short
 * way gives the same for n <= 16). */
static uint64_t wf_key(const uint8_t *s, size_t n)
{
    uint64_t c[2] = {0, 0}, h = 0;
    size_t at = 0;
    do {
        c[0] = c[1] = 0;
        for (size_t i = 0; i < 16 && at + i < n; i++)
            c[i / 8] |= (uint64_t)s[at + i] << (8 * (i % 8));
        h = wf_key2(c[0] ^ h, c[1], n);
        at += 16;
    } while (at < n);
    return h;
}

/* Two probes of a bit array; f->bmask + 1 64-bit words. */
static inline bool wf_maybe(const struct words_fast *f, uint64_t k)
{
    uint64_t a = k & ((uint64_t)f->bmask << 6 | 63), b = (k >> 32) & ((uint64_t)f->bmask << 6 | 63);
    return (f->bloom[a >> 6] >> (a & 63) & f->bloom[b >> 6] >> (b & 63) & 1) != 0;
}

static void wf_add(struct words_fast *f, uint64_t k)
{
    uint64_t a = k & ((uint64_t)f->bmask << 6 | 63), b = (k >> 32) & ((uint64_t)f->bmask << 6 | 63);
    f->bloom[a >> 6] |= 1ull << (a & 63);
    f->bloom[b >> 6] |= 1ull << (b & 63);
}

/* One word at i (f->cls[p[i]] == WF_WORD), the plain way: 1 when an exact
 * run must look at it, else 0 with *next where the skip goes on. */
static int ws_word(const struct words_fast *f, const unsigned char *p, size_t i, size_t len,
                   size_t *next)
{
    if (f->hard[p[i]])
        return 1;
    uint8_t w[WORDS_MAX_SYMBOLS];
    size_t j = i;
    do {
        if (j - i < WORDS_MAX_SYMBOLS)
            w[j - i] = f->fold[p[j]];
    } while (++j < len && f->cls[p[j]] == WF_WORD);
    size_t l = j - i;
    if (j < len) {
        uint8_t c = f->cls[p[j]];
        size_t k = j;
        if (c == WF_SKIP) {
            while (++k < len && f->cls[p[k]] == WF_SKIP)
                ;
            c = k < len ? f->cls[p[k]] : WF_SPACE;
        }
        if (c != WF_SPACE)
            return 1; /* joined to what follows, or not plain ASCII */
        /* A space after one letter may be dropped (f u c k): only when the
         * letter after it stands alone too. */
        if (l == 1 && f->space_skip && k < len &&
            !(k + 2 < len && f->cls[p[k + 1]] == WF_WORD && f->cls[p[k + 2]] == WF_WORD))
            return 1;
        j = k;
    }
    *next = j;
    /* No entry's first word is longer than an entry. */
    return l <= WORDS_MAX_SYMBOLS && wf_maybe(f, wf_key(w, l));
}

#ifdef WS_SSE2
/* The same over a 16-byte window, for the usual byte classes (f->simd:
 * letters and digits, whitespace, the rest of printable ASCII skipped): the
 * word's length from a mask of the window's letters, its key from the
 * window's bytes. i + 32 <= len. -1: the word is too long for the window
 * (the plain way takes it). */
static inline int ws_word16(const struct words_fast *f, const unsigned char *p, size_t i,
                            size_t *next)
{
    static const int8_t keep[32] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0};
    __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
    __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
    /* x - lo < n, unsigned, as a signed compare after adding 0x80 - lo */
    __m128i alpha = _mm_cmplt_epi8(_mm_add_epi8(low, _mm_set1_epi8((char)(0x80 - 'a'))),
                                   _mm_set1_epi8((char)(0x80 + 26)));
    __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - '0'))),
                                   _mm_set1_epi8((char)(0x80 + 10)));
    unsigned wm = (unsigned)_mm_movemask_epi8(_mm_or_si128(alpha, digit));
    unsigned l = (unsigned)__builtin_ctz(~wm);
    if (l >= 16)
        return -1;
    if (f->hard[p[i]])
        return 1;
    size_t k = i + l;
    uint8_t c = f->cls[p[k]];
    if (c == WF_SKIP) {
        while (f->cls[p[++k]] == WF_SKIP) /* ends: p[i + 31] is no WF_SKIP or is read last */
            if (k == i + 31)
                return 1;
        c = f->cls[p[k]];
    }
    if (c != WF_SPACE)
        return 1; /* joined to what follows, or not plain ASCII */
    if (l == 1 && f->space_skip && (k - i + 2 >= 16 || (wm >> (k - i + 1) & 3) != 3))
        return 1;
    *next = k;
    __m128i w =
        _mm_and_si128(f->orfold ? low : v, _mm_loadu_si128((const __m128i *)(keep + 16 - l)));
    uint64_t c0 = (uint64_t)_mm_cvtsi128_si64(w);
    uint64_t c1 = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(w, w));
    return wf_maybe(f, wf_key2(c0, c1, l));
}
#endif

#ifdef WS_SSE2
/* The byte classes of p[0..16) for the usual classes (f->simd) as bit masks:
 * letters and digits, whitespace, other printable ASCII (skipped). */
static inline void ws_cls16(const unsigned char *p, unsigned *w, unsigned *sp, unsigned *sk)
{
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
    /* x - lo < n, unsigned, as a signed compare after adding 0x80 - lo */
    __m128i alpha = _mm_cmplt_epi8(_mm_add_epi8(low, _mm_set1_epi8((char)(0x80 - 'a'))),
                                   _mm_set1_epi8((char)(0x80 + 26)));
    __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - '0'))),
                                   _mm_set1_epi8((char)(0x80 + 10)));
    __m128i ctl = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - 9))),
                                 _mm_set1_epi8((char)(0x80 + 5)));
    __m128i blank = _mm_or_si128(ctl, _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
    __m128i print = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - 0x21))),
                                   _mm_set1_epi8((char)(0x80 + 0x7f - 0x21)));
    *w = (unsigned)_mm_movemask_epi8(_mm_or_si128(alpha, digit));
    *sp = (unsigned)_mm_movemask_epi8(blank);
    *sk = (unsigned)_mm_movemask_epi8(print) & ~*w;
}

/* The first n <= 8 bytes of a 64-bit word, as a mask. */
static const uint64_t ws_bytes[9] = {0,
                                     0xffull,
                                     0xffffull,
                                     0xffffffull,
                                     0xffffffffull,
                                     0xffffffffffull,
                                     0xffffffffffffull,
                                     0xffffffffffffffull,
                                     ~0ull};

/* The first n <= 64 bits set, as a mask. */
static inline uint64_t ws_low(unsigned n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

static inline uint64_t ws_ld64(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

/* The skip over 64-byte blocks, for the usual classes (f->simd): the masks of
 * a block's letters, whitespace, skipped and other bytes are made once (four
 * 16-byte loads), the word starts walked as bits; a word whose length and
 * what follows it lie in the block is decided from the masks and its key made
 * from its bytes, as ws_word16 decides it; a word the block cannot decide
 * starts the next block, and one too long for that goes to ws_word16 (and
 * ws_word). Stops before the last 96 bytes: *at is where the word-at-a-time
 * loop goes on, *last the last clean point seen. Returns 1 when an exact run
 * must start at *ret. Any thread (read-only on f). */
static int ws_skip64(const struct words_fast *f, const unsigned char *p, size_t len, size_t *at,
                     size_t *last, size_t *ret)
{
    size_t i = *at, lastw = *last;
    /* Locals: stores through the out pointers may not alias them. */
    const uint64_t orfold = f->orfold, *bloom = f->bloom;
    const uint64_t amask = (uint64_t)f->bmask << 6 | 63;
    const bool space_skip = f->space_skip;
    while (i + 96 <= len) {
        uint64_t W = 0, S = 0, K = 0;
        for (unsigned q = 0; q < 4; q++) {
            unsigned w, sp, sk;
            ws_cls16(p + i + 16 * q, &w, &sp, &sk);
            W |= (uint64_t)w << (16 * q);
            S |= (uint64_t)sp << (16 * q);
            K |= (uint64_t)sk << (16 * q);
        }
        uint64_t E = ~(W | S | K);
        /* Only the words before the block's first other byte are tried: the
         * gap that holds it hands back at the last word start. */
        unsigned e0 = E ? (unsigned)__builtin_ctzll(E) : 64;
        /* p[i] never continues a word already looked at: i is a clean point,
         * whitespace, or a byte after a gap. */
        uint64_t starts = W & ~(W << 1) & ws_low(e0);
        size_t next_i = i + 64;
        while (starts) {
            unsigned o = (unsigned)__builtin_ctzll(starts);
            starts &= starts - 1;
            size_t w = i + o;
            lastw = w;
            if (f->hard[p[w]]) {
                *ret = w;
                return 1;
            }
            uint64_t nw = ~(W >> o);
            unsigned l = nw ? (unsigned)__builtin_ctzll(nw) : 64; /* o + l <= 64 */
            unsigned ks = o + l; /* then the skipped bytes after it, if any */
            if (ks < 64)
                ks += (unsigned)__builtin_ctzll(~(K >> ks)); /* ks >= 1: a bit is set */
            if (l < 16 && ks < 62) {
                /* The word, what follows it and the two bytes after are in
                 * the block: ws_word16's decision from the masks. */
                if (!(S >> ks & 1) || (l == 1 && space_skip && (W >> (ks + 1) & 3) != 3)) {
                    *ret = w; /* joined, not plain ASCII, or a letter alone */
                    return 1;
                }
                uint64_t c0 = (ws_ld64(p + w) | orfold) & ws_bytes[l < 8 ? l : 8];
                uint64_t c1 = (ws_ld64(p + w + 8) | orfold) & ws_bytes[l > 8 ? l - 8 : 0];
                uint64_t k = wf_key2(c0, c1, l), a = k & amask, b = (k >> 32) & amask;
                if (bloom[a >> 6] >> (a & 63) & bloom[b >> 6] >> (b & 63) & 1) {
                    *ret = w;
                    return 1;
                }
                continue;
            }
            if (o > 0) {
                next_i = w; /* the next block starts at this word */
                e0 = 64;    /* and sees the gap after it again */
                break;
            }
            size_t nx;
            int r = ws_word16(f, p, w, &nx);
            if (r < 0)
                r = ws_word(f, p, w, len, &nx);
            if (r) {
                *ret = w;
                return 1;
            }
            if (nx >= i + 64) {
                next_i = nx; /* the rest of the block is that word's: no other byte */
                break;
            }
            starts &= ~ws_low((unsigned)(nx - i));
        }
        if (e0 < 64) {
            *ret = lastw;
            return 1;
        }
        i = next_i;
    }
    *at = i;
    *last = lastw;
    return 0;
}
#endif

/* The skip: from pos (a clean point), the first place an exact run must
 * look at, as a clean point at or before it; len when there is none. Only
 * ASCII is read. A listed word that could begin at an ASCII byte needs a word
 * boundary before it (words_fast.on), so only word starts are tried: a run
 * of ASCII letters w followed by a space or the end (after skipped
 * characters, if any) can begin a listed word only if w is the whole first
 * word of an entry (the Bloom filter); anything else (letters joined over a
 * skipped character, a single letter whose space may be dropped, a byte
 * that is not plain ASCII) goes to the exact run. */
static size_t ws_skip(const struct words_fast *f, const unsigned char *p, size_t pos, size_t len)
{
    size_t i = pos, last = pos; /* last: the last clean point seen */
#ifdef WS_SSE2
    size_t simd_end = f->simd && len >= 32 ? len - 31 : 0; /* i + 32 <= len */
    if (f->simd) {
        size_t ret;
        if (ws_skip64(f, p, len, &i, &last, &ret))
            return ret;
    }
#endif
    while (i < len) {
        uint8_t c = f->cls[p[i]];
        if (c != WF_WORD) {
            if (c == WF_E)
                return last;
            i++;
            continue;
        }
        /* A word starts at i: a clean point. */
        last = i;
        size_t next;
        int r = -1;
#ifdef WS_SSE2
        if (i < simd_end)
            r = ws_word16(f, p, i, &next);
#endif
        if (r < 0)
            r = ws_word(f, p, i, len, &next);
        if (r)
            return i;
        i = next;
    }
    return len;
}

/* Where an exact run must start to see every exception that could cover a
 * word found at or after cand: at least the longest exception's length in
 * symbols before it (each letter in [pos, cand) is one symbol: the skip saw
 * only plain ASCII there), at a clean point, never before pos. */
static size_t ws_rewind(const struct words_matcher *m, const unsigned char *p, size_t pos,
                        size_t cand)
{
    const struct words_fast *f = &m->fast;
    size_t need = m->maxexc, got = 0, r = cand;
    while (r > pos && (got < need || !ws_clean(f, p, r))) {
        r--;
        got += f->cls[p[r]] == WF_WORD;
    }
    return r;
}

/* Any thread, with its own scratch. Plain ASCII is skipped word by word
 * (ws_skip); what the skip cannot rule out goes through the exact scan,
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
        size_t cand = fast ? ws_skip(&m->fast, tp, pos, len) : pos;
        if (cand >= len)
            break;
        size_t n0 = o.n, end;
        bool pushed;
        if (ws_exact(m, s, text, len, cand, cand, fast, &o, &pushed, &end) != 0)
            return -1;
        if (pushed && m->maxexc) {
            size_t r = ws_rewind(m, tp, pos, cand);
            if (r < cand) {
                o.n = n0, o.capped = false;
                if (ws_exact(m, s, text, len, r, cand, fast, &o, &pushed, &end) != 0)
                    return -1;
            }
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

void words_fast_free(struct words_matcher *m)
{
    free(m->fast.bloom);
    m->fast.bloom = NULL;
}

/* Builder or loader thread, once the automaton is packed and the norm table
 * made: the skip's byte classes from the table, then every listed word's
 * symbols from a walk of the trie. The skip is off when a word that needs no
 * boundary before it could begin at an ASCII letter or a space (whole-word
 * matching off, or a `*` start): every byte would have to be tried. */
int words_fast_init(struct words_matcher *m)
{
    struct words_fast *f = &m->fast;
    words_fast_free(m);
    memset(f, 0, sizeof *f);
    f->space_skip = m->norm.space_skip;
    bool wordsym[128] = {false}; /* a WF_WORD byte folds to it */
    for (unsigned b = 0; b < 0x80; b++) {
        uint32_t e = m->norm.bmp[b], cp = e & WN_T_CP;
        unsigned cls = e >> WN_T_CLS_SHIFT & 7;
        if (!(e & WN_T_SIMPLE))
            continue;
        if (cls == WN_WORD && cp < 0x80)
            f->cls[b] = WF_WORD, f->fold[b] = (uint8_t)cp, wordsym[cp] = true;
        else if (cls == WN_SPACE)
            f->cls[b] = WF_SPACE;
        else if (cls == WN_SKIP)
            f->cls[b] = WF_SKIP;
    }
    /* The usual classes (the default skip set): the 16-byte window applies,
     * and folding is setting bit 5 of a letter (NFKC's case folding) or
     * nothing (NFKC off). */
    f->simd = true;
    f->orfold = m->norm.nfkc ? 0x2020202020202020ull : 0;
    for (unsigned b = 0; b < 0x80; b++) {
        bool alnum = (b >= '0' && b <= '9') || ((b | 0x20) >= 'a' && (b | 0x20) <= 'z');
        uint8_t want = alnum                             ? WF_WORD
                       : b == ' ' || (b >= 9 && b <= 13) ? WF_SPACE
                       : b > ' ' && b < 0x7f             ? WF_SKIP
                                                         : WF_E;
        if (f->cls[b] != want || (alnum && f->fold[b] != (b | (f->orfold & 0xff))))
            f->simd = false;
    }
    size_t words = 64;
    while (words * 4 < (size_t)m->npat) /* 16 bits a word at least */
        words *= 2;
    f->bloom = calloc(words, sizeof *f->bloom);
    uint32_t *stack = malloc(((size_t)m->maxlen + 1) * 2 * sizeof *stack);
    if (f->bloom == NULL || stack == NULL) {
        free(stack);
        words_fast_free(m);
        return -1;
    }
    f->bmask = (uint32_t)(words - 1);
    f->on = true;
    uint32_t path[WORDS_MAX_SYMBOLS + 1];
    /* Depth-first: stack[2d] the state at depth d, stack[2d + 1] its next edge. */
    size_t d = 0;
    stack[0] = 0, stack[1] = m->st[0].first;
    for (;;) {
        uint32_t st = stack[2 * d], e = stack[2 * d + 1];
        if (e < m->st[st + 1].first && d < m->maxlen) {
            stack[2 * d + 1] = e + 1;
            uint32_t v = m->edges[e].tgt;
            path[d] = m->alpha[m->edges[e].sym - 1];
            d++;
            stack[2 * d] = v, stack[2 * d + 1] = m->st[v].first;
            if (m->st[v].out == 0)
                continue;
            const struct words_pat *pt = &m->pats[m->st[v].out - 1];
            uint32_t cp0 = path[0];
            bool ascii0 = cp0 == WN_SPACE_CP || (cp0 < 0x80 && wordsym[cp0]);
            if ((pt->flags & WP_EXC) || !ascii0)
                continue; /* an exception, or only a byte the skip leaves starts it */
            if (!(pt->flags & WP_START)) {
                f->on = false;
                continue;
            }
            if (!(pt->flags & WP_END))
                for (unsigned b = 0; b < 0x80; b++)
                    if (f->cls[b] == WF_WORD && f->fold[b] == cp0)
                        f->hard[b] = 1;
            size_t k = 0;
            uint8_t w[WORDS_MAX_SYMBOLS];
            while (k < d && path[k] < 0x80 && wordsym[path[k]])
                w[k] = (uint8_t)path[k], k++;
            if (k == d || path[k] == WN_SPACE_CP) {
                wf_add(f, wf_key(w, k));
            }
            continue;
        }
        if (d == 0)
            break;
        d--;
    }
    free(stack);
    if (!f->on)
        words_fast_free(m);
    return 0;
}
