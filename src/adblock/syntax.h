/* adblock/syntax: a parsed network rule (struct adblock_rule) and the byte
 * classes of the Adblock syntax, shared by the line parser (rule.c,
 * options.c), the compiler (engine.c, tokens.c) and the matcher. Types and
 * inline functions only; any thread. */
#ifndef BLOOMGATE_ADBLOCK_SYNTAX_H
#define BLOOMGATE_ADBLOCK_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adblock/adblock.h"

/* The longest line read as a rule; a longer one is rejected (offsets in the
 * compiled form are 16-bit within a rule; uBlock's longest domain lists are
 * over 4 KiB). */
#define ADBLOCK_LINE_MAX 65535

/* Anchors of a pattern. */
#define ADBLOCK_ANCHOR_START 1u /* `|` at the start: the URL's first byte */
#define ADBLOCK_ANCHOR_HOST 2u  /* `||`: a label boundary of the host */
#define ADBLOCK_ANCHOR_END 4u   /* `|` at the end: the URL's last byte */

/* Party bits: which requests a rule may apply to. */
#define ADBLOCK_PARTY_FIRST 1u
#define ADBLOCK_PARTY_THIRD 2u
#define ADBLOCK_PARTY_STRICT 4u /* strict1p/strict3p: by host name, not by site */

/* Which domain list an option value feeds. */
enum adblock_dom_kind {
    ADBLOCK_DOM_FROM,      /* domain=, from=: the initiator page's host */
    ADBLOCK_DOM_TO,        /* to=: the request's host */
    ADBLOCK_DOM_DENYALLOW, /* denyallow=: request hosts the rule does not apply to */
};

#define ADBLOCK_RULE_DOMS 8 /* domain-list options in one rule */

struct adblock_rule {
    enum adblock_class cls;
    enum adblock_reject reason; /* for ADBLOCK_CLASS_REJECTED: the reason's kind */
    char why[160];              /* for ADBLOCK_CLASS_REJECTED: the reason, with the option */
    const char *line;
    size_t len;              /* the line, trimmed: the text a verdict names */
    bool exception;          /* @@ */
    bool important;          /* $important */
    bool badfilter;          /* $badfilter */
    bool match_case;         /* $match-case */
    bool regex;              /* /regex/: pattern is the regex without its slashes */
    bool page;               /* an exception with $document: un-blocks what a page loads */
    unsigned anchor;         /* ADBLOCK_ANCHOR_* */
    size_t pat_off;          /* the pattern in line: after `@@`, `||`, `|`... */
    size_t pat_end;          /* ...up to the end `|` or the `$` of the options */
    size_t host_len;         /* ADBLOCK_ANCHOR_HOST: bytes of pattern that are host name */
    size_t opt_off;          /* the options after `$` (opt_off == len: none) */
    size_t bad_off, bad_len; /* $badfilter: the option's bytes (with a comma) to drop */
    size_t redirect_off, redirect_len; /* $redirect=: the value (0, 0: none) */
    uint16_t types;                    /* mask of enum adblock_type the rule applies to */
    unsigned party;                    /* ADBLOCK_PARTY_* */
    uint16_t methods;                  /* mask of enum adblock_method; 0: any */
    unsigned ndom;
    struct {
        enum adblock_dom_kind kind;
        size_t off, len; /* the option's value: `a.com|~b.com|c.*` */
    } dom[ADBLOCK_RULE_DOMS];
};

/* Bytes that may make up the host name part of a `||` pattern. */
static inline bool adblock_is_host_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '-' || ch == '_';
}

/* Bytes of a token: a URL and a pattern are cut into runs of these. `%` cuts
 * too, so that `%2Fevent.gif%3F` has the whole tokens `2fevent` and `gif`. */
static inline bool adblock_is_token_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch >= 0x80 ||
           (ch >= 'A' && ch <= 'Z');
}

/* What `^` matches: anything but a letter, digit or one of `_-.%`. */
static inline bool adblock_is_separator(unsigned char ch)
{
    return !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '-' || ch == '.' || ch == '%' || ch >= 0x80);
}

#endif
