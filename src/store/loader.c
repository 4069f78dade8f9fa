#include "config.h"

#include "store/loader.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adblock/adblock.h"
#include "bloom/format.h"
#include "store/allow.h"
#include "store/amend.h"
#include "store/xtable.h"
#include "base/log.h"
#include "base/seam.h"
#include "base/util.h"
#include "bloom/grow.h"
#include "bloom/grow_file.h"
#include "bloom/fusedelta.h"
#include "bloom/ring.h"
#include "words/delta.h"
#include "words/words.h"

/* The plan of the empty filter a block with no file (or a missing one) gets:
 * the sizing check that start-up, a reload and --check-config all run, so
 * that a filter the daemon would refuse (over FILTER_MAX_BYTES, an fpr the
 * layout cannot reach) is refused by the check too. Any thread. */
static int empty_plan(const struct conf_filter *cf, struct filter_plan *plan, char *err,
                      size_t errlen)
{
    char why[512];
    /* A windowed filter's plan is one slice's: capacity is the adds of a
     * window, N slices take them, and a check ORs N + 1 slices, each sized
     * for fpr / (N + 1) so that the union stays at fpr (bloom/ring.h). */
    uint64_t cap = cf->capacity;
    double fpr = cf->fpr;
    if (cf->window_ms) {
        cap = cap / cf->slices + (cap % cf->slices != 0);
        fpr /= cf->slices + 1;
    }
    /* A growing filter's plan is its first sub-filter's (bloom/grow.h). */
    int rc = cf->growth ? grow_plan((enum filter_layout)cf->layout, cap, fpr, 0, plan, why,
                                    sizeof(why))
                        : filter_plan_make((enum filter_layout)cf->layout, cap, fpr, 0, plan, why,
                                           sizeof(why));
    if (rc != 0) {
        snprintf(err, errlen, "filter %s: capacity %llu at fpr %g: %s", cf->name,
                 (unsigned long long)cf->capacity, cf->fpr, why);
        return -1;
    }
    if (cf->growth && cf->max_memory && filter_plan_bytes(plan) > cf->max_memory) {
        snprintf(err, errlen,
                 "filter %s: max_memory %llu bytes is less than its first sub-filter takes "
                 "(%llu bytes for %llu items at %g)",
                 cf->name, (unsigned long long)cf->max_memory,
                 (unsigned long long)filter_plan_bytes(plan), (unsigned long long)plan->capacity,
                 plan->fpr_target);
        return -1;
    }
    return 0;
}

/* The section of the file f was loaded from (an adblock filter's engine, a
 * words filter's list), read and checked into a malloc'd *body. The header
 * read now must be the one f came from, or the file was replaced between
 * the two reads. 0, or -1 with err. Loader threads. */
static int load_section(const struct conf_filter *cf, const struct filter *f, void **body,
                        size_t *len, char *err, size_t errlen)
{
    struct format_info fi;
    char why[1024];
    int rc = -1;
    if (format_read_info(cf->file, &fi, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "filter %s: %s", cf->name, why);
        return -1;
    }
    if (fi.checksum != f->file_checksum)
        snprintf(err, errlen, "filter %s: file %s was replaced while it was loaded; try again",
                 cf->name, cf->file);
    else if (format_read_section(cf->file, &fi, body, len, why, sizeof(why)) != 0)
        snprintf(err, errlen, "filter %s: %s", cf->name, why);
    else
        rc = 0;
    format_info_free(&fi);
    return rc;
}

/* An adblock filter's engine: its section compiled back (every offset
 * checked, the regexes compiled again). Loader threads. */
static struct adblock_engine *load_engine(const struct conf_filter *cf, const struct filter *f,
                                          char *err, size_t errlen)
{
    char why[1024];
    void *body = NULL;
    size_t len = 0;
    struct adblock_engine *ab = NULL;
    if (load_section(cf, f, &body, &len, err, errlen) != 0)
        return NULL;
    if (!(ab = adblock_engine_load(body, len, why, sizeof(why))))
        snprintf(err, errlen, "filter %s: file %s: the compiled lists: %s", cf->name, cf->file,
                 why);
    free(body);
    return ab;
}

/* A setting the config states against the one the file was built with. */
static bool words_flag_differs(unsigned conf, bool file)
{
    return conf != CONF_WORDS_FILE && (conf == CONF_WORDS_ON) != file;
}

