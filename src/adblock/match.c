/* adblock/match: one request against the compiled engine. The URL's tokens
 * pick a few buckets per kind of rule ($important, block, exception, page
 * exception); each candidate is tested in full (pattern, type, party, method,
 * domains), so the token index only saves work, never decides. Any thread,
 * each with its own struct adblock_ctx. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "adblock/engine_int.h"
#include "adblock/rule.h"

static inline unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* Match the pattern segment p[0..n) (no `*`) at u[pos]: returns the end, or
 * -1. `^` matches a separator, or the URL's end (then only `^` may follow). */
static inline long seg_at(const char *p, size_t n, const char *u, size_t ulen, size_t pos,
                          bool fold)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '^') {
            if (pos == ulen)
                continue;
            if (!adblock_is_separator((unsigned char)u[pos]))
                return -1;
            pos++;
            continue;
        }
        if (pos == ulen)
            return -1;
        if ((fold ? lower(c) : c) != (unsigned char)u[pos])
            return -1;
        pos++;
    }
    return (long)pos;
}

/* Why: an Adblock pattern is literal text, `^` and `*`. Split at `*`, each
 * segment taken at its leftmost place is the greedy match that leaves the most
 * room for the rest (and ends the soonest), so no backtracking is needed; only
 * an end anchor makes the last segment try each place. `anchored`: the first
 * segment must begin at start. Returns where the match ends, or -1. */
static long glob_end(const char *p, size_t plen, const char *u, size_t ulen, size_t start,
                     bool anchored, bool end_anchor, bool fold)
{
    size_t pos = start, i = 0;
    bool first = true;
    for (;;) {
        const char *star = memchr(p + i, '*', plen - i);
        size_t sn = (star ? (size_t)(star - p) : plen) - i;
        const char *seg = p + i;
        bool last = star == NULL;
        if (last && end_anchor) {
            if (first && anchored) {
                long e = seg_at(seg, sn, u, ulen, pos, fold);
                return e == (long)ulen ? e : -1;
            }
            for (size_t at = pos; at <= ulen; at++) {
                long e = seg_at(seg, sn, u, ulen, at, fold);
                if (e == (long)ulen)
                    return e;
            }
            return -1;
        }
        if (sn > 0) {
            if (first && anchored) {
                long e = seg_at(seg, sn, u, ulen, pos, fold);
                if (e < 0)
                    return -1;
                pos = (size_t)e;
            } else {
                unsigned char c0 = (unsigned char)seg[0];
                long e = -1;
                if (c0 != '^') {
                    unsigned char want = fold ? lower(c0) : c0;
                    for (size_t at = pos; at < ulen; at++) {
                        const char *hit = memchr(u + at, want, ulen - at);
                        if (hit == NULL)
                            break;
                        at = (size_t)(hit - u);
                        e = seg_at(seg, sn, u, ulen, at, fold);
                        if (e >= 0)
                            break;
                    }
                } else {
                    for (size_t at = pos; at <= ulen && e < 0; at++)
                        e = seg_at(seg, sn, u, ulen, at, fold);
                }
                if (e < 0)
                    return -1;
                pos = (size_t)e;
            }
        }
        if (last)
            return (long)pos;
        first = false;
        i += sn + 1;
    }
}

static bool glob(const char *p, size_t plen, const char *u, size_t ulen, size_t start,
                 bool anchored, bool end_anchor, bool fold)
{
    return glob_end(p, plen, u, ulen, start, anchored, end_anchor, fold) >= 0;
}

/* Why: a plain pattern filed under its token k bytes in can only match with
 * that token on one of the URL's own tokens (it is a whole token of the
 * pattern, between bytes no token may cross), so the segment holding it is
 * tried at those places alone: what comes before it must fit, greedily, in
 * front; what comes after is matched from its end. Token ti of q. */
