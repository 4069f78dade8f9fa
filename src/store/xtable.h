/* xtable: the exact table a filter file names in its exact section
 * (exact/ref.h), opened for a served version: the name resolved beside the
 * filter file, the table's header checksum held to the one the filter
 * records (a table rebuilt, or another filter's, is refused), and a run-time
 * delta over it. The loading thread (start-up, reload) and the tool. */
#ifndef BLOOMGATE_XTABLE_H
#define BLOOMGATE_XTABLE_H

#include <stddef.h>

#include "bloom/format.h"
#include "exact/exact.h"
#include "exact/ref.h"
#include "store/registry.h"

/* The table fi's file names (fi from format_read_info on path, with section
 * kind FORMAT_SECTION_EXACT), opened and checked against the checksum the
 * section records; *ref receives the section. NULL with the fault in err
 * (naming the table's path). */
struct exact_table *xtable_open(const char *path, const struct format_info *fi,
                                struct exact_ref *ref, char *err, size_t errlen);

/* If the file v was loaded from (path, whose header checksum is
 * file_checksum) has an exact section: the table opened into v->xt and an
 * empty delta over it into v->xd. 0 (also without a section), or -1 with the
 * fault in err (the version is then not to be served: a listed key must
 * never become a silent NO). The loading thread, before v is published. */
int xtable_attach(struct fversion *v, const char *path, uint64_t file_checksum, char *err,
                  size_t errlen);

#endif
