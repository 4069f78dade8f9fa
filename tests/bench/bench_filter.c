/* bench_filter: lookup and build throughput of the filter core, printed as a
 * table (a benchmark prints figures; nothing here is asserted). Run with
 *   ./tests/bench/bench_filter [--big N] [--queries N] [--build N] [--window N]
 *                              [--counting N] [--fuse-size N] [--interleave N]
 * Defaults follow issue #2: p = 1e-4, in-cache filter of 1M items, out-of-cache
 * filter of 100M items, for the blocked, classic and fuse layouts (bits per
 * item and the measured false-positive rate beside the lookups); build of
 * 10M URL-like items with 1 and 2 threads, then each layout's build; a
 * windowed filter of 4 slices against a plain one, 1M items (--window N:
 * that comparison alone, for N items). --counting N: plain blocked, windowed
 * (4 slices) and counting filters of N items in one run, with adds and
 * removals per second, bytes per item and the measured rate. --fuse-size N:
 * only build a fuse filter of N items (default shards) and print its bits per
 * item against the paper's 1.125 f, and its build time. --interleave N:
 * blocked and fuse filters of N items, batched lookups timed in short
 * alternating rounds (the median of each), for a ratio that a shared
 * machine's load swings disturb less than one long run of each. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool/build.h"
#include "base/clock.h"
#include "bloom/counting.h"
#include "bloom/filter.h"
#include "bloom/fuse.h"
#include "bloom/fuse_build.h"
#include "bloom/ring.h"
#include "base/util.h"

#define FPR 1e-4
#define BATCH 100 /* items per batched call, like an MCHECK of 100 */

static uint64_t opt_big = 100000000, opt_queries = 4000000, opt_build = 10000000,
                opt_window = 1000000, opt_counting = 0;

/* A URL-like item of 40-64 bytes for index i of a namespace ('p' present,
 * 'a' absent). Deterministic, so runs compare. */
static size_t make_url(char *buf, char ns, uint64_t i)
{
    uint64_t h = i * 0x9E3779B97F4A7C15ull;
    return (size_t)snprintf(buf, 80, "https://%c%llx.example-%02u.com/path/%llu/item.html?id=%llu",
                            ns, (unsigned long long)(h >> 40), (unsigned)(i % 97),
                            (unsigned long long)(h & 0xfffff), (unsigned long long)i);
}

struct fill_ctx {
    struct filter *f;
    uint64_t n, tasks;
};

static void fill_task(void *arg, size_t t)
{
    struct fill_ctx *c = arg;
    char buf[96];
    uint64_t lo = c->n * t / c->tasks, hi = c->n * (t + 1) / c->tasks;
    for (uint64_t i = lo; i < hi; i++) {
        size_t len = make_url(buf, 'p', i);
        filter_add(c->f, buf, len);
    }
}

/* The hashes of items [lo, hi) of a fill, for a fuse build (the layout
 * takes no adds: it is built whole from them). */
struct hash_ctx {
    struct hash128 *h;
    uint64_t n, tasks;
};

static void hash_task(void *arg, size_t t)
{
    struct hash_ctx *c = arg;
    char buf[160]; /* room for what inlined XXH3 may read, as gcc sees it */
    uint64_t lo = c->n * t / c->tasks, hi = c->n * (t + 1) / c->tasks;
    for (uint64_t i = lo; i < hi; i++)
        c->h[i] = hash_item(buf, make_url(buf, 'p', i), 42);
}

/* A filter of layout for n items at FPR holding items 'p' 0..n-1. */
static struct filter *make_filled(enum filter_layout layout, uint64_t n)
{
    struct filter_plan plan;
    char err[256];
    if (filter_plan_make(layout, n, FPR, 0, &plan, err, sizeof(err)) != 0) {
        fprintf(stderr, "plan: %s\n", err);
        exit(1);
    }
    struct filter *f;
    if (layout == FILTER_FUSE) {
        struct hash_ctx hc = {malloc(n * sizeof(struct hash128)), n, 64};
        if (!hc.h) {
            fprintf(stderr, "out of memory for %llu hashes\n", (unsigned long long)n);
            exit(1);
        }
        util_parallel_for(util_ncpus(), hc.tasks, hash_task, &hc);
        f = fuse_filter_build(&plan, 42, hc.h, n, 0, err, sizeof(err));
        free(hc.h);
    } else if ((f = filter_create(&plan, 42, err, sizeof(err)))) {
        struct fill_ctx fc = {f, n, 64};
        util_parallel_for(util_ncpus(), fc.tasks, fill_task, &fc);
    }
    if (!f) {
        fprintf(stderr, "create: %s\n", err);
        exit(1);
    }
    return f;
}

