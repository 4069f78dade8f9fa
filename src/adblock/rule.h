/* adblock/rule: one list line to a rule (a block or an exception with its
 * pattern and options) or to the class of line it is (comment, cosmetic,
 * $csp, ...), or a rejection with its reason. Pure function over bytes, any
 * thread; the result points into the caller's line. */
#ifndef BLOOMGATE_ADBLOCK_RULE_H
#define BLOOMGATE_ADBLOCK_RULE_H

#include <stdbool.h>
#include <stddef.h>

#include "adblock/options.h"
#include "adblock/syntax.h"

/* Parse line[0..n) (no line ending). Always fills r->cls; for REJECTED r->why.
 * A /regex/ is compiled once here to be validated. */
enum adblock_class adblock_rule_parse(const char *line, size_t n, struct adblock_rule *r);

/* Validate a regex rule's body (PCRE2): 0, or -1 with why. */
int adblock_regex_check(const char *re, size_t n, bool match_case, char *why, size_t whylen);

#endif
