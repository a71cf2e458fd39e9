/* momentum.c — the generalized momentum p = H(q) qd and the term C(q,qd)^T qd of the momentum
 * observer, in O(n) from one outward and one inward pass (no matrix of size n^2). */
#include <string.h>

#include "dynamics/dyn_internal.h"

/* Generalized momentum and C^T qd in the moving joint frames M_i (see dynamics.h).
 *
 * Outward: each body's angular velocity w_i and the linear velocity v_i of the origin of M_i,
 * the velocity part of seed 000 eqs 3.15-3.16 (w_i = R^T w_{i-1} + z qd_i for a revolute joint,
 * v_i = R^T (v_{i-1} + w_{i-1} x p_i) + z qd_i for a prismatic one). Its spatial momentum about
 * that origin is, with h = m c and I the inertia about the origin, L = m v + w x h (linear) and
 * N = I w + h x v (angular).
 * Inward: the subtree's momentum F_i = (N_i, L_i) is the body's plus the child's moved to M_i
 * (N += R N_c + p x R L_c, L += R L_c), the same step as the force recursion (eqs 3.19-3.20).
 * The joint axis of M_i is z at the origin, so p_i = z . N_i (revolute) or z . L_i
 * (prismatic), plus armature qd_i when flagged. Because p = sum over the subtree of S_i^T of
 * each body's momentum, its time derivative at qdd = 0 is H' qd = C qd + (v_i x S_i)^T F_i
 * (S_i moves with the body, S_i' = v_i x S_i); with H' = C + C^T (the Christoffel
 * factorisation, H' - 2C skew) this gives C^T qd_i = (v_i x S_i) . F_i = -S_i . (v_i x* F_i)
 * with v x* F = (w x N + v x L, w x L). So: revolute -(w x N + v x L)_z, prismatic
 * -(w x L)_z. */
void dyn_momentum(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                  unsigned flags, double *p, double *ctqd)
{
    const int n = m->n;
    double wp[3] = {0, 0, 0}, vp[3] = {0, 0, 0};
    dyn_transforms(m, d, q);
    for (int i = 0; i < n; i++) {
        const dyn_joint *jt = &m->j[i];
        const double c = d->cs[i][0], s = d->cs[i][1];
        double t[3], wl[3], vl[3];
        dyn_cross(wp, d->p[i], t);
        for (int k = 0; k < 3; k++) t[k] += vp[k];
        dyn_to_child(jt, c, s, wp, wl);
        dyn_to_child(jt, c, s, t, vl);
        double *w = d->w[i], *v = d->a[i];
        w[0] = wl[0], w[1] = wl[1], w[2] = wl[2] + jt->sr * qd[i];
        v[0] = vl[0], v[1] = vl[1], v[2] = vl[2] + jt->pr * qd[i];
        const dyn_body *b = &jt->body;
        double wh[3], Iw[3], hv[3];
        dyn_cross(w, b->h, wh);
        dyn_sym_mul(b->I, w, Iw);
        dyn_cross(b->h, v, hv);
        for (int k = 0; k < 3; k++) {
            d->f[i][k] = b->m * v[k] + wh[k];
            d->nm[i][k] = Iw[k] + hv[k];
            wp[k] = w[k];
            vp[k] = v[k];
        }
    }
    double Lc[3] = {0, 0, 0}, Nc[3] = {0, 0, 0};
    for (int i = n - 1; i >= 0; i--) {
        const dyn_joint *jt = &m->j[i];
        const double L[3] = {d->f[i][0] + Lc[0], d->f[i][1] + Lc[1], d->f[i][2] + Lc[2]};
        const double N[3] = {d->nm[i][0] + Nc[0], d->nm[i][1] + Nc[1], d->nm[i][2] + Nc[2]};
        const double *w = d->w[i], *v = d->a[i];
        double pi = jt->sr * N[2] + jt->pr * L[2];
        if (flags & DYN_ARMATURE) pi += jt->armature * qd[i];
        p[i] = pi;
        /* z components of w x N + v x L and of w x L */
        const double wxL = w[0] * L[1] - w[1] * L[0];
        const double wxN = w[0] * N[1] - w[1] * N[0];
        const double vxL = v[0] * L[1] - v[1] * L[0];
        ctqd[i] = -(jt->sr * (wxN + vxL) + jt->pr * wxL);
        if (i == 0) break;
        const double c = d->cs[i][0], s = d->cs[i][1];
        double pxL[3];
        dyn_to_parent(jt, c, s, L, Lc);
        dyn_to_parent(jt, c, s, N, Nc);
        dyn_cross(d->p[i], Lc, pxL);
        Nc[0] += pxL[0];
        Nc[1] += pxL[1];
        Nc[2] += pxL[2];
    }
}
