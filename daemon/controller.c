/*
 * controller.c — computed-torque, PD + gravity and gravity-compensation laws, torque clamp and
 * rate limit (see controller.h). Computed torque: Craig, "Introduction to Robotics", ch. 10
 * (tau = M(q) a + V + G + F with a = qdd_d + Kv e' + Kp e + Ki int e); the Newton-Euler
 * recursion evaluates it in one pass (seed 000, Luh-Walker-Paul).
 */
#include "daemon/controller.h"

#include "daemon/impedance.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void law_params_from_config(law_params *p, const armd_config *cfg)
{
    memset(p, 0, sizeof *p);
    p->n = cfg->n_joints;
    p->law = cfg->controller;
    for (int j = 0; j < p->n; j++) {
        const cfg_joint *cj = &cfg->joint[j];
        snprintf(p->name[j], CFG_NAME_MAX, "%s", cj->name);
        p->kp[j] = cj->kp;
        p->kd[j] = cj->kd;
        p->ki[j] = cj->ki;
        p->i_limit[j] = cj->i_limit;
        p->torque[j] = cj->torque;
        p->torque_rate[j] = cj->torque_rate_limit;
        p->damping[j] = cj->damping;
        p->lower[j] = cj->lower;
        p->upper[j] = cj->upper;
        p->velocity[j] = cj->velocity;
        p->acceleration[j] = cj->acceleration;
        p->following_error[j] = cj->following_error;
        p->collision_threshold[j] = cj->collision_threshold;
        p->collision_band[j] = cj->collision_band;
    }
    p->safety = cfg->safety;
    p->trajectory = cfg->trajectory;
    p->impedance = cfg->impedance;
    p->velocity_source = cfg->velocity_source;
    p->velocity_filter_hz = cfg->velocity_filter_hz;
    p->coulomb_velocity = cfg->coulomb_velocity;
    p->coulomb_width = cfg->coulomb_width;
    p->viscous_velocity = cfg->viscous_velocity;
}

void law_reset(law_state *s, int n)
{
    for (int j = 0; j < n; j++) s->integral[j] = s->tau_prev[j] = 0;
}

/* Integrates e dt into s->integral with the anti-windup bound |I| <= i_limit. */
static void integrate(const law_params *p, const double *e, double dt, law_state *s)
{
    for (int j = 0; j < p->n; j++) {
        double i = s->integral[j] + e[j] * dt, lim = p->i_limit[j];
        if (lim > 0)
            i = fmax(-lim, fmin(lim, i));
        else if (p->ki[j] == 0)
            i = 0;
        s->integral[j] = i;
    }
}

void law_compute(cfg_controller law, const law_params *p, const law_dyn *dy, const double *q,
                 const double *qd, const double *q_des, const double *qd_des, const double *qdd_des,
                 double dt, law_state *s, double *tau)
{
    int n = p->n;
    double e[CFG_MAX_JOINTS] = {0}, aux[CFG_MAX_JOINTS] = {0}, v[CFG_MAX_JOINTS];
    for (int j = 0; j < n; j++) e[j] = q_des[j] - q[j];
    switch (law) {
    case CTRL_COMPUTED_TORQUE:
        integrate(p, e, dt, s);
        for (int j = 0; j < n; j++)
            aux[j] = qdd_des[j] + p->kd[j] * (qd_des[j] - qd[j]) + p->kp[j] * e[j] +
                     p->ki[j] * s->integral[j];
        if (p->coulomb_velocity == COULOMB_MEASURED && p->viscous_velocity == VISCOUS_MEASURED) {
            dy->f->rnea(dy->m, dy->d, q, qd, aux, NULL, DYN_ALL, tau);
            break;
        }
        dy->f->rnea(dy->m, dy->d, q, qd, aux, NULL, DYN_GRAVITY | DYN_ARMATURE, tau);
        const double *vv = p->viscous_velocity == VISCOUS_DESIRED ? qd_des : qd;
        if (p->coulomb_velocity == COULOMB_MEASURED) {
            /* the model's friction at qd, its viscous part moved to vv: + viscous (vv - qd) */
            double dv[CFG_MAX_JOINTS], zero[CFG_MAX_JOINTS] = {0}, shift[CFG_MAX_JOINTS];
            dy->f->friction(dy->m, qd, aux);
            for (int j = 0; j < n; j++) dv[j] = vv[j] - qd[j];
            dyn_friction_at(dy->m, dv, zero, 1.0, shift);
            for (int j = 0; j < n; j++) aux[j] += shift[j];
        } else {
            for (int j = 0; j < n; j++) v[j] = law_coulomb_velocity(qd[j], qd_des[j]);
            dyn_friction_at(dy->m, vv, v, p->coulomb_width, aux);
        }
        for (int j = 0; j < n; j++) tau[j] += aux[j];
        break;
    case CTRL_PD_GRAVITY:
        integrate(p, e, dt, s);
        dy->f->gravity(dy->m, dy->d, q, tau);
        for (int j = 0; j < n; j++)
            tau[j] += p->kp[j] * e[j] + p->kd[j] * (qd_des[j] - qd[j]) + p->ki[j] * s->integral[j];
        break;
    case CTRL_CARTESIAN_IMPEDANCE:
        law_impedance(p, dy, q, qd, q_des, qd_des, qdd_des, dt, tau);
        break;
    case CTRL_GRAVITY_COMP:
    default:
        dy->f->gravity(dy->m, dy->d, q, tau);
        dy->f->friction(dy->m, qd, aux);
        for (int j = 0; j < n; j++) tau[j] += aux[j];
        break;
    }
}

void law_add_damping(const law_params *p, const double *qd, double *tau)
{
    for (int j = 0; j < p->n; j++) tau[j] -= p->damping[j] * qd[j];
}

void law_damp(const law_params *p, const law_dyn *dy, const double *q, const double *qd,
              double *tau)
{
    dy->f->gravity(dy->m, dy->d, q, tau);
    law_add_damping(p, qd, tau);
}

int law_limit(const law_params *p, double dt, law_state *s, double *tau)
{
    int clamped = 0;
    for (int j = 0; j < p->n; j++) {
        double t = tau[j], lim = p->torque[j];
        if (!isfinite(t)) t = 0; /* never command NaN */
        if (lim > 0 && fabs(t) > lim) {
            t = t > 0 ? lim : -lim;
            clamped++;
        }
        double r = p->torque_rate[j] * dt;
        if (p->torque_rate[j] > 0) t = fmax(s->tau_prev[j] - r, fmin(s->tau_prev[j] + r, t));
        tau[j] = t;
        s->tau_prev[j] = t;
    }
    return clamped;
}
