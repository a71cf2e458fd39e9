/* ik.c — inverse kinematics (dynamics.h, "inverse kinematics"): the pose error (a log map on
 * SO(3)) and a damped least-squares solver with Levenberg-Marquardt step control.
 *
 * Naming key: a "row" is one scalar equation of the task (a position coordinate, a rotation
 * component or the pitch); A (rows x n, row-major) is the weighted task Jacobian, b the weighted
 * error, e the same error unweighted; F = |b|^2 the cost; mu the LM damping (lambda^2 of DLS). */
#include <float.h>

#include "dynamics/dyn_internal.h"

enum { MAX_ROWS = 6 };

/* What one task row measures. */
typedef enum { ROW_POS, ROW_ROT, ROW_PITCH } row_kind;

typedef struct {
    int rows;
    row_kind kind[MAX_ROWS];
    int axis[MAX_ROWS]; /* ROW_POS: base x/y/z; ROW_ROT: tool x/y/z */
    double w[MAX_ROWS]; /* weight */
    double tol_pos, tol_rot, max_step, sing_tol;
    int max_iter;
    const double *lower, *upper;
    double pitch_target; /* ROW_PITCH: the target's pitch [rad] */
} ik_task;

/* One evaluation at q: weighted rows and the unweighted errors of each row. */
typedef struct {
    double A[MAX_ROWS * DYN_MAX_DOF];
    double b[MAX_ROWS], e[MAX_ROWS];
    double F; /* |b|^2 */
} ik_eval;

/* Rotation vector of the unit quaternion {w, x, y, z} with w >= 0: angle 2 atan2(|v|, w) in
 * [0, pi] along v/|v|; below |v| = 1e-8 the series 2/w (1 - |v|^2/(3w^2)) of angle/|v|. */
static void quat_log(const double qt[4], double r[3])
{
    const double s2 = qt[1] * qt[1] + qt[2] * qt[2] + qt[3] * qt[3], s = sqrt(s2);
    const double f =
        s < 1e-8 ? 2.0 / qt[0] * (1.0 - s2 / (3.0 * qt[0] * qt[0])) : 2.0 * atan2(s, qt[0]) / s;
    r[0] = f * qt[1];
    r[1] = f * qt[2];
    r[2] = f * qt[3];
}

/* e = (p_t - p, log(R_t R^T)) in the base frame: the quaternion of the relative rotation by
 * Shepperd's method (dyn_rot_to_quat) and its logarithm, accurate near 0 and near pi. */
void dyn_pose_error(const double target[12], const double pose[12], double e[6])
{
    double M[9];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            M[3 * i + j] = target[4 * i] * pose[4 * j] + target[4 * i + 1] * pose[4 * j + 1] +
                           target[4 * i + 2] * pose[4 * j + 2];
        e[i] = target[4 * i + 3] - pose[4 * i + 3];
    }
    double qt[4];
    dyn_rot_to_quat(M, qt);
    quat_log(qt, e + 3);
}

/* The pitch of a rotation R (row-major, 3x3 or the R of a 3x4 pose with stride 4): the angle
 * about the tool's y axis from the tool z axis to the base vertical, atan2(-u_x, u_z) with
 * u = R^T e_z the base z axis in tool axes. Unchanged by any rotation about the base z axis
 * (yaw); for R = Rz(a) Ry(b) it is b, over the full circle. */
static double pitch_of(const double *row2)
{
    return atan2(-row2[0], row2[2]);
}

/* The weighted rows at q. dyn_jacobian leaves the poses of every joint frame in d->pose
 * (kinematics.c), from which the tool frame is composed: one pass gives both. */
