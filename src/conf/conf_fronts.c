/* The mail fronts' blocks (`dnsbl { }`, `tcp_table { }`, `policy { }`): what
 * conf.c's generic parser cannot check alone. A block's own values are
 * checked when it closes (listen given, zone syntax, answer in 127/8); what
 * names a filter once the whole file is read, since a filter block may come
 * after the front that uses it. Pure, like conf.c; any thread. */
#include "config.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "conf/conf_table.h"

#define DEFAULT_ANSWER "127.0.0.2"
#define DEFAULT_FOUND "REJECT listed"
#define DEFAULT_ACTION "REJECT listed by $filter"
#define DEFAULT_DEFAULT "DUNNO"

__attribute__((format(printf, 5, 6))) static int bad(unsigned *line, unsigned at, char *msg,
                                                     size_t len, const char *fmt, ...)
{
    *line = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* The line directive name of scope sc was given on in the block, or dflt. */
static unsigned line_of(enum conf_scope sc, const unsigned *seen, const char *name, unsigned dflt)
{
    const struct directive *d = conf_find_directive(name, sc);
    unsigned l = d ? seen[d - conf_directives] : 0;
    return l ? l : dflt;
}

static int set_default(char **field, const char *value)
{
    if (*field != NULL)
        return 0;
    *field = strdup(value);
    return *field ? 0 : -1;
}

/* A zone as DNS compares it: lower case, no trailing dot, labels of 1 to 63
 * letters, digits, '-' or '_' (rbldnsd's zones use no others). */
static int check_zone(char *zone, char *why, size_t len)
{
    size_t n = strlen(zone);
    if (n > 1 && zone[n - 1] == '.')
        zone[--n] = '\0';
    size_t label = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = zone[i];
        if (c == '.' || c == '\0') {
            if (label == 0 || label > 63) {
                snprintf(why, len, "\"%s\" has %s label", zone,
                         label ? "a label over 63 bytes in a" : "an empty");
                return -1;
            }
            label = 0;
            continue;
        }
        if (c >= 'A' && c <= 'Z')
            zone[i] = (char)(c - 'A' + 'a');
        else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
            snprintf(why, len, "\"%s\" has a character a zone name cannot hold (0x%02x)", zone,
                     (unsigned char)c);
            return -1;
        }
        label++;
    }
    return 0;
}

static int close_dnsbl(struct conf_dnsbl *b, const unsigned *seen, unsigned *line, char *msg,
                       size_t len)
{
    if (b->zone == NULL)
        return bad(line, b->fr.line, msg, len, "dnsbl block needs a zone");
    char why[300];
    if (check_zone(b->zone, why, sizeof(why)) < 0)
        return bad(line, line_of(SCOPE_DNSBL, seen, "zone", b->fr.line), msg, len, "zone: %s", why);
    if (b->filter == NULL)
        return bad(line, b->fr.line, msg, len, "dnsbl block needs a filter");
    b->filter_line = line_of(SCOPE_DNSBL, seen, "filter", b->fr.line);
    if (set_default(&b->answer, DEFAULT_ANSWER) < 0)
        return bad(line, b->fr.line, msg, len, "out of memory");
    struct in_addr a;
    if (inet_pton(AF_INET, b->answer, &a) != 1 || ((const unsigned char *)&a)[0] != 127)
        return bad(line, line_of(SCOPE_DNSBL, seen, "answer", b->fr.line), msg, len,
                   "answer: \"%s\" is not an IPv4 address in 127.0.0.0/8 (RFC 5782)", b->answer);
    memcpy(b->answer_ip, &a, 4);
    return 0;
}

int conf_fronts_close(struct conf *c, enum conf_scope sc, void *blk, const unsigned *seen,
                      unsigned *line, char *msg, size_t len)
{
    (void)c;
    struct conf_front *fr = blk;
    const char *word = sc == SCOPE_DNSBL ? "dnsbl" : sc == SCOPE_TCP_TABLE ? "tcp_table" : "policy";
    if (fr->listen.len == 0)
        return bad(line, fr->line, msg, len, "%s block needs a listen address", word);
    if (sc == SCOPE_DNSBL)
        return close_dnsbl(blk, seen, line, msg, len);
    if (sc == SCOPE_TCP_TABLE) {
        struct conf_tcp_table *t = blk;
        if (t->filter == NULL)
            return bad(line, fr->line, msg, len, "tcp_table block needs a filter");
        t->filter_line = line_of(sc, seen, "filter", fr->line);
        if (set_default(&t->found, DEFAULT_FOUND) < 0)
            return bad(line, fr->line, msg, len, "out of memory");
        return 0;
    }
    struct conf_policy *pol = blk;
    if (pol->n_checks == 0)
        return bad(line, fr->line, msg, len,
                   "policy block needs at least one check (check ATTRIBUTE FILTER)");
    if (set_default(&pol->action, DEFAULT_ACTION) < 0 ||
        set_default(&pol->def, DEFAULT_DEFAULT) < 0)
        return bad(line, fr->line, msg, len, "out of memory");
    return 0;
}

