/* The exact phase of an exact filter's lookup (cmd_int.h): the YES answers
 * of the bits confirmed against the filter's exact table and its run-time
 * delta (docs/design.md, "The exact phase"). Clean traffic rarely gets here:
 * only a YES is confirmed. Worker threads; never blocks (a table page out of
 * the page cache is a page fault, as any mapped file's). */
#include "config.h"

#include <stdlib.h>

#include "core/cmd_exact.h"
#include "core/cmd_int.h"
#include "exact/delta.h"

struct hash128 cmd_exact_hash_fp(const struct fentry *e, const void *item, size_t len, uint64_t *fp)
{
    if (e->v->xd)
        *fp = cmd_exact_fp(e, item, len);
    return cmd_exact_hash(e, item, len);
}

/* Probes a batch asks the table at once: the stack's share of one call. */
#define CONFIRM_BATCH 256

/* cmd_confirm_exact's work: env->bools confirmed, what the table did in cc. */
static void confirm_items(const struct cmd_env *env, struct cmd_call *call,
                          struct cmd_confirmed *cc)
{
    const struct fversion *v = call->e->v;
    size_t n = call->n_items;
    if (n == 1) { /* the common CHECK: no sort, no batch */
        if (env->bools[0]) {
            cc->asked++;
            if (!cmd_exact_confirm(v, env->keys[0].data, env->keys[0].len)) {
                env->bools[0] = false;
                cc->caught++;
            }
        }
        return;
    }
    /* A batch: the delta answers the keys it knows; the rest ask the table
     * together, so that each page is read once, in file order. When the
     * batch's pages look out of the page cache the kernel is asked for all
     * of them first (EXACT_BATCH_WILLNEED_AUTO): their reads then overlap
     * rather than fault one after another on this worker. */
    const struct exact_fp_secret *sec = exact_table_secret(v->xt);
    struct exact_probe p[CONFIRM_BATCH];
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        if (env->bools[i]) {
            const void *k = env->keys[i].data;
            size_t len = env->keys[i].len;
            cc->asked++;
            enum exact_delta_state ds = exact_delta_state(v->xd, k, len);
            if (ds != EXACT_DELTA_NONE) {
                env->bools[i] = ds == EXACT_DELTA_ADDED;
                cc->caught += ds != EXACT_DELTA_ADDED;
            } else {
                p[np++] = (struct exact_probe){exact_fp(sec, k, len), k, len, i};
            }
        }
        if (np == CONFIRM_BATCH || (i + 1 == n && np)) {
            bool ans[CONFIRM_BATCH];
            struct exact_probe q[CONFIRM_BATCH];
            for (size_t j = 0; j < np; j++) {
                q[j] = p[j];
                q[j].slot = j; /* answers into ans by place; p keeps the item's */
            }
            exact_table_confirm(v->xt, q, np, ans, EXACT_BATCH_WILLNEED_AUTO);
            for (size_t j = 0; j < np; j++) {
                if (!ans[j]) {
                    env->bools[p[j].slot] = false;
                    cc->caught++;
                }
            }
            np = 0;
        }
    }
}

/* The exact phase's counters of one call added to its filter's (INFO,
 * /metrics). */
static void confirm_count(const struct cmd_env *env, const struct fentry *e,
                          const struct cmd_confirmed *cc)
{
    if (!cc->asked)
        return;
    struct fstats *fs = stats_fslot(env->stats, env->id_gen, e->id);
    STAT_ADD(fs, confirms, cc->asked);
    STAT_ADD(fs, fp_caught, cc->caught);
}

int cmd_keyed_check_exact(const struct cmd_env *env, struct cmd_call *call)
{
    struct cmd_confirmed cc = {0, 0};
    if (cmd_keyed_check_confirmed(env, call, &cc) != 0)
        return -1;
    confirm_count(env, call->e, &cc);
    return 0;
}

void cmd_confirm_exact(const struct cmd_env *env, struct cmd_call *call)
{
    struct cmd_confirmed cc = {0, 0};
    confirm_items(env, call, &cc);
    confirm_count(env, call->e, &cc);
}
