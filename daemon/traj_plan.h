/*
 * traj_plan.h — a joint-space plan as the control loop follows it: piecewise polynomials of
 * degree up to five per joint, segment k on [t0[k], t0[k] + h[k]], allocated once (main thread)
 * and sampled without allocation (control thread). Built by trajectory.h, shaped by traj_shape.c.
 * Units: SI, joint side (rad or m, s).
 */
#ifndef ARMD_TRAJ_PLAN_H
#define ARMD_TRAJ_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/ctl_types.h"

#define TRAJ_NCOEF 6 /* coefficients c0..c5 of a segment's polynomial per joint */

/* The control interface's own types: an error for a client ("invalid_params", "limits", with a
 * message naming the waypoint and joint) and a timed waypoint. */
typedef ctl_error traj_error;
typedef ctl_waypoint traj_waypoint;

/* A desired joint state. */
typedef struct {
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], qdd[CFG_MAX_JOINTS];
} traj_state;

typedef struct {
    int n, cap;  /* joints, segment capacity */
    int n_seg;   /* segments in use */
    uint32_t id; /* set by the owner */
    double duration;
    bool first_quintic; /* kind of segment 0 (kept by traj_reanchor) */
    bool shaped;        /* convolved with an input shaper: segments are not between waypoints */
    double *t0;         /* [cap] segment start times [s] */
    double *h;          /* [cap] segment durations [s] */
    double *c;          /* [cap * n * 6] coefficients c0..c5 of q(tau), tau = t - t0 */
} traj_plan;

/* Allocates a plan of n joints with room for cap segments: 0, or -1 (out of memory). */
int traj_plan_alloc(traj_plan *p, int n, int cap);
void traj_plan_free(traj_plan *p);

/* The coefficients c0..c5 of joint j's polynomial on segment seg. */
static inline double *traj_coef(const traj_plan *p, int seg, int j)
{
    return p->c + ((size_t)seg * (size_t)p->n + (size_t)j) * TRAJ_NCOEF;
}

/* Samples the plan at t (clamped to [0, duration]); *seg is a search hint (start at 0). */
void traj_sample(const traj_plan *p, double t, int *seg, double *q, double *qd, double *qdd);
/* The end state (q at duration, qd, qdd there). */
void traj_end_state(const traj_plan *p, traj_state *out);
/* Rebuilds segment 0 so that it starts from start, keeping its end state and kind: no jump
 * when a plan built from a slightly older desired state is swapped in. No allocation. */
void traj_reanchor(traj_plan *p, const traj_state *start);

/* Coefficients of one segment (exposed for tests). */
void traj_cubic(double q0, double v0, double q1, double v1, double h, double c[6]);
void traj_quintic(double q0, double v0, double a0, double q1, double v1, double a1, double h,
                  double c[6]);

#endif
