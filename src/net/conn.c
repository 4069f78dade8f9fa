/* The one connection implementation, see conn.h. Every function here runs on
 * the thread of the worker that owns the connection.
 *
 * Memory per connection: an input buffer that grows (doubling) only as far as
 * the request being read needs (ops->in_limit) and shrinks back when it
 * empties, and an output evbuffer that stops the reading of its connection
 * once it passes max_output. The input buffers of all connections together
 * are held to max_buffered (srv->buffered counts their capacity): a buffer
 * that would pass it does not grow, and its request is refused. The unread
 * replies of all connections together are held to max_buffered as well, on
 * their own count (srv->out_held): max_output bounds one connection, not a
 * crowd (300 line clients sending INFO and never reading held 1.2 GB). What a
 * write leaves queued is charged in conn_flush; when the charge passes the
 * budget the worker closes its connections holding more than their share,
 * the worst first, until it is back under (conn_shed, also at every tick). A
 * round trip whose reply went out whole is never charged: one compare on the
 * hot path.
 *
 * Time per request: a request that has begun to arrive must be complete
 * within request_timeout seconds, plus one second per CONN_MIN_RATE bytes it
 * holds so far (a large body at a fair rate); every byte re-arms idle_timeout,
 * so without this deadline a client sending a byte a second would keep its
 * connection (and its buffer) for ever. */
#include "config.h"

#include "net/conn.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "base/seam.h"
#include "base/util.h"
#include "core/gate.h"
#include "net/runtime.h"

#define IN_START 4096      /* first input buffer of a connection */
#define IN_READ_MAX 65536  /* it grows to this while reads fill it (see conn_room) */
#define IN_IDLE_KEEP 65536 /* a larger one is given back when it empties */

static const char *const conn_state_names[] = {
    [CONN_READING] = "READING", [CONN_PAUSED] = "PAUSED", [CONN_WAITING] = "WAITING",
    [CONN_CLOSING] = "CLOSING", [CONN_LOST] = "LOST",     [CONN_LINGERING] = "LINGERING",
    [CONN_BAD] = "BAD",
};

/* c was found in state from, about to take state to, which enum conn_state
 * does not allow: a bug, in conn.c or a front. The daemon must not die of it,
 * nor leave the connection in a state no code expects: log it (rate-limited,
 * naming the states), make c LOST (which any state may become here: reading
 * drops input, nothing more is written, its wait is forgotten at the close)
 * and schedule the conn_flush that closes it. A test build stops at the seam
 * instead (tests/lib/seams.c aborts unless the test expects it). Worker
 * thread. */
static void conn_illegal(struct conn *c, enum conn_state from, enum conn_state to)
{
    log_error_limited("%s connection %s: illegal state transition %s -> %s (a bug): closing it",
                      c->ops->name, c->peer, conn_state_names[from], conn_state_names[to]);
    seam_conn_illegal(conn_state_names[from], conn_state_names[to]);
    c->paused = false;
    c->end.lingering = false;
    c->out_lost = c->closing = true;
    ((struct conn_worker *)c->fw)->reply_len = 0;
    event_active(c->wev, EV_WRITE, 0); /* conn_flush closes it (event_free cancels) */
}

/* c is about to take state `to`: true if enum conn_state allows it, else
 * false after conn_illegal, and the caller makes no change of its own. */
static bool conn_goes(struct conn *c, enum conn_state to)
{
    enum conn_state from = conn_state(c);
    if (conn_transition_ok(from, to))
        return true;
    conn_illegal(c, from, to);
    return false;
}

struct conn_wait {
    struct conn *c; /* NULL once the connection is gone */
    conn_wait_fn answer;
    unsigned char note[32];
};

static const struct catalog *cat_now(struct conn *c)
{
    return registry_read(c->w->reg);
}

void conn_arm_read(struct conn *c)
{
    unsigned idle = cat_now(c)->conf->idle_timeout;
    struct timeval tv = {(time_t)idle, 0};
    c->req_timer = false;
    c->req_since = 0; /* a paused or waiting request's clock starts again */
    event_add(c->rev, idle ? &tv : NULL);
}

