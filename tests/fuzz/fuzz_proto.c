/* fuzz_proto: the line protocol parser (src/front/line/proto.h) over a stream
 * of pipelined requests, with the limits taken from the input.
 *
 * Input: u16 max_line, u8 max_item, u8 max_items, u8 seed of the read sizes,
 * then the bytes a client sends. The stream is parsed twice, once with all of
 * it in the buffer and once as it would arrive in reads of varying sizes
 * (resuming with the `scanned` hint); both must give the same requests. Each
 * line is parsed once more with the hint set, which keeps it off the fast
 * path of a one-item CHECK: the same request, token by token. Every
 * result is checked against what proto.h promises: consumed within the
 * buffer and through the line's LF, tokens inside the line, items within the
 * limits and free of separators, error text printable, FATAL sticky. The reply
 * formatters are run on what was parsed. */
#include "config.h"

#include <stdbool.h>

#include "front/line/proto.h"
#include "front/line/proto_fast.h"
#include "fuzz.h"

#define MAX_RESULTS 4096

struct result {
    enum proto_status st;
    size_t at, consumed, n_items;
    enum proto_err err;
};

static bool is_item_byte(char c)
{
    return c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\0';
}

static void check_token(struct proto_token t, const char *line, size_t n, bool item)
{
    FUZZ_CHECK(t.p != NULL && t.len > 0, "empty token");
    FUZZ_CHECK(fuzz_inside(t.p, t.len, line, n), "token outside its line");
    for (size_t i = 0; i < t.len; i++)
        FUZZ_CHECK(!item || is_item_byte(t.p[i]), "separator 0x%02x inside a token",
                   (unsigned char)t.p[i]);
}

/* The replies a server would send for this request must be well formed. */
static void check_replies(const struct proto_request *req, enum proto_status st)
{
    static char out[PROTO_ERRMSG_SIZE + 64];
    if (st == PROTO_ERROR || st == PROTO_FATAL) {
        size_t need = proto_format_error(out, sizeof(out), req->err, req->errmsg);
        FUZZ_CHECK(need <= sizeof(out), "error reply of %zu bytes", need);
        FUZZ_CHECK(out[need - 1] == '\n' && !memchr(out, '\n', need - 1), "error reply not one line");
        return;
    }
    if (st != PROTO_REQUEST || req->n_items == 0)
        return;
    /* YES/NO words for the items (say, odd length = yes), formatted with exactly
     * the room needed and with the 8 spare bytes the fast path wants. */
    size_t n = req->n_items;
    bool *v = malloc(n);
    char *a = malloc(PROTO_BOOLS_CAP(n) + 8), *b = malloc(PROTO_BOOLS_CAP(n) + 8);
    FUZZ_CHECK(v && a && b, "out of memory");
    size_t expect = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = req->items[i].len & 1;
        expect += (v[i] ? 3 : 2) + 1;
    }
    size_t need = proto_format_bools(a, expect, v, n, "YES", "NO");
    FUZZ_CHECK(need == expect, "bools need %zu, expected %zu", need, expect);
    size_t need2 = proto_format_bools(b, expect + 8, v, n, "YES", "NO");
    FUZZ_CHECK(need2 == need && memcmp(a, b, need) == 0, "padded bools differ");
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *w = v[i] ? "YES" : "NO";
        size_t wl = strlen(w);
        FUZZ_CHECK(memcmp(a + o, w, wl) == 0 && a[o + wl] == (i + 1 < n ? ' ' : '\n'),
                   "bools word %zu wrong", i);
        o += wl + 1;
    }
    free(v);
    free(a);
    free(b);
}

