/* proto_verbs: the line protocol's verbs, one row each, for the parser
 * (proto.c: the word, the arguments) and the glue (line.c: the command
 * table's row it runs and how its reply is made) alike, so that a verb is
 * added in one place. A list of macro rows only: no code, no includes; any
 * thread. */
#ifndef BLOOMGATE_PROTO_VERBS_H
#define BLOOMGATE_PROTO_VERBS_H

/* How the arguments after the verb are read (proto.c's parse_line). */
enum proto_args {
    PROTO_ARGS_NONE,   /* PING, FILTERS, QUIT, RELOAD */
    PROTO_ARGS_ITEMS,  /* <filter> <item>...: the item commands */
    PROTO_ARGS_ITEMS_CTX, /* <filter> <item>... with context words (type=, from=, method=)
                             among them: the lookups (docs/protocol.md, Request context) */
    PROTO_ARGS_FILTER, /* INFO [<filter>] */
    PROTO_ARGS_TOKEN,  /* AUTH <token> */
    PROTO_ARGS_TEXT,   /* <filter> <text>: the text is the rest of the line after the one
                          separator that follows the filter, spaces and tabs included */
};

#define PROTO_ARGS_ANY ((size_t)-1) /* no upper bound on the argument count */

/* X(SYM, "WORD", args, min, max, "usage", glue...): SYM names the verb
 * (PROTO_SYM in enum proto_cmd), WORD is its upper-case spelling on the
 * wire, args/min/max/usage what follows it (min and max count the
 * arguments, the filter included). The rest are line.c's, designated
 * initializers of struct line_verb: .id the command table's row it runs
 * (core/cmd.h; LINE_OWN: the front answers alone), .run how its reply is
 * made, .yes/.no its words, .closes when the connection closes after it. The parser never
 * expands them. The order is the order proto.c tries the words in. */
/* clang-format off */
#define PROTO_VERBS(X)                                                                             \
    X(PING, "PING", PROTO_ARGS_NONE, 0, 0, "",                                                     \
      .id = CMD_PING, .run = verb_word, .yes = "PONG")                              \
    X(CHECK, "CHECK", PROTO_ARGS_ITEMS_CTX, 2, 2, "<filter> <item> [type=T] [from=URL]",           \
      .id = CMD_CHECK, .run = verb_items, .yes = "YES", .no = "NO")                 \
    X(MCHECK, "MCHECK", PROTO_ARGS_ITEMS_CTX, 2, PROTO_ARGS_ANY, "<filter> <item> [<item>...]",    \
      .id = CMD_CHECK, .run = verb_items, .yes = "YES", .no = "NO")                 \
    X(ADD, "ADD", PROTO_ARGS_ITEMS, 2, 2, "<filter> <item>",                                       \
      .id = CMD_ADD, .run = verb_items, .yes = "NEW", .no = "EXISTS")               \
    X(MADD, "MADD", PROTO_ARGS_ITEMS, 2, PROTO_ARGS_ANY, "<filter> <item> [<item>...]",            \
      .id = CMD_ADD, .run = verb_items, .yes = "NEW", .no = "EXISTS")               \
    X(INFO, "INFO", PROTO_ARGS_FILTER, 0, 1, "[<filter>]",                                         \
      .id = CMD_INFO, .run = verb_info)                                                            \
    X(FILTERS, "FILTERS", PROTO_ARGS_NONE, 0, 0, "",                                               \
      .id = CMD_FILTERS, .run = verb_names)                                                        \
    X(AUTH, "AUTH", PROTO_ARGS_TOKEN, 1, 1, "<token>",                                             \
      .id = LINE_OWN, .run = verb_auth)                                                            \
    X(QUIT, "QUIT", PROTO_ARGS_NONE, 0, 0, "",                                                     \
      .id = LINE_OWN, .run = verb_word, .yes = "BYE", .closes = true)                              \
    X(RELOAD, "RELOAD", PROTO_ARGS_NONE, 0, 0, "",                                                 \
      .id = CMD_RELOAD, .run = verb_reload)                                                        \
    X(MATCH, "MATCH", PROTO_ARGS_ITEMS_CTX, 2, 2, "<filter> <item> [type=T] [from=URL]",           \
      .id = CMD_MATCH, .run = verb_match)                                           \
    X(ALLOW, "ALLOW", PROTO_ARGS_ITEMS, 2, PROTO_ARGS_ANY, "<filter> <item> [<item>...]",          \
      .id = CMD_ALLOW, .run = verb_items, .yes = "NEW", .no = "EXISTS")             \
    X(UNALLOW, "UNALLOW", PROTO_ARGS_ITEMS, 2, PROTO_ARGS_ANY, "<filter> <item> [<item>...]",      \
      .id = CMD_UNALLOW, .run = verb_items, .yes = "REMOVED", .no = "ABSENT")       \
    X(REMOVE, "REMOVE", PROTO_ARGS_ITEMS, 2, PROTO_ARGS_ANY, "<filter> <item> [<item>...]",        \
      .id = CMD_REMOVE, .run = verb_items, .yes = "REMOVED", .no = "ABSENT")                       \
    X(CREATE, "CREATE", PROTO_ARGS_ITEMS, 1, 17, "<filter> [capacity=N] [fpr=P] [option=value...]",\
      .id = CMD_CREATE, .run = verb_admin)                                                         \
    X(DROP, "DROP", PROTO_ARGS_FILTER, 1, 1, "<filter>",                                           \
      .id = CMD_DROP, .run = verb_admin)                                                           \
    X(CLEAR, "CLEAR", PROTO_ARGS_FILTER, 1, 1, "<filter>",                                         \
      .id = CMD_CLEAR, .run = verb_admin)                                                          \
    X(FLUSH, "FLUSH", PROTO_ARGS_FILTER, 0, 1, "[<filter>]",                                       \
      .id = CMD_FLUSH, .run = verb_admin)                                                          \
    X(SCAN, "SCAN", PROTO_ARGS_TEXT, 2, 2, "<filter> <text>",                                      \
      .id = CMD_SCAN, .run = line_verb_scan)
/* clang-format on */

#endif
