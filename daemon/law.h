/*
 * law.h — what every control law shares (controller.c's laws, impedance.c's): the live
 * parameter block, the dynamics a law evaluates, the per-run memory, and the Coulomb term's
 * velocity. Units: SI, joint side. Control thread, no allocation.
 */
#ifndef ARMD_LAW_H
#define ARMD_LAW_H

#include <math.h>
#include <stdbool.h>

#include "config/config.h"
#include "dynamics/dynamics.h"

/* The live parameter block (gains, limits, safety thresholds) the control thread reads; the
 * main thread fills a second copy and hands it over between two ticks. Gains as documented in
 * config.h. */
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

/* The velocity whose sign the laws' Coulomb feed-forward takes (coulomb_velocity = desired)
 * [rad/s|m/s]: the desired one, which turns through a reversal on the plan's schedule while the
 * arm sticks and its measured velocity hangs about zero (the measured one flips the term only
 * once the arm has broken free: the reversal's error peak), and which is 0 while holding, so no
 * Coulomb push cycles the arm about its set point; but where the arm moves the desired way
 * faster than desired, the measured one: the friction acting then is the arm's own, fully
 * developed. */
static inline double law_coulomb_velocity(double qd, double qd_des)
{
    return qd * qd_des > 0 && fabs(qd) > fabs(qd_des) ? qd : qd_des;
}

#endif
