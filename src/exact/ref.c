/* The exact section's body, see ref.h. */
#include "config.h"

#include "exact/ref.h"

#include <stdio.h>
#include <string.h>

#include "exact/exact_int.h"

enum { R_MAGIC = 0, R_KIND = 8, R_NAME_LEN = 12, R_COUNT = 16, R_SUM = 24, R_RESERVED = 32 };

/* A name the loader may join to a directory: one component, not "." or "..",
 * no NUL. */
static int name_ok(const char *n, size_t len)
{
    if (len == 0 || len > EXACT_REF_NAME_MAX || memchr(n, '/', len) || memchr(n, '\0', len))
        return 0;
    return !(len == 1 && n[0] == '.') && !(len == 2 && n[0] == '.' && n[1] == '.');
}

size_t exact_ref_encode(const struct exact_ref *r, unsigned char *buf, size_t cap)
{
    size_t len = strnlen(r->name, sizeof(r->name));
    if (!name_ok(r->name, len) || cap < EXACT_REF_HEAD + len)
        return 0;
    memset(buf, 0, EXACT_REF_HEAD);
    memcpy(buf + R_MAGIC, EXACT_REF_MAGIC, 8);
    exact_put32(buf + R_KIND, (uint32_t)r->kind);
    exact_put32(buf + R_NAME_LEN, (uint32_t)len);
    exact_put64(buf + R_COUNT, r->count);
    exact_put64(buf + R_SUM, r->checksum);
    memcpy(buf + EXACT_REF_HEAD, r->name, len);
    return EXACT_REF_HEAD + len;
}

int exact_ref_decode(const void *body, size_t len, struct exact_ref *r, char *err, size_t errlen)
{
    const unsigned char *b = body;
    if (len < EXACT_REF_HEAD || memcmp(b + R_MAGIC, EXACT_REF_MAGIC, 8) != 0) {
        snprintf(err, errlen, "the exact section is not one this bloomgate reads");
        return -1;
    }
    uint32_t kind = exact_get32(b + R_KIND), nlen = exact_get32(b + R_NAME_LEN);
    if (kind != EXACT_KIND_FP && kind != EXACT_KIND_KEYS) {
        snprintf(err, errlen, "the exact section names a table of unknown kind %u", kind);
        return -1;
    }
    if (exact_get64(b + R_RESERVED) != 0 || nlen != len - EXACT_REF_HEAD ||
        !name_ok((const char *)b + EXACT_REF_HEAD, nlen)) {
        snprintf(err, errlen, "the exact section's table name is corrupt");
        return -1;
    }
    r->kind = (enum exact_kind)kind;
    r->count = exact_get64(b + R_COUNT);
    r->checksum = exact_get64(b + R_SUM);
    memcpy(r->name, b + EXACT_REF_HEAD, nlen);
    r->name[nlen] = '\0';
    return 0;
}

int exact_ref_path(const struct exact_ref *r, const char *filter_path, char *buf, size_t cap)
{
    char dir[4096];
    exact_dirname(filter_path, dir, sizeof(dir));
    int n = snprintf(buf, cap, "%s/%s", dir, r->name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}
