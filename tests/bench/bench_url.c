/* bench_url: canonicalise + expand URLs per second on one core, the work the
 * daemon does per `url` query before it probes the filter; then the whole
 * lookup the daemon makes (core/cmd.c keyed_check: keys_expand, every probe
 * hashed and prefetched, tested once the next URL is expanded) against an
 * in-memory `url` filter of KEYS keys (10M by default: the URLhaus keys plus
 * made-up ones). The URLs are the
 * targets of the URLhaus list, each in varied spellings (case, port, userinfo,
 * dot segments, extra path, query, fragment, escapes), so that every step of
 * canonicalisation has work to do. Prints figures; asserts nothing.
 *   tests/bench/bench_url [LIST] [SECONDS] [KEYS]
 * LIST defaults to data/urlhaus-filter-online.txt in the source tree
 * ($srcdir, else the parent of the build directory). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bloom/filter.h"
#include "url/expr.h"
#include "url/keys.h"
#include "url/lists.h"

struct urlset {
    char **v;
    size_t n, cap;
    size_t bytes;
};

static void add(struct urlset *s, const char *u)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->v = realloc(s->v, s->cap * sizeof(*s->v));
        if (!s->v) {
            perror("realloc");
            exit(1);
        }
    }
    s->v[s->n] = strdup(u);
    s->bytes += strlen(u);
    s->n++;
}

/* The target of a list line: "host[/path]" from "||host/path^$all" or a bare
 * host; NULL for a comment. */
static char *target(char *line)
{
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '!')
        return NULL;
    if (line[0] == '|' && line[1] == '|')
        line += 2;
    char *caret = strchr(line, '^');
    if (caret)
        *caret = 0;
    return line;
}

/* Six spellings of one target. */
static void spellings(struct urlset *s, const char *t)
{
    char host[512], path[4096], u[16384];
    size_t hl = strcspn(t, "/");
    if (hl >= sizeof(host) || strlen(t + hl) >= sizeof(path) - 64)
        return;
    memcpy(host, t, hl);
    host[hl] = 0;
    snprintf(path, sizeof(path), "%s", t[hl] ? t + hl : "/");
    char upper[512];
    for (size_t i = 0; i <= hl; i++)
        upper[i] = (char)(host[i] >= 'a' && host[i] <= 'z' ? host[i] - 32 : host[i]);

    snprintf(u, sizeof(u), "http://%s%s", host, path);
    add(s, u);
    snprintf(u, sizeof(u), "HTTPS://%s:8443%s?id=42&ref=mail", upper, path);
    add(s, u);
    snprintf(u, sizeof(u), "http://user:pw@%s.%s/./a/../x/%%2e%%2e/%s#frag", host, "", path + 1);
    add(s, u);
    snprintf(u, sizeof(u), "  %s//extra//dir/index.html?q=%%2541  ", t);
    add(s, u);
    snprintf(u, sizeof(u), "https://www.%s%s", host, path);
    add(s, u);
    snprintf(u, sizeof(u), "http://%s%s%%3Fa%%3Db\t", host, path);
    add(s, u);
}

static FILE *open_list(const char *arg)
{
    if (arg)
        return fopen(arg, "r");
    char p[4096];
    const char *src = getenv("srcdir");
    snprintf(p, sizeof(p), "%s/data/urlhaus-filter-online.txt", src ? src : "..");
    return fopen(p, "r");
}

