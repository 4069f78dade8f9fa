/* fuzz_authz: the authorization endpoint's pure part (front/http/authz.c) on
 * a request head as the HTTP front hands it over: httpparse_head first (only
 * a head it accepts reaches authz), then authz_parse_path on the path after
 * "/v1/authz/", authz_scan_headers, authz_derive_url and authz_client_addr.
 *
 * Input: u16 the URL buffer's size (0 to 1023), then the request head. The
 * URL buffer is a heap block of exactly that size, so ASan sees a byte
 * written past it. Checked besides memory safety: names are filter names
 * (base/fname.h) in the route's own buffer, each no longer than the part of
 * the path it was decoded from; header values lie inside the head; a URL
 * from X-Original-URL is its bytes; one built from parts starts with a
 * lower-case scheme and "://", then a host without '/', '?', '#', '@', '\'
 * or white space, then a path starting with '/'; an error has a reason; the
 * request's context (authz_context) comes from headers given once. */
#include "config.h"

#include <strings.h>

#include "base/fname.h"
#include "front/http/authz.h"
#include "front/http/httpparse.h"
#include "fuzz.h"

static void check_name(struct authz_name n, const char *slot, size_t plen)
{
    FUZZ_CHECK(n.len >= 1 && n.len <= FNAME_MAX && n.len <= plen, "name of %zu bytes", n.len);
    FUZZ_CHECK(n.p == slot, "name outside its slot of the route");
    for (size_t i = 0; i < n.len; i++)
        FUZZ_CHECK(fname_byte[(unsigned char)n.p[i]], "byte %02x in a name", (unsigned char)n.p[i]);
}

