/* The configuration's data: the directive table every other part is generic
 * over (a new directive is a new field in conf.h and a new row here), the
 * enum words, and what reads a parsed configuration (lookups, names, the
 * width-aware field reader) or frees it. The bottom of src/conf's
 * files: the parser (conf_parse.c), the mail fronts' block checks
 * (conf_fronts.c) and the file and reload side (conf_file.c) build on it;
 * it calls none of them. Read-only data and pure functions, any thread. */
#include "config.h"

#include "conf/conf.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fname.h"
#include "bloom/filter.h"
#include "conf/conf_table.h"

_Static_assert((int)CONF_LAYOUT_BLOCKED == (int)FILTER_BLOCKED, "conf and filter conf_layouts differ");
_Static_assert((int)CONF_LAYOUT_CLASSIC == (int)FILTER_CLASSIC, "conf and filter conf_layouts differ");
_Static_assert((int)CONF_LAYOUT_COUNTING == (int)FILTER_COUNTING, "conf and filter conf_layouts differ");

_Static_assert((int)CONF_KEYS_EXACT == (int)FILTER_KEYS_EXACT + 1 &&
                   (int)CONF_KEYS_HOST == (int)FILTER_KEYS_HOST + 1 &&
                   (int)CONF_KEYS_URL == (int)FILTER_KEYS_URL + 1 &&
                   (int)CONF_KEYS_ADBLOCK == (int)FILTER_KEYS_ADBLOCK + 1 &&
                   (int)CONF_KEYS_WORDS == (int)FILTER_KEYS_WORDS + 1,
               "conf_keys is not filter_keys + 1");

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)

/* The table reads best one row a line, in columns (the enum words are below,
 * beside the functions that name them). */
/* clang-format off */
#define STRUCT_GLOBAL struct conf
#define STRUCT_FILTER struct conf_filter
#define STRUCT_DNSBL struct conf_dnsbl
#define STRUCT_TCP_TABLE struct conf_tcp_table
#define STRUCT_POLICY struct conf_policy
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
#define ADDR(n, sc, f, fl) \
    {.name = n, AT(sc, f), .type = T_ADDR, .flags = fl}