static void check_request(const char *buf, size_t len, const struct proto_limits *lim,
                          const struct proto_request *req, const struct proto_token *storage,
                          enum proto_status st, size_t consumed)
{
    FUZZ_CHECK(consumed <= len, "consumed %zu of %zu", consumed, len);
    switch (st) {
    case PROTO_NEED_MORE:
        FUZZ_CHECK(consumed == 0, "NEED_MORE consumed %zu", consumed);
        FUZZ_CHECK(len <= lim->max_line, "NEED_MORE with %zu > max_line bytes", len);
        FUZZ_CHECK(!memchr(buf, '\n', len), "NEED_MORE with a LF in the buffer");
        return;
    case PROTO_FATAL:
        FUZZ_CHECK(consumed == 0, "FATAL consumed %zu", consumed);
        FUZZ_CHECK(req->err == PROTO_ERR_LINE_TOO_LONG, "FATAL err %d", req->err);
        FUZZ_CHECK(len > lim->max_line && !memchr(buf, '\n', lim->max_line + 1),
                   "FATAL although a LF is within max_line");
        break;
    case PROTO_EMPTY:
    case PROTO_REQUEST:
    case PROTO_ERROR:
        FUZZ_CHECK(consumed >= 1 && buf[consumed - 1] == '\n', "did not consume through a LF");
        FUZZ_CHECK(!memchr(buf, '\n', consumed - 1), "consumed past the first LF");
        FUZZ_CHECK(consumed - 1 <= lim->max_line, "line of %zu > max_line", consumed - 1);
        break;
    default:
        FUZZ_CHECK(0, "status %d", (int)st);
    }
    if (st == PROTO_ERROR || st == PROTO_FATAL) {
        FUZZ_CHECK(req->err > PROTO_ERR_NONE && req->err < PROTO_ERR_COUNT_, "err %d", req->err);
        FUZZ_CHECK(st == PROTO_FATAL || req->err != PROTO_ERR_LINE_TOO_LONG, "line_too_long not fatal");
        size_t ml = strnlen(req->errmsg, PROTO_ERRMSG_SIZE);
        FUZZ_CHECK(ml > 0 && ml < PROTO_ERRMSG_SIZE, "error message not terminated or empty");
        for (size_t i = 0; i < ml; i++)
            FUZZ_CHECK((unsigned char)req->errmsg[i] >= 0x20 && (unsigned char)req->errmsg[i] < 0x7f,
                       "error message byte 0x%02x is not printable ASCII",
                       (unsigned char)req->errmsg[i]);
        return;
    }
    FUZZ_CHECK(req->err == PROTO_ERR_NONE, "err %d without an error status", req->err);
    if (st == PROTO_EMPTY)
        return;
    const char *line = buf;
    size_t n = consumed - 1;
    FUZZ_CHECK(req->items == storage, "items not in the caller's storage");
    FUZZ_CHECK(req->n_items <= lim->max_items, "%zu items > max_items", req->n_items);
    if (req->has_filter) {
        check_token(req->filter, line, n, true);
        FUZZ_CHECK(proto_valid_filter_name(req->filter.p, req->filter.len), "bad filter name");
    }
    for (size_t i = 0; i < req->n_items; i++) {
        check_token(req->items[i], line, n, true);
        FUZZ_CHECK(req->items[i].len <= lim->max_item, "item of %zu > max_item",
                   req->items[i].len);
    }
    /* Context words: only the lookups have them, inside the line, in item
     * order; MCHECK's last one applies to an item. */
    bool lookup = req->cmd == PROTO_CHECK || req->cmd == PROTO_MCHECK || req->cmd == PROTO_MATCH;
    FUZZ_CHECK(req->n_ctx <= PROTO_CTX_MAX && (lookup || req->n_ctx == 0),
               "%zu context words on %s", req->n_ctx, proto_cmd_name(req->cmd));
    for (size_t i = 0; i < req->n_ctx; i++) {
        check_token(req->ctx[i].word, line, n, true);
        FUZZ_CHECK(req->ctx[i].from_item <= req->n_items &&
                       (i == 0 || req->ctx[i].from_item >= req->ctx[i - 1].from_item),
                   "context word %zu from item %zu of %zu", i, req->ctx[i].from_item,
                   req->n_items);
    }
    FUZZ_CHECK(req->cmd != PROTO_MCHECK || req->n_ctx == 0 ||
                   req->ctx[req->n_ctx - 1].from_item < req->n_items,
               "an MCHECK context word after the last item");
    switch (req->cmd) {
    case PROTO_CHECK:
    case PROTO_ADD:
    case PROTO_MATCH:
        FUZZ_CHECK(req->has_filter && req->n_items == 1, "%s with %zu items",
                   proto_cmd_name(req->cmd), req->n_items);
        break;
    case PROTO_MCHECK:
    case PROTO_MADD:
    case PROTO_ALLOW:
    case PROTO_UNALLOW:
    case PROTO_REMOVE:
        FUZZ_CHECK(req->has_filter && req->n_items >= 1, "%s with %zu items",
                   proto_cmd_name(req->cmd), req->n_items);
        break;
    case PROTO_AUTH:
        check_token(req->arg, line, n, true);
        FUZZ_CHECK(req->n_items == 0, "AUTH with items");
        break;
    case PROTO_INFO:
        FUZZ_CHECK(req->n_items == 0, "INFO with items");
        break;
    case PROTO_SCAN: {
        /* The text: the rest of the line after the filter and one
         * separator, never empty, never holding the line's end. */
        FUZZ_CHECK(req->has_filter && req->n_items == 0, "SCAN without a filter, or with items");
        FUZZ_CHECK(req->arg.len > 0 && fuzz_inside(req->arg.p, req->arg.len, line, n),
                   "SCAN's text outside its line");
        FUZZ_CHECK(req->arg.p == req->filter.p + req->filter.len + 1, "SCAN's text not after "
                                                                       "the filter's separator");
        size_t end = n > 0 && line[n - 1] == '\r' ? n - 1 : n;
        FUZZ_CHECK(req->arg.p + req->arg.len == line + end, "SCAN's text not to the line's end");
        FUZZ_CHECK(!memchr(req->arg.p, '\r', req->arg.len) && !memchr(req->arg.p, '\0', req->arg.len),
                   "CR or NUL in SCAN's text");
        break;
    }
    case PROTO_PING:
    case PROTO_FILTERS:
    case PROTO_QUIT:
    case PROTO_RELOAD:
        FUZZ_CHECK(req->n_items == 0 && !req->has_filter, "%s with arguments",
                   proto_cmd_name(req->cmd));
        break;
    default:
        FUZZ_CHECK(0, "cmd %d", (int)req->cmd);
    }
    FUZZ_CHECK(strcmp(proto_cmd_name(req->cmd), "?") != 0, "no name for cmd %d", (int)req->cmd);
}

