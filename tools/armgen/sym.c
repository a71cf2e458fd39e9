/* sym.c — one arm's joints as expression nodes, and the 3-vector algebra on nodes (sym.h). */
#include "tools/armgen/sym.h"

#include <math.h>

static void regroup(sym_arm *a);

/* Zeroes entries of x within 1e-14 of the largest |x| of its group: what frame algebra at
 * load time leaves for exact zeros (0.4318 cos(pi/2) = 2.6e-17 m where a DH twist of pi/2
 * moved an offset). The general core keeps them; the difference is below 1e-14 relative, and
 * every term they multiply folds away. */
static void snap_group(double *const *x, int k)
{
    double scale = 0.0;
    for (int i = 0; i < k; i++) scale = fmax(scale, fabs(*x[i]));
    for (int i = 0; i < k; i++)
        if (fabs(*x[i]) <= 1e-14 * scale) *x[i] = 0.0;
}

/* The model's numbers with the noise of snap_group removed, group by group: lengths, first
 * moments, inertias, gravity, each rotation (entries of magnitude up to 1). */
static void snap_form(dyn_form *f)
{
    double *len[4 * DYN_MAX_DOF + 3], *mom[3 * DYN_MAX_DOF], *ine[6 * DYN_MAX_DOF], *g[3];
    double *rot[2][9];
    int nl = 0, nm = 0, ni = 0;
    for (int i = 0; i < f->n; i++) {
        dyn_form_joint *j = &f->joint[i];
        for (int k = 0; k < 3; k++) len[nl++] = &j->p0[k], mom[nm++] = &j->h[k];
        len[nl++] = &j->doff;
        for (int k = 0; k < 6; k++) ine[ni++] = &j->I[k];
    }
    for (int k = 0; k < 3; k++) len[nl++] = &f->tool_p[k], g[k] = &f->gravity_b[k];
    for (int k = 0; k < 9; k++) rot[0][k] = &f->tool_R[k], rot[1][k] = &f->base_R[k];
    snap_group(len, nl);
    snap_group(mom, nm);
    snap_group(ine, ni);
    snap_group(g, 3);
    double one = 1.0, *unit[10];
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 9; k++) unit[k] = rot[r][k];
        unit[9] = &one; /* rotations: relative to 1 */
        snap_group(unit, 10);
    }
}

/* Constant nodes for the model's numbers (snapped), inputs for the joint variables: a revolute
 * joint's cos/sin theta are inputs (the generated code computes them in one dyn_sincos_n call),
 * a prismatic joint's are constants; p = p0 + disp Rx(alpha) e_z with disp = q + doff for a
 * prismatic joint (dynamics.h, dyn_form). */
void sym_arm_init(sym_arm *a, ex_graph *g, const dyn_form *form)
{
    a->g = g;
    a->form = *form;
    snap_form(&a->form);
    const dyn_form *f = &a->form;
    a->f = f;
    a->n = f->n;
    for (int i = 0; i < f->n; i++) {
        const dyn_form_joint *j = &f->joint[i];
        const int prism = j->type == DYN_PRISMATIC;
        a->sr[i] = prism ? EX_ZERO : EX_ONE;
        a->pr[i] = prism ? EX_ONE : EX_ZERO;
        a->ca[i] = ex_const(g, j->ca);
        a->sa[i] = ex_const(g, j->sa);
        if (prism) {
            a->c[i] = ex_const(g, cos(j->toff));
            a->s[i] = ex_const(g, sin(j->toff));
        } else {
            a->c[i] = ex_in(g, IN_COS, i);
            a->s[i] = ex_in(g, IN_SIN, i);
        }
        int dz = ex_const(g, j->doff);
        if (prism) dz = ex_add(g, ex_in(g, IN_Q, i), dz);
        a->p[i].v[0] = ex_const(g, j->p0[0]);
        a->p[i].v[1] = ex_sub(g, ex_const(g, j->p0[1]), ex_mul(g, dz, a->sa[i]));
        a->p[i].v[2] = ex_add(g, ex_const(g, j->p0[2]), ex_mul(g, dz, a->ca[i]));
        sbody *b = &a->body[i];
        b->m = ex_const(g, j->mass);
        b->h = sv_const(g, j->h);
        for (int k = 0; k < 6; k++) b->I[k] = ex_const(g, j->I[k]);
    }
    regroup(a);
}

sv3 sv_zero(void)
{
    sv3 r = {{EX_ZERO, EX_ZERO, EX_ZERO}};
    return r;
}

sv3 sv_const(ex_graph *g, const double v[3])
{
    sv3 r = {{ex_const(g, v[0]), ex_const(g, v[1]), ex_const(g, v[2])}};
    return r;
}

sv3 sv_add(ex_graph *g, sv3 a, sv3 b)
{
    for (int k = 0; k < 3; k++) a.v[k] = ex_add(g, a.v[k], b.v[k]);
    return a;
}

