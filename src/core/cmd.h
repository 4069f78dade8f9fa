/* cmd: the command table every front end dispatches through (line protocol,
 * HTTP, and the fronts to come), so that who may change what (admin_token, or
 * loopback without one) and how big a request may be (max_items, max_item)
 * are stated once, here. Worker threads; never blocks (an add's group commit
 * is the caller's, see gate.h). */
#ifndef BLOOMGATE_CMD_H
#define BLOOMGATE_CMD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "bloom/filter.h"
#include "core/gate.h"
#include "core/stats.h"
#include "store/registry.h"
#include "store/reload.h"

enum cmd_id {
    CMD_PING,    /* liveness */
    CMD_CHECK,   /* look items up in a filter */
    CMD_ADD,     /* add items to a filter (mutating) */
    CMD_INFO,    /* the daemon, or one filter, as JSON */
    CMD_FILTERS, /* the names served */
    CMD_RELOAD,  /* re-read the config and the filters (mutating; answered later) */
    CMD_HEALTH,  /* are all configured filters served */
    CMD_MATCH,   /* which of a filter's keys one item matched */
    CMD_ALLOW,   /* add exceptions to a filter's allow-list (mutating) */
    CMD_UNALLOW, /* drop exceptions from it (mutating) */
    CMD_REMOVE,  /* items no longer reported present (mutating) */
    /* Filters made at run time (store/created.h): admin operations run by
     * the reload thread and answered later, as RELOAD is. */
    CMD_CREATE, /* make a filter (mutating) */
    CMD_DROP,   /* stop serving a created filter, its files removed (mutating) */
    CMD_CLEAR,  /* empty a created filter (mutating) */
    CMD_FLUSH,  /* sync a filter's journal, or every one's, to disk (mutating) */
    CMD_SCAN,    /* the listed words a text holds (a words filter: core/cmd_words.c) */
    CMD_COUNT_
};

/* Errors, mapped by each front to its own codes (ERR <code>, HTTP status). */
enum cmd_err {
    CMD_OK = 0,
    CMD_ERR_UNKNOWN_FILTER, /* the named filter is not served */
    CMD_ERR_AUTH_REQUIRED,  /* mutating, and the client gave no credential / is not loopback */
    CMD_ERR_AUTH_FAILED,    /* mutating, and the credential was wrong */
    CMD_ERR_TOO_MANY_ITEMS, /* more than max_items */
    CMD_ERR_ITEM_TOO_LONG,  /* an item longer than max_item */
    CMD_ERR_UNAVAILABLE,    /* the journal refused an add: nothing was added */
    CMD_ERR_BAD_ITEM,       /* a host or url filter cannot read an item, or a counting
                             * filter does not hold an item to remove (call->bad_item) */
    CMD_ERR_INTERNAL,       /* out of memory, no reload hook */
    /* The admin operations' outcomes (the report's "code", cmd_admin_outcome). */
    CMD_ERR_EXISTS,       /* CREATE: a filter of that name is served */
    CMD_ERR_CONFIGURED,   /* DROP, CLEAR: the filter is the config's, not created */
    CMD_ERR_LIMIT,        /* max_filters or max_created_memory reached */
    CMD_ERR_BAD_OPTION,   /* an unknown option, or a bad value */
    CMD_ERR_NO_STATE_DIR, /* no state_dir: nothing can be created */
    CMD_ERR_FAILED,       /* the disk refused (the message says what) */
    CMD_ERR_WRONG_KIND,     /* the verb does not apply to the filter's kind (SCAN on a
                             * lookup filter, an item command on a words filter) */
    CMD_ERR_TEXT_TOO_LONG,  /* a SCAN's text is longer than scan_max_text */
};

/* What the client proved about itself, for mutating commands. */
enum cmd_cred {
    CMD_CRED_NONE,  /* no credential presented */
    CMD_CRED_GOOD,  /* the admin_token (AUTH on the line, Authorization: Bearer on HTTP) */
    CMD_CRED_WRONG, /* a credential that is not the admin_token */
};

/* A lookup's request context (docs/adblock.md): the request's type (enum
 * adblock_type, -1: none), its method (enum adblock_method, -1: none) and
 * the page it comes from (NULL: none). Only an adblock filter reads it; no
 * context at all is a top-level document with no initiator. */
