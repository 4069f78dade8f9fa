/* check_gate: the one path of every mutation (src/core/gate.c) on filters
 * served in process (tests/lib/rig.h): a mutation is journaled before it
 * reaches the version, and the journals a batch wrote to are remembered once
 * each for its group commit (past GATE_MAX_DIRTY a journal commits at once);
 * a version a reload is preparing (`pending`) gets the mutation too; a REMOVE
 * a counting filter cannot take refuses the whole request before anything is
 * journaled; a filter without a journal takes adds and dirties nothing;
 * `full refuse` refuses an add past a fixed-size filter's capacity. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/gate.h"
#include "lib/rig.h"
#include "store/amend.h"
#include "store/journal.h"
#include "store/loader.h"

struct seen {
    size_t n;
    enum journal_op op[32];
    char item[32][16];
};

static int collect(void *ctx, enum journal_op op, int64_t t, const void *item, size_t len)
{
    (void)t;
    struct seen *s = ctx;
    ck_assert_uint_lt(s->n, 32);
    ck_assert_uint_lt(len, 16);
    s->op[s->n] = op;
    memcpy(s->item[s->n], item, len);
    s->item[s->n][len] = '\0';
    s->n++;
    return 0;
}

/* The records of filter name's journal, read as the offline tool reads it. */
static struct seen journal_of(struct rig *r, const char *name)
{
    struct seen s = {0};
    char file[128], err[1024];
    snprintf(file, sizeof(file), "%s.journal", name);
    ck_assert_msg(journal_read_file_ops(rig_path(r, file), collect, &s, NULL, err, sizeof(err)) >=
                      0,
                  "%s", err);
    return s;
}

static struct filter_key key(const char *s)
{
    return (struct filter_key){s, strlen(s)};
}

static const char *const conf_two = "listen 127.0.0.1:1\nhttp_listen off\n"
                                    "filter a {\n capacity 1000\n fsync always\n}\n"
                                    "filter b {\n capacity 1000\n fsync always\n}\n"
                                    "filter off {\n capacity 1000\n journal off\n}\n";

/* One batch, two filters: each journal is remembered once, however many
 * mutations; the commit empties the batch; every record is in its journal,
 * in order, with its op; the versions answer what the mutations did. */
START_TEST(test_batch_and_commit)
{
    struct rig r;
    rig_open(&r, conf_two);
    const struct fentry *a = rig_entry(&r, "a"), *b = rig_entry(&r, "b");
    struct gate_batch gb = {0};
    char err[512];
    bool added[2];
    struct filter_key k[2] = {key("x1"), key("x2")};
    ck_assert(!gate_dirty(&gb));
    ck_assert_int_eq(gate_add(&gb, a, k, 2, added, err, sizeof(err)), 0);
    ck_assert(added[0] && added[1]);
    ck_assert(gate_dirty(&gb));
    ck_assert_uint_eq(gb.n_dirty, 1);
    ck_assert_int_eq(gate_add(&gb, a, k, 1, added, err, sizeof(err)), 0);
    ck_assert(!added[0]);
    ck_assert_uint_eq(gb.n_dirty, 1);
    ck_assert_int_eq(gate_mutate(&gb, b, JOURNAL_OP_ALLOW, &k[1], 1, added, err, sizeof(err)), 0);
    ck_assert(added[0]);
    ck_assert_uint_eq(gb.n_dirty, 2);
    ck_assert_int_eq(gate_mutate(&gb, a, JOURNAL_OP_REMOVE, &k[0], 1, added, err, sizeof(err)), 0);
    ck_assert(added[0]);
    ck_assert_uint_eq(gb.n_dirty, 2);
    ck_assert(gate_commit(&gb));
    ck_assert(!gate_dirty(&gb));
    ck_assert(gate_commit(&gb)); /* an empty batch commits */

    struct seen ja = journal_of(&r, "a"), jb = journal_of(&r, "b");
    ck_assert_uint_eq(ja.n, 4);
    ck_assert_str_eq(ja.item[0], "x1");
    ck_assert_str_eq(ja.item[1], "x2");
    ck_assert_str_eq(ja.item[2], "x1");
    ck_assert_int_eq(ja.op[2], JOURNAL_OP_ADD);
    ck_assert_str_eq(ja.item[3], "x1");
    ck_assert_int_eq(ja.op[3], JOURNAL_OP_REMOVE);
    ck_assert_uint_eq(jb.n, 1);
    ck_assert_int_eq(jb.op[0], JOURNAL_OP_ALLOW);

    ck_assert(!rig_check1(&r, "a", "x1")); /* removed */
    ck_assert(rig_check1(&r, "a", "x2"));
    ck_assert(!rig_check1(&r, "b", "x2"));

    /* A restart replays the journals into the same answers. */
    rig_stop(&r);
    rig_open_in(&r, conf_two);
    ck_assert(!rig_check1(&r, "a", "x1"));
    ck_assert(rig_check1(&r, "a", "x2"));
    rig_close(&r);
}
END_TEST