static void evaluate(const dyn_model *m, dyn_data *d, const ik_task *t, const double target[12],
                     const double *q, ik_eval *ev)
{
    const int n = m->n;
    double J[6 * DYN_MAX_DOF];
    dyn_jacobian(m, d, q, J);
    dyn_frame tf;
    dyn_frame_compose(&d->pose[n - 1], &m->tool, &tf);
    double pose[12], err[6], rt[3];
    for (int r = 0; r < 3; r++) {
        memcpy(pose + 4 * r, tf.R + 3 * r, 3 * sizeof(double));
        pose[4 * r + 3] = tf.p[r];
    }
    dyn_pose_error(target, pose, err);
    dyn_rot_t(tf.R, err + 3, rt); /* the rotation error in tool axes */
    const double *Jw = J + 3 * n;
    ev->F = 0.0;
    for (int r = 0; r < t->rows; r++) {
        const double w = t->w[r];
        double *a = ev->A + r * n;
        double c[3]; /* a = c^T (R^T J_w) = (R c)^T J_w for the rotation rows */
        switch (t->kind[r]) {
        case ROW_POS: {
            const double *Jk = J + t->axis[r] * n;
            for (int i = 0; i < n; i++) a[i] = w * Jk[i];
            ev->e[r] = err[t->axis[r]];
            break;
        }
        case ROW_ROT:
            c[0] = c[1] = c[2] = 0.0;
            c[t->axis[r]] = 1.0;
            ev->e[r] = rt[t->axis[r]];
            break;
        default: { /* d(pitch)/dt = w_y - u_y (u_x w_x + u_z w_z) / (u_x^2 + u_z^2), tool axes */
            const double *u = tf.R + 6;
            const double s2 = fmax(u[0] * u[0] + u[2] * u[2], 1e-12);
            c[0] = -u[1] * u[0] / s2;
            c[1] = 1.0;
            c[2] = -u[1] * u[2] / s2;
            ev->e[r] = remainder(t->pitch_target - pitch_of(u), 2.0 * M_PI);
            break;
        }
        }
        if (t->kind[r] != ROW_POS) {
            double cb[3];
            dyn_rot(tf.R, c, cb);
            for (int i = 0; i < n; i++)
                a[i] = w * (cb[0] * Jw[i] + cb[1] * Jw[n + i] + cb[2] * Jw[2 * n + i]);
        }
        ev->b[r] = w * ev->e[r];
        ev->F += ev->b[r] * ev->b[r];
    }
}

/* The Gram matrix of A (rows x n) on its smaller side, A A^T (rows <= n) or A^T A, with the
 * columns whose free[i] is 0 left out (free may be NULL: all); k x k, k returned. */
static int gram(const double *A, int rows, int n, const unsigned char *free, double *G)
{
    if (rows <= n) {
        for (int r = 0; r < rows; r++)
            for (int s = 0; s <= r; s++) {
                double v = 0.0;
                for (int i = 0; i < n; i++)
                    if (!free || free[i]) v += A[r * n + i] * A[s * n + i];
                G[r * rows + s] = G[s * rows + r] = v;
            }
        return rows;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double v = 0.0;
            if (!free || (free[i] && free[j]))
                for (int r = 0; r < rows; r++) v += A[r * n + i] * A[r * n + j];
            G[i * n + j] = G[j * n + i] = v;
        }
    return n;
}

/* The damped step h (n) on the free joints (h = 0 on the others) for the rows of ev:
 * A^T (A A^T + mu I)^-1 b, or (A^T A + mu I)^-1 A^T b when there are more rows than joints (the
 * same vector, the smaller system). -1 if the damped Gram matrix is not numerically positive
 * definite. */
static int damped_step(const ik_eval *ev, int rows, int n, const unsigned char *free, double mu,
                       double *h)
{
    double G[MAX_ROWS * MAX_ROWS], y[MAX_ROWS];
    const int k = gram(ev->A, rows, n, free, G);
    for (int i = 0; i < k; i++) G[i * k + i] += mu;
    if (rows <= n) {
        memcpy(y, ev->b, sizeof(double) * (size_t)rows);
        if (dyn_chol_solve(G, k, k, y) != 0) return -1;
        for (int i = 0; i < n; i++) {
            double v = 0.0;
            for (int r = 0; r < rows; r++) v += ev->A[r * n + i] * y[r];
            h[i] = free[i] ? v : 0.0;
        }
        return 0;
    }
    for (int i = 0; i < n; i++) {
        double v = 0.0;
        for (int r = 0; r < rows; r++) v += ev->A[r * n + i] * ev->b[r];
        y[i] = free[i] ? v : 0.0;
    }
    if (dyn_chol_solve(G, k, k, y) != 0) return -1;
    memcpy(h, y, sizeof(double) * (size_t)n);
    return 0;
}

/* The damped step with the joint limits as an active set (the clamping loop of Buss 2004 §7):
 * a joint that sits on a limit and whose step would push it through is held (its column
 * dropped) and the step solved again for the rest, until no held joint is added. */
