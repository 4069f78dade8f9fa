/* Filters made at run time (see created.h). Every function but the counts
 * runs on the registry's writer: the reload thread, or the main thread at
 * start-up before any worker. */
#include "config.h"

#include "store/created.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fname.h"
#include "base/log.h"
#include "base/util.h"
#include "bloom/filter.h"
#include "bloom/format.h"
#include "bloom/grow.h"
#include "bloom/grow_file.h"
#include "store/allow.h"
#include "store/journal.h"
#include "store/loader.h"
#include "store/created_int.h"
#include "store/entry.h"

#define BLOCK_MAX CREATED_BLOCK_MAX
#define BASE_MAX CREATED_BASE_MAX

/* The options a created filter may be given: those of a config block that
 * describe a filter starting empty. file, allow and journal are the state
 * directory's to decide. */
static const char *const create_opts[] = {
    "capacity", "fpr", "keys", "layout", "growth", "max_memory", "window", "slices", "fsync",
    "full", NULL,
};
#define CREATE_OPTS_TEXT                                                                       \
    "capacity, fpr, keys, layout, growth, max_memory, window, slices, fsync, full"

size_t created_count(const struct catalog *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += c->entries[i].st->created != NULL;
    return n;
}

uint64_t created_bytes(const struct catalog *c)
{
    uint64_t b = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->entries[i].st->created)
            b += filter_bytes(c->entries[i].v->f);
    return b;
}

/* A value as a config line may hold it unquoted, and nothing more: a value
 * cannot smuggle a second directive into the block. */
static bool value_ok(const char *v)
{
    for (; *v; v++) {
        unsigned char ch = (unsigned char)*v;
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              ch == '.' || ch == '_' || ch == '+' || ch == '-'))
            return false;
    }
    return true;
}

/* The config block a CREATE asks for, into buf. 0, or -1 with why. */
static int op_text(const struct reload_op *op, const char *journal, char *buf, size_t len,
                   char *err, size_t errlen)
{
    bool has_cap = false;
    size_t n = (size_t)snprintf(buf, len, "filter \"%s\" {\n", op->name);
    for (unsigned i = 0; i < op->n_opts; i++) {
        const char *k = op->opts[i].key, *v = op->opts[i].val;
        size_t o = 0;
        while (create_opts[o] && strcmp(create_opts[o], k) != 0)
            o++;
        if (!create_opts[o]) {
            snprintf(err, errlen, "unknown option %s (use " CREATE_OPTS_TEXT ")", k);
            return -1;
        }
        for (unsigned j = 0; j < i; j++)
            if (strcmp(op->opts[j].key, k) == 0) {
                snprintf(err, errlen, "option %s given twice", k);
                return -1;
            }
        if (!value_ok(v)) {
            snprintf(err, errlen, "option %s: bad value (use letters, digits and . _ + -)", k);
            return -1;
        }
        if (strcmp(k, "keys") == 0 && strcmp(v, "adblock") == 0) {
            snprintf(err, errlen, "keys adblock: an Adblock filter is compiled from lists "
                                  "(bloomgate build --format adblock), not created empty");
            return -1;
        }
        has_cap |= strcmp(k, "capacity") == 0;
        if (n < len)
            n += (size_t)snprintf(buf + n, len - n, "  %s %s\n", k, v);
    }
    if (!has_cap && n < len)
        n += (size_t)snprintf(buf + n, len - n, "  capacity %d\n", CREATED_DEFAULT_CAPACITY);
    if (n < len)
        n += (size_t)snprintf(buf + n, len - n, "  journal \"%s\"\n}\n", journal);
    if (n >= len) {
        snprintf(err, errlen, "options too long");
        return -1;
    }
    return 0;
}

struct conf_filter *created_parse_op(const struct reload_op *op, const char *journal, char *err,
                                     size_t errlen)
{
    char text[BLOCK_MAX];
    if (op_text(op, journal, text, sizeof(text), err, errlen) != 0)
        return NULL;
    return created_parse_block(text, strlen(text), "(create)", err, errlen);
}

/* Write cf's block to path atomically (fsync, rename, fsync the directory):
 * once this returns 0 the filter survives a crash. */
