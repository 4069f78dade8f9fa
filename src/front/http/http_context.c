/* The request context over HTTP (docs/http-api.md, "The request context"):
 * the `type`, `from` and `method` of GET .../check's query and of POST
 * .../check's JSON (the body's defaults, or an item object's own), and the
 * answers of an adblock filter, which name the rule and the exception that
 * decided. Every filter takes a context and refuses a bad one; only an
 * adblock filter reads it (core/cmd_adblock.c). Worker thread; never
 * blocks. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adblock/adblock.h"
#include "front/http/http_int.h"

static const char *const field_names[] = {"type", "from", "method"};

/* v[0..n) for a message: at most 64 bytes, anything but printable ASCII as
 * '?' (the value may be any bytes: a query is decoded before it is read). */
static void shown(const char *v, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && i < 64 && k + 1 < cap; i++)
        out[k++] = v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '?';
    out[k] = '\0';
}

/* Any worker thread; pure but for the error text. The words and their
 * meaning are the line protocol's (adblock_context_word): a type is an
 * Adblock type or a Sec-Fetch-Dest value, a method one of $method='s. */
int http_ctx_set(struct cmd_ctx *c, enum http_ctx_field f, const char *v, size_t n, char *err,
                 size_t errlen)
{
    char s[72];
    int t;
    switch (f) {
    case HTTP_CTX_TYPE:
        if ((t = adblock_fetch_dest_parse(v, n)) < 0)
            break;
        c->type = t;
        return 0;
    case HTTP_CTX_FROM:
        if (n == 0)
            break;
        c->from = v;
        c->from_len = n;
        return 0;
    case HTTP_CTX_METHOD:
        if ((t = adblock_method_parse(v, n)) < 0)
            break;
        c->method = t;
        return 0;
    }
    shown(v, n, s, sizeof(s));
    snprintf(err, errlen, "bad %s '%s': %s", field_names[f], s,
             f == HTTP_CTX_TYPE   ? "not a request type (document, script, image, xhr, ...)"
             : f == HTTP_CTX_FROM ? "from needs the page's URL"
                                  : "not an HTTP method");
    return -1;
}

/* Worker thread. Missing keys leave c as it is (the body's defaults for an
 * item object); null clears a field, so an item can say "no page" where the
 * body gave one. */
