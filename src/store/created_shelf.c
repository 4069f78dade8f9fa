/* The shelf of cleared filters (see created_int.h): bloomd's clear takes a
 * created filter out of service but keeps its files, under
 * state_dir/cleared/NAME.d/, for a later create of that name to adopt. Every
 * step is a hard link, a rename-free unlink or a new directory, each made
 * durable (directory fsync) before the next, so a crash at any point leaves
 * either the filter served or its files on the shelf, never neither
 * (docs/created.md). The registry's writer only. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fname.h"
#include "base/log.h"
#include "base/util.h"
#include "store/created.h"
#include "store/created_int.h"

#define SHELF_DIR "cleared"

/* state_dir/cleared/NAME.d into out. The suffix keeps names such as ".."
 * inside the shelf. */
static void slot_path(const char *dir, const char *name, char *out, size_t len)
{
    char ff[FNAME_FILE_MAX];
    size_t n = fname_file(name, strlen(name), ff);
    ff[n] = '\0';
    snprintf(out, len, "%s/" SHELF_DIR "/%s.d", dir, ff);
}

/* Remove the slot's files and the slot itself. */
static void slot_remove(const char *slot)
{
    DIR *d = opendir(slot);
    if (!d)
        return;
    struct dirent *de;
    char path[CREATED_BASE_MAX + 300];
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            snprintf(path, sizeof(path), "%s/%s", slot, de->d_name);
            if (unlink(path) != 0)
                log_warn("%s: cannot remove: %s", path, util_errno_text(errno));
        }
    closedir(d);
    if (rmdir(slot) != 0)
        log_warn("%s: cannot remove: %s", slot, util_errno_text(errno));
    util_fsync_dir_of(slot, NULL, 0);
}

void created_shelf_forget(const char *dir, const char *name)
{
    char slot[CREATED_BASE_MAX + 16];
    slot_path(dir, name, slot, sizeof(slot));
    struct stat sb;
    if (stat(slot, &sb) == 0)
        slot_remove(slot);
}

/* Link base's files (.journal, .bloom, then .conf: the slot holds a filter
 * once its .conf is there) into slot. 0, or -1 with why. */
static int link_into(const char *base, const char *slot, char *err, size_t errlen)
{
    static const char *const sfx[] = {".journal", ".bloom", ".conf"};
    const char *leaf = strrchr(base, '/');
    leaf = leaf ? leaf + 1 : base;
    char from[CREATED_BASE_MAX + 16], to[2 * CREATED_BASE_MAX + 32];
    for (size_t i = 0; i < sizeof(sfx) / sizeof(*sfx); i++) {
        snprintf(from, sizeof(from), "%s%s", base, sfx[i]);
        snprintf(to, sizeof(to), "%s/%s%s", slot, leaf, sfx[i]);
        if (link(from, to) != 0 && (errno != ENOENT || i == 2)) {
            util_fail(err, errlen, "%s: %s", to, util_errno_text(errno));
            return -1;
        }
    }
    snprintf(to, sizeof(to), "%s/.", slot);
    return util_fsync_dir_of(to, err, errlen);
}

const char *created_shelve(struct registry *reg, const struct reload_op *op, char *err,
                           size_t errlen)
{
    const struct catalog *cur = registry_read(reg);
    const struct fentry *e = catalog_find(cur, op->name, strlen(op->name));
    if (!e) {
        snprintf(err, errlen, "no filter %s", op->name);
        return "unknown_filter";
    }
    if (!e->st->created) {
        snprintf(err, errlen, "filter %s is defined in the config: it cannot be cleared", op->name);
        return "configured";
    }
    if (!atomic_load(&e->st->closed)) {
        snprintf(err, errlen, "filter %s is not closed: close it first", op->name);
        return "not_closed";
    }
    if (!e->st->created_base) {
        snprintf(err, errlen, "filter %s: its files are unknown (out of memory)", op->name);
        return "failed";
    }
    const char *dir = cur->conf->state_dir;
    char base[CREATED_BASE_MAX], shelf[CREATED_BASE_MAX + 16], slot[CREATED_BASE_MAX + 16];
    char probe[CREATED_BASE_MAX + 32];
    snprintf(base, sizeof(base), "%s", e->st->created_base);
    snprintf(shelf, sizeof(shelf), "%s/" SHELF_DIR, dir);
    slot_path(dir, op->name, slot, sizeof(slot));
    created_shelf_forget(dir, op->name); /* a stale slot (the name served means it is) */
    if ((mkdir(shelf, 0750) != 0 && errno != EEXIST) || mkdir(slot, 0750) != 0) {
        util_fail(err, errlen, "%s: %s", slot, util_errno_text(errno));
        return "failed";
    }
    snprintf(probe, sizeof(probe), "%s/.", shelf);
    if (util_fsync_dir_of(shelf, err, errlen) != 0 || util_fsync_dir_of(probe, err, errlen) != 0 ||
        link_into(base, slot, err, errlen) != 0) {
        slot_remove(slot);
        return "failed";
    }
    struct catalog *next = calloc(1, sizeof(*next));
    if (!next || !(next->entries = malloc((cur->n + 1) * sizeof(*next->entries)))) {
        free(next);
        slot_remove(slot);
        snprintf(err, errlen, "out of memory");
        return "failed";
    }
    next->conf = cur->conf;
    for (size_t i = 0; i < cur->n; i++)
        if (&cur->entries[i] != e)
            next->entries[next->n++] = cur->entries[i];
    /* The block in the state directory goes: from here on a restart finds
     * the filter only on the shelf. */
    snprintf(probe, sizeof(probe), "%s.conf", base);
    if (unlink(probe) != 0 && errno != ENOENT) {
        util_fail(err, errlen, "%s: %s", probe, util_errno_text(errno));
        free(next->entries);
        free(next);
        slot_remove(slot);
        return "failed";
    }
    util_fsync_dir_of(probe, NULL, 0);
    /* Waits out the readers: the state is freed, its journal closed (and
     * unlocked) before a create may adopt it. */
    registry_publish(reg, next);
    created_remove_files(base);
    return NULL;
}

