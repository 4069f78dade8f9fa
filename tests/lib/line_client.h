/* line_client: the integration tests' client for the line protocol
 * (docs/protocol.md): connect, send pipelines, read reply lines, wait for a
 * close; every wait bounded. The set-up calls and dh_cmd fail the running
 * test (quoting the daemon's log when it died); dh_connect_port and the raw
 * send/read calls return errors instead, so client threads can use them. A
 * dh_conn may be used by one thread at a time. */
#ifndef BLOOMGATE_LINE_CLIENT_H
#define BLOOMGATE_LINE_CLIENT_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

struct dh_daemon;

enum dh_closed {
    DH_EOF = 0,     /* read returned 0: the server closed cleanly */
    DH_RESET = 1,   /* read failed, mostly ECONNRESET: closed with our bytes unread */
    DH_TIMEOUT = 2, /* still open when the time ran out */
    DH_DATA = 3,    /* bytes arrived instead */
};

struct dh_conn {
    int fd;
    struct dh_daemon *d; /* the daemon it talks to (its log explains a failure); may be NULL */
    char *buf;           /* received bytes; buf[off..len) not yet returned as lines */
    size_t off, len, cap;
    size_t scanned; /* buf[off..scanned) is known to hold no LF */
    char *line;     /* the line dh_read_line last returned */
    size_t line_cap;
    bool eof;       /* the server closed (read returned 0) */
    int err;        /* errno of a failed read or send, else 0 */
    size_t n_lines; /* lines returned so far */
};

/* A TCP socket connected to ip:port, IPv4 or IPv6 (blocking, TCP_NODELAY,
 * close-on-exec); -1 with errno on error, ETIMEDOUT if the handshake did not
 * finish within DH_TIMEOUT_MS. dh_connect_fd connects to 127.0.0.1. */
int dh_connect_to(const char *ip, int port);
int dh_connect_fd(int port);
/* A connection to the daemon; fails the test if it cannot connect. Registered:
 * dh_cleanup_all closes what a failed test left open. */
struct dh_conn *dh_connect(struct dh_daemon *d);
/* The same for a socket the caller connected (taken over; d may be NULL). */
struct dh_conn *dh_conn_wrap(int fd, struct dh_daemon *d);
void dh_close(struct dh_conn *c);

/* Send all of buf within timeout_ms. While the socket is not writable, replies
 * are read into the connection's buffer, so a long pipeline cannot deadlock.
 * 0, or -1 with c->err (ETIMEDOUT, EPIPE, ECONNRESET, ...). */
int dh_send(struct dh_conn *c, const void *buf, size_t len, int timeout_ms);
int dh_sendf(struct dh_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next reply line without its LF, or NULL on EOF, error or timeout. The
 * pointer stays valid until the next read on c. */
const char *dh_read_line(struct dh_conn *c, int timeout_ms);
/* The next n lines (NULL-terminated array of malloc'd strings, free with
 * dh_lines_free), all within timeout_ms; fails the test if fewer arrive. */
char **dh_read_lines(struct dh_conn *c, size_t n, int timeout_ms);
void dh_lines_free(char **lines);
/* Send `req\n` and return the reply line; fails the test if none comes
 * (quoting the daemon's log if it died). */
const char *dh_cmd(struct dh_conn *c, const char *req);
/* For a client thread, which must not fail the test itself: a connection to
 * 127.0.0.1:port, or NULL with "connect: <reason>" in err. Registered, like every dh_conn. */
struct dh_conn *dh_connect_port(int port, char *err, size_t errlen);
/* Send reqs (one or more lines, pipelined) and assert that the replies are
 * want[0], want[1], ... (NULL-terminated), in order. */
void dh_expect_lines(struct dh_conn *c, const char *reqs, const char *const *want);
/* Send req (raw, as is; nothing if empty) and assert that the reply lines,
 * each put back with an LF (a CR before it dropped), are exactly want: for
 * protocols whose replies are lines (RESP's CRLF, bloomd's). */
void dh_expect_text(struct dh_conn *c, const char *req, const char *want, int timeout_ms);
/* The daemon is alive and answers PING with PONG on a new connection. */
void dh_expect_ping(struct dh_daemon *d);
/* Wait for the server to close the connection. Lines still buffered or
 * arriving count as DH_DATA. */
enum dh_closed dh_wait_closed(struct dh_conn *c, int timeout_ms);

/* Close every connection a test left open (dh_cleanup_all calls it). */
void dh_close_all(void);

/* Assert that req gets exactly the reply want. */
#define DH_EXPECT(c, req, want) ck_assert_str_eq(dh_cmd((c), (req)), (want))

#endif
