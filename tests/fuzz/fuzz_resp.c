/* fuzz_resp: the RESP2 parser (src/front/resp/respparse.h) over a stream of
 * pipelined requests, multibulk and inline, with the limits taken from the
 * input.
 *
 * Input: u16 max_frame, u8 max_bulk, u8 max_args, u8 seed of the read sizes,
 * then the bytes a client sends. The stream is parsed twice, once with all of
 * it in the buffer and once as it would arrive in reads of varying sizes
 * (resuming with the scan hint), each on its own copy (inline unescaping
 * writes); both must give the same requests with the same arguments. Every
 * result is checked against what respparse.h promises: consumed within the
 * buffer, arguments inside what was consumed and within max_bulk (multibulk)
 * or max_inline, never more than max_args, NEED_MORE only within max_frame,
 * FATAL sticky, error text printable. The reply formatters run on what was
 * parsed, and the glob matcher (KEYS, SCAN MATCH) on its arguments: the
 * second as a pattern over the first, and properties any pattern reading
 * must keep (`*` matches anything, a string with every byte escaped matches
 * itself alone, a trailing `*` matches every extension). */
#include "config.h"

#include <stdbool.h>

#include "front/resp/respparse.h"
#include "fuzz.h"

#define MAX_RESULTS 4096

struct result {
    enum resp_status st;
    size_t at, consumed, argc;
    enum resp_err err;
    uint64_t sum; /* of the arguments' bytes and lengths */
};

static uint64_t args_sum(const struct resp_request *r)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < r->argc; i++) {
        h = (h ^ r->argv[i].len) * 1099511628211ull;
        for (size_t j = 0; j < r->argv[i].len; j++)
            h = (h ^ (unsigned char)r->argv[i].p[j]) * 1099511628211ull;
    }
    return h;
}

/* resp_glob on a request's arguments (each cut to 128 bytes: the matcher is
 * quadratic, as Redis's is at best). */
static void check_glob(const struct resp_request *req)
{
    const struct resp_arg *a = &req->argv[0];
    size_t sl = a->len < 128 ? a->len : 128;
    FUZZ_CHECK(resp_glob("*", 1, a->p, sl), "'*' does not match");
    char esc[2 * 128 + 1];
    for (size_t i = 0; i < sl; i++) {
        esc[2 * i] = '\\';
        esc[2 * i + 1] = a->p[i];
    }
    FUZZ_CHECK(resp_glob(esc, 2 * sl, a->p, sl), "an escaped string does not match itself");
    if (sl > 0)
        FUZZ_CHECK(!resp_glob(esc, 2 * sl, a->p, sl - 1), "an escaped string matches a prefix");
    if (req->argc < 2)
        return;
    const struct resp_arg *p = &req->argv[1];
    size_t pl = p->len < 127 ? p->len : 127;
    bool m = resp_glob(p->p, pl, a->p, sl);
    FUZZ_CHECK(m == resp_glob(p->p, pl, a->p, sl), "not deterministic");
    char star[128];
    memcpy(star, p->p, pl);
    star[pl] = '*';
    /* A pattern that ends in a backslash escapes the added star instead,
     * and one with an unclosed '[' (a class running to the pattern's end,
     * as Redis reads it) takes the star into the class. */
    bool trailing_escape = false, unclosed = false;
    for (size_t i = 0; i < pl && !unclosed; i++) {
        if (p->p[i] == '\\') {
            trailing_escape = i + 1 == pl ? true : (i++, false);
        } else if (p->p[i] == '[') {
            size_t j = i + 1;
            if (j < pl && p->p[j] == '^')
                j++;
            while (j < pl && p->p[j] != ']')
                j += p->p[j] == '\\' ? 2 : 1;
            unclosed = j >= pl;
            i = j;
        }
    }
    if (m && !trailing_escape && !unclosed)
        FUZZ_CHECK(resp_glob(star, pl + 1, a->p, sl), "a trailing '*' loses a match");
}

/* buf is what was parsed (an inline request is unescaped in it), orig the
 * same bytes as they came. */
