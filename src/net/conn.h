/* conn: the one client connection of every front end (buffers, one writev per
 * batch after its group commit, back-pressure at max_output, the daemon-wide
 * budgets of buffered requests and unread replies, idle timeout, a RELOAD
 * answered later, lingering close), driven by a front's struct conn_ops, and
 * the services every front shares: the reply batch, checked output, the
 * max_output test, the request loop, the refusal over max_connections.
 * Every call runs on the owning worker's thread but conn_worker_new/free. */
#ifndef BLOOMGATE_CONN_H
#define BLOOMGATE_CONN_H

#include <event2/util.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/cmd.h"
#include "core/stats.h"
#include "conf/conf.h"

struct conn;
struct evbuffer;
struct worker;

/* Reading stops until the unread replies drain (conn_output_full). */
void conn_pause(struct conn *c);

#define CONN_LINGER_S 2      /* a closing connection waits this long for the client's EOF */
#define CONN_LINGER_MAX_S 10 /* and no longer than this in all */

#define CONN_MIN_RATE 65536 /* bytes a second a long request must keep up: see conn_deadline */

enum conn_full { CONN_FULL_LIMIT, CONN_FULL_BUDGET };

/* The part of a front's per-worker state that every front has, made by the
 * connection layer (conn_worker_new, main thread, before the worker runs):
 * a front's own per-worker struct starts with it, and c->fw points to it. */
struct conn_worker {
    struct worker *w;
    struct cmd_env env; /* the worker's view for the command table, proto = the front's */
    /* The reply batch: the replies of the connection being processed,
     * gathered here and handed to its evbuffer in one add (an add per reply
     * cost ~65 instructions, as much as a CHECK's parse of its item). Empty
     * outside ops->process, so it always belongs to the connection being
     * processed; whatever writes to c->out directly (conn_out_add) flushes
     * it first, which keeps replies in order. NULL for a front without one. */
    char *reply;
    size_t reply_cap, reply_len;
    size_t out_queued; /* bytes in c->out as of the last add (conn_output_full) */
};

/* What a front end tells the connection layer. */
struct conn_ops {
    const char *name;             /* "line", "http": for logs */
    enum stats_proto proto;       /* its counters and latency histogram */
    size_t priv_size;             /* its per-connection state, zeroed, at conn_priv(c) */
    const char *const *err_names; /* its error codes' wire names, for the metrics */
    unsigned n_err;
    /* Its per-worker state: worker_size bytes (at least a struct conn_worker,
     * which it starts with), zeroed, made and freed by the connection layer;
     * worker_init (optional; -1: no memory) makes the rest on the main thread
     * before the worker runs, worker_free (optional) frees that after it
     * stopped. reply_batch (optional) sizes the reply batch for a worker whose
     * scratch holds scratch_items items. */
    size_t worker_size;
    int (*worker_init)(struct conn_worker *cw);
    void (*worker_free)(struct conn_worker *cw);
    size_t (*reply_batch)(size_t scratch_items);
    /* Parse and answer every complete request at the start of c->in, in order,
     * and drop what was consumed; stop early when c->closing, c->wait, or when
     * conn_output_full says max_output is reached. Returns how many requests
     * it answered (the latency histogram counts them). */
    unsigned (*process)(struct conn *c, bool draining);
    /* The most input one request may need under cf. */
    size_t (*in_limit)(const struct conf *cf);
    /* The input buffer is at in_limit (or memory ran out: CONN_FULL_LIMIT), or
     * growing it would pass max_buffered, the daemon-wide budget for input
     * buffers (CONN_FULL_BUDGET), and no request is complete: the front's
     * last word (optional; it must not close c). The connection then closes
     * once that is written. */
    void (*in_full)(struct conn *c, enum conn_full why);
    /* A started request did not arrive within request_timeout (see
     * conn_read_cb): the same (optional; then the close). */
    void (*request_timeout)(struct conn *c);
    /* A connection over max_connections, refused before it is read
     * (conn_refuse): refuse (optional) counts it on s, then the refusal text
     * (optional; none: closed without a word) is written to it. */
    const char *refusal;
    void (*refuse)(struct stats *s);
    /* Shutdown has begun (see conn_stop_default). */
    void (*stop)(struct conn *c);
    /* The connection is closing (optional): free what the front allocated
     * for it beside its zeroed state (a transaction's queue). */
    void (*close)(struct conn *c);
};

/* A request answered later (RELOAD): holds its connection's place in the
 * reply order; outlives the connection if need be (then c is NULL). */
typedef void (*conn_wait_fn)(struct conn *c, json_t *report, const void *note);
struct conn_wait;
struct reload_op;

/* How a connection's end goes (a lingering close). */
struct conn_end {
    bool peer_eof;  /* the client shut its side down */
    bool lingering; /* our side is shut down; waiting for the client's */
    double until;   /* util_now() past which the lingering gives up */
};

