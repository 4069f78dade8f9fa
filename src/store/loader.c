#include "config.h"

#include "store/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bloom/format.h"
#include "base/log.h"
#include "base/util.h"

struct fversion *loader_load_filter(const struct conf_filter *cf, unsigned threads, char *err,
                                    size_t errlen)
{
    char why[1024];
    double t0 = util_now();
    struct filter *f = NULL;
    struct stat st;
    const char *file = NULL;
    bool have_file = false;
    if (cf->file) {
        if (stat(cf->file, &st) == 0) {
            have_file = true;
        } else if (errno != ENOENT || cf->capacity == 0) {
            snprintf(err, errlen, "filter %s: file %s: %s%s", cf->name, cf->file, strerror(errno),
                     errno == ENOENT ? " (and no capacity is configured to start empty)" : "");
            return NULL;
        } else {
            log_warn("filter %s: file %s does not exist; starting empty with capacity %llu",
                     cf->name, cf->file, (unsigned long long)cf->capacity);
        }
    }
    if (have_file) {
        f = format_load(cf->file, threads, why, sizeof(why));
        if (!f) {
            snprintf(err, errlen, "filter %s: %s", cf->name, why);
            return NULL;
        }
        file = cf->file;
    } else {
        struct filter_plan plan;
        if (filter_plan_make((enum filter_layout)cf->layout, cf->capacity, cf->fpr, 0, &plan, why,
                             sizeof(why)) != 0) {
            snprintf(err, errlen, "filter %s: %s", cf->name, why);
            return NULL;
        }
        uint64_t seed = 0;
        while (seed == 0) { /* 0 is no seed; one draw in 2^64 */
            if (util_random_u64(&seed, why, sizeof(why)) != 0) {
                snprintf(err, errlen, "filter %s: a seed for the empty filter: %s", cf->name, why);
                return NULL;
            }
        }
        f = filter_create(&plan, seed, why, sizeof(why));
        if (!f) {
            snprintf(err, errlen, "filter %s: %s", cf->name, why);
            return NULL;
        }
    }
    struct fversion *v = fversion_new(f, file);
    if (!v) {
        filter_free(f);
        snprintf(err, errlen, "filter %s: out of memory", cf->name);
        return NULL;
    }
    if (have_file) {
        v->dev = st.st_dev;
        v->ino = st.st_ino;
        v->size = st.st_size;
        v->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    v->load_seconds = util_now() - t0;
    log_info("filter %s: %s %s, %llu items, %llu bytes, %u shards, k=%u (%.3f s)", cf->name,
             have_file ? "loaded" : "created empty", have_file ? file : "in memory",
             (unsigned long long)filter_items(f), (unsigned long long)filter_bytes(f),
             f->shard_count, f->k, v->load_seconds);
    return v;
}
