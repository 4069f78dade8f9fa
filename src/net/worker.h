/* worker: one thread with its own event_base serving every connection it
 * accepted (or was handed), for every front end. Fronts reach their worker's
 * gate, counters and scratch here (net/runtime.h); only that worker's thread
 * touches them. */
#ifndef BLOOMGATE_WORKER_H
#define BLOOMGATE_WORKER_H

#include <event2/util.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "net/runtime.h"

/* Listener's accept, on w's thread: admit fd against max_connections (or
 * refuse it at once through the front), count it, and serve it here or hand
 * it to the least loaded worker. */
void worker_accept(struct worker *w, size_t front, size_t addr, evutil_socket_t fd,
                   const struct sockaddr *sa);

#endif
