/* conf_table: the directive table shared by the parser (conf.c) and what
 * compares configurations on reload (conf_file.c). Internal to src/store;
 * read-only data, any thread. */
#ifndef BLOOMGATE_CONF_TABLE_H
#define BLOOMGATE_CONF_TABLE_H

#include <stddef.h>
#include <stdint.h>

enum conf_type {
    T_INT,    /* unsigned decimal */
    T_SIZE,   /* unsigned decimal, optional binary suffix K/KiB/M/MiB/G/GiB */
    T_DOUBLE, /* decimal or exponent notation; no hex, inf or nan */
    T_STRING, /* min and max bound the length in bytes */
    T_PATH,   /* a relative path is resolved against the config's directory */
    T_ENUM,   /* one of enums[] */
    T_ADDRS,  /* appends a struct conf_addr to the array; its size_t count is at count_offset */
};

enum conf_scope {
    SCOPE_GLOBAL, /* field of struct conf */
    SCOPE_FILTER, /* field of struct conf_filter, inside `filter NAME { }` */
};

#define F_REPEAT 1u /* may be given more than once: the list types */
#define F_RELOAD 2u /* may change on SIGHUP without a restart */
#define F_OFF 4u    /* the value "off" sets the bool at off_offset */

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
    size_t count_offset;           /* T_ADDRS: the size_t count in struct conf */
    size_t off_offset;             /* F_OFF: the bool set by "off" */
    unsigned flags;                /* F_* */
};

extern const struct directive conf_directives[]; /* every directive the file may hold */
extern const size_t conf_n_directives;
extern const struct conf_enum conf_log_levels[], conf_layouts[], conf_fsyncs[], conf_key_kinds[];

/* An integer or enum field stored by width (4 or 8 bytes). */
uint64_t conf_load_uint(const void *field, size_t size);

#endif
