/* bench_words: a word list's build and scan on one core (docs/benchmarks.md,
 * "Word lists"). WORDS made-up entries (default 50,000): pseudo-words of two
 * to four syllables, one in ten a Chinese word of two to four common Han
 * characters, one in twenty a two-word phrase, one in fifty an exception.
 * Texts: English-like prose (a vocabulary of common English words, with
 * capitals and punctuation, so few entries match) and mixed Chinese text
 * (common Han characters, some traditional forms, full-width letters, Latin
 * words; a listed word now and then, about one 1 KiB comment in four); each MB megabytes, scanned
 * in one call and as 1 KiB comments. Prints figures; asserts nothing. tests/bench/bench_words
 * [WORDS] [MB] */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "words/words_int.h"

static uint64_t g_rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng % n);
}

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t put_cp(char *p, uint32_t cp)
{
    if (cp < 0x80) {
        p[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        p[0] = (char)(0xc0 | cp >> 6);
        p[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    p[0] = (char)(0xe0 | cp >> 12);
    p[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    p[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
}

static size_t pseudo_word(char *p)
{
    static const char *const cons[] = {"b", "d", "f", "g", "k",  "l",  "m",  "n",  "p",  "r",
                                       "s", "t", "v", "z", "ch", "sh", "tr", "gr", "st", "pl"};
    static const char *const vow[] = {"a", "e", "i", "o", "u", "ai", "ou", "ee", "oo", "y"};
    size_t n = 0, syl = 2 + rnd(3);
    for (size_t i = 0; i < syl; i++) {
        const char *c = cons[rnd(20)], *v = vow[rnd(10)];
        memcpy(p + n, c, strlen(c)), n += strlen(c);
        memcpy(p + n, v, strlen(v)), n += strlen(v);
    }
    return n;
}

/* A Han character from the first 3,500 of the URO (common ones). */
static uint32_t han(void)
{
    return 0x4e00 + rnd(3500);
}

static const char *const g_english[] = {
    "the",    "of",    "and",   "to",     "in",     "is",    "you",  "that",  "it",     "he",
    "was",    "for",   "on",    "are",    "as",     "with",  "his",  "they",  "I",      "at",
    "be",     "this",  "have",  "from",   "or",     "one",   "had",  "by",    "word",   "but",
    "not",    "what",  "all",   "were",   "we",     "when",  "your", "can",   "said",   "there",
    "use",    "an",    "each",  "which",  "she",    "do",    "how",  "their", "if",     "will",
    "up",     "other", "about", "out",    "many",   "then",  "them", "these", "so",     "some",
    "her",    "would", "make",  "like",   "him",    "into",  "time", "has",   "look",   "two",
    "more",   "write", "go",    "see",    "number", "no",    "way",  "could", "people", "my",
    "than",   "first", "water", "been",   "call",   "who",   "oil",  "its",   "now",    "find",
    "long",   "down",  "day",   "did",    "get",    "come",  "made", "may",   "part",   "comment",
    "thanks", "great", "post",  "really", "think",  "video", "love"};

static bool is_english(const char *w, size_t n)
{
    for (size_t i = 0; i < sizeof g_english / sizeof g_english[0]; i++)
        if (strlen(g_english[i]) == n && strncasecmp(g_english[i], w, n) == 0)
            return true;
    return false;
}

static char g_planted[64]; /* a listed word the texts carry now and then */

static char *make_list(size_t words, size_t *len)
{
    char *l = malloc(words * 40 + 1);
    size_t n = 0;
    for (size_t i = 0; i < words; i++) {
        uint32_t k = rnd(100);
        if (k < 2)
            l[n++] = '@', l[n++] = '@';
        if (k >= 2 && k < 12) {
            size_t chars = 2 + rnd(3);
            for (size_t c = 0; c < chars; c++)
                n += put_cp(l + n, han());
        } else {
            size_t at = n, wl;
            do
                n = at + (wl = pseudo_word(l + at));
            while (is_english(l + at, wl));
            if (k == 50 && !g_planted[0])
                memcpy(g_planted, l + at, wl);
            if (k >= 12 && k < 17)
                l[n++] = ' ', n += pseudo_word(l + n);
        }
        l[n++] = '\n';
    }
    *len = n;
    return l;
}

static char *make_text(size_t bytes, bool cjk)
{
    char *t = malloc(bytes + 64);
    size_t n = 0, nw = sizeof g_english / sizeof g_english[0];
    bool cap = true;
    while (n < bytes) {
        if (cjk && rnd(3) != 0) {
            size_t chars = 1 + rnd(12);
            for (size_t c = 0; c < chars; c++) {
                uint32_t r = rnd(40);
                uint32_t cp = r == 0 ? 0x8a9e /* 語 */ : r == 1 ? 0xff21 + rnd(26) : han();
                n += put_cp(t + n, cp);
            }
            n += put_cp(t + n, rnd(4) ? 0xff0c : 0x3002); /* ， 。 */
            continue;
        }
        /* One comment in four carries a listed word: few matches. */
        const char *w = rnd(800) == 0 ? g_planted : g_english[rnd((uint32_t)nw)];
        size_t l = strlen(w);
        memcpy(t + n, w, l);
        if (cap && w[0] >= 'a' && w[0] <= 'z')
            t[n] = (char)(w[0] - 32);
        n += l;
        cap = false;
        uint32_t r = rnd(20);
        if (r == 0)
            t[n++] = '.', cap = true;
        else if (r == 1)
            t[n++] = ',';
        t[n++] = ' ';
    }
    return t;
}

static void bench_text(const char *name, const struct words_matcher *m, struct words_scratch *s,
                       const char *t, size_t len)
{
    size_t cap = len / 16, n, total = 0;
    struct words_match *mm = malloc(cap * sizeof *mm);
    bool capped;
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    if (mm == NULL || words_scan(m, s, t, len, mm, cap, &n, &capped) != 0)
        exit(1);
    double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    printf("%-8s one scan of %zu MB: %.1f MB/s (CPU %.1f MB/s), %zu matches%s\n", name, len >> 20,
           (double)len / 1e6 / (w1 - w0), (double)len / 1e6 / (c1 - c0), n,
           capped ? " (capped)" : "");
    /* 1 KiB comments, cut on bytes (a cut in a character is a bad byte). */
    size_t scans = 0;
    w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t at = 0; at + 1024 <= len; at += 1024, scans++) {
        if (words_scan(m, s, t + at, 1024, mm, 100, &n, &capped) != 0)
            exit(1);
        total += n;
    }
    w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    printf("%-8s %zu scans of 1 KiB: %.0f ns per scan (CPU %.0f ns), %.1f MB/s, %zu matches\n",
           name, scans, (w1 - w0) * 1e9 / (double)scans, (c1 - c0) * 1e9 / (double)scans,
           (double)scans * 1024 / 1e6 / (w1 - w0), total);
    free(mm);
}

/* The normalisation alone, without the automaton: what a scan's time is
 * made of. */
static void bench_norm(const char *name, const struct words_matcher *m, const char *t, size_t len)
{
    static struct wn_iter it;
    size_t syms = 0;
    unsigned k;
    wn_iter_init(&it, &m->norm, t, len);
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    while ((k = wn_batch(&it)) != 0)
        syms += k;
    double c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    printf("%-8s normalisation alone: CPU %.1f MB/s, %.2f ns per byte, %zu symbols\n", name,
           (double)len / 1e6 / (c1 - c0), (c1 - c0) * 1e9 / (double)len, syms);
}

static void dump_file(const char *dir, const char *name, const char *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    size_t words = argc > 1 ? strtoul(argv[1], NULL, 10) : 50000;
    size_t mb = argc > 2 ? strtoul(argv[2], NULL, 10) : 100;
    size_t ll;
    char *list = make_list(words, &ll);
    struct words_opts o;
    words_opts_default(&o);
    char err[256];
    double t0 = now(CLOCK_MONOTONIC);
    struct words_builder *b = words_builder_new(&o, err, sizeof err);
    if (b == NULL) {
        fprintf(stderr, "bench_words: %s\n", err);
        return 1;
    }
    double t1 = now(CLOCK_MONOTONIC);
    if (words_builder_add(b, list, ll, err, sizeof err) != 0)
        return 1;
    struct words_matcher *m = words_builder_compile(b, err, sizeof err);
    if (m == NULL)
        return 1;
    double t2 = now(CLOCK_MONOTONIC);
    const struct words_summary *sum = words_builder_summary(b);
    printf("list: %zu lines, %zu words, %zu phrases, %zu exceptions, %zu duplicates, %zu rejects\n",
           sum->lines, sum->words, sum->phrases, sum->exceptions, sum->duplicates, sum->rejects);
    words_builder_free(b);
    unsigned char *blob;
    size_t bl;
    if (words_serialize(m, &blob, &bl, err, sizeof err) != 0)
        return 1;
    double t3 = now(CLOCK_MONOTONIC);
    struct words_matcher *m2 = words_load(blob, bl, err, sizeof err);
    double t4 = now(CLOCK_MONOTONIC);
    if (m2 == NULL)
        return 1;
    words_matcher_free(m2);
    printf("build: settings (OpenCC t2s, norm table) %.0f ms, list %.0f ms; load %.0f ms\n",
           (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t4 - t3) * 1e3);
    printf("memory: %.1f MB held (%.1f bytes per entry beside the 0.5 MB tables), "
           "serialised %.1f MB\n",
           (double)words_memory(m) / 1e6,
           ((double)words_memory(m) - 0x10000 * 8.0) / (double)words_count(m), (double)bl / 1e6);
    size_t fan1 = 0, fan8 = 0, fanmore = 0, fanmax = 0;
    for (uint32_t st = 1; st < m->nstates; st++) {
        size_t f = m->st[st + 1].first - m->st[st].first;
        fan1 += f <= 1, fan8 += f > 1 && f <= 8, fanmore += f > 8;
        fanmax = f > fanmax ? f : fanmax;
    }
    printf("automaton: %u states, %u edges, %u symbols in the alphabet, root fan-out %u; "
           "other states: %zu with 0-1 edges, %zu with 2-8, %zu with more (at most %zu)\n",
           m->nstates, m->nedges, m->nsym, m->st[1].first, fan1, fan8, fanmore, fanmax);
    /* WORDS_BENCH_DUMP=DIR: the list and the texts written there, for the
     * peer (tests/bench/words_peer.py). */
    /* WORDS_BENCH_PORTABLE=1: the skip's copy for any x86-64 (SSE2), where
     * the CPU would take the AVX2 and BMI2 one. */
    if (getenv("WORDS_BENCH_PORTABLE"))
        m->fast.bmi2 = false;
    printf("skip: %s\n", !m->fast.on     ? "off"
                         : m->fast.bmi2 ? "AVX2 and BMI2 copy"
                         : m->fast.simd ? "SSE2 copy"
                                        : "a byte at a time");
    const char *dump = getenv("WORDS_BENCH_DUMP");
    struct words_scratch *s = words_scratch_new();
    char *t = make_text(mb << 20, false);
    if (dump) {
        dump_file(dump, "list.txt", list, ll);
        dump_file(dump, "english.txt", t, mb << 20);
    }
    bench_norm("english", m, t, mb << 20);
    bench_text("english", m, s, t, mb << 20);
    free(t);
    t = make_text(mb << 20, true);
    if (dump)
        dump_file(dump, "mixed.txt", t, mb << 20);
    bench_norm("mixed", m, t, mb << 20);
    bench_text("mixed", m, s, t, mb << 20);
    free(t);
    /* WORDS_BENCH_TEXT=FILE: a real text too (docs/benchmarks.md says which). */
    const char *tf = getenv("WORDS_BENCH_TEXT");
    if (tf) {
        FILE *f = fopen(tf, "rb");
        if (f == NULL) {
            perror(tf);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        long tl = ftell(f);
        fseek(f, 0, SEEK_SET);
        t = malloc(tl > 0 ? (size_t)tl : 1);
        if (t == NULL || tl <= 0 || fread(t, 1, (size_t)tl, f) != (size_t)tl) {
            fprintf(stderr, "bench_words: cannot read %s\n", tf);
            return 1;
        }
        fclose(f);
        /* Named by the file's base name, up to its first dot. */
        const char *base = strrchr(tf, '/') ? strrchr(tf, '/') + 1 : tf;
        char name[16];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
        bench_norm(name, m, t, (size_t)tl);
        bench_text(name, m, s, t, (size_t)tl);
        free(t);
    }
    words_scratch_free(s);
    words_matcher_free(m);
    free(blob);
    free(list);
    return 0;
}
