/* rnea.c — inverse dynamics by the recursive Newton-Euler algorithm in the moving joint frames,
 * and the separate torque terms G, C qd, H qdd, J^T w from the same recursion (seed 001 §2.4). */
#include <math.h>
#include <string.h>

#include "dynamics/dyn_internal.h"

/* Consolidated operator A = [dw]x + [w]x[w]x, so that A r = dw x r + w x (w x r)
 * (seed 000 §5, the modified Newton-Euler set). */
static inline void consolidated(const double w[3], const double dw[3], double A[9])
{
    double xx = w[0] * w[0], yy = w[1] * w[1], zz = w[2] * w[2];
    double xy = w[0] * w[1], xz = w[0] * w[2], yz = w[1] * w[2];
    A[0] = -(yy + zz);
    A[1] = xy - dw[2];
    A[2] = xz + dw[1];
    A[3] = xy + dw[2];
    A[4] = -(xx + zz);
    A[5] = yz - dw[0];
    A[6] = xz - dw[1];
    A[7] = yz + dw[0];
    A[8] = -(xx + yy);
}

/* Tool wrench (environment on tool, tool frame) as the force/moment the last link must supply
 * to its "child" at the origin of M_{n-1}: F = -R_t f, N = -(R_t m + p_t x R_t f). */
static void wrench_as_child(const dyn_model *m, const double *wrench, double F[3], double N[3])
{
    if (!wrench) {
        F[0] = F[1] = F[2] = N[0] = N[1] = N[2] = 0.0;
        return;
    }
    double f[3], mm[3], pxf[3];
    dyn_rot(m->tool.R, wrench, f);
    dyn_rot(m->tool.R, wrench + 3, mm);
    dyn_cross(m->tool.p, f, pxf);
    for (int k = 0; k < 3; k++) {
        F[k] = -f[k];
        N[k] = -(mm[k] + pxf[k]);
    }
}

/* Coulomb part of the friction torque: the published value for the sign of qd, blended for
 * |qd| < eps by the C1 cubic s(x) = x (3 - x^2) / 2, x = qd/eps (exactly the hard step when
 * eps = 0, and 0 at qd = 0). */
static inline double coulomb(const dyn_joint *jt, double qd, double eps)
{
    if (eps > 0.0) {
        double x = qd / eps;
        if (x >= 1.0) return jt->coulomb_pos;
        if (x <= -1.0) return jt->coulomb_neg;
        double s = 0.5 * x * (3.0 - x * x);
        return s > 0.0 ? jt->coulomb_pos * s : -jt->coulomb_neg * s;
    }
    return qd > 0.0 ? jt->coulomb_pos : (qd < 0.0 ? jt->coulomb_neg : 0.0);
}

/* Outward iteration (seed 000 eqs 3.15-3.18 / seed 003 A-F, with the consolidated operator
 * eq 5.1) then inward iteration (eqs 3.19-3.20), all vectors in the moving joint frames M_i.
 * Link moments are taken about the joint-frame origin using the body's inertia about that
 * origin: f = m a + A h, n = I dw + w x I w + h x a (no COM acceleration step). The base
 * accelerates at -g to model gravity. Rotations use R = Rx(alpha) Rz(theta) factored
 * (dyn_to_child / dyn_to_parent), never a formed matrix. */
