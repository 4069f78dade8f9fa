/* The in-process rig of the unit tests: see rig.h. */
#include "config.h"

#include "lib/rig.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adblock/adblock.h"
#include "conf/conf.h"
#include "store/reload.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

const char *rig_path(struct rig *r, const char *name)
{
    static char p[8][4200];
    static unsigned next;
    char *out = p[next++ % 8];
    snprintf(out, sizeof(p[0]), "%s/%s", r->dir, name);
    return out;
}

void rig_write(struct rig *r, const char *name, const char *text)
{
    FILE *f = fopen(rig_path(r, name), "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

void rig_open_in(struct rig *r, const char *conf_text)
{
    char dir[sizeof(r->dir)];
    memcpy(dir, r->dir, sizeof(dir));
    memset(r, 0, sizeof(*r));
    memcpy(r->dir, dir, sizeof(dir));
    r->sb.fstats = calloc(REGISTRY_MAX_FILTERS, sizeof(*r->sb.fstats));
    ck_assert_ptr_nonnull(r->sb.fstats);
    r->env = (struct cmd_env){.gate = &r->gb,
                              .stats = &r->sb,
                              .id_gen = r->id_gen,
                              .keys = r->keys,
                              .bools = r->bools,
                              .allowed = r->allowed,
                              .ctxs = r->ctxs,
                              .ab = adblock_ctx_new(),
                              .scratch_items = RIG_SCRATCH,
                              .proto = STATS_LINE};
    char err[2048];
    rig_write(r, "bloomgate.conf", conf_text);
    struct conf *conf = conf_load(rig_path(r, "bloomgate.conf"), err, sizeof(err));
    ck_assert_msg(conf != NULL, "%s", err);
    r->reg = registry_create(0);
    ck_assert_ptr_nonnull(r->reg);
    ck_assert_msg(reload_initial(r->reg, conf, 1, err, sizeof(err)) == 0, "%s", err);
}

void rig_open(struct rig *r, const char *conf_text)
{
    const char *t = getenv("TMPDIR");
    snprintf(r->dir, sizeof(r->dir), "%s/bloomgate-rig.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(r->dir));
    rig_open_in(r, conf_text);
}

void rig_stop(struct rig *r)
{
    ck_assert(gate_commit(&r->gb));
    registry_free(r->reg);
    r->reg = NULL;
    free(r->sb.fstats);
    r->sb.fstats = NULL;
    adblock_ctx_free(r->env.ab);
    r->env.ab = NULL;
}

void rig_close(struct rig *r)
{
    rig_stop(r);
    nftw(r->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

struct cmd_call rig_call(struct rig *r, enum cmd_id id, const char *filter,
                         const char *const *items, bool loopback, enum cmd_cred cred)
{
    struct cmd_call call;
    size_t n = 0;
    while (items && items[n]) {
        ck_assert_uint_lt(n, RIG_SCRATCH);
        r->keys[n].data = items[n];
        r->keys[n].len = strlen(items[n]);
        n++;
    }
    cmd_call_init(&call, registry_read(r->reg), NULL, n, loopback, cred);
    if (filter) {
        call.filter = filter;
        call.filter_len = strlen(filter);
    }
    cmd_run(&r->env, id, NULL, &call);
    ck_assert(gate_commit(&r->gb));
    return call;
}

struct cmd_call rig_ok(struct rig *r, enum cmd_id id, const char *filter, const char *const *items)
{
    struct cmd_call call = rig_call(r, id, filter, items, true, CMD_CRED_NONE);
    ck_assert_msg(call.err == CMD_OK, "%s on %s: %s", cmd_table[id].name, filter ? filter : "-",
                  call.msg);
    return call;
}

bool rig_check1(struct rig *r, const char *filter, const char *item)
{
    const char *items[] = {item, NULL};
    rig_ok(r, CMD_CHECK, filter, items);
    return r->bools[0];
}

const struct fentry *rig_entry(struct rig *r, const char *name)
{
    const struct fentry *e = catalog_find(registry_read(r->reg), name, strlen(name));
    ck_assert_msg(e != NULL, "filter %s is not served", name);
    return e;
}
