/*
 * impedance.h — the cartesian_impedance control law: the tool held by a spring and a damper per
 * base-frame axis ([impedance] in armd.conf(5)). Control thread; no allocation.
 */
#ifndef ARMD_IMPEDANCE_H
#define ARMD_IMPEDANCE_H

#include "daemon/controller.h"

/* The damper of one task axis [N s/m | N m s/rad]: D = 2 zeta sqrt(K lambda), lambda the task
 * inertia Lambda_ii of dyn_task_inertia [kg | kg m^2]; without a spring (K = 0: a free axis,
 * guided by hand) D = guide; either capped at light / dt (light the mass felt along the axis
 * alone) so that D dt / m stays below the sampled loop's bound of 2 where Lambda_ii grows near
 * a singularity. 0 on an axis the tool cannot move along (light 0). */
double law_impedance_damping(double K, double zeta, double guide, double lambda, double light,
                             double dt);

/* The torque [N m|N] before limits: with the target pose X_des = FK(q_des) and X = FK(q) (the
 * configured tool frame, base frame), e = dyn_pose_error(X_des, X) (position [m], rotation
 * vector [rad]), J the tool Jacobian at q,
 *   F_i = K_i e_i + D_i J_i (qd_des - qd)            (per axis; D_i: law_impedance_damping)
 *   tau = J^T F + RNEA(q, qd, qdd_des) + friction     (gravity, Coriolis, armature; the plan's
 *                                                      acceleration fed forward in joint space)
 * the friction the model's viscous term at qd and its Coulomb term as computed torque's: with
 * coulomb_velocity = desired at the sign of qd_des (qd where it is the same way and faster),
 * blended over coulomb_width; with measured, the model's friction at qd.
 * Returns 0, or -1 with tau NaN (the tick faults) where the mass matrix is singular. */
int law_impedance(const law_params *p, const law_dyn *dy, const double *q, const double *qd,
                  const double *q_des, const double *qd_des, const double *qdd_des, double dt,
                  double *tau);

#endif
