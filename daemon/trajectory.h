/*
 * trajectory.h — joint-space trajectories for armd: piecewise polynomials built from timed
 * waypoints on the main thread (allocation allowed there), sampled without allocation by the
 * control thread.
 *
 * A plan starts at t = 0 from a given state (the present desired q, qd, qdd) and passes the
 * waypoints at their times. Segment k ends at waypoint k. Segments are
 *  - quintic where both ends have velocity and acceleration (the start always has both),
 *  - cubic Hermite otherwise; knot velocities are the given qd, or, for position-only
 *    waypoints, those of the C2 cubic spline through them (clamped at the neighbouring knots
 *    with known velocity; the last waypoint has zero velocity unless qd is given).
 * With an input shaper ([trajectory] shaper, traj_limits.shape) the plan built is then
 * convolved with its impulse train (traj_shape.c) and it is the shaped plan that is validated.
 * The plan itself (storage, segments, sampling) is traj_plan.h. Units: SI, joint side (rad or
 * m, s).
 */
#ifndef ARMD_TRAJECTORY_H
#define ARMD_TRAJECTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/ctl_types.h"
#include "daemon/shaper.h"
#include "daemon/traj_plan.h"
#include "daemon/traj_shape.h"

#define TRAJ_MAX_POINTS   8192
#define TRAJ_MAX_DURATION 3600.0 /* longest trajectory, waypoint time or move [s] */

/* Joint limits and names used for validation and minimum-time moves. */
typedef struct {
    int n;
    double period; /* the control loop's [s]: shortest segment (waypoint spacing, move) */
    char name[CFG_MAX_JOINTS][CFG_NAME_MAX];
    bool prismatic[CFG_MAX_JOINTS];
    double lower[CFG_MAX_JOINTS], upper[CFG_MAX_JOINTS];
    double velocity[CFG_MAX_JOINTS], acceleration[CFG_MAX_JOINTS];
    shaper shape; /* [trajectory] shaper: every plan is convolved with it (n = 1: none) */
} traj_limits;

/* Fills lim from the configuration's joints. */
void traj_limits_from_config(traj_limits *lim, const armd_config *cfg);

/* Builds a plan from start through pts and validates it against lim. A first waypoint at t = 0
 * is accepted only if it equals start (within same_tol per joint) and is then dropped. Times
 * must be finite, at least lim->period apart (the first at least lim->period after the start)
 * and at most TRAJ_MAX_DURATION. Returns 0, or -1 with *err naming the waypoint and joint.
 * The guarantee: a plan built here, sampled anywhere in [0, duration], is finite and within the
 * position, velocity and acceleration limits (up to a relative 1e-9), as long as start is. */
int traj_build(traj_plan *p, const traj_limits *lim, const traj_state *start,
               const traj_waypoint *pts, int n_pts, double same_tol, traj_error *err);

/* A single quintic move from start to goal at rest. duration <= 0 picks the shortest duration
 * the velocity and acceleration limits allow; a given one must be within [lim->period,
 * TRAJ_MAX_DURATION]. Returns 0 or -1 with *err. */
int traj_build_move(traj_plan *p, const traj_limits *lim, const traj_state *start,
                    const double *goal, double duration, traj_error *err);

/* Shortest rest-to-rest quintic duration for distance d [rad|m] under limits v, a:
 * max(15/8 |d|/v, sqrt(10/sqrt(3) |d|/a)). */
double traj_min_quintic_time(double d, double v, double a);

/* Checks every segment against lim: finite coefficients, and the exact extremes of position,
 * velocity and acceleration over the segment (at its ends and at the roots of the next
 * derivative) within the limits. 0 or -1 with *err. first_wp is the waypoint number of
 * segment 0's end (for messages). */
int traj_validate(const traj_plan *p, const traj_limits *lim, int first_wp, traj_error *err);
/* The same for segment k alone (no allocation: the control thread checks a re-anchored
 * segment 0 with it). */
int traj_validate_segment(const traj_plan *p, const traj_limits *lim, int k, int first_wp,
                          traj_error *err);

/* ------------------------------------------------------------------ cancel (stop) profile */
/* Each joint decelerates from its present desired velocity to rest at its acceleration limit
 * (constant deceleration), then holds. */
typedef struct {
    int n;
    double q0[CFG_MAX_JOINTS], v0[CFG_MAX_JOINTS], a[CFG_MAX_JOINTS], t_stop[CFG_MAX_JOINTS];
    double duration; /* longest t_stop */
} traj_stop;

void traj_stop_init(traj_stop *s, int n, const double *q, const double *qd,
                    const double *acc_limit);
void traj_stop_sample(const traj_stop *s, double t, double *q, double *qd, double *qdd);

/* "waypoint W: FIELD has GOT values, the arm has N joints" (for callers that parse arrays). */
void traj_error_count(traj_error *err, int waypoint, const char *field, int got, int n);

#endif
