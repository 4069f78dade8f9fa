/* squidproto: the two conversations of bloomgate-squid as pure functions over
 * bytes: Squid's external_acl_type helper lines (channel ID, URL-escaped
 * values, the request context fields of --context, OK/ERR/BH replies with a
 * quoted message=) and the daemon's replies to MCHECK and MATCH
 * (docs/protocol.md). No sockets, no allocation, no state: any thread, and the
 * unit tests and the fuzzer need no Squid and no daemon. */
#ifndef BLOOMGATE_SQUIDPROTO_H
#define BLOOMGATE_SQUIDPROTO_H

#include <stdbool.h>
#include <stddef.h>

/* The most values one helper line may carry (Squid sends one per FORMAT
 * macro, plus %DATA): more is an error, not a truncation. */
#define SQUIDPROTO_VALUES_MAX 16
/* A channel ID is a decimal number of at most this many digits. */
#define SQUIDPROTO_CHANNEL_MAX 20
/* The longest message= text a reply carries before escaping; longer text is
 * cut (at a UTF-8 boundary) and ends in "...". */
#define SQUIDPROTO_MESSAGE_MAX 512
/* Room enough for any reply squidproto_reply builds: channel, code, and the
 * message with every byte escaped, quotes, LF. */
#define SQUIDPROTO_REPLY_MAX (SQUIDPROTO_CHANNEL_MAX + 16 + 2 * SQUIDPROTO_MESSAGE_MAX + 16)

/* One helper request line, parsed in place: values point into the caller's
 * line buffer, which squidproto_parse_line has %-decoded. */
struct squid_line {
    bool has_channel;                         /* the line began with a channel ID */
    char channel[SQUIDPROTO_CHANNEL_MAX + 1]; /* its digits, NUL-terminated ("" if none) */
    size_t n_values;                          /* values after the channel ID, '-' included */
    const char *value[SQUIDPROTO_VALUES_MAX]; /* each decoded value (not NUL-terminated) */
    size_t value_len[SQUIDPROTO_VALUES_MAX];
};

/* Parse one request line line[0..len) (without its LF; a CR before the LF is
 * the caller's to drop, or is taken as white space here). Tokens are split on
 * runs of spaces and tabs. A first token of 1 to 20 decimal digits followed by
 * at least one more token is the channel ID (Squid's concurrency=N >= 1); any
 * other first token is the first value (concurrency=0). Each value is then
 * decoded in place by squidproto_unescape. Returns
 * 0, or -1 with the reason in err: an empty line, more than
 * SQUIDPROTO_VALUES_MAX values. Even on error, l->has_channel and l->channel
 * are set when the line began with a channel ID, so a BH can still be routed. */
int squidproto_parse_line(char *line, size_t len, struct squid_line *l, char *err, size_t errlen);

/* Just the channel ID of a line's first bytes (for a line too long to keep):
 * true and the digits in channel when line[0..len) starts with 1 to 20 digits
 * and a space or tab. */
bool squidproto_peek_channel(const char *line, size_t len,
                             char channel[SQUIDPROTO_CHANNEL_MAX + 1]);

/* Undo Squid's escaping of a value: decode the %XX escapes (either case of
 * hex) of the bytes Squid escapes (rfc1738_escape: controls, space, DEL,
 * bytes over 0x7F, and " # ' < > [ \ ] ^ ` { | } ~) from in[0..len) into out
 * (which may be in), once. Squid leaves '%' itself unescaped, so any other
 * %XX is the value's own (a URL's %2F, %3A, %25) and stays as written:
 * "%2F" and "%2520" are kept, "%20" and "%22" decode. Returns the decoded
 * length (<= len). */
size_t squidproto_unescape(const char *in, size_t len, char *out);

/* Whether a value is Squid's "not available" placeholder: "-" or empty. */
bool squidproto_value_absent(const char *v, size_t len);

/* Write value v[0..len) as a daemon item into out (room for 3 * len bytes):
 * the bytes the line protocol cannot carry in an item (NUL, tab, LF, CR,
 * space) become %XX, everything else is copied. A url filter unescapes them
 * again when it canonicalises, so its answer is unchanged. Returns the length. */
size_t squidproto_item_escape(const char *v, size_t len, char *out);

/* ---- the request context (--context) ---- */

