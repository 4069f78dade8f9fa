/* libFuzzer harness for words/list and words/build (the word-list parser
 * and compiler, which will read the lists given to `bloomgate build`): the
 * first byte picks the settings, the rest is list text. Checks the summary
 * adds up and, for one input in sixteen (the first byte again), that the
 * compiled matcher serialises and loads back and the loaded one scans as the
 * original does, matches within the text. Builders are made
 * once per setting and cleared between inputs. Build: `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "words/words.h"

#define NSET 4
static struct words_builder *g_b[NSET];

static struct words_builder *builder(unsigned which)
{
    if (g_b[which] == NULL) {
        struct words_opts o;
        words_opts_default(&o);
        o.zh = which == 0;
        o.whole_word = which != 1;
        o.skip = which == 2 ? "none" : which == 3 ? "P -U+002E Mn U+2000-U+206F" : NULL;
        char err[256];
        g_b[which] = words_builder_new(&o, err, sizeof err);
        FUZZ_CHECK(g_b[which] != NULL, "%s", err);
    }
    words_builder_clear(g_b[which]);
    return g_b[which];
}

static size_t scan(const struct words_matcher *m, struct words_scratch *s, const char *t,
                   size_t len, struct words_match *mm, size_t max)
{
    size_t n;
    bool capped;
    FUZZ_CHECK(words_scan(m, s, t, len, mm, max, &n, &capped) == 0, "scan failed");
    FUZZ_CHECK(n <= max, "more matches than asked");
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(mm[i].start < mm[i].end && mm[i].end <= len, "match out of the text");
        FUZZ_CHECK(mm[i].word < words_count(m), "bad word id");
        FUZZ_CHECK(!words_is_exception(m, mm[i].word), "an exception reported");
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    struct words_builder *b = builder(data[0] % NSET);
    const char *list = (const char *)data + 1;
    char err[256];
    FUZZ_CHECK(words_builder_add(b, list, size - 1, err, sizeof err) == 0, "%s", err);
    const struct words_summary *sum = words_builder_summary(b);
    struct words_matcher *m = words_builder_compile(b, err, sizeof err);
    FUZZ_CHECK(m != NULL, "%s", err);
    FUZZ_CHECK(sum->nkept <= sum->rejects && sum->nkept <= WORDS_REJECTS_KEPT, "kept rejects");
    FUZZ_CHECK(sum->words + sum->exceptions == words_count(m), "counts");
    FUZZ_CHECK(sum->words + sum->exceptions + sum->duplicates + sum->rejects <= sum->lines,
               "more entries than lines");
    /* The round trip (a load rebuilds the 64 Ki-entry table: slow under
     * the sanitizers) for one input in sixteen, picked by the first byte. */
    if (data[0] & 0xf0) {
        words_matcher_free(m);
        return 0;
    }
    unsigned char *blob;
    size_t bl;
    FUZZ_CHECK(words_serialize(m, &blob, &bl, err, sizeof err) == 0, "%s", err);
    struct words_matcher *m2 = words_load(blob, bl, err, sizeof err);
    FUZZ_CHECK(m2 != NULL, "a serialised matcher refused: %s", err);
    struct words_scratch *s = words_scratch_new();
    FUZZ_CHECK(s != NULL, "scratch");
    static struct words_match a[64], c[64];
    /* The list scanned as a text: most of its words are found in it. */
    size_t na = scan(m, s, list, size - 1, a, 64);
    size_t nc = scan(m2, s, list, size - 1, c, 64);
    FUZZ_CHECK(na == nc && memcmp(a, c, na * sizeof a[0]) == 0, "the loaded matcher differs");
    words_scratch_free(s);
    words_matcher_free(m2);
    words_matcher_free(m);
    free(blob);
    return 0;
}
