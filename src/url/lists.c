/* List line parsers: pure functions, see lists.h. Every key goes through the
 * same canonicalisation as a query (url/canon.c), so a list entry and a URL
 * that names the same thing meet on the same bytes. Adblock rules are taken
 * only where exact matching of Safe Browsing expressions gives what the rule
 * means (a host and everything under it, a URL and its query variants); a
 * rule that needs pattern matching or request context is rejected, each kind
 * with its own reason, never silently widened into a broader block. */
#include "config.h"

#include "url/lists.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static enum lists_class reject(struct lists_line *l, enum lists_reason r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum lists_class reject(struct lists_line *l, enum lists_reason r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->why, sizeof(l->why), fmt, ap);
    va_end(ap);
    l->reason = r;
    l->n = 0;
    return l->cls = LISTS_REJECTED;
}

static enum lists_class classify(struct lists_line *l, enum lists_class c)
{
    return l->cls = c;
}

static bool is_space(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' || ch == '\f';
}

static void trim(const char **s, size_t *n)
{
    while (*n && is_space((unsigned char)(*s)[0])) {
        (*s)++;
        (*n)--;
    }
    while (*n && is_space((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* Where the next key goes in l->buf. */
static size_t buf_used(const struct lists_line *l)
{
    if (l->n == 0)
        return 0;
    const struct lists_entry *e = &l->e[l->n - 1];
    return (size_t)(e->ptr - l->buf) + e->len;
}

/* Append key k[0..n) (k may point into l->buf at or after the append point:
 * memmove). False if the line already has LISTS_ENTRIES_MAX keys. */
static bool add_key(struct lists_line *l, const char *k, size_t n)
{
    if (l->n == LISTS_ENTRIES_MAX)
        return false;
    size_t at = buf_used(l);
    if (n > LISTS_BUF_MAX - at)
        return false;
    memmove(l->buf + at, k, n);
    l->e[l->n++] = (struct lists_entry){l->buf + at, n};
    return true;
}

/* The key of the canonical URL or host in l->work for kind: the exact
 * expression "host/path[?query]" for a url key; for a host key the host,
 * unless the input named a path or a query, which a host key cannot carry
 * without blocking the whole host. */
static enum lists_class key_from_work(struct lists_line *l, enum url_kind kind)
{
    const struct url_canon *c = &l->work;
    if (kind == URL_KIND_URL) {
        if (c->scheme_len == 0) { /* a bare host: its root, "host/" */
            char tmp[URL_HOST_MAX * 3 + 4];
            size_t n = 0;
            bool v6 = c->host_type == URL_HOST_IPV6;
            if (v6)
                tmp[n++] = '[';
            memcpy(tmp + n, c->url + c->host_off, c->host_len);
            n += c->host_len;
            if (v6)
                tmp[n++] = ']';
            tmp[n++] = '/';
            return add_key(l, tmp, n) ? classify(l, LISTS_KEPT)
                                      : reject(l, LISTS_REJ_TOO_MANY, "too many keys");
        }
        return add_key(l, c->url + c->host_off, c->len - c->host_off)
                   ? classify(l, LISTS_KEPT)
                   : reject(l, LISTS_REJ_TOO_MANY, "too many keys");
    }
    if (c->scheme_len && (c->path_len != 1 || c->has_query))
        return reject(l, LISTS_REJ_PATH_FOR_HOST,
                      "names a path: a host key would block all of %.*s", (int)c->host_len,
                      c->url + c->host_off);
    struct url_exprs x;
    url_expr_host(c, &x); /* the host without the brackets of an IPv6 URL host */
    return add_key(l, x.e[0].ptr, x.e[0].len) ? classify(l, LISTS_KEPT)
                                              : reject(l, LISTS_REJ_TOO_MANY, "too many keys");
}

/* A line that is a URL (urls, plain with url keys, adblock URL rules). */
static enum lists_class url_line(struct lists_line *l, enum url_kind kind, const char *s, size_t n)
{
    char err[128];
    if (url_canon_url(&l->work, s, n, err, sizeof(err)) < 0)
        return reject(l, LISTS_REJ_BAD_URL, "%s", err);
    return key_from_work(l, kind);
}

/* A line that is a host (hosts names, bare adblock hosts). */
static enum lists_class host_line(struct lists_line *l, enum url_kind kind, const char *s, size_t n)
{
    char err[128];
    if (url_canon_host(&l->work, s, n, err, sizeof(err)) < 0)
        return reject(l, LISTS_REJ_BAD_HOST, "%s", err);
    return key_from_work(l, kind);
}

/* ---- plain and urls ---- */

static enum lists_class plain_line(struct lists_line *l, enum url_kind kind, const char *s,
                                   size_t n)
{
    if (s[0] == '#')
        return classify(l, LISTS_COMMENT);
    if (kind == URL_KIND_URL)
        return url_line(l, kind, s, n);
    char err[128];
    if (url_canon_any_host(&l->work, s, n, err, sizeof(err)) < 0)
        return reject(l, LISTS_REJ_BAD_HOST, "%s", err);
    return key_from_work(l, kind);
}

static enum lists_class urls_line(struct lists_line *l, enum url_kind kind, const char *s, size_t n)
{
    if (s[0] == '#')
        return classify(l, LISTS_COMMENT);
    return url_line(l, kind, s, n);
}

/* ---- hosts ---- */

/* Names a hosts file maps that are never a block: the machine itself, the
 * IPv6 well-known names, and the null address written as a name. */
static bool hosts_ignored(const char *h, size_t n)
{
    static const char *const names[] = {
        "localhost",  "localhost.localdomain",   "localhost4", "localhost4.localdomain4",
        "localhost6", "localhost6.localdomain6", "local",      "broadcasthost",
        "0.0.0.0"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == n && !memcmp(names[i], h, n))
            return true;
    return n >= 4 && !memcmp(h, "ip6-", 4);
}

/* The first field of a hosts line: an IPv4 dotted quad or an IPv6 address,
 * with a %zone allowed ("fe80::1%lo0"). */
static bool hosts_address(const char *s, size_t n)
{
    char tmp[64];
    unsigned char a[16];
    const char *zone = memchr(s, '%', n);
    if (zone)
        n = (size_t)(zone - s);
    if (n == 0 || n >= sizeof(tmp))
        return false;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    return inet_pton(AF_INET, tmp, a) == 1 || inet_pton(AF_INET6, tmp, a) == 1;
}

static enum lists_class hosts_line(struct lists_line *l, enum url_kind kind, const char *s,
                                   size_t n)
{
    const char *hash = memchr(s, '#', n);
    if (hash)
        n = (size_t)(hash - s);
    trim(&s, &n);
    if (n == 0)
        return classify(l, LISTS_COMMENT);
    size_t i = 0;
    while (i < n && !is_space((unsigned char)s[i]))
        i++;
    if (!hosts_address(s, i))
        return reject(l, LISTS_REJ_NO_ADDRESS, "not an address: %.*s", (int)(i > 64 ? 64 : i), s);
    bool named = false;
    for (;;) {
        while (i < n && is_space((unsigned char)s[i]))
            i++;
        if (i == n)
            break;
        size_t start = i;
        while (i < n && !is_space((unsigned char)s[i]))
            i++;
        named = true;
        char err[128];
        if (url_canon_host(&l->work, s + start, i - start, err, sizeof(err)) < 0)
            return reject(l, LISTS_REJ_BAD_HOST, "%.*s: %s", (int)(i - start > 64 ? 64 : i - start),
                          s + start, err);
        if (hosts_ignored(l->work.url, l->work.len)) {
            l->ignored_names++;
            continue;
        }
        if (key_from_work(l, kind) != LISTS_KEPT)
            return reject(l, LISTS_REJ_TOO_MANY, "more than %d names", LISTS_ENTRIES_MAX);
    }
    if (!named)
        return reject(l, LISTS_REJ_NO_NAME, "an address without names");
    return classify(l, l->n ? classify(l, LISTS_KEPT) : LISTS_IGNORED);
}

/* ---- adblock ---- */

/* Options that say in which context a request is blocked (its type, first or
 * third party, priority): a filter of keys has no context and blocks in all,
 * so they are dropped and counted. Anything narrowing which sites the rule
 * applies to, or changing what the rule does, is refused below. */
static const char *const opt_ignored[] = {
    "all",       "third-party", "3p",       "first-party",    "1p",         "strict1p",
    "strict3p",  "script",      "image",    "stylesheet",     "css",        "object",
    "xhr",       "subdocument", "frame",    "xmlhttprequest", "ping",       "beacon",
    "websocket", "webrtc",      "media",    "font",           "other",      "document",
    "doc",       "popup",       "popunder", "important",      "match-case", "object-subrequest",
    "mp4",       "genericblock"};

/* Options that narrow the match to some sites or requests. */
static const char *const opt_restricting[] = {"domain", "from",   "denyallow", "to",
                                              "method", "header", "ipaddress"};

static bool opt_in(const char *const *set, size_t count, const char *s, size_t n)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(set[i]) == n && !strncasecmp(set[i], s, n))
            return true;
    return false;
}

/* Check the comma-separated options o[0..n): 0 if all can be dropped, else
 * the line is rejected. */
static int adblock_options(struct lists_line *l, const char *o, size_t n)
{
    size_t i = 0;
    for (;;) {
        size_t start = i;
        while (i < n && o[i] != ',')
            i++;
        const char *t = o + start;
        size_t tn = i - start;
        trim(&t, &tn);
        const char *eq = memchr(t, '=', tn);
        size_t name = eq ? (size_t)(eq - t) : tn;
        int shown = tn > 40 ? 40 : (int)tn;
        if (tn == 0) {
            reject(l, LISTS_REJ_OPTION, "empty option");
            return -1;
        }
        if (t[0] == '~' ||
            opt_in(opt_restricting, sizeof(opt_restricting) / sizeof(char *), t, name)) {
            reject(l, LISTS_REJ_RESTRICTING, "option narrows the match: %.*s", shown, t);
            return -1;
        }
        if (eq || !opt_in(opt_ignored, sizeof(opt_ignored) / sizeof(char *), t, tn)) {
            reject(l, LISTS_REJ_OPTION, "unsupported option: %.*s", shown, t);
            return -1;
        }
        l->ignored_opts++;
        if (i == n)
            return 0;
        i++;
    }
}

/* Element hiding, HTML filtering and scriptlet rules: "##", "#@#", "#?#",
 * "#$#", "#%#" and their "#@" exception forms, and uBO's "$$". */
static bool adblock_cosmetic(const char *s, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] == '$' && s[i + 1] == '$')
            return true;
        if (s[i] != '#')
            continue;
        size_t j = i + 1;
        if (s[j] == '@')
            j++;
        if (j < n && (s[j] == '?' || s[j] == '$' || s[j] == '%'))
            j++;
        if (j < n && s[j] == '#')
            return true;
    }
    return false;
}

