/* A fuse filter with its delta, see fusedelta.h. */
#include "config.h"

#include "bloom/fusedelta.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "bloom/fuse.h"

struct fusedelta {
    struct filter *fuse;  /* read-only */
    struct filter *delta; /* blocked, same seed: one hash probes both */
    uint64_t capacity;    /* adds the delta is sized for */
};

static const struct filter_comp_ops fusedelta_ops;

uint64_t fusedelta_default_capacity(uint64_t items)
{
    return items / 100 > FUSEDELTA_MIN_DEFAULT ? items / 100 : FUSEDELTA_MIN_DEFAULT;
}

struct filter *fusedelta_create(struct filter *fuse, uint64_t delta_capacity, char *err,
                                size_t errlen)
{
    struct fusedelta *c = calloc(1, sizeof(*c));
    struct filter *head = calloc(1, sizeof(*head));
    if (!c || !head) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    double p = fuse->fpr_target, left = p - ldexp(1.0, -(int)fuse->k);
    struct filter_plan plan;
    char why[256];
    uint64_t cap = delta_capacity ? delta_capacity : 1;
    if (filter_plan_make(FILTER_BLOCKED, cap, fmax(left, p / 10), 0, &plan, why, sizeof(why)) !=
            0 ||
        !(c->delta = filter_create(&plan, fuse->seed, why, sizeof(why)))) {
        snprintf(err, errlen, "the delta for %llu adds beside the fuse filter: %s",
                 (unsigned long long)delta_capacity, why);
        goto fail;
    }
    c->fuse = fuse;
    c->capacity = delta_capacity;
    /* The head: the fuse filter's geometry, seed, keys and sizing, so a
     * caller hashes once and INFO shows the file's figures. */
    filter_comp_head(head, fuse, fuse->capacity, fuse->fpr_target, c, &fusedelta_ops);
    return head;
fail:
    if (c)
        filter_free(c->delta);
    free(c);
    free(head);
    filter_free(fuse);
    return NULL;
}

/* ---- what a head's filter_* calls reach; checks from any thread, adds
 * ordered by the caller ---- */

static bool ops_add_hash(void *cp, struct hash128 h)
{
    struct fusedelta *c = cp;
    if (filter_check_hash(c->fuse, h))
        return false; /* in the file already */
    return filter_add_hash(c->delta, h);
}

static void ops_add_batch(void *cp, const struct filter *head, const struct filter_key *keys,
                          size_t n, bool *added)
{
    for (size_t i = 0; i < n; i++) {
        bool fresh = ops_add_hash(cp, filter_hash(head, keys[i].data, keys[i].len));
        if (added)
            added[i] = fresh;
    }
}

static bool ops_check_hash(void *cp, const struct filter *head, struct hash128 h)
{
    struct fusedelta *c = cp;
    (void)head;
    return filter_check_hash(c->fuse, h) || filter_check_hash(c->delta, h);
}

static void ops_check_batch(void *cp, const struct filter *head, const struct filter_key *keys,
                            size_t n, bool *present)
{
    struct fusedelta *c = cp;
    (void)head;
    fuse_check_batch_also(c->fuse, c->delta, filter_check_hash, keys, n, present);
}

static uint64_t ops_items(void *cp)
{
    struct fusedelta *c = cp;
    return filter_items(c->fuse) + filter_items(c->delta);
}

static uint64_t ops_bits_set(void *cp)
{
    struct fusedelta *c = cp;
    return filter_bits_set(c->fuse) + filter_bits_set(c->delta);
}

static uint64_t ops_bytes(void *cp)
{
    struct fusedelta *c = cp;
    return filter_bytes(c->fuse) + filter_bytes(c->delta);
}

/* A check is a false positive if either part's is. */
static double ops_estimated_fpr(void *cp)
{
    struct fusedelta *c = cp;
    return 1.0 - (1.0 - filter_estimated_fpr(c->fuse)) * (1.0 - filter_estimated_fpr(c->delta));
}

static uint64_t ops_room(void *cp)
{
    struct fusedelta *c = cp;
    uint64_t used = filter_items(c->delta);
    return used < c->capacity ? c->capacity - used : 0;
}

static void ops_free(void *cp)
{
    struct fusedelta *c = cp;
    filter_free(c->fuse);
    filter_free(c->delta);
    free(c);
}

static const struct filter_comp_ops fusedelta_ops = {FILTER_COMP_OPS_EACH, .room = ops_room};

bool fusedelta_get_info(const struct filter *f, struct fusedelta_info *out)
{
    if (!f->comp || f->comp_ops != &fusedelta_ops)
        return false;
    const struct fusedelta *c = f->comp;
    out->capacity = c->capacity;
    out->items = filter_items(c->delta);
    out->bytes = filter_bytes(c->delta);
    out->fpr_estimated = filter_estimated_fpr(c->delta);
    return true;
}
