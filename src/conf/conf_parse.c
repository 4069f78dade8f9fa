/* The configuration parser. Every directive is one row of conf_directives[] (conf.c: name,
 * scope, type, field, default, bounds, flags) and everything else -- defaults,
 * value parsing, duplicate detection, the reload check (conf_file.c) -- is
 * generic over that table, so a new directive is a new field and a new row.
 * Addresses are parsed by addr.c. The grammar and the wording of every message
 * are pinned by tests/unit/conf/check_conf.c. */
#include "config.h"

#include "conf/conf.h"

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

#include "base/fname.h"
#include "base/util.h"
#include "conf/conf_table.h"


#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)
#define SHOW 64      /* at most this much of a bad value is echoed in a message */

/* The blocks a file may hold: `filter NAME {` and the fronts' `KIND {`.
 * Each is an array of structs in struct conf, grown by one per block (a
 * file holds tens of them, not thousands). */
struct block_kind {
    const char *word;
    enum conf_scope scope;
    bool named;          /* `filter NAME {` */
    size_t size;         /* of one block */
    size_t arr, count;   /* the array and its count in struct conf */
};
#define BLOCK_ARRAY(type, a, n) sizeof(type), offsetof(struct conf, a), offsetof(struct conf, n)
static const struct block_kind block_kinds[] = {
    {"filter", SCOPE_FILTER, true, BLOCK_ARRAY(struct conf_filter, filters, n_filters)},
    {"dnsbl", SCOPE_DNSBL, false, BLOCK_ARRAY(struct conf_dnsbl, dnsbl, n_dnsbl)},
    {"tcp_table", SCOPE_TCP_TABLE, false, BLOCK_ARRAY(struct conf_tcp_table, tcp_table, n_tcp_table)},
    {"policy", SCOPE_POLICY, false, BLOCK_ARRAY(struct conf_policy, policy, n_policy)},
};
#define N_BLOCK_KINDS (sizeof(block_kinds) / sizeof(block_kinds[0]))

