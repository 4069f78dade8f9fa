/* A created filter's files and its config block (created_int.h): what the
 * operations (created.c), the start-up (created_load.c) and the shelf
 * (created_shelf.c) all read and remove. The registry's writer only. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "store/created.h"
#include "store/created_int.h"

/* conf_parse's "PATH:LINE: reason" without the PATH:LINE the client never
 * wrote. */
static const char *reason_of(const char *msg, const char *path)
{
    size_t pl = strlen(path);
    if (strncmp(msg, path, pl) != 0 || msg[pl] != ':')
        return msg;
    const char *p = msg + pl + 1;
    while (*p >= '0' && *p <= '9')
        p++;
    return strncmp(p, ": ", 2) == 0 ? p + 2 : msg;
}

/* One filter block (a CREATE's, or a state file's) parsed into an owned
 * conf_filter; NULL with why. path names it in messages. */
struct conf_filter *created_parse_block(const char *text, size_t len, const char *path, char *err,
                                        size_t errlen)
{
    char why[1024];
    struct conf *c = conf_parse(text, len, path, why, sizeof(why));
    if (!c) {
        snprintf(err, errlen, "%s", reason_of(why, path));
        return NULL;
    }
    struct conf_filter *cf = NULL;
    if (c->n_filters != 1 || c->filters[0].allow || !c->filters[0].journal)
        snprintf(err, errlen, "%s: not one filter block with a journal and no allow-list", path);
    else if (c->filters[0].capacity == 0)
        /* Every block we write has one; without it a checkpoint's block
         * would be written back as "capacity 0", which no start-up reads. */
        snprintf(err, errlen, "%s: filter %s has no capacity (a created filter needs one)", path,
                 c->filters[0].name);
    else if (!(cf = malloc(sizeof(*cf))))
        snprintf(err, errlen, "out of memory");
    else {
        *cf = c->filters[0];
        c->n_filters = 0; /* cf owns its strings now */
    }
    conf_free(c);
    return cf;
}

void created_free_cf(struct conf_filter *cf)
{
    if (cf)
        conf_filter_clear(cf);
    free(cf);
}

/* Remove base's files (.conf first: without it the rest is an orphan). */
void created_remove_files(const char *base)
{
    static const char *const sfx[] = {".conf", ".journal", ".bloom"};
    char path[CREATED_BASE_MAX + 16];
    for (size_t i = 0; i < sizeof(sfx) / sizeof(*sfx); i++) {
        snprintf(path, sizeof(path), "%s%s", base, sfx[i]);
        if (unlink(path) != 0 && errno != ENOENT)
            log_warn("%s: cannot remove: %s", path, util_errno_text(errno));
        if (i == 0)
            util_fsync_dir_of(path, NULL, 0);
    }
}