struct cmd_ctx {
    int type;
    int method;
    const char *from;
    size_t from_len;
};
#define CMD_CTX_NONE ((struct cmd_ctx){-1, -1, NULL, 0})

struct adblock_ctx;
struct words_scratch;
struct words_match;
struct words_view;

/* An adblock check of several items names each item's answer here, as a
 * one-item call names its own in match and except: yes, the block rule (the
 * one an exception overrode too) and the exception, NULL for none. The
 * strings may be the thread's scratch: good only until the callback
 * returns. Worker thread, inside cmd_run. */
typedef void (*cmd_item_named_fn)(void *arg, size_t i, bool yes, const char *rule, size_t rule_len,
                                  const char *except, size_t except_len);

/* The worker's, lent to every call: its gate batch, counters and scratch. */
struct cmd_env {
    struct gate_batch *gate;
    struct stats_block *stats;
    const _Atomic uint64_t *id_gen;
    struct filter_key *keys; /* scratch_items entries: the front fills them */
    bool *bools;             /* scratch_items entries: the answers */
    bool *allowed;           /* scratch_items entries: a check an exception answered NO;
                                written only when call->allowed is not 0 (may be NULL) */
    struct cmd_ctx *ctxs;    /* scratch_items entries: a front's per-item contexts (MCHECK) */
    struct adblock_ctx *ab;  /* the matcher's scratch for adblock filters */
    size_t scratch_items;
    enum stats_proto proto; /* which fstats column the items count in */
    struct words_scratch *ws; /* a SCAN's scratch (words.h) */
    struct words_match *wm;   /* a SCAN's matches: 3 * CONF_SCAN_MATCHES_MAX entries (a
                                 list with run-time changes scans twice, words/delta.h) */
};

/* One command: what the front parsed, and what the handler answers. Set up
 * with cmd_call_init (not a designated initializer, which would zero msg on
 * every request: ~110 of an HTTP GET check's ~5,000 instructions). */
struct cmd_call {
    const struct catalog *cat;
    const char *filter; /* the name a command names; or e set by the front already */
    size_t filter_len;
    const struct fentry *e;
    size_t n_items; /* in env->keys */
    bool loopback;  /* the peer is on 127.0.0.0/8 or ::1 */
    enum cmd_cred cred;
    bool limits_applied; /* the front's parser applied cmd_limits already (the line protocol) */
    struct cmd_ctx ctx;  /* every item's request context ... */
    const struct cmd_ctx *item_ctx; /* ... unless this gives each item its own (n_items) */
    cmd_item_named_fn named;        /* an adblock check: each item's rule and exception */
    void *named_arg;                /* (NULL: not asked) */
    /* results */
    size_t yes;      /* items answered true (found / new / changed) */
    size_t allowed;  /* checks an allow-list exception answered NO (env->allowed says which) */
    size_t bad_item; /* CMD_ERR_BAD_ITEM: which item (from 1); msg says why, unprefixed */
    /* CHECK of one item, MATCH: the key that matched (the most specific
     * expression of a host or url filter; the item itself for an exact one;
     * the block rule as written in its list for an adblock filter), or NULL. It points into the item or into this thread's scratch, so it
     * is good until the thread's next command. */
    const char *match;
    size_t match_len;
    /* CHECK of one item, MATCH, when an exception answered: the allow-list
     * entry that did (the item for an exact filter; for a host or url filter
     * the expression, as good as match; for an adblock filter the @@ rule,
     * set even when no block rule matched). */
    const char *except;
    size_t except_len;
    json_t *json;     /* INFO, FILTERS, HEALTH: the caller's to decref */
    enum cmd_err err; /* CMD_OK or why not */
    char msg[320];    /* the error's text (a front may word auth errors its own way) */
    /* SCAN: the text the front read (set by the front, not by cmd_call_init:
     * no other verb reads it), and the answer: the matches (env->wm, good
     * until the thread's next command), sorted by start, at most
     * scan_max_matches, and whether more were found (capped). */
    const char *text;
    size_t text_len;
    const struct words_match *matches;
    const struct words_view *wview; /* the run-time changes the matches were found with */
    size_t n_matches;
    bool capped;
};

