/* adblock: an Adblock network-filter engine. Lists (EasyList, EasyPrivacy,
 * uBlock's own) are compiled into one exact, read-only structure of flat arrays
 * and a string pool; a request (URL, type, initiator page, method) is matched
 * against it and the deciding rule is named as written in its list.
 * Building runs on one thread; a built engine is immutable and any number of
 * threads may match against it at once, each with its own struct adblock_ctx. */
#ifndef BLOOMGATE_ADBLOCK_H
#define BLOOMGATE_ADBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Request types, as Adblock options name them. A bit each in a rule's mask. */
enum adblock_type {
    ADBLOCK_TYPE_DOCUMENT,
    ADBLOCK_TYPE_SUBDOCUMENT,
    ADBLOCK_TYPE_SCRIPT,
    ADBLOCK_TYPE_IMAGE,
    ADBLOCK_TYPE_STYLESHEET,
    ADBLOCK_TYPE_OBJECT,
    ADBLOCK_TYPE_XHR,
    ADBLOCK_TYPE_MEDIA,
    ADBLOCK_TYPE_FONT,
    ADBLOCK_TYPE_PING,
    ADBLOCK_TYPE_WEBSOCKET,
    ADBLOCK_TYPE_OTHER,
    ADBLOCK_TYPE_COUNT
};
#define ADBLOCK_TYPES_ALL ((1u << ADBLOCK_TYPE_COUNT) - 1)

/* Parse a request type as a caller names it (Adblock option names, browser
 * webRequest names such as main_frame or sub_frame, and `fetch`, which is an
 * xmlhttprequest). Returns -1 for an unknown name. */
int adblock_type_parse(const char *s, size_t n);
const char *adblock_type_name(enum adblock_type t);

/* HTTP methods for $method=. */
enum adblock_method {
    ADBLOCK_METHOD_GET,
    ADBLOCK_METHOD_POST,
    ADBLOCK_METHOD_PUT,
    ADBLOCK_METHOD_DELETE,
    ADBLOCK_METHOD_HEAD,
    ADBLOCK_METHOD_OPTIONS,
    ADBLOCK_METHOD_PATCH,
    ADBLOCK_METHOD_CONNECT,
    ADBLOCK_METHOD_COUNT
};
int adblock_method_parse(const char *s, size_t n);

/* Whether item is a URL without a scheme (a bare host `tracker.example`,
 * `host/path`, a CONNECT's `host:443`), which a server reads as `https://`
 * and the item: a top-level request to it, so that `||host^` rules answer
 * for a host as they would for its page. The matcher itself passes a URL it
 * cannot read as http(s), ws(s) or data. Pure. */
bool adblock_needs_scheme(const char *item, size_t len);

/* A browser's Sec-Fetch-Dest value (or an Adblock type name) as a request
 * type: workers and worklets are scripts, `empty` (fetch, XHR) is
 * xmlhttprequest, `report` and `manifest` are other. -1 if unknown. */
int adblock_fetch_dest_parse(const char *s, size_t n);

/* One word after a URL: `type=T` (adblock_fetch_dest_parse), `from=URL`
 * (the page; not copied: *from points into w) or `method=M`; the value `-`
 * unsets the field. 1 with the field set, 0 if w is not a context word, -1
 * with err if its value is bad. Pure; for the line protocol's parser and
 * the tool. */
int adblock_context_word(const char *w, size_t n, int *type, int *method, const char **from,
                         size_t *from_len, char *err, size_t errlen);

/* What one list line is. Only ADBLOCK_NETWORK lines can decide a verdict; the
 * others are counted by class in the build summary (docs/url-matching.md says
 * why a gateway cannot act on each). */
