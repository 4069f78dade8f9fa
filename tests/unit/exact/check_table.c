/* Unit tests for exact tables (src/exact/: build.c, table.c, verify.c,
 * sort.c, write.c): tables built in memory and through spilled runs, from
 * several threads, hold exactly the distinct keys a naive set holds; lookups
 * answer as the naive set does; a batch answers as single lookups do; and a
 * damaged file (each header field, each section, truncation, trailing bytes)
 * is refused with a message naming the file and the fault. Offsets are the
 * layout of docs/file-format.md ("The exact table"), written out on purpose. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/build.h"
#include "exact/exact.h"
#include "exact/exact_int.h"
#include "exact/sort.h"
#include "lib/testutil.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

enum {
    OFF_VERSION = 8,
    OFF_KIND = 12,
    OFF_COUNT = 16,
    OFF_PAGE = 32,
    OFF_RESERVED = 36,
    OFF_FENCE_OFF = 48,
    OFF_BLOB_BYTES = 80,
    OFF_FILE_BYTES = 88,
    OFF_FP_SUM = 96,
    OFF_FENCE_SUM = 104,
    OFF_KEYS_SUM = 112,
    OFF_HEADER_SUM = 120,
};

static const uint64_t SEED = 0x1234abcd5678ef01ull;

/* Key i of a test: "key-<i>" padded by i % 7 'x's, so lengths vary. */
static size_t key_of(char *buf, uint64_t i, const char *prefix)
{
    size_t n = tu_key(buf, prefix, i);
    for (uint64_t p = 0; p < i % 7; p++)
        buf[n++] = 'x';
    buf[n] = '\0';
    return n;
}

struct adder {
    struct exact_builder *b;
    uint64_t from, to, distinct;
};

/* Adds keys from..to (key i % distinct) in batches of 100. */
static void *add_range(void *arg)
{
    struct adder *a = arg;
    static __thread char bufs[100][64];
    const void *keys[100];
    size_t lens[100];
    char err[256];
    for (uint64_t i = a->from; i < a->to;) {
        size_t k = 0;
        for (; k < 100 && i < a->to; k++, i++) {
            lens[k] = key_of(bufs[k], i % a->distinct, "key-");
            keys[k] = bufs[k];
        }
        if (exact_builder_add(a->b, keys, lens, k, err, sizeof(err)) != 0)
            return (void *)1;
    }
    return NULL;
}

/* Build a table of keys 0..distinct-1, each added total/distinct times, from
 * `threads` adding threads, under the memory budget mem. */
