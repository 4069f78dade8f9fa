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

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

#define LINE_MAX_IN 65536 /* longest request line from Squid */
#define ITEM_MAX 8192     /* longest item sent (the daemon's default max_item) */
#define BATCH_BYTES 32768 /* longest MCHECK line (the daemon's max_line is 64 KiB) */
#define DAEMON_LINE_MAX 1048576
#define BACKOFF_MIN 0.1
#define BACKOFF_MAX 1.0
#define CTX_WORDS_MAX 16 /* context words the daemon takes in one request (PROTO_CTX_MAX) */

/* The context words, by key: bit k of a request's ctx_mask is word k. */
enum { W_FROM, W_TYPE, W_METHOD, W_KEYS };

struct req {
    struct req *next;
    bool has_channel;
    char channel[SQUIDPROTO_CHANNEL_MAX + 1];
    size_t n_items;
    char *item[SQUIDPROTO_VALUES_MAX]; /* escaped for the daemon, NUL-terminated */
    size_t item_len[SQUIDPROTO_VALUES_MAX];
    char *ctx_word[W_KEYS]; /* "from=...", "type=...", "method=..." (NULL: absent) */
    size_t ctx_len[W_KEYS];
    unsigned ctx_mask; /* which ctx_word are set */
    unsigned pending;  /* checks not yet answered */
    int hit_filter;    /* the first filter (by option order) that said YES; -1 */
    size_t hit_item;
    bool matching; /* a MATCH is queued or in flight */
    bool matched;  /* the MATCH was answered: decide even if it named nothing */
    bool err_item; /* a check failed for a reason of its own (bad item, ...) */
    bool err_down; /* a check failed because the daemon could not be reached */
    char err[256]; /* the first failure's reason */
    bool done;
    char reply[SQUIDPROTO_REPLY_MAX];
    size_t reply_len;
};

/* One check: a value of a request against a filter (or a MATCH). */
struct ref {
    struct req *r;
    size_t item;
    bool retried; /* went out once already on a connection that dropped */
};

struct refvec {
    struct ref *v;
    size_t n, cap;
};

enum sent_kind { SENT_MCHECK, SENT_MATCH };

/* A command in flight, in the order sent. */
struct sent {
    enum sent_kind kind;
    size_t filter;
    struct refvec refs;
    double at;
};

enum conn_state { C_DOWN, C_CONNECTING, C_UP };

struct helper {
    const struct helper_opts *o;
    struct req *head, *tail;                 /* requests in the order read */
    struct refvec queue[HELPER_FILTERS_MAX]; /* checks waiting per filter */
    struct refvec matchq;                    /* MATCHes waiting (ref.item: filter * 64 + item) */
    struct sent *sent;                       /* ring of commands in flight */
    size_t sent_head, sent_n, sent_cap;
    int fd;
    enum conn_state state;
    double connect_at; /* when the current connect began */
    double next_try;   /* no connect before this (backoff) */
    double backoff;
    bool logged_down;   /* "cannot connect" logged since the last success */
    char down_why[200]; /* why the daemon is unreachable, for messages */
    char *out;          /* bytes to send to the daemon */
    size_t out_len, out_off, out_cap;
    char *in; /* bytes received from the daemon */
    size_t in_len, in_cap;
    char *sq; /* bytes read from Squid */
    size_t sq_len, sq_cap;
    bool sq_skip; /* discarding the rest of an over-long line */
    bool sq_eof;
    size_t batch; /* current MCHECK size limit (halved on too_many_items) */
};

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        log_error("bloomgate-squid: out of memory (%zu bytes)", n);
        exit(1);
    }
    return q;
}

static void grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    *buf = xrealloc(*buf, c);
    *cap = c;
}

static void refvec_push(struct refvec *v, struct ref r)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->v = xrealloc(v->v, v->cap * sizeof(*v->v));
    }
    v->v[v->n++] = r;
}

/* ---- deciding a request ---- */

