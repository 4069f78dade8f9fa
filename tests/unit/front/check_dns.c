/* Unit tests for the DNS wire parser and builder (src/front/dns/dnswire.h)
 * and the DNSBL zone logic (src/front/dns/dnsbl.h), hostile packets
 * included: truncated headers and names, compression loops and forward
 * pointers, over-long names and labels, other opcodes, classes and counts. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "front/dns/dnsbl.h"
#include "front/dns/dnswire.h"

static char why[200];

/* A query packet for name (text), type, class; its length. */
static size_t query(uint8_t *p, uint16_t id, const char *name, uint16_t type, uint16_t cls)
{
    memset(p, 0, 12);
    p[0] = (uint8_t)(id >> 8);
    p[1] = (uint8_t)id;
    p[2] = 0x01; /* RD */
    p[5] = 1;
    size_t n = dns_name_wire(name, strlen(name), p + 12);
    ck_assert_uint_gt(n, 0);
    n += 12;
    p[n++] = (uint8_t)(type >> 8);
    p[n++] = (uint8_t)type;
    p[n++] = (uint8_t)(cls >> 8);
    p[n++] = (uint8_t)cls;
    return n;
}

START_TEST(test_parse_query)
{
    uint8_t p[600];
    struct dns_query q;
    size_t n = query(p, 0xbeef, "4.3.2.1.BL.example.org", DNS_TYPE_A, DNS_CLASS_IN);
    ck_assert_int_eq(dns_parse_query(p, n, &q, why, sizeof(why)), DNS_QUERY);
    ck_assert_uint_eq(q.id, 0xbeef);
    ck_assert_str_eq(q.name, "4.3.2.1.BL.example.org"); /* case kept */
    ck_assert_uint_eq(q.name_len, 22);
    ck_assert_uint_eq(q.qtype, DNS_TYPE_A);
    ck_assert_uint_eq(q.qclass, DNS_CLASS_IN);
    ck_assert_uint_eq(q.question_len, n - 12);
    ck_assert(!q.odd_name);
    /* The root. */
    n = query(p, 1, "", DNS_TYPE_SOA, DNS_CLASS_IN);
    ck_assert_int_eq(dns_parse_query(p, n, &q, why, sizeof(why)), DNS_QUERY);
    ck_assert_str_eq(q.name, "");
    /* A label holding a dot is parsed, and marked. */
    memcpy(p + 12,
           "\x03"
           "a.b"
           "\x00"
           "\x00\x01\x00\x01",
           9);
    ck_assert_int_eq(dns_parse_query(p, 21, &q, why, sizeof(why)), DNS_QUERY);
    ck_assert(q.odd_name);
    /* A backward pointer is followed. */
    memcpy(p + 12,
           "\x01x\x00"
           "\x00\x01\x00\x01",
           7); /* name at 12 */
    ck_assert_int_eq(dns_parse_query(p, 19, &q, why, sizeof(why)), DNS_QUERY);
}
END_TEST