struct keyset {
    char *arena;
    struct filter_key *keys;
    size_t n;
};

/* Queries: `n` keys, half present (from the filled range), half absent,
 * shuffled deterministically, stored contiguously. */
static void make_keys(struct keyset *ks, size_t n, uint64_t filled, int present_share_pct)
{
    ks->arena = malloc(n * 80);
    ks->keys = malloc(n * sizeof(*ks->keys));
    ks->n = n;
    uint64_t x = 88172645463325252ull;
    char *p = ks->arena;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        bool present = (int)(x % 100) < present_share_pct;
        size_t len = present ? make_url(p, 'p', (x >> 8) % filled) : make_url(p, 'a', x >> 8);
        ks->keys[i].data = p;
        ks->keys[i].len = len;
        p += len;
    }
}

static void free_keys(struct keyset *ks)
{
    free(ks->arena);
    free(ks->keys);
}

static volatile uint64_t sink;

static double run_single(const struct filter *f, const struct keyset *ks)
{
    uint64_t hits = 0;
    double t0 = util_now();
    for (size_t i = 0; i < ks->n; i++)
        hits += filter_check(f, ks->keys[i].data, ks->keys[i].len);
    double dt = util_now() - t0;
    sink += hits;
    return (double)ks->n / dt;
}

static uint64_t last_hits; /* of the last run_batched */

static double run_batched(const struct filter *f, const struct keyset *ks)
{
    bool out[BATCH];
    uint64_t hits = 0;
    double t0 = util_now();
    for (size_t i = 0; i < ks->n; i += BATCH) {
        size_t m = ks->n - i < BATCH ? ks->n - i : BATCH;
        filter_check_batch(f, ks->keys + i, m, out);
        for (size_t j = 0; j < m; j++)
            hits += out[j];
    }
    double dt = util_now() - t0;
    sink += hits;
    last_hits = hits;
    return (double)ks->n / dt;
}

/* results[present][batched]: lookups/s; bpi and rate: bits per item and
 * the share of absent keys found (the measured false-positive rate). */
static void bench_lookups(enum filter_layout layout, uint64_t n, const char *label,
                          double results[2][2], double *bpi, double *rate)
{
    double t0 = util_now();
    struct filter *f = make_filled(layout, n);
    double fill_s = util_now() - t0;
    for (int present = 0; present < 2; present++) {
        struct keyset ks;
        make_keys(&ks, opt_queries, n, present ? 100 : 0);
        run_batched(f, &ks); /* warm-up: page in, settle the caches */
        results[present][0] = run_single(f, &ks);
        results[present][1] = run_batched(f, &ks);
        if (!present)
            *rate = (double)last_hits / (double)ks.n;
        free_keys(&ks);
    }
    *bpi = (double)filter_bytes(f) * 8 / (double)n;
    printf("%-8s %-13s %8.1f MB %7u %6.2f %8.2g %10.2f %10.2f %10.2f %10.2f   (filled in %.1f s)\n",
           filter_layout_name(layout), label, (double)filter_bytes(f) / 1e6, f->shard_count, *bpi,
           *rate, results[0][0] / 1e6, results[0][1] / 1e6, results[1][0] / 1e6,
           results[1][1] / 1e6, fill_s);
    if (layout == FILTER_FUSE)
        printf("%-8s %-13s %.3f bits per item against the paper's 1.125 f = %.3f (f = %u): "
               "%+.2f%%\n",
               "", "", *bpi, 1.125 * f->k, f->k, (*bpi / (1.125 * f->k) - 1) * 100);
    fflush(stdout);
    filter_free(f);
}

/* A windowed filter (`window 24h`, `slices 4`) against a plain blocked one,
 * both for n items at FPR, in the steady state of an even load: each of the
 * five live slices holds n/4 items (added at their slice's time, so the
 * real clock finds them live: a 6 h slice does not turn during the run).
 * Checks read the real clock, as the daemon's do. Single thread. */
