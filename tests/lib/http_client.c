/* The tests' HTTP/1.1 client: see http_client.h. */
#include "config.h"

#include "lib/http_client.h"
#include "lib/line_client.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((format(printf, 2, 3))) static int set_err(struct hc_conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof(c->err), fmt, ap);
    va_end(ap);
    return -1;
}

int hc_open(struct hc_conn *c, const char *ip, int port)
{
    memset(c, 0, sizeof(*c));
    /* The harness's connect: IPv4 or IPv6, close-on-exec, TCP_NODELAY. */
    c->fd = dh_connect_to(ip, port);
    if (c->fd < 0)
        return set_err(c, "connect %s:%d: %s", ip, port, strerror(errno));
    return 0;
}

void hc_close(struct hc_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = 0;
}

/* Wait until fd is ready for events, or the deadline passes. 1, or 0 on timeout. */
static int wait_fd(int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd pfd = {fd, events, 0};
        int n = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return 1; /* let the caller's send or recv report it */
    }
}

static int send_all(struct hc_conn *c, const void *p, size_t n, long long deadline)
{
    const char *s = p;
    while (n > 0) {
        ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            s += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return set_err(c, "send: %s", strerror(errno));
        if (!wait_fd(c->fd, POLLOUT, deadline))
            return set_err(c, "send: timed out");
    }
    return 0;
}

/* Receive more bytes into the buffer. 0, or -1 on EOF, error or timeout. */
static int fill(struct hc_conn *c, long long deadline)
{
    if (c->eof)
        return set_err(c, "the server closed the connection");
    if (c->cap - c->len < 16384) {
        size_t ncap = c->cap ? c->cap * 2 : 65536;
        char *nb = realloc(c->buf, ncap);
        if (!nb)
            return set_err(c, "out of memory");
        c->buf = nb;
        c->cap = ncap;
    }
    for (;;) {
        ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, MSG_DONTWAIT);
        if (n > 0) {
            c->len += (size_t)n;
            return 0;
        }
        if (n == 0) {
            c->eof = true;
            return set_err(c, "the server closed the connection");
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return set_err(c, "recv: %s", strerror(errno));
        if (!wait_fd(c->fd, POLLIN, deadline))
            return set_err(c, "no response within the time limit");
    }
}

int hc_send(struct hc_conn *c, const char *method, const char *target, const char *headers,
            const void *body, size_t blen, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    char head[8192];
    int n = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s", method, target,
                     headers ? headers : "");
    if (body && n > 0 && (size_t)n < sizeof(head))
        n += snprintf(head + n, sizeof(head) - (size_t)n, "Content-Length: %zu\r\n", blen);
    if (n > 0 && (size_t)n < sizeof(head))
        n += snprintf(head + n, sizeof(head) - (size_t)n, "\r\n");
    if (n < 0 || (size_t)n >= sizeof(head))
        return set_err(c, "request head too long");
    if (send_all(c, head, (size_t)n, deadline) != 0)
        return -1;
    if (body && blen && send_all(c, body, blen, deadline) != 0)
        return -1;
    return 0;
}

int hc_send_raw(struct hc_conn *c, const void *buf, size_t len, int timeout_ms)
{
    return send_all(c, buf, len, now_ms() + timeout_ms);
}

int hc_fill(struct hc_conn *c, int timeout_ms)
{
    return fill(c, now_ms() + timeout_ms);
}

