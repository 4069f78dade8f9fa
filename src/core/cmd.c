/* The command table, see cmd.h. Worker threads. */
#include "config.h"

#include "core/cmd.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cmd_exact.h"
#include "core/cmd_int.h"
#include "core/views.h"
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

/* As keyed_lookup, for version v: a removed expression is not present. */
static long keyed_lookup_v(const struct fversion *v, const void *item, size_t len, char *err,
                           size_t errlen)
{
    long hit = keyed_lookup(v->f, item, len, err, errlen);
    if (hit < 0 || (size_t)hit == tl_q.n || !allow_any(v->allow))
        return hit;
    for (size_t i = (size_t)hit; i < tl_q.n; i++)
        if (tl_present[i] &&
            !(allow_get(v->allow, filter_hash(v->f, tl_q.p[i].data, tl_q.p[i].len)) &
              ALLOW_REMOVED))
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
static int keyed_check(const struct cmd_env *env, struct cmd_call *call)
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

/* The mutation through the gate: 0, or -1 with call->err set: a REMOVE a
 * counting filter refused (an item it does not hold: bad_item names it),
 * or a journal that refused the record. Worker threads. */
static int mutate_refused(const struct cmd_env *env, struct cmd_call *call, enum journal_op op,
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
static int keyed_mutate(const struct cmd_env *env, struct cmd_call *call, enum journal_op op)
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
        if (mutate_refused(env, call, op, n) != 0)
            rc = -1;
    }
    free(off);
    free(buf);
    free(l);
    return rc;
}

/* The YES answers of an exact check, against the allow-list: a removed
 * item is answered NO, an excepted one NO and counted as allowed. Only a
 * YES is hashed again, and only when the list is not empty. */
static void exact_allow(const struct cmd_env *env, struct cmd_call *call)
{
    const struct fversion *v = call->e->v;
    for (size_t i = 0; i < call->n_items; i++) {
        if (!env->bools[i])
            continue;
        unsigned fl = cmd_exact_veto(v, filter_hash(v->f, env->keys[i].data, env->keys[i].len));
        if (!fl)
            continue;
        env->bools[i] = false;
        if (fl & ALLOW_EXCEPT) {
            cmd_mark_allowed(env, call, i);
            if (call->n_items == 1) {
                call->except = env->keys[0].data;
                call->except_len = env->keys[0].len;
            }
        }
    }
}

/* Check the call's items, or apply a mutation to them (op; ADD when add
 * is set), answers in env->bools, counted on the filter's counters of
 * env->proto. A mutation goes through the gate (journal first); a refused
 * one changes nothing. */
static void items_run(const struct cmd_env *env, struct cmd_call *call, bool mutate,
                      enum journal_op op)
{
    const struct fentry *e = call->e;
    size_t n = call->n_items;
    /* The one branch on the kind: exact filters take the paths below, as
     * they always have. */
    if (e->v->ab && !mutate) {
        if (cmd_adblock_check(env, call) != 0)
            return;
    } else if (e->v->f->keys != FILTER_KEYS_EXACT) {
        if ((mutate ? keyed_mutate(env, call, op) : keyed_check(env, call)) != 0)
            return;
    } else if (mutate) {
        if (mutate_refused(env, call, op, n) != 0)
            return;
    } else {
        if (n == 1)
            env->bools[0] = filter_check(e->v->f, env->keys[0].data, env->keys[0].len);
        else
            filter_check_batch(e->v->f, env->keys, n, env->bools);
        if (allow_any(e->v->allow))
            exact_allow(env, call);
    }
    size_t yes = 0;
    for (size_t i = 0; i < n; i++)
        yes += env->bools[i];
    call->yes = yes;
    struct fstats *fs = stats_fslot(env->stats, env->id_gen, e->id);
    if (mutate && op == JOURNAL_OP_ADD) {
        STAT_ADD(fs, adds[env->proto], n);
        STAT_ADD(fs, added_new[env->proto], yes);
    } else if (!mutate) {
        STAT_ADD(fs, checks[env->proto], n);
        STAT_ADD(fs, hits[env->proto], yes);
    }
}

void cmd_items(const struct cmd_env *env, struct cmd_call *call, bool add)
{
    items_run(env, call, add, JOURNAL_OP_ADD);
}

enum journal_op cmd_op(enum cmd_id id)
{
    return id == CMD_ALLOW     ? JOURNAL_OP_ALLOW
           : id == CMD_UNALLOW ? JOURNAL_OP_UNALLOW
           : id == CMD_REMOVE  ? JOURNAL_OP_REMOVE
                               : JOURNAL_OP_ADD;
}

static void h_check(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)src;
    cmd_items(env, call, false);
}

static void h_add(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)src;
    cmd_items(env, call, true);
}

static void h_allow(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)src;
    items_run(env, call, true, JOURNAL_OP_ALLOW);
}

static void h_unallow(const struct cmd_env *env, const struct stats_src *src,
                      struct cmd_call *call)
{
    (void)src;
    items_run(env, call, true, JOURNAL_OP_UNALLOW);
}

static void h_remove(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)src;
    items_run(env, call, true, JOURNAL_OP_REMOVE);
}

