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
 * and parses back to an equal value.
 *
 * Input: the body, as is. */
#include "config.h"

#include <jansson.h>

#include "front/http/httpparse.h"
#include "fuzz.h"

#define MAX_ITEM 8192 /* conf's default max_item */

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
