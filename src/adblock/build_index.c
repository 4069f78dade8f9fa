/* The builder's containers and the layout of one token table
 * (build_int.h). The builder's thread only. */
#include "config.h"

#include <stdlib.h>

#include "adblock/build_int.h"

bool ab_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (q == NULL)
        return false;
    *p = q;
    *cap = c;
    return true;
}

bool ab_pairs_add(struct pairs *p, uint32_t key, uint32_t rule)
{
    if (!ab_grow((void **)&p->v, &p->cap, p->n + 1, sizeof *p->v))
        return false;
    p->v[p->n++] = (uint64_t)key << 32 | rule;
    return true;
}

int ab_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t *ab_counts_at(struct counts *c, uint32_t key, bool add)
{
    if (add && (c->n + 1) * 2 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4096;
        uint32_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
        if (k == NULL || v == NULL) {
            free(k);
            free(v);
            return NULL;
        }
        for (size_t i = 0; i < c->cap; i++) {
            if (c->k[i] == 0)
                continue;
            size_t s = (c->k[i] * 2654435761u) & (cap - 1);
            while (k[s])
                s = (s + 1) & (cap - 1);
            k[s] = c->k[i];
            v[s] = c->v[i];
        }
        free(c->k);
        free(c->v);
        c->k = k;
        c->v = v;
        c->cap = cap;
    }
    if (c->cap == 0)
        return NULL;
    size_t s = (key * 2654435761u) & (c->cap - 1);
    while (c->k[s] && c->k[s] != key)
        s = (s + 1) & (c->cap - 1);
    if (c->k[s] == 0) {
        if (!add)
            return NULL;
        c->k[s] = key;
        c->n++;
    }
    return &c->v[s];
}

/* Lay out one table from its sorted pairs: slots at a load of about one
 * half (a URL's tokens mostly miss, and a miss stops at the first empty slot). */
bool ab_table_build(struct ab_table *t, struct pairs *p, uint32_t **ids, size_t *nids,
                    size_t *ids_cap)
{
    if (p->n == 0)
        return true;
    qsort(p->v, p->n, sizeof *p->v, ab_cmp_u64);
    size_t groups = 0;
    for (size_t i = 0; i < p->n; i++)
        if (i == 0 || (p->v[i] >> 32) != (p->v[i - 1] >> 32))
            groups++;
    t->cap = (uint32_t)(2 * groups + 1);
    t->slots = calloc(t->cap, sizeof *t->slots);
    uint64_t nbits = 64;
    while (nbits < groups * 16)
        nbits *= 2;
    t->bits = calloc(nbits / 64, sizeof *t->bits);
    t->bits_mask = (uint32_t)(nbits - 1);
    if (t->slots == NULL || t->bits == NULL)
        return false;
    for (size_t i = 0; i < p->n;) {
        uint32_t key = (uint32_t)(p->v[i] >> 32);
        size_t j = i;
        while (j < p->n && (uint32_t)(p->v[j] >> 32) == key)
            j++;
        uint32_t val;
        if (j - i == 1) {
            val = AB_ONE | (uint32_t)p->v[i];
        } else {
            if (!ab_grow((void **)ids, ids_cap, *nids + (j - i) + 1, sizeof **ids))
                return false;
            val = (uint32_t)*nids;
            (*ids)[(*nids)++] = (uint32_t)(j - i);
            for (size_t k = i; k < j; k++)
                (*ids)[(*nids)++] = (uint32_t)p->v[k];
        }
        uint32_t s = (uint32_t)(((uint64_t)(key * 2654435761u) * t->cap) >> 32);
        while (t->slots[s].key)
            s = s + 1 == t->cap ? 0 : s + 1;
        t->slots[s].key = key;
        t->slots[s].val = val;
        uint32_t bit = (key >> 7) & t->bits_mask;
        t->bits[bit >> 6] |= 1ull << (bit & 63);
        i = j;
    }
    return true;
}

/* At two thirds full: a host that is not in the table (most of a request's
 * label suffixes) reads about five tags before an empty one, in one or two
 * cache lines. */
bool ab_htable_build(struct ab_htable *t, struct pairs *p)
{
    if (p->n == 0)
        return true;
    qsort(p->v, p->n, sizeof *p->v, ab_cmp_u64);
    t->cap = (uint32_t)(p->n + p->n / 2 + 1);
    t->tags = calloc((size_t)t->cap + AB_HTAIL, 1);
    t->vals = calloc(t->cap, sizeof *t->vals);
    if (t->tags == NULL || t->vals == NULL)
        return false;
    for (size_t i = 0; i < p->n; i++) {
        uint32_t key = (uint32_t)(p->v[i] >> 32);
        uint32_t s = ab_host_slot(key, t->cap);
        while (t->tags[s])
            s = s + 1 == t->cap ? 0 : s + 1;
        t->tags[s] = ab_host_tag(key);
        t->vals[s] = (uint32_t)p->v[i];
    }
    for (uint32_t i = 0; i < AB_HTAIL; i++)
        t->tags[t->cap + i] = t->tags[i % t->cap];
    return true;
}
