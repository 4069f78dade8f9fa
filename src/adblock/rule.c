/* adblock/rule: the line parser (see rule.h). The options after `$` are read by
 * options.c; this file finds what kind of line it is and where the pattern and
 * its anchors are. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "adblock/rule.h"

static const char *const class_names[] = {
#define ADBLOCK_X(name, text) text,
    ADBLOCK_CLASSES(ADBLOCK_X)
#undef ADBLOCK_X
};

const char *adblock_class_name(enum adblock_class c)
{
    return (unsigned)c < ADBLOCK_CLASS_COUNT ? class_names[c] : "unknown";
}

static const char *const reject_names[] = {
#define ADBLOCK_X(name, text) text,
    ADBLOCK_REJECTS(ADBLOCK_X)
#undef ADBLOCK_X
};

const char *adblock_reject_name(enum adblock_reject r)
{
    return (unsigned)r < ADBLOCK_REJ_COUNT ? reject_names[r] : "unknown";
}

/* The table of docs/url-matching.md ("Classes counted, never blocking"), one
 * line each: what a rejects file says beside the class's name. */
const char *adblock_unserved_why(enum adblock_class c)
{
    static const char *const why[ADBLOCK_CLASS_COUNT] = {
        [ADBLOCK_CLASS_HOSTS] = "a hosts-file line, not Adblock syntax (build it with --format "
                                "hosts)",
        [ADBLOCK_CLASS_REDIRECT_RULE] = "redirects only what another rule blocks",
        [ADBLOCK_CLASS_CSP] = "sets a response header (Content-Security-Policy)",
        [ADBLOCK_CLASS_REMOVEPARAM] = "rewrites the URL",
        [ADBLOCK_CLASS_HEADER] = "matches response headers",
        [ADBLOCK_CLASS_REPLACE] = "rewrites the response body",
        [ADBLOCK_CLASS_PERMISSIONS] = "sets a response header (Permissions-Policy)",
        [ADBLOCK_CLASS_POPUP] = "a new window, not a request a gateway sees",
        [ADBLOCK_CLASS_TRANSFORM] = "rewrites the URL",
        [ADBLOCK_CLASS_PAGE_HIDING] = "turns cosmetic filtering off on a page",
        [ADBLOCK_CLASS_CNAME] = "the browser's CNAME uncloaking",
        [ADBLOCK_CLASS_IPADDRESS] = "needs the address the host resolved to",
        [ADBLOCK_CLASS_REJECTED] = "not understood",
    };
    return (unsigned)c < ADBLOCK_CLASS_COUNT ? why[c] : NULL;
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Cosmetic and scriptlet rules, and uBlock's HTML filters, carry one of these
 * separators (`##`, `#@#`, `#?#`, `#$#`, `#%#`, ... and `$$`, `$@$`); a network
 * pattern never does (a URL's `#` fragment is not sent). Returns true when
 * line[0..n) holds one. */
static bool is_cosmetic(const char *s, size_t n)
{
    static const char *const seps[] = {"##",  "#@#",  "#?#",  "#@?#",  "#$#", "#@$#",
                                       "#%#", "#@%#", "#$?#", "#@$?#", "$$",  "$@$"};
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] != '#' && s[i] != '$')
            continue;
        for (size_t k = 0; k < sizeof seps / sizeof seps[0]; k++) {
            size_t l = strlen(seps[k]);
            if (l <= n - i && memcmp(s + i, seps[k], l) == 0) {
                /* `$$` and `$@$` only as HTML filters: before them a host list, not a URL */
                if (seps[k][0] == '$' && memchr(s, '/', i) != NULL)
                    continue;
                return true;
            }
        }
    }
    return false;
}

/* A hosts-file line: an address (0.0.0.0, 127.0.0.1, ::1, ...) then blanks and
 * a host name. */
static bool is_hosts_line(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == '.' || s[i] == ':' || (s[i] >= '0' && s[i] <= '9') ||
                     (s[i] >= 'a' && s[i] <= 'f')))
        i++;
    if (i == 0 || i == n || !is_space((unsigned char)s[i]))
        return false;
    return memchr(s, '.', i) != NULL || memchr(s, ':', i) != NULL;
}

static enum adblock_class reject(struct adblock_rule *r, enum adblock_reject reason,
                                 const char *why)
{
    r->reason = reason;
    snprintf(r->why, sizeof r->why, "%s", why);
    r->cls = ADBLOCK_CLASS_REJECTED;
    return r->cls;
}

/* Does an option list start at s[i] (just after a `$`): a known option name? */
static bool options_at(const char *s, size_t n, size_t i)
{
    size_t j = i;
    while (j < n && s[j] != ',' && s[j] != '=')
        j++;
    return adblock_option_known(s + i, j - i);
}

/* The `$` that starts the options. The reference engine takes the last one
 * not escaped and not the `$/` that ends a regex such as /ad$/; an option's
 * value may hold a `$` too (`replace=/^.+$/x/`, `uritransform=//$1$2/`), so
 * the first `$` followed by a known option name is taken, the reference
 * engine's choice when there is none. Returns n for no options. */
