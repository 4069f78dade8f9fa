/* tcp_table(5), see tcptable.h. Pure; any thread.
 *
 * The encoding (tcp_table(5), ENCODING): "the character %, each non-printing
 * character, and each whitespace character must be replaced by %XX". Postfix
 * decodes a reply leniently, so the encoder is strict and the decoder of
 * requests strict too: a `%` not followed by two hex digits is an error, not
 * a guess. */
#include "config.h"

#include "front/postfix/tcptable.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"


/* Decode in[0..n) into out; -1 on a bad escape. */
static long decode(const char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] != '%') {
            out[o++] = in[i];
            continue;
        }
        if (i + 2 >= n) /* fewer than two bytes follow */
            return -1;
        int a = util_hexval(in[i + 1]), b = util_hexval(in[i + 2]);
        if (a < 0 || b < 0)
            return -1;
        out[o++] = (char)(a * 16 + b);
        i += 2;
    }
    return (long)o;
}

enum tcpt_status tcpt_parse(const char *in, size_t len, size_t max_key, char *buf, size_t cap,
                            struct tcpt_request *r, size_t *used, char *err, size_t errlen)
{
    const char *nl = memchr(in, '\n', len);
    if (!nl)
        return TCPT_NEED_MORE;
    *used = (size_t)(nl - in) + 1;
    size_t n = (size_t)(nl - in);
    if (n > 0 && in[n - 1] == '\r')
        n--;
    memset(r, 0, sizeof(*r));
    size_t word = 0;
    while (word < n && in[word] != ' ')
        word++;
    if (word == 3 && memcmp(in, "get", 3) == 0) {
        r->cmd = TCPT_GET;
    } else if (word == 3 && memcmp(in, "put", 3) == 0) {
        r->cmd = TCPT_PUT;
    } else {
        snprintf(err, errlen, "unknown request \"%.*s\" (get or put)", word > 16 ? 16 : (int)word,
                 in);
        return TCPT_ERROR;
    }
    if (word == n || word + 1 == n) {
        snprintf(err, errlen, "%s without a key", r->cmd == TCPT_GET ? "get" : "put");
        return TCPT_ERROR;
    }
    const char *key = in + word + 1;
    size_t rest = n - word - 1;
    const char *sp = memchr(key, ' ', rest);
    size_t klen = sp ? (size_t)(sp - key) : rest;
    if (r->cmd == TCPT_GET && sp) {
        snprintf(err, errlen, "get takes one key (a space in a key is sent as %%20)");
        return TCPT_ERROR;
    }
    if (r->cmd == TCPT_PUT && (!sp || memchr(sp + 1, ' ', rest - klen - 1))) {
        snprintf(err, errlen, "put takes a key and a value");
        return TCPT_ERROR;
    }
    if (klen == 0) {
        snprintf(err, errlen, "empty key");
        return TCPT_ERROR;
    }
    if (cap < rest) {
        snprintf(err, errlen, "request too long");
        return TCPT_ERROR;
    }
    long k = decode(key, klen, buf);
    if (k < 0) {
        snprintf(err, errlen, "bad %%-encoding in the key");
        return TCPT_ERROR;
    }
    if ((size_t)k > max_key) {
        snprintf(err, errlen, "key of %ld bytes, the limit is max_item %zu", k, max_key);
        return TCPT_ERROR;
    }
    r->key = buf;
    r->key_len = (size_t)k;
    if (r->cmd == TCPT_PUT) {
        long v = decode(sp + 1, rest - klen - 1, buf + k);
        if (v < 0) {
            snprintf(err, errlen, "bad %%-encoding in the value");
            return TCPT_ERROR;
        }
        r->value = buf + k;
        r->value_len = (size_t)v;
    }
    return TCPT_REQUEST;
}

size_t tcpt_reply(int code, const char *text, size_t len, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = (size_t)snprintf(out, 8, "%03d ", code % 1000);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        bool plain = ch > 0x20 && ch < 0x7f && ch != '%';
        size_t need = plain ? 1 : 3;
        if (o + need + 1 > TCPT_REPLY_MAX)
            break;
        if (plain) {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o++] = '\n';
    return o;
}
