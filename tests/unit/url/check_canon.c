/* Unit tests for URL and host canonicalisation (src/url/canon.c): every example
 * of the canonicalisation section of Safe Browsing v4 "URLs and Hashing", then
 * what the spec leaves open (IPv6, ports, userinfo, limits, bad escapes,
 * non-UTF-8 hosts, NUL bytes), bare hosts and e-mail addresses. Inputs are
 * copied into heap buffers of exactly their length so ASan sees any overread. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url/canon.h"

static struct url_canon g_c;
static char g_err[256];

/* Canonicalise in[0..n) from an exact-length heap copy; 0 or -1. */
static int canon_n(int (*fn)(struct url_canon *, const char *, size_t, char *, size_t),
                   const char *in, size_t n)
{
    char *b = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(b);
    memcpy(b, in, n);
    g_err[0] = 0;
    int rc = fn(&g_c, b, n, g_err, sizeof(g_err));
    free(b);
    return rc;
}

/* url_canon_url's fast path and the general steps give the same result
 * (g_c holds url_canon_url's; the general one goes into its own struct). */
static struct url_canon g_general;
static void same_as_general(const char *in, size_t n, int line)
{
    char err[256];
    int rc = url_canon_url_general(&g_general, in, n, err, sizeof(err));
    ck_assert_msg(rc == 0, "line %d: general path failed: %s", line, err);
    ck_assert_msg(strcmp(g_general.url, g_c.url) == 0, "line %d: fast \"%s\", general \"%s\"",
                  line, g_c.url, g_general.url);
    ck_assert_uint_eq(g_general.len, g_c.len);
    ck_assert_uint_eq(g_general.scheme_len, g_c.scheme_len);
    ck_assert_uint_eq(g_general.host_off, g_c.host_off);
    ck_assert_uint_eq(g_general.host_len, g_c.host_len);
    ck_assert_uint_eq(g_general.path_off, g_c.path_off);
    ck_assert_uint_eq(g_general.path_len, g_c.path_len);
    ck_assert_uint_eq(g_general.query_off, g_c.query_off);
    ck_assert_uint_eq(g_general.query_len, g_c.query_len);
    ck_assert_int_eq(g_general.has_query, g_c.has_query);
    ck_assert_int_eq(g_general.host_type, g_c.host_type);
}

#define URL_IS(in, want) url_is_n(in, sizeof(in) - 1, want, __LINE__)
static void url_is_n(const char *in, size_t n, const char *want, int line)
{
    int rc = canon_n(url_canon_url, in, n);
    ck_assert_msg(rc == 0, "line %d: %s: error %s", line, in, g_err);
    ck_assert_msg(strcmp(g_c.url, want) == 0, "line %d: got \"%s\", want \"%s\"", line, g_c.url,
                  want);
    ck_assert_uint_eq(strlen(g_c.url), g_c.len);
    same_as_general(in, n, line);
    /* Idempotent: the canonical form is its own canonical form. */
    char again[URL_CANON_MAX + 1];
    memcpy(again, g_c.url, g_c.len + 1);
    ck_assert_int_eq(canon_n(url_canon_url, again, strlen(again)), 0);
    ck_assert_str_eq(g_c.url, again);
}

#define URL_FAILS(in, why) url_fails_n(in, sizeof(in) - 1, why, __LINE__)
static void url_fails_n(const char *in, size_t n, const char *why, int line)
{
    int rc = canon_n(url_canon_url, in, n);
    ck_assert_msg(rc == -1, "line %d: %s: unexpected success \"%s\"", line, in, g_c.url);
    ck_assert_msg(strstr(g_err, why) != NULL, "line %d: error \"%s\" lacks \"%s\"", line, g_err,
                  why);
}

#define HOST_IS(in, want) host_is_n(url_canon_host, in, sizeof(in) - 1, want, __LINE__)
#define EMAIL_IS(in, want) host_is_n(url_canon_email, in, sizeof(in) - 1, want, __LINE__)
#define ANY_IS(in, want) host_is_n(url_canon_any_host, in, sizeof(in) - 1, want, __LINE__)
static void host_is_n(int (*fn)(struct url_canon *, const char *, size_t, char *, size_t),
                      const char *in, size_t n, const char *want, int line)
{
    int rc = canon_n(fn, in, n);
    ck_assert_msg(rc == 0, "line %d: %s: error %s", line, in, g_err);
    char got[URL_CANON_MAX + 1];
    snprintf(got, sizeof(got), "%.*s", (int)g_c.host_len, g_c.url + g_c.host_off);
    ck_assert_msg(strcmp(got, want) == 0, "line %d: got \"%s\", want \"%s\"", line, got, want);
}

