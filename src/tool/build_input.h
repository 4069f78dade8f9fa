/* tool/build_input: the builder's inputs. Opens the lists (a second stdin
 * and directories refused; a pipe spooled to an unlinked temporary file when
 * a count pass must read it twice), hands whole-line chunks to the workers
 * under the reader's mutex, and counts items for sizing. What a line is
 * (build_next_item, build_next_line) is declared in tool/build.h. */
#ifndef BLOOMGATE_TOOL_BUILD_INPUT_H
#define BLOOMGATE_TOOL_BUILD_INPUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tool/build.h"

/* One input stream: a path (or "-") and its open descriptor. */
struct input {
    const char *name;
    int fd;
    bool spooled; /* stdin copied to an unlinked temporary file */
};

/* The reader shared by the workers; everything here is under mu. */
struct reader {
    pthread_mutex_t mu;
    struct input *inputs;
    size_t n_inputs;
    size_t cur;          /* input being read */
    uint64_t cur_offset; /* bytes of it consumed so far */
    char *carry;         /* the incomplete last line of the previous read */
    size_t carry_len;
    size_t carry_cap;
    bool failed;
    char err[512];
};

/* Where a chunk came from, so an error in it can name the input and offset. */
struct chunk_origin {
    const char *name;
    uint64_t offset;
};

/* Marks the reader failed with the first error (kept in rd->err). -1. */
__attribute__((format(printf, 2, 3))) int build_reader_fail(struct reader *rd, const char *fmt,
                                                            ...);

/* The next chunk of whole lines into *buf (grown as needed): its length, 0 at
 * the end of the last input, -1 on failure (rd->err). *last: the chunk ends an
 * input without a final LF. Under rd->mu. */
ssize_t build_reader_next(struct reader *rd, char **buf, size_t *cap, bool *last,
                          struct chunk_origin *origin);

/* Adds the items (ll: the keys of parse mode) of one seekable input to *count
 * and rewinds it. 0, or -1 with the cause in err. */
int build_count_items(struct input *in, struct lists_line *ll, enum lists_format fmt,
                      enum url_kind kind, uint64_t *count, char *err, size_t errlen);

/* Opens names[0..n_in) into in (see above); their known sizes added to
 * *total_bytes. 0, or -1 with the cause in err. */
int build_open_inputs(const struct build_opts *o, const char *const *names, struct input *in,
                      size_t n_in, uint64_t *total_bytes, char *err, size_t errlen);

/* Closes every input (not stdin) and frees in. */
void build_close_inputs(struct input *in, size_t n);

#endif
