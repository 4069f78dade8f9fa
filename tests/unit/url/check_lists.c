/* Unit tests for the list line parsers (src/url/lists.c): each format and key
 * kind, every adblock rejection reason, hostile lines, and the whole URLhaus
 * list (data/urlhaus-filter-online.txt, shipped with the source, or
 * through $URLHAUS_LIST) with every class counted against figures checked by
 * hand with grep. Lines are copied to exact-length heap buffers for ASan. */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url/lists.h"

static struct lists_line g_l;

static enum lists_class parse_n(enum lists_format f, enum url_kind k, const char *s, size_t n)
{
    char *b = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(b);
    memcpy(b, s, n);
    enum lists_class c = lists_parse_line(f, k, b, n, &g_l);
    free(b);
    ck_assert_int_eq(c, g_l.cls);
    return c;
}

/* The line gives exactly the keys listed (NULL-terminated). */
static void keys_are(int line, enum lists_format f, enum url_kind k, const char *s, size_t n, ...)
{
    enum lists_class c = parse_n(f, k, s, n);
    ck_assert_msg(c == LISTS_KEPT, "line %d: \"%s\" is %s (%s: %s)", line, s, lists_class_name(c),
                  lists_reason_name(g_l.reason), g_l.why);
    va_list ap;
    va_start(ap, n);
    size_t i = 0;
    for (const char *want; (want = va_arg(ap, const char *)) != NULL; i++) {
        ck_assert_msg(i < g_l.n, "line %d: only %zu keys", line, g_l.n);
        ck_assert_msg(g_l.e[i].len == strlen(want) && !memcmp(g_l.e[i].ptr, want, g_l.e[i].len),
                      "line %d: key %zu is \"%.*s\", want \"%s\"", line, i, (int)g_l.e[i].len,
                      g_l.e[i].ptr, want);
    }
    va_end(ap);
    ck_assert_msg(i == g_l.n, "line %d: %zu keys, want %zu", line, g_l.n, i);
}

#define KEYS(f, k, s, ...)                                                                         \
    keys_are(__LINE__, f, k, s, sizeof(s) - 1, __VA_ARGS__, (const char *)NULL)

static void class_is(int line, enum lists_format f, enum url_kind k, const char *s, size_t n,
                     enum lists_class want, enum lists_reason why)
{
    enum lists_class c = parse_n(f, k, s, n);
    ck_assert_msg(c == want && g_l.reason == why, "line %d: \"%s\" is %s/%s (%s), want %s/%s", line,
                  s, lists_class_name(c), lists_reason_name(g_l.reason), g_l.why,
                  lists_class_name(want), lists_reason_name(why));
    if (c != LISTS_KEPT)
        ck_assert_uint_eq(g_l.n, 0);
    if (c == LISTS_REJECTED)
        ck_assert_msg(g_l.why[0] != 0, "line %d: no text", line);
}

#define CLASS(f, k, s, c) class_is(__LINE__, f, k, s, sizeof(s) - 1, c, LISTS_OK)
#define REJECTS(f, k, s, r) class_is(__LINE__, f, k, s, sizeof(s) - 1, LISTS_REJECTED, r)

#define U URL_KIND_URL
#define H URL_KIND_HOST

