/* Reload and start-up loading. Everything here runs on one thread at a time:
 * the main thread at start-up, then only the reload thread, which is the
 * registry's single writer. */
#include "config.h"

#include "store/reload.h"
#include "store/reload_int.h"
#include "store/entry.h"
#include "store/created.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bloom/grow.h"
#include "store/amend.h"
#include "store/housekeep.h"
#include "store/journal.h"
#include "store/loader.h"
#include "base/log.h"
#include "base/notify.h"
#include "base/seam.h"
#include "base/util.h"

void reload_release_state(struct registry *reg, struct fstate *st)
{
    struct journal *j = atomic_exchange(&st->journal, NULL);
    for (unsigned id = 0; j && id < REGISTRY_MAX_FILTERS; id++) {
        struct fstate *o = reg->states[id];
        if (o && o != st && atomic_load(&o->journal) == j)
            return; /* handed over to a new name by a reload (see adopt_journal) */
    }
    entry_close_journal(j);
}

/* ---- start-up ---- */

int reload_publish_conf(struct registry *reg, struct conf *conf, char *err, size_t errlen)
{
    struct catalog *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->conf = conf;
    registry_publish(reg, c);
    return 0;
}

int reload_initial(struct registry *reg, struct conf *conf, unsigned threads, char *err,
                   size_t errlen)
{
    reg->on_state_release = reload_release_state;
    struct catalog *c = calloc(1, sizeof(*c));
    if (!c || (conf->n_filters && !(c->entries = calloc(conf->n_filters, sizeof(*c->entries))))) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* The config reload_publish_conf published: the new catalog takes it
     * over. No worker runs yet, so the writer may still change the old one. */
    struct catalog *cur = atomic_load(&reg->current);
    bool taken = cur && cur->conf == conf;
    for (size_t i = 0; i < conf->n_filters; i++) {
        if (entry_start(reg, &conf->filters[i], threads, &c->entries[i], err, errlen) != 0)
            goto fail;
        c->n++;
    }
    /* Then the filters created at run time before the last stop. */
    if (created_load_all(reg, conf, threads, c, err, errlen) != 0)
        goto fail;
    c->conf = conf;
    if (taken)
        cur->conf = NULL;
    registry_publish(reg, c);
    return 0;
fail:
    for (size_t i = 0; i < c->n; i++)
        fversion_free(c->entries[i].v);
    free(c->entries);
    free(c);
    return -1;
}

/* ---- one reload ---- */

static json_t *status_json(const char *name, const char *status, uint64_t generation,
                           const char *error)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "status", json_string(status));
    if (generation)
        json_object_set_new(o, "generation", json_integer((json_int_t)generation));
    if (error)
        json_object_set_new(o, "error", json_string(error));
    return o;
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A filter renamed in the config, its journal path kept: the old name still
 * holds that journal (open, and flock'ed) until the new catalog is published,
 * so opening it again would fail. Instead the new name takes the same journal
 * object: the journal of a filter that is leaving (not in conf) whose path is
 * cf->journal, or NULL; *from is then that filter's state. The old name's
 * mutations are refused from the new name's publish_pending on (its version
 * would not see them), so only the new name appends once its version is
 * replayed; reload_release_state leaves the journal open when the old name
 * is gone. Reload thread. */
static struct journal *adopt_journal(const struct catalog *cur, const struct conf *conf,
                                     const struct conf_filter *cf, struct fstate **from)
{
    for (size_t i = 0; cf->journal && i < cur->n; i++) {
        const struct fentry *o = &cur->entries[i];
        struct journal *oj = o->st ? atomic_load(&o->st->journal) : NULL;
        if (oj && !conf_find_filter(conf, o->name) && same_str(journal_path(oj), cf->journal)) {
            *from = o->st;
            return oj;
        }
    }
    return NULL;
}

/* Does the filter as configured differ from the version being served? A file
 * counts as changed when its device, inode, size or mtime differ (a rebuilt
 * file renamed into place has a new inode). */