static void build(const char *path, enum exact_kind kind, uint64_t total, uint64_t distinct,
                  uint64_t mem, unsigned threads, struct exact_build_stats *st)
{
    char err[512] = "";
    struct exact_build_opts o = {
        .path = path, .kind = kind, .seed = SEED, .mem_bytes = mem, .threads = 2};
    struct exact_builder *b = exact_builder_new(&o, err, sizeof(err));
    ck_assert_msg(b != NULL, "%s", err);
    pthread_t tid[4];
    struct adder a[4];
    for (unsigned t = 0; t < threads; t++) {
        a[t] = (struct adder){b, total * t / threads, total * (t + 1) / threads, distinct};
        ck_assert_int_eq(pthread_create(&tid[t], NULL, add_range, &a[t]), 0);
    }
    for (unsigned t = 0; t < threads; t++) {
        void *rc;
        pthread_join(tid[t], &rc);
        ck_assert_ptr_null(rc);
    }
    ck_assert_msg(exact_builder_finish(b, st, err, sizeof(err)) == 0, "%s", err);
    exact_builder_free(b);
}

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The table against the naive set of keys 0..distinct-1: the same sorted,
 * distinct fingerprints, every key found (and, in a keys table, its entry
 * the key's bytes), no absent key found. */
static void check_against_naive(const char *path, enum exact_kind kind, uint64_t distinct)
{
    char err[512] = "", buf[64];
    struct exact_table *t = exact_table_open(path, err, sizeof(err));
    ck_assert_msg(t != NULL, "%s", err);
    ck_assert_msg(exact_table_verify(t, err, sizeof(err)) == 0, "%s", err);
    struct exact_info info;
    exact_table_info(t, &info);
    ck_assert_int_eq(info.kind, kind);
    ck_assert_uint_eq(info.count, distinct);
    ck_assert_uint_eq(info.seed, SEED);
    size_t flen;
    unsigned char *raw = tu_read_file(path, &flen);
    ck_assert_uint_eq(info.file_bytes, flen);
    ck_assert_uint_eq(info.checksum, XXH3_64bits(raw, 120));
    free(raw);
    struct exact_fp_secret sec;
    exact_fp_init(&sec, SEED);
    uint64_t *naive = malloc(distinct * 8);
    for (uint64_t i = 0; i < distinct; i++)
        naive[i] = exact_fp(&sec, buf, key_of(buf, i, "key-"));
    qsort(naive, distinct, 8, u64_cmp);
    for (uint64_t i = 0; i < distinct; i++)
        ck_assert_msg(exact_table_fp_at(t, i) == naive[i], "entry %llu", (unsigned long long)i);
    free(naive);
    for (uint64_t i = 0; i < distinct; i++) {
        size_t n = key_of(buf, i, "key-");
        uint64_t at = UINT64_MAX;
        ck_assert_msg(exact_table_find(t, buf, n, &at), "key %s not found", buf);
        ck_assert(exact_table_has_fp(t, exact_fp(&sec, buf, n)));
        if (kind == EXACT_KIND_KEYS) {
            size_t elen = 0;
            const void *e = exact_table_entry(t, at, &elen);
            ck_assert_ptr_nonnull(e);
            ck_assert_uint_eq(elen, n);
            ck_assert_int_eq(memcmp(e, buf, n), 0);
        }
    }
    for (uint64_t i = 0; i < 3 * distinct; i++) {
        size_t n = key_of(buf, i, "absent-");
        ck_assert_msg(!exact_table_find(t, buf, n, NULL), "absent %s found", buf);
    }
    exact_table_close(t);
}

START_TEST(test_build_in_memory)
{
    char path[4200];
    tu_path(path, sizeof(path), "t.exact");
    struct exact_build_stats st;
    build(path, EXACT_KIND_FP, 30000, 20011, 0, 1, &st);
    ck_assert_uint_eq(st.runs, 0);
    ck_assert_uint_eq(st.keys_in, 30000);
    ck_assert_uint_eq(st.count, 20011);
    check_against_naive(path, EXACT_KIND_FP, 20011);
}
END_TEST

START_TEST(test_build_spilled_runs_threads)
{
    char path[4200];
    tu_path(path, sizeof(path), "t.exact");
    struct exact_build_stats st;
    /* 1 MiB: 65,536 fingerprints a run, so 400,000 adds spill at least 6 runs,
     * each holding repeats of the others. */
    build(path, EXACT_KIND_FP, 400000, 150001, 1 << 20, 2, &st);
    ck_assert_uint_ge(st.runs, 6);
    ck_assert_uint_eq(st.count, 150001);
    check_against_naive(path, EXACT_KIND_FP, 150001);
}
END_TEST

START_TEST(test_build_keys)
{
    char path[4200];
    tu_path(path, sizeof(path), "k.exact");
    struct exact_build_stats st;
    build(path, EXACT_KIND_KEYS, 30000, 9973, 0, 2, &st);
    ck_assert_uint_eq(st.runs, 0);
    check_against_naive(path, EXACT_KIND_KEYS, 9973);
    build(path, EXACT_KIND_KEYS, 200000, 70001, 1 << 20, 2, &st);
    ck_assert_uint_ge(st.runs, 4);
    check_against_naive(path, EXACT_KIND_KEYS, 70001);
}
END_TEST

START_TEST(test_empty_and_tiny)
{
    char path[4200];
    tu_path(path, sizeof(path), "e.exact");
    struct exact_build_stats st;
    for (uint64_t n = 0; n <= 513; n += (n < 3 ? 1 : 255)) {
        build(path, EXACT_KIND_FP, n, n ? n : 1, 0, 1, &st);
        ck_assert_uint_eq(st.count, n);
        check_against_naive(path, EXACT_KIND_FP, n);
        build(path, EXACT_KIND_KEYS, n, n ? n : 1, 0, 1, &st);
        check_against_naive(path, EXACT_KIND_KEYS, n);
    }
}
END_TEST

/* A batch of present and absent keys in random order answers as one lookup
 * at a time does, with and without WILLNEED (or its AUTO test), and names
 * each page once. */
START_TEST(test_batch_equals_single)
{
    char path[4200], err[512];
    tu_path(path, sizeof(path), "b.exact");
    for (int kind = EXACT_KIND_FP; kind <= EXACT_KIND_KEYS; kind++) {
        build(path, (enum exact_kind)kind, 50000, 50000, 0, 2, NULL);
        struct exact_table *t = exact_table_open(path, err, sizeof(err));
        ck_assert_msg(t != NULL, "%s", err);
        enum { N = 4000 };
        static char keys[N][64];
        struct exact_probe *p = malloc(N * sizeof(*p));
        bool *out = malloc(N), *single = malloc(N);
        uint64_t rng = 7;
        for (unsigned flags = 0; flags <= EXACT_BATCH_WILLNEED_AUTO; flags++) {
            for (size_t i = 0; i < N; i++) {
                uint64_t r = tu_rand(&rng);
                size_t n = key_of(keys[i], r % 100000, r & 1 ? "key-" : "absent-");
                p[i] = (struct exact_probe){exact_fp(exact_table_secret(t), keys[i], n), keys[i], n,
                                            i};
                single[i] = exact_table_find(t, keys[i], n, NULL);
                out[i] = !single[i];
            }
            size_t pages = exact_table_confirm(t, p, N, out, flags);
            size_t hits = 0;
            for (size_t i = 0; i < N; i++) {
                ck_assert_msg(out[i] == single[i], "probe %zu", i);
                hits += single[i];
            }
            ck_assert_uint_gt(hits, N / 8);
            ck_assert_uint_lt(hits, N);
            ck_assert_uint_gt(pages, 0);
            ck_assert_uint_le(pages, (50000 + EXACT_PER_PAGE - 1) / EXACT_PER_PAGE);
            /* The same probes again, already sorted: the same pages. */
            ck_assert_uint_eq(exact_table_confirm(t, p, N, out, flags), pages);
        }
        free(p);
        free(out);
        free(single);
        exact_table_close(t);
    }
}
END_TEST

/* The radix sorts against qsort: fingerprints from a narrow range (many
 * repeats, many empty buckets) and from the whole range; keys entries with
 * few distinct fingerprints, so ties are ordered by their bytes. */
START_TEST(test_sorts)
{
    enum { N = 200000 };
    uint64_t *a = malloc(N * 8), *b = malloc(N * 8), *s = malloc(N * 8);
    uint64_t rng = 3;
    for (int range = 0; range < 2; range++) {
        for (size_t i = 0; i < N; i++)
            a[i] = b[i] = range ? tu_rand(&rng) : (tu_rand(&rng) % 1000) << 40;
        exact_sort_u64(a, s, N, 2);
        qsort(b, N, 8, u64_cmp);
        ck_assert_int_eq(memcmp(a, b, N * 8), 0);
    }
    free(a);
    free(b);
    free(s);
    enum { K = 5000 };
    struct exact_kent *e = malloc(K * sizeof(*e)), *ks = malloc(K * sizeof(*ks));
    unsigned char arena[K * 8];
    size_t used = 0;
    for (size_t i = 0; i < K; i++) {
        size_t n = (size_t)snprintf((char *)arena + used, 8, "%zu", (i * 7919) % K);
        e[i].fp = (uint64_t)(i % 3) << 62 | (i % 2);
        e[i].ref = (uint64_t)used << 16 | n;
        used += n;
    }
    exact_sort_kent(e, ks, K, arena, 2);
    for (size_t i = 1; i < K; i++) {
        ck_assert_uint_le(e[i - 1].fp, e[i].fp);
        if (e[i - 1].fp == e[i].fp) {
            size_t la = e[i - 1].ref & 0xffff, lb = e[i].ref & 0xffff;
            int c =
                memcmp(arena + (e[i - 1].ref >> 16), arena + (e[i].ref >> 16), la < lb ? la : lb);
            ck_assert(c < 0 || (c == 0 && la < lb));
        }
    }
    free(e);
    free(ks);
}
END_TEST

/* Two keys with one fingerprint (written through the writer, since a real
 * 64-bit collision cannot be found for a test): a run of equal fingerprints
 * that crosses a page boundary is scanned to its end, by a batch as by the
 * fence-and-page search, and a key with the run's fingerprint but other bytes
 * is not found. */
START_TEST(test_keys_fingerprint_run)
{
    char path[4200], err[512] = "";
    tu_path(path, sizeof(path), "run.exact");
    struct exact_writer *w = exact_writer_open(path, EXACT_KIND_KEYS, SEED, NULL, err, sizeof(err));
    ck_assert_msg(w != NULL, "%s", err);
    char key[16];
    for (uint64_t i = 0; i < EXACT_PER_PAGE - 2; i++) {
        size_t n = tu_key(key, "a", i);
        ck_assert_int_eq(exact_writer_put(w, 100 + i, key, n), 0);
    }
    const char *run[] = {"r0", "r1", "r2", "r3", "r4"}; /* entries 510 to 514: pages 0 and 1 */
    for (size_t i = 0; i < 5; i++)
        ck_assert_int_eq(exact_writer_put(w, 1u << 20, run[i], 2), 0);
    ck_assert_int_eq(exact_writer_put(w, 1u << 21, "z", 1), 0);
    ck_assert_msg(exact_writer_commit(w, NULL, NULL, err, sizeof(err)) == 0, "%s", err);
    struct exact_table *t = exact_table_open(path, err, sizeof(err));
    ck_assert_msg(t != NULL, "%s", err);
    struct exact_probe p[7];
    bool out[7];
    for (size_t i = 0; i < 5; i++)
        p[i] = (struct exact_probe){1u << 20, run[i], 2, i};
    p[5] = (struct exact_probe){1u << 20, "r5", 2, 5};
    p[6] = (struct exact_probe){1u << 20, NULL, 0, 6};
    exact_table_confirm(t, p, 7, out, 0);
    for (size_t i = 0; i < 5; i++)
        ck_assert_msg(out[i], "run entry %zu", i);
    ck_assert(!out[5]);
    ck_assert(out[6]);
    ck_assert(exact_table_has_fp(t, 1u << 20));
    ck_assert(!exact_table_has_fp(t, (1u << 20) + 1));
    size_t len;
    ck_assert_int_eq(memcmp(exact_table_entry(t, 514, &len), "r4", 2), 0);
    exact_table_close(t);
}
END_TEST

/* A loaded table keeps serving after its file is deleted, or replaced by
 * rename with a table of other keys: the mapping is its own. */
START_TEST(test_file_gone_after_load)
{
    char path[4200], other[4200], err[512] = "", buf[64];
    tu_path(path, sizeof(path), "gone.exact");
    tu_path(other, sizeof(other), "other.exact");
    for (int kind = EXACT_KIND_FP; kind <= EXACT_KIND_KEYS; kind++) {
        build(path, (enum exact_kind)kind, 5000, 5000, 0, 1, NULL);
        struct exact_table *t = exact_table_open(path, err, sizeof(err));
        ck_assert_msg(t != NULL, "%s", err);
        build(other, (enum exact_kind)kind, 10, 10, 0, 1, NULL);
        ck_assert_int_eq(rename(other, path), 0);
        for (int round = 0; round < 2; round++) {
            for (uint64_t i = 0; i < 5000; i++) {
                size_t n = key_of(buf, i, "key-");
                ck_assert_msg(exact_table_find(t, buf, n, NULL), "key %s", buf);
            }
            ck_assert_int_eq(exact_table_verify(t, err, sizeof(err)), 0);
            unlink(path);
        }
        exact_table_close(t);
    }
}
END_TEST

START_TEST(test_builder_refusals)
{
    char err[512] = "", path[4200];
    tu_path(path, sizeof(path), "no-such-dir/t.exact");
    struct exact_build_opts o = {.path = path, .kind = EXACT_KIND_FP, .seed = 1};
    struct exact_builder *b = exact_builder_new(&o, err, sizeof(err));
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(exact_builder_finish(b, NULL, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "no-such-dir") != NULL, "%s", err);
    exact_builder_free(b);
    tu_path(path, sizeof(path), "t.exact");
    o.kind = EXACT_KIND_KEYS;
    b = exact_builder_new(&o, err, sizeof(err));
    static char big[EXACT_MAX_KEY + 2];
    const void *k = big;
    size_t len = sizeof(big);
    ck_assert_int_eq(exact_builder_add(b, &k, &len, 1, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "a key of") != NULL, "%s", err);
    uint64_t fp = 1;
    ck_assert_int_eq(exact_builder_add_fps(b, &fp, 1, err, sizeof(err)), -1);
    exact_builder_free(b);
    o.mem_bytes = 1000;
    ck_assert_ptr_null(exact_builder_new(&o, err, sizeof(err)));
}
END_TEST

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v; /* the tests run on little-endian hosts, as the layout is */
}

