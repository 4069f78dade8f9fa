/* A DNSBL zone (RFC 5782), see dnsbl.h. Pure; any thread.
 *
 * Names are compared without regard to ASCII case (RFC 4343), and a name
 * whose text is not its name (a label holding a dot) never reaches here as
 * an item: the callers refuse it. An IPv4 label is 0 to 255 with no leading
 * zero ("01" is not an octet anyone sends), a nibble one hex digit. */
#include "config.h"

#include "front/dns/dnsbl.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

#define SOA_REFRESH 3600
#define SOA_RETRY 600
#define SOA_EXPIRE 86400

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool eq_nocase(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return true;
}

/* Split name[0..len) into at most max labels (pointers and lengths), last
 * label first as DNSBL names read. The count, or -1 if more. */
static int labels(const char *name, size_t len, const char **lab, size_t *ll, int max)
{
    int n = 0;
    size_t end = len;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && name[start - 1] != '.')
            start--;
        if (n == max)
            return -1;
        lab[n] = name + start;
        ll[n] = end - start;
        n++;
        end = start ? start - 1 : 0;
        if (start == 0)
            break;
    }
    return n;
}

/* Four labels, reversed octets: 4.3.2.1 is 1.2.3.4. */
static bool parse_v4(const char **lab, const size_t *ll, unsigned char ip[4])
{
    for (int i = 0; i < 4; i++) {
        /* labels() gave them last first: lab[0] is the first octet */
        if (ll[i] == 0 || ll[i] > 3 || (ll[i] > 1 && lab[i][0] == '0'))
            return false;
        unsigned v = 0;
        for (size_t j = 0; j < ll[i]; j++) {
            if (lab[i][j] < '0' || lab[i][j] > '9')
                return false;
            v = v * 10 + (unsigned)(lab[i][j] - '0');
        }
        if (v > 255)
            return false;
        ip[i] = (unsigned char)v;
    }
    return true;
}


/* 32 labels, one reversed nibble each. */
static bool parse_v6(const char **lab, const size_t *ll, unsigned char ip[16])
{
    for (int i = 0; i < 32; i++) {
        int v = ll[i] == 1 ? util_hexval(lab[i][0]) : -1;
        if (v < 0)
            return false;
        if (i % 2 == 0)
            ip[i / 2] = (unsigned char)(v << 4);
        else
            ip[i / 2] |= (unsigned char)v;
    }
    return true;
}

static enum dnsbl_where classify_ip(const char *name, size_t len, char *item, size_t *item_len)
{
    const char *lab[33];
    size_t ll[33];
    int n = labels(name, len, lab, ll, 33);
    unsigned char ip[16];
    enum dnsbl_where w = DNSBL_ITEM;
    if (n == 4 && parse_v4(lab, ll, ip)) {
        inet_ntop(AF_INET, ip, item, DNSBL_ITEM_MAX + 1);
        if (ip[0] == 127 && ip[1] == 0 && ip[2] == 0 && (ip[3] == 1 || ip[3] == 2))
            w = ip[3] == 2 ? DNSBL_TEST_YES : DNSBL_TEST_NO;
    } else if (n == 32 && parse_v6(lab, ll, ip)) {
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        inet_ntop(AF_INET6, ip, item, DNSBL_ITEM_MAX + 1);
        if (memcmp(ip, mapped, 12) == 0 && ip[12] == 0x7f && ip[13] == 0 && ip[14] == 0 &&
            (ip[15] == 1 || ip[15] == 2))
            w = ip[15] == 2 ? DNSBL_TEST_YES : DNSBL_TEST_NO;
    } else {
        return DNSBL_BAD_NAME;
    }
    *item_len = strlen(item);
    return w;
}

enum dnsbl_where dnsbl_classify(const char *zone, bool domain, const char *qname, size_t len,
                                char *item, size_t *item_len)
{
    size_t zl = strlen(zone);
    item[0] = '\0';
    *item_len = 0;
    if (len == zl && eq_nocase(qname, zone, zl))
        return DNSBL_APEX;
    if (len <= zl + 1 || qname[len - zl - 1] != '.' || !eq_nocase(qname + len - zl, zone, zl))
        return DNSBL_OUTSIDE;
    size_t il = len - zl - 1;
    if (!domain)
        return classify_ip(qname, il, item, item_len);
    if (il > DNSBL_ITEM_MAX)
        return DNSBL_BAD_NAME;
    if (memchr(qname, '\0', il))
        return DNSBL_BAD_NAME; /* no domain holds one; the item must be text */
    for (size_t i = 0; i < il; i++)
        item[i] = lower(qname[i]);
    item[il] = '\0';
    *item_len = il;
    if (il == 4 && memcmp(item, "test", 4) == 0)
        return DNSBL_TEST_YES;
    if (il == 7 && memcmp(item, "invalid", 7) == 0)
        return DNSBL_TEST_NO;
    return DNSBL_ITEM;
}

/* Room for n bytes of rdata in a; NULL if none (then the record is left out). */
static uint8_t *room(struct dns_answer *a, size_t n)
{
    if (a->used + n > sizeof(a->space))
        return NULL;
    uint8_t *p = a->space + a->used;
    a->used += n;
    return p;
}

