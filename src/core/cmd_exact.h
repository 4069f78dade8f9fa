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

/* Whether a CHECK of e is answered from one hash of its item (and, with a
 * fingerprint table, its fingerprint): its keys are exact (a host or url
 * filter's item expands into several probes, which cmd_run does), and it has
 * no exact table or one of fingerprints (a keys table compares the item's
 * bytes, which the line front's ring does not keep: cmd_run does that). */
static inline bool cmd_exact_keys(const struct fentry *e)
{
    return e->v->f->keys == FILTER_KEYS_EXACT && (!e->v->xd || exact_delta_by_fp(e->v->xd));
}

/* The item's fingerprint under e's exact table (0 without one): what the
 * ring keeps to confirm a YES once the item's bytes are gone. */
static inline uint64_t cmd_exact_fp(const struct fentry *e, const void *item, size_t len)
{
    return e->v->xd ? exact_fp(exact_delta_secret(e->v->xd), item, len) : 0;
}

/* cmd_exact_confirm from the fingerprint cmd_exact_fp gave (a fingerprint
 * table's filter, which cmd_exact_keys lets into the ring). */
static inline bool cmd_exact_confirm_fp(const struct fversion *v, uint64_t fp)
{
    return !v->xd || exact_delta_contains_fp(v->xd, fp);
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
