/* A growing filter (growth on) against a plain blocked one holding the same
 * items: the plain one sized for all n items at 1e-4, the growing one
 * started at capacity n/10 (so n items make 4 sub-filters: n/10, n/5, 2n/5
 * and 4n/5, the last filled to 3n/10), both filled in one thread. Prints
 * each filter's memory, its measured false-positive rate over the absent
 * keys, and the time per item of one-item and batched (100 at a time)
 * checks of absent and present keys. Single thread; no assertion.
 *   ./tests/bench/bench_grow [N] [QUERIES]
 * Or the adds of a journal replay (bench_adds): N fresh items added in
 * batches of 1000 (filter_add_batch, as replay and MADD add) into a filter
 * made with capacity=100 fpr=0.01 growth=on; prints the CPU time per add
 * of the batched calls alone (the next sub-filter's plan made before a
 * batch, untimed, as the daemon's reload thread does: only the plans of the
 * first, small sub-filters, filled within a batch, are made inline), the
 * sub-filters made and the items held.
 *   ./tests/bench/bench_grow adds [N] */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bloom/filter.h"
#include "bloom/grow.h"

#define FPR 1e-4
#define BATCH 100

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static size_t make_url(char *buf, char tag, uint64_t i)
{
    return (size_t)sprintf(buf, "http://%c%llx.example.com/path/%llu/index.html", tag,
                           (unsigned long long)(i * 0x9E3779B97F4A7C15ull >> 20),
                           (unsigned long long)i);
}

struct keys {
    char (*buf)[96];
    struct filter_key *k;
    size_t n;
};

static void make_keys(struct keys *ks, size_t n, uint64_t n_items, bool present)
{
    ks->buf = malloc(n * sizeof(*ks->buf));
    ks->k = malloc(n * sizeof(*ks->k));
    ks->n = n;
    if (!ks->buf || !ks->k)
        exit(1);
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t len = present ? make_url(ks->buf[i], 'p', x % n_items)
                             : make_url(ks->buf[i], 'q', i);
        ks->k[i] = (struct filter_key){ks->buf[i], len};
    }
}

/* Items per second of one-item checks; *yes counts the YES answers. */
static double run_single(const struct filter *f, const struct keys *ks, size_t *yes)
{
    double t0 = now_s();
    size_t y = 0;
    for (size_t i = 0; i < ks->n; i++)
        y += filter_check(f, ks->k[i].data, ks->k[i].len);
    double t = now_s() - t0;
    *yes = y;
    return (double)ks->n / t;
}

