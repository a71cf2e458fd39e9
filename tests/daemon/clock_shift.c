/*
 * clock_shift.c — an LD_PRELOAD shim for tests: the process sees the wall clock
 * (CLOCK_REALTIME and its coarse form, gettimeofday(2), time(2)) shifted by a number of
 * seconds, which is what a deadline computed from the wall clock meets when the clock is
 * stepped by that much while it waits (the kernel still measures against the real clock).
 * The shift is CLOCK_SHIFT_S (environment, default -3600), or, when CLOCK_SHIFT_FILE names a
 * file, the number in that file, read again on every call: a test steps the clock while the
 * process runs by rewriting the file. Every other clock is untouched, and the machine's own
 * clock is never changed.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The present shift [ns]. */
static long long shift_ns(void)
{
    const char *path = getenv("CLOCK_SHIFT_FILE");
    if (path) {
        char buf[64];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) close(fd);
        if (n <= 0) return 0;
        buf[n] = 0;
        return (long long)(strtod(buf, NULL) * 1e9);
    }
    const char *s = getenv("CLOCK_SHIFT_S");
    return (s ? atoll(s) : -3600) * 1000000000LL;
}

/* Adds the shift to ts. */
static void shift(struct timespec *ts)
{
    long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + shift_ns();
    ts->tv_sec = (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000L;
        ts->tv_sec--;
    }
}

/* clock_gettime(2), with the realtime clocks shifted. */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
    int r = real(id, ts);
    if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) shift(ts);
    return r;
}

/* gettimeofday(2), shifted (libev's ev_time may read the wall clock here). */
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz;
    struct timespec ts;
    int r = clock_gettime(CLOCK_REALTIME, &ts);
    if (r == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return r;
}

/* time(2), shifted. */
time_t time(time_t *t)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (t) *t = ts.tv_sec;
    return ts.tv_sec;
}
