/* conf_table: the directive table (defined in conf.c) shared by the parser
 * (conf_parse.c), the mail fronts' block checks (conf_fronts.c) and what
 * compares configurations on reload (conf_file.c). Internal to src/conf;
 * read-only data, any thread. */
#ifndef BLOOMGATE_CONF_TABLE_H
#define BLOOMGATE_CONF_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"

enum conf_type {
    T_INT,    /* unsigned decimal */
    T_SIZE,   /* unsigned decimal, optional binary suffix K/KiB/M/MiB/G/GiB */
    T_DOUBLE, /* decimal or exponent notation; no hex, inf or nan */
    T_STRING, /* min and max bound the length in bytes */
    T_PATH,   /* a relative path is resolved against the config's directory */
    T_ENUM,   /* one of enums[] */
    T_ADDRS,  /* appends a struct conf_addr to the array; its size_t count is at count_offset */
    T_ADDR,   /* one struct conf_addr (a front block's listen) */
    T_CHECK,  /* two words, ATTR FILTER: appends a struct conf_check; count at count_offset */
};

enum conf_scope {
    SCOPE_GLOBAL, /* field of struct conf */
    SCOPE_FILTER, /* field of struct conf_filter, inside `filter NAME { }` */
    SCOPE_DNSBL,  /* struct conf_dnsbl, inside `dnsbl { }` */
    SCOPE_TCP_TABLE, /* struct conf_tcp_table, inside `tcp_table { }` */
    SCOPE_POLICY, /* struct conf_policy, inside `policy { }` */
};

#define F_REPEAT 1u /* may be given more than once: the list types */
#define F_RELOAD 2u /* may change on SIGHUP without a restart */
#define F_OFF 4u    /* the value "off" sets the bool at off_offset */
#define F_FNAME 8u  /* T_STRING naming a filter: base/fname.h's rule, quoted unless plain */

struct conf_enum {
    const char *name;
    int value;
};

struct directive {
    const char *name;
    enum conf_scope scope;
    enum conf_type type;
    size_t offset;                 /* of the field in struct conf or struct conf_filter */
    size_t size;                   /* of the field: integers and enums are stored by width */
    const char *def;               /* default as config text; NULL: zero, NULL or computed */
    uint64_t min, max;             /* T_INT and T_SIZE: the value; T_STRING: the length */
    double dmin, dmax;             /* T_DOUBLE */
    const struct conf_enum *enums; /* T_ENUM, ends with a NULL name */
    size_t count_offset;           /* T_ADDRS, T_CHECK: the size_t count, beside the array */
    size_t off_offset;             /* F_OFF: the bool set by "off" */
    unsigned flags;                /* F_* */
};

extern const struct directive conf_directives[]; /* every directive the file may hold */
extern const size_t conf_n_directives;
/* The most directives the table may hold (the parser sizes an array by it). */
#define CONF_MAX_DIRECTIVES 96
extern const struct conf_enum conf_log_levels[], conf_layouts[], conf_fsyncs[], conf_key_kinds[];
extern const struct conf_enum conf_on_off[], conf_contexts[], conf_fulls[], conf_words_flags[];

/* The directive called name in scope sc, or NULL. */
const struct directive *conf_find_directive(const char *name, enum conf_scope sc);

/* conf_fronts.c: the front blocks' checks, free and reload rules. Each
 * returns 0, or -1 with the reason in msg and the line to blame in *line. */
/* A block just closed: what it needs alone (listen given, zone, answer).
 * seen[i] is the line directive i was given on in this block, or 0. */
int conf_fronts_close(struct conf *c, enum conf_scope sc, void *blk, const unsigned *seen,
                      unsigned *line, char *msg, size_t len);
/* The whole file read: what needs the filters (they may come later). */
int conf_fronts_finish(struct conf *c, unsigned *line, char *msg, size_t len);
void conf_fronts_free(struct conf *c);
/* Whether next keeps every front block's listen address (the block kind
 * that does not in *what); conf_fronts_keep keeps the running blocks of a
 * kind whose addresses changed. */
int conf_fronts_check_reload(const struct conf *cur, const struct conf *next, const char **what);
int conf_fronts_keep(struct conf *next, const struct conf *cur, conf_warn_fn *warn, void *ctx);

/* conf_values.c: words and values (see there). */
#define CONF_MAX_TOKENS 4 /* the longest lines: `filter NAME {`, `check ATTR FILTER`; one more */
struct conf_token {
    const char *s; /* NUL-terminated, in the scratch buffer */
    bool quoted;   /* a quoted "{" or "}" is a value, not a brace */
};
int conf_tokenize(const char *line, size_t len, char *scratch, struct conf_token *tok, char *emsg,
                  size_t elen);
int conf_value_uint(const struct directive *d, const char *val, uint64_t *out, char *emsg,
                    size_t elen);
int conf_value_double(const struct directive *d, const char *val, double *out, char *emsg,
                      size_t elen);
int conf_value_enum(const struct directive *d, const char *val, int *out, char *emsg, size_t elen);
/* A filter's `window` and `slices`: parse the window (a count and a unit:
 * ms, s, m, h, d; a bare count is seconds) into window_ms and check it
 * against the rest of the block. 0, or -1 with why. */
int conf_window_check(struct conf_filter *f, char *emsg, size_t elen);
/* A bound as one would write it: 65536 as 64K for a size. */
const char *conf_fmt_bound(const struct directive *d, uint64_t v, char *buf, size_t len);

/* The word of value in the enum table e ("unknown" if none). */
const char *conf_enum_name(const struct conf_enum *e, int value);

/* An integer or enum field stored by width (4 or 8 bytes). */
uint64_t conf_load_uint(const void *field, size_t size);

#endif