START_TEST(plain)
{
    KEYS(LISTS_PLAIN, U, "  http://Evil.Example/a/../b?x  ", "evil.example/b?x");
    KEYS(LISTS_PLAIN, U, "evil.example", "evil.example/");
    KEYS(LISTS_PLAIN, H, "Evil.Example.", "evil.example");
    KEYS(LISTS_PLAIN, H, "user@Mail.Example", "mail.example");
    KEYS(LISTS_PLAIN, H, "http://evil.example/", "evil.example");
    KEYS(LISTS_PLAIN, H, "2001:DB8::1", "2001:db8::1");
    KEYS(LISTS_PLAIN, U, "[2001:DB8::1]", "[2001:db8::1]/");
    CLASS(LISTS_PLAIN, U, "# a comment", LISTS_COMMENT);
    CLASS(LISTS_PLAIN, U, " \t\r", LISTS_BLANK);
    CLASS(LISTS_PLAIN, U, "", LISTS_BLANK);
    REJECTS(LISTS_PLAIN, H, "http://evil.example/x", LISTS_REJ_PATH_FOR_HOST);
    REJECTS(LISTS_PLAIN, H, "evil.example/?q", LISTS_REJ_PATH_FOR_HOST);
    REJECTS(LISTS_PLAIN, U, "mailto:a@b.example", LISTS_REJ_BAD_URL);
    REJECTS(LISTS_PLAIN, H, "[::1", LISTS_REJ_BAD_HOST);
}
END_TEST

START_TEST(urls)
{
    KEYS(LISTS_URLS, U, "http://1.2.3.4:8080/bins/x.sh", "1.2.3.4/bins/x.sh");
    KEYS(LISTS_URLS, U, "HTTPS://WWW.Evil.Example/Path/%7Efile?Q=1#frag",
         "www.evil.example/Path/~file?Q=1");
    KEYS(LISTS_URLS, U, "http://evil.example", "evil.example/");
    KEYS(LISTS_URLS, H, "http://evil.example/", "evil.example");
    KEYS(LISTS_URLS, U, "http://caf\xc3\xa9.example/\xc3\xa9", "xn--caf-dma.example/%C3%A9");
    REJECTS(LISTS_URLS, H, "http://evil.example/x.exe", LISTS_REJ_PATH_FOR_HOST);
    REJECTS(LISTS_URLS, U, "http:///nohost", LISTS_REJ_BAD_URL);
    CLASS(LISTS_URLS, U, "#http://evil.example/", LISTS_COMMENT);
}
END_TEST

START_TEST(hosts)
{
    KEYS(LISTS_HOSTS, H, "0.0.0.0 evil.example", "evil.example");
    KEYS(LISTS_HOSTS, U, "0.0.0.0 evil.example", "evil.example/");
    KEYS(LISTS_HOSTS, H, "127.0.0.1 a.example\tB.example  c.example", "a.example", "b.example",
         "c.example");
    KEYS(LISTS_HOSTS, H, "0.0.0.0 evil.example # inline comment", "evil.example");
    KEYS(LISTS_HOSTS, H, "0.0.0.0 evil.example#comment", "evil.example");
    KEYS(LISTS_HOSTS, H, "::1 evil6.example", "evil6.example");
    KEYS(LISTS_HOSTS, H, "fe80::1%lo0 evil6.example", "evil6.example");
    KEYS(LISTS_HOSTS, H, "0.0.0.0 localhost evil.example", "evil.example");
    ck_assert_uint_eq(g_l.ignored_names, 1);
    KEYS(LISTS_HOSTS, H, "0.0.0.0 1.2.3.4", "1.2.3.4");
    CLASS(LISTS_HOSTS, H, "127.0.0.1 localhost", LISTS_IGNORED);
    ck_assert_uint_eq(g_l.ignored_names, 1);
    CLASS(LISTS_HOSTS, H, "127.0.0.1 localhost.localdomain LOCALHOST", LISTS_IGNORED);
    ck_assert_uint_eq(g_l.ignored_names, 2);
    CLASS(LISTS_HOSTS, H, "255.255.255.255 broadcasthost", LISTS_IGNORED);
    CLASS(LISTS_HOSTS, H, "::1 ip6-localhost ip6-loopback", LISTS_IGNORED);
    ck_assert_uint_eq(g_l.ignored_names, 2);
    CLASS(LISTS_HOSTS, H, "ff02::2 ip6-allrouters", LISTS_IGNORED);
    CLASS(LISTS_HOSTS, H, "0.0.0.0 0.0.0.0", LISTS_IGNORED);
    CLASS(LISTS_HOSTS, H, "# 0.0.0.0 evil.example", LISTS_COMMENT);
    CLASS(LISTS_HOSTS, H, "   # indented comment", LISTS_COMMENT);
    REJECTS(LISTS_HOSTS, H, "0.0.0.0", LISTS_REJ_NO_NAME);
    REJECTS(LISTS_HOSTS, H, "0.0.0.0 # only a comment", LISTS_REJ_NO_NAME);
    REJECTS(LISTS_HOSTS, H, "evil.example", LISTS_REJ_NO_ADDRESS);
    REJECTS(LISTS_HOSTS, H, "0.0.0 evil.example", LISTS_REJ_NO_ADDRESS);
    REJECTS(LISTS_HOSTS, H, "0.0.0.0 evil.example bad:name", LISTS_REJ_BAD_HOST);
    REJECTS(LISTS_HOSTS, U, "126.0.0.1 a./b", LISTS_REJ_BAD_HOST);
    REJECTS(LISTS_HOSTS, H, "0.0.0.0 a b c d e f g h i j k l m n o p q", /* 17 names */
            LISTS_REJ_TOO_MANY);
    KEYS(LISTS_HOSTS, H, "0.0.0.0 a b c d e f g h i j k l m n o p", "a", "b", "c", "d", "e", "f",
         "g", "h", "i", "j", "k", "l", "m", "n", "o", "p");
}
END_TEST

