/* words/delta: a list's run-time changes scanned beside it. The reference
 * is the list rebuilt with the changes in it (the engine check_naive holds
 * to the naive matcher): random lists, random ADD, REMOVE, ALLOW and UNALLOW,
 * random texts, and both must find the same words at the same offsets, as
 * must the delta folded into a list (words_delta_fold).
 * Then the rules one by one: normalisation of an added word as the list's,
 * REMOVE of a listed word, ALLOW covering a listed word, the limit, the
 * counts, the retired views. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words/delta.h"
#include "words/words.h"

/* Letters that normalise to one symbol each (the delta's exceptions cover
 * in bytes, the list's in symbols: the same where a segment is one symbol). */
static const char *const g_letters[] = {
    "a", "b", "c", "A", "\xc3\xa9" /* é */, "\xe6\x88\x90" /* 成 */, "\xe4\xba\xba" /* 人 */};
static const char *const g_other[] = {".", " ", "  ", "\xe2\x80\x8b", "-", "\xff", "1"};
#define NL (sizeof g_letters / sizeof g_letters[0])
#define NO (sizeof g_other / sizeof g_other[0])
/* Plain ASCII texts take the pre-check that rules the added words out
 * (delta_pre.c): words joined over skipped characters, single letters, runs
 * past a 64-byte block, and now and then a byte that sends the text to the
 * scan (`+`, a symbol: skipped by default, kept when the skip set has no S). */
static const char *const g_ascii[] = {"a",  "b", "c", "A", "B",  "ab", "abc", "cab", "ba",
                                      " ",  " ", " ", ".", ",.", "-",  "1",   "\t",  "  ",
                                      "bc", "C", "a", "b", "c",  " ",  " ",   "+"};
#define NA (sizeof g_ascii / sizeof g_ascii[0])

/* The list's skip set, per run: the default (the pre-check's 64-byte way),
 * no `space` (no single letters joined), no S (symbols kept: the byte-wise
 * way). */
static const char *g_skip;

static uint64_t g_rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng % n);
}

