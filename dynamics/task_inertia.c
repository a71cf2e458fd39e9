/* task_inertia.c — the inertia the tool feels in task space (dynamics.h, "task inertia"):
 * Khatib's operational-space inertia Lambda = (J H^-1 J^T)^-1 and its inverse. */
#include "dynamics/dyn_internal.h"

/* A = J H^-1 J^T (6 x 6, base frame; H with armature, J = dyn_jacobian) at q: H by composite
 * rigid bodies into d->H, its Cholesky factor, one solve per row of J. Then Lambda = A^-1 by a
 * 6 x 6 Cholesky factor and six solves where A is positive definite with no pivot below 1e-12
 * of its largest diagonal entry (Khatib, "A unified approach for motion and force control of
 * robot manipulators: the operational space formulation", IEEE J. Robotics and Automation
 * 1987). */
int dyn_task_inertia(const dyn_model *m, dyn_data *d, const double *q, double *J, double A[36],
                     double Lambda[36])
{
    const int n = m->n;
    for (int i = 0; i < n; i++)
        if (!isfinite(q[i])) return -1;
    dyn_jacobian(m, d, q, J);
    dyn_mass_matrix(m, d, q, DYN_ARMATURE, d->H);
    if (dyn_chol_factor(d->H, n, n) != 0) return -1;
    double Y[6 * DYN_MAX_DOF]; /* row r: H^-1 J_r^T */
    for (int r = 0; r < 6; r++) {
        double *y = Y + r * n;
        memcpy(y, J + r * n, sizeof(double) * (size_t)n);
        if (dyn_chol_apply(d->H, n, n, y) != 0) return -1;
    }
    double scale = 0;
    for (int r = 0; r < 6; r++) {
        for (int s = 0; s <= r; s++) {
            double a = 0;
            for (int i = 0; i < n; i++) a += J[s * n + i] * Y[r * n + i];
            A[r * 6 + s] = A[s * 6 + r] = a;
        }
        scale = fmax(scale, A[r * 6 + r]);
    }
    memset(Lambda, 0, 36 * sizeof(double));
    double L[36];
    memcpy(L, A, sizeof L);
    if (n < 6 || !(scale > 0) || dyn_chol_factor(L, 6, 6) != 0) return 1;
    for (int i = 0; i < 6; i++) /* a pivot lost to rounding: A is singular in effect */
        if (!(L[i * 6 + i] * L[i * 6 + i] > 1e-12 * scale)) return 1;
    for (int i = 0; i < 6; i++) {
        double e[6] = {0};
        e[i] = 1;
        if (dyn_chol_apply(L, 6, 6, e) != 0) {
            memset(Lambda, 0, 36 * sizeof(double));
            return 1;
        }
        for (int k = 0; k < 6; k++) Lambda[k * 6 + i] = e[k];
    }
    return 0;
}
