/* The fuse layout's build: a collector of hashes, then the shards built in
 * parallel, group by group. See build_fuse.h. */
#include "config.h"

#include "tool/build_fuse.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/seam.h"
#include "base/util.h"
#include "bloom/fuse.h"

#define STAGE 1024          /* hashes a thread gathers before it takes the lock */
#define SPILL_BUF 16384     /* hashes a group buffers before a write to its file */
#define SEED_STIR 0xD6E8FEB86659FD93ull

struct group {
    struct hash128 *a; /* in memory: all of it (one group), else what awaits a write */
    size_t n, cap;
    int fd;            /* spill file, -1 when the group lives in memory */
    uint64_t spilled;  /* hashes in the file */
};

struct collector {
    struct filter *head;
    struct filter_plan plan;
    pthread_mutex_t mu; /* groups, failed, err */
    pthread_key_t key;  /* each adding thread's struct stage */
    uint32_t n_groups, per_group;
    struct group *g;
    bool failed;
    char err[512];
};

struct stage {
    struct collector *c;
    size_t n;
    struct hash128 h[STAGE];
};

/* Under c->mu: append h to its group, writing the buffer out when a spilled
 * group's buffer is full. */
static void put(struct collector *c, struct hash128 h)
{
    struct group *g = &c->g[filter_shard_of(c->head, h) / c->per_group];
    if (g->n == g->cap) {
        if (g->fd >= 0) {
            if (util_write_all(g->fd, g->a, g->n * sizeof(*g->a)) != 0) {
                if (!c->failed)
                    snprintf(c->err, sizeof(c->err), "writing a temporary file of hashes: %s",
                             strerror(errno));
                c->failed = true;
                g->n = 0;
                return;
            }
            g->spilled += g->n;
            g->n = 0;
        } else {
            size_t cap = g->cap ? g->cap * 2 : 65536;
            struct hash128 *na = realloc(g->a, cap * sizeof(*na));
            if (!na) {
                if (!c->failed)
                    snprintf(c->err, sizeof(c->err), "out of memory collecting hashes");
                c->failed = true;
                return;
            }
            g->a = na;
            g->cap = cap;
        }
    }
    g->a[g->n++] = h;
}

/* A thread's staged hashes into the groups: one lock per STAGE adds. */
static void flush(struct stage *st)
{
    struct collector *c = st->c;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < st->n; i++)
        put(c, st->h[i]);
    pthread_mutex_unlock(&c->mu);
    st->n = 0;
}

/* The key's destructor: a worker thread's last hashes, as it exits. */
static void stage_done(void *p)
{
    struct stage *st = p;
    flush(st);
    free(st);
}

/* Any builder thread: stage the hash; always "new" (duplicates are dropped
 * per shard when it is built). */
static bool col_add_hash(void *cp, struct hash128 h)
{
    struct collector *c = cp;
    struct stage *st = pthread_getspecific(c->key);
    if (!st) {
        if (!(st = malloc(sizeof(*st))) || pthread_setspecific(c->key, st) != 0) {
            free(st);
            pthread_mutex_lock(&c->mu);
            put(c, h);
            pthread_mutex_unlock(&c->mu);
            return true;
        }
        st->c = c;
        st->n = 0;
    }
    st->h[st->n++] = h;
    if (st->n == STAGE)
        flush(st);
    return true;
}

static void col_add_batch(void *cp, const struct filter *head, const struct filter_key *keys,
                          size_t n, bool *added)
{
    for (size_t i = 0; i < n; i++) {
        bool fresh = col_add_hash(cp, filter_hash(head, keys[i].data, keys[i].len));
        if (added)
            added[i] = fresh;
    }
}

/* Nothing is built yet: a collector answers no lookup. */
static bool col_check_hash(void *cp, const struct filter *head, struct hash128 h)
{
    (void)cp, (void)head, (void)h;
    return false;
}

static void col_check_batch(void *cp, const struct filter *head, const struct filter_key *keys,
                            size_t n, bool *present)
{
    (void)cp, (void)head, (void)keys;
    memset(present, 0, n * sizeof(*present));
}

