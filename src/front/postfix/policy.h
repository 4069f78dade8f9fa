/* policy: Postfix's policy delegation protocol (SMTPD_POLICY_README) over
 * bytes: a request is `name=value` lines ended by an empty line, the reply
 * `action=...` and an empty line; the connection stays open for the next.
 * The attributes a policy block can check are picked out, in any order,
 * every other ignored. Pure (no libevent, no allocation); any thread.
 * policy_conn.c is the glue. */
#ifndef BLOOMGATE_POLICY_H
#define BLOOMGATE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#define POLICY_REPLY_MAX 1100 /* "action=" + an action of CONF_POLICY_ACTION_MAX, substituted */

/* The attributes a `check` may name, in conf.c's order. */
enum policy_attr {
    POLICY_CLIENT_ADDRESS,
    POLICY_CLIENT_NAME,
    POLICY_REVERSE_CLIENT_NAME,
    POLICY_HELO_NAME,
    POLICY_SENDER,
    POLICY_RECIPIENT,
    POLICY_N_ATTRS
};

enum policy_status {
    POLICY_NEED_MORE, /* no empty line yet: read more (up to the caller's limit) */
    POLICY_REQUEST,   /* a whole request, consumed */
    POLICY_ERROR,     /* a line that is no attribute: the caller refuses and closes */
};

struct policy_value {
    const char *p; /* into the input; not NUL-terminated */
    size_t len;
    bool given;
};

struct policy_request {
    struct policy_value attr[POLICY_N_ATTRS]; /* a name given twice: the last */
    struct policy_value request;              /* `request=`, smtpd_access_policy from Postfix */
    unsigned n_lines;                         /* attribute lines, the known and the ignored */
};

/* Parse the request at the start of in[0..len): through its empty line
 * (*used bytes). Lines end in LF (a CR before it is dropped); a line is
 * NAME=VALUE with NAME of [a-z0-9_] (Postfix's names are lower case). */
enum policy_status policy_parse(const char *in, size_t len, struct policy_request *r, size_t *used,
                                char *err, size_t errlen);

/* Whether in[0..len) holds a whole request yet: the bytes through its empty
 * line, or 0. *scanned (0 at first, kept between calls on one connection,
 * reset when a request is consumed) saves rescanning what was seen, so a
 * request arriving a byte at a time costs linear time. */
size_t policy_complete(const char *in, size_t len, size_t *scanned);

/* The attribute called name, or -1 (conf's `check` names them). */
int policy_attr_parse(const char *name);
const char *policy_attr_name(enum policy_attr a);

/* The reply `action=TEXT\n\n` into out (POLICY_REPLY_MAX bytes) with
 * $filter, $attribute and $match in action replaced (another `$` is kept);
 * newlines and control bytes in what is substituted become spaces, and the
 * whole is cut to fit. Returns the length. */
size_t policy_reply(const char *action, const char *filter, const char *attribute,
                    const char *match, size_t match_len, char *out);

#endif
