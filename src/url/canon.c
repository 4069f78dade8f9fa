/* Safe Browsing v4 canonicalisation: pure functions, see canon.h. The steps run
 * in the spec's order on a scratch copy: trim, strip tab/CR/LF and the
 * fragment, unescape until stable, then parse the unescaped bytes (so
 * "http%3A%2F%2Fhost/" is a URL), then write the canonical form, escaping as it
 * goes. Where the spec is silent (IPv6, ports, userinfo, schemes without "//",
 * over-long input) the choices are written down in docs/url-matching.md. */
#include "config.h"

#include "url/canon.h"
#include "url/canon_ip.h"

#include <idn2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

/* A host before IDN conversion may be longer than URL_HOST_MAX (UTF-8 takes
 * more bytes than punycode for some scripts); this bounds the raw form. */
#define HOST_RAW_MAX 1024

static unsigned char lower(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') ? (unsigned char)(ch + 32) : ch;
}

/* The rewrite %XX -> byte can never overlap itself (X is a hex digit, never
 * '%'), so repeated unescaping has one fixed point whatever the order. A stack
 * reaches it in one pass: push each byte, and while the top three are %XX,
 * replace them by the byte they encode, which may complete an earlier %X_. */
size_t url_unescape(char *buf, size_t len)
{
    const char *pct = memchr(buf, '%', len);
    if (!pct)
        return len; /* the common case: nothing to do */
    size_t o = (size_t)(pct - buf);
    for (size_t i = o; i < len; i++) {
        buf[o++] = buf[i];
        while (o >= 3 && buf[o - 3] == '%') {
            int hi = util_hexval((unsigned char)buf[o - 2]);
            int lo = util_hexval((unsigned char)buf[o - 1]);
            if (hi < 0 || lo < 0)
                break;
            buf[o - 3] = (char)(hi << 4 | lo);
            o -= 2;
        }
    }
    return o;
}

/* The bytes the spec re-escapes: <= 0x20, >= 0x7f, '#' and '%'. A table:
 * every byte of every canonical URL is looked up. */
static const unsigned char escaped[256] = {
    [0x00 ... 0x20] = 1,
    ['#'] = 1,
    ['%'] = 1,
    [0x7f ... 0xff] = 1,
};

/* An output cursor over url[]: appends fail (return false) once the canonical
 * form would pass URL_CANON_MAX, which the callers turn into an error. */
struct out {
    char *buf;
    size_t len;
};

static bool out_put(struct out *o, const char *s, size_t n)
{
    if (n > URL_CANON_MAX - o->len)
        return false;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    return true;
}

/* Append s[0..n) escaped: runs that need no escape are copied whole. */
static bool put_escaped(struct out *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && !escaped[(unsigned char)s[run]])
            run++;
        if (!out_put(o, s + i, run - i))
            return false;
        if (run == n)
            return true;
        if (o->len + 3 > URL_CANON_MAX)
            return false;
        unsigned char ch = (unsigned char)s[run];
        o->buf[o->len++] = '%';
        o->buf[o->len++] = hex[ch >> 4];
        o->buf[o->len++] = hex[ch & 15];
        i = run + 1;
    }
    return true;
}

/* ---- host names ---- */

/* Copy h[0..n) into out without leading and trailing dots and with runs of
 * dots collapsed to one. False if the result would pass cap. */
static bool dots_clean(const char *h, size_t n, char *out, size_t cap, size_t *outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (h[i] == '.' && (o == 0 || out[o - 1] == '.'))
            continue;
        if (o == cap)
            return false;
        out[o++] = h[i];
    }
    if (o && out[o - 1] == '.')
        o--;
    *outlen = o;
    return true;
}

/* What IDN conversion may leave in a host for it to be taken: letters,
 * digits, '-', '_' and '.'. UTS #46 maps some characters to ASCII punctuation
 * ('/', ':', '%' from their full-width forms); a host made of those would
 * parse differently the second time and break idempotence, so such a host is
 * kept as raw bytes and escaped instead, as for bytes that are not UTF-8. */
static bool idn_result_ok(const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_' || ch == '.'))
            return false;
    }
    return true;
}

