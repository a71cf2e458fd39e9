/*
 * motion.h — daemon/loop/ private: what the arm is asked to do, and the desired state that
 * makes it so. One kind at a time:
 *   hold     at a desired position, at rest;
 *   follow   a plan, then the ones appended behind it, settling at the goal after the last;
 *   stop     decelerating within the acceleration limits (cancel, hold), then hold;
 *   retract  back along the executed path (a collision reaction), then hold.
 * The state machine's holding/moving is motion's hold/any other kind. The only place a
 * trajectory ends: every TRAJECTORY_DONE event and every plan handed back to the host come from
 * here. Control thread only.
 */
#ifndef ARMD_LOOP_MOTION_H
#define ARMD_LOOP_MOTION_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/loop/tick.h"
#include "daemon/loop/retract.h"

typedef enum { MOTION_HOLD, MOTION_FOLLOW, MOTION_STOP, MOTION_RETRACT } motion_kind;

/* MOTION_FOLLOW: the plan followed and the ones appended behind it. */
typedef struct {
    traj_plan *plan;
    traj_plan *queue[LOOP_QUEUE]; /* appended, in order */
    int n_queue;
    double t;          /* time along plan [s] */
    int seg;           /* traj_sample's search hint */
    bool settling;     /* past the end of the last plan, waiting for the goal tolerance */
    double settle_for; /* time within the goal tolerance so far [s] */
} motion_follow;

/* MOTION_STOP: the deceleration of a cancel or a hold (IEC 60204-1 category 2). */
typedef struct {
    traj_stop profile;
    double t;        /* time since it started [s] */
    uint32_t id;     /* the trajectory it ends (its TRAJECTORY_DONE comes at the end); 0: none */
    const char *why; /* that event's text (a string literal) */
} motion_stop;

typedef struct {
    int n;
    motion_kind kind;
    double q_des[CFG_MAX_JOINTS];   /* the desired state [rad|m] ... */
    double qd_des[CFG_MAX_JOINTS];  /* ... [rad/s|m/s] ... */
    double qdd_des[CFG_MAX_JOINTS]; /* ... [rad/s^2|m/s^2] */
    union {
        motion_follow follow;
        motion_stop stop;
    };
    retract back; /* the executed path, and MOTION_RETRACT's way back along it */
} motion;

void motion_init(motion *m, int n);
/* True unless holding (the state is moving). */
bool motion_moving(const motion *m);
/* Ends every trajectory (followed, appended, cancelled by a stop) with the text why in its
 * TRAJECTORY_DONE, hands the plans back, and holds where the desired position is. */
void motion_end(motion *m, loop_out *o, const char *why);
/* The same, then holds at q [rad|m]. */
void motion_hold(motion *m, loop_out *o, const double *q, const char *why);
/* Forgets the executed path (at enable). */
void motion_forget_path(motion *m);
/* A trajectory command: its plan replaces the motion now, or (append) goes behind the plan it
 * was built to follow, or starts now if that one has just ended where this one starts. 0 when
 * the plan is the loop's now, -1 with e when refused (the plan stays the caller's). */
int motion_take(motion *m, loop_out *o, const loop_cmd *c, const traj_limits *lim, ctl_error *e);
/* Cancel or hold: while moving (following, retracting), decelerate from the desired state
 * within acc [rad/s^2|m/s^2 per joint] and hold where it stops; the trajectory followed reports
 * why (a string literal: "cancelled", "cancelled: hold") when the stop ends, the ones appended
 * behind it at once. Nothing while holding or already stopping. */
void motion_cancel(motion *m, loop_out *o, const double *acc, const char *why);
/* Ends every trajectory with why and goes back along the executed path from q; false (holding
 * at q instead) when too little path was recorded to go back along (retract.h). */
bool motion_retract(motion *m, loop_out *o, const law_params *p, const double *q, const char *why);
/* Advances the desired state by dt [s]; q [rad|m] is the measured position (recorded on the
 * executed path, and judged against the goal tolerance when settling). */
void motion_advance(motion *m, loop_out *o, const law_params *p, double dt, const double *q);
/* The path tolerance while moving: a joint off its desired position by more than it ends the
 * motion, holding at q, saying why. */
void motion_check_path(motion *m, loop_out *o, const law_params *p, const double *q);
/* The trajectory under way (0: none), its progress 0..1 and the time left [s] (appended plans
 * included). */
void motion_progress(const motion *m, uint32_t *id, double *progress, double *remaining);

#endif
