/* adblock/engine: the builder. Lists go in line by line (rule.c parses each);
 * adblock_builder_finish cancels $badfilter twins, drops duplicates, files each
 * rule under its rarest token (or its initiator domains, or the short list
 * tested on every request) and lays everything out as flat arrays and one
 * string pool (engine_int.h). One thread builds; the result is read-only. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adblock/build_int.h"
#include "adblock/engine_int.h"
#include "adblock/rule.h"

/* A parsed rule waiting for finish: its text in the pool and where its parts
 * are. Small (32 bytes), since a host list may bring millions: the few rules
 * with domain lists keep them in the builder's bdoms[]. */
struct brule {
    uint32_t text;
    uint32_t hash; /* of the text: duplicates */
    uint32_t key;  /* of the pattern, any case: who may be a $badfilter twin */
    uint32_t dom;  /* its first entry in bdoms[] (ndom of them) */
    uint16_t len, pat_end, types, flags, methods;
    uint8_t pat_off, host_len, ndom;
    bool cancelled;
    bool host_rule; /* finish: goes to the host table */
};

/* One domain-list option of a parsed rule: its value's place in the text. */
struct bdom {
    uint8_t kind;
    uint16_t off, len;
};

struct adblock_builder {
    char *pool;
    size_t pool_len, pool_cap;
    struct brule *rules;
    size_t n, cap;
    struct bdom *bdoms;
    size_t nbdoms, bdoms_cap;
    char **bad;        /* adblock_rule_key of each $badfilter rule: the twins to cancel */
    uint32_t *bad_pat; /* the hash of each one's pattern (brule.key) */
    size_t nbad, bad_cap, bad_pat_cap;
    uint32_t *set; /* open addressing: 1 + rule index, by text hash */
    size_t set_cap;
    struct adblock_summary sum;
    bool failed;
    adblock_reject_fn on_reject; /* NULL: lines not served are only counted */
    void *on_reject_ctx;
};

struct adblock_builder *adblock_builder_new(void)
{
    return calloc(1, sizeof(struct adblock_builder));
}

void adblock_builder_free(struct adblock_builder *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->nbad; i++)
        free(b->bad[i]);
    free(b->bad);
    free(b->bad_pat);
    free(b->pool);
    free(b->rules);
    free(b->bdoms);
    free(b->set);
    free(b);
}

/* The index of a rule with the same text, or -1; inserts i when absent. */
static long dedup(struct adblock_builder *b, uint32_t h, const char *s, size_t n, size_t i)
{
    if (b->n * 2 + 2 > b->set_cap) {
        size_t cap = b->set_cap ? b->set_cap * 2 : 1024;
        uint32_t *set = calloc(cap, sizeof *set);
        if (set == NULL)
            return -2;
        for (size_t k = 0; k < b->set_cap; k++) {
            uint32_t v = b->set[k];
            if (v == 0)
                continue;
            size_t s2 = b->rules[v - 1].hash & (cap - 1);
            while (set[s2])
                s2 = (s2 + 1) & (cap - 1);
            set[s2] = v;
        }
        free(b->set);
        b->set = set;
        b->set_cap = cap;
    }
    size_t slot = h & (b->set_cap - 1);
    for (;; slot = (slot + 1) & (b->set_cap - 1)) {
        uint32_t v = b->set[slot];
        if (v == 0)
            break;
        const struct brule *o = &b->rules[v - 1];
        if (o->hash == h && o->len == n && memcmp(b->pool + o->text, s, n) == 0)
            return (long)(v - 1);
    }
    b->set[slot] = (uint32_t)i + 1;
    return -1;
}

/* A cheap first test for $badfilter twins (a twin has the same pattern, in any
 * case, and is an exception or not alike); adblock_rule_key decides. */
static uint32_t pattern_key(const struct adblock_rule *r)
{
    return ab_hash(r->line + r->pat_off, r->pat_end - r->pat_off) ^ (r->exception ? 1u : 0u);
}