static bool allow_stale(const struct fversion *v, const struct conf_filter *cf)
{
    if (!same_str(v->allow_file, cf->allow))
        return true;
    struct stat st;
    if (!cf->allow)
        return false;
    if (stat(cf->allow, &st) != 0)
        return true; /* the load will say why */
    int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return st.st_dev != v->allow_dev || st.st_ino != v->allow_ino || st.st_size != v->allow_size ||
           mt != v->allow_mtime_ns;
}

static bool version_stale(const struct fversion *v, const struct conf_filter *cf,
                          const struct conf_filter *old_cf)
{
    /* The allow-list is part of the version: a changed one reloads it. */
    if (allow_stale(v, cf))
        return true;
    if (cf->file) {
        struct stat st;
        if (stat(cf->file, &st) != 0)
            return v->file != NULL || errno != ENOENT; /* vanished, or unreadable */
        if (!v->file || strcmp(v->file, cf->file) != 0 ||
            (old_cf && (old_cf->delta_capacity != cf->delta_capacity ||
                        old_cf->context != cf->context || old_cf->full != cf->full ||
                        old_cf->words_delta_max != cf->words_delta_max)))
            return true;
        int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        return st.st_dev != v->dev || st.st_ino != v->ino || st.st_size != v->size ||
               mt != v->mtime_ns;
    }
    if (v->file)
        return true;
    return !old_cf || old_cf->capacity != cf->capacity || old_cf->fpr != cf->fpr ||
           old_cf->layout != cf->layout || old_cf->file != NULL ||
           old_cf->window_ms != cf->window_ms || old_cf->slices != cf->slices ||
           old_cf->growth != cf->growth || old_cf->max_memory != cf->max_memory ||
           old_cf->full != cf->full;
}

/* One reload, built beside the served catalog (reload thread). */
struct run {
    struct registry *reg;
    unsigned threads;
    struct conf *conf;         /* the new config: next owns it once published */
    const struct catalog *cur; /* what is served until the publish */
    struct catalog *next;      /* what will be */
    json_t *arr;               /* the report's per-filter statuses */
    struct fstate **pending;   /* states with st->pending set: cleared after the grace */
    struct journal **retired;  /* journals swapped out: closed after the grace */
    size_t n_pending, n_retired;
    bool ok;
};

/* One filter of the new config, as plan_filter found it. */
struct change {
    const struct conf_filter *cf;
    const struct fentry *old; /* its entry in the served catalog; NULL if new */
    struct fstate *st;
    unsigned id;
    bool journal_moved;     /* the journal to use is not the open one (new path, moved aside, off) */
    struct journal *j;      /* the journal v is replayed from and st will hold; NULL: none */
    struct journal *new_j;  /* opened by this reload: closed if the filter fails */
    struct fstate *from;    /* j is the journal of this filter, leaving the config */
    struct fversion *v;     /* the new version */
    uint64_t end;           /* where the first replay of j stopped */
};

static void warn_restart(void *ctx, const char *msg)
{
    (void)ctx;
    log_warn("reload: %s", msg);
}

/* Plan: what changed for one filter. Finds its id and state, and whether its
 * journal or its version is stale. 1: nothing changed, the served entry is
 * kept; 0: a new version is to be loaded; -1: failed (err). */
static int plan_filter(struct run *run, const struct conf_filter *cf, struct change *ch, char *err,
                       size_t errlen)
{
    *ch = (struct change){.cf = cf};
    ch->old = catalog_find(run->cur, cf->name, strlen(cf->name));
    const struct conf_filter *old_cf = ch->old ? conf_find_filter(run->cur->conf, cf->name) : NULL;
    bool fresh;
    int id = ch->old ? (int)ch->old->id : registry_filter_id(run->reg, cf->name, &fresh);
    if (id < 0) {
        snprintf(err, errlen, "more than %u filters", REGISTRY_MAX_FILTERS);
        return -1;
    }
    ch->id = (unsigned)id;
    ch->st = registry_state(run->reg, ch->id);
    struct journal *cur_j = atomic_load(&ch->st->journal);
    /* A new path, or the file at the path is no longer the open one (an
     * operator moved the journal aside to retire it): open a new journal. */
    char statwhy[1024];
    ch->journal_moved = !same_str(cur_j ? journal_path(cur_j) : NULL, cf->journal) ||
                        (cur_j && journal_replaced(cur_j, statwhy, sizeof(statwhy)) == 1);
    if (cur_j && !ch->journal_moved)
        journal_set_policy(cur_j, cf->fsync);
    ch->j = ch->journal_moved ? NULL : cur_j;
    if (ch->old && !ch->journal_moved && !version_stale(ch->old->v, cf, old_cf))
        return 1;
    return 0;
}

