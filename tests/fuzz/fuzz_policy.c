/* fuzz_policy: the Postfix policy delegation parser (src/front/postfix/
 * policy.h) over a stream of requests, as the glue drives it: complete
 * (fed in reads of varying sizes, resuming with its hint), then parse.
 *
 * Input: u8 seed of the read sizes, then the bytes a client sends. Checked:
 * policy_complete finds the same end whether fed at once or piecewise; a
 * request parses within that end; every value lies inside its line and
 * holds no LF; the reply with a value as $match is one action line and an
 * empty line, at most POLICY_REPLY_MAX bytes. */
#include "config.h"

#include <stdbool.h>

#include "front/postfix/policy.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t seed = fuzz_u8(&in);
    char *s = fuzz_dup(in.p, in.len);
    size_t off = 0;
    while (off < in.len) {
        size_t sc = 0;
        size_t whole = policy_complete(s + off, in.len - off, &sc);
        size_t sc2 = 0, piece = 0, n = 0;
        unsigned step = seed % 7 + 1;
        while (!piece && n < in.len - off) {
            n = n + step > in.len - off ? in.len - off : n + step;
            piece = policy_complete(s + off, n, &sc2);
        }
        FUZZ_CHECK(piece == whole, "piecewise end %zu, whole %zu", piece, whole);
        if (!whole)
            break;
        FUZZ_CHECK(s[off + whole - 1] == '\n', "end not after an LF");
        struct policy_request r;
        size_t used = 0;
        char err[120];
        enum policy_status st = policy_parse(s + off, whole, &r, &used, err, sizeof(err));
        FUZZ_CHECK(st != POLICY_NEED_MORE, "a complete request needs more");
        FUZZ_CHECK(used <= whole, "used %zu past the end %zu", used, whole);
        if (st == POLICY_ERROR)
            break;
        FUZZ_CHECK(used == whole, "request of %zu bytes, its end at %zu", used, whole);
        static char out[POLICY_REPLY_MAX];
        for (int a = 0; a < POLICY_N_ATTRS; a++) {
            const struct policy_value *v = &r.attr[a];
            if (!v->given)
                continue;
            FUZZ_CHECK(fuzz_inside(v->p, v->len, s + off, whole), "value outside the request");
            FUZZ_CHECK(!memchr(v->p, '\n', v->len), "LF inside a value");
            size_t m = policy_reply("REJECT $match by $filter", "f", policy_attr_name(a), v->p,
                                    v->len, out);
            FUZZ_CHECK(m <= POLICY_REPLY_MAX && m >= 9, "reply of %zu bytes", m);
            FUZZ_CHECK(out[m - 1] == '\n' && out[m - 2] == '\n' && !memchr(out, '\n', m - 2),
                       "reply is not one line and an empty line");
        }
        off += whole;
    }
    free(s);
    return 0;
}
