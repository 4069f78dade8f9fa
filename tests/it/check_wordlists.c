/* Real public word lists (tests/words/README.md: LDNOOBW's English and French
 * lists, a Chinese sensitive-word list of 14,100 lines) built by the real tool
 * (`bloomgate build --format words`) and scanned by a real bloomgated. The
 * build summary is checked against counts the test makes from the lists; then
 * every entry is scanned in a sentence, as listed and as a user would dodge
 * it (upper case, full width, symbols and zero-width spaces between its
 * letters, combining marks, traditional characters, spaces between Han
 * characters), each time at the bytes the test finds it at in the text as
 * sent; whole-word against substring entries, exceptions, and a text of
 * exactly the size limit and one byte over. Skips (77) when scripts/deps.sh
 * has not installed the lists.
 *
 * The oracle for "where is the entry in the text" is the entry's own bytes
 * with the characters the default skip set drops at its ends taken off
 * (utf8proc's categories: P, S, Cf, Z): a match covers from its first kept
 * character to its last (docs/words.md). */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <opencc/opencc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"
#include "lib/line_client.h"

#define MAX_ENTRIES 20000

struct list {
    char *e[MAX_ENTRIES];
    size_t n;
};

static char lists_dir[900];

/* The path of a file of the installed packages. */
static void list_path(const char *rel, char *out)
{
    int n = snprintf(out, DH_PATH_MAX, "%.900s/%.100s", lists_dir, rel);
    (void)n;
}

static void list_add(struct list *l, const char *s, size_t len)
{
    ck_assert_uint_lt(l->n, MAX_ENTRIES);
    l->e[l->n] = strndup(s, len);
    ck_assert_ptr_nonnull(l->e[l->n]);
    l->n++;
}

static void list_free(struct list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->e[i]);
    l->n = 0;
}

/* A JSON array of strings (naughty-words' en.json, fr.json). */
static void load_json(const char *rel, struct list *l)
{
    char p[DH_PATH_MAX];
    list_path(rel, p);
    json_error_t je;
    json_t *a = json_load_file(p, 0, &je);
    ck_assert_msg(a && json_is_array(a), "%s: %s", p, je.text);
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *s = json_array_get(a, i);
        ck_assert(json_is_string(s));
        list_add(l, json_string_value(s), json_string_length(s));
    }
    json_decref(a);
}

/* A text list, one entry a line, CRLF or LF; blank lines dropped (the
 * build ignores them), every other line as read. n_lines: every line. */
static void load_text(const char *rel, struct list *l, size_t *n_lines)
{
    char p[DH_PATH_MAX];
    list_path(rel, p);
    FILE *f = fopen(p, "rb");
    ck_assert_msg(f != NULL, "%s", p);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    *n_lines = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        (*n_lines)++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        size_t a = 0;
        while ((ssize_t)a < len && (line[a] == ' ' || line[a] == '\t'))
            a++;
        if ((ssize_t)a < len)
            list_add(l, line, (size_t)len);
    }
    free(line);
    fclose(f);
}

/* Written one entry a line, for the tool. */
static void write_list(struct dh_daemon *d, const char *name, const struct list *l,
                       const char *before)
{
    size_t cap = strlen(before) + 1;
    for (size_t i = 0; i < l->n; i++)
        cap += strlen(l->e[i]) + 1;
    char *buf = malloc(cap), *p = buf;
    p += sprintf(p, "%s", before);
    for (size_t i = 0; i < l->n; i++)
        p += sprintf(p, "%s\n", l->e[i]);
    dh_write_file(d, name, buf, (size_t)(p - buf));
    free(buf);
}

/* A code point the default skip set ("P S Cf space") drops. */
static bool skipped(int32_t cp)
{
    const char *c = utf8proc_category_string(cp);
    return c[0] == 'P' || c[0] == 'S' || c[0] == 'Z' || strcmp(c, "Cf") == 0 || cp == '\t' ||
           cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x85;
}

/* Bytes [*a, *b) of s without the skipped characters at its ends; *a == *b
 * when s is only such characters (the build rejects it). */
