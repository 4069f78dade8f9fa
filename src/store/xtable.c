/* A served filter's exact table, see xtable.h. */
#include "config.h"

#include "store/xtable.h"

#include <stdio.h>
#include <stdlib.h>

#include "exact/delta.h"

struct exact_table *xtable_open(const char *path, const struct format_info *fi,
                                struct exact_ref *ref, char *err, size_t errlen)
{
    void *body = NULL;
    size_t len = 0;
    char why[1024], tpath[4096];
    if (fi->section_kind != FORMAT_SECTION_EXACT) {
        snprintf(err, errlen, "%s names no exact table (build it with bloomgate build --exact)",
                 path);
        return NULL;
    }
    if (format_read_section(path, fi, &body, &len, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s", why);
        return NULL;
    }
    int rc = exact_ref_decode(body, len, ref, why, sizeof(why));
    free(body);
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        return NULL;
    }
    if (exact_ref_path(ref, path, tpath, sizeof(tpath)) != 0) {
        snprintf(err, errlen, "%s: the exact table's path is too long", path);
        return NULL;
    }
    struct exact_table *t = exact_table_open(tpath, why, sizeof(why));
    if (!t) {
        snprintf(err, errlen, "%s's exact table: %s", path, why);
        return NULL;
    }
    struct exact_info xi;
    exact_table_info(t, &xi);
    if (xi.checksum != ref->checksum || xi.kind != ref->kind || xi.count != ref->count) {
        snprintf(err, errlen,
                 "%s: the exact table %s is not the one this filter was built with (checksum "
                 "%016llx, the filter names %016llx); rebuild both with bloomgate build --exact",
                 path, tpath, (unsigned long long)xi.checksum, (unsigned long long)ref->checksum);
        exact_table_close(t);
        return NULL;
    }
    return t;
}

int xtable_attach(struct fversion *v, const char *path, uint64_t file_checksum, char *err,
                  size_t errlen)
{
    struct format_info fi;
    char why[1024];
    if (format_read_info(path, &fi, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    int rc = 0;
    if (fi.checksum != file_checksum) {
        snprintf(err, errlen, "file %s was replaced while it was loaded; try again", path);
        rc = -1;
    } else if (fi.section_kind == FORMAT_SECTION_EXACT) {
        struct exact_ref ref;
        struct exact_info xi;
        if (!(v->xt = xtable_open(path, &fi, &ref, err, errlen))) {
            rc = -1;
        } else {
            exact_table_info(v->xt, &xi);
            if (!(v->xd = exact_delta_new(v->xt, xi.kind, xi.seed, why, sizeof(why)))) {
                snprintf(err, errlen, "%s: %s", path, why);
                rc = -1;
            }
        }
    }
    format_info_free(&fi);
    return rc;
}
