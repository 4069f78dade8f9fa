/* url/canon_ip: the IP-address steps of canonicalisation, internal to
 * src/url (canon.c). Pure functions, any thread. */
#ifndef BLOOMGATE_URL_CANON_IP_H
#define BLOOMGATE_URL_CANON_IP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "url/canon.h"

/* Parse h[0..n) (no empty parts) as an IPv4 address in any spelling
 * inet_aton accepts: 1 to 4 parts, each decimal, 0-octal or 0x-hex, the last
 * filling the bytes left ("10.1.515" is 10.1.2.3). */
bool url_ipv4_parse(const char *h, size_t n, uint32_t *addr);

/* Dotted decimal of a into out (16 bytes), NUL-terminated; its length. */
size_t url_ipv4_format(uint32_t a, char *out);

/* An IPv6 literal h[0..n) (no brackets) into out (48 bytes) as RFC 5952
 * text, or, for an IPv4-mapped or NAT64 address, as the IPv4 address it
 * carries (*type says which). False if h is not an IPv6 address. */
bool url_ipv6_canon(const char *h, size_t n, char *out, size_t *outlen, enum url_host_type *type);

#endif
