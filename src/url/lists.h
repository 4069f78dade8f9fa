/* url/lists: line parsers for the list formats a filter of `url` or `host`
 * keys is built from (plain, hosts, Adblock Plus / uBlock Origin network
 * rules, one URL per line). One line in, one classification out: the keys it
 * yields, or why it was skipped or rejected, so the build tool can count every
 * kind and write rejects to a file. Pure, no allocation (IDN aside, see
 * url/canon.h); any thread; the caller owns the struct lists_line. */
#ifndef BLOOMGATE_URL_LISTS_H
#define BLOOMGATE_URL_LISTS_H

#include <stddef.h>

#include "url/canon.h"
#include "url/expr.h"

enum lists_format {
    LISTS_PLAIN,   /* one key per line, '#' comment lines */
    LISTS_HOSTS,   /* hosts(5): "0.0.0.0 name [name...] [# comment]" */
    LISTS_ADBLOCK, /* Adblock Plus / uBlock Origin network rules naming a host or URL */
    LISTS_URLS     /* one URL per line, '#' comment lines */
};

enum lists_class {
    LISTS_KEPT,    /* n >= 1 keys in e[] */
    LISTS_BLANK,   /* empty or white space only */
    LISTS_COMMENT, /* a comment or a header ("! ...", "[Adblock Plus 2.0]", "# ...") */
    LISTS_IGNORED, /* well-formed but names only what is never blocked (hosts: localhost) */
    LISTS_REJECTED /* cannot be represented: see reason */
};

/* Why a line was rejected. Each is distinct so that the counts say what a
 * list holds that exact matching cannot express. Keep lists_reason_name in
 * step. */
enum lists_reason {
    LISTS_OK = 0,
    LISTS_REJ_TOO_LONG,      /* longer than LISTS_LINE_MAX */
    LISTS_REJ_NUL,           /* a NUL byte */
    LISTS_REJ_CONTROL,       /* another control byte (not tab) */
    LISTS_REJ_BAD_URL,       /* the URL does not canonicalise (reason in why) */
    LISTS_REJ_BAD_HOST,      /* the host does not canonicalise (reason in why) */
    LISTS_REJ_PATH_FOR_HOST, /* names a path or query: a host key would block the whole host */
    LISTS_REJ_NO_ADDRESS,    /* hosts: the first field is not an IP address */
    LISTS_REJ_NO_NAME,       /* hosts: an address without names */
    LISTS_REJ_TOO_MANY,      /* more than LISTS_ENTRIES_MAX keys on one line */
    LISTS_REJ_EXCEPTION,     /* adblock: "@@" exception rule */
    LISTS_REJ_COSMETIC,      /* adblock: element hiding or scriptlet (##, #@#, #?#, #$#, ...) */
    LISTS_REJ_REGEX,         /* adblock: /regular expression/ */
    LISTS_REJ_WILDCARD,      /* adblock: '*' inside the pattern */
    LISTS_REJ_ANCHOR,        /* adblock: '|' anywhere but at the start or the end */
    LISTS_REJ_SEPARATOR,     /* adblock: '^' anywhere but at the end */
    LISTS_REJ_UNANCHORED,    /* adblock: a substring pattern that is not a host name */
    LISTS_REJ_EMPTY_PATTERN, /* adblock: nothing to match ("||", "||^", "|||") */
    LISTS_REJ_RESTRICTING,   /* adblock: an option that narrows the match (domain=, ~type) */
    LISTS_REJ_OPTION,        /* adblock: an option that changes the action or is unknown */
    LISTS_REASON_COUNT
};

/* The longest line accepted, in bytes, without its line end. */
#define LISTS_LINE_MAX URL_CANON_MAX

/* The most keys one line yields (a hosts line with many aliases). */
#define LISTS_ENTRIES_MAX 16

/* Room for the keys of one line: a URL expression or 16 escaped hosts. */
#define LISTS_BUF_MAX (URL_CANON_MAX + 1024)

struct lists_entry {
    const char *ptr; /* into struct lists_line's buf */
    size_t len;
};

/* The outcome of one line. */
struct lists_line {
    enum lists_class cls;
    enum lists_reason reason; /* LISTS_OK unless cls is LISTS_REJECTED */
    char why[160];            /* a short text for a rejected line, else "" */
    size_t n;                 /* keys in e[] (cls LISTS_KEPT) */
    struct lists_entry e[LISTS_ENTRIES_MAX];
    unsigned ignored_names; /* hosts: names never blocked (localhost, ip6-*, 0.0.0.0) */
    unsigned ignored_opts;  /* adblock: options that do not change what is matched */
    char buf[LISTS_BUF_MAX];
    struct url_canon work; /* scratch for canonicalisation */
};

/* Parse one line (without its line end; a trailing CR is trimmed with the
 * white space) of a list in format fmt for a filter of kind keys. What each
 * format yields per kind is in docs/url-matching.md: in short, a `url` key is
 * an exact expression "host/path[?query]" ("host/" for a whole host), a
 * `host` key a canonical host. Returns l->cls. */
enum lists_class lists_parse_line(enum lists_format fmt, enum url_kind kind, const char *line,
                                  size_t len, struct lists_line *l);

/* A stable short name for a reason ("wildcard", "cosmetic", ...) or a class
 * ("kept", "comment", ...), for counters and the rejects file. */
const char *lists_reason_name(enum lists_reason r);
const char *lists_class_name(enum lists_class c);

/* The format named s ("plain", "hosts", "adblock", "urls"): 0, or -1 with the
 * reason in err. For the configuration parser. */
int lists_format_parse(const char *s, enum lists_format *fmt, char *err, size_t errlen);

#endif
