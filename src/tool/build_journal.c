/* `bloomgate build --journal`: the journals' records, in the order given and
 * in each journal's order, as the daemon applies them (store/amend.c): an
 * add goes in after the lists; a removal keeps its item out of the new filter,
 * the lists' copy of it too, unless a later add brings it back; exceptions,
 * which a Bloom filter cannot hold, are counted for the caller to keep in an
 * allow file. Calling thread. */
#include "config.h"

#include "tool/build_journal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/journal.h"

struct jstate {
    struct filter *f;
    struct allow_set *s;
    int oom;
};

/* The last of add/remove and of allow/unallow wins, per item. */
static int state_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item,
                      size_t len)
{
    struct jstate *js = ctx;
    (void)time_ms;
    struct hash128 h = filter_hash(js->f, item, len);
    unsigned set = op == JOURNAL_OP_REMOVE ? ALLOW_REMOVED : op == JOURNAL_OP_ALLOW ? ALLOW_EXCEPT : 0;
    unsigned clear =
        op == JOURNAL_OP_ADD ? ALLOW_REMOVED : op == JOURNAL_OP_UNALLOW ? ALLOW_EXCEPT : 0;
    if (allow_update(js->s, h, set, clear, NULL) != 0) {
        js->oom = 1;
        return 1;
    }
    return 0;
}

struct allow_set *build_journal_state(const struct build_opts *o, struct filter *f, char *err,
                                      size_t errlen)
{
    struct jstate js = {f, allow_new(), 0};
    if (!js.s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < o->n_journals; i++) {
        if (journal_read_file_ops(o->journals[i], state_item, &js, NULL, err, errlen) < 0) {
            if (js.oom)
                snprintf(err, errlen, "out of memory reading %s", o->journals[i]);
            allow_free(js.s);
            return NULL;
        }
    }
    return js.s;
}

struct fold {
    struct filter *f;
    const struct allow_set *state;
    uint64_t *new_per_shard;
    struct exact_builder *xb; /* --exact: the table takes the same items */
    struct build_xacc *xacc;
    int xfail;
    char xerr[512];
};

/* An add goes in unless the item's last word in the journals is a removal. */
static int fold_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item, size_t len)
{
    struct fold *fo = ctx;
    (void)time_ms;
    if (op != JOURNAL_OP_ADD)
        return 0;
    struct hash128 h = filter_hash(fo->f, item, len);
    if (allow_get(fo->state, h) & ALLOW_REMOVED)
        return 0;
    uint32_t shard;
    if (filter_add_hash_raw(fo->f, h, &shard))
        fo->new_per_shard[shard]++;
    if (fo->xb && build_exact_put(fo->xacc, fo->xb, item, len, fo->xerr, sizeof(fo->xerr)) != 0) {
        fo->xfail = 1;
        return 1;
    }
    return 0;
}

int build_journal_fold(const struct build_opts *o, struct filter *f, const struct allow_set *state,
                       struct exact_builder *xb, uint64_t *items, char *err, size_t errlen)
{
    struct fold fo = {.f = f, .state = state, .xb = xb};
    fo.new_per_shard = calloc(f->shard_count, sizeof(uint64_t));
    fo.xacc = xb ? calloc(1, sizeof(*fo.xacc)) : NULL;
    if (!fo.new_per_shard || (xb && !fo.xacc)) {
        free(fo.new_per_shard);
        free(fo.xacc);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < o->n_journals && rc == 0; i++) {
        int64_t n = journal_read_file_ops(o->journals[i], fold_item, &fo, NULL, err, errlen);
        if (n < 0)
            rc = -1;
        else
            *items += (uint64_t)n;
    }
    if (rc != 0 && fo.xfail)
        snprintf(err, errlen, "%s", fo.xerr);
    if (rc == 0 && xb && build_exact_flush(fo.xacc, xb, err, errlen) != 0)
        rc = -1;
    if (fo.xacc) {
        build_exact_acc_free(fo.xacc);
        free(fo.xacc);
    }
    for (uint32_t s = 0; s < f->shard_count; s++)
        atomic_fetch_add(&f->shards[s].items, fo.new_per_shard[s]);
    free(fo.new_per_shard);
    return rc;
}