/* Charge (n > 0) or give back (n < 0) input buffer bytes on the server's
 * budget. A charge that would pass max_buffered is not made: false. */
static bool budget_charge(struct conn *c, ptrdiff_t n)
{
    _Atomic size_t *b = &c->w->srv->buffered;
    if (n <= 0) {
        atomic_fetch_sub_explicit(b, (size_t)-n, memory_order_relaxed);
        return true;
    }
    size_t now = atomic_fetch_add_explicit(b, (size_t)n, memory_order_relaxed) + (size_t)n;
    if (now > cat_now(c)->conf->max_buffered) {
        atomic_fetch_sub_explicit(b, (size_t)n, memory_order_relaxed);
        return false;
    }
    return true;
}

void conn_pause(struct conn *c)
{
    if (c->paused || !conn_goes(c, CONN_PAUSED))
        return;
    c->paused = true;
    event_del(c->rev);
    STAT_ADD_AT(&c->w->stats->s, stats_conn_fields[c->ops->proto].output_pauses, 1);
}

/* ---- the services every front shares ---- */

void conn_out_lost(struct conn *c)
{
    if (!conn_goes(c, CONN_LOST))
        return;
    if (!c->out_lost)
        log_error_limited("out of memory queueing a %s reply to %s: closing the connection",
                          c->ops->name, c->peer);
    c->out_lost = c->closing = true;
    c->paused = false;
    ((struct conn_worker *)c->fw)->reply_len = 0;
}

void conn_reply_flush(struct conn *c)
{
    struct conn_worker *cw = c->fw;
    if (!cw->reply_len)
        return;
    if (c->out_lost || evbuffer_add(c->out, cw->reply, cw->reply_len) != 0) {
        conn_out_lost(c);
        return;
    }
    cw->out_queued += cw->reply_len;
    cw->reply_len = 0;
}

bool conn_out_add(struct conn *c, const void *p, size_t n)
{
    conn_reply_flush(c);
    if (c->out_lost || evbuffer_add(c->out, p, n) != 0) {
        conn_out_lost(c);
        return false;
    }
    ((struct conn_worker *)c->fw)->out_queued += n;
    return true;
}

bool conn_out_add_buffer(struct conn *c, struct evbuffer *b)
{
    size_t n = evbuffer_get_length(b);
    conn_reply_flush(c);
    if (c->out_lost || evbuffer_add_buffer(c->out, b) != 0) {
        conn_out_lost(c);
        return false;
    }
    ((struct conn_worker *)c->fw)->out_queued += n;
    return true;
}

void conn_reply_bytes(struct conn *c, const void *p, size_t n)
{
    struct conn_worker *cw = c->fw;
    if (n > cw->reply_cap / 2) {
        conn_out_add(c, p, n);
        return;
    }
    memcpy(conn_reply_room(c, n), p, n);
    cw->reply_len += n;
}

/* The transitions enum conn_state's comment (conn.h) allows: [from][to]. */
static const bool conn_transitions[CONN_N_STATES][CONN_N_STATES] = {
    /*                 READING PAUSED WAITING CLOSING LOST  LINGERING */
    [CONN_READING] = {true, true, true, true, true, false},
    [CONN_PAUSED] = {true, true, false, true, true, false},
    [CONN_WAITING] = {true, false, true, true, true, false},
    [CONN_CLOSING] = {false, false, false, true, true, true},
    [CONN_LOST] = {false, false, false, false, true, false},
    [CONN_LINGERING] = {false, false, false, false, false, true},
};

bool conn_transition_ok(enum conn_state from, enum conn_state to)
{
    return from < CONN_N_STATES && to < CONN_N_STATES && conn_transitions[from][to];
}

void conn_consume(struct conn *c, size_t n)
{
    if (n > 0) {
        memmove(c->in, c->in + n, c->in_len - n);
        c->in_len -= n;
    }
    if (c->in_len == 0 && c->in_cap > IN_IDLE_KEEP) {
        char *small = realloc(c->in, IN_START);
        if (small) {
            budget_charge(c, -(ptrdiff_t)(c->in_cap - IN_START));
            c->in = small;
            c->in_cap = IN_START;
        }
    }
}

