/* A growing filter's checkpoint file, see grow_file.h. All integers
 * little-endian; the payloads are the in-memory words (little-endian, as
 * format.c requires). Layout (docs/file-format.md):
 *
 *   fixed header (64): magic, version, sub-filters n, layout, key kind,
 *     capacity C, rate P, seed, header bytes, header checksum
 *   n sub-filter entries (64 each): k, shards, capacity, target rate,
 *     expected rate, bits per shard, items, 16 reserved zero bytes
 *   a shard entry (24) per shard of every sub-filter, in order: items,
 *     bits set, XXH3-64 of its payload
 *   the payloads, back to back, in the same order: bits per shard / 8 bytes
 *
 * The header checksum (XXH3-64 of the header, its own 8 bytes as zero)
 * covers every shard's checksum, so one value names the content. */
#include "config.h"

#include "bloom/grow_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "bloom/grow.h"
#include "bloom/hash.h"
#include "bloom/le.h"

enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 8,
    OFF_SUBS = 12,
    OFF_LAYOUT = 16,
    OFF_KEYS = 20,
    OFF_CAPACITY = 24,
    OFF_FPR = 32,
    OFF_SEED = 40,
    OFF_HEADER_BYTES = 48,
    OFF_SUM = 56,
};
enum {
    SUB_K = 0,
    SUB_SHARDS = 4,
    SUB_CAPACITY = 8,
    SUB_FPR = 16,
    SUB_FPR_EXPECTED = 24,
    SUB_BITS = 32,
    SUB_ITEMS = 40,
    SUB_RESERVED = 48,
};

#define CHUNK (4u << 20) /* bytes read at once while loading */

static void put_f64(unsigned char *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    le_put64(p, u);
}

/* XXH3-64 over the header with its own checksum counted as zero. */
static uint64_t header_sum(const unsigned char *hdr, size_t len)
{
    XXH3_state_t st;
    static const unsigned char zero[8];
    memset(&st, 0, sizeof(st));
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, hdr, OFF_SUM);
    XXH3_64bits_update(&st, zero, 8);
    XXH3_64bits_update(&st, hdr + OFF_SUM + 8, len - OFF_SUM - 8);
    return XXH3_64bits_digest(&st);
}

static uint64_t shard_popcount(const struct filter *f, uint32_t s)
{
    const _Atomic uint64_t *w = f->shards[s].words;
    uint64_t n = 0;
    for (uint64_t i = 0; i < f->bits_per_shard / 64; i++)
        n += (uint64_t)__builtin_popcountll(atomic_load_explicit(&w[i], memory_order_relaxed));
    return n;
}

/* The header of g's n sub-filters into a new buffer; its size in *len. */
static unsigned char *header_make(const struct filter *head, struct filter_grow *g, unsigned n,
                                  size_t *len)
{
    size_t shards = 0;
    for (unsigned i = 0; i < n; i++)
        shards += g->sub[i]->shard_count;
    size_t hb = GROW_FILE_FIXED + (size_t)n * GROW_FILE_SUB_ENTRY + shards * GROW_FILE_SHARD_ENTRY;
    unsigned char *h = calloc(1, hb);
    if (!h)
        return NULL;
    memcpy(h + OFF_MAGIC, GROW_FILE_MAGIC, 8);
    le_put32(h + OFF_VERSION, GROW_FILE_VERSION);
    le_put32(h + OFF_SUBS, n);
    le_put32(h + OFF_LAYOUT, (uint32_t)g->layout);
    le_put32(h + OFF_KEYS, (uint32_t)head->keys);
    le_put64(h + OFF_CAPACITY, g->capacity);
    put_f64(h + OFF_FPR, g->fpr);
    le_put64(h + OFF_SEED, g->seed);
    le_put64(h + OFF_HEADER_BYTES, hb);
    unsigned char *se = h + GROW_FILE_FIXED + (size_t)n * GROW_FILE_SUB_ENTRY;
    for (unsigned i = 0; i < n; i++) {
        const struct filter *s = g->sub[i];
        unsigned char *e = h + GROW_FILE_FIXED + (size_t)i * GROW_FILE_SUB_ENTRY;
        uint64_t items = 0;
        for (uint32_t j = 0; j < s->shard_count; j++, se += GROW_FILE_SHARD_ENTRY) {
            uint64_t it = atomic_load(&s->shards[j].items);
            le_put64(se, it);
            le_put64(se + 8, shard_popcount(s, j));
            le_put64(se + 16, XXH3_64bits((const void *)s->shards[j].words, s->bits_per_shard / 8));
            items += it;
        }
        le_put32(e + SUB_K, s->k);
        le_put32(e + SUB_SHARDS, s->shard_count);
        le_put64(e + SUB_CAPACITY, s->capacity);
        put_f64(e + SUB_FPR, s->fpr_target);
        put_f64(e + SUB_FPR_EXPECTED, g->fpr_expected[i]);
        le_put64(e + SUB_BITS, s->bits_per_shard);
        le_put64(e + SUB_ITEMS, items);
    }
    le_put64(h + OFF_SUM, header_sum(h, hb));
    *len = hb;
    return h;
}

