/*
 * safety.h — armd's arm state machine and fault detection, pure functions (no I/O) so that
 * every transition and fault reason can be tested alone. The control thread applies the
 * decisions (torque off, damping stop) before publishing anything.
 *
 * States: disabled -> holding <-> moving; fault (needs reset); estop (needs reset).
 * The values equal ctl_state's (control.h).
 */
#ifndef ARMD_SAFETY_H
#define ARMD_SAFETY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/controller.h"

typedef enum {
    SF_DISABLED = 0,
    SF_HOLDING = 1,
    SF_MOVING = 2,
    SF_FAULT = 3,
    SF_ESTOP = 4
} sf_state;

typedef enum {
    SF_CMD_ENABLE,
    SF_CMD_DISABLE,
    SF_CMD_HOLD,
    SF_CMD_ESTOP,
    SF_CMD_RESET,
    SF_CMD_CANCEL,
    SF_CMD_TRAJECTORY,
    SF_CMD_CONTROLLER
} sf_cmd;

const char *sf_state_name(sf_state s);

/* Whether cmd is accepted in state s; the state it leads to in *next (the moving/holding
 * details of hold, cancel and trajectory are decided by the trajectory logic). When refused, why
 * (len bytes) says so in a sentence; fault_reason is quoted for fault states. */
bool sf_command_allowed(sf_state s, sf_cmd cmd, const char *fault_reason, sf_state *next, char *why,
                        size_t len);

/* Checks one tick of an enabled arm: position within [lower - fe, upper + fe] (fe = the
 * joint's following_error: a trajectory may run to a limit and the tracking error must not
 * fault it), |qd| <= SF_VELOCITY_MARGIN * velocity (measured velocity overshoots a little
 * where a trajectory runs at the limit), |q_des - q| <= following_error (limits <= 0 are
 * off). Returns true and a reason naming the joint when one is violated. */
#define SF_VELOCITY_MARGIN 1.1
bool sf_check_tick(const law_params *p, const double *q, const double *qd, const double *q_des,
                   char *reason, size_t len);

/* Checks for enabling that q is within the same band as sf_check_tick's position check,
 * [lower - fe, upper + fe] per joint: an arm resting on its hard stop just past a soft limit
 * can be enabled (it then holds there); true and a reason naming the joint when outside. */
bool sf_check_position(const law_params *p, const double *q, char *reason, size_t len);

/* sf_check_tick's velocity check alone: |qd| <= SF_VELOCITY_MARGIN x velocity limit, finite;
 * true and a reason naming the joint when violated. */
bool sf_check_velocity(const law_params *p, const double *qd, char *reason, size_t len);

/* Failed bus transfers in a row (reads, and separately writes): a fault once there have been
 * at least max_failed_reads consecutive failures AND no success for max_read_gap_ms. The count
 * bounds a slow loop, the time a fast one: at 1 kHz a host that stalls for a few ms must not
 * fault the arm, at 60 Hz three lost replies are already 50 ms. Times: CLOCK_MONOTONIC [ns]. */
typedef struct {
    int consecutive;
    int64_t last_ok_ns; /* the last success (or the start) */
} sf_reads;
/* Counts one failure at now_ns; true when the tolerance is used up (fault now). */
bool sf_read_failed(sf_reads *r, const law_params *p, int64_t now_ns);
/* True when a damping stop without fresh readings must end: the same tolerance as
 * sf_read_failed, for the failures counted so far. */
bool sf_reads_exhausted(const sf_reads *r, const law_params *p, int64_t now_ns);
void sf_read_ok(sf_reads *r, int64_t now_ns);

/* Damping stop: true when it should end (every |qd| < damp_stop_velocity, or elapsed >=
 * damp_timeout), i.e. torque off now. */
bool sf_damp_done(const law_params *p, const double *qd, double elapsed);

#endif
