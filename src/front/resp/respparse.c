/* The RESP2 parser and reply formatters, see respparse.h. Pure: no state, no
 * allocation; any thread.
 *
 * The framing follows what Redis accepts (networking.c processMultibulkBuffer
 * and processInlineBuffer): a request that starts with '*' is a multibulk
 * array of bulk strings, every header ended by CRLF; anything else is an
 * inline line split on white space with Redis's quoting (sdssplitargs). What
 * Redis answers with "Protocol error" and a close, this does too, and so for a
 * frame bigger than max_frame, which Redis would buffer up to 1 GB. */
#include "config.h"

#include <errno.h>

#include <math.h>
#include <stdlib.h>

#include "front/resp/respparse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

#define HDR_MAX 32 /* the longest `*N` or `$N` header line we wait for */

static const char *const err_names[] = {
    "none",
#define RESP_ERR_NAME_(sym, name) name,
    RESP_ERRORS(RESP_ERR_NAME_)
#undef RESP_ERR_NAME_
};

const char *resp_err_name(enum resp_err err)
{
    if ((unsigned)err >= RESP_ERR_COUNT_)
        return "internal";
    return err_names[err];
}

bool resp_arg_is(const struct resp_arg *arg, const char *word)
{
    size_t n = strlen(word);
    if (arg->len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)arg->p[i], b = (unsigned char)word[i];
        if (a >= 'a' && a <= 'z')
            a = (unsigned char)(a - 32);
        if (b >= 'a' && b <= 'z')
            b = (unsigned char)(b - 32);
        if (a != b)
            return false;
    }
    return true;
}

__attribute__((format(printf, 4, 5))) static enum resp_status
fail(struct resp_request *req, enum resp_status st, enum resp_err err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(req->errmsg, sizeof(req->errmsg), fmt, ap);
    va_end(ap);
    req->err = err;
    return st;
}

/* A printable rendering of byte c for a message. */
static int show(unsigned char c)
{
    return c >= 0x20 && c < 0x7f ? c : '?';
}

/* A header's number, as Redis's string2ll reads it: digits without a sign or
 * leading zero, or exactly "-1" when minus_one. -2 if not a number (or out
 * of range: anything over 2^40 is refused by every caller anyway). */
static long long parse_len(const char *p, size_t n, bool minus_one)
{
    if (n == 2 && minus_one && p[0] == '-' && p[1] == '1')
        return -1;
    if (n == 0 || n > 13 || (p[0] == '0' && n > 1))
        return -2;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -2;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

/* The header line at buf[at..len) (`*N` or `$N`): its number in *v and the
 * offset just past its CRLF in *end. RESP_REQUEST when parsed, NEED_MORE,
 * or FATAL with req's error set. */
static enum resp_status header_at(const char *buf, size_t len, size_t at, bool minus_one,
                                  long long *v, size_t *end, struct resp_request *req)
{
    const char *what = buf[at] == '*' ? "multibulk" : "bulk";
    size_t lim = len - at < HDR_MAX ? len - at : HDR_MAX;
    const char *cr = memchr(buf + at, '\r', lim);
    const char *lf = memchr(buf + at, '\n', cr ? (size_t)(cr - (buf + at)) : lim);
    if (lf)
        return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                    "Protocol error: expected CRLF after the %s length", what);
    if (!cr) {
        if (len - at >= HDR_MAX)
            return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL, "Protocol error: too big %s count string",
                        what);
        return RESP_NEED_MORE;
    }
    size_t i = (size_t)(cr - buf);
    if (i + 1 >= len)
        return RESP_NEED_MORE;
    if (buf[i + 1] != '\n')
        return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                    "Protocol error: expected CRLF after the %s length", what);
    *v = parse_len(buf + at + 1, i - at - 1, minus_one);
    *end = i + 2;
    if (*v < -1)
        return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL, "Protocol error: invalid %s length", what);
    return RESP_REQUEST;
}

/* One bulk string at buf[at..len): its data in *d (offset) and *n, the offset
 * past its trailing CRLF in *end. NEED_MORE while incomplete (and within
 * max_frame), FATAL on bad framing. */
