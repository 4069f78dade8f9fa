/* created_int: what created.c (the operations) and created_load.c (the
 * start-up) share. The registry's writer only. */
#ifndef BLOOMGATE_CREATED_INT_H
#define BLOOMGATE_CREATED_INT_H

#include <limits.h>

#include "conf/conf.h"
#include "store/registry.h"
#include "store/reload_op.h"

#define CREATED_BLOCK_MAX 4096    /* a created filter's config block */
#define CREATED_BASE_MAX PATH_MAX /* state_dir/cN */

/* Remove base's files (.conf first: without it the rest is an orphan). */
void created_remove_files(const char *base);

/* The shelf (created_shelf.c): bloomd's clear of a closed created filter,
 * RELOAD_OP_SHELVE: it leaves the catalog and its files move to
 * state_dir/cleared/NAME.d/. NULL, or the report's code with why. */
const char *created_shelve(struct registry *reg, const struct reload_op *op, char *err,
                           size_t errlen);
/* A create of name: if the shelf holds its files, link them under base and
 * give the block naming them (*out, owned). 1 adopted, 0 nothing shelved,
 * -1 with why. */
int created_adopt(const char *dir, const char *name, const char *base, struct conf_filter **out,
                  char *err, size_t errlen);
/* Remove name's slot from the shelf (adopted, or stale). */
void created_shelf_forget(const char *dir, const char *name);
/* Start-up: a name served from the state directory has no slot (the
 * remains of a clear or an adoption cut short). */
void created_shelf_tidy(const struct catalog *c, const char *dir);

#endif