sv3 sv_sub(ex_graph *g, sv3 a, sv3 b)
{
    for (int k = 0; k < 3; k++) a.v[k] = ex_sub(g, a.v[k], b.v[k]);
    return a;
}

sv3 sv_scale(ex_graph *g, int k, sv3 a)
{
    for (int i = 0; i < 3; i++) a.v[i] = ex_mul(g, k, a.v[i]);
    return a;
}

sv3 sv_cross(ex_graph *g, sv3 a, sv3 b)
{
    sv3 r;
    r.v[0] = ex_sub(g, ex_mul(g, a.v[1], b.v[2]), ex_mul(g, a.v[2], b.v[1]));
    r.v[1] = ex_sub(g, ex_mul(g, a.v[2], b.v[0]), ex_mul(g, a.v[0], b.v[2]));
    r.v[2] = ex_sub(g, ex_mul(g, a.v[0], b.v[1]), ex_mul(g, a.v[1], b.v[0]));
    return r;
}

int sv_dot(ex_graph *g, sv3 a, sv3 b)
{
    return ex_add(g, ex_fma2(g, a.v[0], b.v[0], a.v[1], b.v[1]), ex_mul(g, a.v[2], b.v[2]));
}

sv3 sv_sym_mul(ex_graph *g, const int S[6], sv3 v)
{
    const int row[3][3] = {{S[0], S[1], S[2]}, {S[1], S[3], S[4]}, {S[2], S[4], S[5]}};
    sv3 r;
    for (int i = 0; i < 3; i++) {
        sv3 ri = {{row[i][0], row[i][1], row[i][2]}};
        r.v[i] = sv_dot(g, ri, v);
    }
    return r;
}

sv3 sv_rot(ex_graph *g, const int R[9], sv3 v)
{
    sv3 r;
    for (int i = 0; i < 3; i++) {
        sv3 ri = {{R[3 * i], R[3 * i + 1], R[3 * i + 2]}};
        r.v[i] = sv_dot(g, ri, v);
    }
    return r;
}

sv3 sym_twist(const sym_arm *a, int i, sv3 v)
{
    ex_graph *g = a->g;
    sv3 r = {{v.v[0], ex_sub(g, ex_mul(g, a->ca[i], v.v[1]), ex_mul(g, a->sa[i], v.v[2])),
              ex_fma2(g, a->sa[i], v.v[1], a->ca[i], v.v[2])}};
    return r;
}

/* R^T v = Rz^T (Rx^T v): the twist undone first (dynamics/dyn_internal.h dyn_to_child). */
sv3 sym_to_child(const sym_arm *a, int i, sv3 v)
{
    ex_graph *g = a->g;
    const int c = a->c[i], s = a->s[i];
    const int u1 = ex_fma2(g, a->ca[i], v.v[1], a->sa[i], v.v[2]);
    const int u2 = ex_sub(g, ex_mul(g, a->ca[i], v.v[2]), ex_mul(g, a->sa[i], v.v[1]));
    sv3 r = {{ex_fma2(g, c, v.v[0], s, u1), ex_sub(g, ex_mul(g, c, u1), ex_mul(g, s, v.v[0])), u2}};
    return r;
}

/* R v = Rx (Rz v) with (c, s) = cos, sin of the joint angle. */
static sv3 to_parent_cs(const sym_arm *a, int i, int c, int s, sv3 v)
{
    ex_graph *g = a->g;
    sv3 t = {{ex_sub(g, ex_mul(g, c, v.v[0]), ex_mul(g, s, v.v[1])),
              ex_fma2(g, s, v.v[0], c, v.v[1]), v.v[2]}};
    return sym_twist(a, i, t);
}

sv3 sym_to_parent(const sym_arm *a, int i, sv3 v)
{
    return to_parent_cs(a, i, a->c[i], a->s[i], v);
}

