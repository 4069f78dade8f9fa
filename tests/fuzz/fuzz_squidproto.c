/* fuzz_squidproto: bloomgate-squid's pure parser (src/squid/squidproto.c):
 * Squid's helper request lines, the reply builder, and the readers of the
 * daemon's MCHECK, MATCH and ERR replies.
 *
 * Input: u8 option byte (bits 0-1 pick the reply code, bit 2 feeds the
 * message from the input's second half, bits 3-4 the channel, bits 5-7 a
 * --context spec), then the bytes, used as a request line, as a message= text
 * and as daemon reply lines. Checked besides memory safety and UB: values lie
 * inside the line and hold no separator; the decoder agrees with a
 * byte-at-a-time reference that decodes only what Squid escapes; a channel ID
 * is 1-20 digits; the item escaper leaves no byte the line protocol cannot
 * carry; the context fields leave the line with the other values in order, a
 * type and method the daemon reads, a page from the line; a reply is one line
 * within SQUIDPROTO_REPLY_MAX whose quoted message= reads back (unescaped as
 * Squid does) to the message's kept prefix; the daemon readers return pointers
 * inside their line. */
#include "config.h"

#include <stdbool.h>

#include "fuzz.h"
#include "squid/squidproto.h"

static int hex(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Whether Squid's rfc1738_escape writes c as %XX (not '%' itself). */
static bool ref_escaped(int c)
{
    static const char unsafe[] = "<>\"#{}|\\^~[]`' ";
    if (c < 0x20 || c >= 0x7f)
        return true;
    for (size_t i = 0; i < sizeof(unsafe) - 1; i++)
        if (unsafe[i] == c)
            return true;
    return false;
}

/* One pass of %XX decoding of what Squid escapes, written plainly. */
static size_t ref_unescape(const char *s, size_t len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%' && len - i >= 3 && hex((unsigned char)s[i + 1]) >= 0 &&
            hex((unsigned char)s[i + 2]) >= 0 &&
            ref_escaped(hex((unsigned char)s[i + 1]) << 4 | hex((unsigned char)s[i + 2]))) {
            out[n++] = (char)(hex((unsigned char)s[i + 1]) << 4 | hex((unsigned char)s[i + 2]));
            i += 2;
        } else {
            out[n++] = s[i];
        }
    }
    return n;
}

/* The context fields of l under spec: what is left and what was taken. */
static void check_context(struct squid_line *l, const struct squid_ctx_spec *sp, const char *line,
                          size_t len)
{
    struct squid_line before = *l;
    struct squid_ctx c;
    char err[128];
    int rc = squidproto_take_context(l, sp, &c, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == -1, "take_context rc %d", rc);
    if (rc != 0) {
        FUZZ_CHECK(before.n_values < 1 + sp->n, "refused %zu values", before.n_values);
        return;
    }
    FUZZ_CHECK(l->n_values == before.n_values - sp->n, "%zu values left", l->n_values);
    FUZZ_CHECK(l->value[0] == before.value[0], "the URL moved");
    for (size_t i = 1; i < l->n_values; i++)
        FUZZ_CHECK(l->value[i] == before.value[i + sp->n] &&
                       l->value_len[i] == before.value_len[i + sp->n],
                   "value %zu is not the one after the fields", i);
    if (c.from) {
        FUZZ_CHECK(c.from >= line && c.from + c.from_len <= line + len && c.from_len > 0 &&
                       !(c.from_len == 1 && c.from[0] == '-'),
                   "from");
    }
    if (c.type) {
        FUZZ_CHECK(strlen(c.type) > 0 &&
                       strspn(c.type, "abcdefghijklmnopqrstuvwxyz") == strlen(c.type),
                   "type '%s'", c.type);
    }
    if (c.method)
        FUZZ_CHECK(squidproto_method(c.method, strlen(c.method)) == c.method, "method '%s'",
                   c.method);
}