#define HOST_FAILS(in) ck_assert_int_eq(canon_n(url_canon_host, in, sizeof(in) - 1), -1)

/* ---- the spec's examples, in its order ---- */

START_TEST(spec_examples)
{
    URL_IS("http://host/%25%32%35", "http://host/%25");
    URL_IS("http://host/%25%32%35%25%32%35", "http://host/%25%25");
    URL_IS("http://host/%2525252525252525", "http://host/%25");
    URL_IS("http://host/asdf%25%32%35asd", "http://host/asdf%25asd");
    URL_IS("http://host/%%%25%32%35asd%%", "http://host/%25%25%25asd%25%25");
    URL_IS("http://www.google.com/", "http://www.google.com/");
    URL_IS("http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/"
           "%77%77%77%2E%65%62%61%79%2E%63%6F%6D/",
           "http://168.188.99.26/.secure/www.ebay.com/");
    URL_IS("http://195.127.0.11/uploads/%20%20%20%20/.verify/"
           ".eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/",
           "http://195.127.0.11/uploads/%20%20%20%20/.verify/"
           ".eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/");
    URL_IS("http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%"
           "252944_55%252B",
           "http://host%23.com/~a!b@c%23d$e%25f^00&11*22(33)44_55+");
    URL_IS("http://3279880203/blah", "http://195.127.0.11/blah");
    URL_IS("http://www.google.com/blah/..", "http://www.google.com/");
    URL_IS("www.google.com/", "http://www.google.com/");
    URL_IS("www.google.com", "http://www.google.com/");
    URL_IS("http://www.evil.com/blah#frag", "http://www.evil.com/blah");
    URL_IS("http://www.GOOgle.com/", "http://www.google.com/");
    URL_IS("http://www.google.com.../", "http://www.google.com/");
    URL_IS("http://www.google.com/foo\tbar\rbaz\n2", "http://www.google.com/foobarbaz2");
    URL_IS("http://www.google.com/q?", "http://www.google.com/q?");
    URL_IS("http://www.google.com/q?r?", "http://www.google.com/q?r?");
    URL_IS("http://www.google.com/q?r?s", "http://www.google.com/q?r?s");
    URL_IS("http://evil.com/foo#bar#baz", "http://evil.com/foo");
    URL_IS("http://evil.com/foo;", "http://evil.com/foo;");
    URL_IS("http://evil.com/foo?bar;", "http://evil.com/foo?bar;");
    URL_IS("http://\x01\x80.com/", "http://%01%80.com/");
    URL_IS("http://notrailingslash.com", "http://notrailingslash.com/");
    URL_IS("http://www.gotaport.com:1234/", "http://www.gotaport.com/");
    URL_IS("  http://www.google.com/  ", "http://www.google.com/");
    URL_IS("http:// leadingspace.com/", "http://%20leadingspace.com/");
    URL_IS("http://%20leadingspace.com/", "http://%20leadingspace.com/");
    URL_IS("%20leadingspace.com/", "http://%20leadingspace.com/");
    URL_IS("https://www.securesite.com/", "https://www.securesite.com/");
    URL_IS("http://host.com/ab%23cd", "http://host.com/ab%23cd");
    URL_IS("http://host.com//twoslashes?more//slashes", "http://host.com/twoslashes?more//slashes");
}
END_TEST

