/* util: small helpers shared by the tool and the daemon: durable file
 * replacement, number parsing, clocks. Any thread. */
#ifndef BLOOMGATE_UTIL_H
#define BLOOMGATE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The value of hex digit c (either case), or -1: what every parser of
 * %XX escapes, \xHH quoting and hex nibbles shares. Any thread. */
static inline int util_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* fmt into the caller's err buffer (when there is one), and -1, so that a
 * parser or loader can `return util_fail(err, errlen, ...)`. Any thread. */
__attribute__((format(printf, 3, 4))) static inline int util_fail(char *err, size_t errlen,
                                                                  const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Open a temporary file beside `path` (same directory, so rename is atomic).
 * Returns the fd and writes the temporary name into tmp. */
int util_tmpfile_beside(const char *path, char *tmp, size_t tmplen, char *err, size_t errlen);

/* fsync the file, rename tmp over path, fsync the directory: after this a
 * reader sees either the old file or the whole new one, even after a crash. */
int util_commit_file(int fd, const char *tmp, const char *path, char *err, size_t errlen);

/* fsync the directory holding path, so a new or renamed entry is durable. */
int util_fsync_dir_of(const char *path, char *err, size_t errlen);

/* Write all of buf, retrying on short writes and EINTR. */
int util_write_all(int fd, const void *buf, size_t len);
/* pread exactly len bytes; returns 0, or -1 with errno (EIO-like 0 for EOF). */
int util_pread_all(int fd, void *buf, size_t len, off_t off);
/* errno's text for a message, from any thread: strerror_r into a buffer of
 * the calling thread's own, valid until that thread's next call (so one call
 * per message). 0, what util_pread_all leaves when the file ended before the
 * bytes it wanted, reads "the file ended early". */
const char *util_errno_text(int e);

/* Strict unsigned / double parsing: the whole string, no sign, no overflow.
 * util_parse_count also takes k/M/G decimal suffixes (1e3, 1e6, 1e9) and
 * plain exponent forms like 1e10. */
int util_parse_u64(const char *s, uint64_t *out);
int util_parse_count(const char *s, uint64_t *out);
int util_parse_double(const char *s, double *out);

double util_now(void);           /* monotonic seconds */
int64_t util_wall_seconds(void); /* unix time */

/* Compare a client's token with the configured one (NUL-terminated) in time
 * that depends only on the configured token's length, so response timing
 * leaks nothing of it. given may hold any bytes. */
bool util_token_equal(const char *given, size_t glen, const char *want);

/* Whether a peer address is 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104: the
 * clients that may change filters when no admin_token is set. */
struct sockaddr;
bool util_addr_is_loopback(const struct sockaddr *sa);
/* "1.2.3.4:5" or "[::1]:5" into buf (for logs). */
void util_addr_text(const struct sockaddr *sa, char *buf, size_t len);

/* 8 random bytes from the kernel (getrandom): retried on EINTR only; any
 * other failure (no getrandom in this kernel, a seccomp filter) is -1 with
 * "getrandom: reason" in err, never a loop. */
int util_random_u64(uint64_t *out, char *err, size_t errlen);

/* Human-readable byte count ("25.6 GiB") into buf. */
const char *util_human_bytes(uint64_t bytes, char *buf, size_t len);



/* Run fn(ctx, i) for i in [0, n) on up to `threads` threads (the caller's
 * included); tasks are handed out one at a time, so uneven tasks balance.
 * Returns 0, or -1 if no thread could be started (then it ran them all itself). */
int util_parallel_for(unsigned threads, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

/* The number of CPUs this process may run on (at least 1). */
unsigned util_ncpus(void);

#endif
