/*
 * guard.h — daemon/loop/ private: the arm's safety state machine and the reactions that keep
 * it safe. The mode is one of
 *   disabled  no torque;
 *   enabling  an enable waits for a fresh state within the limits, then for the servos (the
 *             published state stays disabled; the enable is answered when it is over);
 *   enabled   the control law runs (holding or moving: motion's kind);
 *   fault     a fault stopped the arm: torque off, or the damping stop first; needs reset;
 *   estop     torque off; needs reset.
 * The only writer of the mode, the fault text and the damping stop; every fault goes through
 * guard_fault, which puts the torque reaction first (the tick's torque stage writes it) and
 * ends the motion. Control thread only.
 */
#ifndef ARMD_LOOP_GUARD_H
#define ARMD_LOOP_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/loop/tick.h"
#include "daemon/loop/motion.h"
#include "daemon/loop/sense.h"
#include "daemon/loop/torque.h"

#define GUARD_ENABLES 8 /* enable commands waiting together at most */
/* An enable waits at most this long for a fresh state [s]; within the host's answer timeout
 * (CTL_ACK_TIMEOUT_S), so an enable is never answered "timeout" and then done. */
#define GUARD_ENABLE_WAIT_S 0.5

typedef enum { GUARD_DISABLED, GUARD_ENABLING, GUARD_ENABLED, GUARD_FAULT, GUARD_ESTOP } guard_mode;

typedef struct {
    guard_mode mode;
    char fault[160]; /* the reason of the last fault, "" when none */
    bool damping;    /* fault: the damping stop runs ... */
    double damp_t;   /* ... since this long [s] */
    /* enabling: the enable commands to answer (a second enable waits with the first) */
    uint64_t enable_seq[GUARD_ENABLES];
    int n_enable;
    bool servos_asked; /* the servos were asked to switch on (the answer comes next tick) */
    double enable_t;   /* control time the enabling began [s] */
} guard;

void guard_init(guard *g);
/* The published state: the mode, with enabled split by motion into holding and moving. */
ctl_state guard_state(const guard *g, const motion *m);
bool guard_enabled(const guard *g);
/* A fault for why (ignored in fault or estop): an enable waiting is refused, every trajectory
 * ends "aborted: fault: why", the fault event, mode fault. The torque: the damping stop when
 * damp and the arm was enabled with a fresh state this tick, else off (servos switched off). */
void guard_fault(guard *g, motion *m, loop_out *o, bool damp, bool fresh, const char *why);
/* Emergency stop: torque off, trajectories end "aborted: estop", mode estop. */
void guard_estop(guard *g, motion *m, loop_out *o);
/* disabled (from enabling or enabled: torque off, trajectories end "cancelled: disabled");
 * nothing in fault or estop (the torque is off already). */
void guard_disable(guard *g, motion *m, loop_out *o);
/* armd stops: an enable waiting is refused, enabled -> disabled, a damping stop ends; the
 * servos are switched off (fault and estop stay). */
void guard_stop(guard *g, loop_out *o);
/* fault | estop -> disabled; a damping stop ends (torque off). */
void guard_reset(guard *g, loop_out *o);
/* An enable command seq at control time t [s]: disabled -> enabling (answered when that is
 * over); while enabling it waits with the others; enabled: answered at once; refused ("busy")
 * beyond GUARD_ENABLES. */
void guard_enable(guard *g, uint64_t seq, double t, loop_out *o);
/* An enabling tick: with a fresh state within the position and velocity limits the servos are
 * switched on, and once they are (the next tick) the arm holds where it is: answered 0. Without
 * a fresh state it waits (reads that fail for as long as [safety] max_failed_reads and
 * max_read_gap_ms allow fault the arm, which refuses the enable; none within GUARD_ENABLE_WAIT_S
 * refuses it too); a state outside the limits or servos that refuse refuse it. */
void guard_step_enable(guard *g, const loop_in *in, const sense *s, const law_params *p, motion *m,
                       torque *t, loop_out *o);
/* A damping stop's tick: its torque into tau (write it), or its end (torque off) once every
 * joint is slow enough, at damp_timeout, when the model gives a non-finite torque, or when
 * reads keep failing as they would fault an enabled arm. Without a fresh state nothing is
 * written (the servos keep the last torque). */
void guard_step_damping(guard *g, const loop_in *in, const sense *s, const law_params *p,
                        const law_dyn *dy, torque *t, loop_out *o);

#endif
