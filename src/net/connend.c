/* The lingering close, see connend.h. */
#include "config.h"

#include "net/connend.h"

#include <errno.h>
#include <event2/event.h>
#include <string.h>
#include <sys/socket.h>

#include "base/util.h"

bool connend_linger(struct connend *e, evutil_socket_t fd, struct event *rev)
{
    if (e->lingering)
        return false;
    if (e->peer_eof || shutdown(fd, SHUT_WR) != 0)
        return true;
    e->lingering = true;
    e->until = util_now() + CONNEND_LINGER_MAX_S;
    struct timeval tv = {CONNEND_LINGER_S, 0};
    event_add(rev, &tv);
    return false;
}

const char *connend_drain(struct connend *e, evutil_socket_t fd, struct event *rev)
{
    char sink[4096];
    ssize_t n = recv(fd, sink, sizeof(sink), 0);
    if (n == 0) {
        e->peer_eof = true;
        event_del(rev);
        return e->lingering ? "done" : NULL;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return strerror(errno);
    if (e->lingering && util_now() > e->until)
        return "the client kept sending after the last reply";
    return NULL;
}
