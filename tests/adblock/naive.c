/* The naive Adblock matcher (naive.h): each rule is kept as written plus a token list
 * (literal bytes, '*', '^') matched by plain recursion, regex rules go to PCRE2, and the
 * options are checked one by one. The only thing not naive is a necessary-condition
 * filter: a rule is tried on a URL only if the URL holds one 3-byte piece of the rule's
 * literal text (any match must contain it), so 100,000 requests over 100,000 rules take
 * seconds, not hours. */
#define _GNU_SOURCE
#define PCRE2_CODE_UNIT_WIDTH 8
#include "naive.h"
#include "naive_host.h"

#include <ctype.h>
#include <libpsl.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Request types, as bits. POPUP and WEBRTC never occur in a request here: a rule limited
 * to them never applies. */
enum {
    T_DOC = 1 << 0,
    T_SUBDOC = 1 << 1,
    T_SCRIPT = 1 << 2,
    T_IMAGE = 1 << 3,
    T_CSS = 1 << 4,
    T_OBJECT = 1 << 5,
    T_XHR = 1 << 6,
    T_MEDIA = 1 << 7,
    T_FONT = 1 << 8,
    T_PING = 1 << 9,
    T_WEBSOCKET = 1 << 10,
    T_OTHER = 1 << 11,
    T_POPUP = 1 << 12,
    T_WEBRTC = 1 << 13,
};
#define T_ALL 0x3fff
#define T_DEFAULT (T_ALL & ~T_POPUP) /* no type option: every request type */

struct name_bits {
    const char *name;
    unsigned bits;
};

/* Type options (ABP and uBO spellings). */
static const struct name_bits type_options[] = {
    {"document", T_DOC},        {"doc", T_DOC},
    {"subdocument", T_SUBDOC},  {"frame", T_SUBDOC},
    {"script", T_SCRIPT},       {"image", T_IMAGE},
    {"stylesheet", T_CSS},      {"css", T_CSS},
    {"object", T_OBJECT},       {"object-subrequest", T_OBJECT},
    {"xmlhttprequest", T_XHR},  {"xhr", T_XHR},
    {"media", T_MEDIA},         {"font", T_FONT},
    {"ping", T_PING},           {"beacon", T_PING},
    {"websocket", T_WEBSOCKET}, {"other", T_OTHER},
    {"popup", T_POPUP},         {"popunder", T_POPUP},
    {"webrtc", T_WEBRTC},       {NULL, 0}};

/* Request type names (Adblock's, and webRequest's main_frame/sub_frame). */
static const struct name_bits request_types[] = {{"", T_DOC},
                                                 {"document", T_DOC},
                                                 {"main_frame", T_DOC},
                                                 {"subdocument", T_SUBDOC},
                                                 {"sub_frame", T_SUBDOC},
                                                 {"script", T_SCRIPT},
                                                 {"image", T_IMAGE},
                                                 {"stylesheet", T_CSS},
                                                 {"object", T_OBJECT},
                                                 {"object-subrequest", T_OBJECT},
                                                 {"xmlhttprequest", T_XHR},
                                                 {"xhr", T_XHR},
                                                 {"fetch", T_XHR},
                                                 {"media", T_MEDIA},
                                                 {"font", T_FONT},
                                                 {"ping", T_PING},
                                                 {"beacon", T_PING},
                                                 {"websocket", T_WEBSOCKET},
                                                 {"csp_report", T_OTHER},
                                                 {"other", T_OTHER},
                                                 {NULL, 0}};

/* Options whose action is not a block or an un-block of the request (a response header,
 * a rewrite, cosmetic filtering, a redirect only when something else blocks): such a
 * rule never decides a verdict. $method is here too: a request here has no method. */
static const char *const inert_options[] = {
    "csp",           "removeparam", "header",        "permissions", "replace",      "urltransform",
    "uritransform",  "urlskip",     "inline-script", "inline-font", "elemhide",     "ehide",
    "generichide",   "ghide",       "specifichide",  "shide",       "genericblock", "content",
    "redirect-rule", "cname",       "stealth",       "method",      "sitekey",      "ipaddress",
    "reason",        NULL};

enum { TOK_STAR = 256, TOK_SEP = 257 };
enum { A_NONE, A_LEFT, A_HOST };