/* The filter called name must exist; its keys decide what it can serve. */
static const struct conf_filter *need_filter(const struct conf *c, const char *who,
                                             const char *name, unsigned at, unsigned *line,
                                             char *msg, size_t len)
{
    const struct conf_filter *f = conf_find_filter(c, name);
    if (f == NULL)
        bad(line, at, msg, len, "%s: filter \"%s\" is not defined", who, name);
    return f;
}

int conf_fronts_finish(struct conf *c, unsigned *line, char *msg, size_t len)
{
    for (size_t i = 0; i < c->n_dnsbl; i++) {
        struct conf_dnsbl *b = &c->dnsbl[i];
        const struct conf_filter *f =
            need_filter(c, "dnsbl", b->filter, b->filter_line, line, msg, len);
        if (f == NULL)
            return -1;
        /* The zone's kind comes from the filter's keys, so they must be stated:
         * a file's own kind could change under a reload. */
        if (f->keys != CONF_KEYS_EXACT && f->keys != CONF_KEYS_HOST)
            return bad(line, b->filter_line, msg, len,
                       "dnsbl: filter \"%s\" (line %u) must say `keys exact` (an IP zone) or "
                       "`keys host` (a domain zone)",
                       f->name, f->line);
        b->domain = f->keys == CONF_KEYS_HOST;
    }
    for (size_t i = 0; i < c->n_tcp_table; i++) {
        const struct conf_tcp_table *t = &c->tcp_table[i];
        if (!need_filter(c, "tcp_table", t->filter, t->filter_line, line, msg, len))
            return -1;
    }
    for (size_t i = 0; i < c->n_policy; i++) {
        for (size_t j = 0; j < c->policy[i].n_checks; j++) {
            const struct conf_check *ck = &c->policy[i].checks[j];
            const struct conf_filter *f =
                need_filter(c, "check", ck->filter, ck->line, line, msg, len);
            if (f == NULL)
                return -1;
            bool addr = strcmp(ck->attr, "client_address") == 0;
            if (addr && f->keys != CONF_KEYS_EXACT)
                return bad(line, ck->line, msg, len,
                           "check: client_address needs a filter with `keys exact`; \"%s\" "
                           "(line %u) has %s",
                           f->name, f->line, conf_keys_name(f->keys));
            if (!addr && f->keys != CONF_KEYS_EXACT && f->keys != CONF_KEYS_HOST)
                return bad(line, ck->line, msg, len,
                           "check: %s needs a filter with `keys host` or `keys exact`; \"%s\" "
                           "(line %u) has %s",
                           ck->attr, f->name, f->line, conf_keys_name(f->keys));
        }
    }
    return 0;
}

/* The listen addresses of one kind's blocks, in order: a connection knows
 * its block by the index of the address it came in on, so a reload may
 * change anything but these (the listeners were bound at start-up). */
static bool same_listens(const void *a, size_t na, const void *b, size_t nb, size_t size)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        const struct conf_front *x = (const void *)((const char *)a + i * size);
        const struct conf_front *y = (const void *)((const char *)b + i * size);
        if (!addr_equal(&x->listen, &y->listen))
            return false;
    }
    return true;
}

int conf_fronts_check_reload(const struct conf *cur, const struct conf *next, const char **what)
{
    if (!same_listens(cur->dnsbl, cur->n_dnsbl, next->dnsbl, next->n_dnsbl, sizeof(*cur->dnsbl)))
        *what = "dnsbl";
    else if (!same_listens(cur->tcp_table, cur->n_tcp_table, next->tcp_table, next->n_tcp_table,
                           sizeof(*cur->tcp_table)))
        *what = "tcp_table";
    else if (!same_listens(cur->policy, cur->n_policy, next->policy, next->n_policy,
                           sizeof(*cur->policy)))
        *what = "policy";
    else
        return 0;
    return -1;
}

static char *dup_or_null(const char *s, bool *oom)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *oom = true;
    return d;
}

