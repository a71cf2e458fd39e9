/* sym_aba.c — the O(n) forward dynamics on nodes: the articulated-body recursion (Vereshchagin's
 * Gauss-principle solution, seed 004 §3 eqs 3.5-3.5b) as dynamics/aba.c computes it (see
 * sym.h). Spatial vectors are (angular; linear) in M_i about its origin. */
#include "tools/armgen/sym.h"

/* Articulated-body inertia [[A, B], [B^T, C]]: A, C symmetric (xx xy xz yy yz zz), B full. */
typedef struct {
    int A[6], B[9], C[6];
} sabi;

/* M' = R M R^T for a full row-major M: R applied to the columns, then to the rows. */
static void turn_full(const sym_arm *a, int i, int M[9])
{
    for (int k = 0; k < 3; k++) {
        sv3 col = sym_to_parent(a, i, (sv3){{M[k], M[3 + k], M[6 + k]}});
        M[k] = col.v[0], M[3 + k] = col.v[1], M[6 + k] = col.v[2];
    }
    for (int k = 0; k < 3; k++) {
        sv3 row = sym_to_parent(a, i, (sv3){{M[3 * k], M[3 * k + 1], M[3 * k + 2]}});
        M[3 * k] = row.v[0], M[3 * k + 1] = row.v[1], M[3 * k + 2] = row.v[2];
    }
}

/* Adds X^T Ia X to the parent's articulated inertia: Ia turned into the parent's axes, then
 * its reference point moved by p: B' = B + [p]x C, A' = A + [p]x B^T - B' [p]x, C' = C
 * (dynamics/aba.c abi_to_parent). */
static void abi_to_parent(const sym_arm *a, int i, sabi *ia, sabi *par)
{
    ex_graph *g = a->g;
    sym_turn_sym(a, i, ia->A);
    sym_turn_sym(a, i, ia->C);
    turn_full(a, i, ia->B);
    const int *C = ia->C, *B = ia->B;
    const int px = a->p[i].v[0], py = a->p[i].v[1], pz = a->p[i].v[2];
    const int C0[3] = {C[0], C[1], C[2]}, C1[3] = {C[1], C[3], C[4]}, C2[3] = {C[2], C[4], C[5]};
    int Bn[9], PB[9], MP[9];
    for (int k = 0; k < 3; k++) {
        Bn[k] = ex_add(g, B[k], ex_sub(g, ex_mul(g, py, C2[k]), ex_mul(g, pz, C1[k])));
        Bn[3 + k] = ex_add(g, B[3 + k], ex_sub(g, ex_mul(g, pz, C0[k]), ex_mul(g, px, C2[k])));
        Bn[6 + k] = ex_add(g, B[6 + k], ex_sub(g, ex_mul(g, px, C1[k]), ex_mul(g, py, C0[k])));
    }
    for (int j = 0; j < 3; j++) {
        const sv3 p = a->p[i];
        const sv3 pb = sv_cross(g, p, (sv3){{B[3 * j], B[3 * j + 1], B[3 * j + 2]}});
        const sv3 mp = sv_cross(g, p, (sv3){{Bn[3 * j], Bn[3 * j + 1], Bn[3 * j + 2]}});
        PB[j] = pb.v[0], PB[3 + j] = pb.v[1], PB[6 + j] = pb.v[2];
        MP[3 * j] = mp.v[0], MP[3 * j + 1] = mp.v[1], MP[3 * j + 2] = mp.v[2];
    }
    static const int upper[6] = {0, 1, 2, 4, 5, 8};
    for (int k = 0; k < 6; k++)
        par->A[k] =
            ex_add(g, par->A[k], ex_add(g, ia->A[k], ex_add(g, PB[upper[k]], MP[upper[k]])));
    for (int k = 0; k < 9; k++) par->B[k] = ex_add(g, par->B[k], Bn[k]);
    for (int k = 0; k < 6; k++) par->C[k] = ex_add(g, par->C[k], C[k]);
}

