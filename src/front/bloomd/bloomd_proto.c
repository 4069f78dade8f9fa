/* bloomd's text protocol, parsed as bloomd parses it (armon/bloomd,
 * src/bloomd/conn_handler.c) and its replies formatted byte for byte. The
 * rules below are bloomd's, quirks included, because its clients and its
 * own integration tests depend on them; where this parser departs from
 * bloomd the comment says so and docs/bloomd.md lists it. */
#include "config.h"

#include "front/bloomd/bloomd_proto.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define OPT_MAX 255 /* bytes of one create option; longer is Bad arguments */

struct bloomd_verb_row {
    const char *name, *alias;
    enum bloomd_args args;
};

#define BLOOMD_ROW_(sym, name, alias, args, ...) [BLOOMD_##sym] = {name, alias, args},
static const struct bloomd_verb_row rows[BLOOMD_VERB_COUNT_] = {BLOOMD_VERBS(BLOOMD_ROW_)};
#undef BLOOMD_ROW_

const char *bloomd_verb_name(enum bloomd_verb v)
{
    return (unsigned)v < BLOOMD_VERB_COUNT_ ? rows[v].name : "?";
}

__attribute__((format(printf, 2, 3))) static enum bloomd_status fail(struct bloomd_request *req,
                                                                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(req->errmsg, sizeof(req->errmsg), fmt, ap);
    va_end(ap);
    return BLOOMD_ERROR;
}

static bool word_is(const char *p, size_t n, const char *w)
{
    return w && strlen(w) == n && memcmp(p, w, n) == 0;
}

/* bloomd's VALID_FILTER_NAMES_PATTERN, ^[^ \t\n\r]{1,200}$, over bytes. A
 * NUL would end the C string bloomd matches; here it is refused. */
