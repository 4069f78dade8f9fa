/* fuzz_json_items: the JSON bodies of POST /v1/filters/NAME/check and /add,
 * read as the HTTP API reads them: jansson's json_loadb with JSON_ALLOW_NUL
 * and JSON_REJECT_DUPLICATES,
 * then the shape the API accepts, {"items": [<string>, ...]}, each string at
 * most max_item bytes (the API's other limit, max_items, is a count).
 *
 * The API's own checks are static in src/front/http/http_api.c (do_items_post and
 * json_elements_upper_bound), so this harness states them instead of calling
 * them; once they are a pure function (say http_items_parse) it should call
 * that. What it checks: jansson never fails without a reason; every accepted
 * item is valid UTF-8 by httpparse_utf8_valid (the API's replies and logs
 * rely on it) and has the length jansson reports; a body that parses dumps
 * and parses back to an equal value. The request context of a check
 * (http_context.c: the body's type/from/method, and items that are objects)
 * is read by the API's own functions: a type and a method are known words or
 * none, a page is a non-empty string of the body, an item object's item is
 * its "item" string, and a refusal has a reason and a 400 code.
 *
 * Input: the body, as is. */
#include "config.h"

#include <jansson.h>

#include "adblock/adblock.h"
#include "front/http/http_int.h"
#include "front/http/httpparse.h"
#include "fuzz.h"

#define MAX_ITEM 8192 /* conf's default max_item */

/* A context as http_context.c may leave it. */
static void check_ctx(const struct cmd_ctx *c)
{
    FUZZ_CHECK(c->type >= -1 && c->type < ADBLOCK_TYPE_COUNT, "type %d", c->type);
    FUZZ_CHECK(c->method >= -1 && c->method < ADBLOCK_METHOD_COUNT, "method %d", c->method);
    FUZZ_CHECK((c->from == NULL) == (c->from_len == 0), "from %p of %zu bytes", (void *)c->from,
               c->from_len);
    FUZZ_CHECK(!c->from || c->from[c->from_len] == '\0', "from is not a whole JSON string");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = fuzz_dup(data, size);
    json_error_t jerr;
    json_t *root = json_loadb(size ? body : "", size, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        FUZZ_CHECK(jerr.text[0] != '\0', "json_loadb failed without a reason");
        FUZZ_CHECK(memchr(jerr.text, '\0', sizeof(jerr.text)) != NULL, "reason not terminated");
        free(body);
        return 0;
    }
    json_t *items = json_is_object(root) ? json_object_get(root, "items") : NULL;
    if (json_is_array(items)) {
        size_t n = json_array_size(items);
        FUZZ_CHECK(n <= size, "%zu items from %zu bytes", n, size);
        for (size_t i = 0; i < n; i++) {
            json_t *v = json_array_get(items, i);
            if (!json_is_string(v))
                break; /* the API answers 400 not_a_string */
            size_t len = json_string_length(v);
            const char *s = json_string_value(v);
            FUZZ_CHECK(s != NULL && s[len] == '\0', "string not terminated at its length");
            FUZZ_CHECK(httpparse_utf8_valid(s, len), "item %zu is not valid UTF-8", i);
            if (len > MAX_ITEM)
                break; /* the API answers 400 item_too_long */
        }
    }
    /* The context: the body's defaults, then each item object over them. */
    if (json_is_array(items)) {
        struct cmd_ctx dflt = CMD_CTX_NONE;
        char err[256] = "";
        if (http_ctx_json(root, &dflt, err, sizeof(err)) != 0) {
            FUZZ_CHECK(err[0] != '\0', "context refused without a reason");
        } else {
            check_ctx(&dflt);
            for (size_t i = 0; i < json_array_size(items); i++) {
                json_t *v = json_array_get(items, i);
                if (!json_is_object(v))
                    continue;
                struct cmd_ctx c = dflt;
                struct filter_key k = {NULL, 0};
                enum http_err code = HTTP_ERR_INTERNAL;
                err[0] = '\0';
                if (http_item_object(v, i, &c, &k, &code, err, sizeof(err)) != 0) {
                    FUZZ_CHECK(err[0] != '\0', "item object refused without a reason");
                    FUZZ_CHECK(code == HTTP_ERR_BAD_REQUEST || code == HTTP_ERR_NOT_A_STRING,
                               "item object refused with code %d", (int)code);
                    continue;
                }
                json_t *it = json_object_get(v, "item");
                FUZZ_CHECK(json_is_string(it) && k.data == json_string_value(it) &&
                               k.len == json_string_length(it),
                           "the item is not the object's \"item\"");
                check_ctx(&c);
            }
        }
    }
    /* Round trip: what jansson accepted, it writes back in a form it reads
     * as the same value (the API's replies are built by hand, but its error
     * bodies and /v1/info go through json_dumps). */
    char *text = json_dumps(root, JSON_COMPACT | JSON_ENCODE_ANY);
    FUZZ_CHECK(text != NULL, "json_dumps failed");
    json_t *again = json_loads(text, JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
    FUZZ_CHECK(again != NULL, "json_dumps output does not parse: %s", jerr.text);
    FUZZ_CHECK(json_equal(root, again), "round trip changed the value");
    json_decref(again);
    free(text);
    json_decref(root);
    free(body);
    return 0;
}
