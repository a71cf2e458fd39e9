/*
 * dynamics.h — the only way into armd's rigid-body dynamics core.
 *
 * Pure computation: no I/O, no allocation after dyn_model_create() and dyn_data_create().
 * Modelled on MuJoCo's engine: a const model (dyn_model), a preallocated workspace (dyn_data),
 * flat arrays, one algorithm per function.
 *
 * Units: SI throughout (m, rad, kg, kg m^2, N, N m, s). Joint vectors have length n (dof) and are
 * in chain order, base to tool. Matrices are row-major flat arrays.
 *
 * Frames: frame 0 is the base. "Link frame i" is the frame the description form attaches to link
 * i (standard DH: the distal frame i; modified DH: frame i at joint i; URDF: the child link frame,
 * i.e. the joint frame). Every per-link inertial quantity (com, inertia) is given in that link
 * frame. The tool frame is fixed in the last link frame (tool_xyz, tool_rpy).
 *
 * Gravity: the vector g in the base frame, e.g. {0, 0, -9.81} when z0 points up.
 * External wrench: the wrench {fx, fy, fz, mx, my, mz} the ENVIRONMENT applies to the tool, at
 * the tool frame origin, expressed in the tool frame; the joints then need J^T w less torque:
 * tau = ID(q, qd, qdd) - J^T w (see dynamics/README.md).
 */
#ifndef ARMD_DYNAMICS_H
#define ARMD_DYNAMICS_H

#include <stddef.h>

#include "dynamics/sincos.h" /* dyn_sincos_n: sin and cos of many angles at once */

#define DYN_MAX_DOF 64

typedef enum { DYN_REVOLUTE = 0, DYN_PRISMATIC = 1 } dyn_joint_type;

/* How a joint's kinematics are described in the input; all become one internal form. */
typedef enum {
    DYN_DH_STANDARD = 0, /* Denavit-Hartenberg (distal): Rz(theta) Tz(d) Tx(a) Rx(alpha) */
    DYN_DH_MODIFIED = 1, /* Craig (proximal): Rx(alpha) Tx(a) Rz(theta) Tz(d) */
    DYN_URDF = 2         /* origin (xyz, then fixed-axis roll-pitch-yaw) in parent, then axis */
} dyn_kin_form;

/* One joint and the link it moves, as described by the user. */
typedef struct {
    dyn_joint_type type;
    dyn_kin_form form;
    /* DH forms: a [m], alpha [rad], d [m], theta [rad]. For a revolute joint theta is the
     * constant offset added to q; for a prismatic joint d is the constant offset added to q. */
    double a, alpha, d, theta;
    /* URDF form: joint frame origin in the parent link frame [m, rad] and the unit joint axis
     * (expressed in the joint frame). */
    double origin_xyz[3], origin_rpy[3], axis[3];
    double mass;       /* kg */
    double com[3];     /* centre of mass in link frame [m] */
    double inertia[6]; /* about the COM, link-frame axes: ixx ixy ixz iyy iyz izz [kg m^2] */
    double armature;   /* reflected rotor inertia G^2 Jm, joint side [kg m^2 or kg] */
    double viscous;    /* viscous friction, joint side [N m s/rad or N s/m] */
    /* Coulomb friction torque for qd > 0 and for qd < 0, signed as published (coulomb_neg is
     * normally negative). Friction torque = viscous*qd + (qd>0 ? coulomb_pos : coulomb_neg),
     * smoothed over |qd| < friction_smoothing of the model (0 = a hard step, 0 at qd = 0). */
    double coulomb_pos, coulomb_neg;
} dyn_joint_desc;

/* A rigid payload held by the tool: mass [kg], COM in the tool frame [m], inertia about its COM
 * in tool-frame axes (ixx ixy ixz iyy iyz izz) [kg m^2]. */
typedef struct {
    double mass;
    double com[3];
    double inertia[6];
} dyn_payload;

