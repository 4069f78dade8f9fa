/* clock: the wall clock a windowed filter reads (unix milliseconds), with
 * one seam for tests so they move time without sleeping. Any thread. */
#ifndef BLOOMGATE_CLOCK_H
#define BLOOMGATE_CLOCK_H

#include <stdint.h>

/* Test seam (NULL in production): when set, clock_now_ms returns what it
 * returns. Unit tests set it; a test of the daemon sets the environment
 * variable BLOOMGATE_TEST_CLOCK_FILE instead (see clock.c). */
extern int64_t (*clock_test_source)(void);

/* Unix time in milliseconds: the time a windowed add is made at, journaled
 * with it, and the time its window is measured against. */
int64_t clock_now_ms(void);

#endif
