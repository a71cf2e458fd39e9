/*
 * flex_loop_mode.c — the first bending mode of a flexible arm (config flex_* keys,
 * dynamics/flex.h) as armd's control loop holds it, from the model, not from a simulation:
 *
 *   flex_loop_mode CONFIG.ini Q1,Q2,... [--rate HZ] [--delay S]
 *
 * prints, for the arm holding pose q_des = Q (rad | m), three figures of its first oscillatory
 * mode (first_mode):
 *   - "in the loop": the plant is the flexible model as armsim integrates it (dyn_flex_forward
 *     with armature and friction); the joint torques are armd's computed-torque law with the
 *     RIGID model (daemon/controller.c, law_compute CTRL_COMPUTED_TORQUE: tau = RNEA_rigid(q,
 *     qd, qdd_des + kd (qd_des - qd) + kp (q_des - q)) with gravity and armature, plus the
 *     friction feed-forward with its Coulomb part at qd_des), holding: qd_des = qdd_des = 0, no
 *     integral (ki = 0 in the examples it is meant for), sampled at the loop rate (--rate,
 *     default [arm] rate_hz) and applied --delay seconds after the sample (default half a tick)
 *     until the next torque: the map over one tick, linearised about the equilibrium by central
 *     finite differences; its eigenvalue z gives lambda = log(z) / period;
 *   - "continuous loop": the same law without sampling or delay (x' = f(x));
 *   - "joints locked": the modes alone with the joints held still at Q (q_dot = q_ddot = 0:
 *     dyn_flex_inverse's delta_dd), the "held arm" figure of the example INI.
 * For each: the natural frequency |lambda| / 2 pi (what `armctl resonance` reports as "mode"),
 * the damped one Im lambda / 2 pi, and zeta = -Re lambda / |lambda|; x = (joints, modes, their
 * rates) [rad | m, modal m, per s]. Not modelled: the encoders' resolution (counts_per_rev: the
 * measured position is rounded to a count), the velocity filter.
 * Used by tests/daemon/test_api_resonance.py.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "dynamics/flex.h"

#include <complex.h> /* after the headers whose parameters are called I */

/* state size bound; the work arrays are static (a single-threaded program) */
#define NX_MAX (2 * DYN_MAX_DOF * (1 + 3 * DYN_FLEX_MAX_MODES) + DYN_MAX_DOF)

#define SUBSTEPS      20  /* RK4 steps per tick of the sampled loop */
#define DEFAULT_DELAY 0.5 /* sample to torque, share of a tick (--delay) */
#define FMAX_HZ       60  /* modes are sought below this */

/* The arm as the loop sees it: the flexible plant, armd's rigid model, gains, set point. */
typedef struct {
    dyn_flex_model *fm;
    dyn_flex_data *fd;
    dyn_model *rm;
    dyn_data *rd;
    int n, nx; /* joints; joints + modes */
    double kp[DYN_MAX_DOF], kd[DYN_MAX_DOF];
    double q_des[DYN_MAX_DOF];
    double coulomb_width;       /* [rad/s], controller's Coulomb blend */
    double q_lock[DYN_MAX_DOF]; /* joint positions while locked */
    double period, delay;       /* [s]: the loop's tick; sample to torque */
    int substeps;               /* RK4 steps per tick */
} loop;

/* A flow's right-hand side x' = f(x), or a map over one tick x_{k+1} = f(x_k), over a state
 * of size dim. 0, or -1 if the model could not be evaluated. */
typedef int (*rhs_fn)(const loop *l, const double *x, double *xdot);

/* armd's torque for the sampled state x = (q, delta, qd, delta_d) while holding q_des:
 * computed torque with the rigid model (see the top of this file) [N m | N]. Reads only the
 * joints of x (armd measures nothing else). */
