/* line: the line protocol (docs/protocol.md) on a connection of the net
 * layer: proto.c parses, the command table answers, this glue writes the
 * replies. Its ops run on the worker thread that owns the connection. */
#ifndef BLOOMGATE_LINE_H
#define BLOOMGATE_LINE_H

#include "net/conn.h"

extern const struct conn_ops line_ops;

#endif
