/*
 * traj_linear.h — straight-line tool moves (move_linear): the tool frame from its pose at the
 * start state to a goal pose along the straight line, its orientation by slerp, both timed by
 * one quintic s(t) in the path parameter (convolved with the input shaper of the limits, if
 * any: shaping the path parameter keeps the tool on the line), turned at plan time into a
 * joint-space plan by inverse kinematics (dynamics.h dyn_ik, dyn_ik_rates) at waypoints every
 * TRAJ_LINEAR_STEP s; the plan is then validated like any other (trajectory.h; not shaped
 * again) and its own tool path checked against the line. Main thread (allocation allowed). Units:
 * SI; poses 3x4 row-major [R | p] in the base frame, as dyn_fk writes them.
 */
#ifndef ARMD_TRAJ_LINEAR_H
#define ARMD_TRAJ_LINEAR_H

#include <stdbool.h>

#include "dynamics/dynamics.h"
#include "daemon/trajectory.h"

#define TRAJ_LINEAR_STEP 0.01 /* waypoint spacing [s], longer for moves over 5 s ... */
/* ... so that there are at most this many: planning runs on the main thread, which must serve
 * an estop within 20 ms; each waypoint costs an IK solve and its rates (~8 us on a PUMA) */
#define TRAJ_LINEAR_MAX_POINTS 500
#define TRAJ_LINEAR_PATH_TOL   1e-5 /* the plan's tool path: largest distance from the line [m] */
#define TRAJ_LINEAR_ROT_TOL    1e-4 /* and from the slerp's orientation [rad] (full task) */
/* a plan refused for its joint limits names the singularity when the task Jacobian's smallest
 * singular value came below this along the line (joint rates grow as the tool's over it) */
#define TRAJ_LINEAR_NEAR_SINGULAR 0.02
/* an arm with more joints than the task has rows: the free joints move toward the middle of
 * their ranges by this much of their normalised offset per rad of the line's own joint motion */
#define TRAJ_LINEAR_CENTERING 0.1

/* The tool's limits along the line and of the slerp. */
typedef struct {
    double speed, acceleration;                 /* [m/s, m/s^2] */
    double angular_speed, angular_acceleration; /* [rad/s, rad/s^2] */
} traj_linear_limits;

/* A straight-line move. */
typedef struct {
    double goal[12];      /* the tool's target pose */
    bool orientation;     /* goal's R was asked for (else the start orientation is kept) */
    dyn_ik_task task;     /* the rows followed: traj_linear_task(n) */
    traj_linear_limits l; /* each above 0 */
} traj_line;

/* The task rows an arm of n joints follows on a line: all six from 6 joints up, position and
 * pitch for 4 and 5 (a yaw + pitch-pitch-pitch arm such as the OpenManipulator-X), position
 * alone below 4. Joints beyond the rows (7 and more, or 5) are centred: TRAJ_LINEAR_CENTERING. */
dyn_ik_task traj_linear_task(int n);

/* Builds p from start (at rest) along line: the tool pose at start->q (dyn_fk), the duration
 * the slowest of the quintic bounds of the line's length and the slerp's angle under line->l
 * (traj_min_quintic_time) plus the shaper's length, then every waypoint's q by dyn_ik from the
 * previous one's (within the joint limits) and its qd, qdd by dyn_ik_rates; then traj_build and the
 * plan's tool path sampled four times per segment against the line (TRAJ_LINEAR_PATH_TOL,
 * _ROT_TOL). In a reduced task (fewer than six joints) a goal orientation is reached only if it is
 * the one the arm has there: checked at the end. m, d: a model of the arm for the main thread.
 * Returns 0, or -1 with err: "unreachable" (a waypoint out of reach within the limits, at a
 * singularity, an orientation the arm cannot take, the path off the line), or traj_build's
 * ("limits" naming the waypoint and joint), each message with where along the line. */
int traj_linear_build(traj_plan *p, const traj_limits *lim, const dyn_model *m, dyn_data *d,
                      const traj_state *start, const traj_line *line, traj_error *err);

#endif
