/* The tests' clock_now_ms, see test_clock.h. */
#include "config.h"

#include "lib/test_clock.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int64_t (*test_clock_source)(void);

static const char *test_file; /* BLOOMGATE_TEST_CLOCK_FILE, read once */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    test_file = getenv("BLOOMGATE_TEST_CLOCK_FILE");
}

/* The time from a file holding a decimal count of milliseconds, rewritten
 * (by rename) by the test to move time: an open and a read per call. A file
 * that cannot be read gives the real time. */
static int64_t file_time(int64_t fallback)
{
    int fd = open(test_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fallback;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return fallback;
    buf[n] = '\0';
    char *end;
    long long v = strtoll(buf, &end, 10);
    return end == buf ? fallback : (int64_t)v;
}

/* Any thread: test_clock_source if set, else the file if named, else the
 * clock src/base/clock.c reads. */
int64_t clock_now_ms(void)
{
    if (test_clock_source)
        return test_clock_source();
    struct timespec ts;
#ifdef CLOCK_REALTIME_COARSE
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
#else
    clock_gettime(CLOCK_REALTIME, &ts);
#endif
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    pthread_once(&once, read_env);
    return test_file ? file_time(now) : now;
}
