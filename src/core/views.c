/* INFO and filter JSON, see views.h. */
#include "config.h"

#include "core/views.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adblock/adblock.h"
#include "words/delta.h"
#include "words/words.h"
#include "base/clock.h"
#include "base/util.h"
#include "bloom/filter.h"
#include "bloom/format.h"
#include "bloom/grow.h"
#include "bloom/fusedelta.h"
#include "bloom/ring.h"
#include "exact/delta.h"
#include "store/allow.h"
#include "store/journal.h"

static json_t *iso_time(int64_t t)
{
    char ts[32];
    struct tm tm;
    time_t tt = (time_t)t;
    gmtime_r(&tt, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(ts);
}

/* INFO's "window" object of a windowed filter (docs/protocol.md): the
 * window, the next rotation, and each slot of the ring, oldest first. Any
 * thread holding the version. */
static json_t *window_json(struct filter_ring *r)
{
    int64_t now = clock_now_ms();
    int64_t cur = ring_epoch_of(r, now);
    json_t *o = json_object();
    json_object_set_new(o, "window_ms", json_integer((json_int_t)r->window_ms));
    json_object_set_new(o, "slices", json_integer(r->n));
    json_object_set_new(o, "slice_ms", json_integer((json_int_t)r->slice_ms));
    json_object_set_new(o, "now_ms", json_integer((json_int_t)now));
    json_object_set_new(o, "next_rotation_ms", json_integer((json_int_t)((cur + 1) * r->slice_ms)));
    json_t *arr = json_array();
    for (int64_t e = cur - (int64_t)r->n; e <= cur; e++) {
        unsigned i = (unsigned)(((e % r->slots) + r->slots) % r->slots);
        struct ring_slice_info si;
        ring_slice_info(r, i, now, &si);
        bool here = si.epoch == e && si.live;
        json_t *x = json_object();
        json_object_set_new(x, "starts_ms", json_integer((json_int_t)(e * r->slice_ms)));
        json_object_set_new(x, "ends_ms", json_integer((json_int_t)((e + 1) * r->slice_ms)));
        json_object_set_new(x, "expires_ms",
                            json_integer((json_int_t)((e + r->n + 1) * r->slice_ms)));
        json_object_set_new(x, "items", json_integer(here ? (json_int_t)si.items : 0));
        json_object_set_new(x, "fill", json_real(here && si.bits ? (double)si.bits_set /
                                                                      (double)si.bits : 0.0));
        json_array_append_new(arr, x);
    }
    json_object_set_new(o, "live_slices", arr);
    return o;
}

/* INFO's "growth" object of a growing filter (docs/protocol.md): each
 * sub-filter, oldest first, and the compound rate, its bound and the memory
 * bound. Any thread holding the version. */
static json_t *growth_json(struct filter_grow *g)
{
    json_t *o = json_object();
    unsigned m = grow_count(g);
    uint64_t max = atomic_load_explicit(&g->max_bytes, memory_order_relaxed);
    json_object_set_new(o, "max_memory", max ? json_integer((json_int_t)max) : json_null());
    json_object_set_new(o, "fpr_bound", json_real(grow_fpr_bound(g)));
    double none = 1.0;
    json_t *arr = json_array();
    for (unsigned i = 0; i < m; i++) {
        struct grow_sub_info si;
        grow_sub_info(g, i, &si);
        none *= 1.0 - si.fpr_estimated;
        json_t *x = json_object();
        json_object_set_new(x, "capacity", json_integer((json_int_t)si.capacity));
        json_object_set_new(x, "items", json_integer((json_int_t)si.items));
        json_object_set_new(x, "fpr_target", json_real(si.fpr_target));
        json_object_set_new(x, "fpr_estimated", json_real(si.fpr_estimated));
        json_object_set_new(x, "k", json_integer(si.k));
        json_object_set_new(x, "bytes", json_integer((json_int_t)si.bytes));
        json_array_append_new(arr, x);
    }
    json_object_set_new(o, "fpr_compound", json_real(1.0 - none));
    json_object_set_new(o, "sub_filters", arr);
    return o;
}

/* What an adblock filter's compiled lists hold (INFO, `bloomgate info`):
 * lines by class and rules by kind, so an operator sees what was served
 * and what a gateway cannot enforce. Any thread. */
json_t *views_adblock_json(const struct adblock_engine *e)
{
    const struct adblock_summary *s = adblock_engine_summary(e);
    json_t *o = json_object();
    json_t *cls = json_object();
    for (int c = 0; c < ADBLOCK_CLASS_COUNT; c++)
        json_object_set_new(cls, adblock_class_name((enum adblock_class)c),
                            json_integer((json_int_t)s->by_class[c]));
    json_object_set_new(o, "lines", json_integer((json_int_t)s->lines));
    json_object_set_new(o, "lines_by_class", cls);
    json_object_set_new(o, "block_rules", json_integer((json_int_t)s->blocks));
    json_object_set_new(o, "exception_rules", json_integer((json_int_t)s->exceptions));
    json_object_set_new(o, "important", json_integer((json_int_t)s->important));
    json_object_set_new(o, "regex", json_integer((json_int_t)s->regex));
    json_object_set_new(o, "badfilter_cancelled", json_integer((json_int_t)s->cancelled));
    json_object_set_new(o, "duplicates", json_integer((json_int_t)s->duplicates));
    json_object_set_new(o, "compiled_bytes", json_integer((json_int_t)adblock_engine_size(e)));
    return o;
}

/* What a words filter's compiled list holds and was built with (INFO,
 * `bloomgate info`). Any thread. */
json_t *views_words_json(const struct words_matcher *m)
{
    const struct words_opts *w = words_matcher_opts(m);
    size_t n = words_count(m), exc = 0;
    for (size_t i = 0; i < n; i++)
        exc += words_is_exception(m, (uint32_t)i);
    json_t *o = json_object();
    json_object_set_new(o, "entries", json_integer((json_int_t)(n - exc)));
    json_object_set_new(o, "exceptions", json_integer((json_int_t)exc));
    json_object_set_new(o, "nfkc", json_boolean(w->nfkc));
    json_object_set_new(o, "zh", json_boolean(w->zh));
    json_object_set_new(o, "whole_word", json_boolean(w->whole_word));
    json_object_set_new(o, "skip", json_string(w->skip ? w->skip : WORDS_SKIP_DEFAULT));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)words_memory(m)));
    return o;
}

