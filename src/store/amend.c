/* Mutations of a filter version and its allow file, see amend.h. */
#include "config.h"

#include "store/amend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/util.h"
#include "bloom/counting.h"
#include "bloom/grow.h"
#include "bloom/ring.h"
#include "exact/delta.h"
#include "store/allow.h"
#include "url/lists.h"
#include "words/delta.h"

#define ALLOW_LINE_MAX JOURNAL_MAX_ITEM /* the longest exact item an allow file may hold */

static int oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory for the allow set");
    return -1;
}

/* One key. The hash is the filter's own, so a check that has hashed an item
 * for the filter probes the allow set with the same 128 bits. */
static int apply_one(struct fversion *v, enum journal_op op, const struct filter_key *k,
                     bool *changed, char *err, size_t errlen)
{
    struct hash128 h = filter_hash(v->f, k->data, k->len);
    unsigned old = 0;
    int rc = 0;
    switch (op) {
    case JOURNAL_OP_ADD: /* the bits are set by the caller, in one batch */
        rc = allow_update(v->allow, h, 0, ALLOW_REMOVED, &old);
        if (changed && (old & ALLOW_REMOVED))
            *changed = true;
        break;
    case JOURNAL_OP_ALLOW:
        rc = allow_update(v->allow, h, ALLOW_EXCEPT, 0, &old);
        if (changed)
            *changed = !(old & ALLOW_EXCEPT);
        break;
    case JOURNAL_OP_UNALLOW:
        rc = allow_update(v->allow, h, 0, ALLOW_EXCEPT, &old);
        if (changed)
            *changed = (old & ALLOW_EXCEPT) != 0;
        break;
    case JOURNAL_OP_REMOVE: {
        bool present = filter_check_hash(v->f, h);
        rc = allow_update(v->allow, h, ALLOW_REMOVED, 0, &old);
        if (changed)
            *changed = present && !(old & ALLOW_REMOVED);
        break;
    }
    }
    return rc != 0 ? oom(err, errlen) : 0;
}

enum words_delta_op amend_words_op(enum journal_op op)
{
    return op == JOURNAL_OP_ALLOW     ? WORDS_DELTA_ALLOW
           : op == JOURNAL_OP_UNALLOW ? WORDS_DELTA_UNALLOW
           : op == JOURNAL_OP_REMOVE  ? WORDS_DELTA_REMOVE
                                      : WORDS_DELTA_ADD;
}

/* A words filter's mutation: each item into the list's delta (an item the
 * delta cannot read changes nothing: a worker refused it before it was
 * journaled, so only a replay onto a list built with other settings meets
 * one), then one publish for the scans. */
