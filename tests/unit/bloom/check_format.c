/* Unit tests for filter files (src/bloom/format.c): write and load round trips, and
 * every kind of damage a file can come with: flipped bytes in each header
 * field and in payloads, truncation, trailing bytes, a future version or key
 * kind, and
 * absurd values behind a valid header checksum, for the fuse layout (version
 * 3) as for the Bloom layouts. Each must be refused with a
 * message naming the file and the fault, never a crash (the sanitizer build
 * turns any stray read into a failure). Offsets are the on-disk layout of
 * docs/file-format.md, written out here on purpose: a change to the layout
 * must show up as a failing test. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bloom/filter.h"
#include "bloom/format.h"
#include "bloom/fuse.h"
#include "bloom/fuse_build.h"
#include "bloom/hash.h"
#include "lib/testutil.h"

enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 8,
    OFF_HEADER_BYTES = 12,
    OFF_LAYOUT = 16,
    OFF_K = 20,
    OFF_CAPACITY = 24,
    OFF_FPR = 32,
    OFF_ITEMS = 40,
    OFF_SHARDS = 48,
    OFF_FLAGS = 52,
    OFF_BITS_PER_SHARD = 56,
    OFF_SEED = 64,
    OFF_BUILD_TIME = 72,
    OFF_PAYLOAD = 80,
    OFF_STRIDE = 88,
    OFF_KEYS = 96, /* version 2; reserved (zero) in version 1 */
    OFF_RESERVED = 100,
    OFF_FUSE_SEG_LOG = 100, /* version 3, fuse */
    OFF_FUSE_SEGMENTS = 104,
    OFF_HEADER_SUM = 120,
    OFF_TABLE = 128,
};

#define SEED 0xf11e5eedull

