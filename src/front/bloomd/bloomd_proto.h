/* bloomd_proto: bloomd's text protocol (github armon/bloomd, conn_handler.c;
 * docs/bloomd.md) as pure functions over bytes: a line split into its verb,
 * filter, keys or create options exactly as bloomd splits it, and bloomd's
 * replies formatted byte for byte. No socket, no allocation, no state of its
 * own: any thread may call it, tests need no server. A line over max_line is
 * refused (bloomd's buffers grow without bound; ours do not). */
#ifndef BLOOMGATE_BLOOMD_PROTO_H
#define BLOOMGATE_BLOOMD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the arguments after a verb are read (bloomd's handler of each). */
enum bloomd_args {
    BLOOMD_ARGS_KEY,    /* <filter> <key>: the key is the rest of the line, spaces and all */
    BLOOMD_ARGS_KEYS,   /* <filter> <key> [<key>...]: split on single spaces */
    BLOOMD_ARGS_FILTER, /* <filter>, nothing after it */
    BLOOMD_ARGS_OPT,    /* [<filter>]: flush */
    BLOOMD_ARGS_PREFIX, /* [<prefix>]: list */
    BLOOMD_ARGS_CREATE, /* <filter> [capacity=N] [prob=P] [in_memory=0|1] */
    BLOOMD_ARGS_TOKEN,  /* <token>: auth, bloomgate's own */
};

/* X(SYM, "word", "alias", args, glue...): bloomd's verbs in its order of
 * matching (determine_client_command), each with its one-letter alias or
 * NULL and how its arguments are read. The rest are bloomd.c's, designated
 * initializers of struct bloomd_verb_row: .run how the reply is made, .id
 * the command table's row it runs (BLOOMD_OWN: the front answers alone);
 * the parser never expands them. auth is bloomgate's: bloomd has no
 * credentials, and a client off loopback needs one to set. */
/* clang-format off */
#define BLOOMD_VERBS(X)                                                                            \
    X(CHECK, "check", "c", BLOOMD_ARGS_KEY, .run = verb_keys, .id = CMD_CHECK)                     \
    X(MULTI, "multi", "m", BLOOMD_ARGS_KEYS, .run = verb_keys, .id = CMD_CHECK)                    \
    X(SET, "set", "s", BLOOMD_ARGS_KEY, .run = verb_keys, .id = CMD_ADD)                           \
    X(BULK, "bulk", "b", BLOOMD_ARGS_KEYS, .run = verb_keys, .id = CMD_ADD)                        \
    X(LIST, "list", NULL, BLOOMD_ARGS_PREFIX, .run = verb_list, .id = CMD_INFO)                    \
    X(INFO, "info", NULL, BLOOMD_ARGS_FILTER, .run = verb_info, .id = CMD_INFO)                    \
    X(CREATE, "create", NULL, BLOOMD_ARGS_CREATE, .run = bloomd_admin, .id = BLOOMD_OWN)           \
    X(DROP, "drop", NULL, BLOOMD_ARGS_FILTER, .run = bloomd_admin, .id = BLOOMD_OWN)               \
    X(CLOSE, "close", NULL, BLOOMD_ARGS_FILTER, .run = bloomd_admin, .id = BLOOMD_OWN)             \
    X(CLEAR, "clear", NULL, BLOOMD_ARGS_FILTER, .run = bloomd_admin, .id = BLOOMD_OWN)             \
    X(FLUSH, "flush", NULL, BLOOMD_ARGS_OPT, .run = verb_flush, .id = BLOOMD_OWN)                  \
    X(AUTH, "auth", NULL, BLOOMD_ARGS_TOKEN, .run = verb_auth, .id = BLOOMD_OWN)
/* clang-format on */

/* clang-format off */
#define BLOOMD_VERB_ENUM_(sym, ...) BLOOMD_##sym,
enum bloomd_verb {
    BLOOMD_VERBS(BLOOMD_VERB_ENUM_)
    BLOOMD_VERB_COUNT_ /* not a verb: one past the last */
};
#undef BLOOMD_VERB_ENUM_
/* clang-format on */

enum bloomd_status {
    BLOOMD_NEED_MORE, /* no complete line yet, and what there is fits max_line */
    BLOOMD_REQUEST,   /* a request; answer it */
    BLOOMD_ERROR,     /* a bad request was consumed: answer `Client Error: <errmsg>`, go on */
    BLOOMD_FATAL,     /* a line over max_line: answer `Client Error: <errmsg>`, then close */
};

/* bloomd's own words for a bad request (handler_constants.c). */
#define BLOOMD_MSG_NOT_SUPPORTED "Command not supported"
#define BLOOMD_MSG_BAD_ARGS "Bad arguments"
#define BLOOMD_MSG_UNEXPECTED_ARGS "Unexpected arguments"
#define BLOOMD_MSG_FILTER_KEY_NEEDED "Must provide filter name and key"
#define BLOOMD_MSG_FILTER_NEEDED "Must provide filter name"
#define BLOOMD_MSG_BAD_FILTER_NAME "Bad filter name"

