/* proto_fast: the line protocol's one fast path, a one-item CHECK whose line
 * lies in the buffer's first 64 bytes, as inline functions over bytes. Part
 * of the pure parser (proto.c takes it first in proto_next); in a header so
 * that the line front's read loop takes it without a call, a request to
 * fill or a second look at a filter name it has just seen: fewer
 * instructions a pipelined CHECK than through proto_next (callgrind's
 * counts are in docs/benchmarks.md). Any thread. */
#ifndef BLOOMGATE_PROTO_FAST_H
#define BLOOMGATE_PROTO_FAST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/fname.h"
#include "front/line/proto.h"

/* What one pass over a buffer's first 64 bytes tells of its first line. */
struct proto_first_line {
    uint64_t lf;  /* bit j: buf[j] is an LF */
    uint64_t sep; /* a space or a tab */
    uint64_t bad; /* a NUL or a CR */
};

/* One pass over buf[0..64) for the LF search, the NUL and CR check and the
 * first token window at once: a pipelined CHECK's whole line is usually in
 * it, and three separate scans (memchr for the LF, has_nul_or_cr, the
 * tokens) cost ~90 more instructions a command (callgrind). False without
 * SSE2 or 64 bytes to read. */
static inline bool proto_first_line_scan(const char *buf, size_t len, struct proto_first_line *fl)
{
#ifdef __SSE2__
    if (len < 64)
        return false;
    const __m128i lf = _mm_set1_epi8('\n'), space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'),
                  zero = _mm_setzero_si128(), cr = _mm_set1_epi8('\r');
    fl->lf = fl->sep = fl->bad = 0;
    for (unsigned j = 0; j < 4; j++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(buf + 16 * j));
        unsigned sh = 16 * j;
        fl->lf |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, lf)) << sh;
        fl->sep |= (uint64_t)(unsigned)_mm_movemask_epi8(
                       _mm_or_si128(_mm_cmpeq_epi8(x, space), _mm_cmpeq_epi8(x, tab)))
                   << sh;
        fl->bad |= (uint64_t)(unsigned)_mm_movemask_epi8(
                       _mm_or_si128(_mm_cmpeq_epi8(x, zero), _mm_cmpeq_epi8(x, cr)))
                   << sh;
    }
    return true;
#else
    (void)buf;
    (void)len;
    (void)fl;
    return false;
#endif
}

/* a[0..n) == b[0..n) with a few overlapping word loads (filter names are
 * short; a memcmp call cost ~20 instructions of a CHECK's ~1,200). Reads only
 * inside both ranges. The line front's filter lookup uses it too. */