static uint64_t get_le(const unsigned char *p, int width)
{
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void put_le(unsigned char *p, int width, uint64_t v)
{
    for (int i = 0; i < width; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Recompute the header checksum the way the writer does: XXH3-64 over the
 * header and shard table, the checksum field counted as zero. */
static void fix_header_sum(unsigned char *buf, size_t header_bytes)
{
    put_le(buf + OFF_HEADER_SUM, 8, 0);
    put_le(buf + OFF_HEADER_SUM, 8, XXH3_64bits(buf, header_bytes));
}

static struct filter *make_filled_keys(enum filter_layout layout, uint64_t capacity,
                                       uint32_t shards, uint64_t items, enum filter_keys keys)
{
    struct filter_plan plan;
    char err[256] = "", key[160]; /* room for what inlined XXH3 may read, as gcc sees it */
    ck_assert_msg(filter_plan_make(layout, capacity, 1e-3, shards, &plan, err, sizeof(err)) == 0,
                  "%s", err);
    struct filter *f;
    if (layout == FILTER_FUSE) { /* built whole from the hashes */
        struct hash128 *h = malloc((items + 1) * sizeof(*h));
        ck_assert_ptr_nonnull(h);
        for (uint64_t i = 0; i < items; i++)
            h[i] = hash_item(key, tu_key(key, "key-", i), SEED);
        f = fuse_filter_build(&plan, SEED, h, items, 2, err, sizeof(err));
        free(h);
    } else {
        f = filter_create(&plan, SEED, err, sizeof(err));
    }
    ck_assert_msg(f != NULL, "%s", err);
    f->keys = keys;
    for (uint64_t i = 0; layout != FILTER_FUSE && i < items; i++)
        filter_add(f, key, tu_key(key, "key-", i));
    return f;
}

static struct filter *make_filled(enum filter_layout layout, uint64_t capacity, uint32_t shards,
                                  uint64_t items)
{
    return make_filled_keys(layout, capacity, shards, items, FILTER_KEYS_EXACT);
}

static void write_ok(struct filter *f, const char *path)
{
    char err[512] = "";
    ck_assert_msg(format_write(f, path, 2, err, sizeof(err)) == 0, "write: %s", err);
}

static int has_word(const char *err, const char *word)
{
    return strstr(err, word) != NULL;
}

/* The file must be refused by the loader and the verifier (and by the header
 * reader too when `header` is set: the fault is in the header or the size),
 * each with a message naming the path and containing `word`. verify_rc is
 * what format_verify must return: -1 (could not check) or the bad shards. */
static void expect_refused(const char *path, const char *word, int header, int verify_rc)
{
    char err[512];
    memset(err, 0, sizeof(err));
    struct filter *f = format_load(path, 2, err, sizeof(err));
    ck_assert_msg(f == NULL, "%s loaded (expected \"%s\")", path, word);
    ck_assert_msg(has_word(err, path), "load message lacks the path: %s", err);
    ck_assert_msg(has_word(err, word), "load message lacks \"%s\": %s", word, err);

    memset(err, 0, sizeof(err));
    int rc = format_verify(path, 2, err, sizeof(err));
    ck_assert_msg(rc == verify_rc, "verify returned %d, expected %d (%s)", rc, verify_rc, err);
    ck_assert_msg(has_word(err, path), "verify message lacks the path: %s", err);
    ck_assert_msg(has_word(err, word), "verify message lacks \"%s\": %s", word, err);

    struct format_info info;
    memset(&info, 0, sizeof(info));
    memset(err, 0, sizeof(err));
    rc = format_read_info(path, &info, err, sizeof(err));
    if (header) {
        ck_assert_msg(rc == -1, "read_info accepted %s (expected \"%s\")", path, word);
        ck_assert_ptr_null(info.shards);
        ck_assert_msg(has_word(err, path), "info message lacks the path: %s", err);
        ck_assert_msg(has_word(err, word), "info message lacks \"%s\": %s", word, err);
    } else {
        ck_assert_msg(rc == 0, "read_info refused %s: %s", path, err);
        format_info_free(&info);
    }
}

/* The reference file most corruption tests start from: blocked, 4 shards. */
struct sample {
    char path[4096];
    unsigned char *buf;
    size_t len;
    size_t header_bytes;
    uint64_t payload, stride, shard_bytes;
    uint32_t shards;
};

static void sample_make_keys(struct sample *s, enum filter_layout layout, uint64_t capacity,
                             uint32_t shards, const char *name, enum filter_keys keys)
{
    struct filter *f = make_filled_keys(layout, capacity, shards, capacity, keys);
    tu_path(s->path, sizeof(s->path), name);
    write_ok(f, s->path);
    s->buf = tu_read_file(s->path, &s->len);
    s->shards = shards;
    s->header_bytes = OFF_TABLE + 32u * shards;
    s->payload = get_le(s->buf + OFF_PAYLOAD, 8);
    s->stride = get_le(s->buf + OFF_STRIDE, 8);
    s->shard_bytes = f->bits_per_shard / 8;
    ck_assert_uint_eq(get_le(s->buf + OFF_HEADER_BYTES, 4), s->header_bytes);
    ck_assert_uint_eq(get_le(s->buf + OFF_VERSION, 4), layout == FILTER_FUSE        ? 3
                                                       : keys == FILTER_KEYS_EXACT ? 1
                                                                                   : 2);
    ck_assert_uint_eq(get_le(s->buf + OFF_KEYS, 4), keys);
    filter_free(f);
}

static void sample_make(struct sample *s, enum filter_layout layout, uint64_t capacity,
                        uint32_t shards, const char *name)
{
    sample_make_keys(s, layout, capacity, shards, name, FILTER_KEYS_EXACT);
}

/* Write a variant of the sample as <name> and return its path in out. */
static const char *variant(const struct sample *s, const unsigned char *buf, size_t len,
                           const char *name, char *out, size_t outlen)
{
    tu_path(out, outlen, name);
    tu_write_file(out, buf, len);
    return out;
}

/* ---- round trip ---- */

static const uint32_t rt_shards[] = {1, 4, 16};

START_TEST(test_round_trip)
{
    /* Loop index: layout by shard count; the key kinds go round with the
     * shard counts, so each layout carries each kind once. */
    static const enum filter_layout layouts[] = {FILTER_BLOCKED, FILTER_CLASSIC, FILTER_FUSE};
    enum filter_layout layout = layouts[_i / 3];
    uint32_t S = rt_shards[_i % 3];
    enum filter_keys keys = (enum filter_keys)((_i + _i / 3) % 3);
    const uint64_t n = 50000;
    char path[4096], name[64], err[512] = "", key[32];
    snprintf(name, sizeof(name), "rt-%d-%u.bgf", (int)layout, S);
    tu_path(path, sizeof(path), name);
    struct filter *f = make_filled_keys(layout, n, S, n, keys);
    ck_assert_int_eq(f->build_time, 0);
    write_ok(f, path);
    ck_assert_int_gt(f->build_time, 1600000000); /* stamped with the time of writing */

    struct format_info info;
    ck_assert_msg(format_read_info(path, &info, err, sizeof(err)) == 0, "%s", err);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    uint64_t header_bytes = OFF_TABLE + 32ull * S;
    uint64_t shard_bytes = f->bits_per_shard / 8;
    /* An exact filter is written as version 1, readable by every release. */
    ck_assert_uint_eq(info.version, layout == FILTER_FUSE        ? 3
                                    : keys == FILTER_KEYS_EXACT ? 1
                                                                : 2);
    ck_assert_int_eq(info.keys, keys);
    ck_assert_int_eq(info.plan.layout, layout);
    ck_assert_uint_eq(info.plan.k, f->k);
    ck_assert_uint_eq(info.plan.capacity, n);
    ck_assert_double_eq(info.plan.fpr_target, 1e-3);
    ck_assert_uint_eq(info.plan.shard_count, S);
    ck_assert_uint_eq(info.plan.bits_per_shard, f->bits_per_shard);
    ck_assert_uint_eq(info.items, filter_items(f));
    ck_assert_uint_eq(info.bits_set, filter_bits_set(f));
    ck_assert_uint_eq(info.seed, SEED);
    ck_assert_int_eq(info.build_time, f->build_time);
    ck_assert_uint_eq(info.payload_offset, (header_bytes + 4095) / 4096 * 4096);
    ck_assert_uint_eq(info.shard_stride, (shard_bytes + 4095) / 4096 * 4096);
    ck_assert_uint_eq(info.file_size, (uint64_t)st.st_size);
    ck_assert_uint_eq(info.file_size, info.payload_offset + S * info.shard_stride);
    for (uint32_t i = 0; i < S; i++) {
        ck_assert_uint_eq(info.shards[i].items, atomic_load(&f->shards[i].items));
        ck_assert_uint_eq(info.shards[i].bits_set, filter_shard_popcount(f, i));
        /* A fuse shard's checksum is seeded with its construction seed. */
        ck_assert_uint_eq(info.shards[i].checksum,
                          XXH3_64bits_withSeed((const void *)f->shards[i].words, shard_bytes,
                                               f->shards[i].fuse_seed));
        ck_assert_uint_eq(info.shards[i].fuse_seed, f->shards[i].fuse_seed);
        if (layout != FILTER_FUSE)
            ck_assert_uint_eq(f->shards[i].fuse_seed, 0);
    }
    format_info_free(&info);
    ck_assert_ptr_null(info.shards);

    ck_assert_int_eq(format_verify(path, 2, err, sizeof(err)), 0);
    struct filter *g = format_load(path, 3, err, sizeof(err));
    ck_assert_msg(g != NULL, "load: %s", err);
    struct filter_plan a, b;
    filter_get_plan(f, &a);
    filter_get_plan(g, &b);
    ck_assert_int_eq(b.layout, a.layout);
    ck_assert_uint_eq(b.capacity, a.capacity);
    ck_assert_double_eq(b.fpr_target, a.fpr_target);
    ck_assert_uint_eq(b.k, a.k);
    ck_assert_uint_eq(b.shard_count, a.shard_count);
    ck_assert_uint_eq(b.bits_per_shard, a.bits_per_shard);
    ck_assert_double_eq(b.fpr_expected, a.fpr_expected);
    ck_assert_uint_eq(g->seed, SEED);
    ck_assert_int_eq(g->build_time, f->build_time);
    ck_assert_int_eq(g->keys, keys);
    ck_assert_uint_eq(filter_items(g), filter_items(f));
    ck_assert_uint_eq(filter_bits_set(g), filter_bits_set(f));
    for (uint32_t i = 0; i < S; i++) {
        ck_assert_uint_eq(atomic_load(&g->shards[i].items), atomic_load(&f->shards[i].items));
        ck_assert_int_eq(
            memcmp((const void *)g->shards[i].words, (const void *)f->shards[i].words, shard_bytes),
            0);
    }
    for (uint64_t i = 0; i < n; i++) {
        size_t len = tu_key(key, "key-", i);
        ck_assert_msg(filter_check(g, key, len), "%s lost in the round trip", key);
    }
    if (layout == FILTER_FUSE) { /* built whole: it takes no add (the daemon's delta does) */
        ck_assert(!filter_add(g, "late addition", 13));
        filter_free(g);
        filter_free(f);
        return;
    }
    /* A loaded filter keeps working: add, then write again, then reload. */
    ck_assert(filter_add(g, "late addition", 13));
    write_ok(g, path);
    filter_free(g);
    g = format_load(path, 1, err, sizeof(err));
    ck_assert_msg(g != NULL, "reload: %s", err);
    ck_assert(filter_check(g, "late addition", 13));
    ck_assert_uint_eq(filter_items(g), filter_items(f) + 1);
    filter_free(g);
    filter_free(f);
}
END_TEST

START_TEST(test_write_is_atomic_and_clean)
{
    /* The write goes through a temporary file and a rename: afterwards the
     * directory holds exactly the file, and a write that cannot happen leaves
     * the old file untouched. */
    char dir[4096], path[4096], err[512] = "";
    tu_path(dir, sizeof(dir), "atomic");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    tu_path(path, sizeof(path), "atomic/only.bgf");
    struct filter *f = make_filled(FILTER_BLOCKED, 1000, 1, 1000);
    f->build_time = 1700000000; /* a set build time is kept, not restamped */
    write_ok(f, path);
    write_ok(f, path);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int entries = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        ck_assert_str_eq(e->d_name, "only.bgf");
        entries++;
    }
    closedir(d);
    ck_assert_int_eq(entries, 1);
    struct format_info info;
    ck_assert_int_eq(format_read_info(path, &info, err, sizeof(err)), 0);
    ck_assert_int_eq(info.build_time, 1700000000);
    format_info_free(&info);

    char bad[4096];
    tu_path(bad, sizeof(bad), "no-such-dir/x.bgf");
    err[0] = '\0';
    ck_assert_int_eq(format_write(f, bad, 1, err, sizeof(err)), -1);
    ck_assert_msg(has_word(err, bad), "%s", err);
    filter_free(f);
}
END_TEST

/* ---- flipped bytes ---- */

struct flip {
    unsigned off; /* from the start of the file */
    const char *word;
};

static const struct flip header_flips[] = {
    {OFF_MAGIC, "magic"},
    {OFF_MAGIC + 7, "magic"},
    {OFF_VERSION, "version"},
    {OFF_VERSION + 3, "version"},
    {OFF_HEADER_BYTES, "header size"},
    {OFF_LAYOUT, "checksum"},
    {OFF_K, "checksum"},
    {OFF_CAPACITY, "checksum"},
    {OFF_CAPACITY + 7, "checksum"},
    {OFF_FPR + 6, "checksum"},
    {OFF_ITEMS, "checksum"},
    {OFF_SHARDS, "shard count"},
    {OFF_SHARDS + 3, "shard count"},
    {OFF_FLAGS, "checksum"},
    {OFF_BITS_PER_SHARD + 1, "checksum"},
    {OFF_SEED + 4, "checksum"},
    {OFF_BUILD_TIME, "checksum"},
    {OFF_PAYLOAD + 1, "checksum"},
    {OFF_STRIDE + 1, "checksum"},
    {OFF_KEYS, "checksum"},
    {OFF_KEYS + 3, "checksum"},
    {OFF_RESERVED, "checksum"},
    {OFF_RESERVED + 19, "checksum"},
    {OFF_HEADER_SUM, "checksum"},
    {OFF_HEADER_SUM + 7, "checksum"},
    {OFF_TABLE + 0, "checksum"},       /* shard 0: items */
    {OFF_TABLE + 32 + 8, "checksum"},  /* shard 1: bits set */
    {OFF_TABLE + 64 + 16, "checksum"}, /* shard 2: payload checksum */
    {OFF_TABLE + 96 + 31, "checksum"}, /* shard 3: reserved */
};

START_TEST(test_header_byte_flips)
{
    /* Loop index: an exact (version 1) and a url (version 2) blocked file,
     * an exact fuse file (version 3: the flips at 100 and 103 hit its
     * geometry, the shard entry's last byte its seed). */
    struct sample s;
    sample_make_keys(&s, _i == 2 ? FILTER_FUSE : FILTER_BLOCKED, 20000, 4, "ref.bgf",
                     _i == 1 ? FILTER_KEYS_URL : FILTER_KEYS_EXACT);
    for (size_t i = 0; i < sizeof(header_flips) / sizeof(header_flips[0]); i++) {
        unsigned char *buf = malloc(s.len);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, s.buf, s.len);
        buf[header_flips[i].off] ^= 0xff;
        char name[64], path[4096];
        snprintf(name, sizeof(name), "flip-%u.bgf", header_flips[i].off);
        variant(&s, buf, s.len, name, path, sizeof(path));
        expect_refused(path, header_flips[i].word, 1, -1);
        /* A single-bit flip too, the commonest real corruption. */
        buf[header_flips[i].off] ^= 0xff ^ 0x10;
        variant(&s, buf, s.len, name, path, sizeof(path));
        expect_refused(path, header_flips[i].word, 1, -1);
        free(buf);
    }
    free(s.buf);
}
END_TEST

START_TEST(test_payload_byte_flips)
{
    /* Damage in 1, 2 or 3 shards: the loader refuses, the verifier counts
     * exactly the damaged shards, the header alone still reads. */
    struct sample s;
    static const enum filter_layout layouts[] = {FILTER_BLOCKED, FILTER_CLASSIC, FILTER_FUSE};
    sample_make(&s, layouts[_i], 20000, 4, "ref.bgf");
    static const struct {
        uint32_t shards[3];
        int n;
    } cases[] = {{{0}, 1}, {{3}, 1}, {{1, 2}, 2}, {{0, 2, 3}, 3}};
    const uint64_t where[] = {0, s.shard_bytes / 2, s.shard_bytes - 1};
    for (size_t c = 0; c < 4; c++) {
        for (size_t w = 0; w < 3; w++) {
            unsigned char *buf = malloc(s.len);
            ck_assert_ptr_nonnull(buf);
            memcpy(buf, s.buf, s.len);
            for (int j = 0; j < cases[c].n; j++)
                buf[s.payload + s.stride * cases[c].shards[j] + where[w]] ^= 0x01;
            char name[64], path[4096], word[64];
            snprintf(name, sizeof(name), "payload-%zu-%zu.bgf", c, w);
            variant(&s, buf, s.len, name, path, sizeof(path));
            expect_refused(path, "checksum mismatch (corrupt payload)", 0, cases[c].n);
            /* The message names a damaged shard. */
            char err[512] = "";
            ck_assert_ptr_null(format_load(path, 1, err, sizeof(err)));
            snprintf(word, sizeof(word), "shard %u:", cases[c].shards[0]);
            ck_assert_msg(has_word(err, word), "%s lacks %s", err, word);
            if (cases[c].n > 1)
                ck_assert_msg(has_word(err, "other shards"), "%s", err);
            free(buf);
        }
    }
    free(s.buf);
}
END_TEST

/* ---- size: truncation and trailing bytes ---- */

START_TEST(test_truncation)
{
    struct sample s; /* Loop index: blocked, fuse. */
    sample_make(&s, _i ? FILTER_FUSE : FILTER_BLOCKED, 20000, 4, "ref.bgf");
    struct {
        size_t len;
        const char *word;
    } cuts[] = {
        {0, "too short"},
        {4, "too short"},
        {7, "too short"},
        {8, "truncated"},
        {100, "truncated"},
        {OFF_TABLE, "truncated"},
        {s.header_bytes - 1, "truncated"},
        {s.header_bytes, "truncated"},
        {s.payload, "truncated"},
        {s.payload + s.shard_bytes / 2, "truncated"},
        {s.payload + s.stride * 2 + 1, "truncated"},
        {s.len - 1, "truncated"},
    };
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        char name[64], path[4096];
        snprintf(name, sizeof(name), "cut-%zu.bgf", cuts[i].len);
        variant(&s, s.buf, cuts[i].len, name, path, sizeof(path));
        expect_refused(path, cuts[i].word, 1, -1);
    }
    free(s.buf);
}
END_TEST