struct rule {
    char *raw;  /* as written */
    char *norm; /* for $badfilter: "@@"? pattern "$" sorted options minus badfilter */
    int exception, important, badfilter, match_case, inert, disabled, doc_exception;
    int allow_1p, allow_3p, strict1p, strict3p;
    unsigned types;
    int anchor, end_anchor;
    int *tok; /* pattern tokens (bytes, TOK_STAR, TOK_SEP) */
    size_t ntok;
    pcre2_code *re;
    struct naive_domains from, to, denyallow;
};

#define GRAM_BITS 20
#define GRAM_N (1u << GRAM_BITS)

struct bucket {
    uint32_t *ids;
    size_t n, cap;
};

struct naive {
    const psl_ctx_t *psl;
    struct rule *rules;
    size_t nrules, caprules;
    struct bucket *grams;     /* rules filed under one 3-byte piece of their literal text */
    struct bucket always;     /* rules with no such piece (regex, short patterns) */
    uint32_t *seen, seen_gen; /* per-bucket stamp: each bucket visited once per URL */
    uint32_t *cand;
    size_t ncand, capcand;
    pcre2_match_data *md;
    unsigned char *failed; /* tok_match's failed states, grown as needed */
    size_t capfailed;
    struct naive_stats stats;
    int finished;
};

static void bucket_push(struct bucket *b, uint32_t id)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 4;
        b->ids = naive_xrealloc(b->ids, b->cap * sizeof(*b->ids));
    }
    b->ids[b->n++] = id;
}

static unsigned lookup_bits(const struct name_bits *t, const char *name)
{
    for (; t->name != NULL; t++)
        if (strcmp(t->name, name) == 0)
            return t->bits;
    return 0;
}

