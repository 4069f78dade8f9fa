/* registry: the named filters being served. The whole set is one immutable
 * catalog published through an atomic pointer: a worker reads it with one
 * acquire load and never locks. A replaced catalog (and any filter version it
 * alone held) is freed only after every worker has passed a quiescent point
 * (quiescent-state-based reclamation), so a request in flight always finishes
 * on the version it started with. Readers: worker threads. Writer: the one
 * thread that loads or reloads (start-up, then the reload thread). */
#ifndef BLOOMGATE_REGISTRY_H
#define BLOOMGATE_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

#include "conf/conf.h"
#include "bloom/filter.h"
#include "base/fname.h"

#define REGISTRY_NAME_MAX FNAME_MAX /* base/fname.h */
#define REGISTRY_MAX_FILTERS 16384 /* filters served at once; ids are below this */

/* One loaded filter: immutable in shape; its bits change only by ADD. */
struct fversion {
    struct filter *f;       /* an adblock filter's: its host tier for run-time adds */
    struct adblock_engine *ab; /* the compiled Adblock engine of an adblock filter, or NULL */
    bool ab_any;               /* `no_context any`: a context-free lookup asks every request */
    bool refuse_full;          /* `full refuse`: no add past a fixed filter's capacity */
    char *file;             /* path it was loaded from; NULL for a filter that started empty */
    uint64_t generation;    /* 1 for the first load, +1 on each successful swap */
    int64_t loaded_at;      /* unix seconds */
    double load_seconds;    /* how long the load (and replay) took */
    dev_t dev;              /* identity of the file loaded, to tell whether it changed */
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
    _Atomic uint64_t est_bits; /* bits_set the cached estimate is for (+1; 0 = none) */
    _Atomic uint64_t est_fpr;  /* cached fill-based estimate, as double bits */
    struct allow_set *allow;   /* exceptions and removals (store/allow.h); never NULL */
    char *allow_file;          /* the `allow` file loaded into it; NULL if none */
    dev_t allow_dev;           /* identity of that file, to tell whether it changed */
    ino_t allow_ino;
    off_t allow_size;
    int64_t allow_mtime_ns;
    /* The exact table the file names (store/xtable.h, src/exact/): a YES of
     * the bits is confirmed in it; NULL for a filter built without --exact. */
    struct exact_table *xt;
    struct exact_delta *xd; /* the table's run-time changes (ADD, REMOVE); NULL without xt */
    struct words_matcher *words; /* the compiled word list of a words filter, or NULL */
    struct words_delta *wd;      /* its run-time changes (words/delta.h); NULL without words */
    /* Set when words is the file's list with the journal's changes folded
     * in (store/wordsfold.h): when, how long the fold took, and how many
     * changes the delta held (words, exceptions and removals). */
    int64_t folded_at; /* unix seconds; 0: not folded */
    double fold_seconds;
    uint64_t folded_changes;
};

struct journal;
struct retired;
struct allow_set;
struct adblock_engine;
struct exact_table;
struct exact_delta;
struct words_matcher;
struct words_delta;

/* What belongs to a filter name rather than to one loaded version: its
 * journal and its reload history. Lives while the name is served. */
struct fstate {
    char *name;
    _Atomic(struct journal *) journal; /* NULL with `journal off`; workers append to it */
    _Atomic(struct fversion *) pending; /* the version a reload is about to publish: adds
                                            reach it too (core/gate.c, mutate_locked) */
    /* Orders every mutation of the filter (ADD, ALLOW, UNALLOW, REMOVE): held
     * from the journal append to the last version the mutation reaches, and by
     * the reload while it swaps the journal (a rotation), sets `pending` and
     * replays the journal's tail, so the journal's order is the order every
     * version saw, and journal and pending are stable for a mutation
     * (core/gate.c). */
    pthread_mutex_t mut_mu;
    /* Set (under mut_mu) when a reload gave this filter's journal to the name
     * it was renamed to: its mutations are refused from then on, since the
     * new name's version, replayed up to then, would not see them (reload.c,
     * publish_pending). The name leaves with that reload's publish. */
    atomic_bool leaving;
    /* A filter created at run time (store/created.h): its options, owned,
     * and the path its files share without their suffix (.conf, .journal,
     * .bloom); both NULL for a filter of the config. Set before the name is
     * first published, never changed after. */
    struct conf_filter *created;
    char *created_base;
    /* bloomd's close (front/bloomd): set by close, unset by the bloomd
     * front's next access to the filter; RELOAD_OP_SHELVE (bloomd's clear)
     * takes only a closed filter. Nothing else reads it: the bits stay. */
    atomic_bool closed;
    /* Reload thread only (store/wordsfold.h): when the tick first saw this
     * name's word-list delta hold changes (util_now; 0 = empty), and after
     * a fold that failed, the time before which it is not tried again. */
    double wd_since, wd_retry;
    pthread_mutex_t mu;        /* guards the fields below (reload thread writes, INFO reads) */
    int64_t last_reload_at;    /* unix seconds of the last reload that looked at it; 0 = none */
    char last_status[16];      /* "loaded", "reloaded", "unchanged", "failed" */
    char last_error[2048];     /* why the last reload failed; "" if it did not */
};

