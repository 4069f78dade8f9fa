/* clock: the wall clock a windowed filter reads (unix milliseconds). Any
 * thread. It has no seam in what ships: tests that move time link their own
 * clock_now_ms instead (tests/lib/test_clock.c, link-time substitution), so
 * nothing in the daemon can be told to read another time. */
#ifndef BLOOMGATE_CLOCK_H
#define BLOOMGATE_CLOCK_H

#include <stdint.h>

/* Unix time in milliseconds: the time a windowed add is made at, journaled
 * with it, and the time its window is measured against. Alone in clock.c,
 * so that a test program's definition replaces it whole. */
int64_t clock_now_ms(void);

#endif
