/* adblock/options: the `$opt,opt=value,...` part of a network rule, read
 * into a struct adblock_rule, and the key $badfilter compares rules by.
 * Pure functions, any thread. */
#ifndef BLOOMGATE_ADBLOCK_OPTIONS_H
#define BLOOMGATE_ADBLOCK_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "adblock/syntax.h"

/* Options: parse line[off..r->len) into r (options.c). Returns the class: NETWORK,
 * a non-blocking class, or REJECTED with r->why. */
enum adblock_class adblock_options_parse(struct adblock_rule *r, size_t off);

/* What $badfilter compares: the rule's meaning, not its spelling (options in any
 * order, short or long names, `~third-party` or `first-party`, a domain list in any
 * order), as the reference engine compares its filter ids. A NUL-terminated string
 * to free, the same for a rule and its `$badfilter` twin; NULL when out of memory. */
char *adblock_rule_key(const struct adblock_rule *r);

/* Is s[0..n) (`~` allowed) an option name the parser knows? */
bool adblock_option_known(const char *s, size_t n);

#endif
