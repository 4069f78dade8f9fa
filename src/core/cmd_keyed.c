/* The command table's host and url keys (cmd_int.h): an item expanded into
 * its probes, looked up in a pipeline, mutated as the canonical key a list
 * line would give; the allow-list's part in each; the gate's refusal of a
 * mutation. Split from cmd.c, which dispatches here, so that cmd_adblock.c
 * calls down to the same probes. Worker threads. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cmd_exact.h"
#include "core/cmd_int.h"
#include "store/allow.h"
#include "url/keys.h"
#include "url/lists.h"

_Static_assert((int)KEYS_EXACT == (int)FILTER_KEYS_EXACT &&
                   (int)KEYS_HOST == (int)FILTER_KEYS_HOST && (int)KEYS_URL == (int)FILTER_KEYS_URL,
               "url/keys.h and bloom/filter.h number the key kinds alike");
_Static_assert(sizeof(struct keys_probe) == sizeof(struct filter_key) &&
                   offsetof(struct keys_probe, data) == offsetof(struct filter_key, data) &&
                   offsetof(struct keys_probe, len) == offsetof(struct filter_key, len),
               "a keys_query's probes go to filter_check_batch as they are");

/* This thread's expansion of the item being looked up in a host or url
 * filter (about 16 KiB, so never on the stack) and what each probe found.
 * Thread-local rather than a field of struct cmd_env because the env is
 * made by net/worker.c for every front, and this is what the command table
 * alone needs: static TLS costs no allocation, no free at thread exit, and
 * one %fs-relative address. Only touched by keyed (host, url) lookups. */
static _Thread_local struct keys_query tl_q;
static _Thread_local bool tl_present[KEYS_MAX];

/* Look item up in f, a filter of host or url keys: expand it into its
 * probes (most specific first), test them all in one batched, prefetched
 * call, and return the index of the first present one (q->n if none). -1
 * if the kind cannot read the item, the reason in err. */
static long keyed_lookup(const struct filter *f, const void *item, size_t len, char *err,
                         size_t errlen)
{
    struct keys_query *q = &tl_q;
    if (keys_expand((enum keys_kind)filter_keys_probe(f->keys), item, len, q, err, errlen) != 0)
        return -1;
    filter_check_batch(f, (const struct filter_key *)(const void *)q->p, q->n, tl_present);
    return (long)keys_first_present(q, tl_present);
}

/* As keyed_lookup, for version v: a removed expression is not present, nor
 * one its exact table does not confirm. */
static long keyed_lookup_v(const struct fversion *v, const void *item, size_t len, char *err,
                           size_t errlen)
{
    long hit = keyed_lookup(v->f, item, len, err, errlen);
    if (hit < 0 || (size_t)hit == tl_q.n || (!allow_any(v->allow) && !v->xd))
        return hit;
    for (size_t i = (size_t)hit; i < tl_q.n; i++)
        if (tl_present[i] &&
            !(allow_get(v->allow, filter_hash(v->f, tl_q.p[i].data, tl_q.p[i].len)) &
              ALLOW_REMOVED) &&
            cmd_exact_confirm(v, tl_q.p[i].data, tl_q.p[i].len))
            return (long)i;
    return (long)tl_q.n;
}

/* Item i of the call was answered NO by an exception: counted, and marked in
 * env->allowed, which is cleared for the whole call at the first one (so a
 * call without exceptions never touches it). */
void cmd_mark_allowed(const struct cmd_env *env, struct cmd_call *call, size_t i)
{
    if (call->allowed++ == 0 && env->allowed)
        memset(env->allowed, 0, call->n_items * sizeof(*env->allowed));
    if (env->allowed)
        env->allowed[i] = true;
}

/* The test of one expanded item against a filter with an allow-list: the
 * first probe (most specific first) that the filter holds and that is not
 * removed is the match, as without one; an exception at that probe or at a
 * more specific one turns the answer to NO (Adblock's @@ rules: an exception
 * for www.example.com overrides a block of example.com, not the reverse).
 * Returns the match's index (q->n if none); *exc the exception's, or SIZE_MAX. */
