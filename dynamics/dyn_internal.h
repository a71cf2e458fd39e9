/*
 * dyn_internal.h — the internal form every description is converted to (private to dynamics/).
 *
 * Per joint i (0-based) the pose of joint i's moving frame M_i in the parent's moving frame
 * M_{i-1} (the internal base B for i = 0) is
 *     R_i = Rx(alpha_i) Rz(theta_i),   p_i = p0_i + disp_i * Rx(alpha_i) e_z,
 *     theta_i = sr*q + toff,   disp_i = pr*q + doff,
 * i.e. a constant twist about x (stored as cos/sin), then the joint's rotation about / translation
 * along the local z axis. Every description is brought to this form at load time (model.c): any
 * constant rotation is split as Rz(phi) Rx(alpha) Rz(psi) (z-x-z Euler angles); Rz(psi) joins
 * theta (it commutes with the joint motion), Rz(phi) is absorbed by re-defining the parent's
 * moving frame as M_{i-1} Rz(phi) (again commuting with the parent's motion), and the first
 * joint's phi becomes the constant rotation `base` of B in the true base frame. Applying R_i or
 * R_i^T to a vector then costs 8 multiplications instead of 9 plus forming R (seed 000 §5's
 * structure: joint axis along local z, constant parts precomputed). All inertial parameters are
 * re-expressed in M_i. The frame the description calls "link frame i" is M_i * link (a constant
 * pose), used only by dyn_fk.
 *
 * Rotations are 3x3 row-major; a rotation R of frame B in frame A maps B-coordinates to
 * A-coordinates (v_A = R v_B). Symmetric 3x3 matrices are stored as xx xy xz yy yz zz.
 */
#ifndef ARMD_DYN_INTERNAL_H
#define ARMD_DYN_INTERNAL_H

#include <math.h>
#include <string.h>

#include "dynamics/dynamics.h"

/* A rigid transform: rotation R (row-major) and origin p, both in the outer frame. */
typedef struct {
    double R[9];
    double p[3];
} dyn_frame;

/* Inertial parameters of one body in some frame: mass, first moment h = m*com, and the
 * rotational inertia about the frame ORIGIN (symmetric, xx xy xz yy yz zz). */
typedef struct {
    double m;
    double h[3];
    double I[6];
} dyn_body;

/* The constant twist Rx(alpha): 0, +-pi/2 and pi are sign permutations. */
typedef enum {
    DYN_TWIST_0,
    DYN_TWIST_P90,
    DYN_TWIST_M90,
    DYN_TWIST_180,
    DYN_TWIST_GENERAL
} dyn_twist_kind;

/* One joint of the internal form. sr/pr are 1/0 masks (revolute/prismatic) so the recursions
 * need no branches on the joint type. */
typedef struct {
    double ca, sa; /* cos, sin of the constant twist alpha about x */
    dyn_twist_kind twist;
    double p0[3]; /* pre-motion origin in the parent moving frame [m] */
    double toff;  /* theta = sr*q + toff [rad] */
    double doff;  /* disp = pr*q + doff [m] */
    double sr, pr;
    dyn_body body; /* link inertia in M_i (for the last joint: link + payload) */
    double armature, viscous, coulomb_pos, coulomb_neg;
} dyn_joint;

struct dyn_model {
    int n;
    dyn_joint_type type[DYN_MAX_DOF];
    dyn_joint j[DYN_MAX_DOF];
    dyn_frame link[DYN_MAX_DOF]; /* described link frame i in M_i */
    dyn_frame tool;              /* tool frame in M_{n-1} */
    dyn_body last_link;          /* last link alone, in M_{n-1} (payload added on top) */
    dyn_payload payload;         /* the payload added (tool frame) */
    dyn_frame base;              /* internal base B in the base frame (a rotation about z) */
    double gravity[3];           /* in the base frame */
    double gravity_b[3];         /* the same in B (what the recursions use) */
    double friction_smoothing;
};

/* Articulated-body inertia in block form [[A, B], [B^T, C]] (angular first). */
typedef struct {
    double A[6], B[9], C[6];
} dyn_abi;

struct dyn_data {
    int n;
    /* per-joint state of the last recursion, all in M_i */
    double p[DYN_MAX_DOF][3];  /* origin of M_i in M_{i-1} */
    double cs[DYN_MAX_DOF][2]; /* cos, sin of theta_i */
    double w[DYN_MAX_DOF][3], dw[DYN_MAX_DOF][3], a[DYN_MAX_DOF][3];
    double f[DYN_MAX_DOF][3], nm[DYN_MAX_DOF][3];
    /* articulated-body workspace */
    dyn_abi abi[DYN_MAX_DOF];
    double v[DYN_MAX_DOF][6], c[DYN_MAX_DOF][6], pa[DYN_MAX_DOF][6], U[DYN_MAX_DOF][6];
    double Dinv[DYN_MAX_DOF], u[DYN_MAX_DOF];
    /* composite bodies, poses, scratch vectors */
    dyn_body comp[DYN_MAX_DOF];
    dyn_frame pose[DYN_MAX_DOF]; /* M_i in the base */
    double zero[DYN_MAX_DOF], tmp[DYN_MAX_DOF], tmp2[DYN_MAX_DOF];
    double H[DYN_MAX_DOF * DYN_MAX_DOF];
};

