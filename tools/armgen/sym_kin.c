/* sym_kin.c — the tool's kinematics on nodes: its geometric Jacobian (dynamics/kinematics.c
 * dyn_jacobian; seed 001 §2.3 computes the same matrix by strobing the recursion with unit tool
 * wrenches, JACOB, Table 4.7) and its pose (dyn_fk). See sym.h. */
#include "tools/armgen/sym.h"

/* Poses of every M_i in the base, composed column-wise: R_i = R_{i-1} Rx(alpha) Rz(theta)
 * (the twist mixes columns 1 and 2, the joint angle columns 0 and 1), p_i = p_{i-1} +
 * R_{i-1} p. Leaves the columns of R_{n-1} in col, each joint's z axis and origin in z, org
 * (either may be NULL), and returns the tool origin o_{n-1} + R_{n-1} tool_p. */
static sv3 chain(const sym_arm *a, sv3 col[3], sv3 *z, sv3 *org)
{
    ex_graph *g = a->g;
    sv3 o = sv_zero();
    for (int k = 0; k < 3; k++) {
        const double *R = a->f->base_R;
        const double ck[3] = {R[k], R[3 + k], R[6 + k]};
        col[k] = sv_const(g, ck);
    }
    for (int i = 0; i < a->n; i++) {
        o = sv_add(
            g, o,
            sv_rot(g,
                   (const int[9]){col[0].v[0], col[1].v[0], col[2].v[0], col[0].v[1], col[1].v[1],
                                  col[2].v[1], col[0].v[2], col[1].v[2], col[2].v[2]},
                   a->p[i]));
        const sv3 m1 = sv_add(g, sv_scale(g, a->ca[i], col[1]), sv_scale(g, a->sa[i], col[2]));
        const sv3 m2 = sv_sub(g, sv_scale(g, a->ca[i], col[2]), sv_scale(g, a->sa[i], col[1]));
        const sv3 m0 = col[0];
        col[0] = sv_add(g, sv_scale(g, a->c[i], m0), sv_scale(g, a->s[i], m1));
        col[1] = sv_sub(g, sv_scale(g, a->c[i], m1), sv_scale(g, a->s[i], m0));
        col[2] = m2;
        if (z) z[i] = col[2];
        if (org) org[i] = o;
    }
    const double *tp = a->f->tool_p;
    return sv_add(g, o,
                  sv_add(g,
                         sv_add(g, sv_scale(g, ex_const(g, tp[0]), col[0]),
                                sv_scale(g, ex_const(g, tp[1]), col[1])),
                         sv_scale(g, ex_const(g, tp[2]), col[2])));
}

/* The chain, then revolute columns (z x (p_tool - o_i), z), prismatic (z, 0). */
void sym_jacobian(const sym_arm *a, int *J)
{
    ex_graph *g = a->g;
    const int n = a->n;
    sv3 col[3], z[DYN_MAX_DOF], org[DYN_MAX_DOF];
    const sv3 tool = chain(a, col, z, org);
    for (int i = 0; i < n; i++) {
        const sv3 zr = sv_cross(g, z[i], sv_sub(g, tool, org[i]));
        for (int k = 0; k < 3; k++) {
            J[k * n + i] = ex_fma2(g, a->sr[i], zr.v[k], a->pr[i], z[i].v[k]);
            J[(3 + k) * n + i] = ex_mul(g, a->sr[i], z[i].v[k]);
        }
    }
}

/* The chain, then R = R_{n-1} tool_R (row r, column j: sum_k col[k]_r tool_R[k][j]) and p the
 * tool origin. */
void sym_tool_pose(const sym_arm *a, int *T)
{
    ex_graph *g = a->g;
    sv3 col[3];
    const sv3 p = chain(a, col, NULL, NULL);
    const double *tr = a->f->tool_R;
    for (int r = 0; r < 3; r++) {
        for (int j = 0; j < 3; j++) {
            int v = ex_mul(g, col[0].v[r], ex_const(g, tr[j]));
            v = ex_add(g, v, ex_mul(g, col[1].v[r], ex_const(g, tr[3 + j])));
            T[4 * r + j] = ex_add(g, v, ex_mul(g, col[2].v[r], ex_const(g, tr[6 + j])));
        }
        T[4 * r + 3] = p.v[r];
    }
}