/* More journals in one batch than it tracks: the one past GATE_MAX_DIRTY
 * commits at once, and nothing is lost. */
START_TEST(test_batch_overflow)
{
    char conf[4096];
    size_t o = (size_t)snprintf(conf, sizeof(conf), "listen 127.0.0.1:1\nhttp_listen off\n");
    for (int i = 0; i <= GATE_MAX_DIRTY; i++)
        o += (size_t)snprintf(conf + o, sizeof(conf) - o,
                              "filter f%d {\n capacity 100\n fsync always\n}\n", i);
    struct rig r;
    rig_open(&r, conf);
    struct gate_batch gb = {0};
    char err[512], name[8];
    struct filter_key k = key("item");
    for (int i = 0; i <= GATE_MAX_DIRTY; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        ck_assert_int_eq(gate_add(&gb, rig_entry(&r, name), &k, 1, NULL, err, sizeof(err)), 0);
        ck_assert_uint_eq(gb.n_dirty, i < GATE_MAX_DIRTY ? (unsigned)i + 1 : GATE_MAX_DIRTY);
    }
    ck_assert(gate_commit(&gb));
    for (int i = 0; i <= GATE_MAX_DIRTY; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        ck_assert_uint_eq(journal_of(&r, name).n, 1);
        ck_assert(rig_check1(&r, name, "item"));
    }
    rig_close(&r);
}
END_TEST

/* The version a reload is preparing takes the mutation too, and the one
 * the request holds is not changed twice when it is that version. */
START_TEST(test_pending_version)
{
    struct rig r;
    rig_open(&r, conf_two);
    const struct fentry *a = rig_entry(&r, "a");
    const struct conf_filter *cf = conf_find_filter(registry_read(r.reg)->conf, "a");
    ck_assert_ptr_nonnull(cf);
    char err[1024];
    struct fversion *next = loader_load_filter(cf, 1, err, sizeof(err));
    ck_assert_msg(next != NULL, "%s", err);
    atomic_store(&a->st->pending, next);
    struct gate_batch gb = {0};
    struct filter_key k[2] = {key("p1"), key("p2")};
    bool added[2];
    ck_assert_int_eq(gate_add(&gb, a, k, 2, added, err, sizeof(err)), 0);
    ck_assert(filter_check(next->f, "p1", 2) && filter_check(next->f, "p2", 2));
    ck_assert(filter_check(a->v->f, "p1", 2));
    ck_assert_int_eq(gate_mutate(&gb, a, JOURNAL_OP_ALLOW, k, 1, added, err, sizeof(err)), 0);
    ck_assert(added[0]); /* the served version's answer */
    /* the pending version took the exception too: allowing again changes nothing there */
    bool changed = true;
    char why[128];
    ck_assert_int_eq(amend_apply(next, JOURNAL_OP_ALLOW, k, 1, &changed, why, sizeof(why)), 0);
    ck_assert(!changed);

    /* pending == the served version: applied once (an ALLOW answers new once). */
    atomic_store(&a->st->pending, a->v);
    struct filter_key k3 = key("p3");
    ck_assert_int_eq(gate_mutate(&gb, a, JOURNAL_OP_ALLOW, &k3, 1, added, err, sizeof(err)), 0);
    ck_assert(added[0]);
    atomic_store(&a->st->pending, NULL);
    ck_assert(gate_commit(&gb));
    fversion_free(next);
    rig_close(&r);
}
END_TEST

static const char *const conf_counting = "listen 127.0.0.1:1\nhttp_listen off\n"
                                         "filter c {\n capacity 1000\n layout counting\n"
                                         " fsync always\n}\n";

/* A REMOVE of an item a counting filter does not hold (as often as the
 * request removes it) refuses the whole request, naming the item, before
 * anything is journaled; one it holds is removed. */