static bool glob_at_token(const char *p, size_t plen, size_t k, const struct ab_req *q, int ti,
                          const char *u, size_t ulen, bool anchored, bool end_anchor, bool fold,
                          bool nostar)
{
    if (k >= plen)
        return false;
    size_t s0 = 0, s1 = plen; /* the segment holding the token: p[s0..s1) */
    if (!nostar) {
        s0 = k;
        while (s0 > 0 && p[s0 - 1] != '*')
            s0--;
        const char *star = memchr(p + k, '*', plen - k);
        s1 = star ? (size_t)(star - p) : plen;
    }
    long before = -1; /* where the greedy match of p[0..s0 - 1) ends */
    if (s0 > 0) {
        before = glob_end(p, s0 - 1, u, ulen, 0, anchored, false, fold);
        if (before < 0)
            return false;
    }
    for (unsigned j = q->first[ti]; j != AB_NO_POS; j = q->occ[j].next) {
        size_t tp = q->occ[j].pos;
        if (tp < k - s0)
            continue;
        size_t base = tp - (k - s0);
        if (s0 == 0 ? anchored && base != 0 : (long)base < before)
            continue;
        long e = seg_at(p + s0, s1 - s0, u, ulen, base, fold);
        if (e < 0)
            continue;
        if (s1 == plen) {
            if (!end_anchor || e == (long)ulen)
                return true;
            continue;
        }
        if (glob_end(p + s1 + 1, plen - s1 - 1, u, ulen, (size_t)e, false, end_anchor, fold) >= 0)
            return true;
    }
    return false;
}

/* `||host...`: the host part must cover whole labels of the request's host
 * (a prefix of a label only when `*` follows it, as the reference engine
 * reads `||foo*`), then the rest must match from right after it. */
static bool match_host_anchor(const struct ab_rule *r, const char *text, const struct ab_req *q,
                              const char *u, size_t ulen, bool fold)
{
    const char *h = text + r->pat_off;
    size_t hl = r->host_len;
    const char *rest = h + hl;
    size_t rl = (size_t)(r->pat_end - r->pat_off) - hl;
    const char *host = q->url + q->host_off;
    size_t hn = q->host_len;
    bool end = (r->flags & AB_F_END) != 0;
    if (hl == 0)
        return glob(rest, rl, u, ulen, q->host_off, false, end, fold);
    if (hl > hn)
        return false;
    bool wild = rl > 0 && rest[0] == '*';
    bool lead_dot = h[0] == '.', trail_dot = h[hl - 1] == '.';
    unsigned char h0 = lower((unsigned char)h[0]);
    for (size_t at = 0; at + hl <= hn; at++) {
        if ((unsigned char)host[at] != h0)
            continue;
        if (at > 0 && host[at - 1] != '.' && !lead_dot)
            continue;
        size_t k = 1;
        while (k < hl && lower((unsigned char)h[k]) == (unsigned char)host[at + k])
            k++;
        if (k < hl)
            continue;
        if (at + hl < hn && host[at + hl] != '.' && !trail_dot && !wild)
            continue;
        if (rl == 0 && !end)
            return true;
        if (glob(rest, rl, u, ulen, q->host_off + at + hl, true, end, fold))
            return true;
    }
    return false;
}

static bool match_pattern(const struct adblock_engine *e, struct adblock_ctx *c, struct ab_req *q,
                          const struct ab_rule *r, int ti)
{
    const char *text = e->pool + r->text;
    bool fold = !(r->flags & AB_F_MATCH_CASE);
    const char *u = fold ? q->url : ab_req_cased(q);
    size_t ulen = q->len;
    if (r->flags & AB_F_REGEX) {
        const struct ab_extra *x = &e->extras[r->aux - 1];
        pcre2_code *re = e->regexes[x->regex - 1];
        int rc = pcre2_match(re, (PCRE2_SPTR)u, ulen, 0, 0, c->md, NULL);
        return rc >= 0;
    }
    if (r->flags & AB_F_HOST)
        return match_host_anchor(r, text, q, u, ulen, fold);
    if (ti >= 0 && r->tok_off != AB_NO_TOK)
        return glob_at_token(text + r->pat_off, (size_t)(r->pat_end - r->pat_off), r->tok_off, q,
                             ti, u, ulen, (r->flags & AB_F_START) != 0, (r->flags & AB_F_END) != 0,
                             fold, (r->flags & AB_F_NOSTAR) != 0);
    return glob(text + r->pat_off, (size_t)(r->pat_end - r->pat_off), u, ulen, 0,
                (r->flags & AB_F_START) != 0, (r->flags & AB_F_END) != 0, fold);
}

/* Does name[0..n) (lower-case) end host[0..hn) at a label boundary? */
static bool host_under(const char *host, size_t hn, const char *name, size_t n)
{
    if (n > hn)
        return false;
    const char *tail = host + hn - n;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)tail[i] != lower((unsigned char)name[i]))
            return false;
    return n == hn || tail[-1] == '.';
}

