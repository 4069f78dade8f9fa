/* fuzz_resp_bf: the options of BF.RESERVE and BF.INSERT as the Redis front
 * reads them (src/front/resp/respparse.h, resp_bf_opts_parse), the extended
 * RESP commands that create filters.
 *
 * Input: u8 mode (bit 0: BF.INSERT, else BF.RESERVE), then the command's
 * arguments separated by NUL bytes (the first is the command, the second the
 * key). What is checked: a refusal has a code and a printable message; an
 * acceptance keeps what RedisBloom checks: a capacity that is an integer of
 * at least 1, an error rate in (0, 1), an expansion in [1, 32768] and never
 * with NONSCALING, and for BF.INSERT an ITEMS word right before its first
 * item, inside the arguments. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "front/resp/respparse.h"
#include "fuzz.h"

#define MAX_ARGS 64

static double number(const struct resp_arg *a)
{
    char buf[80];
    FUZZ_CHECK(a->len < sizeof(buf), "a number of %zu bytes accepted", a->len);
    memcpy(buf, a->p, a->len);
    buf[a->len] = '\0';
    return strtod(buf, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    bool insert = data[0] & 1;
    struct resp_arg argv[MAX_ARGS];
    size_t argc = 0, start = 1;
    for (size_t i = 1; i <= size && argc < MAX_ARGS; i++)
        if (i == size || data[i] == 0) {
            argv[argc].p = (const char *)data + start;
            argv[argc].len = i - start;
            argc++;
            start = i + 1;
        }
    if (argc < (insert ? 3u : 4u))
        return 0; /* the arity check comes first (resp.c) */
    struct resp_bf_opts o = {0};
    if (!insert) {
        o.error = &argv[2];
        o.capacity = &argv[3];
    }
    enum resp_err code = RESP_ERR_NONE;
    char msg[128] = "";
    if (resp_bf_opts_parse(argv, argc, insert, &o, &code, msg, sizeof(msg)) != 0) {
        FUZZ_CHECK(code != RESP_ERR_NONE && msg[0], "refused without a code or a message");
        for (const char *p = msg; *p; p++)
            FUZZ_CHECK((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f,
                       "unprintable message");
        return 0;
    }
    if (o.capacity) {
        double c = number(o.capacity);
        FUZZ_CHECK(c >= 1 && c == floor(c), "capacity %g accepted", c);
    }
    if (o.error) {
        double e = number(o.error);
        FUZZ_CHECK(e > 0 && e < 1, "error rate %g accepted", e);
    }
    FUZZ_CHECK(o.expansion == 0 || (o.expansion >= 1 && o.expansion <= 32768 && !o.nonscaling),
               "expansion %ld accepted (nonscaling %d)", o.expansion, o.nonscaling);
    if (insert) {
        FUZZ_CHECK(o.items >= 3 && o.items < argc, "items at %zu of %zu", o.items, argc);
        FUZZ_CHECK(resp_arg_is(&argv[o.items - 1], "ITEMS"), "no ITEMS before the items");
    } else {
        FUZZ_CHECK(!o.nocreate && o.items == 0, "BF.RESERVE took BF.INSERT's words");
    }
    return 0;
}
