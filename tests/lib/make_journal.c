/* make_journal: write a journal for the end-to-end tests (tests/it/tool_test.sh),
 * through the real journal_append, since a shell cannot compute XXH3.
 *   make_journal [--hex] [--batch N] FILE < items
 * Each stdin line is one item, exact bytes (no trimming; an empty line is an
 * empty item; a final line needs no LF). With --hex each line is the item in
 * hexadecimal, so items may hold LF and NUL. Items are appended N at a time
 * (default 1), to FILE's end if it exists. Not installed. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/journal.h"

static int unhex(char *s, size_t len, size_t *out)
{
    if (len % 2)
        return -1;
    for (size_t i = 0; i < len; i += 2) {
        unsigned v;
        char pair[3] = {s[i], s[i + 1], 0};
        if (sscanf(pair, "%2x", &v) != 1)
            return -1;
        s[i / 2] = (char)v;
    }
    *out = len / 2;
    return 0;
}

int main(int argc, char **argv)
{
    int hex = 0;
    size_t batch = 1;
    int a = 1;
    for (; a < argc - 1; a++) {
        if (strcmp(argv[a], "--hex") == 0)
            hex = 1;
        else if (strcmp(argv[a], "--batch") == 0 && a + 1 < argc - 1)
            batch = strtoul(argv[++a], NULL, 10);
        else
            break;
    }
    if (a != argc - 1 || batch == 0) {
        fputs("usage: make_journal [--hex] [--batch N] FILE < items\n", stderr);
        return 2;
    }
    /* Read all of stdin: test inputs are small. */
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += n;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    struct filter_key *items = calloc(len + 1, sizeof(*items));
    if (!buf || !items) {
        fputs("make_journal: out of memory\n", stderr);
        return 1;
    }
    size_t count = 0;
    for (size_t pos = 0; pos < len;) {
        char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        size_t ilen = end - pos;
        if (hex && unhex(buf + pos, ilen, &ilen) != 0) {
            fprintf(stderr, "make_journal: line %zu is not hexadecimal\n", count + 1);
            return 1;
        }
        items[count].data = buf + pos;
        items[count].len = ilen;
        count++;
        pos = end + 1;
    }
    char err[1024];
    struct journal *j = journal_open(argv[a], CONF_FSYNC_ALWAYS, NULL, err, sizeof(err));
    if (!j) {
        fprintf(stderr, "make_journal: %s\n", err);
        return 1;
    }
    for (size_t i = 0; i < count; i += batch) {
        size_t k = count - i < batch ? count - i : batch;
        if (journal_append(j, items + i, k, err, sizeof(err)) != 0) {
            fprintf(stderr, "make_journal: %s\n", err);
            return 1;
        }
    }
    if (journal_commit(j, err, sizeof(err)) != 0 || journal_close(j, err, sizeof(err)) != 0) {
        fprintf(stderr, "make_journal: %s\n", err);
        return 1;
    }
    free(items);
    free(buf);
    return 0;
}
