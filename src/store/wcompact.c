/* The compaction of windowed filters' journals as their slices expire, see
 * wcompact.h. */
#include "config.h"

#include "store/wcompact.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"

/* What a windowed filter's journal keeps: every record but an add whose
 * slice has expired at cur (the ring's rule: ring_live); the oldest epoch
 * kept is noted. */
struct window_keep {
    const struct filter_ring *ring;
    int64_t cur, oldest;
};

static int keep_live(void *ctx, enum journal_op op, int64_t t)
{
    struct window_keep *k = ctx;
    if (op != JOURNAL_OP_ADD || t == JOURNAL_NO_TIME)
        return 1; /* allow, unallow, remove, and adds from before the window */
    int64_t e = ring_epoch_of(k->ring, t);
    if (e < k->cur - (int64_t)k->ring->n)
        return 0;
    if (e < k->oldest)
        k->oldest = e;
    return 1;
}

/* Compact a windowed filter's journal once its oldest kept add has expired
 * (docs/operations.md): at most once a slice, a rewrite of the window's
 * adds. The next is due when the oldest add this one kept expires (or an
 * add made while it ran: the slice before the current one, to be safe with
 * a clock read a little earlier). A clock stepped back by more than a
 * window makes it due at once. Reload thread. */
void wcompact_tick(struct wcompact *w, const char *name, const struct filter_ring *ring,
                   struct journal *j)
{
    int64_t now = clock_now_ms();
    if (w->j != j) {
        w->j = j;
        w->due_ms = INT64_MIN;
    }
    int64_t due = w->due_ms;
    if (now < due && due - now <= ring->window_ms + ring->slice_ms)
        return;
    struct window_keep k = {ring, ring_epoch_of(ring, now), INT64_MAX};
    struct journal_compaction st;
    char err[1024];
    double t0 = util_now();
    if (journal_compact(j, keep_live, &k, &st, err, sizeof(err)) != 0) {
        log_error("filter %s: journal compaction failed: %s; the journal is kept as it was",
                  name, err);
        w->due_ms = now + ring->slice_ms;
        return;
    }
    if (st.records_dropped)
        log_info("filter %s: journal %s compacted: %llu records of expired adds dropped, %llu "
                 "kept, %llu -> %llu bytes (%.3f s)",
                 name, journal_path(j), (unsigned long long)st.records_dropped,
                 (unsigned long long)st.records_kept, (unsigned long long)st.bytes_before,
                 (unsigned long long)st.bytes_after, util_now() - t0);
    int64_t oldest = k.oldest < k.cur - 1 ? k.oldest : k.cur - 1;
    w->due_ms = (oldest + (int64_t)ring->n + 1) * ring->slice_ms;
}
