/*
 * loop_thread.h — the control thread: ticks (runner_tick) on absolute CLOCK_MONOTONIC deadlines
 * one period apart, whole periods missed after a late wake-up skipped (the tick that follows
 * says how many: overruns), until the host asks it to stop; then the safe shutdown
 * (runner_stop). SCHED_FIFO, a pinned CPU and locked memory as [realtime] asks (one warning
 * each when refused). Started and joined by the host (main thread).
 */
#ifndef ARMD_LOOP_THREAD_H
#define ARMD_LOOP_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/handoff.h"
#include "daemon/runner.h"

typedef struct {
    pthread_t thread;
    runner *r;
    handoff *h;
    int64_t period_ns;
    bool started;
} loop_thread;

/* Starts the thread for runner r (ticks once h says go). 0, or -1 with why. */
int loop_thread_start(loop_thread *t, runner *r, handoff *h, int64_t period_ns,
                      const cfg_realtime *rt, char *why, size_t len);
/* How the control thread ended (loop_thread_stop). */
typedef enum {
    LOOP_THREAD_STOPPED,   /* by its own safe shutdown (torque off, servos disabled) */
    LOOP_THREAD_CANCELLED, /* cancelled and joined: its torque off may not have run */
    LOOP_THREAD_STUCK      /* not even cancelled (it spins without a cancellation point): it
                              still runs and still uses the runner, the loop and the driver */
} loop_thread_end;

/* Asks the thread to stop and waits for its safe shutdown, at most seconds; past that it is
 * cancelled and joined within join_seconds more (every wait on CLOCK_MONOTONIC: at most
 * seconds + join_seconds in all). For CANCELLED and STUCK the caller turns the torque off
 * itself; for STUCK it must free nothing the thread uses, and exit. */
loop_thread_end loop_thread_stop(loop_thread *t, double seconds, double join_seconds);

#endif