START_TEST(test_trailing_bytes)
{
    struct sample s; /* Loop index: classic, fuse. */
    sample_make(&s, _i ? FILTER_FUSE : FILTER_CLASSIC, 20000, 4, "ref.bgf");
    const size_t extra[] = {1, 8, 4096};
    for (size_t i = 0; i < 3; i++) {
        unsigned char *buf = calloc(1, s.len + extra[i]);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, s.buf, s.len);
        buf[s.len] = 'x';
        char name[64], path[4096];
        snprintf(name, sizeof(name), "trail-%zu.bgf", extra[i]);
        variant(&s, buf, s.len + extra[i], name, path, sizeof(path));
        expect_refused(path, "trailing bytes", 1, -1);
        free(buf);
    }
    free(s.buf);
}
END_TEST

START_TEST(test_wrong_magic)
{
    struct sample s; /* Loop index: blocked, fuse. */
    sample_make(&s, _i ? FILTER_FUSE : FILTER_BLOCKED, 20000, 4, "ref.bgf");
    char path[4096];
    unsigned char *buf = malloc(s.len);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, s.buf, s.len);
    memcpy(buf, "BLOOMGT\x1b", 8); /* one bit off, valid otherwise */
    fix_header_sum(buf, s.header_bytes);
    variant(&s, buf, s.len, "magic1.bgf", path, sizeof(path));
    expect_refused(path, "wrong magic", 1, -1);
    static const char text[] = "example.com\nexample.org\nexample.net\n";
    variant(&s, (const unsigned char *)text, sizeof(text) - 1, "list.txt", path, sizeof(path));
    expect_refused(path, "wrong magic", 1, -1);
    memcpy(buf, FORMAT_MAGIC, 8); /* the magic alone */
    variant(&s, buf, 8, "magic-only.bgf", path, sizeof(path));
    expect_refused(path, "truncated", 1, -1);
    free(buf);
    free(s.buf);
}
END_TEST

