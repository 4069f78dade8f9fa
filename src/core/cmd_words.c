/* The command table's SCAN (core/cmd.h): the listed words a text holds, by
 * a words filter's compiled list (src/words/) and its run-time changes
 * (words/delta.h), with the byte offsets of each match in the text as the
 * client sent it; and those changes (ADD, REMOVE, ALLOW, UNALLOW of words).
 * Every front runs these handlers; the fronts only read the text or the
 * items and write the answers. Worker threads; never blocks but for a
 * mutation's journal append. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom/format.h"

#include "core/cmd_int.h"
#include "core/gate.h"
#include "words/delta.h"
#include "words/words.h"

void cmd_words_scan(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call)
{
    (void)src;
    const struct fversion *v = call->e->v;
    const struct conf *cf = call->cat->conf;
    call->matches = NULL;
    call->wview = NULL;
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
    /* One acquire load; NULL (no run-time change) scans the list alone. */
    const struct words_view *wv = v->wd ? words_delta_view(v->wd) : NULL;
    if (words_view_scan(v->words, wv, env->ws, call->text, call->text_len, env->wm,
                        CONF_SCAN_MATCHES_MAX, max, &n, &capped) != 0) {
        call->err = CMD_ERR_INTERNAL;
        snprintf(call->msg, sizeof(call->msg), "out of memory scanning the text");
        return;
    }
    call->matches = env->wm;
    call->wview = wv;
    call->n_matches = n;
    call->capped = capped;
    call->yes = n > 0;
    struct fstats *fs = stats_fslot(env->stats, env->id_gen, call->e->id);
    STAT_ADD(fs, checks[env->proto], 1);
    STAT_ADD(fs, hits[env->proto], n > 0);
}

const char *cmd_scan_word(const struct cmd_call *call, size_t i, size_t *len)
{
    return words_view_word(call->e->v->words, call->wview, call->matches[i].word, len);
}

int cmd_words_refuse(const struct fentry *e, struct cmd_call *call)
{
    if (!e->v->words)
        return 0;
    call->err = CMD_ERR_WRONG_KIND;
    /* The name once: twice, a name of FNAME_MAX bytes would not fit. */
    snprintf(call->msg, sizeof(call->msg),
             "filter '%s' is a word list: it answers SCAN <filter> <text> (HTTP: POST "
             "/v1/filters/{name}/scan), not lookups",
             e->name);
    return -1;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* %XX escapes decoded from in into out (in's length at most); a '%' not
 * followed by two hex digits is itself. Returns out's length. So the line
 * protocol, whose items end at a space, can carry a phrase (`two%20words`),
 * and every front reads an item alike. */
static size_t pct_decode(const char *in, size_t len, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (in[i] == '%' && i + 2 < len && (hi = hexval(in[i + 1])) >= 0 &&
            (lo = hexval(in[i + 2])) >= 0) {
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[o++] = in[i];
        }
    }
    return o;
}

static enum words_delta_op delta_op(enum journal_op op)
{
    return op == JOURNAL_OP_ALLOW     ? WORDS_DELTA_ALLOW
           : op == JOURNAL_OP_UNALLOW ? WORDS_DELTA_UNALLOW
           : op == JOURNAL_OP_REMOVE  ? WORDS_DELTA_REMOVE
                                      : WORDS_DELTA_ADD;
}

/* The items decoded into one buffer and each read as the delta will read
 * it before any is journaled: the journal holds the decoded bytes, list
 * syntax, which a replay reads again. */
int cmd_words_mutate(const struct cmd_env *env, struct cmd_call *call, enum journal_op op)
{
    size_t n = call->n_items, total = 0;
    for (size_t i = 0; i < n; i++)
        total += env->keys[i].len;
    char *buf = malloc(total ? total : 1);
    if (!buf) {
        call->err = CMD_ERR_INTERNAL;
        snprintf(call->msg, sizeof(call->msg), "out of memory");
        return -1;
    }
    struct words_delta *wd = call->e->v->wd;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = pct_decode(env->keys[i].data, env->keys[i].len, buf + used);
        char why[160];
        if (words_delta_check(wd, delta_op(op), buf + used, l, why, sizeof(why)) != 0) {
            call->err = CMD_ERR_BAD_ITEM;
            call->bad_item = i + 1;
            snprintf(call->msg, sizeof(call->msg), "not a %s: %s",
                     op == JOURNAL_OP_ALLOW || op == JOURNAL_OP_UNALLOW ? "word list exception"
                                                                        : "word list entry",
                     why);
            free(buf);
            return -1;
        }
        env->keys[i].data = buf + used;
        env->keys[i].len = l;
        used += l;
    }
    int rc = cmd_mutate_refused(env, call, op, n);
    free(buf);
    return rc;
}
