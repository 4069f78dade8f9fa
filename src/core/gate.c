/* The gate: adds and their group commit, for every protocol (see gate.h).
 * Worker threads only. */
#include "config.h"

#include "core/gate.h"

#include <stdatomic.h>

#include "base/log.h"
#include "store/journal.h"

/* An add, for both protocols: into the filter's journal first (a record the
 * batch's replies will wait for, through one group commit under fsync
 * always), then into the version this request holds, then into the version a
 * reload is preparing, if any. -1 with the reason if the journal refused the
 * add: nothing was added, and the add must be refused.
 *
 * Why the third step: a reload replays the journal onto its new version and
 * then publishes it; an add that reaches only the old version after the
 * replay read the journal's end would be missing from the new one, and a
 * client that was told NEW would get NO. The reload thread publishes
 * st->pending before it reads the journal's end; this thread appends before
 * it reads st->pending. With a full fence on both sides, either this thread
 * sees the pending version (and adds to it) or the replay sees the record. */
int gate_add(struct gate_batch *b, const struct fentry *e, const struct filter_key *keys, size_t n,
             bool *added, char *err, size_t errlen)
{
    struct journal *j = atomic_load_explicit(&e->st->journal, memory_order_acquire);
    if (j) {
        if (journal_append(j, keys, n, err, errlen) != 0) {
            log_error("filter %s: %s", e->name, err);
            return -1;
        }
        bool seen = false;
        for (unsigned i = 0; i < b->n_dirty && !seen; i++)
            seen = b->dirty[i] == j;
        if (!seen && b->n_dirty < GATE_MAX_DIRTY) {
            b->dirty[b->n_dirty++] = j;
        } else if (!seen && journal_commit(j, err, errlen) != 0) {
            /* More journals in one batch than we track: this one commits now. */
            log_error("filter %s: %s", e->name, err);
            return -1;
        }
    }
    filter_add_batch(e->v->f, keys, n, added);
    atomic_thread_fence(memory_order_seq_cst);
    struct fversion *pending = atomic_load_explicit(&e->st->pending, memory_order_acquire);
    if (pending && pending != e->v)
        filter_add_batch(pending->f, keys, n, NULL);
    return 0;
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
            log_error("journal commit failed: %s; the replies of this batch are withheld", err);
            ok = false;
        }
    }
    b->n_dirty = 0;
    return ok;
}
