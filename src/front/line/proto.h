/* proto: the line protocol (docs/protocol.md) as pure functions over bytes. It
 * splits a connection's input into requests, validates them and formats replies;
 * it never touches a socket, never allocates and keeps no state of its own, so
 * any thread may call any function here, and the tests need no server. */
#ifndef BLOOMGATE_PROTO_H
#define BLOOMGATE_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "front/errcodes.h"
#include "front/line/proto_verbs.h"

/* The verbs, PROTO_PING ... PROTO_REMOVE, in proto_verbs.h's order. */
/* clang-format off */
#define PROTO_CMD_ENUM_(sym, ...) PROTO_##sym,
enum proto_cmd {
    PROTO_VERBS(PROTO_CMD_ENUM_)
    PROTO_CMD_COUNT_ /* not a verb: one past the last */
};
#undef PROTO_CMD_ENUM_
/* clang-format on */

/* The error codes of `ERR <code> <message>`, defined once so the enum and the
 * wire names cannot drift. Some are only ever raised by the server (auth_*,
 * too_many_connections, internal, reload_failed); the parser raises the rest. */
#define PROTO_ERRORS(X)                                                                            \
    FRONT_ERRORS(X)                                                                                \
    X(LINE_TOO_LONG, "line_too_long")                                                              \
    X(BAD_REQUEST, "bad_request")                                                                  \
    X(TOO_MANY_CONNECTIONS, "too_many_connections")                                                \
    X(INTERNAL, "internal")                                                                        \
    X(RELOAD_FAILED, "reload_failed")                                                              \
    X(BAD_ITEM, "bad_item")                                                                        \
    X(WRONG_KIND, "wrong_kind")                                                                    \
    X(TEXT_TOO_LONG, "text_too_long")

/* clang-format off */
#define PROTO_ERR_ENUM_(sym, name) PROTO_ERR_##sym,
enum proto_err {
    PROTO_ERR_NONE = 0,
    PROTO_ERRORS(PROTO_ERR_ENUM_)
    PROTO_ERR_COUNT_ /* not a code: one past the last */
};
#undef PROTO_ERR_ENUM_
/* clang-format on */

enum proto_status {
    PROTO_NEED_MORE, /* no complete line yet, and what there is fits max_line */
    PROTO_EMPTY,     /* a blank line was consumed; it gets no reply */
    PROTO_REQUEST,   /* a valid request; reply to it */
    PROTO_ERROR,     /* a bad request was consumed; reply with req->err, go on */
    PROTO_FATAL,     /* line_too_long: reply with req->err, then close */
};

/* Per-server limits. A line may hold max_line bytes before its LF (a CR before
 * the LF counts), so a connection needs at most max_line + 1 bytes of input
 * buffer to hold any legal request. */
struct proto_limits {
    size_t max_line;  /* bytes of a line, excluding the LF */
    size_t max_item;  /* bytes of one item */
    size_t max_items; /* items in one CHECK/MCHECK/ADD/MADD; capacity of items_storage */
};

/* A slice of the caller's input buffer; never NUL-terminated. */
struct proto_token {
    const char *p;
    size_t len;
};

#define PROTO_ERRMSG_SIZE 160

/* Context words in one request, at most (more is a bad_request). */
#define PROTO_CTX_MAX 64

/* A context word (`type=T`, `from=URL`, `method=M`) of a lookup, and the
 * first item it applies to: CHECK's and MATCH's follow their one item (the
 * token after the filter is the item, whatever it looks like) and apply
 * to it; MCHECK's apply to the items after them,
 * up to the next word of the same key. The parser checks only the key;
 * the value is the front's to read (adblock_context_word). */
struct proto_ctx_word {
    struct proto_token word;
    size_t from_item;
};

