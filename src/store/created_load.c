/* Start-up: the filters made at run time before the last stop, served
 * again from the state directory (created.h: what start-up does with what it
 * cannot serve). The main thread, before any worker runs. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "store/created.h"
#include "store/created_int.h"
#include "store/entry.h"

/* One state file found: cN.conf parsed. */
struct found {
    uint64_t seq;
    struct conf_filter *cf;
};

static int by_name_then_newest(const void *a, const void *b)
{
    const struct found *x = a, *y = b;
    int c = strcmp(x->cf->name, y->cf->name);
    return c ? c : (x->seq < y->seq) - (x->seq > y->seq);
}

static int by_seq(const void *a, const void *b)
{
    const struct found *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* "c<digits>.<suffix>": the digits in *seq and where the suffix starts. */
static const char *state_name(const char *n, uint64_t *seq)
{
    if (n[0] != 'c' || n[1] < '0' || n[1] > '9')
        return NULL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(n + 1, &end, 10);
    if (errno || *end != '.')
        return NULL;
    *seq = v;
    return end;
}

/* Read and parse one cN.conf; NULL (logged) if it cannot be. */
static struct conf_filter *read_block(const char *path)
{
    char text[CREATED_BLOCK_MAX + 1], err[1024];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof(text)) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 0 || n > CREATED_BLOCK_MAX) {
        log_error("%s: %s; the filter it holds is not served (the file is left as it is)", path,
                  n < 0 ? util_errno_text(errno) : "larger than a filter block");
        return NULL;
    }
    struct conf_filter *cf = created_parse_block(text, (size_t)n, path, err, sizeof(err));
    if (!cf)
        log_error("%s: %s; the filter it holds is not served (the file is left as it is)", path,
                  err);
    return cf;
}

/* Every cN.conf of dir, and the highest N of any cN.* (so no base is ever
 * given twice). Files of a base with no .conf are the remains of a drop or
 * a clear cut short: removed. */
static int scan_dir(struct registry *reg, const char *dir, struct found **out, size_t *n_out,
                    char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "state_dir %s: %s", dir, util_errno_text(errno));
        return -1;
    }
    struct found *f = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    char path[CREATED_BASE_MAX + 300];
    while ((de = readdir(d))) {
        uint64_t seq;
        const char *sfx = state_name(de->d_name, &seq);
        if (!sfx)
            continue;
        if (seq > reg->created_seq)
            reg->created_seq = seq;
        if (strcmp(sfx, ".conf") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        struct conf_filter *cf = read_block(path);
        if (!cf)
            continue;
        if (n == cap) {
            struct found *g = realloc(f, (cap = cap ? 2 * cap : 64) * sizeof(*f));
            if (!g) {
                created_free_cf(cf);
                break;
            }
            f = g;
        }
        f[n++] = (struct found){seq, cf};
    }
    rewinddir(d);
    /* Orphans: a .journal or .bloom whose .conf is gone. */
    while ((de = readdir(d))) {
        uint64_t seq;
        const char *sfx = state_name(de->d_name, &seq);
        if (!sfx || strcmp(sfx, ".conf") == 0 || strstr(de->d_name, ".tmp"))
            continue;
        bool owned = false;
        for (size_t i = 0; i < n && !owned; i++)
            owned = f[i].seq == seq;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (!owned && unlink(path) == 0)
            log_info("%s: removed (its filter was dropped or cleared)", path);
    }
    closedir(d);
    *out = f;
    *n_out = n;
    return 0;
}

int created_load_all(struct registry *reg, const struct conf *conf, unsigned threads,
                     struct catalog *c, char *err, size_t errlen)
{
    if (!conf->state_dir)
        return 0;
    if (mkdir(conf->state_dir, 0750) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "state_dir %s: %s", conf->state_dir, util_errno_text(errno));
        return -1;
    }
    struct found *f;
    size_t n;
    if (scan_dir(reg, conf->state_dir, &f, &n, err, errlen) != 0)
        return -1;
    /* A name twice: a clear cut short between writing the new block and
     * removing the old; the newer is the filter. */
    if (n)
        qsort(f, n, sizeof(*f), by_name_then_newest);
    size_t k = 0;
    char base[CREATED_BASE_MAX];
    for (size_t i = 0; i < n; i++) {
        if (k && strcmp(f[k - 1].cf->name, f[i].cf->name) == 0) {
            snprintf(base, sizeof(base), "%s/c%08llu", conf->state_dir,
                     (unsigned long long)f[i].seq);
            log_info("filter %s: %s.* removed (an older copy, from a clear cut short)",
                     f[i].cf->name, base);
            created_remove_files(base);
            created_free_cf(f[i].cf);
            continue;
        }
        f[k++] = f[i];
    }
    n = k;
    if (n)
        qsort(f, n, sizeof(*f), by_seq);
    struct fentry *grown = n ? realloc(c->entries, (c->n + n) * sizeof(*c->entries)) : c->entries;
    if (n && !grown) {
        for (size_t i = 0; i < n; i++)
            created_free_cf(f[i].cf);
        free(f);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->entries = grown;
    size_t served = 0;
    for (size_t i = 0; i < n; i++) {
        struct conf_filter *cf = f[i].cf;
        char why[1024];
        snprintf(base, sizeof(base), "%s/c%08llu", conf->state_dir, (unsigned long long)f[i].seq);
        struct fentry *e = &c->entries[c->n];
        if (conf_find_filter(conf, cf->name) || catalog_find(c, cf->name, strlen(cf->name))) {
            log_error("filter %s (created at run time, %s.conf) is not served: the config "
                      "defines a filter of that name; its files are left as they are",
                      cf->name, base);
            created_free_cf(cf);
            continue;
        }
        if (entry_start(reg, cf, threads, e, why, sizeof(why)) != 0) {
            log_error("filter %s (created at run time, %s.conf) is not served: %s", cf->name, base,
                      why);
            if (e->st)
                registry_release_id(reg, e->id);
            created_free_cf(cf);
            continue;
        }
        e->st->created = cf;
        e->st->created_base = strdup(base);
        e->created = true;
        c->n++;
        served++;
    }
    free(f);
    created_shelf_tidy(c, conf->state_dir);
    if (served)
        log_info("%zu filter(s) created at run time served from %s", served, conf->state_dir);
    return 0;
}
