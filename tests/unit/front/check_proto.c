/* Unit tests for the line protocol parser and reply formatters
 * (src/front/line/proto.c, proto_fast.h). Every expectation is an exact
 * value: status, bytes consumed, tokens, error code and message text, reply
 * bytes. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/line/proto.h"
#include "front/line/proto_fast.h"

/* ---- helpers ---- */

static const struct proto_limits lim_std = {.max_line = 1024, .max_item = 64, .max_items = 8};

/* Items storage of exactly max_items tokens on the heap, so ASan catches any
 * write past the capacity the parser was promised. */
static struct proto_token *storage_new(const struct proto_limits *lim)
{
    struct proto_token *s = calloc(lim->max_items ? lim->max_items : 1, sizeof(*s));
    ck_assert_ptr_nonnull(s);
    return s;
}

static bool tok_eq(struct proto_token t, const char *s)
{
    return t.len == strlen(s) && memcmp(t.p, s, t.len) == 0;
}

#define ck_assert_tok(t, s)                                                                        \
    ck_assert_msg(tok_eq((t), (s)), "token '%.*s' != '%s'", (int)(t).len, (t).p, (s))

/* Parse the first request of buf[0..len) with limits lim. */
static enum proto_status parse_n(const char *buf, size_t len, const struct proto_limits *lim,
                                 struct proto_request *req, struct proto_token *st,
                                 size_t *consumed)
{
    size_t scanned = 0;
    return proto_next(buf, len, lim, req, st, consumed, &scanned);
}

static struct proto_token storage_std[8];

static enum proto_status parse_s(const char *s, struct proto_request *req, size_t *consumed)
{
    return parse_n(s, strlen(s), &lim_std, req, storage_std, consumed);
}

static const char *status_name(enum proto_status st)
{
    switch (st) {
    case PROTO_NEED_MORE:
        return "NEED_MORE";
    case PROTO_EMPTY:
        return "EMPTY";
    case PROTO_REQUEST:
        return "REQUEST";
    case PROTO_ERROR:
        return "ERROR";
    case PROTO_FATAL:
        return "FATAL";
    }
    return "?";
}

/* One result as text, so whole sequences of results compare with one strcmp
 * and a failure prints what differed. */
static void describe(char *acc, size_t cap, size_t *used, enum proto_status st,
                     const struct proto_request *r, size_t consumed)
{
    size_t n = *used;
    n += (size_t)snprintf(acc + n, cap - n, "%s/%zu", status_name(st), consumed);
    if (st == PROTO_REQUEST) {
        n += (size_t)snprintf(acc + n, cap - n, " %s", proto_cmd_name(r->cmd));
        if (r->has_filter)
            n += (size_t)snprintf(acc + n, cap - n, " f=%.*s", (int)r->filter.len, r->filter.p);
        if (r->arg.p)
            n += (size_t)snprintf(acc + n, cap - n, " a=%.*s", (int)r->arg.len, r->arg.p);
        for (size_t i = 0; i < r->n_items; i++)
            n += (size_t)snprintf(acc + n, cap - n, " [%.*s]", (int)r->items[i].len, r->items[i].p);
    } else if (st == PROTO_ERROR || st == PROTO_FATAL) {
        n += (size_t)snprintf(acc + n, cap - n, " %s: %s", proto_err_name(r->err), r->errmsg);
    }
    ck_assert_uint_lt(n + 1, cap);
    n += (size_t)snprintf(acc + n, cap - n, "\n");
    *used = n;
}

/* A connection's input buffer: bytes arrive by conn_feed, are parsed as far as
 * they go, and parsed lines are drained, as the server will do. */
struct conn {
    char *data;
    size_t len, cap;
    size_t scanned;
    bool use_hint;
    bool closed;
    char *log; /* describe() of every result but NEED_MORE */
    size_t log_cap, log_len;
};

static void conn_init(struct conn *c, size_t cap, size_t log_cap, bool use_hint)
{
    memset(c, 0, sizeof(*c));
    c->data = malloc(cap);
    c->cap = cap;
    c->log = calloc(1, log_cap);
    c->log_cap = log_cap;
    c->use_hint = use_hint;
    ck_assert_ptr_nonnull(c->data);
    ck_assert_ptr_nonnull(c->log);
}

static void conn_free(struct conn *c)
{
    free(c->data);
    free(c->log);
}

static void conn_feed(struct conn *c, const char *p, size_t n, const struct proto_limits *lim,
                      struct proto_token *st)
{
    if (c->closed)
        return;
    ck_assert_uint_le(c->len + n, c->cap);
    memcpy(c->data + c->len, p, n);
    c->len += n;
    for (;;) {
        struct proto_request req;
        size_t consumed = 12345;
        enum proto_status s =
            proto_next(c->data, c->len, lim, &req, st, &consumed, c->use_hint ? &c->scanned : NULL);
        if (s == PROTO_NEED_MORE) {
            ck_assert_uint_eq(consumed, 0);
            if (c->use_hint)
                ck_assert_uint_eq(c->scanned, c->len);
            return;
        }
        describe(c->log, c->log_cap, &c->log_len, s, &req, consumed);
        if (s == PROTO_FATAL) {
            ck_assert_uint_eq(consumed, 0);
            c->closed = true;
            return;
        }
        ck_assert_uint_gt(consumed, 0);
        ck_assert_uint_le(consumed, c->len);
        memmove(c->data, c->data + consumed, c->len - consumed);
        c->len -= consumed;
    }
}

/* ---- every command and its arity ---- */

struct arity_case {
    const char *line;
    enum proto_status st;
    enum proto_cmd cmd;
    enum proto_err err;
    const char *msg;
};

static const struct arity_case arity_cases[] = {
    {"PING\n", PROTO_REQUEST, PROTO_PING, PROTO_ERR_NONE, ""},
    {"PING x\n", PROTO_ERROR, PROTO_PING, PROTO_ERR_WRONG_ARITY, "PING takes no arguments, got 1"},
    {"CHECK f a\n", PROTO_REQUEST, PROTO_CHECK, PROTO_ERR_NONE, ""},
    {"CHECK\n", PROTO_ERROR, PROTO_CHECK, PROTO_ERR_WRONG_ARITY,
     "CHECK takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 0"},
    {"CHECK f\n", PROTO_ERROR, PROTO_CHECK, PROTO_ERR_WRONG_ARITY,
     "CHECK takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 1"},
    {"CHECK f a b\n", PROTO_ERROR, PROTO_CHECK, PROTO_ERR_WRONG_ARITY,
     "CHECK takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 3"},
    {"MCHECK f a\n", PROTO_REQUEST, PROTO_MCHECK, PROTO_ERR_NONE, ""},
    {"MCHECK f a b c\n", PROTO_REQUEST, PROTO_MCHECK, PROTO_ERR_NONE, ""},
    {"MCHECK\n", PROTO_ERROR, PROTO_MCHECK, PROTO_ERR_WRONG_ARITY,
     "MCHECK takes at least 2 arguments (<filter> <item> [<item>...]), got 0"},
    {"MCHECK f\n", PROTO_ERROR, PROTO_MCHECK, PROTO_ERR_WRONG_ARITY,
     "MCHECK takes at least 2 arguments (<filter> <item> [<item>...]), got 1"},
    {"ADD f a\n", PROTO_REQUEST, PROTO_ADD, PROTO_ERR_NONE, ""},
    {"ADD f\n", PROTO_ERROR, PROTO_ADD, PROTO_ERR_WRONG_ARITY,
     "ADD takes 2 arguments (<filter> <item>), got 1"},
    {"ADD f a b\n", PROTO_ERROR, PROTO_ADD, PROTO_ERR_WRONG_ARITY,
     "ADD takes 2 arguments (<filter> <item>), got 3"},
    {"MADD f a\n", PROTO_REQUEST, PROTO_MADD, PROTO_ERR_NONE, ""},
    {"MADD f a b c d\n", PROTO_REQUEST, PROTO_MADD, PROTO_ERR_NONE, ""},
    {"MADD f\n", PROTO_ERROR, PROTO_MADD, PROTO_ERR_WRONG_ARITY,
     "MADD takes at least 2 arguments (<filter> <item> [<item>...]), got 1"},
    {"ALLOW f a\n", PROTO_REQUEST, PROTO_ALLOW, PROTO_ERR_NONE, ""},
    {"allow f a b\n", PROTO_REQUEST, PROTO_ALLOW, PROTO_ERR_NONE, ""},
    {"UNALLOW f a b c\n", PROTO_REQUEST, PROTO_UNALLOW, PROTO_ERR_NONE, ""},
    {"REMOVE f a\n", PROTO_REQUEST, PROTO_REMOVE, PROTO_ERR_NONE, ""},
    {"REMOVE f\n", PROTO_ERROR, PROTO_REMOVE, PROTO_ERR_WRONG_ARITY,
     "REMOVE takes at least 2 arguments (<filter> <item> [<item>...]), got 1"},
    {"UNALLOW\n", PROTO_ERROR, PROTO_UNALLOW, PROTO_ERR_WRONG_ARITY,
     "UNALLOW takes at least 2 arguments (<filter> <item> [<item>...]), got 0"},
    {"INFO\n", PROTO_REQUEST, PROTO_INFO, PROTO_ERR_NONE, ""},
    {"INFO f\n", PROTO_REQUEST, PROTO_INFO, PROTO_ERR_NONE, ""},
    {"INFO f g\n", PROTO_ERROR, PROTO_INFO, PROTO_ERR_WRONG_ARITY,
     "INFO takes 0 or 1 arguments ([<filter>]), got 2"},
    {"FILTERS\n", PROTO_REQUEST, PROTO_FILTERS, PROTO_ERR_NONE, ""},
    {"FILTERS x\n", PROTO_ERROR, PROTO_FILTERS, PROTO_ERR_WRONG_ARITY,
     "FILTERS takes no arguments, got 1"},
    {"AUTH s3cret\n", PROTO_REQUEST, PROTO_AUTH, PROTO_ERR_NONE, ""},
    {"AUTH\n", PROTO_ERROR, PROTO_AUTH, PROTO_ERR_WRONG_ARITY,
     "AUTH takes 1 argument (<token>), got 0"},
    {"AUTH a b\n", PROTO_ERROR, PROTO_AUTH, PROTO_ERR_WRONG_ARITY,
     "AUTH takes 1 argument (<token>), got 2"},
    {"QUIT\n", PROTO_REQUEST, PROTO_QUIT, PROTO_ERR_NONE, ""},
    {"QUIT now\n", PROTO_ERROR, PROTO_QUIT, PROTO_ERR_WRONG_ARITY,
     "QUIT takes no arguments, got 1"},
    {"RELOAD\n", PROTO_REQUEST, PROTO_RELOAD, PROTO_ERR_NONE, ""},
    {"RELOAD all\n", PROTO_ERROR, PROTO_RELOAD, PROTO_ERR_WRONG_ARITY,
     "RELOAD takes no arguments, got 1"},
    {"MATCH f a\n", PROTO_REQUEST, PROTO_MATCH, PROTO_ERR_NONE, ""},
    {"match f a\n", PROTO_REQUEST, PROTO_MATCH, PROTO_ERR_NONE, ""},
    {"MATCH\n", PROTO_ERROR, PROTO_MATCH, PROTO_ERR_WRONG_ARITY,
     "MATCH takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 0"},
    {"MATCH f\n", PROTO_ERROR, PROTO_MATCH, PROTO_ERR_WRONG_ARITY,
     "MATCH takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 1"},
    {"MATCH f a b\n", PROTO_ERROR, PROTO_MATCH, PROTO_ERR_WRONG_ARITY,
     "MATCH takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 3"},
    {"MATCH f\\x a\n", PROTO_ERROR, PROTO_MATCH, PROTO_ERR_UNKNOWN_FILTER,
     "invalid filter name 'f\\x': use " FNAME_RULE},
    {"MATCHES f a\n", PROTO_ERROR, PROTO_PING, PROTO_ERR_UNKNOWN_COMMAND,
     "unknown command 'MATCHES'"},
};

