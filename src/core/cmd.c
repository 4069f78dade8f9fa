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
    if (e->v->words) {
        /* A word list answers SCAN, and takes its words' changes here. */
        if (!mutate ? cmd_words_refuse(e, call) != 0 : cmd_words_mutate(env, call, op) != 0)
            return;
    } else if (e->v->ab && !mutate) {
        if (cmd_adblock_check(env, call) != 0)
            return;
    } else if (e->v->f->keys != FILTER_KEYS_EXACT) {
        if ((mutate     ? cmd_keyed_mutate(env, call, op)
             : e->v->xd ? cmd_keyed_check_exact(env, call)
                        : cmd_keyed_check(env, call)) != 0)
            return;
    } else if (mutate) {
        if (cmd_mutate_refused(env, call, op, n) != 0)
            return;
    } else {
        if (n == 1)
            env->bools[0] = filter_check(e->v->f, env->keys[0].data, env->keys[0].len);
        else
            filter_check_batch(e->v->f, env->keys, n, env->bools);
        if (allow_any(e->v->allow))
            exact_allow(env, call);
        if (e->v->xd)
            cmd_confirm_exact(env, call);
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

static void h_unallow(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
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
    if (call->e) {
        call->json = views_filter_json(call->e);
        views_exact_counters(call->json, src, call->e);
    } else if (call->filter) /* configured, not loaded: cmd_admit let it through */
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
    [CMD_CREATE] = {"create", false, false, true, NULL},
    [CMD_DROP] = {"drop", false, false, true, NULL},
    [CMD_CLEAR] = {"clear", false, false, true, NULL},
    [CMD_FLUSH] = {"flush", false, false, true, NULL},
    [CMD_SCAN] = {"scan", true, false, false, cmd_words_scan},
};

enum reload_op_kind cmd_op_kind(enum cmd_id id)
{
    switch (id) {
    case CMD_CREATE:
        return RELOAD_OP_CREATE;
    case CMD_DROP:
        return RELOAD_OP_DROP;
    case CMD_CLEAR:
        return RELOAD_OP_CLEAR;
    case CMD_FLUSH:
        return RELOAD_OP_FLUSH;
    default:
        return RELOAD_OP_RELOAD;
    }
}

/* The report's codes (store/created.c), in one table. */
static const struct {
    const char *code;
    enum cmd_err err;
} admin_codes[] = {
    {"exists", CMD_ERR_EXISTS},         {"unknown_filter", CMD_ERR_UNKNOWN_FILTER},
    {"configured", CMD_ERR_CONFIGURED}, {"limit", CMD_ERR_LIMIT},
    {"bad_option", CMD_ERR_BAD_OPTION}, {"no_state_dir", CMD_ERR_NO_STATE_DIR},
    {"failed", CMD_ERR_FAILED},
};

enum cmd_err cmd_admin_outcome(const json_t *report, const char **msg)
{
    *msg = "the operation ran, but its report was lost (out of memory)";
    if (!report)
        return CMD_ERR_INTERNAL;
    if (json_is_true(json_object_get(report, "ok"))) {
        *msg = "";
        return CMD_OK;
    }
    const char *code = json_string_value(json_object_get(report, "code"));
    const char *m = json_string_value(json_object_get(report, "error"));
    *msg = m ? m : "failed";
    for (size_t i = 0; code && i < sizeof(admin_codes) / sizeof(*admin_codes); i++)
        if (strcmp(code, admin_codes[i].code) == 0)
            return admin_codes[i].err;
    return CMD_ERR_INTERNAL;
}

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
