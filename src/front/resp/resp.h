/* resp: the Redis protocol (RESP2, docs/resp.md) on a connection of the net
 * layer, so redis-cli, Redis client libraries and Redis tooling can ask
 * bloomgate with BF.EXISTS, BF.MEXISTS, BF.ADD, BF.MADD, BF.INFO, BF.CARD
 * (RedisBloom's reply shapes; a filter is the key). respparse.c parses, the
 * command table answers, this glue writes the replies. Its ops run on the
 * worker thread that owns the connection. */
#ifndef BLOOMGATE_RESP_H
#define BLOOMGATE_RESP_H

#include "net/conn.h"

extern const struct conn_ops resp_ops;

#endif
