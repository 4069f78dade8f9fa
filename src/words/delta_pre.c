/* words/delta_pre: the pre-check that spares most texts the scan with the
 * delta's matcher (delta_int.h, docs/words.md "Run-time changes").
 *
 * Why: the delta's matcher has few words, but a scan of a text with it
 * costs about what the list's scan costs, whatever it holds: the ASCII skip
 * hands every word joined to the next over a skipped character (`and,the`)
 * to the exact scan, and the exact scan's cost is the text's, not the
 * list's. A word the delta added can only occur where its first word (its
 * symbols before the first space) is one of the text's words, so a pass
 * over the bytes that makes each word's key and looks it up in a small hash
 * set rules out nearly every text the delta finds nothing in.
 *
 * What a word of a plain ASCII text is, in symbols (norm.c): its letters,
 * folded; a skipped character drops out but makes the letter after it a
 * soft boundary, where a word may start or end as after a space, so a run
 * of letters and skipped characters (a token) of pieces p1.p2 holds the
 * words p1, p2 and p1p2 (every run of consecutive pieces). A space between
 * two single letters may be dropped (space in the skip set: f u c k): a
 * token whose last piece is one letter before one whose first piece is one
 * letter is not ruled out. Any other byte (not ASCII, a kept punctuation
 * mark, a control) and the text goes to the scan. Writer builds, any thread
 * reads. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include "words/cls.h"
#include "words/delta_int.h"
#ifdef WORDS_CLS_SSE2
#define WP_SSE2 1
#endif

#define WP_TOKMAX 256 /* letters of a token looked at; longer: the scan */
#define WP_PIECEMAX 32

/* The key of letters s[0..n): 8-byte chunks, the last masked (s may be read
 * up to 7 bytes past n); never 0 (an empty slot). */
static inline uint64_t wp_hash(const uint8_t *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t c;
        memcpy(&c, s + i, sizeof c);
        h = (h ^ c) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (i < n) {
        uint64_t c;
        memcpy(&c, s + i, sizeof c);
        c &= ~0ull >> (64 - 8 * (n - i));
        h = (h ^ c) * 0xc4ceb9fe1a85ec53ull;
    }
    h ^= h >> 29;
    return h ? h : 1;
}

static inline bool wp_has(const uint64_t *set, uint32_t mask, uint64_t k)
{
    for (uint32_t i = (uint32_t)k & mask;; i = (i + 1) & mask) {
        if (set[i] == k)
            return true;
        if (set[i] == 0)
            return false;
    }
}

static void wp_put(uint64_t *set, uint32_t mask, uint64_t k)
{
    uint32_t i = (uint32_t)k & mask;
    while (set[i] != 0 && set[i] != k)
        i = (i + 1) & mask;
    set[i] = k;
}

/* A set with room for n keys at most half full. */
static uint64_t *wp_set(size_t n, uint32_t *mask)
{
    size_t c = 16;
    while (c < 2 * n)
        c *= 2;
    *mask = (uint32_t)(c - 1);
    return calloc(c, sizeof(uint64_t));
}

void wd_pre_free(struct wd_pre *p)
{
    free(p->keys);
    free(p->pkeys);
    p->keys = p->pkeys = NULL;
}

size_t wd_pre_memory(const struct wd_pre *p)
{
    return (p->keys ? ((size_t)p->kmask + 1) * 8 : 0) + (p->pkeys ? ((size_t)p->pmask + 1) * 8 : 0);
}

/* Writer, with the view it belongs to. A word that needs no boundary before
 * it (a `*` start) can begin inside any word: always. A word whose first
 * word holds a symbol no plain ASCII byte gives cannot occur in a plain
 * text: no key (such texts are scanned whole). */
