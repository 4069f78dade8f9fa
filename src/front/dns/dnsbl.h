/* dnsbl: a DNS blocklist zone (RFC 5782) as pure functions: which item a
 * query name asks for (reversed IPv4 octets, 32 reversed IPv6 nibbles, or a
 * domain), the RFC's test points, and the answer to give once the filter has
 * said YES or NO (A, TXT with `$` replaced, NXDOMAIN, REFUSED, SOA and NS at
 * the apex). No libevent: dnsbl_conn.c hands the answer to dnswire.c, which
 * writes it as bytes (UDP and TCP alike). Any thread. */
#ifndef BLOOMGATE_DNSBL_H
#define BLOOMGATE_DNSBL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "front/dns/dnswire.h"
#include "conf/conf.h"

#define DNSBL_ITEM_MAX 254 /* an IPv6 address's text, or a domain */

enum dnsbl_where {
    DNSBL_OUTSIDE,  /* not in the zone: REFUSED */
    DNSBL_APEX,     /* the zone itself: SOA, NS */
    DNSBL_ITEM,     /* an item to look up (in item) */
    DNSBL_BAD_NAME, /* in the zone, but no item (five octets, "x.y"): NXDOMAIN */
    DNSBL_TEST_YES, /* 127.0.0.2, ::ffff:7f00:2, TEST: listed, whatever the filter says */
    DNSBL_TEST_NO,  /* 127.0.0.1, ::ffff:7f00:1, INVALID: never listed */
};

/* Where qname[0..len) (text, any case, no trailing dot) falls in zone
 * (lower case); for DNSBL_ITEM the item (a dotted quad, an IPv6 address as
 * inet_ntop writes it, or a domain in lower case) into item, at least
 * DNSBL_ITEM_MAX + 1 bytes, NUL-terminated, its length in *item_len. */
enum dnsbl_where dnsbl_classify(const char *zone, bool domain, const char *qname, size_t len,
                                char *item, size_t *item_len);

/* The answer to a query of qtype and qclass for qname, which falls at
 * `where` in block b's zone; listed is the filter's verdict for an item.
 * serial is the SOA's. Owner names point into qname and b->zone: they must
 * outlive a. */
void dnsbl_answer(const struct conf_dnsbl *b, const char *qname, enum dnsbl_where where,
                  bool listed, const char *item, size_t item_len, uint16_t qtype, uint16_t qclass,
                  uint32_t serial, struct dns_answer *a);

/* The answer when the filter could not be asked (not served): SERVFAIL. */
void dnsbl_answer_servfail(struct dns_answer *a);

#endif
