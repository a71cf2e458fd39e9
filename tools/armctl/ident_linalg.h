/*
 * ident_linalg.h — the small dense linear algebra of the identification fit (ident_fit.c):
 * pivoted QR, triangular and symmetric solves, power iteration, P x P products. Row-major unless
 * said; sizes at most DYN_MAX_DOF * DYN_PARAMS.
 */
#ifndef ARMD_IDENT_LINALG_H
#define ARMD_IDENT_LINALG_H

/* Householder QR with column pivoting of W (rows x cols, column-major, destroyed): perm the
 * column order chosen (largest remaining norm first), R (cols x cols, row-major, upper) the
 * triangle. Returns the rank at tolerance tol relative to |R_00|. */
int ident_qr_pivot(double *W, int rows, int cols, int *perm, double *R, double tol);

/* Upper triangular solve U x = b in place (U r x r, row stride ld). */
void ident_back_substitute(const double *U, int r, int ld, double *b);

/* Solves N x = rhs (r x r symmetric) in column-scaled form by eigen-decomposition: x, the inverse
 * (cov, r x r) and the condition number of the scaled matrix (of the regressor: its root).
 * -1 when singular. */
int ident_solve_sym(int r, const double *N, const double *rhs, double *x, double *cov,
                    double *cond);

/* The largest eigenvalue of the symmetric P x P matrix H (power iteration). */
double ident_largest_eigenvalue(const double *H, int P);

/* A x (P x P row-major A) into out. */
void ident_mat_vec(const double *A, const double *x, int P, double *out);

/* A^T x into out. */
void ident_mat_t_vec(const double *A, const double *x, int P, double *out);

/* The Euclidean norm of x (P). */
double ident_norm(const double *x, int P);

#endif
