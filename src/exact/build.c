/* build: the builder (build.h). Keys are fingerprinted on the adding threads;
 * the shared buffer is sorted on every core when full and spilled as a sorted,
 * deduplicated run to an unlinked temporary file; finish merges the runs (a
 * binary heap over one 1 MiB read buffer per run) into the writer. With no run
 * spilled, the buffer goes to the writer straight from memory. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "exact/build.h"
#include "exact/exact_int.h"
#include "exact/sort.h"

#define RUN_BUF (1u << 20)

struct exact_builder {
    struct exact_build_opts o;
    char path[4096], tmpdir[4096];
    unsigned threads;
    pthread_mutex_t mu;
    struct exact_fp_secret sec;
    uint64_t *buf, *scratch; /* fingerprint tables */
    size_t used, cap;
    struct exact_kent *ents, *kscr; /* keys tables */
    unsigned char *arena;
    size_t aused, acap;
    int *runs;
    size_t nruns, runcap;
    uint64_t keys_in;
    char fault[512]; /* the first failure, repeated to every later call */
};

int exact_seed_random(uint64_t *seed, char *err, size_t errlen)
{
    return util_random_u64(seed, err, errlen);
}

struct exact_builder *exact_builder_new(const struct exact_build_opts *o, char *err, size_t errlen)
{
    if (!o->path || !*o->path || (o->kind != EXACT_KIND_FP && o->kind != EXACT_KIND_KEYS)) {
        util_fail(err, errlen, "exact build: a path and a kind are needed");
        return NULL;
    }
    uint64_t mem = o->mem_bytes ? o->mem_bytes : 1ull << 30;
    if (mem < (1u << 20)) {
        util_fail(err, errlen, "exact build: a memory budget under 1 MiB");
        return NULL;
    }
    struct exact_builder *b = calloc(1, sizeof(*b));
    if (!b) {
        util_fail(err, errlen, "out of memory");
        return NULL;
    }
    b->o = *o;
    snprintf(b->path, sizeof(b->path), "%s", o->path);
    if (o->tmpdir)
        snprintf(b->tmpdir, sizeof(b->tmpdir), "%s", o->tmpdir);
    else
        exact_dirname(o->path, b->tmpdir, sizeof(b->tmpdir));
    b->o.path = b->path;
    b->o.tmpdir = b->tmpdir;
    b->threads = o->threads ? o->threads : util_ncpus();
    pthread_mutex_init(&b->mu, NULL);
    exact_fp_init(&b->sec, o->seed);
    if (o->kind == EXACT_KIND_FP) {
        /* 16 bytes an entry: the buffer and the sort's scratch. */
        b->cap = (size_t)(mem / 16);
        b->buf = malloc(b->cap * 8);
        b->scratch = malloc(b->cap * 8);
    } else {
        /* Half for the entries and their scratch (32 bytes), half for the keys. */
        b->cap = (size_t)(mem / 2 / 32);
        b->acap = (size_t)(mem / 2);
        if (b->acap > (1ull << 47))
            b->acap = 1ull << 47; /* an arena offset is 48 bits of a ref */
        b->ents = malloc(b->cap * sizeof(*b->ents));
        b->kscr = malloc(b->cap * sizeof(*b->kscr));
        b->arena = malloc(b->acap);
    }
    if (o->kind == EXACT_KIND_FP ? !b->buf || !b->scratch : !b->ents || !b->kscr || !b->arena) {
        util_fail(err, errlen, "exact build: no memory for a %llu-byte budget",
                  (unsigned long long)mem);
        exact_builder_free(b);
        return NULL;
    }
    return b;
}

void exact_builder_free(struct exact_builder *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->nruns; i++)
        close(b->runs[i]);
    free(b->runs);
    free(b->buf);
    free(b->scratch);
    free(b->ents);
    free(b->kscr);
    free(b->arena);
    pthread_mutex_destroy(&b->mu);
    free(b);
}

/* Record the first failure; every later call reports it. Under b->mu. */
static int fault(struct exact_builder *b, char *err, size_t errlen)
{
    return util_fail(err, errlen, "%s", b->fault);
}

