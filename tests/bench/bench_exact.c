/* bench_exact: the exact table against LMDB (docs/benchmarks.md, "Exact
 * table"), one engine and one size per run, so that each run's peak RSS is its
 * own. A benchmark prints figures; nothing here is asserted. Run with
 *   ./tests/bench/bench_exact ENGINE DIR [--keys N] [--probes N] [--cold N]
 * ENGINE is `table` (a fingerprint table), `keys` (a keys table) or `lmdb`
 * (LMDB keyed by the same 64-bit fingerprints, MDB_INTEGERKEY, empty values,
 * bulk-loaded sorted with MDB_APPEND: its fastest load). Keys are synthetic
 * URLs of 39 to 50 bytes, key i for i < N present, i >= N absent. Printed:
 * build seconds, keys/s and CPU seconds; the file's size; warm lookups/s for
 * hits and misses (one thread, the key hashed in each lookup); batches of 256
 * hits (ns a probe, pages a batch); cold lookups after
 * posix_fadvise(DONTNEED) on the closed file (pages read a lookup from
 * /proc/self/io); RSS (anonymous and file-backed) at the end. */
#include "config.h"

#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "exact/build.h"
#include "exact/exact.h"
#include "exact/sort.h"

static uint64_t opt_keys = 100000000, opt_probes = 2000000, opt_cold = 20000;
static const uint64_t SEED = 0x0123456789abcdefull;
static char path[4096];
static const char *engine;

/* Key i: "http://www.site<i>.example/p/<i*7919 % 100003>/index.html". */
static size_t key_of(char *out, uint64_t i)
{
    char *p = out;
    memcpy(p, "http://www.site", 15);
    p += 15;
    char tmp[24];
    int d = 0;
    uint64_t v = i;
    do
        tmp[d++] = (char)('0' + v % 10), v /= 10;
    while (v);
    while (d)
        *p++ = tmp[--d];
    memcpy(p, ".example/p/", 11);
    p += 11;
    v = i * 7919 % 100003;
    do
        tmp[d++] = (char)('0' + v % 10), v /= 10;
    while (v);
    while (d)
        *p++ = tmp[--d];
    memcpy(p, "/index.html", 11);
    p += 11;
    return (size_t)(p - out);
}

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The share of the file's pages in the page cache (mincore over a mapping of
 * our own), to show that a cold run starts cold. */
static double resident_share(void)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t len = (size_t)st.st_size, pages = (len + 4095) / 4096, in = 0;
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *vec = malloc(pages);
    if (m != MAP_FAILED && vec && mincore(m, len, vec) == 0)
        for (size_t i = 0; i < pages; i++)
            in += vec[i] & 1;
    if (m != MAP_FAILED)
        munmap(m, len);
    free(vec);
    close(fd);
    return (double)in / (double)pages;
}

static uint64_t proc_field(const char *file, const char *name)
{
    FILE *f = fopen(file, "r");
    char line[256];
    uint64_t v = 0;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, name, n) == 0)
            v = strtoull(line + n, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_exact: %s: %s\n", what, err);
    exit(1);
}

struct adder {
    struct exact_builder *b;
    uint64_t from, to;
};

static void *add_keys(void *arg)
{
    struct adder *a = arg;
    static __thread char bufs[256][64];
    const void *keys[256];
    size_t lens[256];
    char err[256];
    for (uint64_t i = a->from; i < a->to;) {
        size_t k = 0;
        for (; k < 256 && i < a->to; k++, i++) {
            lens[k] = key_of(bufs[k], i);
            keys[k] = bufs[k];
        }
        if (exact_builder_add(a->b, keys, lens, k, err, sizeof(err)) != 0)
            die("add", err);
    }
    return NULL;
}

/* Build the table on every CPU: one adding thread a CPU, the builder's sorts on all. */
static void build_table(enum exact_kind kind)
{
    char err[512];
    struct exact_build_opts o = {.path = path, .kind = kind, .seed = SEED};
    struct exact_builder *b = exact_builder_new(&o, err, sizeof(err));
    if (!b)
        die("builder", err);
    unsigned nt = util_ncpus();
    pthread_t tid[64];
    struct adder a[64];
    for (unsigned t = 0; t < nt && t < 64; t++) {
        a[t] = (struct adder){b, opt_keys * t / nt, opt_keys * (t + 1) / nt};
        pthread_create(&tid[t], NULL, add_keys, &a[t]);
    }
    for (unsigned t = 0; t < nt && t < 64; t++)
        pthread_join(tid[t], NULL);
    struct exact_build_stats st;
    if (exact_builder_finish(b, &st, err, sizeof(err)) != 0)
        die("finish", err);
    exact_builder_free(b);
    printf("runs spilled             %llu (budget 1 GiB)\n", (unsigned long long)st.runs);
}

/* LMDB: fingerprints computed and sorted as the table's builder does, then
 * appended in order, one write transaction, synced once at the end. */
