/* bench_words_delta: what a run-time change to a word list costs, the two
 * ways issue 29 names (docs/benchmarks.md, "Run-time changes"):
 * the whole list compiled again (what a rebuild and swap would pay per
 * change), against the delta beside it (words/delta.h): a change and its
 * publish, then the scan of 1 KiB comments with the delta beside the list,
 * at several delta sizes. WORDS made-up entries (default 50,000), as
 * bench_words makes them; comments of English-like prose (few matches).
 * Prints figures; asserts nothing. tests/bench/bench_words_delta [WORDS]
 * [MODE DELTA]: one pass of one case, for callgrind (main says how). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "words/delta.h"
#include "words/words.h"

static uint64_t g_rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng % n);
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t pseudo_word(char *p)
{
    static const char *const cons[] = {"b", "d", "f", "g", "k",  "l",  "m",  "n",  "p",  "r",
                                       "s", "t", "v", "z", "ch", "sh", "tr", "gr", "st", "pl"};
    static const char *const vow[] = {"a", "e", "i", "o", "u", "ai", "ou", "ee", "oo", "y"};
    size_t n = 0, syl = 2 + rnd(3);
    for (size_t i = 0; i < syl; i++) {
        const char *c = cons[rnd(20)], *v = vow[rnd(10)];
        memcpy(p + n, c, strlen(c));
        n += strlen(c);
        memcpy(p + n, v, strlen(v));
        n += strlen(v);
    }
    return n;
}

static const char *const g_english[] = {
    "the",   "of",    "and",   "to",   "in",   "is",   "you",   "that", "it",    "he",
    "was",   "for",   "on",    "are",  "as",   "with", "his",   "they", "at",    "be",
    "this",  "have",  "from",  "or",   "one",  "had",  "by",    "word", "but",   "not",
    "what",  "all",   "were",  "we",   "when", "your", "can",   "said", "there", "use",
    "an",    "each",  "which", "she",  "do",   "how",  "their", "if",   "will",  "up",
    "other", "about", "out",   "many", "then", "them", "these", "so",   "some",  "her",
    "would", "make",  "like",  "him",  "into", "time", "has",   "look", "two",   "more"};
#define NENGLISH (sizeof g_english / sizeof g_english[0])

/* Whether a pseudo-word is an English word of the comments. */
static bool is_english(const char *w, size_t n)
{
    for (size_t i = 0; i < NENGLISH; i++)
        if (strlen(g_english[i]) == n && memcmp(g_english[i], w, n) == 0)
            return true;
    return false;
}

/* words lines: pseudo-words (none an English word of the comments, so they
 * carry few matches), one in twenty a phrase, one in fifty an exception. */
static char *make_list(size_t words, size_t *len)
{
    char *list = malloc(words * 48 + 1);
    size_t n = 0;
    for (size_t i = 0; i < words; i++) {
        if (rnd(50) == 0)
            n += (size_t)sprintf(list + n, "@@");
        size_t at = n;
        do
            n = at + pseudo_word(list + at);
        while (is_english(list + at, n - at));
        if (rnd(20) == 0) {
            list[n++] = ' ';
            n += pseudo_word(list + n);
        }
        list[n++] = '\n';
    }
    *len = n;
    return list;
}

static void make_comment(char *t, size_t len)
{
    size_t n = 0;
    while (n < len) {
        const char *w = g_english[rnd(NENGLISH)];
        size_t l = strlen(w);
        for (size_t i = 0; i < l && n < len; i++)
            t[n++] = (char)(i == 0 && rnd(12) == 0 ? w[i] - 32 : w[i]);
        if (n < len)
            t[n++] = rnd(10) == 0 ? ',' : ' ';
    }
}

#define NCOMMENTS 4096
#define CLEN 1024
#define CAP 1000

static char g_comments[NCOMMENTS][CLEN];

/* 1 KiB comments through the list and view v: CPU ns per comment. */
static double scan_ns(const struct words_matcher *m, const struct words_view *v,
                      struct words_scratch *s, size_t rounds, size_t *found)
{
    static struct words_match buf[3 * CAP];
    size_t n, total = 0;
    bool capped;
    double t0 = cpu();
    for (size_t r = 0; r < rounds; r++)
        for (size_t i = 0; i < NCOMMENTS; i++) {
            if (words_view_scan(m, v, s, g_comments[i], CLEN, buf, CAP, 100, &n, &capped) != 0)
                exit(1);
            total += n;
        }
    *found = total;
    return (cpu() - t0) * 1e9 / (double)(rounds * NCOMMENTS);
}

/* A delta of n new words (one in ten a phrase), published. */
static struct words_delta *make_delta(const struct words_matcher *m, size_t n)
{
    char err[256], w[128];
    struct words_delta *d = words_delta_new(m, 100000, err, sizeof err);
    if (d == NULL)
        exit(1);
    for (size_t i = 0; i < n; i++) {
        size_t l = pseudo_word(w);
        l += (size_t)sprintf(w + l, "q%zu", i); /* new: not listed, not added */
        if (i % 10 == 9) {
            w[l++] = ' ';
            l += pseudo_word(w + l);
        }
        words_delta_apply(d, WORDS_DELTA_ADD, w, l, err, sizeof err);
    }
    words_delta_publish(d, err, sizeof err);
    return d;
}

