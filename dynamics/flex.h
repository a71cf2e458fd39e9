/*
 * flex.h — dynamics of an arm whose links may bend and twist (assumed modes), on top of the
 * rigid core of dynamics.h. Optional: nothing in the rigid core knows about it, and a link
 * without modes is exactly the rigid link of dyn_model.
 *
 * Contract (as dynamics.h): pure computation, SI units, row-major flat arrays; allocation only
 * in dyn_flex_create() and dyn_flex_data_create(), none in the compute functions. The flexible
 * path is O(n^2) (mass matrix, bias) and O(n^3) (forward dynamics): a simulation and analysis
 * tool, not a control-tick path.
 *
 * Model (El-Rayyes 1990 §2.5, after King): link i may carry a uniform slender beam from the
 * origin of joint i's moving frame M_i to the origin of joint i+1 at q_{i+1} = 0 (the tool frame
 * origin for the last link). Its length must equal that distance. Beam axes, in M_i: x_b along
 * the beam, z_b the joint axis made orthogonal to x_b (if the beam lies along the joint axis,
 * M_i's x axis made orthogonal instead), y_b = z_b x x_b. So for a planar arm, deflection along
 * y_b is bending in the plane of motion and deflection along z_b is bending out of it.
 *   - Bending (Euler-Bernoulli, eq 2.24): w_y(eta) = sum_k d_yk D_k(eta), w_z likewise, with
 *     the clamped-free eigenfunctions D_k (beta_k L = 1.8751, 4.6941, 7.8548, 10.9955, roots
 *     of cos x cosh x = -1), normalised so that int_0^L D_k^2 = L (|D_k(L)| = 2).
 *   - Torsion (eq 2.25): phi_x(eta) = sum_k d_xk P_k(eta), P_k = sin((2k-1) pi eta / (2L)).
 *   - Cross-section angles at the tip (eqs 2.16-2.17): phi_z = w_y', phi_y = -w_z'.
 *   - Elastic energy (eq 2.42): 1/2 int (GJ phi_x'^2 + EI_z w_y''^2 + EI_y w_z''^2) deta.
 *   - Modal damping (not in the seed): D = 2 zeta omega_k m_k per mode, omega_k and m_k of the
 *     clamped beam alone.
 * The state is x = (q_0 .. q_{n-1}, then per link: y modes, z modes, torsion modes).
 *
 * Where this differs from King's recursion (eqs 2.46-2.56) as the seed presents it:
 *   - Equations of motion by Kane's method / Lagrange on the discretised links: every beam is
 *     G Gauss-Legendre points along its axis, each a point mass mu w_g on the deflected axis
 *     carrying a thin disc of polar moment rho I_x w_g about x_b. M(x) = sum over bodies of
 *     their partial velocities (eq 2.26's kinetic energy integrated by quadrature), the bias
 *     b(x, xd) = the same partial velocities dotted with the inertial forces at xdd = 0.
 *     Exact for the model below, O(n^2) not King's O(n) recursion.
 *   - The tip rotation is the proper rotation Rx(phi_x) Ry(phi_y) Rz(phi_z) about the beam
 *     axes, not the linearised E^rf of eq 2.13 (the same to first order): so the model is a
 *     true Lagrangian system and conserves energy exactly (tests/dynamics/test_flex.c).
 *   - The disc's polar inertia also turns with the gross rotation about x_b; eq 2.26 keeps only
 *     the torsion rate. Rotary inertia of bending and axial shortening are neglected (as seed).
 *   - Revolute and prismatic joints alike (King and the seed: revolute only). The link's rigid
 *     body (dyn_joint_desc mass, com, inertia) stays attached to M_i; the beam's mass is in
 *     addition to it. The payload rides on the deflected tip when the last link has modes.
 *     Payload and gravity are those of the description at creation (dyn_set_payload on
 *     dyn_flex_rigid's model does not reach the flexible model).
 *   - Gravity is the base accelerating at -g (as the seed, after eq 2.42); the elastic
 *     potential energy is separate.
 */
#ifndef ARMD_DYN_FLEX_H
#define ARMD_DYN_FLEX_H

#include "dynamics/dynamics.h"

#define DYN_FLEX_MAX_MODES 4 /* per direction */
#define DYN_FLEX_MAX_QUAD  32

/* The beam of one link. modes_* = 0 (all three) and mass = 0: no beam, the rigid link. */
typedef struct {
    int modes_y, modes_z, modes_x; /* 0..4: bending along y_b, along z_b, torsion about x_b */
    double length;                 /* [m], must equal the distance joint i -> joint i+1 */
    double mass;                   /* beam mass [kg], spread uniformly (mu = mass / length) */
    double EI_z;                   /* bending stiffness for deflection along y_b [N m^2] */
    double EI_y;                   /* bending stiffness for deflection along z_b [N m^2] */
    double GJ;                     /* torsional stiffness [N m^2] */
    double polar;                  /* polar mass moment per length rho I_x [kg m] */
    double damping;                /* modal damping ratio zeta (0 = none) */
} dyn_flex_link;

