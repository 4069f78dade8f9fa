/* conf: the configuration file, parsed from text into a plain struct conf. A pure
 * parser: no sockets, no logging, no globals, so any thread may call it (the main
 * thread at start-up, the reload path on SIGHUP, off to the side of the running
 * state). Every error is written as "PATH:LINE: reason" into the caller's buffer. */
#ifndef BLOOMGATE_CONF_H
#define BLOOMGATE_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "store/addr.h"

#define CONF_MAX_FILE_BYTES (1u << 20) /* conf_load refuses anything larger */
#define CONF_NAME_MAX 64               /* filter names: [A-Za-z0-9_.-]{1,64} */

enum conf_log_level {
    CONF_LOG_DEBUG,
    CONF_LOG_INFO,
    CONF_LOG_WARN,
    CONF_LOG_ERROR,
};

/* Same values as enum filter_layout (checked in conf.c), so the daemon may cast;
 * kept separate so that this header does not drag in the filter and xxHash. */
enum conf_layout {
    CONF_LAYOUT_BLOCKED = 1, /* FILTER_BLOCKED */
    CONF_LAYOUT_CLASSIC = 2, /* FILTER_CLASSIC */
};

/* A filter's key kind as the config states it. CONF_KEYS_FILE (not given)
 * takes whatever the file says; any other must agree with the file's header
 * (loader.c checks). Value - 1 is enum filter_keys (checked in conf.c). */
enum conf_keys {
    CONF_KEYS_FILE = 0,  /* not given: the file decides; an empty filter is exact */
    CONF_KEYS_EXACT = 1, /* FILTER_KEYS_EXACT + 1 */
    CONF_KEYS_HOST = 2,  /* FILTER_KEYS_HOST + 1 */
    CONF_KEYS_URL = 3,   /* FILTER_KEYS_URL + 1 */
};

enum conf_fsync {
    CONF_FSYNC_ALWAYS,   /* fsync the journal after every write */
    CONF_FSYNC_EVERYSEC, /* at most a second of adds lost on power failure */
    CONF_FSYNC_NO,       /* leave it to the kernel */
};

/* One `filter NAME { ... }` block. */
struct conf_filter {
    char *name;              /* [A-Za-z0-9_.-]{1,64}, unique in the file */
    unsigned line;           /* line of `filter NAME {`, for the daemon's messages */
    char *file;              /* prebuilt filter file, absolute; NULL if not given */
    uint64_t capacity;       /* items for a filter created empty; 0 if not given */
    double fpr;              /* target false-positive rate at capacity */
    enum conf_layout layout; /* layout of a filter created empty */
    enum conf_keys keys;     /* what the file's keys must be; FILE: whatever they are */
    char *journal;           /* absolute path of the ADD journal; NULL when off */
    bool journal_off;        /* "journal off" was given */
    enum conf_fsync fsync;   /* when the journal is flushed to disk */
    char *allow;             /* absolute path of the allow-list (exceptions); NULL if none */
};

struct conf {
    /* Network. None of these may change on reload. */
    struct conf_addr *listen; /* line-protocol listeners; never empty */
    size_t n_listen;
    struct conf_addr *http_listen; /* HTTP listeners; empty when http_off */
    size_t n_http_listen;
    bool http_off;    /* "http_listen off" */
    unsigned threads; /* worker threads; 0 = one per CPU (the daemon resolves) */
    char *user;       /* user to switch to after binding; NULL: stay */
    char *pidfile;    /* absolute; NULL: write none */

    /* Reloadable. */
    char *admin_token; /* secret for admin commands; NULL if unset */
    enum conf_log_level log_level;

    /* Limits, all reloadable but max_items. Sizes in bytes, times in seconds. */
    size_t max_line;           /* longest protocol line */
    size_t max_item;           /* longest item; always < max_line */
    unsigned max_items;        /* items in one request; restart-only (sizes worker scratch) */
    unsigned max_connections;  /* open client connections, all listeners together */
    unsigned idle_timeout;     /* close a silent connection after this; 0 = never */
    size_t max_output;         /* pending output at which we stop reading a connection */
    unsigned shutdown_timeout; /* grace for connections to drain on shutdown */
    size_t http_max_body;      /* bytes of one HTTP request body (413 beyond) */
    size_t http_max_headers;   /* bytes of an HTTP request line + headers (431 beyond) */

    struct conf_filter *filters; /* in file order */
    size_t n_filters;

    char *path; /* the file as the caller named it; NULL if conf_parse got none */
    char *dir;  /* absolute directory relative paths were resolved against */
};

/* Parse a whole file's text (len bytes, need not be NUL-terminated). path names
 * the file in messages and its directory resolves relative paths; a relative
 * path is taken against the current directory, so the result holds only absolute
 * paths. path may be NULL (messages then say "(config)", paths resolve against
 * the current directory). NULL on failure with "PATH:LINE: reason" in err. */
struct conf *conf_parse(const char *text, size_t len, const char *path, char *err, size_t errlen);

/* Read path (at most CONF_MAX_FILE_BYTES) and conf_parse it. */
struct conf *conf_load(const char *path, char *err, size_t errlen);

void conf_free(struct conf *conf);

/* The filter called name, or NULL. */
const struct conf_filter *conf_find_filter(const struct conf *conf, const char *name);

/* Whether s[0..len) is a valid filter name: 1 to 64 of [A-Za-z0-9_.-]. */
int conf_is_valid_name(const char *s, size_t len);

/* 0 if next may replace cur on SIGHUP without a restart; -1 naming the first
 * directive marked not reloadable whose value differs (filters are all
 * reloadable: adding, dropping or changing them is the reload's job). */
int conf_check_reload(const struct conf *cur, const struct conf *next, char *err, size_t errlen);

/* A reload keeps what needs a restart: for each directive marked not
 * reloadable whose value differs, next gets cur's value back and warn(ctx,
 * "NAME: a change needs a restart; still VALUE") is called. 0, or -1 when
 * out of memory (next is then half updated: free it). */
typedef void conf_warn_fn(void *ctx, const char *msg);
int conf_keep_running(struct conf *next, const struct conf *cur, conf_warn_fn *warn, void *ctx);

const char *conf_log_level_name(enum conf_log_level level);
const char *conf_layout_name(enum conf_layout layout);
const char *conf_fsync_name(enum conf_fsync fsync);
const char *conf_keys_name(enum conf_keys keys);

#endif
