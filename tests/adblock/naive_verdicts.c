/* naive_verdicts: the naive matcher (naive.h) behind the verdict interface the
 * differential tests share with adblock_verdicts and ref_verdicts.mjs:
 *   naive_verdicts LISTFILE... < requests.tsv
 * stdin: `url<TAB>type<TAB>from` a line (type empty: document; from empty: none).
 * stdout: `BLOCK|PASS<TAB>rule or -<TAB>exception or -` a line. Errors: stderr, exit 1.
 * --stats prints the list counts on stderr. */
#define _GNU_SOURCE
#include "naive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int load(struct naive *n, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (cap - len < 65536) {
            cap = cap ? 2 * cap : 1 << 20;
            char *b = realloc(buf, cap);
            if (b == NULL) {
                free(buf);
                fclose(f);
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
            buf = b;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? -1 : naive_add_list(n, buf, len, err, errlen);
    if (bad)
        snprintf(err, errlen, "%s: read error", path);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    char err[256];
    int stats = argc > 1 && strcmp(argv[1], "--stats") == 0;
    if (argc < 2 + stats) {
        fputs("usage: naive_verdicts [--stats] LISTFILE... < requests.tsv\n", stderr);
        return 1;
    }
    struct naive *n = naive_new(err, sizeof(err));
    if (n == NULL) {
        fprintf(stderr, "naive_verdicts: %s\n", err);
        return 1;
    }
    for (int i = 1 + stats; i < argc; i++)
        if (load(n, argv[i], err, sizeof(err)) < 0) {
            fprintf(stderr, "naive_verdicts: %s\n", err);
            naive_free(n);
            return 1;
        }
    naive_finish(n, err, sizeof(err));
    if (stats) {
        struct naive_stats s;
        naive_get_stats(n, &s);
        fprintf(stderr,
                "network %zu (exceptions %zu, regex %zu), inert %zu, dropped %zu, "
                "badfiltered %zu, skipped %zu, tried on every request %zu\n",
                s.network, s.exceptions, s.regex, s.inert, s.dropped, s.badfiltered, s.skipped,
                s.always);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    int rc = 0;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        char *type = strchr(line, '\t'), *from = NULL;
        if (type != NULL) {
            *type++ = '\0';
            from = strchr(type, '\t');
            if (from != NULL) {
                *from++ = '\0';
                char *extra = strchr(from, '\t');
                if (extra != NULL)
                    *extra = '\0';
            }
        }
        if (line[0] == '\0') {
            fprintf(stderr, "naive_verdicts: stdin line %lu: no url\n", lineno);
            rc = 1;
            break;
        }
        struct naive_verdict v;
        if (naive_match(n, line, type, from, &v, err, sizeof(err)) < 0) {
            fprintf(stderr, "naive_verdicts: stdin line %lu: %s\n", lineno, err);
            rc = 1;
            break;
        }
        printf("%s\t%s\t%s\n", v.block ? "BLOCK" : "PASS", v.rule ? v.rule : "-",
               v.exception ? v.exception : "-");
    }
    free(line);
    naive_free(n);
    if (fflush(stdout) != 0) {
        fputs("naive_verdicts: write error\n", stderr);
        rc = 1;
    }
    return rc;
}
