/* log: leveled, timestamped lines on stderr (journald collects them). Any
 * thread; one fprintf per line so lines never interleave. Never call from a
 * signal handler. */
#ifndef BLOOMGATE_LOG_H
#define BLOOMGATE_LOG_H

#include <stdatomic.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
int log_level_parse(const char *s, enum log_level *out);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Rate-limited lines, for a message a client can cause once per request (a
 * failed AUTH, an ADD refused on a full disk): 200,000 failed AUTHs used to
 * write 200,000 lines. Each call site has its own static struct log_limit:
 * at most LOG_LIMIT_BURST of its lines per LOG_LIMIT_WINDOW_S seconds are
 * written; the rest are counted, and once the window is over one line says
 * how many were suppressed ("... 199990 more like it suppressed in the last
 * 10 s: AUTH failed"), written by the site's next call or by log_limit_flush. */
#define LOG_LIMIT_BURST 5
#define LOG_LIMIT_WINDOW_S 10

struct log_limit {
    const char *what; /* names the message in the summary line; NULL: its format */
    _Atomic(const char *) fmt; /* the format of the site's lines (a literal) */
    _Atomic int lock; /* a spin lock: held only to count or to swap a window */
    double window_start;
    unsigned written;            /* lines written in the window */
    unsigned long long dropped;  /* lines suppressed in the window */
    enum log_level level;        /* of the lines suppressed, for the summary */
    _Atomic(struct log_limit *) next; /* registered with log_limit_flush on first use */
    _Atomic int registered;
};
#define LOG_LIMIT_INIT(what_) {.what = (what_)}

/* Any thread. */
void log_limited(struct log_limit *l, enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Write the summary of every call site whose window is over (all: every call
 * site that suppressed anything, window over or not: at exit). Call it about
 * once a second from a thread that may write to the log. */
void log_limit_flush(int all);

#define log_warn_limited(...)                                                                      \
    do {                                                                                           \
        static struct log_limit lim_ = LOG_LIMIT_INIT(NULL);                                       \
        log_limited(&lim_, LOG_WARN, __VA_ARGS__);                                                 \
    } while (0)
#define log_error_limited(...)                                                                     \
    do {                                                                                           \
        static struct log_limit lim_ = LOG_LIMIT_INIT(NULL);                                       \
        log_limited(&lim_, LOG_ERROR, __VA_ARGS__);                                                \
    } while (0)

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
