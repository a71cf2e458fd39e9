/* mass_matrix.c — joint-space inertia matrix H(q) by composite rigid bodies and by strobing,
 * and forward dynamics by Cholesky of H (seed 000 §3 and §7; seed 001 §2.2). */
#include <math.h>
#include <string.h>

#include "dynamics/dyn_internal.h"

/* H by the composite-rigid-body method: composite bodies accumulated inward (each in M_i), then
 * for joint i the momentum (L, K) of composite i moving with unit joint velocity is carried
 * towards the base, giving column i: H_ji = S_j . (L, K) in M_j. */
void dyn_mass_matrix(const dyn_model *m, dyn_data *d, const double *q, unsigned flags, double *H)
{
    const int n = m->n;
    for (int i = 0; i < n; i++) {
        dyn_joint_transform(&m->j[i], q[i], d->R[i], d->p[i]);
        d->comp[i] = m->j[i].body;
    }
    for (int i = n - 1; i > 0; i--) {
        dyn_frame f;
        memcpy(f.R, d->R[i], sizeof f.R);
        memcpy(f.p, d->p[i], sizeof f.p);
        dyn_body b;
        dyn_body_transform(&f, &d->comp[i], &b);
        dyn_body_add(&d->comp[i - 1], &b);
    }
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
            dyn_rot(d->R[j], L, Lp);
            dyn_rot(d->R[j], K, Kp);
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
    dyn_mass_matrix(m, d, q, flags, H);
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
    }
    return 0;
}
