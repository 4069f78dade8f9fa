/* Unit tests for allow-lists and removal (src/store/allow.c; issue "Lists
 * that behave like lists"): the allow set, the journal's tagged records (and
 * that untagged ones, the only kind before, read as they did), and the
 * command table's answers on a real catalog loaded by reload_initial:
 * exceptions win over a YES on every key kind, a removal never hides another
 * item (a property over random sets), and a restart (a second load of file +
 * journal) sees what the first one did. Each test works in its own mkdtemp
 * directory. */
#include "config.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloom/le.h"
#include "core/cmd.h"
#include "core/gate.h"
#include "core/stats.h"
#include "store/allow.h"
#include "store/journal.h"
#include "store/registry.h"
#include "store/reload.h"

static char dir[4096];

static void make_dir(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/bloomgate-lists.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void remove_dir(void)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *path_in(const char *name)
{
    static char p[8][4200];
    static unsigned next;
    char *r = p[next++ % 8];
    snprintf(r, sizeof(p[0]), "%s/%s", dir, name);
    return r;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static struct hash128 h_of(uint64_t i)
{
    return hash_item(&i, sizeof(i), 42);
}

/* ---- the set ---- */

START_TEST(test_allow_set)
{
    struct allow_set *s = allow_new();
    ck_assert_ptr_nonnull(s);
    ck_assert(!allow_any(s));
    unsigned old;
    /* Growth from 64 slots to thousands, entries kept across every table. */
    for (uint64_t i = 0; i < 5000; i++)
        ck_assert_int_eq(allow_update(s, h_of(i), i % 3 == 0 ? ALLOW_REMOVED : ALLOW_EXCEPT, 0,
                                      &old),
                         0);
    ck_assert(allow_any(s));
    ck_assert_uint_eq(allow_count(s, ALLOW_REMOVED), 1667);
    ck_assert_uint_eq(allow_count(s, ALLOW_EXCEPT), 3333);
    for (uint64_t i = 0; i < 5000; i++)
        ck_assert_uint_eq(allow_get(s, h_of(i)), i % 3 == 0 ? ALLOW_REMOVED : ALLOW_EXCEPT);
    for (uint64_t i = 5000; i < 10000; i++)
        ck_assert_uint_eq(allow_get(s, h_of(i)), 0);
    /* Clearing: the flags go, a cleared entry answers 0, a lookup of it
     * inserts nothing, and setting it again brings it back. */
    ck_assert_int_eq(allow_update(s, h_of(1), 0, ALLOW_EXCEPT, &old), 0);
    ck_assert_uint_eq(old, ALLOW_EXCEPT);
    ck_assert_uint_eq(allow_get(s, h_of(1)), 0);
    ck_assert_int_eq(allow_update(s, h_of(7777), 0, ALLOW_REMOVED, &old), 0);
    ck_assert_uint_eq(old, 0);
    ck_assert_uint_eq(allow_count(s, ALLOW_EXCEPT), 3332);
    ck_assert_int_eq(allow_update(s, h_of(1), ALLOW_EXCEPT | ALLOW_REMOVED, 0, &old), 0);
    ck_assert_uint_eq(allow_get(s, h_of(1)), ALLOW_EXCEPT | ALLOW_REMOVED);
    /* Outgrown tables wait for the reload thread. */
    struct allow_table *t = allow_take_retired(s);
    ck_assert_ptr_nonnull(t);
    allow_free_tables(t);
    ck_assert_ptr_null(allow_take_retired(s));
    /* Churn of distinct items at a constant size: cleared slots are dropped
     * at each regrowth, so the table stops growing. */
    size_t before = 0;
    for (uint64_t i = 100000; i < 300000; i++) {
        if (i == 150000)
            before = allow_bytes(s);
        ck_assert_int_eq(allow_update(s, h_of(i), ALLOW_EXCEPT, 0, NULL), 0);
        ck_assert_int_eq(allow_update(s, h_of(i), 0, ALLOW_EXCEPT, NULL), 0);
        allow_free_tables(allow_take_retired(s));
    }
    ck_assert_uint_eq(allow_bytes(s), before);
    ck_assert_uint_le(before, 16 * 8 * 5001 + 64);
    ck_assert_uint_eq(allow_get(s, h_of(3)), ALLOW_REMOVED);
    allow_free(s);
}
END_TEST

/* ---- journal records ---- */

struct rec {
    enum journal_op op;
    int64_t t;
    char item[32];
};

struct recs {
    struct rec r[16];
    size_t n;
};

static int collect(void *ctx, enum journal_op op, int64_t t, const void *item, size_t len)
{
    struct recs *rs = ctx;
    ck_assert_uint_lt(rs->n, 16);
    rs->r[rs->n].op = op;
    rs->r[rs->n].t = t;
    snprintf(rs->r[rs->n].item, sizeof(rs->r[0].item), "%.*s", (int)len, (const char *)item);
    rs->n++;
    return 0;
}

static int count_adds(void *ctx, const void *item, size_t len)
{
    (void)item, (void)len;
    (*(int *)ctx)++;
    return 0;
}

START_TEST(test_journal_tags)
{
    make_dir();
    char err[1024];
    const char *p = path_in("j");
    struct journal *j = journal_open(p, CONF_FSYNC_NO, NULL, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    struct filter_key a = {"alpha", 5}, b = {"beta", 4};
    ck_assert_int_eq(journal_append(j, &a, 1, err, sizeof(err)), 0);
    /* An add is written as before tags: the payload is the item's length and
     * bytes, so a journal of adds alone reads in an older bloomgate. */
    ck_assert_int_eq(journal_close(j, err, sizeof(err)), 0);
    {
        FILE *f = fopen(p, "rb");
        unsigned char buf[64];
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        ck_assert_uint_eq(n, JOURNAL_HEADER_BYTES + JOURNAL_RECORD_HEADER + 4 + 5);
        ck_assert_uint_eq(le_get32(buf + JOURNAL_HEADER_BYTES + 4), 9);
        ck_assert_uint_eq(le_get32(buf + JOURNAL_HEADER_BYTES + JOURNAL_RECORD_HEADER), 5);
        ck_assert(memcmp(buf + JOURNAL_HEADER_BYTES + JOURNAL_RECORD_HEADER + 4, "alpha", 5) == 0);
    }
    int adds = 0;
    ck_assert_int_eq(journal_read_file(p, count_adds, &adds, NULL, err, sizeof(err)), 1);
    ck_assert_int_eq(adds, 1);

    j = journal_open(p, CONF_FSYNC_ALWAYS, NULL, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_int_eq(journal_append_op(j, JOURNAL_OP_REMOVE, JOURNAL_NO_TIME, &a, 1, err,
                                       sizeof(err)),
                     0);
    struct filter_key ab[2] = {a, b};
    ck_assert_int_eq(journal_append_op(j, JOURNAL_OP_ALLOW, 1700000000123, ab, 2, err, sizeof(err)),
                     0);
    ck_assert_int_eq(journal_append_op(j, JOURNAL_OP_UNALLOW, JOURNAL_NO_TIME, &b, 1, err,
                                       sizeof(err)),
                     0);
    ck_assert_int_eq(journal_append_op(j, JOURNAL_OP_ADD, -5, &b, 1, err, sizeof(err)), 0);
    ck_assert_int_eq(journal_commit(j, err, sizeof(err)), 0);
    struct recs rs = {.n = 0};
    ck_assert_int_eq(journal_replay_ops(j, 0, journal_end(j), collect, &rs, err, sizeof(err)), 6);
    ck_assert_int_eq(journal_close(j, err, sizeof(err)), 0);
    static const struct {
        enum journal_op op;
        int64_t t;
        const char *item;
    } want[6] = {{JOURNAL_OP_ADD, JOURNAL_NO_TIME, "alpha"},
                 {JOURNAL_OP_REMOVE, JOURNAL_NO_TIME, "alpha"},
                 {JOURNAL_OP_ALLOW, 1700000000123, "alpha"},
                 {JOURNAL_OP_ALLOW, 1700000000123, "beta"},
                 {JOURNAL_OP_UNALLOW, JOURNAL_NO_TIME, "beta"},
                 {JOURNAL_OP_ADD, -5, "beta"}};
    ck_assert_uint_eq(rs.n, 6);
    for (size_t i = 0; i < 6; i++) {
        ck_assert_int_eq(rs.r[i].op, want[i].op);
        ck_assert(rs.r[i].t == want[i].t);
        ck_assert_str_eq(rs.r[i].item, want[i].item);
    }
    /* The add-only reader must not skip a removal: it stops. */
    adds = 0;
    ck_assert_int_eq(journal_read_file(p, count_adds, &adds, NULL, err, sizeof(err)), -1);
    ck_assert_int_eq(adds, 1);
    /* Counting (no callback) counts every record's items. */
    ck_assert_int_eq(journal_read_file(p, NULL, NULL, NULL, err, sizeof(err)), 6);
    ck_assert_str_eq(journal_op_name(JOURNAL_OP_UNALLOW), "unallow");
    remove_dir();
}
END_TEST

/* A record with a tag this version does not know (a newer bloomgate's) is
 * refused as malformed, and the file is left alone: never cut as a torn tail. */
START_TEST(test_journal_unknown_tag)
{
    make_dir();
    char err[1024];
    const char *p = path_in("j");
    struct journal *j = journal_open(p, CONF_FSYNC_NO, NULL, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    struct filter_key a = {"alpha", 5};
    /* The encoder writes any op it is given (the checksum is salted, so a
     * record cannot be patched by hand): one past the ops known. */
    ck_assert_int_eq(journal_append_op(j, (enum journal_op)(JOURNAL_OP_COUNT + 3),
                                       JOURNAL_NO_TIME, &a, 1, err, sizeof(err)),
                     0);
    ck_assert_int_eq(journal_close(j, err, sizeof(err)), 0);
    struct stat st0, st1;
    ck_assert_int_eq(stat(p, &st0), 0);
    j = journal_open(p, CONF_FSYNC_NO, NULL, err, sizeof(err));
    ck_assert_ptr_null(j);
    ck_assert_msg(strstr(err, "unknown record tag") != NULL, "%s", err);
    ck_assert_int_eq(stat(p, &st1), 0);
    ck_assert_int_eq(st0.st_size, st1.st_size);
    remove_dir();
}
END_TEST

/* ---- the command table over a real catalog ---- */

struct rig {
    struct registry *reg;
    struct stats_block sb;
    _Atomic uint64_t id_gen[REGISTRY_MAX_FILTERS];
    struct gate_batch gb;
    struct filter_key keys[64];
    bool bools[64], allowed[64];
    struct cmd_env env;
};

static void rig_load(struct rig *r, const char *conf_text)
{
    char err[2048];
    const char *cp = path_in("bloomgate.conf");
    write_text(cp, conf_text);
    struct conf *conf = conf_load(cp, err, sizeof(err));
    ck_assert_msg(conf != NULL, "%s", err);
    r->reg = registry_create(0);
    ck_assert_ptr_nonnull(r->reg);
    ck_assert_msg(reload_initial(r->reg, conf, 1, err, sizeof(err)) == 0, "%s", err);
}

static void rig_open(struct rig *r, const char *conf_text)
{
    memset(r, 0, sizeof(*r));
    r->sb.fstats = calloc(REGISTRY_MAX_FILTERS, sizeof(*r->sb.fstats));
    ck_assert_ptr_nonnull(r->sb.fstats);
    r->env = (struct cmd_env){.gate = &r->gb,
                              .stats = &r->sb,
                              .id_gen = r->id_gen,
                              .keys = r->keys,
                              .bools = r->bools,
                              .allowed = r->allowed,
                              .scratch_items = 64};
    rig_load(r, conf_text);
}

static void rig_close(struct rig *r)
{
    ck_assert(gate_commit(&r->gb));
    registry_free(r->reg);
    free(r->sb.fstats);
}

/* Run id on filter with the items of a NULL-terminated list: call->err must
 * be CMD_OK; the answers are in r->bools. */
static struct cmd_call run(struct rig *r, enum cmd_id id, const char *filter, const char **items)
{
    struct cmd_call call;
    size_t n = 0;
    while (items[n]) {
        r->keys[n].data = items[n];
        r->keys[n].len = strlen(items[n]);
        n++;
    }
    cmd_call_init(&call, registry_read(r->reg), NULL, n, true, CMD_CRED_NONE);
    call.filter = filter;
    call.filter_len = strlen(filter);
    cmd_run(&r->env, id, NULL, &call);
    ck_assert_msg(call.err == CMD_OK, "%s %s: %s", cmd_table[id].name, items[0], call.msg);
    ck_assert(gate_commit(&r->gb));
    return call;
}

static bool check1(struct rig *r, const char *filter, const char *item)
{
    const char *items[] = {item, NULL};
    run(r, CMD_CHECK, filter, items);
    return r->bools[0];
}

static const char *match1(struct rig *r, const char *filter, const char *item, bool *allowed)
{
    static char out[256];
    const char *items[] = {item, NULL};
    struct cmd_call c = run(r, CMD_MATCH, filter, items);
    *allowed = c.except != NULL;
    const char *k = c.except ? c.except : c.match;
    size_t kl = c.except ? c.except_len : c.match_len;
    if (!k)
        return NULL;
    snprintf(out, sizeof(out), "%.*s", (int)kl, k);
    return out;
}

static const char *const conf_kinds =
    "listen 127.0.0.1:1\n"
    "http_listen off\n"
    "filter ex {\n capacity 1000\n keys exact\n fsync always\n allow ex.allow\n}\n"
    "filter hosts {\n capacity 1000\n keys host\n fsync always\n allow hosts.allow\n}\n"
    "filter urls {\n capacity 1000\n keys url\n fsync always\n allow urls.allow\n}\n";

/* An exception wins over a YES on every key kind, from the allow file and
 * from ALLOW; for host and url keys when it is the expression that matched
 * or a more specific one, never a less specific one. */
START_TEST(test_exceptions_win)
{
    make_dir();
    write_text(path_in("ex.allow"), "# comment\nfile-ok  \n\n");
    write_text(path_in("hosts.allow"), "ok.evil.test\n@@||fine.evil.test^\n");
    write_text(path_in("urls.allow"), "http://bad.test/ads/good.js\n");
    struct rig r;
    rig_open(&r, conf_kinds);
    const char *ex_add[] = {"file-ok", "runtime-ok", "blocked", NULL};
    run(&r, CMD_ADD, "ex", ex_add);
    const char *host_add[] = {"evil.test", "sub.ok.evil.test", NULL};
    run(&r, CMD_ADD, "hosts", host_add);
    const char *url_add[] = {"http://bad.test/ads/", "http://bad.test/", NULL};
    run(&r, CMD_ADD, "urls", url_add);

    /* exact */
    ck_assert(!check1(&r, "ex", "file-ok"));
    ck_assert(check1(&r, "ex", "runtime-ok"));
    const char *allow_rt[] = {"runtime-ok", "not-listed", NULL};
    struct cmd_call c = run(&r, CMD_ALLOW, "ex", allow_rt);
    ck_assert(r.bools[0] && r.bools[1]);
    ck_assert_uint_eq(c.yes, 2);
    c = run(&r, CMD_ALLOW, "ex", allow_rt);
    ck_assert_uint_eq(c.yes, 0); /* already */
    ck_assert(!check1(&r, "ex", "runtime-ok"));
    ck_assert(check1(&r, "ex", "blocked"));
    const char *batch[] = {"blocked", "runtime-ok", "never", "file-ok", NULL};
    c = run(&r, CMD_CHECK, "ex", batch);
    ck_assert(r.bools[0] && !r.bools[1] && !r.bools[2] && !r.bools[3]);
    ck_assert_uint_eq(c.allowed, 2);
    ck_assert(!r.allowed[0] && r.allowed[1] && !r.allowed[2] && r.allowed[3]);
    bool al;
    ck_assert_str_eq(match1(&r, "ex", "runtime-ok", &al), "runtime-ok");
    ck_assert(al);
    ck_assert_str_eq(match1(&r, "ex", "blocked", &al), "blocked");
    ck_assert(!al);
    const char *unallow[] = {"runtime-ok", NULL};
    c = run(&r, CMD_UNALLOW, "ex", unallow);
    ck_assert_uint_eq(c.yes, 1);
    ck_assert(check1(&r, "ex", "runtime-ok"));

    /* host: the exception is the expression that matched or more specific */
    ck_assert(check1(&r, "hosts", "x.evil.test"));
    ck_assert(!check1(&r, "hosts", "ok.evil.test"));
    ck_assert_str_eq(match1(&r, "hosts", "a.ok.evil.test", &al), "ok.evil.test");
    ck_assert(al);
    ck_assert(!check1(&r, "hosts", "bob@fine.evil.test"));
    /* sub.ok.evil.test is listed itself, more specifically than the
     * exception ok.evil.test: still blocked. */
    ck_assert_str_eq(match1(&r, "hosts", "a.sub.ok.evil.test", &al), "sub.ok.evil.test");
    ck_assert(!al);
    const char *allow_host[] = {"www.evil.test", NULL};
    run(&r, CMD_ALLOW, "hosts", allow_host);
    ck_assert(!check1(&r, "hosts", "http://www.evil.test/x"));
    /* An exception for a parent of what matched does not apply. */
    const char *add_deep[] = {"deep.zz.test", NULL};
    const char *allow_zz[] = {"zz.test", NULL};
    run(&r, CMD_ADD, "hosts", add_deep);
    run(&r, CMD_ALLOW, "hosts", allow_zz);
    ck_assert(check1(&r, "hosts", "a.deep.zz.test"));

    /* url */
    ck_assert(check1(&r, "urls", "http://bad.test/ads/evil.js"));
    ck_assert(!check1(&r, "urls", "http://BAD.test:80/ads/good.js"));
    ck_assert_str_eq(match1(&r, "urls", "http://bad.test/ads/good.js?x=1", &al),
                     "bad.test/ads/good.js");
    ck_assert(al);
    ck_assert(check1(&r, "urls", "http://bad.test/other"));
    rig_close(&r);

    /* A restart: file + journal give the same answers. */
    rig_open(&r, conf_kinds);
    ck_assert(!check1(&r, "ex", "file-ok"));
    ck_assert(check1(&r, "ex", "runtime-ok")); /* unallowed again */
    ck_assert(check1(&r, "ex", "blocked"));
    ck_assert(!check1(&r, "hosts", "http://www.evil.test/x"));
    ck_assert(check1(&r, "hosts", "a.deep.zz.test"));
    ck_assert(!check1(&r, "urls", "http://bad.test/ads/good.js"));
    rig_close(&r);
    remove_dir();
}
END_TEST

/* REMOVE hides exactly the removed items: over random sets, every item
 * added and not removed is still YES, before and after a restart, on an
 * exact filter and on a host filter (where a removed host must not take its
 * listed parent's or child's entries with it); an ADD brings an item back. */
START_TEST(test_removal_hides_no_other)
{
    make_dir();
    const char *conf =
        "listen 127.0.0.1:1\nhttp_listen off\n"
        "filter ex {\n capacity 600\n fpr 0.000001\n keys exact\n fsync always\n}\n"
        "filter hosts {\n capacity 600\n fpr 0.000001\n keys host\n fsync always\n}\n";
    struct rig r;
    rig_open(&r, conf);
    srand(12345);
    enum { N = 400 };
    static char items[N][40], hosts[N][48];
    bool removed[N];
    for (int i = 0; i < N; i++) {
        snprintf(items[i], sizeof(items[i]), "item-%d-%d", i, rand());
        /* Hosts nest: every fourth is a child of the one before it. */
        if (i % 4 == 3)
            snprintf(hosts[i], sizeof(hosts[i]), "c%d.%s", i, hosts[i - 1]);
        else
            snprintf(hosts[i], sizeof(hosts[i]), "h%d-%d.test", i, rand() % 100000);
        const char *a[] = {items[i], NULL}, *h[] = {hosts[i], NULL};
        run(&r, CMD_ADD, "ex", a);
        run(&r, CMD_ADD, "hosts", h);
    }
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            removed[i] = rand() % 3 == 0;
            const char *a[] = {items[i], NULL}, *h[] = {hosts[i], NULL};
            if (removed[i]) {
                struct cmd_call c = run(&r, CMD_REMOVE, "ex", a);
                ck_assert_uint_le(c.yes, 1);
                run(&r, CMD_REMOVE, "hosts", h);
            } else if (round == 1) {
                run(&r, CMD_ADD, "ex", a); /* brings back a removal of round 0 */
                run(&r, CMD_ADD, "hosts", h);
            }
        }
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < N; i++) {
                if (!removed[i]) {
                    ck_assert_msg(check1(&r, "ex", items[i]), "%s hidden (round %d)", items[i],
                                  round);
                    ck_assert_msg(check1(&r, "hosts", hosts[i]), "%s hidden (round %d)",
                                  hosts[i], round);
                } else {
                    ck_assert_msg(!check1(&r, "ex", items[i]), "%s still there", items[i]);
                    /* A removed child of a listed parent is still covered by
                     * the parent; otherwise it is gone. */
                    bool parent = i % 4 == 3 && !removed[i - 1];
                    ck_assert_msg(check1(&r, "hosts", hosts[i]) == parent, "%s", hosts[i]);
                }
            }
            /* pass 1: the same after a restart from the journals */
            rig_close(&r);
            rig_open(&r, conf);
        }
    }
    rig_close(&r);
    remove_dir();
}
END_TEST

/* ALLOW, UNALLOW and REMOVE are mutations: auth as ADD. */
START_TEST(test_mutations_need_auth)
{
    make_dir();
    write_text(path_in("ex.allow"), "");
    write_text(path_in("hosts.allow"), "");
    write_text(path_in("urls.allow"), "");
    struct rig r;
    rig_open(&r, conf_kinds);
    for (enum cmd_id id = CMD_ALLOW; id <= CMD_REMOVE; id++) {
        ck_assert(cmd_table[id].mutating);
        struct cmd_call call;
        r.keys[0].data = "x";
        r.keys[0].len = 1;
        cmd_call_init(&call, registry_read(r.reg), NULL, 1, false, CMD_CRED_NONE);
        call.filter = "ex";
        call.filter_len = 2;
        cmd_run(&r.env, id, NULL, &call);
        ck_assert_int_eq(call.err, CMD_ERR_AUTH_REQUIRED);
    }
    rig_close(&r);
    remove_dir();
}
END_TEST

/* A bad line in an allow file fails the load, naming the line. */
START_TEST(test_allow_file_errors)
{
    make_dir();
    write_text(path_in("ex.allow"), "");
    write_text(path_in("hosts.allow"), "good.test\nhttp://x.test/path\n");
    write_text(path_in("urls.allow"), "");
    char err[2048];
    const char *cp = path_in("bloomgate.conf");
    write_text(cp, conf_kinds);
    struct conf *conf = conf_load(cp, err, sizeof(err));
    ck_assert_ptr_nonnull(conf);
    struct registry *reg = registry_create(0);
    ck_assert_int_eq(reload_initial(reg, conf, 1, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "hosts.allow:2:") != NULL, "%s", err);
    conf_free(conf);
    registry_free(reg);
    remove_dir();
}
END_TEST

static Suite *lists_suite(void)
{
    Suite *s = suite_create("allow");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_allow_set);
    tcase_add_test(tc, test_journal_tags);
    tcase_add_test(tc, test_journal_unknown_tag);
    tcase_add_test(tc, test_exceptions_win);
    tcase_add_test(tc, test_removal_hides_no_other);
    tcase_add_test(tc, test_mutations_need_auth);
    tcase_add_test(tc, test_allow_file_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(lists_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
