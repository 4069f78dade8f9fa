/* line_int: what the line protocol's glue files share (line.c, the request
 * loop and the lookups; line_admin.c, the verbs the reload thread answers).
 * Worker threads, each on its own connections. */
#ifndef BLOOMGATE_LINE_INT_H
#define BLOOMGATE_LINE_INT_H

#include <stdbool.h>

#include "front/line/line.h"

/* Append to c's reply batch: a literal reply, and `ERR <code> <msg>`
 * (counted per code). */
void line_reply_str(struct conn *c, const char *s);
void line_reply_err(struct conn *c, enum proto_err code, const char *msg);
/* The line protocol's code for a command table error. */
enum proto_err line_err(enum cmd_err e);
/* Whether AUTH succeeded on c. */
bool line_authed(struct conn *c);

/* The rows of proto_verbs.h that line_admin.c answers. */
void verb_reload(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                 const struct line_verb *v);
void verb_admin(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                const struct line_verb *v);

/* SCAN <filter> <text> (line_scan.c): `CLEAN`, or `FOUND <n>[+] <word>
 * <start> <end> ...`. */
void line_verb_scan(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                    const struct line_verb *v);

#endif