static int limited_step(const ik_task *t, const ik_eval *ev, int rows, int n, const double *q,
                        double mu, double *h)
{
    unsigned char free[DYN_MAX_DOF];
    memset(free, 1, (size_t)n);
    for (int pass = 0; pass <= n; pass++) {
        if (damped_step(ev, rows, n, free, mu, h) != 0) return -1;
        int held = 0;
        for (int i = 0; i < n; i++) {
            if (!free[i]) continue;
            if ((t->lower && q[i] <= t->lower[i] && h[i] < 0.0) ||
                (t->upper && q[i] >= t->upper[i] && h[i] > 0.0)) {
                free[i] = 0;
                held = 1;
            }
        }
        if (!held) break;
    }
    return 0;
}

/* Smallest singular value of A from its k x k Gram matrix G (k <= 6): the square root of G's
 * smallest eigenvalue by inverse iteration on G's Cholesky factor, estimated by
 * 1 / (x^T G^-1 x) for the unit iterate x (from above; where the two smallest eigenvalues are
 * close it lies between them, so it is as good as either). Stops when the estimate changes by
 * less than 1e-4 of itself (sigma_min to 5e-5; at most 30 steps). 0 when G is not numerically
 * positive definite. Resolution: about 1e-8 of the largest singular value (G's rounding); enough to
 * compare with sing_tol. */
static double sigma_min(const double *G, int k)
{
    double L[MAX_ROWS * MAX_ROWS], x[MAX_ROWS], y[MAX_ROWS];
    memcpy(L, G, sizeof(double) * (size_t)(k * k));
    for (int i = 0; i < k; i++) x[i] = 1.0 + 0.1 * i; /* not orthogonal to a typical minimum */
    double lam = INFINITY;
    memcpy(y, x, sizeof y);
    if (dyn_chol_solve(L, k, k, y) != 0) return 0.0; /* factors L; y = G^-1 x */
    for (int step = 0; step < 30; step++) {
        /* x = y / |y|; the quotient x^T G x = 1 / (x^T G^-1 x) of the next solve */
        double ny = 0.0;
        for (int i = 0; i < k; i++) ny += y[i] * y[i];
        ny = sqrt(ny);
        if (!(ny > 0.0) || !isfinite(ny)) return 0.0;
        for (int i = 0; i < k; i++) x[i] = y[i] / ny;
        memcpy(y, x, sizeof y);
        dyn_chol_apply(L, k, k, y);
        double xy = 0.0;
        for (int i = 0; i < k; i++) xy += x[i] * y[i];
        const double next = xy > 0.0 ? 1.0 / xy : 0.0;
        const int done = fabs(next - lam) <= 1e-4 * next;
        lam = next;
        if (done) break;
    }
    return sqrt(lam);
}

static int all_finite(const double *x, int k)
{
    for (int i = 0; i < k; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* Non-negative finite option value v, or its default for 0; -1 for a bad one. */
static double opt_or(double v, double def)
{
    if (v == 0.0) return def;
    return isfinite(v) && v > 0.0 ? v : -1.0;
}

/* The task of opt, checked: 0, or -1 (bad input). */
static int make_task(const dyn_model *m, const double target[12], const dyn_ik_opts *opt,
                     ik_task *t)
{
    static const dyn_ik_opts defaults = {0};
    if (!opt) opt = &defaults;
    memset(t, 0, sizeof *t);
    t->tol_pos = opt_or(opt->tol_pos, 1e-9);
    t->tol_rot = opt_or(opt->tol_rot, 1e-9);
    t->max_step = opt_or(opt->max_step, 0.5);
    t->sing_tol = opt_or(opt->sing_tol, 1e-4);
    t->max_iter = opt->max_iter == 0 ? 100 : opt->max_iter;
    if (t->tol_pos < 0 || t->tol_rot < 0 || t->max_step < 0 || t->sing_tol < 0 || t->max_iter < 0)
        return -1;
    t->lower = opt->lower;
    t->upper = opt->upper;
    for (int i = 0; i < m->n; i++) {
        const double lo = t->lower ? t->lower[i] : -INFINITY;
        const double hi = t->upper ? t->upper[i] : INFINITY;
        if (!(lo <= hi)) return -1; /* also NaN */
    }
    double w[6] = {1, 1, 1, 1, 1, 1};
    switch (opt->task) {
    case DYN_IK_FULL:
        break;
    case DYN_IK_POSITION:
        w[3] = w[4] = w[5] = 0.0;
        break;
    case DYN_IK_POSITION_PITCH: /* three position rows, the pitch row appended below */
        if (hypot(target[8], target[10]) < 1e-6) return -1; /* tool y vertical: no pitch */
        w[3] = w[4] = w[5] = 0.0;
        t->pitch_target = pitch_of(target + 8); /* R_t's third row is u_t = R_t^T e_z */
        break;
    case DYN_IK_WEIGHTED:
        for (int k = 0; k < 6; k++) {
            w[k] = opt->weight[k];
            if (!(isfinite(w[k]) && w[k] >= 0.0)) return -1;
        }
        break;
    default:
        return -1;
    }
    int rows = 0;
    for (int k = 0; k < 6; k++) {
        if (w[k] == 0.0) continue;
        t->kind[rows] = k < 3 ? ROW_POS : ROW_ROT;
        t->axis[rows] = k % 3;
        t->w[rows] = w[k];
        rows++;
    }
    if (opt->task == DYN_IK_POSITION_PITCH) {
        t->kind[rows] = ROW_PITCH;
        t->w[rows] = 1.0;
        rows++;
    }
    t->rows = rows;
    return rows > 0 ? 0 : -1;
}

/* The target's R must be a rotation: |R R^T - I| <= 1e-6 entry-wise, det > 0. */
static int is_rotation(const double T[12])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const double v = T[4 * i] * T[4 * j] + T[4 * i + 1] * T[4 * j + 1] +
                             T[4 * i + 2] * T[4 * j + 2] - (i == j);
            if (!(fabs(v) <= 1e-6)) return 0;
        }
    const double det = T[0] * (T[5] * T[10] - T[6] * T[9]) - T[1] * (T[4] * T[10] - T[6] * T[8]) +
                       T[2] * (T[4] * T[9] - T[5] * T[8]);
    return det > 0.0;
}