static size_t find_options(const char *s, size_t n, size_t from)
{
    bool regex = from < n && s[from] == '/';
    for (size_t i = from + 1; i < n; i++) {
        if (s[i - 1] != '$' || (i >= 2 && s[i - 2] == '\\'))
            continue;
        if (regex && (i < from + 3 || s[i - 2] != '/')) /* after the regex's closing `/` */
            continue;
        if (options_at(s, n, i))
            return i - 1;
    }
    for (size_t i = n; i-- > from;) {
        if (s[i] != '$')
            continue;
        if (i > from && s[i - 1] == '\\')
            continue;
        if (i + 1 < n && s[i + 1] == '/')
            return n;
        return i;
    }
    return n;
}

int adblock_regex_check(const char *re, size_t n, bool match_case, char *why, size_t whylen)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *code =
        pcre2_compile((PCRE2_SPTR)re, n, match_case ? 0 : PCRE2_CASELESS, &ec, &eo, NULL);
    if (code == NULL) {
        char msg[120];
        pcre2_get_error_message(ec, (PCRE2_UCHAR *)msg, sizeof msg);
        snprintf(why, whylen, "bad regex at offset %zu: %s", (size_t)eo, msg);
        return -1;
    }
    pcre2_code_free(code);
    return 0;
}

/* Why: one function decides every line's fate so the build summary and the
 * fuzz harness see the same classes. Any thread; no allocation but PCRE2's
 * while it validates a regex. */
enum adblock_class adblock_rule_parse(const char *line, size_t n, struct adblock_rule *r)
{
    memset(r, 0, sizeof *r);
    while (n > 0 && is_space((unsigned char)line[n - 1]))
        n--;
    while (n > 0 && is_space((unsigned char)*line)) {
        line++;
        n--;
    }
    r->line = line;
    r->len = n;
    if (n == 0 || line[0] == '!' || (line[0] == '[' && line[n - 1] == ']')) {
        r->cls = ADBLOCK_CLASS_COMMENT;
        return r->cls;
    }
    if (is_cosmetic(line, n)) {
        r->cls = ADBLOCK_CLASS_COSMETIC;
        return r->cls;
    }
    if (line[0] == '#') {
        r->cls = ADBLOCK_CLASS_COMMENT; /* a hosts file's comment */
        return r->cls;
    }
    if (is_hosts_line(line, n)) {
        r->cls = ADBLOCK_CLASS_HOSTS;
        return r->cls;
    }
    if (n > ADBLOCK_LINE_MAX)
        return reject(r, ADBLOCK_REJ_LINE_TOO_LONG, "line too long");
    size_t start = 0;
    if (n >= 2 && line[0] == '@' && line[1] == '@') {
        r->exception = true;
        start = 2;
    }
    size_t end = find_options(line, n, start);
    r->opt_off = end < n ? end + 1 : n;
    r->types = ADBLOCK_TYPES_ALL;
    r->party = ADBLOCK_PARTY_FIRST | ADBLOCK_PARTY_THIRD;
    if (end < n) {
        enum adblock_class c = adblock_options_parse(r, end + 1);
        if (c != ADBLOCK_CLASS_NETWORK) {
            r->cls = c;
            return c;
        }
    }
    if (end - start >= 2 && line[start] == '/' && line[end - 1] == '/') {
        r->regex = true;
        r->pat_off = start + 1;
        r->pat_end = end - 1;
        if (adblock_regex_check(line + r->pat_off, r->pat_end - r->pat_off, r->match_case, r->why,
                                sizeof r->why) < 0) {
            r->reason = ADBLOCK_REJ_BAD_REGEX;
            r->cls = ADBLOCK_CLASS_REJECTED;
            return r->cls;
        }
        r->cls = ADBLOCK_CLASS_NETWORK;
        return r->cls;
    }
    for (size_t i = start; i < end; i++)
        if (is_space((unsigned char)line[i]))
            return reject(r, ADBLOCK_REJ_WHITE_SPACE, "white space in a pattern");
    if (end > start && line[end - 1] == '|') {
        r->anchor |= ADBLOCK_ANCHOR_END;
        end--;
    }
    if (start < end && line[start] == '|') {
        if (start + 1 < end && line[start + 1] == '|') {
            r->anchor |= ADBLOCK_ANCHOR_HOST;
            start += 2;
        } else {
            r->anchor |= ADBLOCK_ANCHOR_START;
            start += 1;
        }
    }
    r->pat_off = start;
    r->pat_end = end;
    if (r->anchor & ADBLOCK_ANCHOR_HOST) {
        size_t h = start;
        while (h < end && adblock_is_host_char((unsigned char)line[h]))
            h++;
        r->host_len = h - start;
    }
    r->cls = ADBLOCK_CLASS_NETWORK;
    return r->cls;
}