static struct words_matcher *compile(const char *list)
{
    struct words_opts o;
    words_opts_default(&o);
    o.zh = false; /* no OpenCC needed: the pairs are the list's either way */
    if (g_skip)
        o.skip = g_skip;
    char err[256];
    struct words_builder *b = words_builder_new(&o, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq(words_builder_add(b, list, strlen(list), err, sizeof err), 0);
    struct words_matcher *m = words_builder_compile(b, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    words_builder_free(b);
    return m;
}

/* A key: one to three lowercase-only letters (so that two keys differ iff
 * their normalised forms do), sometimes a phrase of two Latin words of two
 * letters or more (a space between single letters, or Chinese ones, is
 * dropped: such a key would equal another). */
static void rnd_key(char *k, size_t cap)
{
    static const char *const lower[] = {"a", "b", "c", "\xc3\xa9", "\xe6\x88\x90", "\xe4\xba\xba"};
    k[0] = '\0';
    if (rnd(6) == 0) {
        size_t n1 = 2 + rnd(2);
        for (size_t i = 0; i < n1 + 3; i++)
            strncat(k, i == n1 ? " " : lower[rnd(3)], cap - strlen(k) - 1);
        return;
    }
    size_t n = 1 + rnd(3);
    for (size_t i = 0; i < n; i++)
        strncat(k, lower[rnd(6)], cap - strlen(k) - 1);
}

/* The model: what the list with the changes in it holds, key by key. */
#define MK 64
enum { M_NONE, M_WORD, M_EXC };
struct mentry {
    char key[32];
    int base_kind, base_ends; /* as listed: M_WORD with ends (1 start *, 2 end *) or M_EXC */
    bool base_removed;
    bool base_off;              /* a listed exception UNALLOW turned off */
    int delta_kind, delta_ends; /* added at run time */
};
static struct mentry g_m[MK];
static size_t g_nm;

static struct mentry *mfind(const char *key)
{
    for (size_t i = 0; i < g_nm; i++)
        if (strcmp(g_m[i].key, key) == 0)
            return &g_m[i];
    ck_assert_uint_lt(g_nm, MK);
    struct mentry *e = &g_m[g_nm++];
    memset(e, 0, sizeof *e);
    snprintf(e->key, sizeof e->key, "%s", key);
    return e;
}

static void line_of(char *out, size_t cap, const char *key, int ends)
{
    snprintf(out, cap, "%s%.31s%s", ends & 1 ? "*" : "", key, ends & 2 ? "*" : "");
}

/* A key's `*` ends as they count: no boundary is checked next to a Chinese
 * character, so a `*` there changes nothing (`*ab人` is `*ab人*`). */
static int eff_ends(const char *key, int ends)
{
    size_t n = strlen(key);
    if ((unsigned char)key[0] >= 0xe0)
        ends &= ~1;
    if (n >= 3 && (unsigned char)key[n - 3] >= 0xe0)
        ends &= ~2;
    return ends;
}

/* The rules of docs/words.md, "Run-time changes", stated over the model. */
static void model_apply(enum words_delta_op op, const char *key, int ends)
{
    struct mentry *e = mfind(key);
    bool exc = (e->base_kind == M_EXC && !e->base_off) || e->delta_kind == M_EXC;
    switch (op) {
    case WORDS_DELTA_ADD:
        if (exc)
            break;
        if (e->base_kind == M_WORD && eff_ends(key, e->base_ends) == eff_ends(key, ends)) {
            e->base_removed = false;
            e->delta_kind = M_NONE;
        } else {
            if (e->base_kind == M_WORD)
                e->base_removed = true;
            e->delta_kind = M_WORD;
            e->delta_ends = ends;
        }
        break;
    case WORDS_DELTA_REMOVE:
        if (e->base_kind == M_WORD)
            e->base_removed = true;
        if (e->delta_kind == M_WORD)
            e->delta_kind = M_NONE;
        break;
    case WORDS_DELTA_ALLOW:
        if (e->base_kind == M_EXC && e->base_off) {
            e->base_off = false; /* the listed one back: it wins over an added word */
            e->delta_kind = M_NONE;
        } else if (!exc) {
            if (e->base_kind == M_WORD)
                e->base_removed = true; /* hidden for good, as the list's rule */
            e->delta_kind = M_EXC;
        }
        break;
    case WORDS_DELTA_UNALLOW:
        if (e->delta_kind == M_EXC)
            e->delta_kind = M_NONE;
        else if (e->base_kind == M_EXC)
            e->base_off = true;
        break;
    }
}

/* The list the model holds, as a file would list it. */
static void model_list(char *out, size_t cap)
{
    out[0] = '\0';
    char line[64];
    for (size_t i = 0; i < g_nm; i++) {
        const struct mentry *e = &g_m[i];
        if (e->base_kind == M_WORD && !e->base_removed) {
            line_of(line, sizeof line, e->key, e->base_ends);
            strncat(strncat(out, line, cap - strlen(out) - 1), "\n", cap - strlen(out) - 1);
        }
        if ((e->base_kind == M_EXC && !e->base_off) || e->delta_kind == M_EXC) {
            snprintf(line, sizeof line, "@@%.31s\n", e->key);
            strncat(out, line, cap - strlen(out) - 1);
        }
        if (e->delta_kind == M_WORD) {
            line_of(line, sizeof line, e->key, e->delta_ends);
            strncat(strncat(out, line, cap - strlen(out) - 1), "\n", cap - strlen(out) - 1);
        }
    }
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

#define NMAX 2048

/* The matches of a scan as sorted "start-end:word" lines. */
static void render(const struct words_matcher *m, const struct words_view *v,
                   const struct words_match *mm, size_t n, char *out, size_t cap)
{
    static char *s[NMAX];
    for (size_t i = 0; i < n; i++) {
        size_t wl;
        const char *w = words_view_word(m, v, mm[i].word, &wl);
        s[i] = malloc(96);
        snprintf(s[i], 96, "%zu-%zu:%.*s", mm[i].start, mm[i].end, (int)wl, w);
    }
    qsort(s, n, sizeof s[0], str_cmp);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strncat(strncat(out, s[i], cap - strlen(out) - 1), "|", cap - strlen(out) - 1);
        free(s[i]);
    }
}

static void compare(const struct words_matcher *base, struct words_delta *d, const char *list,
                    const char *ops, struct words_scratch *sc, const struct words_matcher *fm,
                    struct words_delta *fd)
{
    struct words_matcher *ref = compile(list);
    /* And the delta folded into a list of its own (build --journal's). */
    char err[256];
    struct words_matcher *fold = words_delta_fold(d, NULL, err, sizeof err);
    ck_assert_msg(fold != NULL, "%s", err);
    static struct words_match buf[3 * NMAX], mm[NMAX];
    static char want[65536], got[65536];
    for (int t = 0; t < 20; t++) {
        char text[2048] = "";
        /* Random pieces; or the model's keys among ASCII ones, so that
         * exceptions often cover words (the added ones are scanned only in
         * windows around the matches of a plain text). */
        unsigned kind = rnd(3);
        bool ascii = kind > 0;
        size_t pieces = kind == 1 && rnd(2) ? rnd(400) : rnd(60);
        for (size_t k = 0; k < pieces; k++) {
            const char *p = kind == 2 && g_nm && rnd(3) == 0 ? g_m[rnd((uint32_t)g_nm)].key
                            : ascii                          ? g_ascii[rnd(NA - (rnd(8) != 0))]
                            : rnd(3)                         ? g_letters[rnd(NL)]
                                                             : g_other[rnd(NO)];
            strncat(text, p, sizeof text - strlen(text) - 1);
        }
        size_t len = strlen(text), n1, n2;
        bool c1, c2;
        ck_assert_int_eq(words_scan(ref, sc, text, len, mm, NMAX, &n1, &c1), 0);
        const struct words_view *v = words_delta_view(d);
        ck_assert_int_eq(words_view_scan(base, v, sc, text, len, buf, NMAX, NMAX, &n2, &c2), 0);
        ck_assert(!c1 && !c2);
        render(ref, NULL, mm, n1, want, sizeof want);
        render(base, v, buf, n2, got, sizeof got);
        ck_assert_msg(strcmp(want, got) == 0,
                      "list rebuilt:\n%s\nops: %s\ntext: [%s]\nrebuilt: %s\ndelta:   %s", list, ops,
                      text, want, got);
        for (size_t i = 1; i < n2; i++) /* sorted by start, then end */
            ck_assert(buf[i - 1].start < buf[i].start ||
                      (buf[i - 1].start == buf[i].start && buf[i - 1].end <= buf[i].end));
        ck_assert_int_eq(words_scan(fold, sc, text, len, mm, NMAX, &n1, &c1), 0);
        render(fold, NULL, mm, n1, got, sizeof got);
        ck_assert_msg(strcmp(want, got) == 0,
                      "list rebuilt:\n%s\nops: %s\ntext: [%s]\nrebuilt: %s\nfolded:  %s", list, ops,
                      text, want, got);
        if (!fm)
            continue;
        /* The daemon's fold: a list folded part way, the later changes in
         * a delta over it (store/wordsfold.h), finds the same. */
        v = words_delta_view(fd);
        ck_assert_int_eq(words_view_scan(fm, v, sc, text, len, buf, NMAX, NMAX, &n2, &c2), 0);
        render(fm, v, buf, n2, got, sizeof got);
        ck_assert_msg(strcmp(want, got) == 0,
                      "list rebuilt:\n%s\nops: %s\ntext: [%s]\nrebuilt: %s\nfolded part way: %s",
                      list, ops, text, want, got);
    }
    words_matcher_free(fold);
    words_matcher_free(ref);
}

/* One random list and a run of random changes, compared after each batch. */
static void one_run(struct words_scratch *sc)
{
    g_nm = 0;
    char list[8192] = "", key[32], line[64];
    size_t nb = 1 + rnd(12);
    for (size_t i = 0; i < nb; i++) {
        rnd_key(key, sizeof key);
        struct mentry *e = mfind(key);
        if (e->base_kind != M_NONE)
            continue;
        if (rnd(4) == 0) {
            e->base_kind = M_EXC;
            snprintf(line, sizeof line, "@@%.31s\n", key);
        } else {
            e->base_kind = M_WORD;
            e->base_ends = (int)rnd(4);
            line_of(line, sizeof line - 1, key, e->base_ends);
            strcat(line, "\n");
        }
        strncat(list, line, sizeof list - strlen(list) - 1);
    }
    struct words_matcher *base = compile(list);
    char err[256];
    struct words_delta *d = words_delta_new(base, 1000, err, sizeof err);
    ck_assert_msg(d != NULL, "%s", err);
    static char ops[16384], mlist[16384];
    snprintf(ops, sizeof ops, "base [%s]; ", list);
    struct words_matcher *fm = NULL; /* d folded after batch `at`, later changes in fd */
    struct words_delta *fd = NULL;
    int at = (int)rnd(5);
    for (int batch = 0; batch < 6; batch++) {
        size_t nops = 1 + rnd(5);
        for (size_t k = 0; k < nops; k++) {
            /* Often a key the list or the delta holds. */
            if (g_nm && rnd(2))
                snprintf(key, sizeof key, "%s", g_m[rnd((uint32_t)g_nm)].key);
            else
                rnd_key(key, sizeof key);
            enum words_delta_op op = (enum words_delta_op)rnd(4);
            int ends = (int)rnd(4);
            if (op == WORDS_DELTA_ADD)
                line_of(line, sizeof line, key, ends);
            else
                snprintf(line, sizeof line, "%.31s", key);
            /* An item as a client may send it: upper case reads as lower
             * (not in an ADD: the word added is what a match reports). */
            if (op != WORDS_DELTA_ADD && line[0] == 'a' && rnd(2))
                line[0] = 'A';
            model_apply(op, key, ends);
            char why[160];
            int rc = words_delta_apply(d, op, line, strlen(line), why, sizeof why);
            ck_assert_int_ge(rc, 0);
            static const char *const names[] = {"ADD", "REMOVE", "ALLOW", "UNALLOW"};
            snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s %s; ", names[op], line);
            if (fd) /* the same answer (NEW or EXISTS...) after the fold as without it */
                ck_assert_msg(words_delta_apply(fd, op, line, strlen(line), why, sizeof why) == rc,
                              "ops: %s: answered %d unfolded", ops, rc);
        }
        ck_assert_int_eq(words_delta_publish(d, err, sizeof err), 0);
        if (fd)
            ck_assert_int_eq(words_delta_publish(fd, err, sizeof err), 0);
        model_list(mlist, sizeof mlist);
        compare(base, d, mlist, ops, sc, fm, fd);
        if (batch == at) {
            ck_assert_msg((fm = words_delta_fold(d, NULL, err, sizeof err)) != NULL, "%s", err);
            ck_assert_ptr_nonnull(fd = words_delta_new(fm, 1000, err, sizeof err));
            snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "(folded) ");
        }
    }
    words_delta_free(fd);
    words_matcher_free(fm);
    words_view_free_list(words_delta_take_retired(d));
    words_delta_free(d);
    words_matcher_free(base);
}

START_TEST(test_against_rebuilt)
{
    static const char *const skips[] = {NULL, "P S Cf", "P Cf space"};
    struct words_scratch *sc = words_scratch_new();
    for (int i = 0; i < 450; i++) {
        g_skip = skips[i % 3];
        one_run(sc);
    }
    g_skip = NULL;
    words_scratch_free(sc);
}
END_TEST

/* The words a scan of text finds, "w@start-end w@..." */
static void found(const struct words_matcher *m, const struct words_delta *d, const char *text,
                  char *out, size_t cap)
{
    static struct words_match buf[3 * 64];
    size_t n;
    bool capped;
    struct words_scratch *sc = words_scratch_new();
    const struct words_view *v = words_delta_view(d);
    ck_assert_int_eq(words_view_scan(m, v, sc, text, strlen(text), buf, 64, 64, &n, &capped), 0);
    words_scratch_free(sc);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t wl;
        const char *w = words_view_word(m, v, buf[i].word, &wl);
        snprintf(out + strlen(out), cap - strlen(out), "%s%.*s@%zu-%zu", i ? " " : "", (int)wl, w,
                 buf[i].start, buf[i].end);
    }
}