START_TEST(adblock_kept)
{
    KEYS(LISTS_ADBLOCK, U, "||evil.example^", "evil.example/");
    KEYS(LISTS_ADBLOCK, H, "||evil.example^", "evil.example");
    KEYS(LISTS_ADBLOCK, U, "||evil.example/path^", "evil.example/path");
    KEYS(LISTS_ADBLOCK, U, "||Evil.Example/a/./b%7e^$all", "evil.example/a/b~");
    ck_assert_uint_eq(g_l.ignored_opts, 1);
    KEYS(LISTS_ADBLOCK, U, "||host.example/path^$all", "host.example/path");
    KEYS(LISTS_ADBLOCK, U, "|http://evil.example/x|", "evil.example/x");
    KEYS(LISTS_ADBLOCK, U, "|https://evil.example/x", "evil.example/x");
    KEYS(LISTS_ADBLOCK, U, "||evil.example", "evil.example/");
    KEYS(LISTS_ADBLOCK, U, "||evil.example^|", "evil.example/");
    KEYS(LISTS_ADBLOCK, U, "||evil.example^*", "evil.example/");
    KEYS(LISTS_ADBLOCK, U, "||evil.example/x?a=1^", "evil.example/x?a=1");
    KEYS(LISTS_ADBLOCK, U, "||evil.example:8080/x^", "evil.example/x");
    KEYS(LISTS_ADBLOCK, U, "||w.example/web/1/http://1.2.3.4/x^",
         "w.example/web/1/http:/1.2.3.4/x");
    KEYS(LISTS_ADBLOCK, U, "evil.example", "evil.example/");
    KEYS(LISTS_ADBLOCK, H, "evil.example", "evil.example");
    KEYS(LISTS_ADBLOCK, U, "1.2.3.4", "1.2.3.4/");
    KEYS(LISTS_ADBLOCK, H, "1.2.3.4", "1.2.3.4");
    KEYS(LISTS_ADBLOCK, H,
         "||b\xc3\xbc"
         "cher.example^",
         "xn--bcher-kva.example");
    KEYS(LISTS_ADBLOCK, U, "||evil.example^$third-party,script,image,document,important,popup,doc",
         "evil.example/");
    ck_assert_uint_eq(g_l.ignored_opts, 7);
    KEYS(LISTS_ADBLOCK, U, "||evil.example^$3p,1p,xhr,css,frame,all,Match-Case,websocket",
         "evil.example/");
    ck_assert_uint_eq(g_l.ignored_opts, 8);
}
END_TEST

