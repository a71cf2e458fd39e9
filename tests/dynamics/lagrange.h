/* lagrange.h — the independent oracle: Lagrange's equations with 4x4 transforms and their
 * partial derivatives (seed 000 §2, eqs 2.1-2.11), O(n^4). Test code only. */
#ifndef ARMD_TESTS_LAGRANGE_H
#define ARMD_TESTS_LAGRANGE_H

#include "dynamics/dynamics.h"
#include "tests/dynamics/mat4.h"

/* tau = M qdd + h(q, qd) + [G] + [armature qdd] + [friction, hard Coulomb step] - [J^T w],
 * flags as dyn_rnea. M (n*n, may be NULL) receives the Lagrange inertia matrix without
 * armature. Builds every transform directly from the description (any mix of forms). */
void lagrange_id(const dyn_model_desc *desc, const double *q, const double *qd, const double *qdd,
                 const double *wrench, unsigned flags, double *tau, double *M);

/* Pseudo-inertia J = integral of r r^T dm (homogeneous r, 4x4) of a body from its mass, COM and
 * inertia about the COM (ixx ixy ixz iyy iyz izz), all in one frame. Exact under rigid motion:
 * the same body seen from a frame in which this one has pose T is T J T^T. */
mat4 lagrange_pseudo_inertia(double m, const double c[3], const double I[6]);

/* Tool pose in the base (4x4 row-major, 16 doubles) from the description. */
void lagrange_tool_pose(const dyn_model_desc *desc, const double *q, double T[16]);

#endif
