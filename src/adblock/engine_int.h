/* adblock/engine_int: the compiled engine's layout, shared by the builder
 * (engine.c), the matcher (match.c) and the request context (request.c).
 * Flat arrays addressed by 32-bit indexes and one string pool addressed by
 * offsets, so the whole can be written to a file and mapped back as it is.
 * Immutable once built: any thread may read it. */
#ifndef BLOOMGATE_ADBLOCK_ENGINE_INT_H
#define BLOOMGATE_ADBLOCK_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <libpsl.h>
#include <pcre2.h>

#include "adblock/adblock.h"

/* rule flags */
#define AB_F_EXCEPTION 0x0001u
#define AB_F_IMPORTANT 0x0002u
#define AB_F_MATCH_CASE 0x0004u
#define AB_F_REGEX 0x0008u
#define AB_F_START 0x0010u  /* `|pattern` */
#define AB_F_HOST 0x0020u   /* `||pattern` */
#define AB_F_END 0x0040u    /* `pattern|` */
#define AB_F_1P 0x0080u     /* may apply to a first-party request */
#define AB_F_3P 0x0100u     /* may apply to a third-party request */
#define AB_F_STRICT 0x0200u /* parties by host name */
#define AB_F_PAGE 0x0400u   /* @@...$document: un-blocks a page's loads */
#define AB_F_NOSTAR 0x0800u /* no `*` in the pattern: one segment */

/* One rule: 20 bytes. Its text (as written, NUL-terminated) is at pool+text;
 * the pattern is text[pat_off..pat_end); for AB_F_HOST its first host_len
 * bytes are the host name part. */
struct ab_rule {
    uint32_t text;
    uint32_t aux; /* 1 + index in extras[], or 0 */
    uint16_t pat_end;
    uint16_t types; /* mask of enum adblock_type */
    uint16_t flags;
    uint8_t pat_off;
    uint8_t host_len;
    /* A plain pattern (no `||`, no regex) filed under one of its tokens: where
     * that token starts in the pattern, so that a candidate is tested only where
     * the URL has the token, not searched for (AB_NO_TOK: filed otherwise). */
    uint16_t tok_off;
    /* Two more of its tokens (AB_FP_BIT of each; the one it is filed under, or
     * bit 0, when it has fewer): a URL without both cannot match, and one look
     * at the request's token bits (ab_req.tbits) says so before the pattern is
     * read. */
    uint8_t fp[2];
};
#define AB_FP_BIT(h) ((h) >> 24)
#define AB_NO_TOK 0xffffu

/* What few rules carry beyond the common 16 bytes. */
struct ab_extra {
    uint32_t dom;     /* first entry in doms[] */
    uint16_t ndom;    /* entries */
    uint16_t methods; /* mask of enum adblock_method; 0: any */
    uint32_t regex;   /* 1 + index in regexes[], or 0 */
};

/* One entry of a rule's domain=, to= or denyallow= list. */
#define AB_D_NEG 1u
#define AB_D_ENTITY 2u
#define AB_D_KIND_SHIFT 2 /* enum adblock_dom_kind in the bits above */
struct ab_dom {
    uint32_t str; /* pool offset of the name (no `~`, no `.*`) */
    uint8_t len;
    uint8_t flags;
};

/* An exact hash index: token (or domain) hash -> the rules filed under it.
 * Open addressing with linear probing; key 0 is an empty slot. A value with
 * the top bit set is one rule id; otherwise it indexes ids[]: a count then
 * that many rule ids. A hash collision only adds candidates, each tested in
 * full, so the index never changes a verdict. */
#define AB_ONE 0x80000000u
struct ab_slot {
    uint32_t key, val; /* side by side: a probe that hits reads one cache line */
};
struct ab_table {
    uint32_t cap; /* slots; 0: empty table */
    struct ab_slot *slots;
    /* One bit per (key hash mod bits), set for every key: most of a URL's
     * tokens are in no table, and this small array (about 16 bits a key, in
     * cache) turns them away before the slots are touched. Never a false no. */
    uint64_t *bits;
    uint32_t bits_mask; /* bits - 1 (a power of two) */
    /* Bit AB_FP_BIT(key) of every key (ab_engine_ready; not in the file): a
     * request none of whose tokens has one of these bits (ab_req.tbits, and
     * its type's) finds nothing here, which a small table says at once. */
    uint64_t fp[4];
};

/* The rules of one kind: filed by token, filed by initiator domain (rules
 * without a usable token but with a domain= list), and the rest (tested on
 * every request). */
struct ab_index {
    struct ab_table tok, dom, to; /* to: by the request host's `to=` entries */
    uint32_t *ids;
    uint32_t nids;
    uint32_t *always;
    uint32_t nalways;
    uint32_t entities; /* domain keys that are entities (`name.*`): 0 skips their lookup */
    /* Beside ids[] and always[], entry for entry (ab_engine_ready; not in the
     * file; NULL if memory ran out): each rule's types mask and fingerprint
     * bits (AB_CAND), so that a candidate is turned away before its rule is
     * read, most of them, without a cache miss on rules[]. */
    uint32_t *idsx, *alwaysx;
};
/* A candidate's types (low 16 bits) and its fingerprint bits (ab_rule.fp). */
#define AB_CAND(r) ((uint32_t)(r)->types | (uint32_t)(r)->fp[0] << 16 | (uint32_t)(r)->fp[1] << 24)
#define AB_CAND_ANY 0xffffu /* every type, fingerprint bit 0 (always set) */

