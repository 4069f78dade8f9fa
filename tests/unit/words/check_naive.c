/* src/words/ against a naive matcher written here: random lists (words,
 * phrases, exceptions, * ends, duplicates) and random texts over a small
 * alphabet that exercises every normalisation path (full-width, case,
 * combining marks, traditional and simplified, skipped and zero-width
 * characters, spaces, invalid bytes). The naive matcher tries every listed
 * entry at every position of the normalised text and applies the rules of
 * docs/words.md literally; both must give the same matches. The
 * normalisation itself is shared (check_words.c tests it by example). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words/words_int.h"

static const char *const g_letters[] = {"a",
                                        "b",
                                        "c",
                                        "A",
                                        "\xef\xbc\xa2" /* Ｂ */,
                                        "\xc3\xa9" /* é */,
                                        "e\xcc\x81",
                                        "e",
                                        "\xe6\x88\x90" /* 成 */,
                                        "\xe4\xba\xba" /* 人 */,
                                        "\xe8\xbc\xaa" /* 輪 */,
                                        "\xe8\xbd\xae" /* 轮 */};
static const char *const g_other[] = {".", " ", "  ", "\xe2\x80\x8b", "-", "\xff", "1", "\n"};

/* The ASCII round: plain ASCII letters, digits, spaces and punctuation, so
 * that the scan's ASCII skip (scan.c) runs, with now and then a piece from
 * the tables above to make it hand over to the exact scan and back. */
static const char *const g_aletters[] = {"a", "b", "c", "A", "B", "d", "1"};
static const char *const g_aother[] = {" ", " ", " ", ".", ",", "'", "  ", ". ", "\t", "-"};
static bool g_ascii;

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng % n);
}

#define NL (sizeof g_letters / sizeof g_letters[0])
#define NO (sizeof g_other / sizeof g_other[0])
#define NAL (sizeof g_aletters / sizeof g_aletters[0])
#define NAO (sizeof g_aother / sizeof g_aother[0])

/* A word of the ASCII round's texts that no entry holds (entries are made
 * of g_aletters): 1 to 20 letters of e..z, sometimes capitalised, then a
 * separator. Most words of real text are such words, and only they let the
 * skip (ws_skip64's 64-byte blocks, its words of 16 letters or more) pass
 * text by; without them nearly every word could start an entry and went to
 * the exact scan. */
static void rnd_filler(char *buf, size_t cap)
{
    static const char fl[] = "efghijklmnopqrstuvwxyz";
    char w[24];
    size_t n = 1 + rnd(rnd(4) == 0 ? 20 : 8);
    for (size_t i = 0; i < n; i++)
        w[i] = fl[rnd(sizeof fl - 1)];
    if (rnd(6) == 0)
        w[0] = (char)(w[0] - 'a' + 'A');
    w[n] = '\0';
    strncat(buf, w, cap - strlen(buf) - 1);
    strncat(buf, g_aother[rnd(NAO)], cap - strlen(buf) - 1);
}

static void rnd_piece(char *buf, size_t cap, bool letter_only, bool text)
{
    const char *p;
    if (g_ascii && text && rnd(3) == 0) {
        rnd_filler(buf, cap);
        return;
    }
    if (g_ascii && (!text || rnd(30) != 0)) {
        p = letter_only || rnd(5) < 3 ? g_aletters[rnd(NAL)] : g_aother[rnd(NAO)];
        strncat(buf, p, cap - strlen(buf) - 1);
        return;
    }
    if (letter_only || rnd(3) != 0)
        p = g_letters[rnd(NL)];
    else
        do
            p = g_other[rnd(NO)];
        while (!text && (p[0] == '\xff' || p[0] == '\n'));
    strncat(buf, p, cap - strlen(buf) - 1);
}

/* An entry as the naive matcher sees it. */
struct nv_ent {
    char body[64];
    bool exc, star_s, star_e;
    uint32_t cps[64];
    uint8_t cls[64];
    size_t n;
    bool kept;
};