/* The parts name the right bytes of the canonical URL. */
START_TEST(parts)
{
    URL_IS("HTTPS://User:Pw@A.B.C:8443/x/../1/2.html?q=1#f", "https://a.b.c/1/2.html?q=1");
    ck_assert_uint_eq(g_c.scheme_len, 5);
    ck_assert_int_eq(strncmp(g_c.url + g_c.host_off, "a.b.c", g_c.host_len), 0);
    ck_assert_uint_eq(g_c.host_len, 5);
    ck_assert_int_eq(strncmp(g_c.url + g_c.path_off, "/1/2.html", g_c.path_len), 0);
    ck_assert_uint_eq(g_c.path_len, 9);
    ck_assert(g_c.has_query);
    ck_assert_uint_eq(g_c.query_len, 3);
    ck_assert_int_eq(strncmp(g_c.url + g_c.query_off, "q=1", 3), 0);
    ck_assert_int_eq(g_c.host_type, URL_HOST_NAME);
    URL_IS("http://h/p", "http://h/p");
    ck_assert(!g_c.has_query);
    ck_assert_uint_eq(g_c.query_len, 0);
    URL_IS("http://1.2.3.4/", "http://1.2.3.4/");
    ck_assert_int_eq(g_c.host_type, URL_HOST_IPV4);
    URL_IS("http://[::1]/", "http://[::1]/");
    ck_assert_int_eq(g_c.host_type, URL_HOST_IPV6);
}
END_TEST

/* Other test vectors of the spec's era (Safe Browsing clients' suites). */
START_TEST(more_vectors)
{
    URL_IS("http%3A%2F%2Fwackyurl.com:80/", "http://wackyurl.com/");
    URL_IS("http://W!eird<>Ho$^.com/", "http://w!eird<>ho$^.com/");
    URL_IS("http://i.have.way.too.many.dots.com/", "http://i.have.way.too.many.dots.com/");
    URL_IS("ftp://ftp.myfiles.com/", "ftp://ftp.myfiles.com/");
    URL_IS("http://some%1bhost.com/%1b", "http://some%1Bhost.com/%1B");
    URL_IS("http://www.\xC3\xBCmlat.com/", "http://www.xn--mlat-zra.com/");
    URL_IS("http://a.com/foo/.././bar/./../foo.html", "http://a.com/foo.html");
    URL_IS("http://a.com//a//b///c////", "http://a.com/a/b/c/");
    URL_IS("http://google.com.:8080/foo.html", "http://google.com/foo.html");
    URL_IS("http://..google.com/foo.html", "http://google.com/foo.html");
    URL_IS("http://google...com/foo.html", "http://google.com/foo.html");
    URL_IS("http://a.com/./", "http://a.com/");
    URL_IS("http://a.com/a/.", "http://a.com/a/");
    URL_IS("http://a.com/../../x", "http://a.com/x");
    URL_IS("http://a.com/a/..b", "http://a.com/a/..b");
    URL_IS("http://host?q", "http://host/?q");
    URL_IS("http://host/%3Fq", "http://host/?q"); /* an escaped '?' is a '?' once unescaped */
    URL_IS("http://host/a%2Fb", "http://host/a/b");
}
END_TEST

/* Every legal IPv4 spelling becomes dotted decimal. */
START_TEST(ipv4_spellings)
{
    URL_IS("http://0x12.0x43.0x44.0x01/", "http://18.67.68.1/");
    URL_IS("http://012.034.01.055/", "http://10.28.1.45/");
    URL_IS("http://12.0x12.01234/", "http://12.18.2.156/");
    URL_IS("http://167838211/", "http://10.1.2.3/");
    URL_IS("http://4294967295/", "http://255.255.255.255/");
    URL_IS("http://10.1.515/", "http://10.1.2.3/");
    URL_IS("http://0X7F.1/", "http://127.0.0.1/");
    URL_IS("http://0x/", "http://0.0.0.0/");
    URL_IS("http://1.2.3.4./", "http://1.2.3.4/");
    URL_IS("http://192.168.0.1:80/index.html", "http://192.168.0.1/index.html");
    /* Not addresses: names, kept as they are. */
    URL_IS("http://123.123.0.0.1/", "http://123.123.0.0.1/");
    URL_IS("http://1.2.3.00x0/", "http://1.2.3.00x0/");
    URL_IS("http://4294967296/", "http://4294967296/");
    URL_IS("http://276.2.3/", "http://276.2.3/");
    URL_IS("http://1.2.3.09/", "http://1.2.3.09/");
    URL_IS("http://1.2.3.256/", "http://1.2.3.256/");
}
END_TEST