void conn_close(struct conn *c, const char *why)
{
    struct worker *w = c->w;
    enum conn_state st = conn_state(c);
    if (st == CONN_BAD) { /* closing anyway: say so, and go on */
        log_error_limited("%s connection %s: closed in an illegal state (a bug)", c->ops->name,
                          c->peer);
        seam_conn_illegal(conn_state_names[st], "closed");
    }
    log_debug("%s connection %s closed: %s", c->ops->name, c->peer, why);
    if (c->ops->close)
        c->ops->close(c);
    if (c->wait)
        c->wait->c = NULL; /* the reload's answer will find nobody */
    if (c->prev)
        c->prev->next = c->next;
    else
        w->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    w->n_conns--;
    atomic_fetch_sub_explicit(&w->stats->load, 1, memory_order_relaxed);
    event_free(c->rev);
    event_free(c->wev);
    evbuffer_free(c->out);
    /* Give the slot back before the client can see the close: a client that
     * reconnects at once must find it free. */
    atomic_fetch_sub_explicit(&w->srv->conns_open, 1, memory_order_relaxed);
    STAT_ADD_AT(&w->stats->s, stats_conn_fields[c->ops->proto].closed, 1);
    evutil_closesocket(c->fd);
    budget_charge(c, -(ptrdiff_t)c->in_cap);
    if (c->out_charged)
        atomic_fetch_sub_explicit(&w->srv->out_held, c->out_charged, memory_order_relaxed);
    free(c->in);
    free(c);
    worker_check_drained(w);
}

/* Every reply is in the kernel and the connection must end. close() with
 * unread input makes the kernel reset the connection and discard what the
 * client has not read yet, so: shut our side down (a FIN after the data) and
 * wait (CONN_LINGER_S, at most CONN_LINGER_MAX_S in all) for the client's EOF,
 * reading and dropping what it sends meanwhile (conn_read_cb). */
static void conn_linger(struct conn *c)
{
    if (c->end.lingering)
        return;
    if (c->end.peer_eof || shutdown(c->fd, SHUT_WR) != 0) {
        conn_close(c, "done");
        return;
    }
    if (!conn_goes(c, CONN_LINGERING))
        return;
    c->end.lingering = true;
    c->end.until = util_now() + CONN_LINGER_MAX_S;
    struct timeval tv = {CONN_LINGER_S, 0};
    event_add(c->rev, &tv);
}

/* Read and drop what a closing connection's client sends. NULL to keep
 * waiting, or why to close now. */