struct fentry {
    char name[REGISTRY_NAME_MAX + 1];
    size_t name_len;
    struct fversion *v;
    struct fstate *st;
    unsigned id; /* stable while the name is served: indexes per-filter counters */
    bool created; /* made at run time (st->created holds its options) */
};

/* What is being served: the config in force and its filters, replaced whole. */
struct catalog {
    struct conf *conf; /* owned (or handed on to the next catalog): limits and tokens */
    size_t n;
    struct fentry *entries;
    /* A hash index of entries by name (entry + 1; 0 empty), made by
     * registry_publish once there are more than a few; NULL: a linear walk. */
    uint32_t *index;
    size_t index_mask;
};

struct registry {
    _Atomic(struct catalog *) current;
    _Atomic uint64_t epoch;    /* bumped by each publish */
    unsigned n_readers;
    struct fstate *states[REGISTRY_MAX_FILTERS]; /* writer-only: which name holds each id */
    struct fversion *pub_v[REGISTRY_MAX_FILTERS]; /* writer-only scratch of registry_publish */
    uint64_t created_seq; /* writer-only: the last base name cN given (store/created.c) */
    /* Writer-only: what deferred publishes left to free (oldest first), and
     * the ids their states held, not to be given again until then. */
    struct retired *retired, **retired_tail;
    bool held[REGISTRY_MAX_FILTERS];
    void (*on_fresh_id)(void *ctx, unsigned id); /* an id starts a new name: zero its counters */
    void *on_fresh_ctx;
    /* A name left (writer thread, or registry_free): close its journal. */
    void (*on_state_release)(struct registry *reg, struct fstate *st);
    /* Reload outcomes (the reload thread writes; INFO and /metrics read). */
    _Atomic uint64_t reloads_ok;     /* reloads in which nothing failed */
    _Atomic uint64_t reloads_failed; /* reloads in which something failed */
    _Atomic int64_t last_reload_at;  /* unix seconds the last reload ended; 0 = none */
    _Atomic int last_reload_ok;
    struct reader_slot {
        _Atomic uint64_t seen; /* last epoch this reader was quiescent in; 0 = offline */
        char pad[56];          /* one cache line each: readers never share a line */
    } *readers;
};

struct registry *registry_create(unsigned n_readers);
/* Frees the catalog and every version in it; no reader may be running. */
void registry_free(struct registry *reg);

/* Worker side. */
static inline const struct catalog *registry_read(struct registry *reg)
{
    return atomic_load_explicit(&reg->current, memory_order_acquire);
}
const struct fentry *catalog_find(const struct catalog *c, const char *name, size_t len);

/* A worker is between requests: nothing it read from the registry before is
 * still in use. Called after every batch of callbacks and on a 100 ms tick. */
static inline void registry_quiescent(struct registry *reg, unsigned reader)
{
    atomic_store_explicit(&reg->readers[reader].seen,
                          atomic_load_explicit(&reg->epoch, memory_order_acquire),
                          memory_order_release);
}
/* A reader that stops (thread exit) must say so, or publishes would wait. */
void registry_offline(struct registry *reg, unsigned reader);

/* Writer side. Publish `next` (the caller built it; versions may be shared
 * with the current catalog), wait until every online reader has been
 * quiescent since, then free the old catalog and the versions only it held. */
void registry_publish(struct registry *reg, struct catalog *next);

/* Writer side: publish next as registry_publish does, without waiting out
 * the grace period: the old catalog, and the versions and states only it
 * held, are freed later by registry_reclaim, once every reader has passed a
 * quiescent point. For the many small publishes of filters made at run time
 * (store/created.c), each of which would otherwise wait up to a worker's
 * 100 ms tick. */
void registry_publish_deferred(struct registry *reg, struct catalog *next);

/* Writer side: free what deferred publishes left whose grace period is
 * over. Never waits. */
void registry_reclaim(struct registry *reg);

/* Writer side: wait until every online reader has been quiescent since the
 * call began (a grace period with nothing published), so that what readers
 * could reach before it may be freed. */
void registry_synchronize(struct registry *reg);

/* Writer side: the id (and state) for a filter name, the same for as long as
 * the name stays in the catalog; -1 when all REGISTRY_MAX_FILTERS are taken.
 * `fresh` says the id was unused (its counters start from zero). */
int registry_filter_id(struct registry *reg, const char *name, bool *fresh);
/* Writer side: give back an id no published catalog holds (a filter whose
 * load failed before its first publish), its state freed now. */
void registry_release_id(struct registry *reg, unsigned id);
static inline struct fstate *registry_state(struct registry *reg, unsigned id)
{
    return reg->states[id];
}


struct fversion *fversion_new(struct filter *f, const char *file);
void fversion_free(struct fversion *v);
/* Fill-based false-positive estimate, cached while the fill is unchanged (the
 * blocked model costs about a millisecond). */
double fversion_estimated_fpr(struct fversion *v);

void catalog_free(struct catalog *c); /* the array and the conf, not the versions */
/* Writer side: the served catalog cur with room for `extra` more entries,
 * sharing its versions and its config (registry_publish hands the config
 * on): what a publish of one changed entry starts from. NULL on no memory. */
struct catalog *registry_catalog_copy(const struct catalog *cur, size_t extra);

#endif
