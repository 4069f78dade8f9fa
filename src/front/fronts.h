/* fronts: the protocols bloomgated serves, wired onto the net layer: the
 * line protocol on conf's `listen` addresses, HTTP on `http_listen`, the Redis
 * protocol on `resp_listen`, bloomd's text protocol on `bloomd_listen`, and
 * the mail fronts (`tcp_table`, `policy`, `dnsbl` blocks). The one place that knows every front; a new front adds a
 * line here. Main thread (server_create runs before privileges drop). */
#ifndef BLOOMGATE_FRONTS_H
#define BLOOMGATE_FRONTS_H

#include <stddef.h>

#include "net/server.h"

enum {
    FRONT_LINE = 0,
    FRONT_HTTP = 1,
    FRONT_RESP = 2,
    FRONT_TCP_TABLE = 3,
    FRONT_DNSBL = 4,
    FRONT_POLICY = 5,
    FRONT_BLOOMD = 6
};

/* server_create_fronts with every front of the catalog's config. NULL with
 * the reason in err. */
struct server *server_create(struct registry *reg, unsigned threads, char *err, size_t errlen);

/* The port a line (HTTP) listener was bound to (after port 0 was resolved). */
static inline int server_line_port(const struct server *srv, size_t idx)
{
    return server_port(srv, FRONT_LINE, idx);
}
static inline int server_http_port(const struct server *srv, size_t idx)
{
    return server_port(srv, FRONT_HTTP, idx);
}
/* The same for a `resp_listen` (Redis protocol) listener. */
static inline int server_resp_port(const struct server *srv, size_t idx)
{
    return server_port(srv, FRONT_RESP, idx);
}

/* Log the port of every listener of every front ("line protocol listening on
 * ADDR (port N)", "tcp_table listening on ..."): what the daemon says once
 * bound, and what tests read a port 0's real port from. Main thread. */
void server_log_ports(const struct server *srv, const struct conf *cf);

#endif
