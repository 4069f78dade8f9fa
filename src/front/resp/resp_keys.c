/* The key space of the Redis protocol front: EXISTS, TYPE, KEYS and SCAN
 * over the filters the catalog serves (a filter is a key), so tools and
 * client code that look a key up before they use it, or list keys, work.
 * Worker thread that owns the connection; reads only the catalog it is
 * given. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "front/resp/resp_int.h"

/* What TYPE answers for a filter: RedisBloom's type name for a Bloom
 * filter key (its module type "MBbloom--"), which clients and tools such as
 * RedisInsight read to know the key takes BF.* commands. */
#define BLOOM_TYPE "MBbloom--"

static bool served(const struct catalog *cat, const struct resp_arg *key)
{
    return catalog_find(cat, key->p, key->len) != NULL;
}

/* EXISTS key [key ...]: how many of the keys are served filters, a key
 * named twice counted twice, as Redis counts. */
RESP_VERB_FN_(resp_verb_exists)
{
    int64_t n = 0;
    for (size_t i = 1; i < r->argc; i++)
        n += served(cat, &r->argv[i]);
    reply_int(c, n);
}

/* TYPE key: +MBbloom-- for a served filter, +none otherwise. */
RESP_VERB_FN_(resp_verb_type)
{
    reply_simple(c, served(cat, &r->argv[1]) ? BLOOM_TYPE : "none");
}

/* The served names matching the glob pattern (NULL: every one), as a
 * RESP array. Two passes over the catalog: the count, then the names. */
static void reply_names(struct conn *c, const struct catalog *cat, const struct resp_arg *pattern)
{
    size_t n = 0;
    for (size_t i = 0; i < cat->n; i++)
        n += !pattern ||
             resp_glob(pattern->p, pattern->len, cat->entries[i].name, cat->entries[i].name_len);
    reply_header(c, '*', (int64_t)n);
    for (size_t i = 0; i < cat->n; i++)
        if (!pattern ||
            resp_glob(pattern->p, pattern->len, cat->entries[i].name, cat->entries[i].name_len))
            reply_bulk(c, cat->entries[i].name, cat->entries[i].name_len);
}

/* KEYS pattern: the served names that match, in the catalog's order. */
RESP_VERB_FN_(resp_verb_keys)
{
    reply_names(c, cat, &r->argv[1]);
}

/* An argument as a non-negative decimal integer, as Redis's string2ull
 * reads a cursor or a count. */
static bool arg_uint(const struct resp_arg *a, unsigned long long *out)
{
    if (a->len == 0 || a->len > 20)
        return false;
    char tmp[24];
    memcpy(tmp, a->p, a->len);
    tmp[a->len] = '\0';
    if (tmp[0] < '0' || tmp[0] > '9')
        return false;
    char *end;
    errno = 0;
    *out = strtoull(tmp, &end, 10);
    return errno == 0 && *end == '\0';
}

/* SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]: every matching name
 * in one reply, with the cursor 0 that ends the iteration. A catalog holds
 * at most REGISTRY_MAX_FILTERS names, and filters may come and go between
 * two calls: a cursor into it could skip a name that was served all along,
 * which SCAN promises not to do, while one reply cannot (COUNT is a hint in
 * Redis too, which also answers a small key space at once). A cursor other
 * than 0 is none this server gave: an empty reply that ends the iteration. */
RESP_VERB_FN_(resp_verb_scan)
{
    unsigned long long cursor, count;
    if (!arg_uint(&r->argv[1], &cursor)) {
        reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "invalid cursor");
        return;
    }
    const struct resp_arg *match = NULL;
    bool other_type = false;
    for (size_t i = 2; i < r->argc; i += 2) {
        if (i + 1 >= r->argc) {
            reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "syntax error");
            return;
        }
        const struct resp_arg *val = &r->argv[i + 1];
        if (resp_arg_is(&r->argv[i], "MATCH")) {
            match = val;
        } else if (resp_arg_is(&r->argv[i], "COUNT")) {
            if (!arg_uint(val, &count)) {
                reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR",
                            "value is not an integer or out of range");
                return;
            }
            if (count < 1) {
                reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "syntax error");
                return;
            }
        } else if (resp_arg_is(&r->argv[i], "TYPE")) {
            other_type = !resp_arg_is(val, BLOOM_TYPE);
        } else {
            reply_error(c, RESP_ERR_BAD_ARGUMENT, "ERR", "syntax error");
            return;
        }
    }
    reply_header(c, '*', 2);
    reply_bulk(c, "0", 1);
    if (cursor != 0 || other_type)
        reply_header(c, '*', 0);
    else
        reply_names(c, cat, match);
}