/* Everything needed to build a model. Plain data; filled by config/ or by tests. */
typedef struct {
    int n; /* number of joints, 1..DYN_MAX_DOF */
    dyn_joint_desc joint[DYN_MAX_DOF];
    double gravity[3];         /* base frame [m/s^2] */
    double tool_xyz[3];        /* tool frame origin in the last link frame [m] */
    double tool_rpy[3];        /* tool frame orientation (fixed-axis roll-pitch-yaw) [rad] */
    dyn_payload payload;       /* initial payload (mass 0 = none) */
    double friction_smoothing; /* [rad/s or m/s], 0 = hard Coulomb step */
} dyn_model_desc;

typedef struct dyn_model dyn_model; /* const after creation, except dyn_set_payload() */
typedef struct dyn_data dyn_data;   /* per-thread workspace for one model */

/* Principal moments [kg m^2] (ascending) and axes of an inertia tensor (ixx ixy ixz iyy iyz izz):
 * I = R diag(moments) R^T, R row-major with the unit axes as columns. */
void dyn_inertia_principal(const double I[6], double moments[3], double R[9]);

/* Eigenvalues w and eigenvectors (the columns of v, row-major k x k) of the symmetric k x k
 * matrix a (row-major, destroyed): a = v diag(w) v^T, w unordered. */
void dyn_sym_eigen(int k, double *a, double *w, double *v);

/* Validation findings. Called once per finding; joint is 0-based (or -1 for the whole model),
 * field the description field name ("mass", "inertia", "com", ...). Errors make
 * dyn_model_create() fail; warnings (e.g. inertia violating the triangle inequality) do not. */
typedef void (*dyn_issue_fn)(void *ctx, int joint, const char *field, int is_error,
                             const char *message);

/* Checks a description; returns the number of errors (warnings are reported, not counted). */
int dyn_desc_validate(const dyn_model_desc *desc, dyn_issue_fn issue, void *ctx);

/* Builds a model (validates first; issue may be NULL). Returns NULL on error. */
dyn_model *dyn_model_create(const dyn_model_desc *desc, dyn_issue_fn issue, void *ctx);
void dyn_model_free(dyn_model *m);
int dyn_model_dof(const dyn_model *m);
dyn_joint_type dyn_model_joint_type(const dyn_model *m, int i);

/* Replaces the payload in O(1) without allocating (call between ticks, never concurrently with
 * another function using the model). */
void dyn_set_payload(dyn_model *m, const dyn_payload *p);
void dyn_set_gravity(dyn_model *m, const double g[3]);

/* The standard parameters of joint i and its link, DYN_PARAMS per joint, linear in the dynamics
 * (identification): m, h = m c (3), the inertia about the link-frame origin in link-frame axes
 * (ixx ixy ixz iyy iyz izz), armature, viscous, coulomb_pos, coulomb_neg. */
#define DYN_PARAMS 14
/* desc's parameters into pi[DYN_PARAMS * n]. */
void dyn_params_from_desc(const dyn_model_desc *desc, double *pi);
/* pi[DYN_PARAMS * n] into desc's mass, com (h / m; 0 for m = 0), inertia about the COM,
 * armature, viscous and Coulomb terms; the rest of desc is left as it is. Not validated. */
void dyn_params_to_desc(const double *pi, dyn_model_desc *desc);
/* Replaces joint i's DYN_PARAMS parameters in O(1), any values (unvalidated: a unit parameter
 * for strobing); between uses, like dyn_set_payload. */
void dyn_set_joint_params(dyn_model *m, int i, const double *p);
/* The regressor Y (n x DYN_PARAMS n, row-major) with tau = Y pi + tau_known at (q, qd, qdd):
 * every column the inverse dynamics (gravity, inertia, Coriolis, armature, friction) of one unit
 * parameter with all others zero (strobing the recursion, as seeds 000 and 001 do for H);
 * tau_known (may be NULL) the payload's part. m's parameters are restored afterwards; m is
 * scratch meanwhile. Offline: 14 n recursions per call. */
