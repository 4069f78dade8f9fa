/* build_words: the tool's side of the words key kind: compile word lists
 * (src/words/) into a filter file (build --format words), read the list back
 * (info, verify). Main thread of the tool. */
#ifndef BLOOMGATE_BUILD_WORDS_H
#define BLOOMGATE_BUILD_WORDS_H

#include <jansson.h>
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

/* build with a word list's format or settings given (words: --format
 * words or --keys words; o as the options left it, inputs after them):
 * the usage checks, then build_words_main. The tool's exit code. */
int build_words_cli(struct build_opts *o, const struct words_opts *w, bool words, bool keys_given,
                    bool dry, bool quiet, const char *const *inputs, size_t n_inputs);

/* One of build's options for a word list's settings (--nfkc, --zh,
 * --whole-word: 'N', 'Z', 'W', on or off; --skip: 'K') into w: 0, or -1
 * after a usage error. */
int build_words_opt(int c, const char *arg, struct words_opts *w);

/* `info`'s "words" object for a words file whose header fi holds: NULL
 * with err. */
json_t *build_words_info_json(const char *path, const struct format_info *fi, char *err,
                              size_t errlen);

/* `verify`'s line for a words file (its shards checked already): the list
 * loaded back, every array checked. 0, or -1 with err. */
int build_words_verify(const char *path, const struct format_info *fi, double t0, char *err,
                       size_t errlen);

#endif
