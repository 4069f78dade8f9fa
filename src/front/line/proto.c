/* The line protocol parser and reply formatters. docs/protocol.md is the spec;
 * the order of the checks in parse_line is part of it (a request with several
 * faults reports the first one found in that order). */
#include "config.h"

#include "front/line/proto.h"
#include "front/line/proto_fast.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define QUOTE_MAX 32 /* bytes of a client's token echoed back in an error */

/* The parser's columns of a verb's row (proto_verbs.h). */
struct proto_verb {
    const char *name; /* upper case, as on the wire */
    size_t name_len;
    enum proto_cmd cmd;
    enum proto_args kind;
    size_t min_args;
    size_t max_args; /* PROTO_ARGS_ANY for no limit */
    const char *usage;
};

/* Indexed by enum proto_cmd, so proto_cmd_name is a lookup. */
#define PROTO_VERB_(sym, name, kind, min, max, usage, ...)                                         \
    [PROTO_##sym] = {name, sizeof(name) - 1, PROTO_##sym, kind, min, max, usage},
static const struct proto_verb proto_verbs[PROTO_CMD_COUNT_] = {PROTO_VERBS(PROTO_VERB_)};
#undef PROTO_VERB_

#define N_CMDS (sizeof(proto_verbs) / sizeof(proto_verbs[0]))

#define PROTO_ERR_NAME_(sym, name) [PROTO_ERR_##sym] = name,
static const char *const err_names[] = {[PROTO_ERR_NONE] = "none", PROTO_ERRORS(PROTO_ERR_NAME_)};
#undef PROTO_ERR_NAME_

const char *proto_err_name(enum proto_err err)
{
    if ((unsigned)err >= PROTO_ERR_COUNT_)
        return "internal";
    return err_names[err];
}

const char *proto_cmd_name(enum proto_cmd cmd)
{
    if ((unsigned)cmd >= N_CMDS)
        return "?";
    return proto_verbs[cmd].name;
}

static inline bool is_sep(char c)
{
    return c == ' ' || c == '\t';
}

static inline bool is_print(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

int proto_valid_filter_name(const char *p, size_t len)
{
    return fname_valid(p, len);
}

/* Fill req->err and errmsg. The message is built with snprintf into the fixed
 * buffer, so an over-long one is cut rather than overflowing; callers keep the
 * client-controlled parts short (QUOTE_MAX) so nothing useful is cut. */
__attribute__((format(printf, 3, 4))) static enum proto_status
fail(struct proto_request *req, enum proto_err err, const char *fmt, ...)
{
    va_list ap;
    req->err = err;
    va_start(ap, fmt);
    vsnprintf(req->errmsg, sizeof(req->errmsg), fmt, ap);
    va_end(ap);
    return err == PROTO_ERR_LINE_TOO_LONG ? PROTO_FATAL : PROTO_ERROR;
}

/* Copy at most QUOTE_MAX bytes of a client's token into dst for an error
 * message, non-printable bytes as '?' so the reply stays one line of ASCII;
 * "..." marks a cut. dst must hold QUOTE_MAX + 4 bytes. */
static void quote_token(char *dst, struct proto_token t)
{
    size_t n = t.len < QUOTE_MAX ? t.len : QUOTE_MAX;
    for (size_t i = 0; i < n; i++)
        dst[i] = is_print((unsigned char)t.p[i]) ? t.p[i] : '?';
    if (t.len > QUOTE_MAX) {
        memcpy(dst + n, "...", 3);
        n += 3;
    }
    dst[n] = '\0';
}

/* Whether line[0..n) holds a NUL or a CR: one pass for both (16 bytes at a
 * time with SSE2), where two memchr calls cost a one-item CHECK ~70
 * instructions (callgrind, docs/benchmarks.md). A long line (an MCHECK)
 * goes to libc's memchr, whose wider loop costs fewer instructions a byte
 * once its call is amortised. Only bytes inside [0, n) are read. */
static bool has_nul_or_cr(const char *line, size_t n)
{
#ifdef __SSE2__
    if (n >= 16 && n <= 256) {
        const __m128i zero = _mm_setzero_si128(), cr = _mm_set1_epi8('\r');
        __m128i any = zero;
        size_t i = 0;
        for (; n - i >= 16; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(line + i));
            any = _mm_or_si128(any, _mm_or_si128(_mm_cmpeq_epi8(x, zero), _mm_cmpeq_epi8(x, cr)));
        }
        if (i < n) { /* the last 16 bytes, overlapping what was read */
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(line + n - 16));
            any = _mm_or_si128(any, _mm_or_si128(_mm_cmpeq_epi8(x, zero), _mm_cmpeq_epi8(x, cr)));
        }
        return _mm_movemask_epi8(any) != 0;
    }
#endif
    return n > 0 && (memchr(line, '\0', n) || memchr(line, '\r', n));
}

