/* connend: ending a client connection without losing what was written to it
 * (a lingering close), for the line protocol (server.c) and HTTP (http.c)
 * alike. Each call runs on the worker thread that owns the connection. */
#ifndef BLOOMGATE_CONNEND_H
#define BLOOMGATE_CONNEND_H

#include <event2/util.h>
#include <stdbool.h>

struct event;

#define CONNEND_LINGER_S 2      /* a closing connection waits this long for the client's EOF */
#define CONNEND_LINGER_MAX_S 10 /* and no longer than this in all */

/* How a closing connection's end is going; zeroed with the connection. */
struct connend {
    bool peer_eof;  /* the client shut its side down */
    bool lingering; /* our side is shut down; waiting for the client's */
    double until;   /* util_now() past which the lingering gives up */
};

/* Every reply is in the kernel and the connection must end. close() with
 * unread input makes the kernel reset the connection and discard what the
 * client has not read yet, so: shut our side down (a FIN after the data) and
 * re-arm rev with a CONNEND_LINGER_S timeout, to read and drop until the
 * client closes its side. True when the caller must close now instead (the
 * client is gone already, or the shutdown failed); false when lingering has
 * begun (or had). */
bool connend_linger(struct connend *e, evutil_socket_t fd, struct event *rev);

/* rev fired on a closing connection: read and drop what the client sent.
 * NULL to keep waiting, or why to close now (the client's EOF while
 * lingering, a socket error, CONNEND_LINGER_MAX_S passed). */
const char *connend_drain(struct connend *e, evutil_socket_t fd, struct event *rev);

#endif