START_TEST(test_versions)
{
    /* Version 4 behind a valid checksum: refused because of the version, with
     * advice to upgrade, not as a corrupt file (as a reader of version 2
     * refuses a fuse file, version 3). A fuse file claiming version 1 or 2
     * is corrupt: those versions have no fuse layout. Loop index: blocked,
     * fuse. */
    struct sample s;
    sample_make(&s, _i ? FILTER_FUSE : FILTER_BLOCKED, 20000, 4, "ref.bgf");
    struct {
        uint32_t version;
        const char *word;
    } v[] = {{5, "format version 5 is newer"},
             {0xffffffffu, "newer"},
             {0, "format version 0"},
             {2, "fuse layout in a version-2 file"},
             {1, "fuse layout in a version-1 file"}};
    for (size_t i = 0; i < (_i ? 5u : 3u); i++) {
        unsigned char *buf = malloc(s.len);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, s.buf, s.len);
        put_le(buf + OFF_VERSION, 4, v[i].version);
        fix_header_sum(buf, s.header_bytes);
        char name[64], path[4096];
        snprintf(name, sizeof(name), "version-%u.bgf", v[i].version);
        variant(&s, buf, s.len, name, path, sizeof(path));
        expect_refused(path, v[i].word, 1, -1);
        free(buf);
    }
    free(s.buf);
}
END_TEST