#define ADBLOCK_CLASSES(X)                                                                         \
    X(NETWORK, "network")             /* a block or exception rule, served */                      \
    X(COMMENT, "comment")             /* `!` comments, `[Adblock Plus 2.0]`, blank lines */        \
    X(COSMETIC, "cosmetic")           /* ##, #@#, #?#, #$#, ##+js(), #%#, $$ ... */                \
    X(HOSTS, "hosts")                 /* `0.0.0.0 host` hosts-file lines */                        \
    X(REDIRECT_RULE, "redirect-rule") /* $redirect-rule: redirects only what others block */       \
    X(CSP, "csp")                     /* $csp, $inline-script, $inline-font */                     \
    X(REMOVEPARAM, "removeparam")     /* $removeparam, $queryprune */                              \
    X(HEADER, "header")               /* $header */                                                \
    X(REPLACE, "replace")             /* $replace, $content */                                     \
    X(PERMISSIONS, "permissions")     /* $permissions */                                           \
    X(POPUP, "popup")                 /* $popup, $popunder only */                                 \
    X(TRANSFORM, "transform")         /* $urltransform, $uritransform, $urlskip */                 \
    X(PAGE_HIDING, "page-hiding")     /* $elemhide/$generichide/$specifichide/... */               \
    X(CNAME, "cname")                 /* @@...$cname: DNS CNAME uncloaking, in the browser */      \
    X(IPADDRESS, "ipaddress")         /* $ipaddress=: the address the host resolved to */          \
    X(REJECTED, "rejected")           /* not understood: an unknown option, a bad regex ... */

enum adblock_class {
#define ADBLOCK_X(name, text) ADBLOCK_CLASS_##name,
    ADBLOCK_CLASSES(ADBLOCK_X)
#undef ADBLOCK_X
        ADBLOCK_CLASS_COUNT
};
const char *adblock_class_name(enum adblock_class c);

/* Why a line is ADBLOCK_CLASS_REJECTED, named for a rejects file
 * (docs/url-matching.md, "Lines not served"). */
#define ADBLOCK_REJECTS(X)                                                                         \
    X(LINE_TOO_LONG, "line-too-long")       /* over ADBLOCK_LINE_MAX bytes */                      \
    X(WHITE_SPACE, "white-space")           /* a blank inside a plain pattern */                   \
    X(BAD_REGEX, "bad-regex")               /* PCRE2 does not compile the /regex/ */               \
    X(EMPTY_OPTIONS, "empty-options")       /* a `$` with nothing after it */                      \
    X(UNKNOWN_OPTION, "unknown-option")     /* an option neither engine knows */                   \
    X(NOT_NEGATABLE, "not-negatable")       /* `~important`, `~domain=`, ... */                    \
    X(NEEDS_VALUE, "needs-value")           /* `domain=` and the like, empty */                    \
    X(TAKES_NO_VALUE, "takes-no-value")     /* `script=1` */                                       \
    X(BAD_DOMAIN_LIST, "bad-domain-list")   /* an empty entry, a byte no host has */               \
    X(TOO_MANY_DOMAINS, "too-many-domains") /* more domain-list options than a rule keeps */       \
    X(UNKNOWN_METHOD, "unknown-method")     /* `method=fly` */                                     \
    X(NO_METHOD_LEFT, "no-method-left")     /* `method=get|~get` */                                \
    X(NO_TYPE_LEFT, "no-type-left")         /* `script,~script` */

enum adblock_reject {
#define ADBLOCK_X(name, text) ADBLOCK_REJ_##name,
    ADBLOCK_REJECTS(ADBLOCK_X)
#undef ADBLOCK_X
        ADBLOCK_REJ_COUNT
};
const char *adblock_reject_name(enum adblock_reject r);

/* Why the engine does not serve a line of class c, or NULL when no rejects
 * file should name it: network rules (served), comments and cosmetic filters
 * (not network rules: every network engine leaves them to the page). For
 * REJECTED a line's own reason says more (adblock_builder_on_reject). Pure. */
const char *adblock_unserved_why(enum adblock_class c);