START_TEST(test_parse_hostile)
{
    uint8_t p[600];
    struct dns_query q;
    size_t n = query(p, 7, "a.example", DNS_TYPE_A, DNS_CLASS_IN);
    /* Every truncation: never a crash, never a query. */
    for (size_t cut = 0; cut < n; cut++) {
        enum dns_status st = dns_parse_query(p, cut, &q, why, sizeof(why));
        ck_assert_int_ne(st, DNS_QUERY);
        ck_assert_int_eq(st, cut < 12 ? DNS_DROP : DNS_FORMERR);
    }
    /* A response is dropped; another opcode is NOTIMP; two questions FORMERR. */
    p[2] = 0x80;
    ck_assert_int_eq(dns_parse_query(p, n, &q, why, sizeof(why)), DNS_DROP);
    p[2] = 0x10; /* opcode 2 */
    ck_assert_int_eq(dns_parse_query(p, n, &q, why, sizeof(why)), DNS_NOTIMP);
    p[2] = 0x01;
    p[5] = 2;
    ck_assert_int_eq(dns_parse_query(p, n, &q, why, sizeof(why)), DNS_FORMERR);
    ck_assert_str_eq(why, "2 questions (one is allowed)");
    p[5] = 0;
    ck_assert_int_eq(dns_parse_query(p, n, &q, why, sizeof(why)), DNS_FORMERR);
    p[5] = 1;
    /* A pointer to itself, a loop, a forward pointer. */
    memcpy(p + 12, "\xc0\x0c\x00\x01\x00\x01", 6);
    ck_assert_int_eq(dns_parse_query(p, 18, &q, why, sizeof(why)), DNS_FORMERR);
    ck_assert_str_eq(why, "compression pointer does not point backwards");
    memcpy(p + 12, "\x01x\xc0\x0c\x00\x01\x00\x01", 8);
    ck_assert_int_eq(dns_parse_query(p, 20, &q, why, sizeof(why)), DNS_FORMERR);
    memcpy(p + 12, "\xc0\x20\x00\x01\x00\x01", 6);
    ck_assert_int_eq(dns_parse_query(p, 40, &q, why, sizeof(why)), DNS_FORMERR);
    /* Label types 01 and 10, a label over 63, a name over 255. */
    memcpy(p + 12,
           "\x41"
           "x",
           2);
    ck_assert_int_eq(dns_parse_query(p, 100, &q, why, sizeof(why)), DNS_FORMERR);
    memcpy(p + 12,
           "\x81"
           "x",
           2);
    ck_assert_int_eq(dns_parse_query(p, 100, &q, why, sizeof(why)), DNS_FORMERR);
    size_t o = 12;
    for (int i = 0; i < 5; i++) {
        p[o++] = 63;
        memset(p + o, 'a', 63);
        o += 63;
    }
    p[o++] = 0;
    memcpy(p + o, "\x00\x01\x00\x01", 4);
    ck_assert_int_eq(dns_parse_query(p, o + 4, &q, why, sizeof(why)), DNS_FORMERR);
    ck_assert_str_eq(why, "name longer than 255 bytes");
    /* Exactly 255 on the wire is a name. */
    o = 12;
    for (int i = 0; i < 3; i++) {
        p[o++] = 63;
        memset(p + o, 'a', 63);
        o += 63;
    }
    p[o++] = 61;
    memset(p + o, 'b', 61);
    o += 61;
    p[o++] = 0;
    ck_assert_uint_eq(o - 12, 255);
    memcpy(p + o, "\x00\x01\x00\x01", 4);
    ck_assert_int_eq(dns_parse_query(p, o + 4, &q, why, sizeof(why)), DNS_QUERY);
    ck_assert_uint_eq(q.name_len, 253);
}
END_TEST

START_TEST(test_name_wire)
{
    uint8_t w[DNS_NAME_WIRE_MAX];
    ck_assert_uint_eq(dns_name_wire("a.bc", 4, w), 6);
    ck_assert(memcmp(w,
                     "\x01"
                     "a"
                     "\x02"
                     "bc"
                     "\x00",
                     6) == 0);
    ck_assert_uint_eq(dns_name_wire("", 0, w), 1);
    ck_assert_uint_eq(dns_name_wire("a..b", 4, w), 0);
    ck_assert_uint_eq(dns_name_wire("a.", 2, w), 0);
    char big[300];
    memset(big, 'x', 64);
    ck_assert_uint_eq(dns_name_wire(big, 64, w), 0); /* a 64-byte label */
}
END_TEST

static struct conf_dnsbl zone(const char *z, bool domain, const char *txt)
{
    struct conf_dnsbl b;
    memset(&b, 0, sizeof(b));
    b.zone = (char *)z;
    b.domain = domain;
    b.txt = (char *)txt;
    b.ttl = 300;
    memcpy(b.answer_ip, "\x7f\x00\x00\x02", 4);
    return b;
}

