/* The windowed filter's ring of slices, see ring.h. */
#include "config.h"

#include "bloom/ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

#define CHUNK 16 /* keys hashed and prefetched together in a batched check */

/* Whether slice s holds h: for the blocked layout by the masks m made once
 * for every slice (m NULL: the classic layout's own probe). */
static inline bool slot_has(const struct filter *s, struct hash128 h, const uint64_t *m)
{
    return m ? filter_block_has(filter_first_line(s, h), m) : filter_check_hash(s, h);
}

static const struct filter_comp_ops ring_ops;

struct filter *ring_filter_create(const struct filter_plan *slice_plan, uint64_t seed,
                                  unsigned slices, int64_t window_ms, uint64_t capacity, double fpr,
                                  char *err, size_t errlen)
{
    if (slices < 1 || slices > RING_MAX_SLICES || window_ms <= 0 || window_ms % slices) {
        snprintf(err, errlen, "a window of %lld ms cannot be cut into %u slices",
                 (long long)window_ms, slices);
        return NULL;
    }
    struct filter_ring *r = calloc(1, sizeof(*r));
    struct filter *head = calloc(1, sizeof(*head));
    if (!r || !head) {
        free(r);
        free(head);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->n = slices;
    r->slots = slices + 1;
    r->window_ms = window_ms;
    r->slice_ms = window_ms / slices;
    pthread_mutex_init(&r->mu, NULL);
    for (unsigned i = 0; i < r->slots; i++) {
        atomic_init(&r->epoch[i], RING_EMPTY);
        if (!(r->slot[i] = filter_create(slice_plan, seed, err, errlen))) {
            ring_free(r);
            free(head);
            return NULL;
        }
    }
    filter_comp_head(head, r->slot[0], capacity, fpr, r, &ring_ops);
    head->ring = r;
    return head;
}

void ring_free(struct filter_ring *r)
{
    if (!r)
        return;
    for (unsigned i = 0; i < r->slots; i++)
        filter_free(r->slot[i]);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* The live slots at now, their epochs as read (acquire: a slot's epoch is
 * stored after its clearing). */
static unsigned live_slots(struct filter_ring *r, int64_t now, unsigned *idx, int64_t *seen)
{
    int64_t cur = ring_epoch_of(r, now);
    unsigned m = 0;
    for (unsigned i = 0; i < r->slots; i++) {
        int64_t e = atomic_load_explicit(&r->epoch[i], memory_order_acquire);
        if (ring_live(r, e, cur)) {
            idx[m] = i;
            seen[m++] = e;
        }
    }
    return m;
}

/* The second read of the seqlock: a bit per live slot whose epoch is no
 * longer the one its probes began under (it was being reused). */
static uint64_t changed_slots(struct filter_ring *r, const unsigned *idx, const int64_t *seen,
                              unsigned m)
{
    atomic_thread_fence(memory_order_acquire);
    uint64_t bad = 0;
    for (unsigned j = 0; j < m; j++)
        if (atomic_load_explicit(&r->epoch[idx[j]], memory_order_relaxed) != seen[j])
            bad |= 1ull << j;
    return bad;
}

/* Any thread. A seqlock read: if a slot changed under the probes and no
 * unchanged slot answered, read again (the ring turned meanwhile, so the
 * slots now hold later epochs, which are live; a slot is reused at most
 * once a slice, so this ends). */
bool ring_check_hash(struct filter_ring *r, const struct filter *head, struct hash128 h,
                     int64_t now)
{
    unsigned idx[RING_MAX_SLICES + 1];
    int64_t seen[RING_MAX_SLICES + 1];
    uint64_t masks[8], *mk = NULL;
    if (head->layout == FILTER_BLOCKED)
        filter_block_masks(h, head->k, mk = masks);
    for (;;) {
        unsigned m = live_slots(r, now, idx, seen);
        uint64_t hit = 0;
        for (unsigned j = 0; j < m && !hit; j++)
            if (slot_has(r->slot[idx[j]], h, mk))
                hit = 1ull << j;
        uint64_t bad = changed_slots(r, idx, seen, m);
        if (hit & ~bad)
            return true;
        if (!bad)
            return false;
    }
}

/* Any thread: CHUNK keys at a time are hashed and the block each has in
 * every live slice prefetched, then tested, so the misses of all the
 * slices overlap; one seqlock check covers the whole batch. */
void ring_check_batch(struct filter_ring *r, const struct filter *head,
                      const struct filter_key *keys, size_t n, bool *present, int64_t now)
{
    unsigned idx[RING_MAX_SLICES + 1];
    int64_t seen[RING_MAX_SLICES + 1];
    unsigned m = live_slots(r, now, idx, seen);
    if (m == 0) {
        memset(present, 0, n * sizeof(*present));
        return;
    }
    /* 64 slots at most; a batch's hit masks live on the stack in chunks. */
    uint64_t mask[CHUNK];
    struct hash128 h[CHUNK];
    uint64_t bits[CHUNK][8];
    bool blocked = head->layout == FILTER_BLOCKED;
    for (size_t base = 0; base < n; base += CHUNK) {
        size_t c = n - base < CHUNK ? n - base : CHUNK;
        for (size_t i = 0; i < c; i++) {
            h[i] = filter_hash(head, keys[base + i].data, keys[base + i].len);
            if (blocked)
                filter_block_masks(h[i], head->k, bits[i]);
            for (unsigned j = 0; j < m; j++)
                __builtin_prefetch(filter_first_line(r->slot[idx[j]], h[i]), 0, 0);
        }
        for (size_t i = 0; i < c; i++) {
            mask[i] = 0;
            for (unsigned j = 0; j < m && !mask[i]; j++)
                if (slot_has(r->slot[idx[j]], h[i], blocked ? bits[i] : NULL))
                    mask[i] |= 1ull << j;
            present[base + i] = mask[i] != 0;
        }
        /* A slot reused under the probes: its answers are void, and the
         * keys it could have answered are read again, alone. */
        uint64_t bad = changed_slots(r, idx, seen, m);
        for (size_t i = 0; bad && i < c; i++)
            if (!present[base + i] || (mask[i] & bad))
                present[base + i] = ring_check_hash(r, head, h[i], now);
        if (bad)
            m = live_slots(r, now, idx, seen);
    }
}

/* Clear slot i and give it epoch e (RING_EMPTY: none). Under r->mu. The
 * dead mark first (a check that reads it skips the slot; one that read the
 * old epoch sees it changed after its probes), the release fence orders the
 * mark before the clearing, the new epoch is stored after it (release). */
static void reuse(struct filter_ring *r, unsigned i, int64_t e)
{
    atomic_store_explicit(&r->epoch[i], RING_DEAD, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    filter_clear(r->slot[i]);
    atomic_store_explicit(&r->epoch[i], e, memory_order_release);
}

/* Under the ring's mutex: the slot an add made at t goes to, reused for
 * epoch(t) if it held an older (expired) one; -1 if that slice has expired
 * already. */
static int claim(struct filter_ring *r, int64_t t, int64_t now)
{
    int64_t cur = ring_epoch_of(r, now);
    int64_t e = ring_epoch_of(r, t);
    if (e > cur)
        e = cur; /* made by a clock ahead of ours: the newest slice */
    if (e < cur - (int64_t)r->n)
        return -1;
    unsigned i = (unsigned)(((e % r->slots) + r->slots) % r->slots);
    int64_t have = atomic_load_explicit(&r->epoch[i], memory_order_relaxed);
    if (have == e)
        return (int)i;
    if (have > e)
        return -1;  /* the slot holds a later epoch: e is older than the window */
    reuse(r, i, e); /* have is older than e, so expired (e <= cur) */
    return (int)i;
}

/* At most one add or clearing at a time per ring (callers order adds
 * anyway: fstate's mut_mu, the replay's one thread). */
void ring_add_batch(struct filter_ring *r, const struct filter *head, const struct filter_key *keys,
                    size_t n, bool *added, int64_t t, int64_t now)
{
    (void)head;
    pthread_mutex_lock(&r->mu);
    int i = claim(r, t, now);
    if (i >= 0)
        filter_add_batch(r->slot[i], keys, n, added);
    else if (added)
        memset(added, 0, n * sizeof(*added));
    pthread_mutex_unlock(&r->mu);
}

bool ring_add_hash(struct filter_ring *r, struct hash128 h, int64_t t, int64_t now)
{
    pthread_mutex_lock(&r->mu);
    int i = claim(r, t, now);
    bool fresh = i >= 0 && filter_add_hash(r->slot[i], h);
    pthread_mutex_unlock(&r->mu);
    return fresh;
}

unsigned ring_expire(struct filter_ring *r, int64_t now)
{
    int64_t cur = ring_epoch_of(r, now);
    unsigned cleared = 0;
    pthread_mutex_lock(&r->mu);
    for (unsigned i = 0; i < r->slots; i++) {
        int64_t e = atomic_load_explicit(&r->epoch[i], memory_order_relaxed);
        if (e > RING_DEAD && e < cur - (int64_t)r->n) {
            reuse(r, i, RING_EMPTY);
            cleared++;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return cleared;
}

uint64_t ring_items(struct filter_ring *r, int64_t now)
{
    unsigned idx[RING_MAX_SLICES + 1];
    int64_t seen[RING_MAX_SLICES + 1];
    unsigned m = live_slots(r, now, idx, seen);
    uint64_t s = 0;
    for (unsigned j = 0; j < m; j++)
        s += filter_items(r->slot[idx[j]]);
    return s;
}

uint64_t ring_bits_set(struct filter_ring *r, int64_t now)
{
    unsigned idx[RING_MAX_SLICES + 1];
    int64_t seen[RING_MAX_SLICES + 1];
    unsigned m = live_slots(r, now, idx, seen);
    uint64_t s = 0;
    for (unsigned j = 0; j < m; j++)
        s += filter_bits_set(r->slot[idx[j]]);
    return s;
}

/* A check is a false positive if any live slice's is. */
double ring_estimated_fpr(struct filter_ring *r, int64_t now)
{
    unsigned idx[RING_MAX_SLICES + 1];
    int64_t seen[RING_MAX_SLICES + 1];
    unsigned m = live_slots(r, now, idx, seen);
    double none = 1.0;
    for (unsigned j = 0; j < m; j++)
        none *= 1.0 - filter_estimated_fpr(r->slot[idx[j]]);
    return 1.0 - none;
}

void ring_slice_info(struct filter_ring *r, unsigned i, int64_t now, struct ring_slice_info *out)
{
    int64_t e = atomic_load_explicit(&r->epoch[i], memory_order_acquire);
    memset(out, 0, sizeof(*out));
    out->epoch = e > RING_DEAD ? e : RING_EMPTY;
    out->live = ring_live(r, e, ring_epoch_of(r, now));
    out->starts_ms = out->epoch != RING_EMPTY ? e * r->slice_ms : 0;
    out->items = filter_items(r->slot[i]);
    out->bits_set = filter_bits_set(r->slot[i]);
    out->bits = filter_bytes(r->slot[i]) * 8;
}

/* ---- what a head's filter_* calls reach (struct filter_comp_ops), at the
 * clock's time; any thread, adds under the ring's mutex as above ---- */

static bool ops_add_hash(void *c, struct hash128 h)
{
    int64_t now = clock_now_ms();
    return ring_add_hash(c, h, now, now);
}

static void ops_add_batch(void *c, const struct filter *head, const struct filter_key *keys,
                          size_t n, bool *added)
{
    int64_t now = clock_now_ms();
    ring_add_batch(c, head, keys, n, added, now, now);
}

static bool ops_check_hash(void *c, const struct filter *head, struct hash128 h)
{
    return ring_check_hash(c, head, h, clock_now_ms());
}

static void ops_check_batch(void *c, const struct filter *head, const struct filter_key *keys,
                            size_t n, bool *present)
{
    ring_check_batch(c, head, keys, n, present, clock_now_ms());
}

static uint64_t ops_items(void *c)
{
    return ring_items(c, clock_now_ms());
}

static uint64_t ops_bits_set(void *c)
{
    return ring_bits_set(c, clock_now_ms());
}

/* Every slot's memory, live or not: what the ring holds. */
static uint64_t ops_bytes(void *c)
{
    struct filter_ring *r = c;
    return filter_bytes(r->slot[0]) * r->slots;
}

static double ops_estimated_fpr(void *c)
{
    return ring_estimated_fpr(c, clock_now_ms());
}

static void ops_free(void *c)
{
    ring_free(c);
}

static const struct filter_comp_ops ring_ops = {FILTER_COMP_OPS_EACH};
