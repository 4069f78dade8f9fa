/* helper_squid: bloomgate-squid's side that faces Squid (see helper.c): a
 * request line becomes a struct req, its context words and one check per
 * value and filter; decided requests are written back, those with a channel
 * ID at once, the others in order. The helper's one thread. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "squid/helper_int.h"

static void req_append(struct helper *h, struct req *r)
{
    r->next = NULL;
    if (h->tail)
        h->tail->next = r;
    else
        h->head = r;
    h->tail = r;
}

static char *word_dup(const char *key, const char *v, size_t n, size_t *len)
{
    size_t kl = strlen(key);
    char *w = helper_xrealloc(NULL, kl + n + 1);
    memcpy(w, key, kl);
    memcpy(w + kl, v, n);
    w[kl + n] = '\0';
    *len = kl + n;
    return w;
}

/* The request's context as the daemon's words (r->ctx_word). -1 after a BH
 * reply: a page URL longer than an item may be. */
static int ctx_words(struct req *r, const struct squid_ctx *c)
{
    if (c->from) {
        char *esc = helper_xrealloc(NULL, 3 * c->from_len + 1);
        size_t n = squidproto_item_escape(c->from, c->from_len, esc);
        if (n > ITEM_MAX) {
            free(esc);
            helper_set_reply(r, SQUID_BH,
                             "bloomgate: the page (Referer or Origin) is longer than %d bytes",
                             ITEM_MAX);
            return -1;
        }
        r->ctx_word[W_FROM] = word_dup("from=", esc, n, &r->ctx_len[W_FROM]);
        free(esc);
    }
    if (c->type)
        r->ctx_word[W_TYPE] = word_dup("type=", c->type, strlen(c->type), &r->ctx_len[W_TYPE]);
    if (c->method)
        r->ctx_word[W_METHOD] =
            word_dup("method=", c->method, strlen(c->method), &r->ctx_len[W_METHOD]);
    for (int k = 0; k < W_KEYS; k++)
        if (r->ctx_word[k])
            r->ctx_mask |= 1u << k;
    return 0;
}

/* One request line: parse, take out its context, then queue a check per
 * value and filter. */
static void on_squid_line(struct helper *h, char *line, size_t len)
{
    struct req *r = helper_xrealloc(NULL, sizeof(*r));
    memset(r, 0, sizeof(*r));
    r->hit_filter = -1;
    struct squid_line l;
    char err[160];
    size_t lead = 0;
    while (lead < len && (line[lead] == ' ' || line[lead] == '\t' || line[lead] == '\r'))
        lead++;
    if (lead == len) {
        free(r); /* a blank line: nothing to answer, as the daemon does */
        return;
    }
    if (squidproto_parse_line(line, len, &l, err, sizeof(err)) != 0) {
        r->has_channel = l.has_channel;
        memcpy(r->channel, l.channel, sizeof(r->channel));
        req_append(h, r);
        helper_set_reply(r, SQUID_BH, "bloomgate: %s", err);
        return;
    }
    r->has_channel = l.has_channel;
    memcpy(r->channel, l.channel, sizeof(r->channel));
    req_append(h, r);
    struct squid_ctx ctx;
    if (squidproto_take_context(&l, &h->o->ctx, &ctx, err, sizeof(err)) != 0) {
        helper_set_reply(r, SQUID_BH, "bloomgate: %s", err);
        return;
    }
    if (ctx_words(r, &ctx) != 0)
        return;
    for (size_t i = 0; i < l.n_values; i++) {
        if (squidproto_value_absent(l.value[i], l.value_len[i]))
            continue;
        char *it = helper_xrealloc(NULL, 3 * l.value_len[i] + 1);
        size_t n = squidproto_item_escape(l.value[i], l.value_len[i], it);
        it[n] = '\0';
        if (n > ITEM_MAX) {
            free(it);
            helper_set_reply(r, SQUID_BH, "bloomgate: value %zu is longer than %d bytes", i + 1,
                             ITEM_MAX);
            break;
        }
        r->item[r->n_items] = it;
        r->item_len[r->n_items++] = n;
    }
    if (r->done)
        return;
    if (r->n_items == 0) {
        helper_set_reply(r, SQUID_BH, "bloomgate: nothing to check (every value is '-')");
        return;
    }
    r->pending = (unsigned)(r->n_items * h->o->n_filters);
    for (size_t f = 0; f < h->o->n_filters; f++)
        for (size_t i = 0; i < r->n_items; i++)
            helper_refvec_push(&h->queue[f], (struct ref){r, i, false});
}

/* A request line over LINE_MAX_IN: BH, routed by its channel ID. */
static void squid_too_long(struct helper *h, const char *line, size_t len)
{
    struct req *r = helper_xrealloc(NULL, sizeof(*r));
    memset(r, 0, sizeof(*r));
    r->has_channel = squidproto_peek_channel(line, len, r->channel);
    req_append(h, r);
    helper_set_reply(r, SQUID_BH, "bloomgate: request line longer than %d bytes", LINE_MAX_IN);
}

/* Read Squid's requests; lines over LINE_MAX_IN are answered BH (routed by
 * their channel ID) and skipped up to their LF. */
void helper_squid_read(struct helper *h)
{
    helper_grow(&h->sq, &h->sq_cap, LINE_MAX_IN + 1);
    ssize_t n = read(h->o->in_fd, h->sq + h->sq_len, h->sq_cap - h->sq_len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        h->sq_eof = true;
        return;
    }
    h->sq_len += (size_t)n;
    size_t off = 0;
    for (;;) {
        char *lf = memchr(h->sq + off, '\n', h->sq_len - off);
        if (!lf)
            break;
        size_t l = (size_t)(lf - (h->sq + off));
        if (h->sq_skip)
            h->sq_skip = false;
        else if (l > LINE_MAX_IN)
            squid_too_long(h, h->sq + off, l);
        else
            on_squid_line(h, h->sq + off, l > 0 && h->sq[off + l - 1] == '\r' ? l - 1 : l);
        off += l + 1;
    }
    memmove(h->sq, h->sq + off, h->sq_len - off);
    h->sq_len -= off;
    if (h->sq_skip) {
        h->sq_len = 0; /* still inside the over-long line */
    } else if (h->sq_len > LINE_MAX_IN) {
        squid_too_long(h, h->sq, h->sq_len);
        h->sq_skip = true;
        h->sq_len = 0;
    }
}

void helper_req_free(struct req *r)
{
    for (size_t i = 0; i < r->n_items; i++)
        free(r->item[i]);
    for (int k = 0; k < W_KEYS; k++)
        free(r->ctx_word[k]);
    free(r);
}

/* Write every decided reply that may go now: one with a channel ID at once,
 * one without only after every request read before it. One write for all. */
int helper_squid_write(struct helper *h, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    bool in_order = true; /* every request before this one has been written */
    struct req **pp = &h->head, *prev = NULL;
    while (*pp) {
        struct req *r = *pp;
        if (r->done && (r->has_channel || in_order)) {
            helper_grow(&buf, &cap, len + r->reply_len);
            memcpy(buf + len, r->reply, r->reply_len);
            len += r->reply_len;
            *pp = r->next;
            if (h->tail == r)
                h->tail = prev;
            helper_req_free(r);
            continue;
        }
        in_order = false;
        prev = r;
        pp = &r->next;
    }
    int rc = 0;
    if (len > 0 && util_write_all(h->o->out_fd, buf, len) != 0) {
        snprintf(err, errlen, "writing to Squid: %s", strerror(errno));
        rc = -1;
    }
    free(buf);
    return rc;
}