struct proto_request {
    enum proto_cmd cmd;             /* valid on PROTO_REQUEST */
    struct proto_token filter;      /* CHECK/MCHECK/ADD/MADD/MATCH, and INFO if has_filter */
    struct proto_token arg;         /* AUTH's token; SCAN's text */
    struct proto_token *items;      /* items_storage; n_items used (CHECK/ADD/MATCH: exactly 1) */
    size_t n_items;                 /* 0 for commands without items */
    struct proto_ctx_word ctx[PROTO_CTX_MAX]; /* the lookups' context words, in order */
    size_t n_ctx;
    int has_filter;                 /* 1 if filter is set */
    enum proto_err err;             /* PROTO_ERR_NONE unless PROTO_ERROR/PROTO_FATAL */
    char errmsg[PROTO_ERRMSG_SIZE]; /* human text for the ERR line; printable ASCII */
};

/* The longest word proto_format_bools is given (REMOVED) plus its separator: a
 * reply to n items needs at most PROTO_BOOLS_CAP(n) bytes. */
#define PROTO_BOOLS_CAP(n) ((n)*8 + 1)

/* Find and parse the next request at the start of buf[0..len).
 *
 * items_storage must hold lim->max_items tokens; it is one array per connection
 * or worker, reused for every request, and req->items points into it. Tokens
 * point into buf, so they stay valid until the caller drains or moves buf.
 *
 * *consumed is the number of bytes to drain from the front of buf: through the
 * LF for PROTO_EMPTY, PROTO_REQUEST and PROTO_ERROR; 0 for PROTO_NEED_MORE and
 * PROTO_FATAL. PROTO_FATAL is sticky (calling again returns it again), so the
 * caller must not parse further; it replies req->err and closes.
 *
 * scanned (may be NULL) is a resume hint for a line that arrives in pieces: it
 * holds how many bytes at the front of buf are already known to hold no LF.
 * Start it at 0 for a new connection and pass the same variable on every call;
 * proto_next sets it to len on PROTO_NEED_MORE and to 0 otherwise (the next line
 * starts after the drained bytes). With it, a max_line line delivered one byte
 * at a time costs O(max_line) in all; without it, each call rescans from 0.
 * It stays right if the caller moves the unconsumed bytes (it is an offset from
 * buf), but not if the caller changes them. */
enum proto_status proto_next(const char *buf, size_t len, const struct proto_limits *lim,
                             struct proto_request *req, struct proto_token *items_storage,
                             size_t *consumed, size_t *scanned);

/* "unknown_command" etc.; "none" for PROTO_ERR_NONE, "internal" if out of range. */
const char *proto_err_name(enum proto_err err);

/* "PING", "CHECK", ...; the canonical upper-case spelling. */
const char *proto_cmd_name(enum proto_cmd cmd);

/* 1 if p[0..len) is a filter name (base/fname.h), else 0. Whether such a
 * filter exists is for the server to say. */
int proto_valid_filter_name(const char *p, size_t len);

/* Write `ERR <code> <msg>\n` (or `ERR <code>\n` if msg is NULL or empty) at out.
 * msg is made one printable line: CR, LF and TAB become spaces, other control
 * bytes '?'; bytes >= 0x80 pass (a path in a reload error may be UTF-8).
 * Returns the bytes the reply needs; if that exceeds cap, nothing is written.
 * No NUL is written. */
size_t proto_format_error(char *out, size_t cap, enum proto_err err, const char *msg);

/* Write v[0..n) as `yes`/`no` words separated by single spaces, then LF (n = 0
 * gives a bare LF). Returns the bytes needed; if that exceeds cap, nothing is
 * written. For YES/NO and NEW/EXISTS, PROTO_BOOLS_CAP(n) always suffices.
 * Bytes of out past the reply but within cap may be overwritten: with 8 to
 * spare, words shorter than 8 bytes are written a padded word at a time. */
size_t proto_format_bools(char *out, size_t cap, const bool *v, size_t n, const char *yes,
                          const char *no);

#endif