static void law(const loop *l, const double *x, double *tau)
{
    const double *q = x, *qd = x + l->nx;
    double aux[DYN_MAX_DOF], fric[DYN_MAX_DOF], zero[DYN_MAX_DOF] = {0};
    for (int j = 0; j < l->n; j++)
        aux[j] = l->kd[j] * (0.0 - qd[j]) + l->kp[j] * (l->q_des[j] - q[j]);
    dyn_rnea(l->rm, l->rd, q, qd, aux, NULL, DYN_GRAVITY | DYN_ARMATURE, tau);
    dyn_friction_at(l->rm, qd, zero, l->coulomb_width, fric); /* Coulomb at qd_des = 0 */
    for (int j = 0; j < l->n; j++) tau[j] += fric[j];
}

/* The plant as armsim integrates it: xdot of x = (q, delta, qd, delta_d) under joint torques
 * tau (dyn_flex_forward with DYN_ALL). 0, or -1 if the mass matrix is not positive definite. */
static int plant(const loop *l, const double *x, const double *tau, double *xdot)
{
    memcpy(xdot, x + l->nx, sizeof(double) * (size_t)l->nx);
    return dyn_flex_forward(l->fm, l->fd, x, x + l->nx, tau, NULL, DYN_ALL, xdot + l->nx);
}

/* Continuous closed loop (no sampling, no delay): xdot of x = (q, delta, qd, delta_d) with
 * tau = law(x). 0 or -1 as plant. */
static int closed_loop(const loop *l, const double *x, double *xdot)
{
    double tau[DYN_MAX_DOF];
    law(l, x, tau);
    return plant(l, x, tau, xdot);
}

/* x += plant's flow over time t under constant tau, by RK4 in steps of at most
 * period / substeps. 0 or -1 as plant. */