static int write_block(const struct conf_filter *cf, const char *path, char *err, size_t errlen)
{
    char text[BLOCK_MAX], tmp[BASE_MAX + 32];
    int n = conf_filter_text(cf, text, sizeof(text));
    if (n < 0) {
        snprintf(err, errlen, "filter %s: its options do not fit a block", cf->name);
        return -1;
    }
    int fd = util_tmpfile_beside(path, tmp, sizeof(tmp), err, errlen);
    if (fd < 0)
        return -1;
    if (util_write_all(fd, text, (size_t)n) != 0) {
        util_fail(err, errlen, "%s: %s", tmp, util_errno_text(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    return util_commit_file(fd, tmp, path, err, errlen);
}

/* The entry of a created filter called name; NULL with the code and why. */
static const struct fentry *find_created(const struct catalog *cur, const char *name,
                                         const char **code, char *err, size_t errlen)
{
    const struct fentry *e = catalog_find(cur, name, strlen(name));
    if (!e) {
        snprintf(err, errlen, "no filter %s", name);
        *code = "unknown_filter";
    } else if (!e->st->created) {
        snprintf(err, errlen, "filter %s is defined in the config: remove it there and reload",
                 name);
        *code = "configured";
        e = NULL;
    }
    return e;
}

/* st's block is now cf, its files base.*: the old block is freed once no
 * reader can hold it, and the old base's files removed. Writer. */
static void replace_block(struct registry *reg, struct fstate *st, struct conf_filter *cf,
                          const char *base)
{
    char *old_base = st->created_base;
    struct conf_filter *old_cf = st->created;
    st->created = cf;
    st->created_base = strdup(base);
    registry_synchronize(reg); /* INFO may have been reading the old block */
    if (old_base)
        created_remove_files(old_base);
    free(old_base);
    created_free_cf(old_cf);
}

static const char *op_create(struct registry *reg, unsigned threads, const struct reload_op *op,
                             bool *existed, char *err, size_t errlen)
{
    const struct catalog *cur = registry_read(reg);
    const struct conf *conf = cur->conf;
    size_t nl = strlen(op->name);
    if (!fname_valid(op->name, nl)) {
        snprintf(err, errlen, "bad filter name: use " FNAME_RULE);
        return "bad_option";
    }
    if (catalog_find(cur, op->name, nl)) {
        if (op->if_missing) {
            *existed = true;
            return NULL;
        }
        snprintf(err, errlen, "filter %s exists", op->name);
        return "exists";
    }
    if (!conf->state_dir) {
        snprintf(err, errlen, "filters are created only with state_dir in the config");
        return "no_state_dir";
    }
    if (created_count(cur) >= conf->max_filters) {
        snprintf(err, errlen, "max_filters (%u) reached: drop a filter or raise max_filters",
                 conf->max_filters);
        return "limit";
    }
    char base[BASE_MAX], path[BASE_MAX + 16], journal[BASE_MAX + 16], text[BLOCK_MAX];
    snprintf(base, sizeof(base), "%s/c%08llu", conf->state_dir,
             (unsigned long long)++reg->created_seq);
    snprintf(path, sizeof(path), "%s.conf", base);
    snprintf(journal, sizeof(journal), "%s.journal", base);
    /* A name bloomd's clear put on the shelf: its files, its old options
     * (as bloomd's create finds a filter's files on disk). */
    struct conf_filter *cf = NULL;
    int adopted = created_adopt(conf->state_dir, op->name, base, &cf, err, errlen);
    if (adopted < 0)
        return "failed";
    if (!adopted && op_text(op, journal, text, sizeof(text), err, errlen) != 0)
        return "bad_option";
    if (!adopted && !(cf = created_parse_block(text, strlen(text), path, err, errlen)))
        return "bad_option";
    struct fentry e;
    memset(&e, 0, sizeof(e));
    const char *code = "failed";
    if (entry_start(reg, cf, threads, &e, err, errlen) != 0)
        goto fail;
    uint64_t bytes = filter_bytes(e.v->f);
    if (cf->growth && cf->max_memory > bytes)
        bytes = cf->max_memory;
    if (created_bytes(cur) + bytes > conf->max_created_memory) {
        snprintf(err, errlen,
                 "max_created_memory (%llu bytes) reached: this filter takes %llu bytes and the "
                 "created filters %llu",
                 (unsigned long long)conf->max_created_memory, (unsigned long long)bytes,
                 (unsigned long long)created_bytes(cur));
        code = "limit";
        goto fail;
    }
    struct catalog *next = registry_catalog_copy(cur, 1);
    if (!next || write_block(cf, path, err, errlen) != 0) {
        if (!next)
            snprintf(err, errlen, "out of memory");
        free(next ? next->entries : NULL);
        free(next);
        goto fail;
    }
    e.st->created = cf;
    e.st->created_base = strdup(base); /* NULL (out of memory): DROP leaves the files */
    entry_set_status(e.st, "created", NULL);
    e.created = true;
    next->entries[next->n++] = e;
    registry_publish_deferred(reg, next);
    if (adopted) /* served from base now: the shelf's copy goes */
        created_shelf_forget(conf->state_dir, op->name);
    return NULL;
fail:
    fversion_free(e.v);
    if (e.st)
        registry_release_id(reg, e.id); /* closes the journal it opened */
    unlink(journal);
    if (adopted) { /* a link: the shelf keeps the filter */
        snprintf(path, sizeof(path), "%s.bloom", base);
        unlink(path);
    }
    created_free_cf(cf);
    return code;
}

static const char *op_drop(struct registry *reg, const struct reload_op *op, char *err,
                           size_t errlen)
{
    const struct catalog *cur = registry_read(reg);
    const char *code = NULL;
    const struct fentry *e = find_created(cur, op->name, &code, err, errlen);
    if (!e)
        return code;
    char base[BASE_MAX] = "";
    if (e->st->created_base)
        snprintf(base, sizeof(base), "%s", e->st->created_base);
    struct catalog *next = registry_catalog_copy(cur, 0);
    if (!next) {
        snprintf(err, errlen, "out of memory");
        return "failed";
    }
    next->n = 0;
    for (size_t i = 0; i < cur->n; i++)
        if (&cur->entries[i] != e)
            next->entries[next->n++] = cur->entries[i];
    /* The block goes first: from here on a restart does not serve it. */
    char path[BASE_MAX + 16];
    snprintf(path, sizeof(path), "%s.conf", base);
    if (base[0] && unlink(path) != 0 && errno != ENOENT) {
        util_fail(err, errlen, "%s: %s", path, util_errno_text(errno));
        free(next->entries);
        free(next);
        return "failed";
    }
    /* After the grace period its state is freed and its journal closed. */
    registry_publish_deferred(reg, next);
    if (base[0])
        created_remove_files(base);
    return NULL;
}

static const char *op_clear(struct registry *reg, unsigned threads, const struct reload_op *op,
                            char *err, size_t errlen)
{
    const struct catalog *cur = registry_read(reg);
    const char *code = NULL;
    const struct fentry *e = find_created(cur, op->name, &code, err, errlen);
    if (!e)
        return code;
    struct fstate *st = e->st;
    /* A new base: its block names a new, empty journal. Until the old block
     * is removed both exist; start-up keeps the newer (created_load_all). */
    char base[BASE_MAX], path[BASE_MAX + 16], journal[BASE_MAX + 16], text[BLOCK_MAX];
    snprintf(base, sizeof(base), "%s/c%08llu", cur->conf->state_dir,
             (unsigned long long)++reg->created_seq);
    snprintf(path, sizeof(path), "%s.conf", base);
    snprintf(journal, sizeof(journal), "%s.journal", base);
    struct conf_filter tmp = *st->created;
    tmp.journal = journal;
    tmp.file = NULL; /* empty: not its last checkpoint */
    if (conf_filter_text(&tmp, text, sizeof(text)) < 0) {
        snprintf(err, errlen, "its options do not fit a block");
        return "failed";
    }
    struct conf_filter *cf = created_parse_block(text, strlen(text), path, err, errlen);
    if (!cf)
        return "failed";
    struct journal *j = entry_open_journal(cf, err, errlen);
    struct fversion *v =
        j ? loader_load_filter_seed(cf, threads, entry_filter_seed(cf, j), err, errlen) : NULL;
    struct catalog *next = v ? registry_catalog_copy(cur, 0) : NULL;
    if (!v || !next || write_block(cf, path, err, errlen) != 0) {
        if (v && !next)
            snprintf(err, errlen, "out of memory");
        free(next ? next->entries : NULL);
        free(next);
        fversion_free(v);
        entry_close_journal(j);
        unlink(journal);
        created_free_cf(cf);
        return "failed";
    }
    /* As a reload swaps a journal (reload.c, publish_pending): from here on
     * every mutation goes to the new journal and reaches v too. */
    pthread_mutex_lock(&st->mut_mu);
    struct journal *was = atomic_exchange(&st->journal, j);
    atomic_store(&st->pending, v);
    pthread_mutex_unlock(&st->mut_mu);
    v->generation = e->v->generation + 1;
    next->entries[e - cur->entries].v = v;
    registry_publish(reg, next);
    atomic_store(&st->pending, NULL);
    entry_close_journal(was);
    replace_block(reg, st, cf, base);
    entry_set_status(st, "cleared", NULL);
    return NULL;
}

/* Whether e's filter can be written as a file and loaded back as it is: a
 * plain blocked or classic filter (a filter file), or a growing one (its
 * checkpoint file, bloom/grow_file.h); not a windowed, counting or fuse one
 * (docs/created.md says why). */
static bool checkpointable(const struct fentry *e)
{
    const struct filter *f = e->v->f;
    return e->created && (grow_of(f) || (!f->comp && (f->layout == FILTER_BLOCKED ||
                                                      f->layout == FILTER_CLASSIC)));
}

/* Exceptions and removals are hashes in the version's allow set, which no
 * file holds: only the journal's records bring them back, so a filter that
 * has any keeps its journal whole. Under st->mut_mu (no mutation runs). */
static bool holds_amends(const struct fentry *e)
{
    return allow_count(e->v->allow, ALLOW_EXCEPT) || allow_count(e->v->allow, ALLOW_REMOVED);
}

/* A checkpoint of created filter e: its filter written as a file (a filter
 * file, or a growing filter's checkpoint) under a new base, with a new empty
 * journal, so a restart loads the file and replays only what came after
 * instead of every add ever made. Adds wait (the filter's mutation lock)
 * from the file's write to the journal's swap, so each acknowledged add is
 * in exactly one of the file and the new journal. The order makes any crash
 * safe: the file is durable (fsync, rename, directory fsync), then the new
 * journal is made, then the new block naming both is durable, and only
 * then is the old journal left: a crash before the block leaves the old
 * block and journal, complete (the new files are orphans start-up
 * removes); after it, the new ones. Then the old base's files go. 0, 1 when
 * it was not taken (exceptions or removals held: *why_not says so), or -1
 * with why. */
static int checkpoint(struct registry *reg, const struct fentry *e, char *err, size_t errlen)
{
    struct fstate *st = e->st;
    const char *dir = registry_read(reg)->conf->state_dir;
    bool grows = grow_of(e->v->f) != NULL;
    char base[BASE_MAX], path[BASE_MAX + 16], journal[BASE_MAX + 16], file[BASE_MAX + 16];
    char text[BLOCK_MAX];
    snprintf(base, sizeof(base), "%s/c%08llu", dir, (unsigned long long)++reg->created_seq);
    snprintf(path, sizeof(path), "%s.conf", base);
    snprintf(journal, sizeof(journal), "%s.journal", base);
    snprintf(file, sizeof(file), "%s.bloom", base);
    struct conf_filter tmp = *st->created;
    tmp.journal = journal;
    tmp.file = file;
    if (conf_filter_text(&tmp, text, sizeof(text)) < 0) {
        snprintf(err, errlen, "its options do not fit a block");
        return -1;
    }
    struct conf_filter *cf = created_parse_block(text, strlen(text), path, err, errlen);
    if (!cf)
        return -1;
    double t0 = util_now();
    uint64_t was_bytes = 0;
    pthread_mutex_lock(&st->mut_mu);
    if (holds_amends(e)) {
        pthread_mutex_unlock(&st->mut_mu);
        created_free_cf(cf);
        snprintf(err, errlen, "it holds exceptions or removals, which only its journal keeps");
        return 1;
    }
    struct journal *j = NULL, *was = atomic_load(&st->journal);
    was_bytes = was ? journal_end(was) : 0;
    int wrc = grows ? grow_file_write(e->v->f, file, err, errlen)
                    : format_write(e->v->f, file, 1, err, errlen);
    if (wrc != 0 || !(j = entry_open_journal(cf, err, errlen)) ||
        write_block(cf, path, err, errlen) != 0) {
        pthread_mutex_unlock(&st->mut_mu);
        entry_close_journal(j);
        unlink(journal);
        unlink(file);
        created_free_cf(cf);
        return -1;
    }
    atomic_store(&st->journal, j);
    pthread_mutex_unlock(&st->mut_mu);
    entry_close_journal(was);
    replace_block(reg, st, cf, base);
    log_info("filter %s: checkpoint %s (a journal of %llu bytes cut; adds waited %.3f s)",
             e->name, file, (unsigned long long)was_bytes, util_now() - t0);
    return 0;
}

void created_tick(struct registry *reg)
{
    const struct catalog *cur = registry_read(reg);
    if (!cur->conf->state_dir || !cur->conf->checkpoint_bytes)
        return;
    for (size_t i = 0; i < cur->n; i++) {
        const struct fentry *e = &cur->entries[i];
        struct journal *j = e->created ? atomic_load(&e->st->journal) : NULL;
        if (!j || !checkpointable(e) || holds_amends(e) ||
            journal_end(j) < cur->conf->checkpoint_bytes + 4 * filter_bytes(e->v->f))
            continue;
        char err[1024];
        int rc = checkpoint(reg, e, err, sizeof(err));
        if (rc < 0)
            log_error("filter %s: checkpoint failed: %s; the journal keeps growing", e->name,
                      err);
        else if (rc > 0)
            log_warn_limited("filter %s: not checkpointed: %s", e->name, err);
    }
}

/* Sync the journal of name, or every filter's (name empty); a created
 * filter that can be is checkpointed too (bloomd's flush writes the filter
 * out). */
static const char *op_flush(struct registry *reg, const struct reload_op *op, char *err,
                            size_t errlen)
{
    const struct catalog *cur = registry_read(reg);
    const struct fentry *one = NULL;
    if (op->name[0] && !(one = catalog_find(cur, op->name, strlen(op->name)))) {
        snprintf(err, errlen, "no filter %s", op->name);
        return "unknown_filter";
    }
    for (size_t i = 0; i < cur->n; i++) {
        const struct fentry *e = &cur->entries[i];
        struct journal *j = atomic_load(&e->st->journal);
        if ((one && e != one) || !j)
            continue;
        char why[1024];
        if (journal_tick(j, why, sizeof(why)) != 0) {
            util_fail(err, errlen, "filter %s: journal: %s", e->name, why);
            return "failed";
        }
        int rc = checkpointable(e) && journal_end(j) > JOURNAL_HEADER_BYTES
                     ? checkpoint(reg, e, why, sizeof(why))
                     : 0;
        if (rc < 0) {
            util_fail(err, errlen, "filter %s: checkpoint: %s", e->name, why);
            return "failed";
        }
        if (rc > 0)
            log_info("filter %s: synced, not checkpointed: %s", e->name, why);
    }
    return NULL;
}

static const char *op_name(enum reload_op_kind k)
{
    switch (k) {
    case RELOAD_OP_CREATE:
        return "create";
    case RELOAD_OP_DROP:
        return "drop";
    case RELOAD_OP_CLEAR:
        return "clear";
    case RELOAD_OP_FLUSH:
        return "flush";
    case RELOAD_OP_SHELVE:
        return "shelve";
    case RELOAD_OP_BARRIER:
        return "barrier";
    default:
        return "reload";
    }
}

json_t *created_run(struct registry *reg, unsigned threads, const struct reload_op *op)
{
    char err[1024] = "";
    const char *code = "failed";
    bool existed = false;
    switch (op->kind) {
    case RELOAD_OP_CREATE:
        code = op_create(reg, threads, op, &existed, err, sizeof(err));
        break;
    case RELOAD_OP_DROP:
        code = op_drop(reg, op, err, sizeof(err));
        break;
    case RELOAD_OP_CLEAR:
        code = op_clear(reg, threads, op, err, sizeof(err));
        break;
    case RELOAD_OP_FLUSH:
        code = op_flush(reg, op, err, sizeof(err));
        break;
    case RELOAD_OP_SHELVE:
        code = created_shelve(reg, op, err, sizeof(err));
        break;
    case RELOAD_OP_BARRIER:
        code = NULL; /* its answer is that the operations before it are done */
        break;
    default:
        snprintf(err, sizeof(err), "not an operation on a filter");
        break;
    }
    json_t *r = json_object();
    json_object_set_new(r, "ok", json_boolean(!code));
    json_object_set_new(r, "op", json_string(op_name(op->kind)));
    json_object_set_new(r, "name", json_string(op->name));
    if (existed)
        json_object_set_new(r, "existed", json_true());
    if (code) {
        json_object_set_new(r, "code", json_string(code));
        json_object_set_new(r, "error", json_string(err));
        log_warn_limited("%s %s refused: %s", op_name(op->kind), op->name, err);
    } else if (!existed && op->kind != RELOAD_OP_FLUSH && op->kind != RELOAD_OP_BARRIER) {
        log_info("filter %s: %s", op->name,
                 op->kind == RELOAD_OP_CREATE   ? "created"
                 : op->kind == RELOAD_OP_DROP   ? "dropped"
                 : op->kind == RELOAD_OP_SHELVE ? "cleared (its files kept for a create)"
                                                : "cleared");
    }
    return r;
}