static int in_list(const char *const *list, const char *name)
{
    for (; *list != NULL; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

/* '^' matches one byte that is not a letter, a digit or one of _ - . % (ABP); bytes from
 * 0x80 on are not separators. The end of the URL is handled by the matcher. */
static int is_separator(unsigned char c)
{
    if (c >= 0x80 || isalnum(c))
        return 0;
    return c != '_' && c != '-' && c != '.' && c != '%';
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One option (lower-cased, "~" kept); 0 if understood, -1 if the rule must be dropped. */
static int rule_option(struct naive *n, struct rule *r, char *opt, unsigned *pos, unsigned *neg)
{
    char *value = strchr(opt, '=');
    if (value != NULL)
        *value++ = '\0';
    int negated = opt[0] == '~';
    const char *name = opt + negated;
    unsigned bits = lookup_bits(type_options, name);
    if (bits != 0 && value == NULL) {
        *(negated ? neg : pos) |= bits;
        return 0;
    }
    if (negated && strcmp(name, "third-party") != 0 && strcmp(name, "3p") != 0 &&
        strcmp(name, "first-party") != 0 && strcmp(name, "1p") != 0)
        return -1;
    if (strcmp(name, "all") == 0) {
        *pos |= T_ALL;
    } else if (strcmp(name, "third-party") == 0 || strcmp(name, "3p") == 0) {
        if (negated)
            r->allow_3p = 0;
        else
            r->allow_1p = 0;
    } else if (strcmp(name, "first-party") == 0 || strcmp(name, "1p") == 0) {
        if (negated)
            r->allow_1p = 0;
        else
            r->allow_3p = 0;
    } else if (strcmp(name, "strict1p") == 0) {
        r->strict1p = 1;
    } else if (strcmp(name, "strict3p") == 0) {
        r->strict3p = 1;
    } else if (strcmp(name, "important") == 0) {
        r->important = 1;
    } else if (strcmp(name, "badfilter") == 0) {
        r->badfilter = 1;
    } else if (strcmp(name, "match-case") == 0) {
        r->match_case = 1;
    } else if ((strcmp(name, "domain") == 0 || strcmp(name, "from") == 0) && value) {
        naive_domains_parse(&r->from, value);
    } else if (strcmp(name, "to") == 0 && value) {
        naive_domains_parse(&r->to, value);
    } else if (strcmp(name, "denyallow") == 0 && value) {
        naive_domains_parse(&r->denyallow, value);
    } else if (strcmp(name, "redirect") == 0 || strcmp(name, "rewrite") == 0 ||
               strcmp(name, "empty") == 0 || strcmp(name, "mp4") == 0) {
        /* A redirect blocks the request (the gateway serves no replacement); an
         * exception naming a redirect only cancels the redirect. */
        if (r->exception)
            r->inert = 1;
    } else if (in_list(inert_options, name)) {
        r->inert = 1;
    } else {
        (void)n;
        return -1;
    }
    return 0;
}

/* A domain list in a fixed order: $badfilter compares the set, not its spelling. */
static char *sorted_list(const char *v)
{
    char *copy = naive_xstrndup(v, strlen(v));
    char **e = NULL;
    size_t ne = 0;
    for (char *save = NULL, *t = strtok_r(copy, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        e = naive_xrealloc(e, (ne + 1) * sizeof(*e));
        e[ne++] = t;
    }
    qsort(e, ne, sizeof(*e), cmp_str);
    char *out = naive_xrealloc(NULL, strlen(v) + 1);
    out[0] = '\0';
    for (size_t i = 0; i < ne; i++) {
        strcat(out, i ? "|" : "");
        strcat(out, e[i]);
    }
    free(e);
    free(copy);
    return out;
}

/* An option word in the spelling $badfilter compares (uBO's short names are the same
 * options as the long ones; a domain list's order does not count). */
static char *option_key(const char *w)
{
    static const char *const lists[] = {"domain=", "from=", "to=", "denyallow="};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        if (strncmp(w, lists[i], strlen(lists[i])) == 0) {
            char *v = sorted_list(w + strlen(lists[i]));
            size_t n = strlen(v) + 12;
            char *k = naive_xrealloc(NULL, n);
            snprintf(k, n, "%s%s", strcmp(lists[i], "from=") == 0 ? "domain=" : lists[i], v);
            free(v);
            return k;
        }
    static const char *const alias[][2] = {
        {"3p", "third-party"},    {"1p", "first-party"},    {"xhr", "xmlhttprequest"},
        {"css", "stylesheet"},    {"frame", "subdocument"}, {"doc", "document"},
        {"from", "domain"},       {"beacon", "ping"},       {"ehide", "elemhide"},
        {"ghide", "generichide"}, {"shide", "specifichide"}};
    int neg = w[0] == '~';
    size_t len = strcspn(w + neg, "=");
    for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
        if (strlen(alias[i][0]) == len && strncmp(w + neg, alias[i][0], len) == 0) {
            size_t n = strlen(alias[i][1]) + strlen(w) + 2;
            char *k = naive_xrealloc(NULL, n);
            snprintf(k, n, "%s%s%s", neg ? "~" : "", alias[i][1], w + neg + len);
            return k;
        }
    return naive_xstrndup(w, strlen(w));
}

/* The pattern (between "@@" and "$"): a /regex/ to PCRE2, else anchors and tokens. */
static int rule_pattern(struct naive *n, struct rule *r, const char *p, size_t len)
{
    if (len >= 2 && p[0] == '/' && p[len - 1] == '/') {
        int code;
        PCRE2_SIZE off;
        uint32_t flags = r->match_case ? 0 : PCRE2_CASELESS;
        r->re = pcre2_compile((PCRE2_SPTR)(p + 1), len - 2, flags, &code, &off, NULL);
        if (r->re == NULL)
            return -1;
        /* JIT only for speed (every request tries every regex rule); if it fails, the
         * interpreter gives the same answers. */
        (void)pcre2_jit_compile(r->re, PCRE2_JIT_COMPLETE);
        n->stats.regex++;
        return 0;
    }
    if (len >= 2 && p[0] == '|' && p[1] == '|') {
        r->anchor = A_HOST;
        p += 2, len -= 2;
    } else if (len >= 1 && p[0] == '|') {
        r->anchor = A_LEFT;
        p += 1, len -= 1;
    }
    if (len >= 1 && p[len - 1] == '|') {
        r->end_anchor = 1;
        len--;
    }
    r->tok = naive_xrealloc(NULL, (len + 1) * sizeof(*r->tok));
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '*') {
            if (r->ntok > 0 && r->tok[r->ntok - 1] == TOK_STAR)
                continue;
            r->tok[r->ntok++] = TOK_STAR;
        } else if (c == '^') {
            r->tok[r->ntok++] = TOK_SEP;
        } else if (c <= ' ') {
            return -1;
        } else {
            r->tok[r->ntok++] = r->match_case ? c : tolower(c);
        }
    }
    return 0;
}

/* Lines that are not network rules: comments, list headers, cosmetic and HTML rules. */
static int is_network_line(const char *s)
{
    static const char *const cosmetic[] = {"##",  "#@#",  "#?#", "#@?#", "#$#", "#@$#",
                                           "#%#", "#@%#", "$$",  "$@$",  NULL};
    if (s[0] == '\0' || s[0] == '!' || s[0] == '[' || (s[0] == '#' && s[1] == ' '))
        return 0;
    for (const char *const *c = cosmetic; *c; c++)
        if (strstr(s, *c) != NULL)
            return 0;
    return 1;
}

static void rule_free(struct rule *r)
{
    free(r->raw);
    free(r->norm);
    free(r->tok);
    pcre2_code_free(r->re);
    naive_domains_free(&r->from);
    naive_domains_free(&r->to);
    naive_domains_free(&r->denyallow);
}

/* Parse one line (trimmed, NUL-terminated) into a rule, or drop it as the engines do
 * (an unknown option, a bad regex). */
static void add_line(struct naive *n, const char *line)
{
    if (!is_network_line(line)) {
        n->stats.skipped++;
        return;
    }
    struct rule r;
    memset(&r, 0, sizeof(r));
    r.allow_1p = r.allow_3p = 1;
    const char *p = line;
    if (p[0] == '@' && p[1] == '@') {
        r.exception = 1;
        p += 2;
    }
    /* Options follow the last '$' that is not followed by '/' (a regex's end). */
    const char *dollar = strrchr(p, '$');
    if (dollar != NULL && dollar[1] == '/')
        dollar = NULL;
    size_t plen = dollar ? (size_t)(dollar - p) : strlen(p);
    unsigned pos = 0, neg = 0;
    char *opts = naive_xstrndup(dollar ? dollar + 1 : "", dollar ? strlen(dollar + 1) : 0);
    for (char *c = opts; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    /* The option words, kept sorted for the $badfilter key. */
    char **words = NULL;
    size_t nwords = 0;
    int bad = dollar != NULL && opts[0] == '\0';
    for (char *save = NULL, *w = strtok_r(opts, ",", &save); w && !bad;
         w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, "badfilter") != 0) {
            words = naive_xrealloc(words, (nwords + 1) * sizeof(*words));
            words[nwords++] = option_key(w);
        }
        if (rule_option(n, &r, w, &pos, &neg) < 0)
            bad = 1;
    }
    if (!bad) {
        /* A $document exception (named as such, not through $all) un-blocks what the
         * page loads (ABP, uBO). */
        r.doc_exception = r.exception && (pos & T_DOC) && pos != T_ALL && !(neg & T_DOC);
        if (pos == 0)
            pos = T_DEFAULT;
        r.types = pos & ~neg;
        if (rule_pattern(n, &r, p, plen) < 0)
            bad = 1;
    }
    if (!bad) {
        if (nwords > 1)
            qsort(words, nwords, sizeof(*words), cmp_str);
        size_t klen = 3 + plen + 1;
        for (size_t i = 0; i < nwords; i++)
            klen += strlen(words[i]) + 1;
        r.norm = naive_xrealloc(NULL, klen);
        int off = snprintf(r.norm, klen, "%s%.*s$", r.exception ? "@@" : "", (int)plen, p);
        if (!r.match_case)
            for (char *c = r.norm; *c; c++)
                *c = (char)tolower((unsigned char)*c);
        for (size_t i = 0; i < nwords; i++)
            off += snprintf(r.norm + off, klen - (size_t)off, "%s%s", i ? "," : "", words[i]);
        r.raw = naive_xstrndup(line, strlen(line));
    }
    for (size_t i = 0; i < nwords; i++)
        free(words[i]);
    free(words);
    free(opts);
    if (bad) {
        rule_free(&r);
        n->stats.dropped++;
        return;
    }
    if (r.inert)
        n->stats.inert++;
    if (n->nrules == n->caprules) {
        n->caprules = n->caprules ? 2 * n->caprules : 1024;
        n->rules = naive_xrealloc(n->rules, n->caprules * sizeof(*n->rules));
    }
    n->rules[n->nrules++] = r;
}

struct naive *naive_new(char *err, size_t errlen)
{
    struct naive *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    n->psl = psl_latest(NULL);
    if (n->psl == NULL)
        n->psl = psl_builtin();
    if (n->psl == NULL) {
        snprintf(err, errlen, "no Public Suffix List (libpsl)");
        free(n);
        return NULL;
    }
    n->md = pcre2_match_data_create(1, NULL);
    return n;
}

void naive_free(struct naive *n)
{
    if (n == NULL)
        return;
    for (size_t i = 0; i < n->nrules; i++)
        rule_free(&n->rules[i]);
    free(n->rules);
    if (n->grams != NULL)
        for (size_t i = 0; i < GRAM_N; i++)
            free(n->grams[i].ids);
    free(n->grams);
    free(n->always.ids);
    free(n->seen);
    free(n->cand);
    free(n->failed);
    pcre2_match_data_free(n->md);
    if (n->psl != psl_builtin())
        psl_free((psl_ctx_t *)n->psl);
    free(n);
}

int naive_add_list(struct naive *n, const char *text, size_t len, char *err, size_t errlen)
{
    if (n->finished) {
        snprintf(err, errlen, "naive_add_list after naive_finish");
        return -1;
    }
    const char *end = text + len;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const char *e = nl ? nl : end;
        const char *s = text;
        while (s < e && isspace((unsigned char)*s))
            s++;
        const char *t = e;
        while (t > s && isspace((unsigned char)t[-1]))
            t--;
        char *line = naive_xstrndup(s, (size_t)(t - s));
        add_line(n, line);
        free(line);
        text = nl ? nl + 1 : end;
    }
    return 0;
}