/* Sort the buffer and write it, without repeats, as a new run. Under b->mu. */
static int spill(struct exact_builder *b)
{
    int fd = exact_tmpfile(b->tmpdir, b->fault, sizeof(b->fault));
    if (fd < 0)
        return -1;
    if (b->nruns == b->runcap) {
        size_t cap = b->runcap ? b->runcap * 2 : 16;
        int *r = realloc(b->runs, cap * sizeof(*r));
        if (!r) {
            close(fd);
            return util_fail(b->fault, sizeof(b->fault), "exact build: out of memory");
        }
        b->runs = r;
        b->runcap = cap;
    }
    b->runs[b->nruns++] = fd;
    unsigned char *out = malloc(RUN_BUF);
    size_t used = 0;
    int rc = out ? 0 : -1;
    if (b->o.kind == EXACT_KIND_FP) {
        exact_sort_u64(b->buf, b->scratch, b->used, b->threads);
        for (size_t i = 0; rc == 0 && i < b->used; i++) {
            if (i && b->buf[i] == b->buf[i - 1])
                continue;
            exact_put64(out + used, b->buf[i]);
            used += 8;
            if (used == RUN_BUF) {
                rc = util_write_all(fd, out, used);
                used = 0;
            }
        }
    } else {
        exact_sort_kent(b->ents, b->kscr, b->used, b->arena, b->threads);
        const struct exact_kent *e = b->ents;
        for (size_t i = 0; rc == 0 && i < b->used; i++) {
            size_t len = e[i].ref & 0xffff;
            const unsigned char *k = b->arena + (e[i].ref >> 16);
            if (i && e[i].fp == e[i - 1].fp && len == (e[i - 1].ref & 0xffff) &&
                memcmp(k, b->arena + (e[i - 1].ref >> 16), len) == 0)
                continue;
            if (used + 12 + len > RUN_BUF) {
                rc = util_write_all(fd, out, used);
                used = 0;
            }
            exact_put64(out + used, e[i].fp);
            exact_put32(out + used + 8, (uint32_t)len);
            memcpy(out + used + 12, k, len);
            used += 12 + len;
        }
    }
    if (rc == 0 && used)
        rc = util_write_all(fd, out, used);
    free(out);
    if (rc != 0)
        return util_fail(b->fault, sizeof(b->fault), "exact build: writing a run in %s: %s",
                         b->tmpdir, out ? util_errno_text(errno) : "out of memory");
    b->used = 0;
    b->aused = 0;
    return 0;
}

int exact_builder_add_fps(struct exact_builder *b, const uint64_t *fps, size_t n, char *err,
                          size_t errlen)
{
    if (b->o.kind != EXACT_KIND_FP)
        return util_fail(err, errlen, "exact build: fingerprints given to a keys table");
    pthread_mutex_lock(&b->mu);
    int rc = 0;
    if (b->fault[0])
        rc = fault(b, err, errlen);
    for (size_t i = 0; rc == 0 && i < n;) {
        if (b->used == b->cap && spill(b) != 0) {
            rc = fault(b, err, errlen);
            break;
        }
        size_t k = b->cap - b->used < n - i ? b->cap - b->used : n - i;
        memcpy(b->buf + b->used, fps + i, k * 8);
        b->used += k;
        b->keys_in += k;
        i += k;
    }
    pthread_mutex_unlock(&b->mu);
    return rc;
}

/* Keys into a keys table's buffer: entries and their bytes. Under b->mu. */
static int add_keys_locked(struct exact_builder *b, const void *const *keys, const size_t *lens,
                           const uint64_t *fps, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        if (b->used == b->cap || b->aused + lens[i] > b->acap) {
            if (spill(b) != 0)
                return fault(b, err, errlen);
        }
        memcpy(b->arena + b->aused, keys[i], lens[i]);
        b->ents[b->used].fp = fps[i];
        b->ents[b->used].ref = (uint64_t)b->aused << 16 | lens[i];
        b->used++;
        b->aused += lens[i];
        b->keys_in++;
    }
    return 0;
}