START_TEST(adblock_skipped)
{
    CLASS(LISTS_ADBLOCK, U, "! Title: a list", LISTS_COMMENT);
    CLASS(LISTS_ADBLOCK, U, "!#if env_firefox", LISTS_COMMENT);
    CLASS(LISTS_ADBLOCK, U, "[Adblock Plus 2.0]", LISTS_COMMENT);
    CLASS(LISTS_ADBLOCK, U, "[Adblock]", LISTS_COMMENT);
    CLASS(LISTS_ADBLOCK, U, "# a hash comment", LISTS_COMMENT);
    CLASS(LISTS_ADBLOCK, U, "   ", LISTS_BLANK);
}
END_TEST

START_TEST(adblock_rejected)
{
    REJECTS(LISTS_ADBLOCK, U, "@@||good.example^", LISTS_REJ_EXCEPTION);
    REJECTS(LISTS_ADBLOCK, U, "example.com##.ad", LISTS_REJ_COSMETIC);
    REJECTS(LISTS_ADBLOCK, U, "##.banner", LISTS_REJ_COSMETIC);
    REJECTS(LISTS_ADBLOCK, U, "example.com#@#.ad", LISTS_REJ_COSMETIC);
    REJECTS(LISTS_ADBLOCK, U, "example.com#?#div:-abp-has(.ad)", LISTS_REJ_COSMETIC);
    REJECTS(LISTS_ADBLOCK, U, "example.com#$#abort-on-property-read x", LISTS_REJ_COSMETIC);
    REJECTS(LISTS_ADBLOCK, U, "example.com##+js(nobab)", LISTS_REJ_COSMETIC);
    REJECTS(LISTS_ADBLOCK, U, "example.com#@?#.ad", LISTS_REJ_COSMETIC);
    REJECTS(LISTS_ADBLOCK, U, "example.com$$script[data-x]", LISTS_REJ_COSMETIC);
    REJECTS(LISTS_ADBLOCK, U, "/banner\\d+/", LISTS_REJ_REGEX);
    REJECTS(LISTS_ADBLOCK, U, "/ad[sx]/$script", LISTS_REJ_REGEX);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example/*/x^", LISTS_REJ_WILDCARD);
    REJECTS(LISTS_ADBLOCK, U, "||*.evil.example^", LISTS_REJ_WILDCARD);
    REJECTS(LISTS_ADBLOCK, U, "/ads/*.gif", LISTS_REJ_WILDCARD);
    REJECTS(LISTS_ADBLOCK, U, "/ads/*", LISTS_REJ_UNANCHORED); /* a trailing '*' adds nothing */
    REJECTS(LISTS_ADBLOCK, U, "||evil.example|x", LISTS_REJ_ANCHOR);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^x^", LISTS_REJ_SEPARATOR);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$domain=a.example", LISTS_REJ_RESTRICTING);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$script,denyallow=a.example", LISTS_REJ_RESTRICTING);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$~third-party", LISTS_REJ_RESTRICTING);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$~script", LISTS_REJ_RESTRICTING);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$from=a.example", LISTS_REJ_RESTRICTING);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$badfilter", LISTS_REJ_OPTION);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$redirect=noop.js", LISTS_REJ_OPTION);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$csp=script-src 'none'", LISTS_REJ_OPTION);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$removeparam=utm_source", LISTS_REJ_OPTION);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$", LISTS_REJ_OPTION);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$all,,script", LISTS_REJ_OPTION);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example^$all=1", LISTS_REJ_OPTION);
    REJECTS(LISTS_ADBLOCK, U, "-ad-banner.", LISTS_REJ_UNANCHORED);
    REJECTS(LISTS_ADBLOCK, U, "&ad_box_", LISTS_REJ_UNANCHORED);
    REJECTS(LISTS_ADBLOCK, U, "evil.example/path", LISTS_REJ_UNANCHORED);
    REJECTS(LISTS_ADBLOCK, U, "ads", LISTS_REJ_UNANCHORED);
    REJECTS(LISTS_ADBLOCK, U, "||", LISTS_REJ_EMPTY_PATTERN);
    REJECTS(LISTS_ADBLOCK, U, "||^", LISTS_REJ_EMPTY_PATTERN);
    REJECTS(LISTS_ADBLOCK, U, "|||", LISTS_REJ_EMPTY_PATTERN);
    REJECTS(LISTS_ADBLOCK, U, "|", LISTS_REJ_EMPTY_PATTERN);
    REJECTS(LISTS_ADBLOCK, U, "||*", LISTS_REJ_EMPTY_PATTERN);
    REJECTS(LISTS_ADBLOCK, U, "||^$all", LISTS_REJ_EMPTY_PATTERN);
    REJECTS(LISTS_ADBLOCK, U, "||/path^", LISTS_REJ_BAD_URL);
    REJECTS(LISTS_ADBLOCK, U, "||http://evil.example/^", LISTS_REJ_BAD_URL);
    REJECTS(LISTS_ADBLOCK, U, "|evil.example/x", LISTS_REJ_BAD_URL);
    REJECTS(LISTS_ADBLOCK, H, "||evil.example/path^", LISTS_REJ_PATH_FOR_HOST);
    REJECTS(LISTS_ADBLOCK, H, "|http://evil.example/x|", LISTS_REJ_PATH_FOR_HOST);
}
END_TEST

