/* build_adblock: the tool's side of the adblock key kind: compile lists
 * into a filter file (build), read its engine back (info, verify, check).
 * Main thread of the tool. */
#ifndef BLOOMGATE_BUILD_ADBLOCK_H
#define BLOOMGATE_BUILD_ADBLOCK_H

#include <jansson.h>
#include <stdbool.h>

#include "bloom/format.h"
#include "tool/build.h"

/* The host tier's capacity when build is given none: room for the hosts an
 * operator adds between two builds. */
#define BUILD_ADBLOCK_TIER_CAPACITY 100000u

struct adblock_engine;

/* build --format adblock: compile o's inputs, write o->output, print the
 * summary unless quiet. Returns the tool's exit code. */
int build_adblock_main(const struct build_opts *o, bool quiet);

/* The engine of an adblock file whose header fi holds: NULL with err. */
struct adblock_engine *build_adblock_load(const char *path, const struct format_info *fi, char *err,
                                          size_t errlen);

#endif