struct parser {
    struct conf *conf;
    const char *label;           /* the path as messages show it */
    unsigned line;               /* current line, from 1; 0 while applying defaults */
    unsigned seen[CONF_MAX_DIRECTIVES]; /* line where each directive was first given; the
                                  * block-scope ones are reset when a block opens */
    const struct block_kind *open; /* the block being read (the last of its array), or NULL */
    unsigned open_line;          /* the line that opened it */
    char *err;
    size_t errlen;
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



/* The directive called name in scope sc, else in any scope (for the message
 * that says where it belongs). */
static const struct directive *find_directive_in(const char *name, enum conf_scope sc)
{
    const struct directive *d = conf_find_directive(name, sc);
    for (size_t i = 0; d == NULL && i < conf_n_directives; i++)
        if (strcmp(conf_directives[i].name, name) == 0)
            d = &conf_directives[i];
    return d;
}

static const struct directive *find_directive(const char *name)
{
    return find_directive_in(name, SCOPE_GLOBAL);
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

/* Whether a is a listener already (with the error). The same address twice,
 * in one list or across listen, http_listen and the front blocks, would fail at bind() -- or, with
 * SO_REUSEPORT, silently split traffic between two protocols -- so it is an
 * error here, with both lines. Port 0 is exempt: each bind gets its own port. */
static int check_taken(struct parser *p, const struct directive *d, const struct conf_addr *a,
                       unsigned line)
{
    struct conf *c = p->conf;
    if (addr_port(a) == 0)
        return 0;
    for (size_t i = 0; i < conf_n_directives; i++) {
        const struct directive *o = &conf_directives[i];
        if (o->type != T_ADDRS)
            continue;
        const struct conf_addr *list = *(struct conf_addr **)((char *)c + o->offset);
        size_t n = *(size_t *)((char *)c + o->count_offset);
        for (size_t j = 0; j < n; j++) {
            if (!addr_equal(&list[j], a))
                continue;
            if (line == 0) /* a default list meets an address the file gave */
                return fail(p, list[j].line, "%s: %s is also the default of %s (set %s explicitly)",
                            o->name, a->text, d->name, d->name);
            return fail(p, line, "%s: %s is already a listener (%s on line %u)", d->name, a->text,
                        o->name, list[j].line);
        }
    }
    /* The front blocks, each a struct conf_front first: a dnsbl's address
     * is taken on TCP too, so no two may share one whatever their kinds. */
    for (size_t k = 0; k < N_BLOCK_KINDS; k++) {
        const struct block_kind *b = &block_kinds[k];
        if (b->scope == SCOPE_FILTER)
            continue;
        const char *arr = *(char **)((char *)c + b->arr);
        size_t n = *(size_t *)((char *)c + b->count);
        for (size_t j = 0; j < n; j++) {
            const struct conf_front *fr = (const void *)(arr + j * b->size);
            if (fr->listen.len == 0 || !addr_equal(&fr->listen, a))
                continue;
            if (line == 0)
                return fail(p, fr->listen.line, "listen: %s is also the default of %s (set %s "
                            "explicitly)", a->text, d->name, d->name);
            return fail(p, line, "%s: %s is already a listener (%s on line %u)", d->name, a->text,
                        b->word, fr->listen.line);
        }
    }
    return 0;
}

static int add_addr(struct parser *p, const struct directive *d, const char *val, unsigned line)
{
    struct conf *c = p->conf;
    char msg[256];
    struct conf_addr a;
    if (addr_parse(val, &a, msg, sizeof(msg)) < 0)
        return fail(p, line, "%s: %s", d->name, msg);
    a.line = line;
    if (check_taken(p, d, &a, line) < 0)
        return -1;

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
    char emsg[300];
    if ((d->flags & F_OFF) && strcmp(val, "off") == 0)
        return set_off(p, d, base);

    switch (d->type) {
    case T_INT:
    case T_SIZE: {
        uint64_t v = 0;
        if (conf_value_uint(d, val, &v, emsg, sizeof(emsg)) < 0)
            return fail(p, p->line, "%s", emsg);
        store_uint(field, d->size, v);
        return 0;
    }
    case T_DOUBLE: {
        double v = 0;
        if (conf_value_double(d, val, &v, emsg, sizeof(emsg)) < 0)
            return fail(p, p->line, "%s", emsg);
        memcpy(field, &v, sizeof(v));
        return 0;
    }
    case T_ENUM: {
        int v = 0;
        if (conf_value_enum(d, val, &v, emsg, sizeof(emsg)) < 0)
            return fail(p, p->line, "%s", emsg);
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
    case T_ADDR: {
        char msg[256];
        struct conf_addr a;
        if (addr_parse(val, &a, msg, sizeof(msg)) < 0)
            return fail(p, p->line, "%s: %s", d->name, msg);
        a.line = p->line;
        if (check_taken(p, d, &a, p->line) < 0)
            return -1;
        memcpy(field, &a, sizeof(a));
        return 0;
    }
    case T_CHECK:
        assert(!"T_CHECK takes two words: add_check");
    }
    assert(!"unknown directive type");
    return -1;
}

static int apply_defaults(struct parser *p, enum conf_scope scope, void *base)
{
    for (size_t i = 0; i < conf_n_directives; i++) {
        const struct directive *d = &conf_directives[i];
        if (d->scope == scope && d->def != NULL && d->type != T_ADDRS &&
            set_value(p, d, base, d->def) < 0)
            return -1;
    }
    return 0;
}

static bool is_word(const struct conf_token *t, const char *word)
{
    return !t->quoted && strcmp(t->s, word) == 0;
}

/* Whether a name needs no quotes: the names of the old rule, A-Z a-z 0-9 _ . - */
static bool plain_name(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '.' || *s == '-'))
            return false;
    return true;
}

/* A filter's name as the file gives it (`filter NAME {`, a front's `filter
 * NAME`, `check ATTR NAME`): base/fname.h's rule, and in double quotes unless
 * it is plain. The tokenizer alone would take `a:{b}` bare, but `#` starts a
 * comment and `{` `}` are the block's own words: with the quotes a name
 * reads as one thing, and the grammar stays free to grow around them. */
static int check_name(struct parser *p, const char *what, const struct conf_token *t)
{
    size_t len = strlen(t->s);
    if (len > CONF_NAME_MAX)
        return fail(p, p->line, "%s: filter name \"%.*s...\" is %zu bytes long: use " FNAME_RULE,
                    what, SHOW, t->s, len);
    if (!conf_is_valid_name(t->s, len))
        return fail(p, p->line, "%s: filter name \"%.*s\" is invalid: use " FNAME_RULE, what, SHOW,
                    t->s);
    if (!t->quoted && !plain_name(t->s))
        return fail(p, p->line,
                    "%s: filter name %s must be quoted, \"%s\" (only a name of A-Z a-z 0-9 _ . - "
                    "may go bare)",
                    what, t->s, t->s);
    return 0;
}

/* The block being read: the last of its kind's array. */
static void *open_base(struct parser *p)
{
    const struct block_kind *b = p->open;
    assert(b != NULL);
    char *arr = *(char **)((char *)p->conf + b->arr);
    size_t n = *(size_t *)((char *)p->conf + b->count);
    assert(n > 0);
    return arr + (n - 1) * b->size;
}

static struct conf_filter *open_filter(struct parser *p)
{
    assert(p->open != NULL && p->open->scope == SCOPE_FILTER);
    return open_base(p);
}

static unsigned seen_line(const struct parser *p, const char *name)
{
    const struct directive *d = find_directive(name);
    assert(d != NULL);
    return p->seen[d - conf_directives];
}

static const struct block_kind *find_kind(const char *word)
{
    for (size_t k = 0; k < N_BLOCK_KINDS; k++)
        if (strcmp(block_kinds[k].word, word) == 0)
            return &block_kinds[k];
    return NULL;
}

/* `filter NAME {` (a filter's name is checked and must be unique) or a
 * front's `KIND {`: a new, zeroed block at the end of its array, with the
 * defaults of its scope. */
static int open_block(struct parser *p, const struct block_kind *k, const struct conf_token *tok,
                      int n)
{
    struct conf *c = p->conf;
    if (p->open)
        return fail(p, p->line, "%s blocks cannot be nested (\"%s\" from line %u is open)",
                    k->word, p->open->named ? open_filter(p)->name : p->open->word, p->open_line);
    int brace = k->named ? 2 : 1;
    if (k->named && n == 1)
        return fail(p, p->line, "filter: missing name (expected: filter NAME {)");
    if (n == brace || !is_word(&tok[brace], "{"))
        return fail(p, p->line, "%s: expected \"{\" after the %s, on the same line", k->word,
                    k->named ? "name" : "word");
    if (n > brace + 1)
        return fail(p, p->line, "%s: unexpected text after \"{\"", k->word);

    const char *name = tok[1].s;
    if (k->named && check_name(p, "filter", &tok[1]) < 0)
        return -1;
    /* Quadratic, like the other uniqueness checks, but over a file of an operator's
     * filters, which number in the tens. */
    for (size_t i = 0; k->named && i < c->n_filters; i++)
        if (strcmp(c->filters[i].name, name) == 0)
            return fail(p, p->line, "filter \"%s\" is already defined on line %u", name,
                        c->filters[i].line);

    char **arr = (char **)((char *)c + k->arr);
    size_t *count = (size_t *)((char *)c + k->count);
    char *grown = realloc(*arr, (*count + 1) * k->size);
    if (grown == NULL)
        return fail(p, p->line, "out of memory");
    *arr = grown;
    void *blk = grown + *count * k->size;
    memset(blk, 0, k->size);
    if (k->named) {
        struct conf_filter *f = blk;
        f->name = strdup(name);
        if (f->name == NULL)
            return fail(p, p->line, "out of memory");
        f->line = p->line;
    } else {
        ((struct conf_front *)blk)->line = p->line;
    }
    (*count)++;
    p->open = k;
    p->open_line = p->line;
    for (size_t i = 0; i < conf_n_directives; i++)
        if (conf_directives[i].scope == k->scope)
            p->seen[i] = 0;
    return apply_defaults(p, k->scope, blk);
}

/* `check ATTR FILTER`: the attribute is checked here, the filter once the
 * whole file is read (conf_fronts_finish). */
static int add_check(struct parser *p, const struct directive *d, void *base, const char *attr,
                     const struct conf_token *ftok)
{
    const char *filter = ftok->s;
    static const char *const attrs[] = {"client_address", "client_name", "reverse_client_name",
                                        "helo_name", "sender", "recipient"};
    bool known = false;
    for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
        known = known || strcmp(attr, attrs[i]) == 0;
    if (!known)
        return fail(p, p->line,
                    "%s: unknown attribute \"%.*s\" (client_address, client_name, "
                    "reverse_client_name, helo_name, sender, recipient)",
                    d->name, SHOW, attr);
    if (check_name(p, d->name, ftok) < 0)
        return -1;
    struct conf_check **list = (struct conf_check **)((char *)base + d->offset);
    size_t *n = (size_t *)((char *)base + d->count_offset);
    struct conf_check *grown = realloc(*list, (*n + 1) * sizeof(**list));
    if (grown == NULL)
        return fail(p, p->line, "out of memory");
    *list = grown;
    struct conf_check *ck = &grown[*n];
    ck->attr = strdup(attr);
    ck->filter = strdup(filter);
    ck->line = p->line;
    (*n)++;
    if (ck->attr == NULL || ck->filter == NULL)
        return fail(p, p->line, "out of memory");
    return 0;
}

/* A block is complete: check what needs the whole block and fill in the
 * journal's default. Two filters journaling into one file, or a journal written
 * over a filter file, would corrupt both; nothing later could tell, so stop it
 * here. */
static int close_filter(struct parser *p)
{
    struct conf *c = p->conf;
    struct conf_filter *f = open_filter(p);
    p->open = NULL;
    if (f->file == NULL && f->capacity == 0)
        return fail(p, f->line, "filter \"%s\" needs \"file\" (prebuilt) or \"capacity\" (empty)",
                    f->name);
    char wmsg[256];
    if (conf_window_check(f, wmsg, sizeof(wmsg)) != 0)
        return fail(p, f->line, "filter \"%s\": %s", f->name, wmsg);
    /* A growing filter (bloom/grow.h) is filled at run time and never
     * expires: a built file's size is fixed, and a ring of slices would
     * need each slice to grow on its own. Its "file", when named, is its
     * checkpoint (bloom/grow_file.h, written for a filter created at run
     * time), never a built filter file: the load refuses one. So it still
     * needs a capacity, to start empty from. */
    unsigned gline = seen_line(p, "growth") ? seen_line(p, "growth") : f->line;
    if (f->growth && f->file && f->capacity == 0)
        return fail(p, gline, "filter \"%s\": \"growth on\" is for a filter filled at run time "
                              "(\"capacity\"); a built \"file\" has a fixed size", f->name);
    if (f->growth && f->window)
        return fail(p, gline, "filter \"%s\": \"growth on\" and \"window\" cannot be combined "
                              "(a windowed filter's slices are sized for its capacity)", f->name);
    if (f->full == CONF_FULL_REFUSE && (f->growth || f->window))
        return fail(p, seen_line(p, "full"),
                    "filter \"%s\": \"full refuse\" is for a fixed-size filter; a %s", f->name,
                    f->growth ? "growing filter grows instead" : "windowed filter forgets instead");
    if (f->max_memory && !f->growth)
        return fail(p, seen_line(p, "max_memory"),
                    "filter \"%s\": \"max_memory\" bounds a growing filter; it needs \"growth on\"",
                    f->name);

    /* Every filter's run-time changes are journaled (a words filter's ADD,
     * REMOVE, ALLOW of words too). */
    if (!f->journal_off && f->journal == NULL) {
        if (f->file != NULL) {
            f->journal = concat(f->file, ".journal");
        } else {
            /* The name as a file name: a '/' in it stays in the directory. */
            char fn[FNAME_FILE_MAX];
            size_t fl = fname_file(f->name, strlen(f->name), fn);
            if (fl + sizeof(".journal") - 1 > NAME_MAX)
                return fail(p, f->line,
                            "filter \"%s\": the default journal's file name would be longer than "
                            "%d bytes ('/' and '%%' count 3); set \"journal\"",
                            f->name, NAME_MAX);
            char *base = concat(fn, ".journal");
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

/* A `}`: the front blocks' checks are conf_fronts.c's. */
static int close_block(struct parser *p)
{
    if (p->open->scope == SCOPE_FILTER)
        return close_filter(p);
    enum conf_scope sc = p->open->scope;
    void *blk = open_base(p);
    p->open = NULL;
    char msg[300];
    unsigned line = 0;
    if (conf_fronts_close(p->conf, sc, blk, p->seen, &line, msg, sizeof(msg)) < 0)
        return fail(p, line, "%s", msg);
    return 0;
}

static int parse_line(struct parser *p, const struct conf_token *tok, int n)
{
    if (is_word(&tok[0], "}")) {
        if (n > 1)
            return fail(p, p->line, "unexpected text after \"}\"");
        if (!p->open)
            return fail(p, p->line, "\"}\" without an open block");
        return close_block(p);
    }
    if (is_word(&tok[0], "{"))
        return fail(p, p->line, "\"{\" must end the `filter NAME {` line");
    enum conf_scope scope = p->open ? p->open->scope : SCOPE_GLOBAL;
    const struct block_kind *k = tok[0].quoted ? NULL : find_kind(tok[0].s);
    /* `filter` opens a block, except inside a front block, where it names one. */
    if (k && conf_find_directive(tok[0].s, scope) == NULL)
        return open_block(p, k, tok, n);

    const struct directive *d = find_directive_in(tok[0].s, scope);
    if (d == NULL)
        return fail(p, p->line, "unknown directive \"%.*s\"", SHOW, tok[0].s);
    if (d->scope != scope && d->scope == SCOPE_GLOBAL)
        return fail(p, p->line, "%s: not allowed inside a %s block", d->name, p->open->word);
    if (d->scope != scope) {
        const char *where = "?";
        for (size_t i = 0; i < N_BLOCK_KINDS; i++)
            if (block_kinds[i].scope == d->scope)
                where = block_kinds[i].word;
        return fail(p, p->line, "%s: only allowed inside a %s block", d->name, where);
    }
    if (n == 1)
        return fail(p, p->line, "%s: missing value", d->name);
    if (d->type == T_CHECK && n != 3)
        return fail(p, p->line, "%s: expected two values, ATTRIBUTE FILTER", d->name);
    if (d->type != T_CHECK && n > 2)
        return fail(p, p->line, "%s: too many values (quote a value that contains spaces)",
                    d->name);

    size_t idx = (size_t)(d - conf_directives);
    if (p->seen[idx] && !(d->flags & F_REPEAT))
        return fail(p, p->line, "%s: already set on line %u", d->name, p->seen[idx]);
    void *base = d->scope == SCOPE_GLOBAL ? (void *)p->conf : open_base(p);
    if ((d->flags & F_FNAME) && check_name(p, d->name, &tok[1]) < 0)
        return -1;
    int rc = d->type == T_CHECK ? add_check(p, d, base, tok[1].s, &tok[2])
                                : set_value(p, d, base, tok[1].s);
    if (rc < 0)
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
        struct conf_token tok[CONF_MAX_TOKENS];
        char emsg[200];
        int ntok = rc == 0 ? conf_tokenize(line, n, scratch, tok, emsg, sizeof(emsg)) : -1;
        if (ntok < 0 && rc == 0)
            rc = fail(p, p->line, "%s", emsg);
        else if (ntok < 0)
            rc = -1;
        else if (ntok > 0)
            rc = parse_line(p, tok, ntok);
    }
    free(scratch);
    if (rc == 0 && p->open && p->open->named)
        rc = fail(p, open_filter(p)->line, "filter \"%s\" is not closed (missing \"}\")",
                  open_filter(p)->name);
    else if (rc == 0 && p->open)
        rc = fail(p, p->open_line, "%s block is not closed (missing \"}\")", p->open->word);
    return rc;
}

/* Checks that need the whole file, and the defaults of the lists. */
static int finish(struct parser *p)
{
    struct conf *c = p->conf;
    for (size_t i = 0; i < conf_n_directives; i++) {
        const struct directive *d = &conf_directives[i];
        if (d->type != T_ADDRS || !d->def || *(size_t *)((char *)c + d->count_offset) > 0)
            continue;
        if ((d->flags & F_OFF) && *(bool *)((char *)c + d->off_offset))
            continue;
        if (add_addr(p, d, d->def, 0) < 0)
            return -1;
    }

    if (!seen_line(p, "max_buffered"))
        c->max_buffered = conf_default_max_buffered();
    if (!seen_line(p, "max_created_memory"))
        c->max_created_memory = conf_default_max_created_memory();
    if (c->max_item >= c->max_line) {
        const struct directive *item = find_directive("max_item");
        const struct directive *line = find_directive("max_line");
        char a[32], b[32];
        unsigned at =
            seen_line(p, "max_item") ? seen_line(p, "max_item") : seen_line(p, "max_line");
        return fail(p, at, "max_item (%s) must be smaller than max_line (%s)",
                    conf_fmt_bound(item, c->max_item, a, sizeof(a)),
                    conf_fmt_bound(line, c->max_line, b, sizeof(b)));
    }
    char msg[300];
    unsigned at = 0;
    if (conf_fronts_finish(c, &at, msg, sizeof(msg)) < 0)
        return fail(p, at, "%s", msg);
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
    for (size_t i = 0; i < conf_n_directives; i++) {
        const struct directive *d = &conf_directives[i];
        bool wide = d->size == sizeof(uint64_t), narrow = d->size == sizeof(uint32_t);
        if ((d->type == T_INT || d->type == T_SIZE) && !(wide || (narrow && d->max <= UINT32_MAX)))
            return false;
        if (d->type == T_ENUM && !narrow)
            return false;
        if (conf_find_directive(d->name, d->scope) != d)
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
        fail(&p, 0, "cannot find the directory of the file: %s", util_errno_text(errno));
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
