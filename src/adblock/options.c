/* adblock/options: the `$opt,opt=value,...` part of a network rule. One row a
 * name (nginx's command-table habit): the kind of option, the type bit or
 * class it stands for, and whether `~` may negate it. Any thread. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "adblock/options.h"

enum opt_kind {
    O_TYPE,      /* a request type; arg: enum adblock_type */
    O_POPUP,     /* $popup: no network request a gateway sees */
    O_ALL,       /* every type */
    O_PARTY,     /* arg: 1 first-party, 3 third-party, 11/33 strict */
    O_DOMAIN,    /* arg: enum adblock_dom_kind; takes a value */
    O_METHOD,    /* takes a value */
    O_IMPORTANT, /* flags */
    O_BADFILTER,
    O_MATCHCASE,
    O_REDIRECT, /* $redirect=: blocks (a gateway serves no replacement) */
    O_CLASS,    /* arg: enum adblock_class: a rule a gateway cannot act on */
    O_HIDE,     /* page-hiding exceptions ($elemhide, $generichide, ...) */
    O_NOOP,     /* uBlock's `$_` padding, `$reason=` text */
};

struct opt_row {
    const char *name;
    enum opt_kind kind;
    int arg;
    bool negatable;
};

static const struct opt_row opts[] = {
    {"document", O_TYPE, ADBLOCK_TYPE_DOCUMENT, true},
    {"doc", O_TYPE, ADBLOCK_TYPE_DOCUMENT, true},
    {"subdocument", O_TYPE, ADBLOCK_TYPE_SUBDOCUMENT, true},
    {"frame", O_TYPE, ADBLOCK_TYPE_SUBDOCUMENT, true},
    {"script", O_TYPE, ADBLOCK_TYPE_SCRIPT, true},
    {"image", O_TYPE, ADBLOCK_TYPE_IMAGE, true},
    {"stylesheet", O_TYPE, ADBLOCK_TYPE_STYLESHEET, true},
    {"css", O_TYPE, ADBLOCK_TYPE_STYLESHEET, true},
    {"object", O_TYPE, ADBLOCK_TYPE_OBJECT, true},
    {"object-subrequest", O_TYPE, ADBLOCK_TYPE_OBJECT, true},
    {"xmlhttprequest", O_TYPE, ADBLOCK_TYPE_XHR, true},
    {"xhr", O_TYPE, ADBLOCK_TYPE_XHR, true},
    {"media", O_TYPE, ADBLOCK_TYPE_MEDIA, true},
    {"font", O_TYPE, ADBLOCK_TYPE_FONT, true},
    {"ping", O_TYPE, ADBLOCK_TYPE_PING, true},
    {"beacon", O_TYPE, ADBLOCK_TYPE_PING, true},
    {"websocket", O_TYPE, ADBLOCK_TYPE_WEBSOCKET, true},
    {"other", O_TYPE, ADBLOCK_TYPE_OTHER, true},
    {"popup", O_POPUP, 0, true},
    {"popunder", O_POPUP, 0, true},
    {"all", O_ALL, 0, false},
    {"third-party", O_PARTY, 3, true},
    {"3p", O_PARTY, 3, true},
    {"first-party", O_PARTY, 1, true},
    {"1p", O_PARTY, 1, true},
    {"strict1p", O_PARTY, 11, false},
    {"strict-first-party", O_PARTY, 11, false},
    {"strict3p", O_PARTY, 33, false},
    {"strict-third-party", O_PARTY, 33, false},
    {"domain", O_DOMAIN, ADBLOCK_DOM_FROM, false},
    {"from", O_DOMAIN, ADBLOCK_DOM_FROM, false},
    {"to", O_DOMAIN, ADBLOCK_DOM_TO, false},
    {"denyallow", O_DOMAIN, ADBLOCK_DOM_DENYALLOW, false},
    {"method", O_METHOD, 0, false},
    {"important", O_IMPORTANT, 0, false},
    {"badfilter", O_BADFILTER, 0, false},
    {"match-case", O_MATCHCASE, 0, false},
    {"redirect", O_REDIRECT, 0, false},
    {"rewrite", O_REDIRECT, 0, false},
    {"mp4", O_REDIRECT, 0, false},
    {"empty", O_REDIRECT, 0, false},
    {"redirect-rule", O_CLASS, ADBLOCK_CLASS_REDIRECT_RULE, false},
    {"csp", O_CLASS, ADBLOCK_CLASS_CSP, false},
    {"inline-script", O_CLASS, ADBLOCK_CLASS_CSP, false},
    {"inline-font", O_CLASS, ADBLOCK_CLASS_CSP, false},
    {"removeparam", O_CLASS, ADBLOCK_CLASS_REMOVEPARAM, false},
    {"queryprune", O_CLASS, ADBLOCK_CLASS_REMOVEPARAM, false},
    {"header", O_CLASS, ADBLOCK_CLASS_HEADER, false},
    {"replace", O_CLASS, ADBLOCK_CLASS_REPLACE, false},
    {"content", O_CLASS, ADBLOCK_CLASS_REPLACE, false},
    {"permissions", O_CLASS, ADBLOCK_CLASS_PERMISSIONS, false},
    {"urltransform", O_CLASS, ADBLOCK_CLASS_TRANSFORM, false},
    {"uritransform", O_CLASS, ADBLOCK_CLASS_TRANSFORM, false},
    {"urlskip", O_CLASS, ADBLOCK_CLASS_TRANSFORM, false},
    {"elemhide", O_HIDE, 0, false},
    {"ehide", O_HIDE, 0, false},
    {"generichide", O_HIDE, 0, false},
    {"ghide", O_HIDE, 0, false},
    {"specifichide", O_HIDE, 0, false},
    {"shide", O_HIDE, 0, false},
    {"genericblock", O_HIDE, 0, false},
    {"cname", O_CLASS, ADBLOCK_CLASS_CNAME, false},
    {"ipaddress", O_CLASS, ADBLOCK_CLASS_IPADDRESS, false},
    {"_", O_NOOP, 0, false},
    {"reason", O_NOOP, 0, false},
};