/* CPU time of this thread: on a machine shared with other work, wall-clock
 * time counts the time the scheduler gave to others. Both are printed. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    FILE *f = open_list(argc > 1 ? argv[1] : NULL);
    if (!f) {
        fprintf(stderr, "bench_url: cannot open the URLhaus list (give its path)\n");
        return 1;
    }
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    struct urlset s = {0};
    char line[8192];
    while (fgets(line, sizeof(line), f)) {
        char *t = target(line);
        if (t)
            spellings(&s, t);
    }
    fclose(f);

    static struct url_canon c;
    struct url_exprs x;
    char err[128];
    size_t done = 0, failed = 0, exprs = 0, sum = 0;
    double t0 = now(), t1, c0 = cpu_now();
    do {
        for (size_t i = 0; i < s.n; i++) {
            if (url_expr_query(URL_KIND_URL, &c, s.v[i], strlen(s.v[i]), &x, err, sizeof(err)) <
                0) {
                failed++;
                continue;
            }
            exprs += x.n;
            sum += x.e[x.n - 1].len;
        }
        done += s.n;
        t1 = now();
    } while (t1 - t0 < seconds);
    double cpu = cpu_now() - c0;
    double rate = (double)done / cpu;
    printf("bench_url: %zu URLs (%.0f bytes avg), %zu canonicalised + expanded in %.2f s CPU "
           "(%.2f s wall)\n",
           s.n, (double)s.bytes / (double)s.n, done, cpu, t1 - t0);
    printf("bench_url: url kind %.2f M URLs/s on one core (CPU time; %.2f M/s wall), %.0f ns per "
           "URL, %.1f expressions per URL, %zu failed (checksum %zu)\n",
           rate / 1e6, (double)done / (t1 - t0) / 1e6, 1e9 / rate,
           (double)exprs / (double)(done - failed), failed, sum & 0xffff);

    /* The host kind on the same inputs. */
    done = 0;
    t0 = now();
    c0 = cpu_now();
    do {
        for (size_t i = 0; i < s.n; i++)
            if (url_expr_query(URL_KIND_HOST, &c, s.v[i], strlen(s.v[i]), &x, err, sizeof(err)) ==
                0)
                sum += x.n;
        done += s.n;
        t1 = now();
    } while (t1 - t0 < seconds);
    printf("bench_url: host kind %.2f M queries/s on one core (CPU time; %.2f M/s wall)\n",
           (double)done / (cpu_now() - c0) / 1e6, (double)done / (t1 - t0) / 1e6);

    /* The daemon's lookup on a url filter of n_keys keys: the list's keys
     * (so about a sixth of the spellings are found, most through a
     * parent expression) and made-up ones up to n_keys. */
    uint64_t n_keys = argc > 3 ? strtoull(argv[3], NULL, 10) : 10000000;
    struct filter_plan plan;
    char why[256];
    if (filter_plan_make(FILTER_BLOCKED, n_keys, 1e-4, 0, &plan, why, sizeof(why)) != 0) {
        fprintf(stderr, "bench_url: %s\n", why);
        return 1;
    }
    struct filter *flt = filter_create(&plan, 0x5eed5eedull, why, sizeof(why));
    if (!flt) {
        fprintf(stderr, "bench_url: %s\n", why);
        return 1;
    }
    flt->keys = FILTER_KEYS_URL;
    double tb = now();
    uint64_t added = 0;
    f = open_list(argc > 1 ? argv[1] : NULL);
    static struct lists_line ll;
    while (f && fgets(line, sizeof(line), f)) {
        if (lists_parse_line(LISTS_ADBLOCK, URL_KIND_URL, line, strcspn(line, "\r\n"), &ll) !=
            LISTS_KEPT)
            continue;
        for (size_t k = 0; k < ll.n; k++, added++)
            filter_add(flt, ll.e[k].ptr, ll.e[k].len);
    }
    if (f)
        fclose(f);
    char key[128];
    for (uint64_t i = added; i < n_keys; i++) {
        int kl = snprintf(key, sizeof(key), "h%llu.example%u.com/p/%llu.html",
                          (unsigned long long)(i / 7), (unsigned)(i % 7), (unsigned long long)i);
        filter_add(flt, key, (size_t)kl);
    }
    printf("bench_url: url filter of %llu keys (%llu from the list), %.1f MB, k=%u, built in "
           "%.1f s\n",
           (unsigned long long)n_keys, (unsigned long long)added, (double)filter_bytes(flt) / 1e6,
           flt->k, now() - tb);

    /* As core/cmd.c keyed_check does it: item i expanded, hashed and
     * prefetched, then item i-1 tested (most specific probe first, stopping
     * at the first present one). */
    static struct keys_query q[2];
    static struct hash128 hh[2][KEYS_MAX];
    bool have[2] = {false, false};
    size_t hits = 0, probes = 0;
    done = 0;
    t0 = now();
    c0 = cpu_now();
    do {
        for (size_t i = 0; i <= s.n; i++) {
            if (i < s.n) {
                have[i & 1] =
                    keys_expand(KEYS_URL, s.v[i], strlen(s.v[i]), &q[i & 1], err, sizeof(err)) == 0;
                for (size_t j = 0; have[i & 1] && j < q[i & 1].n; j++) {
                    hh[i & 1][j] = filter_hash(flt, q[i & 1].p[j].data, q[i & 1].p[j].len);
                    __builtin_prefetch(filter_first_line(flt, hh[i & 1][j]), 0, 0);
                }
            }
            if (i == 0 || !have[(i - 1) & 1])
                continue;
            const struct keys_query *pq = &q[(i - 1) & 1];
            size_t hit = 0;
            while (hit < pq->n && !filter_check_hash(flt, hh[(i - 1) & 1][hit]))
                hit++;
            probes += pq->n;
            hits += hit < pq->n;
        }
        done += s.n;
        t1 = now();
    } while (t1 - t0 < seconds);
    cpu = cpu_now() - c0;
    rate = (double)done / cpu;
    printf("bench_url: url lookup (canonicalise + expand + prefetched probes) %.2f M URLs/s on one "
           "core (CPU time; %.2f M/s wall), %.0f ns per URL, %.1f probes per URL, %.1f %% found\n",
           rate / 1e6, (double)done / (t1 - t0) / 1e6, 1e9 / rate, (double)probes / (double)done,
           100.0 * (double)hits / (double)done);
    filter_free(flt);
    for (size_t i = 0; i < s.n; i++)
        free(s.v[i]);
    free(s.v);
    return 0;
}