/* The change the bench makes after the words: one exception, one removal. */
static void more_changes(struct words_delta *d, const char *list)
{
    char err[256];
    words_delta_apply(d, WORDS_DELTA_ALLOW, "the word", 8, err, sizeof err);
    words_delta_apply(d, WORDS_DELTA_REMOVE, list, strcspn(list, "\n"), err, sizeof err);
    words_delta_publish(d, err, sizeof err);
}

int main(int argc, char **argv)
{
    size_t words = argc > 1 ? strtoul(argv[1], NULL, 10) : 50000;
    char err[512];
    size_t llen;
    char *list = make_list(words, &llen);
    struct words_opts o;
    words_opts_default(&o);
    double t0 = cpu();
    struct words_builder *b = words_builder_new(&o, err, sizeof err);
    if (!b) {
        fprintf(stderr, "bench_words_delta: %s\n", err);
        return 1;
    }
    double t_settings = cpu() - t0;
    t0 = cpu();
    words_builder_add(b, list, llen, err, sizeof err);
    struct words_matcher *m = words_builder_compile(b, err, sizeof err);
    double t_build = cpu() - t0;
    /* A rebuild with the settings' tables kept (words_builder_clear): the
     * least a rebuild-and-swap per change could cost. */
    double t_re = 1e9;
    for (int i = 0; i < 3; i++) {
        words_builder_clear(b);
        t0 = cpu();
        words_builder_add(b, list, llen, err, sizeof err);
        struct words_matcher *m2 = words_builder_compile(b, err, sizeof err);
        double t = cpu() - t0;
        t_re = t < t_re ? t : t_re;
        words_matcher_free(m2);
    }
    printf("list: %zu words; first build %.0f ms (+ %.0f ms settings: OpenCC, norm table); "
           "rebuild with the tables kept %.0f ms (CPU, best of 3)\n",
           words_count(m), t_build * 1e3, t_settings * 1e3, t_re * 1e3);
    for (size_t i = 0; i < NCOMMENTS; i++)
        make_comment(g_comments[i], CLEN);
    struct words_scratch *s = words_scratch_new();
    size_t found;
    if (argc > 3) {
        /* One pass of one case, for an instruction count of words_view_scan
         * (callgrind --toggle-collect=words_view_scan): MODE 0 the list
         * alone, 1 a delta of DELTA words, 2 with one exception and one
         * removal more. */
        int mode = atoi(argv[2]);
        struct words_delta *d = mode ? make_delta(m, strtoul(argv[3], NULL, 10)) : NULL;
        if (mode == 2)
            more_changes(d, list);
        double ns = scan_ns(m, d ? words_delta_view(d) : NULL, s, 1, &found);
        printf("mode %d: %.0f ns per comment (CPU), %zu matches\n", mode, ns, found);
        words_delta_free(d);
        words_scratch_free(s);
        words_matcher_free(m);
        words_builder_free(b);
        free(list);
        return 0;
    }
    double base_ns = scan_ns(m, NULL, s, 8, &found);
    printf("scan of 1 KiB comments, the list alone: %.0f ns per comment (CPU), %zu matches\n",
           base_ns, found);
    /* Deltas of growing size: added words (one in ten a phrase), then one
     * exception, then one removal. */
    static const size_t sizes[] = {1, 10, 100, 1000, 10000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        struct words_delta *d = make_delta(m, sizes[k]);
        char w[128];
        /* One more change and its publish: what an ADD request pays. */
        double tp = 1e9;
        for (int r = 0; r < 5; r++) {
            size_t n = pseudo_word(w);
            n += (size_t)sprintf(w + n, "x%d", r);
            t0 = cpu();
            words_delta_apply(d, WORDS_DELTA_ADD, w, n, err, sizeof err);
            words_delta_publish(d, err, sizeof err);
            double t = cpu() - t0;
            tp = t < tp ? t : tp;
        }
        size_t rounds = 4;
        double add_ns = scan_ns(m, words_delta_view(d), s, rounds, &found);
        more_changes(d, list);
        size_t found2;
        double all_ns = scan_ns(m, words_delta_view(d), s, rounds, &found2);
        struct words_delta_counts c;
        words_delta_counts(d, &c);
        printf("delta of %5zu words: change + publish %.2f ms; scan %.0f ns per comment "
               "(x%.2f), with an exception and a removal %.0f ns (x%.2f); view %.1f KiB\n",
               sizes[k], tp * 1e3, add_ns, add_ns / base_ns, all_ns, all_ns / base_ns,
               (double)c.memory / 1024);
        words_view_free_list(words_delta_take_retired(d));
        words_delta_free(d);
    }
    words_scratch_free(s);
    words_matcher_free(m);
    words_builder_free(b);
    free(list);
    return 0;
}
