/* build_exact: `bloomgate build --exact`: the exact table (src/exact/) built
 * beside the filter from the same keys, on the same insert threads, and named
 * in the filter file's exact section (exact/ref.h). Each worker gathers its
 * keys in a small buffer of its own and hands them to the table's builder a
 * batch at a time (the builder takes its lock once a batch). Memory stays
 * under the builder's budget. Build threads, as each function says. */
#ifndef BLOOMGATE_TOOL_BUILD_EXACT_H
#define BLOOMGATE_TOOL_BUILD_EXACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bloom/filter.h"
#include "bloom/format.h"
#include "exact/build.h"
#include "tool/build.h"

#define BUILD_EXACT_BATCH 4096 /* keys a worker gathers before one exact_builder_add */

/* One worker's keys waiting for the builder: copies, so that a parse mode's
 * key (in the parser's scratch) may be gathered too. */
struct build_xacc {
    char *bytes;
    size_t used, cap;
    const void *ptrs[BUILD_EXACT_BATCH];
    size_t lens[BUILD_EXACT_BATCH];
    size_t offs[BUILD_EXACT_BATCH];
    size_t n;
};

/* The table's path for a filter written to output: output + ".exact". 0, or
 * -1 if it does not fit. */
int build_exact_path(const char *output, char *buf, size_t cap);

/* The builder for o (o->exact set): a random seed, o->exact_mem, o->threads.
 * NULL with err. Calling thread, before the workers. */
struct exact_builder *build_exact_begin(const struct build_opts *o, char *err, size_t errlen);

/* Gather one key; a full buffer goes to the builder. 0, or -1 with err (a key
 * over EXACT_MAX_KEY, no memory, a failed spill). Worker thread (its own a). */
int build_exact_put(struct build_xacc *a, struct exact_builder *xb, const void *key, size_t len,
                    char *err, size_t errlen);
/* Hand every gathered key to the builder. 0, or -1 with err. Worker thread. */
int build_exact_flush(struct build_xacc *a, struct exact_builder *xb, char *err, size_t errlen);
void build_exact_acc_free(struct build_xacc *a);

/* After the workers and the journals: the table sorted, merged and committed,
 * then the filter written with its exact section naming it (its header
 * checksum read back from the table written). res's exact fields are filled.
 * 0, or -1 with err. Calling thread. */
int build_exact_commit(const struct build_opts *o, struct exact_builder *xb, struct filter *f,
                       unsigned threads, struct build_result *res, char *err, size_t errlen);

/* `bloomgate info`: the exact table fi's file names, as JSON (file, kind,
 * entries, sizes, checksum), or NULL with err (a table that cannot be opened
 * or is not the one named). Main thread. */
json_t *build_exact_info_json(const char *path, const struct format_info *fi, char *err,
                              size_t errlen);

/* `bloomgate verify`: the table fi names (if any) opened and read whole
 * (exact_table_verify); what to add to the summary in note ("" without a
 * table). 0, or -1 with err. Main thread. */
int build_exact_verify(const char *path, const struct format_info *fi, char *note, size_t notelen,
                       char *err, size_t errlen);

#endif
