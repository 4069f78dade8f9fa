/* build_words: the tool's side of the words key kind: compile word lists
 * (src/words/) into a filter file (build --format words), read the list back
 * (info, verify). Main thread of the tool. */
#ifndef BLOOMGATE_BUILD_WORDS_H
#define BLOOMGATE_BUILD_WORDS_H

#include <stdbool.h>

#include "bloom/format.h"
#include "tool/build.h"
#include "words/words.h"

struct words_matcher;

/* build --format words: compile o's inputs with the settings w, write
 * o->output, print the summary unless quiet. Returns the tool's exit code. */
int build_words_main(const struct build_opts *o, const struct words_opts *w, bool quiet);

/* The compiled list of a words file whose header fi holds: NULL with err. */
struct words_matcher *build_words_load(const char *path, const struct format_info *fi, char *err,
                                       size_t errlen);

#endif