static int change(struct words_delta *d, enum words_delta_op op, const char *item)
{
    char why[160], err[160];
    int rc = words_delta_apply(d, op, item, strlen(item), why, sizeof why);
    ck_assert_int_eq(words_delta_publish(d, err, sizeof err), 0);
    return rc;
}

START_TEST(test_rules)
{
    struct words_matcher *m = compile("ass\n成人\n@@成人牙刷\nfoo bar\n");
    char err[256], got[512], why[160];
    struct words_delta *d = words_delta_new(m, 4, err, sizeof err);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_null(words_delta_view(d)); /* nothing changed: the list alone */
    /* An added word is normalised as the list was: full width, case. */
    ck_assert_int_eq(change(d, WORDS_DELTA_ADD, "\xef\xbc\xa2\xef\xbd\x81\xef\xbd\x84"), 1);
    found(m, d, "so BAD, ass", got, sizeof got);
    ck_assert_str_eq(got, "\xef\xbc\xa2\xef\xbd\x81\xef\xbd\x84@3-6 ass@8-11");
    ck_assert_int_eq(change(d, WORDS_DELTA_ADD, "bad"), 0); /* the same word */
    /* Whole word by default; `*` ends as in a list. */
    found(m, d, "badge", got, sizeof got);
    ck_assert_str_eq(got, "");
    ck_assert_int_eq(change(d, WORDS_DELTA_ADD, "*hole"), 1);
    found(m, d, "a.s.s.hole", got, sizeof got);
    ck_assert_str_eq(got, "ass@0-5 hole@6-10");
    /* REMOVE of a listed word, and an ADD brings it back. */
    ck_assert_int_eq(change(d, WORDS_DELTA_REMOVE, "ASS"), 1);
    ck_assert_int_eq(change(d, WORDS_DELTA_REMOVE, "ass"), 0);
    found(m, d, "ass", got, sizeof got);
    ck_assert_str_eq(got, "");
    ck_assert_int_eq(change(d, WORDS_DELTA_ADD, "ass"), 1);
    found(m, d, "ass", got, sizeof got);
    ck_assert_str_eq(got, "ass@0-3");
    /* The list's exception covers an added word; an added one covers the
     * list's words and the added. */
    ck_assert_int_eq(change(d, WORDS_DELTA_ADD, "牙刷"), 1);
    found(m, d, "买成人牙刷", got, sizeof got);
    ck_assert_str_eq(got, "");
    found(m, d, "牙刷", got, sizeof got);
    ck_assert_str_eq(got, "牙刷@0-6");
    ck_assert_int_eq(change(d, WORDS_DELTA_ALLOW, "a foo bar b"), 1);
    found(m, d, "a foo bar b, foo bar", got, sizeof got);
    ck_assert_str_eq(got, "foo bar@13-20");
    ck_assert_int_eq(change(d, WORDS_DELTA_ALLOW, "bad ass"), 1);
    found(m, d, "bad ass bad", got, sizeof got);
    ck_assert_str_eq(got, "\xef\xbc\xa2\xef\xbd\x81\xef\xbd\x84@8-11");
    /* The limit: 4 entries, and 5 are held (the limit is the gate's, words_delta_admit). */
    ck_assert_int_eq(words_delta_admit(d, WORDS_DELTA_ADD, 1, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "words_delta_max"));
    ck_assert_int_eq(words_delta_admit(d, WORDS_DELTA_REMOVE, 100, why, sizeof why), 0);
    struct words_delta_counts c;
    words_delta_counts(d, &c);
    ck_assert_uint_eq(c.words, 3);
    ck_assert_uint_eq(c.exceptions, 2);
    ck_assert_uint_eq(c.removed, 0);
    ck_assert_uint_eq(c.max, 4);
    ck_assert_uint_gt(c.memory, 0);
    /* UNALLOW drops an added exception, and turns a listed one off until an
     * ALLOW brings it back: the words inside it are found again, the listed
     * ones once (成人 found by the list elsewhere in the text, and by the
     * delta). */
    ck_assert_int_eq(change(d, WORDS_DELTA_UNALLOW, "bad ass"), 1);
    found(m, d, "bad ass", got, sizeof got);
    ck_assert_str_eq(got, "\xef\xbc\xa2\xef\xbd\x81\xef\xbd\x84@0-3 ass@4-7");
    found(m, d, "成人牙刷 成人", got, sizeof got);
    ck_assert_str_eq(got, "成人@13-19");
    ck_assert_int_eq(change(d, WORDS_DELTA_UNALLOW, "成人牙刷"), 1);
    ck_assert_int_eq(change(d, WORDS_DELTA_UNALLOW, "成人牙刷"), 0);
    found(m, d, "成人牙刷 成人", got, sizeof got);
    ck_assert_str_eq(got, "成人@0-6 牙刷@6-12 成人@13-19"); /* 牙刷 added above */
    words_delta_counts(d, &c);
    ck_assert_uint_eq(c.removed, 1);
    ck_assert_int_eq(change(d, WORDS_DELTA_ALLOW, "成人牙刷"), 1);
    ck_assert_int_eq(change(d, WORDS_DELTA_ALLOW, "成人牙刷"), 0);
    found(m, d, "成人牙刷 成人", got, sizeof got);
    ck_assert_str_eq(got, "成人@13-19");
    /* Bad items: refused with a reason, nothing changed. */
    ck_assert_int_eq(words_delta_check(d, WORDS_DELTA_ADD, "...", 3, why, sizeof why), -1);
    ck_assert_int_eq(words_delta_check(d, WORDS_DELTA_ADD, "a\xff", 2, why, sizeof why), -1);
    ck_assert_int_eq(words_delta_check(d, WORDS_DELTA_ADD, "@@x", 3, why, sizeof why), -1);
    ck_assert_int_eq(words_delta_check(d, WORDS_DELTA_ADD, "# c", 3, why, sizeof why), -1);
    ck_assert_int_eq(words_delta_check(d, WORDS_DELTA_ADD, "a\nb", 3, why, sizeof why), -1);
    ck_assert_int_eq(words_delta_check(d, WORDS_DELTA_ALLOW, "*x", 2, why, sizeof why), -1);
    ck_assert_int_eq(words_delta_check(d, WORDS_DELTA_ADD, "\\#tag", 5, why, sizeof why), 0);
    /* Every change replaced the view: the old ones wait for their grace. */
    struct words_view *old = words_delta_take_retired(d);
    ck_assert_ptr_nonnull(old);
    words_view_free_list(old);
    ck_assert_ptr_null(words_delta_take_retired(d));
    words_delta_free(d);
    words_matcher_free(m);
}
END_TEST

