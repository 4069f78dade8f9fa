/* The gate: adds and their group commit, for every protocol (see gate.h).
 * Worker threads only. */
#include "config.h"

#include "core/gate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/seam.h"
#include "bloom/counting.h"
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

/* Whether an add of keys would pass what the filter can still take (a fuse
 * filter's delta, bloom/fusedelta.h): then it is refused before it is
 * journaled, with err. Items the filter holds already take no room, so
 * only a batch larger than the room left is probed. Under mut_mu. */
static bool no_room(const struct fentry *e, const struct filter_key *keys, size_t n, char *err,
                    size_t errlen)
{
    const struct filter *f = e->v->f;
    uint64_t room = filter_room(f);
    if (room >= n)
        return false;
    uint64_t fresh = 0;
    bool present[64];
    for (size_t base = 0; base < n; base += 64) {
        size_t m = n - base < 64 ? n - base : 64;
        filter_check_batch(f, keys + base, m, present);
        for (size_t i = 0; i < m; i++)
            fresh += !present[i];
    }
    if (fresh <= room)
        return false;
    snprintf(err, errlen,
             "filter %s is full: its %s file takes no adds, and the delta beside it has room for "
             "%llu more (delta_capacity); fold the journal into a new file (bloomgate build "
             "--journal) or raise delta_capacity",
             e->name, filter_layout_name(f->layout), (unsigned long long)room);
    log_error_limited("filter %s: add refused: %s", e->name, err);
    return true;
}

/* An add, for both protocols: into the filter's journal first (a record the
 * batch's replies will wait for, through one group commit under fsync
 * always), then into the version this request holds, then into the version a
 * reload is preparing, if any; and if the journal was rotated meanwhile, into
 * the new journal too. -1 with the reason if a journal refused the add: the
 * add must be refused (it may have reached a version already, which only
 * makes the filter hold more than it was asked to).
 *
 * The reload side (reload.c, publish_pending), per filter, in this order:
 *   R1  swap st->journal from the old journal Jo to the new Jn (same journal:
 *       no swap), seq_cst;
 *   R2  store st->pending = v (the new version, Jn already replayed to e1);
 *   R3  full fence; e2 = journal_end(Jn); replay [e1, e2) onto v;
 *   then publish the catalog, wait out the grace period, clear pending.
 * This side: A1 j = st->journal; A2 append to j; add to e->v; A3 full fence;
 * A4 p = st->pending, add to p; A5 j' = st->journal; if j' != j, A6 append to
 * j', then back to A3 (fence, re-read pending, add there).
 *
 * What must hold when v goes live: v holds every add recorded in Jn, and an
 * add that reached v is recorded in Jn (so a restart, which replays Jn,
 * serves the same set). Adds recorded only in Jo belong to the retired
 * journal, as every add made before the rotation does (docs/operations.md).
 *
 *  - An add whose last journal read (A1 or A5) returned Jn appended to Jn
 *    after it (A2 or A6), then fenced and read pending (A4). With the reload's
 *    R2; fence; read of Jn's end, this is the store-buffering pattern: either
 *    A4 sees v, and the add reaches v, or the reload's read of Jn's end
 *    (the append advanced it before the add's fence) covers the record, which
 *    is replayed.
 *  - An add that reached v (A4 read R2's store) then reads st->journal (A5):
 *    R1 is sequenced before R2, which happens before A4, so A5 returns Jn (or
 *    a later journal), never Jo: the add is appended to Jn too.
 *  - Otherwise every journal read of the add returned Jo and none of its
 *    pending reads saw v: all of it happened before R1, and like any add
 *    made before the rotation it is in Jo and the old version only. No client
 *    can tell it from an add that finished before the reload began: a reply
 *    sent after R1 comes from an add whose A5 followed R1.
 * Before this order the reload stored pending after the swap and the worker
 * never re-read the journal: an add that read Jo before the swap and pending
 * before R2 was told NEW and then answered NO by v (tests/unit/check_rotation).
 * With the journal unchanged, R1 is not there and A5 always returns j: the
 * first case is the whole argument, as before.
 *
 * The loop runs at most twice: a second rotation would need a second publish,
 * whose grace period waits for this worker to leave the callback it is in. */
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

static int mutate_locked(struct gate_batch *b, const struct fentry *e, enum journal_op op,
                         const struct filter_key *keys, size_t n, bool *changed, size_t *refused,
                         char *err, size_t errlen)
{
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
        return -1;
    }
    struct journal *j = atomic_load_explicit(&e->st->journal, memory_order_seq_cst);
    if (op == JOURNAL_OP_ADD && no_room(e, keys, n, err, errlen))
        return -1;
    if (j && record(b, e, j, op, t, keys, n, err, errlen) != 0)
        return -1;
    if (amend_apply_at(e->v, op, t, keys, n, changed, err, errlen) != 0)
        return -1;
    for (;;) {
        atomic_thread_fence(memory_order_seq_cst);
        struct fversion *pending = atomic_load_explicit(&e->st->pending, memory_order_seq_cst);
        if (pending && pending != e->v &&
            amend_apply_at(pending, op, t, keys, n, NULL, err, errlen) != 0)
            return -1;
        struct journal *now = atomic_load_explicit(&e->st->journal, memory_order_seq_cst);
        if (now == j)
            return 0;
        j = now; /* rotated while we added: the record is in the retired journal only */
        if (j && record(b, e, j, op, t, keys, n, err, errlen) != 0)
            return -1;
    }
}

/* Every mutation of one filter holds its fstate's mut_mu from the journal
 * append to the last version it reaches (the reload holds it while it sets
 * `pending` and replays the tail): so the order of the records is the order
 * in which every version saw the mutations, which matters once a REMOVE and
 * an ADD of one item can meet. The lock is per filter and held for one
 * write() (and the bits), as the journal's own mutex already was. */
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
