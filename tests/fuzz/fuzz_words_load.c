/* libFuzzer harness for words/serial (the compiled word list's loader,
 * which will read filter files): the input is a block to load. A load
 * either fails with a reason or gives a matcher that scans a few texts
 * without a fault, its matches inside each text. The seeds are serialised
 * matchers (their checksum recomputed when the first byte is odd, so the
 * fuzzer gets past it). Build: `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "words/words.h"

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const texts[] = {"f.u.c.k you ass", "成人牙刷 成人电影 法輪功",
                                        "ＡＢＣ class \xff\xfe x y z", ""};
    static struct words_scratch *s;
    if (s == NULL)
        s = words_scratch_new();
    /* A copy whose checksum matches, so the checks behind it are reached. */
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    if (size >= 32) {
        uint64_t h = fnv(buf + 32, size - 32);
        for (int i = 0; i < 8; i++)
            buf[24 + i] = (uint8_t)(h >> (8 * i));
    }
    char err[256] = "";
    struct words_matcher *m = words_load(buf, size, err, sizeof err);
    if (m == NULL) {
        FUZZ_CHECK(err[0] != 0, "a refusal without a reason");
        free(buf);
        return 0;
    }
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct words_match mm[16];
        size_t n, len = strlen(texts[i]);
        bool capped;
        FUZZ_CHECK(words_scan(m, s, texts[i], len, mm, 16, &n, &capped) == 0, "scan failed");
        for (size_t k = 0; k < n; k++) {
            FUZZ_CHECK(mm[k].start < mm[k].end && mm[k].end <= len, "match out of the text");
            size_t wl;
            const char *w = words_word(m, mm[k].word, &wl);
            FUZZ_CHECK(w != NULL, "word");
        }
    }
    words_matcher_free(m);
    free(buf);
    return 0;
}