static uint64_t col_items(void *cp)
{
    struct collector *c = cp;
    uint64_t n = 0;
    for (uint32_t i = 0; i < c->plan.shard_count; i++)
        n += atomic_load(&c->head->shards[i].items);
    return n;
}

static uint64_t col_zero(void *cp)
{
    (void)cp;
    return 0;
}

static double col_fpr(void *cp)
{
    (void)cp;
    return 0.0;
}

static void col_free(void *cp)
{
    struct collector *c = cp;
    struct stage *st = pthread_getspecific(c->key);
    free(st);
    pthread_setspecific(c->key, NULL);
    pthread_key_delete(c->key);
    for (uint32_t i = 0; i < c->n_groups; i++) {
        free(c->g[i].a);
        if (c->g[i].fd >= 0)
            close(c->g[i].fd);
    }
    free(c->g);
    free(c->head->shards);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static const struct filter_comp_ops collector_ops = {
    .free = col_free,
    .add_hash = col_add_hash,
    .add_batch = col_add_batch,
    .check_hash = col_check_hash,
    .check_batch = col_check_batch,
    .items = col_items,
    .bits_set = col_zero,
    .bytes = col_zero,
    .estimated_fpr = col_fpr,
};

/* Groups: as few as keep a group's hashes (capacity, with 25% room for the
 * duplicates a counted capacity already includes and for uneven shards)
 * under BUILD_FUSE_MEM_BYTES (a test lowers it: base/seam.h); one group is
 * kept in memory. */
struct filter *build_fuse_collector(const struct filter_plan *plan, uint64_t seed,
                                    const char *output, char *err, size_t errlen)
{
    struct collector *c = calloc(1, sizeof(*c));
    struct filter *head = calloc(1, sizeof(*head));
    uint32_t S = plan->shard_count;
    double need = (double)plan->capacity * sizeof(struct hash128) * 1.25;
    uint32_t groups = 1;
    double budget = (double)seam_build_fuse_mem_bytes(BUILD_FUSE_MEM_BYTES);
    while (groups < S && need / groups > budget)
        groups <<= 1;
    if (c)
        c->g = calloc(groups, sizeof(*c->g));
    if (head)
        head->shards = calloc(S, sizeof(*head->shards));
    if (!c || !head || !c->g || !head->shards || pthread_key_create(&c->key, stage_done) != 0) {
        if (c)
            free(c->g);
        if (head)
            free(head->shards);
        free(c);
        free(head);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    c->plan = *plan;
    c->n_groups = groups;
    c->per_group = S / groups;
    c->head = head;
    head->layout = FILTER_FUSE;
    head->k = plan->k;
    head->capacity = plan->capacity;
    head->fpr_target = plan->fpr_target;
    head->shard_count = S;
    head->bits_per_shard = plan->bits_per_shard;
    head->fuse_seg_log = plan->fuse_seg_log;
    head->fuse_segments = plan->fuse_segments;
    head->seed = seed;
    head->comp = c;
    head->comp_ops = &collector_ops;
    for (uint32_t i = 0; i < groups; i++)
        c->g[i].fd = -1;
    for (uint32_t i = 0; groups > 1 && i < groups; i++) {
        char tmp[4096];
        int fd = util_tmpfile_beside(output, tmp, sizeof(tmp), err, errlen);
        if (fd < 0) {
            filter_free(head);
            return NULL;
        }
        unlink(tmp);
        c->g[i].fd = fd;
        c->g[i].cap = SPILL_BUF;
        if (!(c->g[i].a = malloc(SPILL_BUF * sizeof(struct hash128)))) {
            filter_free(head);
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
    }
    return head;
}

struct filter *build_fuse_filter_create(const struct filter_plan *plan, uint64_t seed,
                                        const char *output, char *err, size_t errlen)
{
    if (plan->layout == FILTER_FUSE)
        return build_fuse_collector(plan, seed, output, err, errlen);
    return filter_create(plan, seed, err, errlen);
}

struct shard_build {
    struct filter *f;
    struct hash128 *keys; /* the group's hashes, ordered by shard */
    uint64_t *off;        /* per shard of the group: where its keys start (one more entry) */
    uint32_t first;       /* the group's first shard */
    uint64_t base_seed;
    _Atomic int failed;
    char err[512];
};

/* Worker thread of build_fuse_finish: shard first + i. */
static void build_task(void *arg, size_t i)
{
    struct shard_build *sb = arg;
    if (atomic_load(&sb->failed))
        return;
    char why[512];
    if (fuse_build_shard(sb->f, sb->first + (uint32_t)i, sb->keys + sb->off[i],
                         sb->off[i + 1] - sb->off[i], sb->base_seed, why, sizeof(why)) != 0 &&
        atomic_fetch_add(&sb->failed, 1) == 0)
        snprintf(sb->err, sizeof(sb->err), "%s", why);
}

/* One group: its hashes read back (file, then buffer), ordered by shard
 * with a counting pass, every shard built. Calling thread. */
static int build_group(struct collector *c, uint32_t gi, struct filter *f, unsigned threads,
                       char *err, size_t errlen)
{
    struct group *g = &c->g[gi];
    uint64_t n = g->spilled + g->n;
    struct hash128 *all = g->fd >= 0 ? malloc((n ? n : 1) * sizeof(*all)) : g->a;
    struct hash128 *by = malloc((n ? n : 1) * sizeof(*by));
    uint64_t *off = calloc(c->per_group + 1, sizeof(*off));
    int rc = -1;
    if ((!all && n) || !by || !off) { /* an empty group has no array */
        snprintf(err, errlen, "out of memory building the fuse filter (%llu hashes)",
                 (unsigned long long)n);
        goto out;
    }
    if (g->fd >= 0) {
        if (util_pread_all(g->fd, all, g->spilled * sizeof(*all), 0) != 0) {
            snprintf(err, errlen, "reading a temporary file of hashes back: %s",
                     errno ? strerror(errno) : "unexpected end of file");
            goto out;
        }
        memcpy(all + g->spilled, g->a, g->n * sizeof(*all));
    }
    uint32_t first = gi * c->per_group;
    for (uint64_t i = 0; i < n; i++)
        off[filter_shard_of(f, all[i]) - first + 1]++;
    for (uint32_t s = 0; s < c->per_group; s++)
        off[s + 1] += off[s];
    uint64_t *pos = malloc(c->per_group * sizeof(*pos));
    if (!pos) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    memcpy(pos, off, c->per_group * sizeof(*pos));
    for (uint64_t i = 0; i < n; i++)
        by[pos[filter_shard_of(f, all[i]) - first]++] = all[i];
    free(pos);
    struct shard_build *sb = calloc(1, sizeof(*sb));
    if (!sb) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    sb->f = f;
    sb->keys = by;
    sb->off = off;
    sb->first = first;
    sb->base_seed = f->seed ^ SEED_STIR;
    util_parallel_for(threads, c->per_group, build_task, sb);
    if (atomic_load(&sb->failed))
        snprintf(err, errlen, "%s", sb->err);
    else
        rc = 0;
    free(sb);
out:
    if (g->fd >= 0)
        free(all);
    free(by);
    free(off);
    return rc;
}

int build_fuse_finish(struct filter **fp, unsigned threads, char *err, size_t errlen)
{
    struct filter *head = *fp;
    if (head->comp_ops != &collector_ops)
        return 0;
    struct collector *c = head->comp;
    struct stage *st = pthread_getspecific(c->key);
    if (st)
        flush(st);
    if (c->failed) {
        snprintf(err, errlen, "%s", c->err);
        return -1;
    }
    struct filter *f = filter_create(&c->plan, head->seed, err, errlen);
    if (!f)
        return -1;
    f->keys = head->keys;
    if (!threads)
        threads = util_ncpus();
    for (uint32_t gi = 0; gi < c->n_groups; gi++) {
        if (build_group(c, gi, f, threads, err, errlen) != 0) {
            filter_free(f);
            return -1;
        }
        /* This group's hashes are no longer needed: give the memory back. */
        free(c->g[gi].a);
        c->g[gi].a = NULL;
        c->g[gi].n = c->g[gi].cap = 0;
    }
    filter_free(head);
    *fp = f;
    return 0;
}
