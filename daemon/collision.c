/*
 * collision.c — the generalized-momentum observer and its thresholds (see collision.h).
 */
#include "daemon/collision.h"

#include <math.h>
#include <string.h>

/* beta = C^T qd - G(q) - tau_f(qd) [N m|N], p = H qd and the friction tau_f at (q, qd). */
static void momentum_terms(const law_dyn *dy, const double *q, const double *qd, double *p,
                           double *beta, double *f)
{
    int n = dyn_model_dof(dy->m);
    double ct[CFG_MAX_JOINTS], g[CFG_MAX_JOINTS];
    dy->f->momentum(dy->m, dy->d, q, qd, DYN_ARMATURE, p, ct);
    dy->f->gravity(dy->m, dy->d, q, g);
    dy->f->friction(dy->m, qd, f);
    for (int j = 0; j < n; j++) beta[j] = ct[j] - g[j] - f[j];
}

void coll_start(coll_observer *o, const law_dyn *dy, const double *q, const double *qd)
{
    int n = dyn_model_dof(dy->m);
    momentum_terms(dy, q, qd, o->p0, o->beta, o->friction);
    memset(o->integral, 0, sizeof o->integral);
    memset(o->r, 0, sizeof o->r);
    memset(o->allow, 0, sizeof o->allow);
    memset(o->tau_applied, 0, sizeof(double) * (size_t)n);
    o->running = true;
}

void coll_stop(coll_observer *o, int n)
{
    o->running = false;
    memset(o->r, 0, sizeof(double) * (size_t)n);
    memset(o->allow, 0, sizeof(double) * (size_t)n);
}

void coll_applied(coll_observer *o, const double *tau, int n)
{
    memcpy(o->tau_applied, tau, sizeof(double) * (size_t)n);
}

/* The momentum balance dp/dt = tau_m + C^T qd - G - tau_f + tau_ext (H' = C + C^T) over the
 * time h since the last update, G and C^T qd in the model's gravity and frames as dyn_rnea
 * uses them, friction the model's (viscous + smoothed Coulomb): the motor torque held over the
 * tick exactly, the velocity-dependent terms by the trapezoid rule, so the mean external torque
 * over h is e = (p - p_last - (tau_m + (beta_last + beta) / 2) h) / h. Then the observer's
 * lag dr/dt = K_O (e - r) solved exactly over h, r = e + (r_last - e) exp(-K_O h), and the
 * integral kept so that r = K_O (p - p0 - integral). Euler's step, r += K_O h (e - r), agrees
 * for K_O h << 1 but overshoots e once K_O h > 1 and amplifies for K_O h > 2: a 30 ms hold-up
 * at K_O = 100/s tripled a stale state's spike into a false collision.
 * The friction term is the one the trapezoid can get badly wrong: near a velocity reversal the
 * smoothed Coulomb torque swings by its whole band within a few mrad/s, and a step that spans
 * such a swing (a hold-up of tens of ms just there, or the joint sticking between the two
 * samples) integrates it as the mean of its two ends. For a friction that changes monotonically
 * over the step the error in e is at most B = |tau_f - tau_f_last| / 2; that error reaches r
 * through the same lag, so allow = B + (allow_last - B) exp(-K_O h) bounds what it adds to r,
 * and the detection adds allow to the threshold. Away from reversals B is negligible. */
void coll_update(coll_observer *o, const law_dyn *dy, double gain, const double *q,
                 const double *qd, double dt)
{
    int n = dyn_model_dof(dy->m);
    double p[CFG_MAX_JOINTS], beta[CFG_MAX_JOINTS], f[CFG_MAX_JOINTS];
    double h = dt, decay = exp(-gain * h);
    momentum_terms(dy, q, qd, p, beta, f);
    for (int j = 0; j < n; j++) {
        double dp = p[j] - o->p0[j] - o->integral[j] - o->r[j] / gain; /* p - p_last */
        double e = (dp - (o->tau_applied[j] + 0.5 * (o->beta[j] + beta[j])) * h) / h;
        double b = 0.5 * fabs(f[j] - o->friction[j]);
        o->r[j] = e + (o->r[j] - e) * decay;
        o->allow[j] = b + (o->allow[j] - b) * decay;
        o->integral[j] = p[j] - o->p0[j] - o->r[j] / gain;
        o->beta[j] = beta[j];
        o->friction[j] = f[j];
    }
}

/* threshold_j at qd_j [N m|N] without the allowance: the fixed part plus the velocity band. */
static double threshold(const law_params *p, int j, double qd)
{
    return p->collision_threshold[j] + p->collision_band[j] * fabs(qd);
}

double coll_threshold(const coll_observer *o, const law_params *p, int j, double qd)
{
    return threshold(p, j, qd) + o->allow[j];
}

int coll_detect(const coll_observer *o, const law_params *p, const double *qd, double *ratio)
{
    int hit = -1;
    double worst = 0;
    for (int j = 0; j < p->n; j++) {
        double x = fabs(o->r[j]) / coll_threshold(o, p, j, qd[j]);
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
