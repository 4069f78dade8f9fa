/* adblock/request: a request as the matcher reads it: the URL lower-cased
 * once, its host, its tokens, the initiator's host, and (on first use) the
 * parties by registrable domain (libpsl). Any thread, on its own context. */
#include "config.h"

#include <string.h>
#include <strings.h>
#if defined(__SSE2__) && !defined(AB_SCALAR_SCAN)
#include <emmintrin.h>
#endif

#include "adblock/engine_int.h"
#include "adblock/rule.h"

static const char *const type_names[ADBLOCK_TYPE_COUNT] = {
    "document",       "subdocument", "script", "image", "stylesheet", "object",
    "xmlhttprequest", "media",       "font",   "ping",  "websocket",  "other"};

static const struct {
    const char *name;
    int type;
} type_aliases[] = {
    {"doc", ADBLOCK_TYPE_DOCUMENT},
    {"main_frame", ADBLOCK_TYPE_DOCUMENT},
    {"mainframe", ADBLOCK_TYPE_DOCUMENT},
    {"sub_frame", ADBLOCK_TYPE_SUBDOCUMENT},
    {"subframe", ADBLOCK_TYPE_SUBDOCUMENT},
    {"frame", ADBLOCK_TYPE_SUBDOCUMENT},
    {"iframe", ADBLOCK_TYPE_SUBDOCUMENT},
    {"css", ADBLOCK_TYPE_STYLESHEET},
    {"xhr", ADBLOCK_TYPE_XHR},
    {"fetch", ADBLOCK_TYPE_XHR},
    {"beacon", ADBLOCK_TYPE_PING},
    {"object_subrequest", ADBLOCK_TYPE_OBJECT},
    {"imageset", ADBLOCK_TYPE_IMAGE},
    {"embed", ADBLOCK_TYPE_OBJECT},
    {"audio", ADBLOCK_TYPE_MEDIA},
    {"video", ADBLOCK_TYPE_MEDIA},
    {"track", ADBLOCK_TYPE_MEDIA},
    {"style", ADBLOCK_TYPE_STYLESHEET},
    {"img", ADBLOCK_TYPE_IMAGE},
};

int adblock_type_parse(const char *s, size_t n)
{
    for (int i = 0; i < ADBLOCK_TYPE_COUNT; i++)
        if (strlen(type_names[i]) == n && strncasecmp(type_names[i], s, n) == 0)
            return i;
    for (size_t i = 0; i < sizeof type_aliases / sizeof type_aliases[0]; i++)
        if (strlen(type_aliases[i].name) == n && strncasecmp(type_aliases[i].name, s, n) == 0)
            return type_aliases[i].type;
    return -1;
}

const char *adblock_type_name(enum adblock_type t)
{
    return (unsigned)t < ADBLOCK_TYPE_COUNT ? type_names[t] : "unknown";
}

int adblock_method_parse(const char *s, size_t n)
{
    static const char *const m[ADBLOCK_METHOD_COUNT] = {"get",  "post",    "put",   "delete",
                                                        "head", "options", "patch", "connect"};
    for (int i = 0; i < ADBLOCK_METHOD_COUNT; i++)
        if (strlen(m[i]) == n && strncasecmp(m[i], s, n) == 0)
            return i;
    return -1;
}

uint32_t ab_hash(const char *s, size_t n)
{
    uint32_t h = AB_HASH_SEED;
    for (size_t i = 0; i < n; i++)
        h = ab_hash_step(h, (unsigned char)s[i]);
    return ab_hash_fix(h);
}

uint32_t ab_hash_back(const char *s, size_t n)
{
    uint32_t h = AB_HASH_SEED;
    while (n > 0)
        h = ab_hash_step(h, (unsigned char)s[--n]);
    return ab_hash_fix(h);
}

unsigned ab_suffix_hashes(const char *host, size_t n, uint32_t *out, uint32_t *at, unsigned max)
{
    /* backwards, a label suffix is complete when its dot comes next; the
     * last byte is taken first, as a dot there ends no suffix */
    if (n == 0)
        return 0;
    uint32_t h = (AB_HASH_SEED ^ (unsigned char)host[n - 1]) * 16777619u; /* already lower case */
    unsigned k = 0;
    for (size_t i = n - 1; i > 0; i--) {
        unsigned char c = (unsigned char)host[i - 1];
        if (c == '.') {
            if (k == max)
                return k;
            out[k] = ab_hash_fix(h);
            at[k++] = (uint32_t)i;
        }
        h = (h ^ c) * 16777619u;
    }
    if (k < max) {
        out[k] = ab_hash_fix(h);
        at[k++] = 0;
    }
    return k;
}

