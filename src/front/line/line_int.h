/* line_int: what the line protocol's glue files share (line.c, the request
 * loop and the lookups; line_verbs.c, the verbs outside the item path;
 * line_admin.c, the verbs the reload thread answers; line_scan.c, SCAN):
 * the per-worker and per-connection state, and the reply helpers.
 * Worker threads, each on its own connections. */
#ifndef BLOOMGATE_LINE_INT_H
#define BLOOMGATE_LINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "bloom/hash.h"
#include "core/cmd.h"
#include "core/cmd_exact.h"
#include "front/line/line.h"

#define CHECK_AHEAD 8    /* one-item CHECKs hashed and prefetched before answered */
#define TYPE_MEMO 16     /* type= words remembered per worker (line_ctx) */
#define TYPE_WORD_MAX 24 /* the longest remembered ("type=xmlhttprequest" is 19) */

/* Per connection. */
struct line_conn {
    size_t scanned; /* proto_next's resume hint */
    bool authed;    /* AUTH succeeded on this connection */
};

/* Per worker: the line protocol's scratch and batches. */
struct line_worker {
    /* The worker, its env (proto = STATS_LINE) and the reply batch (net/conn.h),
     * whose cap is >= PROTO_BOOLS_CAP(scratch_items) + REPLY_SLACK. */
    struct conn_worker cw;
    struct proto_token *tokens;
    /* Counters of the batch, added to the worker's stats by line_tally_flush (at
     * the end of line_process and before any request that reads or may wait
     * on them), so the totals stay exact at every point a client can look. */
    struct {
        uint64_t commands, checks, items, hits;
        unsigned fid; /* the filter fchecks and fhits belong to */
        uint64_t fchecks, fhits;
        uint64_t fconfirms, fcaught; /* its exact table's confirmations, false positives caught */
    } tally;
    /* The last filter an item command named in this line_process call, in the
     * catalog it was found in: consecutive requests nearly always name the
     * same one. Reset on every call, so it never outlives its catalog's grace
     * period. */
    const struct catalog *last_cat;
    const struct fentry *last_e;
    struct proto_token last_name; /* last_e's name, for proto_check_fast */
    enum cmd_ring last_ring;      /* how last_e's one-item CHECK is answered (cmd_exact_ring) */
    /* The path last_e's one-item CHECK takes in line_process, from last_ring
     * and ahead_fp (ahead_mode): one test a CHECK. */
    enum { AHEAD_NONE, AHEAD_PLAIN, AHEAD_ANY } last_mode;
    /* One-item CHECKs of the connection being processed, hashed and their
     * blocks prefetched, not yet answered: a ring, oldest at ahead_head. They
     * are the latest requests parsed, so they are answered (in order) before
     * any other reply is written, and all of them by the end of line_process.
     * A lone probe waits for its cache line (the filter rarely fits in L2);
     * CHECK_AHEAD of them overlap those waits, as filter_check_batch does
     * within an MCHECK. */
    struct {
        const struct fentry *e;
        struct hash128 h;
    } ahead[CHECK_AHEAD];
    /* The fingerprint of each slot's item, set only for a CMD_RING_FP filter:
     * apart from ahead[], whose slots a filter without a table fills. */
    uint64_t ahead_fps[CHECK_AHEAD];
    unsigned n_ahead, ahead_head;
    /* The ring may hold a CHECK of a filter with an exact table
     * (CMD_RING_FP), so its YES answers are confirmed (ahead_answer_any),
     * until it is next drained empty. While false, every CHECK in it is of a
     * filter without one and is answered by inlined code that has no exact
     * phase at all, which a filter without a table never needs. */
    bool ahead_fp;
    /* type= words already read, byte for byte, and the type each names:
     * adblock_context_word tries every type name and Sec-Fetch-Dest value
     * in turn, a cost each item paid when a batch gives every item its own
     * words. A client sends a dozen spellings; a slot holds the last word
     * hashed to it (len 0: empty). */
    struct {
        char word[TYPE_WORD_MAX];
        size_t len;
        int type;
    } type_memo[TYPE_MEMO];
};

static inline struct line_worker *LW(struct conn *c)
{
    return c->fw;
}

static inline struct line_conn *LC(struct conn *c)
{
    return conn_priv(c);
}

/* Add the batch's counters to the worker's stats and zero them. */
void line_tally_flush(struct line_worker *lw);

/* Append to c's reply batch: a literal reply, and `ERR <code> <msg>`
 * (counted per code). */
void line_reply_str(struct conn *c, const char *s);
void line_reply_err(struct conn *c, enum proto_err code, const char *msg);
/* The line protocol's code for a command table error. */
enum proto_err line_err(enum cmd_err e);
/* Whether AUTH succeeded on c. */
bool line_authed(struct conn *c);

/* The rows of proto_verbs.h that line_verbs.c answers. */
void verb_auth(struct conn *c, const struct catalog *cat, const struct proto_request *r,
               const struct line_verb *v);
void verb_info(struct conn *c, const struct catalog *cat, const struct proto_request *r,
               const struct line_verb *v);
void verb_names(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                const struct line_verb *v);
void verb_word(struct conn *c, const struct catalog *cat, const struct proto_request *r,
               const struct line_verb *v);

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
