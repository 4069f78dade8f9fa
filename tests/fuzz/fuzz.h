/* fuzz.h: what every libFuzzer harness in tests/fuzz/ shares: an invariant
 * check that crashes (so libFuzzer keeps the input and reports it), a cursor
 * that takes option bytes from the front of an input, and the input written to
 * an anonymous in-memory file for the loaders that take a path. Header-only, so
 * a harness is one .c file (see tests/fuzz/fuzz.mk). */
#ifndef BLOOMGATE_FUZZ_H
#define BLOOMGATE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* An invariant the code under test promises. A failure is a finding, like a
 * crash: abort so libFuzzer saves the input as a crash artifact. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Option bytes taken from the front of an input; past its end they read as 0,
 * so every input is valid and a short one simply gets the defaults. */
struct fuzz_in {
    const uint8_t *p;
    size_t len;
};

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
    if (in->len == 0)
        return 0;
    in->len--;
    return *in->p++;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
    uint16_t lo = fuzz_u8(in);
    return (uint16_t)(lo | (uint16_t)fuzz_u8(in) << 8);
}

/* Whether [p, p + n) lies inside [base, base + len): a token the parser handed
 * back must point into the caller's buffer. */
static inline int fuzz_inside(const void *p, size_t n, const void *base, size_t len)
{
    const char *c = p, *b = base;
    return c >= b && c <= b + len && n <= (size_t)(b + len - c);
}

/* A heap copy of exactly n bytes (at least one allocated, never read), so
 * ASan flags a read one byte past the input. */
static inline char *fuzz_dup(const uint8_t *data, size_t n)
{
    char *p = malloc(n ? n : 1);
    if (!p)
        abort();
    if (n)
        memcpy(p, data, n);
    return p;
}

/* Write data to a new memfd and name it /proc/self/fd/N in path (which holds
 * 64 bytes), for the loaders that open a path. A memfd is a regular file that
 * never touches the disk. Returns the fd (close it when done); aborts if the
 * kernel refuses, since then nothing is being tested. */
static inline int fuzz_memfd(const char *name, const void *data, size_t n, char *path)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) {
            perror("write memfd");
            abort();
        }
        p += w;
        n -= (size_t)w;
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