#define CHECK(n, sc, f, count, fl) \
    {.name = n, AT(sc, f), .type = T_CHECK, \
     .count_offset = offsetof(STRUCT_##sc, count), .flags = (fl) | F_REPEAT}

/* Every directive the file may hold. A list's default ("127.0.0.1:7878") applies
 * only when the file gives none (resp_listen and bloomd_listen have none: off unless given); every
 * other default is set before parsing.
 * Not F_RELOAD: what is bound, forked or dropped once at start-up, and
 * max_items, which sizes each worker's per-request buffers once. */
const struct directive conf_directives[] = {
    /*     name                scope   field             default  min      max        flags */
    ADDRS("listen",                    listen, n_listen, "127.0.0.1:7878",                0),
    ADDRS_OFF("http_listen",           http_listen, n_http_listen, http_off,
                                                         "127.0.0.1:7879",                0),
    ADDRS("resp_listen",               resp_listen, n_resp_listen, NULL,                  0),
    ADDRS("bloomd_listen",             bloomd_listen, n_bloomd_listen, NULL,              0),
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
    INT(   "request_timeout",  GLOBAL, request_timeout,  "10",    0,       86400,     F_RELOAD),
    SIZE(  "max_buffered",     GLOBAL, max_buffered,     NULL,    1 * MIB, 1024 * GIB, F_RELOAD),
    SIZE(  "max_output",       GLOBAL, max_output,       "4M",    64 * KIB, 1 * GIB,  F_RELOAD),
    INT(   "shutdown_timeout", GLOBAL, shutdown_timeout, "5",     0,       3600,      F_RELOAD),
    SIZE(  "http_max_body",    GLOBAL, http_max_body,    "8M",    1 * KIB, 1 * GIB,   F_RELOAD),
    SIZE(  "http_max_headers", GLOBAL, http_max_headers, "64K",   1 * KIB, 16 * MIB,  F_RELOAD),
    PATH(  "state_dir",        GLOBAL, state_dir,                                     0),
    INT(   "max_filters",      GLOBAL, max_filters,      "1000",  0,       CONF_MAX_CREATED, F_RELOAD),
    SIZE(  "max_created_memory", GLOBAL, max_created_memory, NULL, 0,      FILTER_MAX_BYTES, F_RELOAD),
    ENUM(  "auto_create",      GLOBAL, auto_create,      conf_on_off,  "on",               F_RELOAD),
    SIZE(  "checkpoint_bytes", GLOBAL, checkpoint_bytes, "64M",   0,       1024 * GIB, F_RELOAD),
    SIZE(  "scan_max_text",    GLOBAL, scan_max_text,    "1M",    1,       1 * GIB,   F_RELOAD),
    INT(   "scan_max_matches", GLOBAL, scan_max_matches, "100",   1,       CONF_SCAN_MATCHES_MAX, F_RELOAD),

    PATH(  "file",             FILTER, file,                                          F_RELOAD),
    SIZE(  "capacity",         FILTER, capacity,         NULL,    1, FILTER_MAX_CAPACITY, F_RELOAD),
    DOUBLE("fpr",              FILTER, fpr,              "0.0001", FILTER_MIN_FPR, 0.5, F_RELOAD),
    ENUM(  "layout",           FILTER, layout,           conf_layouts, "blocked",          F_RELOAD),
    ENUM(  "keys",             FILTER, keys,             conf_key_kinds,   NULL,               F_RELOAD),
    PATH_OFF("journal",        FILTER, journal, journal_off,                          F_RELOAD),
    ENUM(  "fsync",            FILTER, fsync,            conf_fsyncs,  "everysec",         F_RELOAD),
    PATH(  "allow",            FILTER, allow,                                         F_RELOAD),
    STRING("window",           FILTER, window,                    1,       32,        F_RELOAD),
    INT(   "slices",           FILTER, slices,           "4",     1,       64,        F_RELOAD),
    ENUM(  "growth",           FILTER, growth,           conf_on_off,  "off",              F_RELOAD),
    SIZE(  "max_memory",       FILTER, max_memory,       NULL,    4 * KIB, FILTER_MAX_BYTES, F_RELOAD),
    SIZE(  "delta_capacity",   FILTER, delta_capacity,   NULL,    1, FILTER_MAX_CAPACITY, F_RELOAD),
    ENUM(  "no_context",       FILTER, context,          conf_contexts, "document",        F_RELOAD),
    ENUM(  "full",             FILTER, full,             conf_fulls,   "accept",           F_RELOAD),
    ENUM(  "words_nfkc",       FILTER, words_nfkc,       conf_words_flags, NULL,           F_RELOAD),
    ENUM(  "words_zh",         FILTER, words_zh,         conf_words_flags, NULL,           F_RELOAD),
    ENUM(  "words_whole_word", FILTER, words_whole_word, conf_words_flags, NULL,           F_RELOAD),
    STRING("words_skip",       FILTER, words_skip,                1,       1024,      F_RELOAD),
    INT(   "words_delta_max",  FILTER, words_delta_max,  "10000", 0,       1000000,   F_RELOAD),
    INT(   "words_fold_after", FILTER, words_fold_after, "60",    0,       86400,     F_RELOAD),

    /* The mail fronts (conf_fronts.c checks a block once it is closed). */
    ADDR(  "listen",           DNSBL,  fr.listen,                                     0),
    STRING("zone",             DNSBL,  zone,                      1,       253,       F_RELOAD),
    STRING("filter",           DNSBL,  filter,                    1, CONF_NAME_MAX, F_RELOAD | F_FNAME),
    STRING("answer",           DNSBL,  answer,                    7,       15,        F_RELOAD),
    STRING("txt",              DNSBL,  txt,                       1, CONF_DNSBL_TXT_MAX, F_RELOAD),
    INT(   "ttl",              DNSBL,  ttl,              "300",   0,       604800,    F_RELOAD),
    ADDR(  "listen",           TCP_TABLE, fr.listen,                                  0),
    STRING("filter",           TCP_TABLE, filter,                 1, CONF_NAME_MAX, F_RELOAD | F_FNAME),
    STRING("found",            TCP_TABLE, found,                  1, CONF_TCP_FOUND_MAX, F_RELOAD),
    ADDR(  "listen",           POLICY, fr.listen,                                     0),
    CHECK( "check",            POLICY, checks, n_checks,                              F_RELOAD),
    STRING("action",           POLICY, action,                    1, CONF_POLICY_ACTION_MAX, F_RELOAD),
    STRING("default",          POLICY, def,                       1, CONF_POLICY_ACTION_MAX, F_RELOAD),
};
/* clang-format on */

#define N_DIRECTIVES (sizeof(conf_directives) / sizeof(conf_directives[0]))
const size_t conf_n_directives = N_DIRECTIVES;
_Static_assert(N_DIRECTIVES <= CONF_MAX_DIRECTIVES, "raise CONF_MAX_DIRECTIVES (conf_table.h)");

const struct directive *conf_find_directive(const char *name, enum conf_scope sc)
{
    for (size_t i = 0; i < N_DIRECTIVES; i++)
        if (conf_directives[i].scope == sc && strcmp(conf_directives[i].name, name) == 0)
            return &conf_directives[i];
    return NULL;
}

/* max_buffered when the file does not set it: an eighth of the machine's
 * physical memory, at least 64 MiB (what 16 connections at the default
 * http_max_body may hold at once), at most 1 TiB. Any thread. */
/* max_created_memory when the file does not set it: a quarter of the
 * machine's physical memory, at least 64 MiB. Any thread. */
uint64_t conf_default_max_created_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    uint64_t v = mem / 4;
    return v < 64 * MIB ? 64 * MIB : v;
}

size_t conf_default_max_buffered(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    uint64_t v = mem / 8;
    if (v < 64 * MIB)
        v = 64 * MIB;
    if (v > 1024 * GIB)
        v = 1024 * GIB;
    return (size_t)v;
}

/* The mail fronts' blocks (conf_fronts.c fills them); conf_free's part, and
 * conf_fronts_keep's for the blocks it swaps. */
void conf_fronts_free(struct conf *c)
{
    for (size_t i = 0; i < c->n_dnsbl; i++) {
        free(c->dnsbl[i].zone);
        free(c->dnsbl[i].filter);
        free(c->dnsbl[i].answer);
        free(c->dnsbl[i].txt);
    }
    free(c->dnsbl);
    for (size_t i = 0; i < c->n_tcp_table; i++) {
        free(c->tcp_table[i].filter);
        free(c->tcp_table[i].found);
    }
    free(c->tcp_table);
    for (size_t i = 0; i < c->n_policy; i++) {
        for (size_t j = 0; j < c->policy[i].n_checks; j++) {
            free(c->policy[i].checks[j].attr);
            free(c->policy[i].checks[j].filter);
        }
        free(c->policy[i].checks);
        free(c->policy[i].action);
        free(c->policy[i].def);
    }
    free(c->policy);
}

/* Frees everything conf_parse allocated; NULL is fine. */
void conf_filter_clear(struct conf_filter *f)
{
    free(f->name);
    free(f->file);
    free(f->journal);
    free(f->allow);
    free(f->window);
    free(f->words_skip);
    memset(f, 0, sizeof(*f));
}

/* s as the inside of a quoted config string: `"` and `\\` escaped, the
 * only escapes the parser reads. -1 if out is short. */
static int quote_into(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s; s++) {
        if (o + 3 > cap)
            return -1;
        if (*s == '"' || *s == '\\')
            out[o++] = '\\';
        out[o++] = *s;
    }
    out[o] = '\0';
    return 0;
}

