/* The reload thread's once-a-second tick (see housekeep.h). It reads the
 * catalog as its single writer does, so a version it touches cannot be freed
 * under it. */
#include "config.h"

#include "store/housekeep.h"

#include <stdatomic.h>

#include "base/clock.h"
#include "base/log.h"
#include "bloom/grow.h"
#include "bloom/ring.h"
#include "store/allow.h"
#include "store/journal.h"
#include "words/delta.h"

/* The allow tables workers have outgrown: detached from every served
 * version, freed after one grace period (no worker can still be probing
 * one). Costs nothing when none grew. */
static void reclaim_allow_tables(struct registry *reg)
{
    const struct catalog *c = registry_read(reg);
    struct allow_table *all = NULL;
    for (size_t i = 0; i < c->n; i++) {
        struct allow_table *t = allow_take_retired(c->entries[i].v->allow);
        while (t) {
            struct allow_table *next = t->next_retired;
            t->next_retired = all;
            all = t;
            t = next;
        }
    }
    if (!all)
        return;
    registry_synchronize(reg);
    allow_free_tables(all);
}

/* The views of word lists' deltas that changes replaced (words/delta.h):
 * freed after one grace period, as the allow tables are. */
static void reclaim_word_views(struct registry *reg)
{
    const struct catalog *c = registry_read(reg);
    struct words_view *all = NULL, **tail = &all;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->entries[i].v->wd)
            continue;
        *tail = words_delta_take_retired(c->entries[i].v->wd);
        while (*tail)
            tail = words_view_next_retired(*tail);
    }
    if (!all)
        return;
    registry_synchronize(reg);
    words_view_free_list(all);
}

void housekeep_tick(struct housekeep *h)
{
    const struct catalog *c = registry_read(h->reg);
    char err[1024];
    for (size_t i = 0; i < c->n; i++) {
        struct journal *j = atomic_load(&c->entries[i].st->journal);
        if (j && journal_tick(j, err, sizeof(err)) != 0)
            log_error("filter %s: journal: %s", c->entries[i].name, err);
        /* A windowed filter's expired slices are cleared here, within a
         * second of expiring; checks ignore them from the boundary on. */
        if (c->entries[i].v->f->ring)
            ring_expire(c->entries[i].v->f->ring, clock_now_ms());
        if (c->entries[i].v->f->ring && j)
            wcompact_tick(&h->compact[c->entries[i].id], c->entries[i].name,
                          c->entries[i].v->f->ring, j);
        /* A growing filter's next sub-filter is planned here, off the adds. */
        struct filter_grow *g = grow_of(c->entries[i].v->f);
        if (g)
            grow_prepare(g);
    }
    reclaim_allow_tables(h->reg);
    reclaim_word_views(h->reg);
    registry_reclaim(h->reg); /* what deferred publishes left (filters made at run time) */
}