/* Byte classes for the passes over a URL, as constant tables (no start-up
 * code, no race): one load a byte says what it is and gives it lower-cased. */
#define C_TOKEN 1u /* adblock_is_token_char */
#define C_STOP 2u  /* `/`, `?`, `#`: the end of the authority */
#define C_AT 4u    /* `@`: user info ends */
#define C_COLON 8u /* `:`: a port follows the host */
#define CLASS_OF(c)                                                                                \
    (unsigned char)((((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') ||                   \
                             ((c) >= '0' && (c) <= '9') || (c) >= 0x80                             \
                         ? C_TOKEN                                                                 \
                         : 0) |                                                                    \
                    ((c) == '/' || (c) == '?' || (c) == '#' ? C_STOP : 0) |                        \
                    ((c) == '@' ? C_AT : 0) | ((c) == ':' ? C_COLON : 0))
#define LOWER_OF(c) (unsigned char)((c) >= 'A' && (c) <= 'Z' ? (c) + 32 : (c))
#define R4(F, b) F(b), F((b) + 1), F((b) + 2), F((b) + 3)
#define R16(F, b) R4(F, b), R4(F, (b) + 4), R4(F, (b) + 8), R4(F, (b) + 12)
#define R64(F, b) R16(F, b), R16(F, (b) + 16), R16(F, (b) + 32), R16(F, (b) + 48)
static const unsigned char byte_class[256] = {R64(CLASS_OF, 0), R64(CLASS_OF, 64),
                                              R64(CLASS_OF, 128), R64(CLASS_OF, 192)};
static const unsigned char lower_tab[256] = {R64(LOWER_OF, 0), R64(LOWER_OF, 64),
                                             R64(LOWER_OF, 128), R64(LOWER_OF, 192)};

/* The host of a URL: after `scheme://` and any user info, up to the port,
 * path, query or fragment; an IPv6 host keeps no brackets. Case does not
 * matter to the scan, so the caller's bytes are read as they are. One pass
 * over the authority: the last `@` starts the host, the first `:` after it
 * ends it. */
static void find_host(const char *u, size_t n, size_t *off, size_t *len)
{
    const char *p = memchr(u, ':', n);
    size_t i = p ? (size_t)(p - u) + 1 : 0;
    while (i < n && u[i] == '/')
        i++;
    size_t end = i, start = i, colon = SIZE_MAX;
    for (; end < n; end++) {
        unsigned k = byte_class[(unsigned char)u[end]];
        if (k <= C_TOKEN) /* neither a stop, `@` nor `:` */
            continue;
        if (k & C_STOP)
            break;
        if (k & C_AT) {
            start = end + 1;
            colon = SIZE_MAX;
        } else if (colon == SIZE_MAX) {
            colon = end;
        }
    }
    i = start;
    if (i < end && u[i] == '[') {
        size_t k = i + 1;
        while (k < end && u[k] != ']')
            k++;
        *off = i + 1;
        *len = k - i - 1;
        return;
    }
    *off = i;
    *len = (colon < end ? colon : end) - i;
}

static inline bool token_of(unsigned char c)
{
    return byte_class[c] & C_TOKEN;
}
static inline unsigned char lower_of(unsigned char c)
{
    return lower_tab[c];
}

/* Does s[0..n) hold `://`? The first `:` decides in nearly every case, so
 * the whole search runs only for an odd string. */
static bool has_scheme_sep(const char *s, size_t n)
{
    const char *c = memchr(s, ':', n);
    if (c == NULL)
        return false;
    size_t i = (size_t)(c - s);
    if (i + 3 <= n && c[1] == '/' && c[2] == '/')
        return true;
    return memmem(c + 1, n - i - 1, "://", 3) != NULL;
}

/* Why: one pass over the URL, sixteen bytes a step where the machine has
 * SSE2, that writes it lower-cased into q->url and sets a bit a byte in two
 * bitmaps: token bytes (q->tokm) and the bytes that bound a host (q->spm:
 * `/?#@:`). Every later step reads the bitmaps instead of classing bytes one
 * by one: the host is found from the few bits of spm, the tokens are the
 * runs of tokm. Bits past len are 0. Defining AB_SCALAR_SCAN builds the
 * byte loop (what a machine without SSE2 runs) where SSE2 is, to check it
 * gives the same verdicts. */
static void scan_url(struct ab_req *q, const char *url, size_t len)
{
    uint64_t *tm = q->tokm, *sm = q->spm;
    size_t i = 0;
#if defined(__SSE2__) && !defined(AB_SCALAR_SCAN)
    const __m128i a1 = _mm_set1_epi8('A' - 1), z1 = _mm_set1_epi8('Z' + 1);
    const __m128i la1 = _mm_set1_epi8('a' - 1), lz1 = _mm_set1_epi8('z' + 1);
    const __m128i d1 = _mm_set1_epi8('0' - 1), d2 = _mm_set1_epi8('9' + 1);
    const __m128i zero = _mm_setzero_si128(), bit5 = _mm_set1_epi8(0x20);
    const __m128i sl = _mm_set1_epi8('/'), qm = _mm_set1_epi8('?'), hs = _mm_set1_epi8('#');
    const __m128i at = _mm_set1_epi8('@'), co = _mm_set1_epi8(':');
    for (; i < len; i += 16) {
        __m128i b;
        if (len - i >= 16) {
            b = _mm_loadu_si128((const __m128i *)(const void *)(url + i));
        } else { /* the tail, zero-padded: a NUL is no token and no bound */
            char t[16] = {0};
            memcpy(t, url + i, len - i);
            b = _mm_loadu_si128((const __m128i *)(const void *)t);
        }
        /* signed compares: bytes of 0x80 and above are negative, so they
         * fall in no range below and are told by the sign alone */
        __m128i up = _mm_and_si128(_mm_cmpgt_epi8(b, a1), _mm_cmplt_epi8(b, z1));
        __m128i lo = _mm_and_si128(_mm_cmpgt_epi8(b, la1), _mm_cmplt_epi8(b, lz1));
        __m128i dg = _mm_and_si128(_mm_cmpgt_epi8(b, d1), _mm_cmplt_epi8(b, d2));
        __m128i tk = _mm_or_si128(_mm_or_si128(up, lo), _mm_or_si128(dg, _mm_cmplt_epi8(b, zero)));
        __m128i sp =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, sl), _mm_cmpeq_epi8(b, qm)),
                         _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, hs), _mm_cmpeq_epi8(b, at)),
                                      _mm_cmpeq_epi8(b, co)));
        _mm_storeu_si128((__m128i *)(void *)(q->url + i), _mm_add_epi8(b, _mm_and_si128(up, bit5)));
        uint64_t tb = (uint64_t)(unsigned)_mm_movemask_epi8(tk) << (i & 63);
        uint64_t sb = (uint64_t)(unsigned)_mm_movemask_epi8(sp) << (i & 63);
        if ((i & 63) == 0) {
            tm[i >> 6] = tb;
            sm[i >> 6] = sb;
        } else {
            tm[i >> 6] |= tb;
            sm[i >> 6] |= sb;
        }
    }