static void check_line(const uint8_t *data, size_t len, uint8_t opt)
{
    char *line = malloc(len + 1);
    char *orig = malloc(len + 1);
    memcpy(line, data, len);
    memcpy(orig, data, len);
    struct squid_line l;
    char err[128];
    int rc = squidproto_parse_line(line, len, &l, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == -1, "rc %d", rc);
    if (l.has_channel) {
        size_t cl = strlen(l.channel);
        FUZZ_CHECK(cl >= 1 && cl <= SQUIDPROTO_CHANNEL_MAX, "channel length %zu", cl);
        FUZZ_CHECK(strspn(l.channel, "0123456789") == cl, "channel '%s'", l.channel);
    }
    if (rc == 0) {
        FUZZ_CHECK(l.n_values >= 1 && l.n_values <= SQUIDPROTO_VALUES_MAX, "%zu values",
                   l.n_values);
        for (size_t i = 0; i < l.n_values; i++) {
            FUZZ_CHECK(l.value[i] >= line && l.value[i] + l.value_len[i] <= line + len,
                       "value %zu outside the line", i);
            /* The value is the decoding of a token of the original line. */
            const char *tok = orig + (l.value[i] - line);
            size_t max = (size_t)(orig + len - tok), tl = max;
            for (size_t k = 0; k < max; k++)
                if (tok[k] == ' ' || tok[k] == '\t' || tok[k] == '\r') {
                    tl = k;
                    break;
                }
            char *ref = malloc(tl + 1);
            size_t rl = ref_unescape(tok, tl, ref);
            FUZZ_CHECK(rl == l.value_len[i] && memcmp(ref, l.value[i], rl) == 0,
                       "value %zu differs from the reference decoding", i);
            char *esc = malloc(3 * l.value_len[i] + 1);
            size_t el = squidproto_item_escape(l.value[i], l.value_len[i], esc);
            FUZZ_CHECK(el <= 3 * l.value_len[i], "escaped length");
            for (size_t k = 0; k < el; k++)
                FUZZ_CHECK(esc[k] != 0 && esc[k] != ' ' && esc[k] != '\t' && esc[k] != '\n' &&
                               esc[k] != '\r',
                           "byte 0x%02x left in an item", (unsigned char)esc[k]);
            free(esc);
            free(ref);
        }
    }
    if (rc == 0) {
        static const char *const specs[8] = {"referer,dest,method",
                                             "referer",
                                             "dest",
                                             "method,dest,origin,referer",
                                             "origin,referer",
                                             "referer,origin,dest,method",
                                             "dest,method",
                                             NULL};
        struct squid_ctx_spec sp = {0};
        if (specs[opt >> 5]) {
            int sr = squidproto_ctx_spec_parse(specs[opt >> 5], &sp, err, sizeof(err));
            FUZZ_CHECK(sr == 0, "spec '%s': %s", specs[opt >> 5], err);
        }
        check_context(&l, &sp, line, len);
    }
    char ch[SQUIDPROTO_CHANNEL_MAX + 1];
    if (squidproto_peek_channel((const char *)data, len, ch))
        FUZZ_CHECK(strlen(ch) >= 1 && strspn(ch, "0123456789") == strlen(ch), "peek '%s'", ch);
    free(line);
    free(orig);
}

/* Read a quoted message= back as Squid does: \" \\ \r \n. */
static size_t read_back(const char *q, size_t len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (q[i] == '\\' && i + 1 < len) {
            char c = q[++i];
            out[n++] = c == 'r' ? '\r' : c == 'n' ? '\n' : c;
        } else {
            out[n++] = q[i];
        }
    }
    return n;
}