/* Rz S Rz^T then Rx S Rx^T, each in the double-angle form of dyn_sym_turn_z / _x. */
static void turn_sym_cs(const sym_arm *a, int i, int c, int s, int S[6])
{
    ex_graph *g = a->g;
    const int cc = ex_mul(g, c, c), ss = ex_mul(g, s, s), cs = ex_mul(g, c, s);
    const int A = S[0], B = S[1], E = S[2], D = S[3], F = S[4];
    const int b2 = ex_mulk(g, ex_mul(g, cs, B), 2.0);
    S[0] = ex_sub(g, ex_fma2(g, cc, A, ss, D), b2);
    S[3] = ex_add(g, ex_fma2(g, ss, A, cc, D), b2);
    S[1] = ex_fma2(g, cs, ex_sub(g, A, D), ex_sub(g, cc, ss), B);
    S[2] = ex_sub(g, ex_mul(g, c, E), ex_mul(g, s, F));
    S[4] = ex_fma2(g, s, E, c, F);
    const dyn_form_joint *j = &a->f->joint[i];
    const int xc = a->ca[i], xs = a->sa[i];
    const int xcc = ex_const(g, j->ca * j->ca), xss = ex_const(g, j->sa * j->sa);
    const int xcs = ex_const(g, j->ca * j->sa);
    const int b = S[1], e = S[2], d = S[3], f = S[4], h = S[5];
    const int f2 = ex_mulk(g, ex_mul(g, xcs, f), 2.0);
    S[3] = ex_sub(g, ex_fma2(g, xcc, d, xss, h), f2);
    S[5] = ex_add(g, ex_fma2(g, xss, d, xcc, h), f2);
    S[4] = ex_fma2(g, xcs, ex_sub(g, d, h), ex_const(g, j->ca * j->ca - j->sa * j->sa), f);
    S[1] = ex_sub(g, ex_mul(g, xc, b), ex_mul(g, xs, e));
    S[2] = ex_fma2(g, xs, b, xc, e);
}

void sym_turn_sym(const sym_arm *a, int i, int S[6])
{
    turn_sym_cs(a, i, a->c[i], a->s[i], S);
}

/* acc += body b of M_i moved into M_{i-1} with the joint at angle (c, s): h' = R h + m p,
 * I' = R I R^T + 2 (p.Rh) E - Rh p^T - p Rh^T + m (|p|^2 E - p p^T). */
static void body_to_parent_cs(const sym_arm *a, int i, int c, int s, const sbody *b, sbody *acc)
{
    ex_graph *g = a->g;
    const sv3 p = a->p[i];
    int I[6];
    for (int k = 0; k < 6; k++) I[k] = b->I[k];
    turn_sym_cs(a, i, c, s, I);
    const sv3 h = to_parent_cs(a, i, c, s, b->h);
    const int ph = sv_dot(g, p, h), pp = sv_dot(g, p, p);
    const int dg = ex_add(g, ex_mulk(g, ph, 2.0), ex_mul(g, b->m, pp));
    static const int ij[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int k = 0; k < 6; k++) {
        const int r = ij[k][0], c = ij[k][1];
        int t = ex_add(g, ex_mul(g, h.v[r], p.v[c]), ex_mul(g, p.v[r], h.v[c]));
        t = ex_add(g, t, ex_mul(g, b->m, ex_mul(g, p.v[r], p.v[c])));
        int v = ex_sub(g, I[k], t);
        if (r == c) v = ex_add(g, v, dg);
        acc->I[k] = ex_add(g, acc->I[k], v);
    }
    acc->m = ex_add(g, acc->m, b->m);
    acc->h = sv_add(g, acc->h, sv_add(g, h, sv_scale(g, b->m, p)));
}

void sym_body_to_parent(const sym_arm *a, int i, const sbody *b, sbody *acc)
{
    body_to_parent_cs(a, i, a->c[i], a->s[i], b, acc);
}

/* Base inertial parameters (Khalil and Bennis; the "grouping" of inertial parameters): the
 * part of link j's parameters that its joint's motion leaves unchanged moves to link j-1.
 * Revolute joint: mass, first moment along z and the inertia diag(YY, YY, 0) (with I S = 0,
 * S the joint's unit motion, such a part gains no energy from q_j or qd_j: it acts exactly as
 * if fixed to the parent); link j keeps MX, MY and the inertia with XX - YY, 0 for YY, and
 * XY, XZ, YZ, ZZ. Prismatic joint: the whole rotational inertia moves. Applied from the tool
 * inward; what joint 0 hands on goes to the fixed base, which no output depends on. Every
 * joint torque, H, qdd and the momentum terms stay the same (linear in the parameters); the
 * inner forces of the recursion change, and many terms vanish (the PUMA 560's axisymmetric
 * link 6 keeps only ZZ). */
static void regroup(sym_arm *a)
{
    ex_graph *g = a->g;
    for (int j = a->n - 1; j >= 0; j--) {
        sbody *b = &a->body[j], moved = {EX_ZERO, sv_zero(), {0}};
        if (a->f->joint[j].type == DYN_REVOLUTE) {
            const int yy = b->I[3];
            moved.m = b->m;
            moved.h.v[2] = b->h.v[2];
            moved.I[0] = moved.I[3] = yy;
            b->m = b->h.v[2] = EX_ZERO;
            b->I[0] = ex_sub(g, b->I[0], yy);
            b->I[3] = EX_ZERO;
            if (j > 0) body_to_parent_cs(a, j, EX_ONE, EX_ZERO, &moved, &a->body[j - 1]);
        } else {
            for (int k = 0; k < 6; k++) moved.I[k] = b->I[k], b->I[k] = EX_ZERO;
            if (j > 0) body_to_parent_cs(a, j, a->c[j], a->s[j], &moved, &a->body[j - 1]);
        }
    }
}
