/* table: loading, checking and reading an exact table (exact.h). The loader
 * trusts no byte it has not checked; a lookup stays inside the mapping whatever
 * the pages hold, so a table whose pages were damaged after a load answers
 * wrongly at worst, and exact_table_verify is what finds it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "exact/exact_int.h"

/* The largest count a header may give: its fence count stays a u32 and no size
 * computed from it overflows. */
#define EXACT_MAX_COUNT (1ull << 40)

static int bad(char *err, size_t errlen, const char *name, const char *what)
{
    return util_fail(err, errlen, "%s: not a valid exact table: %s", name, what);
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* The header's checks that need no more than its 4096 bytes and the file's
 * size: magic, version, kind, and every offset equal to the one the count and
 * blob size imply (docs/file-format.md), so no later read can leave the file. */
static int check_header(struct exact_table *t, uint64_t size, char *err, size_t errlen)
{
    const unsigned char *h = t->map;
    const char *n = t->name;
    if (memcmp(h + EH_MAGIC, EXACT_MAGIC, 8) != 0)
        return bad(err, errlen, n, "bad magic");
    uint32_t version = exact_get32(h + EH_VERSION);
    if (version == 0)
        return bad(err, errlen, n, "version 0");
    if (version > EXACT_VERSION)
        return util_fail(err, errlen,
                         "%s: exact table version %u is newer than this bloomgate reads (%u)", n,
                         version, EXACT_VERSION);
    if (XXH3_64bits(h, EH_HEADER_SUM) != exact_get64(h + EH_HEADER_SUM))
        return bad(err, errlen, n, "header checksum mismatch");
    if (!all_zero(h + EXACT_HEADER_BYTES, EXACT_PAGE - EXACT_HEADER_BYTES) ||
        exact_get32(h + EH_RESERVED))
        return bad(err, errlen, n, "non-zero reserved bytes in the header");
    uint32_t kind = exact_get32(h + EH_KIND);
    if (kind != EXACT_KIND_FP && kind != EXACT_KIND_KEYS)
        return bad(err, errlen, n, "unknown kind");
    if (exact_get32(h + EH_PAGE) != EXACT_PAGE)
        return bad(err, errlen, n, "page size is not 4096");
    uint64_t count = exact_get64(h + EH_COUNT);
    if (count > EXACT_MAX_COUNT)
        return bad(err, errlen, n, "entry count out of range");
    uint64_t fences = (count + EXACT_PER_PAGE - 1) / EXACT_PER_PAGE;
    uint64_t fp_off = EXACT_PAGE;
    uint64_t fence_off = fp_off + exact_align(count * 8);
    uint64_t end = fence_off + exact_align(fences * 8);
    uint64_t offs_off = 0, blob_off = 0, blob_bytes = exact_get64(h + EH_BLOB_BYTES);
    if (kind == EXACT_KIND_KEYS) {
        offs_off = end;
        blob_off = offs_off + exact_align((count + 1) * 8);
        if (blob_bytes > size || blob_bytes > count * EXACT_MAX_KEY)
            return bad(err, errlen, n, "key bytes out of range");
        end = blob_off + blob_bytes;
    } else if (blob_bytes) {
        return bad(err, errlen, n, "key bytes in a fingerprint table");
    }
    if (exact_get64(h + EH_FP_OFF) != fp_off || exact_get64(h + EH_FENCE_OFF) != fence_off ||
        exact_get64(h + EH_FENCE_COUNT) != fences || exact_get64(h + EH_OFFS_OFF) != offs_off ||
        exact_get64(h + EH_BLOB_OFF) != blob_off)
        return bad(err, errlen, n, "section offsets do not match the count");
    if (exact_get64(h + EH_FILE_BYTES) != end)
        return bad(err, errlen, n, "file size field does not match the sections");
    if (size != end)
        return util_fail(err, errlen,
                         "%s: not a valid exact table: %s (%llu bytes, header says %llu)", n,
                         size < end ? "truncated" : "trailing bytes", (unsigned long long)size,
                         (unsigned long long)end);
    t->kind = (enum exact_kind)kind;
    t->count = count;
    t->fence_count = fences;
    t->blob_bytes = blob_bytes;
    t->fps = (const uint64_t *)(t->map + fp_off);
    if (kind == EXACT_KIND_KEYS) {
        t->offs = (const uint64_t *)(t->map + offs_off);
        t->blob = t->map + blob_off;
    }
    exact_fp_init(&t->secret, exact_get64(h + EH_SEED));
    return 0;
}

/* Copy the fences into the heap (the one section a lookup reads every time),
 * check their checksum and order, and build the directory over their top bits. */
static int load_index(struct exact_table *t, char *err, size_t errlen)
{
    const unsigned char *h = t->map;
    const unsigned char *raw = t->map + exact_get64(h + EH_FENCE_OFF);
    if (XXH3_64bits(raw, t->fence_count * 8) != exact_get64(h + EH_FENCE_SUM))
        return bad(err, errlen, t->name, "fence index checksum mismatch");
    t->fences = malloc(t->fence_count ? t->fence_count * 8 : 8);
    if (!t->fences)
        return util_fail(err, errlen, "%s: out of memory for the index", t->name);
    for (uint64_t i = 0; i < t->fence_count; i++) {
        t->fences[i] = exact_get64(raw + i * 8);
        /* Page i's first entry is strictly above page i-1's last unless a key
         * table's fingerprint run crosses the boundary. */
        if (i && (t->fences[i] < t->fences[i - 1] ||
                  (t->kind == EXACT_KIND_FP && t->fences[i] == t->fences[i - 1])))
            return bad(err, errlen, t->name, "fence index out of order");
    }
    unsigned bits = 0;
    while (bits < 24 && (1ull << bits) < t->fence_count)
        bits++;
    t->dir_bits = bits;
    size_t slots = ((size_t)1 << bits) + 1;
    t->dir = malloc(slots * sizeof(*t->dir));
    if (!t->dir)
        return util_fail(err, errlen, "%s: out of memory for the index", t->name);
    uint64_t f = 0;
    for (size_t s = 0; s < slots - 1; s++) {
        while (f < t->fence_count && (bits ? t->fences[f] >> (64 - bits) : 0) < s)
            f++;
        t->dir[s] = (uint32_t)f;
    }
    t->dir[slots - 1] = (uint32_t)t->fence_count;
    if (t->kind == EXACT_KIND_KEYS) {
        if (exact_get64((const unsigned char *)t->offs) != 0 ||
            exact_get64((const unsigned char *)(t->offs + t->count)) != t->blob_bytes)
            return bad(err, errlen, t->name, "key offsets do not span the key bytes");
    }
    return 0;
}

struct exact_table *exact_table_open_fd(int fd, const char *name, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        util_fail(err, errlen, "%s: %s", name, util_errno_text(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        util_fail(err, errlen, "%s: not a regular file", name);
        return NULL;
    }
    if ((uint64_t)st.st_size < EXACT_PAGE) {
        util_fail(err, errlen,
                  "%s: not a valid exact table: truncated (%llu bytes, the header alone is %u)",
                  name, (unsigned long long)st.st_size, EXACT_PAGE);
        return NULL;
    }
    struct exact_table *t = calloc(1, sizeof(*t));
    if (!t || !(t->name = strdup(name))) {
        free(t);
        util_fail(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        util_fail(err, errlen, "%s: mmap: %s", name, util_errno_text(errno));
        free(t->name);
        free(t);
        return NULL;
    }
    t->map = m;
    t->map_bytes = (uint64_t)st.st_size;
    memcpy(t->header, t->map, EXACT_HEADER_BYTES);
    if (check_header(t, t->map_bytes, err, errlen) != 0 || load_index(t, err, errlen) != 0) {
        exact_table_close(t);
        return NULL;
    }
    /* Lookups land on one page each (a keys table's: on three, in three
     * sections): read-ahead would fetch pages no one asked for. */
    if (t->map_bytes > EXACT_PAGE)
        (void)madvise((void *)(t->map + EXACT_PAGE), t->map_bytes - EXACT_PAGE, MADV_RANDOM);
    return t;
}

struct exact_table *exact_table_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        util_fail(err, errlen, "%s: %s", path, util_errno_text(errno));
        return NULL;
    }
    struct exact_table *t = exact_table_open_fd(fd, path, err, errlen);
    close(fd);
    return t;
}

void exact_table_close(struct exact_table *t)
{
    if (!t)
        return;
    if (t->map)
        munmap((void *)t->map, (size_t)t->map_bytes);
    free(t->fences);
    free(t->dir);
    free(t->name);
    free(t);
}

void exact_table_info(const struct exact_table *t, struct exact_info *out)
{
    out->kind = t->kind;
    out->count = t->count;
    out->seed = t->secret.seed;
    out->file_bytes = t->map_bytes;
    out->index_bytes = t->fence_count * 8 + (((uint64_t)1 << t->dir_bits) + 1) * 4;
    out->blob_bytes = t->blob_bytes;
    out->checksum = exact_get64(t->header + EH_HEADER_SUM);
}

const struct exact_fp_secret *exact_table_secret(const struct exact_table *t)
{
    return &t->secret;
}
const char *exact_table_name(const struct exact_table *t)
{
    return t->name;
}

uint64_t exact_table_fp_at(const struct exact_table *t, uint64_t i)
{
    return i < t->count ? le64toh(t->fps[i]) : 0;
}

/* The number of fences below fp, from the heap alone: the directory narrows
 * the search to the fences that share fp's top bits. */
static uint64_t fences_below(const struct exact_table *t, uint64_t fp)
{
    size_t s = t->dir_bits ? (size_t)(fp >> (64 - t->dir_bits)) : 0;
    uint64_t lo = t->dir[s], hi = t->dir[s + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->fences[mid] < fp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first position in page p's entries whose fingerprint is >= fp: the one
 * page a lookup reads. Fingerprints are uniform, so the fences on either side
 * of the page place fp within a few entries (interpolation); a gallop from
 * there brackets it and a binary search ends it: two or three cache lines of
 * the page, where a plain binary search takes nine. Any content is safe: every
 * index stays in [lo, hi). */
static uint64_t page_lower_bound(const struct exact_table *t, uint64_t p, uint64_t fp)
{
    uint64_t lo = p * EXACT_PER_PAGE, hi = lo + EXACT_PER_PAGE;
    if (hi > t->count)
        hi = t->count;
    uint64_t lov = t->fences[p], hiv = p + 1 < t->fence_count ? t->fences[p + 1] : UINT64_MAX;
    uint64_t l = lo, r = hi;
    if (fp > lov && hiv > lov && hi > lo) {
        uint64_t g = lo + (uint64_t)(((unsigned __int128)(fp - lov) * (hi - lo)) / (hiv - lov));
        if (g >= hi)
            g = hi - 1;
        uint64_t step = 8;
        if (le64toh(t->fps[g]) < fp) {
            l = g + 1;
            r = l;
            while (r < hi && le64toh(t->fps[r]) < fp) {
                l = r + 1;
                r = hi - r > step ? r + step : hi;
                step *= 2;
            }
        } else {
            r = g;
            l = r;
            while (l > lo && le64toh(t->fps[l]) >= fp) {
                r = l;
                l = r - lo > step ? r - step : lo;
                step *= 2;
            }
        }
    }
    while (l < r) {
        uint64_t mid = l + (r - l) / 2;
        if (le64toh(t->fps[mid]) < fp)
            l = mid + 1;
        else
            r = mid;
    }
    return l;
}

uint64_t exact_lower_bound(const struct exact_table *t, uint64_t fp)
{
    uint64_t q = fences_below(t, fp);
    return q == 0 ? 0 : page_lower_bound(t, q - 1, fp);
}

bool exact_table_has_fp(const struct exact_table *t, uint64_t fp)
{
    if (t->count == 0)
        return false;
    uint64_t q = fences_below(t, fp);
    if (q < t->fence_count && t->fences[q] == fp)
        return true;
    if (q == 0)
        return false;
    uint64_t i = page_lower_bound(t, q - 1, fp);
    return i < t->count && le64toh(t->fps[i]) == fp;
}

const void *exact_table_entry(const struct exact_table *t, uint64_t i, size_t *len)
{
    if (t->kind != EXACT_KIND_KEYS || i >= t->count)
        return NULL;
    uint64_t a = le64toh(t->offs[i]), b = le64toh(t->offs[i + 1]);
    if (a > b || b > t->blob_bytes)
        return NULL;
    *len = (size_t)(b - a);
    return t->blob + a;
}

/* A keys table's run of entries with fingerprint fp, from position i: the one
 * whose bytes are the key's. */
static bool keys_match(const struct exact_table *t, uint64_t i, uint64_t fp, const void *key,
                       size_t len, uint64_t *entry)
{
    for (; i < t->count && le64toh(t->fps[i]) == fp; i++) {
        size_t elen;
        const void *e = exact_table_entry(t, i, &elen);
        if (e && elen == len && memcmp(e, key, len) == 0) {
            if (entry)
                *entry = i;
            return true;
        }
    }
    return false;
}

bool exact_table_find_fp(const struct exact_table *t, uint64_t fp, const void *key, size_t len,
                         uint64_t *entry)
{
    if (t->kind == EXACT_KIND_FP)
        return exact_table_has_fp(t, fp);
    if (t->count == 0)
        return false;
    return keys_match(t, exact_lower_bound(t, fp), fp, key, len, entry);
}

bool exact_table_find(const struct exact_table *t, const void *key, size_t len, uint64_t *entry)
{
    return exact_table_find_fp(t, exact_fp(&t->secret, key, len), key, len, entry);
}

static int probe_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct exact_probe *)a)->fp, y = ((const struct exact_probe *)b)->fp;
    return x < y ? -1 : x > y;
}

