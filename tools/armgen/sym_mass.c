/* sym_mass.c — the joint-space inertia matrix by composite bodies (Walker and Orin's method 3,
 * seed 001 §2.2: the links beyond joint j are one rigid body) and the solution of H x = r by
 * H = L D L^T on nodes (see sym.h). */
#include "tools/armgen/sym.h"

/* Composite bodies accumulated inward, each in M_i; then for joint i the momentum (L, K) of
 * composite i moving with unit joint velocity is carried towards the base, giving column i:
 * H_ji = S_j . (L, K) in M_j (dynamics/mass_matrix.c mass_matrix_core). */
void sym_mass_matrix(const sym_arm *a, int arm_flag, int *H)
{
    ex_graph *g = a->g;
    const int n = a->n;
    sbody comp[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) comp[i] = a->body[i];
    for (int i = n - 1; i > 0; i--) sym_body_to_parent(a, i, &comp[i], &comp[i - 1]);
    for (int i = 0; i < n; i++) {
        const sbody *c = &comp[i];
        const int sr = a->sr[i], pr = a->pr[i];
        /* revolute S = (w = z, v = 0): L = z x h, K = I z; prismatic S = (0, z): L = m z,
         * K = h x z */
        sv3 L = {
            {ex_neg(g, ex_mul(g, sr, c->h.v[1])), ex_mul(g, sr, c->h.v[0]), ex_mul(g, pr, c->m)}};
        sv3 K = {{ex_fma2(g, sr, c->I[2], pr, c->h.v[1]),
                  ex_sub(g, ex_mul(g, sr, c->I[4]), ex_mul(g, pr, c->h.v[0])),
                  ex_mul(g, sr, c->I[5])}};
        const int arm = ex_const(g, a->f->joint[i].armature);
        H[i * n + i] =
            ex_add(g, ex_fma2(g, sr, K.v[2], pr, L.v[2]), ex_sel(g, arm_flag, arm, EX_ZERO));
        for (int j = i; j > 0; j--) {
            const sv3 Lp = sym_to_parent(a, j, L);
            K = sv_add(g, sym_to_parent(a, j, K), sv_cross(g, a->p[j], Lp));
            L = Lp;
            const int hij = ex_fma2(g, a->sr[j - 1], K.v[2], a->pr[j - 1], L.v[2]);
            H[(j - 1) * n + i] = H[i * n + (j - 1)] = hij;
        }
    }
}

/* H = L D L^T (unit lower L, column by column: v_k = L_jk D_k, D_j = H_jj - sum L_jk v_k,
 * L_ij = (H_ij - sum L_ik v_k) / D_j), then L z = r, y = z / D, L^T x = y. One division per
 * column (1 / D_j); zeros of H fold away. */
void sym_ldlt_solve(ex_graph *g, int n, const int *H, const int *r, int *x, int *dpiv)
{
    int L[DYN_MAX_DOF][DYN_MAX_DOF], inv[DYN_MAX_DOF], v[DYN_MAX_DOF];
    for (int j = 0; j < n; j++) {
        int dj = H[j * n + j];
        for (int k = 0; k < j; k++) {
            v[k] = ex_mul(g, L[j][k], dpiv[k]);
            dj = ex_sub(g, dj, ex_mul(g, L[j][k], v[k]));
        }
        dpiv[j] = dj;
        inv[j] = ex_div(g, EX_ONE, dj);
        for (int i = j + 1; i < n; i++) {
            int t = H[i * n + j];
            for (int k = 0; k < j; k++) t = ex_sub(g, t, ex_mul(g, L[i][k], v[k]));
            L[i][j] = ex_mul(g, t, inv[j]);
        }
    }
    int z[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) {
        int t = r[i];
        for (int k = 0; k < i; k++) t = ex_sub(g, t, ex_mul(g, L[i][k], z[k]));
        z[i] = t;
    }
    for (int i = n - 1; i >= 0; i--) {
        int t = ex_mul(g, z[i], inv[i]);
        for (int k = i + 1; k < n; k++) t = ex_sub(g, t, ex_mul(g, L[k][i], x[k]));
        x[i] = t;
    }
}