/* The config's words_* settings, where given, against the ones a list was
 * built with (o): they shape the compiled automaton (the list was
 * normalised with them), so the file decides and the config may only
 * agree. 0, or -1 with the settings of both and the rebuild to run in err.
 * Loader threads, or the main thread for --check-config. */
static int words_settings_agree(const struct conf_filter *cf, const struct words_opts *o, char *err,
                                size_t errlen)
{
    const char *skip = o->skip ? o->skip : WORDS_SKIP_DEFAULT;
    const char *bad = words_flag_differs(cf->words_nfkc, o->nfkc)               ? "words_nfkc"
                      : words_flag_differs(cf->words_zh, o->zh)                 ? "words_zh"
                      : words_flag_differs(cf->words_whole_word, o->whole_word) ? "words_whole_word"
                      : cf->words_skip && strcmp(cf->words_skip, skip) != 0     ? "words_skip"
                                                                                : NULL;
    if (!bad)
        return 0;
    snprintf(err, errlen,
             "filter %s: file %s was built with nfkc %s, zh %s, whole_word %s, skip \"%s\", "
             "but the config (line %u) says another %s; rebuild the list with bloomgate "
             "build --format words and the settings wanted, or change the config",
             cf->name, cf->file, o->nfkc ? "on" : "off", o->zh ? "on" : "off",
             o->whole_word ? "on" : "off", skip, cf->line, bad);
    return -1;
}

/* A words filter's list: its section loaded (every array checked), then
 * the config's settings checked against the list's (words_settings_agree).
 * Loader threads. */
static struct words_matcher *load_words(const struct conf_filter *cf, const struct filter *f,
                                        char *err, size_t errlen)
{
    char why[1024];
    void *body = NULL;
    size_t len = 0;
    if (load_section(cf, f, &body, &len, err, errlen) != 0)
        return NULL;
    struct words_matcher *m = words_load(body, len, why, sizeof(why));
    free(body);
    if (!m) {
        snprintf(err, errlen, "filter %s: file %s: the compiled word list: %s", cf->name, cf->file,
                 why);
        return NULL;
    }
    if (words_settings_agree(cf, words_matcher_opts(m), err, errlen) != 0) {
        words_matcher_free(m);
        return NULL;
    }
    return m;
}

/* --check-config's look at a words file: its list loaded from the section
 * as the daemon would (every array checked), and its settings against the
 * config's, so that a disagreement start-up would refuse is said here.
 * Main thread. */
static int check_words(const struct conf_filter *cf, const struct format_info *fi, char *err,
                       size_t errlen)
{
    char why[1024];
    void *body = NULL;
    size_t len = 0;
    if (format_read_section(cf->file, fi, &body, &len, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "filter %s: %s", cf->name, why);
        return -1;
    }
    struct words_matcher *m = words_load(body, len, why, sizeof(why));
    free(body);
    if (!m) {
        snprintf(err, errlen, "filter %s: file %s: the compiled word list: %s", cf->name, cf->file,
                 why);
        return -1;
    }
    int rc = words_settings_agree(cf, words_matcher_opts(m), err, errlen);
    words_matcher_free(m);
    return rc;
}

/* The checks of loader_load_filter without the loading: the file's header
 * (not its payload), its key kind against the config's, or the empty
 * filter's sizing. --check-config, on the main thread. */
int loader_check_filter(const struct conf_filter *cf, char *err, size_t errlen)
{
    struct stat st;
    if (!cf->file || stat(cf->file, &st) != 0) {
        if (cf->keys == CONF_KEYS_ADBLOCK || cf->keys == CONF_KEYS_WORDS) {
            const char *k = conf_keys_name(cf->keys);
            snprintf(err, errlen,
                     "filter %s: keys %s needs a file made by bloomgate build --format %s%s%s",
                     cf->name, k, k, cf->file ? ": " : "", cf->file ? strerror(errno) : "");
            return -1;
        }
        if (cf->file && (errno != ENOENT || cf->capacity == 0)) {
            snprintf(err, errlen, "filter %s: file %s: %s%s", cf->name, cf->file, strerror(errno),
                     errno == ENOENT ? " (and no capacity is configured to start empty)" : "");
            return -1;
        }
        struct filter_plan plan;
        return empty_plan(cf, &plan, err, errlen);
    }
    struct format_info fi;
    char why[1024];
    if (cf->growth) { /* the file is a checkpoint of the growing filter */
        struct grow_file_info gi;
        if (grow_file_info(cf->file, &gi, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "filter %s: %s", cf->name, why);
            return -1;
        }
        return 0;
    }
    if (format_read_info(cf->file, &fi, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "filter %s: %s", cf->name, why);
        return -1;
    }
    int rc = 0;
    if (cf->keys != CONF_KEYS_FILE && (int)cf->keys - 1 != (int)fi.keys) {
        snprintf(err, errlen, "filter %s: file %s holds %s keys, but the config (line %u) says keys %s",
                 cf->name, cf->file, format_keys_name(fi.keys), cf->line,
                 conf_keys_name(cf->keys));
        rc = -1;
    }
    struct exact_ref ref;
    struct exact_table *xt = NULL; /* the table the file names: there, and the one named */
    if (rc == 0 && fi.section_kind == FORMAT_SECTION_EXACT &&
        !(xt = xtable_open(cf->file, &fi, &ref, why, sizeof(why)))) {
        snprintf(err, errlen, "filter %s: %s", cf->name, why);
        rc = -1;
    }
    exact_table_close(xt);
    if (rc == 0 && fi.section_kind == FORMAT_SECTION_WORDS)
        rc = check_words(cf, &fi, err, errlen);
    format_info_free(&fi);
    return rc;
}