static const char *conn_drain_input(struct conn *c)
{
    char sink[4096];
    ssize_t n = recv(c->fd, sink, sizeof(sink), 0);
    if (n == 0) {
        c->end.peer_eof = true;
        event_del(c->rev);
        return c->end.lingering ? "done" : NULL;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return strerror(errno);
    if (c->end.lingering && util_now() > c->end.until)
        return "the client kept sending after the last reply";
    return NULL;
}

/* ops->process, with the reply count conn_output_full reads taken afresh
 * (a write may have drained some). */
static unsigned conn_process(struct conn *c, bool draining)
{
    ((struct conn_worker *)c->fw)->out_queued = evbuffer_get_length(c->out);
    return c->ops->process(c, draining);
}

/* After a wait or a pause: answer what the client sent meanwhile, then read
 * again. Arm the read before the flush: the flush may write it all, and then
 * nothing else would ever arm it. May close (and free) c. */
static void conn_resume(struct conn *c)
{
    enum conn_state st = conn_state(c);
    if (st == CONN_BAD) {
        conn_illegal(c, st, CONN_READING);
        conn_flush(c);
        return;
    }
    conn_process(c, false);
    if (!c->paused && !c->closing && !c->wait)
        conn_arm_read(c);
    conn_flush(c);
}

/* Write what is pending: one send() when it is one contiguous chunk (a round
 * trip's reply always is), skipping writev's iovec import and VFS layer,
 * else evbuffer_write's writev. What send() wrote is drained. The result as
 * write(2)'s. Worker thread. */
static int conn_write_out(struct conn *c)
{
    struct evbuffer_iovec v;
    if (evbuffer_peek(c->out, -1, NULL, &v, 1) != 1)
        return evbuffer_write(c->out, c->fd);
    ssize_t n = send(c->fd, v.iov_base, v.iov_len, MSG_NOSIGNAL);
    if (n > 0)
        evbuffer_drain(c->out, (size_t)n);
    return (int)n;
}

/* The worker's connection holding the most charged output, not yet lost,
 * if it holds more than floor. */
static struct conn *conn_worst_holder(struct worker *w, size_t floor)
{
    struct conn *worst = NULL;
    for (struct conn *o = w->conns; o; o = o->next)
        if (!o->out_lost && o->out_charged > floor &&
            (!worst || o->out_charged > worst->out_charged))
            worst = o;
    return worst;
}

/* If the unread replies of all connections passed max_buffered: close this
 * worker's connections holding more than their share of it (max_buffered
 * over the connections open), the worst first, until the total is back
 * under. What other workers hold is theirs to shed, at their next write or
 * tick: a client reading a reply a little slowly, below its share, is never
 * closed for a crowd that does not read. Each one closed is dropped at once
 * (its replies freed, its charge given back) and marked lost; one other than
 * c is closed from its own write event, never from under a caller that may be
 * walking the list (ctl_cb). Worker thread; c may be NULL (the tick). */
void conn_shed(struct worker *w, struct conn *c)
{
    _Atomic size_t *held = &w->srv->out_held;
    size_t max = registry_read(w->reg)->conf->max_buffered;
    if (atomic_load_explicit(held, memory_order_relaxed) <= max)
        return;
    unsigned open = atomic_load_explicit(&w->srv->conns_open, memory_order_relaxed);
    size_t floor = max / (open ? open : 1);
    while (atomic_load_explicit(held, memory_order_relaxed) > max) {
        struct conn *o = conn_worst_holder(w, floor);
        if (!o)
            return;
        log_warn_limited("unread replies of all connections passed max_buffered: closing %s "
                         "connection %s, which holds the most",
                         o->ops->name, o->peer);
        (void)conn_goes(o, CONN_LOST); /* not allowed: lost all the same */
        STAT_ADD_AT(&w->stats->s, stats_conn_fields[o->ops->proto].output_budget_closes, 1);
        evbuffer_drain(o->out, evbuffer_get_length(o->out));
        atomic_fetch_sub_explicit(held, o->out_charged, memory_order_relaxed);
        o->out_charged = 0;
        o->paused = false;
        o->out_lost = o->closing = true;
        if (o != c)
            event_active(o->wev, EV_WRITE, 0);
    }
}

/* Charge what c holds of unread replies after a write (held bytes) to the
 * server's reply budget, or give back what was written. */
static void conn_out_charge(struct conn *c, size_t held)
{
    _Atomic size_t *b = &c->w->srv->out_held;
    if (held < c->out_charged) {
        atomic_fetch_sub_explicit(b, c->out_charged - held, memory_order_relaxed);
        c->out_charged = held;
        return;
    }
    size_t now = atomic_fetch_add_explicit(b, held - c->out_charged, memory_order_relaxed) + held -
                 c->out_charged;
    c->out_charged = held;
    if (now > cat_now(c)->conf->max_buffered)
        conn_shed(c->w, c);
}

/* Write what is pending with one system call; arm the write event for the rest.
 * First the group commit of the batch's journal records: a reply that says
 * NEW must not leave before its add is durable as the policy promises. While
 * the server stops, a connection with nothing left to answer closes. A
 * connection that lost a reply closes here, writing nothing more. (Its
 * state is checked where it changes, not here: this runs every read.) */
void conn_flush(struct conn *c)
{
    struct worker *w = c->w;
    if (gate_dirty(&w->gate) && !gate_commit(&w->gate)) {
        conn_close(c, "journal commit failed: replies withheld");
        return;
    }
    if (c->out_lost) {
        conn_close(c, "a reply was lost (out of memory, or the reply budget max_buffered)");
        return;
    }
    size_t held = evbuffer_get_length(c->out);
    if (held > 0) {
        int n = conn_write_out(c);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            conn_close(c, "write failed");
            return;
        }
        held = evbuffer_get_length(c->out);
    }
    if (held != c->out_charged) {
        conn_out_charge(c, held);
        if (c->out_lost) {
            conn_close(c, "its unread replies were the most when max_buffered was passed");
            return;
        }
    }
    if (held > 0) {
        unsigned idle = cat_now(c)->conf->idle_timeout;
        struct timeval tv = {(time_t)idle, 0};
        /* libevent times an event_add from the loop pass's cached clock: after
         * a batch that took longer than idle_timeout to answer, the client
         * would be cut at once for not reading what it was never sent. */
        event_base_update_cache_time(w->base);
        event_add(c->wev, idle ? &tv : NULL);
        c->wev_armed = true;
        return;
    }
    if (c->wev_armed) { /* a round trip's reply went out whole: nothing to delete */
        event_del(c->wev);
        c->wev_armed = false;
    }
    if (c->wait) /* a waited answer (RELOAD) comes before any end */
        return;
    if (c->closing || (w->stopping && c->in_len == 0)) {
        c->closing = true;
        conn_linger(c);
        return;
    }
    if (c->paused) {
        c->paused = false;
        conn_resume(c);
    }
}

