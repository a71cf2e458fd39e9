/* sym_rnea.c — the Newton-Euler recursion on nodes (NEDYN, seed 001 §2.1), its friction term,
 * and the generalized momentum (see sym.h). */
#include "tools/armgen/sym.h"

/* A = [dw]x + [w]x[w]x (seed 000 eq 5.1), row-major. */
static void consolidated(ex_graph *g, sv3 w, sv3 dw, int A[9])
{
    const int xx = ex_mul(g, w.v[0], w.v[0]), yy = ex_mul(g, w.v[1], w.v[1]);
    const int zz = ex_mul(g, w.v[2], w.v[2]), xy = ex_mul(g, w.v[0], w.v[1]);
    const int xz = ex_mul(g, w.v[0], w.v[2]), yz = ex_mul(g, w.v[1], w.v[2]);
    A[0] = ex_neg(g, ex_add(g, yy, zz));
    A[1] = ex_sub(g, xy, dw.v[2]);
    A[2] = ex_add(g, xz, dw.v[1]);
    A[3] = ex_add(g, xy, dw.v[2]);
    A[4] = ex_neg(g, ex_add(g, xx, zz));
    A[5] = ex_sub(g, yz, dw.v[0]);
    A[6] = ex_sub(g, xz, dw.v[1]);
    A[7] = ex_add(g, yz, dw.v[0]);
    A[8] = ex_neg(g, ex_add(g, xx, yy));
}

static int input_or_zero(const int *v, int i)
{
    return v ? v[i] : EX_ZERO;
}

/* The tool wrench as what the last link supplies to its "child" at the origin of M_{n-1}:
 * F = -R_t f, N = -(R_t m + p_t x R_t f) (dynamics/rnea.c wrench_as_child). */
static void wrench_as_child(const sym_arm *a, const int *wrench, sv3 *F, sv3 *N)
{
    ex_graph *g = a->g;
    if (!wrench) {
        *F = *N = sv_zero();
        return;
    }
    int R[9];
    for (int k = 0; k < 9; k++) R[k] = ex_const(g, a->f->tool_R[k]);
    const sv3 f = sv_rot(g, R, (sv3){{wrench[0], wrench[1], wrench[2]}});
    const sv3 m = sv_rot(g, R, (sv3){{wrench[3], wrench[4], wrench[5]}});
    const sv3 pxf = sv_cross(g, sv_const(g, a->f->tool_p), f);
    *F = sv_sub(g, sv_zero(), f);
    *N = sv_sub(g, sv_zero(), sv_add(g, m, pxf));
}

/* Outward: w, dw, a of each M_i (seed 000 eqs 3.15-3.18 with the consolidated operator),
 * link force f = m a + A h and moment n = I dw + w x I w + h x a about the origin; inward:
 * F, N carried to the parent (eqs 3.19-3.20), tau_i = z . N (revolute) or z . F (prismatic).
 * Naming: a trailing _p is the parent's value. */
void sym_rnea(const sym_arm *a, const sym_ne_in *in, int *tau)
{
    ex_graph *g = a->g;
    const int n = a->n;
    sv3 w_p = sv_zero(), dw_p = sv_zero(), a_p = in->base_acc, f[DYN_MAX_DOF], nm[DYN_MAX_DOF];
    int A_p[9];
    for (int k = 0; k < 9; k++) A_p[k] = EX_ZERO;
    for (int i = 0; i < n; i++) {
        const int qd = input_or_zero(in->qd, i), qdd = input_or_zero(in->qdd, i);
        const sv3 t = sv_add(g, sv_rot(g, A_p, a->p[i]), a_p);
        const sv3 wl = sym_to_child(a, i, w_p), dwl = sym_to_child(a, i, dw_p);
        const sv3 al = sym_to_child(a, i, t);
        const int sq = ex_mul(g, a->sr[i], qd), pq2 = ex_mulk(g, ex_mul(g, a->pr[i], qd), 2.0);
        const sv3 w = {{wl.v[0], wl.v[1], ex_add(g, wl.v[2], sq)}};
        const sv3 dw = {{ex_add(g, dwl.v[0], ex_mul(g, sq, wl.v[1])),
                         ex_sub(g, dwl.v[1], ex_mul(g, sq, wl.v[0])),
                         ex_add(g, dwl.v[2], ex_mul(g, a->sr[i], qdd))}};
        const sv3 acc = {{ex_add(g, al.v[0], ex_mul(g, pq2, w.v[1])),
                          ex_sub(g, al.v[1], ex_mul(g, pq2, w.v[0])),
                          ex_add(g, al.v[2], ex_mul(g, a->pr[i], qdd))}};
        consolidated(g, w, dw, A_p);
        const sbody *b = &a->body[i];
        f[i] = sv_add(g, sv_scale(g, b->m, acc), sv_rot(g, A_p, b->h));
        nm[i] = sv_add(g, sv_sym_mul(g, b->I, dw), sv_cross(g, w, sv_sym_mul(g, b->I, w)));
        nm[i] = sv_add(g, nm[i], sv_cross(g, b->h, acc));
        w_p = w, dw_p = dw, a_p = acc;
    }
    sv3 Fc, Nc;
    wrench_as_child(a, in->wrench, &Fc, &Nc);
    for (int i = n - 1; i >= 0; i--) {
        const sv3 F = sv_add(g, f[i], Fc), N = sv_add(g, nm[i], Nc);
        tau[i] = ex_fma2(g, a->sr[i], N.v[2], a->pr[i], F.v[2]);
        if (i == 0) break; /* the base's reaction is not needed */
        Fc = sym_to_parent(a, i, F);
        Nc = sv_add(g, sym_to_parent(a, i, N), sv_cross(g, a->p[i], Fc));
    }
}