/* Load one: the filter's new version off to the side (the old one keeps
 * serving), with the journal it will use opened (or taken over from a filter
 * leaving the config) and replayed onto it up to its current end. 0, or -1
 * with err (ch->new_j and ch->v are then the caller's to release). */
static int load_one(struct run *run, struct change *ch, char *err, size_t errlen)
{
    const struct conf_filter *cf = ch->cf;
    if (ch->journal_moved && cf->journal) {
        if ((ch->j = adopt_journal(run->cur, run->conf, cf, &ch->from))) {
            log_info("filter %s: takes over journal %s from a filter no longer configured",
                     cf->name, cf->journal);
        } else if (!(ch->j = ch->new_j = entry_open_journal(cf, err, errlen))) {
            return -1;
        }
    }
    /* At the lowest priority: the workers serve the old version meanwhile,
     * and a load competing with them for the CPUs raised their p99 ~3x. */
    if (!(ch->v = loader_load_filter_idle(cf, run->threads, entry_filter_seed(cf, ch->j), err,
                                          errlen)))
        return -1;
    ch->end = ch->j ? journal_end(ch->j) : 0;
    char why[1024];
    if (ch->j && entry_replay(ch->j, ch->v, 0, ch->end, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "filter %s: journal %s: %s", cf->name, journal_path(ch->j), why);
        return -1;
    }
    if (ch->j && amend_words_fold_loaded(cf, ch->v, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "filter %s: folding its journal's changes: %s", cf->name, why);
        return -1;
    }
    return 0;
}

/* Publish pending: from here on every mutation reaches the new version too.
 * One critical section under the filter's mut_mu, which every mutation holds
 * from its journal append to its last version (core/gate.c, mutate_locked):
 * swap the journal if it rotates, store `pending`, read the journal's end and
 * replay the tail [ch->end, end) onto v. A mutation therefore ends before it
 * (its record lies before that end, or in the retired journal if the journal
 * rotates) or begins after it (it sees the new journal and `pending`), and v
 * sees every mutation in the journal's order: adds alone would commute, a
 * REMOVE and an ADD of one item do not. The retired journal is closed, and
 * `pending` cleared, only after the grace period of the publish (run_finish).
 * A journal taken over from a renamed filter (ch->from) is appended to under
 * that filter's mut_mu too: it is held as well, and that filter's mutations
 * refused from here on (`leaving`), or one acknowledged after the tail was
 * read would be in the journal (a restart replays it) but not in v. Two locks,
 * the new name's first: only the reload thread ever holds two.
 * 0, or -1 with err: the tail could not be read (`pending` is cleared in the
 * same critical section, so no mutation saw v: the caller frees it). */
static int publish_pending(struct run *run, struct change *ch, char *err, size_t errlen)
{
    struct fstate *st = ch->st;
    pthread_mutex_lock(&st->mut_mu);
    if (ch->from) {
        pthread_mutex_lock(&ch->from->mut_mu);
        atomic_store(&ch->from->leaving, true);
    }
    if (ch->journal_moved) {
        struct journal *was = atomic_exchange(&st->journal, ch->j);
        if (was)
            run->retired[run->n_retired++] = was;
        ch->new_j = NULL; /* st owns it now */
        seam_reload_after_swap(ch->cf->name);
    }
    atomic_store(&st->pending, ch->v);
    if (ch->j) {
        uint64_t end2 = journal_end(ch->j);
        char why[1024];
        if (entry_replay(ch->j, ch->v, ch->end, end2, why, sizeof(why)) < 0) {
            snprintf(err, errlen, "filter %s: journal %s: %s", ch->cf->name,
                     journal_path(ch->j), why);
            atomic_store(&st->pending, NULL);
            if (ch->from) {
                atomic_store(&ch->from->leaving, false);
                pthread_mutex_unlock(&ch->from->mut_mu);
            }
            pthread_mutex_unlock(&st->mut_mu);
            return -1;
        }
    }
    if (ch->from)
        pthread_mutex_unlock(&ch->from->mut_mu);
    pthread_mutex_unlock(&st->mut_mu);
    run->pending[run->n_pending++] = st;
    return 0;
}