void dyn_regressor(dyn_model *m, dyn_data *d, const double *q, const double *qd, const double *qdd,
                   double *Y, double *tau_known);

dyn_data *dyn_data_create(const dyn_model *m);
void dyn_data_free(dyn_data *d);

/* Which effects the recursions include. */
enum { DYN_GRAVITY = 1u, DYN_ARMATURE = 2u, DYN_FRICTION = 4u, DYN_ALL = 7u };

/* Inverse dynamics (recursive Newton-Euler): tau = H(q) qdd + C(q,qd) qd + G(q) [+ armature
 * qdd] [+ friction(qd)] - J(q)^T w. wrench may be NULL (no external wrench). */
void dyn_rnea(const dyn_model *m, dyn_data *d, const double *q, const double *qd, const double *qdd,
              const double *wrench, unsigned flags, double *tau);

/* The separate terms, each from the same recursion without forming matrices. */
void dyn_gravity(const dyn_model *m, dyn_data *d, const double *q, double *tau); /* G(q) */
void dyn_coriolis(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                  double *tau); /* C qd */
void dyn_inertia_torque(const dyn_model *m, dyn_data *d, const double *q, const double *qdd,
                        unsigned flags, double *tau); /* H(q) qdd (+ armature if flag) */
void dyn_wrench_torque(const dyn_model *m, dyn_data *d, const double *q, const double *wrench,
                       double *tau); /* J^T w */
void dyn_friction(const dyn_model *m, const double *qd, double *tau);
/* Friction with its two parts at two velocities: viscous * qd_v plus the Coulomb torque at
 * qd_c, blended over |qd_c| < eps as dyn_friction blends it over the model's
 * friction_smoothing (eps = 0: the hard step, 0 at qd_c = 0). A controller feeds Coulomb
 * friction forward at the desired velocity this way, where the measured one would flip it with
 * every sticking reversal. */
void dyn_friction_at(const dyn_model *m, const double *qd_v, const double *qd_c, double eps,
                     double *tau);

/* Generalized momentum p = H(q) qd (+ armature qd when flags has DYN_ARMATURE) and C(q,qd)^T qd
 * for the Christoffel factorisation (dH/dt = C + C^T), both in O(n) from one recursion without
 * forming a matrix: what the momentum observer of collision detection needs every tick. */
void dyn_momentum(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                  unsigned flags, double *p, double *ctqd);

/* Joint-space inertia matrix H (n*n, row-major), composite rigid bodies; armature on the
 * diagonal when flags has DYN_ARMATURE. */
void dyn_mass_matrix(const dyn_model *m, dyn_data *d, const double *q, unsigned flags, double *H);
/* The same H by strobing the recursion with unit accelerations (cross-check, O(n^2)). */
void dyn_mass_matrix_strobe(const dyn_model *m, dyn_data *d, const double *q, unsigned flags,
                            double *H);

/* Forward dynamics: solves dyn_rnea(q, qd, qdd, wrench, flags) == tau for qdd.
 * _chol: H by composite rigid bodies + Cholesky. _aba: O(n) recursive (Vereshchagin /
 * articulated body). Return 0, or -1 if H is not positive definite or so close to singular
 * that qdd is not finite (e.g. a link of 1e-307 kg m^2; qdd must not be used then). */
int dyn_forward_chol(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                     const double *tau, const double *wrench, unsigned flags, double *qdd);
int dyn_forward_aba(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                    const double *tau, const double *wrench, unsigned flags, double *qdd);

/* Forward kinematics. A pose is 12 doubles, row-major [R | p] (3x4) of the frame in the base
 * frame. link_poses (may be NULL) receives n poses (link frames 1..n as described), tool (may be
 * NULL) the tool frame including tool_xyz/rpy. */
void dyn_fk(const dyn_model *m, dyn_data *d, const double *q, double *link_poses, double *tool);

