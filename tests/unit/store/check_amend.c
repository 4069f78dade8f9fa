/* check_amend: the mutations of a filter version (src/store/amend.c), the
 * one function a request, a journal replay and `bloomgate build --journal`
 * share: what each op changes and what `changed` says of it (ADD, ALLOW,
 * UNALLOW, REMOVE on a Bloom filter; REMOVE in a counting filter's
 * counters), a replay of records giving what the live ops gave, and the
 * `allow` file (trimming, comments, Adblock exceptions on a host filter,
 * Adblock comments and header on host and url filters, the line an error
 * names, a missing file, an over-long line). */
#include "config.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bloom/filter.h"
#include "store/allow.h"
#include "store/amend.h"
#include "store/journal.h"

static struct fversion *version(enum filter_layout layout, enum filter_keys keys)
{
    struct filter_plan plan;
    char err[256];
    ck_assert_int_eq(filter_plan_make(layout, 1000, 0.0001, 1, &plan, err, sizeof(err)), 0);
    struct filter *f = filter_create(&plan, 7, err, sizeof(err));
    ck_assert_msg(f != NULL, "%s", err);
    f->keys = keys;
    struct fversion *v = fversion_new(f, NULL);
    ck_assert_ptr_nonnull(v);
    return v;
}

/* Apply op to one item; what `changed` said. */
static bool op1(struct fversion *v, enum journal_op op, const char *item)
{
    struct filter_key k = {item, strlen(item)};
    bool changed = !true;
    char err[128];
    ck_assert_int_eq(amend_apply(v, op, &k, 1, &changed, err, sizeof(err)), 0);
    return changed;
}

/* What a check of the version answers, as the command table reads it: the
 * bits, unless the item is removed or excepted. */
static bool answers(const struct fversion *v, const char *item)
{
    struct hash128 h = filter_hash(v->f, item, strlen(item));
    return filter_check_hash(v->f, h) && !allow_get(v->allow, h);
}

START_TEST(test_ops)
{
    struct fversion *v = version(FILTER_BLOCKED, FILTER_KEYS_EXACT);
    ck_assert(op1(v, JOURNAL_OP_ADD, "a"));
    ck_assert(!op1(v, JOURNAL_OP_ADD, "a"));
    ck_assert(answers(v, "a"));

    /* REMOVE: changed only for an item present and not removed already. */
    ck_assert(op1(v, JOURNAL_OP_REMOVE, "a"));
    ck_assert(!answers(v, "a"));
    ck_assert(!op1(v, JOURNAL_OP_REMOVE, "a"));
    ck_assert(!op1(v, JOURNAL_OP_REMOVE, "never-added"));
    ck_assert_uint_eq(allow_count(v->allow, ALLOW_REMOVED), 2); /* both recorded */
    /* an ADD undoes the removal, and says so though no bit was new */
    ck_assert(op1(v, JOURNAL_OP_ADD, "a"));
    ck_assert(answers(v, "a"));
    ck_assert(!op1(v, JOURNAL_OP_ADD, "a"));

    /* ALLOW and UNALLOW: changed when the exception came or went. */
    ck_assert(op1(v, JOURNAL_OP_ALLOW, "a"));
    ck_assert(!op1(v, JOURNAL_OP_ALLOW, "a"));
    ck_assert(!answers(v, "a"));
    ck_assert_uint_eq(allow_get(v->allow, filter_hash(v->f, "a", 1)), ALLOW_EXCEPT);
    ck_assert(op1(v, JOURNAL_OP_UNALLOW, "a"));
    ck_assert(!op1(v, JOURNAL_OP_UNALLOW, "a"));
    ck_assert(answers(v, "a"));
    /* an exception for an item the filter does not hold is kept all the same */
    ck_assert(op1(v, JOURNAL_OP_ALLOW, "later"));
    ck_assert(op1(v, JOURNAL_OP_ADD, "later"));
    ck_assert(!answers(v, "later"));

    /* A batch: changed per key; changed may be NULL. */
    struct filter_key ks[3] = {{"b", 1}, {"a", 1}, {"c", 1}};
    bool ch[3];
    char err[128];
    ck_assert_int_eq(amend_apply(v, JOURNAL_OP_ADD, ks, 3, ch, err, sizeof(err)), 0);
    ck_assert(ch[0] && !ch[1] && ch[2]);
    ck_assert_int_eq(amend_apply(v, JOURNAL_OP_REMOVE, ks, 3, NULL, err, sizeof(err)), 0);
    ck_assert(!answers(v, "b") && !answers(v, "a") && !answers(v, "c"));
    ck_assert_int_eq(amend_admit(v, JOURNAL_OP_ADD, 1000000, err, sizeof(err)), 0);
    fversion_free(v);
}
END_TEST

