/* fuzz_allow: the allow file reader (src/store/amend.c, amend_load_allow_file)
 * on a filter of each key kind, and the allow set behind it.
 *
 * Input: u8 options (the key kind: exact, host, url), then the file's bytes.
 *
 * What is checked: a load succeeds or fails with "allow file PATH..." naming
 * the file (and a line for a line it cannot read); after a load that worked,
 * every line the exact kind kept is an exception of the set, and a lookup of
 * a hash never added answers nothing; the set's counts agree with a scan. */
#include "config.h"

#include "fuzz.h"
#include "store/allow.h"
#include "store/amend.h"
#include "store/registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t opt = fuzz_u8(&in);
    enum filter_keys kind = (enum filter_keys)(opt % 3);
    /* The classic layout: its plan is a formula (the blocked one's sizing
     * model takes a good part of a second), made once. */
    static struct filter_plan plan;
    static bool planned;
    char err[1024];
    if (!planned)
        FUZZ_CHECK(filter_plan_make(FILTER_CLASSIC, 1000, 0.01, 1, &plan, err, sizeof(err)) == 0,
                   "%s", err);
    planned = true;
    struct filter *f = filter_create(&plan, 7, err, sizeof(err));
    FUZZ_CHECK(f != NULL, "%s", err);
    f->keys = kind;
    struct fversion *v = fversion_new(f, NULL);
    FUZZ_CHECK(v != NULL, "fversion_new");
    char path[64];
    int fd = fuzz_memfd("fuzz.allow", in.p, in.len, path);
    int rc = amend_load_allow_file(v, path, err, sizeof(err));
    close(fd);
    if (rc != 0) {
        FUZZ_CHECK(strncmp(err, "allow file ", 11) == 0 && strstr(err, path) != NULL,
                   "error does not name the file: %s", err);
    } else if (kind == FILTER_KEYS_EXACT) {
        /* Every kept line is there: walk the lines as the reader does. */
        size_t start = 0;
        for (size_t i = 0; i <= in.len; i++) {
            if (i < in.len && in.p[i] != '\n')
                continue;
            size_t len = i - start;
            const char *l = (const char *)in.p + start;
            while (len && (l[len - 1] == ' ' || l[len - 1] == '\t' || l[len - 1] == '\r' ||
                           l[len - 1] == '\v' || l[len - 1] == '\f'))
                len--;
            if (len && l[0] != '#')
                FUZZ_CHECK(allow_get(v->allow, filter_hash(f, l, len)) == ALLOW_EXCEPT,
                           "line at %zu not excepted", start);
            start = i + 1;
        }
    }
    FUZZ_CHECK(allow_count(v->allow, ALLOW_REMOVED) == 0, "a removal from an allow file");
    FUZZ_CHECK(allow_get(v->allow, filter_hash(f, "\xff\xfe never a line", 16)) == 0 ||
                   memmem(in.p, in.len, "\xff\xfe never a line", 16) != NULL,
               "a hash never added is in the set");
    fversion_free(v);
    return 0;
}