static void put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

/* Recompute the header checksum after a test changed a field. */
static void reseal(unsigned char *f)
{
    put64(f + OFF_HEADER_SUM, XXH3_64bits(f, OFF_HEADER_SUM));
}

static void reseal_fences(unsigned char *f)
{
    uint64_t off = get64(f + OFF_FENCE_OFF), n = get64(f + 56);
    put64(f + OFF_FENCE_SUM, XXH3_64bits(f + off, n * 8));
    reseal(f);
}

/* A table of n keys of the kind, as bytes; its path in path. */
static unsigned char *base_file(char *path, size_t plen, enum exact_kind kind, uint64_t n,
                                size_t *len)
{
    tu_path(path, plen, kind == EXACT_KIND_FP ? "d.exact" : "dk.exact");
    build(path, kind, n, n, 0, 1, NULL);
    return tu_read_file(path, len);
}

/* bytes, written to path, are refused at open with a message naming the file
 * and containing want. */
static void refused(const char *path, const unsigned char *f, size_t len, const char *want)
{
    char err[512] = "";
    tu_write_file(path, f, len);
    struct exact_table *t = exact_table_open(path, err, sizeof(err));
    ck_assert_msg(t == NULL, "accepted a table with: %s", want);
    ck_assert_msg(strstr(err, path) != NULL, "message does not name the file: %s", err);
    ck_assert_msg(strstr(err, want) != NULL, "wanted \"%s\", got: %s", want, err);
}

