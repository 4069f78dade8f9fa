/* helper_int: what bloomgate-squid's loop (helper.c) and its Squid side
 * (helper_squid.c) share: the request, check and connection state, and the
 * few calls each makes into the other. The helper's one thread only. */
#ifndef BLOOMGATE_SQUID_HELPER_INT_H
#define BLOOMGATE_SQUID_HELPER_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "squid/helper.h"
#include "squid/squidproto.h"

#define LINE_MAX_IN 65536 /* longest request line from Squid */
#define ITEM_MAX 8192     /* longest item sent (the daemon's default max_item) */
#define BATCH_BYTES 32768 /* longest MCHECK line (the daemon's max_line is 64 KiB) */
#define DAEMON_LINE_MAX 1048576
#define BACKOFF_MIN 0.1
#define BACKOFF_MAX 1.0
#define CTX_WORDS_MAX 16 /* context words the daemon takes in one request (PROTO_CTX_MAX) */

/* The context words, by key: bit k of a request's ctx_mask is word k. */
enum { W_FROM, W_TYPE, W_METHOD, W_KEYS };

struct req {
    struct req *next;
    bool has_channel;
    char channel[SQUIDPROTO_CHANNEL_MAX + 1];
    size_t n_items;
    char *item[SQUIDPROTO_VALUES_MAX]; /* escaped for the daemon, NUL-terminated */
    size_t item_len[SQUIDPROTO_VALUES_MAX];
    char *ctx_word[W_KEYS]; /* "from=...", "type=...", "method=..." (NULL: absent) */
    size_t ctx_len[W_KEYS];
    unsigned ctx_mask; /* which ctx_word are set */
    unsigned pending;  /* checks not yet answered */
    int hit_filter;    /* the first filter (by option order) that said YES; -1 */
    size_t hit_item;
    bool matching; /* a MATCH is queued or in flight */
    bool matched;  /* the MATCH was answered: decide even if it named nothing */
    bool err_item; /* a check failed for a reason of its own (bad item, ...) */
    bool err_down; /* a check failed because the daemon could not be reached */
    char err[256]; /* the first failure's reason */
    bool done;
    char reply[SQUIDPROTO_REPLY_MAX];
    size_t reply_len;
};

/* One check: a value of a request against a filter (or a MATCH). */
struct ref {
    struct req *r;
    size_t item;
    bool retried; /* went out once already on a connection that dropped */
};

struct refvec {
    struct ref *v;
    size_t n, cap;
};

enum sent_kind { SENT_MCHECK, SENT_MATCH };

/* A command in flight, in the order sent. */
struct sent {
    enum sent_kind kind;
    size_t filter;
    struct refvec refs;
    double at;
};

enum conn_state { C_DOWN, C_CONNECTING, C_UP };

struct helper {
    const struct helper_opts *o;
    struct req *head, *tail;                 /* requests in the order read */
    struct refvec queue[HELPER_FILTERS_MAX]; /* checks waiting per filter */
    struct refvec matchq;                    /* MATCHes waiting (ref.item: filter * 64 + item) */
    struct sent *sent;                       /* ring of commands in flight */
    size_t sent_head, sent_n, sent_cap;
    int fd;
    enum conn_state state;
    double connect_at; /* when the current connect began */
    double next_try;   /* no connect before this (backoff) */
    double backoff;
    bool logged_down;   /* "cannot connect" logged since the last success */
    char down_why[200]; /* why the daemon is unreachable, for messages */
    char *out;          /* bytes to send to the daemon */
    size_t out_len, out_off, out_cap;
    char *in; /* bytes received from the daemon */
    size_t in_len, in_cap;
    char *sq; /* bytes read from Squid */
    size_t sq_len, sq_cap;
    bool sq_skip; /* discarding the rest of an over-long line */
    bool sq_eof;
    size_t batch; /* current MCHECK size limit (halved on too_many_items) */
};

/* Allocation that cannot fail (exits on out of memory: the helper can do
 * nothing useful without it), a buffer grown to need bytes, a vector push. */
void *helper_xrealloc(void *p, size_t n);
void helper_grow(char **buf, size_t *cap, size_t need);
void helper_refvec_push(struct refvec *v, struct ref r);

/* Decide r with res and a printf-made message (helper.c). */
void helper_set_reply(struct req *r, enum squid_result res, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Squid's side (helper_squid.c): read and queue what Squid sent; write every
 * decided reply that may go (0, or -1 with err: Squid is gone); free one. */
void helper_squid_read(struct helper *h);
int helper_squid_write(struct helper *h, char *err, size_t errlen);
void helper_req_free(struct req *r);

#endif