static void check_one(const char *buf, const char *orig, size_t len, const struct resp_limits *lim,
                      const struct resp_request *req, const struct resp_arg *storage,
                      enum resp_status st, size_t consumed)
{
    FUZZ_CHECK(consumed <= len, "consumed %zu of %zu", consumed, len);
    switch (st) {
    case RESP_NEED_MORE:
        FUZZ_CHECK(consumed == 0, "NEED_MORE consumed %zu", consumed);
        if (len && orig[0] == '*')
            FUZZ_CHECK(len <= lim->max_frame, "NEED_MORE with %zu > max_frame", len);
        else
            FUZZ_CHECK(len <= lim->max_inline, "NEED_MORE inline with %zu > max_inline", len);
        return;
    case RESP_FATAL:
        FUZZ_CHECK(consumed == 0, "FATAL consumed %zu", consumed);
        FUZZ_CHECK(req->err == RESP_ERR_PROTOCOL, "FATAL err %d", req->err);
        break;
    case RESP_EMPTY:
    case RESP_REQUEST:
    case RESP_ERROR:
        FUZZ_CHECK(consumed >= 1, "nothing consumed");
        /* req->is_inline, not buf[0]: an inline request is unescaped in place. */
        if (req->is_inline)
            FUZZ_CHECK(orig[consumed - 1] == '\n' && !memchr(orig, '\n', consumed - 1),
                       "inline not consumed through its first LF");
        else
            FUZZ_CHECK(consumed >= 4 && orig[consumed - 1] == '\n' && orig[consumed - 2] == '\r',
                       "multibulk not consumed through a CRLF");
        break;
    default:
        FUZZ_CHECK(0, "status %d", (int)st);
    }
    if (st == RESP_ERROR || st == RESP_FATAL) {
        FUZZ_CHECK(st == RESP_FATAL || req->err == RESP_ERR_TOO_MANY_ITEMS, "ERROR err %d",
                   req->err);
        size_t ml = strnlen(req->errmsg, RESP_ERRMSG_SIZE);
        FUZZ_CHECK(ml > 0 && ml < RESP_ERRMSG_SIZE, "error message not terminated or empty");
        for (size_t i = 0; i < ml; i++)
            FUZZ_CHECK((unsigned char)req->errmsg[i] >= 0x20 && (unsigned char)req->errmsg[i] < 0x7f,
                       "error message byte 0x%02x", (unsigned char)req->errmsg[i]);
        char out[RESP_ERRMSG_SIZE + 16];
        size_t need = resp_format_error(out, sizeof(out), "ERR", req->errmsg);
        FUZZ_CHECK(need <= sizeof(out) && out[need - 2] == '\r' && out[need - 1] == '\n' &&
                       !memchr(out, '\n', need - 1) && !memchr(out, '\r', need - 2),
                   "error reply not one line");
    }
    if (st != RESP_REQUEST) {
        FUZZ_CHECK(st == RESP_ERROR || req->argc == 0 || st == RESP_FATAL, "argc on %d", st);
        return;
    }
    FUZZ_CHECK(req->argc >= 1 && req->argc <= lim->max_args, "argc %zu", req->argc);
    FUZZ_CHECK(req->argv == storage, "arguments not in the caller's storage");
    for (size_t i = 0; i < req->argc; i++) {
        FUZZ_CHECK(fuzz_inside(req->argv[i].p, req->argv[i].len, buf, consumed),
                   "argument %zu outside the request", i);
        FUZZ_CHECK(req->is_inline || req->argv[i].len <= lim->max_bulk, "bulk of %zu",
                   req->argv[i].len);
    }
    /* The replies a server would send for it are well formed. */
    bool v[64];
    size_t n = req->argc < 64 ? req->argc : 64;
    for (size_t i = 0; i < n; i++)
        v[i] = req->argv[i].len & 1;
    char out[RESP_BOOLS_CAP(64)];
    size_t need = resp_format_bools(out, sizeof(out), v, n);
    FUZZ_CHECK(need <= RESP_BOOLS_CAP(n), "bools need %zu", need);
    char bulk[300];
    size_t bl = req->argv[0].len < 256 ? req->argv[0].len : 256;
    need = resp_format_bulk(bulk, sizeof(bulk), req->argv[0].p, bl);
    FUZZ_CHECK(need <= sizeof(bulk) && bulk[need - 1] == '\n', "bulk reply");
    check_glob(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    struct resp_limits lim;
    lim.max_frame = 16 + fuzz_u16(&in) % 4096;
    lim.max_bulk = fuzz_u8(&in);
    lim.max_inline = lim.max_frame / 2;
    lim.max_args = 1 + fuzz_u8(&in) % 32;
    uint32_t rng = fuzz_u8(&in) * 2654435761u + 1;

    char *buf = fuzz_dup(in.p, in.len), *buf2 = fuzz_dup(in.p, in.len);
    char *orig = fuzz_dup(in.p, in.len);
    size_t len = in.len;
    struct resp_arg *storage = calloc(lim.max_args, sizeof(*storage));
    struct result *res = calloc(MAX_RESULTS, sizeof(*res));
    FUZZ_CHECK(storage && res, "out of memory");
    struct resp_request req;

    size_t nres = 0, off = 0;
    struct resp_scan scan = {0};
    while (nres < MAX_RESULTS) {
        size_t consumed;
        enum resp_status st =
            resp_next(buf + off, len - off, &lim, &req, storage, &consumed, &scan);
        check_one(buf + off, orig + off, len - off, &lim, &req, storage, st, consumed);
        res[nres++] = (struct result){st, off, consumed, req.argc, req.err,
                                      st == RESP_REQUEST ? args_sum(&req) : 0};
        if (st == RESP_FATAL) {
            size_t again;
            FUZZ_CHECK(resp_next(buf + off, len - off, &lim, &req, storage, &again, &scan) ==
                           RESP_FATAL,
                       "FATAL is not sticky");
            break;
        }
        if (st == RESP_NEED_MORE)
            break;
        off += consumed;
    }

    /* The same stream in reads of 1 to 64 bytes: the same requests at the
     * same offsets with the same arguments. */
    size_t have = 0, k = 0;
    off = 0;
    memset(&scan, 0, sizeof(scan));
    while (k < nres) {
        size_t consumed;
        enum resp_status st =
            resp_next(buf2 + off, have - off, &lim, &req, storage, &consumed, &scan);
        check_one(buf2 + off, orig + off, have - off, &lim, &req, storage, st, consumed);
        if (st == RESP_NEED_MORE && have < len) {
            rng = rng * 1103515245u + 12345u;
            size_t step = 1 + (rng >> 16) % 64;
            have = len - have < step ? len : have + step;
            continue;
        }
        const struct result *r = &res[k++];
        FUZZ_CHECK(st == r->st && off == r->at && consumed == r->consumed && req.argc == r->argc &&
                       req.err == r->err && (st != RESP_REQUEST || args_sum(&req) == r->sum),
                   "result %zu differs when read in pieces: status %d/%d at %zu/%zu", k - 1,
                   (int)st, (int)r->st, off, r->at);
        if (st == RESP_NEED_MORE || st == RESP_FATAL)
            break;
        off += consumed;
    }

    free(res);
    free(storage);
    free(buf);
    free(buf2);
    free(orig);
    return 0;
}
