/* inertia.c — principal moments and axes of a rigid body's inertia tensor. */
#include <math.h>

#include "dynamics/dyn_internal.h"

/* Cyclic Jacobi rotations on the symmetric 3x3 (xx xy xz yy yz zz): A = R diag(moments) R^T,
 * moments ascending, R's columns the unit axes (accurate to rounding even for repeated or zero
 * moments). */
void dyn_inertia_principal(const double I[6], double moments[3], double R[9])
{
    double a[3][3] = {{I[0], I[1], I[2]}, {I[1], I[3], I[4]}, {I[2], I[4], I[5]}};
    double v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        if (off == 0.0) break;
        for (int p = 0; p < 2; p++) {
            for (int q = p + 1; q < 3; q++) {
                if (a[p][q] == 0.0) continue;
                double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < 3; k++) { /* columns p, q of a and v */
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                    double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
                for (int k = 0; k < 3; k++) { /* rows p, q */
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
            }
        }
    }
    int order[3] = {0, 1, 2};
    for (int i = 0; i < 2; i++)
        for (int k = i + 1; k < 3; k++)
            if (a[order[k]][order[k]] < a[order[i]][order[i]]) {
                int t = order[i];
                order[i] = order[k];
                order[k] = t;
            }
    for (int i = 0; i < 3; i++) {
        moments[i] = a[order[i]][order[i]];
        for (int k = 0; k < 3; k++) R[k * 3 + i] = v[k][order[i]];
    }
}