/* Room to read into: the buffer doubles when full, up to ops->in_limit and
 * as far as max_buffered allows. 0 if there is room; else why not. It also
 * doubles, up to IN_READ_MAX, when the last read filled it (c->in_more): a
 * client that pipelines (MCHECKs of 100 items, 5 KB each, several in
 * flight) then has all it sent read by one recv and answered by one writev,
 * where a 4 or 8 KB buffer took a recv, a writev and a wake-up per request:
 * the kernel's share of a batch's CPU per item (docs/benchmarks.md). A
 * growth that max_buffered or memory refuses then just does not happen.
 * Worker thread. */
static int conn_room(struct conn *c)
{
    bool full = c->in_len >= c->in_cap;
    if (!full && (!c->in_more || c->in_cap >= IN_READ_MAX))
        return 0;
    c->in_more = false;
    size_t limit = c->ops->in_limit(cat_now(c)->conf);
    size_t ncap = c->in_cap * 2 < limit ? c->in_cap * 2 : limit;
    if (ncap <= c->in_cap)
        return full ? 1 + CONN_FULL_LIMIT : 0;
    if (!budget_charge(c, (ptrdiff_t)(ncap - c->in_cap))) {
        if (!full)
            return 0;
        STAT_ADD_AT(&c->w->stats->s, stats_conn_fields[c->ops->proto].buffer_refusals, 1);
        return 1 + CONN_FULL_BUDGET;
    }
    char *nb = realloc(c->in, ncap);
    if (!nb) {
        budget_charge(c, -(ptrdiff_t)(ncap - c->in_cap));
        return full ? 1 + CONN_FULL_LIMIT : 0;
    }
    c->in = nb;
    c->in_cap = ncap;
    return 0;
}

/* When the request now in c->in must be complete: request_timeout after its
 * first byte, plus a second per CONN_MIN_RATE bytes received (0: none due). */
static double conn_due(const struct conn *c, unsigned request_timeout)
{
    if (!c->req_since || !request_timeout)
        return 0;
    return c->req_since + request_timeout + (double)c->in_len / CONN_MIN_RATE;
}

/* After a read was answered: time the request still arriving, if any (its
 * first bytes came with this read when it answered a request, fresh == true).
 * The read event's timeout becomes the sooner of its deadline and
 * idle_timeout; back to idle_timeout once nothing is pending. Not for a
 * connection that is closing, paused or waiting (its reading is stopped).
 * Returns false if the deadline has already passed. */
static bool conn_deadline(struct conn *c, bool fresh)
{
    const struct conf *cf = cat_now(c)->conf;
    if (c->in_len == 0 || cf->request_timeout == 0) {
        c->req_since = 0;
        if (c->req_timer)
            conn_arm_read(c);
        return true;
    }
    double now = util_now();
    if (!c->req_since || fresh)
        c->req_since = now;
    double left = conn_due(c, cf->request_timeout) - now;
    if (left <= 0)
        return false;
    if (cf->idle_timeout && cf->idle_timeout <= left) {
        if (c->req_timer) {
            double since = c->req_since; /* the request keeps its clock */
            conn_arm_read(c);
            c->req_since = since;
        }
        return true;
    }
    struct timeval tv = {(time_t)left, (suseconds_t)((left - (double)(time_t)left) * 1e6)};
    event_add(c->rev, &tv);
    c->req_timer = true;
    return true;
}

