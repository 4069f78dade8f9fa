/* The windowed filters' clock, see clock.h. Only clock_now_ms lives here
 * (a test program replaces this file's one symbol, see clock.h). */
#include "config.h"

#include "base/clock.h"

#include <time.h>

/* Any thread: one vDSO read of the kernel's coarse wall clock (updated each
 * tick, 1 to 4 ms; cheaper than the precise clock, and a check of one item
 * reads it once). Every add, record and check reads this one clock, so a
 * window's bounds hold exactly in its time. */
int64_t clock_now_ms(void)
{
    struct timespec ts;
#ifdef CLOCK_REALTIME_COARSE
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
#else
    clock_gettime(CLOCK_REALTIME, &ts);
#endif
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