/* The page a lookup of fp reads, or UINT64_MAX when the fences answer alone
 * (fp below the first, or a fingerprint table's fp equal to a fence). */
static uint64_t probe_page(const struct exact_table *t, uint64_t fp)
{
    uint64_t q = fences_below(t, fp);
    if (t->kind == EXACT_KIND_FP && q < t->fence_count && t->fences[q] == fp)
        return UINT64_MAX;
    return q == 0 ? UINT64_MAX : q - 1;
}

/* Ask for the bytes [a, a + len) of the mapping ahead of their read: the
 * kernel's read of their pages (WILLNEED) or the cache's of their first line. */
static void ask_ahead(const struct exact_table *t, const void *a, size_t len, unsigned flags)
{
    if (!(flags & EXACT_BATCH_WILLNEED)) {
        __builtin_prefetch(a, 0, 0);
        return;
    }
    uintptr_t start = (uintptr_t)a & ~(uintptr_t)(EXACT_PAGE - 1);
    uintptr_t end = (uintptr_t)a + len;
    if (end > (uintptr_t)t->map + t->map_bytes)
        end = (uintptr_t)t->map + t->map_bytes;
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_WILLNEED);
}

/* Whether a batch's pages look out of the page cache: the test
 * EXACT_BATCH_WILLNEED_AUTO makes. mincore() on up to four of its pages,
 * spread over the sorted batch (not its first: those lie in the table's
 * first pages, which the load's checks leave cached); any one missing
 * answers yes. Four rather than one because a table partly cached (the
 * pages earlier batches read) would pass a one-page test most of the time
 * while most of the batch still faults; four system calls a batch is what
 * a cached table pays. A batch within one page asks nothing (its one fault
 * costs what WILLNEED would); an error answers "cached" (the prefetches do
 * what they always did). Any thread. */
