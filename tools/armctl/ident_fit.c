/*
 * ident_fit.c — base parameters, weighted least squares and the physically consistent full
 * parameters of an arm from measured torques (see ident_fit.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/ident_cone.h"
#include "tools/armctl/ident_fit.h"
#include "tools/armctl/ident_linalg.h"

#define RANDOM_STATES 200  /* states of the structural (random-sample) regressor */
#define RANK_TOL      1e-7 /* |R_kk| / |R_00| below this: a dependent column */
#define PRIOR_WEIGHT  1e-8 /* of the data's largest (scaled) curvature: the prior's pull */
#define ALIGN_MIN     -1.0 /* alignments tried [periods]: ALIGN_MIN ... ALIGN_MAX in steps of ... */
#define ALIGN_MAX     2.0
#define ALIGN_COARSE  0.1    /* ... this, then around the best in steps of ... */
#define ALIGN_FINE    0.01   /* ... this */
#define M_MIN_SHARE   1e-6   /* a link's least mass: this share of the configured one (>= 1 mg) */
#define ADMM_STEPS    100000 /* ADMM steps towards the consistent minimum, at most ... */
#define ADMM_TOL      1e-7   /* ... until both residuals are this small, relative */

enum { P_M = 0, P_H = 1, P_I = 4, P_ARM = 10, P_VISC = 11, P_CPOS = 12, P_CNEG = 13 };

struct ident_fit {
    dyn_model *m;
    dyn_data *d;
    int n, P;
    double v_min;                           /* slower joints give no equation [rad/s|m/s] */
    double pi0[DYN_MAX_DOF * DYN_PARAMS];   /* the configuration's parameters (prior) */
    double scale[DYN_MAX_DOF * DYN_PARAMS]; /* per parameter, for the prior's metric */
    /* the structure: base columns perm[0..r), beta (r x (P - r), row-major) with
     * W[:, perm[r + c]] = sum_k W[:, perm[k]] beta[k][c] */
    int r, perm[DYN_MAX_DOF * DYN_PARAMS];
    double *beta;
    /* per joint normal equations over all P columns: A[j] (P x P), count; for each of the
     * three torques of a sample (the tick before, its own, the one after: k = 0, 1, 2)
     * v3[j][k] (P) and the sums of products bb3[j][k][l] of the torques less tau_known, tt3 of
     * the torques; v, bb, tt those of the torque at the alignment (set_alignment) */
    double *A, *v3, bb3[DYN_MAX_DOF][3][3], tt3[DYN_MAX_DOF][3][3];
    double *v, bb[DYN_MAX_DOF], tt[DYN_MAX_DOF];
    long count[DYN_MAX_DOF];
    double *Y; /* n x P scratch */
};

