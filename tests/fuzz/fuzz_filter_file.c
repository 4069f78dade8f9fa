/* fuzz_filter_file: the filter file loader (src/bloom/format.h):
 * format_read_info, format_verify and format_load on a memfd, the way the
 * daemon and `bloomgate info/verify` open a file by path.
 *
 * Input: u8 options, then the file. Without option bit 0 the bytes are the
 * file as is. With it, they are a compact description that the harness lays
 * out and seals, so the fuzzer gets past the checksums and the page
 * alignment and reaches the checks behind them (docs/file-format.md):
 *   the 128-byte fixed header, then 32 bytes a shard of table (for the
 *   shard count the header gives, at most 1024), then the shard payloads back
 *   to back; each payload lands at payload_offset + i * shard_stride, the rest
 *   of the file is zeros (at most 1 MiB in all, else the bytes go out as given),
 *   every shard's bits_set (a counting filter's: its non-zero counters) and
 *   checksum and the header checksum are computed (a fuse shard's checksum
 *   seeded with its entry's seed, as the writer does).
 *   bit 1: also set payload_offset and shard_stride to the values they must have;
 *   bit 2: also set the header's items to the sum of the table's;
 *   bit 3: add a trailing byte (bit 4: cut the last byte) after sealing;
 *   bit 5: a version-4 section after the last shard, of the size the header
 *   gives at offset 108 (16 to 64 KiB), its body the bytes left, its head
 *   (length, XXH3-64) computed.
 * What is checked: a load succeeds exactly when verify finds every shard sound
 * and read_info accepts the header (verify counts a bad section as one more
 * bad part, which the section reader alone reports), and the loaded filter
 * is what the header says; every failure names the file. */
#include "config.h"

#include <xxhash.h>

#include "bloom/filter.h"
#include "bloom/format.h"
#include "bloom/le.h"
#include "fuzz.h"

#define MAX_FILE (1u << 20)
#define MAX_SHARDS 1024u

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* Lay out and seal a compact description as described above. Returns the
 * file's bytes (malloc'd) and their number in *n. Not instrumented for
 * coverage: its loops over the payload are the harness's, not the code under
 * test, and traced they took a third of the time. */
__attribute__((no_sanitize("coverage"))) static unsigned char *build_file(const uint8_t *d, size_t len, uint8_t opt, size_t *n)
{
    unsigned char fixed[FORMAT_FIXED_HEADER] = {0};
    memcpy(fixed, d, len < sizeof(fixed) ? len : sizeof(fixed));
    uint32_t shards = le_get32(fixed + 48);
    if (shards == 0 || shards > MAX_SHARDS || (shards & (shards - 1)) != 0) {
        /* No layout to give it: the bytes as they are. */
        *n = len;
        return (unsigned char *)fuzz_dup(d, len);
    }
    uint64_t hb = FORMAT_FIXED_HEADER + (uint64_t)shards * FORMAT_SHARD_ENTRY;
    le_put32(fixed + 12, (uint32_t)hb);
    uint64_t shard_bytes = le_get64(fixed + 56) / 8;
    if (opt & 2) {
        le_put64(fixed + 80, align_up(hb, FORMAT_ALIGN));
        le_put64(fixed + 88, align_up(shard_bytes, FORMAT_ALIGN));
    }
    uint64_t po = le_get64(fixed + 80), stride = le_get64(fixed + 88);
    size_t used = len < FORMAT_FIXED_HEADER ? len : FORMAT_FIXED_HEADER;
    size_t table = len - used < hb - FORMAT_FIXED_HEADER ? len - used : hb - FORMAT_FIXED_HEADER;
    const uint8_t *payload = d + used + table;
    size_t plen = len - used - table;
    bool laid = po >= hb && stride >= shard_bytes && po <= MAX_FILE &&
                stride <= (MAX_FILE - po) / shards;
    uint64_t sect = le_get64(fixed + 108);
    bool with_section = laid && (opt & 32) && sect >= 16 && sect <= (64u << 10);
    size_t size = laid ? (size_t)(po + stride * shards) : (size_t)hb + plen;
    size_t sect_at = size;
    if (with_section)
        size += (size_t)sect;
    unsigned char *f = calloc(1, size + 1);
    FUZZ_CHECK(f, "out of memory");
    memcpy(f, fixed, FORMAT_FIXED_HEADER);
    memcpy(f + FORMAT_FIXED_HEADER, d + used, table);
    if (laid) {
        for (uint32_t i = 0; i < shards; i++) {
            unsigned char *s = f + po + stride * i;
            size_t take = plen < shard_bytes ? plen : (size_t)shard_bytes;
            memcpy(s, payload, take);
            payload += take;
            plen -= take;
            uint64_t bits = 0; /* shard_bytes is a multiple of 8 when the plan is valid */
            bool counting = le_get32(fixed + 16) == FILTER_COUNTING; /* non-zero counters */
            for (uint64_t b = 0; b + 8 <= shard_bytes; b += 8) {
                uint64_t w = le_get64(s + b);
                if (counting)
                    w = (w | w >> 1 | w >> 2 | w >> 3) & 0x1111111111111111ull;
                bits += (uint64_t)__builtin_popcountll(w);
            }
            for (uint64_t b = shard_bytes & ~7ull; b < shard_bytes; b++)
                bits += (uint64_t)__builtin_popcount(s[b]);
            unsigned char *e = f + FORMAT_FIXED_HEADER + (size_t)i * FORMAT_SHARD_ENTRY;
            le_put64(e + 8, bits);
            uint64_t seed = le_get32(fixed + 16) == FILTER_FUSE ? le_get64(e + 24) : 0;
            le_put64(e + 16, XXH3_64bits_withSeed(s, (size_t)shard_bytes, seed));
        }
        if (with_section) {
            unsigned char *s = f + sect_at;
            size_t body = (size_t)sect - 16, take = plen < body ? plen : body;
            memcpy(s + 16, payload, take);
            le_put64(s, body);
            le_put64(s + 8, XXH3_64bits(s + 16, body));
        }
    } else {
        memcpy(f + hb, payload, plen);
    }
    if (opt & 4) {
        uint64_t items = 0;
        for (uint32_t i = 0; i < shards; i++)
            items += le_get64(f + FORMAT_FIXED_HEADER + (size_t)i * FORMAT_SHARD_ENTRY);
        le_put64(f + 40, items);
    }
    le_put64(f + 120, 0);
    le_put64(f + 120, XXH3_64bits(f, (size_t)hb));
    if (opt & 8)
        size++; /* calloc left a zero there */
    else if ((opt & 16) && size > 0)
        size--;
    *n = size;
    return f;
}

