/* chol.c — the Cholesky factorisation and solve shared by the solvers that need one on a small
 * dense SPD matrix (the flexible-joint forward dynamics, inverse kinematics). */
#include "dynamics/dyn_internal.h"

/* In place A = L L^T of the n x n block at A (leading dimension lda), L in the lower triangle
 * (the upper one untouched). Returns -1 if A is not numerically positive definite. */
int dyn_chol_factor(double *A, int n, int lda)
{
    for (int j = 0; j < n; j++) {
        double s = A[j * lda + j];
        for (int k = 0; k < j; k++) s -= A[j * lda + k] * A[j * lda + k];
        if (!(s > 0.0) || !isfinite(s)) return -1;
        const double ljj = sqrt(s);
        A[j * lda + j] = ljj;
        for (int i = j + 1; i < n; i++) {
            double t = A[i * lda + j];
            for (int k = 0; k < j; k++) t -= A[i * lda + k] * A[j * lda + k];
            A[i * lda + j] = t / ljj;
        }
    }
    return 0;
}

/* y = (L L^T)^-1 y with L as dyn_chol_factor leaves it: forward, then back substitution.
 * Returns -1 if the result is not finite. */
int dyn_chol_apply(const double *L, int n, int lda, double *y)
{
    for (int i = 0; i < n; i++) {
        double t = y[i];
        for (int k = 0; k < i; k++) t -= L[i * lda + k] * y[k];
        y[i] = t / L[i * lda + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double t = y[i];
        for (int k = i + 1; k < n; k++) t -= L[k * lda + i] * y[k];
        y[i] = t / L[i * lda + i];
        if (!isfinite(y[i])) return -1;
    }
    return 0;
}

/* Factors A in place and solves A x = y (x overwrites y). Returns -1 as the two above. */
int dyn_chol_solve(double *A, int n, int lda, double *y)
{
    if (dyn_chol_factor(A, n, lda) != 0) return -1;
    return dyn_chol_apply(A, n, lda, y);
}