/* Keep one parsed network rule: its text goes to the pool. */
static int keep(struct adblock_builder *b, const struct adblock_rule *r)
{
    if (r->badfilter) {
        if (!ab_grow((void **)&b->bad, &b->bad_cap, b->nbad + 1, sizeof *b->bad))
            return -1;
        if (!ab_grow((void **)&b->bad_pat, &b->bad_pat_cap, b->nbad + 1, sizeof *b->bad_pat))
            return -1;
        char *k = adblock_rule_key(r);
        if (k == NULL)
            return -1;
        b->bad_pat[b->nbad] = pattern_key(r);
        b->bad[b->nbad++] = k;
        b->sum.badfilter++;
        return 0;
    }
    if (r->pat_off > 255 || r->host_len > 255)
        return 0; /* cannot happen: the line parser bounds both */
    uint32_t h = ab_hash(r->line, r->len);
    uint32_t kh = pattern_key(r);
    long d = dedup(b, h, r->line, r->len, b->n);
    if (d == -2)
        return -1;
    if (d >= 0) {
        b->sum.duplicates++;
        return 0;
    }
    if (b->pool_len + r->len + 1 > UINT32_MAX)
        return -1;
    if (!ab_grow((void **)&b->pool, &b->pool_cap, b->pool_len + r->len + 1, 1) ||
        !ab_grow((void **)&b->rules, &b->cap, b->n + 1, sizeof *b->rules))
        return -1;
    struct brule *o = &b->rules[b->n++];
    memset(o, 0, sizeof *o);
    o->text = (uint32_t)b->pool_len;
    memcpy(b->pool + b->pool_len, r->line, r->len);
    b->pool[b->pool_len + r->len] = 0;
    b->pool_len += r->len + 1;
    o->hash = h;
    o->key = kh;
    o->len = (uint16_t)r->len;
    o->pat_off = (uint8_t)r->pat_off;
    o->pat_end = (uint16_t)r->pat_end;
    o->host_len = (uint8_t)r->host_len;
    o->types = r->types;
    o->methods = r->methods;
    uint16_t f = 0;
    f |= r->exception ? AB_F_EXCEPTION : 0;
    f |= r->important && !r->exception ? AB_F_IMPORTANT : 0;
    f |= r->match_case ? AB_F_MATCH_CASE : 0;
    f |= r->regex ? AB_F_REGEX : 0;
    f |= (r->anchor & ADBLOCK_ANCHOR_START) ? AB_F_START : 0;
    f |= (r->anchor & ADBLOCK_ANCHOR_HOST) ? AB_F_HOST : 0;
    f |= (r->anchor & ADBLOCK_ANCHOR_END) ? AB_F_END : 0;
    f |= (r->party & ADBLOCK_PARTY_FIRST) ? AB_F_1P : 0;
    f |= (r->party & ADBLOCK_PARTY_THIRD) ? AB_F_3P : 0;
    f |= (r->party & ADBLOCK_PARTY_STRICT) ? AB_F_STRICT : 0;
    f |= r->page ? AB_F_PAGE : 0;
    o->flags = f;
    o->ndom = (uint8_t)r->ndom;
    if (r->ndom &&
        (b->nbdoms + r->ndom > UINT32_MAX ||
         !ab_grow((void **)&b->bdoms, &b->bdoms_cap, b->nbdoms + r->ndom, sizeof *b->bdoms)))
        return -1;
    o->dom = (uint32_t)b->nbdoms;
    for (unsigned i = 0; i < r->ndom; i++)
        b->bdoms[b->nbdoms++] = (struct bdom){(uint8_t)r->dom[i].kind, (uint16_t)r->dom[i].off,
                                              (uint16_t)r->dom[i].len};
    return 0;
}

void adblock_builder_on_reject(struct adblock_builder *b, adblock_reject_fn fn, void *ctx)
{
    b->on_reject = fn;
    b->on_reject_ctx = ctx;
}

/* Tells on_reject of a line the engine will not serve (adblock.h says which),
 * the line as given, so that the caller can name it by its offset. Builder's
 * thread. */