static inline __attribute__((always_inline)) void
rnea_run(const dyn_model *restrict m, dyn_data *restrict d, const double *restrict q,
         const double *restrict qd, const double *restrict qdd, int grav, const double *wrench,
         unsigned extra, double *restrict tau)
{
    const int n = m->n;
    const double gs = grav ? -1.0 : 0.0;
    double wp[3] = {0, 0, 0}, dwp[3] = {0, 0, 0};
    double ap[3] = {gs * m->gravity_b[0], gs * m->gravity_b[1], gs * m->gravity_b[2]};
    double Ap[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    dyn_transforms(m, d, q);
    for (int i = 0; i < n; i++) {
        const dyn_joint *jt = &m->j[i];
        const double c = d->cs[i][0], s = d->cs[i][1];
        const double *p = d->p[i];
        double t[3];
        dyn_rot(Ap, p, t);
        t[0] += ap[0];
        t[1] += ap[1];
        t[2] += ap[2];
        double wl[3], dwl[3], al[3];
        dyn_to_child(jt, c, s, wp, wl);
        dyn_to_child(jt, c, s, dwp, dwl);
        dyn_to_child(jt, c, s, t, al);
        const double sq = jt->sr * qd[i], pq2 = 2.0 * jt->pr * qd[i];
        const double w[3] = {wl[0], wl[1], wl[2] + sq};
        const double dw[3] = {dwl[0] + sq * wl[1], dwl[1] - sq * wl[0], dwl[2] + jt->sr * qdd[i]};
        const double a[3] = {al[0] + pq2 * w[1], al[1] - pq2 * w[0], al[2] + jt->pr * qdd[i]};
        consolidated(w, dw, Ap);
        const dyn_body *b = &jt->body;
        double Ah[3], Iw[3], Idw[3], wIw[3], ha[3];
        dyn_rot(Ap, b->h, Ah);
        dyn_sym_mul(b->I, w, Iw);
        dyn_sym_mul(b->I, dw, Idw);
        dyn_cross(w, Iw, wIw);
        dyn_cross(b->h, a, ha);
        for (int k = 0; k < 3; k++) {
            d->f[i][k] = b->m * a[k] + Ah[k];
            d->nm[i][k] = Idw[k] + wIw[k] + ha[k];
            wp[k] = w[k];
            dwp[k] = dw[k];
            ap[k] = a[k];
        }
    }
    double Fc[3], Nc[3];
    wrench_as_child(m, wrench, Fc, Nc);
    for (int i = n - 1; i >= 0; i--) {
        const dyn_joint *jt = &m->j[i];
        const double F[3] = {d->f[i][0] + Fc[0], d->f[i][1] + Fc[1], d->f[i][2] + Fc[2]};
        const double N[3] = {d->nm[i][0] + Nc[0], d->nm[i][1] + Nc[1], d->nm[i][2] + Nc[2]};
        double ti = jt->sr * N[2] + jt->pr * F[2];
        if (extra & DYN_ARMATURE) ti += jt->armature * qdd[i];
        if (extra & DYN_FRICTION)
            ti += jt->viscous * qd[i] + coulomb(jt, qd[i], m->friction_smoothing);
        tau[i] = ti;
        if (i == 0) break; /* the base's reaction is not needed */
        const double c = d->cs[i][0], s = d->cs[i][1];
        double pxF[3];
        dyn_to_parent(jt, c, s, F, Fc);
        dyn_to_parent(jt, c, s, N, Nc);
        dyn_cross(d->p[i], Fc, pxF);
        Nc[0] += pxF[0];
        Nc[1] += pxF[1];
        Nc[2] += pxF[2];
    }
}

/* The recursion without armature and friction (shared with mass_matrix.c). */
void dyn_rnea_core(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                   const double *qdd, int grav, const double *wrench, double *tau)
{
    rnea_run(m, d, q, qd, qdd, grav, wrench, 0u, tau);
}

/* Joint friction torque [N m or N]: viscous*qd + Coulomb (see dynamics.h). */
void dyn_friction(const dyn_model *m, const double *qd, double *tau)
{
    for (int i = 0; i < m->n; i++)
        tau[i] = m->j[i].viscous * qd[i] + coulomb(&m->j[i], qd[i], m->friction_smoothing);
}

void dyn_friction_at(const dyn_model *m, const double *qd_v, const double *qd_c, double eps,
                     double *tau)
{
    for (int i = 0; i < m->n; i++)
        tau[i] = m->j[i].viscous * qd_v[i] + coulomb(&m->j[i], qd_c[i], eps);
}

/* Full inverse dynamics: RNEA core plus armature*qdd and friction as flagged. */
void dyn_rnea(const dyn_model *m, dyn_data *d, const double *q, const double *qd, const double *qdd,
              const double *wrench, unsigned flags, double *tau)
{
    const int grav = (flags & DYN_GRAVITY) != 0;
    switch (flags & (DYN_ARMATURE | DYN_FRICTION)) { /* one specialised copy per case */
    case DYN_ARMATURE | DYN_FRICTION:
        rnea_run(m, d, q, qd, qdd, grav, wrench, DYN_ARMATURE | DYN_FRICTION, tau);
        break;
    case DYN_ARMATURE:
        rnea_run(m, d, q, qd, qdd, grav, wrench, DYN_ARMATURE, tau);
        break;
    default:
        rnea_run(m, d, q, qd, qdd, grav, wrench, flags & DYN_FRICTION, tau);
        break;
    }
}

/* G(q): the recursion with qd = qdd = 0, specialised (no velocities: a_i = R_i^T a_{i-1},
 * f = m a, n = h x a). */
void dyn_gravity(const dyn_model *m, dyn_data *d, const double *q, double *tau)
{
    const int n = m->n;
    double ap[3] = {-m->gravity_b[0], -m->gravity_b[1], -m->gravity_b[2]};
    dyn_transforms(m, d, q);
    for (int i = 0; i < n; i++) {
        const dyn_joint *jt = &m->j[i];
        double a[3];
        dyn_to_child(jt, d->cs[i][0], d->cs[i][1], ap, a);
        const dyn_body *b = &jt->body;
        dyn_cross(b->h, a, d->nm[i]);
        for (int k = 0; k < 3; k++) {
            d->f[i][k] = b->m * a[k];
            ap[k] = a[k];
        }
    }
    double Fc[3] = {0, 0, 0}, Nc[3] = {0, 0, 0};
    for (int i = n - 1; i >= 0; i--) {
        const dyn_joint *jt = &m->j[i];
        const double F[3] = {d->f[i][0] + Fc[0], d->f[i][1] + Fc[1], d->f[i][2] + Fc[2]};
        const double N[3] = {d->nm[i][0] + Nc[0], d->nm[i][1] + Nc[1], d->nm[i][2] + Nc[2]};
        tau[i] = jt->sr * N[2] + jt->pr * F[2];
        const double c = d->cs[i][0], s = d->cs[i][1];
        double pxF[3];
        dyn_to_parent(jt, c, s, F, Fc);
        dyn_to_parent(jt, c, s, N, Nc);
        dyn_cross(d->p[i], Fc, pxF);
        Nc[0] += pxF[0];
        Nc[1] += pxF[1];
        Nc[2] += pxF[2];
    }
}

/* C(q,qd) qd: the recursion with qdd = 0 and no gravity. */
void dyn_coriolis(const dyn_model *m, dyn_data *d, const double *q, const double *qd, double *tau)
{
    memset(d->zero, 0, sizeof d->zero);
    dyn_rnea_core(m, d, q, qd, d->zero, 0, NULL, tau);
}

/* H(q) qdd (+ armature qdd): the recursion with qd = 0 and no gravity. */
void dyn_inertia_torque(const dyn_model *m, dyn_data *d, const double *q, const double *qdd,
                        unsigned flags, double *tau)
{
    memset(d->zero, 0, sizeof d->zero);
    dyn_rnea_core(m, d, q, d->zero, qdd, 0, NULL, tau);
    if (flags & DYN_ARMATURE)
        for (int i = 0; i < m->n; i++) tau[i] += m->j[i].armature * qdd[i];
}

/* J^T w (J in the tool frame, w the environment's wrench on the tool): minus the recursion
 * with qd = qdd = 0, no gravity, and only the wrench (seed 001 §2.4). */
void dyn_wrench_torque(const dyn_model *m, dyn_data *d, const double *q, const double *wrench,
                       double *tau)
{
    memset(d->zero, 0, sizeof d->zero);
    dyn_rnea_core(m, d, q, d->zero, d->zero, 0, wrench, tau);
    for (int i = 0; i < m->n; i++) tau[i] = -tau[i];
}
