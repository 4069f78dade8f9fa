/* words/skip: the ASCII skip (docs/design.md, "The ASCII skip"): the first
 * place in plain ASCII text where an exact run must look, found a word at a
 * time from byte classes and a Bloom filter of the entries' first words, and
 * what it needs, made from the matcher (words_fast_init). The skip runs on
 * any thread, read-only on the matcher once made. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include "words/cls.h"
#include "words/words_int.h"
#ifdef WORDS_CLS_SSE2
#define WS_SSE2 1
#include <immintrin.h>
#endif

/* The key of an ASCII word: its first 8 folded bytes as a little-endian
 * 64-bit word (zero-padded) and its length, one multiply. The skip loads
 * the bytes straight from the text; the builder and the plain way pack
 * them. The filter takes the word from the key's top bits and the bits in it
 * from bits 18 to 35. */
#define WF_MUL 0x9e3779b97f4a7c15ull

#define WS_INLINE static inline __attribute__((always_inline))

WS_INLINE uint64_t wf_key1(uint64_t c0, size_t n)
{
    return (c0 + n) * WF_MUL;
}

/* The key of folded bytes s[0..n), any n: the same as the skip's. */
static uint64_t wf_key(const uint8_t *s, size_t n)
{
    uint64_t c0 = 0;
    for (size_t i = 0; i < 8 && i < n; i++)
        c0 |= (uint64_t)s[i] << (8 * i);
    return wf_key1(c0, n);
}

/* The Bloom filter is blocked: a key's WF_K bits lie in one 64-bit word,
 * chosen by the key's top bits (f->bshift), the bits by its bits 18 to 35
 * (three shifts: with BMI2 two instructions a bit, and faster here than a
 * table of masks, which adds a dependent load). */
#define WF_K 3
#define WF_BITS 32 /* bits of the filter an entry, at least */

WS_INLINE uint64_t wf_bits(uint64_t k)
{
    return 1ull << (k >> 18 & 63) | 1ull << (k >> 24 & 63) | 1ull << (k >> 30 & 63);
}

WS_INLINE bool wf_maybe(const struct words_fast *f, uint64_t k)
{
    uint64_t b = wf_bits(k);
    return (f->bloom[k >> f->bshift] & b) == b;
}

static void wf_add(struct words_fast *f, uint64_t k)
{
    f->bloom[k >> f->bshift] |= wf_bits(k);
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

/* A group at i: a word and the words joined to it over skipped bytes
 * (`don't`, `third-party`, `e.g.`), up to whitespace or the end. The
 * normaliser drops the skipped bytes and leaves a soft boundary, so a listed
 * word may begin at each of its runs of letters and end at the end of any
 * run: each such stretch of letters is tried against the Bloom filter.
 * 1 when an exact run must look at it (a probe says maybe, an E byte, more
 * than WS_RUNS runs, a last lone letter whose space may be dropped, a
 * letter starting an entry with a `*` end); else 0 with *next the byte
 * after it. Any thread. */
#define WS_RUNS 4

static int ws_group(const struct words_fast *f, const unsigned char *p, size_t i, size_t len,
                    size_t *next)
{
    uint8_t w[WORDS_MAX_SYMBOLS];
    size_t rs[WS_RUNS], re[WS_RUNS], k = 0, nb = 0, j = i;
    bool in = false;
    for (; j < len; j++) {
        uint8_t c = f->cls[p[j]];
        if (c == WF_WORD) {
            if (!in) {
                if (k == WS_RUNS || f->hard[p[j]])
                    return 1;
                rs[k] = nb, in = true;
            }
            if (nb == WORDS_MAX_SYMBOLS)
                return 1; /* longer than any entry: the exact run is cheap to write */
            w[nb++] = f->fold[p[j]];
        } else if (c == WF_SKIP) {
            if (in)
                re[k++] = nb, in = false;
        } else {
            break;
        }
    }
    if (in)
        re[k++] = nb;
    if (j < len && f->cls[p[j]] == WF_E)
        return 1;
    if (k == 0)
        return 1; /* not a word: cannot be, the caller starts at a letter */
    if (re[k - 1] - rs[k - 1] == 1 && f->space_skip && j < len &&
        !(j + 2 < len && f->cls[p[j + 1]] == WF_WORD && f->cls[p[j + 2]] == WF_WORD))
        return 1;
    for (size_t a = 0; a < k; a++)
        for (size_t b = a; b < k; b++)
            if (wf_maybe(f, wf_key(w + rs[a], re[b] - rs[a])))
                return 1;
    *next = j;
    return 0;
}

#ifdef WS_SSE2
/* A 64-byte block's classes as bit masks: letters, whitespace, skipped. */
struct ws_blk {
    uint64_t w, s, k;
};

WS_INLINE struct ws_blk ws_cls64(const unsigned char *p)
{
    struct ws_blk b = {0, 0, 0};
    for (unsigned q = 0; q < 4; q++) {
        unsigned w, sp, sk;
        words_cls16(p + 16 * q, &w, &sp, &sk);
        b.w |= (uint64_t)w << (16 * q);
        b.s |= (uint64_t)sp << (16 * q);
        b.k |= (uint64_t)sk << (16 * q);
    }
    return b;
}

/* The same with AVX2, 32 bytes a load: called only from the fast copy of
 * the skip (inlined there, dead code elsewhere). */
__attribute__((target("avx2"))) static inline void ws_cls32(const unsigned char *p, uint32_t *w,
                                                            uint32_t *sp, uint32_t *sk)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)p);
    __m256i low = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    __m256i alpha = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 26)),
                                      _mm256_add_epi8(low, _mm256_set1_epi8((char)(0x80 - 'a'))));
    __m256i digit = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 10)),
                                      _mm256_add_epi8(v, _mm256_set1_epi8((char)(0x80 - '0'))));
    __m256i ctl = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 5)),
                                    _mm256_add_epi8(v, _mm256_set1_epi8((char)(0x80 - 9))));
    __m256i blank = _mm256_or_si256(ctl, _mm256_cmpeq_epi8(v, _mm256_set1_epi8(' ')));
    __m256i print = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 0x7f - 0x21)),
                                      _mm256_add_epi8(v, _mm256_set1_epi8((char)(0x80 - 0x21))));
    *w = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(alpha, digit));
    *sp = (uint32_t)_mm256_movemask_epi8(blank);
    *sk = (uint32_t)_mm256_movemask_epi8(print) & ~*w;
}