/* One step of test_fold_commutes: an op and its item, or a scan (op -1). */
struct fstep {
    int op;
    const char *item;
};

/* The daemon folds a delta into its list (store/wordsfold.h) and serves
 * the changes after it from a new delta over the folded list, where a
 * restart replays them all onto the file: every later change must answer,
 * and every scan find, the same either way. For each case: `before` onto a
 * delta over the list, then folded; `after` onto both. */
START_TEST(test_fold_commutes)
{
    static const struct {
        const char *list;
        struct fstep before[4], after[6];
    } cases[] = {
        /* An exception allowed over a listed word's text, then dropped. */
        {"foo\nbar\n",
         {{WORDS_DELTA_ALLOW, "foo"}, {0, NULL}},
         {{-1, "foo bar"},
          {WORDS_DELTA_UNALLOW, "foo"},
          {-1, "foo bar"},
          {WORDS_DELTA_REMOVE, "foo"},
          {WORDS_DELTA_ADD, "foo"},
          {-1, "foo bar"}}},
        {"foo\n",
         {{WORDS_DELTA_ALLOW, "foo"}, {0, NULL}},
         {{WORDS_DELTA_REMOVE, "foo"}, {-1, "foo"}, {WORDS_DELTA_UNALLOW, "foo"}, {-1, "foo"}}},
        /* A listed exception turned off, then on again. */
        {"ass\n@@kick ass\n",
         {{WORDS_DELTA_UNALLOW, "kick ass"}, {0, NULL}},
         {{-1, "kick ass"},
          {WORDS_DELTA_ALLOW, "kick ass"},
          {-1, "kick ass"},
          {WORDS_DELTA_UNALLOW, "kick ass"},
          {-1, "kick ass"}}},
        /* A listed word removed, a `*`-ended one replacing a listed word. */
        {"foo\nbar\n",
         {{WORDS_DELTA_REMOVE, "foo"}, {WORDS_DELTA_ADD, "bar*"}, {0, NULL}},
         {{-1, "foo barn"},
          {WORDS_DELTA_ADD, "foo"},
          {WORDS_DELTA_ADD, "bar"},
          {-1, "foo barn bar"},
          {WORDS_DELTA_REMOVE, "bar"},
          {-1, "bar"}}},
    };
    char err[256], a[512], b[512];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct words_matcher *m = compile(cases[k].list);
        struct words_delta *d = words_delta_new(m, 100, err, sizeof err);
        ck_assert_ptr_nonnull(d);
        for (const struct fstep *s = cases[k].before; s->item; s++)
            change(d, (enum words_delta_op)s->op, s->item);
        struct words_matcher *fm = words_delta_fold(d, NULL, err, sizeof err);
        ck_assert_msg(fm != NULL, "%s", err);
        struct words_delta *fd = words_delta_new(fm, 100, err, sizeof err);
        ck_assert_ptr_nonnull(fd);
        for (size_t i = 0; i < 6 && cases[k].after[i].item; i++) {
            const struct fstep *s = &cases[k].after[i];
            if (s->op < 0) {
                found(m, d, s->item, a, sizeof a);
                found(fm, fd, s->item, b, sizeof b);
                ck_assert_msg(strcmp(a, b) == 0,
                              "case %zu step %zu: scan of '%s': '%s' unfolded, "
                              "'%s' folded",
                              k, i, s->item, a, b);
                continue;
            }
            int ra = change(d, (enum words_delta_op)s->op, s->item);
            int rb = change(fd, (enum words_delta_op)s->op, s->item);
            ck_assert_msg(ra == rb, "case %zu step %zu (op %d '%s'): %d unfolded, %d folded", k, i,
                          s->op, s->item, ra, rb);
        }
        words_delta_free(fd);
        words_matcher_free(fm);
        words_delta_free(d);
        words_matcher_free(m);
    }
}
END_TEST

