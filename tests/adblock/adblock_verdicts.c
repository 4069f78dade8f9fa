/* adblock_verdicts: bloomgate's Adblock engine on a TSV of requests, the
 * interface the comparison scripts share with the reference engine's runner.
 *   adblock_verdicts [--bench] LISTFILE...
 * stdin: `url<TAB>type<TAB>from` a line (type empty: document; from empty:
 * none; a line may be the url alone). stdout: `BLOCK|PASS<TAB>rule<TAB>exception`
 * (`-` for none). --bench: no verdicts; build time, compiled size, rules by
 * class and the best of 3 timed passes (after one warm-up) in CPU ns/request. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adblock/adblock.h"

struct req {
    char *url, *from;
    size_t url_len, from_len;
    int type;
};

static double now_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            fclose(f);
            return NULL;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Split one stdin line into a request; -1 with a message on a bad type. */
static int parse_line(char *line, size_t n, struct req *r, unsigned long lineno)
{
    char *f[3] = {line, NULL, NULL};
    size_t len[3] = {n, 0, 0};
    for (int k = 0; k < 2 && f[k]; k++) {
        char *tab = memchr(f[k], '\t', len[k]);
        if (tab == NULL)
            break;
        f[k + 1] = tab + 1;
        len[k + 1] = len[k] - (size_t)(tab + 1 - f[k]);
        len[k] = (size_t)(tab - f[k]);
    }
    r->url = f[0];
    r->url_len = len[0];
    r->type = -1;
    if (f[1] && len[1]) {
        r->type = adblock_type_parse(f[1], len[1]);
        if (r->type < 0) {
            fprintf(stderr, "adblock_verdicts: stdin line %lu: unknown type `%.*s`\n", lineno,
                    (int)len[1], f[1]);
            return -1;
        }
    }
    r->from = f[2];
    r->from_len = f[2] ? len[2] : 0;
    return 0;
}

int main(int argc, char **argv)
{
    bool bench = false;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench = true;
        first = 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: adblock_verdicts [--bench] LISTFILE... < requests.tsv\n");
        return 1;
    }
    char err[256];
    size_t nlists = (size_t)(argc - first);
    char **texts = calloc(nlists, sizeof *texts);
    size_t *lens = calloc(nlists, sizeof *lens);
    for (int i = first; i < argc; i++) {
        texts[i - first] = read_file(argv[i], &lens[i - first]);
        if (texts[i - first] == NULL) {
            fprintf(stderr, "adblock_verdicts: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
    }
    double t0 = now_wall();
    struct adblock_builder *b = adblock_builder_new();
    for (size_t i = 0; i < nlists; i++)
        if (adblock_builder_add(b, texts[i], lens[i], err, sizeof err) < 0) {
            fprintf(stderr, "adblock_verdicts: %s: %s\n", argv[first + (int)i], err);
            return 1;
        }
    struct adblock_engine *e = adblock_builder_finish(b, err, sizeof err);
    adblock_builder_free(b);
    double t1 = now_wall();
    if (e == NULL) {
        fprintf(stderr, "adblock_verdicts: %s\n", err);
        return 1;
    }
    struct adblock_ctx *c = adblock_ctx_new();
    size_t in_len = 0, in_cap = 1 << 20;
    char *in = malloc(in_cap);
    size_t got;
    while (in && (got = fread(in + in_len, 1, in_cap - in_len, stdin)) > 0) {
        in_len += got;
        if (in_len == in_cap)
            in = realloc(in, in_cap *= 2);
    }
    if (in == NULL || c == NULL) {
        fprintf(stderr, "adblock_verdicts: out of memory\n");
        return 1;
    }
    size_t nreq = 0, req_cap = 1024;
    struct req *reqs = malloc(req_cap * sizeof *reqs);
    unsigned long lineno = 0;
    for (size_t i = 0; i < in_len;) {
        char *nl = memchr(in + i, '\n', in_len - i);
        size_t end = nl ? (size_t)(nl - in) : in_len;
        size_t n = end - i;
        lineno++;
        if (n && in[i + n - 1] == '\r')
            n--;
        if (n > 0) {
            if (nreq == req_cap)
                reqs = realloc(reqs, (req_cap *= 2) * sizeof *reqs);
            if (reqs == NULL || parse_line(in + i, n, &reqs[nreq], lineno) < 0)
                return 1;
            nreq++;
        }
        i = end + 1;
    }
    struct adblock_verdict v;
    int rc = 0;
    if (!bench) {
        for (size_t i = 0; i < nreq && rc == 0; i++) {
            struct adblock_request r = {reqs[i].url,  reqs[i].url_len,  reqs[i].type,
                                        reqs[i].from, reqs[i].from_len, -1};
            if (adblock_match(e, c, &r, &v, err, sizeof err) < 0) {
                fprintf(stderr, "adblock_verdicts: request %zu: %s\n", i + 1, err);
                rc = 1;
                break;
            }
            printf("%s\t%.*s\t%.*s\n", v.block ? "BLOCK" : "PASS", v.rule ? (int)v.rule_len : 1,
                   v.rule ? v.rule : "-", v.exception ? (int)v.exception_len : 1,
                   v.exception ? v.exception : "-");
        }
        if (fflush(stdout) != 0)
            rc = 1;
        goto out;
    }
    double best = 0;
    size_t blocked = 0;
    for (int pass = 0; pass < 4; pass++) {
        double a = now_cpu();
        size_t nb = 0;
        for (size_t i = 0; i < nreq; i++) {
            struct adblock_request r = {reqs[i].url,  reqs[i].url_len,  reqs[i].type,
                                        reqs[i].from, reqs[i].from_len, -1};
            if (adblock_match(e, c, &r, &v, err, sizeof err) < 0) {
                fprintf(stderr, "adblock_verdicts: request %zu: %s\n", i + 1, err);
                return 1;
            }
            nb += v.block;
        }
        double d = now_cpu() - a;
        blocked = nb;
        if (pass > 0 && (best == 0 || d < best))
            best = d;
    }
    const struct adblock_summary *s = adblock_engine_summary(e);
    printf("build_ms\t%.1f\n", (t1 - t0) / 1e6);
    printf("compiled_bytes\t%zu\n", adblock_engine_size(e));
    printf("lines\t%llu\n", (unsigned long long)s->lines);
    for (int k = 0; k < ADBLOCK_CLASS_COUNT; k++)
        printf("class_%s\t%llu\n", adblock_class_name((enum adblock_class)k),
               (unsigned long long)s->by_class[k]);
    printf("blocks\t%llu\nexceptions\t%llu\nimportant\t%llu\nbadfilter\t%llu\ncancelled\t%llu\n"
           "regex\t%llu\npage_exceptions\t%llu\nduplicates\t%llu\nunindexed\t%llu\n",
           (unsigned long long)s->blocks, (unsigned long long)s->exceptions,
           (unsigned long long)s->important, (unsigned long long)s->badfilter,
           (unsigned long long)s->cancelled, (unsigned long long)s->regex,
           (unsigned long long)s->page_exceptions, (unsigned long long)s->duplicates,
           (unsigned long long)s->unindexed);
    if (s->first_reject[0])
        printf("first_reject\t%s\n", s->first_reject);
    printf("requests\t%zu\nblocked\t%zu\n", nreq, blocked);
    printf("ns_per_request\t%.1f\n", nreq ? best / (double)nreq : 0.0);
out:
    adblock_ctx_free(c);
    adblock_engine_free(e);
    free(reqs);
    free(in);
    for (size_t i = 0; i < nlists; i++)
        free(texts[i]);
    free(texts);
    free(lens);
    return rc;
}