/* A created filter's block as config text (store/created.c writes it to
 * the state directory and reads it back with conf_parse): every option an
 * empty filter has, so the file alone says what the filter is. The name and
 * journal are quoted: a name is never a `"` or `\\` (base/fname.h); the
 * paths are escaped (quote_into). Any thread. -1 if len is short. */
int conf_filter_text(const struct conf_filter *f, char *buf, size_t len)
{
    char mm[40] = "", win[80] = "", keys[32] = "", file[8400] = "";
    char jq[8200], fq[8200];
    /* Paths come from the config's state_dir (or a file option): quoted as
     * the parser reads them, whatever bytes they hold. */
    if (quote_into(jq, sizeof(jq), f->journal ? f->journal : "") != 0 ||
        (f->file && quote_into(fq, sizeof(fq), f->file) != 0))
        return -1;
    if (f->file)
        snprintf(file, sizeof(file), "  file \"%s\"\n", fq);
    if (f->max_memory)
        snprintf(mm, sizeof(mm), "  max_memory %llu\n", (unsigned long long)f->max_memory);
    if (f->window)
        snprintf(win, sizeof(win), "  window %s\n  slices %u\n", f->window, f->slices);
    if (f->keys != CONF_KEYS_FILE)
        snprintf(keys, sizeof(keys), "  keys %s\n", conf_enum_name(conf_key_kinds, (int)f->keys));
    int n = snprintf(buf, len,
                     "filter \"%s\" {\n  capacity %llu\n  fpr %.17g\n  layout %s\n%s"
                     "  growth %s\n%s%s  full %s\n  fsync %s\n%s  journal \"%s\"\n}\n",
                     f->name, (unsigned long long)f->capacity, f->fpr,
                     conf_enum_name(conf_layouts, (int)f->layout), keys,
                     f->growth ? "on" : "off", mm, win, conf_enum_name(conf_fulls, (int)f->full),
                     conf_enum_name(conf_fsyncs, (int)f->fsync), file, jq);
    return n < 0 || (size_t)n >= len ? -1 : n;
}

