/* ring: a time-windowed filter, a ring of sub-filters (slices) that items
 * expire from (docs/design.md, "Windowed filters"). A window W cut into N
 * slices of L = W/N: time is numbered in slices (epoch = floor(t / L)); an
 * add made at t sets its bits in the slice of epoch(t); a check ORs every
 * slice whose epoch lies in [cur - N, cur], cur = epoch(now) (or later: see
 * ring_live). That is N + 1
 * sub-filters, slot = epoch mod (N + 1), so an item added at t is reported
 * through t + W and never from t + W + L on:
 *     (epoch(t) + N + 1) * L  >  t + W   and   <=  t + W + L.
 * Liveness is decided by the clock at each check, never by a rotation having
 * run, so the bound holds however late the slice is cleared.
 *
 * Threads: checks from any thread, lock-free. Adds and clearing take the
 * ring's mutex (the callers already order adds per filter). A slot being
 * reused is marked dead, cleared, then given its new epoch; a check reads a
 * slot's epoch before and after its probes and drops what a slot that
 * changed between told it (a seqlock read), so no check ever takes a
 * half-cleared slice for a live one. */
#ifndef BLOOMGATE_RING_H
#define BLOOMGATE_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/filter.h"

#define RING_MAX_SLICES 64
#define RING_EMPTY INT64_MIN      /* a slot that holds no epoch (never used, or cleared) */
#define RING_DEAD (INT64_MIN + 1) /* a slot being cleared */

struct filter_ring {
    unsigned n;        /* slices N: the window is N of them */
    unsigned slots;    /* N + 1 sub-filters */
    int64_t window_ms; /* W */
    int64_t slice_ms;  /* L = W / N */
    struct filter *slot[RING_MAX_SLICES + 1];
    _Atomic int64_t epoch[RING_MAX_SLICES + 1]; /* the epoch slot i holds; RING_EMPTY, RING_DEAD */
    pthread_mutex_t mu;                         /* adds and clearing */
};

/* What INFO shows of one slot. */
struct ring_slice_info {
    int64_t epoch;     /* RING_EMPTY if none */
    bool live;         /* a check reads it now */
    int64_t starts_ms; /* epoch * L */
    uint64_t items, bits_set, bits;
};

/* The epoch time t falls in (floor division: t may precede 1970). */
static inline int64_t ring_epoch_of(const struct filter_ring *r, int64_t t)
{
    return t >= 0 ? t / r->slice_ms : -((-t + r->slice_ms - 1) / r->slice_ms);
}

/* Live: not older than the window at cur. A slot of a later epoch than cur
 * is live too: it was claimed by a thread whose clock read is later than
 * this one's (a check that read the clock, then was descheduled while the
 * ring turned), and holds adds made since. */
static inline bool ring_live(const struct filter_ring *r, int64_t e, int64_t cur)
{
    return e > RING_DEAD && e >= cur - (int64_t)r->n;
}

/* A windowed filter: the returned filter is a head that every filter_*
 * call accepts (checks read the clock and OR the live slices, adds go to the
 * current slice), sized from plan per slice. capacity and fpr are what the
 * head reports. NULL with err. Loading thread. */
struct filter *ring_filter_create(const struct filter_plan *slice_plan, uint64_t seed,
                                  unsigned slices, int64_t window_ms, uint64_t capacity, double fpr,
                                  char *err, size_t errlen);
/* Frees the ring and its slices (filter_free calls it for a head). */
void ring_free(struct filter_ring *r);

/* Check one hash at time now (ms). Any thread. */
bool ring_check_hash(struct filter_ring *r, const struct filter *head, struct hash128 h,
                     int64_t now);
/* Check n keys at time now: hashed once, every live slice probed. */
void ring_check_batch(struct filter_ring *r, const struct filter *head,
                      const struct filter_key *keys, size_t n, bool *present, int64_t now);
/* Add n keys made at time t, seen at time now: into the slice of epoch(t)
 * (t later than now counts as now); an add whose slice has expired already
 * (a journal replayed after its window) is dropped, added[i] false. */
void ring_add_batch(struct filter_ring *r, const struct filter *head, const struct filter_key *keys,
                    size_t n, bool *added, int64_t t, int64_t now);
bool ring_add_hash(struct filter_ring *r, struct hash128 h, int64_t t, int64_t now);
/* Clear every slot whose epoch is no longer live at now: the memory and
 * INFO's figures follow the window even when no add comes. The reload
 * thread, once a second. Returns how many slots it cleared. */
unsigned ring_expire(struct filter_ring *r, int64_t now);

/* Figures of the live slices at now. */
uint64_t ring_items(struct filter_ring *r, int64_t now);
uint64_t ring_bits_set(struct filter_ring *r, int64_t now);
double ring_estimated_fpr(struct filter_ring *r, int64_t now);
/* Slot i (i < r->slots), as INFO shows it. */
void ring_slice_info(struct filter_ring *r, unsigned i, int64_t now, struct ring_slice_info *out);

#endif