START_TEST(test_classify)
{
    char item[DNSBL_ITEM_MAX + 1];
    size_t il;
#define CL(z, d, name) dnsbl_classify(z, d, name, strlen(name), item, &il)
    ck_assert_int_eq(CL("bl.org", false, "4.3.2.1.bl.org"), DNSBL_ITEM);
    ck_assert_str_eq(item, "1.2.3.4");
    ck_assert_int_eq(CL("bl.org", false, "4.3.2.1.BL.ORG"), DNSBL_ITEM);
    ck_assert_int_eq(CL("bl.org", false, "BL.Org"), DNSBL_APEX);
    ck_assert_int_eq(CL("bl.org", false, "4.3.2.1.xbl.org"), DNSBL_OUTSIDE);
    ck_assert_int_eq(CL("bl.org", false, "org"), DNSBL_OUTSIDE);
    ck_assert_int_eq(CL("bl.org", false, ".bl.org"), DNSBL_OUTSIDE);
    ck_assert_int_eq(CL("bl.org", false, "2.0.0.127.bl.org"), DNSBL_TEST_YES);
    ck_assert_int_eq(CL("bl.org", false, "1.0.0.127.bl.org"), DNSBL_TEST_NO);
    ck_assert_int_eq(CL("bl.org", false, "3.0.0.127.bl.org"), DNSBL_ITEM);
    ck_assert_int_eq(CL("bl.org", false, "3.2.1.bl.org"), DNSBL_BAD_NAME);
    ck_assert_int_eq(CL("bl.org", false, "5.4.3.2.1.bl.org"), DNSBL_BAD_NAME);
    ck_assert_int_eq(CL("bl.org", false, "256.3.2.1.bl.org"), DNSBL_BAD_NAME);
    ck_assert_int_eq(CL("bl.org", false, "04.3.2.1.bl.org"), DNSBL_BAD_NAME);
    ck_assert_int_eq(CL("bl.org", false, "4.3..1.bl.org"), DNSBL_BAD_NAME);
    ck_assert_int_eq(CL("bl.org", false, "a.3.2.1.bl.org"), DNSBL_BAD_NAME);
    ck_assert_int_eq(CL("bl.org", false, "x.bl.org"), DNSBL_BAD_NAME);
    /* IPv6: 32 nibbles, reversed. */
    ck_assert_int_eq(CL("bl.org", false,
                        "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.B.D.0.1.0."
                        "0.2.bl.org"),
                     DNSBL_ITEM);
    ck_assert_str_eq(item, "2001:db8::1");
    ck_assert_int_eq(CL("bl.org", false,
                        "2.0.0.0.0.0.f.7.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
                        "0.0.bl.org"),
                     DNSBL_TEST_YES);
    ck_assert_int_eq(CL("bl.org", false,
                        "1.0.0.0.0.0.f.7.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
                        "0.0.bl.org"),
                     DNSBL_TEST_NO);
    ck_assert_int_eq(CL("bl.org", false,
                        "g.0.0.0.0.0.f.7.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
                        "0.0.bl.org"),
                     DNSBL_BAD_NAME);
    /* Domains. */
    ck_assert_int_eq(CL("dbl.org", true, "Deep.Spam.Test.dbl.org"), DNSBL_ITEM);
    ck_assert_str_eq(item, "deep.spam.test");
    ck_assert_int_eq(CL("dbl.org", true, "TEST.dbl.org"), DNSBL_TEST_YES);
    ck_assert_int_eq(CL("dbl.org", true, "invalid.dbl.org"), DNSBL_TEST_NO);
    ck_assert_int_eq(CL("dbl.org", true, "x.invalid.dbl.org"), DNSBL_ITEM);
#undef CL
}
END_TEST