/* The tokens of a line, found from a bit mask of its separators 64 bytes at
 * a time. Items are most of the bytes a server reads (an MCHECK of 100 URLs
 * is ~5 KB) and a CHECK is mostly its item: a byte-at-a-time scan cost ~8.5
 * instructions a byte, half of what a CHECK or an MCHECK took, and a scan per
 * token (16 bytes at a time, then the separators skipped a byte at a time)
 * still cost ~220 instructions for the four calls of a one-item CHECK
 * (callgrind, docs/benchmarks.md). Here each 64-byte window is compared
 * once, and a token's start and end are the lowest clear and set bits. */
struct tok_cursor {
    const char *line;
    size_t n;     /* the line's length */
    size_t avail; /* bytes that may be read from line: n and what follows it */
    size_t base;  /* the window's first byte */
    uint64_t sep; /* bit j: line[base + j] is a space or tab, consumed, or past n */
};

/* The separator mask of line[base..base + 64): space and tab, and every byte
 * at or past n. Reads past n only inside avail (the rest of the read
 * buffer), else from a padded copy. base < n. */
static uint64_t sep_window(const char *line, size_t base, size_t n, size_t avail)
{
    const char *p = line + base;
    char pad[64];
    if (avail - base < 64) {
        memcpy(pad, p, avail - base);
        memset(pad + (avail - base), ' ', 64 - (avail - base));
        p = pad;
    }
    uint64_t m = 0;
#ifdef __SSE2__
    const __m128i space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');
    for (unsigned j = 0; j < 4; j++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * j));
        unsigned hit = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(x, space), _mm_cmpeq_epi8(x, tab)));
        m |= (uint64_t)hit << (16 * j);
    }
#else
    for (unsigned j = 0; j < 64; j++)
        m |= (uint64_t)is_sep(p[j]) << j;
#endif
    if (n - base < 64)
        m |= ~0ull << (n - base);
    return m;
}

/* first_sep: the first window's separators when proto_next already has them
 * (proto_first_line), NULL to compute them. */
static inline void tok_start(struct tok_cursor *c, const char *line, size_t n, size_t avail,
                             const uint64_t *first_sep)
{
    c->line = line;
    c->n = n;
    c->avail = avail;
    c->base = 0;
    if (first_sep)
        c->sep = *first_sep | (n < 64 ? ~0ull << n : 0);
    else
        c->sep = n ? sep_window(line, 0, n, avail) : ~0ull;
}

/* Next run of bytes between spaces and tabs, or false at the end. The line
 * has been checked for NUL and stray CR, so a token is exactly the spec's
 * "item": anything but space, tab, CR, LF and NUL. */
static inline bool next_token(struct tok_cursor *c, struct proto_token *t)
{
    while (c->sep == ~0ull) { /* nothing left in this window */
        c->base += 64;
        if (c->base >= c->n)
            return false;
        c->sep = sep_window(c->line, c->base, c->n, c->avail);
    }
    size_t start = c->base + (size_t)__builtin_ctzll(~c->sep);
    uint64_t after = c->sep & (~0ull << (start - c->base));
    while (!after) { /* the token runs into the next window (which exists: bits past n are set) */
        c->base += 64;
        c->sep = sep_window(c->line, c->base, c->n, c->avail);
        after = c->sep;
    }
    unsigned end = (unsigned)__builtin_ctzll(after); /* in the current window */
    t->p = c->line + start;
    t->len = c->base + end - start;
    c->sep |= (1ull << end) - 1; /* consumed */
    return true;
}

/* ASCII only: the command word must not depend on the process locale. Every
 * name is upper-case letters only (test_command_names checks), so a byte
 * matches a name's letter exactly when the two agree with bit 0x20 set:
 * only that letter's two cases do. */
