/* helper: bloomgate-squid's request loop (see helper.h).
 *
 * A request (one line from Squid) becomes one check per value and filter.
 * Checks wait in a queue per filter; whenever the daemon connection can take
 * them, each filter's queue goes out as one MCHECK (at most `batch` items and
 * BATCH_BYTES bytes). With --context a request carries context words (from=,
 * type=, method=); in an MCHECK a word holds for the items after it until the
 * next word of its key, and none can be unset, so the queue is sorted by
 * context and a line takes items while their keys are a superset of the
 * line's so far, writing only the words that change (compose). The daemon
 * answers in order, so a FIFO of what was sent pairs each reply line with its
 * checks. A request whose checks are all answered is decided: a YES sends one
 * MATCH (for the first filter that said YES, with the request's context) to
 * name the key, then OK; otherwise ERR, or BH when a check failed.
 * Decided requests are written at once when they carry a channel ID (Squid's
 * concurrency >= 1: out of order is allowed), else in the order read.
 *
 * The connection: connected lazily, non-blocking. When it drops, checks that
 * were in flight go out once more on a new connection; when connecting fails
 * or a reply is late, every waiting check fails (BH, or ERR with --on-down err)
 * and reconnects are tried with a backoff (100 ms doubling to 1 s) during
 * which new requests are answered at once. So Squid never waits on a dead
 * daemon longer than the timeout. */
#include "config.h"

#include "squid/helper.h"
#include "squid/helper_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

/* ---- deciding a request ---- */

/* All checks of r are answered: decide, or queue the MATCH that names the hit. */
static void maybe_decide(struct helper *h, struct req *r)
{
    if (r->done || r->pending > 0 || r->matching)
        return;
    if (r->hit_filter >= 0) {
        if (h->state != C_DOWN && !r->matched) {
            r->matching = true;
            helper_refvec_push(&h->matchq,
                               (struct ref){r, (size_t)r->hit_filter * 64 + r->hit_item, 0});
            return;
        }
        helper_set_reply(r, SQUID_OK, "bloomgate: listed in %s", h->o->filters[r->hit_filter]);
    } else if (r->err_item || (r->err_down && h->o->on_down == SQUID_BH)) {
        helper_set_reply(r, SQUID_BH, "bloomgate: %s", r->err);
    } else if (r->err_down) {
        helper_set_reply(r, SQUID_ERR, "bloomgate: not checked: %s", r->err);
    } else {
        char names[SQUIDPROTO_MESSAGE_MAX];
        size_t o = 0;
        for (size_t f = 0; f < h->o->n_filters && o < sizeof(names) - 1; f++)
            o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", f ? " " : "",
                                  h->o->filters[f]);
        helper_set_reply(r, SQUID_ERR, "bloomgate: not listed in %s", names);
    }
}

/* A check failed: down (the daemon could not be reached) or for a reason of
 * its own. */
static void fail_ref(struct helper *h, struct ref *x, bool down, const char *why)
{
    struct req *r = x->r;
    if (!r->err_item && !r->err_down)
        snprintf(r->err, sizeof(r->err), "%s", why);
    if (down)
        r->err_down = true;
    else
        r->err_item = true;
    r->pending--;
    maybe_decide(h, r);
}

static void answer_ref(struct helper *h, struct ref *x, size_t filter, bool present)
{
    struct req *r = x->r;
    if (present && (r->hit_filter < 0 || (size_t)r->hit_filter > filter)) {
        r->hit_filter = (int)filter;
        r->hit_item = x->item;
    }
    r->pending--;
    maybe_decide(h, r);
}

/* ---- the connection ---- */

static void fail_all_waiting(struct helper *h, const char *why)
{
    for (size_t f = 0; f < h->o->n_filters; f++) {
        struct refvec *q = &h->queue[f];
        for (size_t i = 0; i < q->n; i++)
            fail_ref(h, &q->v[i], true, why);
        q->n = 0;
    }
    /* Hits waiting for their MATCH are decided without naming the key. */
    struct refvec mq = h->matchq;
    h->matchq = (struct refvec){0};
    for (size_t i = 0; i < mq.n; i++) {
        mq.v[i].r->matching = false;
        maybe_decide(h, mq.v[i].r);
    }
    free(mq.v);
}

/* Close the connection. In-flight checks go back to their queues once
 * (retry) or fail; in-flight MATCHes decide their request without a key. */