static size_t keyed_test_allow(const struct fversion *v, const struct keys_query *q,
                               const struct hash128 *h, size_t *exc)
{
    *exc = SIZE_MAX;
    size_t hit = 0;
    for (; hit < q->n; hit++) {
        unsigned fl = allow_get(v->allow, h[hit]);
        if ((fl & ALLOW_EXCEPT) && *exc == SIZE_MAX)
            *exc = hit;
        if (!(fl & ALLOW_REMOVED) && filter_check_hash(v->f, h[hit]))
            break;
    }
    if (hit == q->n)
        *exc = SIZE_MAX;
    return hit;
}

int cmd_host_excepted(const struct fversion *v, const void *item, size_t len, const char **m,
                      size_t *mlen)
{
    /* Its own expansion: the tier's match (cmd_match_again's, in tl_q) is
     * still to be named. */
    static _Thread_local struct keys_query tl_qx;
    char why[8];
    struct keys_query *q = &tl_qx;
    if (keys_expand(KEYS_HOST, item, len, q, why, sizeof(why)) != 0)
        return -1;
    for (size_t i = 0; i < q->n; i++)
        if (allow_get(v->allow, filter_hash(v->f, q->p[i].data, q->p[i].len)) & ALLOW_EXCEPT) {
            *m = q->p[i].data;
            *mlen = q->p[i].len;
            return 1;
        }
    return 0;
}

int cmd_match_again(const struct fentry *e, const void *item, size_t len, const char **m,
                    size_t *mlen, char *err, size_t errlen)
{
    long hit = keyed_lookup_v(e->v, item, len, err, errlen);
    if (hit < 0)
        return -1;
    if ((size_t)hit == tl_q.n)
        return 0;
    *m = tl_q.p[hit].data;
    *mlen = tl_q.p[hit].len;
    return 1;
}

/* The expansions of three consecutive items of a keyed CHECK/MCHECK and the
 * hashes of their probes: item i is expanded while item i-1's first probe
 * and item i-2's other probes are in flight (see keyed_check). */
#define KEYED_STAGES 3
static _Thread_local struct keys_query tl_pipe[KEYED_STAGES];
static _Thread_local struct hash128 tl_hash[KEYED_STAGES][KEYS_MAX];

/* Item k of a keyed check is decided: hit is the index of its match (q->n
 * if none), exc that of the exception that turned a match to NO (SIZE_MAX
 * if none). For one item the match or the exception is kept for the reply. */
static inline void keyed_answer(const struct cmd_env *env, struct cmd_call *call,
                                const struct keys_query *q, size_t k, size_t hit, size_t exc)
{
    env->bools[k] = hit < q->n && exc == SIZE_MAX;
    if (exc != SIZE_MAX) {
        cmd_mark_allowed(env, call, k);
        if (call->n_items == 1) {
            call->except = q->p[exc].data;
            call->except_len = q->p[exc].len;
        }
    } else if (call->n_items == 1 && hit < q->n) {
        call->match = q->p[hit].data;
        call->match_len = q->p[hit].len;
    }
}

/* Hash probes [from, to) of q into h and prefetch their blocks. */
static inline void keyed_hash(const struct filter *f, const struct keys_query *q, struct hash128 *h,
                              size_t from, size_t to)
{
    for (size_t j = from; j < to; j++) {
        h[j] = filter_hash(f, q->p[j].data, q->p[j].len);
        __builtin_prefetch(filter_first_line(f, h[j]), 0, 0);
    }
}

/* CHECK, MCHECK, MATCH on a host or url filter, in three stages per item,
 * each item's stages overlapping the next items' (a software pipeline):
 * (1) expand the item and hash its most specific probe, prefetching its
 * block; (2) once the next item has been expanded, test that probe: a
 * present item (a listed URL is usually listed as itself) is decided there,
 * its other probes never hashed; else hash the other probes and prefetch
 * their blocks; (3) once the item after has been expanded, test them, most
 * specific first, stopping at the first present one (the match), with an
 * early exit for each absent one (filter_first_present). The canonicalisation
 * of the next item (a few hundred ns) hides the memory latency of each
 * stage's probes: testing each item's probes right after its own prefetches
 * left a third of the time in cache misses (perf, docs/benchmarks.md); hashing
 * every probe before testing any cost a present URL 7 hashes it did not need
 * (callgrind, docs/url-matching.md). With an allow-list every probe is
 * hashed at once (the exceptions are looked up by hash) and tested at stage
 * 2. An item the kind cannot read fails the whole request
 * (call->bad_item), as an over-long one does: answering NO would let a
 * client that sends a URL the canonicaliser refuses (an over-long one, a bad
 * port) walk past a url filter unnoticed. Worker threads. */