enum ab_kind { AB_IMPORTANT, AB_BLOCK, AB_EXCEPT, AB_PAGE, AB_KINDS };

/* The table of plain host rules: open addressing with linear probing, one
 * slot a rule (a host filed twice takes two slots, found in the order they
 * were filed), in two arrays: a byte tag of the host's hash (0: an empty
 * slot) and the rule's value (its text's pool offset, AB_H_3P). A probe
 * reads the tags, one cache line for a whole run of slots, and a value and
 * the text only where the tag is the host's: five bytes a slot, where a
 * slot of key and value (eight) and a bitmap in front of it took twelve and
 * a half. The host's bytes are compared on every tag that matches, so the
 * tag only saves reads, never decides. */
struct ab_htable {
    uint32_t cap;  /* slots; 0: empty table */
    uint8_t *tags; /* cap + AB_HTAIL: the first AB_HTAIL again at the end, so
                      that eight tags are read at once from any slot */
    uint32_t *vals;
};
#define AB_HTAIL 8
static inline uint8_t ab_host_tag(uint32_t h)
{
    return (uint8_t)(1 + h % 255);
}
static inline uint32_t ab_host_slot(uint32_t h, uint32_t cap)
{
    return (uint32_t)(((uint64_t)(h * 2654435761u) * cap) >> 32);
}

struct adblock_engine {
    struct ab_rule *rules;
    uint32_t nrules;
    struct ab_extra *extras;
    uint32_t nextras;
    struct ab_dom *doms;
    uint32_t ndoms;
    char *pool;
    uint32_t pool_len;
    struct ab_index idx[AB_KINDS];
    /* Plain host rules, `||host^` and `||host^$third-party` (nine in ten rules
     * of EasyList + EasyPrivacy), need no 16-byte rule: filed by the hash of
     * host (struct ab_htable), each value is its text's pool offset (AB_H_3P:
     * third-party only).
     * Such a rule matches exactly when host is a label suffix of the
     * request's host, so a request looks up each of its suffixes. */
    struct ab_htable hosts;
    uint32_t nhosts;
    pcre2_code **regexes;
    uint32_t nregexes;
    const psl_ctx_t *psl;
    bool psl_owned;
    struct adblock_summary sum;
    void *blob;  /* loaded (serial.c): every array points into this one block */
    uint64_t id; /* unique in the process (never 0): what a context's memos are keyed by */
};

/* The request as the matcher reads it (request.c fills it). */
#define AB_URL_MAX 8192
/* a URL of n bytes has at most n/2 + 1 tokens; one more for its type */
#define AB_TOKENS_MAX (AB_URL_MAX / 2 + 2)
#define AB_HOST_MAX 256
#define AB_NO_POS 0xffffu
#define AB_FROM_MEMO 16
#define AB_SCAN_PAD 16 /* the lower-casing pass writes whole 16-byte blocks */
#define AB_MASK_WORDS (AB_URL_MAX / 64 + 2)
struct ab_req {
    char url[AB_URL_MAX + AB_SCAN_PAD]; /* lower-cased */
    const char *orig;                   /* as given */
    /* for $match-case, made on first use: the URL as a browser hands it on (WHATWG),
     * its scheme and host lower-cased, the rest as given */
    char cased[AB_URL_MAX + 1];
    bool cased_ready;
    size_t len;
    size_t host_off, host_len;
    /* The URL's tokens, each once, in the order they first occur (the type's
     * pseudo-token last): the hash, and the first of its places in occ[];
     * occ[j] is a place (its start in url) and the next place of the same
     * token (AB_NO_POS: none). The type's pseudo-token has no place. */
    uint32_t tok[AB_TOKENS_MAX];
    uint16_t first[AB_TOKENS_MAX];
    struct {
        uint16_t pos, next;
    } occ[AB_TOKENS_MAX];
    unsigned ntok;
    uint64_t tbits[4]; /* bit AB_FP_BIT(h) of each token's hash h, and bit 0 */
    /* scratch of the pass that cuts the URL (here, not on a worker's stack):
     * which of its tokens repeat */
    uint16_t last[AB_TOKENS_MAX];
    uint16_t seen[4 * AB_TOKENS_MAX];
    /* the lower-casing pass's bitmaps, a bit a byte of the URL: token bytes
     * (adblock_is_token_char), and the bytes that bound a host (`/?#@:`) */
    uint64_t tokm[AB_MASK_WORDS], spm[AB_MASK_WORDS];
    int type;
    int method;
    bool supported; /* http(s), ws(s), data */
    bool has_from;
    char from_host[AB_HOST_MAX + 1];
    size_t from_host_len;
    /* the page of the request before, as given (prev_from_len SIZE_MAX: not
     * kept): a batch's items from one page reuse its host as it is */
    size_t prev_from_len;
    char prev_from[256];
    /* the hosts of the pages seen lately (a page's requests come together):
     * the page as given, its host as from_host holds it (host_len 0: none) */
    struct ab_from_memo {
        uint32_t hash;
        uint16_t len, host_len;
        char from[120];
        char host[64];
    } from_memo[AB_FROM_MEMO];
    /* the backward hashes of the host's label suffixes (ab_suffix_hashes), made
     * on first use (the host table, the `to=` index): nhs -1 until then */
    int nhs;
    uint32_t hs[AB_HOST_MAX], hs_at[AB_HOST_MAX];
    /* the same of the initiator's host (the domain index), kept while the
     * page's host stays the same from one request to the next: fs_host is the
     * host they are of (fs_len -1: none yet) */
    int nfs, fs_len;
    uint32_t fs[AB_HOST_MAX], fs_at[AB_HOST_MAX];
    char fs_host[AB_HOST_MAX + 1];
    /* computed on first use (a rule that asks) */
    int party;                      /* -1: not yet; else AB_F_1P or AB_F_3P */
    int strict_party;               /* -1: not yet */
    int from_ent_len, host_ent_len; /* host without public suffix; -2 not yet, -1 none */
};

