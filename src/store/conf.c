/* The configuration parser. Every directive is one row of conf_directives[] (name,
 * scope, type, field, default, bounds, flags) and everything else -- defaults,
 * value parsing, duplicate detection, the reload check (conf_file.c) -- is
 * generic over that table, so a new directive is a new field and a new row.
 * Addresses are parsed by addr.c. The grammar and the wording of every message
 * are pinned by tests/unit/check_conf.c. */
#include "config.h"

#include "store/conf.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloom/filter.h"
#include "store/conf_table.h"

_Static_assert((int)CONF_LAYOUT_BLOCKED == (int)FILTER_BLOCKED, "conf and filter conf_layouts differ");
_Static_assert((int)CONF_LAYOUT_CLASSIC == (int)FILTER_CLASSIC, "conf and filter conf_layouts differ");

_Static_assert((int)CONF_KEYS_EXACT == (int)FILTER_KEYS_EXACT + 1 &&
                   (int)CONF_KEYS_HOST == (int)FILTER_KEYS_HOST + 1 &&
                   (int)CONF_KEYS_URL == (int)FILTER_KEYS_URL + 1,
               "conf_keys is not filter_keys + 1");

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)

/* The tables below read best one row a line, in columns (the enum words are
 * in conf_file.c, beside the functions that name them). */
/* clang-format off */
#define STRUCT_GLOBAL struct conf
#define STRUCT_FILTER struct conf_filter
#define AT(sc, f) \
    .scope = SCOPE_##sc, .offset = offsetof(STRUCT_##sc, f), .size = sizeof(((STRUCT_##sc *)0)->f)

#define INT(n, sc, f, d, lo, hi, fl) \
    {.name = n, AT(sc, f), .type = T_INT, .def = d, .min = lo, .max = hi, .flags = fl}
#define SIZE(n, sc, f, d, lo, hi, fl) \
    {.name = n, AT(sc, f), .type = T_SIZE, .def = d, .min = lo, .max = hi, .flags = fl}
#define DOUBLE(n, sc, f, d, lo, hi, fl) \
    {.name = n, AT(sc, f), .type = T_DOUBLE, .def = d, .dmin = lo, .dmax = hi, .flags = fl}
#define STRING(n, sc, f, lo, hi, fl) \
    {.name = n, AT(sc, f), .type = T_STRING, .min = lo, .max = hi, .flags = fl}
#define PATH(n, sc, f, fl) \
    {.name = n, AT(sc, f), .type = T_PATH, .flags = fl}