/* bytes that load (the pages are not read at open) but fail verification with
 * want; every key's lookup stays inside the file meanwhile. */
static void fails_verify(const char *path, const unsigned char *f, size_t len, const char *want)
{
    char err[512] = "", buf[64];
    tu_write_file(path, f, len);
    struct exact_table *t = exact_table_open(path, err, sizeof(err));
    ck_assert_msg(t != NULL, "%s", err);
    for (uint64_t i = 0; i < 3000; i++) {
        size_t n = key_of(buf, i, "key-");
        (void)exact_table_find(t, buf, n, NULL);
    }
    ck_assert_int_eq(exact_table_verify(t, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, path) != NULL, "message does not name the file: %s", err);
    ck_assert_msg(strstr(err, want) != NULL, "wanted \"%s\", got: %s", want, err);
    exact_table_close(t);
}

START_TEST(test_header_damage)
{
    char path[4200];
    size_t len;
    unsigned char *f = base_file(path, sizeof(path), EXACT_KIND_FP, 2000, &len);
    unsigned char *c = malloc(len);
    /* Every byte of the header page, flipped: refused. */
    for (size_t i = 0; i < EXACT_PAGE; i += (i < 128 ? 1 : 61)) {
        memcpy(c, f, len);
        c[i] ^= 0x20;
        /* The version is read before the checksum: a newer format may seal its header otherwise. */
        refused(path, c, len,
                i < 8     ? "bad magic"
                : i < 12  ? "newer than"
                : i < 128 ? "header checksum"
                          : "reserved");
    }
#define SEALED(stmt, want)                                                                         \
    do {                                                                                           \
        memcpy(c, f, len);                                                                         \
        stmt;                                                                                      \
        reseal(c);                                                                                 \
        refused(path, c, len, want);                                                               \
    } while (0)
    SEALED(put32(c + OFF_VERSION, 2), "newer than this bloomgate reads");
    SEALED(put32(c + OFF_VERSION, 0), "version 0");
    SEALED(put32(c + OFF_KIND, 3), "unknown kind");
    SEALED(put32(c + OFF_PAGE, 8192), "page size");
    SEALED(put32(c + OFF_RESERVED, 1), "reserved");
    SEALED(put64(c + OFF_COUNT, 2000 + 600), "section offsets");
    SEALED(put64(c + OFF_COUNT, 1ull << 41), "entry count out of range");
    SEALED(put64(c + OFF_COUNT, UINT64_MAX), "entry count out of range");
    SEALED(put64(c + OFF_FILE_BYTES, len + 1), "file size field");
    SEALED(put64(c + OFF_FENCE_OFF, 8192), "section offsets");
    SEALED(put64(c + OFF_BLOB_BYTES, 5), "key bytes in a fingerprint table");
    SEALED(put32(c + OFF_KIND, EXACT_KIND_KEYS), "section offsets");
#undef SEALED
    free(c);
    free(f);
}
END_TEST