static void check_hdr(struct authz_hdr h, const char *head, size_t len)
{
    if (h.count)
        FUZZ_CHECK(fuzz_inside(h.p, h.len, head, len), "header value outside the head");
    else
        FUZZ_CHECK(h.p == NULL && h.len == 0, "value of an absent header");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    size_t cap = fuzz_u16(&in) % 1024;
    char *buf = fuzz_dup(in.p, in.len);
    size_t len = in.len;
    struct httpparse_head hd;
    char err[256] = "";
    int status = 0;
    size_t scan = 0;
    if (httpparse_head(buf, len, 1u << 16, &scan, &hd, &status, err, sizeof(err)) != HTTPPARSE_OK) {
        free(buf);
        return 0;
    }
    /* The path after "/v1/authz/", or the whole path when it is not that. */
    const char *rest = hd.path;
    size_t rlen = hd.path_len;
    if (rlen >= 10 && memcmp(rest, "/v1/authz/", 10) == 0) {
        rest += 10;
        rlen -= 10;
    }
    struct authz_route rt;
    err[0] = '\0';
    const char *below = "";
    size_t below_len = 0;
    if (authz_parse_path(rest, rlen, &rt, err, sizeof(err)) == 0) {
        FUZZ_CHECK(rt.n >= 1 && rt.n <= AUTHZ_MAX_FILTERS, "%zu filters", rt.n);
        for (size_t i = 0; i < rt.n; i++)
            check_name(rt.filter[i], rt.names[i], rlen);
        if (rt.client.len)
            check_name(rt.client, rt.names[AUTHZ_MAX_FILTERS], rlen);
        if (rt.below_len) {
            FUZZ_CHECK(fuzz_inside(rt.below, rt.below_len, rest, rlen) && rt.below[0] == '/',
                       "below outside the path or without its '/'");
            below = rt.below;
            below_len = rt.below_len;
        }
    } else {
        FUZZ_CHECK(err[0] != '\0', "path refused without a reason");
    }

    const char *head = hd.method_s;
    size_t head_len = hd.head_len - (size_t)(hd.method_s - buf);
    struct authz_headers ah;
    authz_scan_headers(head, head_len, &ah);
    check_hdr(ah.original_url, head, head_len);
    check_hdr(ah.original_uri, head, head_len);
    check_hdr(ah.forwarded_uri, head, head_len);
    check_hdr(ah.forwarded_proto, head, head_len);
    check_hdr(ah.forwarded_host, head, head_len);
    check_hdr(ah.host, head, head_len);
    check_hdr(ah.real_ip, head, head_len);
    check_hdr(ah.forwarded_for, head, head_len);
    check_hdr(ah.sec_fetch_dest, head, head_len);
    check_hdr(ah.referer, head, head_len);
    check_hdr(ah.origin, head, head_len);
    check_hdr(ah.original_method, head, head_len);
    check_hdr(ah.forwarded_method, head, head_len);
    /* The context: each value a header given once, not empty, inside the
     * head; the page is never an Origin of "null". */
    struct authz_context cx;
    authz_context(&ah, &cx);
    FUZZ_CHECK(!cx.dest || (ah.sec_fetch_dest.count == 1 && cx.dest == ah.sec_fetch_dest.p &&
                            cx.dest_len == ah.sec_fetch_dest.len && cx.dest_len > 0),
               "Sec-Fetch-Dest not taken as given once");
    FUZZ_CHECK(!cx.from || (cx.from_len > 0 && fuzz_inside(cx.from, cx.from_len, head, head_len)),
               "the page outside the head");
    FUZZ_CHECK(!cx.from || cx.from == ah.referer.p || cx.from == ah.origin.p,
               "the page from neither Referer nor Origin");
    FUZZ_CHECK(!cx.from || cx.from != ah.origin.p || ah.referer.count != 1 || ah.referer.len == 0,
               "Origin taken over a Referer given once");
    FUZZ_CHECK(!cx.from || !(cx.from_len == 4 && strncasecmp(cx.from, "null", 4) == 0 &&
                             cx.from == ah.origin.p),
               "an opaque Origin taken as the page");
    FUZZ_CHECK(!cx.method || (cx.method_len > 0 && (cx.method == ah.original_method.p ||
                                                    cx.method == ah.forwarded_method.p)),
               "the method from neither header");

    char *url = malloc(cap ? cap : 1);
    if (!url)
        abort();
    size_t ulen = 12345;
    err[0] = '\0';
    int src = authz_derive_url(&ah, below, below_len, hd.query, hd.query_len, hd.query != NULL, url,
                               cap, &ulen, err, sizeof(err));
    if (src < 0) {
        FUZZ_CHECK(err[0] != '\0' && ulen == 0, "refused without a reason");
    } else if (src == AUTHZ_FROM_URL) {
        FUZZ_CHECK(ulen == ah.original_url.len && ulen > 0 &&
                       memcmp(url, ah.original_url.p, ulen) == 0,
                   "X-Original-URL not copied as it is");
    } else {
        FUZZ_CHECK(src == AUTHZ_FROM_HEADER || src == AUTHZ_FROM_PATH, "source %d", src);
        FUZZ_CHECK(ulen <= cap, "%zu bytes in a buffer of %zu", ulen, cap);
        size_t i = 0;
        while (i < ulen && url[i] != ':')
            i++;
        FUZZ_CHECK(i >= 1 && i <= AUTHZ_SCHEME_MAX && ulen - i >= 3 &&
                       memcmp(url + i, "://", 3) == 0,
                   "no scheme");
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(!(url[j] >= 'A' && url[j] <= 'Z'), "upper-case scheme");
        size_t h = i + 3, e = h;
        while (e < ulen && url[e] != '/')
            e++;
        FUZZ_CHECK(e > h && e < ulen, "no host or no path");
        for (size_t j = h; j < e; j++) {
            unsigned char c = (unsigned char)url[j];
            FUZZ_CHECK(c > ' ' && c != 0x7f && c != '?' && c != '#' && c != '@' && c != '\\',
                       "byte %02x in the host", c);
        }
    }
    const char *addr;
    size_t alen;
    int c = authz_client_addr(&ah, &addr, &alen, err, sizeof(err));
    if (c == 1)
        FUZZ_CHECK(alen > 0 && fuzz_inside(addr, alen, head, head_len), "address outside");
    else
        FUZZ_CHECK(addr == NULL && alen == 0, "an address with %d", c);
    free(url);
    free(buf);
    return 0;
}