#define PATH_OFF(n, sc, f, off, fl) \
    {.name = n, AT(sc, f), .type = T_PATH, .off_offset = offsetof(STRUCT_##sc, off), \
     .flags = (fl) | F_OFF}
#define ENUM(n, sc, f, names, d, fl) \
    {.name = n, AT(sc, f), .type = T_ENUM, .enums = names, .def = d, .flags = fl}
#define ADDRS(n, f, count, d, fl) \
    {.name = n, AT(GLOBAL, f), .type = T_ADDRS, .count_offset = offsetof(struct conf, count), \
     .def = d, .flags = (fl) | F_REPEAT}
#define ADDRS_OFF(n, f, count, off, d, fl) \
    {.name = n, AT(GLOBAL, f), .type = T_ADDRS, .count_offset = offsetof(struct conf, count), \
     .off_offset = offsetof(struct conf, off), .def = d, .flags = (fl) | F_REPEAT | F_OFF}

/* Every directive the file may hold. A list's default ("127.0.0.1:7878") applies
 * only when the file gives none; every other default is set before parsing.
 * Not F_RELOAD: what is bound, forked or dropped once at start-up, and
 * max_items, which sizes each worker's per-request buffers once. */
const struct directive conf_directives[] = {
    /*     name                scope   field             default  min      max        flags */
    ADDRS("listen",                    listen, n_listen, "127.0.0.1:7878",                0),
    ADDRS_OFF("http_listen",           http_listen, n_http_listen, http_off,
                                                         "127.0.0.1:7879",                0),
    INT(   "threads",          GLOBAL, threads,          "0",     0,       1024,      0),
    STRING("user",             GLOBAL, user,                      1,       256,       0),
    PATH(  "pidfile",          GLOBAL, pidfile,                                       0),
    STRING("admin_token",      GLOBAL, admin_token,               1,       256,       F_RELOAD),
    ENUM(  "log_level",        GLOBAL, log_level,        conf_log_levels, "info",          F_RELOAD),
    SIZE(  "max_line",         GLOBAL, max_line,         "64K",   1 * KIB, 64 * MIB,  F_RELOAD),
    SIZE(  "max_item",         GLOBAL, max_item,         "8K",    1,       1 * MIB,   F_RELOAD),
    INT(   "max_items",        GLOBAL, max_items,        "10000", 1,       1000000,   0),
    INT(   "max_connections",  GLOBAL, max_connections,  "10000", 1,       1000000,   F_RELOAD),
    INT(   "idle_timeout",     GLOBAL, idle_timeout,     "300",   0,       86400,     F_RELOAD),
    SIZE(  "max_output",       GLOBAL, max_output,       "4M",    64 * KIB, 1 * GIB,  F_RELOAD),
    INT(   "shutdown_timeout", GLOBAL, shutdown_timeout, "5",     0,       3600,      F_RELOAD),
    SIZE(  "http_max_body",    GLOBAL, http_max_body,    "8M",    1 * KIB, 1 * GIB,   F_RELOAD),
    SIZE(  "http_max_headers", GLOBAL, http_max_headers, "64K",   1 * KIB, 16 * MIB,  F_RELOAD),

    PATH(  "file",             FILTER, file,                                          F_RELOAD),
    SIZE(  "capacity",         FILTER, capacity,         NULL,    1, FILTER_MAX_CAPACITY, F_RELOAD),
    DOUBLE("fpr",              FILTER, fpr,              "0.0001", FILTER_MIN_FPR, 0.5, F_RELOAD),
    ENUM(  "layout",           FILTER, layout,           conf_layouts, "blocked",          F_RELOAD),
    ENUM(  "keys",             FILTER, keys,             conf_key_kinds,   NULL,               F_RELOAD),
    PATH_OFF("journal",        FILTER, journal, journal_off,                          F_RELOAD),
    ENUM(  "fsync",            FILTER, fsync,            conf_fsyncs,  "everysec",         F_RELOAD),
    PATH(  "allow",            FILTER, allow,                                         F_RELOAD),
};
/* clang-format on */

#define N_DIRECTIVES (sizeof(conf_directives) / sizeof(conf_directives[0]))
const size_t conf_n_directives = N_DIRECTIVES;
#define MAX_TOKENS 4 /* the longest line is `filter NAME {`; one more to detect extras */
#define SHOW 64      /* at most this much of a bad value is echoed in a message */

struct parser {
    struct conf *conf;
    const char *label;           /* the path as messages show it */
    unsigned line;               /* current line, from 1; 0 while applying defaults */
    unsigned seen[N_DIRECTIVES]; /* line where each directive was first given; the
                                  * filter-scope ones are reset when a block opens */
    bool in_block;               /* inside `filter NAME {`: the last of conf->filters */
    size_t cap_filters;          /* allocated length of conf->filters */
    char *err;
    size_t errlen;
};

struct token {
    const char *s; /* NUL-terminated, in the scratch buffer */
    bool quoted;   /* a quoted "{" or "}" is a value, not a brace */
};

/* Every error goes through here so that each one has the same "PATH:LINE: "
 * prefix. Returns -1 so that callers can `return fail(...)`. */
__attribute__((format(printf, 3, 4))) static int fail(struct parser *p, unsigned line,
                                                      const char *fmt, ...)
{
    if (p->err == NULL || p->errlen == 0)
        return -1;
    int n = snprintf(p->err, p->errlen, "%s:%u: ", p->label, line);
    if (n >= 0 && (size_t)n < p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *errno_text(int e, char *buf, size_t len)
{
    /* The GNU strerror_r (we build with _GNU_SOURCE) returns the message, which
     * may or may not be in buf; unlike strerror it is safe from any thread. */
    return strerror_r(e, buf, len);
}

static const struct directive *find_directive(const char *name)
{
    for (size_t i = 0; i < N_DIRECTIVES; i++)
        if (strcmp(conf_directives[i].name, name) == 0)
            return &conf_directives[i];
    return NULL;
}

/* Integer fields are unsigned, size_t, uint64_t or an enum; the table records
 * each one's width and the value is stored through memcpy at that width, so one
 * code path fills all of them without pointer punning. */
static void store_uint(void *field, size_t size, uint64_t v)
{
    if (size == sizeof(uint32_t)) {
        assert(v <= UINT32_MAX);
        uint32_t x = (uint32_t)v;
        memcpy(field, &x, sizeof(x));
    } else {
        assert(size == sizeof(uint64_t));
        memcpy(field, &v, sizeof(v));
    }
}

/* Bounds of a size read best the way one would write them: 65536 as 64K. */
static const char *fmt_bound(const struct directive *d, uint64_t v, char *buf, size_t len)
{
    static const struct {
        uint64_t unit;
        char suffix;
    } units[] = {{GIB, 'G'}, {MIB, 'M'}, {KIB, 'K'}};
    if (d->type == T_SIZE && v != 0)
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (v % units[i].unit == 0) {
                snprintf(buf, len, "%llu%c", (unsigned long long)(v / units[i].unit),
                         units[i].suffix);
                return buf;
            }
    snprintf(buf, len, "%llu", (unsigned long long)v);
    return buf;
}

static uint64_t size_suffix(const char *s)
{
    static const struct {
        const char *s;
        uint64_t mult;
    } suffixes[] = {{"k", KIB},   {"K", KIB}, {"KiB", KIB}, {"m", MIB},  {"M", MIB},
                    {"MiB", MIB}, {"g", GIB}, {"G", GIB},   {"GiB", GIB}};
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (strcmp(s, suffixes[i].s) == 0)
            return suffixes[i].mult;
    return 0;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Unsigned decimal, digits only: strtoull would take "-1" as 2^64-1, " 5",
 * "+5" and "0x10", none of which belongs in a config file. Overflow is tracked
 * rather than wrapped so that it is reported as such, with the bounds. */
static int parse_uint(struct parser *p, const struct directive *d, const char *val, uint64_t *out)
{
    char lo[32], hi[32];
    fmt_bound(d, d->min, lo, sizeof(lo));
    fmt_bound(d, d->max, hi, sizeof(hi));
    if (val[0] == '-' && is_digit(val[1]))
        return fail(p, p->line, "%s: %.*s is negative (%s to %s)", d->name, SHOW, val, lo, hi);
    if (!is_digit(val[0]))
        return fail(p, p->line, "%s: \"%.*s\" is not a number", d->name, SHOW, val);

    uint64_t v = 0;
    bool overflow = false;
    const char *s = val;
    for (; is_digit(*s); s++) {
        unsigned digit = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - digit) / 10)
            overflow = true;
        else
            v = v * 10 + digit;
    }
    if (*s != '\0') {
        if (d->type != T_SIZE)
            return fail(p, p->line, "%s: \"%.*s\" has junk after the number", d->name, SHOW, val);
        uint64_t mult = size_suffix(s);
        if (mult == 0)
            return fail(p, p->line,
                        "%s: \"%.*s\" has an unknown size suffix (use K, KiB, M, MiB, G or GiB)",
                        d->name, SHOW, val);
        if (v > UINT64_MAX / mult)
            overflow = true;
        else
            v *= mult;
    }
    if (overflow)
        return fail(p, p->line, "%s: %.*s is too large (%s to %s)", d->name, SHOW, val, lo, hi);
    if (v < d->min || v > d->max)
        return fail(p, p->line, "%s: %.*s is out of range (%s to %s)", d->name, SHOW, val, lo, hi);
    *out = v;
    return 0;
}

/* strtod also takes "nan", "inf" and hex floats, and "nan" would pass any range
 * check written as lo <= v <= hi the wrong way round; admit only the characters
 * of plain decimal notation. The daemon never calls setlocale, so '.' it is. */
static int parse_double(struct parser *p, const struct directive *d, const char *val, double *out)
{
    bool ok = val[0] != '\0';
    for (const char *s = val; *s && ok; s++)
        ok = strchr("0123456789.eE+-", *s) != NULL;
    char *end = NULL;
    errno = 0;
    double v = ok ? strtod(val, &end) : 0;
    if (!ok || end == val || *end != '\0')
        return fail(p, p->line, "%s: \"%.*s\" is not a number", d->name, SHOW, val);
    if (errno == ERANGE || !(v >= d->dmin && v <= d->dmax))
        return fail(p, p->line, "%s: %.*s is out of range (%g to %g)", d->name, SHOW, val, d->dmin,
                    d->dmax);
    *out = v;
    return 0;
}

static int parse_enum(struct parser *p, const struct directive *d, const char *val, int *out)
{
    char names[128] = "";
    for (const struct conf_enum *e = d->enums; e->name; e++) {
        if (strcmp(val, e->name) == 0) {
            *out = e->value;
            return 0;
        }
        size_t used = strlen(names);
        snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "", e->name);
    }
    return fail(p, p->line, "%s: \"%.*s\" is not one of: %s", d->name, SHOW, val, names);
}

/* dir + "/" + rel, or rel itself when absolute. No normalisation and no
 * realpath(): the file need not exist yet, and a symlinked directory must keep
 * meaning what the operator wrote. */
static char *join_path(const char *dir, const char *rel)
{
    size_t dl = strlen(dir), rl = strlen(rel);
    if (rel[0] == '/')
        return strdup(rel);
    bool slash = dl > 0 && dir[dl - 1] == '/';
    char *s = malloc(dl + rl + 2);
    if (s == NULL)
        return NULL;
    memcpy(s, dir, dl);
    if (!slash)
        s[dl++] = '/';
    memcpy(s + dl, rel, rl + 1);
    return s;
}

static char *concat(const char *a, const char *b)
{
    size_t al = strlen(a), bl = strlen(b);
    char *s = malloc(al + bl + 1);
    if (s != NULL) {
        memcpy(s, a, al);
        memcpy(s + al, b, bl + 1);
    }
    return s;
}

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Append one address to a listener list. The same address twice, in one list
 * or across listen and http_listen, would fail at bind() -- or, with
 * SO_REUSEPORT, silently split traffic between two protocols -- so it is an
 * error here, with both lines. Port 0 is exempt: each bind gets its own port. */
static int add_addr(struct parser *p, const struct directive *d, const char *val, unsigned line)
{
    struct conf *c = p->conf;
    char msg[256];
    struct conf_addr a;
    if (addr_parse(val, &a, msg, sizeof(msg)) < 0)
        return fail(p, line, "%s: %s", d->name, msg);
    a.line = line;

    for (size_t i = 0; i < N_DIRECTIVES; i++) {
        const struct directive *o = &conf_directives[i];
        if (o->type != T_ADDRS || addr_port(&a) == 0)
            continue;
        const struct conf_addr *list = *(struct conf_addr **)((char *)c + o->offset);
        size_t n = *(size_t *)((char *)c + o->count_offset);
        for (size_t j = 0; j < n; j++) {
            if (!addr_equal(&list[j], &a))
                continue;
            if (line == 0) /* a default list meets an address the file gave */
                return fail(p, list[j].line, "%s: %s is also the default of %s (set %s explicitly)",
                            o->name, a.text, d->name, d->name);
            return fail(p, line, "%s: %s is already a listener (%s on line %u)", d->name, a.text,
                        o->name, list[j].line);
        }
    }

    struct conf_addr **list = (struct conf_addr **)((char *)c + d->offset);
    size_t *n = (size_t *)((char *)c + d->count_offset);
    struct conf_addr *grown = realloc(*list, (*n + 1) * sizeof(**list));
    if (grown == NULL)
        return fail(p, line, "out of memory");
    grown[(*n)++] = a;
    *list = grown;
    return 0;
}

/* "off" for a list (http_listen) means no listeners and may not be mixed with
 * addresses in either order; for a path (journal) it means NULL. */
static int set_off(struct parser *p, const struct directive *d, void *base)
{
    bool *off = (bool *)((char *)base + d->off_offset);
    size_t idx = (size_t)(d - conf_directives);
    if (d->type == T_ADDRS) {
        if (*off || *(size_t *)((char *)base + d->count_offset) > 0)
            return fail(p, p->line, "%s: off cannot be combined with other %s lines (line %u)",
                        d->name, d->name, p->seen[idx]);
    } else {
        char **field = (char **)((char *)base + d->offset);
        free(*field);
        *field = NULL;
    }
    *off = true;
    return 0;
}

/* Parse val as directive d into the struct at base. Also used for the defaults
 * (at line 0), so a default that its own bounds reject fails every test. */
static int set_value(struct parser *p, const struct directive *d, void *base, const char *val)
{
    char *field = (char *)base + d->offset;
    if ((d->flags & F_OFF) && strcmp(val, "off") == 0)
        return set_off(p, d, base);

    switch (d->type) {
    case T_INT:
    case T_SIZE: {
        uint64_t v = 0;
        if (parse_uint(p, d, val, &v) < 0)
            return -1;
        store_uint(field, d->size, v);
        return 0;
    }
    case T_DOUBLE: {
        double v = 0;
        if (parse_double(p, d, val, &v) < 0)
            return -1;
        memcpy(field, &v, sizeof(v));
        return 0;
    }
    case T_ENUM: {
        int v = 0;
        if (parse_enum(p, d, val, &v) < 0)
            return -1;
        store_uint(field, d->size, (uint64_t)v);
        return 0;
    }
    case T_STRING: {
        /* Never echo the value: admin_token is a secret and ends up in logs. */
        size_t len = strlen(val);
        if (len < d->min || len > d->max)
            return fail(p, p->line, "%s: a value of %zu bytes is out of range (%llu to %llu bytes)",
                        d->name, len, (unsigned long long)d->min, (unsigned long long)d->max);
        char *s = strdup(val);
        if (s == NULL)
            return fail(p, p->line, "out of memory");
        free(*(char **)field);
        *(char **)field = s;
        return 0;
    }
    case T_PATH: {
        if (val[0] == '\0')
            return fail(p, p->line, "%s: empty path", d->name);
        char *s = join_path(p->conf->dir, val);
        if (s == NULL)
            return fail(p, p->line, "out of memory");
        if (strlen(s) >= PATH_MAX) {
            free(s);
            return fail(p, p->line, "%s: path longer than %d bytes", d->name, PATH_MAX - 1);
        }
        free(*(char **)field);
        *(char **)field = s;
        if (d->flags & F_OFF)
            *(bool *)((char *)base + d->off_offset) = false;
        return 0;
    }
    case T_ADDRS:
        if ((d->flags & F_OFF) && *(bool *)((char *)base + d->off_offset))
            return fail(p, p->line, "%s: an address cannot follow \"%s off\" (line %u)", d->name,
                        d->name, p->seen[d - conf_directives]);
        return add_addr(p, d, val, p->line);
    }
    assert(!"unknown directive type");
    return -1;
}

static int apply_defaults(struct parser *p, enum conf_scope scope, void *base)
{
    for (size_t i = 0; i < N_DIRECTIVES; i++) {
        const struct directive *d = &conf_directives[i];
        if (d->scope == scope && d->def != NULL && d->type != T_ADDRS &&
            set_value(p, d, base, d->def) < 0)
            return -1;
    }
    return 0;
}

/* Split one line (newline and CR already removed) into words. Quoted words take
 * \" and \\ and nothing else, so that a stray backslash in a Windows path or a
 * "\n" expected to become a newline is an error rather than a surprise. Words
 * are copied, unescaped and NUL-terminated into scratch, which needs len + 1
 * bytes: each word but the last is followed by a separator its NUL can take the
 * place of, and quotes are never copied. Returns the number of words (tok holds
 * the first MAX_TOKENS), or -1. */
static int tokenize(struct parser *p, const char *line, size_t len, char *scratch,
                    struct token *tok)
{
    size_t i = 0;
    int n = 0;
    char *out = scratch;
    while (i < len) {
        char c = line[i];
        if (c == ' ' || c == '\t') {
            i++;
            continue;
        }
        if (c == '#')
            break;
        char *start = out;
        bool quoted = c == '"';
        if (quoted) {
            for (i++;;) {
                if (i == len)
                    return fail(p, p->line, "unterminated quoted string");
                c = line[i++];
                if (c == '"')
                    break;
                if (c == '\\') {
                    if (i == len)
                        return fail(p, p->line, "unterminated quoted string");
                    c = line[i++];
                    if (c != '"' && c != '\\')
                        return fail(p, p->line,
                                    "unknown escape \"\\%c\" in quoted string (only \\\" and \\\\)",
                                    c);
                }
                *out++ = c;
            }
            if (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '#')
                return fail(p, p->line, "unexpected text after a closing quote");
        } else {
            for (; i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '#'; i++) {
                if (line[i] == '"')
                    return fail(p, p->line, "unexpected quote inside a word (quote all of it)");
                *out++ = line[i];
            }
        }
        *out++ = '\0';
        if (n < MAX_TOKENS)
            tok[n] = (struct token){start, quoted};
        n++;
    }
    return n;
}

static bool is_word(const struct token *t, const char *word)
{
    return !t->quoted && strcmp(t->s, word) == 0;
}

static struct conf_filter *open_filter(struct parser *p)
{
    assert(p->in_block && p->conf->n_filters > 0);
    return &p->conf->filters[p->conf->n_filters - 1];
}

static unsigned seen_line(const struct parser *p, const char *name)
{
    const struct directive *d = find_directive(name);
    assert(d != NULL);
    return p->seen[d - conf_directives];
}

static int open_block(struct parser *p, const struct token *tok, int n)
{
    struct conf *c = p->conf;
    if (p->in_block)
        return fail(p, p->line, "filter blocks cannot be nested (\"%s\" from line %u is open)",
                    open_filter(p)->name, open_filter(p)->line);
    if (n == 1)
        return fail(p, p->line, "filter: missing name (expected: filter NAME {)");
    if (n == 2 || !is_word(&tok[2], "{"))
        return fail(p, p->line, "filter: expected \"{\" after the name, on the same line");
    if (n > 3)
        return fail(p, p->line, "filter: unexpected text after \"{\"");

    const char *name = tok[1].s;
    if (!conf_is_valid_name(name, strlen(name)))
        return fail(p, p->line,
                    "filter name \"%.*s\" is invalid (1 to %d of A-Z, a-z, 0-9, _, ., -)", SHOW,
                    name, CONF_NAME_MAX);
    /* Quadratic, like the other uniqueness checks, but over a file of an operator's
     * filters, which number in the tens. */
    for (size_t i = 0; i < c->n_filters; i++)
        if (strcmp(c->filters[i].name, name) == 0)
            return fail(p, p->line, "filter \"%s\" is already defined on line %u", name,
                        c->filters[i].line);

    if (c->n_filters == p->cap_filters) {
        size_t cap = p->cap_filters ? p->cap_filters * 2 : 4;
        struct conf_filter *grown = realloc(c->filters, cap * sizeof(*grown));
        if (grown == NULL)
            return fail(p, p->line, "out of memory");
        c->filters = grown;
        p->cap_filters = cap;
    }
    struct conf_filter *f = &c->filters[c->n_filters];
    memset(f, 0, sizeof(*f));
    f->name = strdup(name);
    if (f->name == NULL)
        return fail(p, p->line, "out of memory");
    f->line = p->line;
    c->n_filters++;
    p->in_block = true;
    for (size_t i = 0; i < N_DIRECTIVES; i++)
        if (conf_directives[i].scope == SCOPE_FILTER)
            p->seen[i] = 0;
    return apply_defaults(p, SCOPE_FILTER, f);
}

/* A block is complete: check what needs the whole block and fill in the
 * journal's default. Two filters journaling into one file, or a journal written
 * over a filter file, would corrupt both; nothing later could tell, so stop it
 * here. */
static int close_block(struct parser *p)
{
    struct conf *c = p->conf;
    struct conf_filter *f = open_filter(p);
    p->in_block = false;
    if (f->file == NULL && f->capacity == 0)
        return fail(p, f->line, "filter \"%s\" needs \"file\" (prebuilt) or \"capacity\" (empty)",
                    f->name);

    if (!f->journal_off && f->journal == NULL) {
        if (f->file != NULL) {
            f->journal = concat(f->file, ".journal");
        } else {
            char *base = concat(f->name, ".journal");
            f->journal = base ? join_path(c->dir, base) : NULL;
            free(base);
        }
        if (f->journal == NULL)
            return fail(p, f->line, "out of memory");
        if (strlen(f->journal) >= PATH_MAX)
            return fail(p, f->line, "filter \"%s\": journal path longer than %d bytes", f->name,
                        PATH_MAX - 1);
    }

    unsigned jline = seen_line(p, "journal") ? seen_line(p, "journal") : f->line;
    if (f->journal != NULL && str_eq(f->journal, f->file))
        return fail(p, jline, "filter \"%s\": journal and file are the same path", f->name);
    for (size_t i = 0; i + 1 < c->n_filters; i++) {
        const struct conf_filter *g = &c->filters[i];
        if (f->journal != NULL && (str_eq(f->journal, g->journal) || str_eq(f->journal, g->file)))
            return fail(p, jline,
                        "filter \"%s\": journal %s is also used by filter \"%s\" (line %u)",
                        f->name, f->journal, g->name, g->line);
        if (f->file != NULL && str_eq(f->file, g->journal))
            return fail(p, seen_line(p, "file"),
                        "filter \"%s\": file %s is the journal of filter \"%s\" (line %u)", f->name,
                        f->file, g->name, g->line);
    }
    return 0;
}

static int parse_line(struct parser *p, const struct token *tok, int n)
{
    if (is_word(&tok[0], "}")) {
        if (n > 1)
            return fail(p, p->line, "unexpected text after \"}\"");
        if (!p->in_block)
            return fail(p, p->line, "\"}\" without an open filter block");
        return close_block(p);
    }
    if (is_word(&tok[0], "{"))
        return fail(p, p->line, "\"{\" must end the `filter NAME {` line");
    if (is_word(&tok[0], "filter"))
        return open_block(p, tok, n);

    const struct directive *d = find_directive(tok[0].s);
    if (d == NULL)
        return fail(p, p->line, "unknown directive \"%.*s\"", SHOW, tok[0].s);
    if (d->scope == SCOPE_FILTER && !p->in_block)
        return fail(p, p->line, "%s: only allowed inside a filter block", d->name);
    if (d->scope == SCOPE_GLOBAL && p->in_block)
        return fail(p, p->line, "%s: not allowed inside a filter block", d->name);
    if (n == 1)
        return fail(p, p->line, "%s: missing value", d->name);
    if (n > 2)
        return fail(p, p->line, "%s: too many values (quote a value that contains spaces)",
                    d->name);

    size_t idx = (size_t)(d - conf_directives);
    if (p->seen[idx] && !(d->flags & F_REPEAT))
        return fail(p, p->line, "%s: already set on line %u", d->name, p->seen[idx]);
    void *base = d->scope == SCOPE_GLOBAL ? (void *)p->conf : (void *)open_filter(p);
    if (set_value(p, d, base, tok[1].s) < 0)
        return -1;
    if (!p->seen[idx])
        p->seen[idx] = p->line;
    return 0;
}

static int parse_text(struct parser *p, const char *text, size_t len)
{
    char *scratch = malloc(len + 1);
    if (scratch == NULL)
        return fail(p, 0, "out of memory");
    int rc = 0;
    size_t pos = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        pos = 3; /* a UTF-8 byte-order mark, as some Windows editors write */
    while (pos < len && rc == 0) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        pos += n + (nl != NULL);
        p->line++;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        for (size_t i = 0; i < n && rc == 0; i++) {
            unsigned char ch = (unsigned char)line[i];
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                rc = fail(p, p->line, "control character 0x%02x", ch);
        }
        struct token tok[MAX_TOKENS];
        int ntok = rc == 0 ? tokenize(p, line, n, scratch, tok) : -1;
        if (ntok < 0)
            rc = -1;
        else if (ntok > 0)
            rc = parse_line(p, tok, ntok);
    }
    free(scratch);
    if (rc == 0 && p->in_block)
        rc = fail(p, open_filter(p)->line, "filter \"%s\" is not closed (missing \"}\")",
                  open_filter(p)->name);
    return rc;
}

