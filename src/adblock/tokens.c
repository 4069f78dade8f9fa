/* adblock/tokens: the tokens a rule offers the index (engine.c files the rule
 * under the rarest): whole runs of letters and digits that every URL the rule
 * matches must contain. Pure functions, any thread. */
#include "config.h"

#include <string.h>

#include "adblock/engine_int.h"
#include "adblock/rule.h"

/* Tokens of a plain pattern a URL must contain whole (see docs/design.md):
 * runs of token bytes with a literal non-token byte, an anchor or `^` on both
 * sides, never a `*`. */
unsigned ab_pattern_tokens(const char *p, size_t n, unsigned flags, size_t host_len, uint32_t *out,
                           uint16_t *off)
{
    unsigned k = 0;
    size_t i = 0;
    while (i < n && k < AB_TOKENS_RULE_MAX) {
        if (!adblock_is_token_char((unsigned char)p[i])) {
            i++;
            continue;
        }
        size_t a = i;
        while (i < n && adblock_is_token_char((unsigned char)p[i]))
            i++;
        bool left = a > 0 ? p[a - 1] != '*' : (flags & (AB_F_START | AB_F_HOST)) != 0;
        bool right = i < n ? p[i] != '*'
                           : ((flags & AB_F_END) != 0 || ((flags & AB_F_HOST) && i == host_len));
        if (left && right) {
            if (off)
                off[k] = (uint16_t)a;
            out[k++] = ab_hash(p + a, i - a);
        }
    }
    return k;
}

/* Tokens a regex's every match must contain whole: at the top level (no `|`
 * there), runs of literal letters and digits between literal non-token
 * characters, none of them optional or repeated. Conservative: a regex it
 * cannot read gives none and is tested on every request. */
unsigned ab_regex_tokens(const char *p, size_t n, uint32_t *out)
{
    enum { LIT, META };
    struct atom {
        unsigned char kind, c, quant;
    } at[512];
    size_t na = 0;
    for (size_t i = 0; i < n && na < 512;) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\\') {
            if (i + 1 >= n)
                return 0;
            unsigned char d = (unsigned char)p[i + 1];
            bool word = (d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9');
            at[na++] = (struct atom){word ? META : LIT, d, 0};
            i += 2;
        } else if (c == '[' || c == '(') {
            int depth = 0;
            bool cls = false;
            size_t j = i;
            for (; j < n; j++) {
                if (p[j] == '\\') {
                    j++;
                    continue;
                }
                if (cls) {
                    if (p[j] == ']') {
                        cls = false;
                        if (depth == 0)
                            break;
                    }
                    continue;
                }
                if (p[j] == '[')
                    cls = true;
                else if (p[j] == '(')
                    depth++;
                else if (p[j] == ')' && --depth == 0)
                    break;
            }
            if (j >= n)
                return 0;
            at[na++] = (struct atom){META, 0, 0};
            i = j + 1;
        } else if (c == '|') {
            return 0;
        } else if (c == '?' || c == '*' || c == '+' || c == '{') {
            if (na)
                at[na - 1].quant = 1;
            if (c == '{') {
                const char *close = memchr(p + i, '}', n - i);
                if (close == NULL)
                    return 0;
                i = (size_t)(close - p);
            }
            i++;
        } else if (c == '.' || c == '^' || c == '$') {
            at[na++] = (struct atom){META, 0, 0};
            i++;
        } else {
            at[na++] = (struct atom){LIT, c, 0};
            i++;
        }
    }
    unsigned k = 0;
    for (size_t i = 0; i < na && k < AB_TOKENS_RULE_MAX;) {
        if (!(at[i].kind == LIT && adblock_is_token_char(at[i].c))) {
            i++;
            continue;
        }
        size_t a = i;
        bool ok = true;
        uint32_t h = AB_HASH_SEED;
        while (i < na && at[i].kind == LIT && adblock_is_token_char(at[i].c)) {
            ok = ok && !at[i].quant;
            h = ab_hash_step(h, at[i].c);
            i++;
        }
        bool left = a > 0 && at[a - 1].kind == LIT && !at[a - 1].quant;
        bool right = i < na && at[i].kind == LIT && !at[i].quant;
        if (ok && left && right)
            out[k++] = ab_hash_fix(h);
    }
    return k;
}

/* Tokens nearly every URL carries: a rule filed under one would be tested on
 * nearly every request, however few rules name it. Counted as if a million
 * rules did, so any other token of the rule wins. */
const char *const ab_common_tokens[] = {
    "http", "https", "www", "com",   "net", "org",        "js",     "html",   "php",
    "css",  "png",   "jpg", "gif",   "cdn", "static",     "api",    "ws",     "wss",
    "co",   "uk",    "de",  "io",    "min", "img",        "images", "assets", "json",
    "v1",   "v2",    "id",  "index", "src", "utm_source", "amp",    "s",      "a",
    "t",    "1",     "2",   "www2",  NULL,
};