/* The exact table of v (docs/design.md, "The exact phase"): what it holds,
 * what it costs, and the run-time changes its delta keeps until the next
 * build folds them. Any thread holding v's catalog. */
static json_t *exact_json(const struct fversion *v)
{
    struct exact_info xi;
    exact_table_info(v->xt, &xi);
    uint64_t added = 0, removed = 0;
    exact_delta_counts(v->xd, &added, &removed);
    char sum[17];
    snprintf(sum, sizeof(sum), "%016" PRIx64, xi.checksum);
    json_t *x = json_object();
    json_object_set_new(x, "file", json_string(exact_table_name(v->xt)));
    json_object_set_new(x, "kind", json_string(xi.kind == EXACT_KIND_KEYS ? "keys" : "fp"));
    json_object_set_new(x, "entries", json_integer((json_int_t)xi.count));
    json_object_set_new(x, "file_bytes", json_integer((json_int_t)xi.file_bytes));
    json_object_set_new(x, "index_bytes", json_integer((json_int_t)xi.index_bytes));
    json_object_set_new(x, "checksum", json_string(sum));
    json_object_set_new(x, "delta_added", json_integer((json_int_t)added));
    json_object_set_new(x, "delta_removed", json_integer((json_int_t)removed));
    return x;
}

void views_exact_counters(json_t *j, const struct stats_src *src, const struct fentry *e)
{
    json_t *x = json_object_get(j, "exact");
    if (!src || !json_is_object(x))
        return;
    struct fstats fs;
    stats_sum_filter(src, e->id, &fs);
    json_object_set_new(x, "confirmations", json_integer((json_int_t)STAT_GET(&fs, confirms)));
    json_object_set_new(x, "false_positives_caught",
                        json_integer((json_int_t)STAT_GET(&fs, fp_caught)));
}

/* Any thread holding e's catalog: the reload fields are read under the
 * filter state's mutex, which the reload thread holds while it writes them. */