static const struct opt_row *opt_find(const char *s, size_t n)
{
    /* `$__` and longer runs of `_` are padding too (s is not NUL-terminated) */
    size_t u = 0;
    while (u < n && s[u] == '_')
        u++;
    if (n > 0 && u == n)
        return &opts[sizeof opts / sizeof opts[0] - 2];
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (strlen(opts[i].name) == n && strncasecmp(opts[i].name, s, n) == 0)
            return &opts[i];
    return NULL;
}

bool adblock_option_known(const char *s, size_t n)
{
    if (n > 0 && s[0] == '~') {
        s++;
        n--;
    }
    return opt_find(s, n) != NULL;
}

static enum adblock_class reject(struct adblock_rule *r, enum adblock_reject reason,
                                 const char *what, const char *s, size_t n)
{
    r->reason = reason;
    snprintf(r->why, sizeof r->why, "%s `%.*s`", what, (int)(n > 60 ? 60 : n), s);
    return ADBLOCK_CLASS_REJECTED;
}

/* method=get|~post: the mask of methods, 0 with why on an unknown name. */
static uint16_t parse_methods(const char *v, size_t n, struct adblock_rule *r)
{
    uint16_t pos = 0, neg = 0;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && v[j] != '|')
            j++;
        bool not = j > i && v[i] == '~';
        int m = adblock_method_parse(v + i + not, j - i - not );
        if (m < 0) {
            reject(r, ADBLOCK_REJ_UNKNOWN_METHOD, "unknown method", v + i, j - i);
            return 0;
        }
        if (not )
            neg |= 1u << m;
        else
            pos |= 1u << m;
        i = j + 1;
    }
    uint16_t all = (1u << ADBLOCK_METHOD_COUNT) - 1;
    uint16_t mask = (pos ? pos : all) & ~neg;
    if (mask == 0)
        reject(r, ADBLOCK_REJ_NO_METHOD_LEFT, "no method left in", v, n);
    return mask;
}

/* A domain list: non-empty entries separated by `|`, each `~`? then a host or
 * an entity (`name.*`). Checked here so the engine can trust it. */
