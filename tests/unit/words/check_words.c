/* Unit tests for src/words/: the examples (full-width, case,
 * f.u.c.k, 法 轮, 成人牙刷, Scunthorpe, class, traditional and simplified,
 * zero-width, combining marks), offsets in multi-byte text, masking, the
 * cap, the list syntax and its build summary, a serialise/load round trip
 * and loads of damaged blocks. Texts are copied to exact-length heap
 * buffers so ASan sees any read past their end. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words/words.h"

static struct words_matcher *g_m;
static struct words_scratch *g_s;
static struct words_summary g_sum;
static char g_res[4096];

static struct words_matcher *build_opts(const char *list, const struct words_opts *o)
{
    char err[256] = "";
    struct words_builder *b = words_builder_new(o, err, sizeof err);
    ck_assert_msg(b != NULL, "builder: %s", err);
    ck_assert_int_eq(words_builder_add(b, list, strlen(list), err, sizeof err), 0);
    struct words_matcher *m = words_builder_compile(b, err, sizeof err);
    ck_assert_msg(m != NULL, "compile: %s", err);
    g_sum = *words_builder_summary(b);
    words_builder_free(b);
    return m;
}

static void build(const char *list)
{
    struct words_opts o;
    words_opts_default(&o);
    words_matcher_free(g_m);
    g_m = build_opts(list, &o);
}

/* The matches as "word@start-end" joined by spaces; "" when none. */
static const char *scan_max(const char *text, size_t max, bool *capped)
{
    size_t len = strlen(text);
    char *t = malloc(len ? len : 1);
    memcpy(t, text, len);
    struct words_match mm[64];
    size_t n;
    bool cap;
    ck_assert_int_eq(words_scan(g_m, g_s, t, len, mm, max, &n, &cap), 0);
    if (capped)
        *capped = cap;
    g_res[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t wl;
        const char *w = words_word(g_m, mm[i].word, &wl);
        size_t at = strlen(g_res);
        snprintf(g_res + at, sizeof g_res - at, "%s%.*s@%zu-%zu", i ? " " : "", (int)wl, w,
                 mm[i].start, mm[i].end);
    }
    free(t);
    return g_res;
}

static const char *scan(const char *text)
{
    return scan_max(text, 64, NULL);
}

static void setup(void)
{
    g_s = words_scratch_new();
    ck_assert_ptr_nonnull(g_s);
}

static void teardown(void)
{
    words_matcher_free(g_m);
    g_m = NULL;
    words_scratch_free(g_s);
    g_s = NULL;
}

START_TEST(test_fullwidth_and_case)
{
    build("abc\n");
    ck_assert_str_eq(scan("ＡＢＣ"), "abc@0-9");
    ck_assert_str_eq(scan("say ABC now"), "abc@4-7");
    ck_assert_str_eq(scan("abcd"), "");
    build("ＡＢＣ\n");
    ck_assert_str_eq(scan("x abc"), "ＡＢＣ@2-5");
}
END_TEST

START_TEST(test_inserted_symbols)
{
    build("fuck\n");
    ck_assert_str_eq(scan("you f.u.c.k off"), "fuck@4-11");
    ck_assert_str_eq(scan("f u c k"), "fuck@0-7");
    ck_assert_str_eq(scan("fu*ck!"), "fuck@0-5");
    ck_assert_str_eq(scan("hello.fuck"), "fuck@6-10");
    /* Zero-width characters, invisible: no boundary either. */
    ck_assert_str_eq(scan("fu\xe2\x80\x8b"
                          "ck"),
                     "fuck@0-7");
    ck_assert_str_eq(scan("f\xef\xbb\xbfu\xe2\x81\xa0"
                          "c\xe2\x80\x8dk"),
                     "fuck@0-13");
    /* Spaces join single letters only. */
    ck_assert_str_eq(scan("fu ck"), "");
    ck_assert_str_eq(scan("fuckers"), "");
    build("ass\n");
    ck_assert_str_eq(scan("get a SS number"), "");
    ck_assert_str_eq(scan("a s s"), "ass@0-5");
    ck_assert_str_eq(scan("cla\xe2\x80\x8bss"), "");
}
END_TEST

START_TEST(test_cjk_spaces_and_variants)
{
    build("法轮\n");
    ck_assert_str_eq(scan("说法 轮功"), "法轮@3-10");
    ck_assert_str_eq(scan("法.轮"), "法轮@0-7");
    /* Traditional in the text, simplified listed, and the other way. */
    ck_assert_str_eq(scan("法輪功"), "法轮@0-6");
    build("法輪\n");
    ck_assert_str_eq(scan("法轮"), "法輪@0-6");
    /* zh off: the variants stay apart. */
    struct words_opts o;
    words_opts_default(&o);
    o.zh = false;
    words_matcher_free(g_m);
    g_m = build_opts("法轮\n", &o);
    ck_assert_str_eq(scan("法輪"), "");
    ck_assert_str_eq(scan("法轮"), "法轮@0-6");
}
END_TEST

