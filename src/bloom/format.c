/* Filter files. The header is encoded field by field in little-endian order;
 * shard payloads are the in-memory words, which this build requires to be
 * little-endian as well (checked at compile time). */
#include "config.h"

#include "bloom/format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloom/counting.h"
#include "bloom/hash.h"
#include "bloom/le.h"
#include "base/util.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bloomgate filter payloads are little-endian words; big-endian hosts need a swap"
#endif

/* Fixed header offsets; see docs/file-format.md. */
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
    OFF_KEYS = 96,      /* version 2: the key kind; version 1: reserved, zero */
    OFF_RESERVED = 100, /* 20 bytes of zeros (version 3: the first 8 are the fuse geometry) */
    OFF_FUSE_SEG_LOG = 100, /* version 3, fuse: log2 of the segment length */
    OFF_FUSE_SEGMENTS = 104, /* version 3, fuse: segments per shard */
    OFF_RESERVED_V3 = 108,
    OFF_SECTION_BYTES = 108, /* version 4: bytes of the section after the last shard */
    OFF_SECTION_KIND = 116,  /* version 4: what the section holds */
    OFF_HEADER_SUM = 120,
};

#define CHUNK (8u << 20) /* bytes read per pread while verifying */

static const char *const keys_names[FILTER_KEYS_COUNT] = {"exact", "host", "url", "adblock",
                                                                   "words"};

uint32_t format_section_of(enum filter_keys keys)
{
    return keys == FILTER_KEYS_ADBLOCK ? FORMAT_SECTION_ADBLOCK
           : keys == FILTER_KEYS_WORDS ? FORMAT_SECTION_WORDS
                                       : 0;
}

int format_section_fits(enum filter_keys keys, uint32_t kind)
{
    uint32_t need = format_section_of(keys);
    return need ? kind == need : kind == 0 || kind == FORMAT_SECTION_EXACT;
}

/* A section's own head: its body's length and XXH3-64 (seed 0). */
#define SECTION_HEAD 16u
/* Bodies above this are refused before any allocation (a compiled list of
 * ten million rules is well under it). */
#define SECTION_MAX (1ull << 34)

const char *format_keys_name(enum filter_keys keys)
{
    return (unsigned)keys < FILTER_KEYS_COUNT ? keys_names[keys] : "?";
}

int format_keys_parse(const char *s, enum filter_keys *out)
{
    for (unsigned i = 0; i < FILTER_KEYS_COUNT; i++)
        if (strcmp(s, keys_names[i]) == 0) {
            *out = (enum filter_keys)i;
            return 0;
        }
    return -1;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* XXH3-64 over the header with its own checksum field counted as zero. */
static uint64_t header_checksum(const unsigned char *hdr, size_t len)
{
    XXH3_state_t st;
    static const unsigned char zero[8];
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, hdr, OFF_HEADER_SUM);
    XXH3_64bits_update(&st, zero, 8);
    XXH3_64bits_update(&st, hdr + OFF_HEADER_SUM + 8, len - OFF_HEADER_SUM - 8);
    return XXH3_64bits_digest(&st);
}

/* parse_header's first checks, on the fixed part only: what the file is
 * (size and magic), that the fixed header is whole, which version, and that
 * the shard count and header size agree and fit in the file. Sets
 * info->version, *shards and *header_bytes. Any thread (load or tool). */
