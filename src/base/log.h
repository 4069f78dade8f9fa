/* log: leveled, timestamped lines on stderr (journald collects them). Any
 * thread; one fprintf per line so lines never interleave. Never call from a
 * signal handler. */
#ifndef BLOOMGATE_LOG_H
#define BLOOMGATE_LOG_H

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
int log_level_parse(const char *s, enum log_level *out);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