static uint32_t gram_hash(unsigned char a, unsigned char b, unsigned char c)
{
    uint32_t h = ((uint32_t)a << 16 | (uint32_t)b << 8 | c) * 2654435761u;
    return h >> (32 - GRAM_BITS);
}

/* The rule's literal 3-byte pieces (lower case); calls f for each. */
static void rule_grams(const struct rule *r, void (*f)(void *, uint32_t), void *arg)
{
    for (size_t i = 0; i + 2 < r->ntok; i++) {
        int a = r->tok[i], b = r->tok[i + 1], c = r->tok[i + 2];
        if (a < 256 && b < 256 && c < 256)
            f(arg, gram_hash((unsigned char)tolower(a), (unsigned char)tolower(b),
                             (unsigned char)tolower(c)));
    }
}

struct gram_pick {
    const uint32_t *count;
    uint32_t best;
    uint32_t best_count;
};

static void count_gram(void *arg, uint32_t h)
{
    ((uint32_t *)arg)[h]++;
}

static void pick_gram(void *arg, uint32_t h)
{
    struct gram_pick *g = arg;
    if (g->count[h] < g->best_count) {
        g->best_count = g->count[h];
        g->best = h;
    }
}

/* $badfilter: a rule is disabled by a badfilter rule of the same text and options (in any
 * order). Then every rule that can decide is filed under its rarest 3-byte piece. */
