/*
 * controller.h — armd's control laws and torque limits, one call per tick, no allocation.
 *
 * law_params is the live parameter block (gains, limits, safety thresholds) the control
 * thread reads; the main thread fills a second copy and hands it over between two ticks.
 * Units: SI, joint side. Gains as documented in config.h.
 */
#ifndef ARMD_CONTROLLER_H
#define ARMD_CONTROLLER_H

#include <stdbool.h>

#include "config/config.h"
#include "dynamics/dynamics.h"

typedef struct {
    int n;
    cfg_controller law;
    char name[CFG_MAX_JOINTS][CFG_NAME_MAX];
    double kp[CFG_MAX_JOINTS], kd[CFG_MAX_JOINTS], ki[CFG_MAX_JOINTS], i_limit[CFG_MAX_JOINTS];
    double torque[CFG_MAX_JOINTS], torque_rate[CFG_MAX_JOINTS], damping[CFG_MAX_JOINTS];
    double lower[CFG_MAX_JOINTS], upper[CFG_MAX_JOINTS];
    double velocity[CFG_MAX_JOINTS], acceleration[CFG_MAX_JOINTS];
    double following_error[CFG_MAX_JOINTS];
    double collision_threshold[CFG_MAX_JOINTS], collision_band[CFG_MAX_JOINTS];
    cfg_safety safety;
    cfg_trajectory trajectory;
    cfg_impedance impedance; /* cartesian_impedance's spring and damper per task axis */
    cfg_velocity_source velocity_source;
    double velocity_filter_hz;
    cfg_coulomb_velocity coulomb_velocity; /* computed torque's Coulomb term ... */
    double coulomb_width;                  /* ... and its blend width [rad/s|m/s] */
    cfg_viscous_velocity viscous_velocity; /* computed torque's viscous term: at qd or qd_des */
} law_params;

/* The dynamics a law evaluates: the function table in use (the arm's generated code or the
 * general core, dyn_funcs_for), the model and its workspace. */
typedef struct {
    const dyn_funcs *f;
    const dyn_model *m;
    dyn_data *d;
} law_dyn;

/* Per-run controller memory: the error integral [rad s] and the last commanded torque. */
typedef struct {
    double integral[CFG_MAX_JOINTS];
    double tau_prev[CFG_MAX_JOINTS];
} law_state;

void law_params_from_config(law_params *p, const armd_config *cfg);
void law_reset(law_state *s, int n); /* integral and previous torque to zero */

/* The control torque before limits [N m|N], from measured q, qd and desired q_des, qd_des,
 * qdd_des, over a tick of dt [s]:
 *   computed_torque: e = q_des - q, I += e dt (|I| <= i_limit),
 *                    tau = RNEA(q, qd, qdd_des + Kd (qd_des - qd) + Kp e + Ki I) with gravity
 *                    and armature (one rnea call of the table) + friction: with coulomb_velocity =
 *                    desired, viscous qd + Coulomb(v) blended over |v| < coulomb_width, v =
 *                    qd_des (qd where it has qd_des's sign and is faster); with measured, the
 *                    model's friction at qd; with viscous_velocity = desired, viscous qd_des in
 *                    place of viscous qd;
 *   pd_gravity:      tau = Kp e + Kd (qd_des - qd) + Ki I + G(q);
 *   gravity_comp:    tau = G(q) + friction(qd);
 *   cartesian_impedance: a spring and a damper at the tool (impedance.h, law_impedance). */
void law_compute(cfg_controller law, const law_params *p, const law_dyn *dy, const double *q,
                 const double *qd, const double *q_des, const double *qd_des, const double *qdd_des,
                 double dt, law_state *s, double *tau);

/* The velocity whose sign the laws' Coulomb feed-forward takes (coulomb_velocity = desired)
 * [rad/s|m/s]: qd_des, or qd where it is the desired way and faster (controller.c). */
double law_coulomb_velocity(double qd, double qd_des);

/* Adds viscous damping: tau -= D qd, D the [joint] damping gains [N m s/rad|N s/m]. */
void law_add_damping(const law_params *p, const double *qd, double *tau);

/* Damping stop torque: tau = -D qd + G(q). */
void law_damp(const law_params *p, const law_dyn *dy, const double *q, const double *qd,
              double *tau);

/* Clamps |tau_j| <= torque_j, then limits |tau_j - tau_prev_j| <= torque_rate_j dt (rate 0 =
 * none), stores the result as tau_prev. Returns the number of joints the clamp acted on. */
int law_limit(const law_params *p, double dt, law_state *s, double *tau);

#endif
