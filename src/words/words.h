/* words: blocked-word lists scanned in text (docs/words.md). A builder reads
 * list text and compiles an immutable matcher (Aho-Corasick over normalised
 * code points); any number of threads scan with the same matcher, each with
 * its own scratch. A matcher serialises to one block and loads back with
 * every offset checked. Pure: utf8proc, and OpenCC in the builder only. */
#ifndef BLOOMGATE_WORDS_H
#define BLOOMGATE_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-list settings, fixed at build time and kept in the serialised block. */
struct words_opts {
    bool nfkc;                 /* NFKC and case folding of list and text (default on) */
    bool zh;                   /* traditional Chinese folded to simplified (default on) */
    bool whole_word;           /* words of space-separated scripts match whole (default on) */
    const char *skip;          /* the skipped characters (docs/words.md); NULL: default */
    const char *opencc_config; /* NULL: WORDS_OPENCC_T2S */
};

#define WORDS_SKIP_DEFAULT "P S Cf space"
#define WORDS_OPENCC_T2S "/usr/share/opencc/t2s.json"
#define WORDS_MAX_SYMBOLS 128 /* a word's length after normalisation, code points */
#define WORDS_MAX_LINE 4096   /* bytes in one list line */
#define WORDS_REJECTS_KEPT 8  /* the rejects a summary keeps with their reasons */

void words_opts_default(struct words_opts *o);

/* What a build read: the counts of a build summary, and the first rejects. */
struct words_summary {
    size_t lines;      /* lines read, comments and blanks included */
    size_t words;      /* words kept (single words, substrings included) */
    size_t phrases;    /* kept entries holding a space */
    size_t exceptions; /* @@ entries kept */
    size_t substrings; /* kept entries with a * end (no whole-word check there) */
    size_t duplicates; /* entries equal after normalisation to an earlier one */
    size_t rejects;    /* lines refused */
    size_t nkept;      /* entries of first[] filled */
    struct {
        size_t line; /* 1-based, within the text given to words_builder_add */
        char reason[112];
    } first[WORDS_REJECTS_KEPT];
};

struct words_builder;
struct words_matcher;
struct words_scratch;

/* Why a list line was rejected (docs/words.md, "List format"). */
enum words_reject {
    WORDS_REJ_LINE_TOO_LONG,  /* over WORDS_MAX_LINE bytes */
    WORDS_REJ_INVALID_UTF8,   /* not UTF-8 */
    WORDS_REJ_EXCEPTION_STAR, /* @@ with a * end */
    WORDS_REJ_NOTHING,        /* nothing left once the syntax is removed (`@@` alone) */
    WORDS_REJ_WORD_TOO_LONG,  /* over WORDS_MAX_SYMBOLS after normalisation */
    WORDS_REJ_ONLY_SKIPPED,   /* only skipped characters */
    WORDS_REJ_COUNT
};

/* The reason's short name, for a rejects file: "invalid-utf8" and so on. */
const char *words_reject_name(enum words_reject r);

/* Told of every rejected line as it is found (the summary keeps only the
 * first WORDS_REJECTS_KEPT): its 1-based line number, the reason and its
 * text, and the line as given to words_builder_add_line (nothing trimmed;
 * words_builder_add gives it without its LF, a pointer into its text). On
 * the builder's thread. */
typedef void (*words_reject_fn)(void *ctx, size_t line, enum words_reject reason, const char *why,
                                const char *text, size_t len);

/* Any thread; the builder is owned by one thread at a time. NULL with the
 * reason in err (a bad skip set, OpenCC's config missing when zh is on). */
struct words_builder *words_builder_new(const struct words_opts *o, char *err, size_t errlen);
/* fn (NULL: none) is called with ctx for each line rejected from now on;
 * kept by words_builder_clear. */
void words_builder_on_reject(struct words_builder *b, words_reject_fn fn, void *ctx);
/* Adds list text (many lines). Bad lines are counted as rejects, not errors;
 * -1 only when memory runs out. */
int words_builder_add(struct words_builder *b, const char *text, size_t len, char *err,
                      size_t errlen);
/* Adds one entry, the syntax of one line (`@@x`, `*x*`, a comment, a blank). */
int words_builder_add_line(struct words_builder *b, const char *line, size_t len, char *err,
                           size_t errlen);
/* Lines and rejects as they are added; the kept entries' counts and the
 * duplicates once words_builder_compile has run. */
const struct words_summary *words_builder_summary(const struct words_builder *b);
/* Compiles what was added; the builder may be freed after. An empty list
 * compiles to a matcher that finds nothing. */
struct words_matcher *words_builder_compile(struct words_builder *b, char *err, size_t errlen);
/* Forgets the entries and the summary, keeps the settings and the tables
 * they made (a rebuild with the same settings skips OpenCC and utf8proc). */
void words_builder_clear(struct words_builder *b);
void words_builder_free(struct words_builder *b);

/* The matcher: immutable, shared by every thread. */
void words_matcher_free(struct words_matcher *m);
size_t words_count(const struct words_matcher *m); /* words and exceptions */
/* An entry as listed (syntax removed: no @@, no *), not NUL-terminated. */
const char *words_word(const struct words_matcher *m, uint32_t id, size_t *len);
bool words_is_exception(const struct words_matcher *m, uint32_t id);
size_t words_memory(const struct words_matcher *m); /* bytes held */
const struct words_opts *words_matcher_opts(const struct words_matcher *m);

/* One block of bytes (little-endian, checksummed), malloc'ed into *out. */
int words_serialize(const struct words_matcher *m, unsigned char **out, size_t *outlen, char *err,
                    size_t errlen);
/* Loads a serialised block; every count, offset and link is checked, so bad
 * bytes give NULL and a reason, never a fault. */
struct words_matcher *words_load(const void *buf, size_t len, char *err, size_t errlen);

/* A scan's memory, one per thread: bounded by the longest listed entry, not
 * by the text (the scan streams). Usable with any matcher. */
struct words_scratch *words_scratch_new(void);
void words_scratch_free(struct words_scratch *s);

struct words_match {
    size_t start, end; /* bytes [start, end) in the text as sent */
    uint32_t word;     /* words_word(m, word) */
};

/* Finds the listed words in text (any bytes; invalid UTF-8 breaks words).
 * Fills out[0..*n) sorted by start, at most max; *capped says more matches
 * were there. -1 when the scratch cannot grow (memory). Any thread. */
int words_scan(const struct words_matcher *m, struct words_scratch *s, const char *text, size_t len,
               struct words_match *out, size_t max, size_t *n, bool *capped);

/* Masks matches (sorted by start, as words_scan gives them) in a copy of
 * text: each matched code point becomes one `mask` byte (per_byte false: the
 * text shrinks) or each matched byte does (per_byte true: offsets kept).
 * out holds len bytes; returns its length. Any thread. */
size_t words_mask(const char *text, size_t len, const struct words_match *mm, size_t n, char mask,
                  bool per_byte, char *out);

#endif