/* Checks that need the whole file, and the defaults of the lists. */
static int finish(struct parser *p)
{
    struct conf *c = p->conf;
    for (size_t i = 0; i < N_DIRECTIVES; i++) {
        const struct directive *d = &conf_directives[i];
        if (d->type != T_ADDRS || *(size_t *)((char *)c + d->count_offset) > 0)
            continue;
        if ((d->flags & F_OFF) && *(bool *)((char *)c + d->off_offset))
            continue;
        if (add_addr(p, d, d->def, 0) < 0)
            return -1;
    }

    if (c->max_item >= c->max_line) {
        const struct directive *item = find_directive("max_item");
        const struct directive *line = find_directive("max_line");
        char a[32], b[32];
        unsigned at =
            seen_line(p, "max_item") ? seen_line(p, "max_item") : seen_line(p, "max_line");
        return fail(p, at, "max_item (%s) must be smaller than max_line (%s)",
                    fmt_bound(item, c->max_item, a, sizeof(a)),
                    fmt_bound(line, c->max_line, b, sizeof(b)));
    }
    return 0;
}

/* The absolute directory of the config file: relative paths in the file are
 * meant relative to it, and the daemon may chdir("/") before it opens them. */
static char *conf_dir(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (slash == path && slash != NULL)
        return strdup("/");
    size_t len = slash ? (size_t)(slash - path) : 0;
    while (len > 1 && path[len - 1] == '/')
        len--;
    if (len > 0 && path[0] == '/')
        return strndup(path, len);

    char *cwd = getcwd(NULL, 0);
    if (cwd == NULL || len == 0)
        return cwd;
    char *rel = strndup(path, len);
    char *dir = rel ? join_path(cwd, rel) : NULL;
    free(rel);
    free(cwd);
    return dir;
}

