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
static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

void log_msg(enum log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vmsg(level, fmt, ap);
    va_end(ap);
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
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
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    fwrite(line, 1, len, stderr);
}

/* ---- rate-limited lines ---- */

static _Atomic(struct log_limit *) limits; /* every call site used so far */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void limit_lock(struct log_limit *l)
{
    while (atomic_exchange_explicit(&l->lock, 1, memory_order_acquire))
        ;
}

static void limit_unlock(struct log_limit *l)
{
    atomic_store_explicit(&l->lock, 0, memory_order_release);
}

/* With l locked: if its window is over (or all), take what it suppressed and
 * start a new window at now. Returns the count taken (0: nothing to say). */
static unsigned long long limit_roll(struct log_limit *l, double now, int all,
                                     enum log_level *level, double *span)
{
    if (!all && now - l->window_start < LOG_LIMIT_WINDOW_S)
        return 0;
    unsigned long long d = l->dropped;
    *level = l->level;
    *span = now - l->window_start;
    l->window_start = now;
    l->written = 0;
    l->dropped = 0;
    return d;
}

static void limit_summary(struct log_limit *l, enum log_level level, unsigned long long dropped,
                          double span)
{
    const char *what = l->what ? l->what : atomic_load_explicit(&l->fmt, memory_order_relaxed);
    log_msg(level, "%llu more like it suppressed in the last %.0f s: %s", dropped, span,
            what ? what : "(a rate-limited message)");
}

/* Any thread. The count is taken under a spin lock held for a few
 * instructions; the line is formatted and written outside it. A suppressed
 * line costs the lock and a clock read, not a write. */
void log_limited(struct log_limit *l, enum log_level level, const char *fmt, ...)
{
    if ((int)level < atomic_load_explicit(&current_level, memory_order_relaxed))
        return;
    atomic_store_explicit(&l->fmt, fmt, memory_order_relaxed);
    if (!atomic_exchange_explicit(&l->registered, 1, memory_order_acq_rel)) {
        struct log_limit *head = atomic_load(&limits);
        do
            atomic_store(&l->next, head);
        while (!atomic_compare_exchange_weak(&limits, &head, l));
    }
    double now = mono_now(), span = 0;
    enum log_level dlevel = level;
    limit_lock(l);
    if (l->window_start == 0)
        l->window_start = now;
    unsigned long long dropped = limit_roll(l, now, 0, &dlevel, &span);
    int write = l->written < LOG_LIMIT_BURST;
    if (write) {
        l->written++;
    } else {
        l->dropped++;
        l->level = level;
    }
    limit_unlock(l);
    if (dropped)
        limit_summary(l, dlevel, dropped, span);
    if (write) {
        va_list ap;
        va_start(ap, fmt);
        log_vmsg(level, fmt, ap);
        va_end(ap);
    }
}

void log_limit_flush(int all)
{
    double now = mono_now();
    for (struct log_limit *l = atomic_load(&limits); l; l = atomic_load(&l->next)) {
        enum log_level level = LOG_WARN;
        double span = 0;
        limit_lock(l);
        unsigned long long dropped = l->dropped ? limit_roll(l, now, all, &level, &span) : 0;
        limit_unlock(l);
        if (dropped)
            limit_summary(l, level, dropped, span);
    }
}
