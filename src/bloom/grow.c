/* The growing filter's sub-filters, see grow.h. */
#include "config.h"

#include "bloom/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 16 /* keys hashed and prefetched together in a batched check */
#define AHEAD 16       /* a batched add's ring: keys hashed and prefetched ahead of their add */
#define AHEAD_LINES 32 /* lines a batched add keeps in flight, over all sub-filters */

static const struct filter_comp_ops grow_ops;

/* Capacity C * 2^i, rate P * 2^-(i+1): the geometric series of grow.h. */
int grow_plan(enum filter_layout layout, uint64_t capacity, double fpr, unsigned i,
              struct filter_plan *out, char *err, size_t errlen)
{
    if (i >= GROW_MAX_SUBS || capacity > (FILTER_MAX_CAPACITY >> i)) {
        snprintf(err, errlen, "sub-filter %u would hold more than %llu items", i,
                 (unsigned long long)FILTER_MAX_CAPACITY);
        return -1;
    }
    double p = ldexp(fpr, -(int)(i + 1));
    if (p < FILTER_MIN_FPR) {
        snprintf(err, errlen, "sub-filter %u would need a rate of %g, below the least (%g)", i, p,
                 FILTER_MIN_FPR);
        return -1;
    }
    return filter_plan_make(layout, capacity << i, p, 0, out, err, errlen);
}

/* Whether sub-filter i's plan is kept. Under g->mu. */
static bool planned(const struct filter_grow *g, unsigned i)
{
    return g->ahead[i % GROW_AHEAD].made && g->ahead[i % GROW_AHEAD].i == i;
}

static void keep_plan(struct filter_grow *g, unsigned i, const struct filter_plan *p)
{
    g->ahead[i % GROW_AHEAD].i = i;
    g->ahead[i % GROW_AHEAD].plan = *p;
    g->ahead[i % GROW_AHEAD].made = true;
}

/* The plan of sub-filter i, kept for the next call. Under g->mu, or before
 * the filter is shared. */
static int plan_of(struct filter_grow *g, unsigned i, struct filter_plan *out, char *err,
                   size_t errlen)
{
    if (planned(g, i)) {
        *out = g->ahead[i % GROW_AHEAD].plan;
        return 0;
    }
    if (grow_plan(g->layout, g->capacity, g->fpr, i, out, err, errlen) != 0)
        return -1;
    keep_plan(g, i, out);
    return 0;
}

/* The plan is made without the lock (it is a pure function of the
 * filter's fixed figures) and stored under it. */
void grow_prepare(struct filter_grow *g)
{
    pthread_mutex_lock(&g->mu);
    unsigned m = atomic_load_explicit(&g->n, memory_order_relaxed);
    const struct filter *a = g->sub[m - 1];
    bool need = m < GROW_MAX_SUBS && !planned(g, m) && g->newest_items >= a->capacity / 2;
    pthread_mutex_unlock(&g->mu);
    if (!need)
        return;
    struct filter_plan p;
    char err[256];
    if (grow_plan(g->layout, g->capacity, g->fpr, m, &p, err, sizeof(err)) != 0)
        return; /* grow_admit says why when an add needs it */
    pthread_mutex_lock(&g->mu);
    keep_plan(g, m, &p);
    pthread_mutex_unlock(&g->mu);
}

/* Make sub-filter g->n and publish it (release: a check that reads the new
 * count sees the sub-filter whole). Under g->mu, or before the filter is
 * shared. */
static int grow_next(struct filter_grow *g, char *err, size_t errlen)
{
    unsigned m = atomic_load_explicit(&g->n, memory_order_relaxed);
    struct filter_plan plan;
    if (plan_of(g, m, &plan, err, errlen) != 0)
        return -1;
    struct filter *s = filter_create(&plan, g->seed, err, errlen);
    if (!s)
        return -1;
    g->sub[m] = s;
    g->fpr_expected[m] = plan.fpr_expected;
    g->newest_items = 0; /* filter_create's is empty */
    atomic_store_explicit(&g->n, m + 1, memory_order_release);
    return 0;
}

/* The settings of a new growing filter's state, and its lock. */
static void grow_init(struct filter_grow *g, enum filter_layout layout, uint64_t capacity,
                      double fpr, uint64_t seed, uint64_t max_bytes)
{
    g->layout = layout;
    g->capacity = capacity;
    g->fpr = fpr;
    g->seed = seed;
    atomic_init(&g->max_bytes, max_bytes);
    pthread_mutex_init(&g->mu, NULL);
}