/* The list's words a client removes may fill what the list's scan
 * returns: the view asks the list for all that fit, then caps. */
START_TEST(test_cap_after_removal)
{
    struct words_matcher *m = compile("a\nb\n");
    char err[256];
    struct words_delta *d = words_delta_new(m, 10, err, sizeof err);
    ck_assert_int_eq(change(d, WORDS_DELTA_REMOVE, "a"), 1);
    static struct words_match buf[3 * 8];
    size_t n;
    bool capped;
    struct words_scratch *sc = words_scratch_new();
    const char *text = "a a a a a b b";
    ck_assert_int_eq(
        words_view_scan(m, words_delta_view(d), sc, text, strlen(text), buf, 8, 1, &n, &capped), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(buf[0].start, 10);
    ck_assert(capped);
    words_scratch_free(sc);
    words_delta_free(d);
    words_matcher_free(m);
}
END_TEST

/* Scans on several threads while one thread changes the delta: each scan
 * reads one published view whole (the listed word always found, an added
 * one with its own text), never a view being built. Retired views are
 * freed at the end (the daemon frees them after a grace period). */
struct race {
    const struct words_matcher *m;
    struct words_delta *d;
    atomic_bool stop;
    atomic_size_t scans;
};

static void *race_reader(void *arg)
{
    struct race *r = arg;
    struct words_scratch *sc = words_scratch_new();
    static _Thread_local struct words_match buf[3 * 16];
    const char *text = "ass w1 w2 w3 w4 w5 w6 w7";
    while (!atomic_load(&r->stop)) {
        const struct words_view *v = words_delta_view(r->d);
        size_t n;
        bool capped;
        ck_assert_int_eq(words_view_scan(r->m, v, sc, text, strlen(text), buf, 16, 16, &n, &capped),
                         0);
        ck_assert_uint_ge(n, 1);
        ck_assert_uint_eq(buf[0].start, 0);
        for (size_t i = 0; i < n; i++) {
            size_t wl;
            const char *w = words_view_word(r->m, v, buf[i].word, &wl);
            ck_assert_uint_eq(wl, buf[i].end - buf[i].start);
            ck_assert(memcmp(w, text + buf[i].start, wl) == 0);
        }
        atomic_fetch_add(&r->scans, 1);
    }
    words_scratch_free(sc);
    return NULL;
}

START_TEST(test_scans_while_changed)
{
    struct words_matcher *m = compile("ass\n");
    char err[256], why[160], w[8];
    struct race r = {m, words_delta_new(m, 100, err, sizeof err), false, 0};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, race_reader, &r), 0);
    for (int k = 0; k < 300; k++) {
        snprintf(w, sizeof w, "w%d", 1 + k % 7);
        enum words_delta_op op = k % 3 == 2 ? WORDS_DELTA_REMOVE : WORDS_DELTA_ADD;
        ck_assert_int_ge(words_delta_apply(r.d, op, w, strlen(w), why, sizeof why), 0);
        ck_assert_int_eq(words_delta_publish(r.d, err, sizeof err), 0);
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    ck_assert_uint_gt(atomic_load(&r.scans), 0);
    words_view_free_list(words_delta_take_retired(r.d));
    words_delta_free(r.d);
    words_matcher_free(m);
}
END_TEST