static void bench_window(uint64_t n)
{
    struct filter_plan plan, slice;
    char err[256];
    const unsigned slices = 4;
    const int64_t window = 24 * 3600 * 1000ll;
    if (filter_plan_make(FILTER_BLOCKED, n, FPR, 0, &plan, err, sizeof(err)) != 0 ||
        filter_plan_make(FILTER_BLOCKED, n / slices, FPR / (slices + 1), 0, &slice, err,
                         sizeof(err)) != 0) {
        fprintf(stderr, "plan: %s\n", err);
        exit(1);
    }
    struct filter *p = filter_create(&plan, 42, err, sizeof(err));
    struct filter *w = ring_filter_create(&slice, 42, slices, window, n, FPR, err, sizeof(err));
    if (!p || !w) {
        fprintf(stderr, "create: %s\n", err);
        exit(1);
    }
    int64_t now = clock_now_ms(), l = window / slices;
    char buf[96];
    for (uint64_t i = 0; i < n + n / slices; i++) {
        struct filter_key k = {buf, make_url(buf, 'p', i)};
        if (i < n)
            filter_add(p, buf, k.len);
        ring_add_batch(w->ring, w, &k, 1, NULL, now - (int64_t)(i / (n / slices)) * l, now);
    }
    printf("\nwindowed (window 24h, slices 4: 5 live slices of %llu items) against plain "
           "blocked, %llu items, p = 1e-4\n",
           (unsigned long long)(n / slices), (unsigned long long)n);
    printf("%-10s %11s %11s %11s %11s %11s   (ns per item)\n", "filter", "size MB", "absent/1",
           "absent/bat", "present/1", "present/bat");
    struct filter *fs[2] = {p, w};
    const char *names[2] = {"plain", "windowed"};
    for (int x = 0; x < 2; x++) {
        double r[2][2];
        for (int present = 0; present < 2; present++) {
            struct keyset ks;
            make_keys(&ks, opt_queries, n, present ? 100 : 0);
            run_batched(fs[x], &ks);
            r[present][0] = run_single(fs[x], &ks);
            r[present][1] = run_batched(fs[x], &ks);
            free_keys(&ks);
        }
        printf("%-10s %11.1f %11.1f %11.1f %11.1f %11.1f\n", names[x],
               (double)filter_bytes(fs[x]) / 1e6, 1e9 / r[0][0], 1e9 / r[0][1], 1e9 / r[1][0],
               1e9 / r[1][1]);
        fflush(stdout);
    }
    filter_free(p);
    filter_free(w);
}

/* Checks of ks against f, single and batched: items per second of each and
 * how many the batched run answered YES. */
static void run_both(const struct filter *f, const struct keyset *ks, double *single,
                     double *batched, uint64_t *yes)
{
    bool out[BATCH];
    run_batched(f, ks); /* warm-up */
    *single = run_single(f, ks);
    uint64_t hits = 0;
    double t0 = util_now();
    for (size_t i = 0; i < ks->n; i += BATCH) {
        size_t m = ks->n - i < BATCH ? ks->n - i : BATCH;
        filter_check_batch(f, ks->keys + i, m, out);
        for (size_t j = 0; j < m; j++)
            hits += out[j];
    }
    *batched = (double)ks->n / (util_now() - t0);
    *yes = hits;
}

/* Plain blocked, windowed (`window 24h`, `slices 4`, the steady state of
 * bench_window: five live slices of n/4 items) and counting, each of n
 * items at p = 1e-4, one thread, in one run. Adds/s: n adds from keys made
 * beforehand (the windowed ones into the slice of their time); removals/s
 * (counting): n/2 of its items removed, then added back, so the checks see
 * all n. Checks: opt_queries absent and present keys; the measured rate is
 * the absent keys answered YES. */
