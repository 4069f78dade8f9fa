/* libFuzzer harness for url/lists: each line of the input is parsed in every
 * format for both key kinds. Checks that every line gets exactly one class,
 * that a rejection carries a reason and a text, that keys lie inside the
 * result's buffer, and that a key is a fixed point of the query side's
 * canonicalisation (a `url` key re-canonicalised as a URL, a `host` key as a
 * host, gives itself), so a list entry and a query meet. Build: `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url/lists.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_lists: %s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static struct lists_line l;
static struct url_canon c;
static char err[256];

static void check_line(enum lists_format f, enum url_kind k, const char *s, size_t n)
{
    enum lists_class cls = lists_parse_line(f, k, s, n, &l);
    CHECK(cls == l.cls && cls >= LISTS_KEPT && cls <= LISTS_REJECTED);
    CHECK(strcmp(lists_class_name(cls), "unknown"));
    if (cls == LISTS_REJECTED) {
        CHECK(l.reason != LISTS_OK && l.reason < LISTS_REASON_COUNT && l.why[0]);
        CHECK(strcmp(lists_reason_name(l.reason), "unknown"));
    } else {
        CHECK(l.reason == LISTS_OK);
    }
    if (cls != LISTS_KEPT) {
        CHECK(l.n == 0);
        return;
    }
    CHECK(l.n >= 1 && l.n <= LISTS_ENTRIES_MAX);
    for (size_t i = 0; i < l.n; i++) {
        const struct lists_entry *e = &l.e[i];
        CHECK(e->len > 0 && e->ptr >= l.buf && e->ptr + e->len <= l.buf + sizeof(l.buf));
        if (k == URL_KIND_URL) {
            CHECK(memchr(e->ptr, '/', e->len));
            CHECK(url_canon_url(&c, e->ptr, e->len, err, sizeof(err)) == 0);
            CHECK(c.len - c.host_off == e->len && !memcmp(c.url + c.host_off, e->ptr, e->len));
        } else {
            CHECK(url_canon_host(&c, e->ptr, e->len, err, sizeof(err)) == 0);
            CHECK(c.len == e->len && !memcmp(c.url, e->ptr, e->len));
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    /* The whole input as one line (NULs, CRs, LFs inside), then line by line. */
    for (int f = LISTS_PLAIN; f <= LISTS_URLS; f++)
        for (int k = 0; k < 2; k++)
            check_line((enum lists_format)f, (enum url_kind)k, s, size);
    for (size_t i = 0; i < size;) {
        const char *nl = memchr(s + i, '\n', size - i);
        size_t end = nl ? (size_t)(nl - s) : size;
        for (int f = LISTS_PLAIN; f <= LISTS_URLS; f++)
            for (int k = 0; k < 2; k++)
                check_line((enum lists_format)f, (enum url_kind)k, s + i, end - i);
        i = end + 1;
    }
    return 0;
}