bool bloomd_valid_name(const char *p, size_t len)
{
    if (len == 0 || len > BLOOMD_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r' || p[i] == '\0')
            return false;
    return true;
}

/* The first space in p[0..n), or NULL: bloomd's buffer_after_terminator. */
static const char *space_in(const char *p, size_t n)
{
    return n ? memchr(p, ' ', n) : NULL;
}

/* multi and bulk: the keys after the filter, split on every single space as
 * bloomd's loop splits them: a field is taken while what is left of the line
 * is not empty, so a double space gives an empty key and a trailing space
 * gives none. More than max_keys is an error naming the count. */
static enum bloomd_status split_keys(struct bloomd_request *req, const char *p, size_t n,
                                     const struct bloomd_limits *lim, struct bloomd_token *keys)
{
    size_t count = 0;
    const char *end = p + n;
    while (p < end) {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        const char *fe = sp ? sp : end;
        if (count < lim->max_keys)
            keys[count] = (struct bloomd_token){p, (size_t)(fe - p)};
        count++;
        if (!sp)
            break;
        p = sp + 1;
    }
    if (count > lim->max_keys)
        return fail(req, "%zu keys, the limit is max_items %zu", count, lim->max_keys);
    req->keys = keys;
    req->n_keys = count;
    return BLOOMD_REQUEST;
}

/* One create option as bloomd reads it: the three sscanf patterns tried in
 * turn, each result or-ed into `match`, so an option matches when any
 * pattern converts a value or meets the end of the option before its first
 * conversion (sscanf's EOF: "in_memory", "cap" or "" pass as no-ops, which
 * bloomd's own test of `create foobar in_memory` relies on). sscanf itself
 * reads the copy, so the numbers are read exactly as bloomd reads them. */
static bool create_option(struct bloomd_create *o, const char *p, size_t n)
{
    char s[OPT_MAX + 1];
    if (n > OPT_MAX || memchr(p, '\0', n))
        return false;
    memcpy(s, p, n);
    s[n] = '\0';
    unsigned long long cap;
    double prob;
    int mem;
    int r1 = sscanf(s, "capacity=%llu", &cap);
    int r2 = sscanf(s, "prob=%lf", &prob);
    int r3 = sscanf(s, "in_memory=%d", &mem);
    if (r1 == 1) {
        o->capacity = cap;
        o->has_capacity = true;
    }
    if (r2 == 1) {
        o->prob = prob;
        o->has_prob = true;
    }
    if (r3 == 1) {
        o->in_memory = mem;
        o->has_in_memory = true;
    }
    return (r1 | r2 | r3) != 0;
}

/* create <name> [option...]: bloomd's order, the name first, then each
 * option, then the bounds of the result. bloomd answers Bad arguments twice
 * when an option does not match and an earlier one was out of bounds; one
 * request gets one reply here. NaN passes bloomd's bounds on prob; not
 * these. */
static enum bloomd_status parse_create(struct bloomd_request *req, const char *args, size_t n)
{
    struct bloomd_create *o = &req->create;
    *o = (struct bloomd_create){
        BLOOMD_DEFAULT_CAPACITY, BLOOMD_DEFAULT_PROB, 0, false, false, false};
    const char *sp = space_in(args, n);
    size_t name_len = sp ? (size_t)(sp - args) : n;
    if (!bloomd_valid_name(args, name_len))
        return fail(req, BLOOMD_MSG_BAD_FILTER_NAME);
    req->filter = (struct bloomd_token){args, name_len};
    req->has_filter = true;
    if (!sp)
        return BLOOMD_REQUEST;
    const char *p = sp + 1, *end = args + n;
    for (;;) { /* every field, the empty ones too: bloomd's while (param) */
        const char *s2 = memchr(p, ' ', (size_t)(end - p));
        const char *fe = s2 ? s2 : end;
        if (!create_option(o, p, (size_t)(fe - p)))
            return fail(req, BLOOMD_MSG_BAD_ARGS);
        if (!s2)
            break;
        p = s2 + 1;
    }
    if ((int64_t)o->capacity <= 10000 || !(o->prob > 0 && o->prob < 0.10) ||
        (o->in_memory != 0 && o->in_memory != 1))
        return fail(req, BLOOMD_MSG_BAD_ARGS);
    return BLOOMD_REQUEST;
}

/* The arguments of verb v, args NULL when the line had no space after the
 * verb (bloomd tells that apart from an empty rest: `drop` wants a name,
 * `drop ` names the empty filter, which does not exist). */
static enum bloomd_status parse_args(struct bloomd_request *req, enum bloomd_verb v,
                                     const char *args, size_t n, const struct bloomd_limits *lim,
                                     struct bloomd_token *keys)
{
    const char *sp;
    switch (rows[v].args) {
    case BLOOMD_ARGS_KEY:
    case BLOOMD_ARGS_KEYS:
        if (!args || !(sp = space_in(args, n)) || sp + 1 == args + n)
            return fail(req, BLOOMD_MSG_FILTER_KEY_NEEDED);
        req->filter = (struct bloomd_token){args, (size_t)(sp - args)};
        req->has_filter = true;
        if (rows[v].args == BLOOMD_ARGS_KEYS)
            return split_keys(req, sp + 1, (size_t)(args + n - sp - 1), lim, keys);
        if (lim->max_keys == 0)
            return fail(req, "1 keys, the limit is max_items 0");
        keys[0] = (struct bloomd_token){sp + 1, (size_t)(args + n - sp - 1)};
        req->keys = keys;
        req->n_keys = 1;
        return BLOOMD_REQUEST;
    case BLOOMD_ARGS_OPT:
        if (!args)
            return BLOOMD_REQUEST;
        /* flush <filter> is drop's shape */
        __attribute__((fallthrough));
    case BLOOMD_ARGS_FILTER:
        if (!args)
            return fail(req, BLOOMD_MSG_FILTER_NEEDED);
        if (space_in(args, n))
            return fail(req, BLOOMD_MSG_UNEXPECTED_ARGS);
        req->filter = (struct bloomd_token){args, n};
        req->has_filter = true;
        return BLOOMD_REQUEST;
    case BLOOMD_ARGS_PREFIX:
        if (args)
            req->arg = (struct bloomd_token){args, n};
        return BLOOMD_REQUEST;
    case BLOOMD_ARGS_CREATE:
        if (!args)
            return fail(req, BLOOMD_MSG_FILTER_NEEDED);
        return parse_create(req, args, n);
    case BLOOMD_ARGS_TOKEN:
        if (!args || n == 0)
            return fail(req, "Must provide a token");
        req->arg = (struct bloomd_token){args, n};
        return BLOOMD_REQUEST;
    }
    return fail(req, BLOOMD_MSG_NOT_SUPPORTED);
}

/* One line, its LF and one CR before it removed (bloomd removes one). */
static enum bloomd_status parse_line(struct bloomd_request *req, const char *line, size_t n,
                                     const struct bloomd_limits *lim, struct bloomd_token *keys)
{
    if (n && line[n - 1] == '\r')
        n--;
    const char *sp = space_in(line, n);
    size_t vlen = sp ? (size_t)(sp - line) : n;
    for (int v = 0; v < BLOOMD_VERB_COUNT_; v++) {
        if (!word_is(line, vlen, rows[v].name) && !word_is(line, vlen, rows[v].alias))
            continue;
        req->verb = (enum bloomd_verb)v;
        return parse_args(req, req->verb, sp ? sp + 1 : NULL, sp ? (size_t)(line + n - sp - 1) : 0,
                          lim, keys);
    }
    return fail(req, BLOOMD_MSG_NOT_SUPPORTED);
}

enum bloomd_status bloomd_next(const char *buf, size_t len, const struct bloomd_limits *lim,
                               struct bloomd_request *req, struct bloomd_token *keys_storage,
                               size_t *consumed, size_t *scanned)
{
    size_t from = scanned && *scanned <= len ? *scanned : 0;
    req->has_filter = false;
    req->filter = (struct bloomd_token){NULL, 0};
    req->arg = (struct bloomd_token){NULL, 0};
    req->keys = keys_storage;
    req->n_keys = 0;
    req->errmsg[0] = '\0';
    *consumed = 0;
    const char *lf = len > from ? memchr(buf + from, '\n', len - from) : NULL;
    size_t n = lf ? (size_t)(lf - buf) : len;
    if (n > lim->max_line) {
        snprintf(req->errmsg, sizeof(req->errmsg),
                 "Line too long: more than max_line %zu bytes before its LF", lim->max_line);
        if (scanned)
            *scanned = 0;
        return BLOOMD_FATAL;
    }
    if (!lf) {
        if (scanned)
            *scanned = len;
        return BLOOMD_NEED_MORE;
    }
    if (scanned)
        *scanned = 0;
    *consumed = n + 1;
    return parse_line(req, buf, n, lim, keys_storage);
}

/* ---- replies ---- */

size_t bloomd_format_bools(char *out, size_t cap, const bool *v, size_t n)
{
    size_t need = 0;
    for (size_t i = 0; i < n; i++)
        need += v[i] ? 4 : 3;
    if (n == 0)
        need = 1;
    if (need > cap)
        return need;
    char *o = out;
    for (size_t i = 0; i < n; i++) {
        if (v[i]) {
            memcpy(o, "Yes ", 4);
            o += 4;
        } else {
            memcpy(o, "No ", 3);
            o += 3;
        }
    }
    if (n == 0)
        *o++ = ' ';
    o[-1] = '\n';
    return need;
}

size_t bloomd_format_client_error(char *out, size_t cap, const char *msg)
{
    static const char head[] = "Client Error: ";
    size_t m = strlen(msg), need = sizeof(head) - 1 + m + 1;
    if (need > cap)
        return need;
    memcpy(out, head, sizeof(head) - 1);
    char *o = out + sizeof(head) - 1;
    for (size_t i = 0; i < m; i++) {
        unsigned char c = (unsigned char)msg[i];
        o[i] = c == '\n' || c == '\r' || c == '\t' ? ' ' : c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    o[m] = '\n';
    return need;
}

size_t bloomd_format_list_line(char *out, size_t cap, const char *name, size_t name_len,
                               double prob, uint64_t bytes, uint64_t capacity, uint64_t size)
{
    char tail[160];
    int t = snprintf(tail, sizeof(tail), " %f %llu %llu %llu\n", prob, (unsigned long long)bytes,
                     (unsigned long long)capacity, (unsigned long long)size);
    if (t < 0 || (size_t)t >= sizeof(tail)) /* a %f of a huge prob: cannot come from a filter */
        t = snprintf(tail, sizeof(tail), " 0.000000 %llu %llu %llu\n", (unsigned long long)bytes,
                     (unsigned long long)capacity, (unsigned long long)size);
    size_t need = name_len + (size_t)t;
    if (need > cap)
        return need;
    memcpy(out, name, name_len);
    memcpy(out + name_len, tail, (size_t)t);
    return need;
}

size_t bloomd_format_info(char *out, size_t cap, const struct bloomd_info *in)
{
    char buf[1024];
    double prob = isfinite(in->probability) && fabs(in->probability) < 1e9 ? in->probability : 0;
    int n = snprintf(
        buf, sizeof(buf),
        "START\ncapacity %llu\nchecks %llu\ncheck_hits %llu\ncheck_misses %llu\n"
        "in_memory %d\npage_ins %llu\npage_outs %llu\nprobability %f\nsets %llu\n"
        "set_hits %llu\nset_misses %llu\nsize %llu\nstorage %llu\nEND\n",
        (unsigned long long)in->capacity, (unsigned long long)(in->check_hits + in->check_misses),
        (unsigned long long)in->check_hits, (unsigned long long)in->check_misses, in->in_memory,
        (unsigned long long)in->page_ins, (unsigned long long)in->page_outs, prob,
        (unsigned long long)(in->set_hits + in->set_misses), (unsigned long long)in->set_hits,
        (unsigned long long)in->set_misses, (unsigned long long)in->size,
        (unsigned long long)in->storage);
    if (n < 0 || (size_t)n >= sizeof(buf) || (size_t)n > cap)
        return n < 0 ? 0 : (size_t)n;
    memcpy(out, buf, (size_t)n);
    return (size_t)n;
}