/* The pre-check's edges, each a text in which an added word occurs only
 * where a piece by piece decision finds it: single letters whose space is
 * dropped (`c a.b` reads `cab`, a token of two pieces after a single letter;
 * `c a b`; `c a.bb`, its last piece longer), a word joined over a skipped character (`ca.b`), a
 * long word
 * (`cabab` as a prefix of a `*`-ended word), at every offset across the
 * first 64-byte block's end (what one block tells the next). Compared with
 * the list rebuilt with the words in it. */
START_TEST(test_precheck_edges)
{
    /* The last: a word of 70 letters, a whole block of letters from its
     * first byte. */
    static const char *const tails[] = {
        "c a.b zz",
        "c a b zz",
        "zz c a.b",
        "ca.b zz",
        "zz cababab,",
        "zz c.a b",
        "c a.bb zz",
        "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc cab zz"};
    struct words_matcher *base = compile("zz\n");
    struct words_matcher *ref = compile("zz\ncab\ncabab*\ncabb\n");
    char err[256], why[160];
    struct words_delta *d = words_delta_new(base, 16, err, sizeof err);
    ck_assert_int_eq(words_delta_apply(d, WORDS_DELTA_ADD, "cab", 3, why, sizeof why), 1);
    ck_assert_int_eq(words_delta_apply(d, WORDS_DELTA_ADD, "cabab*", 6, why, sizeof why), 1);
    ck_assert_int_eq(words_delta_apply(d, WORDS_DELTA_ADD, "cabb", 4, why, sizeof why), 1);
    ck_assert_int_eq(words_delta_publish(d, err, sizeof err), 0);
    const struct words_view *v = words_delta_view(d);
    struct words_scratch *sc = words_scratch_new();
    static struct words_match buf[3 * 64], mm[64];
    static char want[4096], got[4096];
    for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++)
        for (size_t k = 0; k < 140; k++) {
            char text[320] = "";
            for (size_t j = 0; j + 4 <= k; j += 4)
                strcat(text, "ddd ");
            while (strlen(text) < k)
                strcat(text, " ");
            strcat(text, tails[t]);
            size_t len = strlen(text), n1, n2;
            bool c1, c2;
            ck_assert_int_eq(words_scan(ref, sc, text, len, mm, 64, &n1, &c1), 0);
            ck_assert_int_eq(words_view_scan(base, v, sc, text, len, buf, 64, 64, &n2, &c2), 0);
            ck_assert_uint_gt(n1, 0);
            render(ref, NULL, mm, n1, want, sizeof want);
            render(base, v, buf, n2, got, sizeof got);
            ck_assert_msg(strcmp(want, got) == 0, "text [%s]: rebuilt %s, delta %s", text, want,
                          got);
        }
    words_scratch_free(sc);
    words_delta_free(d);
    words_matcher_free(ref);
    words_matcher_free(base);
}
END_TEST

static Suite *words_delta_suite(void)
{
    Suite *s = suite_create("words_delta");
    TCase *tc = tcase_create("delta");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_rules);
    tcase_add_test(tc, test_cap_after_removal);
    tcase_add_test(tc, test_scans_while_changed);
    tcase_add_test(tc, test_against_rebuilt);
    tcase_add_test(tc, test_precheck_edges);
    tcase_add_test(tc, test_fold_commutes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(words_delta_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