START_TEST(test_answers)
{
    struct conf_dnsbl b = zone("bl.org", false, "$ listed: see http://x/?$");
    struct dns_answer a;
    dnsbl_answer(&b, "4.3.2.1.bl.org", DNSBL_ITEM, true, "1.2.3.4", 7, DNS_TYPE_A, DNS_CLASS_IN, 1,
                 &a);
    ck_assert_int_eq(a.rcode, DNS_RCODE_NOERROR);
    ck_assert(a.aa);
    ck_assert_uint_eq(a.n, 1);
    ck_assert_uint_eq(a.rr[0].type, DNS_TYPE_A);
    ck_assert(memcmp(a.rr[0].rdata, "\x7f\x00\x00\x02", 4) == 0);
    dnsbl_answer(&b, "4.3.2.1.bl.org", DNSBL_ITEM, true, "1.2.3.4", 7, DNS_TYPE_TXT, DNS_CLASS_IN,
                 1, &a);
    ck_assert_uint_eq(a.n, 1);
    ck_assert_uint_eq(a.rr[0].type, DNS_TYPE_TXT);
    ck_assert_uint_eq(a.rr[0].rdata[0], 37);
    ck_assert(memcmp(a.rr[0].rdata + 1, "1.2.3.4 listed: see http://x/?1.2.3.4", 37) == 0);
    dnsbl_answer(&b, "q", DNSBL_ITEM, true, "1.2.3.4", 7, DNS_TYPE_ANY, DNS_CLASS_ANY, 1, &a);
    ck_assert_uint_eq(a.n, 2);
    /* Not listed: NXDOMAIN with the SOA (its minimum the ttl). */
    dnsbl_answer(&b, "q", DNSBL_ITEM, false, "1.2.3.5", 7, DNS_TYPE_A, DNS_CLASS_IN, 9, &a);
    ck_assert_int_eq(a.rcode, DNS_RCODE_NXDOMAIN);
    ck_assert_uint_eq(a.n, 1);
    ck_assert_uint_eq(a.rr[0].section, DNS_AUTHORITY);
    ck_assert_uint_eq(a.rr[0].type, DNS_TYPE_SOA);
    ck_assert_str_eq(a.rr[0].owner, "bl.org");
    const uint8_t *soa = a.rr[0].rdata;
    ck_assert(memcmp(soa,
                     "\x02"
                     "bl"
                     "\x03"
                     "org"
                     "\x00"
                     "\x0ahostmaster"
                     "\x02"
                     "bl"
                     "\x03"
                     "org"
                     "\x00"
                     "\x00\x00\x00\x09",
                     30) == 0);
    ck_assert(memcmp(soa + a.rr[0].rdlen - 4, "\x00\x00\x01\x2c", 4) == 0);
    dnsbl_answer(&b, "q", DNSBL_TEST_NO, false, "", 0, DNS_TYPE_A, DNS_CLASS_IN, 1, &a);
    ck_assert_int_eq(a.rcode, DNS_RCODE_NXDOMAIN);
    dnsbl_answer(&b, "q", DNSBL_BAD_NAME, false, "", 0, DNS_TYPE_A, DNS_CLASS_IN, 1, &a);
    ck_assert_int_eq(a.rcode, DNS_RCODE_NXDOMAIN);
    dnsbl_answer(&b, "q", DNSBL_TEST_YES, false, "127.0.0.2", 9, DNS_TYPE_A, DNS_CLASS_IN, 1, &a);
    ck_assert_int_eq(a.rcode, DNS_RCODE_NOERROR);
    ck_assert_uint_eq(a.n, 1);
    /* Listed, another type: NODATA. No txt configured: a TXT query is NODATA too. */
    dnsbl_answer(&b, "q", DNSBL_ITEM, true, "1.2.3.4", 7, 15, DNS_CLASS_IN, 1, &a);
    ck_assert_int_eq(a.rcode, DNS_RCODE_NOERROR);
    ck_assert(a.n == 1 && a.rr[0].section == DNS_AUTHORITY);
    struct conf_dnsbl nt = zone("bl.org", false, NULL);
    dnsbl_answer(&nt, "q", DNSBL_ITEM, true, "1.2.3.4", 7, DNS_TYPE_TXT, DNS_CLASS_IN, 1, &a);
    ck_assert(a.n == 1 && a.rr[0].section == DNS_AUTHORITY);
    /* Outside, or another class: REFUSED, not authoritative. */
    dnsbl_answer(&b, "q", DNSBL_OUTSIDE, false, "", 0, DNS_TYPE_A, DNS_CLASS_IN, 1, &a);
    ck_assert(a.rcode == DNS_RCODE_REFUSED && !a.aa && a.n == 0);
    dnsbl_answer(&b, "q", DNSBL_ITEM, true, "1.2.3.4", 7, DNS_TYPE_A, 3, 1, &a);
    ck_assert_int_eq(a.rcode, DNS_RCODE_REFUSED);
    /* The apex. */
    dnsbl_answer(&b, "bl.org", DNSBL_APEX, false, "", 0, DNS_TYPE_SOA, DNS_CLASS_IN, 1, &a);
    ck_assert(a.n == 1 && a.rr[0].type == DNS_TYPE_SOA && a.rr[0].section == DNS_ANSWER);
    dnsbl_answer(&b, "bl.org", DNSBL_APEX, false, "", 0, DNS_TYPE_NS, DNS_CLASS_IN, 1, &a);
    ck_assert(a.n == 1 && a.rr[0].type == DNS_TYPE_NS);
    dnsbl_answer(&b, "bl.org", DNSBL_APEX, false, "", 0, DNS_TYPE_A, DNS_CLASS_IN, 1, &a);
    ck_assert(a.rcode == DNS_RCODE_NOERROR && a.n == 1 && a.rr[0].section == DNS_AUTHORITY);
    /* A TXT with `$` and a long item is cut at 255. */
    struct conf_dnsbl lt = zone("bl.org", true, "$$$$");
    char longitem[200];
    memset(longitem, 'd', sizeof(longitem));
    dnsbl_answer(&lt, "q", DNSBL_ITEM, true, longitem, sizeof(longitem), DNS_TYPE_TXT, DNS_CLASS_IN,
                 1, &a);
    ck_assert_uint_eq(a.rr[0].rdata[0], 255);
    ck_assert_uint_eq(a.rr[0].rdlen, 256);
}
END_TEST

