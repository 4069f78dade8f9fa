/* Unit tests for the HTTP/1.x request parser (src/front/http/httpparse.c): the request
 * head, the chunked body decoder, the query-string lookup, percent-decoding
 * and the UTF-8 check. Every input is copied into a heap buffer of exactly its
 * length, so ASan reports any read past the length the parser was given. */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/http/httpparse.h"
#include "lib/testutil.h"

#define BIG (1u << 20) /* a max_head / max_body that never limits */

/* ---- helpers ---- */

/* The buffer of the last parse (results point into it), freed by the next. */
static char *g_buf;
static char *g_out;
static char g_err[256];
static int g_status;
static struct httpparse_head g_h;

static void teardown(void)
{
    free(g_buf);
    free(g_out);
    g_buf = g_out = NULL;
}

static char *exact_copy(const char *s, size_t n)
{
    char *b = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(b);
    if (n)
        memcpy(b, s, n);
    return b;
}

/* s with control bytes escaped, for failure messages. */
static const char *esc(const char *s, size_t n)
{
    static char out[4][2048];
    static int k;
    char *o = out[k++ & 3];
    size_t j = 0;
    for (size_t i = 0; i < n && j + 8 < sizeof(out[0]); i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\r')
            j += (size_t)snprintf(o + j, 8, "\\r");
        else if (c == '\n')
            j += (size_t)snprintf(o + j, 8, "\\n");
        else if (c < ' ' || c >= 0x7f)
            j += (size_t)snprintf(o + j, 8, "\\x%02x", c);
        else
            o[j++] = (char)c;
    }
    o[j] = '\0';
    return o;
}

/* Parse the head at s[0..n) in one call, from an exact-size copy. */
static enum httpparse_status head_n(const char *s, size_t n, size_t max_head)
{
    free(g_buf);
    g_buf = exact_copy(s, n);
    memset(&g_h, 0, sizeof(g_h));
    g_status = -1;
    g_err[0] = '\0';
    size_t scan = 0;
    return httpparse_head(g_buf, n, max_head, &scan, &g_h, &g_status, g_err, sizeof(g_err));
}

static enum httpparse_status head_s(const char *s)
{
    return head_n(s, strlen(s), BIG);
}

#define ck_head_ok(s)                                                                              \
    do {                                                                                           \
        const char *s_ = (s);                                                                      \
        enum httpparse_status st_ = head_s(s_);                                                    \
        ck_assert_msg(st_ == HTTPPARSE_OK, "'%s': result %d, status %d (%s)", esc(s_, strlen(s_)), \
                      (int)st_, g_status, g_err);                                                  \
    } while (0)

#define ck_head_err(s, code)                                                                       \
    do {                                                                                           \
        const char *s_ = (s);                                                                      \
        enum httpparse_status st_ = head_s(s_);                                                    \
        ck_assert_msg(st_ == HTTPPARSE_ERROR && g_status == (code) && g_err[0] != '\0',            \
                      "'%s': result %d, status %d (%s), want an error %d", esc(s_, strlen(s_)),    \
                      (int)st_, g_status, g_err, (code));                                          \
    } while (0)

/* Same as ck_head_err for an input with NUL bytes (a string literal). */
#define ck_head_err_lit(lit, code)                                                                 \
    do {                                                                                           \
        enum httpparse_status st_ = head_n((lit), sizeof(lit) - 1, BIG);                           \
        ck_assert_msg(st_ == HTTPPARSE_ERROR && g_status == (code) && g_err[0] != '\0',            \
                      "'%s': result %d, status %d (%s), want an error %d",                         \
                      esc((lit), sizeof(lit) - 1), (int)st_, g_status, g_err, (code));             \
    } while (0)

#define ck_span_eq(p, n, lit)                                                                      \
    ck_assert_msg((p) != NULL && (n) == strlen(lit) && memcmp((p), (lit), (n)) == 0,               \
                  "'%s' != '%s'", (p) ? esc((p), (n)) : "(null)", (lit))

/* One result as text, pointers replaced by what they point to, so results
 * from different buffers compare with one string comparison. */
static void head_describe(char *out, size_t cap, enum httpparse_status st,
                          const struct httpparse_head *h, int status, const char *err)
{
    if (st == HTTPPARSE_NEED_MORE) {
        snprintf(out, cap, "NEED_MORE");
    } else if (st == HTTPPARSE_ERROR) {
        snprintf(out, cap, "ERROR %d %s", status, err);
    } else {
        snprintf(out, cap,
                 "OK m=%d '%.*s' path='%.*s' q=%s'%.*s' 1.%d ka=%d ch=%d cl=%d/%llu exp=%d "
                 "auth=%s'%.*s' len=%zu",
                 (int)h->method, (int)h->method_len, h->method_s, (int)h->path_len, h->path,
                 h->query ? "" : "NULL", (int)h->query_len, h->query ? h->query : "", h->minor,
                 h->keep_alive, h->chunked, h->has_length, (unsigned long long)h->content_length,
                 h->expect_continue, h->auth ? "" : "NULL", (int)h->auth_len,
                 h->auth ? h->auth : "", h->head_len);
    }
}

/* ---- httpparse_head: request line ---- */

