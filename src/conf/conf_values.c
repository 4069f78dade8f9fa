/* conf_values: the config file's words and values, read for conf.c: a
 * line split into words, and the unsigned, double and enum values checked
 * against their directive's bounds. Pure; any thread. Each returns 0, or -1
 * with the reason (naming the directive, never the file and line, which the
 * caller prefixes) in emsg. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_table.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)
#define SHOW 64 /* at most this much of a bad value is echoed in a message */

__attribute__((format(printf, 3, 4))) static int bad(char *emsg, size_t elen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(emsg, elen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Bounds of a size read best the way one would write them: 65536 as 64K. */
const char *conf_fmt_bound(const struct directive *d, uint64_t v, char *buf, size_t len)
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
int conf_value_uint(const struct directive *d, const char *val, uint64_t *out, char *emsg,
                    size_t elen)
{
    char lo[32], hi[32];
    conf_fmt_bound(d, d->min, lo, sizeof(lo));
    conf_fmt_bound(d, d->max, hi, sizeof(hi));
    if (val[0] == '-' && is_digit(val[1]))
        return bad(emsg, elen, "%s: %.*s is negative (%s to %s)", d->name, SHOW, val, lo, hi);
    if (!is_digit(val[0]))
        return bad(emsg, elen, "%s: \"%.*s\" is not a number", d->name, SHOW, val);

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
            return bad(emsg, elen, "%s: \"%.*s\" has junk after the number", d->name, SHOW, val);
        uint64_t mult = size_suffix(s);
        if (mult == 0)
            return bad(emsg, elen,
                       "%s: \"%.*s\" has an unknown size suffix (use K, KiB, M, MiB, G or GiB)",
                       d->name, SHOW, val);
        if (v > UINT64_MAX / mult)
            overflow = true;
        else
            v *= mult;
    }
    if (overflow)
        return bad(emsg, elen, "%s: %.*s is too large (%s to %s)", d->name, SHOW, val, lo, hi);
    if (v < d->min || v > d->max)
        return bad(emsg, elen, "%s: %.*s is out of range (%s to %s)", d->name, SHOW, val, lo, hi);
    *out = v;
    return 0;
}

/* strtod also takes "nan", "inf" and hex floats, and "nan" would pass any range
 * check written as lo <= v <= hi the wrong way round; admit only the characters
 * of plain decimal notation. The daemon never calls setlocale, so '.' it is. */
int conf_value_double(const struct directive *d, const char *val, double *out, char *emsg,
                      size_t elen)
{
    bool ok = val[0] != '\0';
    for (const char *s = val; *s && ok; s++)
        ok = strchr("0123456789.eE+-", *s) != NULL;
    char *end = NULL;
    errno = 0;
    double v = ok ? strtod(val, &end) : 0;
    if (!ok || end == val || *end != '\0')
        return bad(emsg, elen, "%s: \"%.*s\" is not a number", d->name, SHOW, val);
    if (errno == ERANGE || !(v >= d->dmin && v <= d->dmax))
        return bad(emsg, elen, "%s: %.*s is out of range (%g to %g)", d->name, SHOW, val, d->dmin,
                   d->dmax);
    *out = v;
    return 0;
}

int conf_value_enum(const struct directive *d, const char *val, int *out, char *emsg, size_t elen)
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
    return bad(emsg, elen, "%s: \"%.*s\" is not one of: %s", d->name, SHOW, val, names);
}

/* Split one line (newline and CR already removed) into words. Quoted words take
 * \" and \\ and nothing else, so that a stray backslash in a Windows path or a
 * "\n" expected to become a newline is an error rather than a surprise. Words
 * are copied, unescaped and NUL-terminated into scratch, which needs len + 1
 * bytes: each word but the last is followed by a separator its NUL can take the
 * place of, and quotes are never copied. Returns the number of words (tok holds
 * the first MAX_TOKENS), or -1. */
int conf_tokenize(const char *line, size_t len, char *scratch, struct conf_token *tok, char *emsg,
                  size_t elen)
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
                    return bad(emsg, elen, "unterminated quoted string");
                c = line[i++];
                if (c == '"')
                    break;
                if (c == '\\') {
                    if (i == len)
                        return bad(emsg, elen, "unterminated quoted string");
                    c = line[i++];
                    if (c != '"' && c != '\\')
                        return bad(emsg, elen,
                                   "unknown escape \"\\%c\" in quoted string (only \\\" and \\\\)",
                                   c);
                }
                *out++ = c;
            }
            if (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '#')
                return bad(emsg, elen, "unexpected text after a closing quote");
        } else {
            for (; i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '#'; i++) {
                if (line[i] == '"')
                    return bad(emsg, elen, "unexpected quote inside a word (quote all of it)");
                *out++ = line[i];
            }
        }
        *out++ = '\0';
        if (n < CONF_MAX_TOKENS)
            tok[n] = (struct conf_token){start, quoted};
        n++;
    }
    return n;
}

/* `window`: whole units, at least a second, at most a year, cut into
 * slices of whole milliseconds; only for a filter filled at run time (a
 * built file has no add times, so nothing in it could expire). Also
 * `layout counting`: only for a filter filled at run time, never windowed. */
int conf_window_check(struct conf_filter *f, char *emsg, size_t elen)
{
    /* The counting layout too is for a filter that starts empty: a built
     * file has its own layout, and no build makes a counting one. */
    if (f->layout == CONF_LAYOUT_COUNTING && f->file)
        return bad(emsg, elen, "\"layout counting\" is for a filter filled at run time "
                               "(\"capacity\", no \"file\"): a built file has its own layout");
    if (!f->window)
        return 0;
    static const struct {
        const char *unit;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}, {"", 1000}};
    const char *s = f->window;
    uint64_t v = 0;
    size_t i = 0;
    while (is_digit(s[i]) && v < 1000000000000ull)
        v = v * 10 + (uint64_t)(s[i++] - '0');
    int64_t scale = 0;
    for (size_t u = 0; i > 0 && u < sizeof(units) / sizeof(units[0]) && !scale; u++)
        if (strcmp(s + i, units[u].unit) == 0)
            scale = units[u].ms;
    const int64_t year = 365 * 86400000ll;
    if (!scale || v > (uint64_t)(year / scale))
        return bad(emsg, elen, "window \"%.*s\": not a duration from 1s to 365d (a count and "
                               "a unit: ms, s, m, h, d)", SHOW, s);
    f->window_ms = (int64_t)v * scale;
    if (f->window_ms < 1000)
        return bad(emsg, elen, "window \"%s\": shorter than a second", s);
    if (f->window_ms % f->slices)
        return bad(emsg, elen, "window \"%s\" (%lld ms) is not a whole number of milliseconds "
                   "per slice with slices %u", s, (long long)f->window_ms, f->slices);
    if (f->file)
        return bad(emsg, elen, "\"window\" is for a filter filled at run time (\"capacity\"); "
                               "a built \"file\" cannot expire its items");
    /* A windowed filter's items leave with their slice; a counting one's by
     * REMOVE: the two do not combine (a removal would have to find the
     * slices an item's adds went to). */
    if (f->layout == CONF_LAYOUT_COUNTING)
        return bad(emsg, elen, "\"window\" and \"layout counting\" do not combine: a windowed "
                               "filter's items expire, a counting filter's are removed");
    return 0;
}
