/* task_inertia.c — the inertia the tool feels in task space (dynamics.h, "task inertia"):
 * Khatib's operational-space inertia Lambda = (J H^-1 J^T)^-1, per base-frame axis. */
#include "dynamics/dyn_internal.h"

/* A = J H^-1 J^T (6 x 6, base frame; H with armature, J = dyn_jacobian) at q; then per axis
 * lambda[i] = (A^-1)_ii when A is positive definite (6 or more joints away from a singularity),
 * else 1 / A_ii, and light[i] = 1 / A_ii, the mass felt along axis i alone (Khatib, "Inertial
 * properties in robotic manipulation", IJRR 1995: 1 / (u^T Lambda^-1 u)), never above
 * lambda[i]. An axis the tool cannot move along (A_ii <= 0) gets 0 in both. J receives the
 * Jacobian (6 x n). Scratch: d->H. 0, or -1 for a singular H or non-finite input. */
int dyn_task_inertia(const dyn_model *m, dyn_data *d, const double *q, double *J, double lambda[6],
                     double light[6])
{
    const int n = m->n;
    for (int i = 0; i < n; i++)
        if (!isfinite(q[i])) return -1;
    dyn_jacobian(m, d, q, J);
    dyn_mass_matrix(m, d, q, DYN_ARMATURE, d->H);
    if (dyn_chol_factor(d->H, n, n) != 0) return -1;
    double Y[6 * DYN_MAX_DOF], A[36]; /* Y row r: H^-1 J_r^T */
    for (int r = 0; r < 6; r++) {
        double *y = Y + r * n;
        memcpy(y, J + r * n, sizeof(double) * (size_t)n);
        if (dyn_chol_apply(d->H, n, n, y) != 0) return -1;
    }
    for (int r = 0; r < 6; r++)
        for (int s = 0; s <= r; s++) {
            double a = 0;
            for (int i = 0; i < n; i++) a += J[s * n + i] * Y[r * n + i];
            A[r * 6 + s] = A[s * 6 + r] = a;
        }
    double scale = 0;
    for (int i = 0; i < 6; i++) {
        light[i] = A[i * 6 + i] > 0 && isfinite(1 / A[i * 6 + i]) ? 1 / A[i * 6 + i] : 0;
        lambda[i] = light[i];
        scale = fmax(scale, A[i * 6 + i]);
    }
    double L[36];
    memcpy(L, A, sizeof L);
    if (n < 6 || dyn_chol_factor(L, 6, 6) != 0) return 0;
    for (int i = 0; i < 6; i++) /* a pivot lost to rounding: A is singular in effect */
        if (!(L[i * 6 + i] * L[i * 6 + i] > 1e-12 * scale)) return 0;
    for (int i = 0; i < 6; i++) {
        double e[6] = {0};
        e[i] = 1;
        if (dyn_chol_apply(L, 6, 6, e) != 0) return 0;
        lambda[i] = fmax(e[i], light[i]);
    }
    return 0;
}
