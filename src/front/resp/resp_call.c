/* The Redis protocol front's calls through the command table: a call for a
 * key set up with the connection's credential, and the table's errors as
 * RedisBloom's clients expect them. Shared by resp.c (the BF.* lookups and
 * adds) and resp_admin.c (created keys). Worker thread that owns the
 * connection. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/fname.h"
#include "core/gate.h"
#include "front/resp/resp_int.h"

enum resp_err resp_code(enum cmd_err e)
{
    switch (e) {
    case CMD_ERR_UNKNOWN_FILTER:
        return RESP_ERR_UNKNOWN_FILTER;
    case CMD_ERR_AUTH_REQUIRED:
        return RESP_ERR_AUTH_REQUIRED;
    case CMD_ERR_AUTH_FAILED:
        return RESP_ERR_AUTH_FAILED;
    case CMD_ERR_TOO_MANY_ITEMS:
        return RESP_ERR_TOO_MANY_ITEMS;
    case CMD_ERR_ITEM_TOO_LONG:
        return RESP_ERR_ITEM_TOO_LONG;
    case CMD_ERR_BAD_ITEM:
        return RESP_ERR_BAD_ITEM;
    case CMD_ERR_EXISTS:
        return RESP_ERR_EXISTS;
    case CMD_ERR_CONFIGURED:
        return RESP_ERR_CONFIGURED;
    case CMD_ERR_LIMIT:
        return RESP_ERR_LIMIT;
    case CMD_ERR_BAD_OPTION:
        return RESP_ERR_BAD_OPTION;
    case CMD_ERR_NO_STATE_DIR:
        return RESP_ERR_NO_STATE_DIR;
    case CMD_ERR_FAILED:
        return RESP_ERR_FAILED;
    case CMD_ERR_WRONG_KIND: /* a lookup on a words filter (SCAN is not a Redis verb) */
        return RESP_ERR_WRONG_KIND;
    default:
        return RESP_ERR_INTERNAL;
    }
}

/* A failed table call: auth as Redis's NOPERM (a command this connection may
 * not run: clients keep the connection, where NOAUTH would make redis-py
 * drop it), the rest as `ERR <code> <message>`; a bad item of several is
 * named by its place. */
void resp_reply_call_err(struct conn *c, const struct cmd_call *call, const char *cmd,
                         size_t n_items)
{
    char msg[sizeof(call->msg) + 64];
    if (call->err == CMD_ERR_AUTH_REQUIRED || call->err == CMD_ERR_AUTH_FAILED) {
        bool token = call->cat->conf->admin_token != NULL;
        snprintf(msg, sizeof(msg),
                 token ? "%s needs AUTH <token> first on this connection"
                       : "%s is accepted only from loopback clients when no admin_token is set",
                 cmd);
        reply_error(c, RESP_ERR_AUTH_REQUIRED, "NOPERM", msg);
        return;
    }
    if (call->err == CMD_ERR_UNAVAILABLE && gate_is_full(call->msg)) {
        /* RedisBloom's words, which its clients know; the log has ours. */
        reply_error(c, RESP_ERR_INTERNAL, "ERR", "non scaling filter is full");
        return;
    }
    if (call->err == CMD_ERR_BAD_ITEM && n_items > 1) {
        snprintf(msg, sizeof(msg), "item %zu: %s", call->bad_item, call->msg);
        reply_coded(c, RESP_ERR_BAD_ITEM, msg);
        return;
    }
    reply_coded(c, resp_code(call->err), call->msg);
}

/* Whether key is a filter name (base/fname.h): if not, the error that says
 * the rule is replied. Asked before any lookup, so a key no filter can ever
 * have (a stray quote or space in a client's code) is told, not answered 0
 * as an absent filter is. */
bool resp_filter_name_ok(struct conn *c, const struct resp_arg *key)
{
    if (fname_valid(key->p, key->len))
        return true;
    char q[64 + 4], msg[sizeof(q) + 32 + sizeof(FNAME_RULE)];
    size_t n = key->len < 64 ? key->len : 64;
    for (size_t i = 0; i < n; i++)
        q[i] = key->p[i] >= 0x20 && key->p[i] < 0x7f ? key->p[i] : '?';
    strcpy(q + n, key->len > 64 ? "..." : "");
    snprintf(msg, sizeof(msg), "invalid filter name '%s': use " FNAME_RULE, q);
    reply_coded(c, RESP_ERR_UNKNOWN_FILTER, msg);
    return false;
}
