/* helper_util: bloomgate-squid's growing buffers and a request's reply
 * line (helper_int.h), below both halves of the helper (helper.c, the
 * daemon's side; helper_squid.c, Squid's) so that each calls down to them.
 * The helper's one thread. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "squid/helper_int.h"

void *helper_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        log_error("bloomgate-squid: out of memory (%zu bytes)", n);
        exit(1);
    }
    return q;
}

void helper_grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    *buf = helper_xrealloc(*buf, c);
    *cap = c;
}

void helper_refvec_push(struct refvec *v, struct ref r)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->v = helper_xrealloc(v->v, v->cap * sizeof(*v->v));
    }
    v->v[v->n++] = r;
}

void helper_set_reply(struct req *r, enum squid_result res, const char *fmt, ...)
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
