/* fuzz_created: what a filter created at run time is read from
 * (src/store/created.h): a CREATE's option words (from a client, on every
 * front) and a state file's block (from disk, written by us but perhaps
 * edited or damaged).
 *
 * Input: u8 mode, then the text. Mode bit 0 clear: the text is split on
 * spaces into name=value words (the first word the filter name) and built
 * into a CREATE with reload_op_opt, as the line protocol does; set: the text
 * is a state file. What is checked: a refusal says why; a block that parses
 * is one empty filter with a journal, no file and no allow-list, whose
 * options written back as config text (conf_filter_text, what the state file
 * holds) parse to the same values again. */
#include "config.h"

#include <stdlib.h>

#include "conf/conf.h"
#include "fuzz.h"
#include "store/created.h"

static void same(const struct conf_filter *a, const struct conf_filter *b)
{
    FUZZ_CHECK(strcmp(a->name, b->name) == 0, "name %s / %s", a->name, b->name);
    FUZZ_CHECK(a->capacity == b->capacity, "capacity");
    FUZZ_CHECK(a->fpr == b->fpr, "fpr %.17g / %.17g", a->fpr, b->fpr);
    FUZZ_CHECK(a->layout == b->layout && a->keys == b->keys && a->growth == b->growth, "shape");
    FUZZ_CHECK(a->max_memory == b->max_memory && a->window_ms == b->window_ms, "bounds");
    FUZZ_CHECK(!a->window || a->slices == b->slices, "slices");
    FUZZ_CHECK(a->fsync == b->fsync && a->full == b->full, "policies");
    FUZZ_CHECK(strcmp(a->journal, b->journal) == 0, "journal");
    FUZZ_CHECK((!a->file && !b->file) || (a->file && b->file && !strcmp(a->file, b->file)),
               "file");
}

static void round_trip(const struct conf_filter *cf)
{
    char err[1024], text[24576];
    FUZZ_CHECK(cf->journal && cf->journal[0] == '/' && !cf->allow,
               "not a filter with a journal and no allow-list");
    FUZZ_CHECK(!cf->file || cf->file[0] == '/', "file not absolute");
    FUZZ_CHECK(cf->capacity > 0, "no capacity");
    int n = conf_filter_text(cf, text, sizeof(text));
    FUZZ_CHECK(n > 0, "its block does not fit");
    struct conf_filter *again = created_parse_block(text, (size_t)n, "/state/c1.conf", err,
                                                    sizeof(err));
    FUZZ_CHECK(again != NULL, "its own block does not parse: %s\n%s", err, text);
    same(cf, again);
    created_free_cf(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    unsigned mode = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    char err[1024] = "";
    struct conf_filter *cf = NULL;
    if (mode & 1) {
        cf = created_parse_block(text, len, "/state/c1.conf", err, sizeof(err));
    } else {
        struct reload_op op;
        memset(&op, 0, sizeof(op));
        op.kind = RELOAD_OP_CREATE;
        size_t i = 0, w = 0;
        while (i < len) {
            size_t j = i;
            while (j < len && text[j] != ' ')
                j++;
            const char *word = text + i;
            size_t wl = j - i;
            i = j + 1;
            if (wl == 0)
                continue;
            if (w++ == 0) {
                if (wl > FNAME_MAX || !fname_valid(word, wl))
                    return 0; /* the fronts' parsers refuse it first */
                memcpy(op.name, word, wl);
                continue;
            }
            const char *eq = memchr(word, '=', wl);
            if (!eq || reload_op_opt(&op, word, (size_t)(eq - word), eq + 1,
                                     wl - (size_t)(eq - word) - 1, err, sizeof(err)) != 0)
                return 0;
        }
        if (w == 0)
            return 0;
        cf = created_parse_op(&op, "/state/c1.journal", err, sizeof(err));
    }
    if (!cf) {
        FUZZ_CHECK(err[0] != '\0', "refused without a reason");
        return 0;
    }
    round_trip(cf);
    created_free_cf(cf);
    return 0;
}
