/* created_int: what created.c (the operations) and created_load.c (the
 * start-up) share. The registry's writer only. */
#ifndef BLOOMGATE_CREATED_INT_H
#define BLOOMGATE_CREATED_INT_H

#include <limits.h>

#define CREATED_BLOCK_MAX 4096     /* a created filter's config block */
#define CREATED_BASE_MAX PATH_MAX  /* state_dir/cN */

/* Remove base's files (.conf first: without it the rest is an orphan). */
void created_remove_files(const char *base);

#endif
