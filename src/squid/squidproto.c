/* squidproto: Squid's external ACL helper lines and the daemon's replies, as
 * pure functions (see squidproto.h). */
#include "config.h"

#include "squid/squidproto.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Whether Squid's rfc1738_escape writes byte c as %XX: controls, space, DEL
 * and above, and its "unsafe" characters; '%' itself it leaves alone. */
static bool squid_escapes(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || strchr("\"#'<>[\\]^`{|}~", c) != NULL;
}

size_t squidproto_unescape(const char *in, size_t len, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (in[i] == '%' && i + 2 < len && (hi = util_hexval(in[i + 1])) >= 0 &&
            (lo = util_hexval(in[i + 2])) >= 0 && squid_escapes((unsigned char)(hi << 4 | lo))) {
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[o++] = in[i];
        }
    }
    return o;
}

bool squidproto_value_absent(const char *v, size_t len)
{
    return len == 0 || (len == 1 && v[0] == '-');
}

/* Whether tok[0..n) is a channel ID: 1 to SQUIDPROTO_CHANNEL_MAX digits. */
static bool is_channel(const char *tok, size_t n)
{
    if (n == 0 || n > SQUIDPROTO_CHANNEL_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_digit(tok[i]))
            return false;
    return true;
}

bool squidproto_peek_channel(const char *line, size_t len, char channel[SQUIDPROTO_CHANNEL_MAX + 1])
{
    size_t n = 0;
    while (n < len && is_digit(line[n]))
        n++;
    if (n == 0 || n > SQUIDPROTO_CHANNEL_MAX || n == len || (line[n] != ' ' && line[n] != '\t'))
        return false;
    memcpy(channel, line, n);
    channel[n] = '\0';
    return true;
}

/* Split, recognise the channel ID, then decode each value in place. The
 * channel is recognised only with a value after it, so that a concurrency=0
 * line holding one bare number is read as that value. Squid never sends a
 * bare number for %URI, %DST or %SRC, so the guess is safe for the documented
 * FORMATs (docs/gateways.md). */
int squidproto_parse_line(char *line, size_t len, struct squid_line *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof(*l));
    char *tok[SQUIDPROTO_VALUES_MAX + 1];
    size_t tlen[SQUIDPROTO_VALUES_MAX + 1];
    size_t nt = 0;
    bool too_many = false;
    size_t i = 0;
    while (i < len) {
        while (i < len && is_ws(line[i]))
            i++;
        if (i == len)
            break;
        size_t s = i;
        while (i < len && !is_ws(line[i]))
            i++;
        if (nt == SQUIDPROTO_VALUES_MAX + 1) {
            too_many = true;
            break;
        }
        tok[nt] = line + s;
        tlen[nt] = i - s;
        nt++;
    }
    if (nt == 0) {
        snprintf(err, errlen, "empty request line");
        return -1;
    }
    size_t first = 0;
    if (nt >= 2 && is_channel(tok[0], tlen[0])) {
        l->has_channel = true;
        memcpy(l->channel, tok[0], tlen[0]);
        l->channel[tlen[0]] = '\0';
        first = 1;
    }
    if (too_many || nt - first > SQUIDPROTO_VALUES_MAX) {
        snprintf(err, errlen, "more than %d values in a request line", SQUIDPROTO_VALUES_MAX);
        return -1;
    }
    for (size_t t = first; t < nt; t++) {
        size_t n = squidproto_unescape(tok[t], tlen[t], tok[t]);
        l->value[l->n_values] = tok[t];
        l->value_len[l->n_values] = n;
        l->n_values++;
    }
    return 0;
}

size_t squidproto_item_escape(const char *v, size_t len, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == 0 || c == '\t' || c == '\n' || c == '\r' || c == ' ') {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    return o;
}

/* ---- the request context ---- */

static const char *const ctx_names[SQUID_CTX_FIELDS] = {"referer", "origin", "dest", "method"};