START_TEST(hostile)
{
    static char big[LISTS_LINE_MAX + 10];
    memset(big, 'a', sizeof(big));
    ck_assert_int_eq(parse_n(LISTS_PLAIN, U, big, sizeof(big)), LISTS_REJECTED);
    ck_assert_int_eq(g_l.reason, LISTS_REJ_TOO_LONG);
    /* Long but within the line limit: the canonical URL limit decides. */
    memcpy(big, "||", 2);
    ck_assert_int_eq(parse_n(LISTS_ADBLOCK, U, big, LISTS_LINE_MAX), LISTS_REJECTED);
    ck_assert_int_eq(g_l.reason, LISTS_REJ_BAD_URL);
    memcpy(big, "||a.example/", 12);
    ck_assert_int_eq(parse_n(LISTS_ADBLOCK, U, big, 5000), LISTS_KEPT);
    ck_assert_uint_eq(g_l.e[0].len, 4998);
    REJECTS(LISTS_ADBLOCK, U, "||evil\0.example^", LISTS_REJ_NUL);
    REJECTS(LISTS_PLAIN, U, "http://evil.example/\0", LISTS_REJ_NUL);
    REJECTS(LISTS_HOSTS, H, "0.0.0.0 evil\x01.example", LISTS_REJ_CONTROL);
    REJECTS(LISTS_URLS, U, "http://evil.example/\x7f", LISTS_REJ_CONTROL);
    REJECTS(LISTS_ADBLOCK, U, "||evil.example\x1b[31m^", LISTS_REJ_CONTROL);
    /* A CR at the end (a CRLF list) is white space, not a control byte. */
    KEYS(LISTS_ADBLOCK, U, "||evil.example^\r", "evil.example/");
    /* Unicode: IDN hosts convert; bytes that are not UTF-8 are escaped. */
    KEYS(LISTS_ADBLOCK, U, "||\xd0\xbf\xd1\x80\xd0\xb8\xd0\xbc\xd0\xb5\xd1\x80.\xd1\x80\xd1\x84^",
         "xn--e1afmkfd.xn--p1ai/");
    KEYS(LISTS_ADBLOCK, U, "||\xff\xfe.example/\xc3^", "%FF%FE.example/%C3");
    REJECTS(LISTS_ADBLOCK, U, "\xe2\x80\xae||evil.example^", LISTS_REJ_ANCHOR);
    REJECTS(LISTS_HOSTS, H,
            "\xef\xbb\xbf"
            "0.0.0.0 evil.example",
            LISTS_REJ_NO_ADDRESS);
}
END_TEST

