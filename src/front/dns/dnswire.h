/* dnswire: DNS messages (RFC 1035) as bytes, for the DNSBL front (UDP and
 * TCP): a query's header and its one
 * question parsed, with compression pointers followed only backwards and
 * names held to 255 bytes; a response built from a struct dns_answer. Pure
 * (no libevent, no allocation); any thread. */
#ifndef BLOOMGATE_DNSWIRE_H
#define BLOOMGATE_DNSWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER 12
#define DNS_NAME_WIRE_MAX 255 /* a name's wire form, RFC 1035 2.3.4 */
#define DNS_NAME_TEXT_MAX 254 /* its text form with the dots, and a NUL */

#define DNS_TYPE_A 1
#define DNS_TYPE_NS 2
#define DNS_TYPE_SOA 6
#define DNS_TYPE_TXT 16
#define DNS_TYPE_ANY 255
#define DNS_CLASS_IN 1
#define DNS_CLASS_ANY 255

#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP 4
#define DNS_RCODE_REFUSED 5

enum dns_status {
    DNS_QUERY,   /* one question, parsed: answer it */
    DNS_DROP,    /* not even a header, or a response: answer nothing */
    DNS_FORMERR, /* a header, but no one readable question: answer FORMERR */
    DNS_NOTIMP,  /* an opcode other than QUERY: answer NOTIMP */
};

struct dns_query {
    uint16_t id;
    uint16_t flags; /* as received */
    uint16_t qtype, qclass;
    char name[DNS_NAME_TEXT_MAX + 1]; /* labels joined by '.', as sent (case kept); "" the root */
    size_t name_len;
    bool odd_name;           /* a label holds '.', NUL or a space: its text is not the name */
    const uint8_t *question; /* the question's bytes in the packet, echoed in the response */
    size_t question_len;
};

/* Parse pkt[0..len). FORMERR also for QDCOUNT other than 1 (RFC 9619). */
enum dns_status dns_parse_query(const uint8_t *pkt, size_t len, struct dns_query *q, char *why,
                                size_t whylen);

/* One resource record to send. */
struct dns_rr {
    uint8_t section;   /* DNS_ANSWER or DNS_AUTHORITY */
    const char *owner; /* text, no trailing dot */
    uint16_t type;
    uint32_t ttl;
    const uint8_t *rdata; /* wire form, names uncompressed */
    uint16_t rdlen;
};
#define DNS_ANSWER 0
#define DNS_AUTHORITY 1

#define DNS_MAX_RRS 4
#define DNS_RDATA_SPACE 1024

/* What to answer: the rcode, whether authoritative, the records. rdata
 * points into space (filled by whoever builds the answer). */
struct dns_answer {
    int rcode;
    bool aa;
    size_t n;
    struct dns_rr rr[DNS_MAX_RRS];
    uint8_t space[DNS_RDATA_SPACE];
    size_t used;
};

/* A name's text as its wire form into out (at least DNS_NAME_WIRE_MAX
 * bytes); its length, or 0 if it is no name (an empty label, one over 63
 * bytes, over 255 in all). "" is the root. */
size_t dns_name_wire(const char *text, size_t len, uint8_t *out);

/* The response to q (whose header and question are echoed) carrying a:
 * into out (cap bytes), at most limit bytes (512 for UDP without EDNS, the
 * cap for TCP); records that do not fit are left out and TC set. The length
 * written; 0 if not even the header and question fit. */
size_t dns_build_response(const struct dns_query *q, const struct dns_answer *a, uint8_t *out,
                          size_t cap, size_t limit);

/* A response with just the header (FORMERR, NOTIMP for a packet whose
 * question could not be read): 12 bytes into out, id, opcode and RD echoed. */
size_t dns_build_error(uint16_t id, uint16_t flags, int rcode, uint8_t *out);

#endif