static void bench_lists(uint64_t n)
{
    struct filter_plan plan, slice, cplan;
    char err[256];
    const unsigned slices = 4;
    const int64_t window = 24 * 3600 * 1000ll;
    if (filter_plan_make(FILTER_BLOCKED, n, FPR, 0, &plan, err, sizeof(err)) != 0 ||
        filter_plan_make(FILTER_BLOCKED, n / slices, FPR / (slices + 1), 0, &slice, err,
                         sizeof(err)) != 0 ||
        filter_plan_make(FILTER_COUNTING, n, FPR, 0, &cplan, err, sizeof(err)) != 0) {
        fprintf(stderr, "plan: %s\n", err);
        exit(1);
    }
    struct filter *fs[3] = {
        filter_create(&plan, 42, err, sizeof(err)),
        ring_filter_create(&slice, 42, slices, window, n, FPR, err, sizeof(err)),
        filter_create(&cplan, 42, err, sizeof(err)),
    };
    if (!fs[0] || !fs[1] || !fs[2]) {
        fprintf(stderr, "create: %s\n", err);
        exit(1);
    }
    uint64_t total = n + n / slices; /* the windowed filter's five slices */
    char *arena = malloc(total * 80);
    struct filter_key *keys = malloc(total * sizeof(*keys));
    for (uint64_t i = 0, off = 0; i < total; i++) {
        keys[i].data = arena + off;
        keys[i].len = make_url(arena + off, 'p', i);
        off += keys[i].len;
    }
    double adds[3], removes = 0;
    double t0 = util_now();
    for (uint64_t i = 0; i < n; i++)
        filter_add(fs[0], keys[i].data, keys[i].len);
    adds[0] = (double)n / (util_now() - t0);
    int64_t now = clock_now_ms(), l = window / slices;
    t0 = util_now();
    for (uint64_t i = 0; i < total; i++)
        ring_add_batch(fs[1]->ring, fs[1], &keys[i], 1, NULL,
                       now - (int64_t)(i / (n / slices)) * l, now);
    adds[1] = (double)total / (util_now() - t0);
    t0 = util_now();
    for (uint64_t i = 0; i < n; i++)
        filter_add(fs[2], keys[i].data, keys[i].len);
    adds[2] = (double)n / (util_now() - t0);
    t0 = util_now();
    for (uint64_t i = 0; i < n / 2; i++)
        if (!counting_remove_hash(fs[2], filter_hash(fs[2], keys[i].data, keys[i].len))) {
            fprintf(stderr, "counting: removal %llu refused\n", (unsigned long long)i);
            exit(1);
        }
    removes = (double)(n / 2) / (util_now() - t0);
    for (uint64_t i = 0; i < n / 2; i++)
        filter_add(fs[2], keys[i].data, keys[i].len);
    free(keys);
    free(arena);

    printf("\nplain blocked, windowed (window 24h, slices 4: 5 live slices of %llu items) and "
           "counting, %llu items each, p = 1e-4, one thread\n",
           (unsigned long long)(n / slices), (unsigned long long)n);
    printf("%-9s %9s %8s %9s %9s %10s %10s %11s %11s %10s\n", "filter", "MB", "B/item",
           "adds M/s", "rm M/s", "absent/1", "absent/bat", "present/1", "present/bat",
           "rate");
    const char *names[3] = {"blocked", "windowed", "counting"};
    for (int x = 0; x < 3; x++) {
        double r[2][2];
        uint64_t yes[2];
        for (int present = 0; present < 2; present++) {
            struct keyset ks;
            make_keys(&ks, opt_queries, n, present ? 100 : 0);
            run_both(fs[x], &ks, &r[present][0], &r[present][1], &yes[present]);
            free_keys(&ks);
        }
        if (yes[1] != opt_queries) {
            fprintf(stderr, "%s: %llu of %llu present keys answered NO\n", names[x],
                    (unsigned long long)(opt_queries - yes[1]), (unsigned long long)opt_queries);
            exit(1);
        }
        char rm[16] = "-";
        if (x == 2)
            snprintf(rm, sizeof(rm), "%.2f", removes / 1e6);
        printf("%-9s %9.1f %8.2f %9.2f %9s %10.2f %10.2f %11.2f %11.2f %10.2e\n", names[x],
               (double)filter_bytes(fs[x]) / 1e6, (double)filter_bytes(fs[x]) / (double)n,
               adds[x] / 1e6, rm, r[0][0] / 1e6, r[0][1] / 1e6, r[1][0] / 1e6, r[1][1] / 1e6,
               (double)yes[0] / (double)opt_queries);
        fflush(stdout);
    }
    printf("(checks in M items/s: /1 one at a time, /bat batches of %d; rate: absent keys "
           "answered YES)\n",
           BATCH);
    for (int x = 0; x < 3; x++)
        filter_free(fs[x]);
}
static double build_rate[3]; /* items/s of the whole build: blocked, classic, fuse */