static enum resp_status bulk_at(const char *buf, size_t len, size_t at,
                                const struct resp_limits *lim, size_t *d, size_t *n, size_t *end,
                                struct resp_request *req)
{
    if (at >= len)
        return RESP_NEED_MORE;
    if (buf[at] != '$')
        return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL, "Protocol error: expected '$', got '%c'",
                    show((unsigned char)buf[at]));
    long long v;
    size_t hend;
    enum resp_status st = header_at(buf, len, at, false, &v, &hend, req);
    if (st != RESP_REQUEST)
        return st;
    if ((unsigned long long)v > lim->max_bulk)
        return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                    "Protocol error: invalid bulk length %lld (the limit is %zu)", v,
                    lim->max_bulk);
    size_t e = hend + (size_t)v + 2;
    if (e > lim->max_frame)
        return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                    "Protocol error: a request of more than %zu bytes", lim->max_frame);
    if (e > len)
        return RESP_NEED_MORE;
    if (buf[e - 2] != '\r' || buf[e - 1] != '\n')
        return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                    "Protocol error: expected CRLF after the bulk data");
    *d = hend;
    *n = (size_t)v;
    *end = e;
    return RESP_REQUEST;
}

/* A multibulk request: walk its bulks from where the scan left off (framing
 * only), and once it is complete, walk it again to hand out the arguments. */
static enum resp_status multibulk(char *buf, size_t len, const struct resp_limits *lim,
                                  struct resp_request *req, struct resp_arg *storage,
                                  size_t *consumed, struct resp_scan *scan)
{
    enum resp_status st;
    if (scan->pos == 0) {
        long long v;
        size_t hend;
        if ((st = header_at(buf, len, 0, true, &v, &hend, req)) != RESP_REQUEST) {
            if (st == RESP_NEED_MORE && len > lim->max_frame)
                return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                            "Protocol error: a request of more than %zu bytes", lim->max_frame);
            return st;
        }
        if (v > RESP_MAX_MULTIBULK)
            return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                        "Protocol error: invalid multibulk length");
        if (v <= 0) { /* `*0` and `*-1`: Redis skips them */
            *consumed = hend;
            return RESP_EMPTY;
        }
        scan->pos = hend;
        scan->n = (size_t)v;
        scan->done = 0;
    }
    while (scan->done < scan->n) {
        size_t d, n, end;
        st = bulk_at(buf, len, scan->pos, lim, &d, &n, &end, req);
        if (st == RESP_NEED_MORE && len > lim->max_frame)
            return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                        "Protocol error: a request of more than %zu bytes", lim->max_frame);
        if (st != RESP_REQUEST)
            return st;
        scan->pos = end;
        scan->done++;
    }
    /* Complete and well formed: the second walk cannot fail. */
    size_t total = scan->n, pos = 0;
    long long v;
    header_at(buf, len, 0, true, &v, &pos, req);
    size_t keep = total < lim->max_args ? total : lim->max_args;
    for (size_t i = 0; i < keep; i++) {
        size_t d, n, end;
        bulk_at(buf, len, pos, lim, &d, &n, &end, req);
        storage[i].p = buf + d;
        storage[i].len = n;
        pos = end;
    }
    *consumed = scan->pos;
    scan->pos = scan->n = scan->done = 0;
    req->argc = keep;
    if (total > lim->max_args)
        return fail(req, RESP_ERROR, RESP_ERR_TOO_MANY_ITEMS, "%zu arguments, the limit is %zu",
                    total, lim->max_args);
    return RESP_REQUEST;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}


/* One argument of an inline line at s[*i..n), unescaped in place from s + *i
 * on when write (it never grows); its length in *out. false on unbalanced
 * quotes. The caller checks the whole line without writing first, so a line
 * refused (a FATAL, which must be sticky) is left as it came. */
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (write)                                                                                 \
            s[w] = (c);                                                                            \
        w++;                                                                                       \
    } while (0)