/* One domain list (kind) of a rule against a host. Returns true when the rule
 * may apply: no negated entry covers the host and, if there are positive
 * entries, one does. denyallow inverts: any entry covering it says no. */
static bool domains_allow(const struct adblock_engine *e, const struct ab_extra *x, unsigned kind,
                          const char *host, size_t hn, int *ent_cache)
{
    bool any_pos = false, pos_hit = false;
    for (uint32_t i = 0; i < x->ndom; i++) {
        const struct ab_dom *d = &e->doms[x->dom + i];
        if ((unsigned)(d->flags >> AB_D_KIND_SHIFT) != kind)
            continue;
        bool neg = (d->flags & AB_D_NEG) != 0;
        if (!neg)
            any_pos = true;
        if (hn == 0)
            continue;
        const char *name = e->pool + d->str;
        bool hit;
        if (d->flags & AB_D_ENTITY) {
            if (*ent_cache == -2)
                *ent_cache = ab_host_entity_len(e, host, hn);
            hit = *ent_cache > 0 && host_under(host, (size_t)*ent_cache, name, d->len);
        } else {
            hit = host_under(host, hn, name, d->len);
        }
        if (hit && (neg || kind == ADBLOCK_DOM_DENYALLOW))
            return false;
        if (hit)
            pos_hit = true;
    }
    if (kind == ADBLOCK_DOM_DENYALLOW)
        return true;
    return !any_pos || pos_hit;
}

/* Why: the whole test of one candidate, cheapest checks first: the type bit,
 * then the pattern, and only then what may need libpsl (parties, entities). */
static inline bool rule_matches(const struct adblock_engine *e, struct adblock_ctx *c,
                                struct ab_req *q, const struct ab_rule *r, int ti)
{
    if (!(r->types & (1u << q->type)))
        return false;
    if (!((q->tbits[r->fp[0] >> 6] >> (r->fp[0] & 63)) &
          (q->tbits[r->fp[1] >> 6] >> (r->fp[1] & 63)) & 1))
        return false; /* a token it needs is not in the URL */
    if (!match_pattern(e, c, q, r, ti))
        return false;
    unsigned party = r->flags & (AB_F_1P | AB_F_3P);
    if (party != (AB_F_1P | AB_F_3P) || (r->flags & AB_F_STRICT)) {
        int p = ab_req_party(e, q, (r->flags & AB_F_STRICT) != 0);
        if (!(party & (unsigned)p))
            return false;
    }
    if (r->aux) {
        const struct ab_extra *x = &e->extras[r->aux - 1];
        if (x->methods && !(x->methods & (1u << q->method)))
            return false;
        if (x->ndom) {
            const char *host = q->url + q->host_off;
            if (!domains_allow(e, x, ADBLOCK_DOM_FROM, q->from_host, q->from_host_len,
                               &q->from_ent_len) ||
                !domains_allow(e, x, ADBLOCK_DOM_TO, host, q->host_len, &q->host_ent_len) ||
                !domains_allow(e, x, ADBLOCK_DOM_DENYALLOW, host, q->host_len, &q->host_ent_len))
                return false;
        }
    }
    return true;
}

static inline uint32_t slot_of(uint32_t h, uint32_t cap)
{
    return (uint32_t)(((uint64_t)(h * 2654435761u) * cap) >> 32);
}

/* The rules filed under hash h: *ids (count n), or a single one in *one. */
static inline const uint32_t *table_get(const struct ab_table *t, const uint32_t *ids, uint32_t h,
                                        uint32_t *n, uint32_t *one)
{
    if (t->cap == 0)
        return NULL;
    uint32_t b = (h >> 7) & t->bits_mask;
    if (!(t->bits[b >> 6] & (1ull << (b & 63))))
        return NULL;
    uint32_t s = slot_of(h, t->cap);
    for (;;) {
        uint32_t k = t->slots[s].key;
        if (k == h) {
            uint32_t v = t->slots[s].val;
            if (v & AB_ONE) {
                *one = v & ~AB_ONE;
                *n = 1;
                return one;
            }
            *n = ids[v];
            return ids + v + 1;
        }
        if (k == 0)
            return NULL;
        if (++s == t->cap)
            s = 0;
    }
}

