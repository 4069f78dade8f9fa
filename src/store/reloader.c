/* The reload thread: the registry's single writer once the daemon runs. It
 * runs the reloads (coalesced: requests that arrive while one runs join the
 * next), the operations on filters made at run time (in the order they were
 * asked, each answered on its own: store/created.h), and the once-a-second
 * housekeeping (store/housekeep.h). Callers on any thread queue work with
 * reloader_request and are answered on their own event base. */
#include "config.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/notify.h"
#include "base/seam.h"
#include "base/util.h"
#include "store/created.h"
#include "store/housekeep.h"
#include "store/wordsfold.h"
#include "store/reload.h"
#include "store/reload_int.h"

/* A caller waiting for the report. Its event is made when the request is
 * queued (on the caller's thread, where a failure can still be answered), so
 * that delivering the report later cannot fail: event_active allocates
 * nothing. A report that cannot be copied is delivered as NULL. */
struct waiter {
    struct event_base *base; /* NULL: nobody waits (the op is still run) */
    reload_done_fn done;
    void *arg;
    struct event *ev; /* on base: runs deliver_cb there */
    json_t *report;   /* set by the reload thread before ev is activated */
    struct reload_op *op; /* an operation on one filter; NULL for a reload */
    struct waiter *next;
};

struct reloader {
    struct registry *reg;
    char *config_path;
    unsigned threads;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool pending; /* a reload was asked for and has not started */
    struct housekeep hk; /* the once-a-second tick (housekeep.h) */
    bool stop;    /* shutdown: refuse new requests, finish what is queued, exit */
    struct waiter *waiters; /* who wants the answer of the next reload */
    struct waiter *ops, **ops_tail; /* operations on filters, oldest first */
};

int reload_op_opt(struct reload_op *op, const char *key, size_t klen, const char *val,
                  size_t vlen, char *err, size_t errlen)
{
    if (op->n_opts == RELOAD_OP_MAX_OPTS) {
        snprintf(err, errlen, "more than %d options", RELOAD_OP_MAX_OPTS);
        return -1;
    }
    if (klen == 0 || klen > RELOAD_OP_KEY_MAX) {
        snprintf(err, errlen, "an option's name must be 1 to %d bytes", RELOAD_OP_KEY_MAX);
        return -1;
    }
    if (vlen == 0 || vlen > RELOAD_OP_VAL_MAX) {
        snprintf(err, errlen, "option %.*s: its value must be 1 to %d bytes", (int)klen, key,
                 RELOAD_OP_VAL_MAX);
        return -1;
    }
    memcpy(op->opts[op->n_opts].key, key, klen);
    op->opts[op->n_opts].key[klen] = '\0';
    memcpy(op->opts[op->n_opts].val, val, vlen);
    op->opts[op->n_opts].val[vlen] = '\0';
    op->n_opts++;
    return 0;
}

/* On the waiter's thread: hand the report over and free the waiter. */
static void deliver_cb(evutil_socket_t fd, short what, void *arg)
{
    struct waiter *w = arg;
    (void)fd;
    (void)what;
    event_free(w->ev);
    w->done(w->report, w->arg);
    free(w);
}

/* Reload thread: answer w with (a copy of) report, or free it if nobody
 * waits. */
static void deliver(struct waiter *w, const json_t *report)
{
    free(w->op);
    w->op = NULL;
    if (!w->ev) {
        free(w);
        return;
    }
    /* NULL: the caller says so */
    w->report = seam_reload_fail_delivery() ? NULL : json_deep_copy(report);
    event_active(w->ev, EV_TIMEOUT, 1);
}

/* Reload thread: one reload, with its bookkeeping and the systemd status. */
static json_t *run_reload(struct reloader *r)
{
    notify_reloading();
    log_info("reload: reading %s", r->config_path);
    json_t *report = reload_run(r->reg, r->config_path, r->threads);
    bool ok = json_is_true(json_object_get(report, "ok"));
    atomic_fetch_add(ok ? &r->reg->reloads_ok : &r->reg->reloads_failed, 1);
    atomic_store(&r->reg->last_reload_at, util_wall_seconds());
    atomic_store(&r->reg->last_reload_ok, ok);
    char status[160];
    snprintf(status, sizeof(status), "READY=1\nSTATUS=serving %zu filter(s); last reload %s",
             registry_read(r->reg)->n, ok ? "ok" : "failed");
    notify_send(status);
    return report;
}

