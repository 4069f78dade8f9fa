/* The HTTP/1.x request parser: pure functions, see httpparse.h. Strict where
 * leniency lets two parsers disagree about where a request ends (request
 * smuggling behind a proxy): Content-Length must be digits, repeated only
 * with the same value, never beside Transfer-Encoding; obsolete line folding
 * and whitespace before a colon are refused; so are versions other than 1.0
 * and 1.1, and chunked framing that is not exactly RFC 9112's (bare LF or CR,
 * whitespace after a chunk size not followed by an extension). Lenient where
 * it costs nothing: bare-LF line ends in the head, empty lines before a
 * request, no Host header. */
#include "config.h"

#include "front/http/httpparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

#define CHUNK_LINE_MAX 4096      /* a chunk-size line with its extensions */
#define TRAILERS_MAX (16u << 10) /* all trailer fields of a chunked body */

/* RFC 9110 tchar: the characters of a method or a header name. A table:
 * header names are scanned byte by byte on every request. */
static const unsigned char tchar_table[256] = {
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1,         ['&'] = 1,         ['\''] = 1,
    ['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1,         ['^'] = 1,         ['_'] = 1,
    ['`'] = 1, ['|'] = 1, ['~'] = 1, ['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1};

static inline bool is_tchar(unsigned char c)
{
    return tchar_table[c];
}

/* Word-at-a-time tests on 8 bytes (exact as to whether any byte matches). */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline uint64_t load8(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}
static inline uint64_t has_byte(uint64_t w, unsigned char b)
{
    uint64_t x = w ^ (ONES * b);
    return (x - ONES) & ~x & HIGHS;
}
static inline uint64_t has_less(uint64_t w, unsigned char n) /* n <= 128 */
{
    return (w - ONES * n) & ~w & HIGHS;
}

static bool name_is(const char *p, size_t len, const char *want)
{
    size_t n = strlen(want);
    return len == n && strncasecmp(p, want, n) == 0;
}

static enum httpparse_status fail(int *status, int code, char *err, size_t errlen, const char *msg)
{
    *status = code;
    snprintf(err, errlen, "%s", msg);
    return HTTPPARSE_ERROR;
}

/* Find the end of the head (the byte after its blank line) at or after *scan;
 * 0 if it has not arrived. *scan is left where the search should resume. */
static size_t head_end(const char *buf, size_t len, size_t start, size_t *scan)
{
    size_t i = *scan > start ? *scan : start;
    while (i < len) {
        const char *lf = memchr(buf + i, '\n', len - i);
        if (!lf)
            break;
        size_t at = (size_t)(lf - buf);
        if (at + 1 >= len || (buf[at + 1] == '\r' && at + 2 >= len)) {
            *scan = at; /* the blank line may be completing: look here again */
            return 0;
        }
        if (buf[at + 1] == '\n')
            return at + 2;
        if (buf[at + 1] == '\r' && buf[at + 2] == '\n')
            return at + 3;
        i = at + 1;
    }
    *scan = len;
    return 0;
}

/* Each comma-separated element of a header value, trimmed, to fn. */
static bool each_element(const char *v, size_t len, bool (*fn)(const char *, size_t, void *),
                         void *arg)
{
    size_t i = 0;
    while (i <= len) {
        size_t j = i;
        while (j < len && v[j] != ',')
            j++;
        size_t a = i, b = j;
        while (a < b && (v[a] == ' ' || v[a] == '\t'))
            a++;
        while (b > a && (v[b - 1] == ' ' || v[b - 1] == '\t'))
            b--;
        if (b > a && !fn(v + a, b - a, arg))
            return false;
        i = j + 1;
    }
    return true;
}

struct conn_tokens {
    bool close, keep_alive;
};

static bool conn_token(const char *t, size_t n, void *arg)
{
    struct conn_tokens *ct = arg;
    if (name_is(t, n, "close"))
        ct->close = true;
    else if (name_is(t, n, "keep-alive"))
        ct->keep_alive = true;
    return true;
}

struct length_list {
    bool seen;
    uint64_t value;
    unsigned n; /* elements seen, so that a field with none (", ,") is refused */
};

/* One element of Content-Length: digits, the same value as any before it. */
static bool length_element(const char *t, size_t n, void *arg)
{
    struct length_list *ll = arg;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] < '0' || t[i] > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(t[i] - '0');
    }
    if (ll->seen && ll->value != v)
        return false;
    ll->seen = true;
    ll->value = v;
    ll->n++;
    return true;
}

struct te_list {
    unsigned n;
    bool last_chunked, other;
};

static bool te_element(const char *t, size_t n, void *arg)
{
    struct te_list *te = arg;
    te->n++;
    te->last_chunked = name_is(t, n, "chunked");
    if (!te->last_chunked)
        te->other = true;
    return true;
}

/* The request target: origin-form "/p?q", absolute-form "http://host/p?q", or
 * "*". Sets path and query; false if it is none of these. */
static bool parse_target(const char *t, size_t n, struct httpparse_head *h)
{
    const char *p = t, *end = t + n;
    if (n == 1 && *t == '*') {
        h->path = t;
        h->path_len = 1;
        return true;
    }
    if (*t != '/') {
        size_t skip = 0;
        if (n > 7 && strncasecmp(t, "http://", 7) == 0)
            skip = 7;
        else if (n > 8 && strncasecmp(t, "https://", 8) == 0)
            skip = 8;
        else
            return false;
        p = t + skip;
        while (p < end && *p != '/' && *p != '?')
            p++;
        if (p == t + skip)
            return false; /* no authority */
    }
    const char *q = memchr(p, '?', (size_t)(end - p));
    h->path = p;
    h->path_len = (size_t)((q ? q : end) - p);
    if (h->path_len == 0) { /* "http://host" or "http://host?q": the root */
        h->path = "/";
        h->path_len = 1;
    }
    h->query = q ? q + 1 : NULL;
    h->query_len = q ? (size_t)(end - q - 1) : 0;
    return true;
}

/* Any thread (pure). One function of ~150 lines on purpose: a single pass
 * over the head (request line, then each header line) whose state is a few
 * locals; split into steps, that state would travel through every call. */
enum httpparse_status httpparse_head(const char *buf, size_t len, size_t max_head, size_t *scan,
                                     struct httpparse_head *h, int *status, char *err,
                                     size_t errlen)
{
    size_t start = 0;
    while (start < len && (buf[start] == '\n' ||
                           (buf[start] == '\r' && start + 1 < len && buf[start + 1] == '\n')))
        start += buf[start] == '\r' ? 2 : 1;
    size_t end = head_end(buf, len, start, scan);
    if (end == 0) {
        if (len >= max_head)
            return fail(status, 431, err, errlen,
                        "the request line and headers are longer than http_max_headers");
        return HTTPPARSE_NEED_MORE;
    }
    if (end > max_head)
        return fail(status, 431, err, errlen,
                    "the request line and headers are longer than http_max_headers");
    memset(h, 0, sizeof(*h));
    h->head_len = end;

    /* Request line: method SP target SP HTTP/1.x */
    const char *line = buf + start;
    const char *lf = memchr(line, '\n', end - start);
    const char *le = lf > line && lf[-1] == '\r' ? lf - 1 : lf;
    const char *sp1 = memchr(line, ' ', (size_t)(le - line));
    if (!sp1 || sp1 == line)
        return fail(status, 400, err, errlen, "malformed request line");
    for (const char *c = line; c < sp1; c++)
        if (!is_tchar((unsigned char)*c))
            return fail(status, 400, err, errlen, "malformed method in the request line");
    h->method_s = line;
    h->method_len = (size_t)(sp1 - line);
    if (h->method_len == 3 && memcmp(line, "GET", 3) == 0)
        h->method = HTTPPARSE_GET;
    else if (h->method_len == 4 && memcmp(line, "HEAD", 4) == 0)
        h->method = HTTPPARSE_HEAD;
    else if (h->method_len == 4 && memcmp(line, "POST", 4) == 0)
        h->method = HTTPPARSE_POST;
    else if (h->method_len == 3 && memcmp(line, "PUT", 3) == 0)
        h->method = HTTPPARSE_PUT;
    else if (h->method_len == 6 && memcmp(line, "DELETE", 6) == 0)
        h->method = HTTPPARSE_DELETE;
    else
        h->method = HTTPPARSE_OTHER; /* methods are case-sensitive: "get" is another one */
    const char *tgt = sp1 + 1;
    const char *sp2 = memchr(tgt, ' ', (size_t)(le - tgt));
    if (!sp2 || sp2 == tgt)
        return fail(status, 400, err, errlen, "malformed request line");
    const char *t = tgt;
    for (; sp2 - t >= 8; t += 8) {
        uint64_t w = load8(t);
        if (has_less(w, '!') | has_byte(w, 0x7f))
            break;
    }
    for (; t < sp2; t++)
        if ((unsigned char)*t <= ' ' || *t == 0x7f)
            return fail(status, 400, err, errlen, "control character in the request target");
    if (!parse_target(tgt, (size_t)(sp2 - tgt), h))
        return fail(status, 400, err, errlen, "malformed request target");
    const char *ver = sp2 + 1;
    size_t vlen = (size_t)(le - ver);
    if (vlen != 8 || memcmp(ver, "HTTP/", 5) != 0 || ver[5] < '0' || ver[5] > '9' ||
        ver[6] != '.' || ver[7] < '0' || ver[7] > '9')
        return fail(status, 400, err, errlen, "malformed HTTP version in the request line");
    /* HTTP/1.2 to 1.9 are not 1.1: RFC 9112 lets a server refuse a minor
     * version it does not know, and a proxy may read such a request otherwise. */
    if (ver[5] != '1' || ver[7] > '1')
        return fail(status, 505, err, errlen, "only HTTP/1.0 and HTTP/1.1 are supported");
    h->minor = ver[7] - '0';

    /* Header fields. */
    struct conn_tokens ct = {false, false};
    struct length_list ll = {false, 0, 0};
    struct te_list te = {0, false, false};
    bool has_te = false;
    const char *p = lf + 1, *stop = buf + end;
    while (p < stop) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        const char *e = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
        if (e == p)
            break; /* the blank line */
        if (*p == ' ' || *p == '\t')
            return fail(status, 400, err, errlen, "obsolete header line folding");
        const char *colon = p;
        while (colon < e && is_tchar((unsigned char)*colon))
            colon++;
        if (colon == p || colon == e || *colon != ':')
            return fail(status, 400, err, errlen,
                        colon < e && (*colon == ' ' || *colon == '\t')
                            ? "whitespace between a header name and its colon"
                            : "malformed header line");
        size_t nlen = (size_t)(colon - p);
        const char *v = colon + 1, *ve = e;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        for (const char *c = v; c < ve; c++)
            if (*c == '\0' || *c == '\r')
                return fail(status, 400, err, errlen, "NUL or CR in a header value");
        size_t vl = (size_t)(ve - v);
        switch (nlen) {
        case 6:
            if (name_is(p, nlen, "expect") && name_is(v, vl, "100-continue"))
                h->expect_continue = true;
            break;
        case 10:
            if (name_is(p, nlen, "connection"))
                each_element(v, vl, conn_token, &ct);
            break;
        case 12:
            /* Only whether the body is JSON (a words filter's scan takes
             * text/plain or JSON): the media type before any parameter. */
            if (name_is(p, nlen, "content-type")) {
                size_t ml = 0;
                while (ml < vl && v[ml] != ';' && v[ml] != ' ' && v[ml] != '\t')
                    ml++;
                h->json_type = name_is(v, ml, "application/json");
            }
            break;
        case 13:
            if (name_is(p, nlen, "authorization")) {
                if (h->auth)
                    return fail(status, 400, err, errlen, "Authorization given twice");
                h->auth = v;
                h->auth_len = vl;
            }
            break;
        case 14:
            if (name_is(p, nlen, "content-length")) {
                unsigned before = ll.n;
                if (vl == 0 || !each_element(v, vl, length_element, &ll) || ll.n == before)
                    return fail(status, 400, err, errlen, "bad or conflicting Content-Length");
            }
            break;
        case 17:
            if (name_is(p, nlen, "transfer-encoding")) {
                has_te = true;
                each_element(v, vl, te_element, &te);
            }
            break;
        default:
            break;
        }
        p = nl + 1;
    }
    if (has_te) {
        if (h->minor == 0)
            return fail(status, 400, err, errlen, "Transfer-Encoding in an HTTP/1.0 request");
        if (ll.seen)
            return fail(status, 400, err, errlen,
                        "both Content-Length and Transfer-Encoding: the body's end is ambiguous");
        /* 501 when a coding we lack is named ("gzip, chunked" too), else 400 (empty, or
         * "chunked, chunked") */
        if (te.n != 1 || !te.last_chunked)
            return fail(status, te.other ? 501 : 400, err, errlen,
                        "only Transfer-Encoding: chunked is supported");
        h->chunked = true;
    }
    h->has_length = ll.seen;
    h->content_length = ll.value;
    h->keep_alive = h->minor >= 1 ? !ct.close : ct.keep_alive && !ct.close;
    return HTTPPARSE_OK;
}