int squidproto_ctx_spec_parse(const char *s, struct squid_ctx_spec *spec, char *err, size_t errlen)
{
    memset(spec, 0, sizeof(*spec));
    bool seen[SQUID_CTX_FIELDS] = {false};
    const char *p = s;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        int f = -1;
        for (int k = 0; k < SQUID_CTX_FIELDS; k++)
            if (strlen(ctx_names[k]) == n && strncasecmp(ctx_names[k], p, n) == 0)
                f = k;
        if (f < 0) {
            snprintf(err, errlen, "'%.*s' is not a context field (referer, origin, dest, method)",
                     (int)(n > 40 ? 40 : n), p);
            return -1;
        }
        if (seen[f]) {
            snprintf(err, errlen, "'%s' is named twice", ctx_names[f]);
            return -1;
        }
        seen[f] = true;
        spec->field[spec->n++] = (enum squid_ctx_field)f;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* The Fetch standard's request destinations (Sec-Fetch-Dest) that
 * bloomgated's type= reads (adblock_fetch_dest_parse; check_squidproto keeps
 * the two in step). Any other value goes as other. */
static const char *const fetch_dests[] = {
    "audio",         "audioworklet", "document",    "embed",       "empty",
    "font",          "frame",        "iframe",      "image",       "json",
    "manifest",      "object",       "paintworklet", "report",     "script",
    "serviceworker", "sharedworker", "style",       "track",       "video",
    "webidentity",   "worker",       "xslt",        "fencedframe", "speculationrules",
};

const char *squidproto_dest_type(const char *v, size_t len)
{
    if (squidproto_value_absent(v, len))
        return NULL;
    for (size_t i = 0; i < sizeof fetch_dests / sizeof fetch_dests[0]; i++)
        if (strlen(fetch_dests[i]) == len && strncasecmp(fetch_dests[i], v, len) == 0)
            return fetch_dests[i];
    return "other";
}

const char *squidproto_method(const char *v, size_t len)
{
    static const char *const methods[] = {"get",  "post",    "put",   "delete",
                                          "head", "options", "patch", "connect"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strlen(methods[i]) == len && strncasecmp(methods[i], v, len) == 0)
            return methods[i];
    return NULL;
}

/* Why the Referer wins over the Origin whatever their order: it names the
 * page itself, the Origin only its scheme and host; an Origin of "null" (an
 * opaque origin: a sandboxed frame, a data: page) names no page. */
int squidproto_take_context(struct squid_line *l, const struct squid_ctx_spec *spec,
                            struct squid_ctx *ctx, char *err, size_t errlen)
{
    memset(ctx, 0, sizeof(*ctx));
    if (spec->n == 0)
        return 0;
    if (l->n_values < 1 + spec->n) {
        snprintf(err, errlen, "%zu value%s; --context wants the URL and %zu fields after it",
                 l->n_values, l->n_values == 1 ? "" : "s", spec->n);
        return -1;
    }
    const char *origin = NULL;
    size_t origin_len = 0;
    for (size_t k = 0; k < spec->n; k++) {
        const char *v = l->value[1 + k];
        size_t n = l->value_len[1 + k];
        if (squidproto_value_absent(v, n))
            continue;
        switch (spec->field[k]) {
        case SQUID_CTX_REFERER:
            ctx->from = v;
            ctx->from_len = n;
            break;
        case SQUID_CTX_ORIGIN:
            if (!(n == 4 && memcmp(v, "null", 4) == 0)) {
                origin = v;
                origin_len = n;
            }
            break;
        case SQUID_CTX_DEST:
            ctx->type = squidproto_dest_type(v, n);
            break;
        default:
            ctx->method = squidproto_method(v, n);
            break;
        }
    }
    if (!ctx->from && origin) {
        ctx->from = origin;
        ctx->from_len = origin_len;
    }
    for (size_t i = 1; i + spec->n < l->n_values; i++) {
        l->value[i] = l->value[i + spec->n];
        l->value_len[i] = l->value_len[i + spec->n];
    }
    l->n_values -= spec->n;
    return 0;
}

/* How many of msg's first max bytes to keep so that a UTF-8 sequence is not
 * cut in two (a continuation byte 10xxxxxx never starts the kept tail). */