/* A filter failed: log, report, release what this reload opened for it, and
 * keep serving its old version (if any). */
static void fail_filter(struct run *run, struct change *ch, const char *err)
{
    const struct conf_filter *cf = ch->cf;
    run->ok = false;
    log_error("reload: %s; %s", err, ch->old ? "the old version keeps serving" : "not served");
    entry_close_journal(ch->new_j);
    fversion_free(ch->v);
    /* The report names the filter already: drop the "filter NAME: " prefix. */
    const char *reason = err;
    size_t nl = strlen(cf->name);
    if (strncmp(reason, "filter ", 7) == 0 && strncmp(reason + 7, cf->name, nl) == 0 &&
        strncmp(reason + 7 + nl, ": ", 2) == 0)
        reason += 9 + nl;
    if (ch->st)
        entry_set_status(ch->st, "failed", reason);
    json_array_append_new(
        run->arr, status_json(cf->name, "failed", ch->old ? ch->old->v->generation : 0, reason));
    if (ch->old)
        run->next->entries[run->next->n++] = *ch->old;
}

/* The new version joins the next catalog. */
static void add_entry(struct run *run, struct change *ch)
{
    const char *name = ch->cf->name;
    ch->v->generation = ch->old ? ch->old->v->generation + 1 : 1;
    struct fentry *e = &run->next->entries[run->next->n++];
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->name_len = strlen(e->name);
    e->v = ch->v;
    e->id = ch->id;
    e->st = ch->st;
    entry_set_status(ch->st, ch->old ? "reloaded" : "loaded", NULL);
    json_array_append_new(run->arr, status_json(name, ch->old ? "reloaded" : "added",
                                                ch->v->generation, NULL));
    log_info("filter %s: %s, generation %llu", name, ch->old ? "reloaded" : "added",
             (unsigned long long)ch->v->generation);
}

/* The config could not be read: nothing changes, and every filter says so
 * (INFO <filter>, the report), or INFO would keep showing an older reload's
 * outcome. */
static void fail_all(struct registry *reg, json_t *report, json_t *arr, const char *err)
{
    log_error("reload failed: %s; nothing changed", err);
    const struct catalog *cur = registry_read(reg);
    for (size_t i = 0; i < cur->n; i++) {
        const struct fentry *e = &cur->entries[i];
        entry_set_status(e->st, "failed", err);
        json_array_append_new(arr, status_json(e->name, "failed", e->v->generation, err));
    }
    json_object_set_new(report, "ok", json_false());
    json_object_set_new(report, "error", json_string(err));
}

/* Set up a run: the next catalog and the bookkeeping arrays. -1 when out of memory. */
static int run_begin(struct run *run, struct registry *reg, unsigned threads, struct conf *conf,
                     json_t *arr)
{
    *run = (struct run){.reg = reg, .threads = threads, .conf = conf, .cur = registry_read(reg),
                        .arr = arr, .ok = true};
    /* The filters created at run time stay: room for them too. */
    size_t slots = conf->n_filters + created_count(run->cur);
    if (!slots)
        slots = 1;
    run->next = calloc(1, sizeof(*run->next));
    run->pending = calloc(slots, sizeof(*run->pending));
    run->retired = calloc(slots, sizeof(*run->retired));
    if (run->next)
        run->next->entries = calloc(slots, sizeof(*run->next->entries));
    if (run->next && run->pending && run->retired && run->next->entries)
        return 0;
    if (run->next)
        free(run->next->entries);
    free(run->next);
    free(run->pending);
    free(run->retired);
    return -1;
}

