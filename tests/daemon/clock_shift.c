/*
 * clock_shift.c — an LD_PRELOAD shim for tests: the process sees CLOCK_REALTIME shifted by
 * CLOCK_SHIFT_S seconds (environment, default -3600), which is what a deadline computed from
 * the wall clock meets when the clock is stepped forward by that much while it waits (the
 * kernel still measures against the real clock). Every other clock is untouched, and the
 * machine's own clock is never changed.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

/* clock_gettime(2), with CLOCK_REALTIME shifted. */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
    int r = real(id, ts);
    if (r == 0 && id == CLOCK_REALTIME) {
        const char *s = getenv("CLOCK_SHIFT_S");
        ts->tv_sec += s ? atol(s) : -3600;
    }
    return r;
}