/* A bare pattern that is a host name or IPv4 address (URLhaus lists them so):
 * letters, digits, '-', '_', '.', or non-ASCII, with a dot inside. */
static bool adblock_bare_host(const char *s, size_t n)
{
    bool dot = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '.')
            dot = i > 0 && i + 1 < n;
        else if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                   (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch >= 0x80))
            return false;
    }
    return dot && s[0] != '-' && s[n - 1] != '-';
}

/* Classify one Adblock rule: options, then anchors, then scheme and target.
 * A flat sequence of rejections in the order a rule is read (~85 lines): each
 * test depends on what the ones before it stripped. */
static enum lists_class adblock_line(struct lists_line *l, enum url_kind kind, const char *s,
                                     size_t n)
{
    if (s[0] == '!')
        return classify(l, LISTS_COMMENT);
    if (s[0] == '[' && s[n - 1] == ']' &&
        (memchr(s, ' ', n) || (n >= 8 && !strncasecmp(s + 1, "adblock", 7))))
        return classify(l, LISTS_COMMENT);
    if (adblock_cosmetic(s, n))
        return reject(l, LISTS_REJ_COSMETIC, "element hiding or scriptlet rule");
    if (s[0] == '#')
        return classify(l, LISTS_COMMENT);
    if (n >= 2 && s[0] == '@' && s[1] == '@')
        return reject(l, LISTS_REJ_EXCEPTION, "exception rule");
    if (s[0] == '/') {
        const char *last = s + n - 1;
        while (last > s && *last != '/')
            last--;
        if (last > s && (last == s + n - 1 || last[1] == '$'))
            return reject(l, LISTS_REJ_REGEX, "regular expression");
    }

    /* Options after the last '$'. */
    const char *dollar = NULL;
    for (size_t i = n; i > 0; i--)
        if (s[i - 1] == '$') {
            dollar = s + i - 1;
            break;
        }
    if (dollar) {
        if (adblock_options(l, dollar + 1, n - (size_t)(dollar - s) - 1) < 0)
            return l->cls;
        n = (size_t)(dollar - s);
        trim(&s, &n);
    }

    /* The anchors: "||" a domain, '|' the start of the URL, '|' at the end
     * the end of the URL; a trailing '^' (separator or end) and trailing '*'
     * add nothing to an exact expression. */
    int anchor = 0;
    if (n >= 2 && s[0] == '|' && s[1] == '|')
        anchor = 2;
    else if (n >= 1 && s[0] == '|')
        anchor = 1;
    const char *b = s + anchor;
    size_t bn = n - (size_t)anchor;
    while (bn && b[bn - 1] == '*')
        bn--;
    if (bn && b[bn - 1] == '|')
        bn--;
    if (bn && b[bn - 1] == '^')
        bn--;
    if (bn == 0)
        return reject(l, LISTS_REJ_EMPTY_PATTERN, "nothing to match");
    for (size_t i = 0; i < bn; i++) {
        if (b[i] == '*')
            return reject(l, LISTS_REJ_WILDCARD, "wildcard inside the pattern");
        if (b[i] == '|')
            return reject(l, LISTS_REJ_ANCHOR, "'|' inside the pattern");
        if (b[i] == '^')
            return reject(l, LISTS_REJ_SEPARATOR, "'^' inside the pattern");
    }

    /* A scheme: "://" before the first '/'. */
    const char *slash = memchr(b, '/', bn);
    bool has_scheme =
        slash && slash > b && slash[-1] == ':' && slash + 1 < b + bn && slash[1] == '/';
    if (anchor == 1) {
        if (!has_scheme)
            return reject(l, LISTS_REJ_BAD_URL, "'|' before something that is not a URL");
        return url_line(l, kind, b, bn);
    }
    if (anchor == 2) {
        if (has_scheme)
            return reject(l, LISTS_REJ_BAD_URL, "a scheme after \"||\"");
        if (bn + 7 > LISTS_BUF_MAX)
            return reject(l, LISTS_REJ_TOO_LONG, "rule too long");
        /* The URL "http://" + body, built where the key will go. */
        memcpy(l->buf, "http://", 7);
        memcpy(l->buf + 7, b, bn);
        return url_line(l, kind, l->buf, bn + 7);
    }
    if (!adblock_bare_host(b, bn))
        return reject(l, LISTS_REJ_UNANCHORED, "substring pattern without \"||\" or '|'");
    return host_line(l, kind, b, bn);
}

