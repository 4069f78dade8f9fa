/* The command table, see cmd.h. Worker threads. */
#include "config.h"

#include "core/cmd.h"

#include <stdio.h>
#include <string.h>

#include "core/views.h"

/* Check or add the call's items (env->keys[0..n)) in call->e, answers in
 * env->bools, counted on the filter's counters of env->proto. An add goes
 * through the gate (journal first); a refused add adds nothing. */
void cmd_items(const struct cmd_env *env, struct cmd_call *call, bool add)
{
    const struct fentry *e = call->e;
    size_t n = call->n_items;
    if (add) {
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

static void h_info(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)env;
    call->json = call->e ? views_filter_json(call->e) : views_info_json(src, call->cat);
}

/* The configured filters that are not served (a reload failed to load them):
 * NULL when all are, which is the common answer and allocates nothing. */
static void h_health(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)env;
    (void)src;
    const struct conf *cf = call->cat->conf;
    json_t *missing = NULL;
    for (size_t i = 0; i < cf->n_filters; i++) {
        const char *name = cf->filters[i].name;
        if (catalog_find(call->cat, name, strlen(name)))
            continue;
        if (!missing)
            missing = json_array();
        json_array_append_new(missing, json_string(name));
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
