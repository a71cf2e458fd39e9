/*
 * sym.h — the recursions of the dynamics core run on expression nodes instead of numbers
 * (seed 001 §3: NEDYN runs the Newton-Euler algorithm on symbols of one arm). Private to
 * tools/armgen.
 *
 * Files, one job each:
 *   sym.c        the arm (each joint's cos/sin and origin as nodes) and 3-vector helpers
 *   sym_rnea.c   Newton-Euler: inverse dynamics and its terms, friction, momentum
 *   sym_mass.c   composite-body H (Walker-Orin method 3) and the LDL^T solve of H qdd = r
 *   sym_aba.c    the O(n) articulated-body forward dynamics (seed 004)
 *   sym_kin.c    the tool Jacobian in the base frame
 *
 * Every function mirrors the general core's (dynamics/rnea.c, mass_matrix.c, aba.c,
 * momentum.c, kinematics.c) in the internal form (dynamics.h, dyn_form): frames M_i, joint
 * rotation R = Rx(alpha) Rz(theta), inertia about each frame origin. Zeros passed as inputs
 * (qd = 0 for gravity, ...) fold the unused terms away, as NEDYN's variants GTERM, CTERM,
 * HTERM and KTERM do by "setting the terms to zero".
 */
#ifndef ARMD_ARMGEN_SYM_H
#define ARMD_ARMGEN_SYM_H

#include "dynamics/dynamics.h"
#include "tools/armgen/expr.h"

typedef struct {
    int v[3];
} sv3;

/* A rigid body in some frame: mass, first moment h = m c, inertia about the origin. */
typedef struct {
    int m;
    sv3 h;
    int I[6]; /* xx xy xz yy yz zz */
} sbody;

/* One arm on one graph. */
typedef struct {
    ex_graph *g;
    dyn_form form;     /* the model's numbers, load-time noise removed (sym.c snap_form) */
    const dyn_form *f; /* = &form */
    int n;
    int c[DYN_MAX_DOF], s[DYN_MAX_DOF]; /* cos, sin theta_i: inputs (revolute), constants */
    sv3 p[DYN_MAX_DOF];                 /* origin of M_i in M_{i-1} */
    int ca[DYN_MAX_DOF], sa[DYN_MAX_DOF];
    int sr[DYN_MAX_DOF], pr[DYN_MAX_DOF]; /* 1/0 revolute, prismatic (constants) */
    sbody body[DYN_MAX_DOF]; /* link inertia in M_i: constants, base parameters (sym.c regroup) */
} sym_arm;

void sym_arm_init(sym_arm *a, ex_graph *g, const dyn_form *f);

/* 3-vectors */
sv3 sv_zero(void);
sv3 sv_const(ex_graph *g, const double v[3]);
sv3 sv_add(ex_graph *g, sv3 a, sv3 b);
sv3 sv_sub(ex_graph *g, sv3 a, sv3 b);
sv3 sv_scale(ex_graph *g, int k, sv3 a);
sv3 sv_cross(ex_graph *g, sv3 a, sv3 b);
int sv_dot(ex_graph *g, sv3 a, sv3 b);
sv3 sv_sym_mul(ex_graph *g, const int S[6], sv3 v); /* S v, S symmetric */
sv3 sv_rot(ex_graph *g, const int R[9], sv3 v);     /* R v, R row-major */

/* R^T v (a parent-frame vector in M_i) and R v (an M_i vector in the parent), R = Rx Rz. */
sv3 sym_to_child(const sym_arm *a, int i, sv3 v);
sv3 sym_to_parent(const sym_arm *a, int i, sv3 v);
/* Rx(alpha_i) v and its transpose (the constant twist alone). */
sv3 sym_twist(const sym_arm *a, int i, sv3 v);

/* Symmetric S' = R S R^T for the joint rotation R = Rx(alpha_i) Rz(theta_i), and a body of
 * M_i moved into M_{i-1} and added to acc (parallel-axis form of dynamics/mass_matrix.c). */
void sym_turn_sym(const sym_arm *a, int i, int S[6]);
void sym_body_to_parent(const sym_arm *a, int i, const sbody *b, sbody *acc);

/* ------------------------------------------------------------------ sym_rnea.c */

/* Which inputs a Newton-Euler pass sees: NULL velocity/acceleration arrays are zero. */
typedef struct {
    const int *qd, *qdd; /* per joint, or NULL */
    sv3 base_acc;        /* acceleration of the base (-g for gravity) in the internal base */
    const int *wrench;   /* 6 wrench nodes (environment on tool, tool frame), or NULL */
} sym_ne_in;

/* tau_i = the Newton-Euler recursion (dynamics/rnea.c rnea_run, without armature and
 * friction). */
void sym_rnea(const sym_arm *a, const sym_ne_in *in, int *tau);
/* Joint friction viscous qd + Coulomb (dynamics/rnea.c coulomb()). */
int sym_friction(const sym_arm *a, int i, int qd);
/* p = H qd (+ armature qd if arm_flag is true at run time) and C^T qd (dynamics/momentum.c). */
void sym_momentum(const sym_arm *a, const int *qd, int arm_flag, int *p, int *ctqd);

/* ------------------------------------------------------------------ sym_mass.c */

/* H (n*n row-major nodes) by composite bodies; arm_flag selects armature on the diagonal. */
void sym_mass_matrix(const sym_arm *a, int arm_flag, int *H);
/* x = H^-1 r by H = L D L^T (no square roots); D_j into dpiv for the caller's check. */
void sym_ldlt_solve(ex_graph *g, int n, const int *H, const int *r, int *x, int *dpiv);

/* ------------------------------------------------------------------ sym_aba.c */

/* qdd from tau (nodes) by the articulated-body recursion, with gravity base acceleration
 * base_acc, armature selected by arm_flag and the friction torques fric (or NULL) subtracted;
 * the pivots D_i into dpiv. */
void sym_aba(const sym_arm *a, const int *qd, const int *tau, sv3 base_acc, int arm_flag,
             const int *fric, int *qdd, int *dpiv);

/* ------------------------------------------------------------------ sym_kin.c */

/* 6 x n row-major geometric Jacobian of the tool origin in the base frame. */
void sym_jacobian(const sym_arm *a, int *J);

/* The tool frame's pose in the base frame, T (12 nodes: 3x4 row-major [R | p]) as dyn_fk
 * writes it. */
void sym_tool_pose(const sym_arm *a, int *T);

#endif