static void conn_close(struct helper *h, bool retry, const char *why)
{
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
    h->state = C_DOWN;
    h->out_len = h->out_off = 0;
    h->in_len = 0;
    snprintf(h->down_why, sizeof(h->down_why), "%s", why);
    while (h->sent_n > 0) {
        struct sent *s = &h->sent[h->sent_head];
        h->sent_head = (h->sent_head + 1) % h->sent_cap;
        h->sent_n--;
        for (size_t i = 0; i < s->refs.n; i++) {
            struct ref *x = &s->refs.v[i];
            if (s->kind == SENT_MATCH) {
                x->r->matching = false;
                maybe_decide(h, x->r);
            } else if (retry && !x->retried) {
                x->retried = true;
                helper_refvec_push(&h->queue[s->filter], *x);
            } else {
                fail_ref(h, x, true, why);
            }
        }
        free(s->refs.v);
    }
}

/* Connecting failed (why): grow the backoff, log once until the next
 * success, and fail every waiting check. */
static void mark_down(struct helper *h, double now, const char *why)
{
    h->backoff = h->backoff < BACKOFF_MIN ? BACKOFF_MIN : h->backoff * 2;
    if (h->backoff > BACKOFF_MAX)
        h->backoff = BACKOFF_MAX;
    h->next_try = now + h->backoff;
    snprintf(h->down_why, sizeof(h->down_why), "%s", why);
    if (!h->logged_down)
        log_warn("bloomgate-squid: %s; answering %s until it is back", why,
                 h->o->on_down == SQUID_BH ? "BH" : "ERR");
    h->logged_down = true;
    fail_all_waiting(h, why);
}

/* Start a non-blocking connect. On an immediate failure the waiting checks
 * fail and the backoff grows. */
static void conn_start(struct helper *h, double now)
{
    char why[200];
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(h->o->host, h->o->port, &hints, &ai);
    int fd = -1;
    if (rc != 0) {
        snprintf(why, sizeof(why), "%s:%s: %s", h->o->host, h->o->port, gai_strerror(rc));
    } else {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS)) {
            snprintf(why, sizeof(why), "bloomgated at %s:%s unreachable: %s", h->o->host,
                     h->o->port, strerror(errno));
            if (fd >= 0)
                close(fd);
            fd = -1;
        }
        freeaddrinfo(ai);
    }
    if (fd < 0) {
        mark_down(h, now, why);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    h->fd = fd;
    h->state = C_CONNECTING;
    h->connect_at = now;
}

/* The connect finished (POLLOUT): up, or failed like conn_start. */
static void conn_finish(struct helper *h, double now)
{
    int e = 0;
    socklen_t el = sizeof(e);
    if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
        e = errno;
    if (e == 0) {
        h->state = C_UP;
        /* At the failure's level, so the default (warn) shows both. */
        if (h->logged_down)
            log_warn("bloomgate-squid: connected to bloomgated at %s:%s again", h->o->host,
                     h->o->port);
        h->logged_down = false;
        return;
    }
    close(h->fd);
    h->fd = -1;
    h->state = C_DOWN;
    char why[200];
    snprintf(why, sizeof(why), "bloomgated at %s:%s unreachable: %s", h->o->host, h->o->port,
             strerror(e));
    mark_down(h, now, why);
}

static struct sent *sent_push(struct helper *h, enum sent_kind kind, size_t filter, double now)
{
    if (h->sent_n == h->sent_cap) {
        size_t ncap = h->sent_cap ? h->sent_cap * 2 : 64;
        struct sent *ns = helper_xrealloc(NULL, ncap * sizeof(*ns));
        for (size_t i = 0; i < h->sent_n; i++)
            ns[i] = h->sent[(h->sent_head + i) % h->sent_cap];
        free(h->sent);
        h->sent = ns;
        h->sent_head = 0;
        h->sent_cap = ncap;
    }
    struct sent *s = &h->sent[(h->sent_head + h->sent_n) % h->sent_cap];
    h->sent_n++;
    *s = (struct sent){.kind = kind, .filter = filter, .at = now};
    return s;
}

static void out_put(struct helper *h, const char *p, size_t n)
{
    helper_grow(&h->out, &h->out_cap, h->out_len + n);
    memcpy(h->out + h->out_len, p, n);
    h->out_len += n;
}

/* Order checks by context: the key mask first (numeric order puts a mask
 * after its subsets, so a line can go on from one to a superset), then the
 * words, so that the requests of one page and type sit together. */