/* The table's own invariants: a bound must fit the field it guards, or a value
 * from the file could reach store_uint's assert instead of a range error. */
__attribute__((unused)) static bool table_ok(void)
{
    for (size_t i = 0; i < N_DIRECTIVES; i++) {
        const struct directive *d = &conf_directives[i];
        bool wide = d->size == sizeof(uint64_t), narrow = d->size == sizeof(uint32_t);
        if ((d->type == T_INT || d->type == T_SIZE) && !(wide || (narrow && d->max <= UINT32_MAX)))
            return false;
        if (d->type == T_ENUM && !narrow)
            return false;
        if (find_directive(d->name) != d)
            return false;
    }
    return true;
}

struct conf *conf_parse(const char *text, size_t len, const char *path, char *err, size_t errlen)
{
    assert(table_ok());
    struct parser p = {.label = path ? path : "(config)", .err = err, .errlen = errlen};
    struct conf *c = calloc(1, sizeof(*c));
    p.conf = c;
    if (c == NULL || (path != NULL && (c->path = strdup(path)) == NULL)) {
        fail(&p, 0, "out of memory");
        conf_free(c);
        return NULL;
    }
    c->dir = conf_dir(path);
    if (c->dir == NULL) {
        char buf[128];
        fail(&p, 0, "cannot find the directory of the file: %s",
             errno_text(errno, buf, sizeof(buf)));
        conf_free(c);
        return NULL;
    }
    if (apply_defaults(&p, SCOPE_GLOBAL, c) < 0 || parse_text(&p, text, len) < 0 ||
        finish(&p) < 0) {
        conf_free(c);
        return NULL;
    }
    return c;
}