START_TEST(names)
{
    enum lists_format f;
    char err[128];
    ck_assert_int_eq(lists_format_parse("adblock", &f, err, sizeof(err)), 0);
    ck_assert_int_eq(f, LISTS_ADBLOCK);
    ck_assert_int_eq(lists_format_parse("hosts", &f, err, sizeof(err)), 0);
    ck_assert_int_eq(f, LISTS_HOSTS);
    ck_assert_int_eq(lists_format_parse("easylist", &f, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "easylist"));
    for (int r = 0; r < LISTS_REASON_COUNT; r++)
        ck_assert_str_ne(lists_reason_name((enum lists_reason)r), "unknown");
    ck_assert_str_eq(lists_reason_name(LISTS_REASON_COUNT), "unknown");
    ck_assert_str_eq(lists_class_name(LISTS_IGNORED), "ignored");
}
END_TEST

/* ---- the real list ---- */

static FILE *open_urlhaus(void)
{
    char path[4096];
    const char *env = getenv("URLHAUS_LIST");
    if (env && *env)
        return fopen(env, "r");
    const char *src = getenv("srcdir");
    snprintf(path, sizeof(path), "%s/data/urlhaus-filter-online.txt", src ? src : ".");
    return fopen(path, "r");
}

struct tally {
    unsigned lines, cls[5], reason[LISTS_REASON_COUNT], keys, ipv4_keys, opts, distinct;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void tally_list(FILE *f, enum url_kind kind, struct tally *t)
{
    memset(t, 0, sizeof(*t));
    rewind(f);
    char **all = NULL;
    size_t nall = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n')
            n--;
        enum lists_class c = parse_n(LISTS_ADBLOCK, kind, line, (size_t)n);
        t->lines++;
        t->cls[c]++;
        t->reason[g_l.reason]++;
        t->keys += (unsigned)g_l.n;
        t->opts += g_l.ignored_opts;
        /* An IPv4 key: digits and dots, then '/' for a url key. */
        for (size_t i = 0; i < g_l.n; i++) {
            all = realloc(all, (nall + 1) * sizeof(*all));
            ck_assert_ptr_nonnull(all);
            all[nall++] = strndup(g_l.e[i].ptr, g_l.e[i].len);
            size_t digits = strspn(g_l.e[i].ptr, "0123456789.");
            if (kind == URL_KIND_URL ? digits + 1 == g_l.e[i].len && g_l.e[i].ptr[digits] == '/'
                                     : digits >= g_l.e[i].len)
                t->ipv4_keys++;
        }
    }
    free(line);
    qsort(all, nall, sizeof(*all), cmp_str);
    for (size_t i = 0; i < nall; i++) {
        t->distinct += i == 0 || strcmp(all[i], all[i - 1]) != 0;
        if (i)
            free(all[i - 1]);
    }
    if (nall)
        free(all[nall - 1]);
    free(all);
}

/* The figures, checked by hand with grep on the 2025-10-25 copy:
 *   grep -c '^!'                          6     comments
 *   grep -c '^||'                         3346  "||host/path^$all" rules ("$all" each)
 *   grep -cE '^[0-9.]+$'                  2307  bare IPv4 addresses
 *   grep -vcE '^(!|\|\||[0-9.]+$)'        601   bare host names
 *   grep -cE '^\|\|[^/]*\^\$all$'         1     a "||host^" rule with no path
 *   grep -v '^!' | grep -c '[*#~]'        0     nothing that needs pattern matching
 *   grep -c '@'                           6     '@' inside a path, not userinfo */