START_TEST(test_exceptions)
{
    build("成人\n@@成人牙刷\n");
    ck_assert_str_eq(scan("成人牙刷"), "");
    ck_assert_str_eq(scan("成人电影"), "成人@0-6");
    ck_assert_str_eq(scan("买成人牙刷和成人电影"), "成人@18-24");
    /* An exception covers only what it spans. */
    build("成人电影\n@@成人牙刷\n成人\n");
    ck_assert_str_eq(scan("成人电影"), "成人@0-6 成人电影@0-12");
    build("*ass*\n@@class\n");
    ck_assert_str_eq(scan("class"), "");
    ck_assert_str_eq(scan("bass"), "ass@1-4");
    ck_assert_str_eq(scan("classic bass"), "ass@9-12");
}
END_TEST

START_TEST(test_whole_word)
{
    build("cunt\nass\n");
    ck_assert_str_eq(scan("Scunthorpe"), "");
    ck_assert_str_eq(scan("first class"), "");
    ck_assert_str_eq(scan("my ass."), "ass@3-6");
    ck_assert_str_eq(scan("ASS"), "ass@0-3");
    ck_assert_str_eq(scan("ass1"), "");
    ck_assert_str_eq(scan("你ass你"), "ass@3-6");
    /* Per word: * at an end lifts the check there. */
    build("ass*\n*hole\n");
    ck_assert_str_eq(scan("assess"), "ass@0-3");
    ck_assert_str_eq(scan("pass"), "");
    ck_assert_str_eq(scan("asshole"), "ass@0-3 hole@3-7");
    /* Off for the whole list. */
    struct words_opts o;
    words_opts_default(&o);
    o.whole_word = false;
    words_matcher_free(g_m);
    g_m = build_opts("ass\n", &o);
    ck_assert_str_eq(scan("class"), "ass@2-5");
}
END_TEST

START_TEST(test_marks_and_offsets)
{
    build("café\n");
    ck_assert_str_eq(scan("un cafe\xcc\x81 noir"), "café@3-9");
    ck_assert_str_eq(scan("CAFÉ"), "café@0-5");
    build("cafe\n");
    ck_assert_str_eq(scan("café"), "");
    /* A ligature maps to two letters: the match spans it whole. */
    build("fish\n");
    ck_assert_str_eq(scan("\xef\xac\x81sh!"), "fish@0-5");
    /* Invalid UTF-8 is a boundary, never a letter. */
    ck_assert_str_eq(scan("\xff"
                          "fish\xc3"),
                     "fish@1-5");
    ck_assert_str_eq(scan("fi\xffsh"), "");
}
END_TEST

START_TEST(test_phrases)
{
    build("blow job\n");
    ck_assert_str_eq(scan("a blow \t  job!"), "blow job@2-13");
    ck_assert_str_eq(scan("blowjob"), "");
    ck_assert_str_eq(scan("blow. job"), "blow job@0-9");
}
END_TEST

START_TEST(test_mask_and_cap)
{
    build("bad\n法轮\n");
    const char *t = "a BAD 法轮 x";
    size_t len = strlen(t);
    struct words_match mm[8];
    size_t n;
    bool cap;
    ck_assert_int_eq(words_scan(g_m, g_s, t, len, mm, 8, &n, &cap), 0);
    ck_assert_uint_eq(n, 2);
    char out[64];
    size_t ol = words_mask(t, len, mm, n, '*', false, out);
    ck_assert_str_eq((out[ol] = '\0', out), "a *** ** x");
    ol = words_mask(t, len, mm, n, '#', true, out);
    ck_assert_uint_eq(ol, len);
    ck_assert_str_eq((out[ol] = '\0', out), "a ### ###### x");
    ck_assert_str_eq(scan_max("bad bad bad", 2, &cap), "bad@0-3 bad@4-7");
    ck_assert(cap);
    ck_assert_str_eq(scan_max("bad bad", 2, &cap), "bad@0-3 bad@4-7");
    ck_assert(!cap);
    ck_assert_str_eq(scan_max("bad", 0, &cap), "");
    ck_assert(cap);
}
END_TEST