#define NV_MAX 4096

struct nv_text {
    uint32_t cp[NV_MAX];
    uint8_t cls[NV_MAX], soft[NV_MAX];
    size_t os[NV_MAX], oe[NV_MAX], n;
};

static void nv_norm(const struct wn_norm *nm, const char *t, size_t len, struct nv_text *o)
{
    struct wn_iter it;
    struct wn_sym s;
    wn_iter_init(&it, nm, t, len);
    o->n = 0;
    while (wn_next(&it, &s)) {
        ck_assert_uint_lt(o->n, NV_MAX);
        o->cp[o->n] = s.cp, o->cls[o->n] = s.cls, o->soft[o->n] = s.soft;
        o->os[o->n] = s.os, o->oe[o->n] = s.oe;
        o->n++;
    }
}

static bool nv_at(const struct nv_text *t, size_t s, const struct nv_ent *e)
{
    if (s + e->n > t->n)
        return false;
    for (size_t i = 0; i < e->n; i++)
        if (t->cp[s + i] != e->cps[i])
            return false;
    return true;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void one_list(void)
{
    struct nv_ent ents[24];
    size_t ne = 3 + rnd(20);
    char list[4096] = "";
    for (size_t i = 0; i < ne; i++) {
        struct nv_ent *e = &ents[i];
        memset(e, 0, sizeof *e);
        size_t pieces = 1 + rnd(4);
        for (size_t k = 0; k < pieces; k++)
            rnd_piece(e->body, sizeof e->body, k == 0 || k + 1 == pieces, false);
        e->exc = rnd(4) == 0;
        /* A `*` start turns the ASCII skip off: rare in the ASCII round. */
        e->star_s = !e->exc && rnd(g_ascii ? 60 : 5) == 0;
        e->star_e = !e->exc && rnd(g_ascii ? 8 : 5) == 0;
        size_t at = strlen(list);
        snprintf(list + at, sizeof list - at, "%s%s%.63s%s\n", e->exc ? "@@" : "",
                 e->star_s ? "*" : "", e->body, e->star_e ? "*" : "");
    }
    struct words_opts o;
    words_opts_default(&o);
    o.zh = rnd(8) == 0;
    /* The ASCII round also runs with the skip off (whole words off) and
     * with punctuation kept as a boundary symbol (bytes the skip leaves). */
    if (g_ascii && rnd(8) == 0)
        o.whole_word = false;
    if (g_ascii && rnd(6) == 0)
        o.skip = "S Cf space";
    char err[256];
    struct words_builder *b = words_builder_new(&o, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq(words_builder_add(b, list, strlen(list), err, sizeof err), 0);
    struct words_matcher *m = words_builder_compile(b, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    words_builder_free(b);
    /* The entries normalised, and the one kept of each equal group:
     * an exception first, else the first listed. */
    for (size_t i = 0; i < ne; i++) {
        static struct nv_text t;
        nv_norm(&m->norm, ents[i].body, strlen(ents[i].body), &t);
        ents[i].n = t.n;
        memcpy(ents[i].cps, t.cp, t.n * sizeof t.cp[0]);
        memcpy(ents[i].cls, t.cls, t.n);
    }
    for (size_t i = 0; i < ne; i++) {
        ents[i].kept = ents[i].n > 0;
        for (size_t j = 0; j < ne && ents[i].kept; j++) {
            if (j == i || ents[j].n != ents[i].n ||
                memcmp(ents[j].cps, ents[i].cps, ents[i].n * sizeof ents[i].cps[0]) != 0)
                continue;
            if ((ents[j].exc && !ents[i].exc) || (ents[j].exc == ents[i].exc && j < i))
                ents[i].kept = false;
        }
    }
    struct words_scratch *sc = words_scratch_new();
    const bool bmi2 = m->fast.bmi2;
    for (int round = 0; round < 30; round++) {
        /* Odd rounds take the skip's copy for any x86-64, even ones the
         * BMI2 and AVX2 copy where the CPU has them. */
        m->fast.bmi2 = bmi2 && round % 2 == 0;
        /* One text in five long enough to cross normalisation batches. */
        static char text[8192];
        text[0] = '\0';
        size_t pieces = round % 5 == 0              ? rnd(1200)
                        : g_ascii && round % 3 == 0 ? 100 + rnd(500)
                        : round % 7 == 1            ? rnd(2)
                                                    : rnd(40);
        for (size_t k = 0; k < pieces; k++)
            rnd_piece(text, sizeof text, false, true);
        size_t len = strlen(text);
        static struct nv_text t;
        nv_norm(&m->norm, text, len, &t);
        static char *want[NV_MAX], *got[NV_MAX];
        size_t nw = 0, ng = 0;
        for (size_t e = 0; e < t.n; e++)
            for (size_t i = 0; i < ne; i++) {
                const struct nv_ent *x = &ents[i];
                if (!x->kept || x->exc || x->n > e + 1 || !nv_at(&t, e + 1 - x->n, x))
                    continue;
                size_t s = e + 1 - x->n;
                if (o.whole_word && !x->star_s && x->cls[0] == WN_WORD && s > 0 && !t.soft[s] &&
                    t.cls[s - 1] == WN_WORD)
                    continue;
                if (o.whole_word && !x->star_e && x->cls[x->n - 1] == WN_WORD && e + 1 < t.n &&
                    !t.soft[e + 1] && t.cls[e + 1] == WN_WORD)
                    continue;
                bool covered = false;
                for (size_t j = 0; j < ne && !covered; j++) {
                    const struct nv_ent *y = &ents[j];
                    if (!y->kept || !y->exc)
                        continue;
                    for (size_t ys = 0; ys <= s && !covered; ys++)
                        covered = ys + y->n >= e + 1 && nv_at(&t, ys, y);
                }
                if (covered)
                    continue;
                ck_assert_uint_lt(nw, NV_MAX);
                want[nw] = malloc(128);
                snprintf(want[nw++], 128, "%zu-%zu:%.63s", t.os[s], t.oe[e], x->body);
            }
        static struct words_match mm[NV_MAX];
        size_t n;
        bool cap;
        char *copy = malloc(len ? len : 1);
        memcpy(copy, text, len);
        ck_assert_int_eq(words_scan(m, sc, copy, len, mm, NV_MAX, &n, &cap), 0);
        free(copy);
        ck_assert(!cap);
        for (size_t i = 0; i < n; i++) {
            size_t wl;
            const char *w = words_word(m, mm[i].word, &wl);
            got[ng] = malloc(128);
            snprintf(got[ng++], 128, "%zu-%zu:%.*s", mm[i].start, mm[i].end, (int)wl, w);
        }
        qsort(want, nw, sizeof want[0], str_cmp);
        qsort(got, ng, sizeof got[0], str_cmp);
        static char wj[65536], gj[65536];
        wj[0] = gj[0] = '\0';
        for (size_t i = 0; i < nw; i++)
            strncat(strncat(wj, want[i], sizeof wj - strlen(wj) - 1), "|",
                    sizeof wj - strlen(wj) - 1);
        for (size_t i = 0; i < ng; i++)
            strncat(strncat(gj, got[i], sizeof gj - strlen(gj) - 1), "|",
                    sizeof gj - strlen(gj) - 1);
        if (strcmp(wj, gj) != 0) /* the whole case, beyond what Check's message holds */
            fprintf(stderr, "list:\n%s\ntext: [%s]\nnaive:  %s\nengine: %s\n", list, text, wj, gj);
        ck_assert_msg(strcmp(wj, gj) == 0, "naive %.400s\nengine %.400s", wj, gj);
        for (size_t i = 0; i < nw; i++)
            free(want[i]);
        for (size_t i = 0; i < ng; i++)
            free(got[i]);
    }
    words_scratch_free(sc);
    words_matcher_free(m);
}

START_TEST(test_against_naive)
{
    g_ascii = false;
    for (int i = 0; i < 150; i++)
        one_list();
}
END_TEST

/* Mostly plain ASCII: the skip's edges (entering and leaving non-ASCII,
 * skipped characters inside words, case, single letters and dropped spaces,
 * words at the text's ends, texts of 0 and 1 bytes) against the naive
 * matcher. */
START_TEST(test_ascii_against_naive)
{
    g_ascii = true;
    for (int i = 0; i < 300; i++)
        one_list();
    g_ascii = false;
}
END_TEST

/* The skip's 64-byte blocks at every alignment: a probe (a listed word
 * joined over skipped bytes, a lone letter, a long run of skipped bytes, a
 * non-ASCII byte, a word longer than two blocks) placed at each offset of
 * the first three blocks after filler words, scanned with the skip (both
 * copies) and as one exact run: the same matches. A word's end at a block's
 * last byte and its skipped bytes carried into the next block are where a
 * mask shifted the wrong way would lose a match. */
START_TEST(test_block_edges)
{
    static char list[320] = "xab\ncd ef\nq\nlong\n@@zz xab\n";
    static const char *const probes[] = {"xa.b ",
                                         "xa. b ",
                                         "x a b ",
                                         "xab ",
                                         "xa.b.",
                                         "cd ef ",
                                         "cd.ef ",
                                         "q r ",
                                         "a q b ",
                                         "xa'b ",
                                         "xa\xc3\xa9"
                                         "b ",
                                         "zz xab ",
                                         "long ",
                                         "lon.g ",
                                         "mn'q r ",
                                         "q'mn ",
                                         "a.q.b ",
                                         "mn-xa-b-cd ",
                                         "mno'pq-rs ",
                                         "e.q. x",
                                         "cd'ef gh "};
    const size_t np = sizeof probes / sizeof probes[0];
    /* And an entry of 100 letters, a word longer than the two blocks the
     * skip sees at once, and one of 35 (a key's mask made for lengths past
     * 8, 32 and 64: the probes below). */
    static char vword[102], uword[37];
    memset(vword, 'v', 100);
    vword[100] = ' ';
    memset(uword, 'u', 35);
    uword[35] = ' ';
    size_t ll = strlen(list);
    memcpy(list + ll, vword, 100);
    memcpy(list + ll + 100, "\n", 2);
    ll = strlen(list);
    memcpy(list + ll, uword, 35);
    memcpy(list + ll + 35, "\n", 2);
    char err[256];
    struct words_opts o;
    words_opts_default(&o);
    struct words_builder *b = words_builder_new(&o, err, sizeof err);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(words_builder_add(b, list, strlen(list), err, sizeof err), 0);
    struct words_matcher *m = words_builder_compile(b, err, sizeof err);
    ck_assert_ptr_nonnull(m);
    words_builder_free(b);
    ck_assert(m->fast.on && m->fast.simd);
    struct words_scratch *sc = words_scratch_new();
    const bool bmi2 = m->fast.bmi2;
    static char text[640];
    /* More: a run of skipped bytes longer than a block between two letters
     * of "xab", a word longer than two blocks, and the long entries. */
    static char runk[100], longw[200];
    memset(runk, '\'', sizeof runk - 1);
    memcpy(runk, "xa", 2);
    memcpy(runk + sizeof runk - 3, "b ", 2);
    memset(longw, 'k', sizeof longw - 1);
    longw[sizeof longw - 2] = ' ';
    size_t hits = 0;
    const char *more[] = {runk, longw, vword, uword};
    for (size_t pi = 0; pi < np + 4; pi++) {
        const char *probe = pi < np ? probes[pi] : more[pi - np];
        for (size_t at = 0; at < 200; at++) {
            size_t n;
            for (n = 0; n < at; n++) /* filler: six-letter words, spaces */
                text[n] = n % 7 == 6 ? ' ' : (char)('m' + n % 5);
            if (n)
                text[n - 1] = ' ';
            size_t pl = strlen(probe);
            memcpy(text + n, probe, pl);
            n += pl;
            for (size_t k = 0; k < 90; k++)
                text[n++] = k % 6 == 5 ? ' ' : 'w';
            for (int copy = 0; copy < 2; copy++) {
                m->fast.bmi2 = bmi2 && copy == 0;
                struct words_match a[64], c[64];
                size_t na, nc;
                bool capa, capc;
                ck_assert_int_eq(words_scan_how(m, sc, text, n, a, 64, &na, &capa, true), 0);
                ck_assert_int_eq(words_scan_how(m, sc, text, n, c, 64, &nc, &capc, false), 0);
                bool same = na == nc;
                for (size_t i = 0; same && i < na; i++)
                    same =
                        a[i].start == c[i].start && a[i].end == c[i].end && a[i].word == c[i].word;
                ck_assert_msg(same,
                              "probe %zu at %zu (copy %d): %zu matches with the skip, %zu without",
                              pi, at, copy, na, nc);
                hits += nc;
            }
        }
    }
    ck_assert_uint_gt(hits, 2000); /* most probes hold a match */
    words_scratch_free(sc);
    words_matcher_free(m);
}
END_TEST

/* An exact run started at the skip's stop (cand) with a rewind point before
 * it sees nothing of the text before cand: its automaton at the root there
 * does not say that no exception is under way, so it must not stop (and
 * hand a later word to a run that may not look back past the stop) before
 * an exception begun before cand has ended. Each case: an exception that
 * starts before the skip's stop and covers a word found after the first
 * run could stop; the skip (both copies) must give what one exact run
 * gives: nothing. */
START_TEST(test_exception_before_run)
{
    static const char *const cases[][2] = {
        {"a\n@@b ya\n", "eb y a"},    /* a lone letter's space dropped */
        {"@@d 1ab\nab\n", "ed 1'ab"}, /* a group joined over a skipped byte */
        {"c\n@@dbac abc\n", "dbac ab-c"},
        {"bb\n@@bb c bb\n", "ebb c  bb"},
        {"a1*\n@@a ababc 1\n1\n", "ea ababc 1"},
        {"@@d ac\nc\n", "ed a c"},
    };
    struct words_scratch *sc = words_scratch_new();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256];
        struct words_opts o;
        words_opts_default(&o);
        struct words_builder *b = words_builder_new(&o, err, sizeof err);
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(words_builder_add(b, cases[i][0], strlen(cases[i][0]), err, sizeof err),
                         0);
        struct words_matcher *m = words_builder_compile(b, err, sizeof err);
        ck_assert_ptr_nonnull(m);
        words_builder_free(b);
        ck_assert(m->fast.on);
        const bool bmi2 = m->fast.bmi2;
        const char *t = cases[i][1];
        struct words_match a[8], c[8];
        size_t na, nc;
        bool capa, capc;
        ck_assert_int_eq(words_scan_how(m, sc, t, strlen(t), c, 8, &nc, &capc, false), 0);
        ck_assert_uint_eq(nc, 0); /* the exception covers the word */
        for (int copy = 0; copy < 2; copy++) {
            m->fast.bmi2 = bmi2 && copy == 0;
            ck_assert_int_eq(words_scan_how(m, sc, t, strlen(t), a, 8, &na, &capa, true), 0);
            ck_assert_msg(na == nc, "case %zu (copy %d): %zu matches with the skip, %zu without", i,
                          copy, na, nc);
        }
        words_matcher_free(m);
    }
    words_scratch_free(sc);
}
END_TEST

static Suite *words_naive_suite(void)
{
    Suite *s = suite_create("words_naive");
    TCase *tc = tcase_create("naive");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_against_naive);
    tcase_add_test(tc, test_ascii_against_naive);
    tcase_add_test(tc, test_block_edges);
    tcase_add_test(tc, test_exception_before_run);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(words_naive_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