static bool batch_pages_cold(const struct exact_table *t, const struct exact_probe *p, size_t n)
{
    if (probe_page(t, p[0].fp) == probe_page(t, p[n - 1].fp))
        return false;
    long ps = sysconf(_SC_PAGESIZE);
    if (ps <= 0)
        return false;
    uint64_t last = UINT64_MAX;
    for (size_t k = 1; k < 8; k += 2) {
        uint64_t pg = probe_page(t, p[n * k / 8].fp);
        if (pg == UINT64_MAX || pg == last)
            continue;
        last = pg;
        uintptr_t a = (uintptr_t)(t->map + EXACT_PAGE + pg * EXACT_PAGE);
        unsigned char vec = 1;
        if (mincore((void *)(a & ~((uintptr_t)ps - 1)), 1, &vec) != 0)
            return false;
        if (!(vec & 1))
            return true;
    }
    return false;
}

/* A keys table's batch, its fingerprint pages already asked for: three
 * rounds, each asking for the next section's pages for the whole batch
 * before reading any (positions, then offsets, then key bytes), so the
 * batch waits for three rounds of reads in parallel rather than three reads
 * a probe in a row. -1 when there is no memory for the positions (the
 * caller then answers one probe at a time). */
static int confirm_keys(const struct exact_table *t, const struct exact_probe *p, size_t n,
                        bool *out, unsigned flags)
{
    uint64_t *pos = malloc(n * sizeof(*pos));
    if (!pos)
        return -1;
    for (size_t i = 0; i < n; i++) {
        pos[i] = p[i].key ? exact_lower_bound(t, p[i].fp) : 0;
        if (p[i].key && pos[i] < t->count && exact_table_fp_at(t, pos[i]) == p[i].fp)
            ask_ahead(t, t->offs + pos[i], 16, flags);
    }
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const void *e;
        if (p[i].key && pos[i] < t->count && exact_table_fp_at(t, pos[i]) == p[i].fp &&
            (e = exact_table_entry(t, pos[i], &len)))
            ask_ahead(t, e, len, flags);
    }
    for (size_t i = 0; i < n; i++)
        out[p[i].slot] = p[i].key ? keys_match(t, pos[i], p[i].fp, p[i].key, p[i].len, NULL)
                                  : exact_table_has_fp(t, p[i].fp);
    free(pos);
    return 0;
}