int naive_finish(struct naive *n, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (n->finished)
        return 0;
    n->finished = 1;
    for (size_t i = 0; i < n->nrules; i++) {
        if (!n->rules[i].badfilter)
            continue;
        for (size_t j = 0; j < n->nrules; j++)
            if (!n->rules[j].badfilter && strcmp(n->rules[j].norm, n->rules[i].norm) == 0) {
                if (!n->rules[j].disabled)
                    n->stats.badfiltered++;
                n->rules[j].disabled = 1;
            }
    }
    uint32_t *count = calloc(GRAM_N, sizeof(*count));
    n->grams = calloc(GRAM_N, sizeof(*n->grams));
    n->seen = calloc(GRAM_N, sizeof(*n->seen));
    if (count == NULL || n->grams == NULL || n->seen == NULL) {
        fputs("naive: out of memory\n", stderr);
        exit(1);
    }
    for (size_t i = 0; i < n->nrules; i++)
        rule_grams(&n->rules[i], count_gram, count);
    for (size_t i = 0; i < n->nrules; i++) {
        struct rule *r = &n->rules[i];
        if (r->badfilter || r->disabled || r->inert)
            continue;
        n->stats.network++;
        n->stats.exceptions += r->exception;
        struct gram_pick g = {count, 0, UINT32_MAX};
        if (r->re == NULL)
            rule_grams(r, pick_gram, &g);
        if (g.best_count == UINT32_MAX)
            bucket_push(&n->always, (uint32_t)i);
        else
            bucket_push(&n->grams[g.best], (uint32_t)i);
    }
    free(count);
    return 0;
}

