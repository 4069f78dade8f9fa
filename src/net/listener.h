/* listener: one SO_REUSEPORT listening socket per worker per address of each
 * front, and its accept loop; out of descriptors (EMFILE...) it pauses and
 * retries on a timer, as memcached does, instead of spinning. listener_create:
 * main thread; the rest: the owning worker (listener_free_all: after it stopped). */
#ifndef BLOOMGATE_LISTENER_H
#define BLOOMGATE_LISTENER_H

#include <event2/util.h>
#include <stdbool.h>
#include <stddef.h>

#include "conf/addr.h"

struct server;
struct worker;

#define LISTENER_RETRY_MIN_MS 100  /* first pause after EMFILE */
#define LISTENER_RETRY_MAX_MS 1000 /* pauses double up to this */

struct listener {
    struct worker *w;
    size_t front;
    size_t addr;        /* which of the front's addresses */
    char text[CONF_ADDR_TEXT_MAX]; /* the address, for the log (the config may be reloaded away) */
    evutil_socket_t fd; /* until the evconnlistener owns it */
    struct evconnlistener *l;
    struct event *retry; /* re-enables accepting after a pause */
    unsigned pause_ms;   /* the next pause; 0 while accepting normally */
};

/* Bind every address of every front of srv for every worker and set up the
 * accept loops on the workers' bases (which must exist). Ports resolved from
 * 0 are shared by the workers. -1 with the address and reason in err. */
int listener_create(struct server *srv, char *err, size_t errlen);
/* Stop accepting on w's listeners (shutdown). */
void listener_stop_worker(struct server *srv, struct worker *w);
void listener_free_all(struct server *srv);

#endif
