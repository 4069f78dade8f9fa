/* fname: the rule for a filter's name, stated once for everything that checks
 * it or tells a client about it: the config, the catalog, the line, RESP and
 * authz parsers, the HTTP API, bloomgate-squid (each includes this header;
 * check_verbs holds them to it). Constants and inline code only, no link
 * dependency; any thread. */
#ifndef BLOOMGATE_FNAME_H
#define BLOOMGATE_FNAME_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of a filter name: bloomd's own limit, and room for the keys people
 * build from parts ("seen:{sku123}:2026-11-27", a tenant, a date). */
#define FNAME_MAX 200

#define FNAME_STR_(x) #x
#define FNAME_STR(x) FNAME_STR_(x)
/* The rule in the words every error message uses: "use " FNAME_RULE. It is
 * pasted into printf formats, so it holds no '%'. */
#define FNAME_RULE                                                                                 \
    "1 to " FNAME_STR(FNAME_MAX) " printable ASCII bytes, not space \" ' \\ or backquote"

/* The bytes of a filter name: printable ASCII (0x21 to 0x7e) but
 *  - space, which separates words on the line protocol, in the config and
 *    in the FILTERS list;
 *  - '"' and '\', which JSON, Prometheus label values, the config's quoted
 *    strings and Squid's helper replies would have to escape: without them
 *    every place that writes a name writes it as it is;
 *  - '\'' and '`', the quotes error messages, shells and redis-cli put around
 *    a name.
 * So Redis keys as people write them (':' '{' '}' '/' '|' '@' '#' ...) and
 * every bloomd name are names. Control bytes and anything beyond ASCII are
 * not: a log line or a terminal would show them differently from what a
 * client sent, and UTF-8 has look-alikes. One load a byte (where range tests
 * were ~13 instructions a byte of every line request's name). */
static const unsigned char fname_byte[256] = {
    ['!'] = 1, ['#' ... '&'] = 1, ['(' ... '['] = 1, [']' ... '_'] = 1, ['a' ... '~'] = 1,
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

/* The most bytes fname_file writes for a name, its NUL included. */
#define FNAME_FILE_MAX (3 * FNAME_MAX + 1)

/* A valid name as one file name component (a file the daemon names after the
 * filter, as the default journal NAME.journal): '/' written %2F and '%'
 * written %25, every other byte as it is. So a name never leaves its
 * directory, two names never share a file, and a name of the old set
 * (A-Z a-z 0-9 _ . -) keeps the file it had. out holds FNAME_FILE_MAX bytes;
 * returns the length written (without the NUL). */
static inline size_t fname_file(const char *name, size_t len, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < len && i < FNAME_MAX; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '/' || c == '%') {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return o;
}

#endif