static void check_err(const char *err, const char *path)
{
    FUZZ_CHECK(strncmp(err, path, strlen(path)) == 0 && err[strlen(path)] == ':',
               "error does not name the file: %s", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t opt = fuzz_u8(&in);
    size_t n;
    unsigned char *file = (opt & 1) ? build_file(in.p, in.len, opt, &n)
                                    : (unsigned char *)fuzz_dup(in.p, n = in.len);
    char path[64], err[512] = "", err2[512] = "", err3[512] = "";
    int fd = fuzz_memfd("fuzz.bloom", file, n, path);

    struct format_info info;
    int info_rc = format_read_info(path, &info, err, sizeof(err));
    if (info_rc == 0) {
        FUZZ_CHECK(info.file_size == n, "file_size %llu of %zu", (unsigned long long)info.file_size,
                   n);
        FUZZ_CHECK(info.payload_offset + info.shard_stride * info.plan.shard_count ==
                           info.section_offset &&
                       info.section_offset + info.section_bytes == n,
                   "layout does not cover the file");
        uint64_t items = 0;
        for (uint32_t i = 0; i < info.plan.shard_count; i++)
            items += info.shards[i].items;
        FUZZ_CHECK(items == info.items, "shard items do not sum to the header's");
    } else {
        check_err(err, path);
    }
    /* The section: read whole and checked, or refused naming the file. */
    int sect_bad = 0;
    if (info_rc == 0 && info.section_bytes) {
        void *body;
        size_t blen;
        char err4[512] = "";
        if (format_read_section(path, &info, &body, &blen, err4, sizeof(err4)) == 0) {
            FUZZ_CHECK(blen + 16 == info.section_bytes, "section of %zu bytes", blen);
            free(body);
        } else {
            check_err(err4, path);
            sect_bad = 1;
        }
    }
    int bad = format_verify(path, 1, err2, sizeof(err2));
    struct filter *f = format_load(path, 1, err3, sizeof(err3));
    FUZZ_CHECK(bad >= -1, "verify %d", bad);
    FUZZ_CHECK((bad == -1) == (info_rc != 0), "verify %d but read_info %d", bad, info_rc);
    FUZZ_CHECK(bad == -1 || bad >= sect_bad, "verify %d missed a bad section", bad);
    FUZZ_CHECK((f != NULL) == (bad >= 0 && bad - sect_bad == 0), "load %s but verify %d: %s / %s",
               f ? "ok" : "failed", bad, err3, err2);
    if (bad != 0)
        check_err(err2, path);
    if (!f)
        check_err(err3, path);
    if (f) {
        FUZZ_CHECK(f->shard_count == info.plan.shard_count &&
                       f->bits_per_shard == info.plan.bits_per_shard && f->k == info.plan.k &&
                       f->layout == info.plan.layout && f->seed == info.seed,
                   "loaded filter differs from its header");
        /* It answers: an item added is then present (a fuse filter takes no
         * add, bloom/fuse.h: it answers a lookup, whatever its bytes). */
        if (f->layout == FILTER_FUSE) {
            FUZZ_CHECK(!filter_add(f, data, size), "a fuse filter took an add");
            (void)filter_check(f, data, size);
        } else {
            filter_add(f, data, size);
            FUZZ_CHECK(filter_check(f, data, size), "an item just added is absent");
        }
        filter_free(f);
    }
    if (info_rc == 0)
        format_info_free(&info);
    close(fd);
    free(file);
    return 0;
}
