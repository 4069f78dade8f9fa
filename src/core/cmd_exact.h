/* cmd_exact: the command table's answer for one item of an exact filter, as
 * inline functions over the item's hash, so that the line front's prefetching
 * CHECK (line.c) and cmd_run (cmd.c) apply one rule: the filter's bits, then
 * the allow-list, which turns a YES it names (an exception or a removal) into
 * a NO, then the exact table, if the filter has one, which turns a YES it
 * does not list into a NO (cmd_exact_confirm; the front's ring keeps the
 * item's hash and fingerprint, not its bytes: cmd_exact_confirm_fp).
 * Worker threads; never blocks. */
#ifndef BLOOMGATE_CMD_EXACT_H
#define BLOOMGATE_CMD_EXACT_H

#include <stdbool.h>
#include <stddef.h>

#include "bloom/filter.h"
#include "bloom/shape.h"
#include "exact/delta.h"
#include "store/allow.h"
#include "store/registry.h"

/* How the line front's prefetching ring answers a CHECK of e, decided once
 * per filter looked up (line.c keeps it beside the filter it found), so a
 * request pays one test of it: CMD_RING_NONE, not in the ring (a host or url
 * filter's item expands into several probes, and a keys table compares the
 * item's bytes, which the ring does not keep: cmd_run does both);
 * CMD_RING_PLAIN, from one hash of the item (no exact table: nothing else is
 * computed); CMD_RING_FP, from its hash and, for a YES, its fingerprint
 * under the filter's fingerprint table (cmd_exact_fp, cmd_exact_confirm_fp). */
enum cmd_ring { CMD_RING_NONE = 0, CMD_RING_PLAIN = 1, CMD_RING_FP = 2 };

static inline enum cmd_ring cmd_exact_ring(const struct fentry *e)
{
    const struct fversion *v = e->v;
    if (v->f->keys != FILTER_KEYS_EXACT)
        return CMD_RING_NONE;
    if (!v->xd)
        return CMD_RING_PLAIN;
    return exact_delta_by_fp(v->xd) ? CMD_RING_FP : CMD_RING_NONE;
}

/* The item's fingerprint under e's exact table (e's ring is CMD_RING_FP):
 * what the ring keeps to confirm a YES once the item's bytes are gone. */
static inline uint64_t cmd_exact_fp(const struct fentry *e, const void *item, size_t len)
{
    return exact_fp(exact_delta_secret(e->v->xd), item, len);
}

/* cmd_exact_confirm from the fingerprint cmd_exact_fp gave (v has a
 * fingerprint table: CMD_RING_FP). */
static inline bool cmd_exact_confirm_fp(const struct fversion *v, uint64_t fp)
{
    return exact_delta_contains_fp(v->xd, fp);
}

/* The exact phase: whether the item a YES was given for is listed, by v's
 * exact table and its delta (docs/design.md, "The exact phase"); true for a
 * filter without a table (its YES stands). */
static inline bool cmd_exact_confirm(const struct fversion *v, const void *item, size_t len)
{
    return !v->xd || exact_delta_contains(v->xd, item, len);
}

/* The item's hash under e's filter, the block it names prefetched: the
 * first step of an answer given later (cmd_exact_answer). */
static inline struct hash128 cmd_exact_hash(const struct fentry *e, const void *item, size_t len)
{
    const struct filter *f = e->v->f;
    struct hash128 h = filter_hash(f, item, len);
    __builtin_prefetch(filter_first_line(f, h), 0, 0);
    return h;
}

/* cmd_exact_hash and, for e with an exact table, the item's fingerprint
 * into *fp (cmd_exact_fp): the line front's ring entry for such a filter,
 * out of line (cmd_confirm.c), so that the front's inlined hash of a filter
 * without a table stays its only copy of the hash code. */
struct hash128 cmd_exact_hash_fp(const struct fentry *e, const void *item, size_t len,
                                 uint64_t *fp);

/* The allow-list's say on a YES for the item of hash h (the set keys items
 * by this same hash): its flags, ALLOW_EXCEPT (an exception: the NO counts
 * as allowed) or ALLOW_REMOVED; 0 when the YES stands. No probe while the
 * set is empty. */
static inline unsigned cmd_exact_veto(const struct fversion *v, struct hash128 h)
{
    return allow_any(v->allow) ? allow_get(v->allow, h) : 0;
}

/* The answer for the item of hash h in e: the bits, then the veto. */
static inline bool cmd_exact_answer(const struct fentry *e, struct hash128 h)
{
    const struct fversion *v = e->v;
    return filter_check_hash(v->f, h) && !cmd_exact_veto(v, h);
}

#endif
