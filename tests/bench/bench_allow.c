/* bench_allow: what an allow-list adds to a check, printed as a table (a
 * benchmark prints figures; nothing here is asserted). Run with
 *   ./tests/bench/bench_allow [--items N] [--queries N]
 * A blocked filter of N present items (default 1M, p = 1e-4) is checked for
 * present items by their hash (the line protocol's pipelined CHECK), first
 * alone, then with the allow-set probe a YES takes when the set is not
 * empty: sets of 1 thousand and of N entries (a tenth of them exceptions
 * for listed items, the rest for other items), so the probe's cache misses
 * show. Each check hashes its item (XXH3-128), as the daemon does. One
 * thread; ns per check, best of 3 runs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "bloom/filter.h"
#include "store/allow.h"

static uint64_t opt_items = 1000000, opt_queries = 4000000;

static struct hash128 *hashes; /* of the present items */

static double run(const struct filter *f, const struct allow_set *s, uint64_t *yes)
{
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        uint64_t y = 0, x = 88172645463325252ull;
        double t0 = util_now();
        for (uint64_t q = 0; q < opt_queries; q++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t i = x % opt_items;
            struct hash128 h = filter_hash(f, &i, sizeof(i)); /* as a check does */
            bool hit = filter_check_hash(f, h);
            if (hit && allow_any(s) && allow_get(s, h))
                hit = false;
            y += hit;
        }
        double dt = util_now() - t0;
        if (dt < best)
            best = dt;
        *yes = y;
    }
    return best * 1e9 / (double)opt_queries;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--items") == 0)
            opt_items = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--queries") == 0)
            opt_queries = strtoull(argv[i + 1], NULL, 10);
    }
    char err[256];
    struct filter_plan plan;
    if (opt_items < 1000 ||
        filter_plan_make(FILTER_BLOCKED, opt_items, 1e-4, 0, &plan, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_allow: %s\n", opt_items < 1000 ? "--items below 1000" : err);
        return 1;
    }
    struct filter *f = filter_create(&plan, 12345, err, sizeof(err));
    hashes = malloc(opt_items * sizeof(*hashes));
    if (!f || !hashes) {
        fprintf(stderr, "bench_allow: out of memory\n");
        return 1;
    }
    for (uint64_t i = 0; i < opt_items; i++) {
        hashes[i] = filter_hash(f, &i, sizeof(i));
        uint32_t shard;
        filter_add_hash_raw(f, hashes[i], &shard);
    }
    printf("bench_allow: blocked filter, %llu items, %llu MiB; %llu checks of present items\n",
           (unsigned long long)opt_items, (unsigned long long)(filter_bytes(f) >> 20),
           (unsigned long long)opt_queries);
    printf("%-36s %10s %10s %12s\n", "allow-list", "ns/check", "YES", "set bytes");
    struct allow_set *empty = allow_new();
    uint64_t yes;
    double ns = run(f, empty, &yes);
    printf("%-36s %10.1f %10llu %12zu\n", "empty", ns, (unsigned long long)yes,
           allow_bytes(empty));
    uint64_t sizes[2] = {1000, opt_items};
    for (int k = 0; k < 2; k++) {
        struct allow_set *s = allow_new();
        for (uint64_t i = 0; i < sizes[k]; i++) {
            uint64_t other = i + (1ull << 40);
            struct hash128 h = i % 10 == 0 ? hashes[(i * 7919) % opt_items]
                                            : hash_item(&other, sizeof(other), 99);
            allow_update(s, h, ALLOW_EXCEPT, 0, NULL);
        }
        allow_free_tables(allow_take_retired(s));
        char label[64];
        snprintf(label, sizeof(label), "%llu entries (%llu listed)", (unsigned long long)sizes[k],
                 (unsigned long long)(sizes[k] + 9) / 10);
        ns = run(f, s, &yes);
        printf("%-36s %10.1f %10llu %12zu\n", label, ns, (unsigned long long)yes, allow_bytes(s));
        allow_free(s);
    }
    allow_free(empty);
    filter_free(f);
    free(hashes);
    return 0;
}