/* Version 4: an adblock filter's section after the last shard, read back
 * byte for byte, and every fault in it refused by name: a flipped body
 * byte (verify counts one bad part; the section reader says checksum), a
 * cut or a byte too many (the size the header implies), a section kind
 * that does not go with the key kind. */
START_TEST(test_section)
{
    static const char body[] = "compiled lists stand-in: any bytes at all \x01\x02";
    struct filter *f = make_filled_keys(FILTER_BLOCKED, 5000, 2, 100, FILTER_KEYS_ADBLOCK);
    char path[4200], bad[4200], err[512] = "";
    snprintf(path, sizeof(path), "%s/section.bgf", tu_dir);
    snprintf(bad, sizeof(bad), "%s/section-bad.bgf", tu_dir);
    ck_assert_msg(format_write_section(f, path, 2, FORMAT_SECTION_ADBLOCK, body, sizeof(body),
                                       err, sizeof(err)) == 0,
                  "%s", err);
    /* The adblock kind without its section, or a section with other keys. */
    ck_assert_int_ne(format_write(f, bad, 2, err, sizeof(err)), 0);
    f->keys = FILTER_KEYS_HOST;
    ck_assert_int_ne(
        format_write_section(f, bad, 2, FORMAT_SECTION_ADBLOCK, body, 4, err, sizeof(err)), 0);
    filter_free(f);

    struct format_info fi;
    ck_assert_int_eq(format_read_info(path, &fi, err, sizeof(err)), 0);
    ck_assert_uint_eq(fi.version, 4);
    ck_assert_int_eq(fi.keys, FILTER_KEYS_ADBLOCK);
    ck_assert_uint_eq(fi.section_kind, FORMAT_SECTION_ADBLOCK);
    void *got;
    size_t got_len;
    ck_assert_msg(format_read_section(path, &fi, &got, &got_len, err, sizeof(err)) == 0, "%s",
                  err);
    ck_assert_uint_eq(got_len, sizeof(body));
    ck_assert_mem_eq(got, body, sizeof(body));
    free(got);
    ck_assert_int_eq(format_verify(path, 2, err, sizeof(err)), 0);
    struct filter *g = format_load(path, 2, err, sizeof(err));
    ck_assert_msg(g != NULL, "%s", err);
    ck_assert_int_eq(g->keys, FILTER_KEYS_ADBLOCK);
    filter_free(g);

    size_t len;
    unsigned char *b = tu_read_file(path, &len);
    b[len - 3] ^= 0x10; /* in the body */
    tu_write_file(bad, b, len);
    ck_assert_int_eq(format_verify(bad, 2, err, sizeof(err)), 1);
    ck_assert_msg(has_word(err, "corrupt section: checksum mismatch"), "%s", err);
    ck_assert_int_ne(format_read_section(bad, &fi, &got, &got_len, err, sizeof(err)), 0);
    ck_assert_msg(has_word(err, "checksum mismatch") && has_word(err, bad), "%s", err);
    b[len - 3] ^= 0x10;
    tu_write_file(bad, b, len - 1);
    expect_refused(bad, "truncated", 1, -1);
    unsigned char *longer = malloc(len + 1);
    ck_assert_ptr_nonnull(longer);
    memcpy(longer, b, len);
    longer[len] = 0;
    tu_write_file(bad, longer, len + 1);
    expect_refused(bad, "trailing bytes after the section", 1, -1);
    free(longer);
    put_le(b + OFF_KEYS, 4, FILTER_KEYS_URL);
    fix_header_sum(b, OFF_TABLE + 2 * 32);
    tu_write_file(bad, b, len);
    expect_refused(bad, "key kind url with section kind 1", 1, -1);
    format_info_free(&fi);
    free(b);
}
END_TEST

