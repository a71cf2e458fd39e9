/*
 * flex_internal.h — the flexible model's internal form (private to dynamics/flex*.c).
 *
 * Module map:
 *   flex.c      model creation and validation, mode shapes, Gauss-Legendre quadrature
 *   flex_dyn.c  kinematics with partial velocities, mass matrix, bias, forward and inverse
 *               dynamics, energy
 * All dynamic quantities are in the internal base frame B of the rigid model (dyn_form).
 */
#ifndef ARMD_DYN_FLEX_INTERNAL_H
#define ARMD_DYN_FLEX_INTERNAL_H

#include "dynamics/flex.h"

/* One link's beam, everything in M_i. */
typedef struct {
    int nm[3];                     /* modes: y, z, torsion */
    int off[3];                    /* index in x of each direction's first mode */
    double L;                      /* length [m] */
    double C[9];                   /* beam axes x_b, y_b, z_b as the columns (row-major) in M_i */
    int G;                         /* quadrature points (0: no beam mass) */
    double eta[DYN_FLEX_MAX_QUAD]; /* position along the beam [m] */
    double mw[DYN_FLEX_MAX_QUAD];  /* point mass mu w_g [kg] */
    double jw[DYN_FLEX_MAX_QUAD];  /* disc polar moment rho I_x w_g [kg m^2] */
    double D[DYN_FLEX_MAX_QUAD][DYN_FLEX_MAX_MODES]; /* bending shape D_k(eta_g) */
    double P[DYN_FLEX_MAX_QUAD][DYN_FLEX_MAX_MODES]; /* torsion shape P_k(eta_g) */
    double DL[DYN_FLEX_MAX_MODES], dDL[DYN_FLEX_MAX_MODES], PL[DYN_FLEX_MAX_MODES]; /* at L */
    double K[3][DYN_FLEX_MAX_MODES];  /* modal stiffness per direction (diagonal) */
    double Dm[3][DYN_FLEX_MAX_MODES]; /* modal damping per direction (diagonal) */
    double mm[3][DYN_FLEX_MAX_MODES]; /* clamped modal mass per direction */
} flex_beam;

struct dyn_flex_model {
    int n, nx;
    dyn_model *rigid;
    dyn_form form; /* the rigid model's internal form (geometry, bodies, tool) */
    flex_beam beam[DYN_MAX_DOF];
    double pend[DYN_MAX_DOF][3]; /* beam end (= next joint's origin at q = 0) in M_i */
    /* The payload when the last link bends: carried by the deflected tip frame T_{n-1} instead
     * of M_{n-1} (mass, first moment and inertia about the tip origin, tip axes). */
    int tip_load;
    double tip_m, tip_h[3], tip_I[6];
};

/* One frame of the chain with its partial velocities (columns over x). */
typedef struct {
    double R[9], p[3];  /* pose in B */
    double w[3], v[3];  /* angular velocity, origin velocity in B */
    double al[3], a[3]; /* their derivatives at xdd = 0 (a includes -g) */
    double *Om, *V;     /* 3 x nx each, row-major */
} flex_frame;

struct dyn_flex_data {
    int nx;
    flex_frame fj[DYN_MAX_DOF]; /* joint frames M_i */
    flex_frame ft[DYN_MAX_DOF]; /* beam tip frames (= M_i when the link has no modes) */
    flex_frame tool;
    double *buf;               /* storage of every Om, V above and the scratch below */
    double *Om_e, *V_e;        /* one body's partials (3 x nx each) */
    double *P_e, *L_e;         /* one body's momentum columns (3 x nx each) */
    double *Mx, *r1, *r2, *r3; /* nx*nx matrix, nx vectors */
};

#endif
