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

#include "conf/addr.h"

#define CONF_MAX_FILE_BYTES (1u << 20) /* conf_load refuses anything larger */
#define CONF_MAX_CREATED 16000   /* max_filters' ceiling (store/registry.h has room) */
#define CONF_SCAN_MATCHES_MAX 10000  /* scan_max_matches at most: each worker's match array */
#define CONF_NAME_MAX 200              /* filter names: base/fname.h (conf.c asserts equal) */

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
    CONF_LAYOUT_COUNTING = 3, /* FILTER_COUNTING */
};

/* A filter's key kind as the config states it. CONF_KEYS_FILE (not given)
 * takes whatever the file says; any other must agree with the file's header
 * (loader.c checks). Value - 1 is enum filter_keys (checked in conf.c). */
enum conf_keys {
    CONF_KEYS_FILE = 0,  /* not given: the file decides; an empty filter is exact */
    CONF_KEYS_EXACT = 1, /* FILTER_KEYS_EXACT + 1 */
    CONF_KEYS_HOST = 2,  /* FILTER_KEYS_HOST + 1 */
    CONF_KEYS_URL = 3,   /* FILTER_KEYS_URL + 1 */
    CONF_KEYS_ADBLOCK = 4, /* FILTER_KEYS_ADBLOCK + 1: only from a file (build --format adblock) */
    CONF_KEYS_WORDS = 5,   /* FILTER_KEYS_WORDS + 1: only from a file (build --format words) */
};

/* A words filter's normalisation setting as the config states it: the file
 * holds the settings it was built with (they shape the compiled list), and
 * one given here must agree with them (store/loader.c checks). */
enum conf_words_flag {
    CONF_WORDS_FILE = 0, /* not given: whatever the file says */
    CONF_WORDS_OFF = 1,
    CONF_WORDS_ON = 2,
};

enum conf_fsync {
    CONF_FSYNC_ALWAYS,   /* fsync the journal after every write */
    CONF_FSYNC_EVERYSEC, /* at most a second of adds lost on power failure */
    CONF_FSYNC_NO,       /* leave it to the kernel */
};

/* One `filter NAME { ... }` block. */
struct conf_filter {
    char *name;              /* base/fname.h's rule, unique in the file */
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
    char *window;            /* `window` as written (24h); NULL: items never expire */
    int64_t window_ms;       /* the window parsed; 0 when none */
    unsigned slices;         /* the window's slices (bloom/ring.h) */
    unsigned growth;         /* 1: `growth on`, sub-filters added as it fills (bloom/grow.h) */
    uint64_t max_memory;     /* bytes a growing filter may take; 0: no bound */
    uint64_t delta_capacity; /* a fuse file's delta (bloom/fusedelta.h); 0: the default */
    unsigned context;        /* an adblock filter's lookup without context: CONF_CONTEXT_* */
    unsigned full;           /* an add past a fixed-size filter's capacity: CONF_FULL_* */
    /* A words filter's settings, checked against its file's (CONF_WORDS_*). */
    unsigned words_nfkc;       /* NFKC and case folding */
    unsigned words_zh;         /* traditional Chinese folded to simplified */
    unsigned words_whole_word; /* whole-word matching of space-separated scripts */
    char *words_skip;          /* the skip set, as words.md writes it; NULL: not given */
    unsigned words_delta_max;  /* entries ADD and ALLOW may add at run time (words/delta.h) */
    unsigned words_fold_after; /* seconds a change waits to be folded in (0: never) */
};

/* What the gate does with an add that would bring a fixed-size filter (no
 * growth, no window, no fuse file) past its capacity (core/gate.c). */
enum conf_full {
    CONF_FULL_ACCEPT = 0, /* take it: the false-positive rate rises above its target */
    CONF_FULL_REFUSE = 1, /* refuse it ("filter NAME is full"), as RedisBloom's NONSCALING */
};

/* What an adblock filter makes of a lookup that carries no context (no
 * type, page or method): the reference engine's reading, or any request. */
enum conf_context {
    CONF_CONTEXT_DOCUMENT = 0, /* a top-level document with no initiator (the default) */
    CONF_CONTEXT_ANY = 1,      /* blocked if a request of any type or party would be */
};

/* What every front block (dnsbl, tcp_table, policy) starts with. */
struct conf_front {
    unsigned line;          /* line of `KIND {` */
    struct conf_addr listen; /* required; len 0 until given */
};

/* `dnsbl { }`: a DNS blocklist zone (RFC 5782) over UDP and TCP. */
#define CONF_DNSBL_TXT_MAX 255 /* one TXT character-string */
struct conf_dnsbl {
    struct conf_front fr;
    char *zone;            /* lower case, no trailing dot, 1 to 200 bytes */
    char *filter;          /* an `exact` filter (IP zone) or a `host` one (domain zone) */
    unsigned filter_line;  /* for messages about the filter */
    char *answer;          /* the A record's text; default 127.0.0.2 */
    unsigned char answer_ip[4]; /* answer parsed: an address in 127.0.0.0/8 */
    char *txt;             /* the TXT record, `$` for the item; NULL: no TXT */
    unsigned ttl;          /* of every record, SOA minimum included */
    bool domain;           /* the zone lists domains (its filter's keys are host) */
};

