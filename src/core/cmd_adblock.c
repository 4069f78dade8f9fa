/* The command table's lookup in an adblock filter (core/cmd_int.h): the
 * compiled engine decides with each item's request context; a request it
 * lets through may still be blocked by the host tier (hosts added at run
 * time, as `||host^` rules would); the allow-list, last, un-blocks a host
 * and its subdomains. Worker threads; never blocks. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "adblock/adblock.h"
#include "core/cmd_int.h"
#include "store/allow.h"

/* An item without a scheme (adblock_needs_scheme: a bare host, a
 * CONNECT's host:port), as the context-free fronts and hand-typed lookups
 * send: read as `https://` and the item. Longer than the buffer: left as
 * it is (the engine refuses what it cannot read). Worker threads. */
#define SCHEMELESS_MAX 8192
static _Thread_local char tl_url[SCHEMELESS_MAX + 8];

static const char *with_scheme(const char *item, size_t len, size_t *out_len)
{
    if (!adblock_needs_scheme(item, len) || len > SCHEMELESS_MAX) {
        *out_len = len;
        return item;
    }
    memcpy(tl_url, "https://", 8);
    memcpy(tl_url + 8, item, len);
    *out_len = len + 8;
    return tl_url;
}

/* `no_context any`: a lookup without context is blocked when a request
 * for the URL of any type, first- or third-party, would be: each type
 * without an initiator, then from a page of a site of its own (a
 * reserved .invalid name, third-party to every real host), until one is
 * blocked. Rules limited to named initiator pages ($domain=) cannot
 * apply without one. At most 2 x ADBLOCK_TYPE_COUNT matches, for the
 * rare filter that asks. Worker threads. */
static int match_any(const struct adblock_engine *ab, struct adblock_ctx *x,
                     struct adblock_request *r, struct adblock_verdict *v, char *err, size_t errlen)
{
    static const char other[] = "https://bloomgate-any-context.invalid/";
    struct adblock_verdict first;
    for (int party = 0; party < 2; party++) {
        r->from = party ? other : NULL;
        r->from_len = party ? sizeof(other) - 1 : 0;
        for (int t = 0; t < ADBLOCK_TYPE_COUNT; t++) {
            r->type = t;
            if (adblock_match(ab, x, r, v, err, errlen) != 0)
                return -1;
            if (v->block)
                return 0;
            if (party == 0 && t == ADBLOCK_TYPE_DOCUMENT)
                first = *v;
        }
    }
    *v = first; /* nothing blocks: the document's answer names its exception */
    return 0;
}

/* What a call's items share, read once a call rather than once an item:
 * whether the host tier holds anything, whether the allow-list does. */
struct ab_call {
    bool tier, allow;
};

/* Item i: the verdict, its rule and exception kept for the reply of a
 * one-item call, and handed to call->named when the front asked. A URL the
 * engine cannot read (over its length limit) fails the request, as a url
 * filter's does: answering NO would let it walk past. */
static int adblock_item(const struct cmd_env *env, struct cmd_call *call, size_t i,
                        const struct ab_call *ac)
{
    const struct fversion *v = call->e->v;
    const struct cmd_ctx *c = call->item_ctx ? &call->item_ctx[i] : &call->ctx;
    const struct filter_key *k = &env->keys[i];
    size_t ulen;
    const char *url = with_scheme(k->data, k->len, &ulen);
    struct adblock_request r = {url, ulen, c->type, c->from, c->from_len, c->method};
    struct adblock_verdict vd;
    bool any = v->ab_any && c->type < 0 && !c->from && c->method < 0;
    if ((any ? match_any(v->ab, env->ab, &r, &vd, call->msg, sizeof(call->msg))
             : adblock_match(v->ab, env->ab, &r, &vd, call->msg, sizeof(call->msg))) != 0) {
        call->err = CMD_ERR_BAD_ITEM;
        call->bad_item = i + 1;
        return -1;
    }
    const char *m = vd.rule, *x = vd.exception;
    size_t mlen = vd.rule_len, xlen = vd.exception_len;
    bool block = vd.block;
    /* The tier answers only what no rule of the lists decided: an exception
     * of the lists that matched keeps the request passing. */
    if (!block && !x && ac->tier) {
        const char *hm;
        size_t hl;
        char why[8];
        if (cmd_match_again(call->e, k->data, k->len, &hm, &hl, why, sizeof(why)) == 1) {
            block = true;
            m = hm;
            mlen = hl;
        }
    }
    if (block && ac->allow) {
        const char *em;
        size_t el;
        if (cmd_host_excepted(v, k->data, k->len, &em, &el) == 1) {
            block = false;
            x = em;
            xlen = el;
            cmd_mark_allowed(env, call, i);
        }
    }
    env->bools[i] = block;
    if (!(m && (block || x))) { /* the block rule, or the one an exception overrode */
        m = NULL;
        mlen = 0;
    }
    if (!x)
        xlen = 0;
    if (call->named) /* before the next item's lookup reuses the scratch */
        call->named(call->named_arg, i, block, m, mlen, x, xlen);
    if (call->n_items == 1) {
        if (m) {
            call->match = m;
            call->match_len = mlen;
        }
        call->except = x;
        call->except_len = xlen;
    }
    return 0;
}

int cmd_adblock_check(const struct cmd_env *env, struct cmd_call *call)
{
    if (!env->ab) {
        call->err = CMD_ERR_INTERNAL;
        snprintf(call->msg, sizeof(call->msg), "no matcher scratch on this thread");
        return -1;
    }
    const struct fversion *v = call->e->v;
    struct ab_call ac = {filter_items(v->f) > 0, allow_any(v->allow)};
    for (size_t i = 0; i < call->n_items; i++)
        if (adblock_item(env, call, i, &ac) != 0)
            return -1;
    return 0;
}