struct conn {
    const struct conn_ops *ops;
    struct worker *w;
    void *fw; /* the front's per-worker state (struct conn_worker first) */
    evutil_socket_t fd;
    size_t addr;       /* which of its front's addresses it came in on */
    struct event *rev; /* readable, with the idle timeout */
    struct event *wev; /* writable, while output is pending */
    bool wev_armed;    /* wev is added: event_del costs a locked call, so only then */
    char *in;          /* bytes received and not yet answered */
    size_t in_len, in_cap;
    bool in_more;         /* the last read filled in[]: the kernel may hold more */
    struct evbuffer *out; /* replies not yet written */
    size_t out_charged;   /* of them, charged to the server's reply budget (conn_flush) */
    bool loopback;        /* peer on 127.0.0.0/8 or ::1 */
    /* The state, as flags; see enum conn_state for the combinations allowed. */
    bool paused;            /* reading stopped: too much unread output */
    bool closing;           /* close once out is written (QUIT, fatal error, EOF) */
    bool out_lost;          /* a reply was lost (out of memory, budget): close, write no more */
    struct conn_end end;    /* how its end goes */
    struct conn_wait *wait; /* a request awaiting its answer: later requests wait */
    double req_since;       /* util_now() when the request in[0..in_len) began; 0: none */
    bool req_timer;         /* rev's timeout is that request's deadline, not idle_timeout */
    struct conn *prev, *next;
    char peer[64];
};

/* A connection's state, which its flags encode (a front sets only closing,
 * and out_lost through conn_out_lost; the rest is conn.c's):
 *
 *   state      paused closing wait  lingering out_lost  reading (c->rev)
 *   READING    -      -       -     -         -         on: idle_timeout, or the
 *                                                       request's deadline (req_timer)
 *   PAUSED     yes    -       -     -         -         off until out drains
 *   WAITING    -      -       yes   -         -         off until the answer
 *   CLOSING    -      yes     any   -         -         on, input dropped (off after EOF);
 *                                                       a waited answer goes out first
 *   LOST       -      yes     any   -         yes       closed at the next conn_flush
 *   LINGERING  -      yes     -     yes       -         on: the linger timeout
 *
 * req_timer means something only while READING (elsewhere it is stale and
 * ignored; conn_arm_read clears it). Transitions (conn_transition_ok;
 * conn.c checks those it makes as it makes them: one not allowed is logged
 * and closes its connection, the daemon goes on, a test build aborts;
 * tests/unit/net/check_conn.c checks the table and drives pause/resume, a
 * lost reply, RELOAD then EOF, idle, and illegal ones):
 *   READING  -> PAUSED (max_output), WAITING (RELOAD), CLOSING (QUIT, error,
 *               EOF, shutdown, timeouts), LOST
 *   PAUSED   -> READING (out drained), CLOSING (shutdown), LOST (budget)
 *   WAITING  -> READING (answered), CLOSING (EOF, shutdown: after the answer), LOST
 *   CLOSING  -> LINGERING (all written), LOST; closed
 *   LOST     -> closed
 *   LINGERING -> closed (EOF, timeout, error)
 *   and any state -> closed at once (a failed read or write, the idle or write
 *   timeout, a failed group commit, the shutdown deadline).
 * Any other combination of the flags is a bug (CONN_BAD). */
enum conn_state {
    CONN_READING,
    CONN_PAUSED,
    CONN_WAITING,
    CONN_CLOSING,
    CONN_LOST,
    CONN_LINGERING,
    CONN_BAD,
};
#define CONN_N_STATES CONN_BAD

/* The state c's flags encode, or CONN_BAD. Any thread that owns c. */
static inline enum conn_state conn_state(const struct conn *c)
{
    if (c->paused)
        return c->closing || c->wait || c->end.lingering || c->out_lost ? CONN_BAD : CONN_PAUSED;
    if (c->end.lingering)
        return c->closing && !c->wait && !c->out_lost ? CONN_LINGERING : CONN_BAD;
    if (c->out_lost)
        return c->closing ? CONN_LOST : CONN_BAD;
    if (c->closing)
        return CONN_CLOSING;
    return c->wait ? CONN_WAITING : CONN_READING;
}

/* Whether the state may go from `from` to `to` (the same state included). */
bool conn_transition_ok(enum conn_state from, enum conn_state to);

/* The front's per-connection state. */
static inline void *conn_priv(struct conn *c)
{
    return (char *)c + ((sizeof(struct conn) + 15) & ~(size_t)15);
}

/* ---- the services every front shares (worker thread) ---- */

/* A reply could not be queued (out of memory): the connection closes at the
 * next conn_flush and writes nothing more, so that a pipelining client cannot
 * pair a later reply with the wrong request (memcached does the same). */
void conn_out_lost(struct conn *c);
/* Queue n bytes on c->out after the reply batch; false (conn_out_lost done)
 * when out of memory. */
bool conn_out_add(struct conn *c, const void *p, size_t n);
/* The same for a whole evbuffer, which is emptied. */
bool conn_out_add_buffer(struct conn *c, struct evbuffer *b);
/* Move the reply batch into c->out. Before anything writes to c->out
 * directly (conn_out_add does it), and at the end of every process. */