/* Load one configured filter: its file, or an empty filter of its capacity
 * when the file does not exist yet, checked against the config's key kind;
 * the reload thread, or the main thread at start-up. ~80 lines: the two
 * sources meet in one version and one log line. */
struct fversion *loader_load_filter(const struct conf_filter *cf, unsigned threads, char *err,
                                    size_t errlen)
{
    return loader_load_filter_seed(cf, threads, 0, err, errlen);
}

struct fversion *loader_load_filter_seed(const struct conf_filter *cf, unsigned threads,
                                         uint64_t seed, char *err, size_t errlen)
{
    char why[1024];
    double t0 = util_now();
    struct filter *f = NULL;
    struct stat st;
    const char *file = NULL;
    bool have_file = false;
    struct adblock_engine *ab = NULL;
    uint64_t file_checksum = 0;
    struct words_matcher *words = NULL;
    if (cf->file) {
        if (stat(cf->file, &st) == 0) {
            have_file = true;
        } else if (cf->keys == CONF_KEYS_ADBLOCK || cf->keys == CONF_KEYS_WORDS) {
            const char *k = conf_keys_name(cf->keys);
            snprintf(err, errlen, "filter %s: file %s: %s (keys %s is built from its lists "
                     "by bloomgate build --format %s; it cannot start empty)",
                     cf->name, cf->file, strerror(errno), k, k);
            return NULL;
        } else if (errno != ENOENT || cf->capacity == 0) {
            snprintf(err, errlen, "filter %s: file %s: %s%s", cf->name, cf->file, strerror(errno),
                     errno == ENOENT ? " (and no capacity is configured to start empty)" : "");
            return NULL;
        } else {
            log_warn("filter %s: file %s does not exist; starting empty with capacity %llu",
                     cf->name, cf->file, (unsigned long long)cf->capacity);
        }
    }
    if (have_file && cf->growth) {
        /* A growing filter's file is its checkpoint (store/created.c): every
         * sub-filter as it was, its adds since in the journal. */
        if (!(f = grow_file_load(cf->file, cf->max_memory, why, sizeof(why)))) {
            snprintf(err, errlen, "filter %s: %s", cf->name, why);
            return NULL;
        }
        if (cf->keys != CONF_KEYS_FILE && (int)cf->keys - 1 != (int)f->keys) {
            snprintf(err, errlen, "filter %s: file %s holds %s keys, but the config says keys %s",
                     cf->name, cf->file, format_keys_name(f->keys), conf_keys_name(cf->keys));
            filter_free(f);
            return NULL;
        }
        file = cf->file;
    } else if (have_file) {
        f = format_load(cf->file, threads, why, sizeof(why));
        if (!f) {
            snprintf(err, errlen, "filter %s: %s", cf->name, why);
            return NULL;
        }
        /* The kind decides how every query is read: a file built for other
         * keys would answer (almost) every lookup wrongly, so it is refused
         * here, at start-up or on the reload that brings it, and a reload
         * keeps the filter being served. */
        if (cf->keys != CONF_KEYS_FILE && (int)cf->keys - 1 != (int)f->keys) {
            snprintf(err, errlen,
                     "filter %s: file %s holds %s keys, but the config (line %u) says keys %s; "
                     "rebuild the file with bloomgate build --keys %s, or change the config",
                     cf->name, cf->file, format_keys_name(f->keys), cf->line,
                     conf_keys_name(cf->keys), conf_keys_name(cf->keys));
            filter_free(f);
            return NULL;
        }
        file_checksum = f->file_checksum;
        if (f->keys == FILTER_KEYS_ADBLOCK && !(ab = load_engine(cf, f, err, errlen))) {
            filter_free(f);
            return NULL;
        }
        if (f->keys == FILTER_KEYS_WORDS && !(words = load_words(cf, f, err, errlen))) {
            filter_free(f);
            return NULL;
        }
        /* A fuse filter takes no adds: they go to a delta beside it. */
        uint64_t dc = cf->delta_capacity ? cf->delta_capacity
                                         : fusedelta_default_capacity(filter_items(f));
        if (f->layout == FILTER_FUSE && !(f = fusedelta_create(f, dc, why, sizeof(why)))) {
            snprintf(err, errlen, "filter %s: file %s: %s", cf->name, cf->file, why);
            adblock_engine_free(ab);
            words_matcher_free(words);
            return NULL;
        }
        file = cf->file;
    } else {
        struct filter_plan plan;
        if (cf->keys == CONF_KEYS_ADBLOCK || cf->keys == CONF_KEYS_WORDS) {
            const char *k = conf_keys_name(cf->keys);
            snprintf(err, errlen, "filter %s: keys %s needs a file made by bloomgate build "
                     "--format %s", cf->name, k, k);
            return NULL;
        }
        if (empty_plan(cf, &plan, err, errlen) != 0)
            return NULL;
        while (seed == 0) { /* 0 is no seed; one draw in 2^64 */
            if (util_random_u64(&seed, why, sizeof(why)) != 0) {
                snprintf(err, errlen, "filter %s: a seed for the empty filter: %s", cf->name, why);
                return NULL;
            }
        }
        if (cf->growth)
            f = grow_filter_create(&plan, cf->fpr, seed, cf->max_memory, why, sizeof(why));
        else if (cf->window_ms)
            f = ring_filter_create(&plan, seed, cf->slices, cf->window_ms, cf->capacity, cf->fpr,
                                   why, sizeof(why));
        else
            f = filter_create(&plan, seed, why, sizeof(why));
        if (!f) {
            snprintf(err, errlen, "filter %s: %s", cf->name, why);
            return NULL;
        }
        f->keys =
            cf->keys == CONF_KEYS_FILE ? FILTER_KEYS_EXACT : (enum filter_keys)((int)cf->keys - 1);
    }
    struct fversion *v = fversion_new(f, file);
    if (!v) {
        filter_free(f);
        adblock_engine_free(ab);
        words_matcher_free(words);
        snprintf(err, errlen, "filter %s: out of memory", cf->name);
        return NULL;
    }
    v->ab = ab;
    v->words = words;
    /* Its run-time changes start empty; the journal's replay fills them. */
    if (words && !(v->wd = words_delta_new(words, cf->words_delta_max, why, sizeof(why)))) {
        snprintf(err, errlen, "filter %s: the word list's delta: %s", cf->name, why);
        fversion_free(v);
        return NULL;
    }
    v->ab_any = ab && cf->context == CONF_CONTEXT_ANY;
    v->refuse_full = cf->full == CONF_FULL_REFUSE;
    if (!ab && cf->context == CONF_CONTEXT_ANY)
        log_warn("filter %s: no_context any applies to adblock filters only; %s keys ignore it",
                 cf->name, format_keys_name(f->keys));
    /* The exact table the file names, if any: a file that names one is
     * served with it or not at all (a YES it cannot confirm stays a guess). */
    if (have_file && !cf->growth &&
        xtable_attach(v, cf->file, file_checksum, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "filter %s: %s", cf->name, why);
        fversion_free(v);
        return NULL;
    }
    /* The allow-list after the bits: its entries are the filter's own hashes. */
    /* The allow-list after the bits: its entries are the filter's own hashes.
     * A word list's exceptions are its @@ lines, compiled in. */
    if (cf->allow && words) {
        snprintf(err, errlen, "filter %s: allow does not apply to a words filter (its exceptions "
                 "are @@ lines of the list)", cf->name);
        fversion_free(v);
        return NULL;
    }
    if (cf->allow && amend_load_allow_file(v, cf->allow, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "filter %s: %s", cf->name, why);
        fversion_free(v);
        return NULL;
    }
    if (have_file) {
        v->dev = st.st_dev;
        v->ino = st.st_ino;
        v->size = st.st_size;
        v->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    v->load_seconds = util_now() - t0;
    log_info("filter %s: %s %s, %s keys, %llu items, %llu bytes, %u shards, k=%u (%.3f s)",
             cf->name, have_file ? "loaded" : "created empty", have_file ? file : "in memory",
             format_keys_name(f->keys), (unsigned long long)filter_items(f),
             (unsigned long long)filter_bytes(f), f->shard_count, f->k, v->load_seconds);
    if (v->xt) {
        struct exact_info xi;
        exact_table_info(v->xt, &xi);
        log_info("filter %s: exact table %s, %llu %s, %llu bytes (%llu in memory): every YES "
                 "confirmed",
                 cf->name, exact_table_name(v->xt), (unsigned long long)xi.count,
                 xi.kind == EXACT_KIND_KEYS ? "keys" : "fingerprints",
                 (unsigned long long)xi.file_bytes, (unsigned long long)xi.index_bytes);
    }
    if (cf->allow)
        log_info("filter %s: allow-list %s, %llu exceptions", cf->name, cf->allow,
                 (unsigned long long)allow_count(v->allow, ALLOW_EXCEPT));
    return v;
}

#define LOADER_NICE 19 /* the lowest priority SCHED_BATCH takes */

/* A reload's load, handed to loader_load_filter on a thread of its own. */
struct idle_load {
    const struct conf_filter *cf;
    unsigned threads;
    uint64_t seed;
    char *err;
    size_t errlen;
    loader_then_fn *then; /* NULL: the load alone */
    void *ctx;
    struct fversion *v;
};

/* The loading thread of loader_load_filter_idle: SCHED_BATCH at nice 19
 * first, which the shard threads it starts inherit (a new thread takes its
 * creator's policy and nice value), then the ordinary load. If either cannot
 * be set, the load runs anyway and says so. */
static void *idle_load_main(void *arg)
{
    struct idle_load *l = arg;
    struct sched_param sp = {.sched_priority = 0};
    int rc = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    if (rc != 0)
        log_warn("filter %s: loading without SCHED_BATCH: %s", l->cf->name, strerror(rc));
    /* The nice value is per thread on Linux: this one, by its id. */
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), LOADER_NICE) != 0)
        log_warn("filter %s: loading at normal priority (nice %d: %s)", l->cf->name, LOADER_NICE,
                 strerror(errno));
    seam_loader_idle();
    l->v = loader_load_filter_seed(l->cf, l->threads, l->seed, l->err, l->errlen);
    if (l->v && l->then && l->then(l->v, l->ctx, l->err, l->errlen) != 0) {
        fversion_free(l->v);
        l->v = NULL;
    }
    return NULL;
}