START_TEST(ipv6)
{
    URL_IS("http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x");
    URL_IS("http://[2001:0db8:0000:0000:0000:0000:0000:0001]/", "http://[2001:db8::1]/");
    URL_IS("http://[2001:db8:0:0:1:0:0:1]/", "http://[2001:db8::1:0:0:1]/");
    URL_IS("http://[2001:db8:0:1:1:1:1:1]/", "http://[2001:db8:0:1:1:1:1:1]/");
    URL_IS("http://[FEDC:BA98:7654:3210:FEDC:BA98:7654:3210]:80/index.html",
           "http://[fedc:ba98:7654:3210:fedc:ba98:7654:3210]/index.html");
    URL_IS("http://[::192.9.5.5]/ipng", "http://[::c009:505]/ipng");
    URL_IS("http://[::ffff:1.2.3.4]/", "http://1.2.3.4/");
    URL_IS("http://[64:ff9b::1.2.3.4]/", "http://1.2.3.4/");
    URL_IS("http://[::]/", "http://[::]/");
    URL_IS("http://[2001:470:1:18::114]/", "http://[2001:470:1:18::114]/");
    URL_FAILS("http://[2001:db8::g]/", "IPv6");
    URL_FAILS("http://[2001:db8::1/", "IPv6");
    URL_FAILS("http://[::1]x/", "IPv6");
    URL_FAILS("http://[fe80::1%25eth0]/", "IPv6");
    URL_FAILS("http://[]/", "IPv6");
}
END_TEST

START_TEST(userinfo_and_ports)
{
    URL_IS("http://user:pass@host.com/", "http://host.com/");
    URL_IS("http://a@b@host.com/", "http://host.com/");
    URL_IS("http://user@host.com:8080/p", "http://host.com/p");
    URL_IS("http://host.com:/p", "http://host.com/p");
    URL_IS("www.google.com:8080/foo.html", "http://www.google.com/foo.html");
    URL_IS("www.google.com:80", "http://www.google.com/");
    URL_IS("http://host.com:65535/", "http://host.com/");
    URL_FAILS("http://host.com:65536/", "port");
    URL_FAILS("http://host.com:123456/", "port");
    URL_FAILS("http://host.com:8o/", "port");
    URL_FAILS("http://a:b:80/", "port");
    URL_FAILS("www.google.com:xxyy/foo.html:80", "scheme");
    URL_FAILS("http://:80/", "no host");
    URL_FAILS("http://user@/", "no host");
}
END_TEST

/* Inputs the spec's own suites expect to fail: no host. */
START_TEST(no_host)
{
    URL_FAILS("", "empty");
    URL_FAILS("   ", "empty");
    URL_FAILS("#ref", "empty");
    URL_FAILS("/blah", "no host");
    URL_FAILS("/blah#ref", "no host");
    URL_FAILS("?query#ref", "no host");
    URL_FAILS("/blah?query#ref", "no host");
    URL_FAILS("/blah;param", "no host");
    URL_FAILS("http://#ref", "no host");
    URL_FAILS("http:///blah#ref", "no host");
    URL_FAILS("http://?query#ref", "no host");
    URL_FAILS("http:///blah;param?query#ref", "no host");
    URL_FAILS("mailto:bryner@google.com", "scheme");
    URL_FAILS("javascript:alert(1)", "scheme");
    URL_FAILS("http:www.google.com:8080/foo.html", "scheme");
    URL_FAILS("http:/www.google.com/", "scheme");
    URL_FAILS(":", "no host");
    URL_FAILS("http://.../", "empty host");
}
END_TEST