double ident_uniform(unsigned long long *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

/* Random states (joint angles over a turn, velocities and accelerations of order one) stacked
 * into the regressor, each column scaled to unit norm; the QR with pivoting gives the base
 * columns and beta (unscaled). */
static int find_structure(ident_fit *f)
{
    int n = f->n, P = f->P, rows = RANDOM_STATES * n;
    double *W = malloc(sizeof(double) * (size_t)rows * (size_t)P);
    double *R = malloc(sizeof(double) * (size_t)P * (size_t)P);
    double *s = calloc((size_t)P, sizeof(double));
    f->beta = malloc(sizeof(double) * (size_t)P * (size_t)P);
    if (!W || !R || !s || !f->beta) {
        free(W);
        free(R);
        free(s);
        return -1;
    }
    unsigned long long seed = 0x2545f4914f6cdd1dull;
    for (int t = 0; t < RANDOM_STATES; t++) {
        double q[DYN_MAX_DOF], qd[DYN_MAX_DOF], qdd[DYN_MAX_DOF];
        for (int j = 0; j < n; j++) {
            bool rev = dyn_model_joint_type(f->m, j) == DYN_REVOLUTE;
            q[j] = (2 * ident_uniform(&seed) - 1) * (rev ? M_PI : 0.5);
            qd[j] = 2 * ident_uniform(&seed) - 1;
            qdd[j] = 2 * ident_uniform(&seed) - 1;
        }
        dyn_regressor(f->m, f->d, q, qd, qdd, f->Y, NULL);
        for (int j = 0; j < n; j++)
            for (int c = 0; c < P; c++) W[(size_t)c * rows + t * n + j] = f->Y[j * P + c];
    }
    for (int c = 0; c < P; c++) {
        for (int i = 0; i < rows; i++) s[c] += W[(size_t)c * rows + i] * W[(size_t)c * rows + i];
        s[c] = s[c] > 0 ? sqrt(s[c]) : 1;
        for (int i = 0; i < rows; i++) W[(size_t)c * rows + i] /= s[c];
    }
    int r = ident_qr_pivot(W, rows, P, f->perm, R, RANK_TOL);
    f->r = r;
    /* beta~ = R11^-1 R12 (scaled), then beta = S1^-1 beta~ S2 */
    for (int c = 0; c < P - r; c++) {
        double col[DYN_MAX_DOF * DYN_PARAMS];
        for (int k = 0; k < r; k++) col[k] = R[k * P + r + c];
        ident_back_substitute(R, r, P, col);
        for (int k = 0; k < r; k++)
            f->beta[k * (P - r) + c] = col[k] * s[f->perm[r + c]] / s[f->perm[k]];
    }
    free(W);
    free(R);
    free(s);
    return 0;
}

/* The prior's metric: each parameter's scale, its configured size or a tenth of the mean of its
 * kind over the joints (a massless link still gets a scale), never zero. */
static void prior_scales(ident_fit *f)
{
    for (int k = 0; k < DYN_PARAMS; k++) {
        double mean = 0;
        for (int j = 0; j < f->n; j++) mean += fabs(f->pi0[j * DYN_PARAMS + k]);
        mean /= f->n;
        for (int j = 0; j < f->n; j++) {
            double a = fabs(f->pi0[j * DYN_PARAMS + k]);
            f->scale[j * DYN_PARAMS + k] = fmax(fmax(a, 0.1 * mean), 1e-6);
        }
    }
}

ident_fit *ident_fit_create(const dyn_model_desc *desc, double v_min)
{
    ident_fit *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->v_min = v_min;
    f->n = desc->n;
    f->P = DYN_PARAMS * desc->n;
    f->m = dyn_model_create(desc, NULL, NULL);
    f->d = f->m ? dyn_data_create(f->m) : NULL;
    size_t P = (size_t)f->P, n = (size_t)f->n;
    f->A = calloc(n * P * P, sizeof(double));
    f->v = calloc(n * P, sizeof(double));
    f->v3 = calloc(3 * n * P, sizeof(double));
    f->Y = calloc(n * P, sizeof(double));
    if (!f->d || !f->A || !f->v || !f->v3 || !f->Y) {
        ident_fit_free(f);
        return NULL;
    }
    dyn_params_from_desc(desc, f->pi0);
    prior_scales(f);
    if (find_structure(f) != 0) {
        ident_fit_free(f);
        return NULL;
    }
    return f;
}

void ident_fit_free(ident_fit *f)
{
    if (!f) return;
    dyn_data_free(f->d);
    dyn_model_free(f->m);
    free(f->A);
    free(f->v);
    free(f->v3);
    free(f->Y);
    free(f->beta);
    free(f);
}

int ident_fit_add(ident_fit *f, const double *q, const double *qd, const double *qdd,
                  const double *tau_prev, const double *tau, const double *tau_next,
                  const unsigned char *skip)
{
    int n = f->n, P = f->P;
    const double *t3[3] = {tau_prev, tau, tau_next};
    for (int j = 0; j < n; j++)
        if (!(isfinite(q[j]) && isfinite(qd[j]) && isfinite(qdd[j]) && isfinite(tau_prev[j]) &&
              isfinite(tau[j]) && isfinite(tau_next[j])))
            return -1;
    double known[DYN_MAX_DOF];
    dyn_regressor(f->m, f->d, q, qd, qdd, f->Y, known);
    for (int j = 0; j < n; j++) {
        if (!(fabs(qd[j]) >= f->v_min) || (skip && skip[j])) continue;
        const double *y = f->Y + (size_t)j * P;
        double b[3];
        for (int k = 0; k < 3; k++) b[k] = t3[k][j] - known[j];
        double *A = f->A + (size_t)j * P * P, *v = f->v3 + (size_t)j * 3 * P;
        for (int c1 = 0; c1 < P; c1++) {
            if (y[c1] == 0) continue;
            for (int c2 = c1; c2 < P; c2++) A[c1 * P + c2] += y[c1] * y[c2];
            for (int k = 0; k < 3; k++) v[k * P + c1] += y[c1] * b[k];
        }
        for (int k = 0; k < 3; k++)
            for (int l = 0; l < 3; l++) {
                f->bb3[j][k][l] += b[k] * b[l];
                f->tt3[j][k][l] += t3[k][j] * t3[l][j];
            }
        f->count[j]++;
    }
    return 0;
}

/* For 0 <= a <= 1 the mean torque over the two periods of the central difference qdd when the
 * torque steps a of a period after each read; to first order (any a) the reported torque
 * (1/2 - a) of a period later. */
double ident_aligned(double a, double tau_prev, double tau, double tau_next)
{
    return (a * tau_prev + tau + (1 - a) * tau_next) / 2;
}

/* v, bb and tt of the torque at alignment a (ident_aligned). */
static void set_alignment(ident_fit *f, double a)
{
    double c[3] = {a / 2, 0.5, (1 - a) / 2};
    int P = f->P;
    for (int j = 0; j < f->n; j++) {
        const double *v3 = f->v3 + (size_t)j * 3 * P;
        double *v = f->v + (size_t)j * P;
        for (int p = 0; p < P; p++) v[p] = c[0] * v3[p] + c[1] * v3[P + p] + c[2] * v3[2 * P + p];
        f->bb[j] = f->tt[j] = 0;
        for (int k = 0; k < 3; k++)
            for (int l = 0; l < 3; l++) {
                f->bb[j] += c[k] * c[l] * f->bb3[j][k][l];
                f->tt[j] += c[k] * c[l] * f->tt3[j][k][l];
            }
    }
}

/* The base normal equations (r x r, r) with joint weights w: N = sum_j w_j A_j[perm, perm]. */
static void base_normal(const ident_fit *f, const double *w, double *N, double *rhs)
{
    int r = f->r, P = f->P;
    memset(N, 0, sizeof(double) * (size_t)r * (size_t)r);
    memset(rhs, 0, sizeof(double) * (size_t)r);
    for (int j = 0; j < f->n; j++) {
        const double *A = f->A + (size_t)j * P * P, *v = f->v + (size_t)j * P;
        for (int a = 0; a < r; a++) {
            int pa = f->perm[a];
            rhs[a] += w[j] * v[pa];
            for (int b = 0; b < r; b++) {
                int pb = f->perm[b], lo = pa < pb ? pa : pb, hi = pa < pb ? pb : pa;
                N[a * r + b] += w[j] * A[lo * P + hi];
            }
        }
    }
}

/* Each joint's residual sum of squares at the base parameters x. */
static void joint_rss(const ident_fit *f, const double *x, double *rss)
{
    int r = f->r, P = f->P;
    for (int j = 0; j < f->n; j++) {
        const double *A = f->A + (size_t)j * P * P, *v = f->v + (size_t)j * P;
        double e = f->bb[j];
        for (int a = 0; a < r; a++) {
            int pa = f->perm[a];
            e -= 2 * x[a] * v[pa];
            for (int b = 0; b < r; b++) {
                int pb = f->perm[b], lo = pa < pb ? pa : pb, hi = pa < pb ? pb : pa;
                e += x[a] * A[lo * P + hi] * x[b];
            }
        }
        rss[j] = fmax(e, 0);
    }
}

/* theta_b = pi_1 + beta pi_2 of the full parameters pi. */
static void base_of(const ident_fit *f, const double *pi, double *theta)
{
    int r = f->r, P = f->P;
    for (int k = 0; k < r; k++) {
        double t = pi[f->perm[k]];
        for (int c = 0; c < P - r; c++) t += f->beta[k * (P - r) + c] * pi[f->perm[r + c]];
        theta[k] = t;
    }
}

/* The data's normal equations over all P parameters in the prior's scaled coordinates
 * (pi = scale * u): H = S (sum_j w_j A_j) S, g = S sum_j w_j v_j. */
static void scaled_normal(const ident_fit *f, const double *w, double *H, double *g)
{
    int P = f->P;
    memset(H, 0, sizeof(double) * (size_t)P * (size_t)P);
    memset(g, 0, sizeof(double) * (size_t)P);
    for (int j = 0; j < f->n; j++) {
        const double *A = f->A + (size_t)j * P * P, *v = f->v + (size_t)j * P;
        for (int a = 0; a < P; a++) {
            g[a] += w[j] * v[a] * f->scale[a];
            for (int b = a; b < P; b++) H[a * P + b] += w[j] * A[a * P + b];
        }
    }
    for (int a = 0; a < P; a++)
        for (int b = a; b < P; b++) {
            H[a * P + b] *= f->scale[a] * f->scale[b];
            H[b * P + a] = H[a * P + b];
        }
}

/* Every joint's block of z (the cone coordinates) moved onto the consistent set; the number of
 * joints that moved. */
static int project_cones(const ident_fit *f, const ident_cone *cone, double *z)
{
    int moved = 0;
    for (int j = 0; j < f->n; j++) moved += ident_cone_project(&cone[j], z + j * DYN_PARAMS, 1e-9);
    return moved;
}

/* The full parameters: minimise F(u) = sum_j w_j |W_j pi - b_j|^2 + mu |u - u0|^2 (u = pi /
 * scale, u0 the prior's, mu = PRIOR_WEIGHT x the data's largest curvature) over physically
 * consistent pi (ident_cone.h), a convex problem: the unconstrained minimum, and when it is not
 * consistent, ADMM (Boyd et al., "Distributed optimization and statistical learning via the
 * alternating direction method of multipliers", 2011, section 5, with the residual balancing of
 * section 3.4.1) on F(u) + [z consistent] with A u = z (A: u to the cone coordinates): the
 * u-step solves (H + rho A^T A) u = rhs + rho A^T (z - y), the z-step is the cone's exact
 * projection. The result is the last z: consistent. *projected counts the joints whose
 * unconstrained parameters were not. */
static int full_parameters(const ident_fit *f, const double *w, double *pi, double *pi_free,
                           int *projected, int *steps, bool *converged)
{
    int P = f->P, n = f->n;
    size_t PP = (size_t)P * (size_t)P;
    double *H = malloc(sizeof(double) * PP * 5), *K = H + PP, *A = K + PP, *AtA = A + PP,
           *N = AtA + PP;
    if (!H) return -1;
    double g[DYN_MAX_DOF * DYN_PARAMS], u[DYN_MAX_DOF * DYN_PARAMS], u0[DYN_MAX_DOF * DYN_PARAMS],
        rhs[DYN_MAX_DOF * DYN_PARAMS] = {0}, zero[DYN_MAX_DOF * DYN_PARAMS] = {0},
                          tmp[DYN_MAX_DOF * DYN_PARAMS], cond;
    scaled_normal(f, w, H, g);
    double L = ident_largest_eigenvalue(H, P), mu = PRIOR_WEIGHT * L;
    for (int a = 0; a < P; a++) {
        u0[a] = f->pi0[a] / f->scale[a];
        H[a * P + a] += mu;
        rhs[a] = g[a] + mu * u0[a];
    }
    if (ident_solve_sym(P, H, rhs, u, K, &cond) != 0) memcpy(u, u0, sizeof u);
    for (int a = 0; a < P; a++) pi_free[a] = u[a] * f->scale[a];
    /* the cone coordinates: A block-diagonal, column a the image of unit u_a */
    ident_cone cone[DYN_MAX_DOF];
    for (int j = 0; j < n; j++)
        ident_cone_init(&cone[j], f->scale + j * DYN_PARAMS,
                        fmax(M_MIN_SHARE * fabs(f->pi0[j * DYN_PARAMS + P_M]), 1e-6));
    memset(A, 0, sizeof(double) * PP);
    for (int a = 0; a < P; a++) {
        int j = a / DYN_PARAMS;
        double p[DYN_PARAMS] = {0}, zj[DYN_PARAMS];
        p[a % DYN_PARAMS] = f->scale[a];
        ident_cone_from_params(&cone[j], p, zj);
        for (int k = 0; k < DYN_PARAMS; k++) A[(j * DYN_PARAMS + k) * P + a] = zj[k];
    }
    double z[DYN_MAX_DOF * DYN_PARAMS], y[DYN_MAX_DOF * DYN_PARAMS] = {0},
                                                        Au[DYN_MAX_DOF * DYN_PARAMS],
                                                        z_old[DYN_MAX_DOF * DYN_PARAMS];
    ident_mat_vec(A, u, P, z);
    *projected = project_cones(f, cone, z);
    *steps = 0;
    *converged = true;
    if (*projected == 0) {
        memcpy(pi, pi_free, sizeof(double) * (size_t)P);
        free(H);
        return 0;
    }
    double trH = 0, trA = 0;
    for (int a = 0; a < P; a++)
        for (int b = 0; b < P; b++) {
            double t = 0;
            for (int k = 0; k < P; k++) t += A[k * P + a] * A[k * P + b];
            AtA[a * P + b] = t;
        }
    for (int a = 0; a < P; a++) {
        trH += H[a * P + a];
        trA += AtA[a * P + a];
    }
    double rho = trH / trA;
    bool factor = true;
    int refactors = 0;
    *converged = false;
    for (int step = 1; step <= ADMM_STEPS; step++) {
        *steps = step;
        if (factor) {
            for (size_t k = 0; k < PP; k++) N[k] = H[k] + rho * AtA[k];
            if (ident_solve_sym(P, N, zero, tmp, K, &cond) != 0) break;
            factor = false;
            refactors++;
        }
        double b[DYN_MAX_DOF * DYN_PARAMS], d[DYN_MAX_DOF * DYN_PARAMS];
        for (int a = 0; a < P; a++) d[a] = z[a] - y[a];
        ident_mat_t_vec(A, d, P, b);
        for (int a = 0; a < P; a++) b[a] = rhs[a] + rho * b[a];
        ident_mat_vec(K, b, P, u);
        ident_mat_vec(A, u, P, Au);
        memcpy(z_old, z, sizeof z);
        for (int a = 0; a < P; a++) z[a] = Au[a] + y[a];
        project_cones(f, cone, z);
        double r2 = 0;
        for (int a = 0; a < P; a++) {
            y[a] += Au[a] - z[a];
            r2 += (Au[a] - z[a]) * (Au[a] - z[a]);
            d[a] = z[a] - z_old[a];
        }
        ident_mat_t_vec(A, d, P, tmp);
        double r = sqrt(r2), s = rho * ident_norm(tmp, P);
        ident_mat_t_vec(A, y, P, tmp);
        double eps_pri = ADMM_TOL * fmax(ident_norm(Au, P), ident_norm(z, P)) + 1e-12,
               eps_dual = ADMM_TOL * rho * ident_norm(tmp, P) + 1e-12;
        if (r <= eps_pri && s <= eps_dual) {
            *converged = true;
            break;
        }
        if (step % 25 == 0 && refactors < 60) { /* keep the two residuals within 10 x */
            double k = r > 10 * s ? 2 : s > 10 * r ? 0.5 : 1;
            if (k != 1) {
                rho *= k;
                for (int a = 0; a < P; a++) y[a] /= k;
                factor = true;
            }
        }
    }
    for (int j = 0; j < n; j++)
        ident_cone_to_params(&cone[j], z + j * DYN_PARAMS, pi + j * DYN_PARAMS);
    free(H);
    return 0;
}

/* Weighted least squares of the base parameters x (r; N, cov: r x r scratch): ordinary least
 * squares, then each joint weighted by the inverse of its residual variance (w). rss: each
 * joint's residual sum of squares at x. 0, or -1 when the regressor is singular. */
static int weighted_ls(ident_fit *f, double *N, double *cov, double *x, double *w, double *rss,
                       double *cond)
{
    double rhs[DYN_MAX_DOF * DYN_PARAMS];
    for (int j = 0; j < f->n; j++) w[j] = 1;
    for (int pass = 0; pass < 2; pass++) {
        base_normal(f, w, N, rhs);
        if (ident_solve_sym(f->r, N, rhs, x, cov, cond) != 0) return -1;
        joint_rss(f, x, rss);
        for (int j = 0; j < f->n; j++) {
            double var = f->count[j] > 0 ? rss[j] / (double)f->count[j] : 0;
            w[j] = 1 / fmax(var, 1e-12);
        }
    }
    return 0;
}

int ident_fit_solve(ident_fit *f, ident_result *out, char *why, size_t why_len)
{
    int n = f->n, r = f->r, P = f->P;
    memset(out, 0, sizeof *out);
    out->n = n;
    out->P = P;
    out->r = r;
    memcpy(out->perm, f->perm, sizeof(int) * (size_t)P);
    long rows = 0;
    for (int j = 0; j < n; j++) rows += f->count[j];
    out->rows = rows;
    if (rows <= 3 * r) {
        snprintf(why, why_len, "%ld equations for %d base parameters: record a longer motion", rows,
                 r);
        return -1;
    }
    double *N = calloc((size_t)r * (size_t)r * 2, sizeof(double)), *cov = N + (size_t)r * r;
    if (!N) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    double x[DYN_MAX_DOF * DYN_PARAMS], w[DYN_MAX_DOF], rss[DYN_MAX_DOF], cond;
    /* the alignment: the one whose fit is likeliest for independent Gaussian errors with a
     * variance per joint, the least sum_j count_j log(rss_j); a coarse grid, then a fine one
     * around its best */
    double best = 0, best_nll = INFINITY, from = ALIGN_MIN, to = ALIGN_MAX, step = ALIGN_COARSE;
    for (int grid = 0; grid < 2; grid++) {
        int tries = (int)lround((to - from) / step);
        for (int k = 0; k <= tries; k++) {
            double a = from + k * step, nll = 0;
            set_alignment(f, a);
            if (weighted_ls(f, N, cov, x, w, rss, &cond) != 0) break;
            for (int j = 0; j < n; j++)
                if (f->count[j]) nll += (double)f->count[j] * log(fmax(rss[j], 1e-300));
            if (nll < best_nll) {
                best_nll = nll;
                best = a;
            }
        }
        from = fmax(best - ALIGN_COARSE, ALIGN_MIN);
        to = fmin(best + ALIGN_COARSE, ALIGN_MAX);
        step = ALIGN_FINE;
    }
    set_alignment(f, best);
    out->align = best;
    out->align_at_end = best <= ALIGN_MIN || best >= ALIGN_MAX;
    if (weighted_ls(f, N, cov, x, w, rss, &cond) != 0) {
        snprintf(why, why_len,
                 "the motion does not show all %d base parameters (singular regressor): "
                 "excite every joint",
                 r);
        free(N);
        return -1;
    }
    out->cond = cond;
    double wrss = 0;
    for (int j = 0; j < n; j++) wrss += w[j] * rss[j];
    double s2 = wrss / (double)(rows - r); /* ~1 with the weights; kept for honesty */
    for (int k = 0; k < r; k++) {
        out->theta[k] = x[k];
        out->sd[k] = sqrt(fmax(s2 * cov[k * r + k], 0));
    }
    double all_rss = 0, all_tt = 0;
    for (int j = 0; j < n; j++) {
        out->sigma[j] = f->count[j] ? sqrt(rss[j] / (double)f->count[j]) : 0;
        all_rss += rss[j];
        all_tt += f->tt[j];
    }
    out->fit_rms = sqrt(all_rss / (double)rows);
    out->tau_rms = sqrt(all_tt / (double)rows);
    free(N);
    /* the full parameters: the weighted least squares over all of them, held to the prior
     * where the data say little, and physically consistent */
    double pi[DYN_MAX_DOF * DYN_PARAMS];
    if (full_parameters(f, w, pi, out->pi_free, &out->projected, &out->steps, &out->converged) !=
        0) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    memcpy(out->pi, pi, sizeof(double) * (size_t)P);
    return 0;
}

double ident_v_min(const ident_fit *f)
{
    return f->v_min;
}

void ident_base_of(const ident_fit *f, const double *pi, double *theta)
{
    base_of(f, pi, theta);
}

void ident_predict(ident_fit *f, const double *pi, const double *q, const double *qd,
                   const double *qdd, double *tau)
{
    double known[DYN_MAX_DOF];
    dyn_regressor(f->m, f->d, q, qd, qdd, f->Y, known);
    for (int j = 0; j < f->n; j++) {
        double t = known[j];
        for (int c = 0; c < f->P; c++) t += f->Y[(size_t)j * f->P + c] * pi[c];
        tau[j] = t;
    }
}

void ident_param_name(int k, const char *const *names, char *buf, size_t len)
{
    static const char *const what[DYN_PARAMS] = {
        "m",   "hx",  "hy",  "hz",       "ixx",     "ixy",         "ixz",
        "iyy", "iyz", "izz", "armature", "viscous", "coulomb_pos", "coulomb_neg"};
    int j = k / DYN_PARAMS;
    if (names)
        snprintf(buf, len, "%s.%s", names[j], what[k % DYN_PARAMS]);
    else
        snprintf(buf, len, "j%d.%s", j + 1, what[k % DYN_PARAMS]);
}

double ident_condition(ident_fit *f, int m, const double *q, const double *qd, const double *qdd)
{
    int n = f->n, P = f->P, r = f->r;
    double *N = calloc((size_t)r * (size_t)r * 2, sizeof(double)), *cov = N + (size_t)r * r;
    if (!N) return INFINITY;
    for (int t = 0; t < m; t++) {
        dyn_regressor(f->m, f->d, q + t * n, qd + t * n, qdd + t * n, f->Y, NULL);
        for (int j = 0; j < n; j++) {
            const double *y = f->Y + (size_t)j * P;
            for (int a = 0; a < r; a++) {
                double ya = y[f->perm[a]];
                if (ya == 0) continue;
                for (int b = 0; b < r; b++) N[a * r + b] += ya * y[f->perm[b]];
            }
        }
    }
    double rhs[DYN_MAX_DOF * DYN_PARAMS] = {0}, x[DYN_MAX_DOF * DYN_PARAMS], cond;
    if (ident_solve_sym(r, N, rhs, x, cov, &cond) != 0) cond = INFINITY;
    free(N);
    return cond;
}
