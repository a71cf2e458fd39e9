/*
 * hang_control.c — an LD_PRELOAD shim for tests: once the file named by HANG_CONTROL_FILE
 * exists, armd's control thread (the thread named "armd-control") hangs in its next tick sleep
 * for an hour, as a thread stuck for good would. The sleep is clock_nanosleep itself, so the
 * thread can still be cancelled there. Every other thread and call is untouched.
 */
#include <dlfcn.h>
#include <pthread.h>
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
        struct timespec hour = {3600, 0};
        return real(CLOCK_MONOTONIC, 0, &hour, NULL);
    }
    return real(id, flags, t, rem);
}
