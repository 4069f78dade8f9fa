/* respparse: the Redis protocol (RESP2, docs/resp.md) as pure functions over
 * bytes: a request in the multibulk form clients send (`*N` then N `$len`
 * bulk strings) or as an inline line (what a person types into nc), and the
 * replies (integers, arrays, bulk and simple strings, errors). No socket, no
 * allocation, no state of its own: any thread may call it, tests need no
 * server. Hostile framing (negative or huge lengths, nested arrays, a frame
 * that never ends) is refused within the caller's limits, never buffered. */
#ifndef BLOOMGATE_RESPPARSE_H
#define BLOOMGATE_RESPPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "front/errcodes.h"

/* The error codes, defined once so the enum and the wire names (for the
 * metrics) cannot drift. The parser raises PROTOCOL (the framing: always
 * fatal) and TOO_MANY_ITEMS; the glue raises the rest. */
#define RESP_ERRORS(X)                                                                             \
    FRONT_ERRORS(X)                                                                                \
    X(PROTOCOL, "protocol")                                                                        \
    X(BAD_ARGUMENT, "bad_argument")                                                                \
    X(TOO_MANY_CONNECTIONS, "too_many_connections")                                                \
    X(INTERNAL, "internal")                                                                        \
    X(BAD_ITEM, "bad_item")                                                                        \
    X(WRONG_KIND, "wrong_kind")

/* clang-format off */
#define RESP_ERR_ENUM_(sym, name) RESP_ERR_##sym,
enum resp_err {
    RESP_ERR_NONE = 0,
    RESP_ERRORS(RESP_ERR_ENUM_)
    RESP_ERR_COUNT_ /* not a code: one past the last */
};
#undef RESP_ERR_ENUM_
/* clang-format on */

enum resp_status {
    RESP_NEED_MORE, /* no complete request yet, and what there is fits max_frame */
    RESP_EMPTY,     /* an empty request (a blank inline line, `*0`, `*-1`) was consumed: no reply */
    RESP_REQUEST,   /* a request; reply to it */
    RESP_ERROR,     /* a request over max_args was consumed whole: reply with req->err, go on */
    RESP_FATAL,     /* bad framing: reply with req->err, then close */
};

/* Per-server limits. */
struct resp_limits {
    size_t max_inline; /* bytes of an inline line before its LF (the line protocol's max_line) */
    size_t max_bulk;   /* bytes of one bulk string; more is a framing error (fatal) */
    size_t max_args;   /* arguments stored; capacity of the caller's storage */
    size_t max_frame;  /* bytes of one multibulk request, framing included */
};

/* Multibulk counts above this are refused as framing, whatever the limits
 * (Redis refuses more than 1024 * 1024 too). */
#define RESP_MAX_MULTIBULK (1024 * 1024)

/* A slice of the caller's input buffer; never NUL-terminated. */
struct resp_arg {
    const char *p;
    size_t len;
};

#define RESP_ERRMSG_SIZE 160

struct resp_request {
    struct resp_arg *argv;          /* the caller's storage; argc used */
    size_t argc;                    /* arguments (on RESP_REQUEST; at least 1) */
    bool is_inline;                 /* it came as an inline line */
    enum resp_err err;              /* RESP_ERR_NONE unless RESP_ERROR/RESP_FATAL */
    char errmsg[RESP_ERRMSG_SIZE];  /* the error's text, printable ASCII */
};

/* Where a multibulk request arriving in pieces was left: a resume hint, so a
 * frame of N arguments read in many pieces is walked once, not once per read.
 * Zero it for a new connection and pass the same one on every call;
 * resp_next zeroes it once a request is complete. It is an offset from buf:
 * the caller may move the unconsumed bytes, but not change them. */
struct resp_scan {
    size_t pos;   /* bytes of the frame known well formed (0: nothing known) */
    size_t n;     /* arguments the frame declares */
    size_t done;  /* of which complete before pos */
};