START_TEST(test_key_kinds)
{
    /* The key kind behind a valid checksum: version 2 takes 0, 1 and 2 and
     * refuses any other value by name; version 1 keeps the field reserved. */
    struct sample s;
    sample_make_keys(&s, FILTER_BLOCKED, 20000, 4, "ref.bgf", FILTER_KEYS_URL);
    unsigned char *buf = malloc(s.len);
    ck_assert_ptr_nonnull(buf);
    char path[4096], name[64], err[512];
    struct {
        uint32_t version, keys;
        int ok;           /* loads, with these keys */
        const char *word; /* else refused with this */
    } c[] = {
        {2, 0, 1, NULL}, /* version 2 may say exact, though the writer writes 1 */
        {2, 1, 1, NULL},
        {2, 2, 1, NULL},
        {2, 3, 0, "the adblock kind in a version-2 file"},
        {2, 5, 0, "unknown key kind 5"},
        {2, 4, 0, "the words kind in a version-2 file"},
        {2, 0x100, 0, "unknown key kind 256"},
        {2, 0xffffffffu, 0, "unknown key kind 4294967295"},
        {1, 0, 1, NULL},
        {1, 1, 0, "reserved"},
        {1, 2, 0, "reserved"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        memcpy(buf, s.buf, s.len);
        put_le(buf + OFF_VERSION, 4, c[i].version);
        put_le(buf + OFF_KEYS, 4, c[i].keys);
        fix_header_sum(buf, s.header_bytes);
        snprintf(name, sizeof(name), "keys-%u-%u.bgf", c[i].version, c[i].keys);
        variant(&s, buf, s.len, name, path, sizeof(path));
        if (!c[i].ok) {
            expect_refused(path, c[i].word, 1, -1);
            continue;
        }
        memset(err, 0, sizeof(err));
        struct filter *f = format_load(path, 2, err, sizeof(err));
        ck_assert_msg(f != NULL, "%s: %s", name, err);
        ck_assert_int_eq(f->keys, c[i].keys);
        struct format_info info;
        ck_assert_int_eq(format_read_info(path, &info, err, sizeof(err)), 0);
        ck_assert_int_eq(info.keys, c[i].keys);
        ck_assert_uint_eq(info.version, c[i].version);
        format_info_free(&info);
        filter_free(f);
    }
    /* The names, both ways. */
    enum filter_keys k;
    ck_assert_str_eq(format_keys_name(FILTER_KEYS_EXACT), "exact");
    ck_assert_str_eq(format_keys_name(FILTER_KEYS_HOST), "host");
    ck_assert_str_eq(format_keys_name(FILTER_KEYS_URL), "url");
    ck_assert_str_eq(format_keys_name((enum filter_keys)7), "?");
    ck_assert_int_eq(format_keys_parse("url", &k), 0);
    ck_assert_int_eq(k, FILTER_KEYS_URL);
    ck_assert_int_eq(format_keys_parse("URL", &k), -1);
    ck_assert_int_eq(format_keys_parse("", &k), -1);
    /* A filter whose kind is out of range is not written. */
    struct filter *f = make_filled(FILTER_BLOCKED, 100, 1, 10);
    f->keys = (enum filter_keys)5;
    tu_path(path, sizeof(path), "bad-kind.bgf");
    err[0] = '\0';
    ck_assert_int_eq(format_write(f, path, 1, err, sizeof(err)), -1);
    ck_assert_msg(has_word(err, "key kind"), "%s", err);
    filter_free(f);
    free(buf);
    free(s.buf);
}
END_TEST

/* ---- absurd values behind a valid header checksum ---- */

/* How a patch changes its field: set it to value, add value to it (wrapping),
 * multiply it by value, set it to the file's bits per shard plus value, or
 * store fvalue's bits. */
enum patch_how { SET, ADD, MUL, BITS_PLUS, SETF };

struct patch {
    const char *what;
    unsigned off;
    int width;
    enum patch_how how;
    uint64_t value;
    double fvalue;
    const char *word; /* in the message */
    int header;       /* refused by format_read_info too */
    int verify_rc;
};

static const struct patch patches[] = {
    {"shard count 2^31", OFF_SHARDS, 4, SET, 1u << 31, 0, "shard count 2147483648", 1, -1},
    {"shard count 0", OFF_SHARDS, 4, SET, 0, 0, "shard count 0", 1, -1},
    {"shard count 8, table of 4", OFF_SHARDS, 4, SET, 8, 0, "header size", 1, -1},
    {"header size 2^32-1", OFF_HEADER_BYTES, 4, SET, 0xffffffffu, 0, "header size", 1, -1},
    {"bits per shard 2^63", OFF_BITS_PER_SHARD, 8, SET, 1ull << 63, 0, "bits per shard", 1, -1},
    {"bits per shard 0", OFF_BITS_PER_SHARD, 8, SET, 0, 0, "bits per shard", 1, -1},
    {"bits per shard 1000", OFF_BITS_PER_SHARD, 8, SET, 1000, 0, "bits per shard", 1, -1},
    {"bits per shard 1 TiB", OFF_BITS_PER_SHARD, 8, SET, 1ull << 43, 0, "bits per shard", 1, -1},
    /* Valid alone (within 1 TiB, a multiple of 512), but the stride is wrong. */
    {"bits per shard x64", OFF_BITS_PER_SHARD, 8, MUL, 64, 0, "shard stride", 1, -1},
    {"k 0", OFF_K, 4, SET, 0, 0, "k = 0", 1, -1},
    {"k 33", OFF_K, 4, SET, 33, 0, "k = 33", 1, -1},
    {"k 1000", OFF_K, 4, SET, 1000, 0, "k = 1000", 1, -1},
    {"capacity 0", OFF_CAPACITY, 8, SET, 0, 0, "capacity 0", 1, -1},
    {"capacity 2^63", OFF_CAPACITY, 8, SET, 1ull << 63, 0, "capacity", 1, -1},
    {"fpr NaN", OFF_FPR, 8, SETF, 0, NAN, "rate", 1, -1},
    {"fpr 0", OFF_FPR, 8, SETF, 0, 0.0, "rate", 1, -1},
    {"fpr 0.9", OFF_FPR, 8, SETF, 0, 0.9, "rate", 1, -1},
    {"fpr -inf", OFF_FPR, 8, SETF, 0, -INFINITY, "rate", 1, -1},
    {"layout 0", OFF_LAYOUT, 4, SET, 0, 0, "layout", 1, -1},
    {"layout 99", OFF_LAYOUT, 4, SET, 99, 0, "layout", 1, -1},
    {"layout 2^32-1", OFF_LAYOUT, 4, SET, 0xffffffffu, 0, "layout", 1, -1},
    {"flags 1", OFF_FLAGS, 4, SET, 1, 0, "reserved", 1, -1},
    {"reserved byte", OFF_RESERVED + 5, 1, SET, 1, 0, "reserved", 1, -1},
    {"last reserved byte", OFF_RESERVED + 19, 1, SET, 1, 0, "reserved", 1, -1},
    {"key kind in version 1", OFF_KEYS, 4, SET, 2, 0, "reserved", 1, -1},
    {"payload offset 0", OFF_PAYLOAD, 8, SET, 0, 0, "payload offset 0", 1, -1},
    {"payload offset 2^63", OFF_PAYLOAD, 8, SET, 1ull << 63, 0, "payload offset", 1, -1},
    {"stride 0", OFF_STRIDE, 8, SET, 0, 0, "shard stride 0", 1, -1},
    {"stride 2^62", OFF_STRIDE, 8, SET, 1ull << 62, 0, "shard stride", 1, -1},
    {"items + 1", OFF_ITEMS, 8, ADD, 1, 0, "items", 1, -1},
    {"shard 0 items 2^63", OFF_TABLE, 8, SET, 1ull << 63, 0, "shard 0 counts", 1, -1},
    {"shard 1 bits set > bits", OFF_TABLE + 32 + 8, 8, BITS_PLUS, 1, 0, "shard 1 counts", 1, -1},
    {"shard 3 reserved", OFF_TABLE + 96 + 24, 8, SET, 1, 0, "shard 3 counts", 1, -1},
    {"layout fuse in a blocked file", OFF_LAYOUT, 4, SET, 4, 0, "fuse layout in a version-1", 1,
     -1},
    /* Header sound, payload does not match it: only a full read can tell. */
    {"shard 1 checksum", OFF_TABLE + 32 + 16, 8, ADD, 1, 0, "shard 1: checksum mismatch", 0, 1},
    {"shard 2 bits set - 1", OFF_TABLE + 64 + 8, 8, ADD, (uint64_t)-1, 0, "shard 2: set-bit count",
     0, 1},
};

/* The same patches on a fuse file (version 3), where they mean something
 * else: NULL skips a patch that is sound there, else the word expected. */
static const char *fuse_word(const struct patch *p, int *header, int *verify_rc)
{
    if (p->off == OFF_KEYS) /* a key kind is sound in version 3 */
        return NULL;
    if (p->off == OFF_LAYOUT && p->value == FILTER_FUSE) /* it is one already */
        return NULL;
    if (p->how == MUL && p->off == OFF_BITS_PER_SHARD)
        return "fuse geometry";
    if (p->off == OFF_RESERVED + 5)
        return "fuse geometry"; /* a byte of the segment count */
    if (p->off == OFF_TABLE + 96 + 24) { /* shard 3's seed: its payload checksum is seeded */
        *header = 0;
        *verify_rc = 1;
        return "shard 3: checksum mismatch";
    }
    return p->word;
}

static const struct patch fuse_patches[] = {
    {"segment log 0", OFF_FUSE_SEG_LOG, 4, SET, 0, 0, "fuse geometry", 1, -1},
    {"segment log 21", OFF_FUSE_SEG_LOG, 4, SET, 21, 0, "fuse geometry", 1, -1},
    {"segment log + 1", OFF_FUSE_SEG_LOG, 4, ADD, 1, 0, "fuse geometry", 1, -1},
    {"segments 0", OFF_FUSE_SEGMENTS, 4, SET, 0, 0, "fuse geometry", 1, -1},
    {"segments 2^32-1", OFF_FUSE_SEGMENTS, 4, SET, 0xffffffffu, 0, "fuse geometry", 1, -1},
    {"segments - 1", OFF_FUSE_SEGMENTS, 4, ADD, 0xffffffffu, 0, "fuse geometry", 1, -1},
    {"layout blocked", OFF_LAYOUT, 4, SET, 1, 0, "fuse geometry", 1, -1},
    {"f 33", OFF_K, 4, SET, 33, 0, "k = 33", 1, -1},
    {"f + 1", OFF_K, 4, ADD, 1, 0, "fuse geometry", 1, -1},
    {"shard 0 seed + 1", OFF_TABLE + 24, 8, ADD, 1, 0, "shard 0: checksum mismatch", 0, 1},
};
#define N_PATCHES (int)(sizeof(patches) / sizeof(patches[0]))
#define N_FUSE_PATCHES (int)(sizeof(fuse_patches) / sizeof(fuse_patches[0]))

START_TEST(test_absurd_fields)
{
    /* Loop index: the patch on a blocked file, then each on a fuse file
     * (with the fuse file's own meaning), then the fuse-only patches. */
    bool fuse = _i >= N_PATCHES;
    const struct patch *p = _i < 2 * N_PATCHES ? &patches[_i % N_PATCHES]
                                               : &fuse_patches[_i - 2 * N_PATCHES];
    const char *word = p->word;
    int header = p->header, verify_rc = p->verify_rc;
    if (fuse && _i < 2 * N_PATCHES && !(word = fuse_word(p, &header, &verify_rc)))
        return;
    struct sample s;
    sample_make(&s, fuse ? FILTER_FUSE : FILTER_BLOCKED, 20000, 4, "ref.bgf");
    unsigned char *buf = malloc(s.len);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, s.buf, s.len);
    uint64_t v = p->value, old = get_le(buf + p->off, p->width);
    switch (p->how) {
    case SET:
        break;
    case ADD:
        v += old;
        break;
    case MUL:
        v *= old;
        break;
    case BITS_PLUS:
        v += get_le(buf + OFF_BITS_PER_SHARD, 8);
        break;
    case SETF:
        memcpy(&v, &p->fvalue, sizeof(v));
        break;
    }
    ck_assert_msg(v != old, "%s: patch changes nothing", p->what);
    put_le(buf + p->off, p->width, v);
    fix_header_sum(buf, s.header_bytes);
    char name[64], path[4096];
    snprintf(name, sizeof(name), "absurd-%d.bgf", _i);
    variant(&s, buf, s.len, name, path, sizeof(path));
    expect_refused(path, word, header, verify_rc);
    free(buf);
    free(s.buf);
}
END_TEST

