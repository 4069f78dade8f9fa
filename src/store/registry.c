#include "config.h"

#include "store/registry.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adblock/adblock.h"
#include "words/words.h"
#include "base/util.h"
#include "store/allow.h"

static void state_free(struct registry *reg, struct fstate *st)
{
    if (!st)
        return;
    if (reg->on_state_release)
        reg->on_state_release(reg, st);
    pthread_mutex_destroy(&st->mu);
    pthread_mutex_destroy(&st->mut_mu);
    free(st->name);
    free(st);
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

const struct fentry *catalog_find(const struct catalog *c, const char *name, size_t len)
{
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

void registry_publish(struct registry *reg, struct catalog *next)
{
    struct catalog *old = atomic_exchange_explicit(&reg->current, next, memory_order_acq_rel);
    registry_synchronize(reg);
    /* Ids of names no longer served become free once the grace period is over. */
    for (unsigned id = 0; id < REGISTRY_MAX_FILTERS; id++) {
        if (!reg->states[id])
            continue;
        bool used = false;
        for (size_t j = 0; j < next->n && !used; j++)
            used = next->entries[j].id == id;
        if (!used) {
            state_free(reg, reg->states[id]);
            reg->states[id] = NULL;
        }
    }
    if (!old)
        return;
    for (size_t i = 0; i < old->n; i++) {
        bool kept = false;
        for (size_t j = 0; j < next->n && !kept; j++)
            kept = next->entries[j].v == old->entries[i].v;
        if (!kept)
            fversion_free(old->entries[i].v);
    }
    catalog_free(old);
}

int registry_filter_id(struct registry *reg, const char *name, bool *fresh)
{
    int free_id = -1;
    for (int id = 0; id < (int)REGISTRY_MAX_FILTERS; id++) {
        if (reg->states[id] && strcmp(reg->states[id]->name, name) == 0) {
            *fresh = false;
            return id;
        }
        if (!reg->states[id] && free_id < 0)
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
    free(c);
}
