/* reload: the one mechanism behind SIGHUP, RELOAD and POST /v1/reload, and the
 * start-up load. A dedicated thread re-reads the config, loads every filter
 * whose file changed (off the request path), verifies it, replays its journal,
 * and publishes the new catalog with one atomic swap; the old versions are
 * freed once no worker can still hold them. Requests that arrive while a
 * reload runs are coalesced into the next one. The same thread runs the
 * once-a-second housekeeping (store/housekeep.h). */
#ifndef BLOOMGATE_RELOAD_H
#define BLOOMGATE_RELOAD_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>

#include "conf/conf.h"
#include "store/registry.h"
#include "store/reload_op.h"

struct reloader;
struct event_base;

/* What a reload's caller is handed when the reload ends (on the caller's
 * event_base): the report (owned by done; NULL if it could not be copied).
 * The network layer names the same type server_reload_done. */
typedef void (*reload_done_fn)(json_t *report, void *arg);

/* Start-up (main thread), before the listeners are bound: publish conf with
 * no filter yet, so server_create binds from it; the registry owns conf. */
int reload_publish_conf(struct registry *reg, struct conf *conf, char *err, size_t errlen);
/* Start-up (main thread), after privileges were dropped and before any worker
 * runs: load every filter of conf, open and replay its journal, publish. conf
 * may be the one reload_publish_conf published (it moves to the new catalog);
 * otherwise the new catalog takes ownership of it on success. On failure
 * nothing is served and err says why. */
int reload_initial(struct registry *reg, struct conf *conf, unsigned threads, char *err,
                   size_t errlen);

struct reloader *reloader_start(struct registry *reg, const char *config_path, unsigned threads);
/* Any thread. Queue op (NULL: a reload, joining the next run if one is
 * waiting; op is copied). With a base and done, done(report, arg) runs on
 * base's thread when it is over. An op's report: {"ok", "op", "name", and
 * on failure "code" (exists, unknown_filter, configured, limit, bad_option,
 * no_state_dir, internal) and "error"}. False when out of memory or
 * stopping: nothing was queued. */
bool reloader_request(struct reloader *r, const struct reload_op *op, struct event_base *base,
                      reload_done_fn done, void *arg);
/* The hook the server calls; ctx is the reloader. */
bool reloader_hook(void *ctx, const struct reload_op *op, struct event_base *base,
                   reload_done_fn done, void *arg);
/* Main thread, at shutdown, while the workers still run: from now on every
 * request is refused (the hook returns false, so a RELOAD still buffered gets
 * its reload error); the reload in progress, and one queued before, finish
 * and answer; the thread exits. The reloader stays valid for the hook. */
void reloader_stop(struct reloader *r);
/* Main thread, once no worker can call the hook any more (after server_stop):
 * stop if not stopped, sync the journals one last time, free. */
void reloader_free(struct reloader *r);

/* Close a filter's journal when its name leaves the catalog (registry hook),
 * unless another name holds it now (a renamed filter keeps its journal). */
struct registry;
void reload_release_state(struct registry *reg, struct fstate *st);

#endif