/* The rules l[0..n) in order, the first that matches. lx, when given, holds
 * each one's types and fingerprint (struct ab_index.idsx): a candidate of
 * another type or without a token it needs is passed on those alone, so
 * that only the few left read their rule (and miss the cache for it). */
static const struct ab_rule *try_list(const struct adblock_engine *e, struct adblock_ctx *c,
                                      struct ab_req *q, const uint32_t *l, const uint32_t *lx,
                                      uint32_t n, int ti)
{
    if (lx) {
        uint32_t tb = 1u << q->type;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t p = lx[i], f0 = p >> 16 & 255, f1 = p >> 24;
            if (!(p & tb) ||
                !((q->tbits[f0 >> 6] >> (f0 & 63)) & (q->tbits[f1 >> 6] >> (f1 & 63)) & 1))
                continue;
            const struct ab_rule *r = &e->rules[l[i]];
            if (rule_matches(e, c, q, r, ti))
                return r;
        }
        return NULL;
    }
    /* the rules are fetched before the first is tested, so their cache
     * misses overlap instead of following one another (their texts are not:
     * most candidates stop at their fingerprint) */
    for (uint32_t i = 0; i < n; i++)
        __builtin_prefetch(&e->rules[l[i]]);
    for (uint32_t i = 0; i < n; i++) {
        const struct ab_rule *r = &e->rules[l[i]];
        if (rule_matches(e, c, q, r, ti))
            return r;
    }
    return NULL;
}

/* The entries of x->idsx beside the list l that table_get gave (NULL for
 * its single rule, or when there are none). */
static inline const uint32_t *cand_of(const struct ab_index *x, const uint32_t *l,
                                      const uint32_t *one)
{
    return l == one || x->idsx == NULL ? NULL : x->idsx + (l - x->ids);
}

/* Bits of a bitmap small enough (8 KB at most: it stays in the cache) not
 * to be prefetched. */
#define AB_BITS_SMALL 65536u

/* The URL's tokens against one token table: the bitmap words of all of them
 * are fetched first, so that their cache misses overlap; most tokens stop at
 * the bitmap, and the few it lets through are looked up and their rules tried
 * in the URL's order. */
static const struct ab_rule *find_tokens(const struct adblock_engine *e, struct adblock_ctx *c,
                                         struct ab_req *q, const struct ab_index *x)
{
    const struct ab_table *t = &x->tok;
    /* no token of the request (the type's pseudo-token is not in tbits) is a
     * key of this table */
    uint32_t ty = q->tok[q->ntok - 1];
    if (!((t->fp[0] & q->tbits[0]) | (t->fp[1] & q->tbits[1]) | (t->fp[2] & q->tbits[2]) |
          (t->fp[3] & q->tbits[3])) &&
        !(t->fp[AB_FP_BIT(ty) >> 6] >> (AB_FP_BIT(ty) & 63) & 1))
        return NULL;
    if (t->bits_mask >= AB_BITS_SMALL) /* a small bitmap stays in the cache */
        for (unsigned i = 0; i < q->ntok; i++)
            __builtin_prefetch(&t->bits[((q->tok[i] >> 7) & t->bits_mask) >> 6]);
    for (unsigned i = 0; i < q->ntok; i++) {
        uint32_t h = q->tok[i], b = (h >> 7) & t->bits_mask;
        if (!(t->bits[b >> 6] & (1ull << (b & 63))))
            continue;
        uint32_t n, one;
        const uint32_t *l = table_get(t, x->ids, h, &n, &one);
        const struct ab_rule *r = l ? try_list(e, c, q, l, cand_of(x, l, &one), n, (int)i) : NULL;
        if (r)
            return r;
    }
    return NULL;
}