int wd_pre_build(struct wd_pre *p, const struct words_fast *f, const struct wd_ent *ents, size_t n)
{
    memset(p, 0, sizeof *p);
    p->minf = UINT32_MAX;
    p->space_skip = f->space_skip;
    bool wordsym[128] = {false};
    for (unsigned b = 0; b < 0x80; b++)
        if (f->cls[b] == WF_WORD)
            wordsym[f->fold[b]] = true;
    size_t nk = 0, npk = 0;
    for (size_t i = 0; i < n; i++)
        if (!(ents[i].flags & WP_EXC))
            nk++;
    p->keys = wp_set(nk, &p->kmask);
    p->pkeys = wp_set(nk, &p->pmask);
    if (p->keys == NULL || p->pkeys == NULL) {
        wd_pre_free(p);
        return -1;
    }
    bool plen[WORDS_MAX_SYMBOLS + 1] = {false};
    for (size_t i = 0; i < n; i++) {
        const struct wd_ent *e = &ents[i];
        if (e->flags & WP_EXC)
            continue;
        if (!(e->flags & WP_START)) {
            p->always = true;
            continue;
        }
        uint8_t w[WORDS_MAX_SYMBOLS + 8];
        uint32_t k = 0;
        bool plain = true;
        while (k < e->n && e->cps[k] != WN_SPACE_CP && k < WORDS_MAX_SYMBOLS) {
            uint32_t c = e->cps[k];
            if (c >= 0x80 || !wordsym[c]) {
                plain = false;
                break;
            }
            w[k++] = (uint8_t)c;
        }
        if (!plain)
            continue;
        if (k == 0) {
            p->always = true; /* no first word to look for */
            continue;
        }
        if (k == e->n && !(e->flags & WP_END)) {
            wp_put(p->pkeys, p->pmask, wp_hash(w, k));
            plen[k] = true;
            npk++;
        } else {
            wp_put(p->keys, p->kmask, wp_hash(w, k));
            if (k > p->maxf)
                p->maxf = k;
            if (k < p->minf)
                p->minf = k;
            p->lens |= 1ull << ((k < 64 ? k : 64) - 1);
        }
    }
    for (unsigned l = 1; l <= WORDS_MAX_SYMBOLS; l++)
        if (plen[l])
            p->plens[p->npl++] = (uint8_t)l;
    p->minf = p->npl && p->plens[0] < p->minf ? p->plens[0] : p->minf;
    (void)npk;
    return 0;
}

/* Whether one of the words of a token (letters s[0..nl), pieces starting at
 * pc[0..np)) is a key: every run of consecutive pieces whole, and its
 * prefixes of the `*`-ended keys' lengths. */
static bool wp_token(const struct wd_pre *p, const uint8_t *s, size_t nl, const uint16_t *pc,
                     size_t np)
{
    for (size_t i = 0; i < np; i++) {
        size_t a = pc[i];
        for (size_t j = i; j < np; j++) {
            size_t b = j + 1 < np ? pc[j + 1] : nl, l = b - a;
            if (l > p->maxf)
                break;
            if ((p->lens >> ((l < 64 ? l : 64) - 1) & 1) &&
                wp_has(p->keys, p->kmask, wp_hash(s + a, l)))
                return true;
        }
        for (uint32_t l = 0; l < p->npl && a + p->plens[l] <= nl; l++)
            if (wp_has(p->pkeys, p->pmask, wp_hash(s + a, p->plens[l])))
                return true;
    }
    return false;
}

/* A token ends: whether it could hold a key (or, with space in the skip
 * set, joins the one before it). *last: its last piece's letters. */
static inline bool wp_end(const struct wd_pre *p, const struct words_fast *f, const uint8_t *s,
                          size_t nl, const uint16_t *pc, size_t np, size_t *last)
{
    if (f->space_skip) {
        size_t first = (np > 1 ? pc[1] : nl) - pc[0];
        if (*last == 1 && first == 1)
            return true;
        *last = nl - pc[np - 1];
    }
    return wp_token(p, s, nl, pc, np);
}

/* The byte at a time, for any byte classes. */
static bool wp_bytes(const struct wd_pre *p, const struct words_fast *f, const unsigned char *t,
                     size_t len)
{
    uint8_t s[WP_TOKMAX + 24];
    uint16_t pc[WP_PIECEMAX];
    size_t nl = 0, np = 0, last = 0; /* last: the previous token's last piece, letters */
    bool in = false;                 /* in a piece */
    for (size_t i = 0; i <= len; i++) {
        uint8_t c = i < len ? f->cls[t[i]] : WF_SPACE;
        if (c == WF_WORD) {
            if (!in) {
                if (np == WP_PIECEMAX)
                    return true;
                pc[np++] = (uint16_t)nl;
                in = true;
            }
            if (nl == WP_TOKMAX)
                return true;
            s[nl++] = f->fold[t[i]];
            continue;
        }
        in = false;
        if (c == WF_SKIP)
            continue;
        if (c == WF_E)
            return true;
        if (np == 0)
            continue; /* whitespace, or a token of skipped characters only */
        if (wp_end(p, f, s, nl, pc, np, &last))
            return true;
        nl = np = 0;
    }
    return false;
}

#ifdef WP_SSE2
/* The letters (and digits) of 16 bytes as a bit mask, and their whitespace
 * and other bytes (not ASCII, a control, DEL): the classes f->simd says
 * hold (the rest of printable ASCII is skipped). */
