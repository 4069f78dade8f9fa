/* words/zh: traditional to simplified Chinese, per character, from an
 * OpenCC config (Debian's libopencc-data: /usr/share/opencc/t2s.json). Run
 * in the builder only: the pairs go into the compiled matcher, so a scan or
 * a load needs no OpenCC, and the text is folded exactly as the list was. */
#include "config.h"

#include <opencc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words/norm.h"

/* The Han blocks whose characters OpenCC is asked about. */
static const uint32_t zh_blocks[][2] = {
    {0x3400, 0x4dbf}, {0x4e00, 0x9fff}, {0xf900, 0xfaff}, {0x20000, 0x2a6df}, {0x2a700, 0x2ebef},
};

static size_t zh_put(char *p, uint32_t cp)
{
    if (cp < 0x10000) {
        p[0] = (char)(0xe0 | cp >> 12);
        p[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        p[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    p[0] = (char)(0xf0 | cp >> 18);
    p[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    p[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    p[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Converts every Han character on a line of its own (so OpenCC's phrase
 * tables cannot join two) in one call, and keeps the characters that come
 * back as one other character. Builder thread. */
int wn_load_t2s(struct wn_norm *n, const char *config, char *err, size_t errlen)
{
    size_t total = 0;
    for (size_t b = 0; b < sizeof zh_blocks / sizeof zh_blocks[0]; b++)
        total += zh_blocks[b][1] - zh_blocks[b][0] + 1;
    char *in = malloc(total * 5 + 1);
    uint32_t *cps = malloc(total * sizeof *cps);
    if (in == NULL || cps == NULL) {
        free(in), free(cps);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t len = 0, k = 0;
    for (size_t b = 0; b < sizeof zh_blocks / sizeof zh_blocks[0]; b++)
        for (uint32_t cp = zh_blocks[b][0]; cp <= zh_blocks[b][1]; cp++) {
            cps[k++] = cp;
            len += zh_put(in + len, cp);
            in[len++] = '\n';
        }
    in[len] = '\0';
    opencc_t od = opencc_open(config);
    if (od == (opencc_t)-1) {
        snprintf(err, errlen, "zh: cannot open OpenCC config %s: %s", config, opencc_error());
        free(in), free(cps);
        return -1;
    }
    char *out = opencc_convert_utf8(od, in, len);
    opencc_close(od);
    free(in);
    if (out == NULL) {
        snprintf(err, errlen, "zh: OpenCC failed: %s", opencc_error());
        free(cps);
        return -1;
    }
    uint32_t *pairs = NULL;
    size_t np = 0, cap = 0;
    const unsigned char *o = (const unsigned char *)out;
    size_t olen = strlen(out), pos = 0;
    for (size_t i = 0; i < k && pos < olen; i++) {
        size_t eol = pos;
        while (eol < olen && o[eol] != '\n')
            eol++;
        uint32_t to;
        size_t l = wn_decode(o + pos, eol - pos, &to);
        if (l != 0 && pos + l == eol && to != cps[i]) {
            if (np == cap) {
                cap = cap ? cap * 2 : 4096;
                uint32_t *t = realloc(pairs, cap * 2 * sizeof *t);
                if (t == NULL) {
                    free(pairs), free(cps);
                    opencc_convert_utf8_free(out);
                    snprintf(err, errlen, "out of memory");
                    return -1;
                }
                pairs = t;
            }
            pairs[2 * np] = cps[i];
            pairs[2 * np + 1] = to;
            np++;
        }
        pos = eol + 1;
    }
    opencc_convert_utf8_free(out);
    free(cps);
    free(n->t2s);
    n->t2s = pairs; /* in code point order already */
    n->nt2s = np;
    return 0;
}
