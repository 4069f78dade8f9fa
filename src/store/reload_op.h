/* reload_op: the operations on one filter that the reload thread runs
 * beside reloads (store/reloader.c runs them, store/created.c does them, the
 * fronts ask for them through net/conn.h's conn_admin). Plain data and one
 * pure helper; any thread. */
#ifndef BLOOMGATE_RELOAD_OP_H
#define BLOOMGATE_RELOAD_OP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/fname.h"

/* What the reload thread is asked to do. A RELOAD re-reads the config; the
 * others change one filter made at run time (store/created.h): they queue in
 * order and each is answered on its own, so a create racing a drop of the
 * same name has one clear winner, the first queued. */
enum reload_op_kind {
    RELOAD_OP_RELOAD = 0,
    RELOAD_OP_CREATE, /* make `name` with opts (the options of a config block) */
    RELOAD_OP_DROP,   /* stop serving it and remove its files */
    RELOAD_OP_CLEAR,  /* empty it: a new version, a new journal */
    RELOAD_OP_FLUSH,  /* sync its journal (or every one's, name empty) to disk */
    RELOAD_OP_SHELVE, /* bloomd's clear: stop serving a closed one, keep its files for a create */
    RELOAD_OP_BARRIER, /* nothing: answered once every operation queued before it is */
};

#define RELOAD_OP_MAX_OPTS 16
#define RELOAD_OP_KEY_MAX 23
#define RELOAD_OP_VAL_MAX 71

struct reload_op {
    enum reload_op_kind kind;
    char name[FNAME_MAX + 1];
    bool if_missing; /* CREATE: an existing filter is not an error ("existed" in the report) */
    unsigned n_opts;
    struct {
        char key[RELOAD_OP_KEY_MAX + 1];
        char val[RELOAD_OP_VAL_MAX + 1];
    } opts[RELOAD_OP_MAX_OPTS];
};

/* Add one option to op (a front's parser). 0, or -1 with why in err: too
 * many, a key or value too long. */
int reload_op_opt(struct reload_op *op, const char *key, size_t klen, const char *val,
                  size_t vlen, char *err, size_t errlen);

#endif
