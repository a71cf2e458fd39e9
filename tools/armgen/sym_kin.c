/* sym_kin.c — the geometric Jacobian of the tool origin on nodes (dynamics/kinematics.c
 * dyn_jacobian; seed 001 §2.3 computes the same matrix by strobing the recursion with unit tool
 * wrenches, JACOB, Table 4.7). See sym.h. */
#include "tools/armgen/sym.h"

/* Poses of every M_i in the base, composed column-wise: R_i = R_{i-1} Rx(alpha) Rz(theta)
 * (the twist mixes columns 1 and 2, the joint angle columns 0 and 1), p_i = p_{i-1} +
 * R_{i-1} p; then revolute columns (z x (p_tool - o_i), z), prismatic (z, 0). */
void sym_jacobian(const sym_arm *a, int *J)
{
    ex_graph *g = a->g;
    const int n = a->n;
    sv3 col[3], o = sv_zero(), z[DYN_MAX_DOF], org[DYN_MAX_DOF];
    for (int k = 0; k < 3; k++) {
        const double *R = a->f->base_R;
        const double ck[3] = {R[k], R[3 + k], R[6 + k]};
        col[k] = sv_const(g, ck);
    }
    for (int i = 0; i < n; i++) {
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
        z[i] = col[2];
        org[i] = o;
    }
    const double *tp = a->f->tool_p;
    const sv3 tool = sv_add(g, o,
                            sv_add(g,
                                   sv_add(g, sv_scale(g, ex_const(g, tp[0]), col[0]),
                                          sv_scale(g, ex_const(g, tp[1]), col[1])),
                                   sv_scale(g, ex_const(g, tp[2]), col[2])));
    for (int i = 0; i < n; i++) {
        const sv3 zr = sv_cross(g, z[i], sv_sub(g, tool, org[i]));
        for (int k = 0; k < 3; k++) {
            J[k * n + i] = ex_fma2(g, a->sr[i], zr.v[k], a->pr[i], z[i].v[k]);
            J[(3 + k) * n + i] = ex_mul(g, a->sr[i], z[i].v[k]);
        }
    }
}