/* MATCH: one item, checked, and the key it matched named (cmd_items keeps it
 * for a host or url filter; an exact filter's key is the item itself). */
static void h_match(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)src;
    cmd_items(env, call, false);
    if (call->err == CMD_OK && call->e->v->f->keys == FILTER_KEYS_EXACT && env->bools[0]) {
        call->match = env->keys[0].data;
        call->match_len = env->keys[0].len;
    }
}

static void h_info(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)env;
    if (call->e)
        call->json = views_filter_json(call->e);
    else if (call->filter) /* configured, not loaded: cmd_admit let it through */
        call->json = views_unloaded_json(call->filter, call->filter_len);
    else
        call->json = views_info_json(src, call->cat);
}

/* The configured filters that are not served (a reload failed to load them):
 * NULL when all are, which is the common answer. */
static void h_health(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)env;
    (void)src;
    json_t *missing = views_missing_json(call->cat);
    if (json_array_size(missing) == 0) {
        json_decref(missing);
        missing = NULL;
    }
    call->json = missing;
}

const struct cmd_def cmd_table[CMD_COUNT_] = {
    [CMD_PING] = {"ping", false, false, false, NULL},
    [CMD_CHECK] = {"check", true, true, false, h_check},
    [CMD_ADD] = {"add", true, true, true, h_add},
    [CMD_INFO] = {"info", false, false, false, h_info},
    [CMD_FILTERS] = {"filters", false, false, false, NULL},
    [CMD_RELOAD] = {"reload", false, false, true, NULL},
    [CMD_HEALTH] = {"health", false, false, false, h_health},
    [CMD_MATCH] = {"match", true, true, false, h_match},
    [CMD_ALLOW] = {"allow", true, true, true, h_allow},
    [CMD_UNALLOW] = {"unallow", true, true, true, h_unallow},
    [CMD_REMOVE] = {"remove", true, true, true, h_remove},
};

enum cmd_err cmd_authorize(const struct conf *cf, bool loopback, enum cmd_cred cred)
{
    if (!cf->admin_token)
        return loopback ? CMD_OK : CMD_ERR_AUTH_REQUIRED;
    return cred == CMD_CRED_GOOD   ? CMD_OK
           : cred == CMD_CRED_NONE ? CMD_ERR_AUTH_REQUIRED
                                   : CMD_ERR_AUTH_FAILED;
}

/* The order of the checks: the filter, auth, the limits, then the handler. */
enum cmd_err cmd_admit(struct cmd_call *call, enum cmd_id id)
{
    const struct cmd_def *d = &cmd_table[id];
    call->err = CMD_OK;
    call->json = NULL;
    /* The filter before auth: the line protocol has always answered
     * unknown_filter first. (HTTP checks auth before it looks the filter up,
     * with cmd_authorize, the same rule: see http_api.c route_filter.) */
    if (call->filter && !call->e) {
        call->e = catalog_find(call->cat, call->filter, call->filter_len);
        /* INFO of a configured filter that is not loaded answers its
         * readiness (false), not an error: see views_unloaded_json. */
        if (!call->e && id == CMD_INFO &&
            views_configured(call->cat, call->filter, call->filter_len))
            return CMD_OK;
        if (!call->e) {
            call->err = CMD_ERR_UNKNOWN_FILTER;
            snprintf(call->msg, sizeof(call->msg), "no such filter '%.*s'", (int)call->filter_len,
                     call->filter);
            return call->err;
        }
    } else if (d->names_filter && !call->e) {
        call->err = CMD_ERR_UNKNOWN_FILTER;
        snprintf(call->msg, sizeof(call->msg), "no filter named");
        return call->err;
    }
    if (d->mutating) {
        call->err = cmd_authorize(call->cat->conf, call->loopback, call->cred);
        if (call->err != CMD_OK) {
            snprintf(call->msg, sizeof(call->msg), "%s",
                     call->err == CMD_ERR_AUTH_FAILED ? "wrong token"
                     : call->cat->conf->admin_token
                         ? "this needs the admin_token"
                         : "changes are accepted only from loopback clients when no "
                           "admin_token is set");
            return call->err;
        }
    }
    return CMD_OK;
}

void cmd_run(const struct cmd_env *env, enum cmd_id id, const struct stats_src *src,
             struct cmd_call *call)
{
    const struct cmd_def *d = &cmd_table[id];
    if (cmd_admit(call, id) != CMD_OK)
        return;
    if (d->items && !call->limits_applied) {
        struct cmd_limits lim = cmd_limits(call->cat->conf, env->scratch_items);
        if (call->n_items > lim.max_items) {
            call->err = CMD_ERR_TOO_MANY_ITEMS;
            snprintf(call->msg, sizeof(call->msg), "%zu items, the limit is max_items %zu",
                     call->n_items, lim.max_items);
            return;
        }
        for (size_t i = 0; i < call->n_items; i++) {
            if (env->keys[i].len > lim.max_item) {
                call->err = CMD_ERR_ITEM_TOO_LONG;
                snprintf(call->msg, sizeof(call->msg),
                         "item %zu is %zu bytes, the limit is max_item %zu", i + 1,
                         env->keys[i].len, lim.max_item);
                return;
            }
        }
    }
    if (d->handler)
        d->handler(env, src, call);
}
