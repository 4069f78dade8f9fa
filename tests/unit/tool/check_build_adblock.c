/* build --format adblock (src/tool/build_adblock.c) with --rejects: every
 * line the compiled engine does not serve is written, in the order read,
 * with its input, its byte offset there, its reason and the line as read;
 * served rules, comments and cosmetic filters are not. The engine is loaded
 * back from the file to check the rejects file agrees with its summary. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adblock/adblock.h"
#include "bloom/format.h"
#include "lib/testutil.h"
#include "tool/build.h"
#include "tool/build_adblock.h"
#include "tool/cli.h"

/* A list line and the reason the rejects file gives it (NULL: not there). */
struct line {
    const char *text;
    const char *reason;
};

/* Served, counted or cancelled lines among known bad ones. */
static const struct line list_a[] = {
    {"[Adblock Plus 2.0]", NULL},
    {"! Title: rejects test", NULL},
    {"||ads.example^", NULL},
    {"example.com##.banner", NULL},
    {"example.com#@#.ad", NULL},
    {"example.com##+js(nowebrtc)", NULL},
    {"||a.example^$frobnicate", "unknown-option"},
    {"@@||b.example^$generichide", "page-hiding"},
    {"/ad(/", "bad-regex"},
    {"||c.example^$csp=script-src 'none'", "csp"},
    {"", NULL},
    {"||d d.example^", "white-space"},
    {"0.0.0.0 evil.example", "hosts"},
    {"||e.example^$script,~script", "no-type-left"},
    {"||f.example^$~important", "not-negatable"},
    {"||g.example^$domain=", "needs-value"},
    {"||h.example^$popup", "popup"},
    {"||i.example^$method=fly", "unknown-method"},
    {"||j.example^$third-party", NULL},
    {"||j.example^$third-party", NULL}, /* a duplicate: kept once, not a reject */
    {"||k.example^$script,badfilter", NULL},
    {"||k.example^$script", NULL}, /* cancelled by its $badfilter twin */
    {"*$image,domain=a|", "bad-domain-list"},
    {"||l.example^$header=via:1.1 x", "header"},
};
/* CRLF, and a last line without its ending. */
static const struct line list_b[] = {
    {"||m.example^$removeparam=utm_source", "removeparam"},
    {"||n.example^$", "empty-options"},
    {"# a hosts-file comment", NULL},
    {"||o.example/ok.js", NULL},
    {"@@||p.example^$cname", "cname"},
    {"||q.example^$script=1", "takes-no-value"},
};

/* Writes the lines joined by eol (none after the last when !last_eol) to
 * path, and appends what the rejects file should say of them to want:
 * `INPUT:OFFSET<TAB>REASON`, then the line as written (with its CR). */
static void write_list(const char *path, const struct line *l, size_t n, const char *eol,
                       bool last_eol, char *want, size_t wantlen)
{
    char text[4096];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t off = len;
        bool end = i + 1 < n || last_eol;
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", l[i].text, end ? eol : "");
        ck_assert_uint_lt(len, sizeof(text));
        if (l[i].reason) {
            size_t w = strlen(want);
            snprintf(want + w, wantlen - w, "%s:%zu\t%s\t%s%s\n", path, off, l[i].reason, l[i].text,
                     end && eol[0] == '\r' ? "\r" : "");
        }
    }
    tu_write_file(path, text, len);
}

/* The rejects file with its third field (why, free text) checked non-empty
 * and dropped, so the rest can be compared whole. */