/* The unit quaternion {w, x, y, z} of a rotation R (3x3 row-major, v_outer = R v_inner), w >= 0
 * (Shepperd's method: the largest of 4w^2, 4x^2, 4y^2, 4z^2 is taken from the trace so the
 * square root never sees a small number). */
void dyn_rot_to_quat(const double R[9], double quat[4]);

/* Geometric Jacobian of the tool frame origin: 6 x n row-major, rows 0-2 linear velocity,
 * rows 3-5 angular velocity, both in the base frame. */
void dyn_jacobian(const dyn_model *m, dyn_data *d, const double *q, double *J);

/* The wrench F the environment applies at the tool frame origin that joint torques tau balance,
 * tau = J^T F with J = dyn_jacobian(q): F[0..2] the force [N], F[3..5] the moment about the
 * tool origin [N m], both in the BASE frame (libfranka's O_F_ext_hat_K convention; note that
 * dyn_rnea's wrench argument is in tool axes). Damped least squares, F = (J J^T + damping^2
 * I)^-1 J tau: exact for damping 0 where J has full row rank; near a singularity (a singular
 * value s of J comparable to damping) the components along it are scaled by s^2 / (s^2 +
 * damping^2) instead of growing without bound; with fewer than 6 joints the minimum-norm
 * wrench. tau [N m|N] is typically the collision observer's external torque. Returns 0, or -1
 * for non-finite input or a negative damping (F untouched). No allocation. (statics.c) */
int dyn_tool_wrench(const dyn_model *m, dyn_data *d, const double *q, const double *tau,
                    double damping, double F[6]);

/* The operational-space (task) inertia at q (Khatib 1987), base-frame axes x, y, z [m], then
 * rotation about x, y, z [rad]; H with armature: A = J H^-1 J^T (6 x 6 row-major, the inverse
 * task inertia: the tool's acceleration under a unit force or moment at rest, without gravity)
 * and Lambda = A^-1 [kg, kg m, kg m^2]. 1 / A_ii is the mass a force along axis i alone meets
 * (a lower bound of Lambda_ii). J receives the tool Jacobian (6 x n, dyn_jacobian). Returns 0
 * with Lambda; 1 where A is singular (fewer than 6 joints, or at a singularity: Lambda zero);
 * -1 for non-finite q or a singular H. Scratch: d's mass-matrix buffer; no allocation.
 * (task_inertia.c) */
int dyn_task_inertia(const dyn_model *m, dyn_data *d, const double *q, double *J, double A[36],
                     double Lambda[36]);

/* ---------------------------------------------------------------- inverse kinematics (ik.c) */

/* The error of a pose against a target pose (both 3x4 row-major [R | p] in the base frame, as
 * dyn_fk writes them): e[0..2] = p_target - p [m], e[3..5] = the rotation vector (axis * angle,
 * angle in [0, pi]) of R_target R^T [rad], both in the base frame. The log map goes through the
 * quaternion of dyn_rot_to_quat, so it stays accurate for angles near 0 and near pi. */
void dyn_pose_error(const double target[12], const double pose[12], double e[6]);

/* Which rows of the pose error an IK solve drives to zero. The six rows are the position error
 * in the BASE frame (x, y, z) [m] and the rotation error in the TOOL frame (R^T times the
 * rotation vector of dyn_pose_error: rotation about the tool's own x, y, z axes) [rad]. */
typedef enum {
    DYN_IK_FULL = 0,           /* all six rows: position and orientation */
    DYN_IK_POSITION = 1,       /* the three position rows; the orientation is left free */
    DYN_IK_POSITION_PITCH = 2, /* the position rows and one pitch row: pitch = atan2(-u_x, u_z),
                                * u = R^T e_z the base z axis in tool axes, i.e. the rotation
                                * about the tool's own y axis from the vertical, whatever the
                                * rotation about the base z axis (yaw): for R = Rz(a) Ry(b) it
                                * is b, over the full circle. What a yaw + pitch-pitch-pitch arm
                                * reaches (OpenManipulator-X: pitch = q2 + q3 + q4). The
                                * target's yaw is ignored; give it as Rz(any) Ry(pitch) (a roll
                                * about tool x changes u, so the pitch read from it; a target
                                * whose tool y axis is vertical has none: bad input) */
    DYN_IK_WEIGHTED = 3        /* the rows with weight[k] > 0, each scaled by weight[k] */
} dyn_ik_task;

