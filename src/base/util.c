#include "config.h"

#include "base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int util_tmpfile_beside(const char *path, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    int n = snprintf(tmp, tmplen, "%s.tmp.XXXXXX", path);
    if (n < 0 || (size_t)n >= tmplen) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a temporary file beside %s: %s", path,
                 strerror(errno));
        return -1;
    }
    (void)fchmod(fd, 0644);
    return fd;
}

int util_commit_file(int fd, const char *tmp, const char *path, char *err, size_t errlen)
{
    if (fsync(fd) != 0) {
        snprintf(err, errlen, "fsync %s: %s", tmp, strerror(errno));
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        snprintf(err, errlen, "close %s: %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename %s to %s: %s", tmp, path, strerror(errno));
        goto fail;
    }
    /* The rename is durable only once the directory entry is on disk. */
    if (util_fsync_dir_of(path, err, errlen) != 0)
        return -1;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}

int util_fsync_dir_of(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    int len = snprintf(dir, sizeof(dir), "%s", path);
    if (len < 0 || (size_t)len >= sizeof(dir)) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        snprintf(err, errlen, "%s: cannot open its directory %s: %s", path, dir, strerror(errno));
        return -1;
    }
    int rc = fsync(dfd), e = errno;
    close(dfd);
    if (rc != 0 && e != EINVAL) { /* EINVAL: this file system cannot sync directories */
        snprintf(err, errlen, "%s: fsync of its directory %s failed: %s", path, dir, strerror(e));
        return -1;
    }
    return 0;
}

int util_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int util_pread_all(int fd, void *buf, size_t len, off_t off)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = 0; /* end of file before len bytes */
            return -1;
        }
        p += n;
        off += n;
        len -= (size_t)n;
    }
    return 0;
}

const char *util_errno_text(int e)
{
    static _Thread_local char buf[128];
    if (e == 0)
        return "the file ended early";
    /* The GNU strerror_r (we build with _GNU_SOURCE) returns the message, which
     * may or may not be in buf; unlike strerror it is safe from any thread. */
    return strerror_r(e, buf, sizeof(buf));
}

int util_parse_u64(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int util_parse_count(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    if (util_parse_u64(s, out) == 0)
        return 0;
    /* 10M, 2.5G, 1e10: parse as a double, then require a whole number. */
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s)
        return -1;
    double mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1e3, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1e6, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1e9, end++;
    if (*end)
        return -1;
    v *= mul;
    if (!(v >= 0) || v >= 18446744073709551615.0 || v != floor(v))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int util_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int64_t util_wall_seconds(void) { return (int64_t)time(NULL); }

const char *util_human_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

struct par_ctx {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    size_t n;
    _Atomic size_t next;
};

static void *par_worker(void *arg)
{
    struct par_ctx *p = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            break;
        p->fn(p->ctx, i);
    }
    return NULL;
}

int util_parallel_for(unsigned threads, size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
    struct par_ctx p = {.fn = fn, .ctx = ctx, .n = n};
    atomic_init(&p.next, 0);
    if (threads > n)
        threads = (unsigned)n;
    if (threads < 1)
        threads = 1;
    pthread_t *tids = calloc(threads, sizeof(*tids));
    unsigned started = 0;
    for (unsigned t = 1; tids && t < threads; t++) {
        if (pthread_create(&tids[started], NULL, par_worker, &p) != 0)
            break;
        started++;
    }
    par_worker(&p);
    for (unsigned t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    free(tids);
    return 0;
}

unsigned util_ncpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int c = CPU_COUNT(&set);
        if (c > 0)
            return (unsigned)c;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

bool util_token_equal(const char *given, size_t glen, const char *want)
{
    size_t wlen = strlen(want);
    unsigned diff = (unsigned)(glen != wlen);
    for (size_t i = 0; i < wlen; i++)
        diff |= (unsigned char)(glen ? given[i % glen] : 0) ^ (unsigned char)want[i];
    return diff == 0;
}

bool util_addr_is_loopback(const struct sockaddr *sa)
{
    if (!sa)
        return false;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
            return true;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
            return in6->sin6_addr.s6_addr[12] == 127;
    }
    return false;
}

/* "host:port" or "[v6]:port" for logs (any thread). */
void util_addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        port = ntohs(in->sin_port);
        snprintf(buf, len, "%s:%d", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        port = ntohs(in6->sin6_port);
        snprintf(buf, len, "[%s]:%d", host, port);
    } else {
        snprintf(buf, len, "?");
    }
}

int util_random_u64(uint64_t *out, char *err, size_t errlen)
{
    unsigned char *p = (unsigned char *)out;
    size_t got = 0;
    while (got < sizeof(*out)) {
        ssize_t n = getrandom(p + got, sizeof(*out) - got, 0);
        if (n > 0) {
            got += (size_t)n;
        } else if (n < 0 && errno != EINTR) {
            snprintf(err, errlen, "getrandom: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}