void conn_reply_flush(struct conn *c);
/* Room for n <= reply_cap bytes at the end of the reply batch, flushing it
 * first if need be; the caller then adds what it wrote with conn_reply_used. */
static inline char *conn_reply_room(struct conn *c, size_t n)
{
    struct conn_worker *cw = c->fw;
    if (cw->reply_cap - cw->reply_len < n)
        conn_reply_flush(c);
    return cw->reply + cw->reply_len;
}
static inline void conn_reply_used(struct conn *c, size_t n)
{
    ((struct conn_worker *)c->fw)->reply_len += n;
}
/* n bytes of reply, copied into the batch, or (more than half of it) queued
 * straight after it. */
void conn_reply_bytes(struct conn *c, const void *p, size_t n);
/* In ops->process, before each request: whether c's unread replies (queued
 * and batched) have reached max_output; then reading stops (conn_pause) and
 * process must return. Never while draining (EOF, shutdown). */
static inline bool conn_output_full(struct conn *c, const struct conf *cf, bool draining)
{
    const struct conn_worker *cw = c->fw;
    if (draining || cw->out_queued + cw->reply_len < cf->max_output)
        return false;
    conn_pause(c);
    return true;
}

/* Drop the first n bytes of input; give a large buffer back when it empties. */
void conn_consume(struct conn *c, size_t n);

/* The request loop of ops->process (worker thread): one(c, p, n, arg) answers
 * the request at the start of the n bytes p not consumed yet and returns the
 * bytes it used (p's may be rewritten in place), or 0 when that request is
 * not complete (or c closes without consuming it). The loop stops there, or
 * once c closes or waits for an answer, or before a request when
 * conn_output_full says max_output is reached; then what was used is
 * dropped from c->in. Returns how many requests used bytes. */
typedef size_t (*conn_request_fn)(struct conn *c, char *p, size_t n, void *arg);
/* Inline, so that the compiler makes each front's loop around its own `one`
 * (HTTP's inlined: http_conn.c). */
static inline unsigned conn_each_request(struct conn *c, const struct conf *cf, bool draining,
                                         conn_request_fn one, void *arg)
{
    unsigned answered = 0;
    size_t off = 0;
    while (!c->closing && !c->wait && off < c->in_len) {
        if (conn_output_full(c, cf, draining))
            break;
        size_t used = one(c, c->in + off, c->in_len - off, arg);
        if (used == 0)
            break;
        off += used;
        answered++;
    }
    conn_consume(c, off);
    return answered;
}

/* Accepting worker's thread: refuse fd (over max_connections) the front's
 * way, see conn_front.c; the caller closes fd. */
#define CONN_REFUSE_DRAIN_MAX (64 * 1024) /* bytes of the client's read first */
void conn_refuse(const struct conn_ops *ops, evutil_socket_t fd, struct stats *s);

/* Main thread: a front's per-worker state for w (ops->worker_size bytes, the
 * env with the front's proto, the reply batch, then ops->worker_init); NULL
 * when out of memory. conn_worker_free undoes it. */
struct conn_worker *conn_worker_new(struct worker *w, const struct conn_ops *ops,
                                    const struct cmd_env *env);
void conn_worker_free(const struct conn_ops *ops, struct conn_worker *cw);

/* Worker thread: set up fd (admitted already) on w for ops; false (fd closed,
 * the admission given back) when out of memory. */
bool conn_open(struct worker *w, const struct conn_ops *ops, void *fw, size_t addr,
               evutil_socket_t fd, const struct sockaddr *sa);
void conn_close(struct conn *c, const char *why);
/* Write what is pending (after the group commit); arm the write event for the
 * rest; linger once closing and all is written; resume a paused connection. May
 * close (and free) c. */
void conn_flush(struct conn *c);
/* Read again (with the idle timeout). */
void conn_arm_read(struct conn *c);
/* Shutdown as the line protocol wants it: read and answer what the client
 * has sent already (bounded by max_output), then close once written. */
void conn_stop_drain(struct conn *c);

/* The unread replies of all connections passed max_buffered: close w's
 * connections holding more than their share, the worst first (c, the
 * connection being flushed, or NULL, is closed by its caller's conn_flush).
 * Worker thread: conn_flush, and w's tick. */
void conn_shed(struct worker *w, struct conn *c);

/* Start a reload for c's request: reading stops, later requests wait; when
 * the reload is over answer(c, report, note) runs on this thread (report NULL
 * if the report was lost: the front must still answer), then the connection
 * goes on. note (at most 32 bytes) is copied. False (nothing started) when out
 * of memory or no reload hook: the front answers the error itself. */
bool conn_reload(struct conn *c, conn_wait_fn answer, const void *note, size_t note_len);
/* conn_reload for an operation on one filter (CREATE, DROP, CLEAR, FLUSH:
 * store/reload.h), queued on the reload thread and answered the same way. */
bool conn_admin(struct conn *c, const struct reload_op *op, conn_wait_fn answer, const void *note,
                size_t note_len);

#endif