static inline unsigned wp_cls16(const unsigned char *q, unsigned *space, unsigned *other)
{
    unsigned w, sk;
    words_cls16(q, &w, space, &sk);
    *other = ~(w | *space | sk) & 0xffff;
    return w;
}

/* A token of one piece, t[x..x+l): whether it is a key or has one of the
 * `*`-ended keys' prefixes. Most words are neither of the keys' lengths:
 * no key made. */
static inline bool wp_piece(const struct wd_pre *p, const struct words_fast *f,
                            const unsigned char *t, size_t len, size_t x, size_t l)
{
    bool whole = l <= p->maxf && (p->lens >> ((l < 64 ? l : 64) - 1) & 1);
    if (!whole && !(p->npl && p->plens[0] <= l))
        return false;
    uint8_t s[WP_TOKMAX + 24];
    if (l > WP_TOKMAX)
        return true;
    size_t j = 0;
    if (x + 16 <= len) {
        __m128i v = _mm_loadu_si128((const __m128i *)(t + x));
        _mm_storeu_si128((__m128i *)s, _mm_or_si128(v, _mm_set1_epi8((char)(f->orfold & 0xff))));
        j = 16;
    }
    for (; j < l; j++)
        s[j] = f->fold[t[x + j]];
    const uint16_t pc[1] = {0};
    return wp_token(p, s, l, pc, 1);
}

/* The positions o of x where x[o .. o + n) are all set (bits past 63 clear). */
static inline uint64_t wp_runs(uint64_t x, unsigned n)
{
    if (n > 64)
        return 0;
    for (unsigned k = 1; k < n && x;) {
        unsigned d = k < n - k ? k : n - k;
        x &= x >> d;
        k += d;
    }
    return x;
}

/* Whether two pieces in a row (starts ps) are single letters (single), the
 * first of them possibly the last block's last piece (carry == 1). */
static inline bool wp_singles(uint64_t ps, uint64_t single, unsigned carry)
{
    if (carry == 1 && (single & ps & -ps))
        return true;
    for (uint64_t l = single; l; l &= l - 1) {
        unsigned o = (unsigned)__builtin_ctzll(l);
        uint64_t nx = ps & ~(~0ull >> (63 - o)); /* the starts after o */
        if (nx & single & -nx)
            return true;
    }
    return false;
}

/* A block with no token being gathered: which of its piece starts need the
 * piece by piece way. The block's tokens are T's runs, less its first `done`
 * bytes (read already: the rest of the last block's last piece, and the
 * skipped bytes after it). A token shorter, skipped bytes included, than
 * every key (so are all its runs of pieces) needs nothing: only the pieces of
 * longer tokens are looked at, and the token that runs on past the block is
 * left to the next block, made to start with it (*adv: how far the next
 * block is; the whole block when that token is all of it). All of the
 * pieces when two single letters follow each other somewhere (the piece by
 * piece way tells whether a space between them is dropped). */
static inline uint64_t wp_block(const struct wd_pre *p, uint64_t T, uint64_t ps, uint64_t single,
                                size_t done, unsigned carry, unsigned *adv)
{
    *adv = 64;
    if (p->space_skip && single && wp_singles(ps, single, carry))
        return ps;
    uint64_t Tn = done >= 64 ? 0 : T & (~0ull << done);
    /* the token that runs past the block starts after its last whitespace */
    unsigned tz = 64;
    if (Tn >> 63)
        tz = ~T ? 64 - (unsigned)__builtin_clzll(~T) : 0;
    uint64_t reg = tz < 64 ? (1ull << tz) - 1 : ~0ull, in = Tn & reg;
    uint64_t first = in & ~(in << 1) & wp_runs(in, p->minf);
    uint64_t long_tokens = in & ~(in + first); /* the runs starting at first */
    if (tz > 0 && tz < 64) {
        *adv = tz;
        return ps & long_tokens;
    }
    return ps & (long_tokens | ~reg);
}

/* The same decisions as wp_bytes for the usual classes (f->simd): a 64-byte
 * block's letters, whitespace and other bytes as masks (any other byte:
 * true), the pieces wp_block leaves walked as bits. A piece the block shows
 * whitespace after, with no token being gathered, is a token alone: its
 * length from the mask, and only a length some key has makes a key. Any
 * other piece (joined to the next over skipped bytes, or running past the
 * block) takes the byte-wise way: its length and what follows it read from
 * the text, its letters gathered into the token. Whether the piece before a
 * token's first is a single letter comes from the masks (carry: the last
 * block's last piece, 1 a single letter, 2 longer, 0 none). */