/* Under g->mu, so that no add of the filter's own runs: the counts in the
 * header are those of the bits written. */
int grow_file_write(struct filter *head, const char *path, char *err, size_t errlen)
{
    struct filter_grow *g = grow_of(head);
    if (!g) {
        snprintf(err, errlen, "%s: not a growing filter", path);
        return -1;
    }
    char tmp[4096];
    size_t hb = 0;
    pthread_mutex_lock(&g->mu);
    unsigned n = grow_count(g);
    unsigned char *h = header_make(head, g, n, &hb);
    int fd = h ? util_tmpfile_beside(path, tmp, sizeof(tmp), err, errlen) : -1;
    if (!h)
        snprintf(err, errlen, "%s: out of memory", path);
    int rc = fd >= 0 && util_write_all(fd, h, hb) == 0 ? 0 : -1;
    for (unsigned i = 0; rc == 0 && i < n; i++)
        for (uint32_t j = 0; rc == 0 && j < g->sub[i]->shard_count; j++)
            rc = util_write_all(fd, (const void *)g->sub[i]->shards[j].words,
                                g->sub[i]->bits_per_shard / 8);
    pthread_mutex_unlock(&g->mu);
    free(h);
    if (fd < 0)
        return -1;
    if (rc != 0) {
        snprintf(err, errlen, "%s: write failed: %s", tmp, util_errno_text(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    return util_commit_file(fd, tmp, path, err, errlen);
}

/* ---- reading ---- */

/* A header read and checked: the info, each sub-filter's plan, and the
 * shard table (items, bits set, checksum per shard, in file order). */
struct parsed {
    struct grow_file_info info;
    struct filter_plan plan[GROW_MAX_SUBS];
    uint64_t sub_items[GROW_MAX_SUBS];
    uint64_t *shard; /* 3 per shard */
    uint64_t header_bytes;
};

/* The fixed header and the sub-filter table: what the file is, its
 * version, and (from the shard counts) how long the whole header must be.
 * Fills p->info.subs and p->header_bytes. */
static int check_fixed(const char *path, int fd, uint64_t size, unsigned char *fixed,
                       struct parsed *p, char *err, size_t errlen)
{
    if (size < 8 || util_pread_all(fd, fixed, 8, 0) != 0 || memcmp(fixed, GROW_FILE_MAGIC, 8) != 0)
        return util_fail(err, errlen, "%s: not a growing filter's checkpoint (%s)", path,
                         size < 8 ? "too short" : "wrong magic");
    if (size < GROW_FILE_FIXED || util_pread_all(fd, fixed, GROW_FILE_FIXED, 0) != 0)
        return util_fail(err, errlen, "%s: truncated: %llu bytes, shorter than the %u-byte header",
                         path, (unsigned long long)size, GROW_FILE_FIXED);
    uint32_t v = le_get32(fixed + OFF_VERSION);
    if (v != GROW_FILE_VERSION)
        return util_fail(err, errlen, "%s: version %u; this bloomgate reads version %u%s", path, v,
                         GROW_FILE_VERSION, v > GROW_FILE_VERSION ? " (upgrade bloomgate)" : "");
    unsigned n = le_get32(fixed + OFF_SUBS);
    if (n < 1 || n > GROW_MAX_SUBS)
        return util_fail(err, errlen, "%s: corrupt header: %u sub-filters (1 to %u)", path, n,
                         GROW_MAX_SUBS);
    uint64_t table = GROW_FILE_FIXED + (uint64_t)n * GROW_FILE_SUB_ENTRY;
    unsigned char sub[GROW_MAX_SUBS * GROW_FILE_SUB_ENTRY];
    if (size < table || util_pread_all(fd, sub, table - GROW_FILE_FIXED, GROW_FILE_FIXED) != 0)
        return util_fail(err, errlen,
                         "%s: truncated: %llu bytes, shorter than its %u sub-filters' "
                         "table",
                         path, (unsigned long long)size, n);
    uint64_t shards = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t s = le_get32(sub + (size_t)i * GROW_FILE_SUB_ENTRY + SUB_SHARDS);
        if (s < 1 || s > FILTER_MAX_SHARDS || (s & (s - 1)) != 0)
            return util_fail(err, errlen, "%s: corrupt header: sub-filter %u has %u shards", path,
                             i, s);
        shards += s;
    }
    p->info.subs = n;
    p->header_bytes = table + shards * GROW_FILE_SHARD_ENTRY;
    if (le_get64(fixed + OFF_HEADER_BYTES) != p->header_bytes)
        return util_fail(err, errlen, "%s: corrupt header: %llu header bytes, its table says %llu",
                         path, (unsigned long long)le_get64(fixed + OFF_HEADER_BYTES),
                         (unsigned long long)p->header_bytes);
    if (p->header_bytes > size)
        return util_fail(err, errlen,
                         "%s: truncated: %llu bytes, shorter than its %llu-byte "
                         "header",
                         path, (unsigned long long)size, (unsigned long long)p->header_bytes);
    return 0;
}

/* An intact header's values: the filter's, then each sub-filter's against
 * what growth makes of them (capacity C * 2^i at rate P / 2^(i+1)), then
 * each shard's counts, then the file's size. */
static int check_values(const char *path, const unsigned char *h, uint64_t size, struct parsed *p,
                        char *err, size_t errlen)
{
    struct grow_file_info *in = &p->info;
    in->layout = (enum filter_layout)le_get32(h + OFF_LAYOUT);
    uint32_t keys = le_get32(h + OFF_KEYS);
    in->capacity = le_get64(h + OFF_CAPACITY);
    in->fpr = le_getf64(h + OFF_FPR);
    in->seed = le_get64(h + OFF_SEED);
    if (in->layout != FILTER_BLOCKED && in->layout != FILTER_CLASSIC)
        return util_fail(err, errlen,
                         "%s: corrupt header: layout %u (a growing filter is "
                         "blocked or classic)",
                         path, (unsigned)in->layout);
    if (keys > FILTER_KEYS_URL)
        return util_fail(err, errlen, "%s: corrupt header: key kind %u", path, keys);
    in->keys = (enum filter_keys)keys;
    if (in->capacity < 1 || in->capacity > FILTER_MAX_CAPACITY || !(in->fpr > 0 && in->fpr < 1))
        return util_fail(err, errlen, "%s: corrupt header: capacity %llu at rate %g", path,
                         (unsigned long long)in->capacity, in->fpr);
    uint64_t payload = 0, nshard = 0;
    for (unsigned i = 0; i < in->subs; i++) {
        const unsigned char *e = h + GROW_FILE_FIXED + (size_t)i * GROW_FILE_SUB_ENTRY;
        struct filter_plan *pl = &p->plan[i];
        memset(pl, 0, sizeof(*pl));
        pl->layout = in->layout;
        pl->k = le_get32(e + SUB_K);
        pl->shard_count = le_get32(e + SUB_SHARDS);
        pl->capacity = le_get64(e + SUB_CAPACITY);
        pl->fpr_target = le_getf64(e + SUB_FPR);
        pl->fpr_expected = le_getf64(e + SUB_FPR_EXPECTED);
        pl->bits_per_shard = le_get64(e + SUB_BITS);
        p->sub_items[i] = le_get64(e + SUB_ITEMS);
        char why[200];
        bool zero = le_get64(e + SUB_RESERVED) == 0 && le_get64(e + SUB_RESERVED + 8) == 0;
        if (in->capacity > (FILTER_MAX_CAPACITY >> i) || pl->capacity != in->capacity << i ||
            pl->fpr_target != ldexp(in->fpr, -(int)(i + 1)) || !zero ||
            !(pl->fpr_expected >= 0 && pl->fpr_expected <= 1))
            return util_fail(err, errlen,
                             "%s: corrupt header: sub-filter %u is not the one growth "
                             "makes (capacity %llu at %g)",
                             path, i, (unsigned long long)pl->capacity, pl->fpr_target);
        if (filter_plan_validate(pl, why, sizeof(why)) != 0)
            return util_fail(err, errlen, "%s: corrupt header: sub-filter %u: %s", path, i, why);
        uint64_t items = 0;
        for (uint32_t j = 0; j < pl->shard_count; j++, nshard++) {
            const unsigned char *s = h + GROW_FILE_FIXED + (size_t)in->subs * GROW_FILE_SUB_ENTRY +
                                     nshard * GROW_FILE_SHARD_ENTRY;
            uint64_t *t = &p->shard[nshard * 3];
            t[0] = le_get64(s);
            t[1] = le_get64(s + 8);
            t[2] = le_get64(s + 16);
            if (t[0] > pl->bits_per_shard || t[1] > pl->bits_per_shard)
                return util_fail(err, errlen,
                                 "%s: corrupt header: sub-filter %u shard %u counts "
                                 "out of range",
                                 path, i, j);
            items += t[0];
        }
        if (items != p->sub_items[i])
            return util_fail(err, errlen,
                             "%s: corrupt header: sub-filter %u's shards hold %llu "
                             "items, its entry says %llu",
                             path, i, (unsigned long long)items,
                             (unsigned long long)p->sub_items[i]);
        in->items += items;
        payload += filter_plan_bytes(pl); /* each at most 1 TiB: no overflow */
    }
    in->bytes = payload;
    if (size != p->header_bytes + payload)
        return util_fail(err, errlen, "%s: %s: %llu bytes, the header says %llu", path,
                         size < p->header_bytes + payload ? "truncated" : "trailing bytes",
                         (unsigned long long)size, (unsigned long long)(p->header_bytes + payload));
    return 0;
}

/* Open path and check its header into p (p->shard malloc'd: free it). The
 * fd, or -1 with err. */
static int open_parse(const char *path, struct parsed *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return util_fail(err, errlen, "%s: cannot open: %s", path, util_errno_text(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return util_fail(err, errlen, "%s: not a regular file", path);
    }
    uint64_t size = (uint64_t)st.st_size;
    unsigned char fixed[GROW_FILE_FIXED], *h = NULL;
    int rc = check_fixed(path, fd, size, fixed, p, err, errlen);
    uint64_t shards =
        rc ? 0
           : (p->header_bytes - GROW_FILE_FIXED - (uint64_t)p->info.subs * GROW_FILE_SUB_ENTRY) /
                 GROW_FILE_SHARD_ENTRY;
    if (rc == 0 && (!(h = malloc(p->header_bytes)) || !(p->shard = malloc(shards * 24 + 1))))
        rc = util_fail(err, errlen, "%s: out of memory reading the header", path);
    if (rc == 0 && util_pread_all(fd, h, p->header_bytes, 0) != 0)
        rc = util_fail(err, errlen, "%s: cannot read the header: %s", path,
                       errno ? util_errno_text(errno) : "unexpected end of file");
    if (rc == 0 && header_sum(h, p->header_bytes) != le_get64(h + OFF_SUM))
        rc = util_fail(err, errlen, "%s: corrupt header: checksum mismatch", path);
    if (rc == 0)
        rc = check_values(path, h, size, p, err, errlen);
    free(h);
    if (rc != 0) {
        free(p->shard);
        p->shard = NULL;
        close(fd);
        return -1;
    }
    return fd;
}

int grow_file_info(const char *path, struct grow_file_info *out, char *err, size_t errlen)
{
    struct parsed p;
    int fd = open_parse(path, &p, err, errlen);
    if (fd < 0)
        return -1;
    close(fd);
    free(p.shard);
    *out = p.info;
    return 0;
}

/* Read shard j of f from off, checking its checksum and bits set against
 * t (items, bits set, checksum); sets its counters. */
static int read_shard(const char *path, int fd, uint64_t off, struct filter *f, uint32_t j,
                      const uint64_t *t, unsigned sub, char *err, size_t errlen)
{
    uint64_t bytes = f->bits_per_shard / 8, bits = 0;
    unsigned char *dst = (unsigned char *)f->shards[j].words;
    XXH3_state_t st;
    memset(&st, 0, sizeof(st));
    XXH3_64bits_reset(&st);
    for (uint64_t done = 0; done < bytes;) {
        size_t n = bytes - done < CHUNK ? (size_t)(bytes - done) : CHUNK;
        if (util_pread_all(fd, dst + done, n, (off_t)(off + done)) != 0)
            return util_fail(err, errlen, "%s: sub-filter %u shard %u: read failed: %s", path, sub,
                             j, errno ? util_errno_text(errno) : "end of file");
        XXH3_64bits_update(&st, dst + done, n);
        const uint64_t *w = (const uint64_t *)(const void *)(dst + done);
        for (size_t x = 0; x < n / 8; x++)
            bits += (uint64_t)__builtin_popcountll(w[x]);
        done += n;
    }
    if (XXH3_64bits_digest(&st) != t[2])
        return util_fail(err, errlen,
                         "%s: sub-filter %u shard %u: checksum mismatch (corrupt "
                         "payload)",
                         path, sub, j);
    if (bits != t[1])
        return util_fail(err, errlen,
                         "%s: sub-filter %u shard %u: set-bit count does not match "
                         "the header",
                         path, sub, j);
    atomic_store(&f->shards[j].items, t[0]);
    atomic_store(&f->shards[j].bits_set, bits);
    return 0;
}

struct filter *grow_file_load(const char *path, uint64_t max_bytes, char *err, size_t errlen)
{
    struct parsed p;
    int fd = open_parse(path, &p, err, errlen);
    if (fd < 0)
        return NULL;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    struct filter *subs[GROW_MAX_SUBS];
    unsigned made = 0;
    uint64_t off = p.header_bytes, nshard = 0;
    int rc = 0;
    char why[256];
    for (unsigned i = 0; rc == 0 && i < p.info.subs; i++) {
        struct filter *s = filter_create(&p.plan[i], p.info.seed, why, sizeof(why));
        if (!s) {
            rc = util_fail(err, errlen, "%s: sub-filter %u: %s", path, i, why);
            break;
        }
        subs[made++] = s;
        s->keys = p.info.keys;
        for (uint32_t j = 0; rc == 0 && j < s->shard_count; j++, nshard++) {
            rc = read_shard(path, fd, off, s, j, &p.shard[nshard * 3], i, err, errlen);
            off += s->bits_per_shard / 8;
        }
    }
    close(fd);
    free(p.shard);
    if (rc != 0) {
        while (made)
            filter_free(subs[--made]);
        return NULL;
    }
    struct filter *head = grow_filter_adopt(p.info.layout, p.info.capacity, p.info.fpr, p.info.seed,
                                            max_bytes, subs, p.plan, made, why, sizeof(why));
    if (!head) {
        snprintf(err, errlen, "%s: %s", path, why);
        return NULL;
    }
    head->keys = p.info.keys;
    return head;
}