#else
    for (; i < len; i++) {
        unsigned char c = (unsigned char)url[i];
        unsigned k = byte_class[c];
        uint64_t bit = 1ull << (i & 63);
        if ((i & 63) == 0)
            tm[i >> 6] = sm[i >> 6] = 0;
        q->url[i] = (char)lower_of(c);
        if (k & C_TOKEN)
            tm[i >> 6] |= bit;
        if (k & (C_STOP | C_AT | C_COLON))
            sm[i >> 6] |= bit;
    }
#endif
    /* the word the next bit would go in, cleared, so that a scan that
     * reaches len reads zeroes: the bitmaps hold (len + 63) / 64 words
     * and one more */
    if ((len & 63) == 0)
        tm[len >> 6] = sm[len >> 6] = 0;
}

/* find_host's answer for u[0..n) (n at most the scanned length), from the
 * bounds bitmap of scan_url: the same rules (the first `:` ends the scheme,
 * slashes after it skipped, the last `@` starts the host, the first `:` after
 * it ends it, `/?#` end the authority), read from the few set bits. */
static void find_host_bits(const struct ab_req *q, const char *u, size_t n, size_t *off,
                           size_t *len)
{
    const uint64_t *sm = q->spm;
    size_t nw = (n + 63) >> 6, w = 0;
    uint64_t m = nw ? sm[0] : 0;
    size_t i = 0, state = 0; /* 0: looking for the scheme's ':' */
    size_t start = 0, end = n, colon = SIZE_MAX;
    for (;;) {
        while (m == 0) {
            if (++w >= nw)
                goto done;
            m = sm[w];
        }
        size_t p = (w << 6) + (size_t)__builtin_ctzll(m);
        m &= m - 1;
        if (p >= n)
            goto done;
        if (state == 0) {
            if (u[p] != ':')
                continue;
            i = p + 1;
            while (i < n && u[i] == '/')
                i++;
            start = i;
            state = 1;
            continue;
        }
        if (p < i)
            continue; /* the slashes after the scheme */
        unsigned k = byte_class[(unsigned char)u[p]];
        if (k & C_STOP) {
            end = p;
            goto done;
        }
        if (k & C_AT) {
            start = p + 1;
            colon = SIZE_MAX;
        } else if (colon == SIZE_MAX) {
            colon = p;
        }
    }
done:
    if (state == 0) { /* no ':' at all: the authority from the start */
        find_host(u, n, off, len);
        return;
    }
    if (start < end && u[start] == '[') {
        size_t k = start + 1;
        while (k < end && u[k] != ']')
            k++;
        *off = start + 1;
        *len = k - start - 1;
        return;
    }
    *off = start;
    *len = (colon < end ? colon : end) - start;
}