/* How an IK solve ended. */
typedef enum {
    DYN_IK_OK = 0,          /* the task rows are within tol_pos / tol_rot, sigma_min >= sing_tol */
    DYN_IK_SINGULAR = 1,    /* within tolerance too (q is a solution), but sigma_min < sing_tol:
                             * at (or next to) a singularity, where some tool motions need
                             * unbounded joint speed; a planner should not path through q */
    DYN_IK_UNREACHABLE = 2, /* stopped at a least-squares minimum of the weighted error above
                             * tolerance: the target is outside what the arm reaches in the
                             * task's rows within its limits (or q0 led to a local minimum:
                             * another q0 may reach it); q is the nearest pose found */
    DYN_IK_NO_CONVERGENCE = 3, /* max_iter steps taken, the error still decreasing */
    DYN_IK_BAD_INPUT = 4       /* non-finite target or q0, a target R that is no rotation (to
                                * 1e-6), or bad options; nothing computed, q = q0 */
} dyn_ik_status;

/* Options of dyn_ik. Every field left 0 (or NULL) takes its default, so {0} or a NULL opt means
 * "all defaults"; negative or non-finite values are bad input. */
typedef struct {
    dyn_ik_task task;
    double weight[6];            /* DYN_IK_WEIGHTED only: row weights (>= 0; x y z [1/m],
                                  * rx ry rz about the tool axes [1/rad]); ignored otherwise
                                  * (the rows a task includes have weight 1) */
    double tol_pos;              /* [m] position rows' error norm for success (default 1e-9) */
    double tol_rot;              /* [rad] rotation rows' error norm (default 1e-9) */
    int max_iter;                /* trial steps, each one FK + Jacobian (default 100) */
    double max_step;             /* largest change of any joint per step [rad or m] (0.5) */
    double sing_tol;             /* sigma_min below this at a solution: DYN_IK_SINGULAR (1e-4) */
    const double *lower, *upper; /* joint limits [rad or m], n each, or NULL: every iterate is
                                  * clamped into them (q0 too) */
} dyn_ik_opts;

/* What a solve reached (all at the returned q). */
typedef struct {
    dyn_ik_status status;
    int iterations;   /* trial steps taken (accepted + rejected) */
    double err_pos;   /* norm of the position rows the task includes, unweighted [m] */
    double err_rot;   /* norm of the rotation rows the task includes, unweighted [rad] */
    double sigma_min; /* smallest singular value of the weighted task Jacobian (its rows:
                       * base-frame position [m/rad], tool-frame rotation or pitch [1]); with
                       * more rows than joints, of its n columns */
} dyn_ik_result;

/* Inverse kinematics: joint positions q (n) that put the TOOL frame at target (3x4 row-major
 * [R | p] in the base frame, as dyn_fk writes it) in the rows opt->task selects, starting from
 * q0 (n); returns res->status (res may be NULL). d is the workspace (its poses are overwritten);
 * no allocation; q and q0 may be the same array.
 *
 * Method: damped least squares (Wampler 1986; Nakamura & Hanafusa 1986) on the weighted task
 * rows A = W [J_v; R^T J_w] (dyn_jacobian's rows, rotation rows turned into the tool frame),
 * b = W e (the pose error of dyn_pose_error, rotation part in the tool frame): the step is
 * dq = A^T (A A^T + mu I)^-1 b, or (A^T A + mu I)^-1 A^T b when the task has more rows than
 * the arm has joints (then it converges to the least-squares pose); Buss 2004 compares these
 * schemes. mu is adapted Levenberg-Marquardt style (Sugihara 2011 for LM on IK; the update rule
 * of Madsen, Nielsen & Tingleff 2004 §3.2): a step is kept only if it lowers |b|^2, mu shrinks
 * with the ratio of actual to predicted decrease, and grows after a rejected step. Every step is
 * scaled down so that no joint moves more than max_step; a joint on a limit that the step would
 * push through is held and the step solved again for the others (Buss 2004's clamping), and
 * the new iterate is clamped into the limits.
 * The joints the task leaves free (redundancy, or DYN_IK_POSITION) move as little as each step
 * allows (the damped minimum-norm step), so they stay near q0; they are not pulled back to it.
 * Stops at success (status OK or SINGULAR), at a stationary point (no step lowers the error, or
 * the gradient A^T b projected on the free joints is 1e-8 of |A| |b|: UNREACHABLE) or after
 * max_iter steps (NO_CONVERGENCE). */
