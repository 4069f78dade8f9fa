/* fuzz_exact_ref: the filter file's exact section body (src/exact/ref.h),
 * which names the table a loader opens beside the filter file.
 *
 * Input: the body as is.
 * What is checked: a body that decodes names one path component (no '/',
 * not "." or "..", no NUL), of a known kind; encoding what was decoded gives
 * the same bytes back; the table's path is the filter's directory joined with
 * that name and nothing else. */
#include "config.h"

#include "exact/ref.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    struct exact_ref r;
    char err[256];
    if (exact_ref_decode(data, len, &r, err, sizeof(err)) != 0) {
        FUZZ_CHECK(err[0] != '\0', "a refusal without a reason");
        return 0;
    }
    size_t nl = strlen(r.name);
    FUZZ_CHECK(nl > 0 && nl <= EXACT_REF_NAME_MAX && !strchr(r.name, '/'), "name '%s'", r.name);
    FUZZ_CHECK(strcmp(r.name, ".") != 0 && strcmp(r.name, "..") != 0, "name '%s'", r.name);
    FUZZ_CHECK(r.kind == EXACT_KIND_FP || r.kind == EXACT_KIND_KEYS, "kind %d", (int)r.kind);
    unsigned char buf[EXACT_REF_HEAD + EXACT_REF_NAME_MAX];
    size_t n = exact_ref_encode(&r, buf, sizeof(buf));
    FUZZ_CHECK(n == len && memcmp(buf, data, len) == 0, "encoded %zu bytes of %zu differ", n, len);
    char path[600];
    FUZZ_CHECK(exact_ref_path(&r, "/srv/lists/f.bloom", path, sizeof(path)) == 0, "no path");
    FUZZ_CHECK(strncmp(path, "/srv/lists/", 11) == 0 && strcmp(path + 11, r.name) == 0, "path %s",
               path);
    return 0;
}
