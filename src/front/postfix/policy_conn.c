/* Postfix's policy delegation (SMTPD_POLICY_README) on a connection of the
 * net layer: policy.c parses, the command table looks each configured
 * attribute up (MATCH, so that $match names the key found), this glue
 * writes `action=...`. The block a connection serves is the one whose listen
 * address it came in on (c->addr, as tcptable_conn.c). Worker thread only.
 *
 * A check's filter reads its attribute by its keys: a host filter takes an
 * address's domain and its parents (and a client or HELO name's); an exact
 * filter the value as sent, and for sender and recipient then the domain
 * after the last '@', so one exact list may hold addresses and domains.
 * client_name and reverse_client_name `unknown` (no reverse DNS) and empty
 * values (the null sender) are not looked up; a value the filter cannot
 * read (a host filter given a HELO of "[192.0.2.1]") does not match. A
 * filter not served answers DEFER_IF_PERMIT, as a policy service that
 * cannot decide should: Postfix then tempfails what would otherwise pass. */
#include "config.h"

#include "front/postfix/policy.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/cmd.h"
#include "front/postfix/postfix.h"
#include "net/runtime.h"

#define UNAVAILABLE "DEFER_IF_PERMIT Service temporarily unavailable"

struct pol_conn {
    size_t scanned; /* policy_complete's resume hint */
};

struct pol_worker {
    struct conn_worker cw; /* env: proto = STATS_POLICY (net/conn.h) */
    char reply[POLICY_REPLY_MAX];
};

static void reply_text(struct conn *c, const char *action)
{
    struct pol_worker *pw = c->fw;
    size_t n = policy_reply(action, "", "", "", 0, pw->reply);
    conn_out_add(c, pw->reply, n);
}

/* Look probe up in check's filter: 1 (the reply written), 0 no match, -1
 * the filter could not be asked (the reply written). */
static int try_probe(struct conn *c, const struct catalog *cat, const struct conf_policy *pol,
                     const struct conf_check *ck, const char *probe, size_t len)
{
    struct pol_worker *pw = c->fw;
    struct cmd_call call;
    cmd_call_init(&call, cat, NULL, 1, c->loopback, CMD_CRED_NONE);
    call.filter = ck->filter;
    call.filter_len = strlen(ck->filter);
    pw->cw.env.keys[0].data = probe;
    pw->cw.env.keys[0].len = len;
    cmd_run(&pw->cw.env, CMD_MATCH, NULL, &call);
    struct stats *s = &c->w->stats->s;
    if (call.err == CMD_ERR_BAD_ITEM)
        return 0;
    if (call.err != CMD_OK) {
        STAT_ADD(s, policy_errors, 1);
        reply_text(c, UNAVAILABLE);
        return -1;
    }
    if (!call.match)
        return 0;
    size_t n =
        policy_reply(pol->action, ck->filter, ck->attr, call.match, call.match_len, pw->reply);
    conn_out_add(c, pw->reply, n);
    return 1;
}

/* One request: the checks in order, the first match decides. */
static void answer(struct conn *c, const struct catalog *cat, const struct conf_policy *pol,
                   const struct policy_request *r)
{
    STAT_ADD(&c->w->stats->s, policy_requests, 1);
    for (size_t i = 0; i < pol->n_checks; i++) {
        const struct conf_check *ck = &pol->checks[i];
        int a = policy_attr_parse(ck->attr);
        if (a < 0)
            continue; /* cannot happen: conf.c admits only these names */
        const struct policy_value *v = &r->attr[a];
        if (!v->given || v->len == 0)
            continue;
        if ((a == POLICY_CLIENT_NAME || a == POLICY_REVERSE_CLIENT_NAME) && v->len == 7 &&
            memcmp(v->p, "unknown", 7) == 0)
            continue;
        int rc = try_probe(c, cat, pol, ck, v->p, v->len);
        if (rc != 0)
            return;
        const struct fentry *e = catalog_find(cat, ck->filter, strlen(ck->filter));
        bool address = a == POLICY_SENDER || a == POLICY_RECIPIENT;
        const char *at = address ? memrchr(v->p, '@', v->len) : NULL;
        if (e && e->v->f->keys == FILTER_KEYS_EXACT && at && at + 1 < v->p + v->len) {
            rc = try_probe(c, cat, pol, ck, at + 1, (size_t)(v->p + v->len - at - 1));
            if (rc != 0)
                return;
        }
    }
    reply_text(c, pol->def);
}

/* One request at p, the n bytes of input not consumed yet
 * (conn_each_request): answered, and the bytes it used; 0 while it is not
 * complete (no empty line yet). */
static size_t pol_one(struct conn *c, char *p, size_t n, void *arg)
{
    const struct catalog *cat = arg;
    const struct conf *cf = cat->conf;
    struct pol_conn *pc = conn_priv(c);
    size_t end = policy_complete(p, n, &pc->scanned);
    if (end == 0) {
        if (n <= cf->max_line)
            return 0;
        reply_text(c, "DEFER_IF_PERMIT policy request longer than max_line");
        c->closing = true;
        return n;
    }
    struct policy_request r;
    size_t used = 0;
    char err[120], msg[200];
    enum policy_status st = policy_parse(p, end, &r, &used, err, sizeof(err));
    pc->scanned = 0;
    if (st != POLICY_REQUEST) {
        /* A line that is no attribute: the client does not speak the
         * protocol; answer once and close rather than guess. */
        snprintf(msg, sizeof(msg), "DEFER_IF_PERMIT bad policy request: %s", err);
        reply_text(c, msg);
        c->closing = true;
        return n;
    }
    answer(c, cat, &cf->policy[c->addr], &r);
    return end;
}

static unsigned pol_process(struct conn *c, bool draining)
{
    const struct catalog *cat = registry_read(c->w->reg);
    if (c->addr >= cat->conf->n_policy) { /* cannot happen: see tcptable_conn.c */
        reply_text(c, UNAVAILABLE);
        c->closing = true;
        return 0;
    }
    return conn_each_request(c, cat->conf, draining, pol_one, (void *)cat);
}

static size_t pol_in_limit(const struct conf *cf)
{
    return cf->max_line + 2;
}

/* The request passed max_line (CONN_FULL_LIMIT) or would pass max_buffered,
 * the daemon-wide budget of input buffers (CONN_FULL_BUDGET): an action that
 * defers rather than rejects (the fault is ours or the client's, not the
 * mail's), then the close. Worker thread. */
static void pol_in_full(struct conn *c, enum conn_full why)
{
    reply_text(c, why == CONN_FULL_BUDGET
                      ? "DEFER_IF_PERMIT policy server request buffers full (max_buffered)"
                      : "DEFER_IF_PERMIT policy request longer than max_line");
}

/* A request begun more than request_timeout ago that has not ended (no empty
 * line yet): a deferring action, then the close. Worker thread. */
static void pol_request_timeout(struct conn *c)
{
    reply_text(c, "DEFER_IF_PERMIT policy request did not arrive within request_timeout");
}

/* Counted as a protocol of its own (policy_*), as tcp_table is (see
 * tcptable_conn.c). */
const struct conn_ops policy_ops = {
    .name = "policy",
    .proto = STATS_POLICY,
    .priv_size = sizeof(struct pol_conn),
    .worker_size = sizeof(struct pol_worker),
    .process = pol_process,
    .in_limit = pol_in_limit,
    .in_full = pol_in_full,
    .request_timeout = pol_request_timeout,
    .refusal = "action=" UNAVAILABLE "\n\n",
    .stop = conn_stop_drain,
};
