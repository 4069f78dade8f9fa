/* words/norm: the normalisation shared by list and text (docs/words.md):
 * UTF-8 decoded, NFKC and case folding per segment (a starter and its
 * combining marks), traditional Chinese folded to simplified, skipped
 * characters dropped, whitespace collapsed or dropped inside a word. Each
 * symbol keeps the bytes it came from. The table is built once per matcher
 * and read-only after: any number of threads iterate with their own wn_iter. */
#ifndef BLOOMGATE_WORDS_NORM_H
#define BLOOMGATE_WORDS_NORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Symbol classes. WORD: a letter, digit or mark of a space-separated script
 * (whole-word checks apply); CJK: one of a script written without spaces;
 * SPACE: whitespace (collapsed to one symbol, or dropped inside a word);
 * OTHER: anything kept that is none of these (a boundary). SKIP (visible)
 * and HIDE (invisible, e.g. zero-width) are dropped; SKIP leaves a soft
 * boundary behind it, HIDE nothing. */
enum wn_class { WN_WORD = 1, WN_CJK, WN_SPACE, WN_OTHER, WN_SKIP, WN_HIDE };

#define WN_INVALID 0x110000u /* the code point of an invalid UTF-8 byte */
#define WN_SPACE_CP 0x20u    /* the code point of a collapsed whitespace run */

/* A BMP table entry: the code point a lone code point becomes (bits 0-20),
 * its class (21-23), SIMPLE (it becomes exactly one symbol and is no mark:
 * the scan may take the table's answer when no mark follows), COMB (it has a
 * combining class: it extends the segment before it). */
#define WN_T_CP 0x1fffffu
#define WN_T_CLS_SHIFT 21
#define WN_T_SIMPLE (1u << 24)
#define WN_T_COMB (1u << 25)

/* One explicit range of the skip set: added to it or taken out. */
struct wn_range {
    uint32_t lo, hi;
    bool add;
};

struct wn_norm {
    bool nfkc, zh, space_skip;
    uint32_t skip_cats;      /* bit n: utf8proc category n skipped */
    struct wn_range *ranges; /* applied in order after the categories */
    size_t nranges;
    uint32_t *t2s; /* pairs (from, to), sorted by from */
    size_t nt2s;
    uint32_t *bmp; /* per BMP code point: WN_T_* */
};

/* One normalised symbol. os/oe: the bytes [os, oe) of the text it came from
 * (a whole segment when NFKC made several symbols of it). soft: a visible
 * skipped character (or a dropped space) came just before it. */
struct wn_sym {
    uint32_t cp;
    uint8_t cls;
    uint8_t soft;
    size_t os, oe;
};

#define WN_SEG_MAX 64 /* code points a segment may become */
#define WN_BATCH 256  /* symbols normalised at a time */

/* An iterator over one text, in batches: raw[] holds symbols decoded and
 * normalised with skipped ones dropped (a few carried over from the last
 * batch, as whitespace needs two symbols of look-ahead), then the symbols
 * with whitespace resolved, in place. About 8 KiB: in a scratch, or on a stack. */
struct wn_iter {
    const struct wn_norm *n;
    const unsigned char *p;
    size_t len, pos;
    uint8_t pending_soft; /* a visible skipped character since the last raw symbol */
    uint8_t prev_cls;     /* the class of the last symbol given: 0 at the start */
    unsigned run;         /* WORD symbols since the last boundary */
    unsigned nraw, nout, iout;
    unsigned carry;     /* raw[carry..nraw) wait for the next batch */
    unsigned lim;       /* raw symbols a fill stops at: doubles up to WN_BATCH, so
                           that a scan that stops early has not normalised far ahead */
    struct wn_sym *out; /* the batch given: raw[0..nout), resolved in place */
    struct wn_sym raw[WN_BATCH + WN_SEG_MAX];
};

/* Parses a skip spec into n (categories, `space`, U+XXXX[-U+YYYY], a leading
 * `-` takes out). 0, or -1 with the reason. */
int wn_parse_skip(struct wn_norm *n, const char *spec, char *err, size_t errlen);
/* Builds n->bmp from the settings, ranges and t2s pairs already in n. */
int wn_build_table(struct wn_norm *n, char *err, size_t errlen);
void wn_free(struct wn_norm *n);
/* The t2s pairs of an OpenCC config, into n (builder only). */
int wn_load_t2s(struct wn_norm *n, const char *config, char *err, size_t errlen);

void wn_iter_init(struct wn_iter *it, const struct wn_norm *n, const char *text, size_t len);
/* The same, starting at byte pos of text (offsets stay the text's). pos must
 * begin a segment: what came before it is not looked at. */
void wn_iter_init_at(struct wn_iter *it, const struct wn_norm *n, const char *text, size_t len,
                     size_t pos);
/* Normalises the next batch into it->out[0..it->nout): 0 at the end of the
 * text, else a count > 0. */
unsigned wn_batch(struct wn_iter *it);
/* The next normalised symbol, one at a time: 1, or 0 at the end. */
int wn_next(struct wn_iter *it, struct wn_sym *out);

/* Decodes one code point (strict UTF-8): its length, or 0 when invalid. */
size_t wn_decode(const unsigned char *p, size_t avail, uint32_t *cp);

#endif
