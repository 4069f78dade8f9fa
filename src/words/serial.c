/* words/serial: the matcher as one block of bytes and back (docs/words.md,
 * "Compiled form"). Little-endian 32-bit arrays after a header; an FNV-1a
 * checksum over all of it. The loader trusts nothing: counts are bounded,
 * every offset, symbol and link is checked, and the links must point to
 * shallower states, so a scan over a loaded matcher always terminates and
 * stays in bounds. Any thread. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/le.h"
#include "words/words_int.h"

#define WS_MAGIC "BGWORDS1"
#define WS_VERSION 1u
#define WS_HEAD 80 /* magic 8, version 4, flags 4, length 8, checksum 8, 12 counts */
#define WS_MAX_COUNT (1u << 28)

enum {
    C_NSYM,
    C_NSTATES,
    C_NEDGES,
    C_NPAT,
    C_NWORDS,
    C_WTEXT,
    C_NT2S,
    C_SKIP,
    C_MAXLEN,
    C_MAXEXC,
    C_RESERVED1,
    C_RESERVED2,
    C_N
};

static uint64_t ws_fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static unsigned char *ws_put(unsigned char *p, const uint32_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++, p += 4)
        le_put32(p, a[i]);
    return p;
}

/* Any thread; the matcher is only read. */
int words_serialize(const struct words_matcher *m, unsigned char **out, size_t *outlen, char *err,
                    size_t errlen)
{
    uint32_t c[C_N] = {0};
    c[C_NSYM] = m->nsym, c[C_NSTATES] = m->nstates, c[C_NEDGES] = m->nedges;
    c[C_NPAT] = m->npat, c[C_NWORDS] = m->nwords, c[C_WTEXT] = m->woff[m->nwords];
    c[C_NT2S] = (uint32_t)m->norm.nt2s, c[C_SKIP] = (uint32_t)strlen(m->skip);
    c[C_MAXLEN] = m->maxlen, c[C_MAXEXC] = m->maxexc;
    size_t words = (size_t)m->nsym + ((size_t)m->nstates + 1) + 2 * (size_t)m->nedges +
                   4 * (size_t)m->nstates + 3 * (size_t)m->npat + ((size_t)m->nwords + 1) +
                   m->nwords + 2 * m->norm.nt2s;
    size_t len = WS_HEAD + 4 * words + c[C_SKIP] + c[C_WTEXT];
    unsigned char *b = malloc(len), *p = b + WS_HEAD;
    if (b == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(b, WS_MAGIC, 8);
    le_put32(b + 8, WS_VERSION);
    le_put32(b + 12,
             (m->opts.nfkc ? 1u : 0) | (m->opts.zh ? 2u : 0) | (m->opts.whole_word ? 4u : 0));
    le_put64(b + 16, len);
    for (int i = 0; i < C_N; i++)
        le_put32(b + 32 + 4 * i, c[i]);
    p = ws_put(p, m->alpha, m->nsym);
    /* The separate arrays the loader checks, from the packed records. */
    for (uint32_t s = 0; s <= m->nstates; s++, p += 4)
        le_put32(p, m->st[s].first);
    for (uint32_t e = 0; e < m->nedges; e++, p += 4)
        le_put32(p, m->edges[e].sym);
    for (uint32_t e = 0; e < m->nedges; e++, p += 4)
        le_put32(p, m->edges[e].tgt);
    for (uint32_t s = 0; s < m->nstates; s++, p += 4)
        le_put32(p, m->st[s].fail);
    for (uint32_t s = 0; s < m->nstates; s++, p += 4)
        le_put32(p, m->st[s].dict);
    for (uint32_t s = 0; s < m->nstates; s++, p += 4)
        le_put32(p, m->st[s].out);
    p = ws_put(p, m->depth, m->nstates);
    for (uint32_t i = 0; i < m->npat; i++)
        p = ws_put(p, &m->pats[i].word, 1), p = ws_put(p, &m->pats[i].len, 1),
        p = ws_put(p, &m->pats[i].flags, 1);
    p = ws_put(p, m->woff, (size_t)m->nwords + 1);
    p = ws_put(p, m->wflags, m->nwords);
    p = ws_put(p, m->norm.t2s, 2 * m->norm.nt2s);
    memcpy(p, m->skip, c[C_SKIP]);
    p += c[C_SKIP];
    memcpy(p, m->wtext, c[C_WTEXT]);
    le_put64(b + 24, ws_fnv(b + 32, len - 32));
    *out = b;
    *outlen = len;
    return 0;
}

/* Reads n 32-bit words at *p into a new array; NULL on no memory. */
static uint32_t *ws_get(const unsigned char **p, size_t n)
{
    uint32_t *a = malloc((n ? n : 1) * sizeof *a);
    if (a == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++, *p += 4)
        a[i] = le_get32(*p);
    return a;
}

#define WS_BAD(...)                                                                                \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        goto fail;                                                                                 \
    } while (0)

