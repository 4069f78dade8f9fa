/* words/build: the builder's entries compiled into the matcher
 * (words_int.h): duplicates dropped, the alphabet, the trie in compact
 * arrays, the failure and output links. Builder thread. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words/list_int.h"

/* Entries by symbols, then exceptions first, then line order: equal entries
 * are adjacent and the one kept comes first. */
static int wb_cmp(const void *pa, const void *pb, void *ctx)
{
    const struct wl_ent *a = pa, *b = pb;
    const uint32_t *cps = ctx, *x = cps + a->cp_off, *y = cps + b->cp_off;
    uint32_t n = a->cp_len < b->cp_len ? a->cp_len : b->cp_len;
    for (uint32_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    if (a->cp_len != b->cp_len)
        return a->cp_len < b->cp_len ? -1 : 1;
    if ((a->flags & WP_EXC) != (b->flags & WP_EXC))
        return (a->flags & WP_EXC) ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void words_matcher_free(struct words_matcher *m)
{
    if (m == NULL)
        return;
    wn_free(&m->norm);
    words_fast_free(m);
    free(m->reach);
    free(m->skip);
    free(m->alpha);
    free(m->bmpsym);
    free(m->st);
    free(m->edges);
    free(m->first);
    free(m->esym);
    free(m->etgt);
    free(m->fail);
    free(m->dict);
    free(m->out);
    free(m->depth);
    free(m->root);
    free(m->pats);
    free(m->woff);
    free(m->wflags);
    free(m->wtext);
    free(m);
}

/* The parts a load derives rather than reads: the root's dense row and the
 * BMP symbol table (from the alphabet and the root's edges, checked by the
 * loader before), and the normalisation table. */
int words_matcher_finish(struct words_matcher *m, char *err, size_t errlen)
{
    m->root = calloc((size_t)m->nsym + 1, sizeof *m->root);
    m->bmpsym = calloc(0x10000, sizeof *m->bmpsym);
    if (m->root == NULL || m->bmpsym == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t e = m->st[0].first; e < m->st[1].first; e++)
        m->root[m->edges[e].sym] = m->edges[e].tgt;
    for (uint32_t i = 0; i < m->nsym; i++)
        if (m->alpha[i] < 0x10000)
            m->bmpsym[m->alpha[i]] = i + 1;
    if (wn_build_table(&m->norm, err, errlen) != 0)
        return -1;
    if (words_fast_init(m) != 0 || words_reach_init(m) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* Builder or loader thread, once the separate arrays are final (checked, for
 * a load): the scan reads only the packed records. */
int words_matcher_pack(struct words_matcher *m)
{
    m->st = malloc(((size_t)m->nstates + 1) * sizeof *m->st);
    m->edges = malloc((m->nedges ? m->nedges : 1) * sizeof *m->edges);
    if (m->st == NULL || m->edges == NULL)
        return -1;
    for (uint32_t s = 0; s < m->nstates; s++)
        m->st[s] = (struct words_state){m->first[s], m->fail[s], m->dict[s], m->out[s]};
    m->st[m->nstates] = (struct words_state){m->first[m->nstates], 0, 0, 0};
    for (uint32_t e = 0; e < m->nedges; e++)
        m->edges[e] = (struct words_edge){m->esym[e], m->etgt[e]};
    free(m->first), free(m->esym), free(m->etgt), free(m->fail), free(m->dict), free(m->out);
    m->first = m->esym = m->etgt = m->fail = m->dict = m->out = NULL;
    return 0;
}

static uint32_t *wb_alloc(size_t n, bool *ok)
{
    uint32_t *p = calloc(n ? n : 1, sizeof *p);
    if (p == NULL)
        *ok = false;
    return p;
}

/* The failure links, breadth first over the CSR trie: a state's link is
 * found from its parent's, as in Aho and Corasick's paper; dict links skip
 * the states without a pattern. */
static int wb_links(struct words_matcher *m)
{
    uint32_t *queue = malloc((size_t)m->nstates * sizeof *queue);
    if (queue == NULL)
        return -1;
    size_t qh = 0, qt = 0;
    for (uint32_t e = m->first[0]; e < m->first[1]; e++) {
        uint32_t v = m->etgt[e];
        m->fail[v] = 0;
        m->dict[v] = 0;
        queue[qt++] = v;
    }
    while (qh < qt) {
        uint32_t u = queue[qh++];
        for (uint32_t e = m->first[u]; e < m->first[u + 1]; e++) {
            uint32_t c = m->esym[e], v = m->etgt[e], f = m->fail[u], t = 0;
            for (;;) {
                if (f == 0) {
                    t = m->root[c];
                    break;
                }
                uint32_t a = m->first[f], b = m->first[f + 1];
                while (a < b && m->esym[a] < c)
                    a++;
                if (a < b && m->esym[a] == c) {
                    t = m->etgt[a];
                    break;
                }
                f = m->fail[f];
            }
            m->fail[v] = t;
            m->dict[v] = m->out[t] ? t : m->dict[t];
            queue[qt++] = v;
        }
    }
    free(queue);
    return 0;
}

/* Renumbers the states breadth first: the shallow states, where most of a
 * scan's steps land (a walk from the root rarely goes deep), come first and
 * together, so they stay in cache; as built (depth first) the root's
 * children were spread over the whole array. Edges stay sorted. */
static int wb_bfs(struct words_matcher *m)
{
    uint32_t ns = m->nstates, ne = m->nedges;
    uint32_t *order = malloc((size_t)ns * sizeof *order),
             *newid = malloc((size_t)ns * sizeof *newid);
    uint32_t *first = calloc((size_t)ns + 1, sizeof *first), *esym = malloc((ne ? ne : 1) * 4);
    uint32_t *etgt = malloc((ne ? ne : 1) * 4), *depth = malloc((size_t)ns * 4);
    uint32_t *out = malloc((size_t)ns * 4);
    if (!order || !newid || !first || !esym || !etgt || !depth || !out) {
        free(order), free(newid), free(first), free(esym), free(etgt), free(depth), free(out);
        return -1;
    }
    size_t qt = 0;
    order[qt++] = 0;
    newid[0] = 0;
    for (size_t qh = 0; qh < qt; qh++) /* a tree: each state is queued once */
        for (uint32_t e = m->first[order[qh]]; e < m->first[order[qh] + 1]; e++) {
            newid[m->etgt[e]] = (uint32_t)qt;
            order[qt++] = m->etgt[e];
        }
    uint32_t at = 0;
    for (uint32_t n = 0; n < ns; n++) {
        uint32_t o = order[n];
        first[n] = at;
        depth[n] = m->depth[o];
        out[n] = m->out[o];
        for (uint32_t e = m->first[o]; e < m->first[o + 1]; e++, at++) {
            esym[at] = m->esym[e];
            etgt[at] = newid[m->etgt[e]];
        }
    }
    first[ns] = at;
    free(m->first), free(m->esym), free(m->etgt), free(m->depth), free(m->out);
    m->first = first, m->esym = esym, m->etgt = etgt, m->depth = depth, m->out = out;
    free(order), free(newid);
    return 0;
}

/* Builder thread. The entries sorted by symbols make the trie in one pass:
 * each shares its prefix with the one before, and a state's children come
 * in symbol order, so a stable count sort by parent gives sorted edges. */
struct words_matcher *words_builder_compile(struct words_builder *b, char *err, size_t errlen)
{
    struct words_matcher *m = calloc(1, sizeof *m);
    struct wl_ent *ents = NULL;
    uint32_t *par = NULL, *kept = NULL;
    if (m == NULL)
        goto oom;
    m->opts = b->opts;
    m->skip = strdup(b->skip);
    if (m->skip == NULL)
        goto oom;
    m->opts.skip = m->skip;
    m->norm.nfkc = b->norm.nfkc;
    m->norm.zh = b->norm.zh;
    if (wn_parse_skip(&m->norm, m->skip, err, errlen) != 0)
        goto fail;
    if (b->norm.nt2s) {
        m->norm.t2s = malloc(b->norm.nt2s * 2 * sizeof *m->norm.t2s);
        if (m->norm.t2s == NULL)
            goto oom;
        memcpy(m->norm.t2s, b->norm.t2s, b->norm.nt2s * 2 * sizeof *m->norm.t2s);
        m->norm.nt2s = b->norm.nt2s;
    }
    size_t n = b->nents;
    ents = malloc((n ? n : 1) * sizeof *ents);
    kept = malloc((n ? n : 1) * sizeof *kept);
    if (ents == NULL || kept == NULL)
        goto oom;
    if (n)
        memcpy(ents, b->ents, n * sizeof *ents);
    qsort_r(ents, n, sizeof *ents, wb_cmp, b->cps); /* glibc's: builders on two threads */
    /* The summary's counts, over the entries kept. */
    struct words_summary *sum = &b->sum;
    sum->words = sum->phrases = sum->exceptions = sum->substrings = sum->duplicates = 0;
    size_t nk = 0, nsyms = 0;
    for (size_t i = 0; i < n; i++) {
        if (nk && ents[kept[nk - 1]].cp_len == ents[i].cp_len &&
            memcmp(b->cps + ents[kept[nk - 1]].cp_off, b->cps + ents[i].cp_off,
                   ents[i].cp_len * sizeof *b->cps) == 0) {
            sum->duplicates++;
            continue;
        }
        kept[nk++] = (uint32_t)i;
        nsyms += ents[i].cp_len;
        if (ents[i].flags & WP_EXC)
            sum->exceptions++;
        else
            sum->words++;
        sum->phrases += (ents[i].flags & WL_PHRASE) != 0;
        sum->substrings += (ents[i].flags & WL_SUBSTR) != 0;
    }
    /* The alphabet. */
    m->alpha = wb_alloc(nsyms, &(bool){true});
    if (m->alpha == NULL)
        goto oom;
    for (size_t k = 0, j = 0; k < nk; k++)
        for (uint32_t i = 0; i < ents[kept[k]].cp_len; i++)
            m->alpha[j++] = b->cps[ents[kept[k]].cp_off + i];
    qsort(m->alpha, nsyms, sizeof *m->alpha, u32_cmp);
    uint32_t na = 0;
    for (size_t i = 0; i < nsyms; i++)
        if (na == 0 || m->alpha[na - 1] != m->alpha[i])
            m->alpha[na++] = m->alpha[i];
    m->nsym = na;
    m->bmpsym = calloc(0x10000, sizeof *m->bmpsym);
    if (m->bmpsym == NULL)
        goto oom;
    for (uint32_t i = 0; i < na; i++)
        if (m->alpha[i] < 0x10000)
            m->bmpsym[m->alpha[i]] = i + 1;
    /* The trie: states in creation order, edges (parent, symbol, child). */
    bool ok = true;
    size_t maxst = nsyms + 1;
    par = wb_alloc(maxst, &ok);
    uint32_t *esym = wb_alloc(maxst, &ok), *etgt = wb_alloc(maxst, &ok);
    m->depth = wb_alloc(maxst, &ok);
    m->out = wb_alloc(maxst, &ok);
    m->npat = (uint32_t)nk;
    m->pats = calloc(nk ? nk : 1, sizeof *m->pats);
    m->esym = esym, m->etgt = etgt;
    if (!ok || m->pats == NULL)
        goto oom;
    uint32_t path[WORDS_MAX_SYMBOLS + 1];
    uint32_t ns = 1, ne = 0;
    path[0] = 0;
    const uint32_t *prev = NULL;
    uint32_t prevlen = 0;
    for (size_t k = 0; k < nk; k++) {
        const struct wl_ent *e = &ents[kept[k]];
        const uint32_t *s = b->cps + e->cp_off;
        uint32_t lcp = 0;
        while (lcp < prevlen && lcp < e->cp_len && prev[lcp] == s[lcp])
            lcp++;
        for (uint32_t d = lcp; d < e->cp_len; d++) {
            uint32_t v = ns++;
            par[ne] = path[d];
            esym[ne] = words_symbol(m, s[d]);
            etgt[ne++] = v;
            m->depth[v] = d + 1;
            path[d + 1] = v;
        }
        uint32_t st = path[e->cp_len];
        m->out[st] = (uint32_t)k + 1;
        m->pats[k].len = e->cp_len;
        m->pats[k].flags = e->flags & (WP_EXC | WP_START | WP_END);
        m->pats[k].word = (uint32_t)k;
        if (e->cp_len > m->maxlen)
            m->maxlen = e->cp_len;
        if ((e->flags & WP_EXC) && e->cp_len > m->maxexc)
            m->maxexc = e->cp_len;
        prev = s;
        prevlen = e->cp_len;
    }
    m->nstates = ns;
    m->nedges = ne;
    /* Edges grouped by parent (stable: parents' children stay sorted). */
    m->first = wb_alloc((size_t)ns + 1, &ok);
    uint32_t *s2 = wb_alloc(ne, &ok), *t2 = wb_alloc(ne, &ok);
    m->fail = wb_alloc(ns, &ok);
    m->dict = wb_alloc(ns, &ok);
    m->root = wb_alloc((size_t)na + 1, &ok);
    if (!ok) {
        free(s2), free(t2);
        goto oom;
    }
    for (uint32_t e = 0; e < ne; e++)
        m->first[par[e] + 1]++;
    for (uint32_t s = 0; s < ns; s++)
        m->first[s + 1] += m->first[s];
    uint32_t *fill = par; /* reused below as a cursor per parent: copy first */
    uint32_t *cur = malloc(((size_t)ns + 1) * sizeof *cur);
    if (cur == NULL) {
        free(s2), free(t2);
        goto oom;
    }
    memcpy(cur, m->first, ((size_t)ns + 1) * sizeof *cur);
    for (uint32_t e = 0; e < ne; e++) {
        uint32_t at = cur[fill[e]]++;
        s2[at] = esym[e];
        t2[at] = etgt[e];
    }
    free(cur);
    free(esym), free(etgt);
    m->esym = s2, m->etgt = t2;
    if (wb_bfs(m) != 0)
        goto oom;
    for (uint32_t e = m->first[0]; e < m->first[1]; e++)
        m->root[m->esym[e]] = m->etgt[e];
    if (wb_links(m) != 0 || words_matcher_pack(m) != 0)
        goto oom;
    /* The entries, in pattern order (sorted by symbols). */
    size_t tl = 0;
    for (size_t k = 0; k < nk; k++)
        tl += ents[kept[k]].text_len;
    m->nwords = (uint32_t)nk;
    m->woff = wb_alloc(nk + 1, &ok);
    m->wflags = wb_alloc(nk, &ok);
    m->wtext = malloc(tl ? tl : 1);
    if (!ok || m->wtext == NULL)
        goto oom;
    for (size_t k = 0, at = 0; k < nk; k++) {
        const struct wl_ent *e = &ents[kept[k]];
        memcpy(m->wtext + at, b->text + e->text_off, e->text_len);
        at += e->text_len;
        m->woff[k + 1] = (uint32_t)at;
        m->wflags[k] = e->flags & WP_EXC;
    }
    free(ents), free(kept), free(par);
    /* The builder's table was made from the same settings. */
    m->norm.bmp = malloc(0x10000 * sizeof *m->norm.bmp);
    if (m->norm.bmp == NULL) {
        snprintf(err, errlen, "out of memory");
        words_matcher_free(m);
        return NULL;
    }
    memcpy(m->norm.bmp, b->norm.bmp, 0x10000 * sizeof *m->norm.bmp);
    if (words_fast_init(m) != 0 || words_reach_init(m) != 0) {
        snprintf(err, errlen, "out of memory");
        words_matcher_free(m);
        return NULL;
    }
    return m;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    free(ents), free(kept), free(par);
    words_matcher_free(m);
    return NULL;
}

size_t words_count(const struct words_matcher *m)
{
    return m->nwords;
}

const char *words_word(const struct words_matcher *m, uint32_t id, size_t *len)
{
    if (id >= m->nwords) {
        *len = 0;
        return "";
    }
    *len = m->woff[id + 1] - m->woff[id];
    return m->wtext + m->woff[id];
}

bool words_is_exception(const struct words_matcher *m, uint32_t id)
{
    return id < m->nwords && (m->wflags[id] & WP_EXC);
}

const struct words_opts *words_matcher_opts(const struct words_matcher *m)
{
    return &m->opts;
}

/* What the matcher holds, its norm table included. */
size_t words_memory(const struct words_matcher *m)
{
    size_t w = (size_t)m->nsym * 2 + 1 + 0x10000 * 2 + (size_t)m->nedges * 2 +
               (size_t)m->nstates * 5 + 1 + (size_t)m->nwords * 2 + 1 + m->norm.nt2s * 2;
    return sizeof *m + 4 * w + (size_t)m->npat * sizeof *m->pats + m->woff[m->nwords] +
           m->norm.nranges * sizeof *m->norm.ranges +
           (m->fast.bloom ? ((size_t)8 << (64 - m->fast.bshift)) : 0) + (size_t)m->npat * 2;
}