static const struct proto_verb *verb_lookup(struct proto_token w)
{
    for (size_t k = 0; k < N_CMDS; k++) {
        const struct proto_verb *s = &proto_verbs[k];
        if (s->name_len != w.len)
            continue;
        unsigned diff = 0;
        for (size_t i = 0; i < w.len; i++)
            diff |= (unsigned)((unsigned char)w.p[i] | 0x20) ^ ((unsigned char)s->name[i] | 0x20);
        if (diff == 0)
            return s;
    }
    return NULL;
}

static enum proto_status fail_arity(struct proto_request *req, const struct proto_verb *s,
                                    size_t got)
{
    if (s->max_args == 0)
        return fail(req, PROTO_ERR_WRONG_ARITY, "%s takes no arguments, got %zu", s->name, got);
    if (s->min_args == s->max_args)
        return fail(req, PROTO_ERR_WRONG_ARITY, "%s takes %zu argument%s (%s), got %zu", s->name,
                    s->min_args, s->min_args == 1 ? "" : "s", s->usage, got);
    if (s->max_args == PROTO_ARGS_ANY)
        return fail(req, PROTO_ERR_WRONG_ARITY, "%s takes at least %zu arguments (%s), got %zu",
                    s->name, s->min_args, s->usage, got);
    return fail(req, PROTO_ERR_WRONG_ARITY, "%s takes %zu or %zu arguments (%s), got %zu", s->name,
                s->min_args, s->max_args, s->usage, got);
}

/* Whether t is a context word: its key, case-insensitive. ASCII only. */
static bool is_ctx_word(struct proto_token t)
{
    static const char *const keys[] = {"type=", "from=", "method="};
    for (size_t k = 0; k < 3; k++) {
        size_t n = strlen(keys[k]);
        if (t.len < n)
            continue;
        size_t i = 0;
        while (i < n && ((unsigned char)t.p[i] | 0x20) == (unsigned char)keys[k][i])
            i++;
        if (i == n)
            return true;
    }
    return false;
}

/* SCAN <filter> <text>: the filter, then the rest of the line after the one
 * space or tab that ends it, as it is (its spaces and tabs are the text's:
 * the offsets a SCAN answers count them). A text may not be empty. The
 * filter name is checked as an item command's is. */
static enum proto_status parse_text(const char *line, size_t n, struct tok_cursor *cur,
                                    const struct proto_verb *s, struct proto_request *req)
{
    struct proto_token f;
    if (!next_token(cur, &f))
        return fail_arity(req, s, 0);
    size_t at = (size_t)(f.p - line) + f.len + 1; /* past the separator */
    if (at >= n)
        return fail_arity(req, s, 1);
    if (!proto_valid_filter_name(f.p, f.len)) {
        char q[QUOTE_MAX + 4];
        quote_token(q, f);
        return fail(req, PROTO_ERR_UNKNOWN_FILTER, "invalid filter name '%s': use " FNAME_RULE, q);
    }
    req->filter = f;
    req->has_filter = 1;
    req->arg = (struct proto_token){line + at, n - at};
    return PROTO_REQUEST;
}

/* Parse one complete line (LF already removed). The checks run in this order,
 * and the first fault wins: NUL or stray CR (bad_request); blank (no reply);
 * command word (unknown_command); argument count (wrong_arity); filter name
 * (unknown_filter); item count (too_many_items); each item's length, first to
 * last (item_too_long). Counting items before measuring them means a flood of
 * items is reported as such, not as whichever one happens to be long. */
static enum proto_status parse_line(const char *line, size_t n, size_t avail,
                                    const struct proto_first_line *fl,
                                    const struct proto_limits *lim, struct proto_request *req,
                                    struct proto_token *items_storage)
{
    if (n > 0 && line[n - 1] == '\r')
        n--;
    if (fl ? (fl->bad & ((1ull << n) - 1)) != 0 : has_nul_or_cr(line, n)) {
        if (memchr(line, '\0', n))
            return fail(req, PROTO_ERR_BAD_REQUEST, "request contains a NUL byte");
        /* A CR anywhere else is neither a separator nor part of an item; rejecting
         * it keeps "CHECK f a\rb" from meaning different things to different
         * readers. */
        return fail(req, PROTO_ERR_BAD_REQUEST, "CR is allowed only right before the LF");
    }

