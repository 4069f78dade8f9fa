/* test_clock: a clock_now_ms that tests move without sleeping, linked in
 * place of src/base/clock.c's (link-time substitution: a program that links
 * tests/lib/test_clock.c never pulls clock.o from the library). A unit test
 * sets test_clock_source; bloomgated_clock, the daemon built with this
 * clock for integration tests, reads the time from the file named by
 * BLOOMGATE_TEST_CLOCK_FILE. Neither exists in what ships. Any thread. */
#ifndef BLOOMGATE_TEST_CLOCK_H
#define BLOOMGATE_TEST_CLOCK_H

#include <stdint.h>

#include "base/clock.h"

/* When set, clock_now_ms returns what it returns. */
extern int64_t (*test_clock_source)(void);

#endif