static bool wp_simd(const struct wd_pre *p, const struct words_fast *f, const unsigned char *t,
                    size_t len)
{
    /* The text's last bytes, then spaces: the last block reads these. */
    uint8_t tail[160];
    size_t tb = len > 64 ? len - 64 : 0;
    memset(tail, ' ', sizeof tail);
    memcpy(tail, t + tb, len - tb);
    /* bit l - 1: a piece of l letters could be a key or have a key's prefix */
    uint64_t want = p->lens | (!p->npl             ? 0
                               : p->plens[0] <= 64 ? ~0ull << (p->plens[0] - 1)
                                                   : 1ull << 63); /* bit 63: 64 or more */
    const __m128i fold = _mm_set1_epi8((char)(f->orfold & 0xff));
    uint8_t s[WP_TOKMAX + 24];
    uint16_t pc[WP_PIECEMAX];
    size_t nl = 0, np = 0; /* the token being gathered */
    size_t done = 0;       /* the piece by piece way has read the text up to here */
    unsigned carry = 0;
    uint64_t prevw = 0;
    for (size_t i = 0, adv = 64; i < len; i += adv) {
        const unsigned char *q = i + 64 <= len ? t + i : tail + (i - tb);
        uint64_t W = 0, S = 0, E = 0;
        for (unsigned k = 0; k < 4; k++) {
            unsigned sp, o;
            W |= (uint64_t)wp_cls16(q + 16 * k, &sp, &o) << (16 * k);
            S |= (uint64_t)sp << (16 * k);
            E |= (uint64_t)o << (16 * k);
        }
        if (E)
            return true;
        uint64_t K = ~(W | S), ps = W & ~(W << 1 | prevw), single = ps & ~(W >> 1);
        if ((ps >> 63) && i + 64 < len && f->cls[t[i + 64]] == WF_WORD)
            single &= ~(1ull << 63); /* a piece going on past the block */
        unsigned a = 64;
        uint64_t starts = np ? ps : wp_block(p, ~S, ps, single, done > i ? done - i : 0, carry, &a);
        adv = a;
        while (starts) {
            unsigned o = (unsigned)__builtin_ctzll(starts);
            starts &= starts - 1;
            uint64_t nw = ~(W >> o); /* 0 when the block is all letters from o = 0 */
            unsigned l = nw ? (unsigned)__builtin_ctzll(nw) : 64 - o; /* o + l <= 64 */
            /* the end of the skipped bytes after it (K >> e's top bits are 0) */
            unsigned e = o + l, ke = e < 64 ? e + (unsigned)__builtin_ctzll(~(K >> e)) : 64;
            /* a token's first piece after a single letter */
            bool after1 = false;
            if (np == 0 && p->space_skip) {
                uint64_t before = ps & ((1ull << o) - 1);
                after1 = before ? single >> (63 - __builtin_clzll(before)) & 1 : carry == 1;
            }
            if (np == 0 && ke < 64 && (S >> ke & 1)) {
                if (after1 && l == 1)
                    return true;
                if ((want >> (l - 1) & 1) && wp_piece(p, f, t, len, i + o, l))
                    return true;
                continue;
            }
            size_t x = i + o, n = l;
            while (x + n < len && f->cls[t[x + n]] == WF_WORD)
                n++;
            if (after1 && n == 1)
                return true;
            size_t k = x + n;
            while (k < len && f->cls[t[k]] == WF_SKIP)
                k++;
            done = k;
            bool joined = k < len && f->cls[t[k]] == WF_WORD;
            if (np == WP_PIECEMAX || nl + n > WP_TOKMAX)
                return true;
            pc[np++] = (uint16_t)nl;
            size_t j = 0;
            if (x + 16 <= len) { /* s has 24 bytes to spare */
                __m128i v = _mm_loadu_si128((const __m128i *)(t + x));
                _mm_storeu_si128((__m128i *)(s + nl), _mm_or_si128(v, fold));
                j = 16;
            }
            for (; j < n; j++)
                s[nl + j] = f->fold[t[x + j]];
            nl += n;
            if (!joined) {
                if (wp_token(p, s, nl, pc, np))
                    return true;
                nl = np = 0;
            }
        }
        uint64_t upto = a < 64 ? (1ull << a) - 1 : ~0ull, seen = ps & upto;
        if (seen)
            carry = single >> (63 - __builtin_clzll(seen)) & 1 ? 1 : 2;
        else if (W & upto)
            carry = 2; /* the rest of a longer piece */
        prevw = a < 64 ? 0 : W >> 63;
    }
    return false;
}
#endif

