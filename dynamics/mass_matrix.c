/* mass_matrix.c — joint-space inertia matrix H(q) by composite rigid bodies and by strobing,
 * and forward dynamics by Cholesky of H (seed 000 §3 and §7; seed 001 §2.2). */
#include <math.h>
#include <string.h>

#include "dynamics/dyn_internal.h"

/* Adds body b (in M_i) to acc (in M_{i-1}): h and I turned by R = Rx(alpha) Rz(theta), then
 * moved to the parent origin p: h' = R h + m p, I' = R I R^T + 2 (p.Rh) E - Rh p^T - p Rh^T
 * + m (|p|^2 E - p p^T) (the parallel-axis form of dyn_body_transform). */
static inline void body_to_parent(const dyn_joint *jt, const double cs[2], const double p[3],
                                  const dyn_body *b, dyn_body *acc)
{
    const double c = cs[0], s = cs[1], ca = jt->ca, sa = jt->sa, m = b->m;
    double I[6] = {b->I[0], b->I[1], b->I[2], b->I[3], b->I[4], b->I[5]}, h[3];
    dyn_sym_turn_z(c, s, c * c, s * s, c * s, I);
    dyn_sym_turn_x(jt, ca * ca, sa * sa, ca * sa, I);
    dyn_to_parent(jt, c, s, b->h, h);
    const double ph = p[0] * h[0] + p[1] * h[1] + p[2] * h[2];
    const double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
    const double dg = 2.0 * ph + m * pp;
    acc->m += m;
    acc->I[0] += I[0] + dg - 2.0 * h[0] * p[0] - m * p[0] * p[0];
    acc->I[1] += I[1] - h[0] * p[1] - p[0] * h[1] - m * p[0] * p[1];
    acc->I[2] += I[2] - h[0] * p[2] - p[0] * h[2] - m * p[0] * p[2];
    acc->I[3] += I[3] + dg - 2.0 * h[1] * p[1] - m * p[1] * p[1];
    acc->I[4] += I[4] - h[1] * p[2] - p[1] * h[2] - m * p[1] * p[2];
    acc->I[5] += I[5] + dg - 2.0 * h[2] * p[2] - m * p[2] * p[2];
    acc->h[0] += h[0] + m * p[0];
    acc->h[1] += h[1] + m * p[1];
    acc->h[2] += h[2] + m * p[2];
}

/* H by the composite-rigid-body method: composite bodies accumulated inward (each in M_i), then
 * for joint i the momentum (L, K) of composite i moving with unit joint velocity is carried
 * towards the base, giving column i: H_ji = S_j . (L, K) in M_j. */
static void mass_matrix_core(const dyn_model *m, dyn_data *d, unsigned flags, double *H)
{
    const int n = m->n;
    for (int i = 0; i < n; i++) d->comp[i] = m->j[i].body;
    for (int i = n - 1; i > 0; i--)
        body_to_parent(&m->j[i], d->cs[i], d->p[i], &d->comp[i], &d->comp[i - 1]);
    for (int i = 0; i < n; i++) {
        const dyn_joint *jt = &m->j[i];
        const dyn_body *c = &d->comp[i];
        /* revolute S = (w=z, v=0): L = z x h, K = I z; prismatic S = (0, z): L = m z, K = h x z */
        double L[3] = {-jt->sr * c->h[1], jt->sr * c->h[0], jt->pr * c->m};
        double K[3] = {jt->sr * c->I[2] + jt->pr * c->h[1], jt->sr * c->I[4] - jt->pr * c->h[0],
                       jt->sr * c->I[5]};
        double hii = jt->sr * K[2] + jt->pr * L[2];
        if (flags & DYN_ARMATURE) hii += jt->armature;
        H[i * n + i] = hii;
        for (int j = i; j > 0; j--) {
            double Lp[3], Kp[3], pxL[3];
            const dyn_joint *jj = &m->j[j];
            dyn_to_parent(jj, d->cs[j][0], d->cs[j][1], L, Lp);
            dyn_to_parent(jj, d->cs[j][0], d->cs[j][1], K, Kp);
            dyn_cross(d->p[j], Lp, pxL);
            for (int k = 0; k < 3; k++) {
                L[k] = Lp[k];
                K[k] = Kp[k] + pxL[k];
            }
            const dyn_joint *jp = &m->j[j - 1];
            double hij = jp->sr * K[2] + jp->pr * L[2];
            H[(j - 1) * n + i] = hij;
            H[i * n + (j - 1)] = hij;
        }
    }
}

/* H(q) by composite rigid bodies (mass_matrix_core), after the joint transforms. */
void dyn_mass_matrix(const dyn_model *m, dyn_data *d, const double *q, unsigned flags, double *H)
{
    dyn_transforms(m, d, q);
    mass_matrix_core(m, d, flags, H);
}

/* H column j = inverse dynamics with qdd = e_j, qd = 0, no gravity (seed 000 end of §3). */
void dyn_mass_matrix_strobe(const dyn_model *m, dyn_data *d, const double *q, unsigned flags,
                            double *H)
{
    const int n = m->n;
    memset(d->zero, 0, sizeof d->zero);
    memset(d->tmp2, 0, sizeof d->tmp2);
    for (int j = 0; j < n; j++) {
        d->tmp2[j] = 1.0;
        dyn_rnea_core(m, d, q, d->zero, d->tmp2, 0, NULL, d->tmp);
        d->tmp2[j] = 0.0;
        for (int i = 0; i < n; i++) H[i * n + j] = d->tmp[i];
        if (flags & DYN_ARMATURE) H[j * n + j] += m->j[j].armature;
    }
}

/* qdd = H^-1 (tau - b), b = rnea(q, qd, 0, wrench, flags): H factored in place as L L^T. */
int dyn_forward_chol(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                     const double *tau, const double *wrench, unsigned flags, double *qdd)
{
    const int n = m->n;
    double *H = d->H, *b = d->tmp;
    memset(d->zero, 0, sizeof d->zero);
    dyn_rnea(m, d, q, qd, d->zero, wrench, flags & ~(unsigned)DYN_ARMATURE, b);
    mass_matrix_core(m, d, flags, H); /* reuses the joint transforms the recursion computed */
    for (int j = 0; j < n; j++) {
        double s = H[j * n + j];
        for (int k = 0; k < j; k++) s -= H[j * n + k] * H[j * n + k];
        if (!(s > 0.0) || !isfinite(s)) return -1;
        double ljj = sqrt(s);
        H[j * n + j] = ljj;
        double inv = 1.0 / ljj;
        for (int i = j + 1; i < n; i++) {
            double t = H[i * n + j];
            for (int k = 0; k < j; k++) t -= H[i * n + k] * H[j * n + k];
            H[i * n + j] = t * inv;
        }
    }
    for (int i = 0; i < n; i++) { /* L y = tau - b */
        double t = tau[i] - b[i];
        for (int k = 0; k < i; k++) t -= H[i * n + k] * qdd[k];
        qdd[i] = t / H[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) { /* L^T x = y */
        double t = qdd[i];
        for (int k = i + 1; k < n; k++) t -= H[k * n + i] * qdd[k];
        qdd[i] = t / H[i * n + i];
        if (!isfinite(qdd[i])) return -1; /* overflowed: H numerically singular */
    }
    return 0;
}