static int words_apply(struct fversion *v, enum journal_op op, const struct filter_key *keys,
                       size_t n, bool *changed, bool publish, char *err, size_t errlen)
{
    char why[256];
    for (size_t i = 0; i < n; i++) {
        int rc = words_delta_apply(v->wd, amend_words_op(op), keys[i].data, keys[i].len, why,
                                   sizeof(why));
        if (changed)
            changed[i] = rc > 0;
    }
    if (publish && words_delta_publish(v->wd, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

int amend_words_publish(struct fversion *v, char *err, size_t errlen)
{
    return v->wd ? words_delta_publish(v->wd, err, errlen) : 0;
}

int amend_admit(struct fversion *v, enum journal_op op, size_t n, char *err, size_t errlen)
{
    if (v->wd)
        return words_delta_admit(v->wd, amend_words_op(op), n, err, errlen);
    struct filter_grow *g = op == JOURNAL_OP_ADD ? grow_of(v->f) : NULL;
    return g ? grow_admit(g, n, err, errlen) : 0;
}

int amend_apply(struct fversion *v, enum journal_op op, const struct filter_key *keys, size_t n,
                bool *changed, char *err, size_t errlen)
{
    return amend_apply_at(v, op, JOURNAL_NO_TIME, keys, n, changed, err, errlen);
}

/* An exact table's delta takes ADD and REMOVE (an allow-list's exceptions
 * leave the list as it is). Its answer is exact where the bits' is not, so
 * it decides changed: an ADD of a key the bits held by chance (a false
 * positive) is new, a REMOVE of such a key changes nothing. Called after the
 * bits and the allow set took op, so its word is the last. */
static int delta_apply(struct fversion *v, enum journal_op op, const struct filter_key *keys,
                       size_t n, bool *changed, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        int rc = op == JOURNAL_OP_ADD ? exact_delta_add(v->xd, keys[i].data, keys[i].len)
                                      : exact_delta_remove(v->xd, keys[i].data, keys[i].len);
        if (rc < 0) {
            snprintf(err, errlen, "out of memory for the exact table's delta");
            return -1;
        }
        if (changed)
            changed[i] = rc == 1;
    }
    return 0;
}

static int apply_bits(struct fversion *v, enum journal_op op, int64_t time_ms,
                      const struct filter_key *keys, size_t n, bool *changed, char *err,
                      size_t errlen);

int amend_apply_at(struct fversion *v, enum journal_op op, int64_t time_ms,
                   const struct filter_key *keys, size_t n, bool *changed, char *err, size_t errlen)
{
    if (v->wd)
        return words_apply(v, op, keys, n, changed, true, err, errlen);
    if (apply_bits(v, op, time_ms, keys, n, changed, err, errlen) != 0)
        return -1;
    if (v->xd && (op == JOURNAL_OP_ADD || op == JOURNAL_OP_REMOVE))
        return delta_apply(v, op, keys, n, changed, err, errlen);
    return 0;
}

/* The bits and the allow set: the mutation as a filter without an exact
 * table takes it. */
static int apply_bits(struct fversion *v, enum journal_op op, int64_t time_ms,
                      const struct filter_key *keys, size_t n, bool *changed, char *err,
                      size_t errlen)
{
    if (op == JOURNAL_OP_ADD && v->f->ring && time_ms != JOURNAL_NO_TIME) {
        ring_add_batch(v->f->ring, v->f, keys, n, changed, time_ms, clock_now_ms());
        if (allow_count(v->allow, ALLOW_REMOVED) == 0)
            return 0;
    } else if (op == JOURNAL_OP_ADD) {
        filter_add_batch(v->f, keys, n, changed);
        /* An add undoes a removal of the item; with no removal anywhere there
         * is nothing to look up (the common case: one relaxed load). */
        if (allow_count(v->allow, ALLOW_REMOVED) == 0)
            return 0;
    }
    /* A counting filter takes a removal in its counters, not in the allow
     * set. An item it does not hold is left alone (changed false): a worker
     * refused such a request before it was journaled (core/gate.c), so only
     * a version that differs from the journal's (a reload's new file) meets
     * one. */
    if (op == JOURNAL_OP_REMOVE && v->f->layout == FILTER_COUNTING && !v->f->comp) {
        for (size_t i = 0; i < n; i++) {
            bool ok = counting_remove_hash(v->f, filter_hash(v->f, keys[i].data, keys[i].len));
            if (changed)
                changed[i] = ok;
        }
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (apply_one(v, op, &keys[i], changed ? &changed[i] : NULL, err, errlen) != 0)
            return -1;
    return 0;
}

int amend_replay_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item, size_t len)
{
    struct fversion *v = ctx;
    /* A word list's items are published once, after the replay
     * (amend_words_publish), not one compile per item. */
    if (v->wd) {
        struct filter_key k = {item, len};
        char err[64];
        (void)time_ms;
        return words_apply(v, op, &k, 1, NULL, false, err, sizeof(err));
    }
    /* A windowed filter's add without a time was written before the filter
     * had a window: it lies in no window, so it is not replayed. */
    if (op == JOURNAL_OP_ADD && v->f->ring && time_ms == JOURNAL_NO_TIME)
        return 0;
    struct filter_key k = {item, len};
    char err[64];
    return amend_apply_at(v, op, time_ms, &k, 1, NULL, err, sizeof(err));
}

/* One line of an allow file (without its LF) into v: 0, 1 if it holds
 * nothing (blank, comment), -1 with why. */
static int allow_line(struct fversion *v, struct lists_line *l, const char *line, size_t len,
                      char *why, size_t whylen)
{
    while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r' ||
                   line[len - 1] == '\v' || line[len - 1] == '\f'))
        len--;
    if (len == 0 || line[0] == '#')
        return 1;
    if (v->f->keys == FILTER_KEYS_EXACT) {
        struct filter_key k = {line, len};
        return amend_apply(v, JOURNAL_OP_ALLOW, &k, 1, NULL, why, whylen);
    }
    enum url_kind kind =
        filter_keys_probe(v->f->keys) == FILTER_KEYS_HOST ? URL_KIND_HOST : URL_KIND_URL;
    while (len && (line[0] == ' ' || line[0] == '\t')) {
        line++;
        len--;
    }
    /* The file takes Adblock exceptions, so it may be an Adblock list: its
     * comments ('!') and its header ("[Adblock Plus 2.0]") hold nothing. No
     * host or URL starts with '!', yet the plain reading below took "! a
     * comment" for a key, which then went unblocked. */
    if (len && (line[0] == '!' || line[0] == '[') &&
        lists_parse_line(LISTS_ADBLOCK, kind, line, len, l) == LISTS_COMMENT)
        return 1;
    bool rule = len >= 2 && line[0] == '@' && line[1] == '@';
    enum lists_class cls = rule ? lists_parse_line(LISTS_ADBLOCK, kind, line + 2, len - 2, l)
                                : lists_parse_line(LISTS_PLAIN, kind, line, len, l);
    if (cls == LISTS_BLANK || cls == LISTS_COMMENT)
        return 1;
    if (cls != LISTS_KEPT) {
        snprintf(why, whylen, "not a %s key: %s%s%s", kind == URL_KIND_HOST ? "host" : "url",
                 cls == LISTS_REJECTED ? lists_reason_name(l->reason) : lists_class_name(cls),
                 l->why[0] ? ": " : "", l->why);
        return -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        struct filter_key k = {l->e[i].ptr, l->e[i].len};
        if (amend_apply(v, JOURNAL_OP_ALLOW, &k, 1, NULL, why, whylen) != 0)
            return -1;
    }
    return 0;
}