static inline bool proto_name_eq(const char *a, const char *b, size_t n)
{
    if (n >= 8) {
        uint64_t x, y, d = 0;
        size_t i = 0;
        for (; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            d |= x ^ y;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return (d | (x ^ y)) == 0;
    }
    if (n >= 4) {
        uint32_t x1, y1, x2, y2;
        memcpy(&x1, a, 4);
        memcpy(&y1, b, 4);
        memcpy(&x2, a + n - 4, 4);
        memcpy(&y2, b + n - 4, 4);
        return ((x1 ^ y1) | (x2 ^ y2)) == 0;
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* The commonest request, a one-item CHECK whose line lies in the buffer's
 * first 64 bytes, parsed from proto_first_line_scan's masks alone: parse_line's
 * general path (the command search, a cursor per token, the argument loop,
 * the arity and kind checks) was ~320 of a pipelined CHECK's ~970
 * instructions in the whole daemon, which takes ~770 with this path
 * (callgrind, docs/benchmarks.md). Taken only when the line is the word
 * CHECK (any case) with no separator before it, then exactly two tokens, a
 * filter name and an item of at most max_item bytes, with no NUL or stray
 * CR; with a valid name (the caller's test) exactly what parse_line accepts
 * as a CHECK, giving the same request. Anything else, every error included, is left to parse_line
 * (false), so no reply can differ; check_proto's test_check_fast_path and
 * fuzz_proto parse lines both ways. n < 64, and line holds 64 bytes.
 * Little-endian only, as SSE2 is. Any thread. */
static inline bool proto_parse_check64(const char *line, size_t n,
                                       const struct proto_first_line *fl,
                                       const struct proto_limits *lim, struct proto_token *name,
                                       struct proto_token *item)
{
    if (n > 0 && line[n - 1] == '\r')
        n--;
    /* "CHECK", a separator, a name, a separator, an item: at least 9 bytes. */
    if (n < 9 || (fl->bad & ((1ull << n) - 1)) != 0 || lim->max_items == 0)
        return false;
    uint64_t word;
    memcpy(&word, line, 8);
    uint64_t sep = fl->sep | (~0ull << n); /* bytes past the line count as separators */
    /* Bit 0x20 set on each of the five letters: only C and c give c, and so
     * on (test_command_names). Then byte 5 must end the word. */
    if (((word | 0x2020202020ull) & 0xffffffffffull) != 0x6b63656863ull /* "check" */ ||
        !(sep & 0x20))
        return false;
    /* Bit j of `used`: byte j is a separator, past the line, or taken. The
     * name runs from a to b, the item from c to d; b, d <= n < 64. A line
     * without them, or with a third token, is a wrong_arity. */
    uint64_t used = sep | 0x1f;
    if (used == ~0ull)
        return false;
    unsigned a = (unsigned)__builtin_ctzll(~used);
    unsigned b = (unsigned)__builtin_ctzll(used & (~0ull << a));
    used |= (1ull << b) - 1;
    if (used == ~0ull)
        return false;
    unsigned c = (unsigned)__builtin_ctzll(~used);
    unsigned d = (unsigned)__builtin_ctzll(used & (~0ull << c));
    used |= (1ull << d) - 1;
    if (used != ~0ull || d - c > lim->max_item)
        return false;
    *name = (struct proto_token){line + a, b - a};
    *item = (struct proto_token){line + c, d - c};
    return true;
}

/* The request proto_next makes of a CHECK that proto_parse_check64 took. */
static inline void proto_check_request(struct proto_request *req, struct proto_token name,
                                       struct proto_token item, struct proto_token *items_storage)
{
    req->cmd = PROTO_CHECK;
    req->filter = name;
    req->arg = (struct proto_token){NULL, 0};
    items_storage[0] = item;
    req->items = items_storage;
    req->n_items = 1;
    req->n_ctx = 0;
    req->has_filter = 1;
    req->err = PROTO_ERR_NONE;
    req->errmsg[0] = '\0';
}

/* buf[0..len) starts with a one-item CHECK that proto_parse_check64 takes, with a
 * valid filter name: its name and item, and the bytes to consume (through
 * the LF). False (nothing set) for anything else, which proto_next parses,
 * with the same result for every line (test_check_fast_path, fuzz_proto). A
 * line that is not "CHECK" costs one word test. scanned as proto_next's: a
 * line still arriving in pieces is left to it. known, if not NULL, is a name
 * already found valid (the filter the last request named): a name equal to
 * it is not checked byte by byte again (~40 instructions a CHECK, with the
 * call), and *is_known says so; it is false otherwise. */
static inline bool proto_check_fast(const char *buf, size_t len, const struct proto_limits *lim,
                                    size_t scanned, const struct proto_token *known,
                                    struct proto_token *name, struct proto_token *item,
                                    size_t *consumed, bool *is_known)
{
    if (len < 64 || scanned != 0 || lim->max_line < 64)
        return false;
    uint64_t word;
    memcpy(&word, buf, 8);
    if (((word | 0x2020202020ull) & 0xffffffffffull) != 0x6b63656863ull /* "check" */)
        return false;
    struct proto_first_line fl;
    if (!proto_first_line_scan(buf, len, &fl) || !fl.lf)
        return false;
    size_t line_len = (size_t)__builtin_ctzll(fl.lf); /* < 64 */
    struct proto_token n, it;
    if (!proto_parse_check64(buf, line_len, &fl, lim, &n, &it))
        return false;
    *is_known = known && known->len == n.len && proto_name_eq(known->p, n.p, n.len);
    if (!*is_known && !fname_valid(n.p, n.len))
        return false;
    *name = n;
    *item = it;
    *consumed = line_len + 1;
    return true;
}

#endif
