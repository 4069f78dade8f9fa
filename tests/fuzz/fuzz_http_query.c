/* fuzz_http_query: query strings and the decoding the HTTP API applies to
 * them and to filter names in paths: httpparse_query, httpparse_query_params
 * (GET .../check's item, type, from and method in one pass),
 * httpparse_pct_decode and httpparse_utf8_valid.
 *
 * Input: u8 the length of the parameter name (0 to 15), the name, then the
 * query. The fast paths (eight bytes at a time) are checked against plain
 * byte-at-a-time references written here from the RFCs (3986 for %-escapes,
 * 3629 for UTF-8), a query lookup is checked against one written here from
 * the form rules (split on '&', key before the first '='), and every output
 * buffer is exactly the size httpparse.h
 * asks for, so ASan catches a byte written past it. (http.c's own
 * http_query_param and the path decoding of /v1/filters/NAME call these.) */
#include "config.h"

#include <stdbool.h>

#include "front/http/httpparse.h"
#include "fuzz.h"

static int hex(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* RFC 3986 2.1, with '+' a space as in HTML forms when asked. */
static long ref_pct_decode(const char *s, size_t len, char *out, bool plus)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (len - i < 3 || hex((unsigned char)s[i + 1]) < 0 || hex((unsigned char)s[i + 2]) < 0)
                return -1;
            out[n++] = (char)(hex((unsigned char)s[i + 1]) << 4 | hex((unsigned char)s[i + 2]));
            i += 2;
        } else {
            out[n++] = plus && c == '+' ? ' ' : (char)c;
        }
    }
    return (long)n;
}

/* RFC 3629 section 4: the well-formed byte sequences, as a table of ranges. */
static bool ref_utf8(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            if (c == 0xe0)
                lo = 0xa0;
            if (c == 0xed)
                hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            if (c == 0xf0)
                lo = 0x90;
            if (c == 0xf4)
                hi = 0x8f;
        } else {
            return false;
        }
        if (len - i <= n)
            return false;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return false;
        for (size_t k = 2; k <= n; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xbf)
                return false;
        i += n + 1;
    }
    return true;
}

/* One name looked up in a query, byte by byte: 1 found (out, *outlen), 0
 * absent, -1 malformed: a key under 64 bytes with a bad escape anywhere, the
 * name's value with a bad escape, or the name twice. */
static int ref_query(const char *q, size_t len, const char *name, char *out, size_t *outlen)
{
    size_t nlen = strlen(name), i = 0;
    int found = 0;
    *outlen = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && q[end] != '&')
            end++;
        size_t eq = i;
        while (eq < end && q[eq] != '=')
            eq++;
        char key[64];
        long kl = eq - i < sizeof(key) ? ref_pct_decode(q + i, eq - i, key, true) : -2;
        if (kl == -1)
            return -1;
        if (kl >= 0 && (size_t)kl == nlen && memcmp(key, name, nlen) == 0) {
            if (found)
                return -1;
            size_t v = eq < end ? eq + 1 : end;
            long n = ref_pct_decode(q + v, end - v, out, true);
            if (n < 0)
                return -1;
            *outlen = (size_t)n;
            found = 1;
        }
        i = end + 1;
    }
    return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    size_t nlen = fuzz_u8(&in) % 16;
    if (nlen > in.len)
        nlen = in.len;
    char name[16];
    memcpy(name, in.p, nlen);
    name[nlen] = '\0'; /* a NUL inside makes the name shorter, which is fine */
    in.p += nlen;
    in.len -= nlen;
    size_t len = in.len;
    char *q = fuzz_dup(in.p, len);
    char *out = malloc(len ? len : 1), *ref = malloc(len ? len : 1);
    FUZZ_CHECK(out && ref, "out of memory");

    for (int plus = 0; plus <= 1; plus++) {
        long n = httpparse_pct_decode(q, len, out, plus);
        long r = ref_pct_decode(q, len, ref, plus);
        FUZZ_CHECK(n == r, "pct_decode gives %ld, the reference %ld", n, r);
        FUZZ_CHECK(n < 0 || memcmp(out, ref, (size_t)n) == 0, "pct_decode bytes differ");
        if (n >= 0)
            FUZZ_CHECK(httpparse_utf8_valid(out, (size_t)n) ==
                           ref_utf8((const unsigned char *)out, (size_t)n),
                       "utf8_valid disagrees with RFC 3629 on the decoded bytes");
    }
    FUZZ_CHECK(httpparse_utf8_valid(q, len) == ref_utf8((const unsigned char *)q, len),
               "utf8_valid disagrees with RFC 3629");

    char err[128] = "";
    size_t outlen = 12345;
    int rc = httpparse_query(len ? q : NULL, len, name, out, &outlen, err, sizeof(err));
    FUZZ_CHECK(rc >= -1 && rc <= 1, "query rc %d", rc);
    FUZZ_CHECK(rc != 0 || outlen == 0, "outlen %zu when not found", outlen);
    FUZZ_CHECK(outlen <= len, "outlen %zu > %zu", outlen, len);
    FUZZ_CHECK(rc != -1 || err[0] != '\0', "malformed without a reason");
    size_t rlen;
    int rrc = ref_query(q, len, name, ref, &rlen);
    FUZZ_CHECK(rc == rrc, "query rc %d, the reference %d", rc, rrc);
    FUZZ_CHECK(rc != 1 || (outlen == rlen && memcmp(out, ref, rlen) == 0),
               "query value differs from the reference");

    /* The check's names in one pass (the fuzzed one too, when it is not one
     * of them), into one buffer of exactly len bytes: each as the reference
     * finds it alone; malformed if any is. */
    static const char *const fixed[] = {"item", "type", "from", "method"};
    struct httpparse_param ps[5];
    size_t np = 0;
    bool dup = false;
    for (size_t k = 0; k < 4; k++) {
        ps[np++] = (struct httpparse_param){.name = fixed[k]};
        dup = dup || strcmp(fixed[k], name) == 0;
    }
    if (!dup)
        ps[np++] = (struct httpparse_param){.name = name};
    err[0] = '\0';
    int prc = httpparse_query_params(len ? q : NULL, len, ps, np, out, err, sizeof(err));
    bool any_bad = false;
    for (size_t k = 0; k < np; k++) {
        int r = ref_query(q, len, ps[k].name, ref, &rlen);
        any_bad = any_bad || r < 0;
        if (prc == 0 && r >= 0) {
            FUZZ_CHECK((ps[k].value != NULL) == (r == 1), "'%s' found %d, the reference %d",
                       ps[k].name, ps[k].value != NULL, r);
            FUZZ_CHECK(r == 0 || (ps[k].len == rlen && memcmp(ps[k].value, ref, rlen) == 0),
                       "'%s' value differs from the reference", ps[k].name);
            FUZZ_CHECK(r == 0 || (ps[k].value >= out && ps[k].value + rlen <= out + len),
                       "'%s' value outside out", ps[k].name);
        }
    }
    FUZZ_CHECK((prc == -1) == any_bad, "params rc %d, the references %s", prc,
               any_bad ? "malformed" : "fine");
    FUZZ_CHECK(prc == 0 || err[0] != '\0', "params malformed without a reason");
    free(q);
    free(out);
    free(ref);
    return 0;
}