static int header_check_fixed(const char *path, int fd, uint64_t file_size,
                              struct format_info *info, uint32_t *shards, uint32_t *header_bytes,
                              char *err, size_t errlen)
{
    unsigned char fixed[FORMAT_FIXED_HEADER];
    if (file_size < 8 || util_pread_all(fd, fixed, 8, 0) != 0) {
        snprintf(err, errlen, "%s: not a bloomgate filter file (%llu bytes, too short for a header)",
                 path, (unsigned long long)file_size);
        return -1;
    }
    if (memcmp(fixed, FORMAT_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s: not a bloomgate filter file (wrong magic)", path);
        return -1;
    }
    if (file_size < FORMAT_FIXED_HEADER ||
        util_pread_all(fd, fixed, FORMAT_FIXED_HEADER, 0) != 0) {
        snprintf(err, errlen, "%s: truncated: %llu bytes, shorter than the %u-byte header", path,
                 (unsigned long long)file_size, FORMAT_FIXED_HEADER);
        return -1;
    }
    info->version = le_get32(fixed + OFF_VERSION);
    if (info->version > FORMAT_VERSION) {
        snprintf(err, errlen,
                 "%s: format version %u is newer than this bloomgate reads (%u); upgrade bloomgate",
                 path, info->version, FORMAT_VERSION);
        return -1;
    }
    if (info->version == 0) {
        snprintf(err, errlen, "%s: corrupt header: format version 0", path);
        return -1;
    }
    *shards = le_get32(fixed + OFF_SHARDS);
    *header_bytes = le_get32(fixed + OFF_HEADER_BYTES);
    if (*shards < 1 || *shards > FILTER_MAX_SHARDS || (*shards & (*shards - 1)) != 0 ||
        *header_bytes != FORMAT_FIXED_HEADER + (uint64_t)*shards * FORMAT_SHARD_ENTRY) {
        snprintf(err, errlen, "%s: corrupt header: shard count %u with header size %u", path,
                 *shards, *header_bytes);
        return -1;
    }
    if (*header_bytes > file_size) {
        snprintf(err, errlen, "%s: truncated: %llu bytes, shorter than its %u-byte header", path,
                 (unsigned long long)file_size, *header_bytes);
        return -1;
    }
    return 0;
}

/* The whole header (fixed part and shard table) read into a new buffer, or
 * NULL with err set when it cannot be read or its checksum does not match:
 * whether its bytes are intact comes before what they say. */
static unsigned char *header_read_whole(const char *path, int fd, uint32_t header_bytes, char *err,
                                        size_t errlen)
{
    unsigned char *hdr = malloc(header_bytes);
    if (!hdr) {
        snprintf(err, errlen, "%s: out of memory reading the header", path);
        return NULL;
    }
    if (util_pread_all(fd, hdr, header_bytes, 0) != 0) {
        snprintf(err, errlen, "%s: cannot read the header: %s", path,
                 errno ? strerror(errno) : "unexpected end of file");
        free(hdr);
        return NULL;
    }
    if (header_checksum(hdr, header_bytes) != le_get64(hdr + OFF_HEADER_SUM)) {
        snprintf(err, errlen, "%s: corrupt header: checksum mismatch", path);
        free(hdr);
        return NULL;
    }
    return hdr;
}

/* Whether an intact header's values make sense: the plan, the key kind,
 * reserved bytes zero, the payload layout, and the file size it implies.
 * Fills info's plan and fields. */
static int header_check_values(const char *path, const unsigned char *hdr, uint32_t header_bytes,
                               uint32_t shards, uint64_t file_size, struct format_info *info,
                               char *err, size_t errlen)
{
    struct filter_plan *p = &info->plan;
    p->layout = (enum filter_layout)le_get32(hdr + OFF_LAYOUT);
    p->k = le_get32(hdr + OFF_K);
    p->capacity = le_get64(hdr + OFF_CAPACITY);
    p->fpr_target = le_getf64(hdr + OFF_FPR);
    p->shard_count = shards;
    p->bits_per_shard = le_get64(hdr + OFF_BITS_PER_SHARD);
    info->items = le_get64(hdr + OFF_ITEMS);
    info->seed = le_get64(hdr + OFF_SEED);
    info->build_time = (int64_t)le_get64(hdr + OFF_BUILD_TIME);
    info->payload_offset = le_get64(hdr + OFF_PAYLOAD);
    info->shard_stride = le_get64(hdr + OFF_STRIDE);
    bool v3 = info->version >= FORMAT_VERSION_FUSE;
    if (v3) {
        p->fuse_seg_log = le_get32(hdr + OFF_FUSE_SEG_LOG);
        p->fuse_segments = le_get32(hdr + OFF_FUSE_SEGMENTS);
    }
    if (p->layout == FILTER_FUSE && !v3) {
        snprintf(err, errlen, "%s: corrupt header: the fuse layout in a version-%u file", path,
                 info->version);
        return -1;
    }
    char why[200];
    if (filter_plan_validate(p, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s: corrupt header: %s", path, why);
        return -1;
    }
    /* In version 1 the key kind's bytes are reserved: zero, which is exact. */
    uint32_t keys = le_get32(hdr + OFF_KEYS);
    if (info->version >= FORMAT_VERSION_KEYS && keys >= FILTER_KEYS_COUNT) {
        snprintf(err, errlen,
                 "%s: unknown key kind %u (this bloomgate knows 0 exact, 1 host, 2 url, 3 "
                 "adblock, 4 words); a newer bloomgate may have written it",
                 path, keys);
        return -1;
    }
    info->keys = (enum filter_keys)keys;
    bool v4 = info->version >= FORMAT_VERSION_SECTION;
    if (v4) {
        info->section_bytes = le_get64(hdr + OFF_SECTION_BYTES);
        info->section_kind = le_get32(hdr + OFF_SECTION_KIND);
        /* The adblock kind is a compiled engine in the section, the words
         * kind a compiled list; the other kinds may name an exact table. */
        if (!format_section_fits(info->keys, info->section_kind) ||
            info->section_bytes < SECTION_HEAD || info->section_bytes > SECTION_HEAD + SECTION_MAX) {
            snprintf(err, errlen,
                     "%s: corrupt header: key kind %s with section kind %u of %llu bytes", path,
                     format_keys_name(info->keys), info->section_kind,
                     (unsigned long long)info->section_bytes);
            return -1;
        }
    } else if (format_section_of(info->keys)) {
        snprintf(err, errlen, "%s: corrupt header: the %s kind in a version-%u file", path,
                 format_keys_name(info->keys), info->version);
        return -1;
    }
    int nonzero = le_get32(hdr + OFF_FLAGS) != 0;
    if (info->version < FORMAT_VERSION_KEYS)
        nonzero |= keys != 0;
    for (int i = v4 ? OFF_HEADER_SUM : v3 ? OFF_RESERVED_V3 : OFF_RESERVED; i < OFF_HEADER_SUM; i++)
        nonzero |= hdr[i] != 0;
    if (nonzero) {
        snprintf(err, errlen, "%s: corrupt header: reserved fields are not zero", path);
        return -1;
    }
    uint64_t shard_bytes = p->bits_per_shard / 8;
    if (info->payload_offset != align_up(header_bytes, FORMAT_ALIGN) ||
        info->shard_stride != align_up(shard_bytes, FORMAT_ALIGN)) {
        snprintf(err, errlen, "%s: corrupt header: payload offset %llu / shard stride %llu", path,
                 (unsigned long long)info->payload_offset,
                 (unsigned long long)info->shard_stride);
        return -1;
    }
    /* plan_validate bounded bits * shards to 1 TiB, so this cannot overflow. */
    info->section_offset = info->payload_offset + info->shard_stride * shards;
    uint64_t expect = info->section_offset + info->section_bytes;
    if (file_size != expect) {
        snprintf(err, errlen, "%s: %s: %llu bytes, the header says %llu", path,
                 file_size < expect ? "truncated"
                 : v4               ? "trailing bytes after the section"
                                    : "trailing bytes after the last shard",
                 (unsigned long long)file_size, (unsigned long long)expect);
        return -1;
    }
    return 0;
}

/* The shard table, last: each entry's counts within its shard's bits, and
 * the items summing to the header's. Fills info->shards (freed with info on
 * a failure after it is allocated). */
static int header_check_shards(const char *path, const unsigned char *hdr, uint32_t shards,
                               struct format_info *info, char *err, size_t errlen)
{
    const struct filter_plan *p = &info->plan;
    info->shards = calloc(shards, sizeof(*info->shards));
    if (!info->shards) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    uint64_t items = 0;
    for (uint32_t i = 0; i < shards; i++) {
        const unsigned char *e = hdr + FORMAT_FIXED_HEADER + (size_t)i * FORMAT_SHARD_ENTRY;
        struct format_shard *s = &info->shards[i];
        s->items = le_get64(e);
        s->bits_set = le_get64(e + 8);
        s->checksum = le_get64(e + 16);
        s->fuse_seed = p->layout == FILTER_FUSE ? le_get64(e + 24) : 0;
        if (s->bits_set > p->bits_per_shard || (p->layout != FILTER_FUSE && le_get64(e + 24) != 0) ||
            s->items > p->bits_per_shard) {
            snprintf(err, errlen, "%s: corrupt header: shard %u counts out of range", path, i);
            format_info_free(info);
            return -1;
        }
        items += s->items;
        info->bits_set += s->bits_set;
    }
    if (items != info->items) {
        snprintf(err, errlen, "%s: corrupt header: shard items sum to %llu, header says %llu",
                 path, (unsigned long long)items, (unsigned long long)info->items);
        format_info_free(info);
        return -1;
    }
    return 0;
}

/* Parse a header already read into memory. Checks come in the order that gives
 * the most useful message: what the file is, which version, whether it is
 * whole, whether its bytes are intact, then whether the values make sense
 * (the header's own, then the shard table's): one step function each. */
static int parse_header(const char *path, int fd, uint64_t file_size, struct format_info *info,
                        char *err, size_t errlen)
{
    uint32_t shards, header_bytes;
    memset(info, 0, sizeof(*info));
    info->file_size = file_size;
    if (header_check_fixed(path, fd, file_size, info, &shards, &header_bytes, err, errlen) != 0)
        return -1;
    unsigned char *hdr = header_read_whole(path, fd, header_bytes, err, errlen);
    if (!hdr)
        return -1;
    int rc = -1;
    info->checksum = le_get64(hdr + OFF_HEADER_SUM);
    if (header_check_values(path, hdr, header_bytes, shards, file_size, info, err, errlen) == 0 &&
        header_check_shards(path, hdr, shards, info, err, errlen) == 0)
        rc = 0;
    free(hdr);
    return rc;
}

static int open_filter_file(const char *path, uint64_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

int format_read_info(const char *path, struct format_info *info, char *err, size_t errlen)
{
    uint64_t size;
    int fd = open_filter_file(path, &size, err, errlen);
    if (fd < 0)
        return -1;
    int rc = parse_header(path, fd, size, info, err, errlen);
    close(fd);
    return rc;
}

void format_info_free(struct format_info *info)
{
    free(info->shards);
    info->shards = NULL;
}

/* ---- loading and verifying: one task per shard ---- */

struct shard_job {
    const char *path;
    int fd;
    const struct format_info *info;
    struct filter *f;        /* load: read into the shard; verify: NULL */
    _Atomic int failed;      /* shards that failed */
    _Atomic int first_bad;   /* lowest failing shard, for the message */
    char reason[256];        /* the first failure's reason (under first_bad) */
    _Atomic int reason_set;
};

static void job_fail(struct shard_job *j, size_t shard, const char *what, const char *detail)
{
    atomic_fetch_add(&j->failed, 1);
    int expected = 0;
    if (atomic_compare_exchange_strong(&j->reason_set, &expected, 1)) {
        snprintf(j->reason, sizeof(j->reason), "shard %u: %s%s", (unsigned)shard, what, detail);
        atomic_store(&j->first_bad, (int)shard);
    }
}

/* Worker thread of format_load / format_verify: read shard i (into the filter,
 * or through a bounded buffer), hashing and counting bits as the bytes arrive
 * so each byte is touched once while it is still in cache. */
static void shard_task(void *arg, size_t i)
{
    struct shard_job *j = arg;
    const struct format_info *info = j->info;
    uint64_t bytes = info->plan.bits_per_shard / 8;
    off_t off = (off_t)(info->payload_offset + info->shard_stride * i);
    unsigned char *buf = NULL;
    if (!j->f && !(buf = malloc(CHUNK))) {
        job_fail(j, i, "out of memory", "");
        return;
    }
    XXH3_state_t st;
    /* A fuse shard's checksum is seeded with its construction seed, so a
     * seed changed behind a recomputed header checksum is caught too. */
    memset(&st, 0, sizeof(st)); /* the inline reset_withSeed looks unset to gcc -O2 */
    XXH3_64bits_reset_withSeed(&st, info->shards[i].fuse_seed);
    uint64_t bits = 0;
    for (uint64_t done = 0; done < bytes;) {
        size_t n = bytes - done < CHUNK ? (size_t)(bytes - done) : CHUNK;
        unsigned char *dst = j->f ? (unsigned char *)j->f->shards[i].words + done : buf;
        if (util_pread_all(j->fd, dst, n, off + (off_t)done) != 0) {
            job_fail(j, i, "read failed: ", errno ? strerror(errno) : "end of file");
            free(buf);
            return;
        }
        XXH3_64bits_update(&st, dst, n);
        const uint64_t *w = (const uint64_t *)(const void *)dst;
        if (info->plan.layout == FILTER_COUNTING) /* non-zero counters */
            bits += counting_nonzero(w, n / 8);
        else
            for (size_t x = 0; x < n / 8; x++)
                bits += (uint64_t)__builtin_popcountll(w[x]);
        done += n;
    }
    free(buf);
    if (XXH3_64bits_digest(&st) != info->shards[i].checksum) {
        job_fail(j, i, "checksum mismatch (corrupt payload)", "");
        return;
    }
    if (bits != info->shards[i].bits_set) {
        job_fail(j, i, "set-bit count does not match the header", "");
        return;
    }
    if (j->f) {
        atomic_store(&j->f->shards[i].items, info->shards[i].items);
        atomic_store(&j->f->shards[i].bits_set, bits);
    }
}

/* Shared by load and verify: check the header, then every shard in parallel.
 * With `out`, the shards are read into a new filter handed back only if every
 * checksum matched; without, they stream through a bounded buffer. Returns the
 * number of bad shards, or -1 if the file could not be checked (or, for a
 * load, if anything at all was wrong). */
static int run_shards(const char *path, unsigned threads, struct filter **out, char *err,
                      size_t errlen)
{
    uint64_t size;
    int fd = open_filter_file(path, &size, err, errlen);
    if (fd < 0)
        return -1;
    struct format_info info;
    struct shard_job *j = NULL;
    int rc = -1;
    if (parse_header(path, fd, size, &info, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    if (!(j = calloc(1, sizeof(*j)))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto done;
    }
    j->path = path;
    j->fd = fd;
    j->info = &info;
    if (out) {
        char why[256];
        j->f = filter_create(&info.plan, info.seed, why, sizeof(why));
        if (!j->f) {
            snprintf(err, errlen, "%s: %s", path, why);
            goto done;
        }
        j->f->build_time = info.build_time;
        j->f->file_checksum = info.checksum;
        j->f->keys = info.keys;
        for (uint32_t i = 0; i < info.plan.shard_count; i++)
            j->f->shards[i].fuse_seed = info.shards[i].fuse_seed;
    }
    util_parallel_for(threads ? threads : util_ncpus(), info.plan.shard_count, shard_task, j);
    rc = atomic_load(&j->failed);
    if (rc)
        snprintf(err, errlen, "%s: %s%s", path, j->reason, rc > 1 ? " (and other shards)" : "");
    if (out) {
        if (rc) {
            filter_free(j->f);
            rc = -1;
        } else {
            *out = j->f;
        }
    }
done:
    close(fd);
    format_info_free(&info);
    free(j);
    return rc;
}

struct filter *format_load(const char *path, unsigned threads, char *err, size_t errlen)
{
    struct filter *f = NULL;
    if (run_shards(path, threads, &f, err, errlen) != 0)
        return NULL;
    return f;
}

/* Read the section at fd's info->section_offset whole and check its length
 * and checksum. Loader or tool thread. */
static int section_read_fd(const char *path, int fd, const struct format_info *info, void **out,
                           size_t *len, char *err, size_t errlen)
{
    unsigned char head[SECTION_HEAD];
    *out = NULL;
    *len = 0;
    if (info->section_bytes < SECTION_HEAD) {
        snprintf(err, errlen, "%s: the file holds no section", path);
        return -1;
    }
    if (util_pread_all(fd, head, SECTION_HEAD, (off_t)info->section_offset) != 0) {
        snprintf(err, errlen, "%s: cannot read the section: %s", path,
                 errno ? strerror(errno) : "unexpected end of file");
        return -1;
    }
    uint64_t n = le_get64(head), sum = le_get64(head + 8);
    if (n != info->section_bytes - SECTION_HEAD) {
        snprintf(err, errlen, "%s: corrupt section: its head says %llu bytes, the header %llu",
                 path, (unsigned long long)n,
                 (unsigned long long)(info->section_bytes - SECTION_HEAD));
        return -1;
    }
    void *buf = malloc(n ? n : 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory reading a %llu-byte section", path,
                 (unsigned long long)n);
        return -1;
    }
    if (util_pread_all(fd, buf, n, (off_t)(info->section_offset + SECTION_HEAD)) != 0) {
        snprintf(err, errlen, "%s: cannot read the section: %s", path,
                 errno ? strerror(errno) : "unexpected end of file");
        free(buf);
        return -1;
    }
    if (XXH3_64bits(buf, n) != sum) {
        snprintf(err, errlen, "%s: corrupt section: checksum mismatch", path);
        free(buf);
        return -1;
    }
    *out = buf;
    *len = n;
    return 0;
}

int format_read_section(const char *path, const struct format_info *info, void **out, size_t *len,
                        char *err, size_t errlen)
{
    uint64_t size;
    int fd = open_filter_file(path, &size, err, errlen);
    if (fd < 0)
        return -1;
    int rc = -1;
    if (size != info->file_size)
        snprintf(err, errlen, "%s: changed while it was read (%llu bytes, then %llu)", path,
                 (unsigned long long)info->file_size, (unsigned long long)size);
    else
        rc = section_read_fd(path, fd, info, out, len, err, errlen);
    close(fd);
    return rc;
}

/* Every shard, then the section if there is one: a bad section counts as
 * one more bad part. */
int format_verify(const char *path, unsigned threads, char *err, size_t errlen)
{
    int bad = run_shards(path, threads, NULL, err, errlen);
    if (bad < 0)
        return -1;
    struct format_info info;
    if (format_read_info(path, &info, err, errlen) != 0)
        return -1;
    if (info.section_bytes) {
        void *blob;
        size_t len;
        char why[512];
        if (format_read_section(path, &info, &blob, &len, why, sizeof(why)) != 0) {
            if (bad == 0)
                snprintf(err, errlen, "%s", why);
            bad++;
        } else {
            free(blob);
        }
    }
    format_info_free(&info);
    return bad;
}

struct sum_job {
    struct filter *f;
    struct format_shard *out;
};

/* Worker thread of format_write: checksum and count one shard. */
static void sum_task(void *arg, size_t i)
{
    struct sum_job *j = arg;
    const void *w = (const void *)j->f->shards[i].words;
    uint64_t seed = j->f->layout == FILTER_FUSE ? j->f->shards[i].fuse_seed : 0;
    j->out[i].checksum = XXH3_64bits_withSeed(w, j->f->bits_per_shard / 8, seed);
    j->out[i].bits_set = filter_shard_popcount(j->f, (uint32_t)i);
    j->out[i].items = atomic_load(&j->f->shards[i].items);
}

/* The filter must not change while it is written (the builder has finished;
 * the daemon never writes filter files). Counters are refreshed from the bits
 * so the file's table is exact. */
int format_write(struct filter *f, const char *path, unsigned threads, char *err, size_t errlen)
{
    return format_write_section(f, path, threads, 0, NULL, 0, err, errlen);
}

/* format_write, with a section after the last shard when kind is not 0. */
int format_write_section(struct filter *f, const char *path, unsigned threads, uint32_t kind,
                         const void *body, size_t body_len, char *err, size_t errlen)
{
    uint32_t S = f->shard_count;
    uint64_t header_bytes = FORMAT_FIXED_HEADER + (uint64_t)S * FORMAT_SHARD_ENTRY;
    uint64_t payload = align_up(header_bytes, FORMAT_ALIGN);
    uint64_t shard_bytes = f->bits_per_shard / 8;
    uint64_t stride = align_up(shard_bytes, FORMAT_ALIGN);
    struct format_shard *sh = calloc(S, sizeof(*sh));
    unsigned char *hdr = calloc(1, payload > stride ? payload : stride);
    char tmp[4096];
    int fd = -1;
    if (!sh || !hdr) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    struct sum_job job = {f, sh};
    util_parallel_for(threads ? threads : util_ncpus(), S, sum_task, &job);
    uint64_t items = 0;
    for (uint32_t i = 0; i < S; i++) {
        atomic_store(&f->shards[i].bits_set, sh[i].bits_set);
        items += sh[i].items;
    }
    if (f->build_time == 0)
        f->build_time = util_wall_seconds();
    memcpy(hdr + OFF_MAGIC, FORMAT_MAGIC, 8);
    if ((unsigned)f->keys >= FILTER_KEYS_COUNT ||
        !format_section_fits(f->keys, kind) ||
        body_len > SECTION_MAX) {
        snprintf(err, errlen, "%s: key kind %u with section kind %u of %zu bytes", path,
                 (unsigned)f->keys, kind, body_len);
        goto fail;
    }
    /* Exact filters stay version 1 so that every reader takes them; only a
     * fuse filter needs version 3. */
    bool fuse = f->layout == FILTER_FUSE;
    le_put32(hdr + OFF_VERSION, kind                           ? FORMAT_VERSION_SECTION
                                : fuse                         ? FORMAT_VERSION_FUSE
                                : f->keys == FILTER_KEYS_EXACT ? 1u
                                                               : FORMAT_VERSION_KEYS);
    if (kind) {
        le_put64(hdr + OFF_SECTION_BYTES, SECTION_HEAD + (uint64_t)body_len);
        le_put32(hdr + OFF_SECTION_KIND, kind);
    }
    if (fuse) {
        le_put32(hdr + OFF_FUSE_SEG_LOG, f->fuse_seg_log);
        le_put32(hdr + OFF_FUSE_SEGMENTS, f->fuse_segments);
    }
    le_put32(hdr + OFF_KEYS, (uint32_t)f->keys);
    le_put32(hdr + OFF_HEADER_BYTES, (uint32_t)header_bytes);
    le_put32(hdr + OFF_LAYOUT, (uint32_t)f->layout);
    le_put32(hdr + OFF_K, f->k);
    le_put64(hdr + OFF_CAPACITY, f->capacity);
    uint64_t fpr_bits;
    memcpy(&fpr_bits, &f->fpr_target, 8);
    le_put64(hdr + OFF_FPR, fpr_bits);
    le_put64(hdr + OFF_ITEMS, items);
    le_put32(hdr + OFF_SHARDS, S);
    le_put64(hdr + OFF_BITS_PER_SHARD, f->bits_per_shard);
    le_put64(hdr + OFF_SEED, f->seed);
    le_put64(hdr + OFF_BUILD_TIME, (uint64_t)f->build_time);
    le_put64(hdr + OFF_PAYLOAD, payload);
    le_put64(hdr + OFF_STRIDE, stride);
    for (uint32_t i = 0; i < S; i++) {
        unsigned char *e = hdr + FORMAT_FIXED_HEADER + (size_t)i * FORMAT_SHARD_ENTRY;
        le_put64(e, sh[i].items);
        le_put64(e + 8, sh[i].bits_set);
        le_put64(e + 16, sh[i].checksum);
        le_put64(e + 24, fuse ? f->shards[i].fuse_seed : 0);
    }
    le_put64(hdr + OFF_HEADER_SUM, header_checksum(hdr, header_bytes));

    if ((fd = util_tmpfile_beside(path, tmp, sizeof(tmp), err, errlen)) < 0)
        goto fail;
    if (util_write_all(fd, hdr, payload) != 0)
        goto write_fail;
    /* hdr past the header is zeros: reuse it as padding. */
    memset(hdr, 0, payload > stride ? payload : stride);
    for (uint32_t i = 0; i < S; i++) {
        if (util_write_all(fd, (const void *)f->shards[i].words, shard_bytes) != 0 ||
            util_write_all(fd, hdr, stride - shard_bytes) != 0)
            goto write_fail;
    }
    if (kind) {
        unsigned char head[SECTION_HEAD];
        le_put64(head, body_len);
        le_put64(head + 8, XXH3_64bits(body, body_len));
        if (util_write_all(fd, head, SECTION_HEAD) != 0 ||
            (body_len && util_write_all(fd, body, body_len) != 0))
            goto write_fail;
    }
    free(sh);
    free(hdr);
    return util_commit_file(fd, tmp, path, err, errlen);
write_fail:
    snprintf(err, errlen, "%s: write failed: %s", tmp, strerror(errno));
    close(fd);
    unlink(tmp);
fail:
    free(sh);
    free(hdr);
    return -1;
}
