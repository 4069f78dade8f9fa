/* delta: the exact delta (delta.h). Open addressing with linear probing and
 * backward-shift deletion, at most half full. Every change happens between two
 * increments of a sequence number (odd while it runs); a reader notes the
 * number, probes with relaxed atomic loads and probes again if the number
 * moved. Memory a reader may still hold (an outgrown slot array, a removed
 * key's copy) is kept on a retired list until the delta is freed, so a reader
 * never touches freed memory; the list grows by at most the size of the
 * current array plus the keys removed. */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "exact/delta.h"
#include "exact/exact_int.h"

struct dslot {
    _Atomic uint64_t fp;
    _Atomic uintptr_t key;  /* keys deltas: a malloc'd [u32 length][bytes] */
    _Atomic uint32_t state; /* 0 empty, else enum exact_delta_state */
};

struct dtab {
    unsigned bits;
    struct dslot *s;
};

struct retired {
    struct retired *next;
    void *p;
};

struct exact_delta {
    const struct exact_table *base;
    enum exact_kind kind;
    uint64_t seed;
    struct exact_fp_secret sec;
    _Atomic(struct dtab *) tab;
    atomic_uint seq;
    size_t used; /* writer only */
    _Atomic uint64_t added, removed;
    struct retired *retired;
};

static size_t home(const struct dtab *t, uint64_t fp)
{
    return (size_t)((fp * 0x9E3779B97F4A7C15ull) >> (64 - t->bits));
}

static const unsigned char *slot_key(const struct dslot *s, size_t *len)
{
    const unsigned char *k =
        (const unsigned char *)atomic_load_explicit(&s->key, memory_order_acquire);
    if (!k)
        return NULL;
    uint32_t l;
    memcpy(&l, k, 4);
    *len = l;
    return k + 4;
}

/* The slot holding (fp, key), or the empty slot where it would go; in a keys
 * delta a key must match as well. Bounded by the array's size, so a reader
 * racing a writer cannot loop. */
static size_t probe(const struct exact_delta *d, const struct dtab *t, uint64_t fp, const void *key,
                    size_t len, uint32_t *state)
{
    size_t mask = ((size_t)1 << t->bits) - 1, i = home(t, fp);
    for (size_t step = 0; step <= mask; step++, i = (i + 1) & mask) {
        uint32_t st = atomic_load_explicit(&t->s[i].state, memory_order_relaxed);
        if (st == 0) {
            *state = 0;
            return i;
        }
        if (atomic_load_explicit(&t->s[i].fp, memory_order_relaxed) != fp)
            continue;
        if (d->kind == EXACT_KIND_KEYS) {
            size_t kl = 0;
            const unsigned char *k = slot_key(&t->s[i], &kl);
            if (!k || kl != len || memcmp(k, key, len) != 0)
                continue;
        }
        *state = st;
        return i;
    }
    *state = 0;
    return SIZE_MAX;
}

static struct dtab *dtab_new(unsigned bits)
{
    struct dtab *t = malloc(sizeof(*t));
    if (!t)
        return NULL;
    t->bits = bits;
    t->s = calloc((size_t)1 << bits, sizeof(*t->s));
    if (!t->s) {
        free(t);
        return NULL;
    }
    return t;
}

static int retire(struct exact_delta *d, void *p)
{
    struct retired *r = malloc(sizeof(*r));
    if (!r)
        return -1;
    r->p = p;
    r->next = d->retired;
    d->retired = r;
    return 0;
}

struct exact_delta *exact_delta_new(const struct exact_table *base, enum exact_kind kind,
                                    uint64_t seed, char *err, size_t errlen)
{
    struct exact_delta *d = calloc(1, sizeof(*d));
    struct dtab *t = dtab_new(10);
    if (!d || !t) {
        free(d);
        if (t)
            free(t->s);
        free(t);
        util_fail(err, errlen, "exact delta: out of memory");
        return NULL;
    }
    d->base = base;
    d->kind = base ? base->kind : kind;
    d->seed = base ? base->secret.seed : seed;
    exact_fp_init(&d->sec, d->seed);
    atomic_init(&d->tab, t);
    atomic_init(&d->seq, 0);
    return d;
}