/* Canonicalise the unescaped host raw[0..n) into out (capacity URL_HOST_MAX
 * + 1, NUL-terminated): an IPv6 literal in brackets is written with brackets
 * if brackets is true; a name has its dots cleaned up, goes through IDN if it
 * has non-ASCII bytes (non-transitional UTS #46, as browsers do), then, if it
 * spells an IPv4 address, becomes dotted decimal, else is lower-cased. */
static int host_canon(const char *raw, size_t n, bool brackets, char *out, size_t *outlen,
                      enum url_host_type *type, char *err, size_t errlen)
{
    /* Leading dots are dropped below; a host that starts with '[' once they
     * are gone must be an IPv6 literal, or the canonical form "[..." would
     * parse as one the second time. */
    while (n && raw[0] == '.') {
        raw++;
        n--;
    }
    if (n && raw[0] == '[') {
        char v6[48];
        size_t v6len;
        if (n < 2 || raw[n - 1] != ']' || !url_ipv6_canon(raw + 1, n - 2, v6, &v6len, type))
            return util_fail(err, errlen, "bad IPv6 literal");
        if (*type == URL_HOST_IPV6 && brackets) {
            out[0] = '[';
            memcpy(out + 1, v6, v6len);
            out[v6len + 1] = ']';
            *outlen = v6len + 2;
        } else {
            memcpy(out, v6, v6len);
            *outlen = v6len;
        }
        out[*outlen] = 0;
        return 0;
    }
    char tmp[HOST_RAW_MAX + 1];
    size_t len;
    if (!dots_clean(raw, n, tmp, HOST_RAW_MAX, &len))
        return util_fail(err, errlen, "host longer than %d bytes", URL_HOST_MAX);
    if (len == 0)
        return util_fail(err, errlen, "empty host");
    tmp[len] = 0;
    bool ascii = true;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)tmp[i] >= 0x80) {
            ascii = false;
            break;
        }
    if (!ascii && memchr(tmp, 0, len) == NULL) {
        char *puny = NULL;
        if (idn2_to_ascii_8z(tmp, &puny, IDN2_NONTRANSITIONAL) == IDN2_OK && idn_result_ok(puny)) {
            size_t plen = strlen(puny);
            bool ok = plen <= HOST_RAW_MAX && dots_clean(puny, plen, tmp, HOST_RAW_MAX, &len);
            if (!ok || len == 0) {
                idn2_free(puny);
                return util_fail(err, errlen, "%s", ok ? "empty host" : "host too long");
            }
        }
        idn2_free(puny);
    }
    uint32_t a;
    if (url_ipv4_parse(tmp, len, &a)) {
        *outlen = url_ipv4_format(a, out);
        *type = URL_HOST_IPV4;
        return 0;
    }
    if (len > URL_HOST_MAX)
        return util_fail(err, errlen, "host longer than %d bytes", URL_HOST_MAX);
    for (size_t i = 0; i < len; i++)
        out[i] = (char)lower((unsigned char)tmp[i]);
    out[len] = 0;
    *outlen = len;
    *type = URL_HOST_NAME;
    return 0;
}

/* ---- URLs ---- */

/* The steps before parsing, into work: trim bytes <= 0x20 at both ends,
 * drop tab, CR and LF, drop the fragment (from the first '#'; an escaped
 * "%23" is data) if fragment is true, and unescape. Returns the length. */
static size_t prepare(const char *in, size_t len, char *work, bool fragment)
{
    while (len && (unsigned char)in[0] <= 0x20) {
        in++;
        len--;
    }
    while (len && (unsigned char)in[len - 1] <= 0x20)
        len--;
    const char *hash = fragment ? memchr(in, '#', len) : NULL;
    if (hash)
        len = (size_t)(hash - in);
    size_t o = 0;
    if (!memchr(in, '\t', len) && !memchr(in, '\r', len) && !memchr(in, '\n', len)) {
        memcpy(work, in, len); /* the common case, at memchr's speed */
        o = len;
    } else {
        for (size_t i = 0; i < len; i++)
            if (in[i] != '\t' && in[i] != '\r' && in[i] != '\n')
                work[o++] = in[i];
    }
    return url_unescape(work, o);
}