size_t exact_table_confirm(const struct exact_table *t, struct exact_probe *p, size_t n, bool *out,
                           unsigned flags)
{
    if (n == 0)
        return 0;
    if (t->count == 0) {
        for (size_t i = 0; i < n; i++)
            out[p[i].slot] = false;
        return 0;
    }
    if (n > 1)
        qsort(p, n, sizeof(*p), probe_cmp);
    const unsigned char *base = t->map + EXACT_PAGE;
    if ((flags & EXACT_BATCH_WILLNEED_AUTO) && !(flags & EXACT_BATCH_WILLNEED) && n > 1 &&
        batch_pages_cold(t, p, n))
        flags |= EXACT_BATCH_WILLNEED;
    size_t pages = 0;
    uint64_t last = UINT64_MAX;
    /* First pass: name every distinct page, in file order, so its read is under
     * way (the kernel's with WILLNEED, the cache's otherwise) before the searches. */
    for (size_t i = 0; i < n; i++) {
        uint64_t pg = probe_page(t, p[i].fp);
        if (pg == UINT64_MAX || pg == last)
            continue;
        last = pg;
        pages++;
        if (flags & EXACT_BATCH_WILLNEED)
            (void)madvise((void *)(base + pg * EXACT_PAGE), EXACT_PAGE, MADV_WILLNEED);
        else
            __builtin_prefetch(base + pg * EXACT_PAGE + EXACT_PAGE / 2, 0, 0);
    }
    if (t->kind == EXACT_KIND_KEYS && confirm_keys(t, p, n, out, flags) == 0)
        return pages;
    for (size_t i = 0; i < n; i++) {
        if (t->kind == EXACT_KIND_FP || !p[i].key)
            out[p[i].slot] = exact_table_has_fp(t, p[i].fp);
        else
            out[p[i].slot] =
                keys_match(t, exact_lower_bound(t, p[i].fp), p[i].fp, p[i].key, p[i].len, NULL);
    }
    return pages;
}