static void tell_unserved(const struct adblock_builder *b, const struct adblock_rule *r,
                          const char *line, size_t n)
{
    const char *why = adblock_unserved_why(r->cls);
    if (b->on_reject == NULL || why == NULL)
        return;
    if (r->cls == ADBLOCK_CLASS_REJECTED)
        b->on_reject(b->on_reject_ctx, adblock_reject_name(r->reason), r->why, line, n);
    else
        b->on_reject(b->on_reject_ctx, adblock_class_name(r->cls), why, line, n);
}

int adblock_builder_add(struct adblock_builder *b, const char *text, size_t len, char *err,
                        size_t errlen)
{
    struct adblock_rule r;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        enum adblock_class c = adblock_rule_parse(text + i, end - i, &r);
        b->sum.lines++;
        b->sum.by_class[c]++;
        if (c == ADBLOCK_CLASS_REJECTED && b->sum.first_reject[0] == 0)
            snprintf(b->sum.first_reject, sizeof b->sum.first_reject, "%s: %.*s", r.why,
                     (int)(r.len > 100 ? 100 : r.len), r.line);
        tell_unserved(b, &r, text + i, end - i);
        if (c == ADBLOCK_CLASS_NETWORK && keep(b, &r) < 0) {
            b->failed = true;
            snprintf(err, errlen, "out of memory (or over 4 GiB of rules) at list line %llu",
                     (unsigned long long)b->sum.lines);
            return -1;
        }
        i = end + 1;
    }
    return 0;
}

/* ---- the finish: compile, index, lay out ---- */

#define MAX_TOK AB_TOKENS_RULE_MAX

static uint32_t entity_hash(const char *s, size_t n)
{
    return ab_hash_fix(ab_hash_back(s, n) ^ 0x5bd1e995u);
}

/* Compile rule i of the builder into the engine: its 16 bytes, its extra
 * (domain list entries, methods, regex). Returns -1 on failure. */