/* Lines are read into a buffer bounded by ALLOW_LINE_MAX, so a file without
 * line ends costs no more than that. ~50 lines: one loop over the bytes with
 * its three ends (a line, too long, the end of the file). */
int amend_load_allow_file(struct fversion *v, const char *path, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "re");
    if (!fp) {
        snprintf(err, errlen, "allow file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    char *line = malloc(ALLOW_LINE_MAX + 1);
    struct lists_line *l = malloc(sizeof(*l));
    v->allow_file = strdup(path);
    int rc = -1;
    if (!line || !l || !v->allow_file) {
        snprintf(err, errlen, "allow file %s: out of memory", path);
        goto out;
    }
    if (fstat(fileno(fp), &st) == 0) {
        v->allow_dev = st.st_dev;
        v->allow_ino = st.st_ino;
        v->allow_size = st.st_size;
        v->allow_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    size_t len = 0;
    unsigned lineno = 1;
    char why[256];
    for (;;) {
        int c = getc_unlocked(fp);
        if (c != '\n' && c != EOF) {
            if (len == ALLOW_LINE_MAX) {
                snprintf(err, errlen, "allow file %s:%u: a line longer than %u bytes", path, lineno,
                         ALLOW_LINE_MAX);
                goto out;
            }
            line[len++] = (char)c;
            continue;
        }
        if (c == EOF && ferror(fp)) {
            snprintf(err, errlen, "allow file %s: read error: %s", path, strerror(errno));
            goto out;
        }
        if ((c == '\n' || len) && allow_line(v, l, line, len, why, sizeof(why)) < 0) {
            snprintf(err, errlen, "allow file %s:%u: %s", path, lineno, why);
            goto out;
        }
        if (c == EOF)
            break;
        len = 0;
        lineno++;
    }
    rc = 0;
out:
    fclose(fp);
    free(line);
    free(l);
    return rc;
}

int amend_words_fold(struct fversion *v, size_t max, uint64_t *changes, char *err, size_t errlen)
{
    char why[1024];
    struct words_delta_counts dc;
    words_delta_counts(v->wd, &dc);
    *changes = dc.words + dc.exceptions + dc.removed;
    struct words_matcher *m = words_delta_fold(v->wd, NULL, why, sizeof(why));
    struct words_delta *d = m ? words_delta_new(m, max, why, sizeof(why)) : NULL;
    if (!d) {
        words_matcher_free(m);
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    words_delta_free(v->wd); /* before its list */
    words_matcher_free(v->words);
    v->words = m;
    v->wd = d;
    return 0;
}

int amend_words_fold_loaded(const struct conf_filter *cf, struct fversion *v, char *err,
                            size_t errlen)
{
    if (!v->wd || !cf->words_fold_after)
        return 0;
    struct words_delta_counts dc;
    words_delta_counts(v->wd, &dc);
    if (dc.words + dc.exceptions + dc.removed == 0)
        return 0;
    double t0 = util_now();
    uint64_t changes;
    if (amend_words_fold(v, cf->words_delta_max, &changes, err, errlen) != 0)
        return -1;
    v->folded_at = util_wall_seconds();
    v->fold_seconds = util_now() - t0;
    v->folded_changes = changes;
    return 0;
}
