/* fuzz_exact_table: the exact table loader and reader (src/exact/exact.h):
 * exact_table_open_fd on a memfd, then verify, single and batch lookups and
 * entries, whatever the loader accepted.
 *
 * Input: u8 options, then the file. Without option bit 0 the bytes are the
 * file as is. With it, the first 128 bytes are the header, the rest the body
 * laid from offset 4096 (the header page's other bytes zero), at most 1 MiB
 * in all, and the harness helps the fuzzer past what it cannot guess
 * (docs/file-format.md, "The exact table"):
 *   bit 1: set every offset field, the fence count and the file size to what
 *          the count (at most what the body holds) and blob_bytes imply, and
 *          cut or pad the file to that size;
 *   bit 2: copy each page's first fingerprint into the fence index;
 *   bit 3: seal the fingerprint, fence and key checksums;
 *   the header checksum is always sealed.
 * What is checked: a table that opens answers lookups inside its mapping and a
 * batch as single lookups; one that verifies finds every entry it holds. */
#include "config.h"

#include <stdbool.h>

#include "exact/exact.h"
#include "fuzz.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAX_FILE (1u << 20)

static uint64_t g64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static void p64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static uint64_t up(uint64_t x)
{
    return (x + 4095) / 4096 * 4096;
}

/* Lay out and seal a compact description as described above. */
__attribute__((no_sanitize("coverage"))) static unsigned char *lay_out(const uint8_t *d, size_t len,
                                                                       uint8_t opt, size_t *n)
{
    size_t body = len > 128 ? len - 128 : 0;
    if (body > MAX_FILE - 4096)
        body = MAX_FILE - 4096;
    size_t size = 4096 + body;
    unsigned char *f = calloc(1, MAX_FILE);
    if (!f)
        abort();
    memcpy(f, d, len < 128 ? len : 128);
    memcpy(f + 4096, d + 128, body);
    uint32_t kind;
    memcpy(&kind, f + 12, 4);
    uint64_t count = g64(f + 16), blob = g64(f + 80);
    if (opt & 2) {
        if (count > body / 8)
            count = body / 8;
        p64(f + 16, count);
        uint64_t fences = (count + 511) / 512;
        uint64_t fence_off = 4096 + up(count * 8), end = fence_off + up(fences * 8);
        uint64_t offs_off = 0, blob_off = 0;
        if (kind == 2) {
            offs_off = end;
            blob_off = offs_off + up((count + 1) * 8);
            if (blob_off > MAX_FILE)
                blob_off = MAX_FILE; /* no layout fits: left for the loader to refuse */
            if (blob > MAX_FILE - blob_off)
                blob = MAX_FILE - blob_off;
            p64(f + 80, blob);
            end = blob_off + blob;
        }
        if (end > MAX_FILE)
            end = MAX_FILE;
        p64(f + 40, 4096);
        p64(f + 48, fence_off);
        p64(f + 56, fences);
        p64(f + 64, offs_off);
        p64(f + 72, blob_off);
        p64(f + 88, end);
        size = end;
        if ((opt & 4) && end <= MAX_FILE && fence_off + fences * 8 <= end)
            for (uint64_t i = 0; i < fences; i++)
                memcpy(f + fence_off + i * 8, f + 4096 + i * 4096, 8);
        if (opt & 8) {
            if (4096 + count * 8 <= size)
                p64(f + 96, XXH3_64bits(f + 4096, count * 8));
            if (fence_off + fences * 8 <= size)
                p64(f + 104, XXH3_64bits(f + fence_off, fences * 8));
            if (kind == 2 && offs_off <= size)
                p64(f + 112, XXH3_64bits(f + offs_off, size - offs_off));
        }
    }
    p64(f + 120, XXH3_64bits(f, 120));
    *n = size;
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t opt = fuzz_u8(&in);
    size_t n = in.len;
    unsigned char *file =
        (opt & 1) ? lay_out(in.p, in.len, opt, &n) : (unsigned char *)fuzz_dup(in.p, in.len);
    char path[64], err[512] = "";
    int fd = fuzz_memfd("exact", file, n, path);
    struct exact_table *t = exact_table_open_fd(fd, "fuzz.exact", err, sizeof(err));
    close(fd);
    if (!t) {
        FUZZ_CHECK(strstr(err, "fuzz.exact") != NULL, "message without the name: %s", err);
        free(file);
        return 0;
    }
    struct exact_info info;
    exact_table_info(t, &info);
    FUZZ_CHECK(info.file_bytes == n, "size %llu", (unsigned long long)info.file_bytes);
    /* Lookups of keys cut from the input, one at a time and as a batch. */
    enum { K = 16 };
    struct exact_probe p[K];
    bool single[K], batch[K];
    for (size_t i = 0; i < K; i++) {
        size_t off = (i * 37) % (in.len + 1), len = i % 9;
        if (off + len > in.len)
            len = in.len - off;
        const void *key = in.p + off;
        single[i] = exact_table_find(t, key, len, NULL);
        p[i] = (struct exact_probe){exact_fp(exact_table_secret(t), key, len), key, len, i};
        if (i == K - 1 && info.count) /* one probe that is certainly present */
            p[i].fp = exact_table_fp_at(t, info.count - 1), p[i].key = NULL, single[i] = true;
    }
    exact_table_confirm(t, p, K, batch, opt & 16 ? EXACT_BATCH_WILLNEED : 0);
    for (size_t i = 0; i < K - 1; i++)
        FUZZ_CHECK(batch[i] == single[i], "probe %zu", i);
    bool ok = exact_table_verify(t, err, sizeof(err)) == 0;
    FUZZ_CHECK(ok || strstr(err, "fuzz.exact") != NULL, "message without the name: %s", err);
    for (uint64_t i = 0; ok && i < info.count; i++) {
        size_t len = 0;
        const void *e = exact_table_entry(t, i, &len);
        if (info.kind == EXACT_KIND_KEYS) {
            FUZZ_CHECK(e != NULL, "entry %llu", (unsigned long long)i);
            FUZZ_CHECK(exact_table_find(t, e, len, NULL), "entry %llu not found",
                       (unsigned long long)i);
        } else {
            FUZZ_CHECK(exact_table_has_fp(t, exact_table_fp_at(t, i)), "fp %llu",
                       (unsigned long long)i);
        }
    }
    exact_table_close(t);
    free(file);
    return 0;
}
