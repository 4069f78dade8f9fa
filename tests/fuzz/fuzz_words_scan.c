/* libFuzzer harness for words/norm and words/scan (what a word filter will
 * run on every text a client sends): the first byte is the match cap, the
 * rest the text, any bytes. A list with every feature (CJK, exceptions,
 * phrases, * ends) is compiled once. Checks matches are inside the text,
 * sorted, never exceptions, the same on a second scan with the same scratch,
 * that both masks keep their promised lengths, and, on a second list that
 * takes the ASCII skip, that the skip gives what one exact run gives (the
 * same matches in the same order, the same cap). Build: `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "words/words_int.h"

static struct words_matcher *g_m, *g_m2;
static struct words_scratch *g_s;

static const char g_list[] = "fuck\nass\n*hole\ncunt*\nblow job\n成人\n@@成人牙刷\n法輪\n"
                             "@@class\n*a*\nＡＢＣ\n@@a b\ncafé\nx y z\n";
/* No `*` start: the ASCII skip is on for it (words_fast.on), and its scans
 * must be those of one exact run. */
/* `a` and `@@b ya`: an exception that may begin before where an exact run
 * starts (a run that stopped too soon let `eb y a` report `a`). */
static const char g_list2[] = "fuck\nass\ncunt*\nblow job\n成人\n@@成人牙刷\n@@class act\n"
                              "ＡＢＣ\n@@a b\ncafé\nx y z\nab\nto be\n@@glass\na\n@@b ya\n";

static struct words_matcher *compile(const char *list, size_t len)
{
    struct words_opts o;
    words_opts_default(&o);
    char err[256];
    struct words_builder *b = words_builder_new(&o, err, sizeof err);
    FUZZ_CHECK(b != NULL, "%s", err);
    FUZZ_CHECK(words_builder_add(b, list, len, err, sizeof err) == 0, "%s", err);
    struct words_matcher *m = words_builder_compile(b, err, sizeof err);
    FUZZ_CHECK(m != NULL, "%s", err);
    words_builder_free(b);
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_m == NULL) {
        g_m = compile(g_list, sizeof g_list - 1);
        g_m2 = compile(g_list2, sizeof g_list2 - 1);
        FUZZ_CHECK(g_m2->fast.on, "the second list should take the skip");
        g_s = words_scratch_new();
    }
    if (size == 0)
        return 0;
    size_t max = data[0] % 40;
    const char *t = (const char *)data + 1;
    size_t len = size - 1;
    static struct words_match a[64], c[64];
    size_t na, nc;
    bool capa, capc;
    FUZZ_CHECK(words_scan(g_m, g_s, t, len, a, max, &na, &capa) == 0, "scan failed");
    FUZZ_CHECK(na <= max && (na == max || !capa), "cap");
    for (size_t i = 0; i < na; i++) {
        FUZZ_CHECK(a[i].start < a[i].end && a[i].end <= len, "match out of the text");
        FUZZ_CHECK(i == 0 || a[i - 1].start <= a[i].start, "not sorted");
        FUZZ_CHECK(!words_is_exception(g_m, a[i].word), "an exception reported");
    }
    FUZZ_CHECK(words_scan(g_m, g_s, t, len, c, max, &nc, &capc) == 0, "scan failed");
    FUZZ_CHECK(na == nc && capa == capc && memcmp(a, c, na * sizeof a[0]) == 0,
               "a second scan differs");
    FUZZ_CHECK(words_scan_how(g_m2, g_s, t, len, a, max, &na, &capa, true) == 0, "scan failed");
    FUZZ_CHECK(words_scan_how(g_m2, g_s, t, len, c, max, &nc, &capc, false) == 0, "scan failed");
    FUZZ_CHECK(na == nc && capa == capc && memcmp(a, c, na * sizeof a[0]) == 0,
               "the skip and one exact run differ");
    /* The skip's portable copy, where the CPU took the AVX2 and BMI2 one. */
    if (g_m2->fast.bmi2) {
        g_m2->fast.bmi2 = false;
        int rc = words_scan_how(g_m2, g_s, t, len, a, max, &na, &capa, true);
        g_m2->fast.bmi2 = true;
        FUZZ_CHECK(rc == 0, "scan failed");
        FUZZ_CHECK(na == nc && capa == capc && memcmp(a, c, na * sizeof a[0]) == 0,
                   "the skip's two copies differ");
    }
    char *out = malloc(len ? len : 1);
    FUZZ_CHECK(words_mask(t, len, a, na, '*', true, out) == len, "per-byte mask length");
    FUZZ_CHECK(words_mask(t, len, a, na, '*', false, out) <= len, "mask grew");
    free(out);
    return 0;
}