/* The URL's tokens from the token bitmap, those that start before n: each
 * run of token bytes of the lower-cased URL hashed (ab_hash's FNV-1a, the
 * bytes already lower case), and each token kept once (the first place it
 * occurs) with the chain of its other places, so that the matcher looks each
 * bucket up once and tests a candidate at every place its token has: the
 * hashes in q->tok (q->ntok of them), their places in q->first and q->occ,
 * their fingerprint bits in q->tbits. */
static void cut_tokens(struct ab_req *q, size_t n)
{
    const uint64_t *tm = q->tokm;
    const unsigned char *u = (const unsigned char *)q->url;
    size_t nw = (n + 63) >> 6, pos = 0;
    /* a set of twice as many slots as there can be tokens (a token and the
     * byte after it take two bytes) */
    unsigned cap = 16;
    while (cap < n + 2)
        cap *= 2;
    memset(q->seen, 0, cap * sizeof *q->seen); /* 1 + index in tok[], 0: empty */
    memset(q->tbits, 0, sizeof q->tbits);
    q->tbits[0] = 1; /* the bit of a rule with no token to check */
    uint16_t *last = q->last;
    unsigned nr = 0, nt = 0;
    for (;;) {
        size_t w = pos >> 6;
        if (w >= nw)
            break;
        uint64_t m = tm[w] & (~0ull << (pos & 63));
        while (m == 0) {
            if (++w >= nw)
                goto done;
            m = tm[w];
        }
        size_t start = (w << 6) + (size_t)__builtin_ctzll(m);
        if (start >= n)
            break;
        uint64_t z = ~tm[w] & (~0ull << (start & 63));
        while (z == 0)
            z = ~tm[++w]; /* the word after the last is 0 (scan_url) */
        size_t end = (w << 6) + (size_t)__builtin_ctzll(z);
        uint32_t h = AB_HASH_SEED;
        size_t k = start;
        for (; k + 4 <= end; k += 4) {
            h = (h ^ u[k]) * 16777619u;
            h = (h ^ u[k + 1]) * 16777619u;
            h = (h ^ u[k + 2]) * 16777619u;
            h = (h ^ u[k + 3]) * 16777619u;
        }
        for (; k < end; k++)
            h = (h ^ u[k]) * 16777619u;
        h = ab_hash_fix(h);
        unsigned j = nr++;
        q->occ[j].pos = (uint16_t)start;
        q->occ[j].next = AB_NO_POS;
        q->tbits[AB_FP_BIT(h) >> 6] |= 1ull << (AB_FP_BIT(h) & 63);
        for (unsigned s = (h * 2654435761u) >> 16 & (cap - 1);; s = (s + 1) & (cap - 1)) {
            unsigned d = q->seen[s];
            if (d == 0) {
                q->seen[s] = (uint16_t)(nt + 1);
                q->tok[nt] = h;
                q->first[nt] = (uint16_t)j;
                last[nt++] = (uint16_t)j;
                break;
            }
            if (q->tok[d - 1] == h) {
                q->occ[last[d - 1]].next = (uint16_t)j;
                last[d - 1] = (uint16_t)j;
                break;
            }
        }
        pos = end;
    }
done:
    q->ntok = nt;
}