void naive_get_stats(const struct naive *n, struct naive_stats *s)
{
    *s = n->stats;
    s->always = n->always.n;
}

/* A request as the matcher sees it. */
struct req {
    const char *url; /* as given, scheme and host lower case, less a trailing dot of the host */
    char *owned;     /* url, when it was copied to change those */
    char *lurl;      /* lower case */
    size_t len;
    size_t host_start; /* where "||" may anchor: after "scheme:/+" */
    size_t host_end;   /* the first '/' after it, or the end */
    int has_host;
    char *host;      /* lower case, without user info and port */
    const char *reg; /* registrable domain (PSL), or the host itself */
    unsigned type;
    char *from_host; /* NULL: no initiator */
    const char *from_reg;
};

/* One pattern against one URL: the tokens, the text, and the states (token, byte) known
 * to fail, so that several '*' cost (tokens x bytes), not bytes to the power of stars. */
struct tmatch {
    const int *t;
    size_t nt;
    const char *s;
    size_t len;
    int end_anchor;
    unsigned char *failed; /* NULL: no '*' in the pattern, nothing to remember */
};

/* Tokens t[ti..] against s[si..]: '*' any run, '^' a separator byte or the end. Plain
 * recursion over the tokens. */
static int tok_match(const struct tmatch *m, size_t ti, size_t si)
{
    for (;;) {
        if (ti == m->nt)
            return !m->end_anchor || si == m->len;
        if (m->t[ti] == TOK_STAR) {
            unsigned char *f = &m->failed[ti * (m->len + 1) + si];
            if (*f)
                return 0;
            for (size_t k = si; k <= m->len; k++)
                if (tok_match(m, ti + 1, k))
                    return 1;
            *f = 1;
            return 0;
        }
        if (m->t[ti] == TOK_SEP) {
            if (si == m->len) {
                ti++;
                continue;
            }
            if (!is_separator((unsigned char)m->s[si]))
                return 0;
        } else if (si == m->len || (unsigned char)m->s[si] != m->t[ti]) {
            return 0;
        }
        ti++, si++;
    }
}

/* The pattern of r against the URL, per the anchors. */
static int pattern_match(struct naive *n, const struct rule *r, const struct req *q)
{
    if (r->re != NULL)
        return pcre2_match(r->re, (PCRE2_SPTR)q->url, q->len, 0, 0, n->md, NULL) >= 0;
    struct tmatch m = {r->tok, r->ntok,       r->match_case ? q->url : q->lurl,
                       q->len, r->end_anchor, NULL};
    for (size_t i = 0; i < r->ntok; i++)
        if (r->tok[i] == TOK_STAR) {
            size_t need = (r->ntok + 1) * (q->len + 1);
            if (need > n->capfailed) {
                n->capfailed = 2 * need;
                n->failed = naive_xrealloc(n->failed, n->capfailed);
            }
            memset(n->failed, 0, need);
            m.failed = n->failed;
            break;
        }
    if (r->anchor == A_LEFT)
        return tok_match(&m, 0, 0);
    if (r->anchor == A_HOST) {
        /* "||": at the start of the host or just after any '.' in it (ABP). */
        if (!q->has_host)
            return 0;
        for (size_t i = q->host_start; i < q->host_end; i++)
            if ((i == q->host_start || m.s[i - 1] == '.') && tok_match(&m, 0, i))
                return 1;
        return 0;
    }
    for (size_t i = 0; i <= q->len; i++)
        if (tok_match(&m, 0, i))
            return 1;
    return 0;
}

