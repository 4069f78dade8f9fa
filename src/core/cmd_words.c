/* The command table's SCAN (core/cmd.h): the listed words a text holds, by
 * a words filter's compiled list (src/words/), with the byte offsets of each
 * match in the text as the client sent it. Every front's SCAN runs this one
 * handler; the fronts only read the text and write the matches. Worker
 * threads; never blocks. */
#include "config.h"

#include <stdio.h>

#include "bloom/format.h"

#include "core/cmd_int.h"
#include "words/words.h"

void cmd_words_scan(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)src;
    const struct fversion *v = call->e->v;
    const struct conf *cf = call->cat->conf;
    call->matches = NULL;
    call->n_matches = 0;
    call->capped = false;
    if (!v->words) {
        call->err = CMD_ERR_WRONG_KIND;
        snprintf(call->msg, sizeof(call->msg),
                 "filter '%s' holds %s keys: SCAN needs a words filter (bloomgate build --format "
                 "words)",
                 call->e->name, format_keys_name(v->f->keys));
        return;
    }
    if (call->text_len > cf->scan_max_text) {
        call->err = CMD_ERR_TEXT_TOO_LONG;
        snprintf(call->msg, sizeof(call->msg),
                 "the text is %zu bytes, the limit is scan_max_text %zu", call->text_len,
                 cf->scan_max_text);
        return;
    }
    if (!env->ws || !env->wm) {
        call->err = CMD_ERR_INTERNAL;
        snprintf(call->msg, sizeof(call->msg), "no scan scratch on this thread");
        return;
    }
    size_t max =
        cf->scan_max_matches < CONF_SCAN_MATCHES_MAX ? cf->scan_max_matches : CONF_SCAN_MATCHES_MAX;
    size_t n = 0;
    bool capped = false;
    if (words_scan(v->words, env->ws, call->text, call->text_len, env->wm, max, &n, &capped) != 0) {
        call->err = CMD_ERR_INTERNAL;
        snprintf(call->msg, sizeof(call->msg), "out of memory scanning the text");
        return;
    }
    call->matches = env->wm;
    call->n_matches = n;
    call->capped = capped;
    call->yes = n > 0;
    struct fstats *fs = stats_fslot(env->stats, env->id_gen, call->e->id);
    STAT_ADD(fs, checks[env->proto], 1);
    STAT_ADD(fs, hits[env->proto], n > 0);
}

const char *cmd_scan_word(const struct cmd_call *call, size_t i, size_t *len)
{
    return words_word(call->e->v->words, call->matches[i].word, len);
}

int cmd_words_refuse(const struct fentry *e, struct cmd_call *call)
{
    if (!e->v->words)
        return 0;
    call->err = CMD_ERR_WRONG_KIND;
    /* The name once: twice, a name of FNAME_MAX bytes would not fit. */
    snprintf(call->msg, sizeof(call->msg),
             "filter '%s' is a word list: it answers SCAN <filter> <text> (HTTP: POST "
             "/v1/filters/{name}/scan), not lookups or changes",
             e->name);
    return -1;
}
