/* conn: the one client connection of every front end (buffers, one writev per
 * batch after its group commit, back-pressure at max_output, idle timeout, a
 * RELOAD answered later, lingering close), driven by a front's struct conn_ops.
 * Every call runs on the owning worker's thread. */
#ifndef BLOOMGATE_CONN_H
#define BLOOMGATE_CONN_H

#include <event2/util.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/stats.h"
#include "conf/conf.h"

struct conn;
struct evbuffer;
struct worker;

#define CONN_LINGER_S 2      /* a closing connection waits this long for the client's EOF */
#define CONN_LINGER_MAX_S 10 /* and no longer than this in all */

#define CONN_MIN_RATE 65536 /* bytes a second a long request must keep up: see conn_deadline */

enum conn_full { CONN_FULL_LIMIT, CONN_FULL_BUDGET };

/* What a front end tells the connection layer. */
struct conn_ops {
    const char *name;             /* "line", "http": for logs */
    enum stats_proto proto;       /* its counters and latency histogram */
    size_t priv_size;             /* its per-connection state, zeroed, at conn_priv(c) */
    const char *const *err_names; /* its error codes' wire names, for the metrics */
    unsigned n_err;
    /* Its per-worker state (scratch, reply buffers), made on the main thread
     * before the worker runs, freed after it stopped; NULL from new: no memory. */
    void *(*worker_new)(struct worker *w);
    void (*worker_free)(void *fw);
    /* Parse and answer every complete request at the start of c->in, in order,
     * and drop what was consumed; stop early when c->closing, c->wait, or (not
     * draining) when c->out holds max_output (then call conn_pause). Returns
     * how many requests it answered (the latency histogram counts them). */
    unsigned (*process)(struct conn *c, bool draining);
    /* The most input one request may need under cf. */
    size_t (*in_limit)(const struct conf *cf);
    /* The input buffer is at in_limit (or memory ran out: CONN_FULL_LIMIT), or
     * growing it would pass max_buffered, the daemon-wide budget for input
     * buffers (CONN_FULL_BUDGET), and no request is complete: answer and set
     * c->closing, or close. */
    void (*in_full)(struct conn *c, enum conn_full why);
    /* A started request did not arrive within request_timeout (see
     * conn_read_cb): answer and set c->closing, or close. */
    void (*request_timeout)(struct conn *c);
    /* A connection over max_connections, refused before it is read: write a
     * last word to fd (non-blocking; it is closed after), counted on s first. */
    void (*refuse)(evutil_socket_t fd, struct stats *s);
    /* Shutdown has begun (see conn_stop_default). */
    void (*stop)(struct conn *c);
};

/* A request answered later (RELOAD): holds its connection's place in the
 * reply order; outlives the connection if need be (then c is NULL). */
typedef void (*conn_wait_fn)(struct conn *c, json_t *report, const void *note);
struct conn_wait;

/* How a connection's end goes (a lingering close). */
struct conn_end {
    bool peer_eof;  /* the client shut its side down */
    bool lingering; /* our side is shut down; waiting for the client's */
    double until;   /* util_now() past which the lingering gives up */
};

struct conn {
    const struct conn_ops *ops;
    struct worker *w;
    void *fw; /* the front's per-worker state (ops->worker_new) */
    evutil_socket_t fd;
    size_t addr;       /* which of its front's addresses it came in on */
    struct event *rev; /* readable, with the idle timeout */
    struct event *wev; /* writable, while output is pending */
    bool wev_armed;    /* wev is added: event_del costs a locked call, so only then */
    char *in;          /* bytes received and not yet answered */
    size_t in_len, in_cap;
    bool in_more;           /* the last read filled in[]: the kernel may hold more */
    struct evbuffer *out;   /* replies not yet written */
    bool loopback;          /* peer on 127.0.0.0/8 or ::1 */
    bool paused;            /* reading stopped: too much unread output */
    bool closing;           /* close once out is written (QUIT, fatal error, EOF) */
    struct conn_end end;    /* how its end goes */
    struct conn_wait *wait; /* a request awaiting its answer: later requests wait */
    double req_since;       /* util_now() when the request in[0..in_len) began; 0: none */
    bool req_timer;         /* rev's timeout is that request's deadline, not idle_timeout */
    struct conn *prev, *next;
    char peer[64];
};

/* The front's per-connection state. */
static inline void *conn_priv(struct conn *c)
{
    return (char *)c + ((sizeof(struct conn) + 15) & ~(size_t)15);
}

/* Worker thread: set up fd (admitted already) on w for ops; false (fd closed,
 * the admission given back) when out of memory. */
bool conn_open(struct worker *w, const struct conn_ops *ops, void *fw, size_t addr,
               evutil_socket_t fd, const struct sockaddr *sa);
void conn_close(struct conn *c, const char *why);
/* Write what is pending (after the group commit); arm the write event for the
 * rest; linger once closing and all is written; resume a paused connection. May
 * close (and free) c. */
void conn_flush(struct conn *c);
/* The front's process saw max_output reached: stop reading until it drains. */
void conn_pause(struct conn *c);
/* Read again (with the idle timeout). */
void conn_arm_read(struct conn *c);
/* Drop the first n bytes of input; give a large buffer back when it empties. */
void conn_consume(struct conn *c, size_t n);
/* Shutdown as the line protocol wants it: read and answer what the client
 * has sent already (bounded by max_output), then close once written. */
void conn_stop_drain(struct conn *c);

/* Start a reload for c's request: reading stops, later requests wait; when
 * the reload is over answer(c, report, note) runs on this thread (report NULL
 * if the report was lost: the front must still answer), then the connection
 * goes on. note (at most 32 bytes) is copied. False (nothing started) when out
 * of memory or no reload hook: the front answers the error itself. */
bool conn_reload(struct conn *c, conn_wait_fn answer, const void *note, size_t note_len);

#endif
