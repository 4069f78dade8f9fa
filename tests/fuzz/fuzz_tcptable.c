/* fuzz_tcptable: the tcp_table(5) parser and reply encoder
 * (src/front/postfix/tcptable.h) over a stream of requests.
 *
 * Input: u8 max_key, then the bytes a client sends. Every result is checked
 * against what tcptable.h promises: consumed through the line's LF and within
 * the input, key and value inside the caller's buffer and no longer than
 * their encodings, the key within max_key; the reply of the key and of the
 * error text is one line of at most TCPT_REPLY_MAX bytes, printable. */
#include "config.h"

#include <stdbool.h>

#include "front/postfix/tcptable.h"
#include "fuzz.h"

static void check_reply(int code, const char *text, size_t len)
{
    static char out[TCPT_REPLY_MAX];
    size_t n = tcpt_reply(code, text, len, out);
    FUZZ_CHECK(n >= 5 && n <= TCPT_REPLY_MAX, "reply of %zu bytes", n);
    FUZZ_CHECK(out[n - 1] == '\n', "reply without its newline");
    for (size_t i = 0; i + 1 < n; i++) {
        unsigned char c = (unsigned char)out[i];
        FUZZ_CHECK((c > 0x20 && c < 0x7f) || (i == 3 && c == ' '), "unencoded byte 0x%02x at %zu",
                   c, i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    size_t max_key = fuzz_u8(&in);
    char *s = fuzz_dup(in.p, in.len);
    char *buf = malloc(in.len + 1);
    size_t off = 0;
    while (off < in.len) {
        struct tcpt_request r;
        size_t used = 0;
        char err[200];
        enum tcpt_status st = tcpt_parse(s + off, in.len - off, max_key, buf, in.len + 1, &r, &used,
                                         err, sizeof(err));
        if (st == TCPT_NEED_MORE) {
            FUZZ_CHECK(!memchr(s + off, '\n', in.len - off), "NEED_MORE with a complete line");
            break;
        }
        FUZZ_CHECK(used > 0 && used <= in.len - off && s[off + used - 1] == '\n',
                   "consumed %zu bytes, not through the LF", used);
        FUZZ_CHECK(!memchr(s + off, '\n', used - 1), "consumed past the first LF");
        if (st == TCPT_ERROR) {
            check_reply(400, err, strlen(err));
        } else {
            FUZZ_CHECK(st == TCPT_REQUEST, "unknown status %d", (int)st);
            FUZZ_CHECK(r.key_len > 0 && r.key_len <= max_key, "key of %zu bytes", r.key_len);
            FUZZ_CHECK(fuzz_inside(r.key, r.key_len, buf, in.len + 1), "key outside the buffer");
            FUZZ_CHECK(r.key_len < used, "key longer than its line");
            if (r.cmd == TCPT_PUT)
                FUZZ_CHECK(fuzz_inside(r.value, r.value_len, buf, in.len + 1),
                           "value outside the buffer");
            check_reply(200, r.key, r.key_len);
        }
        off += used;
    }
    free(buf);
    free(s);
    return 0;
}