void conf_free(struct conf *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n_filters; i++)
        conf_filter_clear(&c->filters[i]);
    free(c->filters);
    conf_fronts_free(c);
    free(c->listen);
    free(c->http_listen);
    free(c->resp_listen);
    free(c->bloomd_listen);
    free(c->user);
    free(c->pidfile);
    free(c->state_dir);
    free(c->admin_token);
    free(c->path);
    free(c->dir);
    free(c);
}

_Static_assert(CONF_NAME_MAX == FNAME_MAX, "conf.h's CONF_NAME_MAX is base/fname.h's FNAME_MAX");

/* A filter name as the config, the line protocol and the HTTP paths accept it
 * (base/fname.h): the parser and the HTTP API both ask. */
int conf_is_valid_name(const char *s, size_t len)
{
    return fname_valid(s, len);
}

/* The reader of the fields conf.c's store_uint writes (at the width the
 * table records); the reload comparison below is its user. */
uint64_t conf_load_uint(const void *field, size_t size)
{
    if (size == sizeof(uint32_t)) {
        uint32_t x;
        memcpy(&x, field, sizeof(x));
        return x;
    }
    assert(size == sizeof(uint64_t));
    uint64_t v;
    memcpy(&v, field, sizeof(v));
    return v;
}

const struct conf_filter *conf_find_filter(const struct conf *c, const char *name)
{
    for (size_t i = 0; i < c->n_filters; i++)
        if (strcmp(c->filters[i].name, name) == 0)
            return &c->filters[i];
    return NULL;
}

const char *conf_enum_name(const struct conf_enum *e, int value)
{
    for (; e->name; e++)
        if (e->value == value)
            return e->name;
    return "unknown";
}

/* Each enum directive's words and values: the parser (conf.c's directive
 * table) reads them, the functions below name a value back. One row a line. */
/* clang-format off */
const struct conf_enum conf_log_levels[] = {
    {"debug", CONF_LOG_DEBUG}, {"info", CONF_LOG_INFO}, {"warn", CONF_LOG_WARN},
    {"error", CONF_LOG_ERROR}, {NULL, 0},
};
const struct conf_enum conf_layouts[] = {
    {"blocked", CONF_LAYOUT_BLOCKED}, {"classic", CONF_LAYOUT_CLASSIC},
    {"counting", CONF_LAYOUT_COUNTING}, {NULL, 0},
};
const struct conf_enum conf_key_kinds[] = {
    {"exact", CONF_KEYS_EXACT}, {"host", CONF_KEYS_HOST}, {"url", CONF_KEYS_URL},
    {"adblock", CONF_KEYS_ADBLOCK}, {"words", CONF_KEYS_WORDS}, {NULL, 0},
};
const struct conf_enum conf_on_off[] = {{"off", 0}, {"on", 1}, {NULL, 0}};
const struct conf_enum conf_contexts[] = {
    {"document", CONF_CONTEXT_DOCUMENT}, {"any", CONF_CONTEXT_ANY}, {NULL, 0},
};
const struct conf_enum conf_words_flags[] = {
    {"off", CONF_WORDS_OFF}, {"on", CONF_WORDS_ON}, {NULL, 0},
};
const struct conf_enum conf_fulls[] = {
    {"accept", CONF_FULL_ACCEPT}, {"refuse", CONF_FULL_REFUSE}, {NULL, 0},
};
const struct conf_enum conf_fsyncs[] = {
    {"always", CONF_FSYNC_ALWAYS}, {"everysec", CONF_FSYNC_EVERYSEC}, {"no", CONF_FSYNC_NO},
    {NULL, 0},
};
/* clang-format on */

const char *conf_log_level_name(enum conf_log_level level)
{
    return conf_enum_name(conf_log_levels, level);
}
const char *conf_layout_name(enum conf_layout layout)
{
    return conf_enum_name(conf_layouts, layout);
}
const char *conf_fsync_name(enum conf_fsync fsync)
{
    return conf_enum_name(conf_fsyncs, fsync);
}

const char *conf_keys_name(enum conf_keys keys)
{
    return keys == CONF_KEYS_FILE ? "(as the file says)" : conf_enum_name(conf_key_kinds, keys);
}