/* Find and parse the next request at the start of buf[0..len).
 *
 * storage must hold lim->max_args arguments; req->argv points to it, and each
 * argument into buf, so they stay valid until the caller drains or moves buf.
 * An inline argument in quotes is unescaped in place (it only ever shrinks),
 * which is why buf is not const; bytes outside the request are never written.
 *
 * *consumed is what to drain from the front of buf: the whole request for
 * RESP_EMPTY, RESP_REQUEST and RESP_ERROR; 0 for RESP_NEED_MORE and
 * RESP_FATAL. RESP_FATAL is sticky: the caller replies req->err and closes. */
enum resp_status resp_next(char *buf, size_t len, const struct resp_limits *lim,
                           struct resp_request *req, struct resp_arg *storage, size_t *consumed,
                           struct resp_scan *scan);

/* "unknown_command" etc.; "none" for RESP_ERR_NONE, "internal" if out of range. */
const char *resp_err_name(enum resp_err err);

/* Whether arg is word, ASCII case-insensitively (command names). */
bool resp_arg_is(const struct resp_arg *arg, const char *word);

/* The options of BF.RESERVE (insert false, read from argv[4]: the error rate
 * and capacity are argv[2] and argv[3], which the caller puts in error and
 * capacity first) and BF.INSERT (insert true, from argv[2]: [CAPACITY c]
 * [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item...), checked as
 * RedisBloom checks them: capacity an integer of at least 1, the error rate
 * in (0, 1), EXPANSION an integer in [1, 32768] and not with NONSCALING;
 * BF.INSERT needs ITEMS and an item after it. */
struct resp_bf_opts {
    const struct resp_arg *capacity, *error; /* NULL: not given */
    long expansion;                          /* 0: not given */
    bool nonscaling, nocreate;
    size_t items; /* BF.INSERT: the index of its first item */
};
/* 0, or -1 with the error's code and its message as RedisBloom words it
 * (after `-ERR `) in msg. Pure; any thread. */
int resp_bf_opts_parse(const struct resp_arg *argv, size_t argc, bool insert,
                       struct resp_bf_opts *o, enum resp_err *code, char *msg, size_t msglen);

/* Whether s[0..slen) matches the glob pattern p[0..plen), as Redis's KEYS,
 * SCAN MATCH and PSUBSCRIBE read one (util.c stringmatchlen): `*` any run of
 * bytes, `?` one byte, `[abc]`, `[^abc]`, `[a-z]` one byte of a set (an
 * unclosed `[` ends at the pattern's end), `\x` the byte x. Case-sensitive.
 * Linear in plen * slen whatever the pattern (one backtrack point, the last
 * `*`), where Redis's recursion can take exponential time. */
bool resp_glob(const char *p, size_t plen, const char *s, size_t slen);

/* ---- replies ----
 * Each writes at out and returns the bytes the reply needs; if that exceeds
 * cap, nothing is written. No NUL is written. */

/* `-<prefix> <msg>\r\n`: msg made one printable line (CR, LF, other control
 * bytes become spaces or '?'). prefix is Redis's error word: ERR, NOAUTH,
 * WRONGPASS, NOPROTO. */
size_t resp_format_error(char *out, size_t cap, const char *prefix, const char *msg);
/* `:<v>\r\n` */
size_t resp_format_int(char *out, size_t cap, int64_t v);
/* `*<n>\r\n` (or `$<n>\r\n` with c = '$'): an array's or a bulk's header. */
size_t resp_format_header(char *out, size_t cap, char c, int64_t n);
/* `$<len>\r\n<bytes>\r\n` */
size_t resp_format_bulk(char *out, size_t cap, const void *p, size_t len);
/* `+<s>\r\n`; s holds no CR or LF. */
size_t resp_format_simple(char *out, size_t cap, const char *s);
/* An array of n integers 0 or 1: what BF.MEXISTS and BF.MADD answer. */
#define RESP_BOOLS_CAP(n) (16 + (n)*4)
size_t resp_format_bools(char *out, size_t cap, const bool *v, size_t n);

#endif
