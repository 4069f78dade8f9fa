/* bloomgate build --exact (tool/build_exact.c) and what the loader makes of
 * it (store/xtable.c, store/amend.c): the table holds the lists' keys and the
 * journals' adds, not what a journal removed; the loaded version confirms
 * from the table and its delta, which ADD and REMOVE change; a table that is
 * not the one the filter names, or none, is refused by name. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/conf.h"
#include "exact/delta.h"
#include "exact/exact.h"
#include "lib/testutil.h"
#include "store/amend.h"
#include "store/journal.h"
#include "store/loader.h"
#include "store/registry.h"
#include "tool/build.h"

static char pbuf[8][4096];
static unsigned pnext;

static const char *tmp_path(const char *name)
{
    return tu_path(pbuf[pnext++ % 8], sizeof(pbuf[0]), name);
}

/* A journal at path: ADD e, REMOVE b, ADD f, REMOVE f. */
static void write_journal(const char *path)
{
    char err[512];
    struct journal *j = journal_open(path, CONF_FSYNC_ALWAYS, NULL, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    struct {
        enum journal_op op;
        const char *item;
    } recs[] = {{JOURNAL_OP_ADD, "e"},
                {JOURNAL_OP_REMOVE, "b"},
                {JOURNAL_OP_ADD, "f"},
                {JOURNAL_OP_REMOVE, "f"}};
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
        struct filter_key k = {recs[i].item, strlen(recs[i].item)};
        ck_assert_msg(journal_append_op(j, recs[i].op, JOURNAL_NO_TIME, &k, 1, err, sizeof(err)) ==
                          0,
                      "%s", err);
    }
    ck_assert_msg(journal_commit(j, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(journal_close(j, err, sizeof(err)), 0);
}

/* Build out from a, b, c, d and the journal, with a table of kind. */
static void build(const char *out, int kind, bool journal)
{
    const char *in = tmp_path("list.txt");
    tu_write_file(in, "a\nb\nc\nd\n", 8);
    const char *inputs[] = {in};
    const char *journals[] = {tmp_path("f.journal")};
    if (journal)
        write_journal(journals[0]);
    struct build_opts o = {.inputs = inputs,
                           .n_inputs = 1,
                           .journals = journals,
                           .n_journals = journal ? 1 : 0,
                           .output = out,
                           .layout = FILTER_BLOCKED,
                           .keys = FILTER_KEYS_EXACT,
                           .format = LISTS_PLAIN,
                           .capacity = 100,
                           .fpr = 1e-4,
                           .threads = 2,
                           .seed = 99,
                           .exact = kind};
    struct build_result r;
    char err[1024] = "";
    ck_assert_msg(build_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(r.exact_count, 4); /* a b c d, or a c d e */
}

static struct fversion *load(const char *file, char *err, size_t errlen)
{
    char text[8192];
    snprintf(text, sizeof(text), "filter f {\n    file %s\n}\n", file);
    struct conf *c = conf_parse(text, strlen(text), NULL, err, errlen);
    ck_assert_msg(c != NULL, "%s", err);
    err[0] = '\0';
    struct fversion *v = loader_load_filter(&c->filters[0], 1, err, errlen);
    conf_free(c);
    return v;
}

static bool listed(const struct fversion *v, const char *item)
{
    return exact_delta_contains(v->xd, item, strlen(item));
}

static void journal_and_delta(int kind)
{
    const char *out = tmp_path("f.bgf");
    build(out, kind, true);
    char err[2048];
    struct fversion *v = load(out, err, sizeof(err));
    ck_assert_msg(v != NULL, "%s", err);
    ck_assert_ptr_nonnull(v->xt);
    ck_assert_ptr_nonnull(v->xd);
    struct exact_info xi;
    exact_table_info(v->xt, &xi);
    ck_assert_int_eq(xi.kind, kind);
    ck_assert_uint_eq(xi.count, 4); /* a c d e */
    ck_assert(listed(v, "a") && listed(v, "c") && listed(v, "d") && listed(v, "e"));
    ck_assert(!listed(v, "b") && !listed(v, "f") && !listed(v, "zz"));
    /* The mutations a request or a replay makes reach the delta, and the
     * delta's answer says what changed. */
    struct filter_key k[2] = {{"zz", 2}, {"a", 1}};
    bool changed[2] = {false, false};
    ck_assert_int_eq(amend_apply(v, JOURNAL_OP_ADD, k, 2, changed, err, sizeof(err)), 0);
    ck_assert(changed[0] && !changed[1]);
    ck_assert(listed(v, "zz"));
    ck_assert_int_eq(amend_apply(v, JOURNAL_OP_REMOVE, &k[1], 1, changed, err, sizeof(err)), 0);
    ck_assert(changed[0]);
    ck_assert(!listed(v, "a"));
    ck_assert_int_eq(amend_apply(v, JOURNAL_OP_REMOVE, &k[1], 1, changed, err, sizeof(err)), 0);
    ck_assert(!changed[0]); /* removed already */
    uint64_t added, removed;
    exact_delta_counts(v->xd, &added, &removed);
    ck_assert_uint_eq(added, 1);
    ck_assert_uint_eq(removed, 1);
    fversion_free(v);
}

START_TEST(test_fp_table_journal_delta)
{
    journal_and_delta(EXACT_KIND_FP);
}
END_TEST

START_TEST(test_keys_table_journal_delta)
{
    journal_and_delta(EXACT_KIND_KEYS);
}
END_TEST

START_TEST(test_wrong_or_missing_table_refused)
{
    const char *out = tmp_path("g.bgf"), *other = tmp_path("h.bgf");
    char err[2048], a[4096], b[4096];
    build(out, EXACT_KIND_FP, false);
    build(other, EXACT_KIND_FP, false); /* the same keys, another seed */
    snprintf(a, sizeof(a), "%s.exact", other);
    snprintf(b, sizeof(b), "%s.exact", out);
    ck_assert_int_eq(rename(a, b), 0);
    ck_assert_ptr_null(load(out, err, sizeof(err)));
    ck_assert_msg(strstr(err, "is not the one this filter was built with"), "%s", err);
    ck_assert_int_eq(unlink(b), 0);
    ck_assert_ptr_null(load(out, err, sizeof(err)));
    ck_assert_msg(strstr(err, "exact table") && strstr(err, ".exact"), "%s", err);
    /* --check-config says the same without loading. */
    char text[8192];
    snprintf(text, sizeof(text), "filter f {\n    file %s\n}\n", out);
    struct conf *c = conf_parse(text, strlen(text), NULL, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_int_eq(loader_check_filter(&c->filters[0], err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "exact table"), "%s", err);
    conf_free(c);
    /* A filter without a table loads as before, with none. */
    const char *plain = tmp_path("p.bgf");
    const char *in = tmp_path("p.txt");
    tu_write_file(in, "a\n", 2);
    const char *inputs[] = {in};
    struct build_opts o = {.inputs = inputs,
                           .n_inputs = 1,
                           .output = plain,
                           .layout = FILTER_BLOCKED,
                           .fpr = 1e-4,
                           .seed = 5};
    struct build_result r;
    ck_assert_msg(build_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    struct fversion *v = load(plain, err, sizeof(err));
    ck_assert_msg(v != NULL, "%s", err);
    ck_assert_ptr_null(v->xt);
    ck_assert_ptr_null(v->xd);
    fversion_free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("build_exact");
    TCase *tc = tcase_create("build_exact");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fp_table_journal_delta);
    tcase_add_test(tc, test_keys_table_journal_delta);
    tcase_add_test(tc, test_wrong_or_missing_table_refused);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