/* The initiator's host into q->from_host (lower case, its trailing dot
 * gone; none for a page without one), through the memo of recent pages.
 * from_len > 0. */
static void set_from(struct ab_req *q, const char *from, size_t from_len)
{
    q->has_from = false;
    q->from_host_len = 0;
    struct ab_from_memo *m = NULL;
    uint32_t fh = 0;
    if (from_len <= sizeof m->from) {
        fh = ab_memo_hash(from, from_len);
        m = &q->from_memo[fh % AB_FROM_MEMO];
        if (m->len == from_len && m->hash == fh && memcmp(m->from, from, from_len) == 0) {
            memcpy(q->from_host, m->host, m->host_len);
            q->from_host[m->host_len] = 0;
            q->from_host_len = m->host_len;
            q->has_from = m->host_len > 0;
            return;
        }
    }
    size_t fo = 0, fl = 0, fn = from_len;
    /* a bare host name is accepted as the page too */
    if (!has_scheme_sep(from, fn)) {
        while (fl < fn && from[fl] != '/' && from[fl] != ':' && from[fl] != '?')
            fl++;
    } else {
        find_host(from, fn, &fo, &fl);
    }
    if (fl > 1 && from[fo + fl - 1] == '.')
        fl--; /* the page's host, as a fully qualified name: the same host */
    if (fl > 0 && fl <= AB_HOST_MAX) {
        for (size_t i = 0; i < fl; i++)
            q->from_host[i] = (char)lower_of((unsigned char)from[fo + i]);
        q->from_host[fl] = 0;
        q->from_host_len = fl;
        q->has_from = true;
    }
    if (m != NULL && q->from_host_len <= sizeof m->host) {
        m->hash = fh;
        m->len = (uint16_t)from_len;
        memcpy(m->from, from, from_len);
        m->host_len = (uint16_t)q->from_host_len;
        memcpy(m->host, q->from_host, q->from_host_len);
    }
}

/* Why: lower-case and tokenise the URL once, so every candidate rule compares
 * bytes and every bucket is found by one hash of a token; the host is found
 * once, from the bounds the same pass marks (their places do not depend on
 * case). */
bool ab_req_init(struct ab_req *q, const char *url, size_t len, int type, const char *from,
                 size_t from_len, int method)
{
    if (len > AB_URL_MAX)
        return false;
    size_t ho, hl;
    scan_url(q, url, len);
    find_host_bits(q, q->url, len, &ho, &hl);
    /* `https://host./` names the same host as `https://host/` (a fully qualified
     * name): the dot goes, so `||host^` sees the separator after the host, as the
     * reference engine and the naive matcher read it. The copy goes where the
     * $match-case form would (it is made from this one when asked), and is
     * scanned again (rare). */
    if (hl > 1 && url[ho + hl - 1] == '.' && memmem(url, ho, "://", 3) != NULL &&
        (ho == 0 || url[ho - 1] != '[')) {
        memcpy(q->cased, url, ho + hl - 1);
        memcpy(q->cased + ho + hl - 1, url + ho + hl, len - ho - hl);
        url = q->cased;
        len--;
        hl--;
        scan_url(q, url, len);
    }
    q->orig = url;
    q->cased_ready = false;
    q->type = type < 0 || type >= ADBLOCK_TYPE_COUNT ? ADBLOCK_TYPE_DOCUMENT : type;
    q->method = method < 0 ? ADBLOCK_METHOD_GET : method;
    q->party = -1;
    q->nhs = -1;
    q->strict_party = -1;
    q->from_ent_len = -2;
    q->host_ent_len = -2;
    const char *u = q->url;
    q->supported = false;
    size_t n = len;
    if ((len >= 5 && memcmp(u, "http:", 5) == 0) || (len >= 6 && memcmp(u, "https:", 6) == 0) ||
        (len >= 3 && memcmp(u, "ws:", 3) == 0) || (len >= 4 && memcmp(u, "wss:", 4) == 0)) {
        q->supported = true;
        if (u[0] == 'w')
            q->type = ADBLOCK_TYPE_WEBSOCKET; /* as the reference engine does */
    } else if (len >= 5 && memcmp(u, "data:", 5) == 0) {
        q->supported = true;
        const char *comma = memchr(u, ',', len);
        if (comma) {
            /* only the media type is matched: the tokens after the comma go
             * (none crosses it: a comma is no token byte) */
            n = (size_t)(comma - u);
            find_host_bits(q, u, n, &ho, &hl);
        }
    }
    q->len = n;
    q->host_off = ho;
    q->host_len = hl;
    cut_tokens(q, n);
    q->url[n] = 0;
    q->first[q->ntok] = AB_NO_POS;
    q->tok[q->ntok++] = ab_type_token((unsigned)q->type);
    /* a batch's items from one page: the host found for the item before */
    if (from == NULL)
        from_len = 0;
    if (from_len == q->prev_from_len &&
        (from_len == 0 || memcmp(from, q->prev_from, from_len) == 0))
        return true;
    if (from_len == 0) {
        q->has_from = false;
        q->from_host_len = 0;
    } else {
        set_from(q, from, from_len);
    }
    q->prev_from_len = from_len <= sizeof q->prev_from ? from_len : SIZE_MAX;
    if (q->prev_from_len != SIZE_MAX && from_len > 0)
        memcpy(q->prev_from, from, from_len);
    return true;
}