START_TEST(hosts_odd)
{
    URL_IS("http://www.google.com./", "http://www.google.com/");
    URL_IS("http://.www..google..com./", "http://www.google.com/");
    /* Found by fuzz_url: a '[' behind leading dots is an IPv6 literal too. */
    URL_IS("http://..[::1]/", "http://[::1]/");
    URL_FAILS("http://..[\x01d.e/", "IPv6");
    URL_IS("http://a/", "http://a/");
    /* A 253-byte host is the longest. */
    char in[400], want[400];
    memset(in, 0, sizeof(in));
    strcpy(in, "http://");
    for (int i = 0; i < 126; i++)
        strcat(in, i ? ".a" : "a");
    strcat(in, "b/"); /* 251 + 1 + ... */
    ck_assert_int_eq(canon_n(url_canon_url, in, strlen(in)), 0);
    ck_assert_uint_eq(g_c.host_len, 252);
    strcpy(in, "http://");
    memset(in + 7, 'a', 253);
    strcpy(in + 260, "/");
    ck_assert_int_eq(canon_n(url_canon_url, in, strlen(in)), 0);
    snprintf(want, sizeof(want), "%s", in);
    ck_assert_str_eq(g_c.url, want);
    memset(in + 7, 'a', 254);
    strcpy(in + 261, "/");
    ck_assert_int_eq(canon_n(url_canon_url, in, strlen(in)), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "longer than 253"));
    /* Dots that are cleaned away do not count. */
    memset(in + 7, '.', 300);
    memcpy(in + 307, "a.b/", 5);
    ck_assert_int_eq(canon_n(url_canon_url, in, strlen(in)), 0);
    ck_assert_str_eq(g_c.url, "http://a.b/");
}
END_TEST

START_TEST(limits)
{
    static char in[URL_CANON_MAX + 2];
    /* Exactly the maximum is accepted; one more byte is not. */
    memcpy(in, "http://h/", 9);
    memset(in + 9, 'x', URL_CANON_MAX - 9);
    ck_assert_int_eq(canon_n(url_canon_url, in, URL_CANON_MAX), 0);
    ck_assert_uint_eq(g_c.len, URL_CANON_MAX);
    in[URL_CANON_MAX] = 'x';
    ck_assert_int_eq(canon_n(url_canon_url, in, URL_CANON_MAX + 1), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "longer than 8192"));
    /* An input that fits but whose escapes would not is an error, not cut. */
    memset(in + 9, ' ', 4000);
    ck_assert_int_eq(canon_n(url_canon_url, in, 4009 + 1), -1);
    ck_assert_ptr_nonnull(strstr(g_err, "canonical URL longer"));
    /* Unescaping shrinks: 8 KiB of "%41" fits. */
    for (size_t i = 9; i + 3 <= URL_CANON_MAX; i += 3)
        memcpy(in + i, "%41", 3);
    ck_assert_int_eq(canon_n(url_canon_url, in, URL_CANON_MAX - (URL_CANON_MAX - 9) % 3), 0);
    ck_assert_uint_eq(g_c.len, 9 + (URL_CANON_MAX - 9) / 3);
}
END_TEST

START_TEST(bad_escapes)
{
    URL_IS("http://host/%zz", "http://host/%25zz");
    URL_IS("http://host/a%", "http://host/a%25");
    URL_IS("http://host/a%4", "http://host/a%254");
    URL_IS("http://host/%%41", "http://host/%25A");
    URL_IS("http://host/%4%31", "http://host/A");
    URL_IS("http://host/%2%35", "http://host/%25");
    URL_IS("http://host/%00", "http://host/%00");
    URL_IS("http://host/%7f%7F%ff", "http://host/%7F%7F%FF");
    URL_IS("http://host/%0a", "http://host/%0A"); /* escaped LF is kept */
    URL_IS("http://ho%25st/", "http://ho%25st/");
}
END_TEST

/* Bytes that are not UTF-8 are escaped where IDN cannot convert them; the
 * URL is not refused for them. */
START_TEST(non_utf8_and_idn)
{
    URL_IS("http://\xff\xfe.com/\xff", "http://%FF%FE.com/%FF");
    URL_IS("http://caf\xc3\xa9.example/", "http://xn--caf-dma.example/");
    URL_IS("http://CAF\xc3\x89.example/", "http://xn--caf-dma.example/");
    URL_IS("http://caf%C3%A9.example/", "http://xn--caf-dma.example/");
    URL_IS("http://\xd0\xbf\xd1\x80\xd0\xb8\xd0\xbc\xd0\xb5\xd1\x80.\xd1\x80\xd1\x84/",
           "http://xn--e1afmkfd.xn--p1ai/");
    URL_IS("http://a\xc3\xa9\x01.com/", "http://a%C3%A9%01.com/");
    URL_IS("http://xn--caf-dma.example/", "http://xn--caf-dma.example/");
    /* Full-width digits map to an IPv4 address under UTS #46. */
    URL_IS("http://\xef\xbc\x91.\xef\xbc\x92.\xef\xbc\x93.\xef\xbc\x94/", "http://1.2.3.4/");
    /* A full-width solidus would map to '/': kept as bytes instead. */
    URL_IS("http://a\xef\xbc\x8f"
           "b.com/",
           "http://a%EF%BC%8Fb.com/");
    /* An ideographic full stop maps to '.', and the dots are cleaned after. */
    URL_IS("http://\xc3\xa9\xe3\x80\x82\xe3\x80\x82"
           "com/",
           "http://xn--9ca.com/");
}
END_TEST

