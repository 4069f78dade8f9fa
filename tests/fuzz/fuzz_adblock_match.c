/* libFuzzer harness for the Adblock engine (adblock/engine.c, match.c,
 * request.c): the input up to its first NUL byte is a list, compiled; each
 * line after it is a request `url<TAB>type<TAB>from`, matched. Checks that the
 * build never fails on any list, that a verdict names a rule exactly when it
 * blocks or an exception un-blocks, that a named rule is the text of one of
 * the list's lines, and that the engine serialised and loaded back gives the
 * same verdicts; that the reject hook is told of every line not served, each
 * a whole line, in order. Build: `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "adblock/adblock.h"
#include "fuzz.h"

static struct adblock_ctx *g_c;

/* Is t[0..n) one whole line of the list (trimmed of blanks)? */
static int is_line_of(const char *list, size_t len, const char *t, size_t n)
{
    for (const char *p = list; p + n <= list + len; p++) {
        p = memchr(p, t[0], (size_t)(list + len - p));
        if (p == NULL || p + n > list + len)
            return 0;
        if (memcmp(p, t, n) == 0)
            return 1;
    }
    return 0;
}

/* What the builder's reject hook was told: each line must be a whole line
 * of the list, after the previous one. */
struct told {
    const char *list, *next; /* the list; where the next line may start */
    size_t len;
    uint64_t lines;
};

static void on_reject(void *ctx, const char *reason, const char *why, const char *line, size_t n)
{
    struct told *t = ctx;
    FUZZ_CHECK(reason[0] != 0 && strcmp(reason, "unknown") != 0 && why[0] != 0,
               "reject without a reason (%s: %s)", reason, why);
    FUZZ_CHECK(line >= t->next && line + n <= t->list + t->len, "rejected line out of order");
    FUZZ_CHECK((line == t->list || line[-1] == '\n') &&
                   (line + n == t->list + t->len || line[n] == '\n') &&
                   memchr(line, '\n', n) == NULL,
               "rejected `%.*s` is not a whole line", (int)n, line);
    t->next = line + n;
    t->lines++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_c == NULL && (g_c = adblock_ctx_new()) == NULL)
        return 0;
    const char *s = (const char *)data;
    const char *nul = memchr(s, 0, size);
    size_t list_len = nul ? (size_t)(nul - s) : size;
    char err[256];
    struct adblock_builder *b = adblock_builder_new();
    if (b == NULL)
        return 0;
    char *list = malloc(list_len ? list_len : 1);
    if (list == NULL) {
        adblock_builder_free(b);
        return 0;
    }
    memcpy(list, s, list_len);
    struct told told = {list, list, list_len, 0};
    adblock_builder_on_reject(b, on_reject, &told);
    FUZZ_CHECK(adblock_builder_add(b, list, list_len, err, sizeof err) == 0, "add: %s", err);
    struct adblock_engine *e = adblock_builder_finish(b, err, sizeof err);
    adblock_builder_free(b);
    FUZZ_CHECK(e != NULL, "finish: %s", err);
    const struct adblock_summary *sum = adblock_engine_summary(e);
    uint64_t unserved = 0;
    for (int c = 0; c < ADBLOCK_CLASS_COUNT; c++)
        if (adblock_unserved_why((enum adblock_class)c))
            unserved += sum->by_class[c];
    FUZZ_CHECK(told.lines == unserved, "%llu lines told of, %llu not served",
               (unsigned long long)told.lines, (unsigned long long)unserved);
    void *blob = NULL;
    size_t blob_len = 0;
    FUZZ_CHECK(adblock_engine_serialize(e, &blob, &blob_len, err, sizeof err) == 0, "serialize: %s",
               err);
    struct adblock_engine *e2 = adblock_engine_load(blob, blob_len, err, sizeof err);
    FUZZ_CHECK(e2 != NULL, "load of a serialised engine: %s", err);
    free(blob);
    size_t i = nul ? list_len + 1 : size;
    while (i < size) {
        const char *nl = memchr(s + i, '\n', size - i);
        size_t end = nl ? (size_t)(nl - s) : size;
        size_t n = end - i;
        char *line = malloc(n ? n : 1);
        if (line == NULL)
            break;
        memcpy(line, s + i, n);
        const char *f[3] = {line, NULL, NULL};
        size_t fl[3] = {n, 0, 0};
        for (int k = 0; k < 2 && f[k]; k++) {
            const char *tab = memchr(f[k], '\t', fl[k]);
            if (tab == NULL)
                break;
            f[k + 1] = tab + 1;
            fl[k + 1] = fl[k] - (size_t)(tab + 1 - f[k]);
            fl[k] = (size_t)(tab - f[k]);
        }
        struct adblock_request r = {f[0], fl[0], -1, f[2], f[2] ? fl[2] : 0, -1};
        if (f[1])
            r.type = adblock_type_parse(f[1], fl[1]);
        if (n > 0)
            r.method = (int)((unsigned char)line[0] % (ADBLOCK_METHOD_COUNT + 1)) - 1;
        struct adblock_verdict v;
        if (adblock_match(e, g_c, &r, &v, err, sizeof err) == 0) {
            FUZZ_CHECK(!v.block || (v.rule != NULL && v.exception == NULL),
                       "a block without its rule");
            FUZZ_CHECK(v.exception == NULL || v.rule != NULL, "an exception with no block");
            if (v.rule)
                FUZZ_CHECK(v.rule_len > 0 && is_line_of(list, list_len, v.rule, v.rule_len),
                           "rule `%.*s` is no line of the list", (int)v.rule_len, v.rule);
            if (v.exception)
                FUZZ_CHECK(is_line_of(list, list_len, v.exception, v.exception_len),
                           "exception is no line of the list");
            struct adblock_verdict v2;
            FUZZ_CHECK(adblock_match(e2, g_c, &r, &v2, err, sizeof err) == 0, "loaded: %s", err);
            FUZZ_CHECK(v2.block == v.block && v2.rule_len == v.rule_len &&
                           v2.exception_len == v.exception_len &&
                           (v.rule == NULL || memcmp(v.rule, v2.rule, v.rule_len) == 0),
                       "the loaded engine differs");
        } else {
            FUZZ_CHECK(fl[0] > 8192, "a request refused: %s", err);
        }
        free(line);
        i = end + 1;
    }
    free(list);
    adblock_engine_free(e);
    adblock_engine_free(e2);
    return 0;
}
