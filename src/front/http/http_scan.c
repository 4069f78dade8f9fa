/* POST /v1/filters/{name}/scan (docs/http-api.md): a words filter's SCAN.
 * The text is the body as sent (any Content-Type but JSON), or the "text"
 * of a JSON body; the command table's SCAN (core/cmd_words.c) finds the
 * matches, this file reads the request and writes the answer, with the
 * text masked when asked. Worker thread that owns the connection. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/http/http_int.h"
#include "words/words.h"

/* The mask option: one ASCII character (printable, not a space), from the
 * query's mask= or the JSON body's "mask". 0 with *mask set (0: none), or
 * -1 after an answer. */
static int read_mask(struct hreq *r, const json_t *root, char *mask)
{
    char err[160];
    char *q = NULL;
    const char *m = NULL;
    size_t mlen = 0;
    *mask = 0;
    json_t *jm = root ? json_object_get(root, "mask") : NULL;
    if (jm && !json_is_null(jm)) {
        if (!json_is_string(jm)) {
            http_reply_error(r, HTTP_ERR_NOT_A_STRING, "\"mask\" must be a string");
            return -1;
        }
        m = json_string_value(jm);
        mlen = json_string_length(jm);
    } else if (r->hd->query) {
        struct httpparse_param ps[] = {{.name = "mask"}};
        if (!(q = malloc(r->hd->query_len + 1))) {
            http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
            return -1;
        }
        if (httpparse_query_params(r->hd->query, r->hd->query_len, ps, 1, q, err, sizeof(err)) !=
            0) {
            free(q);
            http_reply_error(r, HTTP_ERR_BAD_REQUEST, "%s", err);
            return -1;
        }
        m = ps[0].value;
        mlen = ps[0].len;
    }
    if (m && (mlen != 1 || m[0] <= ' ' || m[0] > '~')) {
        free(q);
        http_reply_error(r, HTTP_ERR_BAD_REQUEST,
                         "mask must be one printable ASCII character (e.g. mask=*)");
        return -1;
    }
    if (m)
        *mask = m[0];
    free(q);
    return 0;
}

/* The answer: {"blocked":B,"matches":[{"word":W,"start":S,"end":E}...],
 * "capped":C[,"masked":T]}. Words are UTF-8 (the list refuses others). */
static void reply_scan(struct hreq *r, const struct cmd_call *call, char mask)
{
    json_t *o = json_object(), *arr = json_array();
    json_object_set_new(o, "blocked", json_boolean(call->n_matches > 0));
    for (size_t i = 0; i < call->n_matches; i++) {
        size_t wl;
        const char *w = cmd_scan_word(call, i, &wl);
        json_array_append_new(arr, json_pack("{s:s%,s:I,s:I}", "word", w, wl, "start",
                                             (json_int_t)call->matches[i].start, "end",
                                             (json_int_t)call->matches[i].end));
    }
    json_object_set_new(o, "matches", arr);
    json_object_set_new(o, "capped", json_boolean(call->capped));
    if (mask) {
        char *out = malloc(call->text_len + 1);
        if (!out) {
            json_decref(o);
            http_reply_error(r, HTTP_ERR_INTERNAL, "out of memory");
            return;
        }
        size_t n = words_mask(call->text, call->text_len, call->matches, call->n_matches, mask,
                              false, out);
        json_object_set_new(o, "masked", json_stringn(out, n));
        free(out);
    }
    http_reply_json(r, 200, o);
}

void http_scan(struct hreq *r, const struct http_filter_verb *v, const struct fentry *e)
{
    json_t *root = NULL;
    const char *text = r->body_len ? r->body : "";
    size_t len = r->body_len;
    if (r->hd->json_type) {
        json_error_t jerr;
        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
            http_reply_error(r, HTTP_ERR_BAD_JSON, "line %d column %d: %s", jerr.line, jerr.column,
                             jerr.text);
            return;
        }
        json_t *t = json_is_object(root) ? json_object_get(root, "text") : NULL;
        if (!json_is_string(t)) {
            json_decref(root);
            http_reply_error(r, HTTP_ERR_MISSING_ITEMS,
                             "the JSON body must be {\"text\": <string>}");
            return;
        }
        text = json_string_value(t);
        len = json_string_length(t);
    }
    char mask;
    if (read_mask(r, root, &mask) != 0) {
        json_decref(root);
        return;
    }
    /* A masked text goes back in a JSON string: it must be UTF-8. */
    if (mask && !httpparse_utf8_valid(text, len)) {
        json_decref(root);
        http_reply_error(r, HTTP_ERR_BAD_REQUEST, "mask needs a text in UTF-8");
        return;
    }
    struct cmd_call call;
    cmd_call_init(&call, r->cat, e, 0, r->c->loopback, CMD_CRED_NONE);
    call.text = text;
    call.text_len = len;
    cmd_run(&r->h->cw.env, v->id, NULL, &call);
    if (call.err != CMD_OK)
        http_cmd_error(r, &call);
    else
        reply_scan(r, &call, mask);
    json_decref(root);
}