/* bloomd's replies, whole lines. */
#define BLOOMD_DONE "Done\n"
#define BLOOMD_EXISTS "Exists\n"
#define BLOOMD_NOT_EXIST "Filter does not exist\n"
#define BLOOMD_NOT_PROXIED "Filter is not proxied. Close it first.\n"
#define BLOOMD_DELETE_IN_PROGRESS "Delete in progress\n"
#define BLOOMD_INTERNAL "Internal Error\n"
#define BLOOMD_START "START\n"
#define BLOOMD_END "END\n"

/* bloomd's create defaults (its config.c DEFAULT_CONFIG) and bounds
 * (sane_initial_capacity, sane_default_probability, sane_in_memory). */
#define BLOOMD_DEFAULT_CAPACITY 100000
#define BLOOMD_DEFAULT_PROB 1e-4
#define BLOOMD_NAME_MAX 200

/* Per-server limits. */
struct bloomd_limits {
    size_t max_line; /* bytes of a line before its LF (a CR before the LF counts) */
    size_t max_keys; /* keys of one multi or bulk; capacity of the caller's storage */
};

/* A slice of the caller's input buffer; never NUL-terminated. */
struct bloomd_token {
    const char *p;
    size_t len;
};

#define BLOOMD_ERRMSG_SIZE 128

/* create's options, bloomd's defaults where the line gives none. */
struct bloomd_create {
    uint64_t capacity;                          /* capacity=, > 10000 */
    double prob;                                /* prob=, in (0, 0.1) */
    int in_memory;                              /* in_memory=, 0 or 1 */
    bool has_capacity, has_prob, has_in_memory; /* given on the line */
};

struct bloomd_request {
    enum bloomd_verb verb;           /* valid on BLOOMD_REQUEST */
    bool has_filter;                 /* filter is set (not for list, nor flush alone) */
    struct bloomd_token filter;      /* may be empty: bloomd then answers Filter does not exist */
    struct bloomd_token arg;         /* list's prefix (may be empty), auth's token */
    struct bloomd_token *keys;       /* the caller's storage; n_keys used */
    size_t n_keys;                   /* check and set: 1; multi and bulk: at least 1 */
    struct bloomd_create create;     /* create's options */
    char errmsg[BLOOMD_ERRMSG_SIZE]; /* BLOOMD_ERROR/FATAL: after "Client Error: " */
};

/* Find and parse the line at the start of buf[0..len).
 *
 * keys_storage must hold lim->max_keys tokens; req->keys points to it, and
 * every token into buf, so they stay valid until the caller drains buf.
 * *consumed is what to drain from the front of buf: through the LF for
 * BLOOMD_REQUEST and BLOOMD_ERROR; 0 for BLOOMD_NEED_MORE and BLOOMD_FATAL
 * (sticky: the caller answers and closes).
 *
 * scanned (may be NULL) is a resume hint for a line that arrives in pieces,
 * as proto_next's: start it at 0 for a new connection and pass the same
 * variable on every call. */
enum bloomd_status bloomd_next(const char *buf, size_t len, const struct bloomd_limits *lim,
                               struct bloomd_request *req, struct bloomd_token *keys_storage,
                               size_t *consumed, size_t *scanned);

/* "check", "multi", ...: the verb's full spelling. */
const char *bloomd_verb_name(enum bloomd_verb v);

/* Whether p[0..len) is a name bloomd's create accepts (^[^ \t\n\r]{1,200}$;
 * a NUL byte ends the name where bloomd's C strings would, so it is refused). */
bool bloomd_valid_name(const char *p, size_t len);

/* ---- replies ----
 * Each writes at out and returns the bytes the reply needs; if that exceeds
 * cap, nothing is written. No NUL is written. */

/* `Yes`/`No` words separated by single spaces, then LF: check, multi, set,
 * bulk. BLOOMD_BOOLS_CAP(n) always suffices. */
#define BLOOMD_BOOLS_CAP(n) ((n)*4 + 1)
size_t bloomd_format_bools(char *out, size_t cap, const bool *v, size_t n);

/* `Client Error: <msg>\n`, msg made one printable line. */
size_t bloomd_format_client_error(char *out, size_t cap, const char *msg);

/* One line of list: `<name> <prob> <bytes> <capacity> <size>\n`, prob as
 * C's %f (bloomd's list_filter_cb). */
size_t bloomd_format_list_line(char *out, size_t cap, const char *name, size_t name_len,
                               double prob, uint64_t bytes, uint64_t capacity, uint64_t size);

/* info's figures, bloomd's names (conn_handler.c info_filter_cb). */
struct bloomd_info {
    uint64_t capacity, check_hits, check_misses, page_ins, page_outs;
    uint64_t set_hits, set_misses, size, storage;
    int in_memory;
    double probability;
};
/* START, the 13 lines of info in bloomd's order, END. */
size_t bloomd_format_info(char *out, size_t cap, const struct bloomd_info *in);

#endif
