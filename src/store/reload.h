/* reload: the one mechanism behind SIGHUP, RELOAD and POST /v1/reload, and the
 * start-up load. A dedicated thread re-reads the config, loads every filter
 * whose file changed (off the request path), verifies it, replays its journal,
 * and publishes the new catalog with one atomic swap; the old versions are
 * freed once no worker can still hold them. Requests that arrive while a
 * reload runs are coalesced into the next one. The same thread ticks the
 * journals once a second (fsync everysec). */
#ifndef BLOOMGATE_RELOAD_H
#define BLOOMGATE_RELOAD_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>

#include "store/conf.h"
#include "store/registry.h"
#include "net/server.h"

struct reloader;

/* Start-up (main thread): load every filter of conf, open and replay its
 * journal, publish. On failure nothing is served and err says why. */
int reload_initial(struct registry *reg, struct conf *conf, unsigned threads, char *err,
                   size_t errlen);

struct reloader *reloader_start(struct registry *reg, const char *config_path, unsigned threads);
/* Any thread. Queue a reload (joining the next run if one is running). With a
 * base and done, done(report, arg) runs on base's thread when it is over. */
bool reloader_request(struct reloader *r, struct event_base *base, server_reload_done done,
                      void *arg);
/* The hook the server calls; ctx is the reloader. */
bool reloader_hook(void *ctx, struct event_base *base, server_reload_done done, void *arg);
/* Test-only: the next n deliveries of a report fail as if out of memory. */
extern _Atomic unsigned reload_fault_delivery;

/* Main thread, at shutdown: finish the reload in progress and stop. */
void reloader_stop(struct reloader *r);

/* Close a filter's journal when its name leaves the catalog (registry hook),
 * unless another name holds it now (a renamed filter keeps its journal). */
struct registry;
void reload_release_state(struct registry *reg, struct fstate *st);

#endif