void exact_delta_free(struct exact_delta *d)
{
    if (!d)
        return;
    struct dtab *t = atomic_load(&d->tab);
    for (size_t i = 0; i < ((size_t)1 << t->bits); i++)
        free((void *)atomic_load_explicit(&t->s[i].key, memory_order_relaxed));
    free(t->s);
    free(t);
    while (d->retired) {
        struct retired *r = d->retired;
        d->retired = r->next;
        free(r->p);
        free(r);
    }
    free(d);
}

/* The delta's state for (fp, key), lock-free. */
static enum exact_delta_state state_fp(const struct exact_delta *d, uint64_t fp, const void *key,
                                       size_t len)
{
    struct exact_delta *m = (struct exact_delta *)d; /* atomics are read, never written */
    for (;;) {
        unsigned s1 = atomic_load_explicit(&m->seq, memory_order_acquire);
        if (s1 & 1)
            continue;
        const struct dtab *t = atomic_load_explicit(&m->tab, memory_order_acquire);
        uint32_t st;
        probe(d, t, fp, key, len, &st);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&m->seq, memory_order_relaxed) == s1)
            return (enum exact_delta_state)st;
    }
}

enum exact_delta_state exact_delta_state(const struct exact_delta *d, const void *key, size_t len)
{
    return state_fp(d, exact_fp(&d->sec, key, len), key, len);
}

static bool base_has(const struct exact_delta *d, const void *key, size_t len)
{
    return d->base && exact_table_find(d->base, key, len, NULL);
}

bool exact_delta_contains(const struct exact_delta *d, const void *key, size_t len)
{
    uint64_t fp = exact_fp(&d->sec, key, len); /* the table's fingerprint too: one hash */
    switch (state_fp(d, fp, key, len)) {
    case EXACT_DELTA_ADDED:
        return true;
    case EXACT_DELTA_REMOVED:
        return false;
    default:
        return d->base && exact_table_find_fp(d->base, fp, key, len, NULL);
    }
}

const struct exact_fp_secret *exact_delta_secret(const struct exact_delta *d)
{
    return &d->sec;
}

bool exact_delta_by_fp(const struct exact_delta *d)
{
    return d->kind == EXACT_KIND_FP;
}

bool exact_delta_contains_fp(const struct exact_delta *d, uint64_t fp)
{
    if (d->kind != EXACT_KIND_FP)
        return false;
    switch (state_fp(d, fp, NULL, 0)) {
    case EXACT_DELTA_ADDED:
        return true;
    case EXACT_DELTA_REMOVED:
        return false;
    default:
        return d->base && exact_table_has_fp(d->base, fp);
    }
}

void exact_delta_counts(const struct exact_delta *d, uint64_t *added, uint64_t *removed)
{
    *added = atomic_load_explicit(&((struct exact_delta *)d)->added, memory_order_relaxed);
    *removed = atomic_load_explicit(&((struct exact_delta *)d)->removed, memory_order_relaxed);
}

