/*
 * simclock.c — CLOCK_MONOTONIC helpers.
 */
#include "tools/armsim/simclock.h"

#include <errno.h>
#include <time.h>

uint64_t armsim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void armsim_sleep_us(long us)
{
    if (us <= 0) return;
    uint64_t until = armsim_now_ns() + (uint64_t)us * 1000ull;
    struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}
