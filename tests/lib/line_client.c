/* The integration tests' line-protocol client: see line_client.h. */
#include "config.h"

#include "lib/line_client.h"
#include "lib/daemon_harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct dh_conn *conns[256]; /* connections dh_close has not closed yet */
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void dh_close_all(void)
{
    for (size_t i = 0; i < sizeof(conns) / sizeof(conns[0]); i++)
        if (conns[i])
            dh_close(conns[i]);
}

/* connect() on a non-blocking fd, waiting at most timeout_ms for the
 * handshake, then the fd made blocking again; 0, or -1 with errno (ETIMEDOUT
 * if the wait ran out). A blocking connect() to a listener whose accept queue
 * is full waits for the kernel's SYN retries (minutes), past the test's
 * timeout. Test thread. */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
    if (connect(fd, sa, len) != 0) {
        if (errno != EINPROGRESS)
            return -1;
        long long deadline = now_ms() + timeout_ms;
        for (;;) {
            long long left = deadline - now_ms();
            if (left <= 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            struct pollfd pfd = {fd, POLLOUT, 0};
            int n = poll(&pfd, 1, (int)left);
            if (n > 0)
                break;
            if (n < 0 && errno != EINTR)
                return -1;
        }
        int e = 0;
        socklen_t elen = sizeof(e);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) != 0)
            return -1;
        if (e != 0) {
            errno = e;
            return -1;
        }
    }
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 ? -1 : 0;
}

int dh_connect_to(const char *ip, int port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof(ss));
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, ip, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)port);
        len = sizeof(*sin);
    } else if (inet_pton(AF_INET6, ip, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t)port);
        len = sizeof(*sin6);
    } else {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect_within(fd, (struct sockaddr *)&ss, len, DH_TIMEOUT_MS) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

int dh_connect_fd(int port)
{
    return dh_connect_to("127.0.0.1", port);
}

struct dh_conn *dh_connect(struct dh_daemon *d)
{
    ck_assert_msg(d->port > 0, "daemon has no port (not started?)");
    int fd = dh_connect_fd(d->port);
    ck_assert_msg(fd >= 0, "cannot connect to 127.0.0.1:%d: %s", d->port, strerror(errno));
    return dh_conn_wrap(fd, d);
}

struct dh_conn *dh_conn_wrap(int fd, struct dh_daemon *d)
{
    struct dh_conn *c = calloc(1, sizeof(*c));
    ck_assert_ptr_nonnull(c);
    c->fd = fd;
    c->d = d;
    pthread_mutex_lock(&conns_lock);
    for (size_t i = 0; i < sizeof(conns) / sizeof(conns[0]); i++)
        if (!conns[i]) {
            conns[i] = c;
            break;
        }
    pthread_mutex_unlock(&conns_lock);
    return c;
}

void dh_close(struct dh_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&conns_lock);
    for (size_t i = 0; i < sizeof(conns) / sizeof(conns[0]); i++)
        if (conns[i] == c)
            conns[i] = NULL;
    pthread_mutex_unlock(&conns_lock);
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    free(c->line);
    free(c);
}

/* Read what is there into the buffer without blocking. 1 if bytes came, 0 if
 * none were waiting, -1 on EOF or error (c->eof / c->err set). */
static int conn_fill(struct dh_conn *c)
{
    if (c->off > 0 && c->off == c->len) {
        c->off = c->len = c->scanned = 0;
    } else if (c->off > 65536 && c->off > c->len / 2) {
        memmove(c->buf, c->buf + c->off, c->len - c->off);
        c->len -= c->off;
        c->scanned -= c->off;
        c->off = 0;
    }
    if (c->cap - c->len < 65536) {
        size_t ncap = c->cap ? c->cap * 2 : 131072;
        char *nb = realloc(c->buf, ncap);
        ck_assert_ptr_nonnull(nb);
        c->buf = nb;
        c->cap = ncap;
    }
    ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
    if (n > 0) {
        c->len += (size_t)n;
        return 1;
    }
    if (n == 0) {
        c->eof = true;
        return -1;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    c->err = errno;
    return -1;
}

int dh_send(struct dh_conn *c, const void *buf, size_t len, int timeout_ms)
{
    const char *p = buf;
    long long deadline = now_ms() + timeout_ms;
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            c->err = errno;
            return -1;
        }
        long long left = deadline - now_ms();
        if (left <= 0) {
            c->err = ETIMEDOUT;
            return -1;
        }
        struct pollfd pfd = {c->fd, POLLOUT | (c->eof ? 0 : POLLIN), 0};
        if (poll(&pfd, 1, (int)(left > 100 ? 100 : left)) > 0 && (pfd.revents & POLLIN))
            conn_fill(c); /* EOF here is found out by the next send */
    }
    return 0;
}

int dh_sendf(struct dh_conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    ck_assert_msg(n >= 0, "out of memory");
    int rc = dh_send(c, s, (size_t)n, DH_TIMEOUT_MS);
    free(s);
    return rc;
}