enum lists_class lists_parse_line(enum lists_format fmt, enum url_kind kind, const char *line,
                                  size_t len, struct lists_line *l)
{
    l->n = 0;
    l->reason = LISTS_OK;
    l->why[0] = 0;
    l->ignored_names = l->ignored_opts = 0;
    if (len > LISTS_LINE_MAX)
        return reject(l, LISTS_REJ_TOO_LONG, "line longer than %d bytes", LISTS_LINE_MAX);
    trim(&line, &len);
    if (len == 0)
        return classify(l, LISTS_BLANK);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)line[i];
        if (ch == 0)
            return reject(l, LISTS_REJ_NUL, "NUL byte at %zu", i);
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return reject(l, LISTS_REJ_CONTROL, "control byte 0x%02x at %zu", ch, i);
    }
    switch (fmt) {
    case LISTS_PLAIN:
        return plain_line(l, kind, line, len);
    case LISTS_HOSTS:
        return hosts_line(l, kind, line, len);
    case LISTS_ADBLOCK:
        return adblock_line(l, kind, line, len);
    case LISTS_URLS:
        return urls_line(l, kind, line, len);
    }
    return reject(l, LISTS_REJ_BAD_URL, "unknown format");
}

const char *lists_reason_name(enum lists_reason r)
{
    static const char *const names[LISTS_REASON_COUNT] = {
        [LISTS_OK] = "ok",
        [LISTS_REJ_TOO_LONG] = "too-long",
        [LISTS_REJ_NUL] = "nul",
        [LISTS_REJ_CONTROL] = "control",
        [LISTS_REJ_BAD_URL] = "bad-url",
        [LISTS_REJ_BAD_HOST] = "bad-host",
        [LISTS_REJ_PATH_FOR_HOST] = "path-for-host",
        [LISTS_REJ_NO_ADDRESS] = "no-address",
        [LISTS_REJ_NO_NAME] = "no-name",
        [LISTS_REJ_TOO_MANY] = "too-many",
        [LISTS_REJ_EXCEPTION] = "exception",
        [LISTS_REJ_COSMETIC] = "cosmetic",
        [LISTS_REJ_REGEX] = "regex",
        [LISTS_REJ_WILDCARD] = "wildcard",
        [LISTS_REJ_ANCHOR] = "anchor",
        [LISTS_REJ_SEPARATOR] = "separator",
        [LISTS_REJ_UNANCHORED] = "unanchored",
        [LISTS_REJ_EMPTY_PATTERN] = "empty-pattern",
        [LISTS_REJ_RESTRICTING] = "restricting-option",
        [LISTS_REJ_OPTION] = "unsupported-option",
    };
    return (unsigned)r < LISTS_REASON_COUNT && names[r] ? names[r] : "unknown";
}

const char *lists_class_name(enum lists_class c)
{
    switch (c) {
    case LISTS_KEPT:
        return "kept";
    case LISTS_BLANK:
        return "blank";
    case LISTS_COMMENT:
        return "comment";
    case LISTS_IGNORED:
        return "ignored";
    case LISTS_REJECTED:
        return "rejected";
    }
    return "unknown";
}

int lists_format_parse(const char *s, enum lists_format *fmt, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        enum lists_format fmt;
    } formats[] = {{"plain", LISTS_PLAIN},
                   {"hosts", LISTS_HOSTS},
                   {"adblock", LISTS_ADBLOCK},
                   {"urls", LISTS_URLS}};
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (!strcmp(s, formats[i].name)) {
            *fmt = formats[i].fmt;
            return 0;
        }
    if (err && errlen)
        snprintf(err, errlen, "unknown list format \"%s\" (plain, hosts, adblock, urls)", s);
    return -1;
}
