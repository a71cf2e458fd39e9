/*
 * collision.h — collision detection by the generalized-momentum observer (De Luca & Mattone,
 * "Sensorless robot collision detection and hybrid force/motion control", ICRA 2005):
 *     r = K_O (p(t) - p(0) - integral_0^t (tau_m + C(q,qd)^T qd - G(q) - tau_f(qd) + r) dt),
 *     p = H(q) qd,
 * one gain K_O for all joints. With the model exact, dr/dt = K_O (tau_ext - r): r is the
 * external joint torque seen through a first-order lag of time constant 1/K_O, with no
 * acceleration measured. p and C^T qd come from one O(n) recursion (momentum), G and
 * friction from the model; no matrix of size n^2. Pure computation on a preallocated state,
 * run by the control thread every tick while the arm is enabled.
 */
#ifndef ARMD_COLLISION_H
#define ARMD_COLLISION_H

#include <stdbool.h>

#include "daemon/controller.h"
#include "dynamics/dynamics.h"

typedef struct {
    bool running;
    double p0[CFG_MAX_JOINTS];          /* momentum at the start [N m s|N s] */
    double integral[CFG_MAX_JOINTS];    /* the integral term [N m s|N s] */
    double r[CFG_MAX_JOINTS];           /* the residual: estimated external torque [N m|N] */
    double tau_applied[CFG_MAX_JOINTS]; /* motor torque acting since the last update [N m|N] */
    double beta[CFG_MAX_JOINTS];        /* C^T qd - G - tau_f at the last update [N m|N] */
    double friction[CFG_MAX_JOINTS];    /* tau_f at the last update [N m|N] */
    double allow[CFG_MAX_JOINTS];       /* bound on r's friction integration error [N m|N] */
} coll_observer;

/* Starts the observer at state (q, qd) with no motor torque acting yet: p(0) = H(q) qd, the
 * integral, r and the friction allowance zero. */
void coll_start(coll_observer *o, const law_dyn *dy, const double *q, const double *qd);

/* Stops it (r reads zero); coll_start again before the next update. */
void coll_stop(coll_observer *o, int n);

/* The motor torque [N m|N] written this tick: it acts until the next update. */
void coll_applied(coll_observer *o, const double *tau, int n);

/* One observer step over dt [s] (> 0; the time since the last state) at the measured (q, qd):
 * the mean external torque over dt from the momentum balance, e = (p - p_last - (tau_applied
 * + (beta_last + beta) / 2) dt) / dt with beta = C^T qd - G - tau_f (the motor torque is held
 * over the tick, as the servos hold it; beta varies with the state, so the trapezoid rule),
 * then r = e + (r_last - e) exp(-K_O dt): the first-order lag solved exactly over the step,
 * so a long step (a host hold-up) never carries r beyond e or r_last. The friction allowance
 * goes through the same lag: allow = B + (allow_last - B) exp(-K_O dt), B = |tau_f(qd) -
 * tau_f(qd_last)| / 2, the trapezoid rule's largest error for a friction that changes
 * monotonically over the step (a velocity reversal inside a hold-up: the smoothed Coulomb
 * torque can swing by its whole band between two samples). */
void coll_update(coll_observer *o, const law_dyn *dy, double gain, const double *q,
                 const double *qd, double dt);

/* The collision threshold of joint j [N m|N]: collision_threshold_j + collision_band_j |qd_j|
 * + the friction allowance (o->allow_j). */
double coll_threshold(const coll_observer *o, const law_params *p, int j, double qd);

/* The joint whose |r_j| exceeds its coll_threshold by the largest ratio, or -1 when none does;
 * *ratio = |r_j| / threshold (the largest over all joints). */
int coll_detect(const coll_observer *o, const law_params *p, const double *qd, double *ratio);

/* True while every |r_j| is below half its threshold (collision_threshold_j + collision_band_j
 * |qd_j|, without the friction allowance: a contact that goes on through a velocity reversal
 * must not clear and be detected again): a detected collision is over (the hysteresis that gives
 * one event per contact). */
bool coll_clear(const coll_observer *o, const law_params *p, const double *qd);

#endif
