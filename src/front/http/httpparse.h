/* httpparse: the HTTP/1.x request parser behind the HTTP API, as pure
 * functions over bytes (no sockets, no allocation): a request head, a chunked
 * body (decoded in place, resumable), and a query parameter. Any thread; the
 * libevent glue is http_conn.c, the routing http_api.c. Pointers in the results point
 * into the caller's buffer and live as long as it does. */
#ifndef BLOOMGATE_HTTPPARSE_H
#define BLOOMGATE_HTTPPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum httpparse_method {
    HTTPPARSE_GET,
    HTTPPARSE_HEAD,
    HTTPPARSE_POST,
    HTTPPARSE_PUT,    /* PUT /v1/filters/{name}: create */
    HTTPPARSE_DELETE, /* DELETE /v1/filters/{name}: drop */
    HTTPPARSE_OTHER /* any other token (PATCH, ...): the router answers 405 */
};

enum httpparse_status {
    HTTPPARSE_NEED_MORE, /* not complete yet: call again with more bytes */
    HTTPPARSE_OK,        /* complete; the result is filled in */
    HTTPPARSE_ERROR      /* malformed: *status (400, 431, 501, 505) and the reason */
};

/* A parsed request line and the headers the server acts on. */
struct httpparse_head {
    enum httpparse_method method;
    const char *method_s; /* the method token as sent (for logs and 405s) */
    size_t method_len;
    const char *path; /* origin-form path: from the first '/' to '?' or the end (an
                         absolute-form target "http://host/p" gives "/p") */
    size_t path_len;
    const char *query; /* after '?', up to the end of the target (NULL: no '?') */
    size_t query_len;
    int minor;             /* HTTP/1.<minor> */
    bool keep_alive;       /* 1.1 unless "Connection: close"; 1.0 only with "keep-alive" */
    bool chunked;          /* Transfer-Encoding: chunked */
    bool has_length;       /* Content-Length was given */
    uint64_t content_length;
    bool expect_continue;  /* Expect: 100-continue */
    const char *auth;      /* Authorization's value, trimmed (NULL: absent) */
    size_t auth_len;
    bool json_type;        /* Content-Type: application/json (parameters aside) */
    size_t head_len;       /* bytes of the request line and headers, blank line included */
};

/* Parse the request head at buf[0..len). Lines end in CRLF or a bare LF.
 * Empty lines before the request line are skipped (RFC 9112 2.2). *scan is a
 * resume hint (0 on the first call for a request, kept between calls) so
 * that a head arriving a byte at a time is scanned once, not once per byte.
 * A head longer than max_head is an error (431) as soon as max_head bytes
 * have arrived without its end. Errors set *status and write the reason
 * into err: 400 malformed (bad request line, header without a colon, space
 * before the colon, obsolete line folding, bad or conflicting Content-Length,
 * both Content-Length and Transfer-Encoding), 431 too long, 501 a transfer
 * coding other than chunked, 505 a version other than HTTP/1.0 or 1.1. */
enum httpparse_status httpparse_head(const char *buf, size_t len, size_t max_head, size_t *scan,
                                     struct httpparse_head *h, int *status, char *err,
                                     size_t errlen);

/* Decoding a chunked body in place: the data of each chunk is moved down over
 * the chunk-size lines before it, so body bytes end up contiguous at the
 * start of the buffer. Zero this before the first call for a body. */
struct httpparse_chunked {
    size_t in;         /* raw bytes consumed so far */
    size_t out;        /* decoded body bytes so far (at buf[0..out)) */
    uint64_t left;     /* the chunk size being read, then the bytes left of its data */
    size_t line;       /* bytes of the size line or the trailers so far (bounded) */
    int phase;         /* where in the framing */
};

/* Continue decoding the chunked body at buf[0..len) (the bytes after the
 * head; buf is written to). HTTPPARSE_OK when the last chunk and the
 * trailers have been read: the body is buf[0..st->out) and the request's raw
 * body took st->in bytes of the input. More than max_body decoded bytes is an
 * error with status 413; a malformed size line or missing CRLF after a
 * chunk's data, 400. Trailer fields are read and ignored. */
enum httpparse_status httpparse_chunked(char *buf, size_t len, size_t max_body,
                                        struct httpparse_chunked *st, int *status, char *err,
                                        size_t errlen);

/* Find parameter `name` in query[0..qlen) and percent-decode its value into
 * out, which has room for qlen bytes: %XX is a byte (%00 a NUL), '+' a space.
 * Keys are decoded too. 1 found (*outlen bytes), 0 absent, -1 malformed (a
 * bad %-escape, or name given twice) with the reason in err. */
int httpparse_query(const char *query, size_t qlen, const char *name, char *out, size_t *outlen,
                    char *err, size_t errlen);

/* One parameter a caller wants from a query string, and what was found. */
struct httpparse_param {
    const char *name;  /* in: the key (decoded), shorter than 64 bytes */
    const char *value; /* out: its decoded value, in the caller's out buffer (NULL: absent) */
    size_t len;
};

/* httpparse_query for several names in one pass: each value found is
 * decoded into out (room for qlen bytes: together they never take more),
 * one after the other. 0 (each param's value set or NULL), or -1 malformed
 * (a bad %-escape in any key or in a wanted value, or a wanted name given
 * twice) with the reason in err. */
int httpparse_query_params(const char *query, size_t qlen, struct httpparse_param *params, size_t n,
                           char *out, char *err, size_t errlen);

/* Percent-decode s[0..len) into out (room for len bytes); '+' is a space when
 * plus_space. The decoded length, or -1 on a bad escape. */
long httpparse_pct_decode(const char *s, size_t len, char *out, bool plus_space);

/* Whether s[0..len) is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
bool httpparse_utf8_valid(const char *s, size_t len);

#endif