unsigned ab_req_host_hashes(struct ab_req *q)
{
    if (q->nhs < 0)
        q->nhs =
            (int)ab_suffix_hashes(q->url + q->host_off, q->host_len, q->hs, q->hs_at, AB_HOST_MAX);
    return (unsigned)q->nhs;
}

unsigned ab_req_from_hashes(struct ab_req *q)
{
    size_t n = q->from_host_len;
    if (q->fs_len < 0 || (size_t)q->fs_len != n || memcmp(q->fs_host, q->from_host, n) != 0) {
        q->nfs = (int)ab_suffix_hashes(q->from_host, n, q->fs, q->fs_at, AB_HOST_MAX);
        memcpy(q->fs_host, q->from_host, n);
        q->fs_len = (int)n;
    }
    return (unsigned)q->nfs;
}

/* A small direct-mapped memo, one per thread, of libpsl's answers for the
 * hosts seen lately: pages and trackers recur from one request to the next. */
#define AB_PSL_MEMO 64
struct ab_psl_memo {
    const psl_ctx_t *psl; /* the answer is this list's */
    uint32_t hash;
    uint16_t len;
    int16_t reg; /* the registrable domain's length, -1 for none */
    char host[64];
};
static _Thread_local struct ab_psl_memo memo[AB_PSL_MEMO];

/* The registrable domain of host[0..len), as libpsl says: a pointer to its
 * place in host (it is a suffix), *n its length; NULL for none. */
static const char *reg_domain(const psl_ctx_t *psl, const char *host, size_t len, size_t *n)
{
    if (len == 0 || len > AB_HOST_MAX || psl == NULL)
        return NULL;
    uint32_t h = ab_memo_hash(host, len);
    struct ab_psl_memo *m = &memo[h % AB_PSL_MEMO];
    if (m->psl == psl && m->hash == h && m->len == len && len <= sizeof m->host &&
        memcmp(m->host, host, len) == 0) {
        if (m->reg < 0)
            return NULL;
        *n = (size_t)m->reg;
        return host + len - *n;
    }
    char buf[AB_HOST_MAX + 1];
    memcpy(buf, host, len);
    buf[len] = 0;
    /* an IP address is a site of its own (libpsl would cut `185.147.34.126` to
     * `34.126`, the same "site" as the host name `x185.147.34.126`) */
    size_t ip = strspn(buf, "0123456789.");
    bool is_ip = (ip == len && buf[len - 1] != '.') || memchr(buf, ':', len) != NULL;
    const char *d = is_ip ? buf : psl_registrable_domain(psl, buf);
    size_t dl = d ? strlen(d) : 0;
    if (len <= sizeof m->host) {
        m->psl = psl;
        m->hash = h;
        m->len = (uint16_t)len;
        m->reg = d ? (int16_t)dl : -1;
        memcpy(m->host, host, len);
    }
    if (d == NULL)
        return NULL;
    *n = dl;
    return host + len - dl;
}