static size_t utf8_cut(const char *msg, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t n = max;
    while (n > 0 && ((unsigned char)msg[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* The quoted form Squid's helper reply parser reads (squid.conf.documented,
 * external_acl_type: "enclosed in double quotes and escaped using \"). The
 * unquoted form would be URL-decoded by Squid instead, which a key holding
 * '%' would not survive. */
size_t squidproto_reply(char *out, const char *channel, enum squid_result res, const char *msg,
                        size_t msglen)
{
    static const char *const codes[] = {"OK", "ERR", "BH"};
    size_t o = 0;
    if (channel && channel[0]) {
        size_t cl = strnlen(channel, SQUIDPROTO_CHANNEL_MAX);
        memcpy(out, channel, cl);
        o = cl;
        out[o++] = ' ';
    }
    const char *code = codes[res <= SQUID_BH ? res : SQUID_BH];
    size_t codelen = strlen(code);
    memcpy(out + o, code, codelen);
    o += codelen;
    if (msg && msglen > 0) {
        bool cut = msglen > SQUIDPROTO_MESSAGE_MAX;
        size_t n = utf8_cut(msg, msglen, SQUIDPROTO_MESSAGE_MAX - (cut ? 3 : 0));
        memcpy(out + o, " message=\"", 10);
        o += 10;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)msg[i];
            if (c == '"' || c == '\\') {
                out[o++] = '\\';
                out[o++] = (char)c;
            } else if (c == '\r' || c == '\n') {
                out[o++] = '\\';
                out[o++] = c == '\r' ? 'r' : 'n';
            } else if (c < 0x20 || c == 0x7f) {
                out[o++] = '?';
            } else {
                out[o++] = (char)c;
            }
        }
        if (cut) {
            memcpy(out + o, "...", 3);
            o += 3;
        }
        out[o++] = '"';
    }
    out[o++] = '\n';
    return o;
}

/* The next space-separated word of line[*pos..len): its start and length, or
 * false at the end. The daemon separates words by single spaces. */
static bool next_word(const char *line, size_t len, size_t *pos, const char **w, size_t *wl)
{
    size_t i = *pos;
    while (i < len && line[i] == ' ')
        i++;
    if (i == len)
        return false;
    size_t s = i;
    while (i < len && line[i] != ' ')
        i++;
    *w = line + s;
    *wl = i - s;
    *pos = i;
    return true;
}

static bool word_is(const char *w, size_t wl, const char *lit)
{
    return wl == strlen(lit) && memcmp(w, lit, wl) == 0;
}

int squidproto_mcheck_reply(const char *line, size_t len, size_t n, bool *present)
{
    size_t pos = 0, got = 0;
    const char *w;
    size_t wl;
    while (next_word(line, len, &pos, &w, &wl)) {
        if (got == n)
            return -1;
        if (word_is(w, wl, "YES"))
            present[got] = true;
        else if (word_is(w, wl, "NO"))
            present[got] = false;
        else
            return -1;
        got++;
    }
    return got == n && n > 0 ? 0 : -1;
}

int squidproto_match_reply(const char *line, size_t len, const char **key, size_t *keylen)
{
    if (len == 2 && memcmp(line, "NO", 2) == 0)
        return 0;
    if (len > 6 && memcmp(line, "MATCH ", 6) == 0 && line[6] != ' ' &&
        !memchr(line + 6, ' ', len - 6)) {
        *key = line + 6;
        *keylen = len - 6;
        return 1;
    }
    return -1;
}

int squidproto_daemon_error(const char *line, size_t len, const char **code, size_t *codelen,
                            const char **msg, size_t *msglen, size_t *item)
{
    size_t pos = 0;
    const char *w;
    size_t wl;
    if (!next_word(line, len, &pos, &w, &wl) || !word_is(w, wl, "ERR") ||
        !next_word(line, len, &pos, code, codelen))
        return -1;
    while (pos < len && line[pos] == ' ')
        pos++;
    *msg = line + pos;
    *msglen = len - pos;
    *item = 0;
    /* "item N: reason", "item N is ...", "item N of M is ...". */
    const char *m = *msg;
    size_t ml = *msglen;
    if (ml > 5 && memcmp(m, "item ", 5) == 0) {
        size_t i = 5, v = 0;
        while (i < ml && is_digit(m[i]) && v < ((size_t)-1) / 10 - 10)
            v = v * 10 + (size_t)(m[i++] - '0');
        if (i > 5 && i < ml && (m[i] == ':' || m[i] == ' '))
            *item = v;
    }
    return 0;
}