static void trim(const char *s, size_t *a, size_t *b)
{
    size_t len = strlen(s), i = 0, last_end = 0;
    bool any = false;
    *a = *b = 0;
    while (i < len) {
        int32_t cp;
        utf8proc_ssize_t k =
            utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
        ck_assert_int_gt(k, 0);
        if (!skipped(cp)) {
            if (!any)
                *a = i;
            any = true;
            last_end = i + (size_t)k;
        }
        i += (size_t)k;
    }
    *b = any ? last_end : *a;
}

/* The tool's summary line "lines: ..." parsed. */
struct summary {
    unsigned long lines, words, phrases, substrings, exceptions, dups, rejected;
};

/* Build dir/out from the listed files (dir-relative) with opt (or NULL);
 * the summary parsed from the tool's output. */
static void build(struct dh_daemon *d, const char *out, const char *in1, const char *in2,
                  const char *opt, struct summary *s)
{
    char o[DH_PATH_MAX], i1[DH_PATH_MAX], i2[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_path(d, out, o);
    dh_path(d, in1, i1);
    if (in2)
        dh_path(d, in2, i2);
    char logname[DH_PATH_MAX + 8];
    snprintf(logname, sizeof(logname), "%s.log", out);
    dh_path(d, logname, log);
    const char *argv[12] = {dh_tool_path(), "build", "--format", "words", "-o", o};
    size_t k = 6;
    if (opt)
        argv[k++] = opt;
    argv[k++] = i1;
    if (in2)
        argv[k++] = i2;
    argv[k] = NULL;
    int st = dh_run(argv, log, 120000);
    ck_assert_msg(st == 0, "bloomgate build --format words %s failed (%d); see %s", in1, st, log);
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    bool got = false;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line,
                   "lines: %lu read; words: %lu (%lu phrases, %lu substrings), %lu exceptions; "
                   "%lu duplicates after normalisation; %lu rejected",
                   &s->lines, &s->words, &s->phrases, &s->substrings, &s->exceptions, &s->dups,
                   &s->rejected) == 7)
            got = true;
    fclose(f);
    ck_assert_msg(got, "no summary line in %s", log);
}

/* ---- scanning through the line protocol ---- */

/* Whether SCAN flt pre+w+post reports a match covering exactly the bytes
 * [a, b) of w (offsets into the text as sent). */
static bool found_at(struct dh_conn *c, const char *flt, const char *pre, const char *w, size_t a,
                     size_t b, const char *post)
{
    size_t n = strlen(pre) + strlen(w) + strlen(post) + strlen(flt) + 16;
    char *req = malloc(n);
    snprintf(req, n, "SCAN %s %s%s%s", flt, pre, w, post);
    const char *r = dh_cmd(c, req);
    free(req);
    ck_assert_msg(strncmp(r, "FOUND ", 6) == 0 || strcmp(r, "CLEAN") == 0, "%s", r);
    size_t s = strlen(pre) + a, e = strlen(pre) + b;
    char *copy = strdup(r), *save = NULL;
    bool hit = false;
    strtok_r(copy, " ", &save); /* FOUND */
    strtok_r(NULL, " ", &save); /* the count */
    for (char *word; (word = strtok_r(NULL, " ", &save)) != NULL;) {
        char *ss = strtok_r(NULL, " ", &save), *es = strtok_r(NULL, " ", &save);
        ck_assert_msg(ss && es, "%s", r);
        if (strtoul(ss, NULL, 10) == s && strtoul(es, NULL, 10) == e)
            hit = true;
    }
    free(copy);
    return hit;
}

/* A variant of an entry, written into out (the cap is generous: at most 8
 * bytes per input byte): sep put between its characters, each character
 * mapped to full width, upper case... */
enum variant { V_AS_IS, V_UPPER, V_FULLWIDTH, V_DOTS, V_ZWSP, V_MARKS, V_SPACES };