struct filter *grow_filter_create(const struct filter_plan *first, double fpr, uint64_t seed,
                                  uint64_t max_bytes, char *err, size_t errlen)
{
    enum filter_layout layout = first->layout;
    uint64_t capacity = first->capacity;
    if (layout != FILTER_BLOCKED && layout != FILTER_CLASSIC) {
        snprintf(err, errlen, "growth is for the blocked and classic layouts, not %s",
                 filter_layout_name(layout));
        return NULL;
    }
    if (max_bytes && filter_plan_bytes(first) > max_bytes) {
        snprintf(err, errlen,
                 "max_memory %llu bytes is less than the first sub-filter takes (%llu bytes for "
                 "%llu items at %g)",
                 (unsigned long long)max_bytes, (unsigned long long)filter_plan_bytes(first),
                 (unsigned long long)capacity, first->fpr_target);
        return NULL;
    }
    struct filter_grow *g = calloc(1, sizeof(*g));
    struct filter *head = calloc(1, sizeof(*head));
    if (!g || !head) {
        free(g);
        free(head);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    grow_init(g, layout, capacity, fpr, seed, max_bytes);
    atomic_init(&g->n, 0);
    keep_plan(g, 0, first);
    if (grow_next(g, err, errlen) != 0) {
        grow_free(g);
        free(head);
        return NULL;
    }
    filter_comp_head(head, g->sub[0], capacity, fpr, g, &grow_ops);
    return head;
}

struct filter *grow_filter_adopt(enum filter_layout layout, uint64_t capacity, double fpr,
                                 uint64_t seed, uint64_t max_bytes, struct filter **subs,
                                 const struct filter_plan *plans, unsigned n, char *err,
                                 size_t errlen)
{
    struct filter_grow *g = n >= 1 && n <= GROW_MAX_SUBS ? calloc(1, sizeof(*g)) : NULL;
    struct filter *head = g ? calloc(1, sizeof(*head)) : NULL;
    if (!head) {
        snprintf(err, errlen, n < 1 || n > GROW_MAX_SUBS ? "%u sub-filters" : "out of memory", n);
        for (unsigned i = 0; i < n; i++)
            filter_free(subs[i]);
        free(g);
        return NULL;
    }
    grow_init(g, layout, capacity, fpr, seed, max_bytes);
    for (unsigned i = 0; i < n; i++) {
        g->sub[i] = subs[i];
        g->fpr_expected[i] = plans[i].fpr_expected;
    }
    g->newest_items = filter_items(subs[n - 1]);
    atomic_init(&g->n, n);
    filter_comp_head(head, g->sub[0], capacity, fpr, g, &grow_ops);
    return head;
}

void grow_free(struct filter_grow *g)
{
    if (!g)
        return;
    unsigned n = atomic_load(&g->n);
    for (unsigned i = 0; i < n; i++)
        filter_free(g->sub[i]);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

struct filter_grow *grow_of(const struct filter *head)
{
    return head && head->comp_ops == &grow_ops ? head->comp : NULL;
}

int grow_reseed(struct filter *head, uint64_t seed)
{
    struct filter_grow *g = grow_of(head);
    if (!g || grow_count(g) != 1 || filter_items(g->sub[0]) != 0)
        return -1;
    g->seed = seed;
    g->sub[0]->seed = seed;
    head->seed = seed;
    return 0;
}

static uint64_t bytes_of(struct filter_grow *g, unsigned m)
{
    uint64_t b = 0;
    for (unsigned i = 0; i < m; i++)
        b += filter_bytes(g->sub[i]);
    return b;
}

static uint64_t items_of(struct filter_grow *g, unsigned m)
{
    uint64_t s = 0;
    for (unsigned i = 0; i < m; i++)
        s += filter_items(g->sub[i]);
    return s;
}

/* The room the newest sub-filter has, then the sub-filters the n items
 * would need, each checked against max_bytes. Under g->mu. */
int grow_admit(struct filter_grow *g, size_t n, char *err, size_t errlen)
{
    pthread_mutex_lock(&g->mu);
    unsigned m = atomic_load_explicit(&g->n, memory_order_relaxed);
    const struct filter *a = g->sub[m - 1];
    uint64_t held = g->newest_items;
    uint64_t room = held < a->capacity ? a->capacity - held : 0;
    uint64_t max = atomic_load_explicit(&g->max_bytes, memory_order_relaxed);
    uint64_t used = bytes_of(g, m);
    int rc = 0;
    char why[256];
    for (unsigned i = m; room < n; i++) {
        struct filter_plan plan;
        if (plan_of(g, i, &plan, why, sizeof(why)) != 0) {
            snprintf(err, errlen,
                     "cannot grow further: %s; holds %llu items in %u sub-filters", why,
                     (unsigned long long)items_of(g, m), m);
            rc = -1;
            break;
        }
        uint64_t b = filter_plan_bytes(&plan);
        if (max && used + b > max) {
            snprintf(err, errlen,
                     "max_memory %llu bytes reached: holds %llu items in %u sub-filters of "
                     "%llu bytes, and %zu more could need sub-filter %u of %llu bytes",
                     (unsigned long long)max, (unsigned long long)items_of(g, m), m,
                     (unsigned long long)bytes_of(g, m), n, i, (unsigned long long)b);
            rc = -1;
            break;
        }
        used += b;
        room += plan.capacity;
    }
    pthread_mutex_unlock(&g->mu);
    return rc;
}

/* Whether any of sub[0..m) holds h; the newest (and largest) first, since
 * it holds the most items. */
static bool held_in(struct filter_grow *g, unsigned m, struct hash128 h)
{
    for (unsigned i = m; i-- > 0;)
        if (filter_check_hash(g->sub[i], h))
            return true;
    return false;
}

/* held_in for an item being added, most likely new (absent from every
 * sub-filter): filter_first_present's test settles an absent key on its
 * first few bits, where filter_check_hash computes all k of every
 * sub-filter. The same answer. Under g->mu. */
static bool held_in_adding(struct filter_grow *g, unsigned m, struct hash128 h)
{
    for (unsigned i = m; i-- > 0;)
        if (filter_first_present(g->sub[i], &h, 1) == 0)
            return true;
    return false;
}

/* One add under g->mu: nothing if a sub-filter holds the item already (it
 * must not fill the newest twice), else into the newest, made first when
 * the newest is full. A sub-filter that cannot be made (out of memory) is
 * not a lost add: the newest takes the item past its capacity. */
static bool add_locked(struct filter_grow *g, struct hash128 h)
{
    unsigned m = atomic_load_explicit(&g->n, memory_order_relaxed);
    if (held_in_adding(g, m, h))
        return false;
    struct filter *a = g->sub[m - 1];
    if (g->newest_items >= a->capacity) {
        char err[256];
        if (grow_next(g, err, sizeof(err)) == 0)
            a = g->sub[m];
    }
    if (!filter_add_hash(a, h))
        return false;
    g->newest_items++; /* a's items just grew by one: filter_add_hash said new */
    return true;
}

/* Prefetch the line h reads first in every sub-filter made: the newest for
 * writing (a new item is set there), the older for reading. Under g->mu. */
static inline void prefetch_subs(struct filter_grow *g, unsigned m, struct hash128 h)
{
    __builtin_prefetch(filter_first_line(g->sub[m - 1], h), 1, 0);
    for (unsigned j = 0; j + 1 < m; j++)
        __builtin_prefetch(filter_first_line(g->sub[j], h), 0, 0);
}

/* ---- what a head's filter_* calls reach (struct filter_comp_ops) ---- */

static bool ops_add_hash(void *c, struct hash128 h)
{
    struct filter_grow *g = c;
    pthread_mutex_lock(&g->mu);
    bool fresh = add_locked(g, h);
    pthread_mutex_unlock(&g->mu);
    return fresh;
}

/* The adding thread (journal replay, MADD): one add_locked per key in
 * order, since the order decides the boundaries, and each sees the adds
 * before it (a key repeated in the batch is held at its second add, a
 * sub-filter made mid-batch is probed for the keys after). A fresh key
 * tests every sub-filter, one miss each: the keys are hashed a few ahead
 * and their lines in every sub-filter prefetched, so the misses of the
 * sub-filters and of the next keys overlap. The distance keeps about
 * AHEAD_LINES lines in flight. The prefetches are hints only: a sub-filter
 * made mid-batch is probed all the same, its lines not prefetched. */
static void ops_add_batch(void *c, const struct filter *head, const struct filter_key *keys,
                          size_t n, bool *added)
{
    struct filter_grow *g = c;
    struct hash128 ring[AHEAD];
    pthread_mutex_lock(&g->mu);
    unsigned m = atomic_load_explicit(&g->n, memory_order_relaxed);
    size_t d = AHEAD_LINES / m;
    d = d < 2 ? 2 : d > AHEAD ? AHEAD : d;
    size_t ahead = n < d ? n : d;
    for (size_t i = 0; i < ahead; i++) {
        ring[i] = filter_hash(head, keys[i].data, keys[i].len);
        prefetch_subs(g, m, ring[i]);
    }
    for (size_t i = 0; i < n; i++) {
        struct hash128 h = ring[i % AHEAD];
        if (i + d < n) {
            m = atomic_load_explicit(&g->n, memory_order_relaxed);
            struct hash128 next = filter_hash(head, keys[i + d].data, keys[i + d].len);
            prefetch_subs(g, m, next);
            ring[(i + d) % AHEAD] = next;
        }
        bool fresh = add_locked(g, h);
        if (added)
            added[i] = fresh;
    }
    pthread_mutex_unlock(&g->mu);
}

/* Any thread, lock-free. */
static bool ops_check_hash(void *c, const struct filter *head, struct hash128 h)
{
    (void)head;
    struct filter_grow *g = c;
    return held_in(g, grow_count(g), h);
}

/* Any thread: CHUNK keys at a time are hashed and the line each reads
 * first in every sub-filter prefetched, then tested newest first, so the
 * misses of all the sub-filters overlap. One sub-filter: its own pipelined
 * batch (the head's seed is its seed). */
static void ops_check_batch(void *c, const struct filter *head, const struct filter_key *keys,
                            size_t n, bool *present)
{
    struct filter_grow *g = c;
    unsigned m = grow_count(g);
    if (m == 1) {
        filter_check_batch(g->sub[0], keys, n, present);
        return;
    }
    struct hash128 h[CHUNK];
    for (size_t base = 0; base < n; base += CHUNK) {
        size_t cn = n - base < CHUNK ? n - base : CHUNK;
        for (size_t i = 0; i < cn; i++) {
            h[i] = filter_hash(head, keys[base + i].data, keys[base + i].len);
            for (unsigned j = 0; j < m; j++)
                __builtin_prefetch(filter_first_line(g->sub[j], h[i]), 0, 0);
        }
        for (size_t i = 0; i < cn; i++)
            present[base + i] = held_in(g, m, h[i]);
    }
}

static uint64_t ops_items(void *c)
{
    struct filter_grow *g = c;
    return items_of(g, grow_count(g));
}

static uint64_t ops_bits_set(void *c)
{
    struct filter_grow *g = c;
    unsigned m = grow_count(g);
    uint64_t s = 0;
    for (unsigned i = 0; i < m; i++)
        s += filter_bits_set(g->sub[i]);
    return s;
}

static uint64_t ops_bytes(void *c)
{
    struct filter_grow *g = c;
    return bytes_of(g, grow_count(g));
}

/* Sub-filter i's estimated rate, from the cache while its bits are the
 * same. Any thread. */
static double sub_estimate(struct filter_grow *g, unsigned i)
{
    uint64_t bits = filter_bits_set(g->sub[i]) + 1;
    if (atomic_load_explicit(&g->est_bits[i], memory_order_acquire) == bits) {
        uint64_t raw = atomic_load_explicit(&g->est_fpr[i], memory_order_relaxed);
        double d;
        memcpy(&d, &raw, sizeof(d));
        return d;
    }
    double d = filter_estimated_fpr(g->sub[i]);
    uint64_t raw;
    memcpy(&raw, &d, sizeof(raw));
    atomic_store_explicit(&g->est_fpr[i], raw, memory_order_relaxed);
    atomic_store_explicit(&g->est_bits[i], bits, memory_order_release);
    return d;
}

/* A check is a false positive if any sub-filter's is. */
static double ops_estimated_fpr(void *c)
{
    struct filter_grow *g = c;
    unsigned m = grow_count(g);
    double none = 1.0;
    for (unsigned i = 0; i < m; i++)
        none *= 1.0 - sub_estimate(g, i);
    return 1.0 - none;
}

static void ops_free(void *c)
{
    grow_free(c);
}

static const struct filter_comp_ops grow_ops = {FILTER_COMP_OPS_EACH};

void grow_sub_info(struct filter_grow *g, unsigned i, struct grow_sub_info *out)
{
    const struct filter *s = g->sub[i];
    out->capacity = s->capacity;
    out->items = filter_items(s);
    out->bytes = filter_bytes(s);
    out->bits_set = filter_bits_set(s);
    out->fpr_target = s->fpr_target;
    out->fpr_estimated = sub_estimate(g, i);
    out->k = s->k;
}

double grow_fpr_bound(struct filter_grow *g)
{
    unsigned m = grow_count(g);
    double s = 0;
    for (unsigned i = 0; i < m; i++)
        s += g->sub[i]->fpr_target;
    return s;
}