/* A counting filter removes in its counters: the item is gone from the
 * bits, nothing goes to the allow set, and one it does not hold is left
 * alone. */
START_TEST(test_counting_remove)
{
    struct fversion *v = version(FILTER_COUNTING, FILTER_KEYS_EXACT);
    ck_assert(op1(v, JOURNAL_OP_ADD, "x"));
    ck_assert(!op1(v, JOURNAL_OP_ADD, "x")); /* counted twice, no new bit */
    ck_assert(op1(v, JOURNAL_OP_REMOVE, "x"));
    ck_assert(filter_check(v->f, "x", 1)); /* once more to go */
    ck_assert(op1(v, JOURNAL_OP_REMOVE, "x"));
    ck_assert(!filter_check(v->f, "x", 1));
    ck_assert(!op1(v, JOURNAL_OP_REMOVE, "x"));
    ck_assert(!op1(v, JOURNAL_OP_REMOVE, "never"));
    ck_assert_uint_eq(allow_count(v->allow, ALLOW_REMOVED), 0);
    fversion_free(v);
}
END_TEST

/* A replay of the records gives the version the live ops gave. */
START_TEST(test_replay_is_the_ops)
{
    struct fversion *live = version(FILTER_BLOCKED, FILTER_KEYS_EXACT);
    struct fversion *replayed = version(FILTER_BLOCKED, FILTER_KEYS_EXACT);
    struct {
        enum journal_op op;
        const char *item;
    } recs[] = {{JOURNAL_OP_ADD, "p"},    {JOURNAL_OP_ADD, "q"}, {JOURNAL_OP_REMOVE, "p"},
                {JOURNAL_OP_ALLOW, "q"},  {JOURNAL_OP_ADD, "r"}, {JOURNAL_OP_UNALLOW, "q"},
                {JOURNAL_OP_REMOVE, "r"}, {JOURNAL_OP_ADD, "r"}, {JOURNAL_OP_ALLOW, "s"}};
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
        op1(live, recs[i].op, recs[i].item);
        ck_assert_int_eq(amend_replay_item(replayed, recs[i].op, JOURNAL_NO_TIME, recs[i].item,
                                           strlen(recs[i].item)),
                         0);
    }
    const char *probe[] = {"p", "q", "r", "s", "t"};
    const bool want[] = {false, true, true, false, false};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_msg(answers(live, probe[i]) == want[i], "live %s", probe[i]);
        ck_assert_msg(answers(replayed, probe[i]) == want[i], "replayed %s", probe[i]);
    }
    fversion_free(live);
    fversion_free(replayed);
}
END_TEST

static char dir[4096];

