/* bloomd: bloomd's text protocol (docs/bloomd.md) on a connection of the net
 * layer, on the addresses of `bloomd_listen`, so bloomd's clients and its
 * own integration tests talk to bloomgated unchanged: check/c, multi/m,
 * set/s, bulk/b, list, info, flush, and create/drop/close/clear through
 * bloomd_admin. bloomd_proto.c parses, the command table answers, this glue
 * writes bloomd's replies. Its ops run on the worker thread that owns the
 * connection; bloomd_ops is constant. */
#ifndef BLOOMGATE_BLOOMD_H
#define BLOOMGATE_BLOOMD_H

#include "core/cmd.h"
#include "front/bloomd/bloomd_proto.h"
#include "net/conn.h"

/* A row's .id for a verb the front answers alone (flush, auth, the admin). */
#define BLOOMD_OWN CMD_COUNT_

struct bloomd_verb_row;
/* How a verb's reply is made. Worker thread. */
typedef void (*bloomd_verb_fn)(struct conn *c, const struct catalog *cat,
                               const struct bloomd_request *r, const struct bloomd_verb_row *v);

/* The glue's columns of a verb (bloomd_proto.h's BLOOMD_VERBS). */
struct bloomd_verb_row {
    bloomd_verb_fn run; /* the reply */
    enum cmd_id id;     /* the command table's row, or BLOOMD_OWN */
};

/* Indexed by enum bloomd_verb: every verb has its row. */
extern const struct bloomd_verb_row bloomd_verbs[BLOOMD_VERB_COUNT_];

extern const struct conn_ops bloomd_ops;

/* create, drop, close and clear, parsed whole (r->filter, r->create): the
 * one place the run-time filter admin of bloomd's protocol is answered.
 * close answers Done on a served filter (bloomgate keeps its filters mapped:
 * there is nothing to unload); create, drop and clear answer bloomd's
 * `Client Error: Command not supported` until this is wired to the run-time
 * filter core (CMD_CREATE, CMD_DROP through conn_admin). Worker thread that
 * owns c. */
void bloomd_admin(struct conn *c, const struct catalog *cat, const struct bloomd_request *r,
                  const struct bloomd_verb_row *v);

#endif