START_TEST(test_build)
{
    uint8_t p[600], out[1024];
    struct dns_query q;
    size_t n = query(p, 0x1234, "4.3.2.1.bl.org", DNS_TYPE_TXT, DNS_CLASS_IN);
    ck_assert_int_eq(dns_parse_query(p, n, &q, why, sizeof(why)), DNS_QUERY);
    struct conf_dnsbl b = zone("bl.org", false, "$ listed");
    struct dns_answer a;
    dnsbl_answer(&b, q.name, DNSBL_ITEM, true, "1.2.3.4", 7, DNS_TYPE_ANY, DNS_CLASS_IN, 1, &a);
    size_t m = dns_build_response(&q, &a, out, sizeof(out), sizeof(out));
    ck_assert_uint_gt(m, n);
    ck_assert(out[0] == 0x12 && out[1] == 0x34);
    ck_assert_uint_eq(out[2], 0x85); /* QR AA RD */
    ck_assert_uint_eq(out[3], 0x00);
    ck_assert_uint_eq(out[7], 2); /* two answers */
    ck_assert(memcmp(out + 12, p + 12, n - 12) == 0);
    /* Too small a limit: TC set, the question kept. */
    size_t t = dns_build_response(&q, &a, out, sizeof(out), n + 5);
    ck_assert_uint_eq(t, n);
    ck_assert(out[2] & 0x02);
    ck_assert_uint_eq(out[7], 0);
    ck_assert_uint_eq(dns_build_response(&q, &a, out, sizeof(out), 11), 0);
    ck_assert_uint_eq(dns_build_error(0xabcd, 0x0100, DNS_RCODE_FORMERR, out), 12);
    ck_assert(out[0] == 0xab && out[2] == 0x81 && out[3] == 0x01);
}
END_TEST

/* Every opcode but QUERY is NOTIMP, and the answer carries the request's
 * opcode (RFC 1035 4.1.1: copied into the response), its id and RD, and no
 * other flag: a client matches answers by opcode too (dig reports "Opcode
 * mismatch" and waits on). */
START_TEST(test_notimp_keeps_opcode)
{
    uint8_t p[600], out[DNS_HEADER];
    struct dns_query q;
    for (unsigned op = 1; op < 16; op++) {
        for (unsigned rd = 0; rd < 2; rd++) {
            size_t n =
                query(p, (uint16_t)(0x4200 + op), "4.3.2.1.bl.org", DNS_TYPE_A, DNS_CLASS_IN);
            p[2] = (uint8_t)(op << 3 | rd);
            ck_assert_int_eq(dns_parse_query(p, n, &q, why, sizeof(why)), DNS_NOTIMP);
            ck_assert_uint_eq(dns_build_error(q.id, q.flags, DNS_RCODE_NOTIMP, out), DNS_HEADER);
            ck_assert(out[0] == 0x42 && out[1] == op);
            ck_assert_uint_eq(out[2], 0x80 | op << 3 | rd); /* QR, the opcode, RD */
            ck_assert_uint_eq(out[3], DNS_RCODE_NOTIMP);
            for (int i = 4; i < DNS_HEADER; i++)
                ck_assert_uint_eq(out[i], 0);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dns");
    TCase *tc = tcase_create("dns");
    tcase_add_test(tc, test_parse_query);
    tcase_add_test(tc, test_parse_hostile);
    tcase_add_test(tc, test_name_wire);
    tcase_add_test(tc, test_classify);
    tcase_add_test(tc, test_answers);
    tcase_add_test(tc, test_build);
    tcase_add_test(tc, test_notimp_keeps_opcode);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