static bool domains_ok(const char *v, size_t n)
{
    size_t i = 0;
    if (n == 0)
        return false;
    while (i <= n) {
        size_t j = i;
        while (j < n && v[j] != '|')
            j++;
        size_t a = i + (i < j && v[i] == '~');
        if (a >= j)
            return false;
        for (size_t k = a; k < j; k++) {
            unsigned char c = (unsigned char)v[k];
            bool star = c == '*' && k == j - 1 && k > a && v[k - 1] == '.';
            bool ip6 = c == '[' || c == ']' || c == ':';
            if (!adblock_is_host_char(c) && c < 0x80 && !star && !ip6)
                return false;
        }
        i = j + 1;
    }
    return true;
}

/* Why: every option is either understood (and changes how the rule matches),
 * marks a class a gateway cannot enforce, or rejects the rule with its name:
 * a rule is never kept with an option silently dropped (issue 26). */
enum adblock_class adblock_options_parse(struct adblock_rule *r, size_t off)
{
    const char *s = r->line;
    size_t n = r->len;
    uint16_t pos = 0, neg = ADBLOCK_TYPES_ALL;
    bool popup = false, hide = false, typed = false;
    size_t i = off;
    if (i >= n)
        return reject(r, ADBLOCK_REJ_EMPTY_OPTIONS, "empty option list after", "$", 1);
    while (i <= n) {
        size_t start = i, j = i, eq = 0;
        while (j < n && s[j] != ',') {
            if (s[j] == '\\' && j + 1 < n)
                j++;
            else if (s[j] == '=' && eq == 0)
                eq = j;
            j++;
        }
        size_t name_end = eq ? eq : j;
        bool not = start < name_end && s[start] == '~';
        const char *name = s + start + not ;
        size_t nlen = name_end - start - not ;
        const char *val = eq ? s + eq + 1 : NULL;
        size_t vlen = eq ? j - eq - 1 : 0;
        const struct opt_row *o = opt_find(name, nlen);
        if (o == NULL)
            return reject(r, ADBLOCK_REJ_UNKNOWN_OPTION, "unknown option", s + start, j - start);
        if (not &&!o->negatable)
            return reject(r, ADBLOCK_REJ_NOT_NEGATABLE, "option cannot be negated:", s + start,
                          j - start);
        bool takes = o->kind == O_DOMAIN || o->kind == O_METHOD ||
                     (o->kind == O_REDIRECT && strcmp(o->name, "mp4") && strcmp(o->name, "empty"));
        if (takes && (val == NULL || vlen == 0))
            return reject(r, ADBLOCK_REJ_NEEDS_VALUE, "option needs a value:", s + start,
                          j - start);
        if (!takes && val != NULL && o->kind != O_CLASS && o->kind != O_NOOP)
            return reject(r, ADBLOCK_REJ_TAKES_NO_VALUE, "option takes no value:", s + start,
                          j - start);
        switch (o->kind) {
        case O_TYPE:
            typed = true;
            if (not )
                neg &= (uint16_t) ~(1u << o->arg);
            else
                pos |= (uint16_t)(1u << o->arg);
            if (o->arg == ADBLOCK_TYPE_DOCUMENT && !not &&r->exception)
                r->page = true;
            break;
        case O_POPUP:
            if (!not )
                popup = true;
            break;
        case O_ALL:
            typed = true;
            pos = ADBLOCK_TYPES_ALL;
            break;
        case O_PARTY:
            if (o->arg > 10)
                r->party = ADBLOCK_PARTY_STRICT |
                           (o->arg == 11 ? ADBLOCK_PARTY_FIRST : ADBLOCK_PARTY_THIRD);
            else if ((o->arg == 3) != not )
                r->party &= ~ADBLOCK_PARTY_FIRST;
            else
                r->party &= ~ADBLOCK_PARTY_THIRD;
            break;
        case O_DOMAIN:
            if (!domains_ok(val, vlen))
                return reject(r, ADBLOCK_REJ_BAD_DOMAIN_LIST, "bad domain list in", s + start,
                              j - start);
            if (r->ndom == ADBLOCK_RULE_DOMS)
                return reject(r, ADBLOCK_REJ_TOO_MANY_DOMAINS,
                              "too many domain options:", s + start, j - start);
            r->dom[r->ndom].kind = (enum adblock_dom_kind)o->arg;
            r->dom[r->ndom].off = (size_t)(val - s);
            r->dom[r->ndom].len = vlen;
            r->ndom++;
            break;
        case O_METHOD:
            r->methods = parse_methods(val, vlen, r);
            if (r->methods == 0)
                return ADBLOCK_CLASS_REJECTED;
            break;
        case O_IMPORTANT:
            r->important = true;
            break;
        case O_BADFILTER:
            r->badfilter = true;
            /* the bytes to cut to find the twin: this option and one comma */
            r->bad_off = start > off ? start - 1 : start;
            r->bad_len = (start > off ? j : (j < n ? j + 1 : j)) - r->bad_off;
            break;
        case O_MATCHCASE:
            r->match_case = true;
            break;
        case O_REDIRECT:
            r->redirect_off = val ? (size_t)(val - s) : 0;
            r->redirect_len = vlen;
            if (r->exception)
                return ADBLOCK_CLASS_REDIRECT_RULE; /* un-does a redirect, not a block */
            break;
        case O_CLASS:
            return (enum adblock_class)o->arg;
        case O_HIDE:
            hide = true;
            break;
        case O_NOOP:
            break;
        }
        i = j + 1;
    }
    if (hide && !r->page)
        return ADBLOCK_CLASS_PAGE_HIDING; /* uBlock reads `*$ghide,domain=x` as an exception */
    if (popup && pos == 0 && neg == ADBLOCK_TYPES_ALL)
        return ADBLOCK_CLASS_POPUP;
    /* the reference engine's rule: positive types, else all but the negated */
    if (pos == 0)
        r->types = neg;
    else
        r->types = pos & neg;
    if (r->types == 0)
        return reject(r, ADBLOCK_REJ_NO_TYPE_LEFT, "no request type left in", s + off, n - off);
    (void)typed;
    return ADBLOCK_CLASS_NETWORK;
}

