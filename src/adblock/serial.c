/* adblock/serial: the compiled engine as one block of bytes and back. The
 * block is a header of counts and byte offsets, then each flat array at an
 * 8-byte boundary, in the host's byte order (the filter file that carries it
 * will pin the order and add the checksum). Loading trusts nothing: every
 * count, offset and index is checked against the block before a lookup may
 * follow it. Builder or loader thread. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adblock/engine_int.h"

#define AB_MAGIC "BGADBLK1"
#define AB_VERSION 4u

struct ab_thdr {
    uint32_t cap, bits_mask;
    uint64_t slots, bits; /* byte offsets */
};

struct ab_hdr {
    char magic[8];
    uint32_t version, hdr_size;
    uint64_t total;
    struct adblock_summary sum;
    uint32_t nrules, nextras, ndoms, pool_len, nhosts, host_cap, nregexes, pad;
    uint64_t rules, extras, doms, pool, host_tags, host_vals;
    struct ab_thdr tok[AB_KINDS], dom[AB_KINDS], to[AB_KINDS];
    struct {
        uint64_t ids, always;
        uint32_t nids, nalways, entities, pad;
    } idx[AB_KINDS];
};

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Lay out (buf NULL: just size) one array; returns its offset. */
static uint64_t blob_put(char *buf, size_t *at, const void *p, size_t n)
{
    size_t off = *at;
    if (buf && n)
        memcpy(buf + off, p, n);
    *at = align8(off + n);
    return off;
}

static size_t bits_bytes(const struct ab_table *t)
{
    return t->cap ? ((size_t)t->bits_mask + 1) / 8 : 0;
}

static void put_table(char *buf, size_t *at, const struct ab_table *t, struct ab_thdr *h)
{
    h->cap = t->cap;
    h->bits_mask = t->bits_mask;
    h->slots = blob_put(buf, at, t->slots, (size_t)t->cap * sizeof *t->slots);
    h->bits = blob_put(buf, at, t->bits, bits_bytes(t));
}

static size_t layout(const struct adblock_engine *e, char *buf, struct ab_hdr *h)
{
    size_t at = align8(sizeof *h);
    h->rules = blob_put(buf, &at, e->rules, (size_t)e->nrules * sizeof *e->rules);
    h->extras = blob_put(buf, &at, e->extras, (size_t)e->nextras * sizeof *e->extras);
    h->doms = blob_put(buf, &at, e->doms, (size_t)e->ndoms * sizeof *e->doms);
    h->pool = blob_put(buf, &at, e->pool, e->pool_len);
    h->host_vals = blob_put(buf, &at, e->hosts.vals, (size_t)e->hosts.cap * 4);
    h->host_tags =
        blob_put(buf, &at, e->hosts.tags, e->hosts.cap ? (size_t)e->hosts.cap + AB_HTAIL : 0);
    for (int k = 0; k < AB_KINDS; k++) {
        const struct ab_index *x = &e->idx[k];
        put_table(buf, &at, &x->tok, &h->tok[k]);
        put_table(buf, &at, &x->dom, &h->dom[k]);
        put_table(buf, &at, &x->to, &h->to[k]);
        h->idx[k].ids = blob_put(buf, &at, x->ids, (size_t)x->nids * 4);
        h->idx[k].always = blob_put(buf, &at, x->always, (size_t)x->nalways * 4);
        h->idx[k].nids = x->nids;
        h->idx[k].nalways = x->nalways;
        h->idx[k].entities = x->entities;
    }
    return at;
}

int adblock_engine_serialize(const struct adblock_engine *e, void **out, size_t *len, char *err,
                             size_t errlen)
{
    struct ab_hdr h;
    memset(&h, 0, sizeof h);
    size_t total = layout(e, NULL, &h);
    char *buf = calloc(1, total);
    if (buf == NULL) {
        snprintf(err, errlen, "out of memory (%zu bytes)", total);
        return -1;
    }
    layout(e, buf, &h);
    memcpy(h.magic, AB_MAGIC, 8);
    h.version = AB_VERSION;
    h.hdr_size = sizeof h;
    h.total = total;
    h.sum = e->sum;
    h.nrules = e->nrules;
    h.nextras = e->nextras;
    h.ndoms = e->ndoms;
    h.pool_len = e->pool_len;
    h.nhosts = e->nhosts;
    h.host_cap = e->hosts.cap;
    h.nregexes = e->nregexes;
    memcpy(buf, &h, sizeof h);
    *out = buf;
    *len = total;
    return 0;
}

/* Is [off, off + n * size) inside a block of len bytes, at an 8-byte boundary? */
static bool span_ok(uint64_t off, uint64_t n, uint64_t size, size_t len)
{
    if (off % 8 || off > len || (size && n > (len - off) / size))
        return false;
    return true;
}

#define BAD(...)                                                                                   \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        return false;                                                                              \
    } while (0)

/* A table's slots, bitmap and values: every value is a rule id or a list in
 * ids[] whose every entry is. */
