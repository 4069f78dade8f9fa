/* The gate: adds and their group commit, for every protocol (see gate.h).
 * Worker threads only. */
#include "config.h"

#include "core/gate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/seam.h"
#include "bloom/counting.h"
#include "conf/conf.h"
#include "store/amend.h"
#include "store/journal.h"

/* Append one record to j and remember j for the batch's group commit. */
static int record(struct gate_batch *b, const struct fentry *e, struct journal *j,
                  enum journal_op op, int64_t t, const struct filter_key *keys, size_t n,
                  char *err, size_t errlen)
{
    if (journal_append_op(j, op, t, keys, n, err, errlen) != 0) {
        /* Two call sites, so that the summary of suppressed lines (which
         * quotes the format) still says which kind of mutation was refused. */
        if (op == JOURNAL_OP_ADD)
            log_error_limited("filter %s: add refused: %s", e->name, err);
        else
            log_error_limited("filter %s: %s refused: %s", e->name, journal_op_name(op), err);
        return -1;
    }
    seam_gate_after_append();
    bool seen = false;
    for (unsigned i = 0; i < b->n_dirty && !seen; i++)
        seen = b->dirty[i] == j;
    if (!seen && b->n_dirty < GATE_MAX_DIRTY) {
        b->dirty[b->n_dirty++] = j;
    } else if (!seen && journal_commit(j, err, errlen) != 0) {
        /* More journals in one batch than we track: this one commits now. */
        log_error_limited("filter %s: add refused: %s", e->name, err);
        return -1;
    }
    return 0;
}

/* How many of keys f does not hold yet (each would take room), counted
 * only when n passes room: items the filter holds already take none. */
static uint64_t fresh_keys(const struct filter *f, const struct filter_key *keys, size_t n,
                           uint64_t room)
{
    if (room >= n)
        return 0;
    uint64_t fresh = 0;
    bool present[64];
    for (size_t base = 0; base < n; base += 64) {
        size_t m = n - base < 64 ? n - base : 64;
        filter_check_batch(f, keys + base, m, present);
        for (size_t i = 0; i < m; i++)
            fresh += !present[i];
    }
    return fresh;
}

/* Whether an add of keys would pass what the filter can still take (a fuse
 * filter's delta, bloom/fusedelta.h): then it is refused before it is
 * journaled, with err. Under mut_mu. */
static bool no_room(const struct fentry *e, const struct filter_key *keys, size_t n, char *err,
                    size_t errlen)
{
    const struct filter *f = e->v->f;
    uint64_t room = filter_room(f);
    if (fresh_keys(f, keys, n, room) <= room)
        return false;
    snprintf(err, errlen,
             "filter %s is full: its %s file takes no adds, and the delta beside it has room for "
             "%llu more (delta_capacity); fold the journal into a new file (bloomgate build "
             "--journal) or raise delta_capacity",
             e->name, filter_layout_name(f->layout), (unsigned long long)room);
    log_error_limited("filter %s: add refused: %s", e->name, err);
    return true;
}

/* A fixed-size Bloom filter (no growth, no window, no fuse file) under
 * `full refuse` takes no add that would bring its items (adds that set a
 * new bit) past its capacity: past it the filter still works, but its
 * false-positive rate rises above its target (docs/design.md). Items it
 * holds already pass, as RedisBloom's NONSCALING filters let them. Under
 * mut_mu, so no other add runs between the count and the record. */
static bool past_capacity(const struct gate_batch *b, const struct fentry *e,
                          const struct filter_key *keys, size_t n, char *err, size_t errlen)
{
    const struct filter *f = e->v->f;
    if (f->comp || f->layout == FILTER_FUSE || !e->v->refuse_full)
        return false;
    uint64_t items = filter_items(f), room = items < f->capacity ? f->capacity - items : 0;
    if (fresh_keys(f, keys, n, room) <= room)
        return false;
    snprintf(err, errlen,
             "filter %s is full: it holds %llu items of its capacity %llu, and `full refuse` "
             "keeps its false-positive rate at its target; rebuild it larger or set `full accept`",
             e->name, (unsigned long long)items, (unsigned long long)f->capacity);
    log_error_limited("filter %s: add refused: %s", e->name, err);
    return true;
}

