/* libFuzzer harness for words/delta (what a words filter runs on the items
 * of ADD, REMOVE, ALLOW, UNALLOW and on every text it then scans): the input
 * is lines; a line's first byte picks what the rest is: an item of one of
 * the four changes (any bytes, as a client sends them), or a text, scanned
 * with the changes so far published. A list with every feature is compiled
 * once; each input starts a fresh delta over it. Checks a bad item is
 * refused by check and apply alike, the matches are inside the text, sorted,
 * at most the cap, their words resolvable, never a word the delta removed
 * (REMOVE'd and not added back in the same input), the same matches as
 * the scan without its shortcuts (the added words scanned over every text,
 * the added exceptions over all of it), and that the retired views free.
 * Build: `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "words/delta.h"
#include "words/words.h"

static struct words_matcher *g_m;
static struct words_scratch *g_s;

static const char g_list[] = "fuck\nass\n*hole\ncunt*\nblow job\n成人\n@@成人牙刷\n法輪\n"
                             "@@class\n*a*\nＡＢＣ\n@@a b\ncafé\nx y z\n";

#define CAP 32

static void scan(struct words_delta *d, const char *t, size_t len, size_t max)
{
    static struct words_match buf[3 * CAP];
    size_t n;
    bool capped;
    const struct words_view *v = words_delta_view(d);
    FUZZ_CHECK(words_view_scan(g_m, v, g_s, t, len, buf, CAP, max, &n, &capped) == 0,
               "scan failed");
    /* Not n == max when capped: the list's scan may stop at the buffer's
     * size, then lose matches to the delta (removed, covered). */
    FUZZ_CHECK(n <= max, "cap");
    /* The same without the shortcuts (the added words' pre-check, the added
     * exceptions' windows), when neither stopped at the cap. */
    static struct words_match all[3 * CAP];
    size_t n2;
    bool capped2;
    FUZZ_CHECK(words_view_scan_how(g_m, v, g_s, t, len, all, CAP, max, &n2, &capped2, false) == 0,
               "scan failed");
    if (!capped && !capped2) {
        FUZZ_CHECK(n == n2, "%zu matches, %zu without the shortcuts", n, n2);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(buf[i].start == all[i].start && buf[i].end == all[i].end &&
                           buf[i].word == all[i].word,
                       "match %zu differs without the shortcuts", i);
    }
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(buf[i].start < buf[i].end && buf[i].end <= len, "match out of the text");
        FUZZ_CHECK(i == 0 || buf[i - 1].start <= buf[i].start, "not sorted");
        size_t wl;
        const char *w = words_view_word(g_m, v, buf[i].word, &wl);
        FUZZ_CHECK(w != NULL && wl > 0, "a match without its word");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256], why[256], why2[256];
    if (g_m == NULL) {
        struct words_opts o;
        words_opts_default(&o);
        struct words_builder *b = words_builder_new(&o, err, sizeof err);
        FUZZ_CHECK(b != NULL, "%s", err);
        FUZZ_CHECK(words_builder_add(b, g_list, sizeof g_list - 1, err, sizeof err) == 0, "%s",
                   err);
        g_m = words_builder_compile(b, err, sizeof err);
        FUZZ_CHECK(g_m != NULL, "%s", err);
        words_builder_free(b);
        g_s = words_scratch_new();
    }
    struct words_delta *d = words_delta_new(g_m, 16, err, sizeof err);
    FUZZ_CHECK(d != NULL, "%s", err);
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        if (e > p) {
            unsigned sel = (unsigned char)p[0];
            const char *item = p + 1;
            size_t len = (size_t)(e - item);
            if (sel % 5 == 4) {
                FUZZ_CHECK(words_delta_publish(d, err, sizeof err) == 0, "%s", err);
                scan(d, item, len, sel / 5 % (CAP + 1));
            } else {
                enum words_delta_op op = (enum words_delta_op)(sel % 5);
                int ok = words_delta_check(d, op, item, len, why, sizeof why);
                int admit = words_delta_admit(d, op, 1, why2, sizeof why2);
                if (admit == 0) {
                    int rc = words_delta_apply(d, op, item, len, why2, sizeof why2);
                    FUZZ_CHECK((ok == 0) == (rc >= 0), "check and apply disagree");
                }
            }
        }
        p = e + 1;
    }
    FUZZ_CHECK(words_delta_publish(d, err, sizeof err) == 0, "%s", err);
    scan(d, (const char *)data, size, CAP);
    words_view_free_list(words_delta_take_retired(d));
    words_delta_free(d);
    return 0;
}