/* After the front's last word (in_full, request_timeout): close once it is
 * written. May close (and free) c. */
static void conn_end_after(struct conn *c)
{
    conn_reply_flush(c);
    c->closing = true;
    conn_flush(c);
}

/* The request's deadline passed: the front answers (408 for HTTP) and the
 * connection closes once that is written. May close (and free) c. */
static void conn_request_expired(struct conn *c)
{
    STAT_ADD_AT(&c->w->stats->s, stats_conn_fields[c->ops->proto].request_timeouts, 1);
    c->req_since = 0;
    c->req_timer = false;
    if (c->ops->request_timeout)
        c->ops->request_timeout(c);
    conn_end_after(c);
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    struct worker *w = c->w;
    if (what & EV_TIMEOUT) {
        if (c->end.lingering) {
            conn_close(c, "no EOF from the client after the last reply");
            return;
        }
        if (c->req_timer && !c->closing) {
            unsigned rt = cat_now(c)->conf->request_timeout;
            if (!rt || util_now() < conn_due(c, rt)) {
                if (conn_deadline(c, false)) /* early, or the limit changed: re-arm */
                    return;
            }
            conn_request_expired(c);
            registry_quiescent(w->reg, w->id);
            return;
        }
        /* Not idle while replies are still being written: a client reading
         * them slowly would lose the rest. The write event's own timeout
         * closes a client that stops reading. */
        if (evbuffer_get_length(c->out) == 0) {
            STAT_ADD_AT(&w->stats->s, stats_conn_fields[c->ops->proto].idle_timeouts, 1);
            conn_close(c, "idle timeout");
        }
        return;
    }
    if (c->closing) {
        /* The connection ends once its replies are written: what the client
         * sends meanwhile is read and dropped (left unread, it would make the
         * close a reset, which throws away replies not yet delivered). */
        const char *why = conn_drain_input(c);
        if (why)
            conn_close(c, why);
        return;
    }
    int full = conn_room(c);
    if (full) {
        if (c->ops->in_full)
            c->ops->in_full(c, (enum conn_full)(full - 1));
        conn_end_after(c); /* may close (and free) c */
        registry_quiescent(w->reg, w->id);
        return;
    }
    size_t room = c->in_cap - c->in_len;
    ssize_t n = recv(fd, c->in + c->in_len, room, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        conn_close(c, strerror(errno));
        return;
    }
    c->in_more = (size_t)n == room;
    double t0 = util_now();
    unsigned answered;
    if (n == 0) {
        /* The client shut down its side: answer what it sent, then close. */
        c->end.peer_eof = true;
        event_del(c->rev);
        answered = conn_process(c, true);
        c->closing = true;
    } else {
        c->in_len += (size_t)n;
        answered = conn_process(c, false);
        if (!c->closing && !c->paused && !c->wait && !conn_deadline(c, answered > 0)) {
            conn_request_expired(c); /* may close (and free) c */
            registry_quiescent(w->reg, w->id);
            return;
        }
    }
    struct latency *lat = &w->stats->latency[c->ops->proto];
    conn_flush(c); /* may close (and free) c */
    /* Every request answered from this read is timed from the read to the
     * write: two clock reads per read, not per request. */
    if (answered)
        stats_latency_add(lat, util_now() - t0, answered);
    registry_quiescent(w->reg, w->id);
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    struct worker *w = c->w;
    (void)fd;
    if (what & EV_TIMEOUT) {
        STAT_ADD_AT(&w->stats->s, stats_conn_fields[c->ops->proto].idle_timeouts, 1);
        conn_close(c, "client did not read its replies");
        return;
    }
    conn_flush(c);
    registry_quiescent(w->reg, w->id);
}

