/* fuzz_http_head: the HTTP request head parser (httpparse_head), and the
 * chunked decoder on what follows a head that asks for it, as http.c drives
 * them.
 *
 * Input: u16 max_head, u8 seed of the read sizes, then the bytes a client
 * sends. The head is parsed with all bytes present and again as they would
 * arrive in reads of 1 to 64 bytes (resuming with the scan hint); both must
 * agree. A parsed head is checked against httpparse.h: every pointer inside
 * the head, head_len within max_head and ending in a blank line, a version of
 * 1.0 or 1.1, never both a length and chunked; an error is one of the
 * documented statuses with a reason. */
#include "config.h"

#include "front/http/httpparse.h"
#include "fuzz.h"

static void check_head(const char *buf, size_t len, size_t max_head, const struct httpparse_head *h)
{
    size_t hl = h->head_len;
    FUZZ_CHECK(hl >= 2 && hl <= len && hl <= max_head, "head_len %zu of %zu", hl, len);
    FUZZ_CHECK(buf[hl - 1] == '\n' && (buf[hl - 2] == '\n' || (hl >= 3 && buf[hl - 2] == '\r' &&
                                                                buf[hl - 3] == '\n')),
               "head does not end in a blank line");
    FUZZ_CHECK(fuzz_inside(h->method_s, h->method_len, buf, hl) && h->method_len > 0,
               "method outside the head");
    FUZZ_CHECK(h->path_len > 0, "empty path");
    FUZZ_CHECK(fuzz_inside(h->path, h->path_len, buf, hl) ||
                   (h->path_len == 1 && h->path[0] == '/'),
               "path outside the head");
    FUZZ_CHECK(h->path[0] == '/' || (h->path_len == 1 && h->path[0] == '*'),
               "path does not start with '/'");
    FUZZ_CHECK(!memchr(h->path, '?', h->path_len), "a '?' in the path");
    if (h->query) {
        FUZZ_CHECK(fuzz_inside(h->query, h->query_len, buf, hl), "query outside the head");
        FUZZ_CHECK(h->query > buf && h->query[-1] == '?', "query not after a '?'");
    } else {
        FUZZ_CHECK(h->query_len == 0, "query_len without a query");
    }
    if (h->auth)
        FUZZ_CHECK(fuzz_inside(h->auth, h->auth_len, buf, hl), "Authorization outside the head");
    FUZZ_CHECK(h->minor == 0 || h->minor == 1, "HTTP/1.%d", h->minor);
    FUZZ_CHECK(!(h->chunked && h->has_length), "both chunked and Content-Length");
    FUZZ_CHECK(!h->chunked || h->minor == 1, "chunked in HTTP/1.0");
    FUZZ_CHECK(h->has_length || h->content_length == 0, "a length without Content-Length");
}

static void check_error(int status, const char *err)
{
    FUZZ_CHECK(status == 400 || status == 431 || status == 501 || status == 505, "status %d",
               status);
    FUZZ_CHECK(err[0] != '\0', "error without a reason");
}

/* Decode a chunked body at once and in pieces (fed into the same buffer as a
 * socket would fill it); both must give the same result and the same bytes. */
static void check_chunked(const char *body, size_t len, uint32_t rng)
{
    const size_t max_body = 1u << 16;
    char *a = fuzz_dup((const uint8_t *)body, len), *b = malloc(len ? len : 1);
    char erra[128] = "", errb[128] = "";
    int sa = 0, sb = 0;
    struct httpparse_chunked ca = {0}, cb = {0};
    enum httpparse_status ra = httpparse_chunked(a, len, max_body, &ca, &sa, erra, sizeof(erra));
    enum httpparse_status rb = HTTPPARSE_NEED_MORE;
    size_t have = 0;
    while (have < len) {
        rng = rng * 1103515245u + 12345u;
        size_t step = 1 + (rng >> 16) % 64;
        if (step > len - have)
            step = len - have;
        memcpy(b + have, body + have, step);
        have += step;
        rb = httpparse_chunked(b, have, max_body, &cb, &sb, errb, sizeof(errb));
        if (rb != HTTPPARSE_NEED_MORE)
            break;
    }
    FUZZ_CHECK(ra == rb, "chunked: %d at once, %d in pieces", (int)ra, (int)rb);
    if (ra == HTTPPARSE_OK) {
        FUZZ_CHECK(ca.out <= ca.in && ca.in <= len && ca.out <= max_body, "out %zu in %zu len %zu",
                   ca.out, ca.in, len);
        FUZZ_CHECK(ca.in == cb.in && ca.out == cb.out && memcmp(a, b, ca.out) == 0,
                   "chunked: different bodies at once and in pieces");
    } else if (ra == HTTPPARSE_ERROR) {
        FUZZ_CHECK((sa == 400 || sa == 413) && sa == sb, "chunked status %d / %d", sa, sb);
        FUZZ_CHECK(erra[0] != '\0', "chunked error without a reason");
    }
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    size_t max_head = 16 + fuzz_u16(&in) % 8192;
    uint32_t rng = fuzz_u8(&in) * 2654435761u + 1;
    char *buf = fuzz_dup(in.p, in.len);
    size_t len = in.len;

    struct httpparse_head h, h2;
    char err[256] = "", err2[256] = "";
    int status = 0, status2 = 0;
    size_t scan = 0;
    enum httpparse_status st =
        httpparse_head(buf, len, max_head, &scan, &h, &status, err, sizeof(err));
    if (st == HTTPPARSE_OK)
        check_head(buf, len, max_head, &h);
    else if (st == HTTPPARSE_ERROR)
        check_error(status, err);
    else
        FUZZ_CHECK(len < max_head, "NEED_MORE with %zu >= max_head bytes", len);

    /* In pieces: the same answer at the same point. */
    enum httpparse_status st2 = HTTPPARSE_NEED_MORE;
    size_t have = 0;
    scan = 0;
    while (have < len) {
        rng = rng * 1103515245u + 12345u;
        size_t step = 1 + (rng >> 16) % 64;
        have = len - have < step ? len : have + step;
        st2 = httpparse_head(buf, have, max_head, &scan, &h2, &status2, err2, sizeof(err2));
        FUZZ_CHECK(scan <= have, "scan %zu past %zu", scan, have);
        if (st2 != HTTPPARSE_NEED_MORE)
            break;
    }
    if (len == 0)
        st2 = httpparse_head(buf, 0, max_head, &scan, &h2, &status2, err2, sizeof(err2));
    /* A head complete in fewer bytes is found at that point, so a later
     * byte cannot change it; but an error seen early may be a 431 that the
     * whole buffer reports the same way. */
    FUZZ_CHECK(st == st2, "status %d at once, %d in pieces", (int)st, (int)st2);
    if (st == HTTPPARSE_OK) {
        FUZZ_CHECK(h.head_len == h2.head_len && h.method == h2.method &&
                       h.path_len == h2.path_len && h.query_len == h2.query_len &&
                       h.keep_alive == h2.keep_alive && h.chunked == h2.chunked &&
                       h.content_length == h2.content_length,
                   "head differs when read in pieces");
        if (h.chunked)
            check_chunked(buf + h.head_len, len - h.head_len, rng);
    } else if (st == HTTPPARSE_ERROR) {
        FUZZ_CHECK(status == status2 && strcmp(err, err2) == 0,
                   "error %d '%s' at once, %d '%s' in pieces", status, err, status2, err2);
    }
    free(buf);
    return 0;
}
