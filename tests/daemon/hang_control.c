/*
 * hang_control.c — an LD_PRELOAD shim for tests: once the file named by HANG_CONTROL_FILE
 * exists, armd's control thread (the thread named "armd-control") hangs in its next tick sleep,
 * as a thread stuck for good would: by default it sleeps for an hour in clock_nanosleep itself,
 * so it can still be cancelled there; with HANG_CONTROL_MODE=spin it spins for good without a
 * cancellation point (at SCHED_OTHER, so as not to starve the machine). Every other thread and
 * call is untouched.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* True in the control thread once the trigger file exists. */
static int should_hang(void)
{
    char name[32] = "";
    if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) return 0;
    if (strcmp(name, "armd-control") != 0) return 0;
    const char *f = getenv("HANG_CONTROL_FILE");
    return f && access(f, F_OK) == 0;
}

/* clock_nanosleep(2), an hour long in the control thread once triggered. */
int clock_nanosleep(clockid_t id, int flags, const struct timespec *t, struct timespec *rem)
{
    static int (*real)(clockid_t, int, const struct timespec *, struct timespec *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "clock_nanosleep");
    if (should_hang()) {
        const char *mode = getenv("HANG_CONTROL_MODE");
        if (mode && strcmp(mode, "spin") == 0) {
            struct sched_param other = {0};
            pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
            for (volatile unsigned long n = 0;; n++) { /* no call: no cancellation point */
            }
        }
        struct timespec hour = {3600, 0};
        return real(CLOCK_MONOTONIC, 0, &hour, NULL);
    }
    return real(id, flags, t, rem);
}
