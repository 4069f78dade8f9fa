/* http_client: a small blocking HTTP/1.1 client for the integration tests.
 * Keep-alive, request bodies with Content-Length, responses with
 * Content-Length, chunked or read-to-EOF bodies. It never fails the test by
 * itself: every call returns 0 or -1 with the reason in c->err, so client
 * threads can use it and report what went wrong. A connection may be used by one thread at a time;
 * every wait is bounded by the caller's timeout. */
#ifndef BLOOMGATE_HTTP_CLIENT_H
#define BLOOMGATE_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

struct hc_conn {
    int fd;    /* -1 once closed */
    char *buf; /* received and not yet consumed */
    size_t len, cap;
    bool eof;      /* the server closed its side */
    char err[256]; /* why the last call failed */
};

struct hc_resp {
    int status; /* 200, 500, ... */
    char *head; /* status line and headers, NUL-terminated (malloc'd) */
    char *body; /* NUL-terminated for convenience; blen bytes (malloc'd) */
    size_t blen;
    bool conn_close; /* the response said Connection: close */
};

/* Connect to ip:port (IPv4 or IPv6 literal). 0, or -1 with c->err. */
int hc_open(struct hc_conn *c, const char *ip, int port);
void hc_close(struct hc_conn *c);

/* Send one request. headers: extra header lines, each ending in CRLF (may be
 * NULL). body: sent with Content-Length when not NULL. */
int hc_send(struct hc_conn *c, const char *method, const char *target, const char *headers,
            const void *body, size_t blen, int timeout_ms);
/* Read one response (head_req: a HEAD, so no body). 0, or -1 with c->err
 * (the connection closed first, a malformed response, a timeout). */
int hc_recv(struct hc_conn *c, bool head_req, struct hc_resp *r, int timeout_ms);
/* hc_send, then hc_recv. */
int hc_request(struct hc_conn *c, const char *method, const char *target, const char *headers,
               const void *body, size_t blen, struct hc_resp *r, int timeout_ms);
void hc_resp_free(struct hc_resp *r);

/* Send raw bytes (a hand-made or malformed request) within timeout_ms. 0, or
 * -1 with c->err. */
int hc_send_raw(struct hc_conn *c, const void *buf, size_t len, int timeout_ms);
/* Receive more bytes into c->buf (for a test that reads raw bytes). 0, or -1
 * with c->err on EOF, error or timeout. */
int hc_fill(struct hc_conn *c, int timeout_ms);
/* Whether the server closes the connection (EOF or reset) within timeout_ms:
 * false if bytes arrive instead, or it stays open and silent. */
bool hc_closed(struct hc_conn *c, int timeout_ms);

/* The value of header name (case-insensitive) into out; false if absent. */
bool hc_header(const struct hc_resp *r, const char *name, char *out, size_t cap);

#endif
