/* aba.c — O(n) forward dynamics: the articulated-body recursion (Vereshchagin's Gauss-principle
 * solution, seed 004 §3 eqs 3.5-3.5b, in Featherstone's spatial-vector form). Spatial vectors
 * are (angular; linear) in the moving joint frame M_i, about its origin. */
#include <math.h>
#include <string.h>

#include "dynamics/dyn_internal.h"

/* M' = Rz M Rz^T for a full row-major 3x3 M. */
static inline void full_turn_z(double c, double s, double M[9])
{
    for (int k = 0; k < 3; k++) { /* rows */
        const double r0 = M[k], r1 = M[3 + k];
        M[k] = c * r0 - s * r1;
        M[3 + k] = s * r0 + c * r1;
    }
    for (int k = 0; k < 3; k++) { /* columns */
        const double c0 = M[3 * k], c1 = M[3 * k + 1];
        M[3 * k] = c * c0 - s * c1;
        M[3 * k + 1] = s * c0 + c * c1;
    }
}

/* Adds X^T Ia X to the parent's articulated inertia (X: parent motion -> child motion). First
 * Ia is turned into the parent's axes with R = Rx(alpha) Rz(theta) (block-wise R M R^T,
 * factored), then its reference point moves by p (child origin in the parent):
 * B' = B + [p]x C, A' = A + [p]x B^T - B' [p]x, C' = C. Modifies ia. */
static void abi_to_parent(const dyn_joint *jt, double c, double s, const double p[3],
                          dyn_abi *restrict ia, dyn_abi *restrict par)
{
    const double cc = c * c, ss = s * s, cs = c * s;
    const double ca = jt->ca, sa = jt->sa, cca = ca * ca, ssa = sa * sa, csa = ca * sa;
    dyn_sym_turn_z(c, s, cc, ss, cs, ia->A);
    dyn_sym_turn_x(jt, cca, ssa, csa, ia->A);
    dyn_sym_turn_z(c, s, cc, ss, cs, ia->C);
    dyn_sym_turn_x(jt, cca, ssa, csa, ia->C);
    full_turn_z(c, s, ia->B);
    dyn_full_turn_x(jt, ia->B);
    const double *C = ia->C, *B = ia->B;
    const double px = p[0], py = p[1], pz = p[2];
    /* B' = B + [p]x C, C symmetric (xx xy xz yy yz zz) */
    const double C0[3] = {C[0], C[1], C[2]}, C1[3] = {C[1], C[3], C[4]}, C2[3] = {C[2], C[4], C[5]};
    double Bn[9];
    for (int k = 0; k < 3; k++) {
        Bn[k] = B[k] + py * C2[k] - pz * C1[k];
        Bn[3 + k] = B[3 + k] + pz * C0[k] - px * C2[k];
        Bn[6 + k] = B[6 + k] + px * C1[k] - py * C0[k];
    }
    /* PB = [p]x B^T: column j is p x (row j of B). MP = -B' [p]x: row i is p x (row i of B'). */
    double PB[9], MP[9];
    for (int j = 0; j < 3; j++) {
        const double b0 = B[3 * j], b1 = B[3 * j + 1], b2 = B[3 * j + 2];
        PB[j] = py * b2 - pz * b1;
        PB[3 + j] = pz * b0 - px * b2;
        PB[6 + j] = px * b1 - py * b0;
        const double n0 = Bn[3 * j], n1 = Bn[3 * j + 1], n2 = Bn[3 * j + 2];
        MP[3 * j] = py * n2 - pz * n1;
        MP[3 * j + 1] = pz * n0 - px * n2;
        MP[3 * j + 2] = px * n1 - py * n0;
    }
    /* A' = A + PB + MP (symmetric: the upper triangle) */
    par->A[0] += ia->A[0] + PB[0] + MP[0];
    par->A[1] += ia->A[1] + PB[1] + MP[1];
    par->A[2] += ia->A[2] + PB[2] + MP[2];
    par->A[3] += ia->A[3] + PB[4] + MP[4];
    par->A[4] += ia->A[4] + PB[5] + MP[5];
    par->A[5] += ia->A[5] + PB[8] + MP[8];
    for (int k = 0; k < 9; k++) par->B[k] += Bn[k];
    for (int k = 0; k < 6; k++) par->C[k] += C[k];
}

/* Forward dynamics in O(n): three passes (velocities and bias terms outward; articulated
 * inertias and bias forces inward, eq 3.5a/3.5b; accelerations outward, eq 3.5). */