int dyn_ik(const dyn_model *m, dyn_data *d, const double target[12], const double *q0,
           const dyn_ik_opts *opt, double *q, dyn_ik_result *res);

/* Joint velocities qd and accelerations qdd (n each) that give the tool the task-space velocity
 * xd and acceleration xdd at q, in the rows of opt->task as dyn_ik counts them (FULL 6,
 * POSITION 3, POSITION_PITCH 4, WEIGHTED the rows of weight > 0, unscaled): position rows the
 * base-frame velocity and acceleration of the tool origin [m/s, m/s^2]; rotation rows the
 * angular velocity about the tool's own axes and its rate, R^T w and R^T dw/dt [rad/s,
 * rad/s^2]; the pitch row d/dt and d2/dt2 of the pitch. Solves A qd = xd and
 * A qdd = xdd - (dA/dt) qd with the pseudo-inverse of A (the task Jacobian of dyn_ik): the
 * minimum-norm solution when the task has at most n rows (joints the task leaves free do not
 * move), least squares otherwise. xdd may be NULL (qdd untouched). Returns the number of rows,
 * or -1: non-finite input or result, bad options, or the smallest singular value of A below
 * opt->sing_tol (at a singularity some task rates need unbounded joint rates). No allocation. */
int dyn_ik_rates(const dyn_model *m, dyn_data *d, const double *q, const dyn_ik_opts *opt,
                 const double *xd, const double *xdd, double *qd, double *qdd);

/* dyn_ik_rates with a motion of the joints the task leaves free: qd = A^+ xd + (I - A^+ A) v0,
 * qdd = A^+ (xdd - (dA/dt) qd) + (I - A^+ A) a0 (v0, a0: n each, either NULL for 0): the task
 * rows exactly as dyn_ik_rates, and of v0 and a0 what does not move the tool (the null-space
 * projection of Liegeois, "Automatic supervisory control of the configuration and behavior of
 * multibody mechanisms", IEEE Trans. SMC 1977). With more rows than joints there is no null
 * space: v0, a0 have no effect. Returns as dyn_ik_rates (-1 also for non-finite v0, a0). */
int dyn_ik_rates_null(const dyn_model *m, dyn_data *d, const double *q, const dyn_ik_opts *opt,
                      const double *xd, const double *xdd, const double *v0, const double *a0,
                      double *qd, double *qdd);

/* Mechanical energy with the model's gravity: kinetic 1/2 qd^T H qd (armature included),
 * potential -sum m_i g.p_ci (payload included). Returns kinetic + potential. */
double dyn_energy(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                  double *kinetic, double *potential);

/* ---------------------------------------------------------------- generated per-arm code
 * tools/armgen writes, for one arm, straight-line C of the functions below with every constant
 * of the model folded in (as El-Rayyes 1990 does with NEDYN + CLEAR; tools/armgen/README.md). The
 * general core stays the reference; callers that may use generated code call through a dyn_funcs
 * table. */