enum {
    CH_SIZE,
    CH_SIZE_WS, /* whitespace after the size: only a ';' may follow */
    CH_EXT,
    CH_SIZE_LF,
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TRAILER,
    CH_TRAILER_LINE,
    CH_TRAILER_LINE_LF,
    CH_TRAILER_LF,
    CH_DONE
};


/* A byte-at-a-time state machine over the framing; data is moved in runs.
 * st->left is the chunk size being read, then what is left of its data;
 * st->line bounds a size line and the trailers. Strictly RFC 9112, section 7.1:
 * every line of the framing ends in CRLF (a bare LF or a bare CR is refused,
 * also inside an extension or a trailer), and whitespace after the size may
 * only precede a ';' ("f 5" is not 0xf). A front proxy that reads the framing
 * another way could otherwise smuggle a request past it.
 * It stays one function (~110 lines) because the machine's states are its
 * cases: split, each state would need the whole of st and the buffer. */
enum httpparse_status httpparse_chunked(char *buf, size_t len, size_t max_body,
                                        struct httpparse_chunked *st, int *status, char *err,
                                        size_t errlen)
{
    while (st->in < len) {
        unsigned char c = (unsigned char)buf[st->in];
        switch (st->phase) {
        case CH_SIZE: {
            int d = util_hexval(c);
            if (d >= 0) {
                /* left holds the size so far; 15 hex digits is 2^60, past any body */
                if (st->left >> 56)
                    return fail(status, 400, err, errlen, "chunk size too large");
                /* Leading zeros do not grow the size: bound the line instead. */
                if (++st->line > CHUNK_LINE_MAX)
                    return fail(status, 400, err, errlen, "chunk size line too long");
                st->left = st->left << 4 | (uint64_t)d;
                st->in++;
                break;
            }
            if (st->line == 0 || !(c == ';' || c == ' ' || c == '\t' || c == '\r'))
                goto bad_size;
            st->phase = c == '\r' ? CH_SIZE_LF : c == ';' ? CH_EXT : CH_SIZE_WS;
            st->in++;
            break;
        }
        case CH_SIZE_WS:
        case CH_EXT:
            st->in++;
            if (++st->line > CHUNK_LINE_MAX)
                return fail(status, 400, err, errlen, "chunk extensions too long");
            if (st->phase == CH_SIZE_WS) {
                if (c == ';')
                    st->phase = CH_EXT;
                else if (c != ' ' && c != '\t')
                    goto bad_size;
            } else if (c == '\r') {
                st->phase = CH_SIZE_LF;
            } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
                return fail(status, 400, err, errlen, "control character in a chunk extension");
            }
            break;
        case CH_SIZE_LF:
            if (c != '\n')
                return fail(status, 400, err, errlen, "chunk size line not ended by CRLF");
            st->in++;
            st->phase = CH_DATA;
            st->line = 0;
            if (st->left == 0) {
                st->phase = CH_TRAILER;
            } else if (st->left > max_body || st->out + st->left > max_body) {
                return fail(status, 413, err, errlen, "the body is longer than http_max_body");
            }
            break;
        case CH_DATA: {
            size_t n = len - st->in;
            if (n > st->left)
                n = (size_t)st->left;
            memmove(buf + st->out, buf + st->in, n);
            st->out += n;
            st->in += n;
            st->left -= n;
            if (st->left == 0)
                st->phase = CH_DATA_CR;
            break;
        }
        case CH_DATA_CR:
        case CH_DATA_LF:
            if (c != (st->phase == CH_DATA_CR ? '\r' : '\n'))
                return fail(status, 400, err, errlen, "chunk data not followed by CRLF");
            st->in++;
            st->phase = st->phase == CH_DATA_CR ? CH_DATA_LF : CH_SIZE;
            break;
        case CH_TRAILER:
        case CH_TRAILER_LINE:
            st->in++;
            if (c == '\n')
                return fail(status, 400, err, errlen, "chunked trailer line not ended by CRLF");
            if (c == '\r')
                st->phase = st->phase == CH_TRAILER ? CH_TRAILER_LF : CH_TRAILER_LINE_LF;
            else if (++st->line > TRAILERS_MAX)
                return fail(status, 400, err, errlen, "chunked trailers too long");
            else
                st->phase = CH_TRAILER_LINE;
            break;
        case CH_TRAILER_LINE_LF:
        case CH_TRAILER_LF:
            if (c != '\n')
                return fail(status, 400, err, errlen, "malformed end of a chunked body");
            st->in++;
            st->phase = st->phase == CH_TRAILER_LF ? CH_DONE : CH_TRAILER;
            break;
        }
        if (st->phase == CH_DONE)
            return HTTPPARSE_OK;
    }
    return HTTPPARSE_NEED_MORE;