static bool table_ok(char *base, size_t len, const struct ab_thdr *h, struct ab_table *t,
                     const uint32_t *ids, uint32_t nids, const struct adblock_engine *e, char *err,
                     size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (h->cap == 0)
        return true;
    uint64_t nbits = (uint64_t)h->bits_mask + 1;
    if (nbits < 64 || (nbits & (nbits - 1)) || !span_ok(h->slots, h->cap, 8, len) ||
        !span_ok(h->bits, nbits / 64, 8, len))
        BAD("a table is out of the block");
    t->cap = h->cap;
    t->bits_mask = h->bits_mask;
    t->slots = (struct ab_slot *)(base + h->slots);
    t->bits = (uint64_t *)(base + h->bits);
    uint32_t empty = 0;
    for (uint32_t s = 0; s < t->cap; s++) {
        uint32_t k = t->slots[s].key, v = t->slots[s].val;
        if (k == 0) {
            empty++;
            continue;
        }
        uint32_t b = (k >> 7) & t->bits_mask;
        if (!(t->bits[b >> 6] & (1ull << (b & 63))))
            BAD("a key missing from its bitmap");
        uint32_t one = v & ~AB_ONE, n = 1;
        const uint32_t *l = &one;
        if (!(v & AB_ONE)) {
            if (v >= nids || ids[v] > nids - v - 1)
                BAD("a rule list out of the block");
            n = ids[v];
            l = ids + v + 1;
        }
        for (uint32_t i = 0; i < n; i++)
            if (l[i] >= e->nrules)
                BAD("a rule id out of range");
    }
    if (empty == 0)
        BAD("a table with no empty slot");
    return true;
}

/* The host table: every value of a slot in use is a host rule's text in
 * the pool, and a slot is empty (a probe stops). */
static bool htable_ok(char *base, size_t len, const struct ab_hdr *h, struct adblock_engine *e,
                      char *err, size_t errlen)
{
    struct ab_htable *t = &e->hosts;
    memset(t, 0, sizeof *t);
    if (h->host_cap == 0)
        return true;
    if (!span_ok(h->host_vals, h->host_cap, 4, len) ||
        !span_ok(h->host_tags, (uint64_t)h->host_cap + AB_HTAIL, 1, len))
        BAD("the host table is out of the block");
    t->cap = h->host_cap;
    t->tags = (uint8_t *)(base + h->host_tags);
    t->vals = (uint32_t *)(base + h->host_vals);
    uint32_t empty = 0;
    for (uint32_t s = 0; s < t->cap; s++) {
        if (t->tags[s] == 0) {
            empty++;
            continue;
        }
        uint32_t off = t->vals[s] & AB_H_OFF;
        if (off >= e->pool_len || e->pool_len - off < 4 || e->pool[off] != '|' ||
            e->pool[off + 1] != '|')
            BAD("a host rule out of the pool");
    }
    if (empty == 0)
        BAD("a table with no empty slot");
    for (uint32_t i = 0; i < AB_HTAIL; i++)
        if (t->tags[t->cap + i] != t->tags[i % t->cap])
            BAD("the host table's tail is not its head");
    return true;
}