static void bench_build(void)
{
    const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/bench_filter.XXXXXX", tmpdir);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    char in[4200], out[4200];
    snprintf(in, sizeof(in), "%s/urls.txt", dir);
    snprintf(out, sizeof(out), "%s/urls.bloom", dir);
    FILE *fp = fopen(in, "w");
    char buf[96];
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < opt_build; i++) {
        size_t len = make_url(buf, 'p', i);
        buf[len] = '\n';
        fwrite(buf, 1, len + 1, fp);
        bytes += len + 1;
    }
    fclose(fp);
    printf("\nbuild: %llu URL-like items (%.0f MB, mean %.1f bytes), blocked, p = 1e-4, "
           "file in page cache\n",
           (unsigned long long)opt_build, (double)bytes / 1e6, (double)bytes / opt_build - 1);
    printf("%-8s %-12s %14s %14s %12s\n", "threads", "sizing", "insert M/s", "total M/s",
           "total s");
    for (int sized = 1; sized >= 0; sized--) {
        for (unsigned t = 1; t <= 2; t++) {
            const char *inputs[] = {in};
            struct build_opts o = {.inputs = inputs, .n_inputs = 1, .output = out,
                                   .layout = FILTER_BLOCKED, .fpr = FPR,
                                   .capacity = sized ? opt_build : 0, .threads = t, .seed = 7};
            struct build_result r;
            char err[512];
            if (build_run(&o, &r, err, sizeof(err)) != 0) {
                fprintf(stderr, "build: %s\n", err);
                exit(1);
            }
            printf("%-8u %-12s %14.2f %14.2f %12.2f\n", t, sized ? "--capacity" : "counted",
                   (double)r.lines / r.insert_seconds / 1e6, (double)r.lines / r.seconds / 1e6,
                   r.seconds);
            fflush(stdout);
        }
    }
    printf("\nbuild by layout, 2 threads, --capacity %llu, p = 1e-4\n",
           (unsigned long long)opt_build);
    printf("%-8s %14s %14s %12s %10s\n", "layout", "insert M/s", "total M/s", "total s",
           "bits/item");
    enum filter_layout ls[3] = {FILTER_BLOCKED, FILTER_CLASSIC, FILTER_FUSE};
    for (int l = 0; l < 3; l++) {
        const char *inputs[] = {in};
        struct build_opts o = {.inputs = inputs, .n_inputs = 1, .output = out, .layout = ls[l],
                               .fpr = FPR, .capacity = opt_build, .threads = 2, .seed = 7};
        struct build_result r;
        char err[512];
        if (build_run(&o, &r, err, sizeof(err)) != 0) {
            fprintf(stderr, "build: %s\n", err);
            exit(1);
        }
        build_rate[l] = (double)r.lines / r.seconds;
        printf("%-8s %14.2f %14.2f %12.2f %10.2f\n", filter_layout_name(ls[l]),
               (double)r.lines / r.insert_seconds / 1e6, build_rate[l] / 1e6, r.seconds,
               (double)filter_plan_bytes(&r.plan) * 8 / (double)opt_build);
        fflush(stdout);
    }
    unlink(in);
    unlink(out);
    rmdir(dir);
}