static void make_variant(const char *w, enum variant v, char *out, size_t cap)
{
    size_t len = strlen(w), i = 0, k = 0;
    bool first = true;
    out[0] = '\0';
    while (i < len) {
        int32_t cp;
        utf8proc_ssize_t n =
            utf8proc_iterate((const utf8proc_uint8_t *)w + i, (utf8proc_ssize_t)(len - i), &cp);
        ck_assert_int_gt(n, 0);
        ck_assert_uint_lt(k + 16, cap);
        if (!first && v == V_DOTS)
            out[k++] = '.';
        if (!first && v == V_ZWSP)
            k += (size_t)utf8proc_encode_char(0x200B, (utf8proc_uint8_t *)out + k);
        if (!first && v == V_SPACES)
            out[k++] = ' ';
        if (v == V_UPPER)
            cp = utf8proc_toupper(cp);
        if (v == V_FULLWIDTH && cp >= 0x21 && cp <= 0x7E)
            cp += 0xFEE0;
        k += (size_t)utf8proc_encode_char(cp, (utf8proc_uint8_t *)out + k);
        if (v == V_MARKS) /* a long stroke overlay on every character */
            k += (size_t)utf8proc_encode_char(0x0337, (utf8proc_uint8_t *)out + k);
        first = false;
        i += (size_t)n;
    }
    out[k] = '\0';
}

