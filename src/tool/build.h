/* build: turn lists (plain items, or hosts, Adblock and URL lists parsed into
 * host or url keys by url/lists) and journals into a filter file, offline, on
 * every core. The line scanner is a pure function; the builder runs worker
 * threads that read, parse, hash and insert, then writes the file durably.
 * Called from the `bloomgate` tool and the benchmark; not used by the daemon. */
#ifndef BLOOMGATE_BUILD_H
#define BLOOMGATE_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/filter.h"
#include "url/lists.h"

#define BUILD_MAX_LINE (1u << 20) /* a longer line is an input error */

/* Next item in buf[*pos, len). A line ends at LF, or at len when `last` (the
 * final line of an input may lack its LF). Trailing whitespace (space, tab,
 * CR, VT, FF) is trimmed; empty lines and lines starting with '#' are skipped.
 * Returns 1 with the item, or 0 when buf holds no further complete line. */
int build_next_item(const char *buf, size_t len, bool last, size_t *pos, struct filter_key *item);

/* Next raw line in buf[*pos, len), without its LF, nothing trimmed or skipped
 * (url/lists classifies blank lines and comments itself, and "##" starts an
 * Adblock rule, not a comment). Same ending rules as build_next_item. */
int build_next_line(const char *buf, size_t len, bool last, size_t *pos, struct filter_key *line);

/* What a kept key is, for the summary: a whole host name, a whole IP
 * address, or (url keys) a URL below a host. */
enum build_form { BUILD_FORM_HOST, BUILD_FORM_IP, BUILD_FORM_PATH, BUILD_FORMS };
const char *build_form_name(enum build_form f);
enum build_form build_key_form(enum filter_keys keys, const char *key, size_t len);

struct build_opts {
    const char *const *inputs; /* paths; "-" is stdin; none means stdin, unless journals */
    size_t n_inputs;
    /* Journal files whose items (exact bytes) go in too, after the lists. */
    const char *const *journals;
    size_t n_journals;
    const char *output;        /* filter file to write */
    enum filter_layout layout;
    enum filter_keys keys; /* stored in the file's header */
    /* How lines become keys. plain + exact is the fast path (the line is the
     * item); anything else goes through url/lists (host or url keys only). */
    enum lists_format format;
    const char *rejects;       /* write rejected lines here, with reasons; NULL: don't */
    uint64_t capacity;         /* 0: count the items first and size for them */
    double fpr;
    uint32_t shards;           /* 0: chosen from the size */
    unsigned threads;          /* 0: every CPU */
    uint64_t seed;             /* 0: random */
    bool progress;             /* progress on stderr (the tool sets it on a terminal) */
    /* --exact: 0, or the kind of exact table (enum exact_kind: 1 fingerprints,
     * 2 keys) written beside the filter from the same keys (tool/build_exact.h). */
    int exact;
    uint64_t exact_mem; /* the table builder's memory budget; 0: its default */
};

/* What the lists held, when parsed (anything but plain + exact). Keys are
 * counted as kept, then as new when they set a bit: kept - new were merged
 * as duplicates of a key already in (or, rarely, a false positive: a new key
 * whose bits were all set already). */
struct build_tally {
    uint64_t lines;                                 /* every line, blank and comment ones too */
    uint64_t cls[LISTS_REJECTED + 1];               /* lines per enum lists_class */
    uint64_t rejected[LISTS_REASON_COUNT];          /* rejected lines per reason */
    uint64_t kept[BUILD_FORMS], fresh[BUILD_FORMS]; /* keys per form; those that set a bit */
    uint64_t ignored_names;                         /* hosts: localhost and the like, dropped */
    uint64_t ignored_opts;                          /* adblock: $options that change no match */
};

struct build_result {
    struct filter_plan plan;
    uint64_t lines;         /* items read from the lists (duplicates included) */
    uint64_t journal_items; /* items read from the journals (duplicates included) */
    uint64_t journal_removed;    /* items whose last journal record is a REMOVE: kept out */
    uint64_t journal_exceptions; /* items whose last allow record is ALLOW: not folded */
    uint64_t removed_lines;      /* list items kept out by those removals */
    uint64_t items;         /* items that set a new bit (distinct, up to false positives) */
    uint64_t bytes_read;    /* input bytes */
    uint64_t seed;
    bool parsed; /* lines went through url/lists: tally is filled */
    struct build_tally tally;
    double count_seconds;   /* first pass, when sizing from the input */
    double insert_seconds;  /* reading, hashing and inserting */
    double write_seconds;   /* checksums and the durable write */
    double seconds;         /* all of it */
    uint64_t exact_count;   /* --exact: distinct entries in the table */
    uint64_t exact_bytes;   /* --exact: the table's file size */
    uint64_t exact_runs;    /* --exact: sorted runs spilled (0: sorted in memory) */
};

/* One line of a rejects file (--rejects), the same for every format:
 * INPUT:OFFSET<TAB>REASON<TAB>WHY<TAB>LINE, OFFSET the line's first byte in
 * INPUT, the line last so that `cut -f4-` gives the lines back, tabs and
 * all. Appended to the caller's growing buffer *buf (*len bytes used of
 * *cap). False when out of memory. Any thread. */
bool build_reject_append(char **buf, size_t *len, size_t *cap, const char *input, uint64_t offset,
                         const char *reason, const char *why, const char *line, size_t n);

int build_run(const struct build_opts *opts, struct build_result *res, char *err, size_t errlen);

/* A filter file whose point is its section (an Adblock engine, a word list):
 * an empty Bloom part planned as layout/capacity/fpr/shards with keys,
 * seeded by o->seed (or a random one), written to o->output with the section
 * kind/body. The plan in *plan; what names the Bloom part in errors. 0, or
 * -1 with err. */
int build_write_section(const struct build_opts *o, enum filter_layout layout, uint64_t capacity,
                        double fpr, uint32_t shards, enum filter_keys keys, uint32_t kind,
                        const void *body, size_t len, const char *what, struct filter_plan *plan,
                        char *err, size_t errlen);

#endif