struct key_part {
    const char *s;
    size_t n;
};

static int key_part_cmp(const void *a, const void *b)
{
    const struct key_part *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = strncasecmp(x->s, y->s, n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static void key_lower(char *k, size_t *kl, const char *s, size_t n, bool fold)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        k[(*kl)++] = (char)(fold && c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
}

/* Why: EasyList and uBlock's lists write a $badfilter with its options in another
 * order than the rule it cancels; the reference cancels by meaning. Builder thread. */
char *adblock_rule_key(const struct adblock_rule *r)
{
    size_t entries = 0;
    for (unsigned d = 0; d < r->ndom; d++)
        for (size_t i = 0; i < r->dom[d].len; i++)
            entries += r->line[r->dom[d].off + i] == '|';
    entries += r->ndom;
    struct key_part *parts = malloc((entries ? entries : 1) * sizeof *parts);
    char *k = malloc(r->len + 64 + 2 * entries);
    if (parts == NULL || k == NULL) {
        free(parts);
        free(k);
        return NULL;
    }
    size_t kl =
        (size_t)snprintf(k, 64, "%c%c%c%c%u:%x:%x:%x:", r->exception ? 'E' : 'B',
                         r->important ? 'I' : '-', r->match_case ? 'M' : '-', r->regex ? 'R' : '-',
                         r->anchor, (unsigned)r->types, r->party, (unsigned)r->methods);
    key_lower(k, &kl, r->line + r->pat_off, r->pat_end - r->pat_off, !r->match_case);
    for (unsigned kind = ADBLOCK_DOM_FROM; kind <= ADBLOCK_DOM_DENYALLOW; kind++) {
        size_t np = 0;
        for (unsigned d = 0; d < r->ndom; d++) {
            if (r->dom[d].kind != kind)
                continue;
            const char *v = r->line + r->dom[d].off;
            size_t n = r->dom[d].len, i = 0;
            while (i <= n) {
                size_t j = i;
                while (j < n && v[j] != '|')
                    j++;
                parts[np].s = v + i;
                parts[np++].n = j - i;
                i = j + 1;
            }
        }
        if (np == 0)
            continue;
        qsort(parts, np, sizeof *parts, key_part_cmp);
        k[kl++] = '\x01';
        k[kl++] = (char)('0' + kind);
        for (size_t i = 0; i < np; i++) {
            k[kl++] = '|';
            key_lower(k, &kl, parts[i].s, parts[i].n, true);
        }
    }
    if (r->redirect_len) {
        k[kl++] = '\x02';
        key_lower(k, &kl, r->line + r->redirect_off, r->redirect_len, false);
    }
    k[kl] = 0;
    free(parts);
    return k;
}