int cmd_keyed_check(const struct cmd_env *env, struct cmd_call *call)
{
    const struct filter *f = call->e->v->f;
    enum keys_kind kind = (enum keys_kind)filter_keys_probe(f->keys);
    size_t n = call->n_items;
    bool lists = allow_any(call->e->v->allow);
    bool pending[KEYED_STAGES] = {false, false, false};
    for (size_t i = 0; i < n + 2; i++) {
        if (i < n) {
            struct keys_query *q = &tl_pipe[i % KEYED_STAGES];
            if (keys_expand(kind, env->keys[i].data, env->keys[i].len, q, call->msg,
                            sizeof(call->msg)) != 0) {
                call->err = CMD_ERR_BAD_ITEM;
                call->bad_item = i + 1;
                return -1;
            }
            keyed_hash(f, q, tl_hash[i % KEYED_STAGES], 0, lists ? q->n : 1);
        }
        if (i >= 1 && i - 1 < n) {
            size_t k = i - 1, s = k % KEYED_STAGES;
            const struct keys_query *q = &tl_pipe[s];
            const struct hash128 *h = tl_hash[s];
            if (lists) {
                size_t exc;
                size_t hit = keyed_test_allow(call->e->v, q, h, &exc);
                keyed_answer(env, call, q, k, hit, exc);
            } else if (filter_first_present(f, h, 1) == 0) {
                keyed_answer(env, call, q, k, 0, SIZE_MAX);
            } else if (q->n == 1) {
                keyed_answer(env, call, q, k, q->n, SIZE_MAX);
            } else {
                keyed_hash(f, q, tl_hash[s], 1, q->n);
                pending[s] = true;
            }
        }
        if (i >= 2 && pending[(i - 2) % KEYED_STAGES]) {
            size_t k = i - 2, s = k % KEYED_STAGES;
            const struct keys_query *q = &tl_pipe[s];
            pending[s] = false;
            keyed_answer(env, call, q, k, 1 + filter_first_present(f, tl_hash[s] + 1, q->n - 1),
                         SIZE_MAX);
        }
    }
    return 0;
}

/* The test of one expanded item against a filter with an exact table: as
 * keyed_test_allow, each probe the bits hold (and not removed) confirmed in
 * the table before it is the match; one the table does not list is a false
 * positive of the bits, caught, and the next probe is tried. */
static size_t keyed_test_confirmed(const struct fversion *v, const struct keys_query *q,
                                   const struct hash128 *h, size_t *exc, struct cmd_confirmed *cc)
{
    bool lists = allow_any(v->allow);
    *exc = SIZE_MAX;
    size_t hit = 0;
    for (; hit < q->n; hit++) {
        unsigned fl = lists ? allow_get(v->allow, h[hit]) : 0;
        if ((fl & ALLOW_EXCEPT) && *exc == SIZE_MAX)
            *exc = hit;
        if ((fl & ALLOW_REMOVED) || !filter_check_hash(v->f, h[hit]))
            continue;
        cc->asked++;
        if (cmd_exact_confirm(v, q->p[hit].data, q->p[hit].len))
            break;
        cc->caught++;
    }
    if (hit == q->n)
        *exc = SIZE_MAX;
    return hit;
}

/* A YES is rare on clean traffic, so this path keeps it plain: each item
 * expanded, all its probes hashed and prefetched, then tested in order (no
 * pipeline over the next items: the table's page is the cost that counts
 * when it runs). Worker threads. */
int cmd_keyed_check_confirmed(const struct cmd_env *env, struct cmd_call *call,
                              struct cmd_confirmed *cc)
{
    const struct fversion *v = call->e->v;
    enum keys_kind kind = (enum keys_kind)filter_keys_probe(v->f->keys);
    struct keys_query *q = &tl_pipe[0];
    struct hash128 *h = tl_hash[0];
    for (size_t k = 0; k < call->n_items; k++) {
        if (keys_expand(kind, env->keys[k].data, env->keys[k].len, q, call->msg,
                        sizeof(call->msg)) != 0) {
            call->err = CMD_ERR_BAD_ITEM;
            call->bad_item = k + 1;
            return -1;
        }
        keyed_hash(v->f, q, h, 0, q->n);
        size_t exc;
        size_t hit = keyed_test_confirmed(v, q, h, &exc, cc);
        keyed_answer(env, call, q, k, hit, exc);
    }
    return 0;
}