bad_size:
    return fail(status, 400, err, errlen, "malformed chunk size line");
}

long httpparse_pct_decode(const char *s, size_t len, char *out, bool plus_space)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        /* Runs of plain bytes (most of a URL) eight at a time. */
        while (len - i >= 8) {
            uint64_t w = load8(s + i);
            if (has_byte(w, '%') | (plus_space ? has_byte(w, '+') : 0))
                break;
            memcpy(out + n, s + i, 8);
            n += 8;
            i += 8;
        }
        if (i >= len)
            break;
        if (s[i] == '%') {
            if (i + 2 >= len)
                return -1;
            int hi = util_hexval((unsigned char)s[i + 1]), lo = util_hexval((unsigned char)s[i + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            out[n++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[n++] = plus_space && s[i] == '+' ? ' ' : s[i];
        }
    }
    return (long)n;
}

int httpparse_query_params(const char *query, size_t qlen, struct httpparse_param *params, size_t n,
                           char *out, char *err, size_t errlen)
{
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        params[k].value = NULL;
        params[k].len = 0;
    }
    /* NULL (no '?' in the target) is an empty query; NULL + 0 is undefined. */
    if (query == NULL)
        return 0;
    const char *p = query, *qend = query + qlen;
    while (p < qend) {
        const char *end = memchr(p, '&', (size_t)(qend - p));
        if (!end)
            end = qend;
        const char *eq = memchr(p, '=', (size_t)(end - p));
        const char *kend = eq ? eq : end;
        /* Every name wanted is shorter than 64 bytes, and a key longer than
         * that decodes to at least 22 bytes: only shorter keys are decoded
         * (and checked). */
        char key[64];
        long klen = -2;
        if ((size_t)(kend - p) < sizeof(key))
            klen = httpparse_pct_decode(p, (size_t)(kend - p), key, true);
        if (klen == -1) {
            snprintf(err, errlen, "bad %%-escape in the query string");
            return -1;
        }
        for (size_t k = 0; klen >= 0 && k < n; k++) {
            struct httpparse_param *w = &params[k];
            size_t nlen = strlen(w->name);
            if ((size_t)klen != nlen || memcmp(key, w->name, nlen) != 0)
                continue;
            if (w->value) {
                snprintf(err, errlen, "parameter '%s' given more than once", w->name);
                return -1;
            }
            /* Values decode to no more bytes than they take in the query,
             * and each parameter is decoded once: out never passes qlen. */
            const char *v = eq ? eq + 1 : end;
            long dn = httpparse_pct_decode(v, (size_t)(end - v), out + at, true);
            if (dn < 0) {
                snprintf(err, errlen, "bad %%-escape in parameter '%s'", w->name);
                return -1;
            }
            w->value = out + at;
            w->len = (size_t)dn;
            at += (size_t)dn;
            break;
        }
        p = end + 1;
    }
    return 0;
}

int httpparse_query(const char *query, size_t qlen, const char *name, char *out, size_t *outlen,
                    char *err, size_t errlen)
{
    struct httpparse_param w = {.name = name};
    int rc = httpparse_query_params(query, qlen, &w, 1, out, err, errlen);
    *outlen = rc == 0 ? w.len : 0;
    return rc < 0 ? -1 : w.value != NULL;
}

bool httpparse_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        /* Eight ASCII bytes at a time: the common case for URLs and names. */
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (w & 0x8080808080808080ull)
                break;
            p += 8;
        }
        if (p >= end)
            break;
        unsigned c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t n;
        unsigned cp;
        if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if ((size_t)(end - p) <= n)
            return false;
        for (size_t i = 1; i <= n; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        p += n + 1;
    }
    return true;
}