START_TEST(test_counting_refusal)
{
    struct rig r;
    rig_open(&r, conf_counting);
    const struct fentry *c = rig_entry(&r, "c");
    struct gate_batch gb = {0};
    char err[512];
    struct filter_key held = key("held"), other = key("other");
    ck_assert_int_eq(gate_add(&gb, c, &held, 1, NULL, err, sizeof(err)), 0);
    ck_assert(gate_commit(&gb));
    ck_assert_uint_eq(journal_of(&r, "c").n, 1);

    struct filter_key two[2] = {held, other};
    size_t refused = 99;
    bool changed[2];
    int rc = gate_mutate_ex(&gb, c, JOURNAL_OP_REMOVE, two, 2, changed, &refused, err, sizeof(err));
    ck_assert_int_eq(rc, GATE_REFUSED);
    ck_assert_uint_eq(refused, 1);
    ck_assert_msg(strstr(err, "'other' is not in counting filter c") != NULL, "%s", err);
    ck_assert(!gate_dirty(&gb));
    ck_assert_uint_eq(journal_of(&r, "c").n, 1); /* nothing journaled */
    ck_assert(rig_check1(&r, "c", "held"));      /* nothing removed */

    /* Twice the same held item in one request: it is held once. */
    struct filter_key twice[2] = {held, held};
    rc = gate_mutate_ex(&gb, c, JOURNAL_OP_REMOVE, twice, 2, changed, &refused, err, sizeof(err));
    ck_assert_int_eq(rc, GATE_REFUSED);
    ck_assert(rig_check1(&r, "c", "held"));

    ck_assert_int_eq(
        gate_mutate_ex(&gb, c, JOURNAL_OP_REMOVE, &held, 1, changed, &refused, err, sizeof(err)),
        0);
    ck_assert(changed[0]);
    ck_assert(gate_commit(&gb));
    ck_assert_uint_eq(journal_of(&r, "c").n, 2);
    ck_assert(!rig_check1(&r, "c", "held"));
    rig_close(&r);
}
END_TEST

/* journal off: the add reaches the version, and the batch has nothing to
 * commit. */
START_TEST(test_no_journal)
{
    struct rig r;
    rig_open(&r, conf_two);
    const struct fentry *f = rig_entry(&r, "off");
    ck_assert_ptr_null(atomic_load(&f->st->journal));
    struct gate_batch gb = {0};
    char err[512];
    struct filter_key k = key("mem");
    ck_assert_int_eq(gate_add(&gb, f, &k, 1, NULL, err, sizeof(err)), 0);
    ck_assert(!gate_dirty(&gb));
    ck_assert(rig_check1(&r, "off", "mem"));
    struct stat st;
    ck_assert_int_ne(stat(rig_path(&r, "off.journal"), &st), 0);
    rig_close(&r);
}
END_TEST

/* `full refuse`: an add whose new items would pass a fixed-size filter's
 * capacity is refused whole before the journal, naming the filter as full
 * (gate_is_full, which RESP maps to RedisBloom's words); items it holds pass.
 * `full accept` (the default) takes it. The setting is read through the
 * batch's registry: a batch without one applies the default. */
START_TEST(test_full_refuse)
{
    struct rig r;
    rig_open(&r, "listen 127.0.0.1:1\nhttp_listen off\n"
                 "filter s {\n capacity 3\n fpr 0.01\n full refuse\n}\n"
                 "filter l {\n capacity 3\n fpr 0.01\n}\n");
    const struct fentry *sf = rig_entry(&r, "s"), *lf = rig_entry(&r, "l");
    struct gate_batch gb = {.reg = r.reg};
    char err[512];
    struct filter_key three[3] = {key("a"), key("b"), key("c")}, d = key("d");
    struct filter_key old_and_new[2] = {key("a"), key("d")};
    bool added[3];
    ck_assert_int_eq(gate_add(&gb, sf, three, 3, added, err, sizeof(err)), 0);
    ck_assert(added[0] && added[1] && added[2]);
    ck_assert_int_eq(gate_add(&gb, sf, &d, 1, added, err, sizeof(err)), -1);
    ck_assert_msg(gate_is_full(err) && strstr(err, "filter s is full: it holds 3 items of its "
                                                   "capacity 3"),
                  "%s", err);
    ck_assert_int_eq(gate_add(&gb, sf, old_and_new, 2, added, err, sizeof(err)), -1);
    ck_assert(gate_commit(&gb));
    ck_assert_uint_eq(journal_of(&r, "s").n, 3); /* a, b, c; the refused adds: none */
    ck_assert(!rig_check1(&r, "s", "d"));
    ck_assert_int_eq(gate_add(&gb, sf, three, 2, added, err, sizeof(err)), 0); /* held: pass */
    ck_assert(!added[0] && !added[1]);
    /* full accept: the add past capacity is taken. The setting is the
     * version's, so a batch with no registry refuses as well. */
    ck_assert_int_eq(gate_add(&gb, lf, three, 3, added, err, sizeof(err)), 0);
    ck_assert_int_eq(gate_add(&gb, lf, &d, 1, added, err, sizeof(err)), 0);
    struct gate_batch bare = {0};
    ck_assert_int_eq(gate_add(&bare, sf, &d, 1, added, err, sizeof(err)), -1);
    ck_assert(gate_commit(&gb) && gate_commit(&bare));
    ck_assert(!gate_is_full("filter s: add refused: max_memory") &&
              !gate_is_full("journal write failed") && gate_is_full("filter x is full: y"));
    rig_close(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate");
    TCase *tc = tcase_create("gate");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_batch_and_commit);
    tcase_add_test(tc, test_batch_overflow);
    tcase_add_test(tc, test_pending_version);
    tcase_add_test(tc, test_counting_refusal);
    tcase_add_test(tc, test_no_journal);
    tcase_add_test(tc, test_full_refuse);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