/* The mutation through the gate: 0, or -1 with call->err set: a REMOVE a
 * counting filter refused (an item it does not hold: bad_item names it),
 * a limit of the filter's (`limit`), or a journal that refused the record.
 * Worker threads. */
int cmd_mutate_refused(const struct cmd_env *env, struct cmd_call *call, enum journal_op op,
                       size_t n)
{
    size_t bad = 0;
    int rc = gate_mutate_ex(env->gate, call->e, op, env->keys, n, env->bools, &bad, call->msg,
                            sizeof(call->msg));
    if (rc == 0)
        return 0;
    if (rc == GATE_REFUSED) {
        call->err = CMD_ERR_BAD_ITEM;
        call->bad_item = bad + 1;
    } else if (rc == GATE_LIMIT) {
        call->err = CMD_ERR_LIMIT;
    } else {
        call->err = CMD_ERR_UNAVAILABLE;
    }
    return -1;
}

/* ADD, MADD (and ALLOW, UNALLOW, REMOVE: op) on a host or url filter: each
 * item becomes the one key a list
 * line holding it would give (`bloomgate build --format plain`, url/lists.c):
 * for url keys the exact expression `host/path[?query]` of the URL (a bare
 * host `host/`), for host keys the canonical host (a URL with a path or a
 * query is refused, as the builder refuses it: it would block the whole
 * host). Those canonical bytes are what gate_add journals, so a replay, and
 * `bloomgate build --journal`, adds exactly what this add did. All items are
 * read before any is added: a bad one adds nothing. The keys go to one
 * malloc'd buffer (adds are rare; the journal write costs more). */
int cmd_keyed_mutate(const struct cmd_env *env, struct cmd_call *call, enum journal_op op)
{
    size_t n = call->n_items;
    if (n == 0)
        return 0;
    enum url_kind uk = filter_keys_probe(call->e->v->f->keys) == FILTER_KEYS_HOST ? URL_KIND_HOST
                                                                                  : URL_KIND_URL;
    struct lists_line *l = malloc(sizeof(*l));
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        cap += env->keys[i].len + 16;
    char *buf = l ? malloc(cap) : NULL;
    size_t *off = buf ? malloc(n * sizeof(*off)) : NULL;
    if (!off) {
        free(buf);
        free(l);
        call->err = CMD_ERR_INTERNAL;
        snprintf(call->msg, sizeof(call->msg), "out of memory");
        return -1;
    }
    size_t used = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        enum lists_class cls =
            lists_parse_line(LISTS_PLAIN, uk, env->keys[i].data, env->keys[i].len, l);
        if (cls != LISTS_KEPT || l->n != 1) {
            call->err = CMD_ERR_BAD_ITEM;
            call->bad_item = i + 1;
            if (cls == LISTS_REJECTED)
                snprintf(call->msg, sizeof(call->msg), "%s%s%s", lists_reason_name(l->reason),
                         l->why[0] ? ": " : "", l->why);
            else
                snprintf(call->msg, sizeof(call->msg), "not a %s key (%s)",
                         uk == URL_KIND_HOST ? "host" : "url", lists_class_name(cls));
            rc = -1;
            break;
        }
        /* A key may be longer than its item (escapes): grow. */
        if (cap - used < l->e[0].len) {
            size_t ncap = 2 * cap + l->e[0].len;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                call->err = CMD_ERR_INTERNAL;
                snprintf(call->msg, sizeof(call->msg), "out of memory");
                rc = -1;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        memcpy(buf + used, l->e[0].ptr, l->e[0].len);
        off[i] = used;
        env->keys[i].len = l->e[0].len;
        used += l->e[0].len;
    }
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            env->keys[i].data = buf + off[i];
        if (cmd_mutate_refused(env, call, op, n) != 0)
            rc = -1;
    }
    free(off);
    free(buf);
    free(l);
    return rc;
}
