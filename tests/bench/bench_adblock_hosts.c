/* bench_adblock_hosts: the Adblock engine with a huge host list (issue 26: "a
 * filter that adds 10 million `||host^` rules: its memory and lookup rate").
 *   bench_adblock_hosts [-n HOSTS] [-r REQUESTS] [LISTFILE...]
 * Generates HOSTS distinct `||host^` rules (default 10,000,000), adds the
 * list files after them (EasyList, EasyPrivacy), builds the engine, and
 * prints: build time, compiled and serialized size, resident memory (the
 * built engine, then the same engine loaded from its serialized block, as a
 * daemon holds it), then the best of three timed passes (after one warm-up)
 * over REQUESTS URLs (default 1,000,000), half of whose hosts (or a
 * subdomain of them) are listed, in-process on one thread. Prints figures,
 * asserts nothing. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adblock/adblock.h"

static double now(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Resident set size, or its peak (VmHWM), in bytes, from /proc/self/status. */
static long long proc_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0)
            kb = atoll(line + kl);
    if (f)
        fclose(f);
    return kb * 1024;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Host i of the list (listed: true) or of the requests' unlisted half: a
 * label of 6 to 15 letters and digits, sometimes a second one, a TLD. The
 * unlisted ones start with a digit run the listed never have, so they are
 * never listed by chance. Returns its length. */