json_t *views_filter_json(const struct fentry *e)
{
    struct fversion *v = e->v;
    const struct filter *f = v->f;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(e->name));
    json_object_set_new(o, "layout", json_string(filter_layout_name(f->layout)));
    /* How CHECK/MATCH read an item (docs/protocol.md, Key kinds): a client
     * learns here whether to send URLs, hosts or exact strings. */
    json_object_set_new(o, "keys", json_string(format_keys_name(f->keys)));
    json_object_set_new(o, "capacity", json_integer((json_int_t)f->capacity));
    json_object_set_new(o, "fpr_target", json_real(f->fpr_target));
    json_object_set_new(o, "fpr_estimated", json_real(fversion_estimated_fpr(v)));
    json_object_set_new(o, "items", json_integer((json_int_t)filter_items(f)));
    json_object_set_new(o, "k", json_integer(f->k));
    json_object_set_new(o, "shards", json_integer(f->shard_count));
    json_object_set_new(o, "bytes", json_integer((json_int_t)filter_bytes(f)));
    json_object_set_new(o, "file", v->file ? json_string(v->file) : json_null());
    if (v->ab)
        json_object_set_new(o, "adblock", views_adblock_json(v->ab));
    if (v->words) {
        json_t *w = views_words_json(v->words);
        if (v->wd) { /* the run-time changes (words/delta.h) */
            struct words_delta_counts dc;
            words_delta_counts(v->wd, &dc);
            json_t *d = json_object();
            json_object_set_new(d, "words", json_integer((json_int_t)dc.words));
            json_object_set_new(d, "exceptions", json_integer((json_int_t)dc.exceptions));
            json_object_set_new(d, "removed", json_integer((json_int_t)dc.removed));
            json_object_set_new(d, "entries", json_integer((json_int_t)(dc.words + dc.exceptions)));
            json_object_set_new(d, "max", json_integer((json_int_t)dc.max));
            json_object_set_new(d, "memory_bytes", json_integer((json_int_t)dc.memory));
            json_object_set_new(w, "delta", d);
        }
        /* The list served is the file's with the journal's changes folded
         * in (store/wordsfold.h): when, how long, how many changes. */
        json_t *fo = json_null();
        if (v->folded_at) {
            fo = json_object();
            json_object_set_new(fo, "at", json_integer((json_int_t)v->folded_at));
            json_object_set_new(fo, "seconds", json_real(v->fold_seconds));
            json_object_set_new(fo, "changes", json_integer((json_int_t)v->folded_changes));
        }
        json_object_set_new(w, "folded", fo);
        json_object_set_new(o, "words", w);
    }
    /* What a shipper compares with `bloomgate info FILE` to know this
     * replica serves the file it sent: the header checksum, which covers
     * every shard's checksum and so the whole content (runtime adds do not
     * change it: it names the file loaded, not the bits now). */
    if (v->file && f->file_checksum) {
        char sum[17];
        snprintf(sum, sizeof(sum), "%016" PRIx64, f->file_checksum);
        json_object_set_new(o, "checksum", json_string(sum));
    } else {
        json_object_set_new(o, "checksum", json_null());
    }
    json_object_set_new(o, "built_at",
                        v->file && f->build_time > 0 ? iso_time(f->build_time) : json_null());
    json_object_set_new(o, "generation", json_integer((json_int_t)v->generation));
    json_object_set_new(o, "loaded_at", iso_time(v->loaded_at));
    json_object_set_new(o, "load_seconds", json_real(v->load_seconds));
    json_object_set_new(o, "ready", json_true());
    /* The allow-list: what it excepts, what REMOVE hides until a rebuild. */
    json_t *al = json_object();
    json_object_set_new(al, "file", v->allow_file ? json_string(v->allow_file) : json_null());
    json_object_set_new(al, "exceptions",
                        json_integer((json_int_t)allow_count(v->allow, ALLOW_EXCEPT)));
    json_object_set_new(al, "removals",
                        json_integer((json_int_t)allow_count(v->allow, ALLOW_REMOVED)));
    json_object_set_new(al, "bytes", json_integer((json_int_t)allow_bytes(v->allow)));
    json_object_set_new(o, "allow", al);
    json_object_set_new(o, "window", f->ring ? window_json(f->ring) : json_null());
    struct filter_grow *g = grow_of(f);
    json_object_set_new(o, "growth", g ? growth_json(g) : json_null());
    /* A fuse file's delta (bloom/fusedelta.h): what adds may still bring.
     * fpr_estimated above is the two parts' together. */
    struct fusedelta_info di;
    json_t *dj = json_null();
    if (fusedelta_get_info(f, &di)) {
        dj = json_object();
        json_object_set_new(dj, "capacity", json_integer((json_int_t)di.capacity));
        json_object_set_new(dj, "items", json_integer((json_int_t)di.items));
        json_object_set_new(dj, "room", json_integer((json_int_t)filter_room(f)));
        json_object_set_new(dj, "bytes", json_integer((json_int_t)di.bytes));
        json_object_set_new(dj, "fpr_estimated", json_real(di.fpr_estimated));
    }
    json_object_set_new(o, "delta", dj);
    json_object_set_new(o, "exact", v->xt ? exact_json(v) : json_null());
    struct journal *j = e->st ? atomic_load(&e->st->journal) : NULL;
    json_object_set_new(o, "journal", j ? json_string(journal_path(j)) : json_null());
    json_object_set_new(o, "created", json_boolean(e->created)); /* docs/created.md */
    if (e->st) {
        pthread_mutex_lock(&e->st->mu);
        json_object_set_new(o, "last_reload_at",
                            e->st->last_reload_at ? iso_time(e->st->last_reload_at) : json_null());
        json_object_set_new(o, "last_reload_status", json_string(e->st->last_status));
        json_object_set_new(o, "last_reload_error",
                            e->st->last_error[0] ? json_string(e->st->last_error) : json_null());
        pthread_mutex_unlock(&e->st->mu);
    }
    return o;
}

