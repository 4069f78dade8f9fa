/* The services of net/conn.h a front calls or the net layer calls for it,
 * apart from the connection's own life (conn.c): a front's per-worker state
 * and the refusal over max_connections (the request loop is inline, conn.h).
 * Threads: as each says. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "net/conn.h"
#include "net/runtime.h"

struct conn_worker *conn_worker_new(struct worker *w, const struct conn_ops *ops,
                                    const struct cmd_env *env)
{
    assert(ops->worker_size >= sizeof(struct conn_worker));
    struct conn_worker *cw = calloc(1, ops->worker_size);
    if (!cw)
        return NULL;
    cw->w = w;
    cw->env = *env;
    cw->env.proto = ops->proto;
    if (ops->reply_batch) {
        cw->reply_cap = ops->reply_batch(env->scratch_items);
        if (!(cw->reply = malloc(cw->reply_cap))) {
            free(cw);
            return NULL;
        }
    }
    if (ops->worker_init && ops->worker_init(cw) != 0) {
        free(cw->reply);
        free(cw);
        return NULL;
    }
    return cw;
}

void conn_worker_free(const struct conn_ops *ops, struct conn_worker *cw)
{
    if (ops->worker_free)
        ops->worker_free(cw);
    free(cw->reply);
    free(cw);
}

/* Admission refused (worker_accept, on the accepting worker's thread): count
 * it (ops->refuse), then the front's refusal. What the client sent already is
 * read first, so that the close is a FIN, not a reset that could discard the
 * refusal before the client reads it; but at most CONN_REFUSE_DRAIN_MAX bytes
 * (a request head and a small body), since a client that keeps its socket
 * full would otherwise hold the worker here: such a client gets the reset.
 * The caller closes fd. */
void conn_refuse(const struct conn_ops *ops, evutil_socket_t fd, struct stats *s)
{
    if (ops->refuse)
        ops->refuse(s);
    if (!ops->refusal)
        return; /* closed without a word */
    char sink[4096];
    for (size_t drained = 0; drained < CONN_REFUSE_DRAIN_MAX;) {
        ssize_t r = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (r <= 0)
            break;
        drained += (size_t)r;
    }
    ssize_t ignored = send(fd, ops->refusal, strlen(ops->refusal), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
    shutdown(fd, SHUT_WR);
}
