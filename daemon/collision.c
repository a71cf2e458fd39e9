/*
 * collision.c — the generalized-momentum observer and its thresholds (see collision.h).
 */
#include "daemon/collision.h"

#include <math.h>
#include <string.h>

/* beta = C^T qd - G(q) - tau_f(qd) [N m|N] and p = H qd at (q, qd). */
static void momentum_terms(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                           double *p, double *beta)
{
    int n = dyn_model_dof(m);
    double ct[CFG_MAX_JOINTS], g[CFG_MAX_JOINTS], f[CFG_MAX_JOINTS];
    dyn_momentum(m, d, q, qd, DYN_ARMATURE, p, ct);
    dyn_gravity(m, d, q, g);
    dyn_friction(m, qd, f);
    for (int j = 0; j < n; j++) beta[j] = ct[j] - g[j] - f[j];
}

void coll_start(coll_observer *o, const dyn_model *m, dyn_data *d, const double *q,
                const double *qd)
{
    int n = dyn_model_dof(m);
    momentum_terms(m, d, q, qd, o->p0, o->beta);
    memset(o->integral, 0, sizeof o->integral);
    memset(o->r, 0, sizeof o->r);
    memset(o->tau_applied, 0, sizeof(double) * (size_t)n);
    o->running = true;
}

void coll_stop(coll_observer *o, int n)
{
    o->running = false;
    memset(o->r, 0, sizeof(double) * (size_t)n);
}

void coll_applied(coll_observer *o, const double *tau, int n)
{
    memcpy(o->tau_applied, tau, sizeof(double) * (size_t)n);
}

/* The momentum balance dp/dt = tau_m + C^T qd - G - tau_f + tau_ext (H' = C + C^T) integrated
 * with the previous residual standing in for tau_ext; G and C^T qd in the model's gravity and
 * frames as dyn_rnea uses them, friction the model's (viscous + smoothed Coulomb). The
 * velocity-dependent terms by the trapezoid rule over the tick, the held motor torque exactly. */
void coll_update(coll_observer *o, const dyn_model *m, dyn_data *d, double gain, const double *q,
                 const double *qd, double dt)
{
    int n = dyn_model_dof(m);
    double p[CFG_MAX_JOINTS], beta[CFG_MAX_JOINTS];
    double h = dt;
    momentum_terms(m, d, q, qd, p, beta);
    for (int j = 0; j < n; j++) {
        o->integral[j] += (o->tau_applied[j] + 0.5 * (o->beta[j] + beta[j]) + o->r[j]) * h;
        o->beta[j] = beta[j];
        o->r[j] = gain * (p[j] - o->p0[j] - o->integral[j]);
    }
}

/* threshold_j at qd_j [N m|N]: the fixed part plus the velocity band (friction uncertainty). */
static double threshold(const law_params *p, int j, double qd)
{
    return p->collision_threshold[j] + p->collision_band[j] * fabs(qd);
}

int coll_detect(const coll_observer *o, const law_params *p, const double *qd, double *ratio)
{
    int hit = -1;
    double worst = 0;
    for (int j = 0; j < p->n; j++) {
        double x = fabs(o->r[j]) / threshold(p, j, qd[j]);
        if (!(x <= worst)) { /* NaN counts: a non-finite residual is a detection */
            worst = x;
            if (!(x <= 1)) hit = j;
        }
    }
    *ratio = worst;
    return hit;
}

bool coll_clear(const coll_observer *o, const law_params *p, const double *qd)
{
    for (int j = 0; j < p->n; j++)
        if (!(fabs(o->r[j]) < 0.5 * threshold(p, j, qd[j]))) return false;
    return true;
}
