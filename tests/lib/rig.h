/* rig: filters served in process, for the unit tests of core/ and store/:
 * a config text loaded as the daemon loads it (conf_load, reload_initial) in
 * a fresh temporary directory, with one worker's cmd_env and gate batch, and
 * a call helper that goes through the command table as a front does. One
 * test thread; no socket, no worker thread. */
#ifndef BLOOMGATE_TEST_RIG_H
#define BLOOMGATE_TEST_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cmd.h"
#include "core/gate.h"
#include "core/stats.h"
#include "store/registry.h"

#define RIG_SCRATCH 64 /* the worker's scratch: items one call may carry */

struct rig {
    char dir[4096]; /* the temporary directory: the config, journals, files */
    struct registry *reg;
    struct stats_block sb;
    _Atomic uint64_t id_gen[REGISTRY_MAX_FILTERS];
    struct gate_batch gb;
    struct filter_key keys[RIG_SCRATCH];
    bool bools[RIG_SCRATCH], allowed[RIG_SCRATCH];
    struct cmd_ctx ctxs[RIG_SCRATCH];
    struct cmd_env env;
};

/* Make r's directory, write conf_text to bloomgate.conf in it (relative
 * paths in it are in the directory) and serve it; a failure fails the test.
 * rig_open_in keeps r->dir (another load of the same files: a restart). */
void rig_open(struct rig *r, const char *conf_text);
void rig_open_in(struct rig *r, const char *conf_text);
/* Commit the batch and free what is served; rig_close also removes r->dir. */
void rig_stop(struct rig *r);
void rig_close(struct rig *r);

/* PATH of name in r->dir (one of eight rotating buffers). */
const char *rig_path(struct rig *r, const char *name);
void rig_write(struct rig *r, const char *name, const char *text);

/* Run id on filter (NULL: none named) with the items of a NULL-terminated
 * list (NULL: none), as a client on loopback or not with cred; the batch is
 * committed after. The answers are in r->bools; call.err may be anything. */
struct cmd_call rig_call(struct rig *r, enum cmd_id id, const char *filter,
                         const char *const *items, bool loopback, enum cmd_cred cred);
/* rig_call from loopback without a credential; call.err must be CMD_OK. */
struct cmd_call rig_ok(struct rig *r, enum cmd_id id, const char *filter, const char *const *items);
/* One item's CHECK answer. */
bool rig_check1(struct rig *r, const char *filter, const char *item);

/* The served entry called name (it must be served). */
const struct fentry *rig_entry(struct rig *r, const char *name);

#endif