    struct tok_cursor cur;
    tok_start(&cur, line, n, avail, fl ? &fl->sep : NULL);
    struct proto_token word;
    if (!next_token(&cur, &word))
        return PROTO_EMPTY;
    const struct proto_verb *s = verb_lookup(word);
    if (!s) {
        char q[QUOTE_MAX + 4];
        quote_token(q, word);
        return fail(req, PROTO_ERR_UNKNOWN_COMMAND, "unknown command '%s'", q);
    }
    req->cmd = s->cmd;

    /* One pass over the arguments: the first two are kept for any command, the
     * items of an item command go straight to items_storage (counted past its
     * capacity but not stored, so the count can be reported). */
    struct proto_token first[2] = {{NULL, 0}, {NULL, 0}};
    size_t nargs = 0, n_items = 0;
    struct proto_token t;
    if (s->kind == PROTO_ARGS_TEXT)
        return parse_text(line, n, &cur, s, req);
    bool items = s->kind == PROTO_ARGS_ITEMS || s->kind == PROTO_ARGS_ITEMS_CTX;
    while (next_token(&cur, &t)) {
        /* After the filter, a lookup's context words are not arguments;
         * CHECK's and MATCH's item comes first, whatever it looks like (as
         * proto_fast.h reads a two-token CHECK), MCHECK's words may lead. */
        if (s->kind == PROTO_ARGS_ITEMS_CTX && nargs >= 1 &&
            (nargs >= 2 || s->max_args == PROTO_ARGS_ANY) && is_ctx_word(t)) {
            if (req->n_ctx == PROTO_CTX_MAX)
                return fail(req, PROTO_ERR_BAD_REQUEST, "more than %d context words",
                            PROTO_CTX_MAX);
            req->ctx[req->n_ctx++] = (struct proto_ctx_word){t, n_items};
            continue;
        }
        if (nargs < 2)
            first[nargs] = t;
        if (items && nargs >= 1) {
            if (n_items < lim->max_items)
                items_storage[n_items] = t;
            n_items++;
        }
        nargs++;
    }
    if (nargs < s->min_args || nargs > s->max_args)
        return fail_arity(req, s, nargs);

    switch (s->kind) {
    case PROTO_ARGS_NONE:
        break;
    case PROTO_ARGS_TOKEN:
        req->arg = first[0];
        break;
    case PROTO_ARGS_TEXT: /* parse_text read it */
    case PROTO_ARGS_ITEMS:
    case PROTO_ARGS_ITEMS_CTX:
    case PROTO_ARGS_FILTER:
        if (nargs == 0)
            break;
        if (!proto_valid_filter_name(first[0].p, first[0].len)) {
            char q[QUOTE_MAX + 4];
            quote_token(q, first[0]);
            return fail(req, PROTO_ERR_UNKNOWN_FILTER, "invalid filter name '%s': use " FNAME_RULE,
                        q);
        }
        req->filter = first[0];
        req->has_filter = 1;
        break;
    }

    if (items) {
        if (req->n_ctx && s->max_args == PROTO_ARGS_ANY &&
            req->ctx[req->n_ctx - 1].from_item == n_items)
            return fail(req, PROTO_ERR_BAD_REQUEST,
                        "a context word after the last item applies to no item (MCHECK: "
                        "context words come before the items they describe)");
        if (n_items > lim->max_items)
            return fail(req, PROTO_ERR_TOO_MANY_ITEMS, "%zu items; the limit is %zu", n_items,
                        lim->max_items);
        for (size_t i = 0; i < n_items; i++)
            if (items_storage[i].len > lim->max_item)
                return fail(req, PROTO_ERR_ITEM_TOO_LONG,
                            "item %zu of %zu is %zu bytes; the limit is %zu", i + 1, n_items,
                            items_storage[i].len, lim->max_item);
        req->n_items = n_items;
    }
    return PROTO_REQUEST;
}

/* The LF search is the only part that sees bytes more than once when a line
 * arrives in pieces, so it alone resumes from *scanned; the line itself is
 * parsed once, when its LF is there. The search never looks past max_line + 1
 * bytes: if there is no LF by then the line is too long whatever follows, and
 * that bounds the work per call by the limit, not by what a client sent. */
