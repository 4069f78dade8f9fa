/* entry: one filter's entry in the catalog made from its config block, for
 * whoever makes them: the start-up load and the reload (reload.c), and the
 * filters made at run time (created.c). The journal is opened (and replayed
 * onto the version loaded), the status INFO shows is kept. The registry's
 * writer only: the main thread at start-up, then the reload thread. */
#include "config.h"

#include "store/entry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "bloom/grow.h"
#include "store/amend.h"
#include "store/journal.h"
#include "store/loader.h"

/* Replay [from, to) of a journal onto a version, every record as the
 * mutation it was (store/amend.c); -1 with err on failure. */
int64_t entry_replay(struct journal *j, struct fversion *v, uint64_t from, uint64_t to,
                      char *err, size_t errlen)
{
    int64_t n = journal_replay_ops(j, from, to, amend_replay_item, v, err, errlen);
    if (n > 0 && amend_words_publish(v, err, errlen) != 0)
        return -1;
    /* A growing filter replayed near a boundary: its next sub-filter is
     * planned now, not by the first add after the load. */
    struct filter_grow *g = grow_of(v->f);
    if (g && n > 0)
        grow_prepare(g);
    return n;
}

struct journal *entry_open_journal(const struct conf_filter *cf, char *err, size_t errlen)
{
    struct journal_scan scan;
    char why[1024];
    struct journal *j = journal_open(cf->journal, cf->fsync, &scan, why, sizeof(why));
    if (!j) {
        snprintf(err, errlen, "filter %s: journal: %s", cf->name, why);
        return NULL;
    }
    if (scan.torn_at != JOURNAL_NO_TEAR)
        log_warn("filter %s: journal %s: a torn record at offset %llu (%llu bytes: %s), the "
                 "mark of a crash mid-write, was cut off; the %llu complete records before it "
                 "are kept",
                 cf->name, cf->journal, (unsigned long long)scan.torn_at,
                 (unsigned long long)scan.torn_bytes, scan.torn_why ? scan.torn_why : "?",
                 (unsigned long long)scan.records);
    return j;
}

/* The seed of a filter loaded to be replayed from j: a growing filter's
 * sub-filters depend on it (bloom/grow.h), so it comes from the journal and
 * every replay makes the same ones; any other filter draws one (0). */
uint64_t entry_filter_seed(const struct conf_filter *cf, const struct journal *j)
{
    return cf->growth && j ? journal_seed(j) : 0;
}

/* Close a journal, logging a failed final flush (the adds it held were
 * acknowledged under a policy that allowed losing them on power failure). */
void entry_close_journal(struct journal *j)
{
    char err[1024];
    if (j && journal_close(j, err, sizeof(err)) != 0)
        log_error("journal: %s", err);
}

void entry_set_status(struct fstate *st, const char *status, const char *error)
{
    pthread_mutex_lock(&st->mu);
    st->last_reload_at = util_wall_seconds();
    snprintf(st->last_status, sizeof(st->last_status), "%s", status);
    size_t n = error ? strlen(error) : 0;
    if (n >= sizeof(st->last_error))
        n = sizeof(st->last_error) - 1;
    memcpy(st->last_error, error ? error : "", n);
    st->last_error[n] = '\0';
    pthread_mutex_unlock(&st->mu);
}

/* Start-up and CREATE (the registry's writer): one filter's entry, its id
 * and state taken, its journal opened and replayed onto the version loaded.
 * 0, or -1 with err (e->v NULL; the state, if taken, is released by the
 * next publish, which does not hold it). */
int entry_start(struct registry *reg, const struct conf_filter *cf, unsigned threads,
                       struct fentry *e, char *err, size_t errlen)
{
    bool fresh;
    e->v = NULL;
    int id = registry_filter_id(reg, cf->name, &fresh);
    if (id < 0) {
        snprintf(err, errlen, "filter %s: more than %u filters", cf->name, REGISTRY_MAX_FILTERS);
        return -1;
    }
    e->id = (unsigned)id;
    e->st = registry_state(reg, e->id);
    snprintf(e->name, sizeof(e->name), "%s", cf->name);
    e->name_len = strlen(e->name);
    /* The journal first: a growing filter is seeded from it. */
    struct journal *j = atomic_load(&e->st->journal);
    if (cf->journal && !j) {
        if (!(j = entry_open_journal(cf, err, errlen)))
            return -1;
        atomic_store(&e->st->journal, j);
    }
    if (!(e->v = loader_load_filter_seed(cf, threads, entry_filter_seed(cf, j), err, errlen)))
        return -1;
    if (j) {
        char why[1024];
        double t0 = util_now();
        int64_t n = entry_replay(j, e->v, 0, journal_end(j), why, sizeof(why));
        if (n < 0) {
            snprintf(err, errlen, "filter %s: journal %s: %s", cf->name, cf->journal, why);
            fversion_free(e->v);
            e->v = NULL;
            return -1;
        }
        if (n > 0)
            log_info("filter %s: replayed %lld items from journal %s (%.3f s)", cf->name,
                     (long long)n, cf->journal, util_now() - t0);
        if (amend_words_fold_loaded(cf, e->v, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "filter %s: folding its journal's changes: %s", cf->name, why);
            fversion_free(e->v);
            e->v = NULL;
            return -1;
        }
    }
    entry_set_status(e->st, "loaded", NULL);
    return 0;
}