/* Options of r against the request: type, party, $domain, $to, $denyallow. */
static int options_match(struct naive *n, const struct rule *r, const struct req *q)
{
    if (!(r->types & q->type))
        return 0;
    /* A document request is first-party to itself; a request without an initiator is
     * first-party. Third-party: the registrable domains differ. */
    int third = q->type != T_DOC && q->from_host != NULL && strcmp(q->reg, q->from_reg) != 0;
    if (!(third ? r->allow_3p : r->allow_1p))
        return 0;
    if (r->strict1p || r->strict3p) {
        int same = q->type == T_DOC || q->from_host == NULL || strcmp(q->host, q->from_host) == 0;
        if ((r->strict1p && !same) || (r->strict3p && same))
            return 0;
    }
    if (r->from.n > 0 && !naive_domains_ok(n->psl, &r->from, q->from_host))
        return 0;
    if (r->to.n > 0 && !naive_domains_ok(n->psl, &r->to, q->has_host ? q->host : NULL))
        return 0;
    for (size_t i = 0; i < r->denyallow.n; i++)
        if (q->has_host && naive_host_in(n->psl, q->host, r->denyallow.names[i]))
            return 0;
    return 1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The rules that may match q (every rule that does is among them), in list order. */
static void candidates(struct naive *n, const struct req *q)
{
    n->ncand = 0;
    if (++n->seen_gen == 0) {
        memset(n->seen, 0, GRAM_N * sizeof(*n->seen));
        n->seen_gen = 1;
    }
    size_t need = n->always.n;
    for (size_t i = 0; i + 2 < q->len; i++) {
        uint32_t h = gram_hash((unsigned char)q->lurl[i], (unsigned char)q->lurl[i + 1],
                               (unsigned char)q->lurl[i + 2]);
        if (n->seen[h] == n->seen_gen)
            continue;
        n->seen[h] = n->seen_gen;
        need += n->grams[h].n;
        if (need > n->capcand) {
            n->capcand = 2 * need;
            n->cand = naive_xrealloc(n->cand, n->capcand * sizeof(*n->cand));
        }
        if (n->grams[h].n > 0)
            memcpy(n->cand + n->ncand, n->grams[h].ids, n->grams[h].n * sizeof(*n->cand));
        n->ncand += n->grams[h].n;
    }
    /* The pieces' rules sorted, then merged with the always-tried ones (already in list
     * order) from the back, in place. */
    need = 2 * need + 1;
    if (need > n->capcand) {
        n->capcand = need;
        n->cand = naive_xrealloc(n->cand, n->capcand * sizeof(*n->cand));
    }
    if (n->ncand > 1)
        qsort(n->cand, n->ncand, sizeof(*n->cand), cmp_u32);
    size_t i = n->ncand, j = n->always.n, k = n->ncand + n->always.n;
    while (j > 0) {
        if (i > 0 && n->cand[i - 1] > n->always.ids[j - 1])
            n->cand[--k] = n->cand[--i];
        else
            n->cand[--k] = n->always.ids[--j];
    }
    n->ncand += n->always.n;
}

static void req_init(struct naive *n, struct req *q, const char *url, unsigned type,
                     const char *from)
{
    memset(q, 0, sizeof(*q));
    q->url = url;
    /* "host." is the same host as "host" (a fully qualified name): drop the dot, so that
     * `||host^` sees the separator after it. */
    size_t hs, he;
    char *h = naive_url_host(url, &hs, &he);
    if (h != NULL) {
        size_t e = hs + strcspn(url + hs, "/?#");
        const char *at = memrchr(url + hs, '@', e - hs);
        size_t b = at ? (size_t)(at - url) + 1 : hs;
        size_t c = b + strcspn(url + b, ":/?#");
        /* A browser's URL parser (WHATWG) lower-cases the scheme and the host before
         * any blocker sees the URL: so does this one ($match-case then applies to the
         * rest). User information keeps its case. */
        q->owned = naive_xstrndup(url, strlen(url));
        for (size_t i = 0; q->owned[i] != ':'; i++)
            q->owned[i] = (char)tolower((unsigned char)q->owned[i]);
        for (size_t i = b; i < e; i++)
            q->owned[i] = (char)tolower((unsigned char)q->owned[i]);
        if (url[b] != '[' && c > b + 1 && url[c - 1] == '.')
            memmove(q->owned + c - 1, q->owned + c, strlen(q->owned + c) + 1);
        q->url = q->owned;
        free(h);
    }
    url = q->url;
    q->len = strlen(url);
    q->lurl = naive_xstrndup(url, q->len);
    for (char *c = q->lurl; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    q->host = naive_url_host(url, &q->host_start, &q->host_end);
    q->has_host = q->host != NULL;
    if (q->host == NULL)
        q->host = naive_xstrndup("", 0);
    q->reg = naive_site(n->psl, q->host);
    q->type = type;
    if (from != NULL && from[0] != '\0') {
        q->from_host = naive_url_host(from, NULL, NULL);
        if (q->from_host == NULL) { /* a bare host name as the page */
            char *u = naive_xrealloc(NULL, strlen(from) + 8);
            snprintf(u, strlen(from) + 8, "http://%s", from);
            q->from_host = naive_url_host(u, NULL, NULL);
            free(u);
        }
        if (q->from_host == NULL)
            q->from_host = naive_xstrndup("", 0);
        q->from_reg = naive_site(n->psl, q->from_host);
    }
}

static void req_free(struct req *q)
{
    free(q->owned);
    free(q->lurl);
    free(q->host);
    free(q->from_host);
}

/* The decision, as the syntax documents give it: an $important block wins; else a block
 * stands unless an exception matches the request, or a $document exception matches the
 * page it comes from. Among several rules, the first in list order is named. */
int naive_match(struct naive *n, const char *url, const char *type, const char *from,
                struct naive_verdict *v, char *err, size_t errlen)
{
    v->block = 0;
    v->rule = v->exception = NULL;
    if (!n->finished && naive_finish(n, err, errlen) < 0)
        return -1;
    char tname[32];
    size_t tl = type ? strlen(type) : 0;
    if (tl >= sizeof(tname)) {
        snprintf(err, errlen, "unknown type '%.40s'", type);
        return -1;
    }
    for (size_t i = 0; i < tl; i++)
        tname[i] = (char)tolower((unsigned char)type[i]);
    tname[tl] = '\0';
    unsigned tbits = lookup_bits(request_types, tname);
    if (tbits == 0) {
        snprintf(err, errlen, "unknown type '%s'", tname);
        return -1;
    }
    /* Network requests only: http, https and their WebSocket forms. */
    static const char *const schemes[] = {"http://", "https://", "ws://", "wss://", NULL};
    int network = 0;
    for (const char *const *s = schemes; *s != NULL; s++)
        network |= strncasecmp(url, *s, strlen(*s)) == 0;
    if (!network)
        return 0;
    if (strncasecmp(url, "ws", 2) == 0) /* a WebSocket URL is a WebSocket request */
        tbits = T_WEBSOCKET;
    struct req q;
    req_init(n, &q, url, tbits, from);
    candidates(n, &q);
    const struct rule *important = NULL, *block = NULL, *exc = NULL, *imp_exc = NULL;
    for (size_t i = 0; i < n->ncand; i++) {
        const struct rule *r = &n->rules[n->cand[i]];
        if ((r->exception ? (r->important ? imp_exc : exc) : (r->important ? important : block)) !=
            NULL)
            continue;
        if (!pattern_match(n, r, &q) || !options_match(n, r, &q))
            continue;
        if (r->exception && r->important)
            imp_exc = r;
        else if (r->exception)
            exc = r;
        else if (r->important)
            important = r;
        else
            block = r;
    }
    if (important != NULL) {
        v->rule = important->raw;
        v->block = imp_exc == NULL;
        v->exception = imp_exc ? imp_exc->raw : NULL;
    } else if (block != NULL) {
        v->rule = block->raw;
        if (exc == NULL)
            exc = imp_exc;
        if (exc == NULL && q.from_host != NULL) {
            /* The page: a document request with no initiator. */
            struct req page;
            req_init(n, &page, from, T_DOC, NULL);
            candidates(n, &page);
            for (size_t i = 0; i < n->ncand && exc == NULL; i++) {
                const struct rule *r = &n->rules[n->cand[i]];
                if (r->doc_exception && pattern_match(n, r, &page) && options_match(n, r, &page))
                    exc = r;
            }
            req_free(&page);
        }
        v->block = exc == NULL;
        v->exception = exc ? exc->raw : NULL;
    }
    req_free(&q);
    return 0;
}
