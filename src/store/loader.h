/* loader: load one filter as its config block says. A filter with a `file`
 * is read and verified (shards in parallel); one with only a `capacity` starts
 * empty. Runs off the request path: at start-up on the main thread, on reload
 * on the reload thread. */
#ifndef BLOOMGATE_LOADER_H
#define BLOOMGATE_LOADER_H

#include <stdint.h>

#include "conf/conf.h"
#include "store/registry.h"

/* Load one filter as its config block says. NULL with "filter NAME: ..." in err. */
struct fversion *loader_load_filter(const struct conf_filter *cf, unsigned threads, char *err,
                                    size_t errlen);

/* loader_load_filter with the seed of a filter that starts empty: 0 draws
 * one at random; a growing filter with a journal is given one derived from
 * the journal (reload.c), so that a replay makes the same sub-filters. */
struct fversion *loader_load_filter_seed(const struct conf_filter *cf, unsigned threads,
                                         uint64_t seed, char *err, size_t errlen);

/* loader_load_filter at the lowest CPU priority, for a reload while workers
 * serve: the load (reading, checksumming and counting every shard, on
 * `threads` threads) runs on a new thread in SCHED_BATCH at nice 19, which
 * its shard threads inherit, so the workers keep the CPUs they want and the
 * load takes what they leave; the load itself, every checksum and the
 * result are loader_load_filter_seed's. Joins before returning. Start-up, with
 * no worker to yield to, calls loader_load_filter. */
struct fversion *loader_load_filter_idle(const struct conf_filter *cf, unsigned threads,
                                         uint64_t seed, char *err, size_t errlen);
/* The same, then then(v, ctx, err, errlen) on the same low-priority thread
 * (a word list's fold: the journal replayed and compiled in); a -1 from it
 * frees v and gives NULL with its err. */
typedef int loader_then_fn(struct fversion *v, void *ctx, char *err, size_t errlen);
struct fversion *loader_load_filter_idle_then(const struct conf_filter *cf, unsigned threads,
                                              uint64_t seed, loader_then_fn *then, void *ctx,
                                              char *err, size_t errlen);

/* What loading would check, without loading: the file's header and key kind,
 * or (no file, or a missing one with a capacity) the empty filter's sizing.
 * 0, or -1 with "filter NAME: ..." in err. For --check-config. */
int loader_check_filter(const struct conf_filter *cf, char *err, size_t errlen);

#endif