static void build_lmdb(void)
{
    struct exact_fp_secret sec;
    exact_fp_init(&sec, SEED);
    uint64_t *fps = malloc(opt_keys * 8), *scr = malloc(opt_keys * 8);
    if (!fps || !scr)
        die("lmdb", "out of memory");
    char buf[64];
    for (uint64_t i = 0; i < opt_keys; i++)
        fps[i] = exact_fp(&sec, buf, key_of(buf, i));
    exact_sort_u64(fps, scr, opt_keys, util_ncpus());
    free(scr);
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    int rc = mdb_env_create(&env);
    mdb_env_set_mapsize(env, (size_t)64 << 30);
    if (rc || (rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_WRITEMAP | MDB_NOSYNC, 0644)) ||
        (rc = mdb_txn_begin(env, NULL, 0, &txn)) ||
        (rc = mdb_dbi_open(txn, NULL, MDB_INTEGERKEY, &dbi)))
        die("lmdb open", mdb_strerror(rc));
    for (uint64_t i = 0; i < opt_keys; i++) {
        if (i && fps[i] == fps[i - 1])
            continue;
        MDB_val k = {8, &fps[i]}, v = {0, NULL};
        if ((rc = mdb_put(txn, dbi, &k, &v, MDB_APPEND)))
            die("lmdb put", mdb_strerror(rc));
    }
    if ((rc = mdb_txn_commit(txn)) || (rc = mdb_env_sync(env, 1)))
        die("lmdb commit", mdb_strerror(rc));
    mdb_env_close(env);
    free(fps);
}

/* The engine opened for lookups. */
static struct exact_table *table;
static MDB_env *env;
static MDB_txn *rtxn;
static MDB_dbi rdbi;
static struct exact_fp_secret lsec;

static void open_engine(void)
{
    char err[512];
    if (strcmp(engine, "lmdb") != 0) {
        if (!(table = exact_table_open(path, err, sizeof(err))))
            die("open", err);
        return;
    }
    exact_fp_init(&lsec, SEED);
    int rc = mdb_env_create(&env);
    mdb_env_set_mapsize(env, (size_t)64 << 30);
    if (rc || (rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NORDAHEAD, 0644)) ||
        (rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &rtxn)) ||
        (rc = mdb_dbi_open(rtxn, NULL, MDB_INTEGERKEY, &rdbi)))
        die("lmdb open", mdb_strerror(rc));
}

static void close_engine(void)
{
    if (table)
        exact_table_close(table);
    table = NULL;
    if (env) {
        mdb_txn_abort(rtxn);
        mdb_env_close(env);
        env = NULL;
    }
}

static bool lookup(const char *key, size_t len)
{
    if (table)
        return exact_table_find(table, key, len, NULL);
    uint64_t fp = exact_fp(&lsec, key, len);
    MDB_val k = {8, &fp}, v;
    return mdb_get(rtxn, rdbi, &k, &v) == 0;
}

/* n lookups of random keys, hits (i < N) or misses (i >= N); ns a lookup. */
static double last_cpu_ns; /* CPU ns an item of the last run (this thread's) */

static double run_lookups(uint64_t n, bool hits, uint64_t *found, uint64_t seed)
{
    uint64_t x = seed | 1, f = 0;
    char buf[64];
    double t0 = util_now(), c0 = thread_cpu();
    for (uint64_t q = 0; q < n; q++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t i = x % opt_keys + (hits ? 0 : opt_keys);
        f += lookup(buf, key_of(buf, i));
    }
    *found = f;
    last_cpu_ns = (thread_cpu() - c0) * 1e9 / (double)n;
    return (util_now() - t0) * 1e9 / (double)n;
}

/* Batches of 256 hits: the table's confirm, or LMDB's gets in sorted order. */
static double run_batches(uint64_t n, unsigned flags, double *pages_per_batch, uint64_t seed)
{
    enum { B = 256 };
    static char keys[B][64];
    struct exact_probe p[B];
    bool out[B];
    uint64_t x = seed | 1, pages = 0, batches = n / B;
    double t0 = util_now(), c0 = thread_cpu();
    for (uint64_t b = 0; b < batches; b++) {
        for (size_t j = 0; j < B; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t len = key_of(keys[j], x % opt_keys);
            const struct exact_fp_secret *s = table ? exact_table_secret(table) : &lsec;
            p[j] = (struct exact_probe){exact_fp(s, keys[j], len), keys[j], len, j};
        }
        if (table) {
            pages += exact_table_confirm(table, p, B, out, flags);
        } else {
            for (size_t j = 0; j < B; j++) {
                MDB_val k = {8, &p[j].fp}, v;
                out[j] = mdb_get(rtxn, rdbi, &k, &v) == 0;
            }
        }
    }
    *pages_per_batch = (double)pages / (double)(batches ? batches : 1);
    last_cpu_ns = (thread_cpu() - c0) * 1e9 / (double)(batches * B);
    return (util_now() - t0) * 1e9 / (double)(batches * B);
}

/* Drop the file's pages from the page cache (the engine is closed: mapped
 * pages are not dropped), then reopen. */
