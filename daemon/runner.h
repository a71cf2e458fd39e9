/*
 * runner.h — one control tick with its I/O, the same on the real-time thread (loop_thread.c)
 * and in lockstep simulation (lockstep.c): the host's flags and commands from the hand-off, the
 * driver's read, loop_step, the driver's write and servo switching (their results go into the
 * next tick's input), the timings, everything published. The runner owns the driver while the
 * loop runs; it runs on the loop's thread only (in lockstep that is the main thread, which then
 * runs the host as well).
 */
#ifndef ARMD_RUNNER_H
#define ARMD_RUNNER_H

#include <stdint.h>

#include "daemon/handoff.h"
#include "daemon/loop/loop.h"
#include "drivers/drivers.h"

typedef struct runner runner;

/* A runner for loop L on driver d at period [s], publishing to h. Main thread, before the
 * loop's thread runs; NULL when out of memory. */
runner *runner_create(loop *L, drv *d, handoff *h, double period);
void runner_free(runner *r);
/* Control time 0 on the driver's clock [ns] (the instant before the first tick's deadline). */
void runner_begin(runner *r, int64_t t0_ns);
/* One tick whose deadline was deadline_ns (driver clock), woken late_ns after its original
 * deadline, skipped whole periods missed before it. An estop raised since the last tick zeroes
 * the torque and switches the servos off before the read, then the tick reports it. */
void runner_tick(runner *r, int64_t deadline_ns, int64_t late_ns, uint64_t skipped);
/* The safe shutdown: the loop's last step (trajectories end, zero torque written, servos off,
 * disabled), published. */
void runner_stop(runner *r);

#endif
