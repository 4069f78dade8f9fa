/* words/list: the list's lines to normalised entries (docs/words.md, "List
 * format"): comments, `@@` exceptions, `*` ends for substring matching,
 * rejects with their reasons. The builder is owned by one thread. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words/list_int.h"

void words_opts_default(struct words_opts *o)
{
    o->nfkc = true;
    o->zh = true;
    o->whole_word = true;
    o->skip = NULL;
    o->opencc_config = NULL;
}

/* Any thread: the OpenCC pairs and the normalisation table are made here,
 * the longest step of a small build. */
struct words_builder *words_builder_new(const struct words_opts *o, char *err, size_t errlen)
{
    struct words_builder *b = calloc(1, sizeof *b);
    if (b == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->opts = *o;
    b->skip = strdup(o->skip ? o->skip : WORDS_SKIP_DEFAULT);
    b->opts.skip = b->skip;
    b->opts.opencc_config = NULL;
    b->norm.nfkc = o->nfkc;
    b->norm.zh = o->zh;
    if (b->skip == NULL || wn_parse_skip(&b->norm, b->skip, err, errlen) != 0)
        goto fail;
    if (o->zh && wn_load_t2s(&b->norm, o->opencc_config ? o->opencc_config : WORDS_OPENCC_T2S, err,
                             errlen) != 0)
        goto fail;
    if (wn_build_table(&b->norm, err, errlen) != 0)
        goto fail;
    return b;
fail:
    words_builder_free(b);
    return NULL;
}

void words_builder_clear(struct words_builder *b)
{
    b->nents = b->ncps = b->ntext = 0;
    b->line = 0;
    memset(&b->sum, 0, sizeof b->sum);
}

void words_builder_free(struct words_builder *b)
{
    if (b == NULL)
        return;
    wn_free(&b->norm);
    free(b->skip);
    free(b->ents);
    free(b->cps);
    free(b->cls);
    free(b->text);
    free(b);
}

const struct words_summary *words_builder_summary(const struct words_builder *b)
{
    return &b->sum;
}

const char *words_reject_name(enum words_reject r)
{
    static const char *const names[WORDS_REJ_COUNT] = {
        [WORDS_REJ_LINE_TOO_LONG] = "line-too-long",   [WORDS_REJ_INVALID_UTF8] = "invalid-utf8",
        [WORDS_REJ_EXCEPTION_STAR] = "exception-star", [WORDS_REJ_NOTHING] = "nothing-listed",
        [WORDS_REJ_WORD_TOO_LONG] = "word-too-long",   [WORDS_REJ_ONLY_SKIPPED] = "only-skipped",
    };
    return (unsigned)r < WORDS_REJ_COUNT ? names[r] : "unknown";
}

void words_builder_on_reject(struct words_builder *b, words_reject_fn fn, void *ctx)
{
    b->on_reject = fn;
    b->on_reject_ctx = ctx;
}

/* Counts the line being added as a reject: kept in the summary while there
 * is room, and told to on_reject whatever the count. */
__attribute__((format(printf, 3, 4))) static void
wl_reject(struct words_builder *b, enum words_reject reason, const char *fmt, ...)
{
    char why[sizeof b->sum.first[0].reason];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    b->sum.rejects++;
    if (b->sum.nkept < WORDS_REJECTS_KEPT) {
        size_t i = b->sum.nkept++;
        b->sum.first[i].line = b->line;
        memcpy(b->sum.first[i].reason, why, sizeof why);
    }
    if (b->on_reject)
        b->on_reject(b->on_reject_ctx, b->line, reason, why, b->raw, b->raw_len);
}

static int wl_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *t = realloc(*p, c * elem);
    if (t == NULL)
        return -1;
    *p = t;
    *cap = c;
    return 0;
}

static bool wl_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* One line: its syntax stripped, the word normalised and kept as an entry
 * (duplicates are found at compile time). */