static size_t make_host(uint64_t i, bool listed, char *out)
{
    static const char *const tld[] = {"com", "net", "org", "info", "xyz", "ru", "de", "io"};
    static const char al[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    uint64_t x = mix(i * 2 + (listed ? 0 : 1));
    size_t n = 0;
    if (!listed) {
        memcpy(out, "00x", 3);
        n = 3;
    }
    out[n++] = (char)('a' + x % 26); /* a listed host never starts with a digit */
    x /= 26;
    size_t len = 5 + x % 10;
    x = mix(x);
    for (size_t k = 0; k < len; k++, x /= 36)
        out[n++] = al[x % 36];
    x = mix(x);
    if (x % 4 == 0) {
        out[n++] = '.';
        for (size_t k = 0; k < 4 + x % 5; k++)
            out[n++] = al[(x >> (8 + 5 * k)) % 26];
    }
    out[n++] = '.';
    const char *t = tld[(x >> 40) % 8];
    memcpy(out + n, t, strlen(t));
    return n + strlen(t);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

struct req {
    char url[128];
    size_t len;
    int type;
};

int main(int argc, char **argv)
{
    uint64_t nhosts = 10000000, nreq = 1000000;
    int first = 1;
    while (first + 1 < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-n") == 0)
            nhosts = strtoull(argv[first + 1], NULL, 10);
        else if (strcmp(argv[first], "-r") == 0)
            nreq = strtoull(argv[first + 1], NULL, 10);
        else
            break;
        first += 2;
    }
    if (nreq == 0)
        nreq = 1;
    char err[256];
    /* a fixed threshold (glibc raises it after each large free otherwise): big
     * arrays are mapped and given back when freed, so RSS deltas are true */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    long long rss0 = proc_kb("VmRSS:");

    /* the host list, as one text */
    size_t cap = (size_t)nhosts * 32 + 1, len = 0, hostbytes = 0;
    char *text = malloc(cap);
    if (text == NULL) {
        fprintf(stderr, "bench_adblock_hosts: out of memory\n");
        return 1;
    }
    for (uint64_t i = 0; i < nhosts; i++) {
        memcpy(text + len, "||", 2);
        size_t hl = make_host(i, true, text + len + 2);
        hostbytes += hl;
        len += 2 + hl;
        memcpy(text + len, "^\n", 2);
        len += 2;
    }
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    struct adblock_builder *b = adblock_builder_new();
    if (b == NULL || adblock_builder_add(b, text, len, err, sizeof err) < 0) {
        fprintf(stderr, "bench_adblock_hosts: %s\n", b ? err : "out of memory");
        return 1;
    }
    for (int i = first; i < argc; i++) {
        size_t n;
        char *t = read_file(argv[i], &n);
        if (t == NULL) {
            fprintf(stderr, "bench_adblock_hosts: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        if (adblock_builder_add(b, t, n, err, sizeof err) < 0) {
            fprintf(stderr, "bench_adblock_hosts: %s: %s\n", argv[i], err);
            return 1;
        }
        free(t);
    }
    struct adblock_engine *e = adblock_builder_finish(b, err, sizeof err);
    adblock_builder_free(b);
    double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    if (e == NULL) {
        fprintf(stderr, "bench_adblock_hosts: %s\n", err);
        return 1;
    }
    free(text);
    long long peak = proc_kb("VmHWM:");
    long long rss_built = proc_kb("VmRSS:");

    void *blob;
    size_t blob_len;
    if (adblock_engine_serialize(e, &blob, &blob_len, err, sizeof err) < 0) {
        fprintf(stderr, "bench_adblock_hosts: %s\n", err);
        return 1;
    }
    size_t compiled = adblock_engine_size(e);
    const struct adblock_summary *s = adblock_engine_summary(e);
    unsigned long long rules = s->blocks + s->exceptions;
    adblock_engine_free(e);
    long long rss_blob = proc_kb("VmRSS:");
    double l0 = now(CLOCK_MONOTONIC);
    e = adblock_engine_load(blob, blob_len, err, sizeof err);
    double l1 = now(CLOCK_MONOTONIC);
    if (e == NULL) {
        fprintf(stderr, "bench_adblock_hosts: load: %s\n", err);
        return 1;
    }
    long long rss_loaded = proc_kb("VmRSS:");
    free(blob);

    /* the requests: half to a listed host (or a subdomain of one), half not */
    struct req *reqs = malloc((size_t)nreq * sizeof *reqs);
    if (reqs == NULL) {
        fprintf(stderr, "bench_adblock_hosts: out of memory\n");
        return 1;
    }
    static const char *const sub[] = {"", "www.", "cdn.", "static.img."};
    static const char *const path[] = {"/", "/index.html", "/app/main.js?v=", "/img/photo.jpg?w="};
    for (uint64_t i = 0; i < nreq; i++) {
        uint64_t x = mix(i ^ 0x5eed);
        bool listed = (i & 1) == 0;
        char host[96];
        size_t hl = make_host(nhosts ? x % nhosts : x, listed && nhosts > 0, host);
        struct req *r = &reqs[i];
        int n = snprintf(r->url, sizeof r->url, "https://%s%.*s%s%u", sub[(x >> 32) % 4], (int)hl,
                         host, path[(x >> 40) % 4], (unsigned)(x >> 48));
        r->len = (size_t)n < sizeof r->url ? (size_t)n : sizeof r->url - 1;
        r->type = (x >> 20) % 3 == 0 ? -1 : (int)((x >> 24) % ADBLOCK_TYPE_COUNT);
    }
    struct adblock_ctx *c = adblock_ctx_new();
    static const char page[] = "https://www.example-news.com/article/2024/story.html";
    double best = 0;
    uint64_t blocked = 0;
    for (int pass = 0; pass < 4; pass++) {
        double a = now(CLOCK_PROCESS_CPUTIME_ID);
        uint64_t nb = 0;
        for (uint64_t i = 0; i < nreq; i++) {
            struct adblock_request r = {reqs[i].url,
                                        reqs[i].len,
                                        reqs[i].type,
                                        reqs[i].type < 0 ? NULL : page,
                                        reqs[i].type < 0 ? 0 : sizeof page - 1,
                                        -1};
            struct adblock_verdict v;
            if (adblock_match(e, c, &r, &v, err, sizeof err) < 0) {
                fprintf(stderr, "bench_adblock_hosts: %s\n", err);
                return 1;
            }
            nb += v.block;
        }
        double d = now(CLOCK_PROCESS_CPUTIME_ID) - a;
        blocked = nb;
        if (pass > 0 && (best == 0 || d < best))
            best = d;
    }
    printf("host_rules\t%llu\n", (unsigned long long)nhosts);
    printf("host_bytes\t%zu\n", hostbytes);
    printf("rules\t%llu\n", rules);
    printf("build_s\t%.2f\n", w1 - w0);
    printf("build_cpu_s\t%.2f\n", c1 - c0);
    printf("compiled_bytes\t%zu\n", compiled);
    printf("serialized_bytes\t%zu\n", blob_len);
    printf("rss_built_bytes\t%lld\n", rss_built - rss0);
    printf("rss_loaded_bytes\t%lld\n", rss_loaded - rss_blob);
    printf("rss_peak_build_bytes\t%lld\n", peak - rss0);
    printf("bytes_per_host_rule_beyond_host\t%.1f\n",
           nhosts ? ((double)blob_len - (double)hostbytes) / (double)nhosts : 0.0);
    printf("load_s\t%.2f\n", l1 - l0);
    printf("requests\t%llu\n", (unsigned long long)nreq);
    printf("blocked\t%llu\n", (unsigned long long)blocked);
    printf("ns_per_lookup\t%.1f\n", best / (double)nreq * 1e9);
    printf("lookups_per_s\t%.0f\n", (double)nreq / best);
    adblock_ctx_free(c);
    adblock_engine_free(e);
    free(reqs);
    return 0;
}
