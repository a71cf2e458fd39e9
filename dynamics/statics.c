/* statics.c — the wrench at the tool that explains joint torques (dynamics.h, "statics"): the
 * damped pseudo-inverse of the transposed tool Jacobian, tau = J^T F solved for F. */
#include "dynamics/dyn_internal.h"

/* F = (J J^T + damping^2 I)^-1 J tau with J = dyn_jacobian at q (6 x n, base frame); when the
 * arm has fewer than 6 joints the same vector as J (J^T J + damping^2 I)^-1 tau, the smaller
 * system (Nakamura & Hanafusa 1986's damped inverse applied to statics). */
int dyn_tool_wrench(const dyn_model *m, dyn_data *d, const double *q, const double *tau,
                    double damping, double F[6])
{
    const int n = m->n;
    if (!(damping >= 0 && damping < INFINITY)) return -1;
    for (int i = 0; i < n; i++)
        if (!isfinite(q[i]) || !isfinite(tau[i])) return -1;
    double J[6 * DYN_MAX_DOF], G[36], y[6]; /* G, y: 6 x 6, or n x n for n < 6 */
    dyn_jacobian(m, d, q, J);
    const double l2 = damping * damping;
    if (n >= 6) {
        for (int r = 0; r < 6; r++) {
            double v = 0;
            for (int i = 0; i < n; i++) v += J[r * n + i] * tau[i];
            y[r] = v;
            for (int s = 0; s <= r; s++) {
                double g = 0;
                for (int i = 0; i < n; i++) g += J[r * n + i] * J[s * n + i];
                G[r * 6 + s] = G[s * 6 + r] = g + (r == s ? l2 : 0);
            }
        }
        if (dyn_chol_solve(G, 6, 6, y) != 0) return -1;
        memcpy(F, y, 6 * sizeof(double));
        return 0;
    }
    for (int i = 0; i < n; i++) {
        y[i] = tau[i];
        for (int k = 0; k <= i; k++) {
            double g = 0;
            for (int r = 0; r < 6; r++) g += J[r * n + i] * J[r * n + k];
            G[i * n + k] = G[k * n + i] = g + (i == k ? l2 : 0);
        }
    }
    if (dyn_chol_solve(G, n, n, y) != 0) return -1;
    for (int r = 0; r < 6; r++) {
        double v = 0;
        for (int i = 0; i < n; i++) v += J[r * n + i] * y[i];
        F[r] = v;
    }
    return 0;
}
