#include "config.h"

#include "base/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static _Atomic int current_level = LOG_INFO;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(enum log_level level) { atomic_store(&current_level, (int)level); }
enum log_level log_get_level(void) { return (enum log_level)atomic_load(&current_level); }

int log_level_parse(const char *s, enum log_level *out)
{
    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, level_names[i]) == 0) {
            *out = (enum log_level)i;
            return 0;
        }
    if (strcasecmp(s, "warning") == 0) {
        *out = LOG_WARN;
        return 0;
    }
    return -1;
}

/* Format the whole line first and write it with one call, so lines from
 * different threads do not interleave. Timestamps are UTC with milliseconds. */
void log_msg(enum log_level level, const char *fmt, ...)
{
    if ((int)level < atomic_load_explicit(&current_level, memory_order_relaxed))
        return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    fwrite(line, 1, len, stderr);
}
