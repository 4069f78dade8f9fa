/* squidproto: the two conversations of bloomgate-squid as pure functions over
 * bytes: Squid's external_acl_type helper lines (channel ID, URL-escaped
 * values, OK/ERR/BH replies with a quoted message=) and the daemon's replies to
 * MCHECK and MATCH (docs/protocol.md). No sockets, no allocation, no state:
 * any thread, and the unit tests and the fuzzer need no Squid and no daemon. */
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
 * %XX-decoded in place (Squid URL-escapes values against white space). Returns
 * 0, or -1 with the reason in err: an empty line, more than
 * SQUIDPROTO_VALUES_MAX values. Even on error, l->has_channel and l->channel
 * are set when the line began with a channel ID, so a BH can still be routed. */
int squidproto_parse_line(char *line, size_t len, struct squid_line *l, char *err, size_t errlen);

/* Just the channel ID of a line's first bytes (for a line too long to keep):
 * true and the digits in channel when line[0..len) starts with 1 to 20 digits
 * and a space or tab. */
bool squidproto_peek_channel(const char *line, size_t len,
                             char channel[SQUIDPROTO_CHANNEL_MAX + 1]);

/* Decode %XX escapes (either case of hex) of in[0..len) into out (which may be
 * in), once: "%2520" becomes "%20". A '%' not followed by two hex digits stays
 * as it is. Returns the decoded length (<= len). */
size_t squidproto_unescape(const char *in, size_t len, char *out);

/* Whether a value is Squid's "not available" placeholder: "-" or empty. */
bool squidproto_value_absent(const char *v, size_t len);

/* Write value v[0..len) as a daemon item into out (room for 3 * len bytes):
 * the bytes the line protocol cannot carry in an item (NUL, tab, LF, CR,
 * space) become %XX, everything else is copied. A url filter unescapes them
 * again when it canonicalises, so its answer is unchanged. Returns the length. */
size_t squidproto_item_escape(const char *v, size_t len, char *out);

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
