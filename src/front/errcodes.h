/* errcodes: the error codes the line protocol and the Redis protocol both
 * send (`ERR <code> ...`, `-ERR <code> ...`) and count per code in the
 * metrics: the command table's errors as a client sees them, named once so
 * that the two fronts cannot name one error two ways. Each front's own list
 * (PROTO_ERRORS, RESP_ERRORS) starts with these rows. Pure; any thread. */
#ifndef BLOOMGATE_ERRCODES_H
#define BLOOMGATE_ERRCODES_H

#define FRONT_ERRORS(X)                                                                            \
    X(UNKNOWN_COMMAND, "unknown_command")                                                          \
    X(WRONG_ARITY, "wrong_arity")                                                                  \
    X(UNKNOWN_FILTER, "unknown_filter")                                                            \
    X(ITEM_TOO_LONG, "item_too_long")                                                              \
    X(TOO_MANY_ITEMS, "too_many_items")                                                            \
    X(AUTH_REQUIRED, "auth_required")                                                              \
    X(AUTH_FAILED, "auth_failed")                                                                  \
    X(EXISTS, "exists")                                                                            \
    X(CONFIGURED, "configured")                                                                    \
    X(LIMIT, "limit")                                                                              \
    X(BAD_OPTION, "bad_option")                                                                    \
    X(NO_STATE_DIR, "no_state_dir")                                                                \
    X(FAILED, "failed")

#endif
