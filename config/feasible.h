/*
 * feasible.h — what the arm and its sampled loop can physically do, checked off the real-time
 * path (the config loader, and armd's main thread before a live change is handed to the loop):
 *
 *  - the gains' discrete stability: the computed-torque law leaves each joint the error dynamics
 *    e'' + kd e' + kp e = 0 of a unit-inertia double integrator; armd samples q, qd and holds the
 *    torque over a period dt (zero-order hold; armsim's RK4 step is exact for a held
 *    acceleration). The sampled loop, x = (e, e'), is x+ = A x with
 *      A = [1 - kp dt^2/2, dt - kd dt^2/2; -kp dt, 1 - kd dt],
 *    characteristic polynomial z^2 - (2 - kd dt - kp dt^2/2) z + (1 - kd dt + kp dt^2/2). Jury's
 *    conditions for z^2 + a1 z + a0 (p(1) > 0, p(-1) > 0, |a0| < 1) give, for kp > 0:
 *      kp dt^2 > 0,   kd dt < 2,   kp dt < 2 kd
 *    (with kp = 0 a pole stays at z = 1: a velocity loop, kd dt < 2 alone). Jury, "Sampled-Data
 *    Control Systems" (1958); Franklin, Powell, Workman, "Digital Control of Dynamic Systems",
 *    3rd ed., sec. 4.5 and 4.3.4 (ZOH discretisation).
 *  - an integral needs a bound: ki > 0 needs i_limit > 0;
 *  - a live change of character (feas_gain_character);
 *  - a payload's gravity torque with the arm's own within every joint's torque limit.
 * Units SI, joint side; messages name the joint and the numbers.
 */
#ifndef ARMD_FEASIBLE_H
#define ARMD_FEASIBLE_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"

/* The largest pose grid feas_payload checks over the joint ranges (gravity evaluations). */
#define FEAS_GRID_MAX 4096

/* Joint name's kp, kd against the sampled loop's bounds at period dt [s] (above): 0, or -1 with
 * why ("joint NAME: kd dt = ... must be below 2 ..."). kp [1/s^2], kd [1/s]. */
int feas_gains_stable(const char *name, double kp, double kd, double dt, char *why, size_t len);

/* A lower bound of joint j's inertia H_jj(q) over every pose [kg m^2|kg]: its rotor (armature)
 * and its own link, which turns with it (the links beyond it only add); the diagonal of H at
 * q = 0 with the links beyond j and the payload massless. 0 when the model cannot be built. */
double feas_own_inertia(const armd_config *cfg, int j);

/* The damping stop (tau = G(q) - D qd) on joint name, inertia at least h, sampled at dt: the
 * velocity steps as qd+ = (1 - D dt / h) qd, stable for D dt < 2 h. 0, or -1 with why. */
int feas_damping_stable(const char *name, double damping, double h, double dt, char *why,
                        size_t len);

/* ki > 0 needs i_limit > 0 (else the integral grows without bound): 0, or -1 with why. */
int feas_integral(const char *name, double ki, double i_limit, char *why, size_t len);

/* A change of joint name's gains from (kp, kd, ki) old to new that changes the law's character,
 * refused while the arm moves: a gain to or from zero; kp or kd or ki more than doubled or
 * halved; the damping ratio kd / (2 sqrt(kp)) crossing from under-damped (below 1/sqrt(2): the
 * error overshoots by more than 4.3 %) to over-damped (above 1) or back; a change within the
 * band [1/sqrt(2), 1] or into it passes. 0 (the same character), or -1 with why. */
int feas_gain_character(const char *name, const double old[3], const double nu[3], char *why,
                        size_t len);

/* A payload against cfg's arm: payload->mass above cfg->max_payload (when set); then the gravity
 * torque G(q) of the arm with the payload (RNEA at zero velocity and acceleration) above a
 * joint's torque limit where the arm without it is within (so a payload is refused for what it
 * adds), at the present pose q (NULL: none), then over a grid of the joint ranges: each joint at
 * its limits and the multiples of pi/2 between (revolute ones modulo 2 pi), the limits dropped
 * where the grid would exceed FEAS_GRID_MAX poses, the grid skipped if it still would. 0, or -1
 * with why naming the joint, the pose and the N m needed against the limit. */
int feas_payload(const armd_config *cfg, const dyn_payload *payload, const double *q, char *why,
                 size_t len);

/* "at the present pose", or "at q = Q1 .. Qn (within the joint ranges)": where a pose check
 * found what it reports. */
void feas_where(const double *q, int n, bool present, char *out, size_t len);

/* Calls visit(ctx, q) on every pose of feas_payload's grid over the joint ranges (each joint at
 * its limits and the multiples of pi/2 between, at most FEAS_GRID_MAX poses; none when even
 * the quarter turns exceed it) until it returns non-zero: -1 then, else 0. */
int feas_grid_visit(const armd_config *cfg, int (*visit)(void *ctx, const double *q), void *ctx);

/* The cartesian_impedance law's spring and damper against the sampled loop at period dt =
 * 1 / rate_hz, at the present pose q (NULL: none) and over feas_grid_visit's grid. The modes
 * of the spring K = diag(stiffness) against the task inertia Lambda have omega^2 the
 * eigenvalues of K^1/2 A K^1/2 (A = Lambda^-1 of dyn_task_inertia, known at every pose); the
 * law damps each with a ratio between the smallest and the largest configured zeta (of the
 * stiff axes), so feas_gains_stable's bounds for kp = omega^2, kd = 2 zeta omega become
 * omega dt < 4 zeta_min and zeta_max omega dt < 1, for the fastest mode. The mass is the arm's
 * with payload. 0, or -1 with why ("AXIS: the spring's fastest mode ... at q = ..."). */
int feas_impedance(const armd_config *cfg, const cfg_impedance *imp, const dyn_payload *payload,
                   const double *q, char *why, size_t len);

#endif