/* `tcp_table { }`: Postfix's tcp_table(5) lookup protocol. */
#define CONF_TCP_FOUND_MAX 1000 /* %-encoded, three times that still fits a 4096-byte reply */
struct conf_tcp_table {
    struct conf_front fr;
    char *filter;         /* any key kind */
    unsigned filter_line;
    char *found;          /* the value of `200 VALUE` */
};

/* One `check ATTR FILTER` line of a policy block. */
struct conf_check {
    char *attr;    /* client_address, client_name, reverse_client_name, helo_name, sender, recipient */
    char *filter;
    unsigned line;
};

/* `policy { }`: Postfix's policy delegation (SMTPD_POLICY_README). */
#define CONF_POLICY_ACTION_MAX 500
struct conf_policy {
    struct conf_front fr;
    struct conf_check *checks; /* in file order: the first match decides */
    size_t n_checks;
    char *action; /* on a match; $filter, $attribute, $match substituted */
    char *def;    /* when nothing matched */
};

struct conf {
    /* Network. None of these may change on reload. */
    struct conf_addr *listen; /* line-protocol listeners; never empty */
    size_t n_listen;
    struct conf_addr *http_listen; /* HTTP listeners; empty when http_off */
    size_t n_http_listen;
    bool http_off;    /* "http_listen off" */
    struct conf_addr *resp_listen; /* Redis-protocol (RESP) listeners; none unless given */
    size_t n_resp_listen;
    struct conf_addr *bloomd_listen; /* bloomd text-protocol listeners; none unless given */
    size_t n_bloomd_listen;
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
    unsigned request_timeout;  /* a started request must arrive within this (+1 s per 64 KiB) */
    size_t max_buffered;       /* input buffers of all connections together; never 0 */
    size_t max_output;         /* pending output at which we stop reading a connection */
    unsigned shutdown_timeout; /* grace for connections to drain on shutdown */
    size_t http_max_body;      /* bytes of one HTTP request body (413 beyond) */
    size_t http_max_headers;   /* bytes of an HTTP request line + headers (431 beyond) */
    size_t scan_max_text;      /* bytes of one SCAN's text (a words filter) */
    unsigned scan_max_matches; /* matches one SCAN returns, at most (the rest: capped) */

    /* Filters created at run time (CREATE, BF.RESERVE, bloomd's create:
     * docs/created.md). state_dir is restart-only; the limits reload. */
    char *state_dir;            /* absolute; NULL: creating filters is refused */
    unsigned max_filters;       /* created filters served at once */
    uint64_t max_created_memory; /* bytes all created filters may take together */
    unsigned auto_create;       /* 1: RESP's BF.ADD/BF.MADD/BF.INSERT make a missing key */
    uint64_t checkpoint_bytes;  /* a created filter's journal past this is cut (0: only FLUSH) */

    struct conf_filter *filters; /* in file order */
    size_t n_filters;

    /* The mail fronts, in file order. Their listen addresses are restart-only;
     * the rest of a block reloads while the addresses stay the same. */
    struct conf_dnsbl *dnsbl;
    size_t n_dnsbl;
    struct conf_tcp_table *tcp_table;
    size_t n_tcp_table;
    struct conf_policy *policy;
    size_t n_policy;

    char *path; /* the file as the caller named it; NULL if conf_parse got none */
    char *dir;  /* absolute directory relative paths were resolved against */
};

/* Parse a whole file's text (len bytes, need not be NUL-terminated). path names
 * the file in messages and its directory resolves relative paths; a relative
 * path is taken against the current directory, so the result holds only absolute
 * paths. path may be NULL (messages then say "(config)", paths resolve against
 * the current directory). NULL on failure with "PATH:LINE: reason" in err. */
struct conf *conf_parse(const char *text, size_t len, const char *path, char *err, size_t errlen);

/* max_buffered's default on this machine (an eighth of physical memory, at
 * least 64 MiB). Any thread. */
size_t conf_default_max_buffered(void);
/* max_created_memory's default: a quarter of physical memory. Any thread. */
uint64_t conf_default_max_created_memory(void);

/* Read path (at most CONF_MAX_FILE_BYTES) and conf_parse it. */
struct conf *conf_load(const char *path, char *err, size_t errlen);

void conf_free(struct conf *conf);

/* The filter called name, or NULL. */
const struct conf_filter *conf_find_filter(const struct conf *conf, const char *name);

/* A filter block as config text, into buf: every option of a filter that
 * starts empty, its file if it has one (a checkpoint), its journal; what
 * conf_parse reads back to the same values. Its length, or -1 if len is
 * short. */
int conf_filter_text(const struct conf_filter *f, char *buf, size_t len);

/* Free what one filter block holds (not the struct itself). */
void conf_filter_clear(struct conf_filter *f);

/* Whether s[0..len) is a valid filter name (base/fname.h: FNAME_RULE). */
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