static void make_cold(void)
{
    close_engine();
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        fdatasync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    open_engine();
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr,
                "usage: bench_exact table|keys|lmdb DIR [--keys N] [--probes N] [--cold N]\n");
        return 2;
    }
    engine = argv[1];
    for (int i = 3; i + 1 < argc; i += 2) {
        uint64_t v;
        if (util_parse_count(argv[i + 1], &v) != 0)
            die(argv[i], "not a count");
        if (strcmp(argv[i], "--keys") == 0)
            opt_keys = v;
        else if (strcmp(argv[i], "--probes") == 0)
            opt_probes = v;
        else if (strcmp(argv[i], "--cold") == 0)
            opt_cold = v;
    }
    snprintf(path, sizeof(path), "%s/bench.%s", argv[2], engine);
    unlink(path);
    printf("engine %s, %llu keys, %u CPUs\n", engine, (unsigned long long)opt_keys, util_ncpus());
    double t0 = util_now(), c0 = cpu_now();
    if (strcmp(engine, "lmdb") == 0)
        build_lmdb();
    else
        build_table(strcmp(engine, "keys") == 0 ? EXACT_KIND_KEYS : EXACT_KIND_FP);
    double bt = util_now() - t0, bc = cpu_now() - c0;
    struct stat st;
    stat(path, &st);
    printf("build                    %.1f s, %.2f M keys/s, %.1f CPU s\n", bt,
           (double)opt_keys / bt / 1e6, bc);
    /* Allocated blocks: LMDB's file is as long as its map size, sparse. */
    double bytes = (double)st.st_blocks * 512;
    printf("file                     %.0f MB on disk, %.1f bytes a key\n", bytes / 1e6,
           bytes / (double)opt_keys);
    printf("peak RSS of the build    %.0f MB\n",
           (double)proc_field("/proc/self/status", "VmHWM:") / 1e3);
    open_engine();
    uint64_t found;
    run_lookups(opt_probes, true, &found, 1); /* warm the cache */
    double hit = run_lookups(opt_probes, true, &found, 2);
    printf("warm hits                %.0f ns (%.0f CPU ns), %.2f M/s (found %llu of %llu)\n", hit,
           last_cpu_ns, 1e3 / hit, (unsigned long long)found, (unsigned long long)opt_probes);
    double miss = run_lookups(opt_probes, false, &found, 3);
    printf("warm misses              %.0f ns (%.0f CPU ns), %.2f M/s (found %llu)\n", miss,
           last_cpu_ns, 1e3 / miss, (unsigned long long)found);
    double ppb;
    double bat = run_batches(opt_probes, 0, &ppb, 4);
    printf("warm batch of 256 hits   %.0f ns (%.0f CPU ns) a probe, %.1f pages a batch\n", bat,
           last_cpu_ns, ppb);
    if (strcmp(engine, "lmdb") != 0) {
        bat = run_batches(opt_probes, EXACT_BATCH_WILLNEED_AUTO, &ppb, 4);
        printf("warm batch, AUTO         %.0f ns (%.0f CPU ns) a probe, %.1f pages a batch\n", bat,
               last_cpu_ns, ppb);
    }
    static const unsigned modes[] = {0, EXACT_BATCH_WILLNEED, EXACT_BATCH_WILLNEED_AUTO};
    static const char *const mode_names[] = {"           ", " (WILLNEED)", " (AUTO)    "};
    for (int willneed = 0; willneed <= (strcmp(engine, "lmdb") ? 2 : 0); willneed++) {
        make_cold();
        printf("after DONTNEED           %.1f%% of the file in the page cache\n",
               100 * resident_share());
        uint64_t r0 = proc_field("/proc/self/io", "read_bytes:");
        double cold = run_lookups(opt_cold, true, &found, 5 + (uint64_t)willneed);
        uint64_t r1 = proc_field("/proc/self/io", "read_bytes:");
        if (!willneed)
            printf("cold hits                %.0f us, %.2f pages read a lookup\n", cold / 1e3,
                   (double)(r1 - r0) / 4096.0 / (double)opt_cold);
        make_cold();
        r0 = proc_field("/proc/self/io", "read_bytes:");
        bat = run_batches(opt_cold, modes[willneed], &ppb, 7 + (uint64_t)willneed);
        r1 = proc_field("/proc/self/io", "read_bytes:");
        printf("cold batch of 256 hits%s %.1f us a probe, %.2f pages read a probe\n",
               mode_names[willneed], bat / 1e3,
               (double)(r1 - r0) / 4096.0 / (double)(opt_cold / 256 * 256));
    }
    printf("RSS at the end           %.0f MB anonymous, %.0f MB file-backed (page cache)\n",
           (double)proc_field("/proc/self/status", "RssAnon:") / 1e3,
           (double)proc_field("/proc/self/status", "RssFile:") / 1e3);
    close_engine();
    unlink(path);
    char lock[4200];
    snprintf(lock, sizeof(lock), "%s-lock", path);
    unlink(lock);
    return 0;
}
