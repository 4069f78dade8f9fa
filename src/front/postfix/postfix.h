/* postfix: Postfix's two lookup protocols on connections of the net layer:
 * tcp_table(5) (tcptable.c parses, tcptable_conn.c glues) and policy
 * delegation (policy.c parses, policy_conn.c glues). Their ops run on the
 * worker thread that owns the connection. */
#ifndef BLOOMGATE_POSTFIX_H
#define BLOOMGATE_POSTFIX_H

#include "net/conn.h"

extern const struct conn_ops tcptable_ops;
extern const struct conn_ops policy_ops;

#endif