static int compile_rule(struct adblock_engine *e, const struct brule *b, const struct bdom *bd,
                        uint32_t i, size_t *xcap, size_t *dcap, size_t *rcap, char *err,
                        size_t errlen)
{
    struct ab_rule *r = &e->rules[i];
    r->text = b->text;
    r->pat_off = b->pat_off;
    r->pat_end = b->pat_end;
    r->host_len = b->host_len;
    r->types = b->types;
    r->flags = b->flags;
    r->aux = 0;
    r->tok_off = AB_NO_TOK;
    r->fp[0] = r->fp[1] = 0;
    if (memchr(e->pool + b->text + b->pat_off, '*', (size_t)(b->pat_end - b->pat_off)) == NULL)
        r->flags |= AB_F_NOSTAR;
    if (b->ndom == 0 && b->methods == 0 && !(b->flags & AB_F_REGEX))
        return 0;
    if (!ab_grow((void **)&e->extras, xcap, e->nextras + 1, sizeof *e->extras))
        goto oom;
    struct ab_extra *x = &e->extras[e->nextras++];
    memset(x, 0, sizeof *x);
    r->aux = e->nextras;
    x->methods = b->methods;
    x->dom = e->ndoms;
    const char *t = e->pool + b->text;
    for (unsigned k = 0; k < b->ndom; k++) {
        const struct bdom *d = &bd[b->dom + k];
        const char *v = t + d->off;
        size_t n = d->len;
        for (size_t a = 0; a <= n;) {
            size_t z = a;
            while (z < n && v[z] != '|')
                z++;
            size_t s = a, l = z - a;
            uint8_t f = (uint8_t)(d->kind << AB_D_KIND_SHIFT);
            if (l && v[s] == '~') {
                f |= AB_D_NEG;
                s++;
                l--;
            }
            if (l >= 2 && v[s + l - 1] == '*' && v[s + l - 2] == '.') {
                f |= AB_D_ENTITY;
                l -= 2;
            }
            if (l > 0 && l <= 255) {
                if (!ab_grow((void **)&e->doms, dcap, e->ndoms + 1, sizeof *e->doms))
                    goto oom;
                e->doms[e->ndoms++] =
                    (struct ab_dom){(uint32_t)(b->text + (v - t) + s), (uint8_t)l, f};
                x->ndom++;
            }
            a = z + 1;
        }
    }
    if (b->flags & AB_F_REGEX) {
        int ec;
        PCRE2_SIZE eo;
        pcre2_code *re =
            pcre2_compile((PCRE2_SPTR)(t + b->pat_off), b->pat_end - b->pat_off,
                          (b->flags & AB_F_MATCH_CASE) ? 0 : PCRE2_CASELESS, &ec, &eo, NULL);
        if (re == NULL) {
            snprintf(err, errlen, "regex no longer compiles: %s", t);
            return -1;
        }
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* without JIT it still matches */
        if (!ab_grow((void **)&e->regexes, rcap, e->nregexes + 1, sizeof *e->regexes)) {
            pcre2_code_free(re);
            goto oom;
        }
        e->regexes[e->nregexes++] = re;
        x->regex = e->nregexes;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory compiling the rules");
    return -1;
}

/* The rule's fingerprint (ab_rule.fp): the bits of its two rarest tokens
 * other than `filed` (the token its bucket is keyed by, 0: none). Every
 * token ab_pattern_tokens and ab_regex_tokens give is one a matching URL
 * holds whole, so a request lacking either bit cannot match. With fewer
 * tokens, a bit the request surely has: filed's, or both the same. */
static void set_fingerprint(struct ab_rule *r, const uint32_t *tk, unsigned n, struct counts *cnt,
                            uint32_t filed)
{
    uint32_t pick[2] = {0, 0}, pick_n[2] = {UINT32_MAX, UINT32_MAX};
    for (unsigned j = 0; j < n; j++) {
        if (tk[j] == filed || tk[j] == pick[0] || tk[j] == pick[1])
            continue;
        uint32_t c = *ab_counts_at(cnt, tk[j], false);
        if (c < pick_n[0]) {
            pick[1] = pick[0];
            pick_n[1] = pick_n[0];
            pick[0] = tk[j];
            pick_n[0] = c;
        } else if (c < pick_n[1]) {
            pick[1] = tk[j];
            pick_n[1] = c;
        }
    }
    uint32_t a = pick_n[0] != UINT32_MAX ? pick[0] : filed;
    uint32_t b = pick_n[1] != UINT32_MAX ? pick[1] : a;
    if (a == 0) {
        r->fp[0] = r->fp[1] = 0; /* no token: bit 0, which every request has */
        return;
    }
    r->fp[0] = (uint8_t)AB_FP_BIT(a);
    r->fp[1] = (uint8_t)AB_FP_BIT(b);
}

/* `||host^` or `||host^$third-party`, host without a dot at either end: a
 * rule the host table holds (engine_int.h). */
static bool is_plain_host(const char *t, const struct brule *r)
{
    if ((r->flags & ~(AB_F_1P | AB_F_3P)) != AB_F_HOST || !(r->flags & AB_F_3P) || r->ndom ||
        r->methods || r->types != ADBLOCK_TYPES_ALL || r->host_len == 0)
        return false;
    const char *h = t + 2;
    size_t n = r->host_len;
    if (r->pat_off != 2 || r->pat_end != 2 + n + 1 || h[n] != '^' || h[0] == '.' || h[n - 1] == '.')
        return false;
    return r->len == r->pat_end || (r->flags & AB_F_1P) == 0;
}

/* Is r the twin of a $badfilter rule? Asked only of rules whose key hash is a
 * $badfilter's: the line is parsed again for its key (few rules). */
static bool is_cancelled(const struct adblock_builder *b, const struct brule *r)
{
    struct adblock_rule pr;
    if (adblock_rule_parse(b->pool + r->text, r->len, &pr) != ADBLOCK_CLASS_NETWORK)
        return false;
    char *key = adblock_rule_key(&pr);
    bool hit = false;
    for (size_t i = 0; key != NULL && i < b->nbad && !hit; i++)
        hit = strcmp(b->bad[i], key) == 0;
    free(key);
    return hit;
}

/* Why: all the work a lookup would otherwise redo is done once here: twins
 * cancelled, each rule's rarest token chosen over every list, the tables laid
 * out. Builder thread only. */
struct adblock_engine *adblock_builder_finish(struct adblock_builder *b, char *err, size_t errlen)
{
    if (b->failed) {
        snprintf(err, errlen, "the lists could not be read");
        return NULL;
    }
    struct adblock_engine *e = calloc(1, sizeof *e);
    struct pairs tp[AB_KINDS], dp[AB_KINDS], op[AB_KINDS];
    struct counts cnt = {0};
    struct pairs hp = {0};
    uint32_t *toks = NULL;
    uint16_t *offs = NULL;
    uint8_t *ntoks = NULL;
    size_t always_cap[AB_KINDS] = {0}, ids_cap[AB_KINDS] = {0};
    size_t xcap = 0, dcap = 0, rcap = 0;
    memset(tp, 0, sizeof tp);
    memset(dp, 0, sizeof dp);
    memset(op, 0, sizeof op);
    if (e == NULL)
        goto oom;
    e->sum = b->sum;
    /* $badfilter: a hash set of the twins would be faster; there are few */
    struct adblock_builder *bb = b;
    if (b->nbad) {
        struct counts badset = {0};
        for (size_t i = 0; i < b->nbad; i++) {
            uint32_t *v = ab_counts_at(&badset, b->bad_pat[i], true);
            if (v == NULL)
                goto oom;
            *v = 1;
        }
        for (size_t i = 0; i < b->n; i++)
            if (ab_counts_at(&badset, b->rules[i].key, false) && is_cancelled(bb, &b->rules[i])) {
                b->rules[i].cancelled = true;
                e->sum.cancelled++;
            }
        free(badset.k);
        free(badset.v);
    }
    e->pool = b->pool; /* the pool moves over as it is */
    e->pool_len = (uint32_t)b->pool_len;
    b->pool = NULL;
    /* first how many go to the host table and how many need a rule, so that
     * every array is allocated once at its size (a host list may be millions) */
    size_t nhost = 0, nrule = 0;
    for (size_t i = 0; i < b->n; i++) {
        struct brule *r = &b->rules[i];
        if (r->cancelled)
            continue;
        r->host_rule = is_plain_host(e->pool + r->text, r) && e->pool_len <= AB_H_OFF;
        nhost += r->host_rule;
        nrule += !r->host_rule;
    }
    nrule = nrule ? nrule : 1;
    e->rules = calloc(nrule, sizeof *e->rules);
    toks = malloc(nrule * MAX_TOK * sizeof *toks);
    offs = malloc(nrule * MAX_TOK * sizeof *offs);
    ntoks = calloc(nrule, 1);
    if (nhost) {
        hp.v = malloc(nhost * sizeof *hp.v);
        hp.cap = hp.v ? nhost : 0;
    }
    if (e->rules == NULL || toks == NULL || offs == NULL || ntoks == NULL || (nhost && !hp.v))
        goto oom;
    uint32_t *map = calloc(nrule, sizeof *map); /* engine rule id of builder rule */
    if (map == NULL)
        goto oom;
    for (size_t i = 0; i < b->n; i++) {
        const struct brule *r = &b->rules[i];
        if (r->cancelled)
            continue;
        if (r->host_rule) {
            const char *h = e->pool + r->text + 2;
            uint32_t v = r->text | ((r->flags & AB_F_1P) ? 0 : AB_H_3P);
            if (!ab_pairs_add(&hp, ab_hash_back(h, r->host_len), v))
                goto oom;
            e->sum.blocks++;
            e->nhosts++;
            continue;
        }
        uint32_t id = e->nrules++;
        map[id] = (uint32_t)i;
        if (compile_rule(e, r, b->bdoms, id, &xcap, &dcap, &rcap, err, errlen) < 0) {
            free(map);
            goto fail;
        }
        const char *t = e->pool + r->text;
        uint32_t *tk = toks + (size_t)id * MAX_TOK;
        unsigned k =
            (r->flags & AB_F_REGEX)
                ? ab_regex_tokens(t + r->pat_off, (size_t)(r->pat_end - r->pat_off), tk)
                : ab_pattern_tokens(t + r->pat_off, (size_t)(r->pat_end - r->pat_off), r->flags,
                                    r->host_len, tk, offs + (size_t)id * MAX_TOK);
        ntoks[id] = (uint8_t)k;
        for (unsigned j = 0; j < k; j++) {
            uint32_t *c = ab_counts_at(&cnt, tk[j], true);
            if (c == NULL) {
                free(map);
                goto oom;
            }
            (*c)++;
        }
        if (r->flags & AB_F_EXCEPTION)
            e->sum.exceptions++;
        else
            e->sum.blocks++;
        e->sum.important += (r->flags & AB_F_IMPORTANT) != 0;
        e->sum.regex += (r->flags & AB_F_REGEX) != 0;
        e->sum.page_exceptions += (r->flags & AB_F_PAGE) != 0;
    }
    for (size_t i = 0; ab_common_tokens[i] != NULL; i++) {
        uint32_t *c =
            ab_counts_at(&cnt, ab_hash(ab_common_tokens[i], strlen(ab_common_tokens[i])), false);
        if (c)
            *c += 1000000;
    }
    for (uint32_t id = 0; id < e->nrules; id++) {
        const struct brule *r = &b->rules[map[id]];
        const struct ab_rule *cr = &e->rules[id];
        int kinds[2], nk = 0;
        if (cr->flags & AB_F_EXCEPTION) {
            kinds[nk++] = AB_EXCEPT;
            if (cr->flags & AB_F_PAGE)
                kinds[nk++] = AB_PAGE;
        } else {
            kinds[nk++] = (cr->flags & AB_F_IMPORTANT) ? AB_IMPORTANT : AB_BLOCK;
        }
        uint32_t best = 0, best_n = UINT32_MAX;
        uint16_t best_off = AB_NO_TOK;
        const uint32_t *tk = toks + (size_t)id * MAX_TOK;
        for (unsigned j = 0; j < ntoks[id]; j++) {
            uint32_t c = *ab_counts_at(&cnt, tk[j], false);
            if (c < best_n) {
                best_n = c;
                best = tk[j];
                best_off = offs[(size_t)id * MAX_TOK + j];
            }
        }
        /* Where to file it, best first: a token few rules and few URLs carry;
         * each initiator domain it names (positive ones); each of its few
         * types; a common token; else the list tested on every request. */
        const struct ab_extra *x = cr->aux ? &e->extras[cr->aux - 1] : NULL;
        bool typed = cr->types != ADBLOCK_TYPES_ALL && __builtin_popcount(cr->types) <= 4;
        bool by_dom = false;
        if (x && x->ndom) {
            for (uint32_t d = 0; d < x->ndom; d++) {
                const struct ab_dom *dm = &e->doms[x->dom + d];
                if ((dm->flags >> AB_D_KIND_SHIFT) == ADBLOCK_DOM_FROM && !(dm->flags & AB_D_NEG))
                    by_dom = true;
            }
        }
        /* by the request's host: positive `to=` entries, none an entity */
        bool by_to = false;
        if (x && x->ndom) {
            unsigned pos = 0, ent = 0;
            for (uint32_t d = 0; d < x->ndom; d++) {
                const struct ab_dom *dm = &e->doms[x->dom + d];
                if ((dm->flags >> AB_D_KIND_SHIFT) == ADBLOCK_DOM_TO && !(dm->flags & AB_D_NEG)) {
                    pos++;
                    ent += (dm->flags & AB_D_ENTITY) != 0;
                }
            }
            by_to = pos > 0 && ent == 0;
        }
        if (best_n < 1000000 || (best_n != UINT32_MAX && !by_dom && !by_to && !typed)) {
            by_dom = by_to = typed = false;
        } else {
            best_n = UINT32_MAX;
            if (by_dom)
                by_to = typed = false;
            else if (by_to)
                typed = false;
        }
        if (best_n != UINT32_MAX && !(cr->flags & (AB_F_REGEX | AB_F_HOST)))
            e->rules[id].tok_off = best_off; /* the matcher tests it where the URL has it */
        set_fingerprint(&e->rules[id], tk, ntoks[id], &cnt, best_n != UINT32_MAX ? best : 0);
        for (int k = 0; k < nk; k++) {
            bool ok = true;
            if (best_n != UINT32_MAX) {
                ok = ab_pairs_add(&tp[kinds[k]], best, id);
            } else if (by_dom) {
                for (uint32_t d = 0; d < x->ndom && ok; d++) {
                    const struct ab_dom *dm = &e->doms[x->dom + d];
                    if ((dm->flags >> AB_D_KIND_SHIFT) != ADBLOCK_DOM_FROM ||
                        (dm->flags & AB_D_NEG))
                        continue;
                    const char *s = e->pool + dm->str;
                    uint32_t h = (dm->flags & AB_D_ENTITY) ? entity_hash(s, dm->len)
                                                           : ab_hash_back(s, dm->len);
                    ok = ab_pairs_add(&dp[kinds[k]], h, id);
                    e->idx[kinds[k]].entities += (dm->flags & AB_D_ENTITY) != 0;
                }
            } else if (by_to) {
                for (uint32_t d = 0; d < x->ndom && ok; d++) {
                    const struct ab_dom *dm = &e->doms[x->dom + d];
                    if ((dm->flags >> AB_D_KIND_SHIFT) != ADBLOCK_DOM_TO || (dm->flags & AB_D_NEG))
                        continue;
                    ok = ab_pairs_add(&op[kinds[k]], ab_hash_back(e->pool + dm->str, dm->len), id);
                }
            } else if (typed) {
                for (unsigned t = 0; t < ADBLOCK_TYPE_COUNT && ok; t++)
                    if (cr->types & (1u << t))
                        ok = ab_pairs_add(&tp[kinds[k]], ab_type_token(t), id);
            } else {
                struct ab_index *ix = &e->idx[kinds[k]];
                ok = ab_grow((void **)&ix->always, &always_cap[kinds[k]], ix->nalways + 1,
                             sizeof *ix->always);
                if (ok)
                    ix->always[ix->nalways++] = id;
                e->sum.unindexed++;
            }
            if (!ok) {
                free(map);
                goto oom;
            }
        }
        (void)r;
    }
    free(map);
    if (!ab_htable_build(&e->hosts, &hp))
        goto oom;
    free(hp.v);
    hp.v = NULL;
    for (int k = 0; k < AB_KINDS; k++) {
        struct ab_index *ix = &e->idx[k];
        size_t nids = 0;
        if (!ab_table_build(&ix->tok, &tp[k], &ix->ids, &nids, &ids_cap[k]) ||
            !ab_table_build(&ix->dom, &dp[k], &ix->ids, &nids, &ids_cap[k]) ||
            !ab_table_build(&ix->to, &op[k], &ix->ids, &nids, &ids_cap[k]))
            goto oom;
        ix->nids = (uint32_t)nids;
        free(tp[k].v);
        free(dp[k].v);
        free(op[k].v);
        tp[k].v = dp[k].v = op[k].v = NULL;
    }
    free(cnt.k);
    free(cnt.v);
    free(toks);
    free(offs);
    free(ntoks);
    ab_engine_ready(e);
    return e;
oom:
    snprintf(err, errlen, "out of memory compiling the rules");
fail:
    free(hp.v);
    for (int k = 0; k < AB_KINDS; k++) {
        free(tp[k].v);
        free(dp[k].v);
        free(op[k].v);
    }
    free(cnt.k);
    free(cnt.v);
    free(toks);
    free(offs);
    free(ntoks);
    adblock_engine_free(e);
    return NULL;
}

/* A fresh engine id: per-thread memos (libpsl's answers, page exceptions)
 * are keyed by it, so an engine built or loaded later is never served
 * another's. Any thread. */
static uint64_t ab_engine_id(void)
{
    static _Atomic uint64_t next = 1;
    return next++;
}

/* The candidates' types and fingerprints beside the ids of the buckets of
 * table t (struct ab_index.idsx): a count at ids[v], then its rule ids. */
static void cand_fill(const struct adblock_engine *e, const struct ab_table *t, const uint32_t *ids,
                      uint32_t *idsx)
{
    for (uint32_t s = 0; s < t->cap; s++) {
        uint32_t v = t->slots[s].val;
        if (t->slots[s].key == 0 || (v & AB_ONE))
            continue;
        for (uint32_t i = 0; i < ids[v]; i++)
            idsx[v + 1 + i] = AB_CAND(&e->rules[ids[v + 1 + i]]);
    }
}

void ab_engine_ready(struct adblock_engine *e)
{
    for (int k = 0; k < AB_KINDS; k++) {
        struct ab_index *x = &e->idx[k];
        struct ab_table *t = &x->tok;
        memset(t->fp, 0, sizeof t->fp);
        for (uint32_t s = 0; s < t->cap; s++) {
            uint32_t h = t->slots[s].key;
            if (h != 0)
                t->fp[AB_FP_BIT(h) >> 6] |= 1ull << (AB_FP_BIT(h) & 63);
        }
        /* an entry no bucket reaches keeps AB_CAND_ANY: its rule is read */
        x->idsx = x->nids ? malloc((size_t)x->nids * sizeof *x->idsx) : NULL;
        x->alwaysx = x->nalways ? malloc((size_t)x->nalways * sizeof *x->alwaysx) : NULL;
        if (x->idsx) {
            for (uint32_t i = 0; i < x->nids; i++)
                x->idsx[i] = AB_CAND_ANY;
            cand_fill(e, &x->tok, x->ids, x->idsx);
            cand_fill(e, &x->dom, x->ids, x->idsx);
            cand_fill(e, &x->to, x->ids, x->idsx);
        }
        for (uint32_t i = 0; x->alwaysx && i < x->nalways; i++)
            x->alwaysx[i] = AB_CAND(&e->rules[x->always[i]]);
    }
    e->psl = psl_latest(NULL);
    e->psl_owned = e->psl != NULL;
    if (e->psl == NULL)
        e->psl = psl_builtin();
    e->id = ab_engine_id();
}

void adblock_engine_free(struct adblock_engine *e)
{
    if (e == NULL)
        return;
    for (uint32_t i = 0; i < e->nregexes; i++)
        pcre2_code_free(e->regexes[i]);
    free(e->regexes);
    if (e->psl_owned)
        psl_free((psl_ctx_t *)e->psl);
    for (int k = 0; k < AB_KINDS; k++) {
        free(e->idx[k].idsx);
        free(e->idx[k].alwaysx);
    }
    if (e->blob) {
        free(e->blob);
        free(e);
        return;
    }
    for (int k = 0; k < AB_KINDS; k++) {
        free(e->idx[k].tok.slots);
        free(e->idx[k].tok.bits);
        free(e->idx[k].dom.slots);
        free(e->idx[k].dom.bits);
        free(e->idx[k].to.slots);
        free(e->idx[k].to.bits);
        free(e->idx[k].ids);
        free(e->idx[k].always);
    }
    free(e->hosts.tags);
    free(e->hosts.vals);
    free(e->rules);
    free(e->extras);
    free(e->doms);
    free(e->pool);
    free(e);
}

const struct adblock_summary *adblock_engine_summary(const struct adblock_engine *e)
{
    return &e->sum;
}

size_t adblock_engine_size(const struct adblock_engine *e)
{
    size_t s = (size_t)e->nrules * sizeof *e->rules + (size_t)e->nextras * sizeof *e->extras +
               (size_t)e->ndoms * sizeof *e->doms + e->pool_len;
    s += e->hosts.cap ? (size_t)e->hosts.cap * 5 + AB_HTAIL : 0;
    for (int k = 0; k < AB_KINDS; k++) {
        const struct ab_index *x = &e->idx[k];
        s += ((size_t)x->tok.cap + x->dom.cap) * 8 + ((size_t)x->nids + x->nalways) * 4;
        s += x->tok.cap ? ((size_t)x->tok.bits_mask + 1) / 8 : 0;
        s += x->dom.cap ? ((size_t)x->dom.bits_mask + 1) / 8 : 0;
        s += (size_t)x->to.cap * 8 + (x->to.cap ? ((size_t)x->to.bits_mask + 1) / 8 : 0);
    }
    for (uint32_t i = 0; i < e->nregexes; i++) {
        size_t sz = 0;
        pcre2_pattern_info(e->regexes[i], PCRE2_INFO_SIZE, &sz);
        s += sz;
    }
    return s;
}