/* Any thread holding cat. */
json_t *views_unloaded_json(const char *name, size_t len)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_stringn(name, len));
    json_object_set_new(o, "ready", json_false());
    return o;
}

/* Any thread holding cat: a walk of the config's filters (a handful). */
bool views_configured(const struct catalog *cat, const char *name, size_t len)
{
    const struct conf *cf = cat->conf;
    for (size_t i = 0; i < cf->n_filters; i++)
        if (strlen(cf->filters[i].name) == len && memcmp(cf->filters[i].name, name, len) == 0)
            return true;
    return false;
}

/* Any thread holding cat. */
json_t *views_missing_json(const struct catalog *cat)
{
    const struct conf *cf = cat->conf;
    json_t *missing = json_array();
    for (size_t i = 0; i < cf->n_filters; i++) {
        const char *name = cf->filters[i].name;
        if (!catalog_find(cat, name, strlen(name)))
            json_array_append_new(missing, json_string(name));
    }
    return missing;
}

/* Any thread: every counter of the table by its name (STATS_COUNTERS), so a
 * counter added there shows here without a line of this file changing. */
json_t *views_info_json(const struct stats_src *src, const struct catalog *cat)
{
    struct stats s;
    stats_sum(src, &s);
    json_t *o = json_object();
    json_object_set_new(o, "version", json_string(PACKAGE_VERSION));
    json_object_set_new(o, "pid", json_integer(getpid()));
    json_object_set_new(o, "uptime_s", json_integer((json_int_t)(util_now() - src->started)));
    json_object_set_new(o, "started_at", iso_time(src->started_wall));
    json_object_set_new(o, "threads", json_integer(src->n_workers));
    json_object_set_new(o, "connections", json_integer(src->conns_open));
    json_t *per = json_array();
    for (unsigned i = 0; i < src->n_workers; i++)
        json_array_append_new(
            per, json_integer(atomic_load_explicit(&src->blocks[i].load, memory_order_relaxed)));
    json_object_set_new(o, "worker_connections", per);
#define STATS_JSON_(name, metric, labels, help)                                                    \
    json_object_set_new(o, #name, json_integer((json_int_t)STAT_GET(&s, name)));
    STATS_COUNTERS(STATS_JSON_)
#undef STATS_JSON_
    struct registry *reg = src->reg;
    json_object_set_new(o, "reloads_ok", json_integer((json_int_t)atomic_load(&reg->reloads_ok)));
    json_object_set_new(o, "reloads_failed",
                        json_integer((json_int_t)atomic_load(&reg->reloads_failed)));
    int64_t last = atomic_load(&reg->last_reload_at);
    json_object_set_new(o, "last_reload_at", last ? iso_time(last) : json_null());
    json_object_set_new(o, "last_reload_ok",
                        last ? json_boolean(atomic_load(&reg->last_reload_ok)) : json_null());
    /* The readiness /healthz answers: every configured filter served. */
    json_t *missing = views_missing_json(cat);
    json_object_set_new(o, "ready", json_boolean(json_array_size(missing) == 0));
    json_object_set_new(o, "missing", missing);
    json_t *arr = json_array();
    for (size_t i = 0; i < cat->n; i++)
        json_array_append_new(arr, views_filter_json(&cat->entries[i]));
    json_object_set_new(o, "filters", arr);
    return o;
}