/* What a build read: lines per class, and the network rules by kind. */
struct adblock_summary {
    uint64_t lines;
    uint64_t by_class[ADBLOCK_CLASS_COUNT];
    uint64_t blocks, exceptions, important, badfilter, regex, page_exceptions;
    uint64_t cancelled;     /* rules cancelled by a $badfilter twin */
    uint64_t duplicates;    /* rules seen twice (kept once) */
    uint64_t unindexed;     /* rules tested on every request (no token, no domain) */
    char first_reject[256]; /* the first rejected line's reason and text */
};

struct adblock_engine;
struct adblock_builder;

/* A builder collects lists; adblock_builder_finish compiles them. */
struct adblock_builder *adblock_builder_new(void);
void adblock_builder_free(struct adblock_builder *b);
/* Told of every line the engine will not serve, as adblock_builder_add
 * reads it: those of class REJECTED, reason its adblock_reject_name and why
 * what was wrong (`unknown option `frobnicate``); and those of a class a
 * gateway cannot act on (adblock_unserved_why not NULL), reason the class's
 * name. line is the line as given, without its LF (nothing trimmed), a
 * pointer into the text being added. On the builder's thread. */
typedef void (*adblock_reject_fn)(void *ctx, const char *reason, const char *why, const char *line,
                                  size_t len);
/* fn (NULL: none) is called with ctx for each such line added from now on. */
void adblock_builder_on_reject(struct adblock_builder *b, adblock_reject_fn fn, void *ctx);
/* Add a list's text (any line ending). Lines that are not network rules are
 * counted, never an error; -1 only when memory runs out or the list is too big
 * for the compiled form (offsets are 32-bit). */
int adblock_builder_add(struct adblock_builder *b, const char *text, size_t len, char *err,
                        size_t errlen);
/* Compile. The builder is spent either way (free it). NULL with err on failure. */
struct adblock_engine *adblock_builder_finish(struct adblock_builder *b, char *err, size_t errlen);
void adblock_engine_free(struct adblock_engine *e);
const struct adblock_summary *adblock_engine_summary(const struct adblock_engine *e);
/* Bytes of the compiled arrays and pool (what a filter file would hold). */
size_t adblock_engine_size(const struct adblock_engine *e);

/* The compiled engine as one block of bytes (flat arrays and the pool, all
 * offsets; regexes are compiled again on load), and back. The block is the
 * body a filter file will carry under its checksum. serialize: a malloc'd
 * block in *out, its size in *len; 0 or -1 with err. load: checks every
 * count, offset and index against the block's size (outside bytes: never a
 * crash); NULL with err. Builder or loader thread. */
int adblock_engine_serialize(const struct adblock_engine *e, void **out, size_t *len, char *err,
                             size_t errlen);
struct adblock_engine *adblock_engine_load(const void *buf, size_t len, char *err, size_t errlen);

/* A request. url is required; from (the initiator page) and method optional
 * (NULL or empty: none). type is an enum adblock_type, or -1 for none: a
 * top-level document with no initiator, as the reference engine treats it. */
struct adblock_request {
    const char *url;
    size_t url_len;
    int type;
    const char *from;
    size_t from_len;
    int method; /* enum adblock_method or -1 */
};

/* The verdict: block or pass, the deciding rule as written in its list (a
 * block rule, or NULL), the exception that un-blocked (or NULL). Strings point
 * into the engine and live as long as it does. */
struct adblock_verdict {
    bool block;
    const char *rule;
    size_t rule_len;
    const char *exception;
    size_t exception_len;
};

/* Per-thread scratch for matching (the lower-cased URL, its tokens, the
 * parties); large, so callers keep one per thread rather than on a stack. */
struct adblock_ctx;
struct adblock_ctx *adblock_ctx_new(void);
void adblock_ctx_free(struct adblock_ctx *c);

/* Match one request. Returns 0, or -1 with err for a request that cannot be
 * read (URL too long); a URL that is not http(s)/ws(s)/data passes. */
int adblock_match(const struct adblock_engine *e, struct adblock_ctx *c,
                  const struct adblock_request *r, struct adblock_verdict *v, char *err,
                  size_t errlen);

#endif