static double run_batched(const struct filter *f, const struct keys *ks)
{
    bool present[BATCH];
    double t0 = now_s();
    for (size_t i = 0; i < ks->n; i += BATCH)
        filter_check_batch(f, ks->k + i, ks->n - i < BATCH ? ks->n - i : BATCH, present);
    return (double)ks->n / (now_s() - t0);
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

enum { ADD_BATCH = 1000 };

/* The adds' mode (see the top): only the filter_add_batch calls are timed,
 * the keys of each batch are made before it. */
static int bench_adds(uint64_t n)
{
    char err[256];
    struct filter_plan first;
    struct filter *g = NULL;
    if (grow_plan(FILTER_BLOCKED, 100, 0.01, 0, &first, err, sizeof(err)) != 0 ||
        !(g = grow_filter_create(&first, 0.01, 42, 0, err, sizeof(err)))) {
        fprintf(stderr, "create: %s\n", err);
        return 1;
    }
    static char buf[ADD_BATCH][96];
    struct filter_key keys[ADD_BATCH];
    bool added[ADD_BATCH];
    uint64_t fresh = 0;
    double cpu = 0, wall = 0;
    for (uint64_t base = 0; base < n; base += ADD_BATCH) {
        size_t m = n - base < ADD_BATCH ? (size_t)(n - base) : ADD_BATCH;
        for (size_t i = 0; i < m; i++)
            keys[i] = (struct filter_key){buf[i], make_url(buf[i], 'p', base + i)};
        grow_prepare(grow_of(g)); /* the reload thread's: plans made ahead, untimed */
        double c0 = cpu_s(), w0 = now_s();
        filter_add_batch(g, keys, m, added);
        cpu += cpu_s() - c0;
        wall += now_s() - w0;
        for (size_t i = 0; i < m; i++)
            fresh += added[i];
    }
    printf("%llu adds in batches of %d into capacity=100 fpr=0.01 growth=on: %u sub-filters, "
           "%llu items (%llu new), %.1f MB; %.1f ns CPU per add (%.2f s CPU, %.2f s wall)\n",
           (unsigned long long)n, ADD_BATCH, grow_count(grow_of(g)),
           (unsigned long long)filter_items(g), (unsigned long long)fresh,
           (double)filter_bytes(g) / 1e6, cpu * 1e9 / (double)n, cpu, wall);
    filter_free(g);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "adds") == 0)
        return bench_adds(argc > 2 ? strtoull(argv[2], NULL, 10) : 2000000);
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    size_t q = argc > 2 ? strtoull(argv[2], NULL, 10) : 2000000;
    char err[256];
    struct filter_plan plan, first;
    if (filter_plan_make(FILTER_BLOCKED, n, FPR, 0, &plan, err, sizeof(err)) != 0 ||
        grow_plan(FILTER_BLOCKED, n / 10, FPR, 0, &first, err, sizeof(err)) != 0) {
        fprintf(stderr, "plan: %s\n", err);
        return 1;
    }
    struct filter *p = filter_create(&plan, 42, err, sizeof(err));
    struct filter *g = p ? grow_filter_create(&first, FPR, 42, 0, err, sizeof(err)) : NULL;
    if (!p || !g) {
        fprintf(stderr, "create: %s\n", err);
        return 1;
    }
    char buf[96];
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++)
        filter_add(p, buf, make_url(buf, 'p', i));
    double fill_p = now_s() - t0;
    t0 = now_s();
    for (uint64_t i = 0; i < n; i++)
        filter_add(g, buf, make_url(buf, 'p', i));
    double fill_g = now_s() - t0;
    printf("growing (capacity %llu, growth on: %u sub-filters) against plain blocked "
           "(capacity %llu), %llu items, fpr 1e-4, %zu queries\n",
           (unsigned long long)(n / 10), grow_count(grow_of(g)), (unsigned long long)n,
           (unsigned long long)n, q);
    printf("%-8s %8s %10s %8s %10s %10s %10s %10s   (ns per item)\n", "filter", "MB", "fpr",
           "add", "absent/1", "absent/bat", "present/1", "present/bat");
    struct filter *fs[2] = {p, g};
    const char *names[2] = {"plain", "growing"};
    double fills[2] = {fill_p, fill_g};
    struct keys absent, present;
    make_keys(&absent, q, n, false);
    make_keys(&present, q, n, true);
    for (int x = 0; x < 2; x++) {
        size_t yes_a, yes_p;
        run_batched(fs[x], &absent); /* warm */
        double a1 = run_single(fs[x], &absent, &yes_a), ab = run_batched(fs[x], &absent);
        double p1 = run_single(fs[x], &present, &yes_p), pb = run_batched(fs[x], &present);
        if (yes_p != q) {
            fprintf(stderr, "%s: %zu of %zu present keys missing\n", names[x], q - yes_p, q);
            return 1;
        }
        printf("%-8s %8.2f %10.2e %8.1f %10.1f %10.1f %10.1f %10.1f\n", names[x],
               (double)filter_bytes(fs[x]) / 1e6, (double)yes_a / (double)q,
               fills[x] * 1e9 / (double)n, 1e9 / a1, 1e9 / ab, 1e9 / p1, 1e9 / pb);
        fflush(stdout);
    }
    filter_free(p);
    filter_free(g);
    return 0;
}