/* The checks that make the arrays safe to walk (see the file comment). */
static int ws_check(const struct words_matcher *m, char *err, size_t errlen)
{
    for (uint32_t i = 0; i < m->nsym; i++)
        if (m->alpha[i] >= WN_INVALID || (i && m->alpha[i] <= m->alpha[i - 1]))
            WS_BAD("alphabet not sorted at %u", i);
    if (m->first[0] != 0 || m->first[m->nstates] != m->nedges)
        WS_BAD("edge offsets do not span the edges");
    if (m->depth[0] != 0 || m->fail[0] != 0 || m->dict[0] != 0 || m->out[0] != 0)
        WS_BAD("the root state is not a root");
    for (uint32_t s = 0; s < m->nstates; s++)
        if (m->first[s + 1] < m->first[s])
            WS_BAD("edge offsets go back at state %u", s);
    for (uint32_t s = 0; s < m->nstates; s++) {
        if (m->depth[s] > m->maxlen)
            WS_BAD("state %u deeper than the longest word", s);
        for (uint32_t e = m->first[s]; e < m->first[s + 1]; e++) {
            if (m->esym[e] == 0 || m->esym[e] > m->nsym ||
                (e > m->first[s] && m->esym[e] <= m->esym[e - 1]))
                WS_BAD("bad symbol on edge %u", e);
            if (m->etgt[e] >= m->nstates || m->depth[m->etgt[e]] != m->depth[s] + 1)
                WS_BAD("bad target on edge %u", e);
        }
        if (s == 0)
            continue;
        if (m->fail[s] >= m->nstates || m->depth[m->fail[s]] >= m->depth[s])
            WS_BAD("bad failure link at state %u", s);
        if (m->dict[s] >= m->nstates || m->depth[m->dict[s]] >= m->depth[s] ||
            (m->dict[s] && m->out[m->dict[s]] == 0))
            WS_BAD("bad output link at state %u", s);
        if (m->out[s] > m->npat || (m->out[s] && m->pats[m->out[s] - 1].len != m->depth[s]))
            WS_BAD("bad pattern at state %u", s);
    }
    for (uint32_t i = 0; i < m->npat; i++)
        if (m->pats[i].word >= m->nwords || m->pats[i].len == 0 || m->pats[i].len > m->maxlen ||
            (m->pats[i].flags & ~(WP_EXC | WP_START | WP_END)) ||
            ((m->pats[i].flags & WP_EXC) && m->pats[i].len > m->maxexc))
            WS_BAD("bad pattern %u", i);
    if (m->woff[0] != 0)
        WS_BAD("bad word offsets");
    for (uint32_t i = 0; i < m->nwords; i++)
        if (m->woff[i + 1] < m->woff[i] || (m->wflags[i] & ~WP_EXC))
            WS_BAD("bad word %u", i);
    for (size_t i = 0; i < m->norm.nt2s; i++)
        if (m->norm.t2s[2 * i] >= WN_INVALID || m->norm.t2s[2 * i + 1] >= WN_INVALID ||
            (i && m->norm.t2s[2 * i] <= m->norm.t2s[2 * i - 2]))
            WS_BAD("bad Chinese pair %zu", i);
    return 0;
fail:
    return -1;
}

/* Any thread. Header, checksum and counts first, then the arrays copied and
 * checked (ws_check), then packed and the derived tables made. */