int exact_builder_add(struct exact_builder *b, const void *const *keys, const size_t *lens,
                      size_t n, char *err, size_t errlen)
{
    uint64_t fps[1024];
    for (size_t at = 0; at < n;) {
        size_t k = n - at < 1024 ? n - at : 1024;
        for (size_t i = 0; i < k; i++) {
            if (lens[at + i] > EXACT_MAX_KEY)
                return util_fail(err, errlen, "exact build: a key of %zu bytes (at most %u)",
                                 lens[at + i], EXACT_MAX_KEY);
            fps[i] = exact_fp(&b->sec, keys[at + i], lens[at + i]);
        }
        int rc;
        if (b->o.kind == EXACT_KIND_FP) {
            rc = exact_builder_add_fps(b, fps, k, err, errlen);
        } else {
            pthread_mutex_lock(&b->mu);
            rc = b->fault[0] ? fault(b, err, errlen)
                             : add_keys_locked(b, keys + at, lens + at, fps, k, err, errlen);
            pthread_mutex_unlock(&b->mu);
        }
        if (rc != 0)
            return -1;
        at += k;
    }
    return 0;
}

/* One run being merged: a read buffer over its file and its current record. */
struct rd {
    int fd;
    uint64_t off;
    unsigned char *buf;
    size_t pos, len;
    uint64_t fp;
    const unsigned char *key;
    size_t klen;
};

/* Make at least need bytes available at r->pos (fewer only at the run's end).
 * -1 on a read error. */
static int rd_fill(struct rd *r, size_t need)
{
    if (r->len - r->pos >= need)
        return 0;
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
    while (r->len < need) {
        ssize_t got = pread(r->fd, r->buf + r->len, RUN_BUF - r->len, (off_t)r->off);
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        r->off += (uint64_t)got;
        r->len += (size_t)got;
    }
    return 0;
}

/* The run's next record into r; 1, 0 at its end, -1 on a read error or a
 * torn record (the run file changed under us). */
static int rd_next(struct rd *r, enum exact_kind kind)
{
    size_t need = kind == EXACT_KIND_FP ? 8 : 12;
    if (rd_fill(r, need) != 0)
        return -1;
    if (r->len == r->pos)
        return 0;
    if (r->len - r->pos < need)
        return -1;
    size_t klen = kind == EXACT_KIND_FP ? 0 : exact_get32(r->buf + r->pos + 8);
    if (klen > EXACT_MAX_KEY)
        return -1;
    need += klen;
    if (rd_fill(r, need) != 0 || r->len - r->pos < need)
        return -1;
    r->fp = exact_get64(r->buf + r->pos);
    r->klen = klen;
    r->key = kind == EXACT_KIND_FP ? r->buf : r->buf + r->pos + 12;
    r->pos += need;
    return 1;
}

