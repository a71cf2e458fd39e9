/*
 * lockstep.h — armd's lockstep simulation: armsim's arm (physics, servos or board, the bus) in
 * this process on a simulated clock (tools/armsim/simbus.h), the real driver over it, and the
 * real loop stepped on that clock. A tick: the physics is run to the tick's deadline, then the
 * tick itself (runner.c), whose read and write take their bus time on the simulated clock. No
 * thread, no sleeping, no real clock: it runs as fast as the host computes, and the same
 * configuration, simulator options and commands give the same telemetry bit for bit.
 * What the real-time thread meets by accident, a test makes happen here on purpose: a late
 * tick (lockstep_stall), lost replies, a silent bus (lockstep_bus + simbus.h). Main thread only.
 */
#ifndef ARMD_LOCKSTEP_H
#define ARMD_LOCKSTEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/control.h"
#include "tools/armsim/simbus.h"

typedef struct lockstep lockstep;

/* The simulated arm of cfg (the configuration at config_path) as armsim's options say (argv[0
 * .. argc), as they follow "armsim -c CONFIG" on its command line, without --link), its
 * driver opened on the simulated bus and probed. NULL with a sentence in err. */
lockstep *lockstep_open(const armd_config *cfg, const char *config_path, int argc,
                        char *const *argv, char *err, size_t len);
/* The driver, for ctl_create (which then owns it). */
drv *lockstep_driver(lockstep *ls);
/* Starts c stepped on the simulated clock, with its first tick run (a first state published);
 * a caller of c that waits for an answer has the loop stepped meanwhile. */
int lockstep_start(lockstep *ls, ctl *c, ctl_error *err);
/* One tick: the physics to its deadline (later by an injected stall), then the tick. */
void lockstep_tick(lockstep *ls);
/* Ticks until the control time is at least t [s]. */
void lockstep_run_until(lockstep *ls, double t);
/* The control time of the last tick [s]. */
double lockstep_time(const lockstep *ls);
/* The arm's true state at the last tick's deadline (before its read). */
void lockstep_truth(const lockstep *ls, physics_state *out);
/* Makes what the simulation wrote visible to readers (the --truth file up to now). */
void lockstep_flush(lockstep *ls);
/* Injected: the next tick wakes seconds late, as after a host stall (the periods it missed are
 * skipped, as on the real-time thread). */
void lockstep_stall(lockstep *ls, double seconds);
/* The simulated bus (lost replies, silence, the true state: simbus.h). */
simbus *lockstep_bus(lockstep *ls);
/* Frees the simulated arm (after the controller that used its driver is freed). */
void lockstep_free(lockstep *ls);

#endif