struct words_matcher *words_load(const void *buf, size_t len, char *err, size_t errlen)
{
    const unsigned char *b = buf;
    struct words_matcher *m = NULL;
    if (len < WS_HEAD || memcmp(b, WS_MAGIC, 8) != 0)
        WS_BAD("not a compiled word list");
    if (le_get32(b + 8) != WS_VERSION)
        WS_BAD("compiled word list version %u, not %u", le_get32(b + 8), WS_VERSION);
    uint32_t flags = le_get32(b + 12);
    if (le_get64(b + 16) != len)
        WS_BAD("length %llu, not the %zu bytes given", (unsigned long long)le_get64(b + 16), len);
    if (le_get64(b + 24) != ws_fnv(b + 32, len - 32))
        WS_BAD("checksum mismatch");
    uint32_t c[C_N];
    for (int i = 0; i < C_N; i++)
        c[i] = le_get32(b + 32 + 4 * i);
    for (int i = 0; i < C_N; i++)
        if (c[i] > WS_MAX_COUNT)
            WS_BAD("count %d too large", i);
    if (flags & ~7u || c[C_NSTATES] == 0 || c[C_NPAT] != c[C_NWORDS] ||
        c[C_MAXLEN] > WORDS_MAX_SYMBOLS || c[C_MAXEXC] > c[C_MAXLEN] || c[C_SKIP] > 4096)
        WS_BAD("bad header");
    size_t words = (size_t)c[C_NSYM] + ((size_t)c[C_NSTATES] + 1) + 2 * (size_t)c[C_NEDGES] +
                   4 * (size_t)c[C_NSTATES] + 3 * (size_t)c[C_NPAT] + ((size_t)c[C_NWORDS] + 1) +
                   c[C_NWORDS] + 2 * (size_t)c[C_NT2S];
    if (WS_HEAD + 4 * words + c[C_SKIP] + c[C_WTEXT] != len)
        WS_BAD("counts do not add up to the length");
    m = calloc(1, sizeof *m);
    if (m == NULL)
        WS_BAD("out of memory");
    m->nsym = c[C_NSYM], m->nstates = c[C_NSTATES], m->nedges = c[C_NEDGES];
    m->npat = c[C_NPAT], m->nwords = c[C_NWORDS], m->maxlen = c[C_MAXLEN];
    m->maxexc = c[C_MAXEXC];
    const unsigned char *p = b + WS_HEAD;
    bool ok = (m->alpha = ws_get(&p, m->nsym)) && (m->first = ws_get(&p, (size_t)m->nstates + 1)) &&
              (m->esym = ws_get(&p, m->nedges)) && (m->etgt = ws_get(&p, m->nedges)) &&
              (m->fail = ws_get(&p, m->nstates)) && (m->dict = ws_get(&p, m->nstates)) &&
              (m->out = ws_get(&p, m->nstates)) && (m->depth = ws_get(&p, m->nstates)) &&
              (m->pats = calloc(m->npat ? m->npat : 1, sizeof *m->pats));
    for (uint32_t i = 0; ok && i < m->npat; i++, p += 12) {
        m->pats[i].word = le_get32(p);
        m->pats[i].len = le_get32(p + 4);
        m->pats[i].flags = le_get32(p + 8);
    }
    ok = ok && (m->woff = ws_get(&p, (size_t)m->nwords + 1)) &&
         (m->wflags = ws_get(&p, m->nwords)) && (m->norm.t2s = ws_get(&p, 2 * (size_t)c[C_NT2S])) &&
         (m->skip = malloc((size_t)c[C_SKIP] + 1)) && (m->wtext = malloc(c[C_WTEXT] + 1));
    if (!ok)
        WS_BAD("out of memory");
    m->norm.nt2s = c[C_NT2S];
    memcpy(m->skip, p, c[C_SKIP]);
    m->skip[c[C_SKIP]] = '\0';
    p += c[C_SKIP];
    memcpy(m->wtext, p, c[C_WTEXT]);
    if (m->woff[m->nwords] != c[C_WTEXT])
        WS_BAD("word text length mismatch");
    if (memchr(m->skip, '\0', c[C_SKIP]) != NULL)
        WS_BAD("bad skip set");
    if (ws_check(m, err, errlen) != 0)
        goto fail;
    m->opts.nfkc = flags & 1, m->opts.zh = (flags & 2) != 0, m->opts.whole_word = (flags & 4) != 0;
    m->opts.skip = m->skip;
    m->norm.nfkc = m->opts.nfkc;
    m->norm.zh = m->opts.zh;
    if (wn_parse_skip(&m->norm, m->skip, err, errlen) != 0)
        goto fail;
    if (words_matcher_pack(m) != 0)
        WS_BAD("out of memory");
    if (words_matcher_finish(m, err, errlen) != 0)
        goto fail;
    return m;
fail:
    words_matcher_free(m);
    return NULL;
}