enum proto_status proto_next(const char *buf, size_t len, const struct proto_limits *lim,
                             struct proto_request *req, struct proto_token *items_storage,
                             size_t *consumed, size_t *scanned)
{
    req->cmd = PROTO_PING;
    req->filter = (struct proto_token){NULL, 0};
    req->arg = (struct proto_token){NULL, 0};
    req->items = items_storage;
    req->n_items = 0;
    req->n_ctx = 0;
    req->has_filter = 0;
    req->err = PROTO_ERR_NONE;
    req->errmsg[0] = '\0';
    *consumed = 0;

    struct proto_first_line fl;
    if ((!scanned || *scanned == 0) && lim->max_line >= 64 &&
        proto_first_line_scan(buf, len, &fl) && fl.lf) {
        size_t line_len = (size_t)__builtin_ctzll(fl.lf); /* < 64 */
        if (scanned)
            *scanned = 0;
        *consumed = line_len + 1;
        struct proto_token name, item;
        if (proto_parse_check64(buf, line_len, &fl, lim, &name, &item) &&
            proto_valid_filter_name(name.p, name.len)) {
            proto_check_request(req, name, item, items_storage);
            return PROTO_REQUEST;
        }
        return parse_line(buf, line_len, len, &fl, lim, req, items_storage);
    }
    size_t window = len <= lim->max_line ? len : lim->max_line + 1;
    size_t from = scanned ? *scanned : 0;
    if (from > window)
        from = window;
    const char *lf = from < window ? memchr(buf + from, '\n', window - from) : NULL;
    if (!lf) {
        if (len > lim->max_line) {
            if (scanned)
                *scanned = 0;
            return fail(req, PROTO_ERR_LINE_TOO_LONG, "line longer than %zu bytes", lim->max_line);
        }
        if (scanned)
            *scanned = len;
        return PROTO_NEED_MORE;
    }
    if (scanned)
        *scanned = 0;
    size_t line_len = (size_t)(lf - buf);
    *consumed = line_len + 1;
    return parse_line(buf, line_len, len, NULL, lim, req, items_storage);
}

size_t proto_format_error(char *out, size_t cap, enum proto_err err, const char *msg)
{
    const char *name = proto_err_name(err);
    size_t name_len = strlen(name);
    size_t msg_len = msg ? strlen(msg) : 0;
    size_t need = 4 + name_len + (msg_len ? 1 + msg_len : 0) + 1;
    if (need > cap)
        return need;

    char *o = out;
    memcpy(o, "ERR ", 4);
    o += 4;
    memcpy(o, name, name_len);
    o += name_len;
    if (msg_len) {
        *o++ = ' ';
        for (size_t i = 0; i < msg_len; i++) {
            unsigned char c = (unsigned char)msg[i];
            if (c == '\r' || c == '\n' || c == '\t')
                c = ' ';
            else if (c < 0x20 || c == 0x7f)
                c = '?';
            *o++ = (char)c;
        }
    }
    *o = '\n';
    return need;
}

size_t proto_format_bools(char *out, size_t cap, const bool *v, size_t n, const char *yes,
                          const char *no)
{
    size_t yes_len = strlen(yes), no_len = strlen(no);
    size_t n_yes = 0;
    for (size_t i = 0; i < n; i++)
        n_yes += v[i];
    size_t need = n_yes * yes_len + (n - n_yes) * no_len + (n ? n : 1);
    if (need > cap)
        return need;

    char *o = out;
    if (n && yes_len < 8 && no_len < 8 && cap - need >= 8) {
        /* With 8 bytes to spare, each word and its space go out as one 8-byte
         * store of a padded pattern, the pointer advancing by the real length:
         * no call and no branch per item (~6 instructions instead of ~25). */
        char py[8] = "        ", pn[8] = "        ";
        memcpy(py, yes, yes_len);
        memcpy(pn, no, no_len);
        for (size_t i = 0; i < n; i++) {
            memcpy(o, v[i] ? py : pn, 8);
            o += v[i] ? yes_len + 1 : no_len + 1;
        }
        o[-1] = '\n';
        return need;
    }
    for (size_t i = 0; i < n; i++) {
        if (i)
            *o++ = ' ';
        if (v[i]) {
            memcpy(o, yes, yes_len);
            o += yes_len;
        } else {
            memcpy(o, no, no_len);
            o += no_len;
        }
    }
    *o = '\n';
    return need;
}
