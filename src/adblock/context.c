/* The request context as callers write it: the `type=`, `from=` and
 * `method=` words that follow a URL on the line protocol and on the
 * tool's stdin, and the browser's Sec-Fetch-Dest values that a gateway
 * forwards. Pure; any thread. */
#include "config.h"

#include <string.h>
#include <stdio.h>
#include <strings.h>

#include "adblock/adblock.h"

/* Sec-Fetch-Dest (Fetch Metadata) destinations that are not also Adblock
 * type names or their aliases, mapped as the engines file the requests:
 * workers and worklets are scripts, `empty` is fetch()/XMLHttpRequest and
 * so is `json` (a JSON module's fetch), reports, manifests and the rest
 * of the Fetch standard's list are `other`. */
static const struct {
    const char *name;
    int type;
} fetch_dests[] = {
    {"empty", ADBLOCK_TYPE_XHR},           {"audioworklet", ADBLOCK_TYPE_SCRIPT},
    {"paintworklet", ADBLOCK_TYPE_SCRIPT}, {"serviceworker", ADBLOCK_TYPE_SCRIPT},
    {"sharedworker", ADBLOCK_TYPE_SCRIPT}, {"worker", ADBLOCK_TYPE_SCRIPT},
    {"manifest", ADBLOCK_TYPE_OTHER},      {"report", ADBLOCK_TYPE_OTHER},
    {"xslt", ADBLOCK_TYPE_OTHER},          {"json", ADBLOCK_TYPE_XHR},
    {"webidentity", ADBLOCK_TYPE_OTHER},   {"fencedframe", ADBLOCK_TYPE_SUBDOCUMENT},
    {"speculationrules", ADBLOCK_TYPE_OTHER},
};

bool adblock_needs_scheme(const char *item, size_t len)
{
    /* the common case first: an http(s) URL as a gateway forwards it */
    if (len >= 8 && (item[0] | 0x20) == 'h' && (item[1] | 0x20) == 't' && (item[2] | 0x20) == 't' &&
        (item[3] | 0x20) == 'p') {
        size_t k = (item[4] | 0x20) == 's' ? 5 : 4;
        if (item[k] == ':' && item[k + 1] == '/' && item[k + 2] == '/')
            return false;
    }
    size_t i = 0;
    while (i < len && i < 32 && item[i] != ':' && item[i] != '/')
        i++;
    bool scheme = i < len && item[i] == ':' &&
                  ((len - i >= 3 && item[i + 1] == '/' && item[i + 2] == '/') ||
                   (i == 4 && strncasecmp(item, "data", 4) == 0));
    return !scheme;
}

int adblock_fetch_dest_parse(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof fetch_dests / sizeof fetch_dests[0]; i++)
        if (strlen(fetch_dests[i].name) == n && strncasecmp(fetch_dests[i].name, s, n) == 0)
            return fetch_dests[i].type;
    return adblock_type_parse(s, n);
}

int adblock_context_word(const char *w, size_t n, int *type, int *method, const char **from,
                         size_t *from_len, char *err, size_t errlen)
{
    static const struct {
        const char *key;
        size_t len;
    } keys[] = {{"type=", 5}, {"from=", 5}, {"method=", 7}};
    for (size_t k = 0; k < 3; k++) {
        if (n < keys[k].len || strncasecmp(w, keys[k].key, keys[k].len) != 0)
            continue;
        const char *v = w + keys[k].len;
        size_t vn = n - keys[k].len;
        int t;
        /* `-` unsets the key: the context as if the word had never come
         * (MCHECK's later items). */
        if (vn == 1 && v[0] == '-') {
            if (k == 0)
                *type = -1;
            else if (k == 1)
                *from = NULL, *from_len = 0;
            else
                *method = -1;
            return 1;
        }
        switch (k) {
        case 0:
            if ((t = adblock_fetch_dest_parse(v, vn)) < 0)
                goto bad;
            *type = t;
            return 1;
        case 1:
            if (vn == 0)
                goto bad;
            *from = v;
            *from_len = vn;
            return 1;
        default:
            if ((t = adblock_method_parse(v, vn)) < 0)
                goto bad;
            *method = t;
            return 1;
        }
    bad:
        snprintf(err, errlen, "bad context word '%.*s': %s", (int)(n > 64 ? 64 : n), w,
                 k == 0   ? "not a request type (document, script, image, xhr, ...)"
                 : k == 1 ? "from= needs the page's URL"
                          : "not an HTTP method");
        return -1;
    }
    return 0;
}