START_TEST(nul_and_controls)
{
    URL_IS("http://ho\0st.com/a\0b", "http://ho%00st.com/a%00b");
    URL_IS("\0http://host/\0", "http://host/");
    URL_IS("http://host/\x7f\x1fz\x1f", "http://host/%7F%1Fz");
    URL_IS("http://host/a b", "http://host/a%20b");
    URL_IS("http://host/a\x0b"
           "b",
           "http://host/a%0Bb");
}
END_TEST

START_TEST(bare_hosts)
{
    HOST_IS("Evil.Example.", "evil.example");
    HOST_IS("  evil.example  ", "evil.example");
    HOST_IS("..evil..example..", "evil.example");
    HOST_IS("evil%2Eexample", "evil.example");
    HOST_IS("evil.example:8080", "evil.example");
    HOST_IS("3279880203", "195.127.0.11");
    HOST_IS("0x7f.1", "127.0.0.1");
    HOST_IS("017700000001", "127.0.0.1");
    HOST_IS("2001:DB8::1", "2001:db8::1");
    HOST_IS("[2001:DB8::1]", "2001:db8::1");
    HOST_IS("[2001:DB8::1]:443", "2001:db8::1");
    HOST_IS("::ffff:10.0.0.1", "10.0.0.1");
    HOST_IS("b\xc3\xbc"
            "cher.example",
            "xn--bcher-kva.example");
    HOST_IS("\x80.example", "%80.example");
    HOST_FAILS("");
    HOST_FAILS("...");
    HOST_FAILS("2001:db8::g");
    HOST_FAILS("[::1");
    HOST_FAILS("host:port");
    HOST_FAILS("host:123456");
    HOST_FAILS("a.example/b"); /* found by fuzz_lists: no URL's host has '/', '?', '@' */
    HOST_FAILS("a.example?b");
    HOST_FAILS("a@b.example");
    HOST_FAILS("a%2Fb.example");
    ck_assert_int_eq(g_c.scheme_len, 0);
}
END_TEST

START_TEST(emails)
{
    EMAIL_IS("user@Example.COM", "example.com");
    EMAIL_IS("\"a@b\"@mail.example.org.", "mail.example.org");
    EMAIL_IS("<user@example.com>", "example.com");
    EMAIL_IS("user@[192.0.2.1]", "192.0.2.1");
    EMAIL_IS("user@[IPv6:2001:DB8::1]", "2001:db8::1");
    EMAIL_IS("user@caf\xc3\xa9.example", "xn--caf-dma.example");
    ck_assert_int_eq(canon_n(url_canon_email, "nobody", 6), -1);
    ck_assert_int_eq(canon_n(url_canon_email, "nobody@", 7), -1);
}
END_TEST

START_TEST(any_host)
{
    ANY_IS("http://User@WWW.Example.com:81/x?y", "www.example.com");
    ANY_IS("www.example.com/path", "www.example.com");
    ANY_IS("user@example.net", "example.net");
    ANY_IS("mailto:user@example.net", "example.net");
    ANY_IS("example.org", "example.org");
    ANY_IS("http://[2001:db8::1]/", "[2001:db8::1]");
    ANY_IS("2001:db8::1", "2001:db8::1");
}
END_TEST

/* The one-pass unescape equals unescaping whole passes until stable. */
static size_t naive_unescape(char *b, size_t n)
{
    for (;;) {
        size_t o = 0;
        bool changed = false;
        for (size_t i = 0; i < n;) {
            if (b[i] == '%' && i + 2 < n + 0 && strchr("0123456789abcdefABCDEF", b[i + 1]) &&
                strchr("0123456789abcdefABCDEF", b[i + 2]) && b[i + 1] && b[i + 2]) {
                char hx[3] = {b[i + 1], b[i + 2], 0};
                b[o++] = (char)strtol(hx, NULL, 16);
                i += 3;
                changed = true;
            } else {
                b[o++] = b[i++];
            }
        }
        n = o;
        if (!changed)
            return n;
    }
}