static char *without_why(const char *rt)
{
    char *out = malloc(strlen(rt) + 1);
    ck_assert_ptr_nonnull(out);
    size_t o = 0;
    while (*rt) {
        const char *t1 = strchr(rt, '\t');
        ck_assert_ptr_nonnull(t1);
        const char *t2 = strchr(t1 + 1, '\t');
        ck_assert_ptr_nonnull(t2);
        const char *t3 = strchr(t2 + 1, '\t');
        ck_assert_msg(t3 != NULL && t3 > t2 + 1, "no why in %s", rt);
        const char *nl = strchr(t3, '\n');
        ck_assert_ptr_nonnull(nl);
        memcpy(out + o, rt, (size_t)(t2 - rt));
        o += (size_t)(t2 - rt);
        memcpy(out + o, t3, (size_t)(nl + 1 - t3));
        o += (size_t)(nl + 1 - t3);
        rt = nl + 1;
    }
    out[o] = '\0';
    return out;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

START_TEST(test_rejects_written)
{
    char a[4096], b[4096], out[4096], rej[4096], want[8192] = "";
    tu_path(a, sizeof(a), "a.txt");
    tu_path(b, sizeof(b), "b.txt");
    tu_path(out, sizeof(out), "ads.bloom");
    tu_path(rej, sizeof(rej), "ads.rej");
    write_list(a, list_a, sizeof(list_a) / sizeof(list_a[0]), "\n", true, want, sizeof(want));
    write_list(b, list_b, sizeof(list_b) / sizeof(list_b[0]), "\r\n", false, want, sizeof(want));
    const char *inputs[] = {a, b};
    struct build_opts o = {.inputs = inputs,
                           .n_inputs = 2,
                           .output = out,
                           .layout = FILTER_BLOCKED,
                           .fpr = 1e-4,
                           .seed = 7,
                           .keys = FILTER_KEYS_ADBLOCK,
                           .format = LISTS_ADBLOCK,
                           .rejects = rej};
    ck_assert_int_eq(build_adblock_main(&o, true), 0);
    size_t len;
    char *rt = (char *)tu_read_file(rej, &len);
    rt[len] = '\0'; /* tu_read_file leaves room for it */
    ck_assert_uint_eq(strlen(rt), len);
    char *got = without_why(rt);
    ck_assert_msg(strcmp(got, want) == 0, "rejects file:\n%s\nwant (why dropped):\n%s", rt, want);
    /* The file and the engine's summary agree: every line of a class other
     * than network, comment and cosmetic is in it, once. */
    struct format_info fi;
    char err[1024] = "";
    ck_assert_msg(format_read_info(out, &fi, err, sizeof(err)) == 0, "%s", err);
    struct adblock_engine *e = build_adblock_load(out, &fi, err, sizeof(err));
    format_info_free(&fi);
    ck_assert_msg(e != NULL, "%s", err);
    const struct adblock_summary *s = adblock_engine_summary(e);
    ck_assert_uint_eq(s->lines,
                      sizeof(list_a) / sizeof(list_a[0]) + sizeof(list_b) / sizeof(list_b[0]));
    ck_assert_uint_eq(count_lines(rt), s->lines - s->by_class[ADBLOCK_CLASS_NETWORK] -
                                           s->by_class[ADBLOCK_CLASS_COMMENT] -
                                           s->by_class[ADBLOCK_CLASS_COSMETIC]);
    ck_assert_uint_eq(s->duplicates, 1);
    ck_assert_uint_eq(s->cancelled, 1);
    adblock_engine_free(e);
    free(got);
    free(rt);
}
END_TEST

/* Without --rejects nothing is written; a rejects file that cannot be
 * written fails the build before any output. */
START_TEST(test_rejects_errors)
{
    char a[4096], out[4096], rej[4096], want[8192] = "";
    tu_path(a, sizeof(a), "e.txt");
    tu_path(out, sizeof(out), "e.bloom");
    write_list(a, list_a, sizeof(list_a) / sizeof(list_a[0]), "\n", true, want, sizeof(want));
    const char *inputs[] = {a};
    struct build_opts o = {.inputs = inputs,
                           .n_inputs = 1,
                           .output = out,
                           .layout = FILTER_BLOCKED,
                           .fpr = 1e-4,
                           .seed = 7,
                           .keys = FILTER_KEYS_ADBLOCK,
                           .format = LISTS_ADBLOCK,
                           .rejects = tu_path(rej, sizeof(rej), "no/such/dir/r.txt")};
    ck_assert_int_eq(build_adblock_main(&o, true), EXIT_RUNTIME);
    ck_assert_int_ne(access(out, F_OK), 0);
    o.rejects = NULL;
    ck_assert_int_eq(build_adblock_main(&o, true), 0);
    ck_assert_int_eq(access(out, F_OK), 0);
}
END_TEST

static Suite *build_adblock_suite(void)
{
    Suite *s = suite_create("build_adblock");
    TCase *tc = tcase_create("rejects");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rejects_written);
    tcase_add_test(tc, test_rejects_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(build_adblock_suite());
}