/* Publish the next catalog (waits out the grace period and frees the old),
 * then what only the grace made safe: clear pending, close retired
 * journals. */
static void run_finish(struct run *run)
{
    for (size_t i = 0; i < run->cur->n; i++)
        if (!run->cur->entries[i].st->created &&
            !conf_find_filter(run->conf, run->cur->entries[i].name)) {
            json_array_append_new(run->arr,
                                  status_json(run->cur->entries[i].name, "removed", 0, NULL));
            log_info("filter %s: removed", run->cur->entries[i].name);
        }
    run->next->conf = run->conf;
    seam_reload_before_publish();
    registry_publish(run->reg, run->next);
    /* Every worker now holds the new versions: they take adds directly. */
    for (size_t i = 0; i < run->n_pending; i++)
        atomic_store(&run->pending[i]->pending, NULL);
    for (size_t i = 0; i < run->n_retired; i++)
        entry_close_journal(run->retired[i]);
    free(run->pending);
    free(run->retired);
}

/* The reload proper (reload thread): plan each filter of the new config
 * (plan_filter), load the changed ones beside the served catalog (load_one),
 * make each receive every add from then on (publish_pending), and publish
 * the next catalog once (run_finish), so that when it goes live every new
 * version already holds every acknowledged add. A filter that fails keeps
 * its old version. */
json_t *reload_run(struct registry *reg, const char *config_path, unsigned threads)
{
    char err[2048];
    double t0 = util_now();
    json_t *report = json_object();
    json_t *arr = json_array();
    json_object_set_new(report, "filters", arr);
    struct conf *conf = conf_load(config_path, err, sizeof(err));
    if (!conf) {
        fail_all(reg, report, arr, err);
        return report;
    }
    struct run run;
    /* What needs a restart keeps its running value, in the published conf
     * too, so what INFO and every worker read is what is in force. */
    if (conf_keep_running(conf, registry_read(reg)->conf, warn_restart, NULL) != 0 ||
        run_begin(&run, reg, threads, conf, arr) != 0) {
        conf_free(conf);
        json_object_set_new(report, "ok", json_false());
        json_object_set_new(report, "error", json_string("out of memory"));
        return report;
    }
    log_set_level((enum log_level)conf->log_level);
    for (size_t i = 0; i < conf->n_filters; i++) {
        struct change ch;
        const struct conf_filter *cf = &conf->filters[i];
        const struct fentry *made = catalog_find(run.cur, cf->name, strlen(cf->name));
        if (made && made->st->created) {
            /* The name belongs to a filter created at run time: it keeps it. */
            snprintf(err, sizeof(err), "the name is taken by a filter created at run time "
                                       "(DROP it first)");
            log_error("reload: filter %s: %s", cf->name, err);
            json_array_append_new(arr, status_json(cf->name, "failed", 0, err));
            run.ok = false;
            continue;
        }
        int rc = plan_filter(&run, cf, &ch, err, sizeof(err));
        if (rc == 1) {
            run.next->entries[run.next->n++] = *ch.old;
            entry_set_status(ch.st, "unchanged", NULL);
            json_array_append_new(
                arr, status_json(ch.cf->name, "unchanged", ch.old->v->generation, NULL));
        } else if (rc < 0 || load_one(&run, &ch, err, sizeof(err)) != 0 ||
                   publish_pending(&run, &ch, err, sizeof(err)) != 0) {
            fail_filter(&run, &ch, err);
        } else {
            add_entry(&run, &ch);
        }
    }
    for (size_t i = 0; i < run.cur->n; i++)
        if (run.cur->entries[i].st->created)
            run.next->entries[run.next->n++] = run.cur->entries[i];
    run_finish(&run);
    json_object_set_new(report, "ok", json_boolean(run.ok));
    log_info("reload %s in %.3f s", run.ok ? "done" : "finished with errors", util_now() - t0);
    return report;
}