/* Why a thread of its own: an unprivileged thread may lower its priority
 * but not raise it back (RLIMIT_NICE), so the reload thread, which goes on
 * to publish under a filter's mutation lock, must not be the one lowered;
 * a fresh thread takes the policy and ends with the load.
 * Why nice 19 and not SCHED_IDLE: measured under load (docs/benchmarks.md),
 * both kept the workers' p99, but with SCHED_IDLE (weight 3 against nice
 * 19's 15) two reloads of four had requests of 150-260 ms, none with nice
 * 19: most likely a starved loader holding a lock a worker needed.
 * Reload thread. */
struct fversion *loader_load_filter_idle_then(const struct conf_filter *cf, unsigned threads,
                                              uint64_t seed, loader_then_fn *then, void *ctx,
                                              char *err, size_t errlen)
{
    struct idle_load l = {.cf = cf,
                          .threads = threads,
                          .seed = seed,
                          .err = err,
                          .errlen = errlen,
                          .then = then,
                          .ctx = ctx};
    pthread_t tid;
    int rc = pthread_create(&tid, NULL, idle_load_main, &l);
    if (rc != 0) {
        log_warn("filter %s: loading on the reload thread at normal priority (no thread: %s)",
                 cf->name, strerror(rc));
        l.v = loader_load_filter_seed(cf, threads, seed, err, errlen);
        if (l.v && then && then(l.v, ctx, err, errlen) != 0) {
            fversion_free(l.v);
            l.v = NULL;
        }
        return l.v;
    }
    pthread_join(tid, NULL);
    return l.v;
}

struct fversion *loader_load_filter_idle(const struct conf_filter *cf, unsigned threads,
                                         uint64_t seed, char *err, size_t errlen)
{
    return loader_load_filter_idle_then(cf, threads, seed, NULL, NULL, err, errlen);
}
