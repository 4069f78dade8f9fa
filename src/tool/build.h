/* build: turn plain lists (one item per line) and journals into a filter file,
 * offline, on every core. The line scanner is a pure function; the builder runs
 * worker threads that read, hash and insert, then writes the file durably.
 * Called from the `bloomgate` tool and the benchmark; not used by the daemon. */
#ifndef BLOOMGATE_BUILD_H
#define BLOOMGATE_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/filter.h"

#define BUILD_MAX_LINE (1u << 20) /* a longer line is an input error */

/* Next item in buf[*pos, len). A line ends at LF, or at len when `last` (the
 * final line of an input may lack its LF). Trailing whitespace (space, tab,
 * CR, VT, FF) is trimmed; empty lines and lines starting with '#' are skipped.
 * Returns 1 with the item, or 0 when buf holds no further complete line. */
int build_next_item(const char *buf, size_t len, bool last, size_t *pos, struct filter_key *item);

struct build_opts {
    const char *const *inputs; /* paths; "-" is stdin; none means stdin, unless journals */
    size_t n_inputs;
    /* Journal files whose items (exact bytes) go in too, after the lists. */
    const char *const *journals;
    size_t n_journals;
    const char *output;        /* filter file to write */
    enum filter_layout layout;
    enum filter_keys keys;     /* stored in the file's header */
    uint64_t capacity;         /* 0: count the items first and size for them */
    double fpr;
    uint32_t shards;           /* 0: chosen from the size */
    unsigned threads;          /* 0: every CPU */
    uint64_t seed;             /* 0: random */
    bool progress;             /* progress on stderr (the tool sets it on a terminal) */
};

struct build_result {
    struct filter_plan plan;
    uint64_t lines;         /* items read from the lists (duplicates included) */
    uint64_t journal_items; /* items read from the journals (duplicates included) */
    uint64_t items;         /* items that set a new bit (distinct, up to false positives) */
    uint64_t bytes_read;    /* input bytes */
    uint64_t seed;
    double count_seconds;   /* first pass, when sizing from the input */
    double insert_seconds;  /* reading, hashing and inserting */
    double write_seconds;   /* checksums and the durable write */
    double seconds;         /* all of it */
};

int build_run(const struct build_opts *opts, struct build_result *res, char *err, size_t errlen);

#endif