static void clamp_q(const ik_task *t, int n, double *q)
{
    for (int i = 0; i < n; i++) {
        if (t->lower && q[i] < t->lower[i]) q[i] = t->lower[i];
        if (t->upper && q[i] > t->upper[i]) q[i] = t->upper[i];
    }
}

/* Unweighted norms of the position rows and of the rotation (or pitch) rows. */
static void row_errors(const ik_task *t, const ik_eval *ev, double *ep, double *er)
{
    double p = 0.0, r = 0.0;
    for (int k = 0; k < t->rows; k++) {
        if (t->kind[k] == ROW_POS)
            p += ev->e[k] * ev->e[k];
        else
            r += ev->e[k] * ev->e[k];
    }
    *ep = sqrt(p);
    *er = sqrt(r);
}

/* |g|, g = A^T b with the components that would push a joint through a limit it sits on
 * removed (the gradient on the free joints; a step along g lowers the cost). */
static double free_gradient(const ik_task *t, const ik_eval *ev, int rows, int n, const double *q)
{
    double g2 = 0.0;
    for (int i = 0; i < n; i++) {
        double g = 0.0;
        for (int r = 0; r < rows; r++) g += ev->A[r * n + i] * ev->b[r];
        if (t->lower && q[i] <= t->lower[i] && g < 0.0) g = 0.0;
        if (t->upper && q[i] >= t->upper[i] && g > 0.0) g = 0.0;
        g2 += g * g;
    }
    return sqrt(g2);
}

/* Damped least squares with Levenberg-Marquardt control of mu (dynamics.h). Per trial step:
 * the damped step on the Gram matrix at the current q, scaled to max_step, clamped into the
 * limits; then FK + Jacobian at the trial point (one dyn_jacobian). The gain ratio rho =
 * actual / predicted decrease of F (predicted by the linear model |b - A h|^2) sets mu as in
 * Madsen, Nielsen & Tingleff 2004 eq 2.21: kept steps mu *= max(1/3, 1 - (2 rho - 1)^3);
 * rejected steps mu *= nu, nu *= 2. mu starts at 1e-6 of the Gram matrix's largest diagonal
 * entry (a start near the solution, as on a path, converges quadratically from the first step)
 * and stays above 1e-12 of it. Stationary (UNREACHABLE) when the free gradient is 1e-8 of
 * |A|_F |b|, when mu passes 1e16 of that scale, or when the limits block every joint. */
