/* IP addresses in URLs and hosts, for url/canon.c (see canon_ip.h): every
 * IPv4 spelling inet_aton accepts to dotted decimal, IPv6 to RFC 5952 text.
 * Pure functions, any thread. */
#include "config.h"

#include "url/canon_ip.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"

/* One part of an inet_aton-style IPv4 address: 0x-hex, 0-octal or decimal.
 * "0x" alone is 0, as in inet_aton and browsers. False if not a number or
 * above 2^32 - 1. */
static bool ipv4_part(const char *s, size_t n, uint64_t *v)
{
    unsigned base = 10;
    size_t i = 0;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    } else if (n >= 2 && s[0] == '0') {
        base = 8;
        i = 1;
    }
    if (n == 0)
        return false;
    uint64_t x = 0;
    for (; i < n; i++) {
        int d = util_hexval((unsigned char)s[i]);
        if (d < 0 || (unsigned)d >= base)
            return false;
        x = x * base + (unsigned)d;
        if (x > 0xffffffffu)
            return false;
    }
    *v = x;
    return true;
}

/* Parse h[0..n) (no empty parts: dots are already cleaned up) as an IPv4
 * address in any spelling inet_aton accepts: 1 to 4 parts, each but the last
 * one byte, the last filling the bytes left ("10.1.515" is 10.1.2.3). */
bool url_ipv4_parse(const char *h, size_t n, uint32_t *addr)
{
    uint64_t part[4];
    size_t np = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && h[i] != '.')
            continue;
        if (np == 4 || !ipv4_part(h + start, i - start, &part[np]))
            return false;
        np++;
        start = i + 1;
    }
    uint64_t a = 0;
    for (size_t i = 0; i + 1 < np; i++) {
        if (part[i] > 255)
            return false;
        a |= part[i] << (24 - 8 * i);
    }
    if (part[np - 1] > (0xffffffffu >> (8 * (np - 1))))
        return false;
    *addr = (uint32_t)(a | part[np - 1]);
    return true;
}

/* Dotted decimal into out (16 bytes), NUL-terminated. By hand: sprintf
 * cost more than the rest of canonicalising an IP-address URL. */
size_t url_ipv4_format(uint32_t a, char *out)
{
    size_t o = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        unsigned b = (a >> shift) & 255;
        if (b >= 100)
            out[o++] = (char)('0' + b / 100);
        if (b >= 10)
            out[o++] = (char)('0' + b / 10 % 10);
        out[o++] = (char)('0' + b % 10);
        if (shift)
            out[o++] = '.';
    }
    out[o] = 0;
    return o;
}

/* RFC 5952 text of an IPv6 address: lower-case hex without leading zeros, the
 * longest run of two or more zero groups (the first of equal runs) as "::".
 * Written here rather than by inet_ntop, which keeps the deprecated
 * "::a.b.c.d" form for IPv4-compatible addresses. out holds 40 bytes. */
static size_t ipv6_format(const unsigned char a[16], char *out)
{
    unsigned g[8];
    for (int i = 0; i < 8; i++)
        g[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
    int best = -1, best_len = 1;
    for (int i = 0; i < 8;) {
        if (g[i] != 0) {
            i++;
            continue;
        }
        int j = i;
        while (j < 8 && g[j] == 0)
            j++;
        if (j - i > best_len) {
            best = i;
            best_len = j - i;
        }
        i = j;
    }
    size_t o = 0;
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            out[o++] = ':';
            if (i == 0)
                out[o++] = ':';
            i += best_len - 1;
            continue;
        }
        static const char hex[] = "0123456789abcdef";
        bool any = false;
        for (int shift = 12; shift >= 0; shift -= 4) {
            unsigned d = (g[i] >> shift) & 15;
            if (d || any || shift == 0) {
                out[o++] = hex[d];
                any = true;
            }
        }
        if (i < 7)
            out[o++] = ':';
    }
    out[o] = 0;
    return o;
}

/* An IPv6 literal h[0..n) (no brackets) into out as RFC 5952 text, or, for an
 * IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) address, as the IPv4
 * address it carries, as the Safe Browsing v5 text asks. */
bool url_ipv6_canon(const char *h, size_t n, char *out, size_t *outlen, enum url_host_type *type)
{
    char tmp[64];
    unsigned char a[16];
    if (n == 0 || n >= sizeof(tmp))
        return false;
    memcpy(tmp, h, n);
    tmp[n] = 0;
    if (inet_pton(AF_INET6, tmp, a) != 1)
        return false;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
    if (!memcmp(a, mapped, 12) || !memcmp(a, nat64, 12)) {
        *outlen = url_ipv4_format(
            (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15], out);
        *type = URL_HOST_IPV4;
        return true;
    }
    *outlen = ipv6_format(a, out);
    *type = URL_HOST_IPV6;
    return true;
}