/* A line parsed with the resume hint set skips the one-pass first line and
 * the one-item CHECK fast path: the general path must give the same request,
 * field by field and token by token. buf[0] is not the line's LF. */
static void check_general_path(const char *buf, size_t len, const struct proto_limits *lim,
                               const struct proto_request *a, const struct proto_token *storage,
                               enum proto_status st, size_t consumed)
{
    static struct proto_token other[32];
    struct proto_request b;
    size_t used, scanned = 1;
    enum proto_status sb = proto_next(buf, len, lim, &b, other, &used, &scanned);
    FUZZ_CHECK(sb == st && used == consumed && b.err == a->err && strcmp(b.errmsg, a->errmsg) == 0,
               "the general path differs: status %d/%d, err %d/%d", (int)sb, (int)st, (int)b.err,
               (int)a->err);
    if (st != PROTO_REQUEST)
        return;
    FUZZ_CHECK(b.cmd == a->cmd && b.has_filter == a->has_filter && b.filter.p == a->filter.p &&
                   b.filter.len == a->filter.len && b.arg.p == a->arg.p &&
                   b.arg.len == a->arg.len && b.n_items == a->n_items && b.n_ctx == a->n_ctx,
               "the general path gives another request");
    for (size_t i = 0; i < a->n_ctx; i++)
        FUZZ_CHECK(b.ctx[i].word.p == a->ctx[i].word.p && b.ctx[i].word.len == a->ctx[i].word.len &&
                       b.ctx[i].from_item == a->ctx[i].from_item,
                   "the general path gives another context word %zu", i);
    for (size_t i = 0; i < a->n_items; i++)
        FUZZ_CHECK(other[i].p == storage[i].p && other[i].len == storage[i].len,
                   "the general path gives another item %zu", i);
}

/* The line front's entry to the fast path (no request made): whatever it
 * takes must be the general path's one-item CHECK, consumed alike. */
