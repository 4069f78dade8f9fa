/* INFO for the Redis protocol front: the daemon's INFO JSON (the command
 * table's, as the line protocol gets it) in Redis's text form. Worker
 * thread (resp.c's f_info). */
#include "config.h"

#include "front/resp/resp_info.h"

#include <string.h>

/* One `key:value` line of INFO from a JSON scalar (or an array of them,
 * comma-separated); CR and LF in a string become '?'. */
static void info_line(struct evbuffer *b, const char *key, json_t *v)
{
    if (json_is_array(v)) {
        evbuffer_add_printf(b, "%s:", key);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            evbuffer_add_printf(b, "%s%" JSON_INTEGER_FORMAT, i ? "," : "", json_integer_value(e));
        }
        evbuffer_add(b, "\r\n", 2);
        return;
    }
    if (json_is_integer(v)) {
        evbuffer_add_printf(b, "%s:%" JSON_INTEGER_FORMAT "\r\n", key, json_integer_value(v));
    } else if (json_is_real(v)) {
        evbuffer_add_printf(b, "%s:%.6g\r\n", key, json_real_value(v));
    } else if (json_is_boolean(v)) {
        evbuffer_add_printf(b, "%s:%d\r\n", key, json_is_true(v));
    } else if (json_is_string(v)) {
        evbuffer_add_printf(b, "%s:", key);
        for (const char *s = json_string_value(v); *s; s++)
            evbuffer_add(b, *s == '\r' || *s == '\n' ? "?" : s, 1);
        evbuffer_add(b, "\r\n", 2);
    } else if (json_is_null(v)) {
        evbuffer_add_printf(b, "%s:\r\n", key);
    }
}

/* A filter's name as the key of its INFO line: ':' ',' '=' '%' written %XX.
 * Clients split such a line at its first ':' and the value at ',' and '='
 * (redis-py's parse_info raises on a part without '='), and a name may hold
 * all four (base/fname.h). */
static void info_key(struct evbuffer *b, const char *name)
{
    for (const char *s = name; *s; s++) {
        if (*s == ':' || *s == ',' || *s == '=' || *s == '%')
            evbuffer_add_printf(b, "%%%02X", (unsigned char)*s);
        else
            evbuffer_add(b, s, 1);
    }
}

void resp_info_text(json_t *info, struct evbuffer *b)
{
    static const char *const ffields[] = {"keys",  "layout",        "items",
                                          "capacity", "bytes",      "fpr_target",
                                          "fpr_estimated", "k",     "shards",
                                          "generation"};
    evbuffer_add_printf(b, "# Server\r\nbloomgate_version:%s\r\nredis_mode:standalone\r\n",
                        PACKAGE_VERSION);
    const char *key;
    json_t *v;
    json_object_foreach(info, key, v)
    {
        if (strcmp(key, "filters") != 0)
            info_line(b, key, v);
    }
    evbuffer_add_printf(b, "\r\n# Filters\r\n");
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(info, "filters"), i, f)
    {
        const char *name = json_string_value(json_object_get(f, "name"));
        info_key(b, name ? name : "?");
        evbuffer_add(b, ":", 1);
        for (size_t k = 0; k < sizeof(ffields) / sizeof(ffields[0]); k++) {
            v = json_object_get(f, ffields[k]);
            evbuffer_add_printf(b, "%s%s=", k ? "," : "", ffields[k]);
            if (json_is_integer(v))
                evbuffer_add_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            else if (json_is_real(v))
                evbuffer_add_printf(b, "%.6g", json_real_value(v));
            else if (json_is_string(v))
                evbuffer_add_printf(b, "%s", json_string_value(v)); /* a word: url, blocked */
        }
        evbuffer_add(b, "\r\n", 2);
    }
}
