/*
 * impedance.c — the cartesian_impedance law (controller.h): a spring and a damper at the tool
 * frame origin per base-frame axis, mapped to joint torques through the tool Jacobian, on top of
 * the model's inverse dynamics. Hogan, "Impedance control" (1985); the damper against the task
 * inertia of Khatib (1987); the law as libfranka's cartesian_impedance_control example writes it.
 */
#include "daemon/impedance.h"

#include <math.h>

/* The velocity whose sign the Coulomb feed-forward takes, as computed torque's (controller.c):
 * the desired one, or the measured one where it is the desired way and faster. */
static double coulomb_sign_velocity(double qd, double qd_des)
{
    return qd * qd_des > 0 && fabs(qd) > fabs(qd_des) ? qd : qd_des;
}

double law_impedance_damping(double K, double zeta, double guide, double lambda, double light,
                             double dt)
{
    if (!(light > 0)) return 0;
    return fmin(K > 0 ? 2 * zeta * sqrt(K * lambda) : guide, light / dt);
}

int law_impedance(const law_params *p, const law_dyn *dy, const double *q, const double *qd,
                  const double *q_des, const double *qd_des, const double *qdd_des, double dt,
                  double *tau)
{
    const int n = p->n;
    double target[12], pose[12], e[6], J[6 * CFG_MAX_JOINTS], lam[6], light[6];
    double aux[CFG_MAX_JOINTS], v[CFG_MAX_JOINTS];
    dyn_fk(dy->m, dy->d, q_des, NULL, target);
    dyn_fk(dy->m, dy->d, q, NULL, pose);
    dyn_pose_error(target, pose, e);
    if (dyn_task_inertia(dy->m, dy->d, q, J, lam, light) != 0) {
        for (int j = 0; j < n; j++) tau[j] = NAN; /* the tick faults on it */
        return -1;
    }
    double F[6];
    for (int i = 0; i < 6; i++) {
        double rate = 0; /* (x_des' - x')_i = J_i (qd_des - qd), J at the measured pose */
        for (int j = 0; j < n; j++) rate += J[i * n + j] * (qd_des[j] - qd[j]);
        const double K = p->impedance.stiffness[i];
        const double D =
            law_impedance_damping(K, p->impedance.damping_ratio[i],
                                  p->impedance.guide_damping[i / 3], lam[i], light[i], dt);
        F[i] = K * e[i] + D * rate;
    }
    dy->f->rnea(dy->m, dy->d, q, qd, qdd_des, NULL, DYN_GRAVITY | DYN_ARMATURE, tau);
    if (p->coulomb_velocity == COULOMB_MEASURED) {
        dy->f->friction(dy->m, qd, aux);
    } else {
        for (int j = 0; j < n; j++) v[j] = coulomb_sign_velocity(qd[j], qd_des[j]);
        dyn_friction_at(dy->m, qd, v, p->coulomb_width, aux);
    }
    for (int j = 0; j < n; j++) {
        double t = aux[j];
        for (int i = 0; i < 6; i++) t += J[i * n + j] * F[i];
        tau[j] += t;
    }
    return 0;
}