START_TEST(test_size_damage)
{
    char path[4200];
    size_t len;
    unsigned char *f = base_file(path, sizeof(path), EXACT_KIND_FP, 2000, &len);
    refused(path, f, len - 1, "truncated");
    refused(path, f, 100, "truncated");
    refused(path, f, 0, "truncated");
    unsigned char *c = malloc(len + 1);
    memcpy(c, f, len);
    c[len] = 0;
    refused(path, c, len + 1, "trailing bytes");
    free(c);
    free(f);
}
END_TEST

START_TEST(test_section_damage)
{
    char path[4200];
    size_t len;
    unsigned char *f = base_file(path, sizeof(path), EXACT_KIND_FP, 2000, &len);
    unsigned char *c = malloc(len);
    uint64_t fence_off = get64(f + OFF_FENCE_OFF);
    /* The fence index is read at open. */
    memcpy(c, f, len);
    c[fence_off + 9] ^= 1;
    refused(path, c, len, "fence index checksum");
    memcpy(c, f, len);
    uint64_t f1 = get64(c + fence_off + 8), f2 = get64(c + fence_off + 16);
    put64(c + fence_off + 8, f2);
    put64(c + fence_off + 16, f1);
    reseal_fences(c);
    refused(path, c, len, "out of order");
    /* The pages are read by verify. */
    memcpy(c, f, len);
    c[EXACT_PAGE + 8 * 700 + 3] ^= 1;
    fails_verify(path, c, len, "fingerprint checksum");
    memcpy(c, f, len);
    put64(c + OFF_COUNT, 2001); /* the same sections: a zero of padding read as an entry */
    reseal(c);
    fails_verify(path, c, len, "fingerprint checksum");
    memcpy(c, f, len);
    uint64_t a = get64(c + EXACT_PAGE + 8 * 10), b = get64(c + EXACT_PAGE + 8 * 11);
    put64(c + EXACT_PAGE + 8 * 10, b);
    put64(c + EXACT_PAGE + 8 * 11, a);
    put64(c + OFF_FP_SUM, XXH3_64bits(c + EXACT_PAGE, 2000 * 8));
    reseal(c);
    fails_verify(path, c, len, "out of order");
    memcpy(c, f, len);
    put64(c + fence_off + 8, get64(c + EXACT_PAGE + 8 * (EXACT_PER_PAGE + 1)));
    reseal_fences(c);
    fails_verify(path, c, len, "fence index does not match");
    memcpy(c, f, len);
    c[EXACT_PAGE + 2000 * 8 + 5] = 1;
    fails_verify(path, c, len, "non-zero padding after the fingerprints");
    free(c);
    free(f);
}
END_TEST