int http_ctx_json(const json_t *obj, struct cmd_ctx *c, char *err, size_t errlen)
{
    for (int f = HTTP_CTX_TYPE; f <= HTTP_CTX_METHOD; f++) {
        json_t *v = json_object_get(obj, field_names[f]);
        if (!v)
            continue;
        if (json_is_null(v)) { /* none, over a default */
            if (f == HTTP_CTX_FROM) {
                c->from = NULL;
                c->from_len = 0;
            } else if (f == HTTP_CTX_TYPE) {
                c->type = -1;
            } else {
                c->method = -1;
            }
            continue;
        }
        if (!json_is_string(v)) {
            snprintf(err, errlen, "\"%s\" must be a string or null", field_names[f]);
            return -1;
        }
        if (http_ctx_set(c, (enum http_ctx_field)f, json_string_value(v), json_string_length(v),
                         err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Worker thread. An unknown key is refused rather than ignored (unlike the
 * body's): the form is new, and a misspelt "from" would silently change the
 * verdict. */
int http_item_object(const json_t *v, size_t i, struct cmd_ctx *c, struct filter_key *k,
                     enum http_err *code, char *err, size_t errlen)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        if (strcmp(key, "item") != 0 && strcmp(key, "type") != 0 && strcmp(key, "from") != 0 &&
            strcmp(key, "method") != 0) {
            char s[72];
            shown(key, strlen(key), s, sizeof(s));
            *code = HTTP_ERR_BAD_REQUEST;
            snprintf(err, errlen,
                     "item %zu: unknown key '%s' (an item object has item, type, "
                     "from, method)",
                     i + 1, s);
            return -1;
        }
    }
    json_t *item = json_object_get(v, "item");
    if (!json_is_string(item)) {
        *code = HTTP_ERR_NOT_A_STRING;
        snprintf(err, errlen, "item %zu: an item object needs \"item\": <string>", i + 1);
        return -1;
    }
    char why[192];
    if (http_ctx_json(v, c, why, sizeof(why)) != 0) {
        *code = HTTP_ERR_BAD_REQUEST;
        snprintf(err, errlen, "item %zu: %s", i + 1, why);
        return -1;
    }
    k->data = json_string_value(item);
    k->len = json_string_length(item);
    return 0;
}

/* Any thread. The rules come from lists, which nothing forces to be UTF-8;
 * an answer must stay JSON whatever they hold. */
char *http_put_json_text(char *p, const char *s, size_t len)
{
    if (httpparse_utf8_valid(s, len))
        return put_json_escaped(p, s, len);
    /* Lists are text, but not always UTF-8: a byte that is not part of a
     * valid sequence is written U+FFFD, so the answer stays JSON. */
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        size_t n = ch < 0x80 ? 1 : ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2;
        if (ch < 0x80) {
            p = put_json_escaped(p, s + i, 1);
        } else if (n <= len - i && httpparse_utf8_valid(s + i, n)) {
            p = put(p, s + i, n);
            i += n - 1;
        } else {
            p = PUT_LIT(p, "\\ufffd");
        }
    }
    return p;
}

/* "text" or null, as JSON. p has room for 6 * len + 4. */
static char *put_text_or_null(char *p, const char *s, size_t len)
{
    if (!s)
        return PUT_LIT(p, "null");
    *p++ = '"';
    p = http_put_json_text(p, s, len);
    *p++ = '"';
    return p;
}

/* Worker thread, right after the call (its match and except may point into
 * the thread's scratch). "allowed" as for other filters: an exception
 * turned the answer to false. */
char *http_put_adblock_answer(char *p, const struct cmd_call *call)
{
    bool allowed = call->except && call->yes == 0;
    p = call->yes ? PUT_LIT(p, ",\"present\":true") : PUT_LIT(p, ",\"present\":false");
    if (allowed)
        p = PUT_LIT(p, ",\"allowed\":true");
    p = PUT_LIT(p, ",\"rule\":");
    p = put_text_or_null(p, call->match, call->match_len);
    p = PUT_LIT(p, ",\"exception\":");
    return put_text_or_null(p, call->except, call->except_len);
}

/* A growing piece of the batch answer: the inside of one JSON array. */
struct piece {
    char *p;
    size_t len, cap;
};

static char *piece_room(struct piece *b, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            return NULL;
        b->p = np;
        b->cap = cap;
    }
    return b->p + b->len;
}

/* Append ["," ]"text" or null to b; -1 when memory runs out. */
static int piece_text(struct piece *b, bool first, const char *s, size_t len)
{
    char *p = piece_room(b, 6 * len + 8);
    if (!p)
        return -1;
    char *q = p;
    if (!first)
        *q++ = ',';
    q = put_text_or_null(q, s, len);
    b->len += (size_t)(q - p);
    return 0;
}

/* Append ["," ]true or false to b; -1 when memory runs out. */
static int piece_bool(struct piece *b, bool first, bool v)
{
    char *p = piece_room(b, 8);
    if (!p)
        return -1;
    char *q = p;
    if (!first)
        *q++ = ',';
    q = v ? PUT_LIT(q, "true") : PUT_LIT(q, "false");
    b->len += (size_t)(q - p);
    return 0;
}

/* An array's inside (nothing for an empty one, whose buffer is NULL). */
static char *put_piece(char *p, const struct piece *b)
{
    return b->len ? put(p, b->p, b->len) : p;
}

/* The four arrays of a batch answer as they grow. */
struct batch_answer {
    struct piece present, allowed, rules, excepts;
    size_t n_allowed;
    bool oom;
};

/* cmd_item_named_fn for the batch call: item i's answer appended while its
 * rule and exception are still good. Worker thread, inside cmd_run. */
static void batch_named(void *arg, size_t i, bool yes, const char *rule, size_t rule_len,
                        const char *except, size_t except_len)
{
    struct batch_answer *a = arg;
    bool exc = except && !yes;
    a->n_allowed += exc;
    if (!a->oom)
        a->oom = piece_bool(&a->present, i == 0, yes) != 0 ||
                 piece_bool(&a->allowed, i == 0, exc) != 0 ||
                 piece_text(&a->rules, i == 0, rule, rule_len) != 0 ||
                 piece_text(&a->excepts, i == 0, except, except_len) != 0;
}

static void batch_free(struct batch_answer *a)
{
    free(a->present.p);
    free(a->allowed.p);
    free(a->rules.p);
    free(a->excepts.p);
}

/* Worker thread. One call through the table for the whole batch, each item
 * with its own context (as the line protocol's MCHECK); the table keeps
 * the rule and the exception of one-item calls only (they may point into
 * the thread's scratch), so each item's are copied into the answer by
 * batch_named before the next item is looked up. The items are
 * env->keys[0..n); ctxs, when not NULL, their contexts, else every item has
 * *dflt. */
void http_adblock_batch(struct hreq *r, const struct fentry *e, size_t n,
                        const struct cmd_ctx *dflt, const struct cmd_ctx *ctxs)
{
    struct cmd_env *env = &r->h->cw.env;
    struct batch_answer a = {{NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, 0, false};
    struct cmd_call call;
    cmd_call_init(&call, r->cat, e, n, r->c->loopback, CMD_CRED_NONE);
    call.ctx = *dflt;
    call.item_ctx = ctxs;
    call.named = batch_named;
    call.named_arg = &a;
    cmd_run(env, CMD_CHECK, NULL, &call);
    if (call.err != CMD_OK) {
        batch_free(&a);
        http_cmd_error(r, &call);
        return;
    }
    size_t cap = e->name_len + 96 + a.present.len + a.allowed.len + a.rules.len + a.excepts.len;
    char *body = a.oom ? NULL : malloc(cap);
    if (body) {
        char *p = PUT_LIT(body, "{\"filter\":\"");
        p = put(p, e->name, e->name_len);
        p = PUT_LIT(p, "\",\"present\":[");
        p = put_piece(p, &a.present);
        if (a.n_allowed) {
            p = PUT_LIT(p, "],\"allowed\":[");
            p = put_piece(p, &a.allowed);
        }
        p = PUT_LIT(p, "],\"rules\":[");
        p = put_piece(p, &a.rules);
        p = PUT_LIT(p, "],\"exceptions\":[");
        p = put_piece(p, &a.excepts);
        p = PUT_LIT(p, "]}");
        http_respond(r, 200, CT_JSON, body, (size_t)(p - body));
        free(body);
    } else {
        http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
    }
    batch_free(&a);
}