/* Deep copies of one kind's blocks, for conf_fronts_keep. */
static void *copy_dnsbl(const struct conf_dnsbl *src, size_t n, bool *oom)
{
    struct conf_dnsbl *d = n ? calloc(n, sizeof(*d)) : NULL;
    if (n && !d)
        *oom = true;
    for (size_t i = 0; d && i < n; i++) {
        d[i] = src[i];
        d[i].zone = dup_or_null(src[i].zone, oom);
        d[i].filter = dup_or_null(src[i].filter, oom);
        d[i].answer = dup_or_null(src[i].answer, oom);
        d[i].txt = dup_or_null(src[i].txt, oom);
    }
    return d;
}

static void *copy_tcp_table(const struct conf_tcp_table *src, size_t n, bool *oom)
{
    struct conf_tcp_table *d = n ? calloc(n, sizeof(*d)) : NULL;
    if (n && !d)
        *oom = true;
    for (size_t i = 0; d && i < n; i++) {
        d[i] = src[i];
        d[i].filter = dup_or_null(src[i].filter, oom);
        d[i].found = dup_or_null(src[i].found, oom);
    }
    return d;
}

static void *copy_policy(const struct conf_policy *src, size_t n, bool *oom)
{
    struct conf_policy *d = n ? calloc(n, sizeof(*d)) : NULL;
    if (n && !d)
        *oom = true;
    for (size_t i = 0; d && i < n; i++) {
        d[i] = src[i];
        d[i].action = dup_or_null(src[i].action, oom);
        d[i].def = dup_or_null(src[i].def, oom);
        d[i].checks = calloc(src[i].n_checks, sizeof(*d[i].checks));
        if (!d[i].checks) {
            d[i].n_checks = 0;
            *oom = true;
            continue;
        }
        for (size_t j = 0; j < src[i].n_checks; j++) {
            d[i].checks[j] = src[i].checks[j];
            d[i].checks[j].attr = dup_or_null(src[i].checks[j].attr, oom);
            d[i].checks[j].filter = dup_or_null(src[i].checks[j].filter, oom);
        }
    }
    return d;
}

/* A reload that changes a kind's listen addresses keeps that kind's blocks
 * as they run (deep copies into next), as conf_keep_running keeps the other
 * listeners; the other kinds take the new blocks. -1 when out of memory. */
int conf_fronts_keep(struct conf *next, const struct conf *cur, conf_warn_fn *warn, void *ctx)
{
    const char *what = NULL;
    while (conf_fronts_check_reload(cur, next, &what) < 0) {
        bool oom = false;
        struct conf tmp = {0};
        if (strcmp(what, "dnsbl") == 0) {
            tmp.dnsbl = copy_dnsbl(cur->dnsbl, cur->n_dnsbl, &oom);
            tmp.n_dnsbl = tmp.dnsbl ? cur->n_dnsbl : 0;
        } else if (strcmp(what, "tcp_table") == 0) {
            tmp.tcp_table = copy_tcp_table(cur->tcp_table, cur->n_tcp_table, &oom);
            tmp.n_tcp_table = tmp.tcp_table ? cur->n_tcp_table : 0;
        } else {
            tmp.policy = copy_policy(cur->policy, cur->n_policy, &oom);
            tmp.n_policy = tmp.policy ? cur->n_policy : 0;
        }
        if (oom) {
            conf_fronts_free(&tmp);
            return -1;
        }
        /* Swap the kept blocks in, free what next had. */
        struct conf old = {0};
        if (strcmp(what, "dnsbl") == 0) {
            old.dnsbl = next->dnsbl, old.n_dnsbl = next->n_dnsbl;
            next->dnsbl = tmp.dnsbl, next->n_dnsbl = tmp.n_dnsbl;
        } else if (strcmp(what, "tcp_table") == 0) {
            old.tcp_table = next->tcp_table, old.n_tcp_table = next->n_tcp_table;
            next->tcp_table = tmp.tcp_table, next->n_tcp_table = tmp.n_tcp_table;
        } else {
            old.policy = next->policy, old.n_policy = next->n_policy;
            next->policy = tmp.policy, next->n_policy = tmp.n_policy;
        }
        conf_fronts_free(&old);
        if (warn) {
            char msg[200];
            snprintf(msg, sizeof(msg),
                     "%s: a change of the blocks' listen addresses needs a restart; the running "
                     "%s blocks stay",
                     what, what);
            warn(ctx, msg);
        }
    }
    return 0;
}
