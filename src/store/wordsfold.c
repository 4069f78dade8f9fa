/* wordsfold: a word list's run-time changes folded into its compiled list
 * (wordsfold.h). A fold is a reload of one filter whose new version is the
 * list file loaded again, the journal replayed onto it and then compiled in
 * (words_delta_fold), with an empty delta: loaded, replayed and compiled on
 * the loader's low-priority thread beside the served version, then published
 * as a reload publishes (reload.c, publish_pending), so that the new version
 * holds every acknowledged change when it goes live. Reload thread. */
#include "config.h"

#include "store/wordsfold.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "store/amend.h"
#include "store/entry.h"
#include "store/journal.h"
#include "store/loader.h"
#include "words/delta.h"
#include "words/words.h"

#define FOLD_RETRY_MIN 60.0 /* seconds before a failed fold is tried again, at least */

/* What the loader's thread hands back. */
struct fold_ctx {
    const struct fversion *cur; /* the version served */
    struct journal *j;
    size_t max;       /* the filter's words_delta_max */
    uint64_t end;     /* where the replay onto the loaded list stopped */
    uint64_t changes; /* the delta's words, exceptions and removals folded */
};

static bool same_file(const struct fversion *a, const struct fversion *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns;
}

/* loader_then_fn, on the loader's low-priority thread: the journal up to its
 * end replayed onto the list just loaded (as a reload does), then the delta
 * compiled into a new list that replaces it, with a new empty delta. Not
 * when the file is not the one served (rebuilt, not yet reloaded): then
 * fold_one leaves it to the reload, and the file may not even hold a word
 * list now (a filter whose kind is its file's), with no delta to fold. */
static int fold_then(struct fversion *v, void *arg, char *err, size_t errlen)
{
    struct fold_ctx *c = arg;
    if (!c->cur->file || !v->file || !same_file(v, c->cur))
        return 0;
    if (!v->wd) {
        snprintf(err, errlen, "%s is not a word list", v->file);
        return -1;
    }
    char why[1024];
    c->end = journal_end(c->j);
    if (entry_replay(c->j, v, 0, c->end, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "journal %s: %s", journal_path(c->j), why);
        return -1;
    }
    return amend_words_fold(v, c->max, &c->changes, err, errlen);
}

/* Fold entry i of cur, whose config is cf, and publish it. 0; 1 with why
 * when it is not folded now (its file changed: the next reload takes the
 * new list, and the fold waits for it); -1 with err. */
static int fold_one(struct registry *reg, unsigned threads, const struct catalog *cur, size_t i,
                    const struct conf_filter *cf, char *err, size_t errlen)
{
    const struct fentry *e = &cur->entries[i];
    struct fstate *st = e->st;
    struct journal *j = atomic_load(&st->journal);
    double t0 = util_now();
    struct fold_ctx c = {.cur = e->v, .j = j, .max = cf->words_delta_max};
    struct fversion *v = loader_load_filter_idle_then(cf, threads, entry_filter_seed(cf, j),
                                                      fold_then, &c, err, errlen);
    if (!v)
        return -1;
    if (!e->v->file || !v->file || !same_file(v, e->v)) {
        snprintf(err, errlen,
                 "its file changed since it was loaded: the next reload serves "
                 "the new list (with the changes replayed onto it)");
        fversion_free(v);
        return 1;
    }
    struct catalog *next = registry_catalog_copy(cur, 0);
    if (!next) {
        snprintf(err, errlen, "out of memory");
        fversion_free(v);
        return -1;
    }
    /* As a reload publishes (reload.c, publish_pending): under mut_mu, from
     * here on every mutation reaches v too, and the tail recorded since the
     * replay is replayed onto it. The journal cannot rotate meanwhile: only
     * this thread swaps it. */
    char why[1024];
    pthread_mutex_lock(&st->mut_mu);
    atomic_store(&st->pending, v);
    uint64_t end2 = journal_end(j);
    int64_t tail = entry_replay(j, v, c.end, end2, why, sizeof(why));
    if (tail < 0)
        atomic_store(&st->pending, NULL);
    pthread_mutex_unlock(&st->mut_mu);
    if (tail < 0) {
        snprintf(err, errlen, "journal %s: %s", journal_path(j), why);
        free(next->entries);
        free(next);
        fversion_free(v);
        return -1;
    }
    v->generation = e->v->generation + 1;
    v->loaded_at = e->v->loaded_at; /* the file's load; the fold has its own time */
    v->load_seconds = e->v->load_seconds;
    v->folded_at = util_wall_seconds();
    v->fold_seconds = util_now() - t0;
    v->folded_changes = c.changes;
    next->entries[i].v = v;
    registry_publish(reg, next); /* waits out the grace: no worker holds the old version */
    atomic_store(&st->pending, NULL);
#ifdef __GLIBC__
    /* The fold's builder and the old list were freed, much of it in the
     * loader thread's arena, which glibc keeps: give the pages back. */
    malloc_trim(0);
#endif
    log_info("filter %s: %llu run-time changes folded into the word list in %.3f s, generation "
             "%llu",
             cf->name, (unsigned long long)c.changes, v->fold_seconds,
             (unsigned long long)v->generation);
    return 0;
}

/* Whether entry e, whose config is cf, is due for a fold at now: its delta
 * holds changes, since words_fold_after seconds or half its max entries. */
static bool fold_due(const struct fentry *e, const struct conf_filter *cf, double now)
{
    struct fstate *st = e->st;
    if (!e->v->wd || e->created || !cf || !cf->words_fold_after || !atomic_load(&st->journal))
        return false;
    struct words_delta_counts dc;
    words_delta_counts(e->v->wd, &dc);
    if (dc.words + dc.exceptions + dc.removed == 0) {
        st->wd_since = 0;
        return false;
    }
    if (st->wd_since == 0)
        st->wd_since = now;
    if (now < st->wd_retry)
        return false;
    bool many = dc.max && dc.words + dc.exceptions >= (dc.max + 1) / 2;
    return many || now - st->wd_since >= cf->words_fold_after;
}

void wordsfold_tick(struct registry *reg, unsigned threads)
{
    const struct catalog *cur = registry_read(reg);
    double now = util_now();
    for (size_t i = 0; i < cur->n; i++) {
        const struct fentry *e = &cur->entries[i];
        const struct conf_filter *cf = conf_find_filter(cur->conf, e->name);
        if (!fold_due(e, cf, now))
            continue;
        struct fstate *st = e->st;
        char err[2048];
        int rc = fold_one(reg, threads, cur, i, cf, err, sizeof(err));
        if (rc == 0) {
            st->wd_since = 0;
            st->wd_retry = 0;
        } else {
            double wait = cf->words_fold_after;
            st->wd_retry = util_now() + (wait > FOLD_RETRY_MIN ? wait : FOLD_RETRY_MIN);
            if (rc < 0)
                log_error("filter %s: fold of its run-time changes failed: %s; the delta "
                          "keeps serving them, tried again in %.0f s",
                          e->name, err, st->wd_retry - util_now());
            else
                log_info("filter %s: run-time changes not folded: %s", e->name, err);
        }
        return; /* one a tick; cur is stale after a publish */
    }
}
