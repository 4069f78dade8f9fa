/* words/norm: list and text normalised alike (norm.h, docs/words.md).
 * The per-code-point work (utf8proc's NFKC and case folding, the t2s pair,
 * the class) is done once per BMP code point into a table when a matcher is
 * made; the scan reads the table and calls utf8proc only for a segment with
 * combining marks or a code point above the BMP. */
#include "config.h"

#include "words/norm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define WN_NFKC_OPTS                                                                               \
    ((utf8proc_option_t)(UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD))

#define WN_SEG_CPS 32 /* code points gathered into one segment at most */

size_t wn_decode(const unsigned char *p, size_t avail, uint32_t *cp)
{
    unsigned char c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

/* Scripts written without spaces between words: no whole-word check, and a
 * space between two of their letters is dropped. Ranges by code point, as
 * utf8proc has no script property. */
static bool wn_is_cjk(uint32_t cp)
{
    static const uint32_t r[][2] = {
        {0x0e00, 0x0eff}, {0x1000, 0x109f}, {0x1100, 0x11ff}, {0x1780, 0x17ff},   {0x19e0, 0x19ff},
        {0x2e80, 0x2fdf}, {0x3005, 0x3007}, {0x3021, 0x3029}, {0x3031, 0x3035},   {0x3038, 0x303c},
        {0x3040, 0x318f}, {0x31a0, 0x31ff}, {0x3400, 0x4dbf}, {0x4e00, 0x9fff},   {0xa960, 0xa97f},
        {0xac00, 0xd7ff}, {0xf900, 0xfaff}, {0xff66, 0xff9f}, {0x20000, 0x3ffff},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0] && cp >= r[i][0]; i++)
        if (cp <= r[i][1])
            return true;
    return false;
}

static bool wn_is_space(uint32_t cp, int cat)
{
    return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL ||
           cat == UTF8PROC_CATEGORY_ZP || (cp >= 9 && cp <= 13) || cp == 0x85;
}

/* Skipped and invisible: formats, marks, controls leave no boundary. */
static int wn_skip_class(int cat)
{
    switch (cat) {
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CC:
        return WN_HIDE;
    default:
        return WN_SKIP;
    }
}

/* The class of a normalised code point under n's skip set. */
static int wn_classify(const struct wn_norm *n, uint32_t cp)
{
    if (cp >= WN_INVALID)
        return WN_OTHER;
    int cat = utf8proc_category((utf8proc_int32_t)cp);
    int explicit = 0; /* 1 added, -1 taken out by a range */
    for (size_t i = 0; i < n->nranges; i++)
        if (cp >= n->ranges[i].lo && cp <= n->ranges[i].hi)
            explicit = n->ranges[i].add ? 1 : -1;
    if (explicit > 0)
        return wn_skip_class(cat);
    if (wn_is_space(cp, cat))
        return WN_SPACE;
    if (explicit == 0 && (n->skip_cats & (1u << cat)))
        return wn_skip_class(cat);
    if (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_NO)
        return wn_is_cjk(cp) ? WN_CJK : WN_WORD;
    return WN_OTHER;
}

