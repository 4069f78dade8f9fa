/* fuzz_grow_file: a growing filter's checkpoint reader (src/bloom/grow_file.h):
 * grow_file_info and grow_file_load on a memfd, as start-up opens a created
 * filter's cN.bloom by path.
 *
 * Input: u8 options, then the file. Without option bit 0 the bytes are the
 * file as is. With it the harness seals them, so the fuzzer gets past the
 * checksums and reaches the checks behind them: when the 64-byte fixed
 * header's sub-filter count (offset 12) is 1 to 40 and every sub-filter
 * entry's shard count (entry offset 4) a power of two up to 64, it sets the
 * header's size (offset 48) to the one the table implies, and when the file
 * is at most 1 MiB it computes each shard's set bits and checksum from its
 * payload, each sub-filter's items from its shards', and the header checksum.
 * Bit 1 also sets each sub-filter's capacity and target rate to those growth
 * makes (C * 2^i, P / 2^(i+1)) and its reserved bytes to zero.
 * What is checked: a load succeeds only when the header is accepted, and
 * then the filter is what the header says (sub-filters, items, bytes, key
 * kind) and answers a check; every refusal names the file. */
#include "config.h"

#include <math.h>
#include <xxhash.h>

#include "bloom/filter.h"
#include "bloom/grow.h"
#include "bloom/grow_file.h"
#include "bloom/le.h"
#include "fuzz.h"

#define MAX_FILE (1u << 20)
#define MAX_SHARDS 64u

static void check_err(const char *err, const char *path)
{
    FUZZ_CHECK(err[0] != '\0', "a refusal without a message");
    FUZZ_CHECK(strstr(err, path) != NULL, "message does not name the file: %s", err);
}

/* Seal a file described as above, in place (b holds n bytes). */
__attribute__((no_sanitize("coverage"))) static void seal(unsigned char *b, size_t n, uint8_t opt)
{
    if (n < GROW_FILE_FIXED)
        return;
    uint32_t subs = le_get32(b + 12);
    if (subs < 1 || subs > GROW_MAX_SUBS || n < GROW_FILE_FIXED + subs * GROW_FILE_SUB_ENTRY)
        return;
    uint64_t shards = 0;
    for (uint32_t i = 0; i < subs; i++) {
        uint32_t s = le_get32(b + GROW_FILE_FIXED + i * GROW_FILE_SUB_ENTRY + 4);
        if (s < 1 || s > MAX_SHARDS || (s & (s - 1)) != 0)
            return;
        shards += s;
    }
    uint64_t hb = GROW_FILE_FIXED + subs * GROW_FILE_SUB_ENTRY + shards * GROW_FILE_SHARD_ENTRY;
    le_put64(b + 48, hb);
    uint64_t cap = le_get64(b + 24);
    double fpr = le_getf64(b + 32);
    if (opt & 2)
        for (uint32_t i = 0; i < subs; i++) {
            unsigned char *e = b + GROW_FILE_FIXED + i * GROW_FILE_SUB_ENTRY;
            double p = ldexp(fpr, -(int)(i + 1));
            uint64_t u;
            memcpy(&u, &p, 8);
            le_put64(e + 8, i < 64 ? cap << i : 0);
            le_put64(e + 16, u);
            memset(e + 48, 0, 16);
        }
    if (n > MAX_FILE || hb > n)
        return;
    uint64_t off = hb, sh = 0;
    for (uint32_t i = 0; i < subs; i++) {
        unsigned char *e = b + GROW_FILE_FIXED + i * GROW_FILE_SUB_ENTRY;
        uint32_t s = le_get32(e + 4);
        uint64_t bytes = le_get64(e + 32) / 8, items = 0;
        for (uint32_t j = 0; j < s; j++, sh++) {
            unsigned char *t =
                b + GROW_FILE_FIXED + subs * GROW_FILE_SUB_ENTRY + sh * GROW_FILE_SHARD_ENTRY;
            items += le_get64(t);
            if (bytes > n || off > n - bytes)
                continue;
            uint64_t bits = 0;
            for (uint64_t x = 0; x + 8 <= bytes; x += 8)
                bits += (uint64_t)__builtin_popcountll(le_get64(b + off + x));
            le_put64(t + 8, bits);
            le_put64(t + 16, XXH3_64bits(b + off, bytes));
            off += bytes;
        }
        le_put64(e + 40, items);
    }
    static const unsigned char zero[8];
    XXH3_state_t st;
    memset(&st, 0, sizeof(st));
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, b, 56);
    XXH3_64bits_update(&st, zero, 8);
    XXH3_64bits_update(&st, b + 64, hb - 64);
    le_put64(b + 56, XXH3_64bits_digest(&st));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t opt = fuzz_u8(&in);
    size_t n = in.len;
    unsigned char *file = (unsigned char *)fuzz_dup(in.p, n);
    if (opt & 1)
        seal(file, n, opt);
    char path[64], err[512] = "", err2[512] = "";
    int fd = fuzz_memfd("fuzz.grow", file, n, path);
    struct grow_file_info gi;
    int info_rc = grow_file_info(path, &gi, err, sizeof(err));
    if (info_rc != 0)
        check_err(err, path);
    struct filter *f = grow_file_load(path, 0, err2, sizeof(err2));
    if (!f) {
        check_err(err2, path);
    } else {
        FUZZ_CHECK(info_rc == 0, "loaded a file whose header was refused");
        struct filter_grow *g = grow_of(f);
        FUZZ_CHECK(g && grow_count(g) == gi.subs, "sub-filters differ from the header's");
        FUZZ_CHECK(filter_items(f) == gi.items, "items differ from the header's");
        FUZZ_CHECK(filter_bytes(f) == gi.bytes, "bytes differ from the header's");
        FUZZ_CHECK(f->keys == gi.keys, "key kind differs from the header's");
        (void)filter_check(f, "fuzz", 4);
        filter_free(f);
    }
    close(fd);
    free(file);
    return 0;
}
