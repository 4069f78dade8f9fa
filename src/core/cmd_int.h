/* cmd_int: what the command table's files share and no front calls: the
 * keyed lookups and mutations (cmd_keyed.c), which cmd.c dispatches to and
 * the adblock path (cmd_adblock.c) reuses for its host tier, and the
 * allow-list tally. Worker threads. */
#ifndef BLOOMGATE_CMD_INT_H
#define BLOOMGATE_CMD_INT_H

#include "core/cmd.h"

/* Item i of the call was answered NO by an exception: counted in
 * call->allowed and marked in env->allowed. */
void cmd_mark_allowed(const struct cmd_env *env, struct cmd_call *call, size_t i);

/* The probes of item (a URL or a host) under the host kind: whether one of
 * them is an exception of v's allow-list, *m (good until the thread's next
 * command) the most specific such. 1, 0, or -1 if the item has no host. */
int cmd_host_excepted(const struct fversion *v, const void *item, size_t len, const char **m,
                      size_t *mlen);

/* CHECK, MCHECK, MATCH on a host or url filter (a pipeline of each item's
 * probes), and ADD, MADD, ALLOW, UNALLOW, REMOVE on one (each item made the
 * canonical key a list line would give): 0, or -1 with call->err set. */
int cmd_keyed_check(const struct cmd_env *env, struct cmd_call *call);
int cmd_keyed_mutate(const struct cmd_env *env, struct cmd_call *call, enum journal_op op);

/* A mutation through the gate (journal first): 0, or -1 with call->err set
 * (a counting filter's REMOVE of an item it does not hold, a journal that
 * refused the record). */
int cmd_mutate_refused(const struct cmd_env *env, struct cmd_call *call, enum journal_op op,
                       size_t n);

/* CHECK, MCHECK, MATCH on an adblock filter: the engine with each item's
 * context, then the host tier of run-time adds, then the allow-list; 0, or
 * -1 with call->err set (an item the engine cannot read). */
int cmd_adblock_check(const struct cmd_env *env, struct cmd_call *call);

/* What the exact table of a filter did in one call: the YES answers of the
 * bits it was asked to confirm, and those it turned into NO (the filter's
 * false positives it caught). Counted per filter (struct fstats). */
struct cmd_confirmed {
    uint64_t asked;
    uint64_t caught;
};

/* An exact filter with an exact table (v->xd): each YES in env->bools
 * confirmed in the table's delta, then the table (a batch's positives asked
 * together, sorted by page); an unconfirmed YES becomes NO, and what the
 * table did counted on the filter (cmd_confirm.c). A filter without a table
 * never calls it, nor cmd_keyed_check_exact: items_run's one test of v->xd
 * is all the exact phase costs it. */
void cmd_confirm_exact(const struct cmd_env *env, struct cmd_call *call);

/* cmd_keyed_check_confirmed, and what the table did counted on the filter
 * (cmd_confirm.c). 0, or -1 with call->err set (nothing counted). */
int cmd_keyed_check_exact(const struct cmd_env *env, struct cmd_call *call);

/* cmd_keyed_check for a host or url filter with an exact table: each item's
 * probes, most specific first, the first one the bits hold, not removed, and
 * confirmed by the table is the match. 0, or -1 with call->err set. */
int cmd_keyed_check_confirmed(const struct cmd_env *env, struct cmd_call *call,
                              struct cmd_confirmed *cc);

/* SCAN on a words filter (cmd_words.c): the text's matches into
 * env->wm; CMD_ERR_WRONG_KIND on any other filter. */
void cmd_words_scan(const struct cmd_env *env, const struct stats_src *src, struct cmd_call *call);

/* The lookups (CHECK, MCHECK, MATCH) on a words filter: refused with
 * CMD_ERR_WRONG_KIND (-1), since a word list answers SCAN; 0 on any other
 * filter. */
int cmd_words_refuse(const struct fentry *e, struct cmd_call *call);

/* ADD, REMOVE, ALLOW, UNALLOW (op) on a words filter: each item's %XX
 * escapes decoded, read as the list reads a line (a bad one refuses the
 * request before anything is journaled), then through the gate into the
 * list's delta (words/delta.h). Answers in env->bools. 0, or -1 with
 * call->err set. */
int cmd_words_mutate(const struct cmd_env *env, struct cmd_call *call, enum journal_op op);

#endif
