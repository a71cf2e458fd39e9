/*
 * impedance.c — the cartesian_impedance law (impedance.h): a spring and a damper at the tool
 * frame origin per base-frame axis, mapped to joint torques through the tool Jacobian, on top of
 * the model's inverse dynamics. Hogan, "Impedance control" (1985); the law as libfranka's
 * cartesian_impedance_control example writes it; the damper by the modes of the spring against
 * Khatib's task inertia (Albu-Schaeffer et al., "Cartesian impedance control of redundant
 * robots: recent results with the DLR-light-weight-arms", ICRA 2003); on a redundant arm the
 * joints' posture in the dynamically consistent null space (Khatib, IEEE J. Robotics and
 * Automation 1987).
 */
#include "daemon/impedance.h"

#include <math.h>

double law_impedance_damping(double K, double zeta, double guide, double lambda, double light,
                             double dt)
{
    if (!(light > 0)) return 0;
    return fmin(K > 0 ? 2 * zeta * sqrt(K * lambda) : guide, light / dt);
}

void law_impedance_damping_matrix(const cfg_impedance *imp, int full, const double A[36],
                                  const double Lambda[36], double dt, double D[36])
{
    bool modal = full == 0;
    for (int i = 0; i < 6; i++) modal = modal && imp->stiffness[i] > 0;
    for (int i = 0; i < 36; i++) D[i] = 0;
    if (!modal) {
        for (int i = 0; i < 6; i++) {
            const double a = A[i * 6 + i], light = a > 0 && isfinite(1 / a) ? 1 / a : 0;
            D[i * 6 + i] = law_impedance_damping(imp->stiffness[i], imp->damping_ratio[i],
                                                 imp->guide_damping[i / 3],
                                                 full == 0 ? Lambda[i * 6 + i] : light, light, dt);
        }
        return;
    }
    /* B = S^-1 Lambda S^-1 = V diag(mu) V^T, S = diag(sqrt K): the modes y = V^T S x move as
     * mu y'' + y = 0; D = 2 Z^1/2 S V diag(sqrt mu) V^T S Z^1/2 gives each one its ratio. */
    double s[6], B[36], mu[6], V[36];
    for (int i = 0; i < 6; i++) s[i] = sqrt(imp->stiffness[i]);
    for (int i = 0; i < 36; i++) B[i] = Lambda[i] / (s[i / 6] * s[i % 6]);
    dyn_sym_eigen(6, B, mu, V);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double r = 0;
            for (int k = 0; k < 6; k++) r += V[i * 6 + k] * sqrt(fmax(mu[k], 0)) * V[j * 6 + k];
            D[i * 6 + j] =
                2 * sqrt(imp->damping_ratio[i] * imp->damping_ratio[j]) * s[i] * r * s[j];
        }
}

int law_impedance(const law_params *p, const law_dyn *dy, const double *q, const double *qd,
                  const double *q_des, const double *qd_des, const double *qdd_des, double dt,
                  double *tau)
{
    const int n = p->n;
    double target[12], pose[12], e[6], J[6 * CFG_MAX_JOINTS], A[36], Lambda[36], D[36];
    double aux[CFG_MAX_JOINTS], v[CFG_MAX_JOINTS], acc[CFG_MAX_JOINTS];
    dy->f->fk(dy->m, dy->d, q_des, target);
    dy->f->fk(dy->m, dy->d, q, pose);
    dyn_pose_error(target, pose, e);
    const int full = dyn_task_inertia(dy->m, dy->d, q, J, A, Lambda);
    if (full < 0) {
        for (int j = 0; j < n; j++) tau[j] = NAN; /* the tick faults on it */
        return -1;
    }
    law_impedance_damping_matrix(&p->impedance, full, A, Lambda, dt, D);
    double rate[6], F[6]; /* rate = x_des' - x' = J (qd_des - qd), J at the measured pose */
    for (int i = 0; i < 6; i++) {
        rate[i] = 0;
        for (int j = 0; j < n; j++) rate[i] += J[i * n + j] * (qd_des[j] - qd[j]);
    }
    for (int i = 0; i < 6; i++) {
        F[i] = p->impedance.stiffness[i] * e[i];
        for (int k = 0; k < 6; k++) F[i] += D[i * 6 + k] * rate[k];
    }
    /* acc = qdd_des + a0, a0 the posture's acceleration in the joints the tool leaves free */
    for (int j = 0; j < n; j++) acc[j] = qdd_des[j];
    if (n > 6 && full == 0) {
        double Ja[6] = {0};
        for (int j = 0; j < n; j++) {
            const double a0 = p->kp[j] * (q_des[j] - q[j]) + p->kd[j] * (qd_des[j] - qd[j]);
            acc[j] += a0;
            for (int i = 0; i < 6; i++) Ja[i] += J[i * n + j] * a0;
        }
        for (int i = 0; i < 6; i++) /* F -= Lambda J a0: the part of H a0 the tool would feel */
            for (int k = 0; k < 6; k++) F[i] -= Lambda[i * 6 + k] * Ja[k];
    }
    dy->f->rnea(dy->m, dy->d, q, qd, acc, NULL, DYN_GRAVITY | DYN_ARMATURE, tau);
    if (p->coulomb_velocity == COULOMB_MEASURED) {
        dy->f->friction(dy->m, qd, aux);
    } else {
        for (int j = 0; j < n; j++) v[j] = law_coulomb_velocity(qd[j], qd_des[j]);
        dyn_friction_at(dy->m, qd, v, p->coulomb_width, aux);
    }
    for (int j = 0; j < n; j++) {
        double t = aux[j];
        for (int i = 0; i < 6; i++) t += J[i * n + j] * F[i];
        tau[j] += t;
    }
    return 0;
}