START_TEST(test_valid_checksum_is_accepted)
{
    /* The checksum recomputed over an unchanged header changes nothing: the
     * absurd-field tests above fail for their field, not for the checksum.
     * Loop index: blocked, fuse. */
    struct sample s;
    sample_make(&s, _i ? FILTER_FUSE : FILTER_BLOCKED, 20000, 4, "ref.bgf");
    unsigned char *buf = malloc(s.len);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, s.buf, s.len);
    fix_header_sum(buf, s.header_bytes);
    ck_assert_int_eq(memcmp(buf, s.buf, s.len), 0);
    /* And a sound change behind a fixed checksum loads: the build time is
     * not checked against anything. */
    put_le(buf + OFF_BUILD_TIME, 8, 1234567890);
    fix_header_sum(buf, s.header_bytes);
    char path[4096], err[512] = "";
    variant(&s, buf, s.len, "retimed.bgf", path, sizeof(path));
    struct filter *f = format_load(path, 2, err, sizeof(err));
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->build_time, 1234567890);
    filter_free(f);
    free(buf);
    free(s.buf);
}
END_TEST

/* ---- not a file at all ---- */

START_TEST(test_bad_paths)
{
    char path[4096];
    tu_path(path, sizeof(path), "does-not-exist.bgf");
    expect_refused(path, "cannot open", 1, -1);
    expect_refused(tu_dir, "not a regular file", 1, -1);
    tu_path(path, sizeof(path), "empty.bgf");
    tu_write_file(path, "", 0);
    expect_refused(path, "0 bytes", 1, -1);
}
END_TEST

