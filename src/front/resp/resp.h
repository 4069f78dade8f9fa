/* resp: the Redis protocol (RESP2, docs/resp.md) on a connection of the net
 * layer, so redis-cli, Redis client libraries and Redis tooling can ask
 * bloomgate with BF.EXISTS, BF.MEXISTS, BF.ADD, BF.MADD, BF.INFO, BF.CARD
 * (RedisBloom's reply shapes; a filter is the key), alone or in MULTI/EXEC.
 * respparse.c parses, the command table answers, this glue writes the
 * replies. Its ops run on the
 * worker thread that owns the connection; resp_verbs is constant. */
#ifndef BLOOMGATE_RESP_H
#define BLOOMGATE_RESP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cmd.h"
#include "front/resp/respparse.h"
#include "net/conn.h"

/* A row's .id for a verb the front answers alone (AUTH, HELLO, COMMAND...). */
#define RESP_OWN CMD_COUNT_

struct resp_verb;
/* How a verb's reply is made. Worker thread. */
typedef void (*resp_verb_fn)(struct conn *c, const struct catalog *cat,
                             const struct resp_request *r, const struct resp_verb *v);

/* One verb: its name, its argument count as Redis counts it (the name
 * included: n exactly n, -n at least n; max, if not 0, bounds the variadic
 * ones that are not item lists), its reply, what COMMAND says of it, and the
 * command table's row it runs. */
struct resp_verb {
    const char *name; /* upper case */
    size_t len;
    int arity;
    size_t max;
    resp_verb_fn fn;
    const char *flags; /* COMMAND's flags for it */
    int first_key;     /* COMMAND's key position (0: none) */
    enum cmd_id id;    /* the command table's row, or RESP_OWN */
    bool multi;        /* an item verb answering an array (else one integer) */
    bool now;          /* inside MULTI it runs at once rather than being queued */
    bool creates;      /* a missing key is created first (auto_create; resp_admin.c) */
};

/* The verbs, hottest first; resp_n_verbs of them (check_verbs). */
extern const struct resp_verb resp_verbs[];
extern const size_t resp_n_verbs;

extern const struct conn_ops resp_ops;

#endif