/* Do two host names end in the same two labels (all of a name with one)?
 * When they do not, they are of two sites without asking libpsl: a
 * registrable domain (or a host that is its own site) always holds a dot,
 * so two equal ones would be a common suffix of two labels or more. */
static bool same_last_two(const char *a, size_t an, const char *b, size_t bn)
{
    unsigned dots = 0;
    while (an > 0 && bn > 0) {
        char c = a[--an];
        if (c != b[--bn])
            return false;
        if (c == '.' && ++dots == 2)
            return true;
    }
    if (an == 0 && bn == 0)
        return true; /* the same name */
    /* one is a suffix of the other: their last two labels agree only when it
     * has two labels and starts at a label of the other */
    char before = an == 0 ? b[bn - 1] : a[an - 1];
    return dots == 1 && before == '.';
}

/* Why: third-party as the reference engine defines it: registrable domains
 * differ (an initiator with none counts by its host); a top-level document
 * and a request without initiator are first-party. Strict: host names differ.
 * Computed once per request, only when a rule asks. */
int ab_req_party(const struct adblock_engine *e, struct ab_req *q, bool strict)
{
    if (strict) {
        if (q->strict_party < 0) {
            bool third = q->has_from && q->type != ADBLOCK_TYPE_DOCUMENT &&
                         (q->from_host_len != q->host_len ||
                          memcmp(q->from_host, q->url + q->host_off, q->host_len) != 0);
            q->strict_party = third ? AB_F_3P : AB_F_1P;
        }
        return q->strict_party;
    }
    if (q->party >= 0)
        return q->party;
    bool third = false;
    const char *host = q->url + q->host_off;
    size_t hn = q->host_len;
    if (q->has_from && q->type != ADBLOCK_TYPE_DOCUMENT && hn > 0 &&
        (hn == q->from_host_len && memcmp(host, q->from_host, hn) == 0)) {
        third = false; /* the same host: the same site, whatever libpsl says */
    } else if (q->has_from && q->type != ADBLOCK_TYPE_DOCUMENT && hn > 0 &&
               !same_last_two(host, hn, q->from_host, q->from_host_len)) {
        third = true;
    } else if (q->has_from && q->type != ADBLOCK_TYPE_DOCUMENT) {
        size_t dl = 0, sl = 0;
        const char *d = reg_domain(e->psl, q->url + q->host_off, q->host_len, &dl);
        const char *s = reg_domain(e->psl, q->from_host, q->from_host_len, &sl);
        if (s == NULL) {
            s = q->from_host;
            sl = q->from_host_len;
        }
        if (d != NULL)
            third = dl != sl || memcmp(d, s, dl) != 0;
        else if (q->host_len > 0)
            third = q->host_len != sl || memcmp(q->url + q->host_off, s, sl) != 0;
    }
    q->party = third ? AB_F_3P : AB_F_1P;
    return q->party;
}

int ab_host_entity_len(const struct adblock_engine *e, const char *host, size_t n)
{
    size_t dl = 0;
    const char *d = reg_domain(e->psl, host, n, &dl);
    if (d == NULL)
        return -1;
    const char *dot = memchr(d, '.', dl);
    if (dot == NULL)
        return -1;
    size_t suffix = dl - (size_t)(dot - d); /* ".co.uk" */
    return (int)(n - suffix);
}

/* Why: a browser's URL parser lower-cases the scheme and the host before any
 * blocker sees a URL, so $match-case applies to the rest only (the reference
 * engine gets its URLs that way). Made on the first $match-case rule a request
 * meets; the calling thread's own request. */
const char *ab_req_cased(struct ab_req *q)
{
    if (q->cased_ready)
        return q->cased;
    if (q->orig != q->cased)
        memcpy(q->cased, q->orig, q->len);
    q->cased[q->len] = 0;
    const char *colon = memchr(q->cased, ':', q->len);
    if (colon != NULL && memchr(q->cased, '/', (size_t)(colon - q->cased)) == NULL)
        memcpy(q->cased, q->url, (size_t)(colon - q->cased));
    if (q->host_off + q->host_len <= q->len)
        memcpy(q->cased + q->host_off, q->url + q->host_off, q->host_len);
    q->cased_ready = true;
    return q->cased;
}