/* The first rule of one kind that matches, or NULL. */
static const struct ab_rule *find(const struct adblock_engine *e, struct adblock_ctx *c,
                                  struct ab_req *q, const struct ab_index *x)
{
    const struct ab_rule *r;
    uint32_t n, one;
    const uint32_t *l;
    if (x->tok.cap && (r = find_tokens(e, c, q, x)))
        return r;
    if (x->dom.cap && q->has_from) {
        /* every label suffix of the initiator's host, then of its entity */
        const char *h = q->from_host;
        size_t hn = q->from_host_len;
        uint32_t hs[AB_HOST_MAX], at[AB_HOST_MAX];
        unsigned m = ab_req_from_hashes(q);
        for (unsigned j = 0; j < m; j++) {
            l = table_get(&x->dom, x->ids, q->fs[j], &n, &one);
            if (l && (r = try_list(e, c, q, l, cand_of(x, l, &one), n, -1)))
                return r;
        }
        if (x->entities && q->from_ent_len == -2)
            q->from_ent_len = ab_host_entity_len(e, h, hn);
        m = x->entities && q->from_ent_len > 0
                ? ab_suffix_hashes(h, (size_t)q->from_ent_len, hs, at, AB_HOST_MAX)
                : 0;
        for (unsigned j = 0; j < m; j++) {
            l = table_get(&x->dom, x->ids, ab_hash_fix(hs[j] ^ 0x5bd1e995u), &n, &one);
            if (l && (r = try_list(e, c, q, l, cand_of(x, l, &one), n, -1)))
                return r;
        }
    }
    if (x->to.cap) {
        unsigned m = ab_req_host_hashes(q);
        for (unsigned j = 0; j < m; j++) {
            l = table_get(&x->to, x->ids, q->hs[j], &n, &one);
            if (l && (r = try_list(e, c, q, l, cand_of(x, l, &one), n, -1)))
                return r;
        }
    }
    return try_list(e, c, q, x->always, x->alwaysx, x->nalways, -1);
}

/* The first slot from s on whose tag is tag, or UINT32_MAX when an empty
 * one comes first: eight tags a step (a word's first zero byte, and its
 * first byte equal to tag, found by the usual carries; the lowest flagged
 * byte is always a true one), so that the common answer, an empty slot
 * among the first eight, costs no branch that depends on where. */
static inline uint32_t tag_scan(const struct ab_htable *t, uint32_t s, uint8_t tag)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    for (;;) {
        uint64_t w;
        memcpy(&w, t->tags + s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        uint64_t x = w ^ (ones * tag);
        uint64_t z = (w - ones) & ~w & highs, g = (x - ones) & ~x & highs;
        if (z | g) {
            if (!g || (z && __builtin_ctzll(z) < __builtin_ctzll(g)))
                return UINT32_MAX;
            uint32_t at = s + (uint32_t)(__builtin_ctzll(g) >> 3);
            while (at >= t->cap)
                at -= t->cap;
            return at;
        }
        s += 8;
        while (s >= t->cap)
            s -= t->cap;
    }
}

/* Plain host rules (engine_int.h, struct ab_htable): each label suffix of
 * the request's host is looked up; a value whose tag is the suffix's is
 * checked against the suffix's bytes (the hash only finds it) and, for a
 * third-party one, against the parties. In passes, so that the cache
 * misses of the suffixes overlap: every suffix's first tag, then the value
 * of its first slot with its tag, then the comparisons. */
static const struct ab_rule *find_hosts(const struct adblock_engine *e, struct adblock_ctx *c,
                                        struct ab_req *q)
{
    const char *host = q->url + q->host_off;
    size_t hn = q->host_len;
    const struct ab_htable *t = &e->hosts;
    uint32_t slot[AB_HOST_MAX];
    uint32_t m = ab_req_host_hashes(q);
    for (uint32_t j = 0; j < m; j++) {
        slot[j] = ab_host_slot(q->hs[j], t->cap);
        __builtin_prefetch(&t->tags[slot[j]]);
    }
    for (uint32_t j = 0; j < m; j++) {
        uint32_t s = tag_scan(t, slot[j], ab_host_tag(q->hs[j]));
        slot[j] = s;
        if (s != UINT32_MAX)
            __builtin_prefetch(&t->vals[s]);
    }
    for (uint32_t j = 0; j < m; j++) {
        if (slot[j] == UINT32_MAX)
            continue;
        uint8_t tag = ab_host_tag(q->hs[j]), g;
        size_t at = q->hs_at[j], len = hn - at;
        for (uint32_t s = slot[j]; (g = t->tags[s]) != 0; s = s + 1 == t->cap ? 0 : s + 1) {
            if (g != tag)
                continue;
            uint32_t v = t->vals[s];
            const char *txt = e->pool + (v & AB_H_OFF);
            size_t k = 0;
            while (k < len && txt[2 + k] &&
                   lower((unsigned char)txt[2 + k]) == (unsigned char)host[at + k])
                k++;
            if (k < len || txt[2 + len] != '^')
                continue; /* another host with the same hash */
            if ((v & AB_H_3P) && ab_req_party(e, q, false) != AB_F_3P)
                continue;
            c->host_hit.text = v & AB_H_OFF;
            return &c->host_hit;
        }
    }
    return NULL;
}