START_TEST(test_summary)
{
    build("# a comment\n\nabc\nABC\n  ａｂｃ  \nblow job\n@@abcd\n*x*\n"
          "bad\xff\n...\n@@*y\n"
          "\\#tag\n");
    ck_assert_uint_eq(g_sum.lines, 12);
    ck_assert_uint_eq(g_sum.words, 4); /* abc, blow job, x, tag */
    ck_assert_uint_eq(g_sum.phrases, 1);
    ck_assert_uint_eq(g_sum.exceptions, 1);
    ck_assert_uint_eq(g_sum.substrings, 1);
    ck_assert_uint_eq(g_sum.duplicates, 2);
    ck_assert_uint_eq(g_sum.rejects, 3);
    ck_assert_uint_eq(g_sum.nkept, 3);
    ck_assert_uint_eq(g_sum.first[0].line, 9);
    ck_assert_str_eq(g_sum.first[0].reason, "invalid UTF-8 at byte 3");
    ck_assert_uint_eq(g_sum.first[1].line, 10);
    ck_assert(strstr(g_sum.first[1].reason, "only skipped") != NULL);
    ck_assert_uint_eq(g_sum.first[2].line, 11);
    ck_assert(strstr(g_sum.first[2].reason, "exception") != NULL);
    ck_assert_uint_eq(words_count(g_m), 5);
    /* The first of equal entries is the one reported. */
    ck_assert_str_eq(scan("ABC"), "abc@0-3");
}
END_TEST

START_TEST(test_skip_set)
{
    struct words_opts o;
    words_opts_default(&o);
    o.skip = "none";
    words_matcher_free(g_m);
    g_m = build_opts("fuck\nf.u\n", &o);
    ck_assert_str_eq(scan("f.u.c.k"), "f.u@0-3");
    ck_assert_str_eq(scan("f u c k"), "");
    o.skip = "P -U+002E space";
    words_matcher_free(g_m);
    g_m = build_opts("fuck\n", &o);
    ck_assert_str_eq(scan("f-u-c-k"), "fuck@0-7");
    ck_assert_str_eq(scan("f.u.c.k"), "");
    ck_assert_str_eq(scan("f$u$c$k"), "");
    o.skip = "U+0024-U+0025";
    words_matcher_free(g_m);
    g_m = build_opts("fuck\n", &o);
    ck_assert_str_eq(scan("f$u%ck"), "fuck@0-6");
    char err[128];
    o.skip = "Q";
    ck_assert_ptr_null(words_builder_new(&o, err, sizeof err));
    ck_assert(strstr(err, "`Q`") != NULL);
}
END_TEST

START_TEST(test_round_trip)
{
    build("abc\n成人\n@@成人牙刷\n*ass*\n@@class\nblow job\n法輪\n");
    const char *texts[] = {"ＡＢＣ class bass", "成人牙刷 成人", "blow  job 法轮", "f.u.c.k"};
    unsigned char *blob;
    size_t bl;
    char err[256];
    ck_assert_int_eq(words_serialize(g_m, &blob, &bl, err, sizeof err), 0);
    struct words_matcher *m2 = words_load(blob, bl, err, sizeof err);
    ck_assert_msg(m2 != NULL, "load: %s", err);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char a[1024];
        snprintf(a, sizeof a, "%s", scan(texts[i]));
        struct words_matcher *keep = g_m;
        g_m = m2;
        ck_assert_str_eq(scan(texts[i]), a);
        g_m = keep;
    }
    words_matcher_free(m2);
    /* Every truncation and every flipped byte is refused with a reason. */
    for (size_t cut = 0; cut < bl; cut += 7) {
        ck_assert_ptr_null(words_load(blob, cut, err, sizeof err));
        ck_assert(err[0] != '\0');
    }
    for (size_t i = 0; i < bl; i += 3) {
        blob[i] ^= 0x5a;
        err[0] = '\0';
        struct words_matcher *bad = words_load(blob, bl, err, sizeof err);
        ck_assert_ptr_null(bad);
        ck_assert(err[0] != '\0');
        blob[i] ^= 0x5a;
    }
    free(blob);
}
END_TEST

START_TEST(test_empty_list)
{
    build("# nothing\n");
    ck_assert_str_eq(scan("anything at all"), "");
    unsigned char *blob;
    size_t bl;
    char err[256];
    ck_assert_int_eq(words_serialize(g_m, &blob, &bl, err, sizeof err), 0);
    struct words_matcher *m2 = words_load(blob, bl, err, sizeof err);
    ck_assert_msg(m2 != NULL, "load: %s", err);
    words_matcher_free(m2);
    free(blob);
}
END_TEST

/* The normaliser works in batches of 256 symbols and a space needs two
 * symbols after it: every place of a spaced-out word around a batch's end. */
