#include "config.h"

#include "store/registry.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adblock/adblock.h"
#include "words/delta.h"
#include "words/words.h"
#include "base/util.h"
#include "exact/delta.h"
#include "store/allow.h"

static void state_free(struct registry *reg, struct fstate *st)
{
    if (!st)
        return;
    if (reg->on_state_release)
        reg->on_state_release(reg, st);
    pthread_mutex_destroy(&st->mu);
    pthread_mutex_destroy(&st->mut_mu);
    if (st->created)
        conf_filter_clear(st->created);
    free(st->created);
    free(st->created_base);
    free(st->name);
    free(st);
}

/* What a deferred publish left to free once readers have moved past epoch. */
struct retired {
    uint64_t epoch;
    struct catalog *cat;   /* the catalog replaced */
    bool conf_moved;       /* its conf went on to the next catalog: not freed here */
    struct fversion **v;   /* versions only it held */
    size_t n_v;
    struct fstate **st;    /* states of names it alone served */
    unsigned *ids;         /* and their ids, held until then */
    size_t n_st;
    struct retired *next;
};

static void retired_free(struct registry *reg, struct retired *r)
{
    for (size_t i = 0; i < r->n_v; i++)
        fversion_free(r->v[i]);
    for (size_t i = 0; i < r->n_st; i++) {
        state_free(reg, r->st[i]);
        reg->held[r->ids[i]] = false;
    }
    if (r->conf_moved)
        r->cat->conf = NULL;
    catalog_free(r->cat);
    free(r->v);
    free(r->st);
    free(r->ids);
    free(r);
}

struct registry *registry_create(unsigned n_readers)
{
    struct registry *reg = calloc(1, sizeof(*reg));
    if (!reg)
        return NULL;
    reg->n_readers = n_readers;
    if (n_readers && !(reg->readers = aligned_alloc(64, sizeof(*reg->readers) * n_readers))) {
        free(reg);
        return NULL;
    }
    for (unsigned i = 0; i < n_readers; i++)
        atomic_init(&reg->readers[i].seen, 0);
    atomic_init(&reg->epoch, 1);
    reg->retired_tail = &reg->retired;
    /* Readers never see NULL: until the first publish they see no filters. */
    struct catalog *empty = calloc(1, sizeof(*empty));
    if (!empty) {
        free(reg->readers);
        free(reg);
        return NULL;
    }
    atomic_init(&reg->current, empty);
    return reg;
}

void registry_free(struct registry *reg)
{
    if (!reg)
        return;
    /* No reader runs any more: every grace period is over. */
    while (reg->retired) {
        struct retired *r = reg->retired;
        reg->retired = r->next;
        retired_free(reg, r);
    }
    struct catalog *c = atomic_load(&reg->current);
    if (c)
        for (size_t i = 0; i < c->n; i++)
            fversion_free(c->entries[i].v);
    catalog_free(c);
    for (unsigned i = 0; i < REGISTRY_MAX_FILTERS; i++) {
        state_free(reg, reg->states[i]);
        reg->states[i] = NULL; /* the release hook looks at the states still here */
    }
    free(reg->readers);
    free(reg);
}

