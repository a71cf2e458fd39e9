/*
 * traj_plan.c — a plan's storage, segment polynomials and sampling (see traj_plan.h). Spline
 * equations: Biagiotti & Melchiorri, "Trajectory Planning for Automatic Machines and Robots"
 * (2008), cubic Hermite and quintic segments (ch. 2).
 */
#include "daemon/traj_plan.h"

#include <stdlib.h>
#include <string.h>

int traj_plan_alloc(traj_plan *p, int n, int cap)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->cap = cap;
    p->t0 = calloc((size_t)cap, sizeof *p->t0);
    p->h = calloc((size_t)cap, sizeof *p->h);
    p->c = calloc((size_t)cap * (size_t)n * TRAJ_NCOEF, sizeof *p->c);
    if (!p->t0 || !p->h || !p->c) {
        traj_plan_free(p);
        return -1;
    }
    return 0;
}

void traj_plan_free(traj_plan *p)
{
    free(p->t0);
    free(p->h);
    free(p->c);
    p->t0 = p->h = p->c = NULL;
}

/* Cubic Hermite on tau in [0, h]: q(0)=q0, q'(0)=v0, q(h)=q1, q'(h)=v1. */
void traj_cubic(double q0, double v0, double q1, double v1, double h, double c[6])
{
    double d = q1 - q0;
    c[0] = q0;
    c[1] = v0;
    c[2] = (3 * d / h - 2 * v0 - v1) / h;
    c[3] = (-2 * d / h + v0 + v1) / (h * h);
    c[4] = c[5] = 0;
}

/* Quintic on tau in [0, h] matching position, velocity and acceleration at both ends. */
void traj_quintic(double q0, double v0, double a0, double q1, double v1, double a1, double h,
                  double c[6])
{
    double d = q1 - q0, h2 = h * h, h3 = h2 * h;
    c[0] = q0;
    c[1] = v0;
    c[2] = a0 / 2;
    c[3] = (20 * d - (8 * v1 + 12 * v0) * h - (3 * a0 - a1) * h2) / (2 * h3);
    c[4] = (-30 * d + (14 * v1 + 16 * v0) * h + (3 * a0 - 2 * a1) * h2) / (2 * h3 * h);
    c[5] = (12 * d - 6 * (v1 + v0) * h + (a1 - a0) * h2) / (2 * h3 * h2);
}

/* q, qd, qdd of the polynomial c at tau (Horner). */
static void poly_eval(const double c[6], double tau, double *q, double *qd, double *qdd)
{
    *q = c[0] + tau * (c[1] + tau * (c[2] + tau * (c[3] + tau * (c[4] + tau * c[5]))));
    *qd = c[1] + tau * (2 * c[2] + tau * (3 * c[3] + tau * (4 * c[4] + tau * 5 * c[5])));
    *qdd = 2 * c[2] + tau * (6 * c[3] + tau * (12 * c[4] + tau * 20 * c[5]));
}

void traj_sample(const traj_plan *p, double t, int *seg, double *q, double *qd, double *qdd)
{
    if (p->n_seg <= 0) return;
    if (t < 0) t = 0;
    if (t > p->duration) t = p->duration;
    int k = (*seg >= 0 && *seg < p->n_seg) ? *seg : 0;
    if (p->t0[k] > t) k = 0;
    while (k + 1 < p->n_seg && p->t0[k + 1] <= t) k++;
    *seg = k;
    double tau = t - p->t0[k];
    if (tau > p->h[k]) tau = p->h[k];
    for (int j = 0; j < p->n; j++) poly_eval(traj_coef(p, k, j), tau, &q[j], &qd[j], &qdd[j]);
}

void traj_end_state(const traj_plan *p, traj_state *out)
{
    int k = p->n_seg - 1;
    for (int j = 0; j < p->n; j++)
        poly_eval(traj_coef(p, k, j), p->h[k], &out->q[j], &out->qd[j], &out->qdd[j]);
}

void traj_reanchor(traj_plan *p, const traj_state *start)
{
    if (p->n_seg <= 0) return;
    double h = p->h[0];
    for (int j = 0; j < p->n; j++) {
        double *c = traj_coef(p, 0, j), q1, v1, a1;
        poly_eval(c, h, &q1, &v1, &a1);
        if (p->first_quintic)
            traj_quintic(start->q[j], start->qd[j], start->qdd[j], q1, v1, a1, h, c);
        else
            traj_cubic(start->q[j], start->qd[j], q1, v1, h, c);
    }
}