int dyn_ik(const dyn_model *m, dyn_data *d, const double target[12], const double *q0,
           const dyn_ik_opts *opt, double *q, dyn_ik_result *res)
{
    const int n = m->n;
    dyn_ik_result out = {DYN_IK_BAD_INPUT, 0, NAN, NAN, 0.0};
    ik_task t;
    if (q != q0) memmove(q, q0, sizeof(double) * (size_t)n);
    if (!all_finite(target, 12) || !all_finite(q0, n) || !is_rotation(target) ||
        make_task(m, target, opt, &t) != 0) {
        if (res) *res = out;
        return DYN_IK_BAD_INPUT;
    }
    const int rows = t.rows;
    clamp_q(&t, n, q);
    ik_eval bufs[2]; /* the current point and the trial point, swapped on a kept step */
    ik_eval *cur = &bufs[0], *trial = &bufs[1];
    evaluate(m, d, &t, target, q, cur);
    double G[MAX_ROWS * MAX_ROWS];
    int k = gram(cur->A, rows, n, NULL, G);
    double scale = 0.0;
    for (int i = 0; i < k; i++) scale = fmax(scale, G[i * k + i]);
    if (!(scale > 0.0)) scale = 1.0; /* no joint moves the task: every step is 0 */
    double mu = 1e-6 * scale, nu = 2.0;
    int it = 0, stationary = 0, converged = 0;
    double qn[DYN_MAX_DOF], h[DYN_MAX_DOF];
    for (;;) {
        double ep, er;
        row_errors(&t, cur, &ep, &er);
        if (ep <= t.tol_pos && er <= t.tol_rot) {
            converged = 1;
            break;
        }
        if (it >= t.max_iter) break;
        double anorm = 0.0;
        for (int i = 0; i < rows * n; i++) anorm += cur->A[i] * cur->A[i];
        if (free_gradient(&t, cur, rows, n, q) <= 1e-8 * sqrt(anorm * cur->F)) {
            stationary = 1;
            break;
        }
        it++;
        if (limited_step(&t, cur, rows, n, q, mu, h) != 0) {
            mu *= nu, nu *= 2.0;
            if (mu > 1e16 * scale) {
                stationary = 1;
                break;
            }
            continue;
        }
        double hmax = 0.0;
        for (int i = 0; i < n; i++) hmax = fmax(hmax, fabs(h[i]));
        const double sc = hmax > t.max_step ? t.max_step / hmax : 1.0;
        double moved = 0.0;
        for (int i = 0; i < n; i++) qn[i] = q[i] + sc * h[i];
        clamp_q(&t, n, qn);
        for (int i = 0; i < n; i++) {
            h[i] = qn[i] - q[i];
            moved = fmax(moved, fabs(h[i]));
        }
        if (moved == 0.0) { /* the limits block the whole step */
            stationary = 1;
            break;
        }
        double rest = 0.0; /* |b - A h|^2: the linear model's cost after the step */
        for (int r = 0; r < rows; r++) {
            double v = cur->b[r];
            for (int i = 0; i < n; i++) v -= cur->A[r * n + i] * h[i];
            rest += v * v;
        }
        const double pred = cur->F - rest;
        evaluate(m, d, &t, target, qn, trial);
        if (trial->F < cur->F && pred > 0.0) {
            const double rho = (cur->F - trial->F) / pred, c = 2.0 * rho - 1.0;
            mu = fmax(mu * fmax(1.0 / 3.0, 1.0 - c * c * c), 1e-12 * scale);
            nu = 2.0;
            memcpy(q, qn, sizeof(double) * (size_t)n);
            ik_eval *tmp = cur;
            cur = trial;
            trial = tmp;
        } else {
            mu *= nu, nu *= 2.0;
            if (mu > 1e16 * scale) {
                stationary = 1;
                break;
            }
        }
    }
    row_errors(&t, cur, &out.err_pos, &out.err_rot);
    out.iterations = it;
    k = gram(cur->A, rows, n, NULL, G);
    out.sigma_min = sigma_min(G, k);
    if (converged)
        out.status = out.sigma_min < t.sing_tol ? DYN_IK_SINGULAR : DYN_IK_OK;
    else
        out.status = stationary ? DYN_IK_UNREACHABLE : DYN_IK_NO_CONVERGENCE;
    if (res) *res = out;
    return out.status;
}

/* x = A^+ y with L the Cholesky factor of A's Gram matrix (gram, k x k): A^T (A A^T)^-1 y (the
 * minimum-norm x, rows <= n) or (A^T A)^-1 A^T y (least squares, more rows than joints). */