int words_builder_add_line(struct words_builder *b, const char *line, size_t len, char *err,
                           size_t errlen)
{
    b->line++;
    b->sum.lines++;
    b->raw = line;
    b->raw_len = len;
    while (len && wl_blank(line[0]))
        line++, len--;
    while (len && wl_blank(line[len - 1]))
        len--;
    if (len == 0 || line[0] == '#')
        return 0;
    if (len > WORDS_MAX_LINE) {
        wl_reject(b, WORDS_REJ_LINE_TOO_LONG, "line longer than %d bytes", WORDS_MAX_LINE);
        return 0;
    }
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t l = wn_decode((const unsigned char *)line + i, len - i, &cp);
        if (l == 0) {
            wl_reject(b, WORDS_REJ_INVALID_UTF8, "invalid UTF-8 at byte %zu", i);
            return 0;
        }
        i += l;
    }
    uint32_t flags = 0;
    if (len >= 2 && line[0] == '@' && line[1] == '@') {
        flags |= WP_EXC;
        line += 2, len -= 2;
    }
    bool star_start = false, star_end = false;
    if (len && line[0] == '*')
        star_start = true, line++, len--;
    if (len && line[len - 1] == '*')
        star_end = true, len--;
    if (len && line[0] == '\\') /* \# \@@ \*: the character itself */
        line++, len--;
    while (len && wl_blank(line[0]))
        line++, len--;
    while (len && wl_blank(line[len - 1]))
        len--;
    if ((flags & WP_EXC) && (star_start || star_end)) {
        wl_reject(b, WORDS_REJ_EXCEPTION_STAR,
                  "an exception takes no `*`: it never checks boundaries");
        return 0;
    }
    if (len == 0) {
        wl_reject(b, WORDS_REJ_NOTHING, "nothing listed");
        return 0;
    }
    if (b->opts.whole_word && !(flags & WP_EXC)) {
        if (!star_start)
            flags |= WP_START;
        if (!star_end)
            flags |= WP_END;
    }
    /* Normalised as a text would be. */
    struct wn_iter it;
    struct wn_sym s;
    uint32_t syms[WORDS_MAX_SYMBOLS];
    uint8_t cls[WORDS_MAX_SYMBOLS];
    size_t n = 0;
    bool phrase = false, too_long = false;
    wn_iter_init(&it, &b->norm, line, len);
    while (wn_next(&it, &s)) {
        if (n == WORDS_MAX_SYMBOLS) {
            too_long = true;
            break;
        }
        phrase |= s.cls == WN_SPACE;
        syms[n] = s.cp;
        cls[n++] = s.cls;
    }
    if (too_long) {
        wl_reject(b, WORDS_REJ_WORD_TOO_LONG, "longer than %d characters after normalisation",
                  WORDS_MAX_SYMBOLS);
        return 0;
    }
    if (n == 0) {
        wl_reject(b, WORDS_REJ_ONLY_SKIPPED, "`%.*s` is only skipped characters",
                  (int)(len > 40 ? 40 : len), line);
        return 0;
    }
    /* A boundary is checked only where the word has a letter that needs one. */
    if (cls[0] != WN_WORD)
        flags &= ~WP_START;
    if (cls[n - 1] != WN_WORD)
        flags &= ~WP_END;
    if (wl_grow((void **)&b->ents, &b->capents, b->nents + 1, sizeof *b->ents) != 0 ||
        wl_grow((void **)&b->cps, &b->capcps, b->ncps + n, sizeof *b->cps) != 0 ||
        wl_grow((void **)&b->cls, &b->capcls, b->ncps + n, sizeof *b->cls) != 0 ||
        wl_grow((void **)&b->text, &b->captext, b->ntext + len, 1) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct wl_ent *e = &b->ents[b->nents++];
    e->cp_off = b->ncps;
    e->cp_len = (uint32_t)n;
    e->text_off = b->ntext;
    e->text_len = (uint32_t)len;
    e->flags = flags | (phrase ? WL_PHRASE : 0) | (star_start || star_end ? WL_SUBSTR : 0);
    e->order = (uint32_t)(b->nents - 1);
    memcpy(b->cps + b->ncps, syms, n * sizeof *syms);
    memcpy(b->cls + b->ncps, cls, n);
    b->ncps += n;
    memcpy(b->text + b->ntext, line, len);
    b->ntext += len;
    return 0;
}

/* Splits text at line ends (\n, \r\n); a NUL byte is a bad byte in a line,
 * not an end. */
int words_builder_add(struct words_builder *b, const char *text, size_t len, char *err,
                      size_t errlen)
{
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - text) : len;
        if (words_builder_add_line(b, text + i, e - i, err, errlen) != 0)
            return -1;
        i = e + 1;
    }
    return 0;
}
