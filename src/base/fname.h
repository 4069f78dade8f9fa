/* fname: the rule for a filter's name, [A-Za-z0-9_.-]{1,64}, stated once for
 * everything that checks it or tells a client about it: the config, the
 * catalog, the line and authz parsers, the HTTP API, bloomgate-squid (each
 * includes this header; check_verbs holds them to it). Constants and inline
 * code only, no link dependency; any thread. */
#ifndef BLOOMGATE_FNAME_H
#define BLOOMGATE_FNAME_H

#include <stdbool.h>
#include <stddef.h>

#define FNAME_MAX 64 /* bytes of a filter name */

#define FNAME_STR_(x) #x
#define FNAME_STR(x) FNAME_STR_(x)
/* The rule in the words every error message uses: "use " FNAME_RULE. */
#define FNAME_RULE "1 to " FNAME_STR(FNAME_MAX) " of A-Z a-z 0-9 _ . -"

/* The bytes of a filter name (one load a byte, where six range tests were
 * ~13 instructions a byte of every line request's name). */
static const unsigned char fname_byte[256] = {
    ['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1, ['_'] = 1, ['.'] = 1, ['-'] = 1,
};

/* Whether p[0..len) is a filter name. Whether such a filter exists is for
 * the catalog to say. */
static inline bool fname_valid(const char *p, size_t len)
{
    if (len == 0 || len > FNAME_MAX)
        return false;
    unsigned ok = 1;
    for (size_t i = 0; i < len; i++)
        ok &= fname_byte[(unsigned char)p[i]];
    return ok != 0;
}

#endif