static int ref_ctx_cmp(const void *a, const void *b)
{
    const struct req *x = ((const struct ref *)a)->r, *y = ((const struct ref *)b)->r;
    if (x->ctx_mask != y->ctx_mask)
        return x->ctx_mask < y->ctx_mask ? -1 : 1;
    for (int k = 0; k < W_KEYS; k++) {
        if (!x->ctx_word[k])
            continue;
        int c = strcmp(x->ctx_word[k], y->ctx_word[k]);
        if (c)
            return c;
    }
    return 0;
}

static void out_ctx(struct helper *h, const struct req *r)
{
    for (int k = 0; k < W_KEYS; k++)
        if (r->ctx_word[k]) {
            out_put(h, " ", 1);
            out_put(h, r->ctx_word[k], r->ctx_len[k]);
        }
}

/* One MCHECK line of q's checks from *i on: at most `batch` items and about
 * BATCH_BYTES bytes; each item preceded by the context words that differ from
 * the line's so far; an item whose keys do not cover the line's (a word cannot
 * be unset), or whose words would pass CTX_WORDS_MAX, starts the next line. */
static void compose_line(struct helper *h, size_t f, struct refvec *q, size_t *i, double now)
{
    struct sent *s = sent_push(h, SENT_MCHECK, f, now);
    out_put(h, "MCHECK ", 7);
    out_put(h, h->o->filters[f], strlen(h->o->filters[f]));
    const char *cur[W_KEYS] = {NULL, NULL, NULL}; /* the line's word of each key */
    unsigned mask = 0;
    size_t bytes = 0, words = 0;
    while (*i < q->n && s->refs.n < h->batch) {
        struct ref *x = &q->v[*i];
        const struct req *r = x->r;
        if (mask & ~r->ctx_mask)
            break;
        size_t need = r->item_len[x->item] + 1, nw = 0;
        for (int k = 0; k < W_KEYS; k++)
            if (r->ctx_word[k] && (!cur[k] || strcmp(cur[k], r->ctx_word[k]) != 0)) {
                need += r->ctx_len[k] + 1;
                nw++;
            }
        if (s->refs.n > 0 && (bytes + need >= BATCH_BYTES || words + nw > CTX_WORDS_MAX))
            break;
        for (int k = 0; k < W_KEYS; k++)
            if (r->ctx_word[k] && (!cur[k] || strcmp(cur[k], r->ctx_word[k]) != 0)) {
                out_put(h, " ", 1);
                out_put(h, r->ctx_word[k], r->ctx_len[k]);
                cur[k] = r->ctx_word[k];
            }
        out_put(h, " ", 1);
        out_put(h, r->item[x->item], r->item_len[x->item]);
        mask |= r->ctx_mask;
        bytes += need;
        words += nw;
        helper_refvec_push(&s->refs, *x);
        (*i)++;
    }
    out_put(h, "\n", 1);
}

/* Turn the waiting checks into commands in the output buffer: per filter one
 * MCHECK of everything waiting (split by compose_line), then the MATCHes,
 * each with its request's context. */
static void compose(struct helper *h, double now)
{
    for (size_t f = 0; f < h->o->n_filters; f++) {
        struct refvec *q = &h->queue[f];
        if (h->o->ctx.n > 0 && q->n > 1)
            qsort(q->v, q->n, sizeof(*q->v), ref_ctx_cmp);
        size_t i = 0;
        while (i < q->n)
            compose_line(h, f, q, &i, now);
        q->n = 0;
    }
    for (size_t i = 0; i < h->matchq.n; i++) {
        struct ref *x = &h->matchq.v[i];
        size_t f = x->item / 64, item = x->item % 64;
        struct sent *s = sent_push(h, SENT_MATCH, f, now);
        out_put(h, "MATCH ", 6);
        out_put(h, h->o->filters[f], strlen(h->o->filters[f]));
        out_put(h, " ", 1);
        out_put(h, x->r->item[item], x->r->item_len[item]);
        out_ctx(h, x->r);
        out_put(h, "\n", 1);
        helper_refvec_push(&s->refs, *x);
    }
    h->matchq.n = 0;
}

/* One reply line from the daemon for the oldest command in flight. -1 if the
 * line makes no sense (the connection is then closed). */
