/* lagrange.h — the independent oracle: Lagrange's equations with 4x4 transforms and their
 * partial derivatives (seed 000 §2, eqs 2.1-2.11), O(n^4). Test code only. */
#ifndef ARMD_TESTS_LAGRANGE_H
#define ARMD_TESTS_LAGRANGE_H

#include "dynamics/dynamics.h"

/* tau = M qdd + h(q, qd) + [G] + [armature qdd] + [friction, hard Coulomb step] - [J^T w],
 * flags as dyn_rnea. M (n*n, may be NULL) receives the Lagrange inertia matrix without
 * armature. Builds every transform directly from the description (any mix of forms). */
void lagrange_id(const dyn_model_desc *desc, const double *q, const double *qd, const double *qdd,
                 const double *wrench, unsigned flags, double *tau, double *M);

/* Tool pose in the base (4x4 row-major, 16 doubles) from the description. */
void lagrange_tool_pose(const dyn_model_desc *desc, const double *q, double T[16]);

#endif