const char *dh_read_line(struct dh_conn *c, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        if (c->scanned < c->off)
            c->scanned = c->off;
        char *lf =
            c->len > c->scanned ? memchr(c->buf + c->scanned, '\n', c->len - c->scanned) : NULL;
        if (lf) {
            size_t n = (size_t)(lf - (c->buf + c->off));
            if (n + 1 > c->line_cap) {
                c->line_cap = n + 1 > 256 ? n + 1 : 256;
                free(c->line);
                c->line = malloc(c->line_cap);
                ck_assert_ptr_nonnull(c->line);
            }
            memcpy(c->line, c->buf + c->off, n);
            c->line[n] = '\0';
            c->off += n + 1;
            c->scanned = c->off;
            c->n_lines++;
            return c->line;
        }
        c->scanned = c->len;
        if (c->eof)
            return NULL;
        /* After a failed send (c->err), replies may still wait in the socket:
         * read on; a failed read ends it. */
        int r = conn_fill(c);
        if (r > 0)
            continue;
        if (r < 0)
            return NULL;
        long long left = deadline - now_ms();
        if (left <= 0)
            return NULL;
        struct pollfd pfd = {c->fd, POLLIN, 0};
        poll(&pfd, 1, (int)left);
    }
}

/* Why a connection gave no reply, for failure messages (static buffer). */
static const char *no_reply_why(struct dh_conn *c)
{
    const char *what = c->eof ? "the server closed" : c->err ? strerror(c->err) : "timed out";
    return dh_explain(c->d, what);
}

char **dh_read_lines(struct dh_conn *c, size_t n, int timeout_ms)
{
    char **lines = calloc(n + 1, sizeof(*lines));
    ck_assert_ptr_nonnull(lines);
    long long deadline = now_ms() + timeout_ms;
    for (size_t i = 0; i < n; i++) {
        long long left = deadline - now_ms();
        const char *l = dh_read_line(c, left > 0 ? (int)left : 0);
        if (!l) {
            dh_lines_free(lines);
            ck_abort_msg("line %zu of %zu did not arrive (%s)", i + 1, n, no_reply_why(c));
        }
        lines[i] = strdup(l);
        ck_assert_ptr_nonnull(lines[i]);
    }
    return lines;
}

void dh_lines_free(char **lines)
{
    for (size_t i = 0; lines && lines[i]; i++)
        free(lines[i]);
    free(lines);
}

const char *dh_cmd(struct dh_conn *c, const char *req)
{
    size_t n = strlen(req);
    char *line = malloc(n + 2);
    ck_assert_ptr_nonnull(line);
    memcpy(line, req, n);
    line[n] = '\n';
    int rc = dh_send(c, line, n + 1, DH_TIMEOUT_MS);
    free(line);
    ck_assert_msg(rc == 0, "cannot send '%.200s': %s", req, no_reply_why(c));
    const char *reply = dh_read_line(c, DH_TIMEOUT_MS);
    ck_assert_msg(reply != NULL, "no reply to '%.200s' (%s)", req, no_reply_why(c));
    return reply;
}

struct dh_conn *dh_connect_port(int port, char *err, size_t errlen)
{
    int fd = dh_connect_fd(port);
    if (fd < 0) {
        snprintf(err, errlen, "connect: %s", strerror(errno));
        return NULL;
    }
    return dh_conn_wrap(fd, NULL);
}

void dh_expect_text(struct dh_conn *c, const char *req, const char *want, int timeout_ms)
{
    if (req[0])
        ck_assert_int_eq(dh_send(c, req, strlen(req), timeout_ms), 0);
    size_t need = strlen(want), have = 0;
    char *got = calloc(1, need + 4096);
    ck_assert_ptr_nonnull(got);
    while (have < need) {
        const char *l = dh_read_line(c, timeout_ms);
        if (!l)
            break;
        have += (size_t)snprintf(got + have, need + 4096 - have, "%s\n", l);
    }
    ck_assert_msg(strcmp(got, want) == 0, "request %s\ngot  %s\nwant %s\n%s", req, got, want,
                  dh_explain(c->d, "reply differs"));
    free(got);
}

void dh_expect_lines(struct dh_conn *c, const char *reqs, const char *const *want)
{
    size_t n = 0;
    while (want[n])
        n++;
    ck_assert_msg(dh_send(c, reqs, strlen(reqs), DH_TIMEOUT_MS) == 0, "cannot send: %s",
                  no_reply_why(c));
    char **got = dh_read_lines(c, n, DH_TIMEOUT_MS);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strcmp(got[i], want[i]) == 0, "reply %zu: '%s', wanted '%s'", i, got[i],
                      want[i]);
    dh_lines_free(got);
}

void dh_expect_ping(struct dh_daemon *d)
{
    ck_assert_msg(dh_alive(d), "%s", dh_explain(d, "bloomgated is not running"));
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "PING", "PONG");
    dh_close(c);
}

enum dh_closed dh_wait_closed(struct dh_conn *c, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        if (c->len > c->off)
            return DH_DATA;
        if (c->eof)
            return DH_EOF;
        int r = conn_fill(c);
        if (r > 0)
            continue;
        if (r < 0)
            return c->eof ? DH_EOF : DH_RESET;
        long long left = deadline - now_ms();
        if (left <= 0)
            return DH_TIMEOUT;
        struct pollfd pfd = {c->fd, POLLIN, 0};
        poll(&pfd, 1, (int)left);
    }
}