static bool is_ascii_word(const char *w)
{
    for (const char *p = w; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            return false;
    return *w != '\0';
}

/* Whether w is made of Han characters only, two or more. */
static bool is_han(const char *w)
{
    size_t len = strlen(w), i = 0, n = 0;
    while (i < len) {
        int32_t cp;
        utf8proc_ssize_t k =
            utf8proc_iterate((const utf8proc_uint8_t *)w + i, (utf8proc_ssize_t)(len - i), &cp);
        if (k <= 0 || !((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF)))
            return false;
        i += (size_t)k;
        n++;
    }
    return n >= 2;
}

/* w in traditional characters, OpenCC's s2t asked one character at a time:
 * phrase by phrase it turns 阎明复 into 閻明覆, and 覆 is a simplified
 * character of its own, a different word (malloc'd). */
static char *to_trad(opencc_t cc, const char *w)
{
    size_t len = strlen(w), i = 0, k = 0;
    char *out = malloc(len * 4 + 1);
    while (i < len) {
        int32_t cp;
        utf8proc_ssize_t n =
            utf8proc_iterate((const utf8proc_uint8_t *)w + i, (utf8proc_ssize_t)(len - i), &cp);
        ck_assert_int_gt(n, 0);
        char *t = opencc_convert_utf8(cc, w + i, (size_t)n);
        ck_assert_ptr_nonnull(t);
        size_t tl = strlen(t);
        ck_assert_uint_le(k + tl, len * 4);
        memcpy(out + k, t, tl);
        k += tl;
        opencc_convert_utf8_free(t);
        i += (size_t)n;
    }
    out[k] = '\0';
    return out;
}

static struct list en, fr, zh;
static size_t zh_lines;

/* The lists, read in the test (Check's asserts work only there): a
 * checked fixture's setup. */
static void lists_load(void)
{
    if (en.n)
        return;
    load_json("naughty-words/en.json", &en);
    load_json("naughty-words/fr.json", &fr);
    load_text("@dragon-fish/sensitive-words-filter/lib/words.txt", &zh, &zh_lines);
}

/* ---- the build summaries ---- */

START_TEST(test_en_summary)
{
    struct dh_daemon *d = dh_new();
    write_list(d, "en.txt", &en, "");
    struct summary s;
    build(d, "en.bloom", "en.txt", NULL, NULL, &s);
    /* The test's own normalisation of an ASCII list: lower case, symbols
     * dropped, blank runs one space; rejects are entries with nothing left. */
    size_t rejected = 0, phrases = 0, distinct = 0;
    char **keys = calloc(en.n, sizeof *keys);
    for (size_t i = 0; i < en.n; i++) {
        size_t a, b;
        trim(en.e[i], &a, &b);
        if (a == b) {
            rejected++;
            continue;
        }
        char *k = calloc(1, strlen(en.e[i]) + 1);
        size_t n = 0;
        for (const char *p = en.e[i] + a; p < en.e[i] + b; p++) {
            if (*p >= 'A' && *p <= 'Z')
                k[n++] = (char)(*p - 'A' + 'a');
            else if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
                k[n++] = *p;
            else if (*p == ' ' && n && k[n - 1] != ' ')
                k[n++] = ' ';
        }
        bool dup = false;
        for (size_t j = 0; j < distinct && !dup; j++)
            dup = strcmp(keys[j], k) == 0;
        if (dup) {
            free(k);
            continue;
        }
        phrases += strchr(k, ' ') != NULL;
        keys[distinct++] = k;
    }
    ck_assert_uint_eq(s.lines, en.n);
    ck_assert_uint_eq(s.rejected, rejected);
    ck_assert_uint_eq(s.words, distinct);
    ck_assert_uint_eq(s.dups, en.n - rejected - distinct);
    ck_assert_uint_eq(s.phrases, phrases);
    ck_assert_uint_eq(s.exceptions, 0);
    ck_assert_uint_eq(s.substrings, 0);
    /* Each reject named on stderr (the first eight), with its line and reason. */
    char log[DH_PATH_MAX];
    FILE *f = fopen(dh_path(d, "en.bloom.log", log), "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    size_t n = 0;
    while (fgets(line, sizeof(line), f)) {
        if (!strstr(line, ": rejected: "))
            continue;
        n++;
        ck_assert_msg(strstr(line, "en.txt:") && strstr(line, "is only skipped characters"), "%s",
                      line);
    }
    fclose(f);
    ck_assert_uint_eq(n, rejected < 8 ? rejected : 8);
    for (size_t j = 0; j < distinct; j++)
        free(keys[j]);
    free(keys);
    dh_free(d);
}
END_TEST

/* Chinese: exact duplicates (after trimming the skipped ends) are a floor;
 * folding traditional to simplified finds more; everything adds up. */
START_TEST(test_zh_summary)
{
    struct dh_daemon *d = dh_new();
    write_list(d, "zh.txt", &zh, "");
    struct summary on, off;
    build(d, "zh.bloom", "zh.txt", NULL, NULL, &on);
    build(d, "zh0.bloom", "zh.txt", NULL, "--zh=off", &off);
    size_t rejected = 0, exact = 0;
    char **keys = calloc(zh.n, sizeof *keys);
    size_t nk = 0;
    for (size_t i = 0; i < zh.n; i++) {
        size_t a, b;
        trim(zh.e[i], &a, &b);
        if (a == b) {
            rejected++;
            continue;
        }
        keys[nk++] = strndup(zh.e[i] + a, b - a);
    }
    qsort(keys, nk, sizeof *keys, (int (*)(const void *, const void *))strcmp);
    for (size_t i = 1; i < nk; i++)
        exact += strcmp(keys[i - 1], keys[i]) == 0;
    for (size_t i = 0; i < nk; i++)
        free(keys[i]);
    free(keys);
    ck_assert_uint_eq(on.lines, zh_lines);
    ck_assert_uint_eq(on.rejected, rejected);
    ck_assert_uint_eq(off.rejected, rejected);
    ck_assert_uint_eq(on.words + on.dups + on.rejected, zh.n);
    ck_assert_uint_eq(off.words + off.dups + off.rejected, zh.n);
    ck_assert_uint_ge(off.dups, exact);
    ck_assert_uint_gt(on.dups, off.dups);
    ck_assert_uint_gt(on.words, zh.n / 2);
    dh_free(d);
}
END_TEST

/* ---- the scans ---- */

/* A daemon serving en (LDNOOBW's English and French lists, with a substring
 * and an exception of ours first), en_mn (the same with combining marks
 * skipped) and zh (the Chinese list with an exception). */
static struct dh_daemon *start(size_t max_text)
{
    struct dh_daemon *d = dh_new();
    struct list both = {0};
    for (size_t i = 0; i < en.n; i++)
        list_add(&both, en.e[i], strlen(en.e[i]));
    for (size_t i = 0; i < fr.n; i++)
        list_add(&both, fr.e[i], strlen(fr.e[i]));
    write_list(d, "en.txt", &both, "*cunt*\n@@scunthorpe\n");
    list_free(&both);
    write_list(d, "zh.txt", &zh, "");
    dh_write_file(d, "zh-extra.txt", "@@成人牙刷\n", strlen("@@成人牙刷\n"));
    struct summary s;
    build(d, "en.bloom", "en.txt", NULL, NULL, &s);
    ck_assert_uint_eq(s.substrings, 1);
    ck_assert_uint_eq(s.exceptions, 1);
    build(d, "en_mn.bloom", "en.txt", NULL, "--skip=P S Cf space Mn", &s);
    build(d, "zh.bloom", "zh.txt", "zh-extra.txt", NULL, &s);
    ck_assert_uint_eq(s.exceptions, 1);
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "threads 2\nlog_level info\nhttp_listen 127.0.0.1:0\n"
             "scan_max_text %zu\nscan_max_matches 1000\n"
             "filter en {\n file @DIR@/en.bloom\n keys words\n}\n"
             "filter en_mn {\n file @DIR@/en_mn.bloom\n words_skip \"P S Cf space Mn\"\n}\n"
             "filter zh {\n file @DIR@/zh.bloom\n words_zh on\n}\n",
             max_text);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

/* Every English entry in a sentence, in each variant: found at its bytes. */
START_TEST(test_en_variants)
{
    struct dh_daemon *d = start(1 << 20);
    struct dh_conn *c = dh_connect(d);
    static const struct {
        enum variant v;
        const char *flt;
        bool words_only; /* symbols between the letters of a phrase's words
                          * meet its spaces: single words only */
    } vs[] = {{V_AS_IS, "en", false}, {V_UPPER, "en", false}, {V_FULLWIDTH, "en", false},
              {V_DOTS, "en", true},   {V_ZWSP, "en", false},  {V_MARKS, "en_mn", true}};
    char var[8192];
    for (size_t k = 0; k < sizeof(vs) / sizeof(vs[0]); k++) {
        size_t tried = 0, missed = 0;
        const char *first_miss = NULL;
        for (size_t i = 0; i < en.n; i++) {
            size_t a, b;
            trim(en.e[i], &a, &b);
            if (a == b || (vs[k].words_only && !is_ascii_word(en.e[i])))
                continue;
            make_variant(en.e[i], vs[k].v, var, sizeof(var));
            size_t va, vb;
            trim(var, &va, &vb);
            if (vs[k].v == V_MARKS) /* the last mark belongs to the last letter */
                vb = strlen(var);
            tried++;
            if (!found_at(c, vs[k].flt, "you are a ", var, va, vb, "!")) {
                missed++;
                if (!first_miss)
                    first_miss = en.e[i];
            }
        }
        ck_assert_msg(missed == 0, "variant %zu: %zu of %zu entries not found (first: %s)", k,
                      missed, tried, first_miss);
        ck_assert_uint_gt(tried, 250);
    }
    /* Stroked letters are not skipped by default: the marks keep the
     * letters apart from the list's. */
    make_variant("fuck", V_MARKS, var, sizeof(var));
    ck_assert(!found_at(c, "en", "you ", var, 0, strlen(var), "!"));
    /* French, decomposed: each accented entry, e + U+0301 for é, found at
     * the decomposed bytes. */
    size_t accented = 0;
    for (size_t i = 0; i < fr.n; i++) {
        utf8proc_uint8_t *nfd = utf8proc_NFD((const utf8proc_uint8_t *)fr.e[i]);
        ck_assert_ptr_nonnull(nfd);
        if (strcmp((char *)nfd, fr.e[i]) != 0) {
            accented++;
            size_t a, b;
            trim((char *)nfd, &a, &b);
            ck_assert_msg(found_at(c, "en", "c'est ", (char *)nfd, a, b, " !"), "%s", fr.e[i]);
        }
        free(nfd);
    }
    ck_assert_uint_gt(accented, 5);
    dh_finish(d);
}
END_TEST

/* Whole words: no single-word entry is found inside a longer word; the
 * substring entry is, and the exception covering it hides it. */
START_TEST(test_en_whole_word)
{
    struct dh_daemon *d = start(1 << 20);
    struct dh_conn *c = dh_connect(d);
    size_t tried = 0;
    for (size_t i = 0; i < en.n; i++) {
        if (!is_ascii_word(en.e[i]) || strcmp(en.e[i], "cunt") == 0)
            continue;
        tried++;
        ck_assert_msg(!found_at(c, "en", "xx", en.e[i], 0, strlen(en.e[i]), "yy"), "%s", en.e[i]);
        ck_assert_msg(found_at(c, "en", "xx ", en.e[i], 0, strlen(en.e[i]), " yy"), "%s", en.e[i]);
    }
    ck_assert_uint_gt(tried, 200);
    ck_assert(found_at(c, "en", "xx", "cunt", 0, 4, "yy"));
    ck_assert_str_eq(dh_cmd(c, "SCAN en Scunthorpe United, a class act"), "CLEAN");
    ck_assert_str_eq(dh_cmd(c, "SCAN en ＳＣＵＮＴＨＯＲＰＥ"), "CLEAN");
    dh_finish(d);
}
END_TEST

/* Every Chinese entry in a sentence: as listed; in traditional characters
 * (OpenCC's s2t, phrase by phrase: a conversion the build never ran); with
 * spaces between its Han characters; and a Latin letter in full width. */
START_TEST(test_zh_variants)
{
    struct dh_daemon *d = start(1 << 20);
    struct dh_conn *c = dh_connect(d);
    opencc_t cc = opencc_open("s2t.json");
    ck_assert_msg(cc != (opencc_t)-1, "opencc s2t.json: %s", opencc_error());
    size_t tried = 0, changed = 0, spaced = 0, wide = 0;
    char var[8192];
    for (size_t i = 0; i < zh.n; i++) {
        const char *w = zh.e[i];
        size_t a, b;
        trim(w, &a, &b);
        if (a == b)
            continue;
        tried++;
        ck_assert_msg(found_at(c, "zh", "我们说", w, a, b, "了吗。"), "entry %zu: %s", i, w);
        char *t = to_trad(cc, w);
        if (strcmp(t, w) != 0) {
            changed++;
            trim(t, &a, &b);
            ck_assert_msg(found_at(c, "zh", "他們說", t, a, b, "了嗎。"), "entry %zu: %s as %s", i,
                          w, t);
        }
        free(t);
        if (is_han(w)) {
            spaced++;
            make_variant(w, V_SPACES, var, sizeof(var));
            ck_assert_msg(found_at(c, "zh", "我们说", var, 0, strlen(var), "了吗"), "%s", var);
        }
        trim(w, &a, &b);
        if (strspn(w, "abcdefghijklmnopqrstuvwxyz") > 0) {
            wide++;
            make_variant(w, V_FULLWIDTH, var, sizeof(var));
            trim(var, &a, &b);
            ck_assert_msg(found_at(c, "zh", "我们说", var, a, b, "了吗"), "%s", var);
        }
    }
    opencc_close(cc);
    ck_assert_uint_gt(tried, zh.n - 10);
    ck_assert_uint_gt(changed, 1000);
    ck_assert_uint_gt(spaced, 5000);
    ck_assert_uint_gt(wide, 10);
    /* The exception: 成人 is listed, 成人牙刷 allowed. */
    ck_assert(!found_at(c, "zh", "我想买", "成人", 0, strlen("成人"), "牙刷。"));
    ck_assert(found_at(c, "zh", "我不看", "成人", 0, strlen("成人"), "电影。"));
    ck_assert(!found_at(c, "zh", "我想买", "成人", 0, strlen("成人"), "牙刷"));
    dh_finish(d);
}
END_TEST

/* A text of exactly scan_max_text bytes, multi-byte to its end, with a
 * listed word as its last characters: found on both fronts at its offsets;
 * one byte more is refused, with the limit in the answer. */
START_TEST(test_max_text)
{
    const size_t max = 4096;
    struct dh_daemon *d = start(max);
    struct dh_conn *c = dh_connect(d);
    const char *word = "習近平"; /* traditional: the list has 习近平 */
    size_t wl = strlen(word);
    /* A filler in no entry, so that the text holds one match only (a
     * listed 天天 would cap the matches long before the end). */
    char fill[8] = "";
    for (int32_t cp = 0x4E00; cp < 0x9FFF && !fill[0]; cp++) {
        char ch[8];
        ch[utf8proc_encode_char(cp, (utf8proc_uint8_t *)ch)] = '\0';
        bool used = false;
        for (size_t i = 0; i < zh.n && !used; i++)
            used = strstr(zh.e[i], ch) != NULL;
        if (!used)
            memcpy(fill, ch, sizeof(ch));
    }
    ck_assert_uint_eq(strlen(fill), 3);
    char *text = malloc(max + 2);
    size_t k = 0;
    while (k + 3 <= max - wl)
        k += (size_t)sprintf(text + k, "%s", fill); /* 3 bytes each */
    while (k < max - wl)
        text[k++] = 'a';
    memcpy(text + k, word, wl + 1);
    ck_assert_uint_eq(strlen(text), max);
    ck_assert(found_at(c, "zh", "", text, max - wl, max, ""));
    struct hc_conn h;
    struct hc_resp r;
    char want[128];
    snprintf(want, sizeof(want), "{\"word\":\"习近平\",\"start\":%zu,\"end\":%zu}", max - wl, max);
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_int_eq(
        hc_request(&h, "POST", "/v1/filters/zh/scan", NULL, text, max, &r, DH_TIMEOUT_MS), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_msg(strstr(r.body, want), "%s", r.body);
    hc_resp_free(&r);
    /* One byte over. */
    memmove(text + 1, text, max + 1);
    text[0] = ' ';
    char *req = malloc(max + 32);
    snprintf(req, max + 32, "SCAN zh %s", text);
    const char *l = dh_cmd(c, req);
    ck_assert_msg(strncmp(l, "ERR text_too_long ", 18) == 0 && strstr(l, "4096"), "%s", l);
    free(req);
    ck_assert_int_eq(
        hc_request(&h, "POST", "/v1/filters/zh/scan", NULL, text, max + 1, &r, DH_TIMEOUT_MS), 0);
    ck_assert_int_eq(r.status, 413);
    ck_assert_msg(strstr(r.body, "4096"), "%s", r.body);
    hc_resp_free(&r);
    hc_close(&h);
    free(text);
    dh_finish(d);
}
END_TEST

int main(void)
{
    const char *dir = getenv("WORDLISTS_DIR"), *top = getenv("srcdir");
    if (dir)
        snprintf(lists_dir, sizeof(lists_dir), "%s", dir);
    else
        snprintf(lists_dir, sizeof(lists_dir), "%s/tests/words/node_modules", top ? top : ".");
    char p1[DH_PATH_MAX], p2[DH_PATH_MAX];
    list_path("naughty-words/en.json", p1);
    list_path("@dragon-fish/sensitive-words-filter/lib/words.txt", p2);
    FILE *f1 = fopen(p1, "r"), *f2 = fopen(p2, "r");
    if (!f1 || !f2) {
        printf("SKIP: the word lists are not installed (%s): run scripts/deps.sh "
               "(npm ci --prefix tests/words)\n",
               !f1 ? p1 : p2);
        if (f1)
            fclose(f1);
        if (f2)
            fclose(f2);
        return 77;
    }
    fclose(f1);
    fclose(f2);
    Suite *s = suite_create("wordlists");
    const TTest *const tests[] = {test_en_summary,
                                  test_zh_summary,
                                  test_en_variants,
                                  test_en_whole_word,
                                  test_zh_variants,
                                  test_max_text,
                                  NULL};
    TCase *tc = dh_add_case(s, "wordlists", 600, tests);
    tcase_add_checked_fixture(tc, lists_load, NULL);
    int rc = dh_run_suite(s);
    return rc;
}