static int rec_cmp(uint64_t fa, const void *ka, size_t la, uint64_t fb, const void *kb, size_t lb)
{
    if (fa != fb)
        return fa < fb ? -1 : 1;
    int c = memcmp(ka, kb, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

static bool rd_less(const struct rd *a, const struct rd *b)
{
    return rec_cmp(a->fp, a->key, a->klen, b->fp, b->key, b->klen) < 0;
}

static void heap_down(struct rd **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && rd_less(h[l], h[m]))
            m = l;
        if (l + 1 < n && rd_less(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        struct rd *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Where the merged entries go: the writer, or (w NULL) a count of the
 * entries and their key bytes, for a keys table's writer to be sized first. */
struct sink {
    struct exact_writer *w;
    uint64_t count, blob;
};

static int sink_put(struct sink *s, uint64_t fp, const void *key, size_t len)
{
    if (s->w)
        return exact_writer_put(s->w, fp, key, len);
    s->count++;
    s->blob += len;
    return 0;
}

/* Merge every run into the sink, dropping repeats across runs. */
static int merge_runs(struct exact_builder *b, struct sink *w, char *err, size_t errlen)
{
    size_t n = b->nruns;
    struct rd *rds = calloc(n, sizeof(*rds));
    struct rd **heap = calloc(n, sizeof(*heap));
    unsigned char *last = malloc(EXACT_MAX_KEY);
    int rc = rds && heap && last ? 0 : util_fail(err, errlen, "exact build: out of memory");
    size_t live = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rds[i].fd = b->runs[i];
        if (!(rds[i].buf = malloc(RUN_BUF))) {
            rc = util_fail(err, errlen, "exact build: out of memory for %zu runs", n);
            break;
        }
        int got = rd_next(&rds[i], b->o.kind);
        if (got < 0)
            rc = util_fail(err, errlen, "exact build: reading run %zu back failed", i);
        else if (got)
            heap[live++] = &rds[i];
    }
    for (size_t i = live / 2; rc == 0 && i-- > 0;)
        heap_down(heap, live, i);
    bool have_last = false;
    uint64_t last_fp = 0;
    size_t last_len = 0;
    while (rc == 0 && live) {
        struct rd *r = heap[0];
        if (!have_last || rec_cmp(last_fp, last, last_len, r->fp, r->key, r->klen) != 0) {
            if (sink_put(w, r->fp, r->key, r->klen) != 0) {
                rc = util_fail(err, errlen, "%s: write: %s", b->path, util_errno_text(errno));
                break;
            }
            have_last = true;
            last_fp = r->fp;
            last_len = r->klen;
            memcpy(last, r->key, r->klen);
        }
        int got = rd_next(r, b->o.kind);
        if (got < 0)
            rc = util_fail(err, errlen, "exact build: reading a run back failed");
        else if (got == 0)
            heap[0] = heap[--live];
        heap_down(heap, live, 0);
    }
    for (size_t i = 0; rds && i < n; i++)
        free(rds[i].buf);
    free(rds);
    free(heap);
    free(last);
    return rc;
}

/* The sorted buffer, without repeats, to the sink (no run was spilled). */
static int emit_memory(struct exact_builder *b, struct sink *w, char *err, size_t errlen)
{
    if (b->o.kind == EXACT_KIND_FP) {
        for (size_t i = 0; i < b->used; i++)
            if ((i == 0 || b->buf[i] != b->buf[i - 1]) && sink_put(w, b->buf[i], NULL, 0) != 0)
                return util_fail(err, errlen, "%s: write: %s", b->path, util_errno_text(errno));
        return 0;
    }
    const struct exact_kent *e = b->ents;
    for (size_t i = 0; i < b->used; i++) {
        size_t len = e[i].ref & 0xffff;
        const unsigned char *k = b->arena + (e[i].ref >> 16);
        if (i && rec_cmp(e[i].fp, k, len, e[i - 1].fp, b->arena + (e[i - 1].ref >> 16),
                         e[i - 1].ref & 0xffff) == 0)
            continue;
        if (sink_put(w, e[i].fp, k, len) != 0)
            return util_fail(err, errlen, "%s: write: %s", b->path, util_errno_text(errno));
    }
    return 0;
}

/* A keys table is merged twice: once to count its entries and key bytes, so
 * that the writer puts every section straight in its place (no temporary
 * files appended behind the fingerprints), once to write them. */
int exact_builder_finish(struct exact_builder *b, struct exact_build_stats *st, char *err,
                         size_t errlen)
{
    if (b->fault[0])
        return fault(b, err, errlen);
    if (b->nruns && b->used && spill(b) != 0)
        return fault(b, err, errlen);
    if (!b->nruns) {
        if (b->o.kind == EXACT_KIND_FP)
            exact_sort_u64(b->buf, b->scratch, b->used, b->threads);
        else
            exact_sort_kent(b->ents, b->kscr, b->used, b->arena, b->threads);
    }
    struct sink sk = {0};
    if (b->o.kind == EXACT_KIND_KEYS) {
        int rc = b->nruns ? merge_runs(b, &sk, err, errlen) : emit_memory(b, &sk, err, errlen);
        if (rc != 0)
            return -1;
        sk.w = exact_writer_open_sized(b->path, b->o.seed, sk.count, sk.blob, err, errlen);
    } else {
        sk.w = exact_writer_open(b->path, b->o.kind, b->o.seed, b->tmpdir, err, errlen);
    }
    if (!sk.w)
        return -1;
    int rc = b->nruns ? merge_runs(b, &sk, err, errlen) : emit_memory(b, &sk, err, errlen);
    if (rc != 0) {
        exact_writer_abort(sk.w);
        return -1;
    }
    struct exact_build_stats s = {.keys_in = b->keys_in, .runs = b->nruns};
    if (exact_writer_commit(sk.w, &s.count, &s.file_bytes, err, errlen) != 0)
        return -1;
    if (st)
        *st = s;
    return 0;
}