bool conn_open(struct worker *w, const struct conn_ops *ops, void *fw, size_t addr,
               evutil_socket_t fd, const struct sockaddr *sa)
{
    size_t head = (sizeof(struct conn) + 15) & ~(size_t)15;
    struct conn *c = calloc(1, head + ops->priv_size);
    if (c) {
        c->in = malloc(IN_START);
        c->out = evbuffer_new();
        c->rev = event_new(w->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
        c->wev = event_new(w->base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, c);
    }
    if (!c || !c->in || !c->out || !c->rev || !c->wev) {
        log_error_limited("out of memory accepting a %s connection", ops->name);
        if (c) {
            free(c->in);
            if (c->out)
                evbuffer_free(c->out);
            if (c->rev)
                event_free(c->rev);
            if (c->wev)
                event_free(c->wev);
            free(c);
        }
        atomic_fetch_sub_explicit(&w->srv->conns_open, 1, memory_order_relaxed);
        evutil_closesocket(fd);
        return false;
    }
    atomic_fetch_add_explicit(&w->srv->buffered, IN_START, memory_order_relaxed);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->ops = ops;
    c->w = w;
    c->fw = fw;
    c->fd = fd;
    c->addr = addr;
    c->in_cap = IN_START;
    c->loopback = util_addr_is_loopback(sa);
    util_addr_text(sa, c->peer, sizeof(c->peer));
    c->next = w->conns;
    if (w->conns)
        w->conns->prev = c;
    w->conns = c;
    w->n_conns++;
    atomic_fetch_add_explicit(&w->stats->load, 1, memory_order_relaxed);
    log_debug("%s connection from %s on worker %u", ops->name, c->peer, w->id);
    conn_arm_read(c);
    return true;
}

/* Line-protocol shutdown: answer what the client has sent already (until its
 * socket is empty, or max_output of replies is queued), then close once the
 * replies are written. Nothing is written before the loop ends, so max_output
 * bounds the replies queued, and the loop, even if the client keeps sending. */
void conn_stop_drain(struct conn *c)
{
    size_t max_output = cat_now(c)->conf->max_output;
    event_del(c->rev);
    c->paused = false;
    conn_process(c, true);
    while (!c->closing && !c->wait && evbuffer_get_length(c->out) < max_output) {
        if (c->in_len == c->in_cap && conn_room(c))
            break;
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
        if (n <= 0)
            break;
        c->in_len += (size_t)n;
        conn_process(c, true);
    }
    if (!c->wait)
        c->closing = true;
    conn_flush(c); /* may close (and free) c */
}

/* ---- requests answered later (RELOAD) ---- */

/* The reload is over, on this worker's thread (the hook's contract): answer,
 * then go on with what the client sent after the request. Every path answers:
 * a NULL report (lost on the way) is the front's to turn into an error. */
static void conn_wait_done(json_t *report, void *arg)
{
    struct conn_wait *wt = arg;
    struct conn *c = wt->c;
    if (!c) {
        json_decref(report);
        free(wt);
        return;
    }
    c->wait = NULL;
    wt->answer(c, report, wt->note);
    free(wt);
    conn_resume(c);
}

bool conn_reload(struct conn *c, conn_wait_fn answer, const void *note, size_t note_len)
{
    return conn_admin(c, NULL, answer, note, note_len);
}

bool conn_admin(struct conn *c, const struct reload_op *op, conn_wait_fn answer, const void *note,
                size_t note_len)
{
    struct server *srv = c->w->srv;
    if (!srv->reload_fn || note_len > sizeof(((struct conn_wait *)0)->note) ||
        !conn_goes(c, CONN_WAITING))
        return false;
    struct conn_wait *wt = calloc(1, sizeof(*wt));
    if (!wt)
        return false;
    wt->c = c;
    wt->answer = answer;
    if (note_len)
        memcpy(wt->note, note, note_len);
    if (!srv->reload_fn(srv->reload_ctx, op, c->w->base, conn_wait_done, wt)) {
        free(wt);
        return false;
    }
    c->wait = wt;
    event_del(c->rev); /* later requests wait in the kernel, not in our buffer */
    return true;
}
