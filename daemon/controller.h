/*
 * controller.h — armd's control laws and torque limits, one call per tick, no allocation
 * (the types every law shares: law.h). Units: SI, joint side.
 */
#ifndef ARMD_CONTROLLER_H
#define ARMD_CONTROLLER_H

#include "daemon/law.h"

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

/* Adds viscous damping: tau -= D qd, D the [joint] damping gains [N m s/rad|N s/m]. */
void law_add_damping(const law_params *p, const double *qd, double *tau);

/* Damping stop torque: tau = -D qd + G(q). */
void law_damp(const law_params *p, const law_dyn *dy, const double *q, const double *qd,
              double *tau);

/* Clamps |tau_j| <= torque_j, then limits |tau_j - tau_prev_j| <= torque_rate_j dt (rate 0 =
 * none), stores the result as tau_prev. Returns the number of joints the clamp acted on. */
int law_limit(const law_params *p, double dt, law_state *s, double *tau);

#endif