static bool inline_arg(char *s, size_t n, size_t *i, size_t *out, bool write)
{
    size_t p = *i, w = *i;
    bool inq = false, insq = false;
    for (;;) {
        if (inq) {
            if (p >= n)
                return false;
            if (s[p] == '\\' && p + 3 < n && s[p + 1] == 'x' && util_hexval(s[p + 2]) >= 0 &&
                util_hexval(s[p + 3]) >= 0) {
                PUT((char)(util_hexval(s[p + 2]) * 16 + util_hexval(s[p + 3])));
                p += 4;
            } else if (s[p] == '\\' && p + 1 < n) {
                char c = s[p + 1];
                PUT(c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c == 'b' ? '\b'
                    : c == 'a' ? '\a' : c);
                p += 2;
            } else if (s[p] == '"') {
                if (p + 1 < n && !is_space(s[p + 1]))
                    return false; /* the closing quote must end the argument */
                p++;
                break;
            } else {
                PUT(s[p]);
                p++;
            }
        } else if (insq) {
            if (p >= n)
                return false;
            if (s[p] == '\\' && p + 1 < n && s[p + 1] == '\'') {
                PUT('\'');
                p += 2;
            } else if (s[p] == '\'') {
                if (p + 1 < n && !is_space(s[p + 1]))
                    return false;
                p++;
                break;
            } else {
                PUT(s[p]);
                p++;
            }
        } else {
            if (p >= n || is_space(s[p]))
                break;
            if (s[p] == '"')
                inq = true;
            else if (s[p] == '\'')
                insq = true;
            else
                PUT(s[p]);
            p++;
        }
    }
    *out = w - *i;
    *i = p;
    return true;
}
#undef PUT

/* An inline request: one line (LF or CRLF), split as redis-cli's own
 * splitter and Redis's inline reader do. */
static enum resp_status inline_req(char *buf, size_t len, const struct resp_limits *lim,
                                   struct resp_request *req, struct resp_arg *storage,
                                   size_t *consumed)
{
    size_t lim_scan = len < lim->max_inline + 1 ? len : lim->max_inline + 1;
    const char *nl = memchr(buf, '\n', lim_scan);
    if (!nl) {
        if (len > lim->max_inline)
            return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                        "Protocol error: too big inline request (the limit is %zu bytes)",
                        lim->max_inline);
        return RESP_NEED_MORE;
    }
    size_t n = (size_t)(nl - buf), i = 0, argc = 0, alen;
    req->is_inline = true;
    while (i < n) { /* check, writing nothing */
        if (is_space(buf[i]))
            i++;
        else if (!inline_arg(buf, n, &i, &alen, false))
            return fail(req, RESP_FATAL, RESP_ERR_PROTOCOL,
                        "Protocol error: unbalanced quotes in request");
    }
    i = 0;
    for (;;) {
        while (i < n && is_space(buf[i]))
            i++;
        if (i >= n)
            break;
        size_t start = i;
        inline_arg(buf, n, &i, &alen, true);
        if (argc < lim->max_args) {
            storage[argc].p = buf + start;
            storage[argc].len = alen;
        }
        argc++;
    }
    *consumed = n + 1;
    if (argc == 0)
        return RESP_EMPTY;
    req->argc = argc < lim->max_args ? argc : lim->max_args;
    if (argc > lim->max_args)
        return fail(req, RESP_ERROR, RESP_ERR_TOO_MANY_ITEMS, "%zu arguments, the limit is %zu",
                    argc, lim->max_args);
    return RESP_REQUEST;
}

enum resp_status resp_next(char *buf, size_t len, const struct resp_limits *lim,
                           struct resp_request *req, struct resp_arg *storage, size_t *consumed,
                           struct resp_scan *scan)
{
    req->argv = storage;
    req->argc = 0;
    req->is_inline = false;
    req->err = RESP_ERR_NONE;
    req->errmsg[0] = '\0';
    *consumed = 0;
    if (len == 0)
        return RESP_NEED_MORE;
    if (buf[0] == '*')
        return multibulk(buf, len, lim, req, storage, consumed, scan);
    return inline_req(buf, len, lim, req, storage, consumed);
}

/* ---- glob ---- */

/* Whether byte c is in the class that starts just past the `[` at p[*i],
 * with *i left past its `]` (or at plen for an unclosed class). */