/* Inputs at the edges of what url_canon_url's fast path takes (a scheme or
 * none, upper case, ports, dots, dot segments, queries): each must give the
 * general steps' answer, error or not. */
START_TEST(fast_path_edges)
{
    const char *cases[] = {
        "http://a.example/",          "HTTP://A.EXAMPLE",          "a.example",
        "a.example:8080",             "a.example:8080/x?y",        "a.example?q",
        "http://a.example:/",         "http://a.example:65535/",   "http://a.example:65536/",
        "http://a.example:123456/",   "http://a.example:8a/",      "http://a.example./",
        "http://.a.example/",         "http://a..example/",        "http://a.example/./x",
        "http://a.example/../x",      "http://a.example/x/.",      "http://a.example/x/..",
        "http://a.example/x/.?q",     "http://a.example/x/..?q",   "http://a.example/.x/..y",
        "http://a.example//x",        "http://a.example/x//",      "http://a.example/x?//./",
        "http://1.2.3.4/",            "http://a.0x7f/",            "http://a.1b/",
        "http://a.b1/",               "http://u@a.example/",       "http://u:p@a.example/",
        "http://[::1]/",              "http://a.example:80@b/",    "http:/a.example/",
        "mailto:x@a.example",         "HtTpS://MiXeD.Example:443/P/Q?R=S", "http://:80/",
        "http:///x",                  "http://",                   "x",
        "a.example/p/0/1/2/3/4/5/6?z", "http://a.example/%41",     "http://a.example/#f",
        "http://a.example/ x",        " http://a.example/",        "http://a_b-c.example/",
        "http://a.example?",          "http://a.example/?",        "ftp://a.example/f.txt",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char e1[256], e2[256];
        size_t n = strlen(cases[i]);
        int r1 = url_canon_url(&g_c, cases[i], n, e1, sizeof(e1));
        int r2 = url_canon_url_general(&g_general, cases[i], n, e2, sizeof(e2));
        ck_assert_msg(r1 == r2, "%s: url_canon_url %d, general %d", cases[i], r1, r2);
        if (r1 == 0)
            same_as_general(cases[i], n, __LINE__);
        else
            ck_assert_str_eq(e1, e2);
    }
}
END_TEST

START_TEST(unescape_equals_naive)
{
    const char *cases[] = {
        "%2525252525", "%%%25%32%35asd%%", "%4%31", "%%341", "%2%35", "%252%35%2535",
        "%%%%",        "%25%2541",         "abc",   "%",     "%4",    "%41%"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char a[64], b[64];
        size_t n = strlen(cases[i]);
        memcpy(a, cases[i], n);
        memcpy(b, cases[i], n);
        size_t na = url_unescape(a, n), nb = naive_unescape(b, n);
        ck_assert_uint_eq(na, nb);
        ck_assert_int_eq(memcmp(a, b, na), 0);
    }
}
END_TEST

static Suite *url_canon_suite(void)
{
    Suite *s = suite_create("canon");
    TCase *tc = tcase_create("spec");
    tcase_add_test(tc, spec_examples);
    tcase_add_test(tc, parts);
    tcase_add_test(tc, more_vectors);
    tcase_add_test(tc, ipv4_spellings);
    tcase_add_test(tc, no_host);
    suite_add_tcase(s, tc);
    tc = tcase_create("beyond");
    tcase_add_test(tc, ipv6);
    tcase_add_test(tc, userinfo_and_ports);
    tcase_add_test(tc, hosts_odd);
    tcase_add_test(tc, limits);
    tcase_add_test(tc, bad_escapes);
    tcase_add_test(tc, non_utf8_and_idn);
    tcase_add_test(tc, nul_and_controls);
    tcase_add_test(tc, unescape_equals_naive);
    tcase_add_test(tc, fast_path_edges);
    suite_add_tcase(s, tc);
    tc = tcase_create("hosts");
    tcase_add_test(tc, bare_hosts);
    tcase_add_test(tc, emails);
    tcase_add_test(tc, any_host);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(url_canon_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