__attribute__((target("avx2"))) static inline struct ws_blk ws_cls64_avx2(const unsigned char *p)
{
    uint32_t w0, s0, k0, w1, s1, k1;
    ws_cls32(p, &w0, &s0, &k0);
    ws_cls32(p + 32, &w1, &s1, &k1);
    return (struct ws_blk){w0 | (uint64_t)w1 << 32, s0 | (uint64_t)s1 << 32,
                           k0 | (uint64_t)k1 << 32};
}

/* The first n <= 64 bits set, as a mask. */
WS_INLINE uint64_t ws_low(unsigned n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* x with its bits from n up cleared (n <= 64; BZHI reads n modulo 256), in one instruction: called
 * only from the BMI2 copy of the skip (inlined there, dead code elsewhere). */
__attribute__((target("bmi2"))) static inline uint64_t ws_bzhi(uint64_t x, unsigned n)
{
    return _bzhi_u64(x, n);
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

WS_INLINE uint64_t ws_ld64(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

#define WS_NONE (-1)      /* nothing in the block needs an exact run */
#define WS_LAST (-2)      /* one must start at the last word start before the block */
#define WS_LONG (-3)      /* *o starts a word of 64 letters or more: the plain way */
#define WS_GROUP (-4)     /* *o starts a group of joined words: ws_group */
#define WS_GROUPLAST (-5) /* the last word start before the block starts one */

/* One 64-byte block q[0..64) with its classes c and the next block's n (the
 * bytes q[64..128), readable: a word's key reads 8 bytes from its start).
 * cin: q[-1] is a letter of a word already tried. Every word starting in the
 * block before its first problem is tried; the problems are a byte the skip
 * leaves (E: not plain ASCII), and a word that does not land on whitespace
 * past its skipped bytes (joined to more letters, or against an E byte) or
 * is a lone letter not followed, past the space, by two letters (the space
 * may be dropped). Landings: X + K carries each word end's bit through the
 * run of skipped bytes after it to the first byte past them, over 128 bits.
 * A word joined to the next starts a group (ws_group tries it whole).
 * Returns the offset of the first word the Bloom filter may hold, else the
 * last word start before the first problem (WS_LAST: none in the block), or
 * WS_NONE; or WS_LONG (a word of 64 letters or more) or WS_GROUP with *lo_
 * its start, WS_GROUPLAST when the group's first word starts before the
 * block (the caller's last start). *hs: the block's last word start tried
 * (-1: none). */
WS_INLINE int ws_block(const struct words_fast *f, const unsigned char *q, struct ws_blk c,
                       struct ws_blk n, uint64_t cin, bool hard, bool bmi, int *hs, unsigned *lo_)
{
    const uint64_t W = c.w, S = c.s, K = c.k;
    uint64_t starts = W & ~(W << 1 | cin);
    uint64_t wend = W & ~(W >> 1 | n.w << 63);
    uint64_t x = wend << 1, lo = x + K;
    uint64_t cy = (wend >> 63) | (lo < x), hi = n.k + cy;
    /* A landing on a letter joins two words (cont: the second one's start);
     * on anything but whitespace or a letter, a problem. */
    uint64_t cont = lo & ~K & W, joinhi = hi & ~n.k & n.w;
    uint64_t bad_lo = lo & ~K & ~S & ~W, bad_hi = hi & ~n.k & ~n.s & ~n.w;
    if (cy && hi < n.k)
        bad_hi |= 1ull << 63; /* skipped bytes past the two blocks */
    if (f->space_skip) {
        /* A lone letter's landing (a joined one's is its group's). */
        uint64_t one = starts & wend, xs = one << 1, slo = xs + K;
        uint64_t scy = (one >> 63) | (slo < xs), shi = n.k + scy;
        uint64_t g_lo = S & (W >> 1 | n.w << 63) & (W >> 2 | n.w << 62);
        uint64_t g_hi = n.s & n.w >> 1 & n.w >> 2;
        bad_lo |= slo & ~K & ~g_lo & ~W;
        bad_hi |= shi & ~n.k & ~g_hi & ~n.w;
        if (scy && shi < n.k)
            bad_hi |= 1ull << 63;
    }
    uint64_t prob = bad_lo | ~(W | S | K);
    unsigned P = prob ? (unsigned)__builtin_ctzll(prob) : bad_hi ? 64 : 128;
    int G = WS_NONE; /* the first group's start, when it comes before P */
    if (cont | joinhi) {
        /* The word before the first joined start (or the block's last
         * word, joined into the next block) starts a group. */
        uint64_t before = cont ? starts & ws_low((unsigned)__builtin_ctzll(cont)) : starts;
        int gs = before ? 63 - __builtin_clzll(before) : WS_GROUPLAST;
        unsigned gp = gs >= 0 ? (unsigned)gs : 0;
        if (gp < P)
            P = gp, G = gs;
    }
    starts &= ws_low(P);
    *hs = starts ? 63 - __builtin_clzll(starts) : -1;
    const uint64_t orfold = f->orfold, *bloom = f->bloom, nw1 = n.w << 1;
    const unsigned bshift = f->bshift;
    while (starts) {
        unsigned o = (unsigned)__builtin_ctzll(starts);
        starts &= starts - 1;
        if (hard && f->hard[q[o]])
            return (int)o;
        uint64_t wl = ~(W >> o | nw1 << (63 - o));
        if (wl == 0) {
            *lo_ = o;
            return WS_LONG;
        }
        unsigned l = (unsigned)__builtin_ctzll(wl);
        uint64_t c0 = ws_ld64(q + o) | orfold;
        c0 = bmi ? ws_bzhi(c0, l < 8 ? 8 * l : 64) : c0 & ws_bytes[l < 8 ? l : 8];
        uint64_t k = wf_key1(c0, l), b = wf_bits(k);
        if ((bloom[k >> bshift] & b) == b)
            return (int)o;
    }
    if (G != WS_NONE) {
        *lo_ = (unsigned)(G >= 0 ? G : 0);
        return G >= 0 ? WS_GROUP : WS_GROUPLAST;
    }
    if (P == 128)
        return WS_NONE;
    return *hs >= 0 ? *hs : WS_LAST;
}

/* The last t < 128 bytes of a text copied into buf (192 bytes), padded
 * with spaces: blocks there read whole vectors and a key 8 bytes on. */
WS_INLINE const unsigned char *ws_tail(unsigned char *buf, const unsigned char *p, size_t t)
{
    memcpy(buf, p, t);
    memset(buf + t, ' ', 192 - t);
    return buf;
}

/* The skip over 64-byte blocks, for the usual classes (f->simd), from pos (a
 * clean point) to the end: the last block or two are copied into a buffer
 * padded with spaces (the end of the text reads as whitespace, as the plain
 * way reads it). Returns 1 with *ret where an exact run must start (a clean
 * point), 0 when none must. Any thread (read-only on f). Compiled twice
 * (below): for any x86-64 (SSE2), and with AVX2, BMI1 and BMI2 (32-byte
 * classes, shifts by a register without moving the count,
 * count-trailing-zeros and BZHI in one instruction). */
WS_INLINE int ws_skip64_at(const struct words_fast *f, const unsigned char *p, size_t len,
                           size_t pos, size_t *ret, bool hard, bool bmi)
{
    size_t i = pos, lastw = pos;
    unsigned char buf[192];
#define WS_CLS(x) (bmi ? ws_cls64_avx2(x) : ws_cls64(x))
    int hs, r;
    unsigned lo;
restart:;
    uint64_t cin = 0;
    /* q: the block's bytes, in the text or, for the last ones, in buf. */
    if (i >= len)
        return 0;
    bool intext = i + 128 <= len;
    const unsigned char *q = intext ? p + i : ws_tail(buf, p + i, len - i);
    struct ws_blk c = WS_CLS(q);
    while (i < len) {
        struct ws_blk n = WS_CLS(q + 64);
        r = ws_block(f, q, c, n, cin, hard, bmi, &hs, &lo);
        if (r != WS_NONE)
            goto found;
        if (hs >= 0)
            lastw = i + (size_t)hs;
        cin = c.w >> 63;
        c = n; /* the next block's bytes: in the text, i + 128 <= len before */
        i += 64, q += 64;
        if (intext && i + 128 > len && i < len)
            q = ws_tail(buf, p + i, len - i), intext = false;
    }
    return 0;
found:
    if (r == WS_LONG || r == WS_GROUP || r == WS_GROUPLAST) {
        size_t w = r == WS_GROUPLAST ? lastw : i + lo, nx;
        if (r == WS_LONG ? ws_word(f, p, w, len, &nx) : ws_group(f, p, w, len, &nx)) {
            *ret = w;
            return 1;
        }
        lastw = w;
        i = nx; /* whitespace, or the end: read from there, afresh */
        goto restart;
    }
    *ret = r == WS_LAST ? lastw : i + (size_t)r;
    return 1;
#undef WS_CLS
}

static int ws_skip64(const struct words_fast *f, const unsigned char *p, size_t len, size_t pos,
                     size_t *ret)
{
    return ws_skip64_at(f, p, len, pos, ret, f->anyhard, false);
}

/* Lists with no `*` end (no hard letters) only. */
__attribute__((target("avx2,bmi,bmi2"))) static int ws_skip64_bmi2(const struct words_fast *f,
                                                                   const unsigned char *p,
                                                                   size_t len, size_t pos,
                                                                   size_t *ret)
{
    return ws_skip64_at(f, p, len, pos, ret, false, true);
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
 * that is not plain ASCII) goes to the exact run. Any thread. */
size_t words_skip(const struct words_fast *f, const unsigned char *p, size_t pos, size_t len)
{
#ifdef WS_SSE2
    if (f->simd) {
        size_t ret;
        int r = f->bmi2 && !f->anyhard ? ws_skip64_bmi2(f, p, len, pos, &ret)
                                       : ws_skip64(f, p, len, pos, &ret);
        return r ? ret : len;
    }
#endif
    size_t i = pos, last = pos; /* last: the last clean point seen */
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
        if (ws_word(f, p, i, len, &next))
            return i;
        i = next;
    }
    return len;
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
#ifdef WS_SSE2
    __builtin_cpu_init();
    f->bmi2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
              __builtin_cpu_supports("bmi");
#endif
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
    unsigned lg = 6;
    while (words * 64 < (size_t)m->npat * WF_BITS) /* WF_BITS bits a word at least */
        words *= 2, lg++;
    f->bloom = calloc(words, sizeof *f->bloom);
    uint32_t *stack = malloc(((size_t)m->maxlen + 1) * 2 * sizeof *stack);
    if (f->bloom == NULL || stack == NULL) {
        free(stack);
        words_fast_free(m);
        return -1;
    }
    f->bshift = 64 - lg;
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
                        f->hard[b] = 1, f->anyhard = true;
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