int dyn_forward_aba(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                    const double *tau, const double *wrench, unsigned flags, double *qdd)
{
    const int n = m->n;
    double vp[6] = {0, 0, 0, 0, 0, 0};
    /* pass 1: spatial velocity v_i = X v_{i-1} + S qd, bias c_i = v_i x S qd,
     * rigid-body inertia and bias force p_i = v_i x* I v_i */
    dyn_transforms(m, d, q);
    for (int i = 0; i < n; i++) {
        const dyn_joint *jt = &m->j[i];
        double *p = d->p[i];
        const double cj = d->cs[i][0], sj = d->cs[i][1];
        double t[3];
        dyn_cross(vp, p, t);
        t[0] += vp[3], t[1] += vp[4], t[2] += vp[5];
        double *v = d->v[i], *c = d->c[i];
        dyn_to_child(jt, cj, sj, vp, v);
        dyn_to_child(jt, cj, sj, t, v + 3);
        double sq = jt->sr * qd[i], pq = jt->pr * qd[i];
        v[2] += sq;
        v[5] += pq;
        /* c = (w x (0,0,sq), w x (0,0,pq) + v x (0,0,sq)) */
        c[0] = v[1] * sq;
        c[1] = -v[0] * sq;
        c[2] = 0.0;
        c[3] = v[1] * pq + v[4] * sq;
        c[4] = -v[0] * pq - v[3] * sq;
        c[5] = 0.0;
        const dyn_body *b = &jt->body;
        dyn_abi *ia = &d->abi[i];
        memcpy(ia->A, b->I, sizeof ia->A);
        ia->B[0] = 0, ia->B[1] = -b->h[2], ia->B[2] = b->h[1];
        ia->B[3] = b->h[2], ia->B[4] = 0, ia->B[5] = -b->h[0];
        ia->B[6] = -b->h[1], ia->B[7] = b->h[0], ia->B[8] = 0;
        ia->C[0] = ia->C[3] = ia->C[5] = b->m;
        ia->C[1] = ia->C[2] = ia->C[4] = 0;
        /* I v = (K, L) = (I w + h x v, m v + w x h); p = (w x K + v x L, w x L) */
        double K[3], L[3], hv[3], wh[3], t1[3], t2[3];
        dyn_sym_mul(b->I, v, K);
        dyn_cross(b->h, v + 3, hv);
        dyn_cross(v, b->h, wh);
        for (int k = 0; k < 3; k++) {
            K[k] += hv[k];
            L[k] = b->m * v[3 + k] + wh[k];
        }
        dyn_cross(v, K, t1);
        dyn_cross(v + 3, L, t2);
        double *pa = d->pa[i];
        pa[0] = t1[0] + t2[0], pa[1] = t1[1] + t2[1], pa[2] = t1[2] + t2[2];
        dyn_cross(v, L, pa + 3);
        memcpy(vp, v, sizeof vp);
    }
    if (wrench) { /* the environment's wrench on the tool acts against the bias force */
        double f[3], mm[3], pxf[3];
        dyn_rot(m->tool.R, wrench, f);
        dyn_rot(m->tool.R, wrench + 3, mm);
        dyn_cross(m->tool.p, f, pxf);
        double *pa = d->pa[n - 1];
        for (int k = 0; k < 3; k++) {
            pa[k] -= mm[k] + pxf[k];
            pa[3 + k] -= f[k];
        }
    }
    const int use_arm = (flags & DYN_ARMATURE) != 0;
    if (flags & DYN_FRICTION) dyn_friction(m, qd, d->tmp);
    /* pass 2: inward, articulated inertias */
    for (int i = n - 1; i >= 0; i--) {
        const dyn_joint *jt = &m->j[i];
        const double sr = jt->sr, pr = jt->pr;
        dyn_abi *ia = &d->abi[i];
        double *U = d->U[i], *pa = d->pa[i], *c = d->c[i];
        /* U = IA S */
        U[0] = sr * ia->A[2] + pr * ia->B[2];
        U[1] = sr * ia->A[4] + pr * ia->B[5];
        U[2] = sr * ia->A[5] + pr * ia->B[8];
        U[3] = sr * ia->B[6] + pr * ia->C[2];
        U[4] = sr * ia->B[7] + pr * ia->C[4];
        U[5] = sr * ia->B[8] + pr * ia->C[5];
        double D = sr * U[2] + pr * U[5] + (use_arm ? jt->armature : 0.0);
        if (!(D > 0.0) || !isfinite(D)) return -1;
        double Dinv = 1.0 / D;
        d->Dinv[i] = Dinv;
        double u = tau[i] - sr * pa[2] - pr * pa[5];
        if (flags & DYN_FRICTION) u -= d->tmp[i];
        d->u[i] = u;
        if (i == 0) break;
        /* Ia = IA - U U^T / D ; pa' = pa + Ia c + U u / D (c[2] = c[5] = 0) */
        dyn_abi a;
        const double *A = ia->A, *B = ia->B, *C = ia->C;
        const double U0 = U[0], U1 = U[1], U2 = U[2], U3 = U[3], U4 = U[4], U5 = U[5];
        const double V0 = U0 * Dinv, V1 = U1 * Dinv, V2 = U2 * Dinv;
        const double V3 = U3 * Dinv, V4 = U4 * Dinv, V5 = U5 * Dinv;
        a.A[0] = A[0] - U0 * V0;
        a.A[1] = A[1] - U0 * V1;
        a.A[2] = A[2] - U0 * V2;
        a.A[3] = A[3] - U1 * V1;
        a.A[4] = A[4] - U1 * V2;
        a.A[5] = A[5] - U2 * V2;
        a.B[0] = B[0] - U0 * V3;
        a.B[1] = B[1] - U0 * V4;
        a.B[2] = B[2] - U0 * V5;
        a.B[3] = B[3] - U1 * V3;
        a.B[4] = B[4] - U1 * V4;
        a.B[5] = B[5] - U1 * V5;
        a.B[6] = B[6] - U2 * V3;
        a.B[7] = B[7] - U2 * V4;
        a.B[8] = B[8] - U2 * V5;
        a.C[0] = C[0] - U3 * V3;
        a.C[1] = C[1] - U3 * V4;
        a.C[2] = C[2] - U3 * V5;
        a.C[3] = C[3] - U4 * V4;
        a.C[4] = C[4] - U4 * V5;
        a.C[5] = C[5] - U5 * V5;
        const double c0 = c[0], c1 = c[1], c3 = c[3], c4 = c[4], uD = u * Dinv;
        double pp[6];
        pp[0] = pa[0] + a.A[0] * c0 + a.A[1] * c1 + a.B[0] * c3 + a.B[1] * c4 + U0 * uD;
        pp[1] = pa[1] + a.A[1] * c0 + a.A[3] * c1 + a.B[3] * c3 + a.B[4] * c4 + U1 * uD;
        pp[2] = pa[2] + a.A[2] * c0 + a.A[4] * c1 + a.B[6] * c3 + a.B[7] * c4 + U2 * uD;
        pp[3] = pa[3] + a.B[0] * c0 + a.B[3] * c1 + a.C[0] * c3 + a.C[1] * c4 + U3 * uD;
        pp[4] = pa[4] + a.B[1] * c0 + a.B[4] * c1 + a.C[1] * c3 + a.C[3] * c4 + U4 * uD;
        pp[5] = pa[5] + a.B[2] * c0 + a.B[5] * c1 + a.C[2] * c3 + a.C[4] * c4 + U5 * uD;
        const double *p = d->p[i], cj = d->cs[i][0], sj = d->cs[i][1];
        abi_to_parent(jt, cj, sj, p, &a, &d->abi[i - 1]);
        double fn[3], nn[3], pxf[3];
        dyn_to_parent(jt, cj, sj, pp + 3, fn);
        dyn_to_parent(jt, cj, sj, pp, nn);
        dyn_cross(p, fn, pxf);
        double *par = d->pa[i - 1];
        for (int k = 0; k < 3; k++) {
            par[k] += nn[k] + pxf[k];
            par[3 + k] += fn[k];
        }
    }
    /* pass 3: outward accelerations, base accelerating at -g for gravity */
    double gs = (flags & DYN_GRAVITY) ? -1.0 : 0.0;
    double ap[6] = {0, 0, 0, gs * m->gravity_b[0], gs * m->gravity_b[1], gs * m->gravity_b[2]};
    for (int i = 0; i < n; i++) {
        const dyn_joint *jt = &m->j[i];
        const double *p = d->p[i], *c = d->c[i], *U = d->U[i];
        const double cj = d->cs[i][0], sj = d->cs[i][1];
        double t[3], a[6];
        dyn_cross(ap, p, t);
        t[0] += ap[3], t[1] += ap[4], t[2] += ap[5];
        dyn_to_child(jt, cj, sj, ap, a);
        dyn_to_child(jt, cj, sj, t, a + 3);
        a[0] += c[0], a[1] += c[1], a[3] += c[3], a[4] += c[4]; /* c[2] = c[5] = 0 */
        double Ua =
            U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] + U[4] * a[4] + U[5] * a[5];
        double x = (d->u[i] - Ua) * d->Dinv[i];
        if (!isfinite(x)) return -1; /* D so small that qdd overflowed: numerically singular */
        qdd[i] = x;
        a[2] += jt->sr * x;
        a[5] += jt->pr * x;
        memcpy(ap, a, sizeof ap);
    }
    return 0;
}
