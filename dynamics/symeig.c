/* symeig.c — eigen-decomposition of a small symmetric matrix (least-squares fits on the model:
 * payload.estimate, armctl identify). */
#include <math.h>

#include "dynamics/dynamics.h"

/* Cyclic Jacobi rotations until the off-diagonal sum of squares is below 1e-30 of the
 * diagonal's (at most 100 sweeps); accurate to rounding for small matrices (k up to a few
 * hundred). */
void dyn_sym_eigen(int k, double *a, double *w, double *v)
{
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) v[i * k + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0, diag = 0;
        for (int i = 0; i < k; i++) {
            diag += a[i * k + i] * a[i * k + i];
            for (int j = i + 1; j < k; j++) off += a[i * k + j] * a[i * k + j];
        }
        if (!(off > 1e-30 * diag + 1e-300)) break;
        for (int p = 0; p < k; p++)
            for (int q = p + 1; q < k; q++) {
                if (a[p * k + q] == 0) continue;
                double theta = (a[q * k + q] - a[p * k + p]) / (2 * a[p * k + q]);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int i = 0; i < k; i++) { /* a = J^T a J */
                    double aip = a[i * k + p], aiq = a[i * k + q];
                    a[i * k + p] = c * aip - s * aiq;
                    a[i * k + q] = s * aip + c * aiq;
                }
                for (int i = 0; i < k; i++) {
                    double api = a[p * k + i], aqi = a[q * k + i];
                    a[p * k + i] = c * api - s * aqi;
                    a[q * k + i] = s * api + c * aqi;
                }
                for (int i = 0; i < k; i++) {
                    double vip = v[i * k + p], viq = v[i * k + q];
                    v[i * k + p] = c * vip - s * viq;
                    v[i * k + q] = s * vip + c * viq;
                }
            }
    }
    for (int i = 0; i < k; i++) w[i] = a[i * k + i];
}