static void check_reply(uint8_t opt, const char *msg, size_t len)
{
    static const char *const channels[] = {NULL, "", "0", "12345678901234567890"};
    char out[SQUIDPROTO_REPLY_MAX];
    enum squid_result res =
        (enum squid_result)(opt & 3) > SQUID_BH ? SQUID_BH : (enum squid_result)(opt & 3);
    const char *chan = channels[(opt >> 3) & 3];
    size_t n = squidproto_reply(out, chan, res, msg, len);
    FUZZ_CHECK(n >= 3 && n <= SQUIDPROTO_REPLY_MAX, "reply length %zu", n);
    FUZZ_CHECK(out[n - 1] == '\n' && !memchr(out, '\n', n - 1), "not one line");
    FUZZ_CHECK(!memchr(out, '\r', n) && !memchr(out, '\0', n), "CR or NUL in the reply");
    if (len == 0)
        return;
    const char *m = memmem(out, n, " message=\"", 10);
    FUZZ_CHECK(m != NULL, "no message=");
    const char *q = m + 10;
    size_t ql = (size_t)(out + n - 2 - q); /* up to the closing quote */
    FUZZ_CHECK(out[n - 2] == '"', "no closing quote");
    char back[SQUIDPROTO_REPLY_MAX];
    size_t bl = read_back(q, ql, back);
    bool cut = len > SQUIDPROTO_MESSAGE_MAX;
    if (cut) {
        FUZZ_CHECK(bl >= 3 && memcmp(back + bl - 3, "...", 3) == 0, "cut without ...");
        bl -= 3;
        FUZZ_CHECK(bl <= SQUIDPROTO_MESSAGE_MAX - 3, "kept %zu bytes", bl);
    } else {
        FUZZ_CHECK(bl == len, "read back %zu of %zu bytes", bl, len);
    }
    /* Byte for byte, but control bytes other than CR and LF became '?'. */
    for (size_t i = 0; i < bl; i++) {
        unsigned char c = (unsigned char)msg[i];
        char want = (c < 0x20 && c != '\r' && c != '\n') || c == 0x7f ? '?' : (char)c;
        FUZZ_CHECK(back[i] == want, "message byte %zu", i);
    }
}

static void check_daemon(const char *line, size_t len)
{
    bool present[64];
    for (size_t n = 0; n <= 64; n += 7)
        squidproto_mcheck_reply(line, len, n, present);
    const char *key, *code, *msg;
    size_t kl, cl, ml, item;
    if (squidproto_match_reply(line, len, &key, &kl) == 1)
        FUZZ_CHECK(key > line && key + kl == line + len && kl > 0 && !memchr(key, ' ', kl),
                   "MATCH key");
    if (squidproto_daemon_error(line, len, &code, &cl, &msg, &ml, &item) == 0) {
        FUZZ_CHECK(code > line && code + cl <= line + len && cl > 0, "ERR code");
        FUZZ_CHECK(msg >= code + cl && msg + ml == line + len, "ERR message");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t opt = fuzz_u8(&in);
    check_line(in.p, in.len, opt);
    /* --context's argument, from the first bytes. */
    char spec_s[64];
    size_t sl = in.len < sizeof(spec_s) - 1 ? in.len : sizeof(spec_s) - 1;
    memcpy(spec_s, in.p, sl);
    spec_s[sl] = '\0';
    struct squid_ctx_spec sp;
    char err[128];
    if (squidproto_ctx_spec_parse(spec_s, &sp, err, sizeof(err)) == 0) {
        FUZZ_CHECK(sp.n >= 1 && sp.n <= SQUID_CTX_FIELDS, "%zu fields", sp.n);
        for (size_t i = 0; i < sp.n; i++)
            for (size_t j = 0; j < i; j++)
                FUZZ_CHECK(sp.field[i] != sp.field[j], "field %zu twice", i);
    }
    size_t half = opt & 4 ? in.len / 2 : 0;
    check_reply(opt, (const char *)in.p + half, in.len - half);
    /* Daemon replies: each LF-separated line. */
    const char *p = (const char *)in.p, *end = p + in.len;
    while (p < end) {
        const char *lf = memchr(p, '\n', (size_t)(end - p));
        size_t l = lf ? (size_t)(lf - p) : (size_t)(end - p);
        check_daemon(p, l);
        p += l + 1;
    }
    return 0;
}
