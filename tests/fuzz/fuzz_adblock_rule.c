/* libFuzzer harness for adblock/rule (the list line parser): each input line
 * is parsed. Checks that every line gets exactly one known class, that a
 * rejection carries a reason, and that a network rule's parts (pattern, host
 * part, options, domain-list values, the $badfilter cut) lie inside the line
 * in the right order. Build: `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adblock/rule.h"
#include "fuzz.h"

/* A $badfilter rule and the rule written the same without that option have the
 * same key (what the engine cancels by), when the latter is a rule at all. */
static void check_twin(const struct adblock_rule *r, const char *key)
{
    size_t n = r->len - r->bad_len;
    char *t = malloc(n ? n : 1);
    if (t == NULL)
        return;
    memcpy(t, r->line, r->bad_off);
    memcpy(t + r->bad_off, r->line + r->bad_off + r->bad_len, r->len - r->bad_off - r->bad_len);
    if (n > 0 && t[n - 1] == '$')
        n--;
    struct adblock_rule twin;
    if (adblock_rule_parse(t, n, &twin) == ADBLOCK_CLASS_NETWORK && !twin.badfilter &&
        twin.opt_off >= r->opt_off) {
        char *k2 = adblock_rule_key(&twin);
        FUZZ_CHECK(k2 == NULL || strcmp(k2, key) == 0, "twin key %s, $badfilter key %s", k2, key);
        free(k2);
    }
    free(t);
}

static void check_line(const char *s, size_t n)
{
    struct adblock_rule r;
    enum adblock_class c = adblock_rule_parse(s, n, &r);
    FUZZ_CHECK(c == r.cls && (unsigned)c < ADBLOCK_CLASS_COUNT, "class %d", (int)c);
    FUZZ_CHECK(strcmp(adblock_class_name(c), "unknown") != 0, "unnamed class %d", (int)c);
    FUZZ_CHECK(r.line >= s && r.line + r.len <= s + n, "trimmed line outside the input");
    if (c == ADBLOCK_CLASS_REJECTED) {
        FUZZ_CHECK(r.why[0] != 0, "a rejection without a reason");
        FUZZ_CHECK((unsigned)r.reason < ADBLOCK_REJ_COUNT, "reason %d", (int)r.reason);
    }
    if (c != ADBLOCK_CLASS_NETWORK)
        return;
    FUZZ_CHECK(r.pat_off <= r.pat_end && r.pat_end <= r.len, "pattern %zu..%zu of %zu", r.pat_off,
               r.pat_end, r.len);
    FUZZ_CHECK(r.pat_off <= 4, "pattern starts at %zu", r.pat_off);
    FUZZ_CHECK(r.host_len <= r.pat_end - r.pat_off, "host part longer than the pattern");
    FUZZ_CHECK(r.opt_off <= r.len, "options past the end");
    FUZZ_CHECK(r.types != 0 && (r.types & ~ADBLOCK_TYPES_ALL) == 0, "types %#x", r.types);
    FUZZ_CHECK(r.ndom <= ADBLOCK_RULE_DOMS, "%u domain options", r.ndom);
    for (unsigned i = 0; i < r.ndom; i++)
        FUZZ_CHECK(r.dom[i].len > 0 && r.dom[i].off >= r.opt_off &&
                       r.dom[i].off + r.dom[i].len <= r.len,
                   "domain value %u outside the options", i);
    if (r.badfilter)
        FUZZ_CHECK(r.bad_off >= r.opt_off - 1 && r.bad_off + r.bad_len <= r.len,
                   "badfilter cut outside the options");
    if (r.regex)
        FUZZ_CHECK(r.anchor == 0 && r.host_len == 0, "a regex with anchors");
    char *key = adblock_rule_key(&r);
    FUZZ_CHECK(key != NULL, "no $badfilter key");
    if (r.badfilter && key != NULL)
        check_twin(&r, key);
    free(key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    size_t i = 0;
    while (i <= size) {
        const char *nl = i < size ? memchr(s + i, '\n', size - i) : NULL;
        size_t end = nl ? (size_t)(nl - s) : size;
        /* an exact-length heap copy: ASan sees any read past the line */
        char *line = malloc(end - i ? end - i : 1);
        if (line == NULL)
            return 0;
        memcpy(line, s + i, end - i);
        check_line(line, end - i);
        free(line);
        i = end + 1;
    }
    return 0;
}