static void add(struct dns_answer *a, uint8_t section, const char *owner, uint16_t type,
                uint32_t ttl, const uint8_t *rdata, size_t rdlen)
{
    if (a->n == DNS_MAX_RRS || rdata == NULL)
        return;
    a->rr[a->n++] = (struct dns_rr){section, owner, type, ttl, rdata, (uint16_t)rdlen};
}

static void add_soa(struct dns_answer *a, const struct conf_dnsbl *b, uint8_t section,
                    uint32_t serial)
{
    uint8_t m[DNS_NAME_WIRE_MAX], r[DNS_NAME_WIRE_MAX + 16];
    char rname[DNS_NAME_TEXT_MAX + 16];
    size_t ml = dns_name_wire(b->zone, strlen(b->zone), m);
    int rn = snprintf(rname, sizeof(rname), "hostmaster.%s", b->zone);
    size_t rl = rn > 0 && (size_t)rn < sizeof(rname) ? dns_name_wire(rname, (size_t)rn, r) : 0;
    if (ml == 0 || rl == 0)
        return;
    uint8_t *p = room(a, ml + rl + 20);
    if (!p)
        return;
    memcpy(p, m, ml);
    memcpy(p + ml, r, rl);
    uint32_t v[5] = {serial, SOA_REFRESH, SOA_RETRY, SOA_EXPIRE, b->ttl};
    for (int i = 0; i < 5; i++) {
        uint8_t *q = p + ml + rl + 4 * i;
        q[0] = (uint8_t)(v[i] >> 24);
        q[1] = (uint8_t)(v[i] >> 16);
        q[2] = (uint8_t)(v[i] >> 8);
        q[3] = (uint8_t)v[i];
    }
    add(a, section, b->zone, DNS_TYPE_SOA, b->ttl, p, ml + rl + 20);
}

static void add_ns(struct dns_answer *a, const struct conf_dnsbl *b)
{
    uint8_t w[DNS_NAME_WIRE_MAX];
    size_t wl = dns_name_wire(b->zone, strlen(b->zone), w);
    uint8_t *p = wl ? room(a, wl) : NULL;
    if (p)
        memcpy(p, w, wl);
    add(a, DNS_ANSWER, b->zone, DNS_TYPE_NS, b->ttl, p, wl);
}

/* The TXT record: one character-string, every `$` the item, cut at 255. */
static void add_txt(struct dns_answer *a, const struct conf_dnsbl *b, const char *qname,
                    const char *item, size_t item_len)
{
    uint8_t *p = room(a, 256);
    if (!p)
        return;
    size_t n = 0;
    for (const char *s = b->txt; *s && n < 255; s++) {
        if (*s != '$') {
            p[1 + n++] = (uint8_t)*s;
            continue;
        }
        size_t k = item_len < 255 - n ? item_len : 255 - n;
        memcpy(p + 1 + n, item, k);
        n += k;
    }
    p[0] = (uint8_t)n;
    add(a, DNS_ANSWER, qname, DNS_TYPE_TXT, b->ttl, p, n + 1);
}

void dnsbl_answer(const struct conf_dnsbl *b, const char *qname, enum dnsbl_where where,
                  bool listed, const char *item, size_t item_len, uint16_t qtype, uint16_t qclass,
                  uint32_t serial, struct dns_answer *a)
{
    a->n = 0;
    a->used = 0;
    a->aa = true;
    a->rcode = DNS_RCODE_NOERROR;
    if (where == DNSBL_OUTSIDE || (qclass != DNS_CLASS_IN && qclass != DNS_CLASS_ANY)) {
        a->aa = false;
        a->rcode = DNS_RCODE_REFUSED;
        return;
    }
    bool any = qtype == DNS_TYPE_ANY;
    if (where == DNSBL_APEX) {
        if (qtype == DNS_TYPE_SOA || any)
            add_soa(a, b, DNS_ANSWER, serial);
        if (qtype == DNS_TYPE_NS || any)
            add_ns(a, b);
        if (a->n == 0) /* NODATA: the SOA says how long to cache that */
            add_soa(a, b, DNS_AUTHORITY, serial);
        return;
    }
    bool yes = where == DNSBL_TEST_YES || (where == DNSBL_ITEM && listed);
    if (!yes) {
        a->rcode = DNS_RCODE_NXDOMAIN;
        add_soa(a, b, DNS_AUTHORITY, serial);
        return;
    }
    if (qtype == DNS_TYPE_A || any) {
        uint8_t *p = room(a, 4);
        if (p)
            memcpy(p, b->answer_ip, 4);
        add(a, DNS_ANSWER, qname, DNS_TYPE_A, b->ttl, p, 4);
    }
    if ((qtype == DNS_TYPE_TXT || any) && b->txt)
        add_txt(a, b, qname, item, item_len);
    if (a->n == 0)
        add_soa(a, b, DNS_AUTHORITY, serial);
}

void dnsbl_answer_servfail(struct dns_answer *a)
{
    a->n = 0;
    a->used = 0;
    a->aa = false;
    a->rcode = DNS_RCODE_SERVFAIL;
}