static int flow(const loop *l, double *x, const double *tau, double t)
{
    int dim = 2 * l->nx, steps = (int)ceil(t / l->period * l->substeps - 1e-9);
    if (steps < 1) return 0;
    double h = t / steps, k1[NX_MAX], k2[NX_MAX], k3[NX_MAX], k4[NX_MAX], y[NX_MAX];
    for (int s = 0; s < steps; s++) {
        int rc = plant(l, x, tau, k1);
        for (int i = 0; i < dim; i++) y[i] = x[i] + 0.5 * h * k1[i];
        rc |= plant(l, y, tau, k2);
        for (int i = 0; i < dim; i++) y[i] = x[i] + 0.5 * h * k2[i];
        rc |= plant(l, y, tau, k3);
        for (int i = 0; i < dim; i++) y[i] = x[i] + h * k3[i];
        rc |= plant(l, y, tau, k4);
        if (rc) return -1;
        for (int i = 0; i < dim; i++) x[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
    return 0;
}

/* The sampled loop over one tick: z = (x, u) with x = (q, delta, qd, delta_d) at a sample
 * instant and u the torque that still acts (decided at the previous sample) [N m | N]. The
 * previous torque acts for `delay` after the sample, then the new one u' = law(x) until the
 * next sample: z' = (x(t + period), u'). A zero-order hold with a transport delay, as armd
 * writes the torque a little after reading the state and the servos hold it until the next
 * write. 0 or -1 as plant. */
static int sampled_loop(const loop *l, const double *z, double *zn)
{
    int dim = 2 * l->nx;
    double u[DYN_MAX_DOF];
    law(l, z, u);
    memcpy(zn, z, sizeof(double) * (size_t)dim);
    if (flow(l, zn, z + dim, l->delay) || flow(l, zn, u, l->period - l->delay)) return -1;
    memcpy(zn + dim, u, sizeof(double) * (size_t)l->n);
    return 0;
}

/* Joints locked at q_lock: x = (delta, delta_d) [modal m, m/s]; xdot from the modes' own
 * equations with qd = qdd = 0 (dyn_flex_inverse's delta_dd). 0 or -1 as closed_loop. */
static int locked(const loop *l, const double *x, double *xdot)
{
    int m = l->nx - l->n;
    double pos[NX_MAX / 2], vel[NX_MAX / 2] = {0}, qdd[DYN_MAX_DOF] = {0}, tau[DYN_MAX_DOF];
    memcpy(pos, l->q_lock, sizeof(double) * (size_t)l->n);
    memcpy(pos + l->n, x, sizeof(double) * (size_t)m);
    memcpy(vel + l->n, x + m, sizeof(double) * (size_t)m);
    memcpy(xdot, x + m, sizeof(double) * (size_t)m);
    return dyn_flex_inverse(l->fm, l->fd, pos, vel, qdd, NULL, DYN_ALL, tau, xdot + m);
}

/* Solves A z = b in place (A dim x dim complex, row-major, destroyed; b becomes z) by Gaussian
 * elimination with partial pivoting. 0, or -1 if A is singular. */
static int csolve(int dim, double complex *A, double complex *b)
{
    for (int k = 0; k < dim; k++) {
        int p = k;
        for (int i = k + 1; i < dim; i++)
            if (cabs(A[i * dim + k]) > cabs(A[p * dim + k])) p = i;
        if (cabs(A[p * dim + k]) == 0) return -1;
        if (p != k) {
            for (int c = 0; c < dim; c++) {
                double complex t = A[k * dim + c];
                A[k * dim + c] = A[p * dim + c];
                A[p * dim + c] = t;
            }
            double complex t = b[k];
            b[k] = b[p];
            b[p] = t;
        }
        for (int i = k + 1; i < dim; i++) {
            double complex f = A[i * dim + k] / A[k * dim + k];
            for (int c = k; c < dim; c++) A[i * dim + c] -= f * A[k * dim + c];
            b[i] -= f * b[k];
        }
    }
    for (int k = dim - 1; k >= 0; k--) {
        double complex s = b[k];
        for (int c = k + 1; c < dim; c++) s -= A[k * dim + c] * b[c];
        b[k] = s / A[k * dim + k];
    }
    return 0;
}

/* Equilibrium of f in place: the positions (first half of x, rates zero) where the
 * accelerations vanish, by Newton's method on the position part with a finite-difference
 * Jacobian (h = 1e-7). Returns the final |acceleration| [SI], or -1 on failure. */
static double equilibrium(const loop *l, rhs_fn f, int dim, double *x)
{
    int h = dim / 2;
    double f0[NX_MAX], f1[NX_MAX], r = -1;
    static double complex J[NX_MAX / 2 * NX_MAX / 2], b[NX_MAX / 2];
    for (int i = h; i < dim; i++) x[i] = 0;
    for (int it = 0; it < 30; it++) {
        if (f(l, x, f0)) return -1;
        r = 0;
        for (int i = 0; i < h; i++) r = fmax(r, fabs(f0[h + i]));
        if (r < 1e-12) break;
        for (int c = 0; c < h; c++) {
            double save = x[c], e = 1e-7;
            x[c] = save + e;
            if (f(l, x, f1)) return -1;
            x[c] = save;
            for (int i = 0; i < h; i++) J[i * h + c] = (f1[h + i] - f0[h + i]) / e;
        }
        for (int i = 0; i < h; i++) b[i] = -f0[h + i];
        if (csolve(h, J, b)) return -1;
        for (int i = 0; i < h; i++) x[i] += creal(b[i]);
    }
    return r;
}

/* State matrix A = df/dx at x0 (dim x dim, row-major) by central differences, step 1e-6
 * (relative to 1 in every coordinate: radians, metres, their rates). 0 or -1. */
static int jacobian(const loop *l, rhs_fn f, int dim, const double *x0, double *A)
{
    double x[NX_MAX], fp[NX_MAX], fm[NX_MAX];
    const double e = 1e-6;
    memcpy(x, x0, sizeof(double) * (size_t)dim);
    for (int c = 0; c < dim; c++) {
        x[c] = x0[c] + e;
        if (f(l, x, fp)) return -1;
        x[c] = x0[c] - e;
        if (f(l, x, fm)) return -1;
        x[c] = x0[c];
        for (int i = 0; i < dim; i++) A[i * dim + c] = (fp[i] - fm[i]) / (2 * e);
    }
    return 0;
}

/* The eigenvalue of A (dim x dim, real) nearest s [1/s] by inverse iteration with the
 * fixed shift s (Golub & Van Loan, "Matrix Computations" §7.6.1), 300 steps: it converges to
 * the eigenvalue nearest s, never jumps to another. Out: lambda and
 * the relative residual |A v - lambda v| / |lambda v|. 0, or -1 if a solve failed. */
static int eigen_near(int dim, const double *A, double complex s, double complex *lambda,
                      double *residual)
{
    static double complex v[NX_MAX], y[NX_MAX], M[NX_MAX * NX_MAX];
    const double complex shift = s;
    double complex lam = s;
    for (int i = 0; i < dim; i++) v[i] = 1.0 + 0.1 * i * I;
    for (int it = 0; it < 300; it++) {
        for (int i = 0; i < dim * dim; i++) M[i] = A[i];
        for (int i = 0; i < dim; i++) M[i * dim + i] -= shift;
        memcpy(y, v, sizeof(double complex) * (size_t)dim);
        if (csolve(dim, M, y)) break; /* the shift is an eigenvalue: lam is exact */
        double complex num = 0;
        double den = 0, norm = 0;
        for (int i = 0; i < dim; i++) {
            num += conj(v[i]) * y[i];
            den += creal(conj(v[i]) * v[i]);
            norm += creal(conj(y[i]) * y[i]);
        }
        lam = shift + den / num; /* y ~ v / (lambda - shift) */
        norm = sqrt(norm);
        for (int i = 0; i < dim; i++) v[i] = y[i] / norm;
    }
    double r2 = 0, l2 = 0;
    for (int i = 0; i < dim; i++) {
        double complex av = 0;
        for (int c = 0; c < dim; c++) av += A[i * dim + c] * v[c];
        r2 += pow(cabs(av - lam * v[i]), 2);
        l2 += pow(cabs(lam * v[i]), 2);
    }
    *lambda = lam;
    *residual = sqrt(r2 / l2);
    return isfinite(creal(lam)) && isfinite(cimag(lam)) ? 0 : -1;
}

/* The first oscillatory mode of the linearisation A (dim x dim) of a flow (period = 0:
 * lambda an eigenvalue of A) or of the map over one tick of period [s] (z an eigenvalue of A,
 * lambda = log(z) / period) [1/s]: the eigenvalue with Im lambda > 0.05 |lambda| of smallest
 * |lambda| below FMAX_HZ, among those that inverse iteration from a grid of shifts (Re lambda =
 * 0 ... -60 1/s, Im lambda / 2 pi = 1 ... FMAX_HZ Hz) converges to (relative residual below
 * 1e-9). Real eigenvalues (the joints' critically damped servo poles) are not modes. 0, or -1
 * if none was found. */
static int first_mode(int dim, const double *A, double period, double complex *lambda)
{
    int found = 0;
    for (double re = 0; re >= -60; re -= 15)
        for (double f = 1; f <= FMAX_HZ; f += 1.5) {
            double complex s = re + 2 * M_PI * f * I, z, lam;
            double res;
            if (eigen_near(dim, A, period > 0 ? cexp(s * period) : s, &z, &res) || res > 1e-9)
                continue;
            lam = period > 0 ? clog(z) / period : z;
            if (cimag(lam) > 0.05 * cabs(lam) && cabs(lam) < 2 * M_PI * FMAX_HZ &&
                (!found || cabs(lam) < cabs(*lambda)))
                *lambda = lam, found = 1;
        }
    return found ? 0 : -1;
}

/* Prints the first oscillatory mode (first_mode) of the linearisation of f at x0 (dim states)
 * as "LABEL: f = ... Hz (damped ... Hz), zeta = ...": f a flow (x' = f(x), period = 0) or the
 * map over one tick of period [s] (x_{k+1} = f(x_k)). 0 or -1 (reported). */
static int report(const loop *l, rhs_fn f, int dim, const double *x0, double period,
                  const char *label)
{
    static double A[NX_MAX * NX_MAX];
    double complex lam;
    if (jacobian(l, f, dim, x0, A) || first_mode(dim, A, period, &lam)) {
        fprintf(stderr, "flex_loop_mode: %s: no oscillatory mode below %g Hz found\n", label,
                (double)FMAX_HZ);
        return -1;
    }
    double wn = cabs(lam);
    printf("%s: f = %.4f Hz (damped %.4f Hz), zeta = %.4f, lambda = %.4f%+.4fi 1/s\n", label,
           wn / (2 * M_PI), cimag(lam) / (2 * M_PI), -creal(lam) / wn, creal(lam), cimag(lam));
    return 0;
}

/* Parses "a,b,..." into n numbers; 0 if exactly n. */
static int parse_pose(const char *s, int n, double *q)
{
    char *end;
    for (int j = 0; j < n; j++) {
        q[j] = strtod(s, &end);
        if (end == s || (j < n - 1 && *end != ',')) return -1;
        s = end + 1;
    }
    return *end == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    double rate = 0, delay = -1;
    for (int i = 3; i + 1 < argc; i += 2) {
        double *dst = strcmp(argv[i], "--rate") == 0    ? &rate
                      : strcmp(argv[i], "--delay") == 0 ? &delay
                                                        : NULL;
        if (!dst)
            argc = 0; /* usage */
        else
            *dst = atof(argv[i + 1]);
    }
    if (argc < 3 || argc % 2 == 0 || rate < 0) {
        fprintf(stderr, "usage: flex_loop_mode CONFIG.ini Q1,Q2,... [--rate HZ] "
                        "[--delay S]\n");
        return 2;
    }
    static armd_config cfg;
    static dyn_model_desc parts;
    cfg_report rep;
    cfg_report_init(&rep);
    int rc = cfg_load(argv[1], &cfg, &rep);
    cfg_report_free(&rep);
    char err[300];
    if (rc != 0 || !cfg.flexible || cfg_flex_rigid_parts(&cfg, &parts, err, sizeof err)) {
        fprintf(stderr, "flex_loop_mode: %s: not a flexible arm's configuration\n", argv[1]);
        return 1;
    }
    loop l = {0};
    l.n = cfg.n_joints;
    l.fm = dyn_flex_create(&parts, &cfg.flex, NULL, NULL);
    l.rm = dyn_model_create(&cfg.model, NULL, NULL);
    if (!l.fm || !l.rm || parse_pose(argv[2], l.n, l.q_des)) {
        fprintf(stderr, "flex_loop_mode: bad model or pose '%s' (%d joints)\n", argv[2], l.n);
        return 1;
    }
    l.fd = dyn_flex_data_create(l.fm);
    l.rd = dyn_data_create(l.rm);
    l.nx = dyn_flex_nx(l.fm);
    l.coulomb_width = cfg.coulomb_width;
    l.period = 1.0 / (rate > 0 ? rate : cfg.rate_hz);
    l.delay = delay >= 0 ? fmin(delay, l.period) : DEFAULT_DELAY * l.period;
    l.substeps = SUBSTEPS;
    for (int j = 0; j < l.n; j++) {
        l.kp[j] = cfg.joint[j].kp;
        l.kd[j] = cfg.joint[j].kd;
        l.q_lock[j] = l.q_des[j];
    }
    int dim = 2 * l.nx;
    double z[NX_MAX] = {0};
    memcpy(z, l.q_des, sizeof(double) * (size_t)l.n);
    double r = equilibrium(&l, closed_loop, dim, z);
    if (r < 0 || r > 1e-6) {
        fprintf(stderr, "flex_loop_mode: no equilibrium (acceleration %g)\n", r);
        return 1;
    }
    law(&l, z, z + dim); /* the torque that holds it */
    char label[120];
    snprintf(label, sizeof label, "in the loop (%g Hz, torque %.3g ms after the sample)",
             1.0 / l.period, 1e3 * l.delay);
    rc = report(&l, sampled_loop, dim + l.n, z, l.period, label);
    rc |= report(&l, closed_loop, dim, z, 0, "continuous loop");
    double xl[NX_MAX] = {0};
    r = equilibrium(&l, locked, 2 * (l.nx - l.n), xl);
    rc |= r < 0 || r > 1e-6 || report(&l, locked, 2 * (l.nx - l.n), xl, 0, "joints locked");
    dyn_flex_data_free(l.fd);
    dyn_flex_free(l.fm);
    dyn_data_free(l.rd);
    dyn_model_free(l.rm);
    return rc ? 1 : 0;
}