typedef struct {
    dyn_flex_link link[DYN_MAX_DOF];
    int quad_points; /* Gauss-Legendre points per beam, 2..32 (0: 24) */
} dyn_flex_desc;

typedef struct dyn_flex_model dyn_flex_model;
typedef struct dyn_flex_data dyn_flex_data;

/* Builds the flexible model of rigid arm `rigid` with beams `flex` (validates both; findings
 * go to issue as in dyn_desc_validate, field "flex.<name>"). NULL on error. */
dyn_flex_model *dyn_flex_create(const dyn_model_desc *rigid, const dyn_flex_desc *flex,
                                dyn_issue_fn issue, void *ctx);
void dyn_flex_free(dyn_flex_model *m);
int dyn_flex_nx(const dyn_flex_model *m);  /* joints + modal coordinates */
int dyn_flex_dof(const dyn_flex_model *m); /* joints */
/* Index in x of link i's first mode of direction dir (0 = y, 1 = z, 2 = torsion). */
int dyn_flex_mode_index(const dyn_flex_model *m, int link, int dir);
/* Tip value of mode k of link i's shape: bending D_k(L) (dir 0, 1) or torsion P_k(L) (dir 2). */
double dyn_flex_tip_shape(const dyn_flex_model *m, int link, int dir, int k);
/* Undamped natural frequency [rad/s] and modal mass [kg or kg m^2] of link i's mode k in
 * direction dir with the beam clamped: sqrt(K_kk / M_kk), both by quadrature. */
double dyn_flex_mode_omega(const dyn_flex_model *m, int link, int dir, int k, double *modal_mass);
/* The rigid model underneath (joints, payload, gravity as given). */
const dyn_model *dyn_flex_rigid(const dyn_flex_model *m);

dyn_flex_data *dyn_flex_data_create(const dyn_flex_model *m);
void dyn_flex_data_free(dyn_flex_data *d);

/* Mass matrix M(x) over all coordinates (nx * nx, row-major), joints' armature on the diagonal
 * when flags has DYN_ARMATURE. Kane / Lagrange on the discretised links (El-Rayyes 1990 eqs
 * 2.26-2.41, 2.9's H). */
void dyn_flex_mass_matrix(const dyn_flex_model *m, dyn_flex_data *d, const double *x,
                          unsigned flags, double *M);

/* Bias b(x, xd) = Coriolis/centrifugal + gravity (DYN_GRAVITY) generalised forces (nx): the
 * equations of motion at xdd = 0 without elastic, damping, friction and external forces. */
void dyn_flex_bias(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                   unsigned flags, double *b);

/* Elastic and modal damping forces K delta + D delta_dot (nx; zero on the joints). */
void dyn_flex_elastic(const dyn_flex_model *m, const double *x, const double *xd, double *f);

/* Generalised forces of the external wrench on the tool (as dynamics.h: environment on tool, at
 * the tool origin, tool-frame axes; the tool frame moves with the deflected last link):
 * Q = J(x)^T w (nx). */
void dyn_flex_wrench_force(const dyn_flex_model *m, dyn_flex_data *d, const double *x,
                           const double *wrench, double *Q);

/* Forward dynamics: M xdd = (tau - friction; 0) + J^T w - b - K delta - D delta_dot, solved by
 * Cholesky (El-Rayyes 1990 eq 2.9 and §4.2.1). tau: n joint torques; wrench may be NULL. Returns
 * 0, or -1 if M is not positive definite / xdd not finite. */
int dyn_flex_forward(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                     const double *tau, const double *wrench, unsigned flags, double *xdd);

/* Inverse dynamics of the joints for a prescribed rigid motion (q, qd, qdd): the modes follow
 * their own equations, M_dd delta_dd = rhs_d - M_dq qdd; then tau = M_qq qdd + M_qd delta_dd +
 * b_q - Q_q (+ armature, friction as flagged). x, xd: full state; qdd: n. Writes tau (n) and
 * delta_dd (nx - n). A clamped beam is qd = qdd = 0. Returns 0 or -1 as dyn_flex_forward. */
int dyn_flex_inverse(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                     const double *qdd, const double *wrench, unsigned flags, double *tau,
                     double *delta_dd);

/* Tool-point deflection [m] in the base frame: the tool origin of the flexible arm at x minus
 * that of the rigid arm at the same joint positions (all modes zero). Positions only. */
void dyn_flex_tool_deflection(const dyn_flex_model *m, dyn_flex_data *d, const double *x,
                              double defl[3]);

/* Energy [J]: kinetic 1/2 xd^T M xd (armature if flags has DYN_ARMATURE), gravitational
 * -sum m g.p_c (model gravity), elastic 1/2 delta^T K delta. Returns their sum. Any output
 * pointer may be NULL. */
double dyn_flex_energy(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                       unsigned flags, double *kinetic, double *gravity, double *elastic);

#endif