static const char *write_file(const char *name, const char *text)
{
    static char p[4200];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    return p;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/bloomgate-amend.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* An exact filter's allow file: each line's bytes, trailing white space
 * trimmed, comments and blank lines skipped, a last line without LF read;
 * the file's identity is remembered. */
START_TEST(test_allow_file_exact)
{
    struct fversion *v = version(FILTER_BLOCKED, FILTER_KEYS_EXACT);
    const char *text = "# a comment\nok-1 \t\n\n  lead\n#not\nlast";
    const char *p = write_file("ex.allow", text);
    char err[512];
    ck_assert_msg(amend_load_allow_file(v, p, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_eq(v->allow_file, p);
    ck_assert_int_eq(v->allow_size, (off_t)strlen(text));
    ck_assert_uint_eq(allow_count(v->allow, ALLOW_EXCEPT), 3);
    const char *in[] = {"ok-1", "  lead", "last"};
    for (size_t i = 0; i < 3; i++) {
        op1(v, JOURNAL_OP_ADD, in[i]);
        ck_assert_msg(!answers(v, in[i]), "%s", in[i]);
    }
    const char *out[] = {"ok-1 \t", "lead", "# a comment", "#not"};
    for (size_t i = 0; i < 4; i++) {
        op1(v, JOURNAL_OP_ADD, out[i]);
        ck_assert_msg(answers(v, out[i]), "%s", out[i]);
    }
    fversion_free(v);
}
END_TEST

/* A host filter's allow file: hosts, URLs' hosts, Adblock exceptions; a
 * line it cannot read fails the load with PATH:LINE. */
START_TEST(test_allow_file_hosts)
{
    struct fversion *v = version(FILTER_BLOCKED, FILTER_KEYS_HOST);
    const char *p = write_file("hosts.allow", "Fine.Test\n@@||rule.test^\n");
    char err[512];
    ck_assert_msg(amend_load_allow_file(v, p, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(allow_count(v->allow, ALLOW_EXCEPT), 2);
    ck_assert(allow_get(v->allow, filter_hash(v->f, "fine.test", 9)) & ALLOW_EXCEPT);
    ck_assert(allow_get(v->allow, filter_hash(v->f, "rule.test", 9)) & ALLOW_EXCEPT);
    fversion_free(v);

    v = version(FILTER_BLOCKED, FILTER_KEYS_HOST);
    p = write_file("bad.allow", "good.test\nhttp://x.test/a/path\n");
    ck_assert_int_eq(amend_load_allow_file(v, p, err, sizeof(err)), -1);
    char want[4400];
    snprintf(want, sizeof(want), "allow file %s:2: not a host key", p);
    ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
    fversion_free(v);
}
END_TEST

/* A host or url filter's allow file written as an Adblock list: its '!'
 * comments (indented or not, with or without a space) and its header are no
 * entries, '#' lines neither; only the exceptions count. A '!' line used to be
 * read as a key and excepted: "! comment" became an exception entry, and a
 * line "!x.test" unblocked a key of its own. */
START_TEST(test_allow_file_adblock_comments)
{
    static const enum filter_keys kinds[] = {FILTER_KEYS_HOST, FILTER_KEYS_URL};
    const char *p = write_file("adblock.allow", "[Adblock Plus 2.0]\n"
                                                "! Title: my allow list\n"
                                                "! comment\n"
                                                "!x.test\n"
                                                "  ! indented\n"
                                                "!\n"
                                                "# hash comment\n"
                                                "\t# indented hash\n"
                                                "@@||rule.test^\n"
                                                "@@! an Adblock comment after @@\n");
    const char *bare = write_file("bare.allow", "! comment\n!x.test\n@@||rule.test^\n");
    for (size_t i = 0; i < 2; i++) {
        for (int f = 0; f < 2; f++) {
            struct fversion *v = version(FILTER_BLOCKED, kinds[i]);
            char err[512];
            ck_assert_msg(amend_load_allow_file(v, f ? p : bare, err, sizeof(err)) == 0, "%s", err);
            ck_assert_uint_eq(allow_count(v->allow, ALLOW_EXCEPT), 1);
            fversion_free(v);
        }
    }
}
END_TEST

START_TEST(test_allow_file_errors)
{
    struct fversion *v = version(FILTER_BLOCKED, FILTER_KEYS_EXACT);
    char err[512], p[4200];
    snprintf(p, sizeof(p), "%s/missing.allow", dir);
    ck_assert_int_eq(amend_load_allow_file(v, p, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "missing.allow") && strstr(err, "No such file"), "%s", err);
    fversion_free(v);

    /* A line longer than an item may be, on line 2. */
    size_t n = JOURNAL_MAX_ITEM + 1;
    char *big = malloc(n + 8);
    ck_assert_ptr_nonnull(big);
    memcpy(big, "short\n", 6);
    memset(big + 6, 'x', n);
    big[6 + n] = '\0';
    const char *bp = write_file("big.allow", big);
    free(big);
    v = version(FILTER_BLOCKED, FILTER_KEYS_EXACT);
    ck_assert_int_eq(amend_load_allow_file(v, bp, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "big.allow:2: a line longer than") != NULL, "%s", err);
    fversion_free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("amend");
    TCase *tc = tcase_create("ops");
    tcase_add_test(tc, test_ops);
    tcase_add_test(tc, test_counting_remove);
    tcase_add_test(tc, test_replay_is_the_ops);
    suite_add_tcase(s, tc);
    TCase *tf = tcase_create("allow_file");
    tcase_add_checked_fixture(tf, setup, teardown);
    tcase_add_test(tf, test_allow_file_exact);
    tcase_add_test(tf, test_allow_file_hosts);
    tcase_add_test(tf, test_allow_file_adblock_comments);
    tcase_add_test(tf, test_allow_file_errors);
    suite_add_tcase(s, tf);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
