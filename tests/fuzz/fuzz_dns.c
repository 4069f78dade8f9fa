/* fuzz_dns: the DNS wire parser and builder (src/front/dns/dnswire.h) and the
 * DNSBL zone logic (src/front/dns/dnsbl.h) on one message as a client sends
 * it over TCP.
 *
 * Input: u8 options (bit 0: a domain zone; bit 1: listed), then the message.
 * Checked: a parsed name is at most 253 bytes of text, NUL-terminated (a
 * NUL inside only in a name marked odd), its
 * question inside the packet; the classification of the name never writes
 * past the item; the response is built within the limit, echoes the id and
 * the question, and parses back as a response (the QR bit set, so the parser
 * drops it); with a 512-byte limit it is at most 512 bytes. */
#include "config.h"

#include <stdbool.h>

#include "front/dns/dnsbl.h"
#include "front/dns/dnswire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t opt = fuzz_u8(&in);
    char *pkt = fuzz_dup(in.p, in.len);
    const uint8_t *p = (const uint8_t *)pkt;
    struct dns_query q;
    char why[200];
    enum dns_status st = dns_parse_query(p, in.len, &q, why, sizeof(why));
    static uint8_t out[65536];
    if (st == DNS_FORMERR || st == DNS_NOTIMP) {
        FUZZ_CHECK(dns_build_error(q.id, q.flags, 1, out) == 12, "error response size");
    }
    if (st == DNS_QUERY) {
        FUZZ_CHECK(q.name_len <= 253 && q.name[q.name_len] == '\0' &&
                       (q.odd_name || strlen(q.name) == q.name_len),
                   "name of %zu bytes", q.name_len);
        FUZZ_CHECK(fuzz_inside(q.question, q.question_len, p, in.len), "question outside");
        struct conf_dnsbl b;
        memset(&b, 0, sizeof(b));
        b.zone = (char *)"bl.example.org";
        b.domain = opt & 1;
        b.txt = (char *)"$ is listed ($)";
        b.ttl = 60;
        memcpy(b.answer_ip, "\x7f\x00\x00\x02", 4);
        char item[DNSBL_ITEM_MAX + 1];
        size_t il = 0;
        enum dnsbl_where w = dnsbl_classify(b.zone, b.domain, q.name, q.name_len, item, &il);
        FUZZ_CHECK(il <= DNSBL_ITEM_MAX && strlen(item) == il, "item of %zu bytes", il);
        static struct dns_answer a;
        dnsbl_answer(&b, q.name, w, opt & 2, item, il, q.qtype, q.qclass, 1, &a);
        FUZZ_CHECK(a.n <= DNS_MAX_RRS && a.used <= sizeof(a.space), "answer overflow");
        size_t limits[2] = {512, sizeof(out)};
        for (int i = 0; i < 2; i++) {
            size_t n = dns_build_response(&q, &a, out, sizeof(out), limits[i]);
            FUZZ_CHECK(n <= limits[i], "response of %zu bytes over %zu", n, limits[i]);
            if (n == 0)
                continue;
            FUZZ_CHECK(out[0] == p[0] && out[1] == p[1], "id not echoed");
            FUZZ_CHECK(memcmp(out + 12, q.question, q.question_len) == 0, "question not echoed");
            struct dns_query back;
            FUZZ_CHECK(dns_parse_query(out, n, &back, why, sizeof(why)) == DNS_DROP,
                       "a response read as a query");
        }
    }
    free(pkt);
    return 0;
}
