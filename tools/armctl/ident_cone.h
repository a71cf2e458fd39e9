/*
 * ident_cone.h — the physically consistent parameters of one link and its joint as a convex
 * set with an exact Euclidean projection, for armctl identify's constrained fit (ident_fit.c).
 *
 * A link's 10 inertial parameters (m, h = m c, the inertia I about the link origin) are those of
 * a real mass distribution exactly when its pseudo-inertia J = [[S, h], [h^T, m]], S = tr(I) / 2
 * 1 - I (the second moment of the mass about the origin), is positive semi-definite (Wensing,
 * Kim and Slotine, "Linear matrix inequalities for physically consistent inertial parameter
 * identification", IEEE RA-L 2018): mass >= 0, inertia about the COM positive semi-definite and
 * with the triangle inequality. J is linear in the parameters, so the set is a convex cone, and
 * the nearest point of it in the Frobenius norm keeps J's eigenvectors and clips its negative
 * eigenvalues. The coordinates z (DYN_PARAMS per joint) make that the plain Euclidean nearest
 * point: z[0..10) the entries of D J D (D = diag(d, d, d, e), chosen so that the configured
 * link's entries are about 1; a congruence keeps the cone), off-diagonal ones times sqrt 2;
 * z[10..14) armature, viscous, coulomb_pos, coulomb_neg divided by their scales, held to
 * armature, viscous, coulomb_pos >= 0 >= coulomb_neg. The mass is held to at least m_min by
 * shifting the cone: D J D - diag(0, 0, 0, e^2 m_min) positive semi-definite.
 */
#ifndef ARMCTL_IDENT_CONE_H
#define ARMCTL_IDENT_CONE_H

#include <stdbool.h>

#include "dynamics/dynamics.h"

typedef struct {
    double d, e;      /* the congruence D = diag(d, d, d, e) */
    double shift;     /* e^2 m_min: the least mass, in z's units */
    double fscale[4]; /* armature, viscous, coulomb_pos, coulomb_neg: z = value / scale */
} ident_cone;

/* The coordinates of a joint whose parameters have the sizes scale[DYN_PARAMS] (m, h, I,
 * friction; all > 0) and whose mass must stay at least m_min [kg] (>= 0). */
void ident_cone_init(ident_cone *c, const double *scale, double m_min);
/* Parameters p[DYN_PARAMS] (dyn_params_from_desc's order) into z[DYN_PARAMS], and back. */
void ident_cone_from_params(const ident_cone *c, const double *p, double *z);
void ident_cone_to_params(const ident_cone *c, const double *z, double *p);
/* Moves z onto its nearest point of the set (Euclidean in z). Returns whether it moved by more
 * than tol in any coordinate. */
bool ident_cone_project(const ident_cone *c, double *z, double tol);

#endif
