/*
 * fatal.c — the fatal-signal and SIGUSR1 handlers (see fatal.h). Everything a handler touches is
 * static and published before it can run; handlers use only async-signal-safe calls (write(2)
 * and nanosleep(2) inside drv_torque_off_async, sigaction(2), raise(3), lock-free atomics).
 */
#include "daemon/fatal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/rt.h"

_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "signal handlers need lock-free atomics");

#define OFF_WAIT_NS  1000000L /* a second crashing thread polls this often ... */
#define OFF_WAIT_MAX 200      /* ... this many times for the first one's torque off */

/* every signal whose default action is a core dump (signal(7)): each would end armd with the
 * torque still applied */
static const int fatal_signals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,  SIGABRT,
                                    SIGQUIT, SIGTRAP, SIGSYS, SIGXCPU, SIGXFSZ};

static _Atomic(drv *) armed_driver;
static _Atomic(ctl *) armed_ctl;
static atomic_int off_state;     /* 0 = not yet, 1 = a thread is writing the frame, 2 = done */
static atomic_int estop_seen;    /* SIGUSR1 taken, not yet reported by fatal_estop_signalled */
static atomic_int estop_unarmed; /* SIGUSR1 taken before a controller was armed */

/* Fatal signal: the first thread here writes the torque-off frame (a second one waits for it,
 * so that its own death cannot cut the frame short), then the default action is restored and
 * the signal raised again; it is delivered when the handler returns (it is blocked until
 * then), and a hardware fault that returns would fault again with the default action. */
static void on_fatal(int sig)
{
    int idle = 0;
    if (atomic_compare_exchange_strong(&off_state, &idle, 1)) {
        drv_torque_off_async(atomic_load(&armed_driver));
        atomic_store(&off_state, 2);
    } else {
        struct timespec ts = {0, OFF_WAIT_NS};
        for (int i = 0; i < OFF_WAIT_MAX && atomic_load(&off_state) != 2; i++) nanosleep(&ts, NULL);
    }
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* SIGUSR1: raises the controller's estop flag (or remembers it for fatal_arm). */
static void on_estop(int sig)
{
    (void)sig;
    ctl *c = atomic_load(&armed_ctl);
    if (c)
        ctl_estop_async(c);
    else
        atomic_store(&estop_unarmed, 1);
    atomic_store(&estop_seen, 1);
}

/* Installs handler for sig on the alternate stack with every other signal blocked meanwhile. */
static int install(int sig, void (*handler)(int), int flags, char *err, size_t errlen)
{
    struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_ONSTACK | flags};
    sigfillset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) == 0) return 0;
    snprintf(err, errlen, "sigaction(%s): %s", strsignal(sig), strerror(errno));
    return -1;
}

int fatal_install(char *err, size_t errlen)
{
    if (rt_altstack_enter() < 0) {
        snprintf(err, errlen, "no alternate signal stack: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        if (install(fatal_signals[i], on_fatal, 0, err, errlen) < 0) return -1;
    return install(SIGUSR1, on_estop, SA_RESTART, err, errlen);
}

void fatal_arm(drv *d, ctl *c)
{
    atomic_store(&armed_driver, d);
    atomic_store(&armed_ctl, c);
    if (c && atomic_exchange(&estop_unarmed, 0)) ctl_estop_async(c);
}

bool fatal_estop_signalled(void)
{
    return atomic_exchange(&estop_seen, 0) != 0;
}