START_TEST(test_keys_damage)
{
    char path[4200];
    size_t len;
    unsigned char *f = base_file(path, sizeof(path), EXACT_KIND_KEYS, 2000, &len);
    unsigned char *c = malloc(len);
    uint64_t offs_off = get64(f + 64), blob_off = get64(f + 72);
    memcpy(c, f, len);
    c[len - 3] ^= 1;
    fails_verify(path, c, len, "key section checksum");
    put64(c + OFF_KEYS_SUM, XXH3_64bits(c + offs_off, len - offs_off));
    reseal(c);
    fails_verify(path, c, len, "does not hash to its fingerprint");
    memcpy(c, f, len);
    put64(c + offs_off + 8 * 2000, get64(c + offs_off + 8 * 2000) - 1);
    refused(path, c, len, "key offsets do not span");
    memcpy(c, f, len);
    put64(c + offs_off + 8 * 6,
          get64(c + offs_off + 8 * 5) - 1); /* entry 5 ends before it starts */
    put64(c + OFF_KEYS_SUM, XXH3_64bits(c + offs_off, len - offs_off));
    reseal(c);
    fails_verify(path, c, len, "key offsets out of order");
    memcpy(c, f, len);
    put64(c + OFF_BLOB_BYTES, len - blob_off + 1);
    reseal(c);
    refused(path, c, len, "file size field");
    free(c);
    free(f);
}
END_TEST

static void add_damage_tests(TCase *tc)
{
    tcase_add_test(tc, test_header_damage);
    tcase_add_test(tc, test_size_damage);
    tcase_add_test(tc, test_section_damage);
    tcase_add_test(tc, test_keys_damage);
}

static Suite *table_suite(void)
{
    Suite *s = suite_create("exact_table");
    TCase *tc = tcase_create("build");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_build_in_memory);
    tcase_add_test(tc, test_build_spilled_runs_threads);
    tcase_add_test(tc, test_build_keys);
    tcase_add_test(tc, test_empty_and_tiny);
    tcase_add_test(tc, test_batch_equals_single);
    tcase_add_test(tc, test_builder_refusals);
    tcase_add_test(tc, test_file_gone_after_load);
    tcase_add_test(tc, test_sorts);
    tcase_add_test(tc, test_keys_fingerprint_run);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("damage");
    tcase_add_unchecked_fixture(td, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(td, 120);
    add_damage_tests(td);
    suite_add_tcase(s, td);
    return s;
}

int main(void)
{
    return tu_run(table_suite());
}