static void set_reply(struct req *r, enum squid_result res, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_reply(struct req *r, enum squid_result res, const char *fmt, ...)
{
    char msg[SQUIDPROTO_MESSAGE_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n >= sizeof(msg) ? sizeof(msg) - 1 : (size_t)n;
    r->reply_len = squidproto_reply(r->reply, r->has_channel ? r->channel : NULL, res, msg, len);
    r->done = true;
}

/* All checks of r are answered: decide, or queue the MATCH that names the hit. */
static void maybe_decide(struct helper *h, struct req *r)
{
    if (r->done || r->pending > 0 || r->matching)
        return;
    if (r->hit_filter >= 0) {
        if (h->state != C_DOWN && !r->matched) {
            r->matching = true;
            refvec_push(&h->matchq, (struct ref){r, (size_t)r->hit_filter * 64 + r->hit_item, 0});
            return;
        }
        set_reply(r, SQUID_OK, "bloomgate: listed in %s", h->o->filters[r->hit_filter]);
    } else if (r->err_item || (r->err_down && h->o->on_down == SQUID_BH)) {
        set_reply(r, SQUID_BH, "bloomgate: %s", r->err);
    } else if (r->err_down) {
        set_reply(r, SQUID_ERR, "bloomgate: not checked: %s", r->err);
    } else {
        char names[SQUIDPROTO_MESSAGE_MAX];
        size_t o = 0;
        for (size_t f = 0; f < h->o->n_filters && o < sizeof(names) - 1; f++)
            o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", f ? " " : "",
                                  h->o->filters[f]);
        set_reply(r, SQUID_ERR, "bloomgate: not listed in %s", names);
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
                refvec_push(&h->queue[s->filter], *x);
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
        struct sent *ns = xrealloc(NULL, ncap * sizeof(*ns));
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
    grow(&h->out, &h->out_cap, h->out_len + n);
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
        refvec_push(&s->refs, *x);
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
        refvec_push(&s->refs, *x);
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
            set_reply(r, SQUID_OK, "bloomgate: listed in %s as %.*s", fname, (int)keylen, key);
        else
            maybe_decide(h, r); /* NO (a reload in between) or an error: unnamed */
    } else {
        bool present[SQUIDPROTO_VALUES_MAX * HELPER_FILTERS_MAX];
        bool *pr = s.refs.n <= sizeof(present) / sizeof(present[0])
                       ? present
                       : xrealloc(NULL, s.refs.n * sizeof(bool));
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
                    refvec_push(&h->queue[s.filter], s.refs.v[i]); /* again, without the bad one */
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
        grow(&h->in, &h->in_cap, h->in_len + 65536);
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

/* ---- Squid's side ---- */

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
    char *w = xrealloc(NULL, kl + n + 1);
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
        char *esc = xrealloc(NULL, 3 * c->from_len + 1);
        size_t n = squidproto_item_escape(c->from, c->from_len, esc);
        if (n > ITEM_MAX) {
            free(esc);
            set_reply(r, SQUID_BH,
                      "bloomgate: the page (Referer or Origin) is longer than %d bytes", ITEM_MAX);
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
    struct req *r = xrealloc(NULL, sizeof(*r));
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
        set_reply(r, SQUID_BH, "bloomgate: %s", err);
        return;
    }
    r->has_channel = l.has_channel;
    memcpy(r->channel, l.channel, sizeof(r->channel));
    req_append(h, r);
    struct squid_ctx ctx;
    if (squidproto_take_context(&l, &h->o->ctx, &ctx, err, sizeof(err)) != 0) {
        set_reply(r, SQUID_BH, "bloomgate: %s", err);
        return;
    }
    if (ctx_words(r, &ctx) != 0)
        return;
    for (size_t i = 0; i < l.n_values; i++) {
        if (squidproto_value_absent(l.value[i], l.value_len[i]))
            continue;
        char *it = xrealloc(NULL, 3 * l.value_len[i] + 1);
        size_t n = squidproto_item_escape(l.value[i], l.value_len[i], it);
        it[n] = '\0';
        if (n > ITEM_MAX) {
            free(it);
            set_reply(r, SQUID_BH, "bloomgate: value %zu is longer than %d bytes", i + 1, ITEM_MAX);
            break;
        }
        r->item[r->n_items] = it;
        r->item_len[r->n_items++] = n;
    }
    if (r->done)
        return;
    if (r->n_items == 0) {
        set_reply(r, SQUID_BH, "bloomgate: nothing to check (every value is '-')");
        return;
    }
    r->pending = (unsigned)(r->n_items * h->o->n_filters);
    for (size_t f = 0; f < h->o->n_filters; f++)
        for (size_t i = 0; i < r->n_items; i++)
            refvec_push(&h->queue[f], (struct ref){r, i, false});
}

/* A request line over LINE_MAX_IN: BH, routed by its channel ID. */
static void squid_too_long(struct helper *h, const char *line, size_t len)
{
    struct req *r = xrealloc(NULL, sizeof(*r));
    memset(r, 0, sizeof(*r));
    r->has_channel = squidproto_peek_channel(line, len, r->channel);
    req_append(h, r);
    set_reply(r, SQUID_BH, "bloomgate: request line longer than %d bytes", LINE_MAX_IN);
}

/* Read Squid's requests; lines over LINE_MAX_IN are answered BH (routed by
 * their channel ID) and skipped up to their LF. */
static void squid_read(struct helper *h)
{
    grow(&h->sq, &h->sq_cap, LINE_MAX_IN + 1);
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

static void req_free(struct req *r)
{
    for (size_t i = 0; i < r->n_items; i++)
        free(r->item[i]);
    for (int k = 0; k < W_KEYS; k++)
        free(r->ctx_word[k]);
    free(r);
}

/* Write every decided reply that may go now: one with a channel ID at once,
 * one without only after every request read before it. One write for all. */
static int squid_write(struct helper *h, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    bool in_order = true; /* every request before this one has been written */
    struct req **pp = &h->head, *prev = NULL;
    while (*pp) {
        struct req *r = *pp;
        if (r->done && (r->has_channel || in_order)) {
            grow(&buf, &cap, len + r->reply_len);
            memcpy(buf + len, r->reply, r->reply_len);
            len += r->reply_len;
            *pp = r->next;
            if (h->tail == r)
                h->tail = prev;
            req_free(r);
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
            squid_read(&h);
        check_timeouts(&h, now);
        drive_connection(&h, now);
        if (squid_write(&h, err, errlen) != 0) {
            rc = -1;
            break;
        }
    }
    if (h.fd >= 0)
        close(h.fd);
    while (h.head) {
        struct req *r = h.head;
        h.head = r->next;
        req_free(r);
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