static bool glob_class(const char *p, size_t plen, size_t *i, unsigned char c)
{
    size_t k = *i;
    bool neg = k < plen && p[k] == '^', hit = false;
    if (neg)
        k++;
    while (k < plen && p[k] != ']') {
        if (p[k] == '\\' && k + 1 < plen) {
            hit |= (unsigned char)p[k + 1] == c;
            k += 2;
        } else if (k + 2 < plen && p[k + 1] == '-' && p[k + 2] != ']') {
            unsigned char lo = (unsigned char)p[k], hi = (unsigned char)p[k + 2];
            if (lo > hi) { /* Redis swaps a reversed range */
                unsigned char t = lo;
                lo = hi;
                hi = t;
            }
            hit |= c >= lo && c <= hi;
            k += 3;
        } else {
            hit |= (unsigned char)p[k] == c;
            k++;
        }
    }
    *i = k < plen ? k + 1 : plen;
    return hit != neg;
}

/* The classic greedy matcher: on a mismatch, go back to just past the last
 * `*` and let it swallow one more byte. That one backtrack point suffices
 * because every other element matches exactly one byte. */
bool resp_glob(const char *p, size_t plen, const char *s, size_t slen)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < slen) {
        if (pi < plen && p[pi] == '*') {
            while (pi < plen && p[pi] == '*')
                pi++;
            if (pi == plen)
                return true;
            star_p = pi;
            star_s = si;
            continue;
        }
        if (pi < plen) {
            unsigned char c = (unsigned char)s[si];
            size_t next = pi + 1;
            bool ok;
            if (p[pi] == '?') {
                ok = true;
            } else if (p[pi] == '[') {
                ok = glob_class(p, plen, &next, c);
            } else if (p[pi] == '\\' && pi + 1 < plen) {
                ok = (unsigned char)p[pi + 1] == c;
                next = pi + 2;
            } else {
                ok = (unsigned char)p[pi] == c;
            }
            if (ok) {
                pi = next;
                si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX)
            return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < plen && p[pi] == '*')
        pi++;
    return pi == plen;
}

/* ---- replies ---- */