/* ---- random damage ---- */

START_TEST(test_random_flips)
{
    /* 2000 files, each with 1 to 3 bytes changed (fixed seed). Half the
     * positions are drawn from the whole file, half from the bytes that carry
     * meaning (header, table, payload), since a uniform draw lands mostly in
     * page padding. A file loads exactly when every change is in padding, and
     * then holds the original bits; anything else is refused. */
    struct sample s;
    static const enum filter_layout layouts[] = {FILTER_BLOCKED, FILTER_CLASSIC, FILTER_FUSE};
    sample_make(&s, layouts[_i], 3000, 2, "ref.bgf");
    char err[512];
    struct filter *orig = format_load(s.path, 1, err, sizeof(err));
    ck_assert_ptr_nonnull(orig);
    /* Meaningful bytes: [0, header) and each shard's payload. */
    uint64_t meaningful = s.header_bytes + s.shards * s.shard_bytes;
    uint64_t rng = 20240601 + (uint64_t)_i;
    unsigned char *buf = malloc(s.len);
    ck_assert_ptr_nonnull(buf);
    char path[4096];
    tu_path(path, sizeof(path), "random.bgf");
    int loaded = 0, refused = 0;
    for (int iter = 0; iter < 2000; iter++) {
        memcpy(buf, s.buf, s.len);
        int nflips = 1 + (int)(tu_rand(&rng) % 3);
        uint64_t pos[3];
        int in_padding = 1;
        for (int j = 0; j < nflips; j++) {
            uint64_t at;
            int again;
            do {
                if (tu_rand(&rng) & 1) {
                    at = tu_rand(&rng) % s.len;
                } else {
                    uint64_t m = tu_rand(&rng) % meaningful;
                    if (m < s.header_bytes) {
                        at = m;
                    } else {
                        m -= s.header_bytes;
                        at = s.payload + (m / s.shard_bytes) * s.stride + m % s.shard_bytes;
                    }
                }
                again = 0;
                for (int q = 0; q < j; q++)
                    again |= pos[q] == at;
            } while (again);
            pos[j] = at;
            buf[at] ^= (unsigned char)(1 + tu_rand(&rng) % 255);
            int padding = at >= s.header_bytes &&
                          (at < s.payload || (at - s.payload) % s.stride >= s.shard_bytes);
            in_padding &= padding;
        }
        tu_write_file(path, buf, s.len);
        memset(err, 0, sizeof(err));
        struct filter *f = format_load(path, 1, err, sizeof(err));
        if (in_padding) {
            ck_assert_msg(f != NULL, "iteration %d: padding-only damage refused: %s", iter, err);
            for (uint32_t sh = 0; sh < s.shards; sh++)
                ck_assert_int_eq(memcmp((const void *)f->shards[sh].words,
                                        (const void *)orig->shards[sh].words, s.shard_bytes),
                                 0);
            ck_assert_uint_eq(filter_items(f), filter_items(orig));
            filter_free(f);
            loaded++;
        } else {
            ck_assert_msg(f == NULL, "iteration %d: damage at %llu (of %d) loaded", iter,
                          (unsigned long long)pos[0], nflips);
            ck_assert_msg(err[0] != '\0' && has_word(err, path), "iteration %d: message %s", iter,
                          err);
            refused++;
        }
        if (iter % 10 == 0) {
            int rc = format_verify(path, 1, err, sizeof(err));
            ck_assert_msg(in_padding ? rc == 0 : rc != 0, "iteration %d: verify %d", iter, rc);
        }
    }
    printf("random flips (%s): %d loaded (padding only), %d refused\n",
           filter_layout_name(orig->layout), loaded, refused);
    fflush(stdout);
    ck_assert_int_gt(loaded, 100);
    ck_assert_int_gt(refused, 1000);
    filter_free(orig);
    free(buf);
    free(s.buf);
}
END_TEST

static Suite *format_suite(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("round_trip");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_round_trip, 0, 9);
    tcase_add_test(tc, test_write_is_atomic_and_clean);
    suite_add_tcase(s, tc);

    tc = tcase_create("corruption");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_header_byte_flips, 0, 3);
    tcase_add_loop_test(tc, test_payload_byte_flips, 0, 3);
    tcase_add_loop_test(tc, test_truncation, 0, 2);
    tcase_add_loop_test(tc, test_trailing_bytes, 0, 2);
    tcase_add_loop_test(tc, test_wrong_magic, 0, 2);
    tcase_add_loop_test(tc, test_versions, 0, 2);
    tcase_add_test(tc, test_key_kinds);
    tcase_add_test(tc, test_section);
    tcase_add_loop_test(tc, test_absurd_fields, 0, 2 * N_PATCHES + N_FUSE_PATCHES);
    tcase_add_loop_test(tc, test_valid_checksum_is_accepted, 0, 2);
    tcase_add_test(tc, test_bad_paths);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_random_flips, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(format_suite());
}