/* The fields a line may carry right after its first value, the URL, in the
 * order --context names them: what Squid sends for %>{Referer},
 * %>{Origin}, %>{Sec-Fetch-Dest} and %METHOD. */
enum squid_ctx_field {
    SQUID_CTX_REFERER, /* "referer": the page, the daemon's from= */
    SQUID_CTX_ORIGIN,  /* "origin": the page's origin, from= when no Referer came */
    SQUID_CTX_DEST,    /* "dest": Sec-Fetch-Dest, the daemon's type= */
    SQUID_CTX_METHOD,  /* "method": the request method, the daemon's method= */
    SQUID_CTX_FIELDS
};

struct squid_ctx_spec {
    size_t n;                                     /* fields after the URL (0: no context) */
    enum squid_ctx_field field[SQUID_CTX_FIELDS]; /* in the order they come; each once */
};

/* Parse --context's argument, a comma-separated list of referer, origin, dest
 * and method (each at most once, case-insensitive), into spec. 0, or -1 with
 * the reason in err. */
int squidproto_ctx_spec_parse(const char *s, struct squid_ctx_spec *spec, char *err, size_t errlen);

/* One request's context, as the daemon's context words take it. NULL (and
 * 0) for a part the request does not carry. */
struct squid_ctx {
    const char *from; /* the page: the Referer, else the Origin (not "null"); into the line */
    size_t from_len;
    const char *type;   /* a Sec-Fetch-Dest value the daemon reads (static, lower case) */
    const char *method; /* a method the daemon reads (static, lower case) */
};

/* A Sec-Fetch-Dest value v[0..len) as the daemon's type= word takes it: the
 * Fetch standard's destinations that bloomgated reads (audio ... xslt,
 * case-insensitive) as they are, anything else "other" (a destination a
 * browser adds later is still a request of some type: never a refused
 * lookup). NULL for an absent value. Static strings. */
const char *squidproto_dest_type(const char *v, size_t len);

/* A request method as the daemon's method= word takes it (get, post, put,
 * delete, head, options, patch, connect; case-insensitive), or NULL: another
 * method, or absent, is sent as none. Static strings. */
const char *squidproto_method(const char *v, size_t len);

/* Take the context fields out of a parsed line: l->value[1 .. spec->n] are
 * read into ctx as spec names them and removed, so that l keeps only the
 * values to check (the URL, then what follows the fields: %SRC, %DATA ...).
 * A field that is '-' or empty (Squid's "absent") leaves its part NULL. 0,
 * or -1 with the reason in err when the line has fewer than 1 + spec->n
 * values. With spec->n == 0, ctx is all NULL and l unchanged. */
int squidproto_take_context(struct squid_line *l, const struct squid_ctx_spec *spec,
                            struct squid_ctx *ctx, char *err, size_t errlen);

enum squid_result { SQUID_OK, SQUID_ERR, SQUID_BH };

/* Build a reply line into out (at least SQUIDPROTO_REPLY_MAX bytes):
 * "[channel ]OK|ERR|BH[ message="..."]\n". The message (NULL or empty: none)
 * is cut to SQUIDPROTO_MESSAGE_MAX bytes and quoted as Squid reads it: '"'
 * and '\' are escaped with '\', CR and LF as \r and \n, other control bytes
 * become '?'. Returns the length written. */
size_t squidproto_reply(char *out, const char *channel, enum squid_result res, const char *msg,
                        size_t msglen);

/* ---- the daemon's replies ---- */

/* A reply to MCHECK with n items: "YES NO ..." (exactly n words) into
 * present[0..n). Returns 0, or -1 if the line is anything else (an ERR reply
 * included: see squidproto_daemon_error). */
int squidproto_mcheck_reply(const char *line, size_t len, size_t n, bool *present);

/* A reply to MATCH: 1 and the key (pointing into line) for "MATCH <key>", 0
 * for "NO", -1 for anything else. */
int squidproto_match_reply(const char *line, size_t len, const char **key, size_t *keylen);

/* An "ERR <code> <message>" reply: 0 with the code and message (pointing
 * into line) and, when the message says which item failed ("item 3: ...",
 * "item 3 is ..."), its 1-based position in *item (else 0); -1 if the line
 * is not an ERR reply. */
int squidproto_daemon_error(const char *line, size_t len, const char **code, size_t *codelen,
                            const char **msg, size_t *msglen, size_t *item);

#endif
