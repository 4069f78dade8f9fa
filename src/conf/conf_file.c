/* What is done with a parsed configuration: read from a file, freed, looked
 * up (and a filter name checked), its enum values named, and compared with the
 * running one on reload (the restart-only directives, generic over the
 * directive table in conf.c). */
#include "config.h"

#include "conf/conf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf_table.h"

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}
/* Read the whole file, refusing anything over CONF_MAX_FILE_BYTES: a config
 * file is small, and a path pointing at a filter or a log by mistake should be
 * an error, not a parse of gigabytes. */
struct conf *conf_load(const char *path, char *err, size_t errlen)
{
    const char *why = NULL;
    char *buf = NULL;
    size_t cap = CONF_MAX_FILE_BYTES + 1, n = 0;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        why = util_errno_text(errno);
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        why = "is a directory";
        goto out;
    }
    if (S_ISREG(st.st_mode) && st.st_size > (off_t)CONF_MAX_FILE_BYTES) {
        why = "larger than 1 MiB; not a config file?";
        goto out;
    }
    buf = malloc(cap);
    if (buf == NULL) {
        why = "out of memory";
        goto out;
    }
    /* Read up to one byte past the limit rather than trust st_size, which a
     * pipe, or a file being written as we read, does not report truthfully. */
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            why = util_errno_text(errno);
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > CONF_MAX_FILE_BYTES)
        why = "larger than 1 MiB; not a config file?";
out:
    if (fd >= 0)
        close(fd);
    struct conf *c = NULL;
    if (why != NULL)
        snprintf(err, errlen, "%s: %s", path, why);
    else
        c = conf_parse(buf, n, path, err, errlen);
    free(buf);
    return c;
}

/* Whether directive d (global scope) has the same value in a and b. */
static bool same_value(const struct directive *d, const struct conf *cur, const struct conf *next)
{
    const char *a = (const char *)cur + d->offset, *b = (const char *)next + d->offset;
    bool same = true;
    switch (d->type) {
    case T_INT:
    case T_SIZE:
    case T_ENUM:
        same = conf_load_uint(a, d->size) == conf_load_uint(b, d->size);
        break;
    case T_DOUBLE:
        same = memcmp(a, b, sizeof(double)) == 0;
        break;
    case T_STRING:
    case T_PATH:
        same = str_eq(*(char *const *)a, *(char *const *)b);
        break;
    case T_ADDRS:
        same = addr_list_equal(*(struct conf_addr *const *)a,
                           *(const size_t *)((const char *)cur + d->count_offset),
                           *(struct conf_addr *const *)b,
                           *(const size_t *)((const char *)next + d->count_offset));
        break;
    case T_ADDR:
    case T_CHECK: /* front blocks only: conf_fronts.c compares them */
        break;
    }
    if (same && (d->flags & F_OFF))
        same = *(const bool *)((const char *)cur + d->off_offset) ==
               *(const bool *)((const char *)next + d->off_offset);
    return same;
}

/* Generic over the table, so a directive marked not reloadable is checked
 * without anyone remembering to add it here. */
int conf_check_reload(const struct conf *cur, const struct conf *next, char *err, size_t errlen)
{
    for (size_t i = 0; i < conf_n_directives; i++) {
        const struct directive *d = &conf_directives[i];
        if (d->scope != SCOPE_GLOBAL || (d->flags & F_RELOAD))
            continue;
        if (!same_value(d, cur, next)) {
            snprintf(err, errlen, "%s: %s changed; it takes effect only on a restart",
                     next->path ? next->path : "(config)", d->name);
            return -1;
        }
    }
    const char *what = NULL;
    if (conf_fronts_check_reload(cur, next, &what) < 0) {
        snprintf(err, errlen, "%s: the listen addresses of the %s blocks changed; that takes "
                 "effect only on a restart", next->path ? next->path : "(config)", what);
        return -1;
    }
    return 0;
}

/* The value of directive d in c as config text, for "still VALUE". */
static void value_text(const struct directive *d, const struct conf *c, char *buf, size_t len)
{
    const char *f = (const char *)c + d->offset;
    buf[0] = '\0';
    switch (d->type) {
    case T_INT:
    case T_SIZE:
        snprintf(buf, len, "%llu", (unsigned long long)conf_load_uint(f, d->size));
        break;
    case T_ENUM:
        snprintf(buf, len, "%s", conf_enum_name(d->enums, (int)conf_load_uint(f, d->size)));
        break;
    case T_DOUBLE: {
        double v;
        memcpy(&v, f, sizeof(v));
        snprintf(buf, len, "%g", v);
        break;
    }
    case T_STRING:
    case T_PATH:
        snprintf(buf, len, "%s", *(char *const *)f ? *(char *const *)f : "unset");
        break;
    case T_ADDRS: {
        const struct conf_addr *list = *(struct conf_addr *const *)f;
        size_t n = *(const size_t *)((const char *)c + d->count_offset), used = 0;
        if ((d->flags & F_OFF) && *(const bool *)((const char *)c + d->off_offset))
            snprintf(buf, len, "off");
        else if (n == 0)
            snprintf(buf, len, "none");
        for (size_t i = 0; i < n && used < len; i++)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", list[i].text);
        break;
    }
    case T_ADDR:
    case T_CHECK: /* front blocks only */
        break;
    }
}

/* Give next the value cur has for directive d (global scope); -1 when out of memory. */
static int copy_value(const struct directive *d, struct conf *next, const struct conf *cur)
{
    char *to = (char *)next + d->offset;
    const char *from = (const char *)cur + d->offset;
    switch (d->type) {
    case T_INT:
    case T_SIZE:
    case T_ENUM:
    case T_DOUBLE:
        memcpy(to, from, d->size);
        break;
    case T_STRING:
    case T_PATH: {
        const char *v = *(char *const *)from;
        char *dup = v ? strdup(v) : NULL;
        if (v && !dup)
            return -1;
        free(*(char **)to);
        *(char **)to = dup;
        break;
    }
    case T_ADDRS: {
        size_t n = *(const size_t *)((const char *)cur + d->count_offset);
        struct conf_addr *dup = n ? malloc(n * sizeof(*dup)) : NULL;
        if (n && !dup)
            return -1;
        if (n)
            memcpy(dup, *(struct conf_addr *const *)from, n * sizeof(*dup));
        free(*(struct conf_addr **)to);
        *(struct conf_addr **)to = dup;
        *(size_t *)((char *)next + d->count_offset) = n;
        break;
    }
    case T_ADDR:
    case T_CHECK: /* front blocks only: conf_fronts_keep */
        break;
    }
    if (d->flags & F_OFF)
        *(bool *)((char *)next + d->off_offset) = *(const bool *)((const char *)cur + d->off_offset);
    return 0;
}

int conf_keep_running(struct conf *next, const struct conf *cur, conf_warn_fn *warn, void *ctx)
{
    for (size_t i = 0; i < conf_n_directives; i++) {
        const struct directive *d = &conf_directives[i];
        if (d->scope != SCOPE_GLOBAL || (d->flags & F_RELOAD) || same_value(d, cur, next))
            continue;
        char val[256], msg[400];
        value_text(d, cur, val, sizeof(val));
        snprintf(msg, sizeof(msg), "%s: a change needs a restart; still %s", d->name, val);
        if (copy_value(d, next, cur) != 0)
            return -1;
        if (warn)
            warn(ctx, msg);
    }
    return conf_fronts_keep(next, cur, warn, ctx);
}