static bool is_alpha(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool is_digit(unsigned char ch)
{
    return ch >= '0' && ch <= '9';
}

/* The scheme of s[0..n): its length (> 0) if s starts "scheme://", 0 if s has
 * no scheme ("host/...", "host:80/..."), -1 for "scheme:" without "//"
 * (mailto:, javascript:, data:), which names no host. */
static long scheme_len(const char *s, size_t n)
{
    size_t i = 0;
    if (n == 0 || !is_alpha((unsigned char)s[0]))
        return 0;
    while (i < n && (is_alpha((unsigned char)s[i]) || is_digit((unsigned char)s[i]) ||
                     s[i] == '+' || s[i] == '-' || s[i] == '.'))
        i++;
    if (i == n || s[i] != ':')
        return 0;
    if (i + 2 < n && s[i + 1] == '/' && s[i + 2] == '/')
        return (long)i;
    /* "host:8080/..." has digits (or nothing) up to the path, query or end. */
    size_t j = i + 1;
    while (j < n && is_digit((unsigned char)s[j]))
        j++;
    if (j == n || s[j] == '?' || (s[j] == '/' && j > i + 1))
        return 0;
    return -1;
}

/* Append the path p[0..n) (empty or starting with '/') to o, escaped, with
 * runs of slashes collapsed and "." and ".." segments resolved; a path that
 * names a directory (ends in '/', ".", "..") keeps its trailing slash. */
static bool put_path(struct out *o, const char *p, size_t n)
{
    size_t root = o->len;
    if (!out_put(o, "/", 1))
        return false;
    size_t i = 0;
    while (i < n) {
        while (i < n && p[i] == '/')
            i++;
        size_t s = i;
        const char *slash = memchr(p + i, '/', n - i);
        i = slash ? (size_t)(slash - p) : n;
        size_t sl = i - s;
        if (sl == 0 || (sl == 1 && p[s] == '.'))
            continue;
        if (sl == 2 && p[s] == '.' && p[s + 1] == '.') {
            if (o->len > root + 1) {
                o->len--; /* the '/' after the last segment */
                while (o->buf[o->len - 1] != '/')
                    o->len--;
            }
            continue;
        }
        /* A last segment without '/' after it is a file: no slash. */
        bool file = i == n;
        if (!put_escaped(o, p + s, sl) || (!file && !out_put(o, "/", 1)))
            return false;
    }
    return true;
}

/* Canonicalise the prepared URL c->work[0..n).
 * Long (~95 lines) as the specification's steps in their order over one
 * output buffer: scheme, authority (userinfo, host, port), path, query; each
 * step writes where the last stopped and records its offsets in c. */
static int url_from_work(struct url_canon *c, size_t n, char *err, size_t errlen)
{
    const char *s = c->work;
    if (n == 0)
        return util_fail(err, errlen, "empty URL");

    long sl = scheme_len(s, n);
    if (sl < 0)
        return util_fail(err, errlen, "not a URL with a host (scheme without \"//\")");
    if (sl > URL_SCHEME_MAX)
        return util_fail(err, errlen, "scheme longer than %d bytes", URL_SCHEME_MAX);
    struct out o = {c->url, 0};
    if (sl == 0) {
        out_put(&o, "http", 4);
    } else {
        for (long i = 0; i < sl; i++)
            o.buf[o.len++] = (char)lower((unsigned char)s[i]);
        s += sl + 3;
        n -= (size_t)sl + 3;
    }
    c->scheme_len = o.len;
    out_put(&o, "://", 3);

    /* The authority runs to the first '/' or '?': [userinfo@]host[:port]. */
    size_t auth = 0;
    while (auth < n && s[auth] != '/' && s[auth] != '?')
        auth++;
    const char *h = s;
    size_t hn = auth;
    for (size_t i = hn; i > 0; i--)
        if (h[i - 1] == '@') {
            h += i;
            hn -= i;
            break;
        }
    size_t port = hn; /* where ":port" starts, hn if none */
    size_t lead = 0;  /* leading dots, dropped with the host's other dots */
    while (lead < hn && h[lead] == '.')
        lead++;
    if (lead < hn && h[lead] == '[') {
        const char *rb = memchr(h, ']', hn);
        if (!rb)
            return util_fail(err, errlen, "bad IPv6 literal");
        port = (size_t)(rb - h) + 1;
        if (port < hn && h[port] != ':')
            return util_fail(err, errlen, "bad IPv6 literal");
    } else {
        const char *colon = memchr(h, ':', hn);
        if (colon)
            port = (size_t)(colon - h);
    }
    if (port < hn) {
        size_t digits = hn - port - 1;
        unsigned long v = 0;
        for (size_t i = port + 1; i < hn; i++) {
            if (!is_digit((unsigned char)h[i]) || digits > 5)
                return util_fail(err, errlen, "bad port");
            v = v * 10 + (unsigned)(h[i] - '0');
        }
        if (v > 65535)
            return util_fail(err, errlen, "bad port");
    }
    if (port == 0)
        return util_fail(err, errlen, "no host");

    char host[URL_HOST_MAX + 1];
    size_t host_len;
    if (host_canon(h, port, true, host, &host_len, &c->host_type, err, errlen) < 0)
        return -1;
    c->host_off = o.len;
    if (!put_escaped(&o, host, host_len))
        goto too_long;
    c->host_len = o.len - c->host_off;

    const char *q = memchr(s + auth, '?', n - auth);
    size_t path_end = q ? (size_t)(q - s) : n;
    c->path_off = o.len;
    if (!put_path(&o, s + auth, path_end - auth))
        goto too_long;
    c->path_len = o.len - c->path_off;
    c->has_query = q != NULL;
    c->query_off = c->query_len = 0;
    if (q) {
        if (!out_put(&o, "?", 1))
            goto too_long;
        c->query_off = o.len;
        if (!put_escaped(&o, q + 1, n - path_end - 1))
            goto too_long;
        c->query_len = o.len - c->query_off;
    }
    c->url[o.len] = 0;
    c->len = o.len;
    return 0;
too_long:
    return util_fail(err, errlen, "canonical URL longer than %d bytes", URL_CANON_MAX);
}

/* ---- the fast path ---- */

/* Eight bytes at a time (SWAR): each test below is exact as a yes/no answer
 * for the word (a borrow can only mark bytes above one that truly matches). */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

static uint64_t load64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static void store64(char *p, uint64_t w)
{
    memcpy(p, &w, 8);
}

/* The bytes of w equal to b, as their high bits; exact per byte (no borrow
 * crosses bytes), so every match is found, not only the first. */
static uint64_t byte_eq(uint64_t w, unsigned char b)
{
    uint64_t x = w ^ (ONES * b);
    return ~(((x & ~HIGHS) + ~HIGHS) | x | ~HIGHS);
}

/* The bytes of w in 'A'..'Z', as their high bits, for a word of bytes below
 * 0x80 (fast_clean passed): no sum below carries out of its byte. */
static uint64_t word_upper(uint64_t w)
{
    return (w + ONES * (0x80 - 'A')) & ~(w + ONES * (0x80 - 'Z' - 1)) & HIGHS;
}

/* Whether the word w holds a byte the fast path cannot take: < 0x21 (white
 * space, controls), > 0x7e (DEL, non-ASCII), '#' or '%'. */
static uint64_t word_stops(uint64_t w)
{
    uint64_t lt21 = (w - ONES * 0x21) & ~w & HIGHS;
    uint64_t gt7e = ((w + ONES * (0x7f - 0x7e)) | w) & HIGHS;
    uint64_t hash = w ^ (ONES * '#'), pct = w ^ (ONES * '%');
    uint64_t eq = ((hash - ONES) & ~hash) | ((pct - ONES) & ~pct);
    return lt21 | gt7e | (eq & HIGHS);
}

/* The bytes the fast path cannot take (see word_stops), for the tail. */
static const unsigned char fast_stop[256] = {
    [0x00 ... 0x20] = 1,
    ['#'] = 1,
    ['%'] = 1,
    [0x7f ... 0xff] = 1,
};

/* True if s[0..n) has no byte the fast path cannot take. */
static bool fast_clean(const char *s, size_t n)
{
    uint64_t any = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        any |= word_stops(load64(s + i));
    for (; i < n; i++)
        any |= fast_stop[(unsigned char)s[i]];
    return !any;
}

/* What a host byte is to the fast path: part of a label (0), a dot, what
 * ends the host (the port's ':', the path's '/', the query's '?') or what
 * only the general path takes ('@' of userinfo, '[' of an IPv6 literal). */
enum { HB_LABEL = 0, HB_DOT, HB_END, HB_SLOW };
static const unsigned char host_byte[256] = {
    ['.'] = HB_DOT, [':'] = HB_END, ['/'] = HB_END, ['?'] = HB_END, ['@'] = HB_SLOW, ['['] = HB_SLOW,
};

/* Whether a path's byte after a '/' starts an empty, "." or ".." segment,
 * given the bytes left (rest >= 1): what only the general path resolves. */
static bool odd_segment(const char *nx, size_t rest)
{
    if (nx[0] == '/')
        return true;
    if (nx[0] != '.')
        return false;
    if (rest == 1 || nx[1] == '/' || nx[1] == '?')
        return true;
    return nx[1] == '.' && (rest == 2 || nx[2] == '/' || nx[2] == '?');
}

/* 4 if in[] starts with "http://", 5 with "https://", in any case (one
 * load and two compares: what nearly every URL starts with); else 0 and
 * scheme_len decides. The letters are compared with bit 5 set, which maps
 * each upper-case letter to its lower-case one and nothing else to one. */
static long web_scheme_len(const char *in, size_t len)
{
    if (len < 8)
        return 0;
    uint64_t w = load64(in);
    uint64_t http = load64("http:///"), https = load64("https://");
    if (((w | 0x20202020ull) & 0x00ffffffffffffffull) == (http & 0x00ffffffffffffffull))
        return 4;
    return (w | 0x2020202020ull) == https ? 5 : 0;
}

/* The URL in[0..len) when it needs only what most URLs need: a scheme with
 * "//" (or none), an ASCII host name (any case, no userinfo, stray dots, IP
 * address or IPv6 literal), an optional valid port, and a path and query
 * with nothing to unescape, escape or resolve (no %, no bytes <= 0x20 or >=
 * 0x7f, no '#', no "//", "." or ".." segment). Then the canonical form is the
 * input with the scheme and host lower-cased and the port dropped, written in
 * one scan and one copy; the general steps cost about three times as much on
 * such a URL (docs/benchmarks.md). 1 when c is filled; 0 when the general
 * path must decide (it gives the same result for every input this accepts:
 * the unit tests and the url fuzz harness compare both). Any thread. */
static int url_fast(struct url_canon *c, const char *in, size_t len)
{
    if (!fast_clean(in, len))
        return 0;
    long sl = web_scheme_len(in, len);
    if (sl == 0)
        sl = scheme_len(in, len);
    if (sl < 0 || sl > URL_SCHEME_MAX)
        return 0;
    char *o = c->url;
    size_t i = 0;
    if (sl == 0) {
        memcpy(o, "http", 4);
        c->scheme_len = 4;
    } else {
        for (; i < (size_t)sl; i++)
            o[i] = (char)lower((unsigned char)in[i]);
        c->scheme_len = (size_t)sl;
        i += 3;
    }
    size_t ol = c->scheme_len;
    memcpy(o + ol, "://", 3);
    ol += 3;

    /* The host: labels split by single dots, not starting or ending with one. */
    c->host_off = ol;
    size_t label = i; /* where the current label starts */
    unsigned dots = 0;
    bool ended = false;
    /* Eight bytes at a time while they last: lower-cased and stored whole
     * (the output has room: it is at most 8 bytes longer than the input),
     * the host's part of the word counted, its dots noted and checked. */
    while (i + 8 <= len) {
        uint64_t w = load64(in + i);
        uint64_t end =
            byte_eq(w, ':') | byte_eq(w, '/') | byte_eq(w, '?') | byte_eq(w, '@') | byte_eq(w, '[');
        size_t nb = end ? (size_t)__builtin_ctzll(end) / 8 : 8;
        uint64_t dot = byte_eq(w, '.');
        if (nb < 8)
            dot &= (1ull << (8 * nb)) - 1;
        store64(o + ol, w | (word_upper(w) >> 2));
        for (; dot; dot &= dot - 1) {
            size_t b = (size_t)__builtin_ctzll(dot) / 8;
            if (i + b == label)
                return 0; /* a leading dot or "..": the general path cleans it */
            label = i + b + 1;
            c->dot[dots++ % URL_CANON_DOTS] = (uint16_t)(ol + b);
        }
        i += nb;
        ol += nb;
        if (end) {
            ended = true;
            break;
        }
    }
    for (; !ended && i < len; i++) {
        unsigned char ch = (unsigned char)in[i];
        unsigned cls = host_byte[ch];
        if (cls == HB_DOT) {
            if (i == label)
                return 0;
            label = i + 1;
            c->dot[dots++ % URL_CANON_DOTS] = (uint16_t)ol;
        } else if (cls != HB_LABEL) {
            break;
        }
        o[ol++] = (char)lower(ch);
    }
    if (i < len && host_byte[(unsigned char)in[i]] == HB_SLOW)
        return 0;
    c->host_len = ol - c->host_off;
    /* An IPv4 address in any spelling ends in a number, so a name whose last
     * label does not start with a digit is never one. */
    if (i == label || c->host_len > URL_HOST_MAX || is_digit((unsigned char)in[label]))
        return 0;
    if (i < len && in[i] == ':') {
        size_t start = ++i;
        unsigned long v = 0;
        for (; i < len && in[i] != '/' && in[i] != '?'; i++) {
            if (!is_digit((unsigned char)in[i]) || i - start >= 5)
                return 0;
            v = v * 10 + (unsigned)(in[i] - '0');
        }
        if (v > 65535)
            return 0;
    }

    /* The path, to the first '?'. */
    c->path_off = ol;
    size_t p = i;
    const char *q = memchr(in + i, '?', len - i);
    size_t path_end = q ? (size_t)(q - in) : len;
    unsigned slashes = 0;
    for (const char *sl2 = in + i; sl2 && sl2 < in + path_end;) {
        size_t at = (size_t)(sl2 - in);
        if (at + 1 < len && odd_segment(sl2 + 1, len - at - 1))
            return 0;
        if (slashes < URL_CANON_SLASHES)
            c->slash[slashes++] = (uint16_t)(ol + (at - p));
        sl2 = memchr(sl2 + 1, '/', path_end - at - 1);
    }
    i = path_end;
    if (i == p) {
        c->slash[0] = (uint16_t)ol;
        slashes = 1;
        o[ol++] = '/';
    } else {
        memcpy(o + ol, in + p, i - p);
        ol += i - p;
    }
    c->path_len = ol - c->path_off;
    c->has_query = i < len;
    c->query_off = c->query_len = 0;
    if (c->has_query) {
        o[ol++] = '?';
        c->query_off = ol;
        memcpy(o + ol, in + i + 1, len - i - 1);
        ol += len - i - 1;
        c->query_len = ol - c->query_off;
    }
    if (ol > URL_CANON_MAX)
        return 0;
    o[ol] = 0;
    c->len = ol;
    c->host_type = URL_HOST_NAME;
    c->host_dots = dots;
    c->path_slashes = slashes;
    c->marked = true;
    return 1;
}

int url_canon_url_general(struct url_canon *c, const char *in, size_t len, char *err,
                          size_t errlen)
{
    c->marked = false;
    if (len > URL_CANON_MAX)
        return util_fail(err, errlen, "URL longer than %d bytes", URL_CANON_MAX);
    return url_from_work(c, prepare(in, len, c->work, true), err, errlen);
}

int url_canon_url(struct url_canon *c, const char *in, size_t len, char *err, size_t errlen)
{
    /* The fast path's output is at most 8 bytes longer than its input
     * ("http://" and a '/' added), so it never passes url[]. */
    if (len <= URL_CANON_MAX - 8 && url_fast(c, in, len))
        return 0;
    return url_canon_url_general(c, in, len, err, errlen);
}

/* ---- bare hosts and e-mail addresses ---- */

/* Fill c with the host h[0..n) alone (already trimmed and unescaped). */
static int host_only(struct url_canon *c, const char *h, size_t n, char *err, size_t errlen)
{
    char host[URL_HOST_MAX + 1];
    size_t host_len;
    char v6[48];
    /* What ends a URL's host cannot be inside one: a "host" with these would
     * give a key that no URL's host ever equals. */
    for (size_t i = 0; i < n; i++)
        if (h[i] == '/' || h[i] == '?' || h[i] == '@')
            return util_fail(err, errlen, "'%c' in host", h[i]);
    /* An IPv6 address may come without brackets: it has two colons or more. */
    const char *colon = memchr(h, ':', n);
    if (colon && memchr(colon + 1, ':', n - (size_t)(colon - h) - 1) && h[0] != '[') {
        if (!url_ipv6_canon(h, n, v6, &host_len, &c->host_type))
            return util_fail(err, errlen, "bad IPv6 address");
        memcpy(host, v6, host_len);
    } else {
        size_t port = n;
        if (n && h[0] == '[') {
            const char *rb = memchr(h, ']', n);
            port = rb ? (size_t)(rb - h) + 1 : n;
        } else if (colon) {
            port = (size_t)(colon - h);
        }
        for (size_t i = port + 1; i < n; i++)
            if (!is_digit((unsigned char)h[i]) || n - port - 1 > 5)
                return util_fail(err, errlen, "bad port");
        if (port < n && h[port] != ':')
            return util_fail(err, errlen, "bad IPv6 literal");
        if (host_canon(h, port, false, host, &host_len, &c->host_type, err, errlen) < 0)
            return -1;
    }
    struct out o = {c->url, 0};
    if (!put_escaped(&o, host, host_len))
        return util_fail(err, errlen, "host too long");
    c->url[o.len] = 0;
    c->len = c->host_len = o.len;
    c->marked = false;
    c->scheme_len = c->host_off = c->path_off = c->path_len = 0;
    c->query_off = c->query_len = 0;
    c->has_query = false;
    return 0;
}

int url_canon_host(struct url_canon *c, const char *in, size_t len, char *err, size_t errlen)
{
    if (len > URL_CANON_MAX)
        return util_fail(err, errlen, "host longer than %d bytes", URL_CANON_MAX);
    /* Prepared as a URL is (a host that reaches us escaped, "evil%2Eexample",
     * is the same host), but a '#' is kept: the spec's "host%23.com". */
    size_t n = prepare(in, len, c->work, false);
    if (n == 0)
        return util_fail(err, errlen, "empty host");
    return host_only(c, c->work, n, err, errlen);
}

/* The host of the prepared e-mail address c->work[0..n). */
static int email_from_work(struct url_canon *c, size_t n, char *err, size_t errlen)
{
    const char *at = NULL;
    for (size_t i = n; i > 0; i--)
        if (c->work[i - 1] == '@') {
            at = c->work + i - 1;
            break;
        }
    if (!at)
        return util_fail(err, errlen, "no '@' in e-mail address");
    const char *h = at + 1;
    size_t hn = n - (size_t)(h - c->work);
    if (hn && h[hn - 1] == '>' && c->work[0] == '<')
        hn--;
    /* An address literal: "[192.0.2.1]", "[IPv6:2001:db8::1]" (RFC 5321). */
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
        h++;
        hn -= 2;
        if (hn >= 5 && !strncasecmp(h, "IPv6:", 5)) {
            h += 5;
            hn -= 5;
        }
    }
    if (hn == 0)
        return util_fail(err, errlen, "no domain in e-mail address");
    return host_only(c, h, hn, err, errlen);
}

int url_canon_email(struct url_canon *c, const char *in, size_t len, char *err, size_t errlen)
{
    if (len > URL_CANON_MAX)
        return util_fail(err, errlen, "address longer than %d bytes", URL_CANON_MAX);
    return email_from_work(c, prepare(in, len, c->work, false), err, errlen);
}

int url_canon_any_host(struct url_canon *c, const char *in, size_t len, char *err, size_t errlen)
{
    if (len > URL_CANON_MAX)
        return util_fail(err, errlen, "input longer than %d bytes", URL_CANON_MAX);
    /* Prepared once, as a URL (a fragment is never part of a host), and
     * decided on the unescaped form, as url_canon_url would see it. */
    size_t n = prepare(in, len, c->work, true);
    const char *s = c->work;
    bool at = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' || s[i] == '?')
            return url_from_work(c, n, err, errlen);
        at |= s[i] == '@';
    }
    if (at)
        return email_from_work(c, n, err, errlen);
    if (n == 0)
        return util_fail(err, errlen, "empty host");
    return host_only(c, s, n, err, errlen);
}
