/*
 * ident_linalg.c — the small dense linear algebra of the identification fit (see ident_linalg.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tools/armctl/ident_linalg.h"

/* Householder QR with column pivoting of W (rows x cols, column-major, destroyed): perm the
 * column order chosen (largest remaining norm first), R (cols x cols, row-major, upper) the
 * triangle. Returns the rank at tolerance tol relative to |R_00|. */
int ident_qr_pivot(double *W, int rows, int cols, int *perm, double *R, double tol)
{
    for (int c = 0; c < cols; c++) perm[c] = c;
    memset(R, 0, sizeof(double) * (size_t)cols * (size_t)cols);
    int steps = rows < cols ? rows : cols, rank = 0;
    double r00 = 0;
    for (int k = 0; k < steps; k++) {
        int best = k;
        double best_norm = -1;
        for (int c = k; c < cols; c++) {
            double s = 0;
            for (int i = k; i < rows; i++) s += W[(size_t)c * rows + i] * W[(size_t)c * rows + i];
            if (s > best_norm) {
                best_norm = s;
                best = c;
            }
        }
        if (best != k) {
            for (int i = 0; i < rows; i++) {
                double t = W[(size_t)k * rows + i];
                W[(size_t)k * rows + i] = W[(size_t)best * rows + i];
                W[(size_t)best * rows + i] = t;
            }
            int t = perm[k];
            perm[k] = perm[best];
            perm[best] = t;
            for (int i = 0; i < k; i++) {
                double x = R[i * cols + k];
                R[i * cols + k] = R[i * cols + best];
                R[i * cols + best] = x;
            }
        }
        double *x = W + (size_t)k * rows, alpha = sqrt(best_norm);
        if (x[k] > 0) alpha = -alpha;
        if (k == 0) r00 = fabs(alpha);
        if (!(fabs(alpha) > tol * r00) || alpha == 0) break;
        rank++;
        x[k] -= alpha; /* v = x - alpha e_k, H = I - 2 v v^T / v^T v */
        double vv = 0;
        for (int i = k; i < rows; i++) vv += x[i] * x[i];
        R[k * cols + k] = alpha;
        for (int c = k + 1; c < cols; c++) {
            double *y = W + (size_t)c * rows, s = 0;
            for (int i = k; i < rows; i++) s += x[i] * y[i];
            s *= 2 / vv;
            for (int i = k; i < rows; i++) y[i] -= s * x[i];
            R[k * cols + c] = y[k];
        }
    }
    return rank;
}

/* Upper triangular solve U x = b in place (U r x r, row stride ld). */
void ident_back_substitute(const double *U, int r, int ld, double *b)
{
    for (int i = r - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < r; k++) s -= U[i * ld + k] * b[k];
        b[i] = s / U[i * ld + i];
    }
}

/* Solves N x = rhs (r x r symmetric) in column-scaled form by eigen-decomposition: x, the inverse
 * (cov, r x r) and the condition number of the scaled matrix (of the regressor: its root).
 * -1 when singular. */
int ident_solve_sym(int r, const double *N, const double *rhs, double *x, double *cov, double *cond)
{
    double *a = malloc(sizeof(double) * (size_t)r * (size_t)r * 2), *v = a + (size_t)r * r;
    double s[DYN_MAX_DOF * DYN_PARAMS], ev[DYN_MAX_DOF * DYN_PARAMS];
    if (!a) return -1;
    for (int i = 0; i < r; i++) s[i] = N[i * r + i] > 0 ? sqrt(N[i * r + i]) : 1;
    for (int i = 0; i < r; i++)
        for (int k = 0; k < r; k++) a[i * r + k] = N[i * r + k] / (s[i] * s[k]);
    dyn_sym_eigen(r, a, ev, v);
    double lmax = 0, lmin = INFINITY;
    for (int i = 0; i < r; i++) {
        lmax = fmax(lmax, ev[i]);
        lmin = fmin(lmin, ev[i]);
    }
    *cond = lmin > 0 ? sqrt(lmax / lmin) : INFINITY;
    if (!(lmin > 0)) {
        free(a);
        return -1;
    }
    for (int i = 0; i < r; i++)
        for (int k = 0; k < r; k++) {
            double t = 0;
            for (int e = 0; e < r; e++) t += v[i * r + e] * v[k * r + e] / ev[e];
            cov[i * r + k] = t / (s[i] * s[k]);
        }
    for (int i = 0; i < r; i++) {
        double t = 0;
        for (int k = 0; k < r; k++) t += cov[i * r + k] * rhs[k];
        x[i] = t;
    }
    free(a);
    return 0;
}

/* The largest eigenvalue of the symmetric P x P matrix H (power iteration). */
double ident_largest_eigenvalue(const double *H, int P)
{
    double x[DYN_MAX_DOF * DYN_PARAMS], y[DYN_MAX_DOF * DYN_PARAMS], lambda = 0;
    for (int a = 0; a < P; a++) x[a] = 1 / sqrt(P);
    for (int it = 0; it < 200; it++) {
        double norm = 0;
        for (int a = 0; a < P; a++) {
            double t = 0;
            for (int b = 0; b < P; b++) t += H[a * P + b] * x[b];
            y[a] = t;
            norm += t * t;
        }
        norm = sqrt(norm);
        if (!(norm > 0)) return 0;
        lambda = norm;
        for (int a = 0; a < P; a++) x[a] = y[a] / norm;
    }
    return lambda;
}

/* A x (P x P row-major A) into out. */
void ident_mat_vec(const double *A, const double *x, int P, double *out)
{
    for (int a = 0; a < P; a++) {
        double t = 0;
        for (int b = 0; b < P; b++) t += A[a * P + b] * x[b];
        out[a] = t;
    }
}

/* A^T x into out. */
void ident_mat_t_vec(const double *A, const double *x, int P, double *out)
{
    for (int b = 0; b < P; b++) out[b] = 0;
    for (int a = 0; a < P; a++)
        for (int b = 0; b < P; b++) out[b] += A[a * P + b] * x[a];
}

/* The Euclidean norm of x (P). */
double ident_norm(const double *x, int P)
{
    double s = 0;
    for (int a = 0; a < P; a++) s += x[a] * x[a];
    return sqrt(s);
}