size_t resp_format_error(char *out, size_t cap, const char *prefix, const char *msg)
{
    size_t pl = strlen(prefix), ml = msg ? strlen(msg) : 0;
    size_t need = 1 + pl + (ml ? 1 + ml : 0) + 2;
    if (need > cap)
        return need;
    size_t o = 0;
    out[o++] = '-';
    memcpy(out + o, prefix, pl);
    o += pl;
    if (ml) {
        out[o++] = ' ';
        for (size_t i = 0; i < ml; i++) {
            unsigned char c = (unsigned char)msg[i];
            out[o++] = c == '\r' || c == '\n' || c == '\t' ? ' ' : c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    out[o++] = '\r';
    out[o++] = '\n';
    return o;
}

/* `c<v>\r\n`: the shape of integers and of array and bulk headers. */
static size_t format_num(char *out, size_t cap, char c, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t need = 1 + (v < 0) + n + 2;
    if (need > cap)
        return need;
    size_t o = 0;
    out[o++] = c;
    if (v < 0)
        out[o++] = '-';
    while (n)
        out[o++] = tmp[--n];
    out[o++] = '\r';
    out[o++] = '\n';
    return o;
}

size_t resp_format_int(char *out, size_t cap, int64_t v)
{
    return format_num(out, cap, ':', v);
}

size_t resp_format_header(char *out, size_t cap, char c, int64_t n)
{
    return format_num(out, cap, c, n);
}

size_t resp_format_bulk(char *out, size_t cap, const void *p, size_t len)
{
    char hdr[24];
    size_t h = format_num(hdr, sizeof(hdr), '$', (int64_t)len);
    size_t need = h + len + 2;
    if (need > cap)
        return need;
    memcpy(out, hdr, h);
    if (len)
        memcpy(out + h, p, len);
    out[h + len] = '\r';
    out[h + len + 1] = '\n';
    return need;
}

size_t resp_format_simple(char *out, size_t cap, const char *s)
{
    size_t n = strlen(s), need = n + 3;
    if (need > cap)
        return need;
    out[0] = '+';
    memcpy(out + 1, s, n);
    out[n + 1] = '\r';
    out[n + 2] = '\n';
    return need;
}

size_t resp_format_bools(char *out, size_t cap, const bool *v, size_t n)
{
    char hdr[24];
    size_t h = format_num(hdr, sizeof(hdr), '*', (int64_t)n);
    size_t need = h + 4 * n;
    if (need > cap)
        return need;
    memcpy(out, hdr, h);
    char *o = out + h;
    for (size_t i = 0; i < n; i++) {
        /* ":0\r\n" or ":1\r\n" as one 4-byte store. */
        memcpy(o, v[i] ? ":1\r\n" : ":0\r\n", 4);
        o += 4;
    }
    return need;
}

/* a as a finite number (strtod's syntax, the whole argument). */
static bool arg_number(const struct resp_arg *a, double *out)
{
    char buf[64];
    if (a->len == 0 || a->len >= sizeof(buf))
        return false;
    memcpy(buf, a->p, a->len);
    buf[a->len] = '\0';
    char *end;
    errno = 0;
    *out = strtod(buf, &end);
    return !errno && *end == '\0' && isfinite(*out);
}

static int bf_fail(enum resp_err *code, enum resp_err c, char *msg, size_t msglen,
                   const char *text)
{
    *code = c;
    snprintf(msg, msglen, "%s", text);
    return -1;
}

int resp_bf_opts_parse(const struct resp_arg *argv, size_t argc, bool insert,
                       struct resp_bf_opts *o, enum resp_err *code, char *msg, size_t msglen)
{
    bool items = !insert;
    for (size_t i = insert ? 2 : 4; i < argc && !(insert && items); i++) {
        const struct resp_arg *a = &argv[i];
        bool has_val = i + 1 < argc;
        if (insert && resp_arg_is(a, "ITEMS")) {
            if (i + 1 == argc) /* ITEMS and no item: RedisBloom's arity error */
                return bf_fail(code, RESP_ERR_WRONG_ARITY, msg, msglen,
                               "wrong number of arguments for 'bf.insert' command");
            o->items = i + 1;
            items = true;
        } else if (insert && resp_arg_is(a, "CAPACITY") && has_val) {
            o->capacity = &argv[++i];
        } else if (insert && resp_arg_is(a, "ERROR") && has_val) {
            o->error = &argv[++i];
        } else if (resp_arg_is(a, "EXPANSION") && has_val) {
            /* RedisBloom's words: "bad expansion" for no integer, the range
             * for an integer outside it (its tests match either). */
            double e;
            if (!arg_number(&argv[++i], &e) || e != floor(e))
                return bf_fail(code, RESP_ERR_BAD_ARGUMENT, msg, msglen, "bad expansion");
            if (e < 1 || e > 32768)
                return bf_fail(code, RESP_ERR_BAD_ARGUMENT, msg, msglen,
                               "expansion must be in the range [1, 32768]");
            o->expansion = (long)e;
        } else if (insert && resp_arg_is(a, "NOCREATE")) {
            o->nocreate = true;
        } else if (resp_arg_is(a, "NONSCALING")) {
            o->nonscaling = true;
        } else {
            *code = RESP_ERR_BAD_ARGUMENT;
            snprintf(msg, msglen, "unknown argument '%.*s'", (int)(a->len < 40 ? a->len : 40),
                     a->p);
            for (char *p = msg; *p; p++)
                if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                    *p = '?';
            return -1;
        }
    }
    if (!items)
        return bf_fail(code, RESP_ERR_WRONG_ARITY, msg, msglen,
                       "BF.INSERT needs ITEMS and at least one item");
    double cap, err;
    if (o->capacity && (!arg_number(o->capacity, &cap) || cap < 1 || cap != floor(cap)))
        return bf_fail(code, RESP_ERR_BAD_ARGUMENT, msg, msglen,
                       "(capacity should be larger than 0)");
    if (o->error && (!arg_number(o->error, &err) || !(err > 0 && err < 1)))
        return bf_fail(code, RESP_ERR_BAD_ARGUMENT, msg, msglen, "(0 < error rate range < 1)");
    if (o->expansion && o->nonscaling)
        return bf_fail(code, RESP_ERR_BAD_ARGUMENT, msg, msglen,
                       "Nonscaling filters cannot expand");
    return 0;
}
