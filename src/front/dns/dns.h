/* dns: the DNSBL front (RFC 5782): dnswire.c parses and builds DNS
 * messages, dnsbl.c decides the answers, dnsbl_conn.c serves UDP (in
 * batches, on each worker's loop) and TCP on the net layer's connections.
 * Main thread for dnsbl_bind_udp; the rest runs on worker threads. */
#ifndef BLOOMGATE_DNS_H
#define BLOOMGATE_DNS_H

#include <stddef.h>

#include "net/conn.h"
#include "net/server.h"

extern const struct conn_ops dnsbl_tcp_ops;

/* After the listeners are bound (so port 0 is resolved): every worker's UDP
 * socket, and the event that reads it, on each address of front `front`
 * (the dnsbl front, whose TCP side dnsbl_tcp_ops serves), on the same port
 * as TCP.
 * Main thread, before privileges drop. -1 with the reason in err. */
int dnsbl_bind_udp(struct server *srv, size_t front, char *err, size_t errlen);

#endif