/* --fuse-size: the size check the unit test makes at 1M, at scale. */
static void bench_fuse_size(uint64_t n)
{
    double t0 = util_now();
    struct filter *f = make_filled(FILTER_FUSE, n);
    double dt = util_now() - t0;
    double bpi = (double)filter_bytes(f) * 8 / (double)n;
    printf("fuse, %llu items, p = 1e-4: %u shards, %.1f MB, %.3f bits per item against 1.125 f "
           "= %.3f (f = %u): %+.2f%%; hashed and built in %.1f s (%.2f M items/s)\n",
           (unsigned long long)n, f->shard_count, (double)filter_bytes(f) / 1e6, bpi,
           1.125 * f->k, f->k, (bpi / (1.125 * f->k) - 1) * 100, dt, (double)n / dt / 1e6);
    filter_free(f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench_interleave(uint64_t n)
{
    enum { ROUNDS = 41 };
    struct filter *f[2] = {make_filled(FILTER_BLOCKED, n), make_filled(FILTER_FUSE, n)};
    printf("interleaved: blocked and fuse, %llu items (%.1f MB, %.1f MB), batches of %d, "
           "%d alternating rounds of %llu lookups, median ns per lookup\n",
           (unsigned long long)n, (double)filter_bytes(f[0]) / 1e6,
           (double)filter_bytes(f[1]) / 1e6, BATCH, ROUNDS, (unsigned long long)opt_queries);
    for (int present = 0; present < 2; present++) {
        struct keyset ks;
        make_keys(&ks, opt_queries, n, present ? 100 : 0);
        double t[2][ROUNDS];
        for (int r = 0; r < ROUNDS; r++)
            for (int x = 0; x < 2; x++)
                t[x][r] = 1e9 / run_batched(f[x], &ks);
        qsort(t[0], ROUNDS, sizeof(double), cmp_double);
        qsort(t[1], ROUNDS, sizeof(double), cmp_double);
        printf("%-8s blocked %7.1f ns  fuse %7.1f ns  fuse/blocked throughput %.2fx\n",
               present ? "present" : "absent", t[0][ROUNDS / 2], t[1][ROUNDS / 2],
               t[0][ROUNDS / 2] / t[1][ROUNDS / 2]);
        fflush(stdout);
        free_keys(&ks);
    }
    filter_free(f[0]);
    filter_free(f[1]);
}

int main(int argc, char **argv)
{
    uint64_t interleave = 0;
    bool window_only = false; /* --window given: only that comparison */
    uint64_t fuse_size = 0;
    for (int i = 1; i < argc; i++) {
        uint64_t *dst = NULL;
        if (strcmp(argv[i], "--big") == 0)
            dst = &opt_big;
        else if (strcmp(argv[i], "--queries") == 0)
            dst = &opt_queries;
        else if (strcmp(argv[i], "--build") == 0)
            dst = &opt_build;
        else if (strcmp(argv[i], "--window") == 0)
            dst = &opt_window, window_only = true;
        else if (strcmp(argv[i], "--counting") == 0)
            dst = &opt_counting;
        else if (strcmp(argv[i], "--fuse-size") == 0)
            dst = &fuse_size;
        else if (strcmp(argv[i], "--interleave") == 0)
            dst = &interleave;
        if (!dst || i + 1 >= argc || util_parse_count(argv[++i], dst) != 0 || *dst == 0) {
            fprintf(stderr,
                    "usage: %s [--big N] [--queries N] [--build N] [--window N] [--counting N] "
                    "[--fuse-size N] [--interleave N]\n",
                    argv[0]);
            return 2;
        }
    }
    printf("bench_filter: p = 1e-4, %llu queries per figure, batches of %d, %u CPUs\n",
           (unsigned long long)opt_queries, BATCH, util_ncpus());
    if (opt_counting) {
        bench_lists(opt_counting);
        return 0;
    }
    if (interleave) {
        bench_interleave(interleave);
        return 0;
    }
    if (fuse_size) {
        bench_fuse_size(fuse_size);
        return 0;
    }
    if (window_only) {
        bench_window(opt_window);
        return 0;
    }
    printf("lookups per second, single thread, in millions\n");
    printf("%-8s %-13s %11s %7s %6s %8s %10s %10s %10s %10s\n", "layout", "filter", "size",
           "shards", "bits", "fp rate", "absent/1", "absent/bat", "present/1", "present/bat");
    double r[3][2][2][2]; /* layout, size, present, batched */
    double bpi[3][2], rate[3][2];
    enum filter_layout layouts[3] = {FILTER_BLOCKED, FILTER_CLASSIC, FILTER_FUSE};
    char big_label[32];
    snprintf(big_label, sizeof(big_label), "%lluM items", (unsigned long long)(opt_big / 1000000));
    for (int l = 0; l < 3; l++) {
        bench_lookups(layouts[l], 1000000, "1M items", r[l][0], &bpi[l][0], &rate[l][0]);
        bench_lookups(layouts[l], opt_big, big_label, r[l][1], &bpi[l][1], &rate[l][1]);
    }
    printf("\nout-of-cache ratio, blocked batched / classic single: absent %.2fx, present %.2fx, "
           "half-and-half %.2fx\n",
           r[0][1][0][1] / r[1][1][0][0], r[0][1][1][1] / r[1][1][1][0],
           (2 / (1 / r[1][1][0][0] + 1 / r[1][1][1][0])) > 0
               ? (2 / (1 / r[0][1][0][1] + 1 / r[0][1][1][1])) /
                     (2 / (1 / r[1][1][0][0] + 1 / r[1][1][1][0]))
               : 0.0);
    bench_window(opt_window);
    bench_build();
    /* The fuse layout's targets (issue #17), from the figures above. */
    printf("\nfuse against blocked, %s: %.2f bits per item (target <= 16.5) at a measured rate "
           "of %.2g (target <= 1e-4); batched lookups out of cache %.2fx absent, %.2fx present "
           "(target >= 0.7x); build %.2fx (target >= 0.5x)\n",
           big_label, bpi[2][1], rate[2][1], r[2][1][0][1] / r[0][1][0][1],
           r[2][1][1][1] / r[0][1][1][1], build_rate[2] / build_rate[0]);
    return 0;
}
