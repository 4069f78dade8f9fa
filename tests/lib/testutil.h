/* testutil: helpers shared by the Check unit tests: a private temporary
 * directory per test case (under $TMPDIR, never a fixed path), whole-file read
 * and write, and fast generation of numbered keys. Test code only; header-only
 * so each check_<module> program stays one translation unit. */
#ifndef BLOOMGATE_TESTUTIL_H
#define BLOOMGATE_TESTUTIL_H

/* Include "config.h" first (it turns on the GNU extensions nftw needs). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory of the running test case. Made by an unchecked fixture (in the
 * parent process, before the tests fork) and removed by its teardown, which
 * Check runs even when a test in the case failed or crashed. */
__attribute__((unused)) static char tu_dir[4096];

static inline void tu_dir_setup(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(tu_dir, sizeof(tu_dir), "%s/bloomgate-check-XXXXXX", base);
    if (!mkdtemp(tu_dir)) {
        fprintf(stderr, "mkdtemp %s: %s\n", tu_dir, strerror(errno));
        abort();
    }
}

static inline int tu_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void tu_dir_teardown(void)
{
    if (tu_dir[0])
        nftw(tu_dir, tu_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    tu_dir[0] = '\0';
}

/* "<tu_dir>/<name>" into out. */
static inline const char *tu_path(char *out, size_t len, const char *name)
{
    int n = snprintf(out, len, "%s/%s", tu_dir, name);
    ck_assert_msg(n > 0 && (size_t)n < len, "path too long");
    return out;
}

static inline unsigned char *tu_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "open %s: %s", path, strerror(errno));
    ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
    long n = ftell(fp);
    ck_assert_int_ge(n, 0);
    rewind(fp);
    unsigned char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

static inline void tu_write_file(const char *path, const void *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_msg(fp != NULL, "create %s: %s", path, strerror(errno));
    if (len)
        ck_assert_uint_eq(fwrite(buf, 1, len, fp), len);
    ck_assert_int_eq(fclose(fp), 0);
}

/* prefix followed by i in decimal, NUL-terminated; returns the length. Much
 * faster than snprintf, which matters when a test makes ten million keys. */
static inline size_t tu_key(char *out, const char *prefix, uint64_t i)
{
    size_t n = strlen(prefix);
    memcpy(out, prefix, n);
    char tmp[24];
    size_t d = 0;
    do {
        tmp[d++] = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    while (d)
        out[n++] = tmp[--d];
    out[n] = '\0';
    return n;
}

/* Deterministic generator for randomized tests (splitmix64). */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Run every suite of the runner; the exit status is what automake reads. */
static inline int tu_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