static uint32_t wn_t2s(const struct wn_norm *n, uint32_t cp)
{
    size_t lo = 0, hi = n->nt2s;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (n->t2s[2 * mid] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n->nt2s && n->t2s[2 * lo] == cp ? n->t2s[2 * lo + 1] : cp;
}

/* One segment (valid UTF-8: a starter and its marks, or one code point when
 * NFKC is off) to symbols and classes; the count. Used to fill the table
 * and, at scan time, for what the table cannot answer. */
static unsigned wn_segment(const struct wn_norm *n, const unsigned char *p, size_t len,
                           uint32_t *out, uint8_t *cls)
{
    utf8proc_int32_t buf[WN_SEG_MAX];
    utf8proc_ssize_t k = -1;
    if (n->nfkc) {
        k = utf8proc_decompose_custom(p, (utf8proc_ssize_t)len, buf, WN_SEG_MAX, WN_NFKC_OPTS, NULL,
                                      NULL);
        if (k > WN_SEG_MAX)
            k = -1;
        if (k >= 0)
            k = utf8proc_normalize_utf32(buf, k, WN_NFKC_OPTS);
    }
    if (k < 0) { /* NFKC off, or a segment that grows too much: as written */
        k = 0;
        for (size_t i = 0; i < len && k < WN_SEG_MAX;) {
            uint32_t cp;
            size_t l = wn_decode(p + i, len - i, &cp);
            if (l == 0)
                break;
            buf[k++] = (utf8proc_int32_t)cp;
            i += l;
        }
    }
    for (utf8proc_ssize_t i = 0; i < k; i++) {
        uint32_t cp = (uint32_t)buf[i];
        if (n->zh)
            cp = wn_t2s(n, cp);
        out[i] = cp;
        cls[i] = (uint8_t)wn_classify(n, cp);
    }
    return (unsigned)k;
}

static bool wn_is_comb(const struct wn_norm *n, uint32_t cp)
{
    if (cp < 0x10000)
        return (n->bmp[cp] & WN_T_COMB) != 0;
    return utf8proc_get_property((utf8proc_int32_t)cp)->combining_class != 0;
}

/* The last table made, with the settings it was made from: a load or a
 * build with the same settings (a reload of the same list, the next build)
 * copies it instead of asking utf8proc 64 Ki times. Compared in full, never
 * by a hash, so a table is only ever reused for exactly its settings. */
static pthread_mutex_t g_last_mu = PTHREAD_MUTEX_INITIALIZER;
static struct wn_norm g_last;

static bool wn_same(const struct wn_norm *a, const struct wn_norm *b)
{
    if (a->nfkc != b->nfkc || a->zh != b->zh || a->space_skip != b->space_skip ||
        a->skip_cats != b->skip_cats || a->nranges != b->nranges || a->nt2s != b->nt2s)
        return false;
    for (size_t i = 0; i < a->nranges; i++) /* fields, not bytes: structs have padding */
        if (a->ranges[i].lo != b->ranges[i].lo || a->ranges[i].hi != b->ranges[i].hi ||
            a->ranges[i].add != b->ranges[i].add)
            return false;
    return a->nt2s == 0 || memcmp(a->t2s, b->t2s, a->nt2s * 2 * sizeof *a->t2s) == 0;
}

static bool wn_from_last(struct wn_norm *n)
{
    bool hit = false;
    pthread_mutex_lock(&g_last_mu);
    if (g_last.bmp != NULL && wn_same(&g_last, n)) {
        memcpy(n->bmp, g_last.bmp, 0x10000 * sizeof *n->bmp);
        hit = true;
    }
    pthread_mutex_unlock(&g_last_mu);
    return hit;
}

/* Keeps a copy of n's settings and table; nothing kept when memory is short. */
static void wn_keep_last(const struct wn_norm *n)
{
    struct wn_norm c = *n;
    c.ranges = n->nranges ? malloc(n->nranges * sizeof *c.ranges) : NULL;
    c.t2s = n->nt2s ? malloc(n->nt2s * 2 * sizeof *c.t2s) : NULL;
    c.bmp = malloc(0x10000 * sizeof *c.bmp);
    if ((n->nranges && c.ranges == NULL) || (n->nt2s && c.t2s == NULL) || c.bmp == NULL) {
        free(c.ranges), free(c.t2s), free(c.bmp);
        return;
    }
    if (n->nranges)
        memcpy(c.ranges, n->ranges, n->nranges * sizeof *c.ranges);
    if (n->nt2s)
        memcpy(c.t2s, n->t2s, n->nt2s * 2 * sizeof *c.t2s);
    memcpy(c.bmp, n->bmp, 0x10000 * sizeof *c.bmp);
    pthread_mutex_lock(&g_last_mu);
    struct wn_norm old = g_last;
    g_last = c;
    pthread_mutex_unlock(&g_last_mu);
    free(old.ranges), free(old.t2s), free(old.bmp);
}

/* Any thread (a builder's, a loader's). */
int wn_build_table(struct wn_norm *n, char *err, size_t errlen)
{
    free(n->bmp);
    n->bmp = malloc(0x10000 * sizeof *n->bmp);
    if (n->bmp == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (wn_from_last(n))
        return 0;
    size_t zi = 0;
    for (uint32_t cp = 0; cp < 0x10000; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) {
            n->bmp[cp] = WN_INVALID & WN_T_CP; /* never decoded */
            continue;
        }
        const utf8proc_property_t *pr = utf8proc_get_property((utf8proc_int32_t)cp);
        bool comb = pr->combining_class != 0;
        uint32_t out[WN_SEG_MAX];
        uint8_t cls[WN_SEG_MAX];
        unsigned k;
        if (pr->decomp_seqindex == UINT16_MAX && pr->casefold_seqindex == UINT16_MAX) {
            /* NFKC and case folding leave it as it is (Hangul syllables
             * too: decomposed by rule, composed back): most of the BMP. */
            /* t2s pairs are in code point order: walked, not searched */
            while (zi < n->nt2s && n->t2s[2 * zi] < cp)
                zi++;
            out[0] = n->zh && zi < n->nt2s && n->t2s[2 * zi] == cp ? n->t2s[2 * zi + 1] : cp;
            cls[0] = (uint8_t)wn_classify(n, out[0]);
            k = 1;
        } else {
            unsigned char u[4];
            utf8proc_ssize_t l = utf8proc_encode_char((utf8proc_int32_t)cp, u);
            k = wn_segment(n, u, (size_t)l, out, cls);
        }
        uint32_t e = comb ? WN_T_COMB : 0;
        if (k == 1 && !comb)
            e |= WN_T_SIMPLE | out[0] | (uint32_t)cls[0] << WN_T_CLS_SHIFT;
        else if (k == 0 && !comb)
            e |= WN_T_SIMPLE | (uint32_t)WN_HIDE << WN_T_CLS_SHIFT;
        n->bmp[cp] = e;
    }
    wn_keep_last(n);
    return 0;
}

void wn_free(struct wn_norm *n)
{
    free(n->ranges);
    free(n->t2s);
    free(n->bmp);
    memset(n, 0, sizeof *n);
}

static int wn_cat_bits(const char *t, size_t l, uint32_t *bits)
{
    static const char *const names[] = {"Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd",
                                        "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm",
                                        "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};
    *bits = 0;
    for (int i = 0; i < 30; i++) {
        if ((l == 2 && memcmp(t, names[i], 2) == 0) || (l == 1 && t[0] == names[i][0]))
            *bits |= 1u << i;
    }
    return *bits ? 0 : -1;
}

static int wn_parse_cp(const char *t, size_t l, uint32_t *cp)
{
    if (l < 3 || l > 8 || (t[0] != 'U' && t[0] != 'u') || t[1] != '+')
        return -1;
    uint32_t v = 0;
    for (size_t i = 2; i < l; i++) {
        char c = t[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v << 4 | (uint32_t)d;
    }
    if (v > 0x10ffff)
        return -1;
    *cp = v;
    return 0;
}

/* Builder or loader thread: a spec from a config or a block, so every token
 * it cannot read is an error with the token in err. */
int wn_parse_skip(struct wn_norm *n, const char *spec, char *err, size_t errlen)
{
    n->skip_cats = 0;
    n->space_skip = false;
    n->nranges = 0;
    const char *s = spec;
    while (*s) {
        while (*s == ' ' || *s == ',' || *s == '\t')
            s++;
        if (!*s)
            break;
        const char *t = s;
        while (*s && *s != ' ' && *s != ',' && *s != '\t')
            s++;
        size_t l = (size_t)(s - t);
        bool add = true;
        if (t[0] == '-' || t[0] == '+') {
            add = t[0] == '+';
            t++, l--;
        }
        uint32_t bits;
        if (l == 5 && memcmp(t, "space", 5) == 0) {
            n->space_skip = add;
        } else if (l == 4 && memcmp(t, "none", 4) == 0) {
            n->skip_cats = 0, n->space_skip = false, n->nranges = 0;
        } else if (l <= 2 && l > 0 && wn_cat_bits(t, l, &bits) == 0) {
            if (t[0] == 'Z') /* whitespace is a class of its own */
                n->space_skip = add;
            else if (add)
                n->skip_cats |= bits;
            else
                n->skip_cats &= ~bits;
        } else {
            /* U+XXXX, U+XXXX-U+YYYY or U+XXXX-YYYY */
            const char *dash = l > 1 ? memchr(t + 1, '-', l - 1) : NULL;
            size_t l1 = dash ? (size_t)(dash - t) : l;
            uint32_t lo = 0, hi = 0;
            bool ok = wn_parse_cp(t, l1, &lo) == 0;
            if (ok && dash) {
                char tmp[12] = "U+";
                size_t l2 = l - l1 - 1;
                const char *h = dash + 1;
                if (l2 >= 2 && (h[0] == 'U' || h[0] == 'u') && h[1] == '+')
                    h += 2, l2 -= 2;
                ok = l2 + 2 < sizeof tmp;
                if (ok) {
                    memcpy(tmp + 2, h, l2);
                    ok = wn_parse_cp(tmp, l2 + 2, &hi) == 0;
                }
            }
            if (!ok) {
                snprintf(err, errlen, "skip set: cannot read `%.*s`", (int)(s - t), t);
                return -1;
            }
            if (!dash)
                hi = lo;
            if (hi < lo) {
                snprintf(err, errlen, "skip set: empty range `%.*s`", (int)(s - t), t);
                return -1;
            }
            if (n->nranges >= 256) {
                snprintf(err, errlen, "skip set: more than 256 ranges");
                return -1;
            }
            struct wn_range *r = realloc(n->ranges, (n->nranges + 1) * sizeof *r);
            if (r == NULL) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            n->ranges = r;
            r[n->nranges++] = (struct wn_range){lo, hi, add};
        }
    }
    return 0;
}

void wn_iter_init(struct wn_iter *it, const struct wn_norm *n, const char *text, size_t len)
{
    it->n = n;
    it->p = (const unsigned char *)text;
    it->len = len;
    it->pos = 0;
    it->pending_soft = 0;
    it->prev_cls = 0;
    it->run = 0;
    it->nraw = it->nout = it->iout = 0;
    it->carry = 0;
    it->lim = 16;
    it->out = it->raw;
}

void wn_iter_init_at(struct wn_iter *it, const struct wn_norm *n, const char *text, size_t len,
                     size_t pos)
{
    wn_iter_init(it, n, text, len);
    it->pos = pos < len ? pos : len;
}

/* The fill's state in locals (the compiler cannot keep fields of *it in
 * registers across the stores into it->raw). */
struct wn_fillst {
    struct wn_sym *raw;
    unsigned nr;
    uint8_t soft;
};

/* Appends a raw symbol; a whitespace run stays one symbol, so that a long
 * run never fills the batch. */
static inline void wn_push(struct wn_fillst *f, uint32_t cp, unsigned cls, size_t os, size_t oe)
{
    if (cls >= WN_SKIP) {
        f->soft |= cls == WN_SKIP;
        return;
    }
    if (cls == WN_SPACE && f->nr && f->raw[f->nr - 1].cls == WN_SPACE) {
        f->raw[f->nr - 1].oe = oe;
        f->soft = 0;
        return;
    }
    struct wn_sym *r = &f->raw[f->nr++];
    r->cp = cp;
    r->cls = (uint8_t)cls;
    r->soft = f->soft;
    r->os = os;
    r->oe = oe;
    f->soft = 0;
}

/* Decodes and normalises the text into raw[] until it is nearly full. A lone
 * ASCII byte (no byte >= 0x80 after it that could be a combining mark) is
 * the table's answer; anything else is a segment (a code point and its
 * combining marks) through the table or utf8proc. */
static void wn_fill(struct wn_iter *it)
{
    const struct wn_norm *n = it->n;
    const uint32_t *bmp = n->bmp;
    const unsigned char *p = it->p;
    size_t pos = it->pos, len = it->len;
    struct wn_fillst f = {it->raw, it->nraw, it->pending_soft};
    /* The code point after a segment, decoded to see whether it is a
     * combining mark: kept, so that the next segment does not decode it
     * again (most of a CJK text's decoding was done twice). */
    size_t next_pos = SIZE_MAX, next_l = 0;
    uint32_t next_cp = 0;
    unsigned lim = it->lim;
    while (f.nr < lim && pos < len) {
        unsigned char c = p[pos];
        if (c < 0x80 && (pos + 1 == len || p[pos + 1] < 0x80)) {
            uint32_t e = bmp[c];
            wn_push(&f, e & WN_T_CP, e >> WN_T_CLS_SHIFT & 7, pos, pos + 1);
            pos++;
            continue;
        }
        uint32_t cp;
        size_t avail = len - pos, l;
        if (pos == next_pos)
            cp = next_cp, l = next_l;
        else
            l = wn_decode(p + pos, avail, &cp);
        if (l == 0) {
            wn_push(&f, WN_INVALID, WN_OTHER, pos, pos + 1);
            pos++;
            continue;
        }
        size_t end = l, cnt = 1;
        if (n->nfkc) {
            while (end < avail && p[pos + end] >= 0x80 && cnt < WN_SEG_CPS) {
                uint32_t c2;
                size_t l2 = wn_decode(p + pos + end, avail - end, &c2);
                if (l2 == 0)
                    break;
                if (!wn_is_comb(n, c2)) {
                    next_pos = pos + end, next_cp = c2, next_l = l2;
                    break;
                }
                end += l2, cnt++;
            }
        }
        uint32_t e = cp < 0x10000 ? bmp[cp] : 0;
        if (cnt == 1 && (e & WN_T_SIMPLE)) {
            wn_push(&f, e & WN_T_CP, e >> WN_T_CLS_SHIFT & 7, pos, pos + end);
        } else {
            uint32_t seg[WN_SEG_MAX];
            uint8_t cls[WN_SEG_MAX];
            unsigned k = wn_segment(n, p + pos, end, seg, cls);
            for (unsigned i = 0; i < k; i++)
                wn_push(&f, seg[i], cls[i], pos, pos + end);
        }
        pos += end;
    }
    it->pos = pos;
    it->nraw = f.nr;
    it->pending_soft = f.soft;
}

/* Whitespace is resolved here: a run is one SPACE symbol, or nothing when
 * the skip set has `space` and it stands between two letters of a script
 * without spaces (法 轮) or between single letters (f u c k): the letter
 * before stands alone (run == 1) and so does the one after (the symbol
 * after it is no letter, or a soft boundary). The look-ahead is two raw
 * symbols; what cannot be decided yet waits for the next batch. */
static void wn_resolve(struct wn_iter *it)
{
    bool end = it->pos >= it->len;
    unsigned i = 0, n = it->nraw, o = 0;
    bool space_skip = it->n->space_skip;
    struct wn_sym *raw = it->raw;
    unsigned run = it->run;
    uint8_t prev = it->prev_cls;
    /* In place: o <= i, the symbols given are raw[0..o). */
    while (i < n) {
        struct wn_sym *s = &raw[i];
        if (s->cls != WN_SPACE) {
            if (s->cls == WN_WORD)
                run = (s->soft || prev != WN_WORD) ? 1 : run + 1;
            else
                run = 0;
            prev = s->cls;
            if (o != i)
                raw[o] = *s;
            o++, i++;
            continue;
        }
        if (!end && i + 3 > n)
            break;
        if (space_skip && i + 1 < n) {
            const struct wn_sym *x = &raw[i + 1];
            bool drop = prev == WN_CJK && x->cls == WN_CJK;
            if (!drop && prev == WN_WORD && run == 1 && x->cls == WN_WORD)
                drop = i + 2 >= n || raw[i + 2].cls != WN_WORD || raw[i + 2].soft;
            if (drop) {
                raw[i + 1].soft = 1;
                i++;
                continue;
            }
        }
        s->cp = WN_SPACE_CP;
        s->soft = 0;
        if (o != i)
            raw[o] = *s;
        run = 0;
        prev = WN_SPACE;
        o++, i++;
    }
    it->run = run;
    it->prev_cls = prev;
    it->out = raw;
    it->nout = o;
    it->iout = 0;
    it->carry = i;
}

/* The iterator's thread. Loops only when a batch gave nothing (all of it
 * dropped whitespace or skipped characters); each round reads more text or
 * ends it. */
unsigned wn_batch(struct wn_iter *it)
{
    for (;;) {
        /* The last batch's symbols are gone; what it could not decide (after
         * raw[carry]) goes first. */
        if (it->carry) {
            memmove(it->raw, it->raw + it->carry, (it->nraw - it->carry) * sizeof it->raw[0]);
            it->nraw -= it->carry;
            it->carry = 0;
        }
        if (it->pos >= it->len && it->nraw == 0) {
            it->nout = 0;
            return 0;
        }
        wn_fill(it);
        if (it->lim < WN_BATCH)
            it->lim *= 2;
        wn_resolve(it);
        if (it->nout)
            return it->nout;
    }
}

int wn_next(struct wn_iter *it, struct wn_sym *out)
{
    if (it->iout == it->nout && wn_batch(it) == 0)
        return 0;
    *out = it->out[it->iout++];
    return 1;
}
