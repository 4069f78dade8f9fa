/* libFuzzer harness for adblock/serial (the compiled engine's loader, which
 * will read filter files): the input is a block to load. Checks that a load
 * either fails with a reason or gives an engine that matches a few requests
 * without a fault (ASan, UBSan). The seeds are serialised engines, so the
 * fuzzer starts past the header checks. Build: `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "adblock/adblock.h"
#include "fuzz.h"

static struct adblock_ctx *g_c;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const urls[] = {
        "https://ads.example/x.js", "https://a.b.example/banner12.gif?x=1",
        "http://t.example:8080/p/q", "wss://c.example/s", "data:text/html,x"};
    if (g_c == NULL && (g_c = adblock_ctx_new()) == NULL)
        return 0;
    char err[256] = "";
    struct adblock_engine *e = adblock_engine_load(data, size, err, sizeof err);
    if (e == NULL) {
        FUZZ_CHECK(err[0] != 0, "a refusal without a reason");
        return 0;
    }
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        for (int t = -1; t < ADBLOCK_TYPE_COUNT; t += 3) {
            const char *from = "https://www.b.example/";
            struct adblock_request r = {urls[i], strlen(urls[i]), t, from, strlen(from), -1};
            struct adblock_verdict v;
            FUZZ_CHECK(adblock_match(e, g_c, &r, &v, err, sizeof err) == 0, "%s", err);
            if (v.rule)
                FUZZ_CHECK(strlen(v.rule) == v.rule_len, "rule text length");
        }
    }
    adblock_engine_free(e);
    return 0;
}