#define N_ARITY_CASES (sizeof(arity_cases) / sizeof(arity_cases[0]))

START_TEST(test_arity)
{
    const struct arity_case *c = &arity_cases[_i];
    struct proto_request req;
    size_t consumed;
    enum proto_status st = parse_s(c->line, &req, &consumed);
    ck_assert_msg(st == c->st, "%s: status %s", c->line, status_name(st));
    ck_assert_uint_eq(consumed, strlen(c->line));
    ck_assert_int_eq(req.cmd, c->cmd);
    ck_assert_int_eq(req.err, c->err);
    ck_assert_str_eq(req.errmsg, c->msg);
}
END_TEST

/* MATCH takes its filter and item as CHECK does: the item is one token (a
 * URL with its query and fragment, bytes the canonicaliser will read), the
 * limits apply to it, and the parser knows nothing of key kinds. */
START_TEST(test_match)
{
    struct proto_request req;
    size_t consumed;
    const char *line = "MATCH urls http://Evil.EXAMPLE:8080/a/./b?x=1#top\r\n";
    ck_assert_int_eq(parse_s(line, &req, &consumed), PROTO_REQUEST);
    ck_assert_uint_eq(consumed, strlen(line));
    ck_assert_int_eq(req.cmd, PROTO_MATCH);
    ck_assert_int_eq(req.has_filter, 1);
    ck_assert_tok(req.filter, "urls");
    ck_assert_uint_eq(req.n_items, 1);
    ck_assert_tok(req.items[0], "http://Evil.EXAMPLE:8080/a/./b?x=1#top");

    /* Separators around the item are not part of it. */
    ck_assert_int_eq(parse_s("  MATCH\thosts \t bob@mail.example \n", &req, &consumed),
                     PROTO_REQUEST);
    ck_assert_tok(req.filter, "hosts");
    ck_assert_tok(req.items[0], "bob@mail.example");

    /* max_item (64 here) applies as to CHECK. */
    char big[128] = "MATCH f http://";
    size_t at = strlen(big);
    memset(big + at, 'a', 70 - 7);
    memcpy(big + at + 70 - 7, "\n", 2);
    ck_assert_int_eq(parse_s(big, &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_ITEM_TOO_LONG);
    ck_assert_str_eq(req.errmsg, "item 1 of 1 is 70 bytes; the limit is 64");

    /* A NUL is refused before the command is looked at. */
    ck_assert_int_eq(parse_n("MATCH f a\0b\n", 12, &lim_std, &req, storage_std, &consumed),
                     PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);

    /* Pipelined after a CHECK, each is its own request. */
    const char *two = "CHECK f a\nMATCH f b\n";
    ck_assert_int_eq(parse_s(two, &req, &consumed), PROTO_REQUEST);
    ck_assert_int_eq(req.cmd, PROTO_CHECK);
    ck_assert_int_eq(parse_s(two + consumed, &req, &consumed), PROTO_REQUEST);
    ck_assert_int_eq(req.cmd, PROTO_MATCH);
    ck_assert_tok(req.items[0], "b");
}
END_TEST

/* The lookups' context words: not items, not arguments; CHECK's and
 * MATCH's apply to the one item wherever they stand, MCHECK's from the
 * item after them on; any case; at most PROTO_CTX_MAX; one after MCHECK's
 * last item applies to nothing (bad_request). The item commands that are
 * not lookups take such a word as an item. */
START_TEST(test_context_words)
{
    struct proto_request req;
    size_t used;
    ck_assert_int_eq(parse_s("CHECK f http://x/ type=script FROM=http://p/\n", &req, &used),
                     PROTO_REQUEST);
    ck_assert_uint_eq(req.n_items, 1);
    ck_assert(tok_eq(req.items[0], "http://x/"));
    ck_assert_uint_eq(req.n_ctx, 2);
    ck_assert(tok_eq(req.ctx[0].word, "type=script") && tok_eq(req.ctx[1].word, "FROM=http://p/"));
    ck_assert_int_eq(parse_s("MATCH f u method=post\n", &req, &used), PROTO_REQUEST);
    ck_assert(req.n_items == 1 && tok_eq(req.items[0], "u") && req.n_ctx == 1);
    /* CHECK's first token after the filter is its item, as the fast path reads it. */
    ck_assert_int_eq(parse_s("CHECK f type=x\n", &req, &used), PROTO_REQUEST);
    ck_assert(req.n_items == 1 && tok_eq(req.items[0], "type=x") && req.n_ctx == 0);
    ck_assert_int_eq(parse_s("CHECK f type=x type=y\n", &req, &used), PROTO_REQUEST);
    ck_assert(req.n_items == 1 && tok_eq(req.items[0], "type=x") && req.n_ctx == 1);
    ck_assert_int_eq(parse_s("MCHECK f type=a u1 u2 from=p u3\n", &req, &used), PROTO_REQUEST);
    ck_assert_uint_eq(req.n_items, 3);
    ck_assert(tok_eq(req.items[2], "u3"));
    ck_assert_uint_eq(req.n_ctx, 2);
    ck_assert_uint_eq(req.ctx[0].from_item, 0);
    ck_assert_uint_eq(req.ctx[1].from_item, 2);
    ck_assert_int_eq(parse_s("MCHECK f u1 type=a\n", &req, &used), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);
    /* A context word is no item: MCHECK f type=x has none. */
    ck_assert_int_eq(parse_s("MCHECK f type=x\n", &req, &used), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_WRONG_ARITY);
    /* Two items and a word are still two items. */
    ck_assert_int_eq(parse_s("CHECK f a b type=x\n", &req, &used), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_WRONG_ARITY);
    /* Not a lookup: the word is an item. */
    ck_assert_int_eq(parse_s("ADD f type=x\n", &req, &used), PROTO_REQUEST);
    ck_assert(req.n_items == 1 && req.n_ctx == 0 && tok_eq(req.items[0], "type=x"));
    /* Prefixes only: typed=x and from are items. */
    ck_assert_int_eq(parse_s("MCHECK f typed=x from\n", &req, &used), PROTO_REQUEST);
    ck_assert(req.n_items == 2 && req.n_ctx == 0);
    char line[1024];
    size_t n = (size_t)snprintf(line, sizeof(line), "MCHECK f");
    for (int i = 0; i <= PROTO_CTX_MAX; i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, " type=x");
    snprintf(line + n, sizeof(line) - n, " u\n");
    ck_assert_uint_lt(n, sizeof(line) - 8);
    ck_assert_int_eq(parse_s(line, &req, &used), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);
    ck_assert_msg(strstr(req.errmsg, "context words"), "%s", req.errmsg);
}
END_TEST

START_TEST(test_fields)
{
    struct proto_request req;
    size_t consumed;

    ck_assert_int_eq(parse_s("PING\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_int_eq(req.has_filter, 0);
    ck_assert_uint_eq(req.n_items, 0);
    ck_assert_ptr_null(req.arg.p);

    ck_assert_int_eq(parse_s("CHECK urlhaus http://x.example/a?b=c\n", &req, &consumed),
                     PROTO_REQUEST);
    ck_assert_int_eq(req.has_filter, 1);
    ck_assert_tok(req.filter, "urlhaus");
    ck_assert_ptr_eq(req.items, storage_std);
    ck_assert_uint_eq(req.n_items, 1);
    ck_assert_tok(req.items[0], "http://x.example/a?b=c");

    ck_assert_int_eq(parse_s("MADD f.v-2_x one two three\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_int_eq(req.cmd, PROTO_MADD);
    ck_assert_tok(req.filter, "f.v-2_x");
    ck_assert_uint_eq(req.n_items, 3);
    ck_assert_tok(req.items[0], "one");
    ck_assert_tok(req.items[1], "two");
    ck_assert_tok(req.items[2], "three");

    ck_assert_int_eq(parse_s("INFO\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_int_eq(req.has_filter, 0);
    ck_assert_int_eq(parse_s("INFO main\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_int_eq(req.has_filter, 1);
    ck_assert_tok(req.filter, "main");
    ck_assert_uint_eq(req.n_items, 0);

    ck_assert_int_eq(parse_s("AUTH Tok3n=/+\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.arg, "Tok3n=/+");
    ck_assert_int_eq(req.has_filter, 0);
    ck_assert_uint_eq(req.n_items, 0);

    /* Items are bytes: anything but space, tab, CR, LF and NUL, high bytes too. */
    ck_assert_int_eq(parse_s("CHECK f \x01\x7f\xc3\xa9\xff\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.items[0], "\x01\x7f\xc3\xa9\xff");
}
END_TEST

START_TEST(test_case_insensitive)
{
    static const struct {
        const char *line;
        enum proto_cmd cmd;
    } cases[] = {
        {"ping\n", PROTO_PING},       {"PiNg\n", PROTO_PING},
        {"check f a\n", PROTO_CHECK}, {"mCheck f a b\n", PROTO_MCHECK},
        {"add f a\n", PROTO_ADD},     {"madd f a\n", PROTO_MADD},
        {"info\n", PROTO_INFO},       {"Filters\n", PROTO_FILTERS},
        {"auth x\n", PROTO_AUTH},     {"quit\n", PROTO_QUIT},
        {"reLoad\n", PROTO_RELOAD},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct proto_request req;
        size_t consumed;
        ck_assert_int_eq(parse_s(cases[i].line, &req, &consumed), PROTO_REQUEST);
        ck_assert_int_eq(req.cmd, cases[i].cmd);
    }

    /* Only the command word: filter, items and token keep their case. */
    struct proto_request req;
    size_t consumed;
    ck_assert_int_eq(parse_s("check MyFilter ItEm\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.filter, "MyFilter");
    ck_assert_tok(req.items[0], "ItEm");
    ck_assert_int_eq(parse_s("auth AbC\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.arg, "AbC");

    /* Not a prefix match, and no Unicode folding. */
    ck_assert_int_eq(parse_s("PIN\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_UNKNOWN_COMMAND);
    ck_assert_int_eq(parse_s("PINGS\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_UNKNOWN_COMMAND);
}
END_TEST

START_TEST(test_crlf)
{
    struct proto_request req;
    size_t consumed;

    ck_assert_int_eq(parse_s("PING\r\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_uint_eq(consumed, 6);
    ck_assert_int_eq(parse_s("CHECK f abc\r\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.items[0], "abc");
    ck_assert_int_eq(parse_s("AUTH tok\r\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.arg, "tok");
    ck_assert_int_eq(parse_s("CHECK f abc \t\r\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.items[0], "abc");

    /* A CR not right before the LF is a bad request, and only one CR goes. */
    ck_assert_int_eq(parse_s("CHECK f a\rb\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);
    ck_assert_str_eq(req.errmsg, "CR is allowed only right before the LF");
    ck_assert_uint_eq(consumed, 12);
    ck_assert_int_eq(parse_s("PING\r\r\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);
    ck_assert_int_eq(parse_s("\rPING\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);

    /* A CR alone does not end a line. */
    ck_assert_int_eq(parse_s("PING\r", &req, &consumed), PROTO_NEED_MORE);
    ck_assert_uint_eq(consumed, 0);
}
END_TEST

START_TEST(test_whitespace)
{
    struct proto_request req;
    size_t consumed;
    const char *line = "  \tMCHECK \t\t f   a \t b\t\tc  \t \n";
    ck_assert_int_eq(parse_s(line, &req, &consumed), PROTO_REQUEST);
    ck_assert_uint_eq(consumed, strlen(line));
    ck_assert_int_eq(req.cmd, PROTO_MCHECK);
    ck_assert_tok(req.filter, "f");
    ck_assert_uint_eq(req.n_items, 3);
    ck_assert_tok(req.items[0], "a");
    ck_assert_tok(req.items[1], "b");
    ck_assert_tok(req.items[2], "c");

    ck_assert_int_eq(parse_s("\tPING\t\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_int_eq(req.cmd, PROTO_PING);

    /* Other whitespace is not a separator: a vertical tab is part of the word. */
    ck_assert_int_eq(parse_s("PING\v\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_UNKNOWN_COMMAND);
    ck_assert_str_eq(req.errmsg, "unknown command 'PING?'");
    ck_assert_int_eq(parse_s("CHECK f a\vb\n", &req, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.items[0], "a\vb");
}
END_TEST

START_TEST(test_empty)
{
    static const char *const blanks[] = {"\n", "   \n", "\t \t\n", "\r\n", " \t\r\n"};
    for (size_t i = 0; i < sizeof(blanks) / sizeof(blanks[0]); i++) {
        struct proto_request req;
        size_t consumed;
        ck_assert_int_eq(parse_s(blanks[i], &req, &consumed), PROTO_EMPTY);
        ck_assert_uint_eq(consumed, strlen(blanks[i]));
        ck_assert_int_eq(req.err, PROTO_ERR_NONE);
        ck_assert_str_eq(req.errmsg, "");
    }
    struct proto_request req;
    size_t consumed;
    ck_assert_int_eq(parse_n("", 0, &lim_std, &req, storage_std, &consumed), PROTO_NEED_MORE);
    ck_assert_uint_eq(consumed, 0);
    ck_assert_int_eq(parse_s("   ", &req, &consumed), PROTO_NEED_MORE);
}
END_TEST

/* Several requests in one buffer, parsed in turn by draining *consumed. */
static const char seq_buf[] = "PING\n"
                              "\n"
                              "CHECK f a\r\n"
                              "BOGUS x\n"
                              "MCHECK  f a b c\n"
                              "  \t\n"
                              "CHECK f\n"
                              "auth t0k\n"
                              "INFO bad\"name\n"
                              "MADD f x\0y z\n"
                              "QUIT\n";

static const char seq_expect[] =
    "REQUEST/5 PING\n"
    "EMPTY/1\n"
    "REQUEST/11 CHECK f=f [a]\n"
    "ERROR/8 unknown_command: unknown command 'BOGUS'\n"
    "REQUEST/16 MCHECK f=f [a] [b] [c]\n"
    "EMPTY/4\n"
    "ERROR/8 wrong_arity: CHECK takes 2 arguments (<filter> <item> [type=T] [from=URL]), got 1\n"
    "REQUEST/9 AUTH a=t0k\n"
    "ERROR/14 unknown_filter: invalid filter name 'bad\"name': use " FNAME_RULE "\n"
    "ERROR/13 bad_request: request contains a NUL byte\n"
    "REQUEST/5 QUIT\n";

START_TEST(test_sequence)
{
    char log[4096] = "";
    size_t log_len = 0;
    size_t off = 0, len = sizeof(seq_buf) - 1;
    size_t scanned = 0;
    for (;;) {
        struct proto_request req;
        size_t consumed;
        enum proto_status st =
            proto_next(seq_buf + off, len - off, &lim_std, &req, storage_std, &consumed, &scanned);
        if (st == PROTO_NEED_MORE)
            break;
        describe(log, sizeof(log), &log_len, st, &req, consumed);
        off += consumed;
    }
    ck_assert_str_eq(log, seq_expect);
    ck_assert_uint_eq(off, len);
}
END_TEST

/* The same bytes in two pieces, split at every offset, give the same results,
 * with and without the scan hint. */
START_TEST(test_split_every_boundary)
{
    size_t len = sizeof(seq_buf) - 1;
    struct proto_token *st = storage_new(&lim_std);
    for (int hint = 0; hint <= 1; hint++) {
        for (size_t k = 0; k <= len; k++) {
            struct conn c;
            conn_init(&c, len, 4096, hint);
            conn_feed(&c, seq_buf, k, &lim_std, st);
            conn_feed(&c, seq_buf + k, len - k, &lim_std, st);
            ck_assert_msg(strcmp(c.log, seq_expect) == 0, "split at %zu hint %d:\n%s", k, hint,
                          c.log);
            ck_assert_uint_eq(c.len, 0);
            conn_free(&c);
        }
        /* And one byte at a time. */
        struct conn c;
        conn_init(&c, len, 4096, hint);
        for (size_t k = 0; k < len; k++)
            conn_feed(&c, seq_buf + k, 1, &lim_std, st);
        ck_assert_str_eq(c.log, seq_expect);
        conn_free(&c);
    }
    free(st);
}
END_TEST

/* ---- limits ---- */

/* A line of exactly n bytes before its terminator: "CHECK f " and an item of
 * 'x' padding it out (n >= 9). */
static char *make_line(size_t n, const char *term)
{
    size_t tl = strlen(term);
    char *s = malloc(n + tl + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, "CHECK f ", 8);
    memset(s + 8, 'x', n - 8);
    memcpy(s + n, term, tl + 1);
    return s;
}

START_TEST(test_max_line)
{
    const struct proto_limits lim = {.max_line = 32, .max_item = 64, .max_items = 2};
    struct proto_token *st = storage_new(&lim);
    struct proto_request req;
    size_t consumed;

    /* Exactly max_line bytes then LF: a request. */
    char *s = make_line(32, "\n");
    ck_assert_int_eq(parse_n(s, 33, &lim, &req, st, &consumed), PROTO_REQUEST);
    ck_assert_uint_eq(consumed, 33);
    ck_assert_uint_eq(req.items[0].len, 24);
    /* Without the LF yet: wait for it. */
    ck_assert_int_eq(parse_n(s, 32, &lim, &req, st, &consumed), PROTO_NEED_MORE);
    ck_assert_uint_eq(consumed, 0);
    free(s);

    /* max_line + 1 bytes: fatal, whether or not the LF has arrived. */
    s = make_line(33, "\n");
    ck_assert_int_eq(parse_n(s, 34, &lim, &req, st, &consumed), PROTO_FATAL);
    ck_assert_uint_eq(consumed, 0);
    ck_assert_int_eq(req.err, PROTO_ERR_LINE_TOO_LONG);
    ck_assert_str_eq(req.errmsg, "line longer than 32 bytes");
    ck_assert_int_eq(parse_n(s, 33, &lim, &req, st, &consumed), PROTO_FATAL);
    ck_assert_uint_eq(consumed, 0);
    ck_assert_int_eq(req.err, PROTO_ERR_LINE_TOO_LONG);
    /* Sticky: asking again gives the same answer. */
    ck_assert_int_eq(parse_n(s, 34, &lim, &req, st, &consumed), PROTO_FATAL);
    free(s);

    /* The CR of a CRLF counts towards the limit (it is not the LF). */
    s = make_line(31, "\r\n");
    ck_assert_int_eq(parse_n(s, 33, &lim, &req, st, &consumed), PROTO_REQUEST);
    ck_assert_uint_eq(consumed, 33);
    ck_assert_uint_eq(req.items[0].len, 23);
    free(s);
    s = make_line(32, "\r\n");
    ck_assert_int_eq(parse_n(s, 34, &lim, &req, st, &consumed), PROTO_FATAL);
    free(s);

    /* A long line behind a short one is only fatal once reached. */
    char buf[64];
    memcpy(buf, "PING\n", 5);
    memset(buf + 5, 'A', 40);
    ck_assert_int_eq(parse_n(buf, 45, &lim, &req, st, &consumed), PROTO_REQUEST);
    ck_assert_uint_eq(consumed, 5);
    ck_assert_int_eq(parse_n(buf + 5, 40, &lim, &req, st, &consumed), PROTO_FATAL);

    /* max_line 0: only bare LFs are legal. */
    const struct proto_limits zero = {.max_line = 0, .max_item = 64, .max_items = 2};
    ck_assert_int_eq(parse_n("\n", 1, &zero, &req, st, &consumed), PROTO_EMPTY);
    ck_assert_int_eq(parse_n("", 0, &zero, &req, st, &consumed), PROTO_NEED_MORE);
    ck_assert_int_eq(parse_n(" \n", 2, &zero, &req, st, &consumed), PROTO_FATAL);
    free(st);
}
END_TEST

START_TEST(test_max_item)
{
    const struct proto_limits lim = {.max_line = 1024, .max_item = 8, .max_items = 4};
    struct proto_token *st = storage_new(&lim);
    struct proto_request req;
    size_t consumed;
    const char *ok = "CHECK f 12345678\n";
    const char *bad = "CHECK f 123456789\n";

    ck_assert_int_eq(parse_n(ok, strlen(ok), &lim, &req, st, &consumed), PROTO_REQUEST);
    ck_assert_tok(req.items[0], "12345678");
    ck_assert_int_eq(parse_n(bad, strlen(bad), &lim, &req, st, &consumed), PROTO_ERROR);
    ck_assert_uint_eq(consumed, strlen(bad));
    ck_assert_int_eq(req.err, PROTO_ERR_ITEM_TOO_LONG);
    ck_assert_str_eq(req.errmsg, "item 1 of 1 is 9 bytes; the limit is 8");

    const char *m = "MADD f a 12345678 123456789 1234567890\n";
    ck_assert_int_eq(parse_n(m, strlen(m), &lim, &req, st, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_ITEM_TOO_LONG);
    ck_assert_str_eq(req.errmsg, "item 3 of 4 is 9 bytes; the limit is 8");

    /* The filter and AUTH's token are not items. */
    const char *a = "AUTH 1234567890abcdef\n";
    ck_assert_int_eq(parse_n(a, strlen(a), &lim, &req, st, &consumed), PROTO_REQUEST);
    free(st);
}
END_TEST

START_TEST(test_max_items)
{
    const struct proto_limits lim = {.max_line = 1024, .max_item = 8, .max_items = 4};
    struct proto_token *st = storage_new(&lim);
    struct proto_request req;
    size_t consumed;
    const char *ok = "MCHECK f a b c d\n";
    const char *bad = "MCHECK f a b c d e\n";

    ck_assert_int_eq(parse_n(ok, strlen(ok), &lim, &req, st, &consumed), PROTO_REQUEST);
    ck_assert_uint_eq(req.n_items, 4);
    ck_assert_tok(req.items[3], "d");
    ck_assert_int_eq(parse_n(bad, strlen(bad), &lim, &req, st, &consumed), PROTO_ERROR);
    ck_assert_uint_eq(consumed, strlen(bad));
    ck_assert_int_eq(req.err, PROTO_ERR_TOO_MANY_ITEMS);
    ck_assert_str_eq(req.errmsg, "5 items; the limit is 4");
    ck_assert_uint_eq(req.n_items, 0);

    /* Too many wins over too long. */
    const char *both = "MADD f 123456789 b c d e\n";
    ck_assert_int_eq(parse_n(both, strlen(both), &lim, &req, st, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_TOO_MANY_ITEMS);

    /* A bad filter name wins over both. */
    const char *fil = "MADD f' 123456789 b c d e\n";
    ck_assert_int_eq(parse_n(fil, strlen(fil), &lim, &req, st, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_UNKNOWN_FILTER);

    /* Many more items than storage: counted, never stored past capacity. */
    char big[1024];
    size_t n = (size_t)snprintf(big, sizeof(big), "MCHECK f");
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, " x");
    n += (size_t)snprintf(big + n, sizeof(big) - n, "\n");
    ck_assert_int_eq(parse_n(big, n, &lim, &req, st, &consumed), PROTO_ERROR);
    ck_assert_str_eq(req.errmsg, "300 items; the limit is 4");
    free(st);
}
END_TEST

START_TEST(test_nul)
{
    static const char buf[] = "CHECK f a\0b\nPING\n";
    struct proto_request req;
    size_t consumed;
    ck_assert_int_eq(parse_n(buf, sizeof(buf) - 1, &lim_std, &req, storage_std, &consumed),
                     PROTO_ERROR);
    ck_assert_uint_eq(consumed, 12);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);
    ck_assert_str_eq(req.errmsg, "request contains a NUL byte");
    /* The connection goes on. */
    ck_assert_int_eq(parse_n(buf + 12, sizeof(buf) - 13, &lim_std, &req, storage_std, &consumed),
                     PROTO_REQUEST);
    ck_assert_int_eq(req.cmd, PROTO_PING);
    ck_assert_int_eq(req.err, PROTO_ERR_NONE);
    ck_assert_str_eq(req.errmsg, "");

    /* NUL wins over everything, even in a line that would be blank. */
    ck_assert_int_eq(parse_n("\0\n", 2, &lim_std, &req, storage_std, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);
    ck_assert_int_eq(parse_n(" \0 \r\n", 5, &lim_std, &req, storage_std, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);
    ck_assert_int_eq(parse_n("XYZ\0\n", 5, &lim_std, &req, storage_std, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_BAD_REQUEST);
}
END_TEST

START_TEST(test_unknown_command)
{
    struct proto_request req;
    size_t consumed;
    ck_assert_int_eq(parse_s("GET / HTTP/1.1\r\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_UNKNOWN_COMMAND);
    ck_assert_str_eq(req.errmsg, "unknown command 'GET'");

    /* Exactly 32 bytes are quoted whole; more are cut with "...". */
    ck_assert_int_eq(parse_s("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 x\n", &req, &consumed), PROTO_ERROR);
    ck_assert_str_eq(req.errmsg, "unknown command 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345'");
    ck_assert_int_eq(parse_s("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n", &req, &consumed),
                     PROTO_ERROR);
    ck_assert_str_eq(req.errmsg, "unknown command 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345...'");

    /* Non-printable bytes are shown as '?'. */
    ck_assert_int_eq(parse_s("P\x01\x1b[0m\xff\x7fZ\n", &req, &consumed), PROTO_ERROR);
    ck_assert_str_eq(req.errmsg, "unknown command 'P??[0m??Z'");
}
END_TEST

START_TEST(test_filter_name)
{
    ck_assert_int_eq(proto_valid_filter_name("a", 1), 1);
    ck_assert_int_eq(proto_valid_filter_name("AZaz09_.-", 9), 1);
    ck_assert_int_eq(proto_valid_filter_name("seen:{sku123}:2026-11-27", 24), 1);
    ck_assert_int_eq(proto_valid_filter_name("", 0), 0);
    ck_assert_int_eq(proto_valid_filter_name("a b", 3), 0);
    ck_assert_int_eq(proto_valid_filter_name("caf\xc3\xa9", 5), 0);
    ck_assert_int_eq(proto_valid_filter_name("a\0b", 3), 0);
    static const char out[] = "\"'\\`\x01\x1b\x7f\x80\xff";
    for (size_t i = 0; i < sizeof(out) - 1; i++)
        ck_assert_msg(proto_valid_filter_name(&out[i], 1) == 0, "0x%02x accepted",
                      (unsigned char)out[i]);

    /* Each byte of the wider set inside a name, through a whole request. */
    struct proto_request req;
    size_t consumed;
    char line[FNAME_MAX + 32];
    static const char in[] = "!#$%&()*+,-./:;<=>?@[]^_{|}~";
    for (size_t i = 0; i < sizeof(in) - 1; i++) {
        snprintf(line, sizeof(line), "CHECK a%cb x\n", in[i]);
        ck_assert_msg(parse_s(line, &req, &consumed) == PROTO_REQUEST, "%s: %s", line, req.errmsg);
        ck_assert_uint_eq(req.filter.len, 3);
        ck_assert_int_eq(req.filter.p[1], in[i]);
    }
    ck_assert_int_eq(parse_s("MADD seen:{sku123}:2026-11-27 u1 u2\n", &req, &consumed),
                     PROTO_REQUEST);
    ck_assert_uint_eq(req.filter.len, 24);

    /* FNAME_MAX bytes pass; one more is refused with the rule. */
    char name[FNAME_MAX + 2];
    memset(name, 'n', sizeof(name));
    ck_assert_int_eq(proto_valid_filter_name(name, FNAME_MAX), 1);
    ck_assert_int_eq(proto_valid_filter_name(name, FNAME_MAX + 1), 0);
    snprintf(line, sizeof(line), "CHECK %.*s a\n", FNAME_MAX, name);
    ck_assert_int_eq(parse_s(line, &req, &consumed), PROTO_REQUEST);
    ck_assert_uint_eq(req.filter.len, FNAME_MAX);
    snprintf(line, sizeof(line), "CHECK %.*s a\n", FNAME_MAX + 1, name);
    ck_assert_int_eq(parse_s(line, &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_UNKNOWN_FILTER);
    ck_assert_str_eq(req.errmsg,
                     "invalid filter name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...': use " FNAME_RULE);
    /* Refused bytes: the message shows them, or '?' for what is not printable. */
    ck_assert_int_eq(parse_s("INFO b\x01@d\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_UNKNOWN_FILTER);
    ck_assert_str_eq(req.errmsg, "invalid filter name 'b?@d': use " FNAME_RULE);
    ck_assert_int_eq(parse_s("CHECK caf\xc3\xa9 a\n", &req, &consumed), PROTO_ERROR);
    ck_assert_str_eq(req.errmsg, "invalid filter name 'caf\?\?': use " FNAME_RULE);
    ck_assert_int_eq(parse_s("ADD it's a\n", &req, &consumed), PROTO_ERROR);
    ck_assert_str_eq(req.errmsg, "invalid filter name 'it's': use " FNAME_RULE);
    ck_assert_int_eq(parse_s("CHECK a`b a\n", &req, &consumed), PROTO_ERROR);
    ck_assert_int_eq(req.err, PROTO_ERR_UNKNOWN_FILTER);
}
END_TEST

/* A 64 KiB line arriving one byte at a time: NEED_MORE each time with the hint
 * advanced to the end, then one request. */
START_TEST(test_scan_hint)
{
    const struct proto_limits lim = {.max_line = 65536, .max_item = 65536, .max_items = 1};
    struct proto_token *st = storage_new(&lim);
    char *s = make_line(65536, "\n");
    struct proto_request req;
    size_t consumed, scanned = 0;
    for (size_t n = 1; n <= 65536; n++) {
        ck_assert_int_eq(proto_next(s, n, &lim, &req, st, &consumed, &scanned), PROTO_NEED_MORE);
        ck_assert_uint_eq(scanned, n);
    }
    ck_assert_int_eq(proto_next(s, 65537, &lim, &req, st, &consumed, &scanned), PROTO_REQUEST);
    ck_assert_uint_eq(consumed, 65537);
    ck_assert_uint_eq(scanned, 0);
    ck_assert_uint_eq(req.items[0].len, 65536 - 8);

    /* The hint is trusted, not checked: claiming the LF was already scanned
     * hides it. After a request the hint is back to 0 for the next line, and
     * NULL means scan from the start every time. */
    scanned = 5;
    ck_assert_int_eq(proto_next("PING\n", 5, &lim, &req, st, &consumed, &scanned), PROTO_NEED_MORE);
    scanned = 0;
    ck_assert_int_eq(proto_next("PING\n", 5, &lim, &req, st, &consumed, &scanned), PROTO_REQUEST);
    ck_assert_int_eq(proto_next("PING\n", 5, &lim, &req, st, &consumed, NULL), PROTO_REQUEST);
    free(s);
    free(st);
}
END_TEST

/* ---- garbage ---- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    /* xorshift64*: fixed across platforms, unlike rand(). */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

#define GARBAGE_BYTES (1u << 20)

/* Random bytes. */
static void fill_random(char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)(rng_next() >> 56);
}

/* Fragments of real requests mixed with hostile bytes, so that the request and
 * every error path are reached, not only unknown_command. */
static void fill_soup(char *buf, size_t n)
{
    static const char *const frags[] = {
        "CHECK",  "mcheck", "ADD",  "MADD", "PING",  "INFO",  "FILTERS", "AUTH", "QUIT",
        "RELOAD", "f",      "main", "a",    "xyzzy", " ",     " ",       " ",    "  ",
        "\t",     " \t",    "\n",   "\r\n", "\r",    "bad/f", "\x01",    "\xff",
    };
    size_t nf = sizeof(frags) / sizeof(frags[0]);
    size_t i = 0;
    while (i < n) {
        uint64_t r = rng_next();
        const char *f;
        size_t fl;
        char one;
        if ((r & 63) == 0) { /* now and then a raw byte, NUL included */
            one = (char)(r >> 56);
            f = &one;
            fl = 1;
        } else if ((r & 63) == 1) { /* or a long item */
            size_t run = (size_t)(r >> 40) % 200;
            for (size_t k = 0; k < run && i < n; k++)
                buf[i++] = 'L';
            continue;
        } else {
            f = frags[(r >> 8) % nf];
            fl = strlen(f);
        }
        for (size_t k = 0; k < fl && i < n; k++)
            buf[i++] = f[k];
    }
}

static bool all_printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            return false;
    return true;
}

struct tally {
    size_t by_status[5];
    size_t by_err[PROTO_ERR_COUNT_];
};

/* Parse all of buf like a server that reconnects after every fatal line, and
 * check what every result promises. */
static void parse_garbage(const char *buf, size_t len, const struct proto_limits *lim,
                          struct tally *t)
{
    struct proto_token *st = storage_new(lim);
    size_t off = 0;
    size_t scanned = 0;
    memset(t, 0, sizeof(*t));
    while (off < len) {
        struct proto_request req;
        size_t consumed = 999;
        const char *p = buf + off;
        size_t rem = len - off;
        enum proto_status s = proto_next(p, rem, lim, &req, st, &consumed, &scanned);
        t->by_status[s]++;
        if (s == PROTO_NEED_MORE) {
            ck_assert_uint_eq(consumed, 0);
            ck_assert_uint_le(rem, lim->max_line);
            ck_assert_ptr_null(memchr(p, '\n', rem));
            break;
        }
        if (s == PROTO_FATAL) {
            ck_assert_uint_eq(consumed, 0);
            ck_assert_int_eq(req.err, PROTO_ERR_LINE_TOO_LONG);
            ck_assert_uint_gt(rem, lim->max_line);
            ck_assert_ptr_null(memchr(p, '\n', lim->max_line + 1));
            t->by_err[req.err]++;
            /* The server closes; carry on as a new connection after the next LF. */
            const char *lf = memchr(p, '\n', rem);
            off = lf ? (size_t)(lf - buf) + 1 : len;
            scanned = 0;
            continue;
        }
        /* Progress: a whole line, through its LF, within the limit. */
        ck_assert_uint_gt(consumed, 0);
        ck_assert_uint_le(consumed, rem);
        ck_assert_uint_le(consumed, lim->max_line + 1);
        ck_assert_int_eq(p[consumed - 1], '\n');
        ck_assert_ptr_null(memchr(p, '\n', consumed - 1));
        if (s == PROTO_REQUEST) {
            ck_assert_int_eq(req.err, PROTO_ERR_NONE);
            ck_assert_uint_le(req.n_items, lim->max_items);
            ck_assert_ptr_eq(req.items, st);
            if (req.has_filter)
                ck_assert(proto_valid_filter_name(req.filter.p, req.filter.len));
            for (size_t i = 0; i < req.n_items; i++) {
                struct proto_token it = req.items[i];
                ck_assert_uint_ge(it.len, 1);
                ck_assert_uint_le(it.len, lim->max_item);
                ck_assert(it.p >= p && it.p + it.len <= p + consumed);
                for (size_t k = 0; k < it.len; k++)
                    ck_assert(it.p[k] != ' ' && it.p[k] != '\t' && it.p[k] != '\r' &&
                              it.p[k] != '\n' && it.p[k] != '\0');
            }
        } else if (s == PROTO_ERROR) {
            ck_assert_int_ne(req.err, PROTO_ERR_NONE);
            ck_assert_uint_gt(strlen(req.errmsg), 0);
            ck_assert(all_printable(req.errmsg));
            t->by_err[req.err]++;
        } else {
            ck_assert_int_eq(s, PROTO_EMPTY);
        }
        off += consumed;
    }
    free(st);
}

/* Every command name is upper-case letters (cmd_lookup's case folding relies
 * on it), and a command word matches a name exactly when each byte is that
 * letter in either case: every other byte value at every position is
 * unknown_command. */
START_TEST(test_command_names)
{
    for (int c = PROTO_PING; c <= PROTO_REMOVE; c++) {
        const char *name = proto_cmd_name((enum proto_cmd)c);
        size_t n = strlen(name);
        ck_assert_uint_gt(n, 0);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(name[i] >= 'A' && name[i] <= 'Z', "%s: not A-Z", name);
        for (size_t i = 0; i < n; i++) {
            for (int b = 1; b < 256; b++) {
                if (b == ' ' || b == '\t' || b == '\r' || b == '\n')
                    continue;
                /* Alone, and with 64 bytes to read (the one-pass first line
                 * and, for CHECK, proto_parse_check64). */
                char line[128];
                memset(line, 'x', sizeof(line));
                memcpy(line, name, n);
                line[i] = (char)b;
                memcpy(line + n, " f x\n", 5);
                for (size_t len = n + 5; len <= sizeof(line); len += sizeof(line) - n - 5) {
                    struct proto_request req;
                    size_t used;
                    parse_n(line, len, &lim_std, &req, storage_std, &used);
                    bool same = b == name[i] || b == name[i] - 'A' + 'a';
                    ck_assert_msg((req.err != PROTO_ERR_UNKNOWN_COMMAND) == same,
                                  "%s with byte %d at %zu (%zu bytes): err %s", name, b, i, len,
                                  proto_err_name(req.err));
                    if (same && req.err == PROTO_ERR_NONE)
                        ck_assert_int_eq(req.cmd, c);
                }
            }
        }
    }
}
END_TEST

/* The tokens of a line do not depend on where it sits: alone in the buffer
 * (the LF search and the tokens' 64-byte windows read only the line), with
 * more requests after it (a line shorter than 64 bytes is then read in one
 * pass with its neighbours' bytes masked off), or ended by CR LF. Random
 * lines of 1 to 40 items of 1 to 150 bytes, runs of spaces and tabs between
 * them, against a byte-at-a-time reference. */
START_TEST(test_token_windows)
{
    const struct proto_limits lim = {.max_line = 8192, .max_item = 256, .max_items = 64};
    struct proto_token *st = storage_new(&lim);
    char *line = malloc(8192), *buf = malloc(8192 + 256);
    ck_assert_ptr_nonnull(line);
    ck_assert_ptr_nonnull(buf);
    rng_state = 0x2545F4914F6CDD1Dull;
    for (int round = 0; round < 4000; round++) {
        size_t n = 0;
        const char *seps = " \t";
        size_t lead = rng_next() % 3;
        for (size_t i = 0; i < lead; i++)
            line[n++] = seps[rng_next() % 2];
        memcpy(line + n, "MCHECK f", 8);
        n += 8;
        size_t items = 1 + rng_next() % 40;
        size_t maxlen = rng_next() % 2 ? 8 : 150;
        for (size_t k = 0; k < items; k++) {
            size_t gap = 1 + rng_next() % 3;
            for (size_t i = 0; i < gap; i++)
                line[n++] = seps[rng_next() % 2];
            size_t len = 1 + rng_next() % maxlen;
            for (size_t i = 0; i < len; i++)
                line[n++] = (char)(0x21 + rng_next() % 0x5e); /* '!' to '~' */
        }
        size_t trail = rng_next() % 3;
        for (size_t i = 0; i < trail; i++)
            line[n++] = seps[rng_next() % 2];
        for (int where = 0; where < 3; where++) {
            size_t len = n;
            memcpy(buf, line, n);
            if (where == 2)
                buf[len++] = '\r';
            buf[len++] = '\n';
            if (where == 1) {
                memset(buf + len, 'x', 100);
                memcpy(buf + len, "PING\n", 5);
                len += 100;
            }
            struct proto_request req;
            size_t used;
            enum proto_status got = parse_n(buf, len, &lim, &req, st, &used);
            ck_assert_msg(got == PROTO_REQUEST, "round %d where %d: %s %s", round, where,
                          status_name(got), req.errmsg);
            ck_assert_uint_eq(used, n + 1 + (where == 2));
            ck_assert_tok(req.filter, "f");
            ck_assert_uint_eq(req.n_items, items);
            /* The reference: split line[0..n) at spaces and tabs, byte by byte. */
            size_t i = 0, tok = 0;
            while (i < n) {
                while (i < n && (line[i] == ' ' || line[i] == '\t'))
                    i++;
                if (i == n)
                    break;
                size_t start = i;
                while (i < n && line[i] != ' ' && line[i] != '\t')
                    i++;
                if (tok >= 2) {
                    struct proto_token t = req.items[tok - 2];
                    ck_assert_msg(t.p == buf + start && t.len == i - start,
                                  "round %d where %d item %zu: at %td len %zu, want %zu len %zu",
                                  round, where, tok - 2, t.p - buf, t.len, start, i - start);
                }
                tok++;
            }
            ck_assert_uint_eq(tok, items + 2);
        }
    }
    free(line);
    free(buf);
    free(st);
}
END_TEST

/* A one-item CHECK in the buffer's first 64 bytes is parsed from the first
 * pass's masks (proto_parse_check64); any other line, and every error, by the
 * general path. The two must agree on every line: each made-up line is
 * parsed with 64 bytes to read (the fast path may take it) and again with
 * the resume hint set (the general path only), and the whole request is
 * compared. The lines are CHECKs bent every way the fast path tests: the
 * word's case and bytes, leading, inner and trailing separators, a missing
 * or third token, bad and long filter names, long items, NUL and CR, CR LF,
 * and the limits. */
START_TEST(test_check_fast_path)
{
    static const char name_chars[] = "abcXYZ019_.-:{}/";
    static const char odd_bytes[] = {'"', '\\', '\0', '\r', (char)0x80, (char)0xc3, '\'', '`'};
    static const char *const words[] = {"CHECK",  "check", "ChEcK", "CHECKS",   "CHEC",
                                        "MCHECK", "ADD",   "cHECK", "CHE\x03K", "CHECK\x01"};
    struct proto_token *st = calloc(8, sizeof(*st));
    struct proto_token *st2 = calloc(8, sizeof(*st2));
    ck_assert_ptr_nonnull(st);
    ck_assert_ptr_nonnull(st2);
    char line[160], buf[200];
    rng_state = 0x853C49E6748FEA9Bull;
    unsigned fast_shaped = 0, fast_taken = 0, known_taken = 0;
    for (int round = 0; round < 200000; round++) {
        size_t n = 0;
        struct proto_limits lim = {.max_line = 64 + rng_next() % 2 * 1000,
                                   .max_item = (size_t[]){4, 16, 40, 256}[rng_next() % 4],
                                   .max_items = rng_next() % 8 ? 1 + rng_next() % 8 : 0};
        if (rng_next() % 8 == 0)
            line[n++] = rng_next() % 2 ? ' ' : '\t';
        const char *w = words[rng_next() % 3 ? rng_next() % 3 : rng_next() % 10];
        memcpy(line + n, w, strlen(w));
        n += strlen(w);
        size_t toks = rng_next() % 8 ? 2 : rng_next() % 4;
        for (size_t t = 0; t < toks; t++) {
            size_t gap = rng_next() % 16 ? 1 : 1 + rng_next() % 3;
            for (size_t i = 0; i < gap; i++)
                line[n++] = rng_next() % 4 ? ' ' : '\t';
            size_t len = rng_next() % 8 ? 1 + rng_next() % 12 : rng_next() % 70;
            for (size_t i = 0; i < len && n < 150; i++)
                line[n++] = t == 0 ? name_chars[rng_next() % (sizeof(name_chars) - 1)]
                                   : (char)(0x21 + rng_next() % 0x5e);
        }
        if (rng_next() % 8 == 0)
            line[n++] = rng_next() % 2 ? ' ' : '\t';
        if (n > 0 && rng_next() % 6 == 0) /* one odd byte anywhere */
            line[rng_next() % n] = odd_bytes[rng_next() % sizeof(odd_bytes)];
        if (rng_next() % 4 == 0)
            line[n++] = '\r';
        line[n++] = '\n';
        if (memchr(line, '\n', n - 1) || line[0] == '\n')
            continue;
        fast_shaped += n <= 64;
        memcpy(buf, line, n);
        memset(buf + n, 'x', sizeof(buf) - n); /* 64 bytes to read whatever n is */
        struct proto_request a, b;
        size_t used_a, used_b, scan_a = 0, scan_b = 1; /* byte 0 is no LF */
        enum proto_status sa = proto_next(buf, sizeof(buf), &lim, &a, st, &used_a, &scan_a);
        enum proto_status sb = proto_next(buf, sizeof(buf), &lim, &b, st2, &used_b, &scan_b);
        ck_assert_msg(sa == sb && used_a == used_b && a.err == b.err &&
                          strcmp(a.errmsg, b.errmsg) == 0,
                      "round %d '%.*s': %s %zu %s '%s' against %s %zu %s '%s'", round, (int)n - 1,
                      line, status_name(sa), used_a, proto_err_name(a.err), a.errmsg,
                      status_name(sb), used_b, proto_err_name(b.err), b.errmsg);
        /* The line front's own entry to the fast path, without a request,
         * given no known name, a made-up valid one, or the line's own. */
        struct proto_token fname, fitem, kn;
        char kbuf[8];
        size_t used_f = 0, klen = 1 + rng_next() % 6;
        for (size_t i = 0; i < klen; i++)
            kbuf[i] = name_chars[rng_next() % (sizeof(name_chars) - 1)];
        kn = (struct proto_token){kbuf, klen};
        unsigned pick = rng_next() % 3;
        if (pick == 2 && sb == PROTO_REQUEST && b.has_filter)
            kn = b.filter;
        const struct proto_token *known = pick ? &kn : NULL;
        bool is_known = false;
        if (proto_check_fast(buf, sizeof(buf), &lim, 0, known, &fname, &fitem, &used_f,
                             &is_known)) {
            fast_taken++;
            known_taken += is_known;
            ck_assert_msg(sb == PROTO_REQUEST && b.cmd == PROTO_CHECK && b.n_items == 1 &&
                              used_f == used_b && fname.p == b.filter.p &&
                              fname.len == b.filter.len && fitem.p == st2[0].p &&
                              fitem.len == st2[0].len,
                          "round %d '%.*s': proto_check_fast differs from the general path", round,
                          (int)n - 1, line);
            ck_assert(is_known == (known && known->len == fname.len &&
                                   memcmp(known->p, fname.p, fname.len) == 0));
        }
        ck_assert(!proto_check_fast(buf, sizeof(buf), &lim, 1, known, &fname, &fitem, &used_f,
                                    &is_known));
        if (sa != PROTO_REQUEST)
            continue;
        ck_assert_msg(a.cmd == b.cmd && a.has_filter == b.has_filter && a.filter.p == b.filter.p &&
                          a.filter.len == b.filter.len && a.arg.p == b.arg.p &&
                          a.arg.len == b.arg.len && a.n_items == b.n_items,
                      "round %d '%.*s': the requests differ", round, (int)n - 1, line);
        for (size_t i = 0; i < a.n_items; i++)
            ck_assert_msg(st[i].p == st2[i].p && st[i].len == st2[i].len,
                          "round %d '%.*s': item %zu differs", round, (int)n - 1, line, i);
    }
    ck_assert_uint_gt(fast_shaped, 100000); /* most lines were short enough to try */
    ck_assert_uint_gt(fast_taken, 20000);   /* and many were taken */
    ck_assert_uint_gt(known_taken, 5000);   /* some by the known name */
    free(st);
    free(st2);
}
END_TEST

START_TEST(test_garbage_random)
{
    const struct proto_limits lim = {.max_line = 512, .max_item = 32, .max_items = 4};
    char *buf = malloc(GARBAGE_BYTES);
    ck_assert_ptr_nonnull(buf);
    rng_state = 0x9E3779B97F4A7C15ull;
    fill_random(buf, GARBAGE_BYTES);
    struct tally t;
    parse_garbage(buf, GARBAGE_BYTES, &lim, &t);
    /* Lines of random bytes almost all hold a NUL or a stray CR. */
    ck_assert_uint_gt(t.by_err[PROTO_ERR_BAD_REQUEST], 1000);
    ck_assert_uint_gt(t.by_status[PROTO_FATAL], 0);
    free(buf);
}
END_TEST

START_TEST(test_garbage_soup)
{
    const struct proto_limits lim = {.max_line = 512, .max_item = 32, .max_items = 4};
    char *buf = malloc(GARBAGE_BYTES);
    ck_assert_ptr_nonnull(buf);
    rng_state = 0xD1B54A32D192ED03ull;
    fill_soup(buf, GARBAGE_BYTES);
    struct tally t;
    parse_garbage(buf, GARBAGE_BYTES, &lim, &t);
    ck_assert_uint_gt(t.by_status[PROTO_REQUEST], 100);
    ck_assert_uint_gt(t.by_status[PROTO_EMPTY], 100);
    enum proto_err parser_errs[] = {PROTO_ERR_UNKNOWN_COMMAND, PROTO_ERR_WRONG_ARITY,
                                    PROTO_ERR_UNKNOWN_FILTER,  PROTO_ERR_ITEM_TOO_LONG,
                                    PROTO_ERR_TOO_MANY_ITEMS,  PROTO_ERR_BAD_REQUEST};
    for (size_t i = 0; i < sizeof(parser_errs) / sizeof(parser_errs[0]); i++)
        ck_assert_msg(t.by_err[parser_errs[i]] > 0, "%s never reached",
                      proto_err_name(parser_errs[i]));
    free(buf);
}
END_TEST

/* The soup in random-sized pieces through a connection buffer gives the same
 * results as the whole of it at once. */
START_TEST(test_garbage_chunks)
{
    const struct proto_limits lim = {.max_line = 4096, .max_item = 32, .max_items = 4};
    const size_t n = 64 * 1024;
    char *buf = malloc(n);
    ck_assert_ptr_nonnull(buf);
    rng_state = 0x243F6A8885A308D3ull;
    fill_soup(buf, n);
    struct proto_token *st = storage_new(&lim);
    size_t log_cap = 16u << 20;

    struct conn whole, pieces;
    conn_init(&whole, n, log_cap, true);
    conn_feed(&whole, buf, n, &lim, st);
    conn_init(&pieces, n, log_cap, true);
    size_t off = 0;
    while (off < n) {
        size_t k = (size_t)(rng_next() % 97);
        if (k > n - off)
            k = n - off;
        conn_feed(&pieces, buf + off, k, &lim, st);
        off += k;
    }
    ck_assert_uint_gt(strlen(whole.log), 1000);
    ck_assert(strcmp(whole.log, pieces.log) == 0);
    ck_assert_uint_eq(whole.len, pieces.len);
    conn_free(&whole);
    conn_free(&pieces);
    free(st);
    free(buf);
}
END_TEST

/* ---- replies ---- */

START_TEST(test_format_error)
{
    char out[128];
    size_t n = proto_format_error(out, sizeof(out), PROTO_ERR_WRONG_ARITY, "bad\r\nline\tx\x01y");
    ck_assert_uint_eq(n, strlen("ERR wrong_arity bad  line x?y\n"));
    ck_assert_mem_eq(out, "ERR wrong_arity bad  line x?y\n", n);

    static const char want[] = "ERR reload_failed /etc/caf\xc3\xa9: gone \n";
    n = proto_format_error(out, sizeof(out), PROTO_ERR_RELOAD_FAILED, "/etc/caf\xc3\xa9: gone\n");
    ck_assert_uint_eq(n, sizeof(want) - 1);
    ck_assert_mem_eq(out, want, n);

    n = proto_format_error(out, sizeof(out), PROTO_ERR_INTERNAL, NULL);
    ck_assert_uint_eq(n, 13);
    ck_assert_mem_eq(out, "ERR internal\n", 13);
    n = proto_format_error(out, sizeof(out), PROTO_ERR_INTERNAL, "");
    ck_assert_uint_eq(n, 13);

    /* Too small: nothing written, the size needed returned; exactly enough: written. */
    memset(out, 'Z', sizeof(out));
    n = proto_format_error(out, 20, PROTO_ERR_LINE_TOO_LONG, "line longer than 8 bytes");
    ck_assert_uint_eq(n, 43);
    for (size_t i = 0; i < sizeof(out); i++)
        ck_assert_int_eq(out[i], 'Z');
    n = proto_format_error(out, 43, PROTO_ERR_LINE_TOO_LONG, "line longer than 8 bytes");
    ck_assert_mem_eq(out, "ERR line_too_long line longer than 8 bytes\n", 43);
    ck_assert_int_eq(out[43], 'Z');

    /* Every message the parser makes goes out as one line. */
    struct proto_request req;
    size_t consumed;
    ck_assert_int_eq(parse_s("N\x0d\x0a", &req, &consumed), PROTO_ERROR);
    n = proto_format_error(out, sizeof(out), req.err, req.errmsg);
    ck_assert_mem_eq(out, "ERR unknown_command unknown command 'N'\n", n);
    ck_assert_ptr_eq(memchr(out, '\n', n), out + n - 1);
}
END_TEST

START_TEST(test_format_bools)
{
    char out[64];
    bool v[] = {true, false, true};
    size_t n = proto_format_bools(out, sizeof(out), v, 3, "YES", "NO");
    ck_assert_uint_eq(n, 11);
    ck_assert_mem_eq(out, "YES NO YES\n", 11);

    bool e[] = {false, false, false, false};
    n = proto_format_bools(out, PROTO_BOOLS_CAP(4), e, 4, "NEW", "EXISTS");
    ck_assert_uint_eq(n, 28);
    ck_assert_mem_eq(out, "EXISTS EXISTS EXISTS EXISTS\n", 28);

    /* REMOVED, the longest word, is what PROTO_BOOLS_CAP is sized for. */
    bool r[] = {true, true, true, true};
    n = proto_format_bools(out, PROTO_BOOLS_CAP(4), r, 4, "REMOVED", "ABSENT");
    ck_assert_uint_eq(n, 32);
    ck_assert_mem_eq(out, "REMOVED REMOVED REMOVED REMOVED\n", 32);

    n = proto_format_bools(out, sizeof(out), v + 1, 1, "NEW", "EXISTS");
    ck_assert_mem_eq(out, "EXISTS\n", 7);
    ck_assert_uint_eq(n, 7);

    n = proto_format_bools(out, sizeof(out), v, 0, "YES", "NO");
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(out[0], '\n');

    memset(out, 'Z', sizeof(out));
    n = proto_format_bools(out, 10, v, 3, "YES", "NO");
    ck_assert_uint_eq(n, 11);
    for (size_t i = 0; i < sizeof(out); i++)
        ck_assert_int_eq(out[i], 'Z');
}
END_TEST

/* The padded-word path (8 bytes to spare) and the byte path (exactly enough
 * room) give the same reply, and neither writes past cap. */
START_TEST(test_format_bools_paths)
{
    static const char *words[][2] = {{"YES", "NO"}, {"NEW", "EXISTS"}, {"1", "0"}};
    bool v[300];
    char fast[300 * 8 + 64], slow[300 * 8 + 64];
    unsigned seed = 7;
    for (size_t w = 0; w < 3; w++) {
        for (size_t n = 1; n <= 300; n += (n < 20 ? 1 : 37)) {
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                v[i] = (seed >> 16) & 1;
            }
            memset(fast, 'Z', sizeof(fast));
            memset(slow, 'Z', sizeof(slow));
            size_t need = proto_format_bools(slow, 0, v, n, words[w][0], words[w][1]);
            size_t cap = need + 8;
            ck_assert_uint_eq(proto_format_bools(fast, cap, v, n, words[w][0], words[w][1]), need);
            ck_assert_uint_eq(proto_format_bools(slow, need, v, n, words[w][0], words[w][1]), need);
            ck_assert_mem_eq(fast, slow, need);
            ck_assert_int_eq(fast[need - 1], '\n');
            for (size_t i = cap; i < sizeof(fast); i++)
                ck_assert_int_eq(fast[i], 'Z');
            for (size_t i = need; i < sizeof(slow); i++)
                ck_assert_int_eq(slow[i], 'Z');
        }
    }
}
END_TEST

START_TEST(test_names)
{
    static const char *const want[] = {
        "none",          "unknown_command", "wrong_arity",          "unknown_filter",
        "item_too_long", "too_many_items",  "auth_required",        "auth_failed",
        "exists",        "configured",      "limit",                "bad_option",
        "no_state_dir",  "failed",          "line_too_long", "bad_request",     "too_many_connections", "internal",
        "reload_failed", "bad_item",       "wrong_kind",           "text_too_long",
    };
    ck_assert_uint_eq(sizeof(want) / sizeof(want[0]), PROTO_ERR_COUNT_);
    for (int i = 0; i < PROTO_ERR_COUNT_; i++)
        ck_assert_str_eq(proto_err_name((enum proto_err)i), want[i]);
    ck_assert_str_eq(proto_err_name(PROTO_ERR_COUNT_), "internal");
    ck_assert_str_eq(proto_err_name((enum proto_err)(PROTO_ERR_COUNT_ + 7)), "internal");

    static const char *const cmds[] = {"PING",    "CHECK", "MCHECK", "ADD",    "MADD", "INFO",
                                       "FILTERS", "AUTH",  "QUIT",   "RELOAD", "MATCH"};
    for (int i = 0; i <= PROTO_MATCH; i++)
        ck_assert_str_eq(proto_cmd_name((enum proto_cmd)i), cmds[i]);
}
END_TEST

/* SCAN <filter> <text>: the text is the rest of the line after one
 * separator, its spaces, tabs and leading blanks kept, a CR before the LF
 * not; no text is wrong_arity, a bad name unknown_filter. */
START_TEST(test_scan_text)
{
    struct proto_request r;
    size_t used;
    ck_assert_int_eq(parse_s("SCAN f  two\tword s \r\n", &r, &used), PROTO_REQUEST);
    ck_assert_int_eq(r.cmd, PROTO_SCAN);
    ck_assert_tok(r.filter, "f");
    ck_assert_tok(r.arg, " two\tword s ");
    ck_assert_uint_eq(r.n_items, 0);
    ck_assert_uint_eq(used, strlen("SCAN f  two\tword s \r\n"));
    ck_assert_int_eq(parse_s("scan\tf x\n", &r, &used), PROTO_REQUEST);
    ck_assert_tok(r.arg, "x");
    ck_assert_int_eq(parse_s("SCAN f\n", &r, &used), PROTO_ERROR);
    ck_assert_int_eq(r.err, PROTO_ERR_WRONG_ARITY);
    ck_assert_int_eq(parse_s("SCAN f \n", &r, &used), PROTO_ERROR);
    ck_assert_int_eq(r.err, PROTO_ERR_WRONG_ARITY);
    ck_assert_int_eq(parse_s("SCAN\n", &r, &used), PROTO_ERROR);
    ck_assert_int_eq(r.err, PROTO_ERR_WRONG_ARITY);
    ck_assert_int_eq(parse_s("SCAN f\"x text\n", &r, &used), PROTO_ERROR);
    ck_assert_int_eq(r.err, PROTO_ERR_UNKNOWN_FILTER);
    ck_assert_int_eq(parse_s("SCAN f a\rb\n", &r, &used), PROTO_ERROR);
    ck_assert_int_eq(r.err, PROTO_ERR_BAD_REQUEST);
}
END_TEST

static Suite *proto_suite(void)
{
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("parse");
    tcase_set_timeout(tc, 120); /* 200,000 fast-path lines: slow under ASan on a busy machine */
    tcase_add_loop_test(tc, test_arity, 0, (int)N_ARITY_CASES);
    tcase_add_test(tc, test_fields);
    tcase_add_test(tc, test_scan_text);
    tcase_add_test(tc, test_context_words);
    tcase_add_test(tc, test_match);
    tcase_add_test(tc, test_case_insensitive);
    tcase_add_test(tc, test_crlf);
    tcase_add_test(tc, test_whitespace);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_sequence);
    tcase_add_test(tc, test_split_every_boundary);
    tcase_add_test(tc, test_max_line);
    tcase_add_test(tc, test_max_item);
    tcase_add_test(tc, test_max_items);
    tcase_add_test(tc, test_nul);
    tcase_add_test(tc, test_unknown_command);
    tcase_add_test(tc, test_filter_name);
    tcase_add_test(tc, test_scan_hint);
    tcase_add_test(tc, test_command_names);
    tcase_add_test(tc, test_token_windows);
    tcase_add_test(tc, test_check_fast_path);
    suite_add_tcase(s, tc);

    TCase *tg = tcase_create("garbage");
    tcase_set_timeout(tg, 120); /* sanitizer builds are slow; this is not a timing test */
    tcase_add_test(tg, test_garbage_random);
    tcase_add_test(tg, test_garbage_soup);
    tcase_add_test(tg, test_garbage_chunks);
    suite_add_tcase(s, tg);

    TCase *tr = tcase_create("reply");
    /* test_format_bools_paths ran past Check's default 4 s under ASan on a
     * loaded 2-core machine (load average 15): not a timing test either. */
    tcase_set_timeout(tr, 120);
    tcase_add_test(tr, test_format_error);
    tcase_add_test(tr, test_format_bools);
    tcase_add_test(tr, test_format_bools_paths);
    tcase_add_test(tr, test_names);
    suite_add_tcase(s, tr);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(proto_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
