/* The command table, see cmd.h. Worker threads. */
#include "config.h"

#include "core/cmd.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/views.h"
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
    if (keys_expand((enum keys_kind)f->keys, item, len, q, err, errlen) != 0)
        return -1;
    filter_check_batch(f, (const struct filter_key *)(const void *)q->p, q->n, tl_present);
    return (long)keys_first_present(q, tl_present);
}

int cmd_match_again(const struct fentry *e, const void *item, size_t len, const char **m,
                    size_t *mlen, char *err, size_t errlen)
{
    long hit = keyed_lookup(e->v->f, item, len, err, errlen);
    if (hit < 0)
        return -1;
    if ((size_t)hit == tl_q.n)
        return 0;
    *m = tl_q.p[hit].data;
    *mlen = tl_q.p[hit].len;
    return 1;
}

/* The expansions of two consecutive items of a keyed CHECK/MCHECK and the
 * hashes of their probes: item i is expanded, hashed and its blocks
 * prefetched while item i-1's blocks arrive (see keyed_check). */
static _Thread_local struct keys_query tl_pipe[2];
static _Thread_local struct hash128 tl_hash[2][KEYS_MAX];

/* CHECK, MCHECK, MATCH on a host or url filter: each item is expanded, all
 * its probes hashed and their first cache lines prefetched, and only then,
 * once the next item has been expanded and prefetched in turn, tested, most
 * specific probe first, stopping at the first present one (the match). The
 * canonicalisation of the next item (a few hundred ns) hides the memory
 * latency of this one's probes: testing each item's probes right after its
 * own prefetches (filter_check_batch per item) left a third of the time in
 * cache misses (perf, docs/benchmarks.md). An item the kind cannot read
 * fails the whole request (call->bad_item), as an over-long one does:
 * answering NO would let a client that sends a URL the canonicaliser refuses
 * (an over-long one, a bad port) walk past a url filter unnoticed. For one
 * item the match is kept. */
static int keyed_check(const struct cmd_env *env, struct cmd_call *call)
{
    const struct filter *f = call->e->v->f;
    enum keys_kind kind = (enum keys_kind)f->keys;
    size_t n = call->n_items;
    for (size_t i = 0; i <= n; i++) {
        if (i < n) {
            struct keys_query *q = &tl_pipe[i & 1];
            struct hash128 *h = tl_hash[i & 1];
            if (keys_expand(kind, env->keys[i].data, env->keys[i].len, q, call->msg,
                            sizeof(call->msg)) != 0) {
                call->err = CMD_ERR_BAD_ITEM;
                call->bad_item = i + 1;
                return -1;
            }
            for (size_t j = 0; j < q->n; j++) {
                h[j] = filter_hash(f, q->p[j].data, q->p[j].len);
                __builtin_prefetch(filter_first_line(f, h[j]), 0, 0);
            }
        }
        if (i == 0)
            continue;
        size_t k = i - 1;
        const struct keys_query *q = &tl_pipe[k & 1];
        const struct hash128 *h = tl_hash[k & 1];
        size_t hit = 0;
        while (hit < q->n && !filter_check_hash(f, h[hit]))
            hit++;
        env->bools[k] = hit < q->n;
        if (n == 1 && hit < q->n) {
            call->match = q->p[hit].data;
            call->match_len = q->p[hit].len;
        }
    }
    return 0;
}

/* ADD, MADD to a host or url filter: each item becomes the one key a list
 * line holding it would give (`bloomgate build --format plain`, url/lists.c):
 * for url keys the exact expression `host/path[?query]` of the URL (a bare
 * host `host/`), for host keys the canonical host (a URL with a path or a
 * query is refused, as the builder refuses it: it would block the whole
 * host). Those canonical bytes are what gate_add journals, so a replay, and
 * `bloomgate build --journal`, adds exactly what this add did. All items are
 * read before any is added: a bad one adds nothing. The keys go to one
 * malloc'd buffer (adds are rare; the journal write costs more). */
static int keyed_add(const struct cmd_env *env, struct cmd_call *call)
{
    size_t n = call->n_items;
    if (n == 0)
        return 0;
    enum url_kind uk = call->e->v->f->keys == FILTER_KEYS_HOST ? URL_KIND_HOST : URL_KIND_URL;
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
        if (gate_add(env->gate, call->e, env->keys, n, env->bools, call->msg, sizeof(call->msg)) !=
            0) {
            call->err = CMD_ERR_UNAVAILABLE;
            rc = -1;
        }
    }
    free(off);
    free(buf);
    free(l);
    return rc;
}

/* Check or add the call's items (env->keys[0..n)) in call->e, answers in
 * env->bools, counted on the filter's counters of env->proto. An add goes
 * through the gate (journal first); a refused add adds nothing. */
void cmd_items(const struct cmd_env *env, struct cmd_call *call, bool add)
{
    const struct fentry *e = call->e;
    size_t n = call->n_items;
    /* The one branch on the kind: exact filters take the paths below, as
     * they always have. */
    if (e->v->f->keys != FILTER_KEYS_EXACT) {
        if ((add ? keyed_add(env, call) : keyed_check(env, call)) != 0)
            return;
    } else if (add) {
        if (gate_add(env->gate, e, env->keys, n, env->bools, call->msg, sizeof(call->msg)) != 0) {
            call->err = CMD_ERR_UNAVAILABLE;
            return;
        }
    } else if (n == 1) {
        env->bools[0] = filter_check(e->v->f, env->keys[0].data, env->keys[0].len);
    } else {
        filter_check_batch(e->v->f, env->keys, n, env->bools);
    }
    size_t yes = 0;
    for (size_t i = 0; i < n; i++)
        yes += env->bools[i];
    call->yes = yes;
    struct fstats *fs = stats_fslot(env->stats, env->id_gen, e->id);
    if (add) {
        STAT_ADD(fs, adds[env->proto], n);
        STAT_ADD(fs, added_new[env->proto], yes);
    } else {
        STAT_ADD(fs, checks[env->proto], n);
        STAT_ADD(fs, hits[env->proto], yes);
    }
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