bool hc_closed(struct hc_conn *c, int timeout_ms)
{
    if (c->len > 0)
        return false;
    if (c->eof)
        return true;
    if (!wait_fd(c->fd, POLLIN, now_ms() + timeout_ms))
        return false;
    char b;
    ssize_t n = recv(c->fd, &b, 1, MSG_DONTWAIT);
    if (n == 0)
        c->eof = true;
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

bool hc_header(const struct hc_resp *r, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = r->head ? strstr(r->head, "\r\n") : NULL; p && p[2];
         p = strstr(p + 2, "\r\n")) {
        const char *h = p + 2;
        if (strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
            const char *v = h + nl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            const char *e = strstr(v, "\r\n");
            size_t n = e ? (size_t)(e - v) : strlen(v);
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
    }
    return false;
}

/* Consume n bytes from the front of the buffer. */
static void consume(struct hc_conn *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

/* Append n bytes to the response body. */
static int body_add(struct hc_conn *c, struct hc_resp *r, const char *p, size_t n)
{
    char *nb = realloc(r->body, r->blen + n + 1);
    if (!nb)
        return set_err(c, "out of memory");
    r->body = nb;
    memcpy(r->body + r->blen, p, n);
    r->blen += n;
    r->body[r->blen] = '\0';
    return 0;
}

/* A chunked body: size lines, data, and a last zero-size chunk (no trailers
 * are expected from bloomgated, but an empty trailer section is read). */
static int read_chunked(struct hc_conn *c, struct hc_resp *r, long long deadline)
{
    for (;;) {
        char *eol;
        while (!(eol = c->len ? memmem(c->buf, c->len, "\r\n", 2) : NULL))
            if (fill(c, deadline) != 0)
                return -1;
        char *end;
        unsigned long size = strtoul(c->buf, &end, 16);
        if (end == c->buf)
            return set_err(c, "bad chunk size line");
        consume(c, (size_t)(eol - c->buf) + 2);
        if (size == 0) {
            while (!(eol = c->len ? memmem(c->buf, c->len, "\r\n", 2) : NULL))
                if (fill(c, deadline) != 0)
                    return -1;
            consume(c, (size_t)(eol - c->buf) + 2);
            return 0;
        }
        while (c->len < size + 2)
            if (fill(c, deadline) != 0)
                return -1;
        if (body_add(c, r, c->buf, size) != 0)
            return -1;
        consume(c, size + 2);
    }
}

int hc_recv(struct hc_conn *c, bool head_req, struct hc_resp *r, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    memset(r, 0, sizeof(*r));
    char *end;
    while (!(end = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL))
        if (fill(c, deadline) != 0)
            return -1;
    size_t hlen = (size_t)(end - c->buf) + 4;
    r->head = malloc(hlen + 1);
    r->body = malloc(1);
    if (!r->head || !r->body) {
        hc_resp_free(r);
        return set_err(c, "out of memory");
    }
    memcpy(r->head, c->buf, hlen);
    r->head[hlen] = '\0';
    r->body[0] = '\0';
    consume(c, hlen);
    if (sscanf(r->head, "HTTP/1.%*d %d", &r->status) != 1) {
        set_err(c, "bad status line: %.80s", r->head);
        hc_resp_free(r);
        return -1;
    }
    char v[64];
    r->conn_close = hc_header(r, "Connection", v, sizeof(v)) && strcasecmp(v, "close") == 0;
    int rc = 0;
    if (head_req || r->status == 204 || r->status == 304 || r->status / 100 == 1) {
        rc = 0;
    } else if (hc_header(r, "Content-Length", v, sizeof(v))) {
        size_t want = strtoull(v, NULL, 10);
        while (rc == 0 && c->len < want)
            rc = fill(c, deadline);
        if (rc == 0) {
            rc = body_add(c, r, c->buf, want);
            consume(c, want);
        }
    } else if (hc_header(r, "Transfer-Encoding", v, sizeof(v)) && strcasecmp(v, "chunked") == 0) {
        rc = read_chunked(c, r, deadline);
    } else {
        /* No length: the body runs to EOF. */
        while (fill(c, deadline) == 0)
            ;
        if (!c->eof) {
            rc = -1;
        } else {
            rc = body_add(c, r, c->buf, c->len);
            consume(c, c->len);
        }
    }
    if (rc != 0)
        hc_resp_free(r);
    return rc;
}

int hc_request(struct hc_conn *c, const char *method, const char *target, const char *headers,
               const void *body, size_t blen, struct hc_resp *r, int timeout_ms)
{
    memset(r, 0, sizeof(*r));
    if (hc_send(c, method, target, headers, body, blen, timeout_ms) != 0)
        return -1;
    return hc_recv(c, strcmp(method, "HEAD") == 0, r, timeout_ms);
}

void hc_resp_free(struct hc_resp *r)
{
    free(r->head);
    free(r->body);
    r->head = r->body = NULL;
    r->blen = 0;
}