static int on_daemon_line(struct helper *h, const char *line, size_t len)
{
    if (h->sent_n == 0) {
        log_warn("bloomgate-squid: bloomgated sent a line nobody asked for: %.200s", line);
        return -1;
    }
    struct sent s = h->sent[h->sent_head];
    h->sent_head = (h->sent_head + 1) % h->sent_cap;
    h->sent_n--;
    const char *fname = h->o->filters[s.filter];
    const char *code, *msg, *key;
    size_t codelen, msglen, item, keylen;
    int rc = 0;
    if (s.kind == SENT_MATCH) {
        struct req *r = s.refs.v[0].r;
        r->matching = false;
        r->matched = true; /* a NO must not send the MATCH again, and again */
        if (squidproto_match_reply(line, len, &key, &keylen) == 1)
            helper_set_reply(r, SQUID_OK, "bloomgate: listed in %s as %.*s", fname, (int)keylen,
                             key);
        else
            maybe_decide(h, r); /* NO (a reload in between) or an error: unnamed */
    } else {
        bool present[SQUIDPROTO_VALUES_MAX * HELPER_FILTERS_MAX];
        bool *pr = s.refs.n <= sizeof(present) / sizeof(present[0])
                       ? present
                       : helper_xrealloc(NULL, s.refs.n * sizeof(bool));
        if (squidproto_mcheck_reply(line, len, s.refs.n, pr) == 0) {
            for (size_t i = 0; i < s.refs.n; i++)
                answer_ref(h, &s.refs.v[i], s.filter, pr[i]);
        } else if (squidproto_daemon_error(line, len, &code, &codelen, &msg, &msglen, &item) == 0) {
            /* The item's place in our batch means nothing to Squid's reader. */
            const char *colon = item ? memchr(msg, ':', msglen) : NULL;
            if (colon && colon < msg + 26 && colon + 2 <= msg + msglen) {
                msglen -= (size_t)(colon + 2 - msg);
                msg = colon + 2;
            }
            char why[200];
            snprintf(why, sizeof(why), "%s: %.*s %.*s", fname, (int)codelen, code, (int)msglen,
                     msg);
            bool split = codelen == 14 && memcmp(code, "too_many_items", 14) == 0 && s.refs.n > 1;
            if (split)
                h->batch = s.refs.n / 2;
            for (size_t i = 0; i < s.refs.n; i++) {
                if (split || (item >= 1 && item <= s.refs.n && i + 1 != item))
                    helper_refvec_push(&h->queue[s.filter],
                                       s.refs.v[i]); /* again, without the bad one */
                else
                    fail_ref(h, &s.refs.v[i], false, why);
            }
        } else {
            log_warn("bloomgate-squid: bloomgated answered MCHECK %s with: %.200s", fname, line);
            for (size_t i = 0; i < s.refs.n; i++)
                fail_ref(h, &s.refs.v[i], false, "unexpected reply from bloomgated");
            rc = -1;
        }
        if (pr != present)
            free(pr);
    }
    free(s.refs.v);
    h->backoff = 0;
    return rc;
}