/* FNV-1a: names are short, and a request hashes one. */
static inline size_t name_hash(const char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

#define CATALOG_LINEAR 8 /* up to this many entries a walk beats hashing the name */

/* Writer, before publishing c: index its entries by name (a load factor of at
 * most a half). Out of memory leaves c unindexed: lookups walk it. */
static void catalog_index(struct catalog *c)
{
    free(c->index);
    c->index = NULL;
    if (c->n <= CATALOG_LINEAR)
        return;
    size_t slots = 16;
    while (slots < 2 * c->n)
        slots *= 2;
    if (!(c->index = calloc(slots, sizeof(*c->index))))
        return;
    c->index_mask = slots - 1;
    for (size_t i = 0; i < c->n; i++) {
        size_t h = name_hash(c->entries[i].name, c->entries[i].name_len) & c->index_mask;
        while (c->index[h])
            h = (h + 1) & c->index_mask;
        c->index[h] = (uint32_t)(i + 1);
    }
}

/* Any thread holding c: the entry called name, or NULL. */
const struct fentry *catalog_find(const struct catalog *c, const char *name, size_t len)
{
    if (c->index) {
        for (size_t h = name_hash(name, len) & c->index_mask; c->index[h];
             h = (h + 1) & c->index_mask) {
            const struct fentry *e = &c->entries[c->index[h] - 1];
            if (e->name_len == len && memcmp(e->name, name, len) == 0)
                return e;
        }
        return NULL;
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->entries[i].name_len == len && memcmp(c->entries[i].name, name, len) == 0)
            return &c->entries[i];
    return NULL;
}

void registry_offline(struct registry *reg, unsigned reader)
{
    atomic_store_explicit(&reg->readers[reader].seen, 0, memory_order_release);
}

/* The grace period: after the exchange, bump the epoch; a reader that reports
 * the new epoch (or is offline) can no longer hold the old catalog, because it
 * loads the catalog only inside a callback and reports only between them.
 * Workers report at least every 100 ms, so this waits about that long. */
void registry_synchronize(struct registry *reg)
{
    uint64_t e = atomic_fetch_add_explicit(&reg->epoch, 1, memory_order_acq_rel) + 1;
    for (unsigned i = 0; i < reg->n_readers; i++) {
        for (;;) {
            uint64_t s = atomic_load_explicit(&reg->readers[i].seen, memory_order_acquire);
            if (s == 0 || s >= e)
                break;
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Linear in the filters, not quadratic: with thousands of filters created
 * at run time every create is a publish. An id's version in next is noted
 * in pub_v (a name's versions never move to another id). */
void registry_publish(struct registry *reg, struct catalog *next)
{
    catalog_index(next);
    struct catalog *old = atomic_exchange_explicit(&reg->current, next, memory_order_acq_rel);
    registry_synchronize(reg);
    memset(reg->pub_v, 0, sizeof(reg->pub_v));
    for (size_t j = 0; j < next->n; j++)
        reg->pub_v[next->entries[j].id] = next->entries[j].v;
    /* Ids of names no longer served become free once the grace period is over. */
    for (unsigned id = 0; id < REGISTRY_MAX_FILTERS; id++) {
        if (reg->states[id] && !reg->pub_v[id]) {
            state_free(reg, reg->states[id]);
            reg->states[id] = NULL;
        }
    }
    if (old) {
        for (size_t i = 0; i < old->n; i++)
            if (reg->pub_v[old->entries[i].id] != old->entries[i].v)
                fversion_free(old->entries[i].v);
        /* A publish that changed only filters hands the config on. */
        if (old->conf == next->conf)
            old->conf = NULL;
        catalog_free(old);
    }
    registry_reclaim(reg); /* the grace just waited covers every earlier one */
}

/* Whether every online reader has been quiescent at epoch e or later. */
static bool grace_over(const struct registry *reg, uint64_t e)
{
    for (unsigned i = 0; i < reg->n_readers; i++) {
        uint64_t s = atomic_load_explicit(&reg->readers[i].seen, memory_order_acquire);
        if (s != 0 && s < e)
            return false;
    }
    return true;
}

void registry_publish_deferred(struct registry *reg, struct catalog *next)
{
    struct retired *r = calloc(1, sizeof(*r));
    struct catalog *cur = atomic_load(&reg->current);
    size_t n = cur ? cur->n : 0;
    if (r && n) {
        r->v = malloc(n * sizeof(*r->v));
        r->st = malloc(n * sizeof(*r->st));
        r->ids = malloc(n * sizeof(*r->ids));
    }
    if (!r || (n && (!r->v || !r->st || !r->ids))) {
        if (r) {
            free(r->v);
            free(r->st);
            free(r->ids);
            free(r);
        }
        registry_publish(reg, next); /* out of memory: the waiting way */
        return;
    }
    catalog_index(next);
    struct catalog *old = atomic_exchange_explicit(&reg->current, next, memory_order_acq_rel);
    r->epoch = atomic_fetch_add_explicit(&reg->epoch, 1, memory_order_acq_rel) + 1;
    r->cat = old;
    r->conf_moved = old && old->conf == next->conf;
    memset(reg->pub_v, 0, sizeof(reg->pub_v));
    for (size_t j = 0; j < next->n; j++)
        reg->pub_v[next->entries[j].id] = next->entries[j].v;
    for (size_t i = 0; old && i < old->n; i++) {
        const struct fentry *e = &old->entries[i];
        if (reg->pub_v[e->id] != e->v)
            r->v[r->n_v++] = e->v;
        if (!reg->pub_v[e->id] && reg->states[e->id] == e->st) {
            /* The name is gone: its id stays held (no new name counts under
             * it while a reader may still) until the state is freed. */
            r->st[r->n_st] = e->st;
            r->ids[r->n_st++] = e->id;
            reg->states[e->id] = NULL;
            reg->held[e->id] = true;
        }
    }
    *reg->retired_tail = r;
    reg->retired_tail = &r->next;
    registry_reclaim(reg);
}

void registry_reclaim(struct registry *reg)
{
    while (reg->retired && grace_over(reg, reg->retired->epoch)) {
        struct retired *r = reg->retired;
        if (!(reg->retired = r->next))
            reg->retired_tail = &reg->retired;
        retired_free(reg, r);
    }
}

int registry_filter_id(struct registry *reg, const char *name, bool *fresh)
{
    int free_id = -1;
    for (int id = 0; id < (int)REGISTRY_MAX_FILTERS; id++) {
        if (reg->states[id] && strcmp(reg->states[id]->name, name) == 0) {
            *fresh = false;
            return id;
        }
        if (!reg->states[id] && !reg->held[id] && free_id < 0)
            free_id = id;
    }
    if (free_id < 0)
        return -1;
    struct fstate *st = calloc(1, sizeof(*st));
    if (!st || !(st->name = strdup(name))) {
        free(st);
        return -1;
    }
    pthread_mutex_init(&st->mu, NULL);
    pthread_mutex_init(&st->mut_mu, NULL);
    reg->states[free_id] = st;
    *fresh = true;
    if (reg->on_fresh_id)
        reg->on_fresh_id(reg->on_fresh_ctx, (unsigned)free_id);
    return free_id;
}

void registry_release_id(struct registry *reg, unsigned id)
{
    if (id < REGISTRY_MAX_FILTERS && reg->states[id]) {
        state_free(reg, reg->states[id]);
        reg->states[id] = NULL;
    }
}

struct catalog *registry_catalog_copy(const struct catalog *cur, size_t extra)
{
    struct catalog *c = calloc(1, sizeof(*c));
    if (!c || !(c->entries = malloc((cur->n + extra + 1) * sizeof(*c->entries)))) {
        free(c);
        return NULL;
    }
    if (cur->n)
        memcpy(c->entries, cur->entries, cur->n * sizeof(*c->entries));
    c->n = cur->n;
    c->conf = cur->conf;
    return c;
}

struct fversion *fversion_new(struct filter *f, const char *file)
{
    struct fversion *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->f = f;
    if ((file && !(v->file = strdup(file))) || !(v->allow = allow_new())) {
        free(v->file);
        free(v);
        return NULL;
    }
    v->generation = 1;
    v->loaded_at = util_wall_seconds();
    return v;
}

void fversion_free(struct fversion *v)
{
    if (!v)
        return;
    filter_free(v->f);
    adblock_engine_free(v->ab);
    exact_delta_free(v->xd); /* before its table */
    exact_table_close(v->xt);
    words_delta_free(v->wd); /* before its list */
    words_matcher_free(v->words);
    allow_free(v->allow);
    free(v->allow_file);
    free(v->file);
    free(v);
}

double fversion_estimated_fpr(struct fversion *v)
{
    uint64_t bits = filter_bits_set(v->f) + 1;
    if (atomic_load_explicit(&v->est_bits, memory_order_acquire) == bits) {
        uint64_t raw = atomic_load_explicit(&v->est_fpr, memory_order_relaxed);
        double d;
        memcpy(&d, &raw, sizeof(d));
        return d;
    }
    double d = filter_estimated_fpr(v->f);
    uint64_t raw;
    memcpy(&raw, &d, sizeof(raw));
    /* Two threads may both compute and store: both values are right. */
    atomic_store_explicit(&v->est_fpr, raw, memory_order_relaxed);
    atomic_store_explicit(&v->est_bits, bits, memory_order_release);
    return d;
}

void catalog_free(struct catalog *c)
{
    if (!c)
        return;
    conf_free(c->conf);
    free(c->entries);
    free(c->index);
    free(c);
}