bool gate_is_full(const char *err)
{
    if (strncmp(err, "filter ", 7) != 0)
        return false;
    const char *sp = strchr(err + 7, ' ');
    return sp && strncmp(sp, " is full: ", 10) == 0;
}

/* A REMOVE on a counting filter takes counts only from an item the filter
 * holds as often as the request removes it: any other removal would take
 * counts that other items hold and could make one of them disappear (a
 * false negative; docs/design.md, "Counting filters"). Checked before the
 * journal record, under mut_mu, so no other mutation of the filter runs
 * between the check and the decrements: the whole request is refused
 * (GATE_REFUSED, nothing journaled or changed), naming the first item that
 * fails. Worker threads. */
static int counting_refusal(const struct fentry *e, const struct filter_key *keys, size_t n,
                            size_t *refused, char *err, size_t errlen)
{
    size_t bad = counting_can_remove(e->v->f, keys, n);
    if (bad == n)
        return 0;
    if (bad == COUNTING_NO_MEMORY) {
        snprintf(err, errlen, "out of memory checking the items to remove");
        return -1;
    }
    char shown[72];
    size_t len = keys[bad].len < 64 ? keys[bad].len : 64, o = 0;
    const unsigned char *p = keys[bad].data;
    for (size_t i = 0; i < len; i++) /* the item as text: no control bytes into a reply */
        shown[o++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
    shown[o] = '\0';
    snprintf(err, errlen,
             "'%s%s' is not in counting filter %s (a counter of it is zero: never added, or "
             "removed as often as added); removing it would take counts other items hold: "
             "nothing removed",
             shown, keys[bad].len > 64 ? "..." : "", e->name);
    if (refused)
        *refused = bad;
    return GATE_REFUSED;
}

/* One mutation, for every protocol, under the filter's mut_mu (gate_mutate_ex):
 * into the filter's journal first (a record the batch's replies will wait
 * for, through one group commit under fsync always), then into the version
 * this request holds, then into the version a reload is preparing, if any.
 * -1 with the reason if the journal refused it (nothing was done; a refused
 * check comes before the record) or a version could not take it (the record
 * is in the journal: the request is refused, and a replay will apply it).
 *
 * Why one read of the journal and one of `pending` are enough: a reload
 * changes both only under mut_mu too, in one critical section (reload.c,
 * publish_pending: swap the journal if it rotates, store `pending`, read the
 * journal's end and replay the tail onto the new version v). Under mut_mu,
 * journal and pending are stable, so a mutation is wholly before that
 * section or wholly after it:
 *  - before: it is recorded in the journal it read and applied to the served
 *    version. With the journal unchanged its record lies before the end the
 *    reload reads, and the tail replay brings it into v; with a rotated
 *    journal it lives in the retired journal and the old version only, like
 *    every mutation made before the rotation (docs/operations.md).
 *  - after: it reads the new journal and v, is recorded in the one and
 *    applied to the other (once, if its request already holds v).
 * So when v goes live it holds exactly its file plus its journal, in the
 * journal's order, which is what a restart replays. tests/unit/store/check_reload
 * forces both orders. (While the swap came before the lock, an add could
 * read the old journal and then see v, so it re-read the journal after
 * `pending`, with a fence on each side and a six-step proof.) */
static int mutate_locked(struct gate_batch *b, const struct fentry *e, enum journal_op op,
                         const struct filter_key *keys, size_t n, bool *changed, size_t *refused,
                         char *err, size_t errlen)
{
    /* Renamed, its journal given to the new name (reload.c, publish_pending):
     * the new name's version would not see this. */
    if (atomic_load_explicit(&e->st->leaving, memory_order_relaxed)) {
        snprintf(err, errlen,
                 "filter %s is leaving the configuration: its journal went to a new name", e->name);
        return -1;
    }
    if (op == JOURNAL_OP_REMOVE && e->v->f->layout == FILTER_COUNTING && !e->v->f->comp) {
        int rc = counting_refusal(e, keys, n, refused, err, errlen);
        if (rc != 0)
            return rc;
    }
    /* A windowed filter's mutation carries its time: into the record, so a
     * replay puts it in the same slice, and into every version it reaches. */
    int64_t t = e->v->f->ring ? clock_now_ms() : JOURNAL_NO_TIME;
    /* A growing filter at its max_memory refuses before anything is
     * recorded (under mut_mu: no other add of this filter runs). */
    char why[512];
    if (amend_admit(e->v, op, n, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "filter %s: add refused: %s", e->name, why);
        log_error_limited("filter %s: add refused: %s", e->name, why);
        return GATE_LIMIT;
    }
    struct journal *j = atomic_load(&e->st->journal);
    /* A word list's own limit (words_delta_max) was amend_admit's. */
    if (op == JOURNAL_OP_ADD && !e->v->words &&
        (no_room(e, keys, n, err, errlen) || past_capacity(b, e, keys, n, err, errlen)))
        return -1;
    if (j && record(b, e, j, op, t, keys, n, err, errlen) != 0)
        return -1;
    if (amend_apply_at(e->v, op, t, keys, n, changed, err, errlen) != 0)
        return -1;
    struct fversion *pending = atomic_load(&e->st->pending);
    if (pending && pending != e->v &&
        amend_apply_at(pending, op, t, keys, n, NULL, err, errlen) != 0)
        return -1;
    return 0;
}

/* Every mutation of one filter holds its fstate's mut_mu from the journal
 * append to the last version it reaches (the reload holds it while it swaps
 * the journal, sets `pending` and replays the tail): so the order of the
 * records is the order in which every version saw the mutations, which
 * matters once a REMOVE and an ADD of one item can meet. The lock is per
 * filter and held for one write() (and the bits), as the journal's own mutex
 * already was. Worker threads. */
int gate_mutate_ex(struct gate_batch *b, const struct fentry *e, enum journal_op op,
                   const struct filter_key *keys, size_t n, bool *changed, size_t *refused,
                   char *err, size_t errlen)
{
    pthread_mutex_lock(&e->st->mut_mu);
    int rc = mutate_locked(b, e, op, keys, n, changed, refused, err, errlen);
    pthread_mutex_unlock(&e->st->mut_mu);
    return rc;
}

int gate_mutate(struct gate_batch *b, const struct fentry *e, enum journal_op op,
                const struct filter_key *keys, size_t n, bool *changed, char *err, size_t errlen)
{
    return gate_mutate_ex(b, e, op, keys, n, changed, NULL, err, errlen);
}

int gate_add(struct gate_batch *b, const struct fentry *e, const struct filter_key *keys, size_t n,
             bool *added, char *err, size_t errlen)
{
    return gate_mutate(b, e, JOURNAL_OP_ADD, keys, n, added, err, errlen);
}

/* Group commit: before any reply of a batch is written, make its journal
 * records durable (a no-op unless a journal's policy is `always`). False if a
 * commit failed: then no reply of the batch may go out. */
bool gate_commit(struct gate_batch *b)
{
    bool ok = true;
    char err[512];
    for (unsigned i = 0; i < b->n_dirty; i++) {
        if (journal_commit(b->dirty[i], err, sizeof(err)) != 0) {
            log_error_limited("journal commit failed: %s; the replies of this batch are withheld",
                              err);
            ok = false;
        }
    }
    b->n_dirty = 0;
    return ok;
}