/* Velocities, bias accelerations c and bias forces outward; articulated inertias and bias
 * forces inward (eqs 3.5a/3.5b); accelerations outward (eq 3.5). */
void sym_aba(const sym_arm *a, const int *qd, const int *tau, sv3 base_acc, int arm_flag,
             const int *fric, int *qdd, int *dpiv)
{
    ex_graph *g = a->g;
    const int n = a->n;
    sv3 vw_p = sv_zero(), vl_p = sv_zero();
    int c[DYN_MAX_DOF][6], U[DYN_MAX_DOF][6], inv[DYN_MAX_DOF], u[DYN_MAX_DOF];
    sv3 pw[DYN_MAX_DOF], pl[DYN_MAX_DOF];
    sabi ia[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) {
        const sv3 t = sv_add(g, sv_cross(g, vw_p, a->p[i]), vl_p);
        sv3 vw = sym_to_child(a, i, vw_p), vl = sym_to_child(a, i, t);
        const int sq = ex_mul(g, a->sr[i], qd[i]), pq = ex_mul(g, a->pr[i], qd[i]);
        vw.v[2] = ex_add(g, vw.v[2], sq);
        vl.v[2] = ex_add(g, vl.v[2], pq);
        c[i][0] = ex_mul(g, vw.v[1], sq);
        c[i][1] = ex_neg(g, ex_mul(g, vw.v[0], sq));
        c[i][2] = c[i][5] = EX_ZERO;
        c[i][3] = ex_fma2(g, vw.v[1], pq, vl.v[1], sq);
        c[i][4] = ex_neg(g, ex_fma2(g, vw.v[0], pq, vl.v[0], sq));
        const sbody *b = &a->body[i];
        const int *h = b->h.v;
        sabi *s = &ia[i];
        for (int k = 0; k < 6; k++) s->A[k] = b->I[k];
        s->B[0] = s->B[4] = s->B[8] = EX_ZERO;
        s->B[1] = ex_neg(g, h[2]), s->B[2] = h[1], s->B[3] = h[2];
        s->B[5] = ex_neg(g, h[0]), s->B[6] = ex_neg(g, h[1]), s->B[7] = h[0];
        s->C[0] = s->C[3] = s->C[5] = b->m;
        s->C[1] = s->C[2] = s->C[4] = EX_ZERO;
        /* I v = (K, L) = (I w + h x v, m v + w x h); bias force (w x K + v x L, w x L) */
        const sv3 K = sv_add(g, sv_sym_mul(g, b->I, vw), sv_cross(g, b->h, vl));
        const sv3 L = sv_add(g, sv_scale(g, b->m, vl), sv_cross(g, vw, b->h));
        pw[i] = sv_add(g, sv_cross(g, vw, K), sv_cross(g, vl, L));
        pl[i] = sv_cross(g, vw, L);
        vw_p = vw, vl_p = vl;
    }
    for (int i = n - 1; i >= 0; i--) {
        const int sr = a->sr[i], pr = a->pr[i];
        sabi *s = &ia[i];
        int *Ui = U[i];
        Ui[0] = ex_fma2(g, sr, s->A[2], pr, s->B[2]);
        Ui[1] = ex_fma2(g, sr, s->A[4], pr, s->B[5]);
        Ui[2] = ex_fma2(g, sr, s->A[5], pr, s->B[8]);
        Ui[3] = ex_fma2(g, sr, s->B[6], pr, s->C[2]);
        Ui[4] = ex_fma2(g, sr, s->B[7], pr, s->C[4]);
        Ui[5] = ex_fma2(g, sr, s->B[8], pr, s->C[5]);
        const int arm = ex_sel(g, arm_flag, ex_const(g, a->f->joint[i].armature), EX_ZERO);
        dpiv[i] = ex_add(g, ex_fma2(g, sr, Ui[2], pr, Ui[5]), arm);
        inv[i] = ex_div(g, EX_ONE, dpiv[i]);
        u[i] = ex_sub(g, tau[i], ex_fma2(g, sr, pw[i].v[2], pr, pl[i].v[2]));
        if (fric) u[i] = ex_sub(g, u[i], fric[i]);
        if (i == 0) break;
        /* Ia = IA - U U^T / D; pa' = pa + Ia c + U u / D (c[2] = c[5] = 0) */
        int V[6], ci[6];
        for (int k = 0; k < 6; k++) V[k] = ex_mul(g, Ui[k], inv[i]), ci[k] = c[i][k];
        sabi r;
        static const int sym_ij[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
        for (int k = 0; k < 6; k++) {
            const int x = sym_ij[k][0], y = sym_ij[k][1];
            r.A[k] = ex_sub(g, s->A[k], ex_mul(g, Ui[x], V[y]));
            r.C[k] = ex_sub(g, s->C[k], ex_mul(g, Ui[3 + x], V[3 + y]));
        }
        for (int k = 0; k < 9; k++) r.B[k] = ex_sub(g, s->B[k], ex_mul(g, Ui[k / 3], V[3 + k % 3]));
        const int uD = ex_mul(g, u[i], inv[i]);
        const int Afull[9] = {r.A[0], r.A[1], r.A[2], r.A[1], r.A[3],
                              r.A[4], r.A[2], r.A[4], r.A[5]};
        const int Cfull[9] = {r.C[0], r.C[1], r.C[2], r.C[1], r.C[3],
                              r.C[4], r.C[2], r.C[4], r.C[5]};
        int pp[6];
        for (int k = 0; k < 3; k++) {
            /* rows of [[A, B], [B^T, C]] times (c0, c1, 0, c3, c4, 0) */
            int ang = ex_add(g, ex_fma2(g, Afull[3 * k], ci[0], Afull[3 * k + 1], ci[1]),
                             ex_fma2(g, r.B[3 * k], ci[3], r.B[3 * k + 1], ci[4]));
            int lin = ex_add(g, ex_fma2(g, r.B[k], ci[0], r.B[3 + k], ci[1]),
                             ex_fma2(g, Cfull[3 * k], ci[3], Cfull[3 * k + 1], ci[4]));
            pp[k] = ex_add(g, ex_add(g, pw[i].v[k], ang), ex_mul(g, Ui[k], uD));
            pp[3 + k] = ex_add(g, ex_add(g, pl[i].v[k], lin), ex_mul(g, Ui[3 + k], uD));
        }
        abi_to_parent(a, i, &r, &ia[i - 1]);
        const sv3 fn = sym_to_parent(a, i, (sv3){{pp[3], pp[4], pp[5]}});
        const sv3 nn = sym_to_parent(a, i, (sv3){{pp[0], pp[1], pp[2]}});
        pw[i - 1] = sv_add(g, pw[i - 1], sv_add(g, nn, sv_cross(g, a->p[i], fn)));
        pl[i - 1] = sv_add(g, pl[i - 1], fn);
    }
    sv3 aw_p = sv_zero(), al_p = base_acc;
    for (int i = 0; i < n; i++) {
        const sv3 t = sv_add(g, sv_cross(g, aw_p, a->p[i]), al_p);
        sv3 aw = sym_to_child(a, i, aw_p), al = sym_to_child(a, i, t);
        aw.v[0] = ex_add(g, aw.v[0], c[i][0]);
        aw.v[1] = ex_add(g, aw.v[1], c[i][1]);
        al.v[0] = ex_add(g, al.v[0], c[i][3]);
        al.v[1] = ex_add(g, al.v[1], c[i][4]);
        const int Ua = ex_add(g, sv_dot(g, (sv3){{U[i][0], U[i][1], U[i][2]}}, aw),
                              sv_dot(g, (sv3){{U[i][3], U[i][4], U[i][5]}}, al));
        const int x = ex_mul(g, ex_sub(g, u[i], Ua), inv[i]);
        qdd[i] = x;
        aw.v[2] = ex_add(g, aw.v[2], ex_mul(g, a->sr[i], x));
        al.v[2] = ex_add(g, al.v[2], ex_mul(g, a->pr[i], x));
        aw_p = aw, al_p = al;
    }
}