/* Any thread: reads p and f only. */
bool wd_pre_maybe(const struct wd_pre *p, const struct words_fast *f, const char *text, size_t len)
{
    if (p->always)
        return true;
#ifdef WP_SSE2
    if (f->simd)
        return wp_simd(p, f, (const unsigned char *)text, len);
#endif
    return wp_bytes(p, f, (const unsigned char *)text, len);
}

/* The window around a match [ms, me) in which every added exception's
 * occurrence that could cover it lies, when the text there is plain ASCII
 * (false: it is not, scan the whole text). An occurrence covering the match
 * has at most need symbols, one of them in the match, so it starts after
 * the need-th letter before ms and ends before the need-th letter after me
 * (*safe: an ASCII letter is one symbol). The window starts at a clean
 * point (scan.c: a run from there gives the symbols a run over the whole
 * text gives) and ends at one; only the symbols just before its end (a
 * space that could be dropped) may differ from the whole run's, and no
 * occurrence ending by *safe holds them. */
static bool wp_window(const struct words_fast *f, const unsigned char *t, size_t len, size_t ms,
                      size_t me, size_t need, size_t *ws, size_t *we, size_t *safe)
{
#define WP_CLEAN(x) ((x) == 0 || (f->cls[t[x]] == WF_WORD && f->cls[t[(x)-1]] >= WF_SPACE))
    size_t x = ms, got = 0;
    while (x > 0 && (got < need || !WP_CLEAN(x))) {
        uint8_t c = f->cls[t[--x]];
        if (c == WF_E)
            return false;
        got += c == WF_WORD;
    }
    *ws = x;
    size_t y = me;
    for (got = 0; y < len && got < need; y++) {
        uint8_t c = f->cls[t[y]];
        if (c == WF_E)
            return false;
        got += c == WF_WORD;
    }
    *safe = y;
    while (y < len && !WP_CLEAN(y)) {
        if (f->cls[t[y]] == WF_E)
            return false;
        y++;
    }
    if (y == len)
        *safe = len;
    *we = y;
    return true;
#undef WP_CLEAN
}

#define WP_WINMAX 32

/* Any thread, with its scratch. */
int wd_reports(const struct words_matcher *de, const struct words_fast *f, struct words_scratch *s,
               const char *text, size_t len, const struct words_match *a, size_t na,
               const struct words_match *b, size_t nb, struct words_match *r, size_t cap,
               size_t *nr, bool *capped)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t ws[WP_WINMAX], we[WP_WINMAX], sf[WP_WINMAX], nw = 0;
    bool whole = na + nb > WP_WINMAX;
    for (size_t i = 0; !whole && i < na + nb; i++) {
        const struct words_match *m = i < na ? &a[i] : &b[i - na];
        size_t x, y, z;
        if (!wp_window(f, t, len, m->start, m->end, de->maxlen, &x, &y, &z)) {
            whole = true;
            break;
        }
        /* In order of start, overlapping ones merged (ends grow with starts). */
        size_t k = nw;
        while (k > 0 && ws[k - 1] > x)
            k--;
        memmove(ws + k + 1, ws + k, (nw - k) * sizeof *ws);
        memmove(we + k + 1, we + k, (nw - k) * sizeof *we);
        memmove(sf + k + 1, sf + k, (nw - k) * sizeof *sf);
        ws[k] = x, we[k] = y, sf[k] = z, nw++;
    }
    size_t m = 0, bytes = 0;
    for (size_t i = 0; !whole && i < nw; i++) {
        if (m > 0 && ws[i] <= we[m - 1]) {
            if (we[i] > we[m - 1])
                we[m - 1] = we[i];
            if (sf[i] > sf[m - 1])
                sf[m - 1] = sf[i];
            continue;
        }
        ws[m] = ws[i], we[m] = we[i], sf[m] = sf[i], m++;
    }
    for (size_t i = 0; !whole && i < m; i++)
        bytes += we[i] - ws[i];
    if (whole || bytes > len / 2)
        return words_scan(de, s, text, len, r, cap, nr, capped);
    *nr = 0;
    *capped = false;
    for (size_t i = 0; i < m; i++) {
        size_t n;
        bool c;
        if (words_scan(de, s, text + ws[i], we[i] - ws[i], r + *nr, cap - *nr, &n, &c) != 0)
            return -1;
        *capped |= c;
        size_t at = *nr; /* the window's occurrences from here, kept ones compacted */
        for (size_t j = 0; j < n; j++) {
            struct words_match o = r[at + j];
            o.start += ws[i], o.end += ws[i];
            if (o.end <= sf[i])
                r[(*nr)++] = o;
        }
    }
    return 0;
}
