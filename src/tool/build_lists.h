/* build_lists: what the builds of a compiled section (an Adblock engine, a
 * word list) share: each input read whole in turn, and the rejects file
 * (--rejects) its lines go to, in the one shape of build_reject_append.
 * Main thread of the tool. */
#ifndef BLOOMGATE_BUILD_LISTS_H
#define BLOOMGATE_BUILD_LISTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tool/build.h"

/* The whole of one input ("-" is stdin) into a malloc'd buffer, at most
 * 2 GiB (offsets in the compiled forms are 32-bit): NULL with err. */
char *build_read_whole(const char *path, size_t *len, char *err, size_t errlen);

/* The rejects file being written: lines gathered for the input being read
 * (input, text), written after it. */
struct build_rej {
    FILE *f;           /* NULL: not asked for */
    const char *path;  /* o->rejects */
    const char *input; /* the input being added, as the file names it */
    const char *text;  /* its text: a line's offset is its distance from here */
    char *buf;
    size_t len, cap;
    uint64_t lines; /* gathered, all inputs */
    bool oom;
};

/* One rejects-file line for the line [line, line + n) of r->input. */
void build_rej_line(struct build_rej *r, const char *reason, const char *why, const char *line,
                    size_t n);

/* What a build does with one input's text: 0, or -1 with why. */
typedef int build_add_fn(void *ctx, const char *input, const char *text, size_t len, char *why,
                         size_t whylen);

/* Opens o->rejects (when given) into r, then reads each input of o (stdin
 * when none) whole and hands it to add, writing its rejects after it; r
 * stays open for the caller's build_rej_close. 0, or -1 with err. */
int build_each_input(const struct build_opts *o, struct build_rej *r, build_add_fn *add, void *ctx,
                     char *err, size_t errlen);

/* Closes the rejects file: 0, or -1 with err when it could not be written
 * (ok false: an error is already in err, only closed). */
int build_rej_close(struct build_rej *r, bool ok, char *err, size_t errlen);

#endif
