/* DNS messages as bytes, see dnswire.h. Pure; any thread.
 *
 * Hostile input is the rule here: a compression pointer must point strictly
 * before the label it replaces (so a chain of them always ends: no loop, no
 * forward pointer into data the parser has not checked), a name is at most
 * 255 bytes on the wire and 63 per label, and every read is bounds-checked
 * against the packet. */
#include "config.h"

#include "front/dns/dnswire.h"

#include <stdio.h>
#include <string.h>

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

/* The name at pkt[*at], into q->name; *at moves past it (past the first
 * pointer if any). -1 on any breach, the reason in why. */
static int parse_name(const uint8_t *pkt, size_t len, size_t *at, struct dns_query *q, char *why,
                      size_t whylen)
{
    size_t pos = *at, end = 0, wire = 0, out = 0;
    bool jumped = false;
    size_t floor = pos; /* a pointer must point before this */
    q->odd_name = false;
    for (;;) {
        if (pos >= len) {
            snprintf(why, whylen, "name runs past the packet");
            return -1;
        }
        uint8_t l = pkt[pos];
        if ((l & 0xc0) == 0xc0) {
            if (pos + 1 >= len) {
                snprintf(why, whylen, "name runs past the packet");
                return -1;
            }
            size_t target = (size_t)(l & 0x3f) << 8 | pkt[pos + 1];
            if (target >= floor) {
                snprintf(why, whylen, "compression pointer does not point backwards");
                return -1;
            }
            if (!jumped)
                end = pos + 2;
            jumped = true;
            floor = target;
            pos = target;
            continue;
        }
        if (l & 0xc0) {
            snprintf(why, whylen, "unknown label type 0x%02x", l);
            return -1;
        }
        wire += 1u + l;
        if (wire > DNS_NAME_WIRE_MAX) {
            snprintf(why, whylen, "name longer than 255 bytes");
            return -1;
        }
        if (l == 0) {
            pos++;
            break;
        }
        if (pos + 1 + l > len) {
            snprintf(why, whylen, "label runs past the packet");
            return -1;
        }
        if (out)
            q->name[out++] = '.';
        for (size_t i = 0; i < l; i++) {
            char c = (char)pkt[pos + 1 + i];
            if (c == '.' || c == '\0' || c == ' ')
                q->odd_name = true;
            q->name[out++] = c;
        }
        pos += 1u + l;
    }
    q->name[out] = '\0';
    q->name_len = out;
    *at = jumped ? end : pos;
    return 0;
}

enum dns_status dns_parse_query(const uint8_t *pkt, size_t len, struct dns_query *q, char *why,
                                size_t whylen)
{
    memset(q, 0, sizeof(*q));
    if (len < DNS_HEADER) {
        snprintf(why, whylen, "shorter than a header");
        return DNS_DROP;
    }
    q->id = get16(pkt);
    q->flags = get16(pkt + 2);
    if (q->flags & 0x8000) {
        snprintf(why, whylen, "a response, not a query");
        return DNS_DROP;
    }
    if ((q->flags >> 11 & 15) != 0) {
        snprintf(why, whylen, "opcode %u", q->flags >> 11 & 15);
        return DNS_NOTIMP;
    }
    if (get16(pkt + 4) != 1) {
        snprintf(why, whylen, "%u questions (one is allowed)", get16(pkt + 4));
        return DNS_FORMERR;
    }
    size_t at = DNS_HEADER;
    if (parse_name(pkt, len, &at, q, why, whylen) < 0)
        return DNS_FORMERR;
    if (at + 4 > len) {
        snprintf(why, whylen, "question without its type and class");
        return DNS_FORMERR;
    }
    q->qtype = get16(pkt + at);
    q->qclass = get16(pkt + at + 2);
    q->question = pkt + DNS_HEADER;
    q->question_len = at + 4 - DNS_HEADER;
    return DNS_QUERY;
}

size_t dns_name_wire(const char *text, size_t len, uint8_t *out)
{
    size_t o = 0, i = 0;
    while (i < len) {
        const char *dot = memchr(text + i, '.', len - i);
        size_t l = dot ? (size_t)(dot - (text + i)) : len - i;
        if (l == 0 || l > 63 || o + 1 + l + 1 > DNS_NAME_WIRE_MAX)
            return 0;
        out[o++] = (uint8_t)l;
        memcpy(out + o, text + i, l);
        o += l;
        i += l + (dot != NULL);
        if (dot && i == len)
            return 0; /* a trailing dot: an empty last label */
    }
    out[o++] = 0;
    return o;
}

size_t dns_build_error(uint16_t id, uint16_t flags, int rcode, uint8_t *out)
{
    memset(out, 0, DNS_HEADER);
    put16(out, id);
    /* The opcode is copied into the response (RFC 1035 4.1.1): a NOTIMP for
     * an UPDATE is an UPDATE's answer, and clients match on it. */
    put16(out + 2, (uint16_t)(0x8000 | (flags & 0x7900) | (rcode & 15)));
    return DNS_HEADER;
}

size_t dns_build_response(const struct dns_query *q, const struct dns_answer *a, uint8_t *out,
                          size_t cap, size_t limit)
{
    if (limit > cap)
        limit = cap;
    if (DNS_HEADER + q->question_len > limit)
        return 0;
    memset(out, 0, DNS_HEADER);
    put16(out, q->id);
    uint16_t flags =
        (uint16_t)(0x8000 | (q->flags & 0x0110) | (a->aa ? 0x0400 : 0) | (a->rcode & 15));
    put16(out + 4, 1);
    memcpy(out + DNS_HEADER, q->question, q->question_len);
    size_t o = DNS_HEADER + q->question_len;
    uint16_t counts[2] = {0, 0};
    /* Answers first, then authority, whatever order they were added in. */
    for (int sec = DNS_ANSWER; sec <= DNS_AUTHORITY; sec++) {
        for (size_t i = 0; i < a->n; i++) {
            const struct dns_rr *rr = &a->rr[i];
            if (rr->section != sec)
                continue;
            uint8_t owner[DNS_NAME_WIRE_MAX];
            size_t ol = dns_name_wire(rr->owner, strlen(rr->owner), owner);
            if (ol == 0)
                continue;
            if (o + ol + 10 + rr->rdlen > limit) {
                flags |= 0x0200; /* TC: the client retries over TCP */
                goto done;
            }
            memcpy(out + o, owner, ol);
            o += ol;
            put16(out + o, rr->type);
            put16(out + o + 2, DNS_CLASS_IN);
            put32(out + o + 4, rr->ttl);
            put16(out + o + 8, rr->rdlen);
            o += 10;
            memcpy(out + o, rr->rdata, rr->rdlen);
            o += rr->rdlen;
            counts[sec]++;
        }
    }
done:
    put16(out + 2, flags);
    put16(out + 6, counts[DNS_ANSWER]);
    put16(out + 8, counts[DNS_AUTHORITY]);
    return o;
}