static void *reloader_main(void *arg)
{
    struct reloader *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stop || r->pending || r->ops) {
        if (!r->pending && !r->ops) {
            /* The condvar waits on CLOCK_MONOTONIC (reloader_start): a
             * wall-clock step must not stall or spin the journal tick. */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&r->cv, &r->mu, &ts);
            if (!r->pending && !r->ops) {
                pthread_mutex_unlock(&r->mu);
                housekeep_tick(&r->hk);
                created_tick(r->reg);
                wordsfold_tick(r->reg, r->threads);
                log_limit_flush(0); /* what rate-limited lines suppressed, once a second */
                pthread_mutex_lock(&r->mu);
            }
            continue;
        }
        if (r->ops) {
            /* One operation at a time, in the order asked. */
            struct waiter *w = r->ops;
            if (!(r->ops = w->next))
                r->ops_tail = &r->ops;
            pthread_mutex_unlock(&r->mu);
            json_t *report = created_run(r->reg, r->threads, w->op);
            deliver(w, report);
            json_decref(report);
            pthread_mutex_lock(&r->mu);
            continue;
        }
        struct waiter *ws = r->waiters;
        r->waiters = NULL;
        r->pending = false;
        pthread_mutex_unlock(&r->mu);
        json_t *report = run_reload(r);
        while (ws) {
            struct waiter *w = ws;
            ws = ws->next;
            deliver(w, report);
        }
        json_decref(report);
        housekeep_tick(&r->hk);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

struct reloader *reloader_start(struct registry *reg, const char *config_path, unsigned threads)
{
    struct reloader *r = calloc(1, sizeof(*r));
    if (!r || !(r->config_path = strdup(config_path))) {
        free(r);
        return NULL;
    }
    r->reg = reg;
    r->hk.reg = reg;
    r->threads = threads;
    r->ops_tail = &r->ops;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&r->tid, NULL, reloader_main, r) != 0) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
        free(r->config_path);
        free(r);
        return NULL;
    }
    return r;
}

static void waiter_free(struct waiter *w)
{
    if (!w)
        return;
    if (w->ev)
        event_free(w->ev);
    free(w->op);
    free(w);
}

bool reloader_request(struct reloader *r, const struct reload_op *op, struct event_base *base,
                      reload_done_fn done, void *arg)
{
    struct waiter *w = NULL;
    /* Out of memory: say so, and never call done from here (the caller is in
     * the middle of parsing a connection's input; an answer from inside this
     * call would have it parse the same input again). */
    if ((base && done) || op) {
        if (!(w = calloc(1, sizeof(*w))))
            return false;
        if (base && done && !(w->ev = event_new(base, -1, 0, deliver_cb, w))) {
            free(w);
            return false;
        }
        if (op && op->kind != RELOAD_OP_RELOAD) {
            if (!(w->op = malloc(sizeof(*op)))) {
                waiter_free(w);
                return false;
            }
            *w->op = *op;
        }
    }
    pthread_mutex_lock(&r->mu);
    if (r->stop) {
        /* Shutting down: a RELOAD still buffered on some connection gets its
         * reload error; the reloader itself is freed only after the workers
         * have stopped (reloader_free), so this check is never too late. */
        pthread_mutex_unlock(&r->mu);
        waiter_free(w);
        return false;
    }
    if (w) {
        w->base = base;
        w->done = done;
        w->arg = arg;
    }
    if (w && w->op) {
        *r->ops_tail = w;
        r->ops_tail = &w->next;
    } else {
        if (w && w->ev) {
            w->next = r->waiters;
            r->waiters = w;
        } else {
            waiter_free(w);
        }
        r->pending = true;
    }
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return true;
}

bool reloader_hook(void *ctx, const struct reload_op *op, struct event_base *base,
                   reload_done_fn done, void *arg)
{
    return reloader_request(ctx, op, base, done, arg);
}

void reloader_stop(struct reloader *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    bool joined = r->stop;
    r->stop = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (!joined)
        pthread_join(r->tid, NULL);
}

void reloader_free(struct reloader *r)
{
    if (!r)
        return;
    reloader_stop(r);
    housekeep_tick(&r->hk); /* everysec: the last second's adds reach the disk too */
    log_limit_flush(1);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r->config_path);
    free(r);
}
