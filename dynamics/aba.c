/* aba.c — O(n) forward dynamics: the articulated-body recursion (Vereshchagin's Gauss-principle
 * solution, seed 004 §3 eqs 3.5-3.5b, in Featherstone's spatial-vector form). Spatial vectors
 * are (angular; linear) in the moving joint frame M_i, about its origin. */
#include <math.h>
#include <string.h>

#include "dynamics/dyn_internal.h"

/* 3x3 helpers on full row-major matrices. */
static inline void sym_full(const double S[6], double F[9])
{
    F[0] = S[0], F[1] = S[1], F[2] = S[2];
    F[3] = S[1], F[4] = S[3], F[5] = S[4];
    F[6] = S[2], F[7] = S[4], F[8] = S[5];
}

/* out = R M R^T (full) */
static inline void rot_sandwich(const double R[9], const double M[9], double out[9])
{
    double T[9];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            T[3 * i + k] = R[3 * i] * M[k] + R[3 * i + 1] * M[3 + k] + R[3 * i + 2] * M[6 + k];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            out[3 * i + k] =
                T[3 * i] * R[3 * k] + T[3 * i + 1] * R[3 * k + 1] + T[3 * i + 2] * R[3 * k + 2];
}

/* out = [p]x M */
static inline void skew_left(const double p[3], const double M[9], double out[9])
{
    for (int k = 0; k < 3; k++) {
        double c0 = M[k], c1 = M[3 + k], c2 = M[6 + k];
        out[k] = p[1] * c2 - p[2] * c1;
        out[3 + k] = p[2] * c0 - p[0] * c2;
        out[6 + k] = p[0] * c1 - p[1] * c0;
    }
}

/* Adds X Ia X^T to the parent's articulated inertia, where X = [[R, [p]x R], [0, R]] maps a
 * child force to the parent frame: A' += RAR^T + P B'^T - B'' P, B' += RBR^T + P C', C' += RCR^T
 * with B'' = R B R^T + P R C R^T. */
static void abi_to_parent(const double R[9], const double p[3], const dyn_abi *ia, dyn_abi *par)
{
    double A[9], B[9], C[9], Ar[9], Br[9], Cr[9], PC[9], PBt[9], Bt[9];
    sym_full(ia->A, A);
    memcpy(B, ia->B, sizeof B);
    sym_full(ia->C, C);
    rot_sandwich(R, A, Ar);
    rot_sandwich(R, B, Br);
    rot_sandwich(R, C, Cr);
    skew_left(p, Cr, PC);
    double B2[9];
    for (int k = 0; k < 9; k++) B2[k] = Br[k] + PC[k];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) Bt[3 * i + k] = Br[3 * k + i];
    skew_left(p, Bt, PBt);
    /* B2 P: row r of B2 times [p]x; (M [p]x)_{rk} = -(M_r x p)... computed as -( [p]x B2^T )^T */
    double B2t[9], PB2t[9];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) B2t[3 * i + k] = B2[3 * k + i];
    skew_left(p, B2t, PB2t); /* [p]x B2^T = -(B2 [p]x)^T */
    double TL[9];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            TL[3 * i + k] = Ar[3 * i + k] + PBt[3 * i + k] + PB2t[3 * k + i];
    par->A[0] += TL[0];
    par->A[1] += 0.5 * (TL[1] + TL[3]);
    par->A[2] += 0.5 * (TL[2] + TL[6]);
    par->A[3] += TL[4];
    par->A[4] += 0.5 * (TL[5] + TL[7]);
    par->A[5] += TL[8];
    for (int k = 0; k < 9; k++) par->B[k] += B2[k];
    par->C[0] += Cr[0];
    par->C[1] += Cr[1];
    par->C[2] += Cr[2];
    par->C[3] += Cr[4];
    par->C[4] += Cr[5];
    par->C[5] += Cr[8];
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
    for (int i = 0; i < n; i++) {
        const dyn_joint *jt = &m->j[i];
        double *R = d->R[i], *p = d->p[i];
        dyn_joint_transform(jt, q[i], R, p);
        double t[3];
        dyn_cross(vp, p, t);
        t[0] += vp[3], t[1] += vp[4], t[2] += vp[5];
        double *v = d->v[i], *c = d->c[i];
        dyn_rot_t(R, vp, v);
        dyn_rot_t(R, t, v + 3);
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
        /* Ia = IA - U U^T / D ; pa' = pa + Ia c + U u / D */
        dyn_abi a;
        const double *Ua = U, *Ul = U + 3;
        a.A[0] = ia->A[0] - Ua[0] * Ua[0] * Dinv;
        a.A[1] = ia->A[1] - Ua[0] * Ua[1] * Dinv;
        a.A[2] = ia->A[2] - Ua[0] * Ua[2] * Dinv;
        a.A[3] = ia->A[3] - Ua[1] * Ua[1] * Dinv;
        a.A[4] = ia->A[4] - Ua[1] * Ua[2] * Dinv;
        a.A[5] = ia->A[5] - Ua[2] * Ua[2] * Dinv;
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) a.B[3 * r + k] = ia->B[3 * r + k] - Ua[r] * Ul[k] * Dinv;
        a.C[0] = ia->C[0] - Ul[0] * Ul[0] * Dinv;
        a.C[1] = ia->C[1] - Ul[0] * Ul[1] * Dinv;
        a.C[2] = ia->C[2] - Ul[0] * Ul[2] * Dinv;
        a.C[3] = ia->C[3] - Ul[1] * Ul[1] * Dinv;
        a.C[4] = ia->C[4] - Ul[1] * Ul[2] * Dinv;
        a.C[5] = ia->C[5] - Ul[2] * Ul[2] * Dinv;
        double Ac[3], Bcl[3], Btc[3], Ccl[3];
        dyn_sym_mul(a.A, c, Ac);
        dyn_rot(a.B, c + 3, Bcl);
        dyn_rot_t(a.B, c, Btc);
        dyn_sym_mul(a.C, c + 3, Ccl);
        double uD = u * Dinv, pp[6];
        for (int k = 0; k < 3; k++) {
            pp[k] = pa[k] + Ac[k] + Bcl[k] + U[k] * uD;
            pp[3 + k] = pa[3 + k] + Btc[k] + Ccl[k] + U[3 + k] * uD;
        }
        const double *R = d->R[i], *p = d->p[i];
        abi_to_parent(R, p, &a, &d->abi[i - 1]);
        double fn[3], nn[3], pxf[3];
        dyn_rot(R, pp + 3, fn);
        dyn_rot(R, pp, nn);
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
        const double *R = d->R[i], *p = d->p[i], *c = d->c[i], *U = d->U[i];
        double t[3], a[6];
        dyn_cross(ap, p, t);
        t[0] += ap[3], t[1] += ap[4], t[2] += ap[5];
        dyn_rot_t(R, ap, a);
        dyn_rot_t(R, t, a + 3);
        for (int k = 0; k < 6; k++) a[k] += c[k];
        double Ua =
            U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] + U[4] * a[4] + U[5] * a[5];
        double x = (d->u[i] - Ua) * d->Dinv[i];
        qdd[i] = x;
        a[2] += jt->sr * x;
        a[5] += jt->pr * x;
        memcpy(ap, a, sizeof ap);
    }
    return 0;
}
