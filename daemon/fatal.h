/*
 * fatal.h — armd's signal handlers that must work whatever the main loop is doing:
 *
 *  - fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT): write the driver's prebuilt
 *    torque-off frame to the open port (drv_torque_off_async), then restore the default action
 *    and re-raise, so the process still dies by the signal (core dump, exit status);
 *  - SIGUSR1: emergency stop (ctl_estop_async; the control thread acts at its next tick).
 *
 * The handlers run on an alternate signal stack (a stack overflow is handled too). sigaltstack
 * is per thread: fatal_install() gives the calling thread one, and every other thread calls
 * rt_altstack_enter() / rt_altstack_leave() (rt.h) around its body, as the control thread
 * does. Handlers are async-signal-safe: no allocation, no locks, no logging; they read only what
 * fatal_arm() published.
 */
#ifndef ARMD_FATAL_H
#define ARMD_FATAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "daemon/control.h"
#include "drivers/drivers.h"

/* Installs both handlers (sigaction) and the calling thread's alternate stack. Until
 * fatal_arm() they do nothing but the default death (fatal signals) or nothing (SIGUSR1).
 * 0, or -1 with a message in err. */
int fatal_install(char *err, size_t errlen);
/* Publishes the driver and controller the handlers act on (either may be NULL). Call
 * fatal_arm(NULL, NULL) before closing the driver or freeing the controller. */
void fatal_arm(drv *d, ctl *c);
/* Main thread, from time to time: true once for each SIGUSR1 taken since the last call (to log
 * it; the handler cannot). */
bool fatal_estop_signalled(void);

#endif