/* Small 3-vector / 3x3 helpers shared by the recursions. */
static inline void dyn_cross(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = R v */
static inline void dyn_rot(const double R[9], const double v[3], double out[3])
{
    double x = R[0] * v[0] + R[1] * v[1] + R[2] * v[2];
    double y = R[3] * v[0] + R[4] * v[1] + R[5] * v[2];
    double z = R[6] * v[0] + R[7] * v[1] + R[8] * v[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = R^T v */
static inline void dyn_rot_t(const double R[9], const double v[3], double out[3])
{
    double x = R[0] * v[0] + R[3] * v[1] + R[6] * v[2];
    double y = R[1] * v[0] + R[4] * v[1] + R[7] * v[2];
    double z = R[2] * v[0] + R[5] * v[1] + R[8] * v[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = S v for symmetric S stored xx xy xz yy yz zz */
static inline void dyn_sym_mul(const double S[6], const double v[3], double out[3])
{
    double x = S[0] * v[0] + S[1] * v[1] + S[2] * v[2];
    double y = S[1] * v[0] + S[3] * v[1] + S[4] * v[2];
    double z = S[2] * v[0] + S[4] * v[1] + S[5] * v[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* Origin p of M_i in M_{i-1} (see the top of this file). */
static inline __attribute__((always_inline)) void dyn_joint_origin(const dyn_joint *restrict jt,
                                                                   double q, double *restrict p)
{
    const double dz = jt->pr * q + jt->doff;
    p[0] = jt->p0[0];
    p[1] = jt->p0[1] - dz * jt->sa;
    p[2] = jt->p0[2] + dz * jt->ca;
}

/* cos, sin of theta and the origin p of M_i in M_{i-1}, for one joint. */
static inline __attribute__((always_inline)) void
dyn_joint_cs_p(const dyn_joint *restrict jt, double q, double *restrict cs, double *restrict p)
{
    const double th = jt->sr * q + jt->toff;
    dyn_sincos_n(&th, &cs[1], &cs[0], 1);
    dyn_joint_origin(jt, q, p);
}

/* Full joint rotation R = Rx(alpha) Rz(theta) (row-major) and origin p of M_i in M_{i-1}, for
 * the code that composes frames (poses, mass matrix). */
static inline __attribute__((always_inline)) void
dyn_joint_transform(const dyn_joint *restrict jt, double q, double *restrict R, double *restrict p)
{
    double cs[2];
    dyn_joint_cs_p(jt, q, cs, p);
    const double c = cs[0], s = cs[1], ca = jt->ca, sa = jt->sa;
    R[0] = c;
    R[1] = -s;
    R[2] = 0.0;
    R[3] = ca * s;
    R[4] = ca * c;
    R[5] = -sa;
    R[6] = sa * s;
    R[7] = sa * c;
    R[8] = ca;
}

/* u = Rx(alpha)^T v (y, z components; x is unchanged). The common twists 0, +-pi/2, pi are
 * sign permutations (no arithmetic); the branch depends only on the model, so it is predicted
 * perfectly after the first call. */
static inline __attribute__((always_inline)) void dyn_twist_t(const dyn_joint *jt, double v1,
                                                              double v2, double *u1, double *u2)
{
    switch (jt->twist) {
    case DYN_TWIST_0:
        *u1 = v1, *u2 = v2;
        break;
    case DYN_TWIST_P90:
        *u1 = v2, *u2 = -v1;
        break;
    case DYN_TWIST_M90:
        *u1 = -v2, *u2 = v1;
        break;
    case DYN_TWIST_180:
        *u1 = -v1, *u2 = -v2;
        break;
    default:
        *u1 = jt->ca * v1 + jt->sa * v2, *u2 = jt->ca * v2 - jt->sa * v1;
        break;
    }
}

/* u = Rx(alpha) v (y, z components). */
static inline __attribute__((always_inline)) void dyn_twist(const dyn_joint *jt, double v1,
                                                            double v2, double *u1, double *u2)
{
    switch (jt->twist) {
    case DYN_TWIST_0:
        *u1 = v1, *u2 = v2;
        break;
    case DYN_TWIST_P90:
        *u1 = -v2, *u2 = v1;
        break;
    case DYN_TWIST_M90:
        *u1 = v2, *u2 = -v1;
        break;
    case DYN_TWIST_180:
        *u1 = -v1, *u2 = -v2;
        break;
    default:
        *u1 = jt->ca * v1 - jt->sa * v2, *u2 = jt->sa * v1 + jt->ca * v2;
        break;
    }
}

/* out = R^T v with R = Rx(alpha) Rz(theta), (c, s) = cos, sin theta: a parent-frame vector in
 * M_i (at most 8 mult, 4 add). */
static inline __attribute__((always_inline)) void
dyn_to_child(const dyn_joint *jt, double c, double s, const double v[3], double out[3])
{
    double u1, u2;
    dyn_twist_t(jt, v[1], v[2], &u1, &u2);
    const double x = c * v[0] + s * u1;
    const double y = c * u1 - s * v[0];
    out[0] = x;
    out[1] = y;
    out[2] = u2;
}

/* out = R v with R = Rx(alpha) Rz(theta): an M_i vector in the parent frame. */
static inline __attribute__((always_inline)) void
dyn_to_parent(const dyn_joint *jt, double c, double s, const double v[3], double out[3])
{
    const double x = c * v[0] - s * v[1];
    const double u1 = s * v[0] + c * v[1];
    double y, z;
    dyn_twist(jt, u1, v[2], &y, &z);
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* S' = Rz S Rz^T for symmetric S (xx xy xz yy yz zz), with cc = c^2, ss = s^2, cs = c s of the
 * angle: the (x, y) block turns by the double angle, the z column by the angle. */
static inline __attribute__((always_inline)) void dyn_sym_turn_z(double c, double s, double cc,
                                                                 double ss, double cs, double S[6])
{
    const double a = S[0], b = S[1], e = S[2], d = S[3], f = S[4];
    const double b2 = 2.0 * cs * b;
    S[0] = cc * a + ss * d - b2;
    S[3] = ss * a + cc * d + b2;
    S[1] = cs * (a - d) + (cc - ss) * b;
    S[2] = c * e - s * f;
    S[4] = s * e + c * f;
}

/* M' = Rx M Rx^T for a full row-major 3x3 M (columns, then rows, turned by dyn_twist). */
static inline __attribute__((always_inline)) void dyn_full_turn_x(const dyn_joint *jt, double M[9])
{
    for (int k = 0; k < 3; k++) dyn_twist(jt, M[3 + k], M[6 + k], &M[3 + k], &M[6 + k]);
    for (int k = 0; k < 3; k++)
        dyn_twist(jt, M[3 * k + 1], M[3 * k + 2], &M[3 * k + 1], &M[3 * k + 2]);
}

/* S' = Rx S Rx^T for symmetric S: for a general twist the double-angle form on the (y, z)
 * block (cc, ss, cs = cos^2, sin^2, cos sin of alpha), else the sign permutation. */
static inline __attribute__((always_inline)) void dyn_sym_turn_x(const dyn_joint *jt, double cc,
                                                                 double ss, double cs, double S[6])
{
    if (jt->twist == DYN_TWIST_GENERAL) {
        const double c = jt->ca, s = jt->sa;
        const double b = S[1], e = S[2], d = S[3], f = S[4], g = S[5];
        const double f2 = 2.0 * cs * f;
        S[3] = cc * d + ss * g - f2;
        S[5] = ss * d + cc * g + f2;
        S[4] = cs * (d - g) + (cc - ss) * f;
        S[1] = c * b - s * e;
        S[2] = s * b + c * e;
        return;
    }
    double M[9] = {S[0], S[1], S[2], S[1], S[3], S[4], S[2], S[4], S[5]};
    dyn_full_turn_x(jt, M);
    S[1] = M[1], S[2] = M[2], S[3] = M[4], S[4] = M[5], S[5] = M[8];
}

/* cos/sin of every theta_i and every origin p_i into d->cs, d->p, in one pass before the
 * recursions: all joints' trigonometry in one vectorised call (sincos.h), independent of the
 * recursion chain. */
static inline void dyn_transforms(const dyn_model *restrict m, dyn_data *restrict d,
                                  const double *restrict q)
{
    const int n = m->n;
    double th[DYN_MAX_DOF], s[DYN_MAX_DOF], c[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) {
        th[i] = m->j[i].sr * q[i] + m->j[i].toff;
        dyn_joint_origin(&m->j[i], q[i], d->p[i]);
    }
    dyn_sincos_n(th, s, c, n);
    for (int i = 0; i < n; i++) d->cs[i][0] = c[i], d->cs[i][1] = s[i];
}

/* Internal entry points shared between files. */
void dyn_frame_compose(const dyn_frame *a, const dyn_frame *b, dyn_frame *out);
void dyn_rpy_to_R(const double rpy[3], double R[9]);
void dyn_body_transform(const dyn_frame *f, const dyn_body *b, dyn_body *out);
void dyn_body_add(dyn_body *acc, const dyn_body *b);
void dyn_body_from_com(double mass, const double com[3], const double Icom[6], dyn_body *out);

/* Core RNEA in the internal form. qd/qdd may be d->zero. grav: 1 to include gravity. wrench
 * may be NULL. Writes tau without armature/friction. */
void dyn_rnea_core(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                   const double *qdd, int grav, const double *wrench, double *tau);
/* chol.c: Cholesky of the n x n block at A (leading dimension lda) in place, the solve with its
 * factor, and both; each -1 when A is not positive definite or the result not finite. */
int dyn_chol_factor(double *A, int n, int lda);
int dyn_chol_apply(const double *L, int n, int lda, double *y);
int dyn_chol_solve(double *A, int n, int lda, double *y);

/* Poses of every M_i in the base into d->pose. */
void dyn_poses(const dyn_model *m, dyn_data *d, const double *q);

#endif