/* Read what the daemon sent and handle every whole line. */
static void daemon_read(struct helper *h)
{
    for (;;) {
        helper_grow(&h->in, &h->in_cap, h->in_len + 65536);
        ssize_t n = recv(h->fd, h->in + h->in_len, h->in_cap - h->in_len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n <= 0) {
            char why[200];
            snprintf(why, sizeof(why), "bloomgated at %s:%s closed the connection%s%s", h->o->host,
                     h->o->port, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
            if (h->sent_n > 0)
                log_warn("bloomgate-squid: %s with %zu commands unanswered; trying again", why,
                         h->sent_n);
            conn_close(h, true, why);
            return;
        }
        h->in_len += (size_t)n;
        size_t off = 0;
        char *lf;
        while ((lf = memchr(h->in + off, '\n', h->in_len - off)) != NULL) {
            size_t l = (size_t)(lf - (h->in + off));
            *lf = '\0';
            if (on_daemon_line(h, h->in + off, l) != 0) {
                conn_close(h, false, "unexpected reply from bloomgated");
                return;
            }
            off += l + 1;
        }
        memmove(h->in, h->in + off, h->in_len - off);
        h->in_len -= off;
        if (h->in_len > DAEMON_LINE_MAX) {
            conn_close(h, false, "bloomgated sent a reply line over 1 MiB");
            return;
        }
    }
}

static void daemon_write(struct helper *h)
{
    while (h->out_off < h->out_len) {
        ssize_t n =
            send(h->fd, h->out + h->out_off, h->out_len - h->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n < 0) {
            char why[200];
            snprintf(why, sizeof(why), "bloomgated at %s:%s: send: %s", h->o->host, h->o->port,
                     strerror(errno));
            conn_close(h, true, why);
            return;
        }
        h->out_off += (size_t)n;
    }
    h->out_off = h->out_len = 0;
}

/* ---- the loop ---- */

static bool have_waiting(const struct helper *h)
{
    if (h->matchq.n > 0)
        return true;
    for (size_t f = 0; f < h->o->n_filters; f++)
        if (h->queue[f].n > 0)
            return true;
    return false;
}

/* Waiting checks while down: connect if the backoff allows, else fail them. */
static void drive_connection(struct helper *h, double now)
{
    if (h->state == C_DOWN && have_waiting(h)) {
        if (now >= h->next_try)
            conn_start(h, now);
        else
            fail_all_waiting(h, h->down_why);
    }
    if (h->state == C_UP && have_waiting(h)) {
        compose(h, now);
        daemon_write(h);
    }
}

static void check_timeouts(struct helper *h, double now)
{
    if (h->state == C_CONNECTING && now - h->connect_at >= h->o->timeout) {
        char why[200];
        snprintf(why, sizeof(why), "bloomgated at %s:%s: connect timed out after %g s", h->o->host,
                 h->o->port, h->o->timeout);
        close(h->fd);
        h->fd = -1;
        h->state = C_DOWN;
        h->backoff = BACKOFF_MAX / 2;
        mark_down(h, now, why);
    } else if (h->state == C_UP && h->sent_n > 0 &&
               now - h->sent[h->sent_head].at >= h->o->timeout) {
        char why[200];
        snprintf(why, sizeof(why), "bloomgated at %s:%s did not answer within %g s", h->o->host,
                 h->o->port, h->o->timeout);
        log_warn("bloomgate-squid: %s; reconnecting", why);
        h->logged_down = true;
        conn_close(h, false, why);
        h->backoff = BACKOFF_MAX;
        h->next_try = now + h->backoff;
    }
}

int helper_run(const struct helper_opts *o, char *err, size_t errlen)
{
    struct helper h = {.o = o, .fd = -1, .state = C_DOWN, .batch = o->batch};
    snprintf(h.down_why, sizeof(h.down_why), "bloomgated at %s:%s unreachable", o->host, o->port);
    int rc = 0;
    while (!h.sq_eof || h.head) {
        double now = util_now();
        struct pollfd p[2];
        int np = 0, sq_i = -1, d_i = -1;
        if (!h.sq_eof) {
            p[np] = (struct pollfd){o->in_fd, POLLIN, 0};
            sq_i = np++;
        }
        if (h.fd >= 0) {
            short ev =
                h.state == C_CONNECTING ? POLLOUT : (short)(POLLIN | (h.out_len ? POLLOUT : 0));
            p[np] = (struct pollfd){h.fd, ev, 0};
            d_i = np++;
        }
        double wait = -1;
        if (h.state == C_CONNECTING)
            wait = h.connect_at + o->timeout - now;
        else if (h.state == C_UP && h.sent_n > 0)
            wait = h.sent[h.sent_head].at + o->timeout - now;
        int ms = wait < 0 && (h.state == C_CONNECTING || h.sent_n > 0) ? 0
                 : wait < 0                                            ? -1
                                                                       : (int)(wait * 1000) + 1;
        if (poll(p, (nfds_t)np, ms) < 0 && errno != EINTR) {
            snprintf(err, errlen, "poll: %s", strerror(errno));
            return -1;
        }
        now = util_now();
        if (d_i >= 0 && p[d_i].revents) {
            if (h.state == C_CONNECTING)
                conn_finish(&h, now);
            else {
                if (p[d_i].revents & (POLLIN | POLLERR | POLLHUP))
                    daemon_read(&h);
                if (h.state == C_UP && (p[d_i].revents & POLLOUT))
                    daemon_write(&h);
            }
        }
        if (sq_i >= 0 && (p[sq_i].revents & (POLLIN | POLLHUP | POLLERR)))
            helper_squid_read(&h);
        check_timeouts(&h, now);
        drive_connection(&h, now);
        if (helper_squid_write(&h, err, errlen) != 0) {
            rc = -1;
            break;
        }
    }
    if (h.fd >= 0)
        close(h.fd);
    while (h.head) {
        struct req *r = h.head;
        h.head = r->next;
        helper_req_free(r);
    }
    for (size_t f = 0; f < HELPER_FILTERS_MAX; f++)
        free(h.queue[f].v);
    free(h.matchq.v);
    for (size_t i = 0; i < h.sent_n; i++)
        free(h.sent[(h.sent_head + i) % h.sent_cap].refs.v);
    free(h.sent);
    free(h.out);
    free(h.in);
    free(h.sq);
    return rc;
}