START_TEST(test_head_methods)
{
    static const struct {
        const char *req;
        enum httpparse_method m;
        const char *token;
    } cases[] = {
        {"GET / HTTP/1.1\r\n\r\n", HTTPPARSE_GET, "GET"},
        {"HEAD / HTTP/1.1\r\n\r\n", HTTPPARSE_HEAD, "HEAD"},
        {"POST / HTTP/1.1\r\n\r\n", HTTPPARSE_POST, "POST"},
        {"PUT / HTTP/1.1\r\n\r\n", HTTPPARSE_PUT, "PUT"},
        {"DELETE / HTTP/1.1\r\n\r\n", HTTPPARSE_DELETE, "DELETE"},
        {"PATCH / HTTP/1.1\r\n\r\n", HTTPPARSE_OTHER, "PATCH"},
        {"put / HTTP/1.1\r\n\r\n", HTTPPARSE_OTHER, "put"},
        {"get / HTTP/1.1\r\n\r\n", HTTPPARSE_OTHER, "get"},
        {"Post / HTTP/1.1\r\n\r\n", HTTPPARSE_OTHER, "Post"},
        {"head / HTTP/1.1\r\n\r\n", HTTPPARSE_OTHER, "head"},
        {"GETX / HTTP/1.1\r\n\r\n", HTTPPARSE_OTHER, "GETX"},
        {"GE / HTTP/1.1\r\n\r\n", HTTPPARSE_OTHER, "GE"},
        {"M-SEARCH / HTTP/1.1\r\n\r\n", HTTPPARSE_OTHER, "M-SEARCH"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_head_ok(cases[i].req);
        ck_assert_int_eq(g_h.method, cases[i].m);
        ck_span_eq(g_h.method_s, g_h.method_len, cases[i].token);
        ck_assert_ptr_eq(g_h.method_s, g_buf);
    }
    ck_head_err("G(T / HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GE\"T / HTTP/1.1\r\n\r\n", 400);
    ck_head_err(" GET / HTTP/1.1\r\n\r\n", 400);
    ck_head_err("/ HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET\r\n\r\n", 400);
    ck_head_err("GET /\r\n\r\n", 400);
}
END_TEST

START_TEST(test_head_origin_form)
{
    ck_head_ok("GET /a/b HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/a/b");
    ck_assert_ptr_eq(g_h.path, g_buf + 4);
    ck_assert_ptr_null(g_h.query);
    ck_assert_uint_eq(g_h.query_len, 0);

    ck_head_ok("GET /check?item=x&y HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/check");
    ck_span_eq(g_h.query, g_h.query_len, "item=x&y");
    ck_assert_ptr_eq(g_h.query, g_buf + 11);

    ck_head_ok("GET /? HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/");
    ck_assert_ptr_nonnull(g_h.query);
    ck_assert_uint_eq(g_h.query_len, 0);

    ck_head_ok("GET /a?b?c HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/a");
    ck_span_eq(g_h.query, g_h.query_len, "b?c");

    ck_head_ok("GET / HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/");
    ck_assert_ptr_null(g_h.query);

    ck_head_err("GET a/b HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET ?q HTTP/1.1\r\n\r\n", 400);
}
END_TEST

START_TEST(test_head_absolute_form)
{
    ck_head_ok("GET http://example.com/p/q?x=1 HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/p/q");
    ck_span_eq(g_h.query, g_h.query_len, "x=1");

    ck_head_ok("GET https://example.com:8443/p HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/p");
    ck_assert_ptr_null(g_h.query);

    ck_head_ok("GET HTTP://Example.COM/UP HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/UP");

    ck_head_ok("GET http://host HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/");
    ck_assert_ptr_null(g_h.query);

    ck_head_ok("GET https://host HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/");

    ck_head_ok("GET http://host?q HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/");
    ck_span_eq(g_h.query, g_h.query_len, "q");

    ck_head_ok("GET http://h/ HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/");

    ck_head_err("GET http:///p HTTP/1.1\r\n\r\n", 400); /* no authority */
    ck_head_err("GET http:// HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET https:// HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET http://?q HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET ftp://host/p HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET http:/host/p HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET example.com:80 HTTP/1.1\r\n\r\n", 400);
}
END_TEST

START_TEST(test_head_asterisk)
{
    ck_head_ok("OPTIONS * HTTP/1.1\r\n\r\n");
    ck_assert_int_eq(g_h.method, HTTPPARSE_OTHER);
    ck_span_eq(g_h.path, g_h.path_len, "*");
    ck_assert_ptr_null(g_h.query);
    ck_head_err("OPTIONS ** HTTP/1.1\r\n\r\n", 400);
    ck_head_err("OPTIONS *x HTTP/1.1\r\n\r\n", 400);
}
END_TEST

START_TEST(test_head_versions)
{
    ck_head_ok("GET / HTTP/1.1\r\n\r\n");
    ck_assert_int_eq(g_h.minor, 1);
    ck_head_ok("GET / HTTP/1.0\r\n\r\n");
    ck_assert_int_eq(g_h.minor, 0);
    /* Issue 15: HTTP/1.2 to 1.9 used to be served as 1.1; a proxy may read
     * them otherwise, so they are refused like any unknown version. */
    ck_head_err("GET / HTTP/1.2\r\n\r\n", 505);
    ck_head_err("GET / HTTP/1.9\r\n\r\n", 505);

    ck_head_err("GET / HTTP/2.0\r\n\r\n", 505);
    ck_head_err("GET / HTTP/0.9\r\n\r\n", 505);
    ck_head_err("GET / HTTP/3.1\r\n\r\n", 505);

    static const char *bad[] = {
        "GET / HTTP/1\r\n\r\n",     "GET / HTTP/1.\r\n\r\n",   "GET / HTTP/1.1x\r\n\r\n",
        "GET / HTTP/1.10\r\n\r\n",  "GET / http/1.1\r\n\r\n",  "GET / HTTP/11\r\n\r\n",
        "GET / HTTP/1.a\r\n\r\n",   "GET / HTTP/a.1\r\n\r\n",  "GET / HTTP/1,1\r\n\r\n",
        "GET / HTTPS/1.1\r\n\r\n",  "GET / HTTP/1.1 \r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
        "GET /  HTTP/1.1\r\n\r\n",  "GET / \r\n\r\n",          "GET /a b HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\r\n\r\n", "GET / HTTP/ 1.1\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_head_err(bad[i], 400);
}
END_TEST

START_TEST(test_head_keep_alive)
{
    static const struct {
        const char *req;
        bool ka;
    } cases[] = {
        {"GET / HTTP/1.1\r\n\r\n", true},
        {"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", false},
        {"GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n", false},
        {"GET / HTTP/1.1\r\nConnection: close, keep-alive\r\n\r\n", false},
        {"GET / HTTP/1.1\r\nConnection:Upgrade,CLOSE\r\n\r\n", false},
        {"GET / HTTP/1.1\r\nconnection: Close\r\n\r\n", false},
        {"GET / HTTP/1.1\r\nCONNECTION: \tclose \t\r\n\r\n", false},
        {"GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", false},
        {"GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n", true},
        {"GET / HTTP/1.1\r\nConnection: Upgrade\r\n\r\n", true},
        {"GET / HTTP/1.1\r\nConnection: closed\r\n\r\n", true},
        {"GET / HTTP/1.1\r\nConnection: \r\n\r\n", true},
        {"GET / HTTP/1.1\r\nX-Connection: close\r\n\r\n", true},
        {"GET / HTTP/1.1\r\nX: Connection: close\r\n\r\n", true},
        {"GET / HTTP/1.0\r\n\r\n", false},
        {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true},
        {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true},
        {"GET / HTTP/1.0\r\nConnection: foo, keep-alive\r\n\r\n", true},
        {"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false},
        {"GET / HTTP/1.0\r\nConnection: close\r\n\r\n", false},
        {"GET / HTTP/1.0\r\nConnection: keep-alives\r\n\r\n", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_head_ok(cases[i].req);
        ck_assert_msg(g_h.keep_alive == cases[i].ka, "'%s': keep_alive %d",
                      esc(cases[i].req, strlen(cases[i].req)), g_h.keep_alive);
    }
}
END_TEST

/* ---- httpparse_head: framing of the head ---- */

START_TEST(test_head_line_endings)
{
    const char *crlf = "POST /p?q HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n";
    const char *lf = "POST /p?q HTTP/1.1\nHost: a\nContent-Length: 3\n\n";
    const char *mixed = "POST /p?q HTTP/1.1\nHost: a\r\nContent-Length: 3\n\r\n";
    char a[512], b[512], c[512];
    ck_head_ok(crlf);
    ck_assert_uint_eq(g_h.head_len, strlen(crlf));
    ck_assert(g_h.has_length && g_h.content_length == 3);
    g_h.head_len = 0; /* the lengths differ; compare the rest */
    head_describe(a, sizeof(a), HTTPPARSE_OK, &g_h, 0, "");
    ck_head_ok(lf);
    ck_assert_uint_eq(g_h.head_len, strlen(lf));
    g_h.head_len = 0;
    head_describe(b, sizeof(b), HTTPPARSE_OK, &g_h, 0, "");
    ck_head_ok(mixed);
    ck_assert_uint_eq(g_h.head_len, strlen(mixed));
    g_h.head_len = 0;
    head_describe(c, sizeof(c), HTTPPARSE_OK, &g_h, 0, "");
    ck_assert_str_eq(a, b);
    ck_assert_str_eq(a, c);

    /* The header value ends before the CR. */
    ck_head_ok("GET / HTTP/1.1\r\nAuthorization: x\r\n\r\n");
    ck_span_eq(g_h.auth, g_h.auth_len, "x");
    ck_head_ok("GET / HTTP/1.1\nAuthorization: x\n\n");
    ck_span_eq(g_h.auth, g_h.auth_len, "x");
}
END_TEST

START_TEST(test_head_leading_empty_lines)
{
    static const char *cases[] = {
        "\r\nGET /x HTTP/1.1\r\n\r\n",
        "\nGET /x HTTP/1.1\r\n\r\n",
        "\r\n\n\r\n\r\nGET /x HTTP/1.1\r\n\r\n",
        "\n\nGET /x HTTP/1.1\n\n",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_head_ok(cases[i]);
        ck_assert_int_eq(g_h.method, HTTPPARSE_GET);
        ck_span_eq(g_h.path, g_h.path_len, "/x");
        /* head_len counts the skipped lines: the next request starts after it */
        ck_assert_uint_eq(g_h.head_len, strlen(cases[i]));
        ck_assert_ptr_eq(g_h.method_s, g_buf + strspn(cases[i], "\r\n"));
    }
    /* Only empty lines: the request line has not arrived. */
    ck_assert_int_eq(head_s("\r\n\r\n\n"), HTTPPARSE_NEED_MORE);
    /* A lone CR is not an empty line. */
    ck_head_err("\rGET / HTTP/1.1\r\n\r\n", 400);
}
END_TEST

START_TEST(test_head_len_pipelined)
{
    const char *one = "GET /one HTTP/1.1\r\nHost: a\r\n\r\n";
    const char *two = "GET /one HTTP/1.1\r\nHost: a\r\n\r\nGET /two?x HTTP/1.1\nHost: b\n\nPOST";
    ck_head_ok(two);
    ck_assert_uint_eq(g_h.head_len, strlen(one));
    ck_span_eq(g_h.path, g_h.path_len, "/one");
    size_t off = g_h.head_len;
    ck_head_ok(two + off);
    ck_assert_uint_eq(g_h.head_len, strlen("GET /two?x HTTP/1.1\nHost: b\n\n"));
    ck_span_eq(g_h.path, g_h.path_len, "/two");
    ck_span_eq(g_h.query, g_h.query_len, "x");
    off += g_h.head_len;
    ck_assert_int_eq(head_s(two + off), HTTPPARSE_NEED_MORE);

    /* The body after a head is not part of it, even if it looks like headers. */
    const char *body = "POST / HTTP/1.1\r\nContent-Length: 20\r\n\r\nX: y\r\n\r\nmore\n\n\r\n\r\n";
    ck_head_ok(body);
    ck_assert_uint_eq(g_h.head_len, strstr(body, "X: y") - body);
    ck_assert_uint_eq(g_h.content_length, 20);
}
END_TEST

/* ---- httpparse_head: header fields ---- */

START_TEST(test_head_content_length)
{
    ck_head_ok("GET / HTTP/1.1\r\n\r\n");
    ck_assert(!g_h.has_length);
    ck_assert_uint_eq(g_h.content_length, 0);

    static const struct {
        const char *req;
        uint64_t len;
    } good[] = {
        {"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 5},
        {"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 0},
        {"POST / HTTP/1.1\r\ncontent-length:12345\r\n\r\n", 12345},
        {"POST / HTTP/1.1\r\nCONTENT-LENGTH: \t 7 \t\r\n\r\n", 7},
        {"POST / HTTP/1.1\r\nContent-Length: 007\r\n\r\n", 7},
        {"POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 5},
        {"POST / HTTP/1.1\r\nContent-Length: 5,5,5\r\n\r\n", 5},
        {"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 5},
        {"POST / HTTP/1.1\r\nContent-Length: 5\r\nX: 1\r\nContent-Length: 5, 5\r\n\r\n", 5},
        {"POST / HTTP/1.1\r\nContent-Length: 1099511627776\r\n\r\n", 1099511627776ull},
        {"POST / HTTP/1.1\r\nContent-Length: 1844674407370955161\r\n\r\n", 1844674407370955161ull},
        {"POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n", 2},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        ck_head_ok(good[i].req);
        ck_assert(g_h.has_length);
        ck_assert_uint_eq(g_h.content_length, good[i].len);
        ck_assert(!g_h.chunked);
    }

    static const char *bad[] = {
        "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 6\r\nContent-Length: 5, 6\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 05x\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: \r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length:  \t \r\n\r\n",
        /* a list with no element at all is no length either, not "no Content-Length" */
        "POST / HTTP/1.1\r\nContent-Length: ,\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: , ,\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: ,\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5a\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 0x5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5.0\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 123456789012345678901234567890\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_head_err(bad[i], 400);
}
END_TEST

START_TEST(test_head_transfer_encoding)
{
    static const char *chunked[] = {
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\ntransfer-encoding: CHUNKED\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: \t Chunked \t\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked,\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(chunked) / sizeof(chunked[0]); i++) {
        ck_head_ok(chunked[i]);
        ck_assert(g_h.chunked);
        ck_assert(!g_h.has_length);
    }
    ck_head_ok("POST / HTTP/1.1\r\n\r\n");
    ck_assert(!g_h.chunked);

    /* A transfer coding we do not implement: 501. */
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n", 501);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: chunkedx\r\n\r\n", 501);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
                501);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 501);

    /* Malformed framing: 400. */
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
                "chunked\r\n\r\n",
                400);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", 400);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: ,\r\n\r\n", 400);
    ck_head_err("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400);
    ck_head_err("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
    ck_head_err("POST / HTTP/1.1\r\nContent-Length: 0\r\nTransfer-Encoding: gzip\r\n\r\n", 400);
    ck_head_err("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
    ck_head_err("POST / HTTP/1.0\r\nTransfer-Encoding: gzip\r\n\r\n", 400);
}
END_TEST

START_TEST(test_head_expect)
{
    ck_head_ok("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n");
    ck_assert(g_h.expect_continue);
    ck_head_ok("POST / HTTP/1.1\r\nexpect:100-Continue \r\n\r\n");
    ck_assert(g_h.expect_continue);
    ck_head_ok("POST / HTTP/1.1\r\n\r\n");
    ck_assert(!g_h.expect_continue);
    ck_head_ok("POST / HTTP/1.1\r\nExpect: 100-continuex\r\n\r\n");
    ck_assert(!g_h.expect_continue);
    ck_head_ok("POST / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n");
    ck_assert(!g_h.expect_continue);
    ck_head_ok("POST / HTTP/1.1\r\nExpects: 100-continue\r\n\r\n");
    ck_assert(!g_h.expect_continue);
}
END_TEST

START_TEST(test_head_authorization)
{
    ck_head_ok("GET / HTTP/1.1\r\n\r\n");
    ck_assert_ptr_null(g_h.auth);
    ck_assert_uint_eq(g_h.auth_len, 0);

    const char *req = "GET / HTTP/1.1\r\nAuthorization:  \t Bearer abc def \t \r\n\r\n";
    ck_head_ok(req);
    ck_span_eq(g_h.auth, g_h.auth_len, "Bearer abc def");
    ck_assert_ptr_eq(g_h.auth, g_buf + (strstr(req, "Bearer") - req));

    ck_head_ok("GET / HTTP/1.1\r\nauthorization:Bearer x\r\n\r\n");
    ck_span_eq(g_h.auth, g_h.auth_len, "Bearer x");

    ck_head_ok("GET / HTTP/1.1\r\nAuthorization:\r\n\r\n");
    ck_assert_ptr_nonnull(g_h.auth);
    ck_assert_uint_eq(g_h.auth_len, 0);

    ck_head_ok("GET / HTTP/1.1\r\nProxy-Authorization: x\r\n\r\n");
    ck_assert_ptr_null(g_h.auth);

    ck_head_err("GET / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: a\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nAuthorization: a\r\nX: y\r\nAUTHORIZATION: b\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nAuthorization:\r\nAuthorization: b\r\n\r\n", 400);
}
END_TEST

START_TEST(test_head_malformed_headers)
{
    /* Obsolete line folding. */
    ck_head_err("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400);
    /* Whitespace before the colon. */
    ck_head_err("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nContent-Length\t: 5\r\n\r\n", 400);
    /* No colon, an empty name, a name with a non-token byte. */
    ck_head_err("GET / HTTP/1.1\r\nHost\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nHost a\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\n: a\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nX(y): a\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nX/y: a\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\n\rHost: a\r\n\r\n", 400);
    /* NUL or CR in a value, or NUL in a name. */
    ck_head_err_lit("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 400);
    ck_head_err_lit("GET / HTTP/1.1\r\nX: \0\r\n\r\n", 400);
    ck_head_err_lit("GET / HTTP/1.1\r\nX\0: a\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nX: a\r\r\n\r\n", 400);
    ck_head_err("GET / HTTP/1.1\r\nX: a\r\nY: \r\r\n\r\n", 400);
    /* Other bytes in a value are the application's business. */
    ck_head_ok("GET / HTTP/1.1\r\nX: a\x01\x7f\xff:b\r\n\r\n");
    ck_head_ok("GET / HTTP/1.1\r\nX-Y_z.1!#$%&'*+^`|~: v\r\n\r\n");

    /* Control characters, spaces and DEL in the target. */
    ck_head_err("GET /a\x01 HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET /a\x7f HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET /a\tb HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET /a\rb HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET /a\x1b[0m HTTP/1.1\r\n\r\n", 400);
    ck_head_err_lit("GET /a\0b HTTP/1.1\r\n\r\n", 400);
    ck_head_err("GET /a b HTTP/1.1\r\n\r\n", 400);
    /* Bytes >= 0x80 are left to the router (it checks UTF-8). */
    ck_head_ok("GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n");
    ck_span_eq(g_h.path, g_h.path_len, "/caf\xc3\xa9");
}
END_TEST

/* ---- httpparse_head: arrival in pieces ---- */

static const char *const complete_heads[] = {
    "GET / HTTP/1.1\r\n\r\n",
    "GET /check?item=example.com HTTP/1.1\r\nHost: localhost\r\nUser-Agent: t\r\n\r\n",
    "POST /add?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n"
    "Authorization: Bearer k\r\nConnection: keep-alive, close\r\n\r\n",
    "POST / HTTP/1.1\nTransfer-Encoding: chunked\nConnection: close\n\n",
    "\r\n\n\r\nHEAD http://h/p?q HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "GET / HTTP/1.1\nA: b\r\nC: \r\n\r\n",
    "OPTIONS * HTTP/1.1\r\nX:\r\n\n",
    /* errors are reported once the head is complete, at the same point */
    "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
    "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
    "GET / HTTP/1.1\r\nX : y\r\n\r\n",
};
#define N_COMPLETE_HEADS (sizeof(complete_heads) / sizeof(complete_heads[0]))

/* Every strict prefix of a complete head needs more; the whole head, alone or
 * with bytes after it, gives the same result. */
START_TEST(test_head_prefixes)
{
    const char *req = complete_heads[_i];
    size_t n = strlen(req);
    char whole[1024], with_more[1024];
    enum httpparse_status st = head_n(req, n, BIG);
    ck_assert_int_ne(st, HTTPPARSE_NEED_MORE);
    if (st == HTTPPARSE_OK)
        ck_assert_uint_eq(g_h.head_len, n);
    head_describe(whole, sizeof(whole), st, &g_h, g_status, g_err);

    for (size_t i = 0; i < n; i++) {
        st = head_n(req, i, BIG);
        ck_assert_msg(st == HTTPPARSE_NEED_MORE, "'%s' (%zu of %zu bytes): result %d, %d %s",
                      esc(req, i), i, n, (int)st, g_status, g_err);
    }

    char more[1100];
    snprintf(more, sizeof(more), "%sGET /next HTTP/1.1\r\n\r\n", req);
    st = head_n(more, strlen(more), BIG);
    head_describe(with_more, sizeof(with_more), st, &g_h, g_status, g_err);
    ck_assert_str_eq(whole, with_more);
}
END_TEST

/* The head arrives in pieces into a buffer that grows (reallocated to exactly
 * the bytes received, so ASan sees any overread), with *scan kept between calls
 * as the server keeps it: the result and the point it is reached are those of
 * parsing the whole head at once. Pieces of 1 byte, then of 1..7 bytes. */
START_TEST(test_head_scan_incremental)
{
    const char *req = complete_heads[_i];
    size_t n = strlen(req);
    char want[1024], got[1024];
    char more[1100];
    snprintf(more, sizeof(more), "%sPOST /next HTTP/1.1\r\n\r\n", req);
    size_t m = strlen(more);
    enum httpparse_status st = head_n(more, m, BIG);
    head_describe(want, sizeof(want), st, &g_h, g_status, g_err);

    for (int pass = 0; pass < 2; pass++) {
        uint64_t rng = 42 + (uint64_t)_i;
        size_t scan = 0, len = 0;
        char *buf = NULL;
        st = HTTPPARSE_NEED_MORE;
        struct httpparse_head h;
        int status = -1;
        char err[256] = "";
        while (len < m) {
            size_t step = pass == 0 ? 1 : 1 + (size_t)(tu_rand(&rng) % 7);
            if (step > m - len)
                step = m - len;
            buf = realloc(buf, len + step);
            ck_assert_ptr_nonnull(buf);
            memcpy(buf + len, more + len, step);
            len += step;
            st = httpparse_head(buf, len, BIG, &scan, &h, &status, err, sizeof(err));
            if (st != HTTPPARSE_NEED_MORE)
                break;
            ck_assert_uint_lt(len, n);
        }
        ck_assert_int_ne(st, HTTPPARSE_NEED_MORE);
        /* with one-byte pieces the result comes exactly when the head's last byte does */
        if (pass == 0)
            ck_assert_uint_eq(len, n);
        head_describe(got, sizeof(got), st, &h, status, err);
        ck_assert_str_eq(want, got);
        free(buf);
    }
}
END_TEST

/* "GET /aaa... HTTP/1.1\r\n\r\n" of exactly n bytes (n >= 18), plus `extra`. */
static char *long_head(size_t n, const char *extra)
{
    size_t e = strlen(extra);
    char *s = malloc(n + e + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, "GET /", 5);
    memset(s + 5, 'a', n - 18);
    memcpy(s + n - 13, " HTTP/1.1\r\n\r\n", 13);
    memcpy(s + n, extra, e + 1);
    return s;
}

START_TEST(test_head_max_head)
{
    const size_t max = 64;
    char *exact = long_head(max, "");
    char *exact_more = long_head(max, "GET / HTTP/1.1\r\n\r\n");
    char *over = long_head(max + 1, "");

    /* Exactly max_head bytes: fine, alone or with bytes after it. */
    ck_assert_int_eq(head_n(exact, max, max), HTTPPARSE_OK);
    ck_assert_uint_eq(g_h.head_len, max);
    ck_assert_int_eq(head_n(exact_more, strlen(exact_more), max), HTTPPARSE_OK);
    ck_assert_uint_eq(g_h.head_len, max);
    /* One byte over: 431 when complete, and as soon as max_head bytes are in. */
    ck_assert_int_eq(head_n(over, max + 1, max), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 431);
    ck_assert_str_ne(g_err, "");
    ck_assert_int_eq(head_n(over, max, max), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 431);
    ck_assert_int_eq(head_n(over, max - 1, max), HTTPPARSE_NEED_MORE);
    /* A head with no line end at all. */
    char junk[200];
    memset(junk, 'x', sizeof(junk));
    ck_assert_int_eq(head_n(junk, max - 1, max), HTTPPARSE_NEED_MORE);
    ck_assert_int_eq(head_n(junk, max, max), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 431);
    ck_assert_int_eq(head_n(junk, sizeof(junk), max), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 431);

    /* Empty lines before the request count towards the limit. */
    char lead[128];
    char *shorter = long_head(max - 2, "");
    snprintf(lead, sizeof(lead), "\r\n%s", shorter);
    free(shorter);
    ck_assert_int_eq(head_n(lead, strlen(lead), max), HTTPPARSE_OK);
    ck_assert_uint_eq(g_h.head_len, max);
    snprintf(lead, sizeof(lead), "\r\n%s", exact);
    ck_assert_int_eq(head_n(lead, strlen(lead), max), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 431);

    /* Byte by byte with the scan hint: the exact head is OK at its last byte,
     * the longer one is refused at max_head bytes. */
    for (int which = 0; which < 2; which++) {
        const char *src = which ? over : exact;
        size_t total = which ? max + 1 : max;
        size_t scan = 0;
        struct httpparse_head h;
        int status = 0;
        char err[128];
        enum httpparse_status st = HTTPPARSE_NEED_MORE;
        size_t len;
        for (len = 1; len <= total; len++) {
            char *b = exact_copy(src, len);
            st = httpparse_head(b, len, max, &scan, &h, &status, err, sizeof(err));
            free(b);
            if (st != HTTPPARSE_NEED_MORE)
                break;
        }
        ck_assert_uint_eq(len, max);
        if (which) {
            ck_assert_int_eq(st, HTTPPARSE_ERROR);
            ck_assert_int_eq(status, 431);
        } else {
            ck_assert_int_eq(st, HTTPPARSE_OK);
            ck_assert_uint_eq(h.head_len, max);
        }
    }
    free(exact);
    free(exact_more);
    free(over);
}
END_TEST

/* ---- random input ---- */

/* Check what any result of httpparse_head promises about buf[0..len). */
static void head_check_result(const char *buf, size_t len, size_t max_head,
                              enum httpparse_status st, const struct httpparse_head *h, int status,
                              const char *err)
{
    if (st == HTTPPARSE_NEED_MORE) {
        ck_assert_uint_lt(len, max_head);
    } else if (st == HTTPPARSE_ERROR) {
        ck_assert_msg(status == 400 || status == 431 || status == 501 || status == 505, "status %d",
                      status);
        ck_assert_str_ne(err, "");
    } else {
        ck_assert_int_eq(st, HTTPPARSE_OK);
        ck_assert_uint_gt(h->head_len, 0);
        ck_assert_uint_le(h->head_len, len);
        ck_assert_uint_le(h->head_len, max_head);
        ck_assert_int_eq(buf[h->head_len - 1], '\n');
        ck_assert(h->method_s >= buf && h->method_s + h->method_len <= buf + h->head_len);
        ck_assert(h->path_len >= 1);
        ck_assert(h->path[0] == '/' || h->path[0] == '*');
        if (h->query)
            ck_assert(h->query >= buf && h->query + h->query_len <= buf + h->head_len);
        if (h->auth)
            ck_assert(h->auth >= buf && h->auth + h->auth_len <= buf + h->head_len);
        ck_assert(h->minor == 0 || h->minor == 1);
        ck_assert(!(h->chunked && h->has_length));
    }
}

/* Pieces that make random input reach past the request line. */
static const char *const soup[] = {
    "GET ",
    "POST ",
    "HEAD ",
    "/",
    "/a?b=c",
    "http://h",
    "*",
    " ",
    " HTTP/1.1",
    " HTTP/1.0",
    "HTTP/2.0",
    "\r\n",
    "\n",
    "\r",
    "\r\n\r\n",
    "\n\n",
    ":",
    ": ",
    "Content-Length: ",
    "Transfer-Encoding: chunked",
    "Connection: close",
    "Authorization: x",
    "Expect: 100-continue",
    "5",
    ",",
    "\t",
    "\0",
    "\x80",
    "%",
    "x",
    "Host",
    ";a=b",
    "0\r\n\r\n",
    "ff\r\n",
};

/* Fill b[0..n) with soup pieces (cut to fit) or with random bytes. */
static void fill_random(char *b, size_t n, uint64_t *rng, bool use_soup)
{
    size_t i = 0;
    if (use_soup && tu_rand(rng) & 1) {
        /* a good request line half of the time, so that some heads are complete */
        static const char line[] = "POST /a?b HTTP/1.1\r\n";
        i = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
        memcpy(b, line, i);
    }
    while (i < n) {
        if (!use_soup) {
            b[i++] = (char)tu_rand(rng);
            continue;
        }
        size_t k = (size_t)(tu_rand(rng) % (sizeof(soup) / sizeof(soup[0])));
        size_t pl = soup[k][0] ? strlen(soup[k]) : 1;
        if (pl > n - i)
            pl = n - i;
        memcpy(b + i, soup[k], pl);
        i += pl;
    }
}

/* 1 MB of random bytes, then 1 MB of HTTP-looking soup, cut into pieces of up
 * to 4 KB, each in an exact-size buffer, through every function: nothing may
 * crash, read past its length (ASan) or break a promise about its result. */
START_TEST(test_random_input)
{
    uint64_t rng = 0x5eed + (uint64_t)_i;
    bool use_soup = _i == 1;
    size_t total = 0;
    unsigned ok = 0, err = 0, more = 0;
    while (total < (1u << 20)) {
        size_t n = (size_t)(tu_rand(&rng) % 4097);
        total += n ? n : 1;
        char *src = malloc(n ? n : 1);
        ck_assert_ptr_nonnull(src);
        fill_random(src, n, &rng, use_soup);

        /* head, with a limit below and above the length */
        size_t max_head = tu_rand(&rng) & 1 ? n + 1 : 1 + (size_t)(tu_rand(&rng) % 512);
        size_t scan = 0;
        struct httpparse_head h;
        int status = 0;
        char e[256] = "";
        char *b = exact_copy(src, n);
        enum httpparse_status st = httpparse_head(b, n, max_head, &scan, &h, &status, e, sizeof(e));
        head_check_result(b, n, max_head, st, &h, status, e);
        ok += st == HTTPPARSE_OK;
        err += st == HTTPPARSE_ERROR;
        more += st == HTTPPARSE_NEED_MORE;
        free(b);

        /* chunked body */
        b = exact_copy(src, n);
        struct httpparse_chunked cs;
        memset(&cs, 0, sizeof(cs));
        e[0] = '\0';
        size_t max_body = (size_t)(tu_rand(&rng) % 8192);
        st = httpparse_chunked(b, n, max_body, &cs, &status, e, sizeof(e));
        ck_assert_uint_le(cs.out, cs.in);
        ck_assert_uint_le(cs.in, n);
        if (st == HTTPPARSE_NEED_MORE)
            ck_assert_uint_eq(cs.in, n);
        else if (st == HTTPPARSE_ERROR)
            ck_assert(status == 400 || status == 413);
        else
            ck_assert_uint_le(cs.out, max_body);
        free(b);

        /* query, percent-decoding, UTF-8 */
        b = exact_copy(src, n);
        char *out = malloc(n ? n : 1);
        ck_assert_ptr_nonnull(out);
        size_t outlen = 0;
        int q = httpparse_query(b, n, "item", out, &outlen, e, sizeof(e));
        ck_assert(q >= -1 && q <= 1);
        ck_assert_uint_le(outlen, n);
        long d = httpparse_pct_decode(b, n, out, true);
        ck_assert(d >= -1 && d <= (long)n);
        (void)httpparse_utf8_valid(b, n);
        free(out);
        free(b);
        free(src);
    }
    /* the input must not be all one kind of result, or the test tests little */
    ck_assert_uint_gt(err, 0);
    ck_assert_uint_gt(more, 0);
    if (use_soup)
        ck_assert_uint_gt(ok, 0);
}
END_TEST

/* ---- httpparse_chunked ---- */

/* Decode raw[0..n) in one call from an exact-size copy (left in g_buf). */
static enum httpparse_status chunk_n(const char *raw, size_t n, size_t max_body,
                                     struct httpparse_chunked *st)
{
    free(g_buf);
    g_buf = exact_copy(raw, n);
    memset(st, 0, sizeof(*st));
    g_status = -1;
    g_err[0] = '\0';
    return httpparse_chunked(g_buf, n, max_body, st, &g_status, g_err, sizeof(g_err));
}

#define ck_chunk_ok(lit, body, max)                                                                \
    do {                                                                                           \
        struct httpparse_chunked cs_;                                                              \
        enum httpparse_status st_ = chunk_n((lit), sizeof(lit) - 1, (max), &cs_);                  \
        ck_assert_msg(st_ == HTTPPARSE_OK, "'%s': result %d, %d %s", esc((lit), sizeof(lit) - 1),  \
                      (int)st_, g_status, g_err);                                                  \
        ck_assert_uint_eq(cs_.in, sizeof(lit) - 1);                                                \
        ck_span_eq(g_buf, cs_.out, (body));                                                        \
    } while (0)

#define ck_chunk_err(lit, code, max)                                                               \
    do {                                                                                           \
        struct httpparse_chunked cs_;                                                              \
        enum httpparse_status st_ = chunk_n((lit), sizeof(lit) - 1, (max), &cs_);                  \
        ck_assert_msg(st_ == HTTPPARSE_ERROR && g_status == (code) && g_err[0] != '\0',            \
                      "'%s': result %d, status %d (%s), want an error %d",                         \
                      esc((lit), sizeof(lit) - 1), (int)st_, g_status, g_err, (code));             \
    } while (0)

START_TEST(test_chunked_simple)
{
    ck_chunk_ok("5\r\nhello\r\n0\r\n\r\n", "hello", BIG);
    ck_chunk_ok("0\r\n\r\n", "", BIG);
    ck_chunk_ok("0\r\n\r\n", "", 0);
    ck_chunk_ok("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world", BIG);
    /* Data that looks like framing is data. */
    ck_chunk_ok("7\r\n0\r\n\r\n\r\n\r\n0\r\n\r\n", "0\r\n\r\n\r\n", BIG);
    /* Not finished yet. */
    struct httpparse_chunked cs;
    ck_assert_int_eq(chunk_n("5\r\nhello\r\n0\r\n", 13, BIG, &cs), HTTPPARSE_NEED_MORE);
    ck_assert_uint_eq(cs.in, 13);
    ck_span_eq(g_buf, cs.out, "hello");
    ck_assert_int_eq(chunk_n("", 0, BIG, &cs), HTTPPARSE_NEED_MORE);
    ck_assert_uint_eq(cs.in, 0);
    ck_assert_uint_eq(cs.out, 0);
}
END_TEST

START_TEST(test_chunked_hex_and_ext)
{
    ck_chunk_ok("a\r\n0123456789\r\n0\r\n\r\n", "0123456789", BIG);
    ck_chunk_ok("A\r\n0123456789\r\n0\r\n\r\n", "0123456789", BIG);
    ck_chunk_ok("0000A\r\n0123456789\r\n000\r\n\r\n", "0123456789", BIG);
    ck_chunk_ok("1F\r\n0123456789abcdefghijklmnopqrstu\r\n0\r\n\r\n",
                "0123456789abcdefghijklmnopqrstu", BIG);
    ck_chunk_ok("1f\r\n0123456789abcdefghijklmnopqrstu\r\n0\r\n\r\n",
                "0123456789abcdefghijklmnopqrstu", BIG);
    /* Extensions are skipped, with or without whitespace before them. */
    ck_chunk_ok("5;a=b\r\nhello\r\n0\r\n\r\n", "hello", BIG);
    ck_chunk_ok("5;a=\"b;c\"\r\nhello\r\n0;last\r\n\r\n", "hello", BIG);
    ck_chunk_ok("5 ;a=b\r\nhello\r\n0\r\n\r\n", "hello", BIG);
    ck_chunk_ok("5\t;a\r\nhello\r\n0\r\n\r\n", "hello", BIG);
    ck_chunk_ok("5 \t ;a\r\nhello\r\n0\r\n\r\n", "hello", BIG);
    /* Issue 15: what a front proxy may read differently is refused. "f 5"
     * was read as 0xf; whitespace after a size may only lead to a ';'. */
    ck_chunk_err("f 5\r\n0123456789abcde\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_err("5 \r\nhello\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_err("5 x\r\nhello\r\n0\r\n\r\n", 400, BIG);
    /* A bare CR (or another control character) inside an extension. */
    ck_chunk_err("5;a\rb\r\nhello\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_err("5;a=\"\r\"\r\nhello\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_err("5;a\x01\r\nhello\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_err("5;a=b\nhello\n0;x\n\n", 400, BIG);
}
END_TEST

START_TEST(test_chunked_trailers)
{
    ck_chunk_ok("5\r\nhello\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n", "hello", BIG);
    ck_chunk_ok("0\r\nX: 1\r\n\r\n", "", BIG);
    ck_chunk_err("5\nhello\n0\nX: 1\nY: 2\n\n", 400, BIG);
    ck_chunk_err("5\r\nhello\r\n0\r\nX: 1\n\r\n", 400, BIG);
    ck_chunk_err("5\r\nhello\r\n0\r\nX: 1\rY\r\n\r\n", 400, BIG);
    ck_chunk_err("5\r\nhello\r\n0\r\n\n", 400, BIG);
    /* Trailers that are not finished: need more. */
    struct httpparse_chunked cs;
    ck_assert_int_eq(chunk_n("0\r\nX: 1\r\n", 9, BIG, &cs), HTTPPARSE_NEED_MORE);
    ck_assert_uint_eq(cs.in, 9);
    ck_assert_int_eq(chunk_n("0\r\nX: 1\r\n\r", 10, BIG, &cs), HTTPPARSE_NEED_MORE);
    ck_assert_uint_eq(cs.in, 10);
    /* A trailer block ended by a CR and something else. */
    ck_chunk_err("0\r\n\rX", 400, BIG);
    ck_chunk_err("0\r\nX: 1\r\n\rX\r\n", 400, BIG);
    /* A kilobyte of trailers is fine; more than 16 KB is not. */
    char *raw = malloc(40000);
    ck_assert_ptr_nonnull(raw);
    size_t n = (size_t)sprintf(raw, "1\r\nx\r\n0\r\nX: ");
    memset(raw + n, 'v', 1000);
    n += 1000;
    n += (size_t)sprintf(raw + n, "\r\n\r\n");
    struct httpparse_chunked st;
    ck_assert_int_eq(chunk_n(raw, n, BIG, &st), HTTPPARSE_OK);
    ck_assert_uint_eq(st.in, n);
    ck_span_eq(g_buf, st.out, "x");
    n = (size_t)sprintf(raw, "1\r\nx\r\n0\r\n");
    for (int i = 0; i < 400; i++)
        n += (size_t)sprintf(raw + n, "X-Trailer-%03d: %040d\r\n", i, i);
    n += (size_t)sprintf(raw + n, "\r\n");
    ck_assert_int_eq(chunk_n(raw, n, BIG, &st), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 400);
    free(raw);
}
END_TEST

/* Issue 15: bare-LF chunk framing was accepted; RFC 9112 wants CRLF, and a
 * proxy that reads it otherwise may see another request in the body. */
START_TEST(test_chunked_bare_lf)
{
    ck_chunk_err("5\nhello\n0\n\n", 400, BIG);
    ck_chunk_err("5\r\nhello\n3\r\nabc\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_err("5\r\nhello\r\n0\n\r\n", 400, BIG);
    ck_chunk_err("5\rhello\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_ok("5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n", "helloabc", BIG);
}
END_TEST

START_TEST(test_chunked_many)
{
    uint64_t rng = 7;
    size_t cap = 1 << 20;
    char *raw = malloc(cap), *body = malloc(cap);
    ck_assert_ptr_nonnull(raw);
    ck_assert_ptr_nonnull(body);
    size_t n = 0, blen = 0;
    for (int i = 0; i < 500; i++) {
        size_t k = 1 + (size_t)(tu_rand(&rng) % 600);
        n += (size_t)sprintf(raw + n, i & 1 ? "%zx\r\n" : "%zX\r\n", k);
        for (size_t j = 0; j < k; j++) {
            char c = (char)tu_rand(&rng); /* any byte, CR and LF included */
            raw[n++] = c;
            body[blen++] = c;
        }
        raw[n++] = '\r';
        raw[n++] = '\n';
    }
    n += (size_t)sprintf(raw + n, "0\r\n\r\n");
    struct httpparse_chunked st;
    ck_assert_int_eq(chunk_n(raw, n, BIG, &st), HTTPPARSE_OK);
    ck_assert_uint_eq(st.in, n);
    ck_assert_uint_eq(st.out, blen);
    ck_assert_mem_eq(g_buf, body, blen);
    /* max_body of exactly the body's length is enough; one less is not */
    ck_assert_int_eq(chunk_n(raw, n, blen, &st), HTTPPARSE_OK);
    ck_assert_int_eq(chunk_n(raw, n, blen - 1, &st), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 413);
    free(raw);
    free(body);
}
END_TEST

/* Raw chunked bodies and the bytes after them (the next request), for the
 * split tests. */
static const struct {
    const char *raw;  /* the chunked body proper */
    const char *next; /* what follows it */
    const char *body; /* the decoded body */
} split_cases[] = {
    {"5\r\nhello\r\n0\r\n\r\n", "GET / HTTP/1.1\r\n\r\n", "hello"},
    {"1;a=b\r\nx\r\nA\r\n0123456789\r\n10\r\nABCDEF\r\n\r\n012345\r\n0\r\nT: v\r\nT2: w\r\n\r\n",
     "POST /x HTTP/1.1\r\n", "x0123456789ABCDEF\r\n\r\n012345"},
    {"3\r\nabc\r\n0\r\n\r\n", "X", "abc"},
    {"2 ; e\r\nab\r\n0\r\nT:1\r\n\r\n", "\r\n", "ab"},
    {"0\r\n\r\n", "0\r\n\r\n", ""},
    {"3\r\n\r\n0\r\n2;\r\n\n\n\r\n0\r\n\r\n", "", "\r\n0\n\n"},
};
#define N_SPLIT_CASES (sizeof(split_cases) / sizeof(split_cases[0]))

/* Feed raw[0..n) to the decoder in calls ending at ends[0..k), the buffer
 * reallocated to exactly the bytes received before each call (the decoded
 * bytes and the state carry over, as in the server's connection buffer).
 * Stops at the first result other than NEED_MORE; *at is its length. */
static enum httpparse_status chunk_feed(const char *raw, const size_t *ends, size_t k,
                                        size_t max_body, struct httpparse_chunked *st, char **bufp,
                                        size_t *at)
{
    char *buf = NULL;
    size_t have = 0;
    enum httpparse_status r = HTTPPARSE_NEED_MORE;
    memset(st, 0, sizeof(*st));
    *at = 0;
    for (size_t i = 0; i < k; i++) {
        ck_assert_uint_ge(ends[i], have);
        buf = realloc(buf, ends[i] ? ends[i] : 1);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf + have, raw + have, ends[i] - have);
        have = ends[i];
        r = httpparse_chunked(buf, have, max_body, st, &g_status, g_err, sizeof(g_err));
        *at = have;
        if (r != HTTPPARSE_NEED_MORE)
            break;
        ck_assert_uint_eq(st->in, have);
    }
    *bufp = buf;
    return r;
}

START_TEST(test_chunked_split_everywhere)
{
    char raw[256];
    size_t body_raw = strlen(split_cases[_i].raw);
    snprintf(raw, sizeof(raw), "%s%s", split_cases[_i].raw, split_cases[_i].next);
    size_t n = strlen(raw);
    const char *body = split_cases[_i].body;
    struct httpparse_chunked st;
    char *buf;
    size_t at;

    /* All at once: the body, and exactly its raw bytes consumed. */
    ck_assert_int_eq(chunk_n(raw, n, BIG, &st), HTTPPARSE_OK);
    ck_assert_uint_eq(st.in, body_raw);
    ck_span_eq(g_buf, st.out, body);
    ck_assert_mem_eq(g_buf + st.in, raw + st.in, n - st.in); /* the next request untouched */

    /* Two calls, split at every byte. */
    for (size_t cut = 0; cut <= n; cut++) {
        size_t ends[2] = {cut, n};
        enum httpparse_status r = chunk_feed(raw, ends, 2, BIG, &st, &buf, &at);
        ck_assert_msg(r == HTTPPARSE_OK, "split at %zu: result %d (%d %s)", cut, (int)r, g_status,
                      g_err);
        ck_assert_uint_eq(st.in, body_raw);
        ck_span_eq(buf, st.out, body);
        ck_assert_mem_eq(buf + st.in, raw + st.in, at - st.in);
        free(buf);
    }

    /* One byte at a time: OK exactly when the body's last byte arrives. */
    size_t *ends = malloc(n * sizeof(*ends));
    ck_assert_ptr_nonnull(ends);
    for (size_t i = 0; i < n; i++)
        ends[i] = i + 1;
    ck_assert_int_eq(chunk_feed(raw, ends, n, BIG, &st, &buf, &at), HTTPPARSE_OK);
    ck_assert_uint_eq(at, body_raw);
    ck_assert_uint_eq(st.in, body_raw);
    ck_span_eq(buf, st.out, body);
    free(buf);
    free(ends);
}
END_TEST

START_TEST(test_chunked_max_body)
{
    ck_chunk_err("5\r\nhello\r\n0\r\n\r\n", 413, 4);
    ck_chunk_ok("5\r\nhello\r\n0\r\n\r\n", "hello", 5);
    /* The sum of the chunks counts. */
    ck_chunk_err("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", 413, 4);
    ck_chunk_ok("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", "abcde", 5);
    ck_chunk_err("1\r\na\r\n0\r\n\r\n", 413, 0);
    /* Refused at the size line, before the data arrives. */
    ck_chunk_err("5\r\n", 413, 4);
    ck_chunk_err("3\r\nabc\r\n2\r\n", 413, 4);
    /* A size near the digit limit is too long a body, not a bad line. */
    ck_chunk_err("fffffffffffffff\r\n", 413, BIG);
    ck_chunk_err("100000000000000\r\n", 413, BIG);
}
END_TEST

START_TEST(test_chunked_bad_framing)
{
    /* Chunk data not followed by CRLF. */
    ck_chunk_err("5\r\nhelloX\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_err("5\r\nhello\rX", 400, BIG);
    ck_chunk_err("5\r\nhello\r\r\n", 400, BIG);
    ck_chunk_err("3\r\nhello\r\n", 400, BIG);
    /* Bad size lines. */
    ck_chunk_err("\r\n", 400, BIG);
    ck_chunk_err("\n", 400, BIG);
    ck_chunk_err(";a\r\n", 400, BIG);
    ck_chunk_err(" 5\r\nhello\r\n0\r\n\r\n", 400, BIG);
    ck_chunk_err("g\r\n", 400, BIG);
    ck_chunk_err("5g\r\n", 400, BIG);
    ck_chunk_err("-5\r\n", 400, BIG);
    ck_chunk_err("+5\r\n", 400, BIG);
    ck_chunk_err("0x5\r\n", 400, BIG);
    ck_chunk_err("5\rX", 400, BIG);
    ck_chunk_err("5\r\r\n", 400, BIG);
    ck_chunk_err("5\r\nhello\r\nz\r\n", 400, BIG);
    ck_chunk_err("5\r\nhello\r\n\r\n", 400, BIG);
    /* Too many hex digits for any size: 400, whatever max_body is. */
    ck_chunk_err("1000000000000000\r\n", 400, BIG);
    ck_chunk_err("10000000000000000\r\n", 400, BIG);
    ck_chunk_err("ffffffffffffffffffffffff\r\n", 400, BIG);
    ck_chunk_err("10000000000000001\r\nx\r\n0\r\n\r\n", 400, SIZE_MAX);
}
END_TEST

/* Leading zeros never grow the size, so only the line's length bounds them:
 * a few are fine, 10000 are refused before the line ends. */
START_TEST(test_chunked_leading_zeros)
{
    static const char ok[] = "0001\r\nx\r\n000\r\n\r\n";
    struct httpparse_chunked st;
    ck_assert_int_eq(chunk_n(ok, sizeof(ok) - 1, BIG, &st), HTTPPARSE_OK);
    ck_span_eq(g_buf, st.out, "x");
    char *raw = malloc(10000);
    ck_assert_ptr_nonnull(raw);
    memset(raw, '0', 10000);
    ck_assert_int_eq(chunk_n(raw, 10000, BIG, &st), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 400);
    free(raw);
}
END_TEST

START_TEST(test_chunked_long_ext)
{
    char *raw = malloc(20000);
    ck_assert_ptr_nonnull(raw);
    /* An extension of 4000 bytes is fine... */
    size_t n = (size_t)sprintf(raw, "1;");
    memset(raw + n, 'e', 4000);
    n += 4000;
    n += (size_t)sprintf(raw + n, "\r\nx\r\n0\r\n\r\n");
    struct httpparse_chunked st;
    ck_assert_int_eq(chunk_n(raw, n, BIG, &st), HTTPPARSE_OK);
    ck_assert_uint_eq(st.in, n);
    ck_span_eq(g_buf, st.out, "x");
    /* ...one of 10000 is refused, even before its line ends. */
    n = (size_t)sprintf(raw, "1;");
    memset(raw + n, 'e', 10000);
    n += 10000;
    ck_assert_int_eq(chunk_n(raw, n, BIG, &st), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 400);
    n += (size_t)sprintf(raw + n, "\r\nx\r\n0\r\n\r\n");
    ck_assert_int_eq(chunk_n(raw, n, BIG, &st), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 400);
    /* The same on the last chunk's line. */
    n = (size_t)sprintf(raw, "0;");
    memset(raw + n, 'e', 10000);
    n += 10000;
    n += (size_t)sprintf(raw + n, "\r\n\r\n");
    ck_assert_int_eq(chunk_n(raw, n, BIG, &st), HTTPPARSE_ERROR);
    ck_assert_int_eq(g_status, 400);
    free(raw);
}
END_TEST

/* ---- httpparse_query / httpparse_pct_decode ---- */

static size_t g_outlen;

/* Look name up in q (exact-size copies; out has room for exactly qlen bytes). */
static int query_n(const char *q, size_t n, const char *name)
{
    free(g_buf);
    free(g_out);
    g_buf = exact_copy(q, n);
    g_out = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(g_out);
    g_outlen = 12345;
    g_err[0] = '\0';
    return httpparse_query(g_buf, n, name, g_out, &g_outlen, g_err, sizeof(g_err));
}

static int query_s(const char *q, const char *name)
{
    return query_n(q, strlen(q), name);
}

START_TEST(test_query_found)
{
    ck_assert_int_eq(query_s("item=abc", "item"), 1);
    ck_span_eq(g_out, g_outlen, "abc");
    ck_assert_int_eq(query_s("a=1&item=example.com&b=2", "item"), 1);
    ck_span_eq(g_out, g_outlen, "example.com");
    ck_assert_int_eq(query_s("a=1&b&item=x", "item"), 1);
    ck_span_eq(g_out, g_outlen, "x");
    ck_assert_int_eq(query_s("item=a=b", "item"), 1);
    ck_span_eq(g_out, g_outlen, "a=b");
    /* Empty values. */
    ck_assert_int_eq(query_s("item=", "item"), 1);
    ck_assert_uint_eq(g_outlen, 0);
    ck_assert_int_eq(query_s("item", "item"), 1);
    ck_assert_uint_eq(g_outlen, 0);
    ck_assert_int_eq(query_s("a=1&item&b=2", "item"), 1);
    ck_assert_uint_eq(g_outlen, 0);
    ck_assert_int_eq(query_s("&&item=v&&", "item"), 1);
    ck_span_eq(g_out, g_outlen, "v");
    /* Absent. */
    ck_assert_int_eq(query_s("a=1&b=2", "item"), 0);
    ck_assert_uint_eq(g_outlen, 0);
    ck_assert_int_eq(query_s("", "item"), 0);
    ck_assert_uint_eq(g_outlen, 0);
    ck_assert_int_eq(query_s("=item", "item"), 0);
    ck_assert_int_eq(query_s("a=item", "item"), 0);
    size_t outlen = 7;
    char out[1], err[64];
    ck_assert_int_eq(httpparse_query(NULL, 0, "item", out, &outlen, err, sizeof(err)), 0);
    ck_assert_uint_eq(outlen, 0);
}
END_TEST

START_TEST(test_query_key_match)
{
    /* A key that only starts (or ends) with the name is another key. */
    ck_assert_int_eq(query_s("items=1", "item"), 0);
    ck_assert_int_eq(query_s("ite=1", "item"), 0);
    ck_assert_int_eq(query_s("xitem=1", "item"), 0);
    ck_assert_int_eq(query_s("Item=1", "item"), 0);
    ck_assert_int_eq(query_s("item2=1&item=v&items=w", "item"), 1);
    ck_span_eq(g_out, g_outlen, "v");
    /* Keys are decoded. */
    ck_assert_int_eq(query_s("it%65m=v", "item"), 1);
    ck_span_eq(g_out, g_outlen, "v");
    ck_assert_int_eq(query_s("%69%74%65%6D=w", "item"), 1);
    ck_span_eq(g_out, g_outlen, "w");
    ck_assert_int_eq(query_s("a+b=c", "a b"), 1);
    ck_span_eq(g_out, g_outlen, "c");
    ck_assert_int_eq(query_s("item%3Dx=1", "item"), 0);
    ck_assert_int_eq(query_s("item%3Dx=1", "item=x"), 1);
    ck_span_eq(g_out, g_outlen, "1");
}
END_TEST

START_TEST(test_query_decoding)
{
    ck_assert_int_eq(query_s("item=a+b+", "item"), 1);
    ck_span_eq(g_out, g_outlen, "a b ");
    ck_assert_int_eq(query_s("item=%2B%2b", "item"), 1);
    ck_span_eq(g_out, g_outlen, "++");
    ck_assert_int_eq(query_s("item=a%20b%25c", "item"), 1);
    ck_span_eq(g_out, g_outlen, "a b%c");
    ck_assert_int_eq(query_s("item=%e2%82%AC", "item"), 1);
    ck_span_eq(g_out, g_outlen, "\xe2\x82\xac");
    ck_assert_int_eq(query_s("item=a%00b", "item"), 1);
    ck_assert_uint_eq(g_outlen, 3);
    ck_assert_mem_eq(g_out, "a\0b", 3);
    ck_assert_int_eq(query_s("item=%00", "item"), 1);
    ck_assert_uint_eq(g_outlen, 1);
    ck_assert_int_eq(g_out[0], '\0');
    /* The value fills out exactly (out has qlen bytes). */
    ck_assert_int_eq(query_s("item=%41", "item"), 1);
    ck_span_eq(g_out, g_outlen, "A");
}
END_TEST

START_TEST(test_query_errors)
{
    ck_assert_int_eq(query_s("item=1&item=2", "item"), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "item"));
    ck_assert_int_eq(query_s("item=1&b=2&item=1", "item"), -1);
    ck_assert_str_ne(g_err, "");
    ck_assert_int_eq(query_s("item&item", "item"), -1);
    ck_assert_str_ne(g_err, "");
    ck_assert_int_eq(query_s("item=1&it%65m=2", "item"), -1);
    ck_assert_str_ne(g_err, "");

    static const char *bad[] = {
        "item=%",   "item=%4",   "item=%zz",  "item=%4g", "item=%g4", "item=a%",
        "item=a%2", "item=%%41", "item=% 41", "it%m=1",   "it%6=1",   "%zz=1&item=2",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(query_s(bad[i], "item") == -1, "'%s' is not an error", bad[i]);
        ck_assert_str_ne(g_err, "");
    }
}
END_TEST

/* httpparse_query_params: the four names of GET .../check, in one pass,
 * into one buffer of exactly qlen bytes. */
static struct httpparse_param g_params[4];
static size_t g_qlen; /* the query's length: g_buf has no NUL */

static int params_s(const char *q)
{
    static const char *const names[4] = {"item", "type", "from", "method"};
    size_t n = strlen(q);
    free(g_buf);
    free(g_out);
    g_buf = exact_copy(q, n);
    g_qlen = n;
    g_out = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(g_out);
    for (size_t k = 0; k < 4; k++)
        g_params[k] = (struct httpparse_param){.name = names[k], .value = "stale", .len = 99};
    g_err[0] = '\0';
    return httpparse_query_params(g_buf, n, g_params, 4, g_out, g_err, sizeof(g_err));
}

START_TEST(test_query_params)
{
    ck_assert_int_eq(params_s("from=https%3A%2F%2Fnews.example%2F&x=1&item=http://t.example/a+b"
                              "&type=script&method=POST"),
                     0);
    ck_span_eq(g_params[0].value, g_params[0].len, "http://t.example/a b");
    ck_span_eq(g_params[1].value, g_params[1].len, "script");
    ck_span_eq(g_params[2].value, g_params[2].len, "https://news.example/");
    ck_span_eq(g_params[3].value, g_params[3].len, "POST");
    /* The values lie one after the other inside out, never past it. */
    for (size_t k = 0; k < 4; k++)
        ck_assert(g_params[k].value >= g_out &&
                  g_params[k].value + g_params[k].len <= g_out + g_qlen);
    /* Absent ones are NULL (not the stale value), an empty one is not. */
    ck_assert_int_eq(params_s("item=a&type="), 0);
    ck_span_eq(g_params[0].value, g_params[0].len, "a");
    ck_assert_ptr_nonnull(g_params[1].value);
    ck_assert_uint_eq(g_params[1].len, 0);
    ck_assert_ptr_null(g_params[2].value);
    ck_assert_uint_eq(g_params[2].len, 0);
    ck_assert_ptr_null(g_params[3].value);
    ck_assert_int_eq(params_s(""), 0);
    ck_assert_ptr_null(g_params[0].value);
    /* Keys decoded; each wanted name once; a bad escape in any key, or in a
     * wanted value, is malformed; in a value not wanted it is not read. */
    ck_assert_int_eq(params_s("t%79pe=img&item=x"), 0);
    ck_span_eq(g_params[1].value, g_params[1].len, "img");
    ck_assert_int_eq(params_s("item=a&type=x&from=b&type=y"), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "'type' given more than once"));
    ck_assert_int_eq(params_s("item=a&from=%zz"), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "'from'"));
    ck_assert_int_eq(params_s("item=a&f%m=1"), -1);
    ck_assert_str_ne(g_err, "");
    ck_assert_int_eq(params_s("item=a&other=%zz"), 0);
    /* The single-name call agrees. */
    ck_assert_int_eq(query_s("other=1&method=get", "method"), 1);
    ck_span_eq(g_out, g_outlen, "get");
}
END_TEST

static long pct_s(const char *s, bool plus_space)
{
    size_t n = strlen(s);
    free(g_buf);
    free(g_out);
    g_buf = exact_copy(s, n);
    g_out = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(g_out);
    return httpparse_pct_decode(g_buf, n, g_out, plus_space);
}

#define ck_pct(s, plus, want)                                                                      \
    do {                                                                                           \
        long n_ = pct_s((s), (plus));                                                              \
        ck_assert_msg(n_ >= 0, "'%s': %ld", (s), n_);                                              \
        ck_span_eq(g_out, (size_t)n_, (want));                                                     \
    } while (0)

START_TEST(test_pct_decode)
{
    ck_pct("", true, "");
    ck_pct("abc", true, "abc");
    ck_pct("a+b%20c", true, "a b c");
    ck_pct("a+b%20c", false, "a+b c");
    ck_pct("%2B+%2b", true, "+ +");
    ck_pct("%2B+%2b", false, "+++");
    ck_pct("%41%62%7a%7A", false, "Abzz");
    ck_pct("%ff%FF%80", false, "\xff\xff\x80");
    ck_pct("%25%32%35", false, "%25");
    ck_assert_int_eq(pct_s("a%00b", false), 3);
    ck_assert_mem_eq(g_out, "a\0b", 3);

    static const char *bad[] = {"%", "%4", "%G0", "%0G", "abc%", "abc%4", "%%", "%-1", "% 1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(pct_s(bad[i], true) == -1, "'%s' decoded", bad[i]);
        ck_assert_msg(pct_s(bad[i], false) == -1, "'%s' decoded", bad[i]);
    }
}
END_TEST

/* ---- httpparse_utf8_valid ---- */

static bool utf8_n(const char *s, size_t n)
{
    char *b = exact_copy(s, n);
    bool r = httpparse_utf8_valid(b, n);
    free(b);
    return r;
}

#define ck_utf8(lit, want)                                                                         \
    ck_assert_msg(utf8_n((lit), sizeof(lit) - 1) == (want), "'%s' should be %s",                   \
                  esc((lit), sizeof(lit) - 1), (want) ? "valid" : "invalid")

/* Table 3-7 of the Unicode standard (well-formed UTF-8 byte sequences), as
 * plainly as it can be written: the reference for the randomized test. */
static bool ref_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned lo = 0x80, hi = 0xbf;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            k = 1;
        } else if (c == 0xe0) {
            k = 2;
            lo = 0xa0;
        } else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) {
            k = 2;
        } else if (c == 0xed) {
            k = 2;
            hi = 0x9f;
        } else if (c == 0xf0) {
            k = 3;
            lo = 0x90;
        } else if (c >= 0xf1 && c <= 0xf3) {
            k = 3;
        } else if (c == 0xf4) {
            k = 3;
            hi = 0x8f;
        } else {
            return false;
        }
        if (n - i <= k || s[i + 1] < lo || s[i + 1] > hi)
            return false;
        for (size_t j = 2; j <= k; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xbf)
                return false;
        i += k + 1;
    }
    return true;
}

START_TEST(test_utf8_valid)
{
    ck_utf8("", true);
    ck_utf8("hello, world", true);
    ck_utf8("\x7f\x01", true);
    ck_utf8("\xc2\x80", true);         /* U+0080 */
    ck_utf8("caf\xc3\xa9", true);      /* U+00E9 */
    ck_utf8("\xdf\xbf", true);         /* U+07FF */
    ck_utf8("\xe0\xa0\x80", true);     /* U+0800 */
    ck_utf8("\xe2\x82\xac", true);     /* U+20AC */
    ck_utf8("\xed\x9f\xbf", true);     /* U+D7FF */
    ck_utf8("\xee\x80\x80", true);     /* U+E000 */
    ck_utf8("\xef\xbf\xbf", true);     /* U+FFFF */
    ck_utf8("\xf0\x90\x80\x80", true); /* U+10000 */
    ck_utf8("\xf0\x9d\x84\x9e", true); /* U+1D11E */
    ck_utf8("\xf4\x8f\xbf\xbf", true); /* U+10FFFF */
    ck_utf8("a\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e"
            "z",
            true);
}
END_TEST

START_TEST(test_utf8_invalid)
{
    /* Overlongs. */
    ck_utf8("\xc0\x80", false);
    ck_utf8("\xc0\xaf", false);
    ck_utf8("\xc1\xbf", false);
    ck_utf8("\xe0\x80\x80", false);
    ck_utf8("\xe0\x9f\xbf", false);
    ck_utf8("\xf0\x80\x80\x80", false);
    ck_utf8("\xf0\x8f\xbf\xbf", false);
    /* Surrogates. */
    ck_utf8("\xed\xa0\x80", false);
    ck_utf8("\xed\xbf\xbf", false);
    ck_utf8("\xed\xb0\x80", false);
    /* Past U+10FFFF, and bytes that never appear. */
    ck_utf8("\xf4\x90\x80\x80", false);
    ck_utf8("\xf5\x80\x80\x80", false);
    ck_utf8("\xf7\xbf\xbf\xbf", false);
    ck_utf8("\xf8\x88\x80\x80\x80", false);
    ck_utf8("\xfe", false);
    ck_utf8("\xff", false);
    /* Truncated at the end. */
    ck_utf8("\xc3", false);
    ck_utf8("abc\xc3", false);
    ck_utf8("\xe2\x82", false);
    ck_utf8("abcdefgh\xe2", false);
    ck_utf8("\xf0\x9d\x84", false);
    ck_utf8("\xf0\x9d", false);
    /* Stray continuation bytes, and a lead byte without them. */
    ck_utf8("\x80", false);
    ck_utf8("\xbf", false);
    ck_utf8("a\x80z", false);
    ck_utf8("\xc3\xa9\xa9", false);
    ck_utf8("\xe2\x82\xac\x80", false);
    ck_utf8("\xc3"
            "A",
            false);
    ck_utf8("\xe2"
            "AB",
            false);
    ck_utf8("\xe2\x82"
            "A",
            false);
    ck_utf8("\xf0\x9d\x84"
            "A",
            false);
    ck_utf8("\xc3\xc3\xa9", false);
}
END_TEST

/* The eight-bytes-at-a-time path: every length 0..40 with one sequence placed
 * at every position, so it is met before, inside and after a full word. */
START_TEST(test_utf8_every_position)
{
    char s[48];
    for (size_t len = 0; len <= 40; len++) {
        memset(s, 'a', len);
        ck_assert(utf8_n(s, len));
        for (size_t pos = 0; pos < len; pos++) {
            static const struct {
                const char *seq;
                bool valid;
            } seqs[] = {
                {"\x80", false},
                {"\xff", false},
                {"\xc0\x80", false},
                {"\xc3", false},
                {"\xc3\xa9", true},
                {"\xe2\x82\xac", true},
                {"\xed\xa0\x80", false},
                {"\xf0\x9d\x84\x9e", true},
                {"\xf4\x90\x80\x80", false},
                {"\xe2\x82", false},
            };
            for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++) {
                size_t sl = strlen(seqs[k].seq);
                memset(s, 'a', len);
                if (pos + sl > len) {
                    /* cut by the end: always invalid */
                    memcpy(s + pos, seqs[k].seq, len - pos);
                    ck_assert_msg(!utf8_n(s, len), "len %zu pos %zu seq %zu (cut)", len, pos, k);
                    continue;
                }
                memcpy(s + pos, seqs[k].seq, sl);
                ck_assert_msg(utf8_n(s, len) == seqs[k].valid, "len %zu pos %zu seq %zu", len, pos,
                              k);
            }
        }
    }
}
END_TEST

START_TEST(test_utf8_random)
{
    uint64_t rng = 99;
    unsigned valid = 0;
    for (int iter = 0; iter < 200000; iter++) {
        unsigned char s[24];
        size_t n = (size_t)(tu_rand(&rng) % (sizeof(s) + 1));
        for (size_t i = 0; i < n; i++) {
            uint64_t r = tu_rand(&rng);
            /* mostly ASCII and the interesting bytes, so valid strings occur */
            switch (r % 4) {
            case 0:
                s[i] = (unsigned char)('a' + (r >> 8) % 26);
                break;
            case 1:
                s[i] = (unsigned char)(0x80 + (r >> 8) % 0x40); /* continuation */
                break;
            case 2: {
                static const unsigned char leads[] = {0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed,
                                                      0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xff};
                s[i] = leads[(r >> 8) % sizeof(leads)];
                break;
            }
            default:
                s[i] = (unsigned char)(r >> 8);
            }
        }
        bool want = ref_utf8(s, n);
        valid += want;
        ck_assert_msg(utf8_n((const char *)s, n) == want, "'%s' should be %s",
                      esc((const char *)s, n), want ? "valid" : "invalid");
    }
    ck_assert_uint_gt(valid, 1000);
}
END_TEST

static Suite *httpparse_suite(void)
{
    Suite *s = suite_create("httpparse");

    TCase *th = tcase_create("head");
    tcase_add_checked_fixture(th, NULL, teardown);
    tcase_set_timeout(th, 120); /* sanitizer builds are slow; this is not a timing test */
    tcase_add_test(th, test_head_methods);
    tcase_add_test(th, test_head_origin_form);
    tcase_add_test(th, test_head_absolute_form);
    tcase_add_test(th, test_head_asterisk);
    tcase_add_test(th, test_head_versions);
    tcase_add_test(th, test_head_keep_alive);
    tcase_add_test(th, test_head_line_endings);
    tcase_add_test(th, test_head_leading_empty_lines);
    tcase_add_test(th, test_head_len_pipelined);
    tcase_add_test(th, test_head_content_length);
    tcase_add_test(th, test_head_transfer_encoding);
    tcase_add_test(th, test_head_expect);
    tcase_add_test(th, test_head_authorization);
    tcase_add_test(th, test_head_malformed_headers);
    tcase_add_loop_test(th, test_head_prefixes, 0, (int)N_COMPLETE_HEADS);
    tcase_add_loop_test(th, test_head_scan_incremental, 0, (int)N_COMPLETE_HEADS);
    tcase_add_test(th, test_head_max_head);
    suite_add_tcase(s, th);

    TCase *tc = tcase_create("chunked");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_chunked_simple);
    tcase_add_test(tc, test_chunked_hex_and_ext);
    tcase_add_test(tc, test_chunked_trailers);
    tcase_add_test(tc, test_chunked_bare_lf);
    tcase_add_test(tc, test_chunked_many);
    tcase_add_loop_test(tc, test_chunked_split_everywhere, 0, (int)N_SPLIT_CASES);
    tcase_add_test(tc, test_chunked_max_body);
    tcase_add_test(tc, test_chunked_bad_framing);
    tcase_add_test(tc, test_chunked_leading_zeros);
    tcase_add_test(tc, test_chunked_long_ext);
    suite_add_tcase(s, tc);

    TCase *tq = tcase_create("query");
    tcase_add_checked_fixture(tq, NULL, teardown);
    tcase_add_test(tq, test_query_found);
    tcase_add_test(tq, test_query_key_match);
    tcase_add_test(tq, test_query_decoding);
    tcase_add_test(tq, test_query_errors);
    tcase_add_test(tq, test_query_params);
    tcase_add_test(tq, test_pct_decode);
    suite_add_tcase(s, tq);

    TCase *tu = tcase_create("utf8");
    tcase_set_timeout(tu, 120);
    tcase_add_test(tu, test_utf8_valid);
    tcase_add_test(tu, test_utf8_invalid);
    tcase_add_test(tu, test_utf8_every_position);
    tcase_add_test(tu, test_utf8_random);
    suite_add_tcase(s, tu);

    TCase *tr = tcase_create("random");
    tcase_add_checked_fixture(tr, NULL, teardown);
    tcase_set_timeout(tr, 300);
    tcase_add_loop_test(tr, test_random_input, 0, 2);
    suite_add_tcase(s, tr);
    return s;
}

int main(void)
{
    return tu_run(httpparse_suite());
}
