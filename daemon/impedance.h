/*
 * impedance.h — the cartesian_impedance control law: the tool held by a spring and a damper per
 * base-frame axis ([impedance] in armd.conf(5)). Control thread; no allocation.
 */
#ifndef ARMD_IMPEDANCE_H
#define ARMD_IMPEDANCE_H

#include "daemon/law.h"

/* The damper of one task axis on its own [N s/m | N m s/rad]: D = 2 zeta sqrt(K lambda), lambda
 * the axis's task inertia [kg | kg m^2]; without a spring (K = 0: a free axis, guided by hand)
 * D = guide; either capped at light / dt (light = 1 / A_ii, the mass felt along the axis alone)
 * so that D dt / m stays below the sampled loop's bound of 2 where lambda grows near a
 * singularity. 0 on an axis the tool cannot move along (light 0). */
double law_impedance_damping(double K, double zeta, double guide, double lambda, double light,
                             double dt);

/* The law's damping matrix D (6 x 6, row-major) at one pose, from dyn_task_inertia's A and
 * Lambda (full: its return value). With every axis stiff and Lambda known (full == 0), by the
 * modes of the spring K = diag(stiffness) against Lambda: with S = diag(sqrt K) and S^-1 Lambda
 * S^-1 = V diag(mu) V^T, D = 2 Z^1/2 S V diag(sqrt mu) V^T S Z^1/2 (Z = diag(damping_ratio)),
 * so that each mode of Lambda x'' + D x' + K x = 0 has the configured damping ratio (exactly
 * when all six are equal; Albu-Schaeffer et al. 2003). Else (a free axis, fewer than 6 joints, a
 * singularity) diagonal, per axis law_impedance_damping with Lambda_ii (or 1 / A_ii). */
void law_impedance_damping_matrix(const cfg_impedance *imp, int full, const double A[36],
                                  const double Lambda[36], double dt, double D[36]);

/* The torque [N m|N] before limits: with the target pose X_des = FK(q_des) and X = FK(q) (the
 * configured tool frame, base frame), e = dyn_pose_error(X_des, X) (position [m], rotation
 * vector [rad]), J the tool Jacobian at q,
 *   F = K e + D J (qd_des - qd)                       (K diagonal; D: the damping matrix)
 *   tau = J^T F + RNEA(q, qd, qdd_des) + friction     (gravity, Coriolis, armature; the plan's
 *                                                      acceleration fed forward in joint space)
 * the friction the model's viscous term at qd and its Coulomb term as computed torque's: with
 * coulomb_velocity = desired at the sign of qd_des (qd where it is the same way and faster),
 * blended over coulomb_width; with measured, the model's friction at qd.
 * On an arm of more than 6 joints (with Lambda known), the joints' PD gains hold the posture
 * q_des in the null space the tool leaves free: with a0 = kp (q_des - q) + kd (qd_des - qd),
 *   tau += (I - J^T Lambda J H^-1) H a0 = H a0 - J^T Lambda J a0
 * the dynamically consistent null-space projection (Khatib 1987), which exerts no force at the
 * tool (Lambda J H^-1 of it is 0); H a0 rides in the RNEA call (qdd_des + a0), one call as
 * before.
 * Returns 0, or -1 with tau NaN (the tick faults) where the mass matrix is singular. */
int law_impedance(const law_params *p, const law_dyn *dy, const double *q, const double *qd,
                  const double *q_des, const double *qd_des, const double *qdd_des, double dt,
                  double *tau);

#endif