START_TEST(urlhaus)
{
    FILE *f = open_urlhaus();
    ck_assert_msg(f, "data/urlhaus-filter-online.txt not found under $srcdir (or $URLHAUS_LIST)");
    struct tally t;
    tally_list(f, URL_KIND_URL, &t);
    ck_assert_uint_eq(t.lines, 6260);
    ck_assert_uint_eq(t.cls[LISTS_COMMENT], 6);
    ck_assert_uint_eq(t.cls[LISTS_KEPT], 3346 + 2307 + 601);
    ck_assert_uint_eq(t.cls[LISTS_REJECTED], 0);
    ck_assert_uint_eq(t.cls[LISTS_BLANK] + t.cls[LISTS_IGNORED], 0);
    ck_assert_uint_eq(t.keys, 3346 + 2307 + 601);
    ck_assert_uint_eq(t.ipv4_keys, 2307);
    ck_assert_uint_eq(t.opts, 3346);
    /* 15 rules repeat another but for a "//" in the path: 14 web.archive.org
     * ".../http://..." beside ".../http:/...", one cdn.pixelbin.io "//". */
    ck_assert_uint_eq(t.distinct, 3346 + 2307 + 601 - 15);

    /* For host keys every rule naming a path is refused: blocking all of
     * bitbucket.org for one file would be wrong. */
    tally_list(f, URL_KIND_HOST, &t);
    ck_assert_uint_eq(t.lines, 6260);
    ck_assert_uint_eq(t.cls[LISTS_COMMENT], 6);
    ck_assert_uint_eq(t.cls[LISTS_KEPT], 2307 + 601 + 1);
    ck_assert_uint_eq(t.cls[LISTS_REJECTED], 3346 - 1);
    ck_assert_uint_eq(t.reason[LISTS_REJ_PATH_FOR_HOST], 3346 - 1);
    ck_assert_uint_eq(t.keys, 2307 + 601 + 1);
    ck_assert_uint_eq(t.ipv4_keys, 2307);
    fclose(f);
}
END_TEST

/* Some lines of the list and their keys, one of each shape. */
START_TEST(urlhaus_shapes)
{
    KEYS(LISTS_ADBLOCK, U, "1.1.104.12", "1.1.104.12/");
    KEYS(LISTS_ADBLOCK, U, "14-0-204-188.static.pccw-hkt.com", "14-0-204-188.static.pccw-hkt.com/");
    KEYS(LISTS_ADBLOCK, U, "||wegrowcoaching.com^$all", "wegrowcoaching.com/");
    KEYS(LISTS_ADBLOCK, U,
         "||bitbucket.org/dfffrf/dfdf/downloads/"
         "notificaci%c3%b3n_demanda_virtual_juzgado_09_de_circuito_de_bogot%c3%a1.zip^$all",
         "bitbucket.org/dfffrf/dfdf/downloads/"
         "notificaci%C3%B3n_demanda_virtual_juzgado_09_de_circuito_de_bogot%C3%A1.zip");
    KEYS(LISTS_ADBLOCK, U, "||www2.0zz0.com//2025/07/19/15/683192372.png^$all",
         "www2.0zz0.com/2025/07/19/15/683192372.png");
    KEYS(LISTS_ADBLOCK, U, "||cdn.jsdelivr.net/gh/documents-release/office@master/rules.js^$all",
         "cdn.jsdelivr.net/gh/documents-release/office@master/rules.js");
    CLASS(LISTS_ADBLOCK, U, "! Expires: 12 hours (update frequency)", LISTS_COMMENT);
}
END_TEST

static Suite *url_lists_suite(void)
{
    Suite *s = suite_create("lists");
    TCase *tc = tcase_create("formats");
    tcase_add_test(tc, plain);
    tcase_add_test(tc, urls);
    tcase_add_test(tc, hosts);
    tcase_add_test(tc, adblock_kept);
    tcase_add_test(tc, adblock_skipped);
    tcase_add_test(tc, adblock_rejected);
    tcase_add_test(tc, hostile);
    tcase_add_test(tc, names);
    suite_add_tcase(s, tc);
    tc = tcase_create("urlhaus");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, urlhaus);
    tcase_add_test(tc, urlhaus_shapes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(url_lists_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
