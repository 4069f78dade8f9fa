/* tcptable: Postfix's tcp_table(5) lookup protocol, parsed and formatted
 * over bytes: `get SP key NL` and `put SP key SP value NL` requests, `200`,
 * `400` and `500` replies, %XX encoding both ways. Pure (no libevent, no
 * allocation); any thread. tcptable_conn.c is the glue. */
#ifndef BLOOMGATE_TCPTABLE_H
#define BLOOMGATE_TCPTABLE_H

#include <stdbool.h>
#include <stddef.h>

#define TCPT_REPLY_MAX 4096 /* a reply line, newline included (tcp_table(5)) */

enum tcpt_status {
    TCPT_NEED_MORE, /* no newline yet: read more (the caller bounds the line) */
    TCPT_REQUEST,   /* a request, decoded into the caller's buffer */
    TCPT_ERROR,     /* a bad line, consumed: answer 400 with the reason, go on */
};

enum tcpt_cmd { TCPT_GET, TCPT_PUT };

struct tcpt_request {
    enum tcpt_cmd cmd;
    const char *key; /* decoded, in the caller's buffer; may hold any byte */
    size_t key_len;
    const char *value; /* put: decoded, after the key in the buffer */
    size_t value_len;
};

/* Parse the first line of in[0..len) (LF-terminated; a CR before the LF is
 * dropped, as Postfix's own server does not send one). *used is set to the
 * bytes of the line, LF included, for TCPT_REQUEST and TCPT_ERROR. Keys and
 * values are %-decoded into buf (cap bytes; a decoded string is never longer
 * than its encoding, so a buffer as long as the line always fits); a key
 * longer than max_key bytes is an error. On TCPT_ERROR, err holds the reason. */
enum tcpt_status tcpt_parse(const char *in, size_t len, size_t max_key, char *buf, size_t cap,
                            struct tcpt_request *r, size_t *used, char *err, size_t errlen);

/* Write `CODE SP text NL` into out (at least TCPT_REPLY_MAX bytes), text
 * %XX-encoded as the protocol requires (%, whitespace, control and non-ASCII
 * bytes), cut at a whole character so that the line fits TCPT_REPLY_MAX.
 * Returns the length written. */
size_t tcpt_reply(int code, const char *text, size_t len, char *out);

#endif
