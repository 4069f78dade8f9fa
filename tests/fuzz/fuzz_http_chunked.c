/* fuzz_http_chunked: the chunked body decoder (httpparse_chunked) on its own,
 * so the fuzzer spends its time in the framing rather than in a head.
 *
 * Input: u16 max_body, u8 seed of the read sizes, then the raw body. Decoded
 * at once and in pieces (the bytes appended to one buffer as reads would
 * append them): same status, same bytes, and the decoded body never longer
 * than max_body or than the raw bytes read. */
#include "config.h"

#include "front/http/httpparse.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    size_t max_body = fuzz_u16(&in);
    uint32_t rng = fuzz_u8(&in) * 2654435761u + 1;
    size_t len = in.len;
    char *a = fuzz_dup(in.p, len), *b = malloc(len ? len : 1);
    FUZZ_CHECK(b, "out of memory");
    char erra[128] = "", errb[128] = "";
    int sa = 0, sb = 0;
    struct httpparse_chunked ca = {0}, cb = {0};
    enum httpparse_status ra = httpparse_chunked(a, len, max_body, &ca, &sa, erra, sizeof(erra));
    FUZZ_CHECK(ca.out <= ca.in && ca.in <= len, "out %zu in %zu len %zu", ca.out, ca.in, len);
    FUZZ_CHECK(ca.out <= max_body, "decoded %zu > max_body %zu", ca.out, max_body);

    enum httpparse_status rb = HTTPPARSE_NEED_MORE;
    size_t have = 0;
    while (have < len) {
        rng = rng * 1103515245u + 12345u;
        size_t step = 1 + (rng >> 16) % 64;
        if (step > len - have)
            step = len - have;
        memcpy(b + have, in.p + have, step);
        have += step;
        rb = httpparse_chunked(b, have, max_body, &cb, &sb, errb, sizeof(errb));
        FUZZ_CHECK(cb.out <= cb.in && cb.in <= have, "in pieces: out %zu in %zu have %zu", cb.out,
                   cb.in, have);
        if (rb != HTTPPARSE_NEED_MORE)
            break;
    }
    FUZZ_CHECK(ra == rb, "%d at once, %d in pieces", (int)ra, (int)rb);
    if (ra == HTTPPARSE_OK) {
        FUZZ_CHECK(ca.in == cb.in && ca.out == cb.out && memcmp(a, b, ca.out) == 0,
                   "different bodies at once and in pieces");
    } else if (ra == HTTPPARSE_ERROR) {
        FUZZ_CHECK((sa == 400 || sa == 413) && sa == sb && strcmp(erra, errb) == 0,
                   "error %d '%s' at once, %d '%s' in pieces", sa, erra, sb, errb);
    } else {
        FUZZ_CHECK(ca.in == len, "NEED_MORE with %zu of %zu bytes consumed", ca.in, len);
    }
    free(a);
    free(b);
    return 0;
}
