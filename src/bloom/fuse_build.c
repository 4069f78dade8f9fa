/* fuse_build: a whole fuse filter from hashes in memory, see fuse_build.h. */
#include "config.h"

#include "bloom/fuse_build.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "bloom/fuse.h"

struct whole {
    struct filter *f;
    struct hash128 *by; /* the hashes ordered by shard */
    size_t *off;        /* shard s's are by[off[s], off[s + 1]) */
    _Atomic int failed;
    char err[512];
};

/* Worker thread of fuse_filter_build: shard i. */
static void whole_task(void *arg, size_t i)
{
    struct whole *w = arg;
    char why[512];
    if (fuse_build_shard(w->f, (uint32_t)i, w->by + w->off[i], w->off[i + 1] - w->off[i],
                         w->f->seed ^ 0xD6E8FEB86659FD93ull, why, sizeof(why)) != 0 &&
        atomic_fetch_add(&w->failed, 1) == 0)
        snprintf(w->err, sizeof(w->err), "%s", why);
}

struct filter *fuse_filter_build(const struct filter_plan *plan, uint64_t seed,
                                 const struct hash128 *hashes, size_t n, unsigned threads,
                                 char *err, size_t errlen)
{
    struct filter *f = filter_create(plan, seed, err, errlen);
    if (!f)
        return NULL;
    uint32_t S = f->shard_count;
    struct whole w = {.f = f};
    w.by = malloc((n ? n : 1) * sizeof(*w.by));
    w.off = calloc((size_t)S + 1, sizeof(*w.off));
    size_t *pos = malloc((size_t)S * sizeof(*pos));
    if (!w.by || !w.off || !pos) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        w.off[filter_shard_of(f, hashes[i]) + 1]++;
    for (uint32_t s = 0; s < S; s++)
        w.off[s + 1] += w.off[s];
    memcpy(pos, w.off, (size_t)S * sizeof(*pos));
    for (size_t i = 0; i < n; i++)
        w.by[pos[filter_shard_of(f, hashes[i])]++] = hashes[i];
    util_parallel_for(threads ? threads : util_ncpus(), S, whole_task, &w);
    if (atomic_load(&w.failed)) {
        snprintf(err, errlen, "%s", w.err);
        goto fail;
    }
    free(w.by);
    free(w.off);
    free(pos);
    return f;
fail:
    free(w.by);
    free(w.off);
    free(pos);
    filter_free(f);
    return NULL;
}
