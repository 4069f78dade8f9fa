/* fuzz_bloomd: bloomd's text protocol parser and replies
 * (src/front/bloomd/bloomd_proto.h) over a stream of lines.
 *
 * Input: u8 max_keys (1..64), u8 max_line in units of 8 bytes (8..2048),
 * then the bytes a client sends. Every result is checked against what
 * bloomd_proto.h promises: consumed through the line's LF and within the
 * input; NEED_MORE only without an LF and within max_line, FATAL only past
 * it; every token inside its line; at most max_keys keys, and the keys of
 * multi and bulk joined by single spaces give back the rest of the line
 * (less one trailing space), as bloomd's split does; check's filter, a
 * space and its key are the arguments whole; a create's options within
 * bloomd's bounds; every reply one line ending in its LF. */
#include "config.h"

#include <math.h>
#include <stdbool.h>

#include "front/bloomd/bloomd_proto.h"
#include "fuzz.h"

static bool inside(struct bloomd_token t, const char *line, size_t n)
{
    return t.len == 0 || fuzz_inside(t.p, t.len, line, n);
}

static void check_error_line(const char *msg)
{
    char out[BLOOMD_ERRMSG_SIZE + 32];
    size_t n = bloomd_format_client_error(out, sizeof(out), msg);
    FUZZ_CHECK(n <= sizeof(out), "error reply of %zu bytes", n);
    FUZZ_CHECK(out[n - 1] == '\n', "error reply without its LF");
    for (size_t i = 0; i + 1 < n; i++)
        FUZZ_CHECK((unsigned char)out[i] >= 0x20 && out[i] != 0x7f, "control byte at %zu", i);
}

/* The keys of multi or bulk joined back must be the rest of the line. */
static void check_keys_rejoin(const struct bloomd_request *r, const char *rest, size_t rest_len)
{
    size_t off = 0;
    for (size_t i = 0; i < r->n_keys; i++) {
        if (i) {
            FUZZ_CHECK(off < rest_len && rest[off] == ' ', "keys not split on one space");
            off++;
        }
        FUZZ_CHECK(r->keys[i].p == rest + off, "key %zu not where the line has it", i);
        FUZZ_CHECK(!memchr(r->keys[i].p, ' ', r->keys[i].len), "a key holds a space");
        off += r->keys[i].len;
    }
    FUZZ_CHECK(off == rest_len || (off + 1 == rest_len && rest[off] == ' '),
               "keys end at %zu of %zu", off, rest_len);
}

static void check_request(const struct bloomd_request *r, const char *line, size_t n,
                          size_t max_keys)
{
    if (n && line[n - 1] == '\r')
        n--;
    FUZZ_CHECK((unsigned)r->verb < BLOOMD_VERB_COUNT_, "verb %d", (int)r->verb);
    const char *name = bloomd_verb_name(r->verb);
    size_t vlen = strlen(name);
    bool full = n >= vlen && memcmp(line, name, vlen) == 0 && (n == vlen || line[vlen] == ' ');
    bool alias =
        n >= 1 && line[0] == name[0] && (n == 1 || line[1] == ' ') && (r->verb <= BLOOMD_BULK);
    FUZZ_CHECK(full || alias, "verb %s from a line that does not start with it", name);
    FUZZ_CHECK(inside(r->filter, line, n) && inside(r->arg, line, n), "token outside its line");
    FUZZ_CHECK(r->n_keys <= max_keys, "%zu keys over %zu", r->n_keys, max_keys);
    for (size_t i = 0; i < r->n_keys; i++)
        FUZZ_CHECK(inside(r->keys[i], line, n), "key outside its line");
    size_t skip = (full ? vlen : 1) + 1; /* the verb and its space */
    const char *args = skip <= n ? line + skip : line + n;
    size_t alen = skip <= n ? n - skip : 0;
    switch (r->verb) {
    case BLOOMD_CHECK:
    case BLOOMD_SET:
        FUZZ_CHECK(r->n_keys == 1 && r->keys[0].len > 0, "check with %zu keys", r->n_keys);
        FUZZ_CHECK(r->filter.p == args && r->filter.len + 1 + r->keys[0].len == alen &&
                       args[r->filter.len] == ' ' && !memchr(args, ' ', r->filter.len),
                   "check's filter and key are not its arguments");
        break;
    case BLOOMD_MULTI:
    case BLOOMD_BULK:
        FUZZ_CHECK(r->n_keys >= 1 && r->filter.p == args, "multi without keys");
        check_keys_rejoin(r, args + r->filter.len + 1, alen - r->filter.len - 1);
        break;
    case BLOOMD_CREATE:
        FUZZ_CHECK(bloomd_valid_name(r->filter.p, r->filter.len), "create of a bad name");
        FUZZ_CHECK((int64_t)r->create.capacity > 10000 && r->create.prob > 0 &&
                       r->create.prob < 0.1 && (r->create.in_memory | 1) == 1,
                   "create's options out of bounds");
        break;
    case BLOOMD_INFO:
    case BLOOMD_DROP:
    case BLOOMD_CLOSE:
    case BLOOMD_CLEAR:
        FUZZ_CHECK(r->has_filter && !memchr(r->filter.p, ' ', r->filter.len),
                   "a filter verb's name holds a space");
        break;
    default:
        break;
    }
    if (r->n_keys) {
        bool v[64];
        char out[BLOOMD_BOOLS_CAP(64)];
        for (size_t i = 0; i < r->n_keys; i++)
            v[i] = r->keys[i].len & 1;
        size_t m = bloomd_format_bools(out, sizeof(out), v, r->n_keys);
        FUZZ_CHECK(m <= BLOOMD_BOOLS_CAP(r->n_keys) && out[m - 1] == '\n', "bools reply");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    struct bloomd_limits lim;
    lim.max_keys = (size_t)(fuzz_u8(&in) % 64) + 1;
    lim.max_line = ((size_t)fuzz_u8(&in) + 1) * 8;
    char *s = fuzz_dup(in.p, in.len);
    struct bloomd_token keys[64];
    size_t off = 0, scanned = 0;
    while (off < in.len) {
        struct bloomd_request r;
        size_t used = 0;
        enum bloomd_status st = bloomd_next(s + off, in.len - off, &lim, &r, keys, &used, &scanned);
        const char *lf = memchr(s + off, '\n', in.len - off);
        size_t line_len = lf ? (size_t)(lf - (s + off)) : in.len - off;
        if (st == BLOOMD_NEED_MORE) {
            FUZZ_CHECK(!lf && line_len <= lim.max_line, "NEED_MORE with a complete line");
            break;
        }
        if (st == BLOOMD_FATAL) {
            FUZZ_CHECK(line_len > lim.max_line && used == 0, "FATAL on a line within max_line");
            check_error_line(r.errmsg);
            break;
        }
        FUZZ_CHECK(lf && used == line_len + 1, "consumed %zu bytes, not through the LF", used);
        if (st == BLOOMD_ERROR)
            check_error_line(r.errmsg);
        else {
            FUZZ_CHECK(st == BLOOMD_REQUEST, "unknown status %d", (int)st);
            check_request(&r, s + off, line_len, lim.max_keys);
        }
        off += used;
    }
    free(s);
    return 0;
}