static void check_fast_entry(const char *buf, size_t len, const struct proto_limits *lim,
                             const struct proto_request *a, const struct proto_token *storage,
                             enum proto_status st, size_t consumed)
{
    static const struct proto_token known = {"f", 1}; /* as the line front's last name */
    struct proto_token name, item;
    size_t used = 0;
    bool is_known = false;
    for (int k = 0; k < 2; k++) {
        if (!proto_check_fast(buf, len, lim, 0, k ? &known : NULL, &name, &item, &used,
                              &is_known))
            continue;
        FUZZ_CHECK(st == PROTO_REQUEST && a->cmd == PROTO_CHECK && a->n_items == 1 &&
                       used == consumed && name.p == a->filter.p && name.len == a->filter.len &&
                       item.p == storage[0].p && item.len == storage[0].len,
                   "proto_check_fast differs from proto_next");
        FUZZ_CHECK(is_known == (k && name.len == 1 && name.p[0] == 'f'),
                   "proto_check_fast's known name is wrong");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    struct proto_limits lim;
    lim.max_line = 1 + fuzz_u16(&in) % 2048;
    lim.max_item = fuzz_u8(&in);
    lim.max_items = 1 + fuzz_u8(&in) % 32;
    uint32_t rng = fuzz_u8(&in) * 2654435761u + 1;

    char *buf = fuzz_dup(in.p, in.len);
    size_t len = in.len;
    struct proto_token *storage = calloc(lim.max_items, sizeof(*storage));
    struct result *res = calloc(MAX_RESULTS, sizeof(*res));
    FUZZ_CHECK(storage && res, "out of memory");
    struct proto_request req;

    /* All of the stream in the buffer. */
    size_t nres = 0, off = 0, scanned = 0;
    while (nres < MAX_RESULTS) {
        size_t consumed;
        enum proto_status st =
            proto_next(buf + off, len - off, &lim, &req, storage, &consumed, &scanned);
        check_request(buf + off, len - off, &lim, &req, storage, st, consumed);
        check_replies(&req, st);
        res[nres++] = (struct result){st, off, consumed, req.n_items, req.err};
        if (st == PROTO_FATAL) {
            size_t again;
            FUZZ_CHECK(proto_next(buf + off, len - off, &lim, &req, storage, &again, &scanned) ==
                           PROTO_FATAL,
                       "FATAL is not sticky");
            break;
        }
        if (st == PROTO_NEED_MORE) {
            FUZZ_CHECK(scanned == len - off, "scanned %zu after NEED_MORE on %zu", scanned,
                       len - off);
            break;
        }
        FUZZ_CHECK(scanned == 0, "scanned %zu after a complete line", scanned);
        if (buf[off] != '\n')
            check_general_path(buf + off, len - off, &lim, &req, storage, st, consumed);
        check_fast_entry(buf + off, len - off, &lim, &req, storage, st, consumed);
        off += consumed;
    }

    /* The same stream arriving in reads of 1 to 64 bytes: the same requests,
     * at the same offsets, in the same order. */
    size_t have = 0, k = 0;
    off = 0;
    scanned = 0;
    while (k < nres) {
        size_t consumed;
        enum proto_status st =
            proto_next(buf + off, have - off, &lim, &req, storage, &consumed, &scanned);
        check_request(buf + off, have - off, &lim, &req, storage, st, consumed);
        if (st == PROTO_NEED_MORE && have < len) {
            rng = rng * 1103515245u + 12345u;
            size_t step = 1 + (rng >> 16) % 64;
            have = len - have < step ? len : have + step;
            continue;
        }
        const struct result *r = &res[k++];
        FUZZ_CHECK(st == r->st && off == r->at && consumed == r->consumed &&
                       req.n_items == r->n_items && req.err == r->err,
                   "result %zu differs when read in pieces: status %d/%d at %zu/%zu", k - 1,
                   (int)st, (int)r->st, off, r->at);
        if (st == PROTO_NEED_MORE || st == PROTO_FATAL)
            break;
        off += consumed;
    }

    free(res);
    free(storage);
    free(buf);
    return 0;
}