/* Writer: the sequence number odd while slots change. */
static void write_begin(struct exact_delta *d)
{
    atomic_store_explicit(&d->seq, atomic_load_explicit(&d->seq, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void write_end(struct exact_delta *d)
{
    atomic_store_explicit(&d->seq, atomic_load_explicit(&d->seq, memory_order_relaxed) + 1,
                          memory_order_release);
}

static void slot_move(struct dslot *to, struct dslot *from)
{
    atomic_store_explicit(&to->fp, atomic_load_explicit(&from->fp, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&to->key, atomic_load_explicit(&from->key, memory_order_relaxed),
                          memory_order_release);
    atomic_store_explicit(&to->state, atomic_load_explicit(&from->state, memory_order_relaxed),
                          memory_order_relaxed);
}

/* Twice the slots, every entry rehashed, the new array published and the old
 * one retired (readers may still be in it; it does not change). */
static int grow(struct exact_delta *d)
{
    struct dtab *old = atomic_load_explicit(&d->tab, memory_order_relaxed);
    struct dtab *t = dtab_new(old->bits + 1);
    if (!t)
        return -1;
    size_t mask = ((size_t)1 << t->bits) - 1;
    for (size_t i = 0; i < ((size_t)1 << old->bits); i++) {
        if (!atomic_load_explicit(&old->s[i].state, memory_order_relaxed))
            continue;
        size_t j = home(t, atomic_load_explicit(&old->s[i].fp, memory_order_relaxed));
        while (atomic_load_explicit(&t->s[j].state, memory_order_relaxed))
            j = (j + 1) & mask;
        slot_move(&t->s[j], &old->s[i]);
    }
    if (retire(d, old->s) != 0 || retire(d, old) != 0) {
        free(t->s);
        free(t);
        return -1;
    }
    atomic_store_explicit(&d->tab, t, memory_order_release);
    return 0;
}

/* Empty slot i, shifting back the entries behind it that belong before it. */
static void erase(struct exact_delta *d, struct dtab *t, size_t i)
{
    size_t mask = ((size_t)1 << t->bits) - 1;
    uintptr_t key = atomic_load_explicit(&t->s[i].key, memory_order_relaxed);
    if (key)
        (void)retire(d, (void *)key); /* on no memory it leaks: a reader may hold it */
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        if (!atomic_load_explicit(&t->s[j].state, memory_order_relaxed))
            break;
        size_t h = home(t, atomic_load_explicit(&t->s[j].fp, memory_order_relaxed));
        if (((j - h) & mask) >= ((j - i) & mask)) {
            slot_move(&t->s[i], &t->s[j]);
            i = j;
        }
    }
    atomic_store_explicit(&t->s[i].state, 0, memory_order_relaxed);
    atomic_store_explicit(&t->s[i].key, 0, memory_order_relaxed);
    d->used--;
}

/* Insert (fp, key) with state st. The key's copy and any growth of the array
 * happen before the sequence number turns odd: growth builds a new array
 * that no reader sees until its pointer is published, with the same entries
 * as the old one, which a reader may go on reading. So readers wait only for
 * the three stores into one slot. */
static int insert(struct exact_delta *d, uint64_t fp, const void *key, size_t len, uint32_t st)
{
    uintptr_t copy = 0;
    if (d->kind == EXACT_KIND_KEYS) {
        unsigned char *k = malloc(4 + len);
        if (!k)
            return -1;
        uint32_t l = (uint32_t)len;
        memcpy(k, &l, 4);
        memcpy(k + 4, key, len);
        copy = (uintptr_t)k;
    }
    struct dtab *t = atomic_load_explicit(&d->tab, memory_order_relaxed);
    if ((d->used + 1) * 2 > ((size_t)1 << t->bits)) {
        if (grow(d) != 0) {
            free((void *)copy);
            return -1;
        }
        t = atomic_load_explicit(&d->tab, memory_order_relaxed);
    }
    uint32_t old;
    size_t i = probe(d, t, fp, key, len, &old);
    write_begin(d);
    atomic_store_explicit(&t->s[i].fp, fp, memory_order_relaxed);
    atomic_store_explicit(&t->s[i].key, copy, memory_order_release);
    atomic_store_explicit(&t->s[i].state, st, memory_order_relaxed);
    write_end(d);
    d->used++;
    return 0;
}

/* The change behind add and remove: want is whether the key should be listed. */
static int change(struct exact_delta *d, const void *key, size_t len, bool want)
{
    if (len > EXACT_MAX_KEY)
        return -1;
    uint64_t fp = exact_fp(&d->sec, key, len);
    struct dtab *t = atomic_load_explicit(&d->tab, memory_order_relaxed);
    uint32_t st;
    size_t i = probe(d, t, fp, key, len, &st);
    bool now = st == EXACT_DELTA_ADDED || (st == 0 && base_has(d, key, len));
    if (now == want)
        return 0;
    if (st) { /* an added entry removed, or a tombstone lifted: the table's answer again */
        write_begin(d);
        erase(d, t, i);
        write_end(d);
        atomic_fetch_sub_explicit(st == EXACT_DELTA_ADDED ? &d->added : &d->removed, 1,
                                  memory_order_relaxed);
        return 1;
    }
    if (insert(d, fp, key, len, want ? EXACT_DELTA_ADDED : EXACT_DELTA_REMOVED) != 0)
        return -1;
    atomic_fetch_add_explicit(want ? &d->added : &d->removed, 1, memory_order_relaxed);
    return 1;
}

int exact_delta_add(struct exact_delta *d, const void *key, size_t len)
{
    return change(d, key, len, true);
}

int exact_delta_remove(struct exact_delta *d, const void *key, size_t len)
{
    return change(d, key, len, false);
}

struct fentry {
    uint64_t fp;
    const unsigned char *key;
    size_t len;
    uint32_t st;
};

static int fentry_cmp(const void *x, const void *y)
{
    const struct fentry *a = x, *b = y;
    if (a->fp != b->fp)
        return a->fp < b->fp ? -1 : 1;
    int c = memcmp(a->key, b->key, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The delta's entries, sorted as the table is; NULL on no memory. */
static struct fentry *delta_sorted(const struct exact_delta *d, size_t *n)
{
    const struct dtab *t =
        atomic_load_explicit(&((struct exact_delta *)d)->tab, memory_order_acquire);
    struct fentry *e = malloc((d->used ? d->used : 1) * sizeof(*e));
    if (!e)
        return NULL;
    static const unsigned char none[1];
    size_t k = 0;
    for (size_t i = 0; i < ((size_t)1 << t->bits) && k < d->used; i++) {
        uint32_t st = atomic_load_explicit(&t->s[i].state, memory_order_relaxed);
        if (!st)
            continue;
        e[k].fp = atomic_load_explicit(&t->s[i].fp, memory_order_relaxed);
        e[k].len = 0;
        e[k].key = d->kind == EXACT_KIND_KEYS ? slot_key(&t->s[i], &e[k].len) : none;
        e[k].st = st;
        k++;
    }
    qsort(e, k, sizeof(*e), fentry_cmp);
    *n = k;
    return e;
}

int exact_delta_fold(const struct exact_delta *d, const struct exact_build_opts *o,
                     struct exact_build_stats *st, char *err, size_t errlen)
{
    size_t nd = 0;
    struct fentry *e = delta_sorted(d, &nd);
    if (!e)
        return util_fail(err, errlen, "exact fold: out of memory");
    char dir[4096];
    if (o->tmpdir)
        snprintf(dir, sizeof(dir), "%s", o->tmpdir);
    else
        exact_dirname(o->path, dir, sizeof(dir));
    struct exact_writer *w = exact_writer_open(o->path, d->kind, d->seed, dir, err, errlen);
    if (!w) {
        free(e);
        return -1;
    }
    const struct exact_table *b = d->base;
    uint64_t nb = b ? b->count : 0, i = 0;
    size_t j = 0;
    int rc = 0;
    static const unsigned char none[1];
    while (rc == 0 && (i < nb || j < nd)) {
        struct fentry be = {0};
        if (i < nb) {
            be.fp = exact_table_fp_at(b, i);
            be.key = none;
            if (d->kind == EXACT_KIND_KEYS && !(be.key = exact_table_entry(b, i, &be.len))) {
                rc = util_fail(
                    err, errlen,
                    "%s: exact table fails verification: key offsets out of order (entry %llu)",
                    exact_table_name(b), (unsigned long long)i);
                break;
            }
        }
        int c = i >= nb ? 1 : j >= nd ? -1 : fentry_cmp(&be, &e[j]);
        const struct fentry *out = NULL;
        if (c < 0) {
            out = &be;
            i++;
        } else {
            if (e[j].st == EXACT_DELTA_ADDED)
                out = &e[j];
            if (c == 0)
                i++; /* a tombstone drops the table's entry */
            j++;
        }
        if (out && exact_writer_put(w, out->fp, out->key, out->len) != 0)
            rc = util_fail(err, errlen, "%s: write failed", o->path);
    }
    free(e);
    if (rc != 0) {
        exact_writer_abort(w);
        return -1;
    }
    struct exact_build_stats s = {.keys_in = nb + nd};
    if (exact_writer_commit(w, &s.count, &s.file_bytes, err, errlen) != 0)
        return -1;
    if (st)
        *st = s;
    return 0;
}