static inline void cmd_call_init(struct cmd_call *call, const struct catalog *cat,
                                 const struct fentry *e, size_t n_items, bool loopback,
                                 enum cmd_cred cred)
{
    call->cat = cat;
    call->filter = NULL;
    call->filter_len = 0;
    call->e = e;
    call->n_items = n_items;
    call->loopback = loopback;
    call->cred = cred;
    call->limits_applied = false;
    call->ctx = CMD_CTX_NONE;
    call->item_ctx = NULL;
    call->named = NULL;
    call->yes = 0;
    call->allowed = 0;
    call->except = NULL;
    call->except_len = 0;
    call->bad_item = 0;
    call->match = NULL;
    call->match_len = 0;
    call->json = NULL;
    call->err = CMD_OK;
    call->msg[0] = '\0';
}

typedef void (*cmd_handler)(const struct cmd_env *env, const struct stats_src *src,
                            struct cmd_call *call);

struct cmd_def {
    const char *name;    /* for logs and the docs */
    bool names_filter;   /* the call names a filter, which must be served */
    bool items;          /* takes 1..max_items items, each at most max_item bytes */
    bool mutating;       /* admin_token, or loopback when none is set */
    cmd_handler handler; /* NULL: the front answers (PING, RELOAD's deferred answer) */
};

extern const struct cmd_def cmd_table[CMD_COUNT_];

/* The limits of an item command under cf with scratch for `scratch` items: the
 * parser of each front refuses what is over them before items reach the table. */
struct cmd_limits {
    size_t max_items, max_item;
};
static inline struct cmd_limits cmd_limits(const struct conf *cf, size_t scratch)
{
    struct cmd_limits l = {cf->max_items < scratch ? cf->max_items : scratch, cf->max_item};
    return l;
}

/* May this client run a mutating command? CMD_OK, or the auth error. The one
 * place the rule lives. */
enum cmd_err cmd_authorize(const struct conf *cf, bool loopback, enum cmd_cred cred);

/* The table's admission alone (the named filter, then auth), for a front
 * that must refuse before it reads the rest of a request; cmd_run applies it
 * again. CMD_OK or the error, also in call->err and call->msg. */
enum cmd_err cmd_admit(struct cmd_call *call, enum cmd_id id);

/* Run command id: the filter looked up, the auth rule and the limits applied,
 * then the handler. call->err says how it went. src is needed by INFO only
 * (may be NULL otherwise). Worker thread. */
void cmd_run(const struct cmd_env *env, enum cmd_id id, const struct stats_src *src,
             struct cmd_call *call);

/* The key a host or url filter's item e matched, looked up again: for a
 * front that answers a batch (HTTP's POST check) and names the match of each
 * item found, the rare case, without keeping every item's expansion. 1 with
 * *m (good until this thread's next command) set, 0 if none matched, -1 if
 * the item cannot be read (the reason in err). An exact filter's match is the
 * item itself: callers do not ask. Worker thread. */
int cmd_match_again(const struct fentry *e, const void *item, size_t len, const char **m,
                    size_t *mlen, char *err, size_t errlen);

/* Items commands without the table's checks, for a front's fast path that has
 * applied them already (the line protocol's parser checks the limits; checks
 * need no auth). Worker thread. */
void cmd_items(const struct cmd_env *env, struct cmd_call *call, bool add);

/* The reload thread's operation an admin command asks for (CREATE, DROP,
 * CLEAR, FLUSH: store/reload.h); RELOAD_OP_RELOAD for any other. */
enum reload_op_kind cmd_op_kind(enum cmd_id id);

/* What an admin operation's report (store/reload.h) says: CMD_OK or the
 * error, with its message in *msg (good while report lives). A NULL
 * report (it was lost) is CMD_ERR_INTERNAL. Any thread. */
enum cmd_err cmd_admin_outcome(const json_t *report, const char **msg);
/* SCAN's answer as a words filter's list names it: match i's word as
 * listed (not NUL-terminated). Worker thread. */
const char *cmd_scan_word(const struct cmd_call *call, size_t i, size_t *len);

/* The mutation a mutating item command journals (ADD, ALLOW, UNALLOW,
 * REMOVE), for the fronts' replies. */
enum journal_op cmd_op(enum cmd_id id);

#endif
