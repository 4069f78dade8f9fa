/* words: the compiled matcher's layout, shared by the compiler (build.c),
 * the scan (scan.c, skip.c), the serialiser and loader (serial.c) and the
 * tests.
 * Immutable once made: any thread reads it. */
#ifndef BLOOMGATE_WORDS_INT_H
#define BLOOMGATE_WORDS_INT_H

#include "words/norm.h"
#include "words/words.h"

/* A pattern's flags: an exception; a word boundary needed before its first
 * symbol, after its last. */
#define WP_EXC 1u
#define WP_START 2u
#define WP_END 4u

struct words_pat {
    uint32_t word;  /* the entry reported */
    uint32_t len;   /* symbols, = the depth of its state */
    uint32_t flags; /* WP_* */
};

/* A state as the scan reads it: its edges are edges[first .. the next
 * state's first); one 16-byte record, so a step touches one cache line for
 * the state and one for its edges (separate arrays cost one each). */
struct words_state {
    uint32_t first;
    uint32_t fail; /* the longest proper suffix that is a state */
    uint32_t dict; /* the nearest suffix state with a pattern, 0: none */
    uint32_t out;  /* pattern + 1, 0: none */
};

struct words_edge {
    uint32_t sym, tgt;
};

/* The ASCII skip (skip.c, docs/design.md "Word lists"): byte classes as the
 * skip reads them, WF_E for any byte it leaves to the exact scan (not ASCII,
 * a control, a kept punctuation mark, an ASCII letter that does not fold to
 * one ASCII symbol). */
#define WF_E 0
#define WF_WORD 1
#define WF_SPACE 2
#define WF_SKIP 3

/* What the skip needs: made from the automaton by words_fast_init. on: every
 * listed word that an ASCII byte could start needs a word boundary before it
 * (whole-word matching), so only word starts are tried. The Bloom filter holds
 * the ASCII first word (the symbols before the first space) of every word
 * whose next symbol is a space or its end; hard[b]: a word starting with byte
 * b always goes to the exact scan (an entry with a `*` end starts with it). */
struct words_fast {
    bool on;
    bool space_skip;
    bool simd;       /* the usual classes: 64-byte blocks of SSE2 masks (skip.c) */
    bool anyhard;    /* some hard[b] is set */
    bool bmi2;       /* the CPU has BMI1 and BMI2: the skip's faster copy (tests may clear it) */
    uint64_t orfold; /* what folds a letter there, in each byte */
    uint8_t cls[256];
    uint8_t fold[256];
    uint8_t hard[256];
    uint64_t *bloom; /* [1 << (64 - bshift)], blocked: a key's bits in one 64-bit word */
    unsigned bshift;
};

/* Aho-Corasick in compact arrays: the states' edges sorted by symbol, in one
 * array (CSR: first[s] .. first[s+1]); the root's row dense over the
 * alphabet, as the scan is at the root for most of a clean text. A symbol is
 * an index into the sorted alphabet, + 1 (0: a code point no entry has). */
struct words_matcher {
    struct words_opts opts;
    char *skip; /* opts.skip points here */
    struct wn_norm norm;
    uint32_t nsym;
    uint32_t *alpha;  /* [nsym] code points, sorted */
    uint32_t *bmpsym; /* [0x10000] symbol of a BMP code point, derived */
    uint32_t nstates, nedges;
    struct words_state *st;   /* [nstates + 1], packed from the arrays below */
    struct words_edge *edges; /* [nedges] */
    /* Separate arrays while a matcher is built or loaded and checked; freed
     * by words_matcher_pack. */
    uint32_t *first; /* [nstates + 1] */
    uint32_t *esym;  /* [nedges] */
    uint32_t *etgt;  /* [nedges] */
    uint32_t *fail;  /* [nstates] the longest proper suffix that is a state */
    uint32_t *dict;  /* [nstates] the nearest suffix state with a pattern, 0: none */
    uint32_t *out;   /* [nstates] pattern + 1, 0: none */
    uint32_t *depth; /* [nstates] */
    uint32_t *root;  /* [nsym + 1] the root's row, derived */
    uint32_t npat;
    struct words_pat *pats;
    uint32_t maxlen; /* the longest pattern, symbols */
    uint32_t maxexc; /* the longest exception, symbols (0: none) */
    uint32_t nwords;
    uint32_t *woff;   /* [nwords + 1] into wtext */
    uint32_t *wflags; /* [nwords] WP_EXC */
    char *wtext;
    struct words_fast fast; /* derived by words_fast_init, never stored */
    /* [npat] derived by words_reach_init: for a word, the most symbols an
     * exception containing it holds before its start ([0]) and from its start
     * on ([1]); 0, 0 when none contains it. */
    uint8_t (*reach)[2];
};

/* Packs the separate arrays into st[] and edges[] and frees them. */
int words_matcher_pack(struct words_matcher *m);
/* Derives what is not stored (root row, BMP symbols, the norm table), after
 * words_matcher_pack. */
int words_matcher_finish(struct words_matcher *m, char *err, size_t errlen);
uint32_t words_symbol(const struct words_matcher *m, uint32_t cp);
/* Derives m->fast from the packed automaton and the norm table (skip.c);
 * -1 when memory runs out. words_fast_free frees what it holds. */
int words_fast_init(struct words_matcher *m);
void words_fast_free(struct words_matcher *m);
/* Derives m->reach (scan.c); -1 when memory runs out. */
int words_reach_init(struct words_matcher *m);
/* The skip (skip.c): from pos, a clean point, where an exact run must start
 * (a clean point at or before the first place a listed word could begin),
 * len when nowhere. Any thread. */
size_t words_skip(const struct words_fast *f, const unsigned char *p, size_t pos, size_t len);
/* words_scan with the ASCII skip on (when the list allows it) or off: one
 * exact run over the whole text. The results are the same (tests, fuzz). */
int words_scan_how(const struct words_matcher *m, struct words_scratch *s, const char *text,
                   size_t len, struct words_match *out, size_t max, size_t *n, bool *capped,
                   bool skip);

#endif
