/* created: filters made at run time (CREATE on the line protocol,
 * PUT /v1/filters/NAME, BF.RESERVE and auto-creating BF.ADD, bloomd's
 * create), cleared and dropped the same way. The reload thread runs each
 * operation, one at a time, in the order asked (store/reload.h), so a create
 * racing a drop of the same name has one winner. Each filter lives in the
 * state directory as files sharing a base name cN: cN.conf, its config block
 * (written atomically: the filter exists once it is there), and cN.journal,
 * its adds. Start-up serves every one found there (docs/created.md).
 * Registry writer only, but for the counts, which any thread holding the
 * catalog may take. */
#ifndef BLOOMGATE_CREATED_H
#define BLOOMGATE_CREATED_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "store/registry.h"
#include "store/reload_op.h"

#define CREATED_DEFAULT_CAPACITY 100000 /* bloomd's default too */

/* Filters of c made at run time, and the bytes their bits take. */
size_t created_count(const struct catalog *c);
uint64_t created_bytes(const struct catalog *c);

/* The pure parts, for tests and the fuzz harness (any thread): a CREATE's
 * options as an owned filter block whose journal is `journal`, and a state
 * file's block text (path names it in messages); NULL with why. */
struct conf_filter *created_parse_op(const struct reload_op *op, const char *journal, char *err,
                                     size_t errlen);
struct conf_filter *created_parse_block(const char *text, size_t len, const char *path, char *err,
                                        size_t errlen);
void created_free_cf(struct conf_filter *cf);

/* Once a second on the reload thread: checkpoint the created filters whose
 * journals have grown past checkpoint_bytes and four times their bits (a
 * smaller journal replays faster than the file loads). */
void created_tick(struct registry *reg);

/* Run one operation (not RELOAD_OP_RELOAD) and publish its outcome; the
 * report reload.h describes. Reload thread. */
json_t *created_run(struct registry *reg, unsigned threads, const struct reload_op *op);

/* Start-up, after the config's filters: serve every filter conf->state_dir
 * holds, appended to c (grown as needed). One that cannot be served (its
 * name now taken by the config, a file that does not parse) is logged and
 * left on disk untouched. -1 with err only when the directory cannot be
 * read or out of memory. Main thread. */
int created_load_all(struct registry *reg, const struct conf *conf, unsigned threads,
                     struct catalog *c, char *err, size_t errlen);

#endif