#define AB_H_3P 0x40000000u
#define AB_H_OFF 0x3fffffffu

#define AB_PAGE_MEMO 64
struct ab_page_memo {
    uint64_t engine; /* adblock_engine.id: the answer is that engine's */
    uint32_t hash, len;
    uint32_t rule; /* the page exception's index in rules[], UINT32_MAX none */
    char from[248];
};

struct adblock_ctx {
    struct ab_req req, page; /* the request; its initiator page as a document */
    struct ab_page_memo pages[AB_PAGE_MEMO];
    struct ab_page_memo *last_page; /* the entry the last lookup used, or NULL */
    struct ab_rule host_hit;        /* a plain host rule that matched, as a rule */
    pcre2_match_data *md;
};

/* The last step of a build or a load (engine.c): the Public Suffix List
 * (Debian's, psl_latest; libpsl's built-in one if that cannot be read) and a
 * fresh engine id. */
void ab_engine_ready(struct adblock_engine *e);

/* request.c */
bool ab_req_init(struct ab_req *q, const char *url, size_t len, int type, const char *from,
                 size_t from_len, int method);
/* The label suffixes' hashes of the request's host, made once (q->hs). */
unsigned ab_req_host_hashes(struct ab_req *q);
/* The same of the initiator's host (q->fs), made once for a run of requests
 * from one page host. */
unsigned ab_req_from_hashes(struct ab_req *q);
int ab_req_party(const struct adblock_engine *e, struct ab_req *q, bool strict);
/* The URL for $match-case rules: scheme and host lower case, the rest as given. */
const char *ab_req_cased(struct ab_req *q);
/* The length of host[0..n) without its public suffix (and its dot): the part
 * an entity `name.*` is matched against; -1 when there is none. */
int ab_host_entity_len(const struct adblock_engine *e, const char *host, size_t n);

/* 32-bit FNV-1a over lower-cased bytes: the token and domain hash (never 0). */
static inline uint32_t ab_hash_step(uint32_t h, unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        c = (unsigned char)(c + 32);
    return (h ^ c) * 16777619u;
}
#define AB_HASH_SEED 2166136261u
static inline uint32_t ab_hash_fix(uint32_t h)
{
    return h ? h : 1;
}
uint32_t ab_hash(const char *s, size_t n);

/* The same hash taken from the last byte to the first: every label suffix of
 * a host is a prefix of this order, so one pass gives all their hashes (the
 * host table and the domain index are keyed by it). */
uint32_t ab_hash_back(const char *s, size_t n);

/* The backward hashes of the label suffixes of host[0..n), a lower-case
 * name: out[i] for the suffix at at[i]; returns how many (at most max). */
unsigned ab_suffix_hashes(const char *host, size_t n, uint32_t *out, uint32_t *at, unsigned max);

/* A quick hash of s[0..n) as it is, eight bytes a step: the key of the
 * per-thread memos (pages, libpsl's answers), which compare the bytes anyway. */
static inline uint32_t ab_memo_hash(const char *s, size_t n)
{
    uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ull, w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)(unsigned char)s[i] << (8 * i);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    return (uint32_t)(h ^ h >> 29);
}

/* The pseudo-token of a request type: rules with no token of their own but a
 * few types are filed under it, and every request carries its type's. */
static inline uint32_t ab_type_token(unsigned type)
{
    return ab_hash_fix((type + 1) * 0x9e3779b9u ^ 0x7f4a7c15u);
}

/* tokens.c: a rule's tokens into out (at most AB_TOKENS_RULE_MAX), and the
 * tokens nearly every URL carries (NULL-terminated). */
#define AB_TOKENS_RULE_MAX 64
unsigned ab_pattern_tokens(const char *p, size_t n, unsigned flags, size_t host_len, uint32_t *out,
                           uint16_t *off);
unsigned ab_regex_tokens(const char *p, size_t n, uint32_t *out);
extern const char *const ab_common_tokens[];

#endif