/* The page exception ($document) that covers the initiator page, or NULL.
 * It depends on the engine and the page alone, and a page's requests come
 * together, so the answers for recent pages are kept in the context. */
static const struct ab_rule *page_exception(const struct adblock_engine *e, struct adblock_ctx *c,
                                            const char *from, size_t n)
{
    struct ab_page_memo *m = c->last_page; /* a batch's items from one page */
    if (m && m->engine == e->id && m->len == n && memcmp(m->from, from, n) == 0)
        return m->rule == UINT32_MAX ? NULL : &e->rules[m->rule];
    uint32_t h = ab_memo_hash(from, n);
    m = &c->pages[h % AB_PAGE_MEMO];
    c->last_page = n <= sizeof m->from ? m : NULL;
    if (m->engine == e->id && m->hash == h && m->len == n && n <= sizeof m->from &&
        memcmp(m->from, from, n) == 0)
        return m->rule == UINT32_MAX ? NULL : &e->rules[m->rule];
    const struct ab_rule *exc = NULL;
    struct ab_req *p = &c->page;
    if (ab_req_init(p, from, n, ADBLOCK_TYPE_DOCUMENT, NULL, 0, -1) && p->supported)
        exc = find(e, c, p, &e->idx[AB_PAGE]);
    if (n <= sizeof m->from) {
        m->engine = e->id;
        m->hash = h;
        m->len = (uint32_t)n;
        memcpy(m->from, from, n);
        m->rule = exc ? (uint32_t)(exc - e->rules) : UINT32_MAX;
    }
    return exc;
}

static void say(struct adblock_verdict *v, const struct adblock_engine *e,
                const struct ab_rule *blk, const struct ab_rule *exc)
{
    v->block = blk != NULL && exc == NULL;
    v->rule = blk ? e->pool + blk->text : NULL;
    v->rule_len = blk ? strlen(v->rule) : 0;
    v->exception = exc ? e->pool + exc->text : NULL;
    v->exception_len = exc ? strlen(v->exception) : 0;
}

/* Why: the engines' order: an $important block is final; otherwise a block
 * stands unless an exception matches the request, or a page exception
 * ($document) matches the initiator page. Exceptions are only looked up for
 * a request some rule blocks, which most requests are not. */
int adblock_match(const struct adblock_engine *e, struct adblock_ctx *c,
                  const struct adblock_request *r, struct adblock_verdict *v, char *err,
                  size_t errlen)
{
    struct ab_req *q = &c->req;
    memset(v, 0, sizeof *v);
    if (!ab_req_init(q, r->url, r->url_len, r->type, r->from, r->from_len, r->method)) {
        if (err && errlen)
            snprintf(err, errlen, "URL longer than %d bytes", AB_URL_MAX);
        return -1;
    }
    if (!q->supported)
        return 0;
    const struct ab_rule *blk = find(e, c, q, &e->idx[AB_IMPORTANT]);
    if (blk) {
        say(v, e, blk, NULL);
        return 0;
    }
    blk = e->hosts.cap ? find_hosts(e, c, q) : NULL;
    if (blk == NULL)
        blk = find(e, c, q, &e->idx[AB_BLOCK]);
    if (blk == NULL)
        return 0;
    const struct ab_rule *exc = find(e, c, q, &e->idx[AB_EXCEPT]);
    const struct ab_index *pg = &e->idx[AB_PAGE];
    if (exc == NULL && r->from && r->from_len &&
        (pg->tok.cap || pg->dom.cap || pg->to.cap || pg->nalways))
        exc = page_exception(e, c, r->from, r->from_len);
    say(v, e, blk, exc);
    return 0;
}

struct adblock_ctx *adblock_ctx_new(void)
{
    struct adblock_ctx *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->md = pcre2_match_data_create(1, NULL);
    if (c->md == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

void adblock_ctx_free(struct adblock_ctx *c)
{
    if (c == NULL)
        return;
    pcre2_match_data_free(c->md);
    free(c);
}