START_TEST(test_batch_edges)
{
    build("fuck\nass\n法轮\n");
    for (size_t k = 0; k < 200; k++) {
        size_t pad = 3 * k;
        char *t = malloc(pad + 64);
        for (size_t i = 0; i < k; i++)
            memcpy(t + 3 * i, "xy ", 3);
        strcpy(t + pad, "f u c k a SS 法 轮");
        char want[64];
        snprintf(want, sizeof want, "fuck@%zu-%zu 法轮@%zu-%zu", pad, pad + 7, pad + 13, pad + 20);
        ck_assert_str_eq(scan(t), want);
        free(t);
    }
}
END_TEST

/* A state with many children (the root's one child `b` here): each child
 * is found, whatever its place among the edges. With 9 or more, the scan
 * searches them by halves: an edge at the split was lost (`bitch` in
 * LDNOOBW's list, found by tests/it/check_wordlists). */
START_TEST(test_wide_state)
{
    for (size_t n = 1; n <= 26; n++) {
        char list[26 * 4 + 1], text[8];
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            list[k++] = 'b';
            list[k++] = (char)('a' + i);
            list[k++] = 'z';
            list[k++] = '\n';
        }
        list[k] = '\0';
        build(list);
        for (size_t i = 0; i < n; i++) {
            snprintf(text, sizeof text, "b%cz", (char)('a' + i));
            char want[16];
            snprintf(want, sizeof want, "%s@0-3", text);
            ck_assert_msg(strcmp(scan(text), want) == 0, "%zu children: %s not found (%s)", n, text,
                          g_res);
        }
    }
}
END_TEST

/* A text of several megabytes: the scratch does not grow with it. */
START_TEST(test_long_text)
{
    build("fuck\n");
    size_t len = 4u << 20;
    char *t = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        t[i] = i % 5 == 4 ? ' ' : 'q';
    memcpy(t + len - 7, " f.uck.", 7);
    t[len] = '\0';
    ck_assert_str_eq(scan(t), "fuck@4194298-4194303");
    free(t);
}
END_TEST

struct th_arg {
    const char *text;
    char want[256];
    int bad;
};

/* Scans with a scratch of its own, many times, against the answer the main
 * thread got. */
static void *th_scan(void *p)
{
    struct th_arg *a = p;
    struct words_scratch *s = words_scratch_new();
    for (int i = 0; i < 300 && s; i++) {
        struct words_match mm[8];
        size_t n;
        bool cap;
        char got[256] = "";
        if (words_scan(g_m, s, a->text, strlen(a->text), mm, 8, &n, &cap) != 0) {
            a->bad++;
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            size_t at = strlen(got);
            snprintf(got + at, sizeof got - at, "%zu-%zu ", mm[k].start, mm[k].end);
        }
        a->bad += strcmp(got, a->want) != 0;
    }
    words_scratch_free(s);
    return NULL;
}

/* One matcher, four threads, a scratch each. */
START_TEST(test_threads)
{
    build("fuck\n成人\n@@成人牙刷\nass*\n");
    static const char *const texts[] = {"f.u.c.k 成人牙刷 成人", "assess class ass",
                                        "ＦＵＣＫ f u c k", "nothing here"};
    struct th_arg args[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        args[i].text = texts[i];
        args[i].bad = 0;
        struct words_match mm[8];
        size_t n;
        bool cap;
        ck_assert_int_eq(words_scan(g_m, g_s, texts[i], strlen(texts[i]), mm, 8, &n, &cap), 0);
        args[i].want[0] = '\0';
        for (size_t k = 0; k < n; k++) {
            size_t at = strlen(args[i].want);
            snprintf(args[i].want + at, sizeof args[i].want - at, "%zu-%zu ", mm[k].start,
                     mm[k].end);
        }
    }
    ck_assert_str_eq(args[0].want, "0-7 21-27 ");
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, th_scan, &args[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(args[i].bad, 0);
    }
}
END_TEST

static Suite *words_suite(void)
{
    Suite *s = suite_create("words");
    TCase *tc = tcase_create("words");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_fullwidth_and_case);
    tcase_add_test(tc, test_inserted_symbols);
    tcase_add_test(tc, test_cjk_spaces_and_variants);
    tcase_add_test(tc, test_exceptions);
    tcase_add_test(tc, test_whole_word);
    tcase_add_test(tc, test_marks_and_offsets);
    tcase_add_test(tc, test_phrases);
    tcase_add_test(tc, test_mask_and_cap);
    tcase_add_test(tc, test_summary);
    tcase_add_test(tc, test_skip_set);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_empty_list);
    tcase_add_test(tc, test_batch_edges);
    tcase_add_test(tc, test_wide_state);
    tcase_add_test(tc, test_long_text);
    tcase_add_test(tc, test_threads);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(words_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