static void pinv_apply(const double *A, int rows, int n, const double *L, int k, const double *y,
                       double *x)
{
    double z[DYN_MAX_DOF];
    if (rows <= n) {
        memcpy(z, y, sizeof(double) * (size_t)rows);
        dyn_chol_apply(L, k, k, z);
        for (int i = 0; i < n; i++) {
            double v = 0.0;
            for (int r = 0; r < rows; r++) v += A[r * n + i] * z[r];
            x[i] = v;
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        double v = 0.0;
        for (int r = 0; r < rows; r++) v += A[r * n + i] * y[r];
        z[i] = v;
    }
    dyn_chol_apply(L, k, k, z);
    memcpy(x, z, sizeof(double) * (size_t)n);
}

/* Joint rates for task rates (dynamics.h): the task's rows at q, unweighted, A qd = xd solved
 * with A's pseudo-inverse, then A qdd = xdd - Adot qd with Adot qd = d/dt (A(q) qd) at fixed qd,
 * the central difference (A(q + h qd) - A(q - h qd)) qd / 2h with h max|qd| = 1e-6 (error
 * O(1e-12) of the term, rounding about 1e-10). */
int dyn_ik_rates(const dyn_model *m, dyn_data *d, const double *q, const dyn_ik_opts *opt,
                 const double *xd, const double *xdd, double *qd, double *qdd)
{
    return dyn_ik_rates_null(m, d, q, opt, xd, xdd, NULL, NULL, qd, qdd);
}

/* A^+ (y - A v) + v = A^+ y + (I - A^+ A) v: the pseudo-inverse solution plus v's null-space
 * part, v = NULL for none; y (rows) is overwritten. */
static void pinv_apply_null(const double *A, int rows, int n, const double *G, int k, double *y,
                            const double *v, double *out)
{
    if (v)
        for (int r = 0; r < rows; r++)
            for (int i = 0; i < n; i++) y[r] -= A[r * n + i] * v[i];
    pinv_apply(A, rows, n, G, k, y, out);
    if (v)
        for (int i = 0; i < n; i++) out[i] += v[i];
}

int dyn_ik_rates_null(const dyn_model *m, dyn_data *d, const double *q, const dyn_ik_opts *opt,
                      const double *xd, const double *xdd, const double *v0, const double *a0,
                      double *qd, double *qdd)
{
    const int n = m->n;
    double pose[12];
    ik_task t;
    if (!all_finite(q, n)) return -1;
    dyn_fk(m, d, q, NULL, pose);
    if (make_task(m, pose, opt, &t) != 0) return -1;
    const int rows = t.rows;
    if (!all_finite(xd, rows) || (xdd && !all_finite(xdd, rows))) return -1;
    if ((v0 && !all_finite(v0, n)) || (a0 && !all_finite(a0, n))) return -1;
    for (int r = 0; r < rows; r++) t.w[r] = 1.0;
    ik_eval ev;
    evaluate(m, d, &t, pose, q, &ev);
    double G[MAX_ROWS * MAX_ROWS];
    const int k = gram(ev.A, rows, n, NULL, G);
    if (sigma_min(G, k) < t.sing_tol || dyn_chol_factor(G, k, k) != 0) return -1;
    double y[MAX_ROWS];
    memcpy(y, xd, sizeof(double) * (size_t)rows);
    pinv_apply_null(ev.A, rows, n, G, k, y, v0, qd);
    if (!xdd) return all_finite(qd, n) ? rows : -1;
    double b[MAX_ROWS], qmax = 0.0;
    memcpy(b, xdd, sizeof(double) * (size_t)rows);
    for (int i = 0; i < n; i++) qmax = fmax(qmax, fabs(qd[i]));
    if (qmax > 0.0) {
        const double h = 1e-6 / qmax;
        double qp[DYN_MAX_DOF], qm[DYN_MAX_DOF];
        for (int i = 0; i < n; i++) qp[i] = q[i] + h * qd[i], qm[i] = q[i] - h * qd[i];
        ik_eval ep, em;
        evaluate(m, d, &t, pose, qp, &ep);
        evaluate(m, d, &t, pose, qm, &em);
        for (int r = 0; r < rows; r++) {
            double v = 0.0;
            for (int i = 0; i < n; i++) v += (ep.A[r * n + i] - em.A[r * n + i]) * qd[i];
            b[r] -= v / (2.0 * h);
        }
    }
    pinv_apply_null(ev.A, rows, n, G, k, b, a0, qdd);
    return all_finite(qd, n) && all_finite(qdd, n) ? rows : -1;
}
