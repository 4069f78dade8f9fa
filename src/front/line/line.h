/* line: the line protocol (docs/protocol.md) on a connection of the net
 * layer: proto.c parses, the command table answers, this glue writes the
 * replies. Its ops run on the worker thread that owns the connection;
 * line_verbs is constant (any thread may read it). */
#ifndef BLOOMGATE_LINE_H
#define BLOOMGATE_LINE_H

#include <stdbool.h>

#include "core/cmd.h"
#include "front/line/proto.h"
#include "net/conn.h"

/* A row's .id for a verb the front answers alone (AUTH, QUIT). */
#define LINE_OWN CMD_COUNT_

struct line_verb;
/* How a verb's reply is made: its command run (v->id) and the reply written.
 * Worker thread. */
typedef void (*line_verb_fn)(struct conn *c, const struct catalog *cat,
                             const struct proto_request *r, const struct line_verb *v);

/* The glue's columns of a verb's row (proto_verbs.h). */
struct line_verb {
    enum cmd_id id;       /* the command table's row, or LINE_OWN */
    line_verb_fn run;     /* the reply */
    const char *yes, *no; /* the words of an item reply (PING's and QUIT's in yes) */
    bool closes;          /* the connection closes once the reply is written */
};

/* Indexed by enum proto_cmd: every verb has its row (check_verbs). */
extern const struct line_verb line_verbs[PROTO_CMD_COUNT_];

extern const struct conn_ops line_ops;

#endif