/* viscous qd + Coulomb: the published value for the sign of qd, blended for |qd| < eps by
 * s(x) = x (3 - x^2) / 2, x = qd / eps clamped to [-1, 1] (equal to the hard values at
 * |x| >= 1, as in dynamics/rnea.c); a hard step when eps = 0. */
int sym_friction(const sym_arm *a, int i, int qd)
{
    ex_graph *g = a->g;
    const dyn_form_joint *j = &a->f->joint[i];
    const double eps = a->f->friction_smoothing;
    int coul;
    if (eps > 0.0) {
        const int x = ex_clamp1(g, ex_mulk(g, qd, 1.0 / eps));
        const int s = ex_mul(g, ex_mulk(g, x, 0.5), ex_sub(g, ex_const(g, 3.0), ex_mul(g, x, x)));
        coul = ex_mul(
            g, ex_signsel(g, s, ex_const(g, j->coulomb_pos), ex_const(g, -j->coulomb_neg)), s);
    } else {
        coul = ex_signsel(g, qd, ex_const(g, j->coulomb_pos), ex_const(g, j->coulomb_neg));
    }
    return ex_add(g, ex_mulk(g, qd, j->viscous), coul);
}

/* Outward: w_i and the velocity v_i of the origin of M_i, the body's momentum L = m v + w x h,
 * N = I w + h x v; inward: the subtree's (L, N) carried to the parent; p_i = z . N or z . L
 * (+ armature qd), C^T qd_i = -(w x N + v x L)_z (revolute) or -(w x L)_z (prismatic)
 * (dynamics/momentum.c). */
void sym_momentum(const sym_arm *a, const int *qd, int arm_flag, int *p, int *ctqd)
{
    ex_graph *g = a->g;
    const int n = a->n;
    sv3 w_p = sv_zero(), v_p = sv_zero(), w[DYN_MAX_DOF], v[DYN_MAX_DOF], L[DYN_MAX_DOF],
        N[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) {
        const sv3 t = sv_add(g, sv_cross(g, w_p, a->p[i]), v_p);
        w[i] = sym_to_child(a, i, w_p);
        v[i] = sym_to_child(a, i, t);
        w[i].v[2] = ex_add(g, w[i].v[2], ex_mul(g, a->sr[i], qd[i]));
        v[i].v[2] = ex_add(g, v[i].v[2], ex_mul(g, a->pr[i], qd[i]));
        const sbody *b = &a->body[i];
        L[i] = sv_add(g, sv_scale(g, b->m, v[i]), sv_cross(g, w[i], b->h));
        N[i] = sv_add(g, sv_sym_mul(g, b->I, w[i]), sv_cross(g, b->h, v[i]));
        w_p = w[i], v_p = v[i];
    }
    sv3 Lc = sv_zero(), Nc = sv_zero();
    for (int i = n - 1; i >= 0; i--) {
        const sv3 Li = sv_add(g, L[i], Lc), Ni = sv_add(g, N[i], Nc);
        const int arm = ex_mulk(g, qd[i], a->f->joint[i].armature);
        p[i] = ex_add(g, ex_fma2(g, a->sr[i], Ni.v[2], a->pr[i], Li.v[2]),
                      ex_sel(g, arm_flag, arm, EX_ZERO));
        const sv3 wi = w[i], vi = v[i];
        const int wxL = ex_sub(g, ex_mul(g, wi.v[0], Li.v[1]), ex_mul(g, wi.v[1], Li.v[0]));
        const int wxN = ex_sub(g, ex_mul(g, wi.v[0], Ni.v[1]), ex_mul(g, wi.v[1], Ni.v[0]));
        const int vxL = ex_sub(g, ex_mul(g, vi.v[0], Li.v[1]), ex_mul(g, vi.v[1], Li.v[0]));
        ctqd[i] = ex_neg(g, ex_fma2(g, a->sr[i], ex_add(g, wxN, vxL), a->pr[i], wxL));
        if (i == 0) break;
        Lc = sym_to_parent(a, i, Li);
        Nc = sv_add(g, sym_to_parent(a, i, Ni), sv_cross(g, a->p[i], Lc));
    }
}