/* The model in its internal form (dyn_internal.h, dynamics/README.md "Frames": Internal form), for
 * generators: joint i moves M_i in M_{i-1} by R = Rx(alpha) Rz(theta), p = p0 + disp Rx(alpha) e_z
 * with theta = q + toff, disp = doff (revolute) or theta = toff, disp = q + doff (prismatic). */
typedef struct {
    dyn_joint_type type;
    double ca, sa;     /* cos, sin of the constant twist alpha about x */
    double p0[3];      /* pre-motion origin in M_{i-1} [m] */
    double toff, doff; /* constant parts of theta [rad] and disp [m] */
    double mass;       /* [kg] (the last joint: link + present payload) */
    double h[3];       /* first moment mass * com in M_i [kg m] */
    double I[6];       /* inertia about the origin of M_i, xx xy xz yy yz zz [kg m^2] */
    double armature, viscous, coulomb_pos, coulomb_neg; /* as in dyn_joint_desc */
} dyn_form_joint;

typedef struct {
    int n;
    dyn_form_joint joint[DYN_MAX_DOF];
    double base_R[9];          /* the internal base B in the base frame (row-major) */
    double gravity_b[3];       /* gravity in B [m/s^2] */
    double tool_R[9];          /* tool frame orientation in M_{n-1} */
    double tool_p[3];          /* tool frame origin in M_{n-1} [m] */
    double friction_smoothing; /* [rad/s or m/s] */
} dyn_form;

void dyn_model_form(const dyn_model *m, dyn_form *out);

/* FNV-1a (64 bit) over every number of the internal form (dyn_form, in field order, -0 as 0)
 * and a format version: equal hashes = the same arm, payload and gravity for every function a
 * dyn_funcs table holds. O(n), no allocation. */
unsigned long long dyn_model_hash(const dyn_model *m);

/* The functions a caller may take from generated code, with the general core's signatures and
 * contracts (a generated function ignores m and d). */
typedef struct {
    void (*rnea)(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                 const double *qdd, const double *wrench, unsigned flags, double *tau);
    void (*gravity)(const dyn_model *m, dyn_data *d, const double *q, double *tau);
    void (*coriolis)(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                     double *tau);
    void (*mass_matrix)(const dyn_model *m, dyn_data *d, const double *q, unsigned flags,
                        double *H);
    int (*forward)(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                   const double *tau, const double *wrench, unsigned flags, double *qdd);
    void (*jacobian)(const dyn_model *m, dyn_data *d, const double *q, double *J);
    void (*momentum)(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                     unsigned flags, double *p, double *ctqd);
    void (*friction)(const dyn_model *m, const double *qd, double *tau);
    /* the tool pose: dyn_fk(m, d, q, NULL, T) (d->pose not left behind) */
    void (*fk)(const dyn_model *m, dyn_data *d, const double *q, double *T);
    const char *origin; /* "general core" or "generated for ARM (SOURCE)" */
} dyn_funcs;

/* The general core: dyn_rnea, dyn_gravity, dyn_coriolis, dyn_mass_matrix, dyn_forward_aba,
 * dyn_jacobian, dyn_momentum, dyn_friction, dyn_fk (the tool pose only). */
extern const dyn_funcs dyn_general;

#define DYN_GEN_ABI 2 /* layout of dyn_gen_module and dyn_funcs; raised on every change */

/* One arm's generated code (tools/armgen output, built in or loaded as a shared object). */
typedef struct {
    unsigned abi;            /* DYN_GEN_ABI of the armd it was generated for */
    unsigned long long hash; /* dyn_model_hash of the model it was generated from */
    int n;                   /* joints */
    const char *arm;         /* the [arm] name */
    dyn_funcs funcs;
} dyn_gen_module;

/* The table to call for m as it is now: gen's functions if gen was generated for this model
 * with its present payload and gravity (same ABI, joints and dyn_model_hash), else
 * &dyn_general. gen may be NULL. Call again after dyn_set_payload / dyn_set_gravity. */
const dyn_funcs *dyn_funcs_for(const dyn_model *m, const dyn_gen_module *gen);

#endif
