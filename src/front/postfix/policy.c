/* Postfix policy delegation, see policy.h. Pure; any thread. */
#include "config.h"

#include "front/postfix/policy.h"

#include <stdio.h>
#include <string.h>

static const char *const attr_names[POLICY_N_ATTRS] = {
    "client_address", "client_name", "reverse_client_name", "helo_name", "sender", "recipient",
};

int policy_attr_parse(const char *name)
{
    for (int i = 0; i < POLICY_N_ATTRS; i++)
        if (strcmp(name, attr_names[i]) == 0)
            return i;
    return -1;
}

const char *policy_attr_name(enum policy_attr a)
{
    return (unsigned)a < POLICY_N_ATTRS ? attr_names[a] : "?";
}

size_t policy_complete(const char *in, size_t len, size_t *scanned)
{
    /* An empty line: an LF at the start or right after an LF, with a CR
     * between them allowed. Resume two bytes back: "\n\r" may straddle. */
    size_t i = *scanned > 2 ? *scanned - 2 : 0;
    for (; i < len; i++) {
        if (in[i] != '\n')
            continue;
        bool start = i == 0 || (i == 1 && in[0] == '\r');
        bool after =
            (i >= 1 && in[i - 1] == '\n') || (i >= 2 && in[i - 1] == '\r' && in[i - 2] == '\n');
        if (start || after)
            return i + 1;
    }
    *scanned = len;
    return 0;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

enum policy_status policy_parse(const char *in, size_t len, struct policy_request *r, size_t *used,
                                char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    size_t pos = 0;
    for (;;) {
        const char *nl = memchr(in + pos, '\n', len - pos);
        if (!nl)
            return POLICY_NEED_MORE;
        const char *line = in + pos;
        size_t n = (size_t)(nl - line);
        size_t next = pos + n + 1;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        if (n == 0) {
            *used = next;
            return POLICY_REQUEST;
        }
        const char *eq = memchr(line, '=', n);
        size_t nl_len = eq ? (size_t)(eq - line) : 0;
        bool ok = eq && nl_len > 0;
        for (size_t i = 0; ok && i < nl_len; i++)
            ok = name_char(line[i]);
        if (!ok) {
            *used = next;
            snprintf(err, errlen, "line %u is not NAME=VALUE", r->n_lines + 1);
            return POLICY_ERROR;
        }
        struct policy_value v = {eq + 1, n - nl_len - 1, true};
        if (nl_len == 7 && memcmp(line, "request", 7) == 0) {
            r->request = v;
        } else {
            for (int i = 0; i < POLICY_N_ATTRS; i++)
                if (strlen(attr_names[i]) == nl_len && memcmp(line, attr_names[i], nl_len) == 0)
                    r->attr[i] = v;
        }
        r->n_lines++;
        pos = next;
    }
}

/* Append s[0..n) to out at *o, control bytes as spaces, up to cap. */
static void put(char *out, size_t *o, size_t cap, const char *s, size_t n)
{
    for (size_t i = 0; i < n && *o < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        out[(*o)++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
}

size_t policy_reply(const char *action, const char *filter, const char *attribute,
                    const char *match, size_t match_len, char *out)
{
    const size_t cap = POLICY_REPLY_MAX - 2; /* room for the "\n\n" */
    size_t o = 0;
    put(out, &o, cap, "action=", 7);
    for (const char *s = action; *s && o < cap; s++) {
        if (*s == '$' && strncmp(s + 1, "filter", 6) == 0) {
            put(out, &o, cap, filter, strlen(filter));
            s += 6;
        } else if (*s == '$' && strncmp(s + 1, "attribute", 9) == 0) {
            put(out, &o, cap, attribute, strlen(attribute));
            s += 9;
        } else if (*s == '$' && strncmp(s + 1, "match", 5) == 0) {
            put(out, &o, cap, match, match_len);
            s += 5;
        } else {
            put(out, &o, cap, s, 1);
        }
    }
    out[o++] = '\n';
    out[o++] = '\n';
    return o;
}