static bool load_ok(struct adblock_engine *e, char *base, size_t len, char *err, size_t errlen)
{
    struct ab_hdr h;
    if (len < sizeof h)
        BAD("%zu bytes: shorter than the header", len);
    memcpy(&h, base, sizeof h);
    if (memcmp(h.magic, AB_MAGIC, 8) != 0)
        BAD("not a compiled Adblock engine (magic)");
    if (h.version != AB_VERSION || h.hdr_size != sizeof h)
        BAD("version %u, header %u bytes: this build reads version %u", h.version, h.hdr_size,
            AB_VERSION);
    if (h.total != len)
        BAD("the block says %llu bytes, has %zu", (unsigned long long)h.total, len);
    if (!span_ok(h.rules, h.nrules, sizeof(struct ab_rule), len) ||
        !span_ok(h.extras, h.nextras, sizeof(struct ab_extra), len) ||
        !span_ok(h.doms, h.ndoms, sizeof(struct ab_dom), len) ||
        !span_ok(h.pool, h.pool_len, 1, len))
        BAD("an array is out of the block");
    e->sum = h.sum;
    e->sum.first_reject[sizeof e->sum.first_reject - 1] = 0;
    e->rules = (struct ab_rule *)(base + h.rules);
    e->nrules = h.nrules;
    e->extras = (struct ab_extra *)(base + h.extras);
    e->nextras = h.nextras;
    e->doms = (struct ab_dom *)(base + h.doms);
    e->ndoms = h.ndoms;
    e->pool = base + h.pool;
    e->pool_len = h.pool_len;
    e->nhosts = h.nhosts;
    if (e->pool_len > AB_H_OFF || (e->pool_len > 0 && e->pool[e->pool_len - 1] != 0))
        BAD("the string pool is not NUL-terminated"); /* empty: a list of no rules */
    for (uint32_t i = 0; i < e->ndoms; i++)
        if (e->doms[i].str > e->pool_len || e->doms[i].len > e->pool_len - e->doms[i].str)
            BAD("domain entry %u out of the pool", i);
    uint32_t nre = 0;
    for (uint32_t i = 0; i < e->nextras; i++) {
        const struct ab_extra *x = &e->extras[i];
        if (x->dom > e->ndoms || x->ndom > e->ndoms - x->dom)
            BAD("extra %u: domain entries out of range", i);
        if (x->regex && x->regex != ++nre)
            BAD("extra %u: regexes out of order", i);
    }
    if (nre != h.nregexes)
        BAD("%u regexes, the header says %u", nre, h.nregexes);
    for (uint32_t i = 0; i < e->nrules; i++) {
        const struct ab_rule *r = &e->rules[i];
        if (r->text >= e->pool_len || r->pat_off > r->pat_end ||
            r->pat_end > e->pool_len - r->text - 1 || r->host_len > r->pat_end - r->pat_off ||
            memchr(e->pool + r->text, 0, r->pat_end) != NULL)
            BAD("rule %u: its text is out of the pool", i);
        if (r->tok_off != AB_NO_TOK &&
            (r->tok_off >= r->pat_end - r->pat_off || (r->flags & (AB_F_HOST | AB_F_REGEX))))
            BAD("rule %u: its token is out of its pattern", i);
        if (r->aux > e->nextras ||
            ((r->flags & AB_F_REGEX) && (!r->aux || !e->extras[r->aux - 1].regex)))
            BAD("rule %u: extra out of range", i);
    }
    if (!htable_ok(base, len, &h, e, err, errlen))
        return false;
    for (int k = 0; k < AB_KINDS; k++) {
        struct ab_index *x = &e->idx[k];
        if (!span_ok(h.idx[k].ids, h.idx[k].nids, 4, len) ||
            !span_ok(h.idx[k].always, h.idx[k].nalways, 4, len))
            BAD("an index is out of the block");
        x->ids = (uint32_t *)(base + h.idx[k].ids);
        x->nids = h.idx[k].nids;
        x->always = (uint32_t *)(base + h.idx[k].always);
        x->nalways = h.idx[k].nalways;
        x->entities = h.idx[k].entities;
        for (uint32_t i = 0; i < x->nalways; i++)
            if (x->always[i] >= e->nrules)
                BAD("a rule id out of range");
        if (!table_ok(base, len, &h.tok[k], &x->tok, x->ids, x->nids, e, err, errlen) ||
            !table_ok(base, len, &h.dom[k], &x->dom, x->ids, x->nids, e, err, errlen) ||
            !table_ok(base, len, &h.to[k], &x->to, x->ids, x->nids, e, err, errlen))
            return false;
    }
    return true;
}

/* Why: the loader's one copy of the block becomes the engine's arrays, and the
 * regexes are compiled again from their text (PCRE2's compiled form is not
 * portable between builds). */
struct adblock_engine *adblock_engine_load(const void *buf, size_t len, char *err, size_t errlen)
{
    struct adblock_engine *e = calloc(1, sizeof *e);
    char *base = malloc(len ? len : 1);
    if (e == NULL || base == NULL) {
        free(e);
        free(base);
        snprintf(err, errlen, "out of memory (%zu bytes)", len);
        return NULL;
    }
    memcpy(base, buf, len);
    e->blob = base;
    if (!load_ok(e, base, len, err, errlen)) {
        adblock_engine_free(e);
        return NULL;
    }
    uint32_t nre = 0;
    for (uint32_t i = 0; i < e->nextras; i++)
        nre += e->extras[i].regex != 0;
    e->regexes = calloc(nre ? nre : 1, sizeof *e->regexes);
    if (e->regexes == NULL) {
        snprintf(err, errlen, "out of memory");
        adblock_engine_free(e);
        return NULL;
    }
    for (uint32_t i = 0; i < e->nrules; i++) {
        const struct ab_rule *r = &e->rules[i];
        if (!(r->flags & AB_F_REGEX))
            continue;
        uint32_t k = e->extras[r->aux - 1].regex - 1;
        if (e->regexes[k] != NULL)
            continue;
        int ec;
        PCRE2_SIZE eo;
        pcre2_code *re = pcre2_compile(
            (PCRE2_SPTR)(e->pool + r->text + r->pat_off), (size_t)(r->pat_end - r->pat_off),
            (r->flags & AB_F_MATCH_CASE) ? 0 : PCRE2_CASELESS, &ec, &eo, NULL);
        if (re == NULL) {
            snprintf(err, errlen, "rule %u: its regex does not compile", i);
            e->nregexes = nre;
            adblock_engine_free(e);
            return NULL;
        }
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
        e->regexes[k] = re;
    }
    e->nregexes = nre;
    for (uint32_t k = 0; k < nre; k++)
        if (e->regexes[k] == NULL) {
            snprintf(err, errlen, "regex %u belongs to no rule", k);
            adblock_engine_free(e);
            return NULL;
        }
    ab_engine_ready(e);
    return e;
}