/* Read the one cN.conf of slot into text; its leaf cN into leaf. 0, 1
 * when the slot holds none, or -1 with why. */
static int slot_block(const char *slot, char *text, size_t len, size_t *tlen, char *leaf,
                      size_t leaflen, char *err, size_t errlen)
{
    DIR *d = opendir(slot);
    if (!d)
        return 1;
    struct dirent *de;
    int rc = 1;
    while (rc == 1 && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 6 || de->d_name[0] != 'c' || strcmp(de->d_name + n - 5, ".conf") != 0)
            continue;
        snprintf(leaf, leaflen, "%.*s", (int)(n - 5), de->d_name);
        char path[CREATED_BASE_MAX + 300];
        snprintf(path, sizeof(path), "%s/%s", slot, de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? read(fd, text, len) : -1;
        if (fd >= 0)
            close(fd);
        if (got < 0 || (size_t)got >= len) {
            util_fail(err, errlen, "%s: %s", path,
                      got < 0 ? util_errno_text(errno) : "larger than a filter block");
            rc = -1;
        } else {
            *tlen = (size_t)got;
            rc = 0;
        }
    }
    closedir(d);
    return rc;
}

int created_adopt(const char *dir, const char *name, const char *base, struct conf_filter **out,
                  char *err, size_t errlen)
{
    *out = NULL;
    char slot[CREATED_BASE_MAX + 16], leaf[64], text[CREATED_BLOCK_MAX];
    size_t tlen = 0;
    slot_path(dir, name, slot, sizeof(slot));
    int rc = slot_block(slot, text, sizeof(text), &tlen, leaf, sizeof(leaf), err, errlen);
    if (rc != 0)
        return rc > 0 ? 0 : -1;
    struct conf_filter *old = created_parse_block(text, tlen, "(cleared)", err, errlen);
    if (!old)
        return -1;
    if (strcmp(old->name, name) != 0) {
        snprintf(err, errlen, "%s holds filter %s, not %s", slot, old->name, name);
        created_free_cf(old);
        return -1;
    }
    char from[CREATED_BASE_MAX + 300], journal[CREATED_BASE_MAX + 16], file[CREATED_BASE_MAX + 16];
    snprintf(journal, sizeof(journal), "%s.journal", base);
    snprintf(file, sizeof(file), "%s.bloom", base);
    snprintf(from, sizeof(from), "%s/%s.journal", slot, leaf);
    bool has_file = false;
    if (link(from, journal) != 0 && errno != ENOENT) {
        util_fail(err, errlen, "%s: %s", journal, util_errno_text(errno));
        created_free_cf(old);
        return -1;
    }
    if (old->file) {
        snprintf(from, sizeof(from), "%s/%s.bloom", slot, leaf);
        if (link(from, file) != 0) {
            util_fail(err, errlen, "%s: %s", file, util_errno_text(errno));
            unlink(journal);
            created_free_cf(old);
            return -1;
        }
        has_file = true;
    }
    util_fsync_dir_of(journal, NULL, 0);
    struct conf_filter tmp = *old;
    tmp.journal = journal;
    tmp.file = has_file ? file : NULL;
    int n = conf_filter_text(&tmp, text, sizeof(text));
    created_free_cf(old);
    struct conf_filter *cf =
        n < 0 ? NULL : created_parse_block(text, (size_t)n, "(cleared)", err, errlen);
    if (!cf) {
        if (n < 0)
            snprintf(err, errlen, "its options do not fit a block");
        unlink(journal);
        unlink(file);
        return -1;
    }
    *out = cf;
    return 1;
}

void created_shelf_tidy(const struct catalog *c, const char *dir)
{
    if (!dir)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (c->entries[i].st->created)
            created_shelf_forget(dir, c->entries[i].name);
}
