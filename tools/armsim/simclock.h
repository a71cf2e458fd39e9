/*
 * simclock.h — armsim's time base: CLOCK_MONOTONIC in nanoseconds.
 */
#ifndef ARMSIM_SIMCLOCK_H
#define ARMSIM_SIMCLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC now [ns]. */
uint64_t armsim_now_ns(void);
/* Sleeps us microseconds (absolute deadline on CLOCK_MONOTONIC, restarted after signals). */
void armsim_sleep_us(long us);

#endif
