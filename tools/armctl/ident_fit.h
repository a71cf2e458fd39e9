/*
 * ident_fit.h — the dynamic parameters of an arm from measured motion (armctl identify). Pure
 * computation on the arm's model; no I/O.
 *
 * The joint torques are linear in the standard parameters pi (DYN_PARAMS per joint: mass, first
 * moment, inertia about the link origin, armature, viscous and Coulomb friction): tau = Y(q, qd,
 * qdd) pi + tau_known, Y from the Newton-Euler recursion strobed with unit parameters
 * (dyn_regressor). Not every parameter shows in any motion: the identifiable base parameters are
 * found from the regressor at random states by a QR decomposition with column pivoting and a rank
 * tolerance (Gautier's numerical method): columns W2 = W1 beta depend on the independent W1, and
 * theta_b = pi_1 + beta pi_2 are what the torques determine. theta_b is solved by weighted least
 * squares (each joint's equations weighted by the inverse of its own residual variance, from an
 * ordinary least-squares pass), with its standard deviations. The torque fitted at a sample is
 * the mean over the two periods its acceleration spans, the new command landing a fraction of a
 * period after each read: the fraction is fitted (the likeliest of -1 ... 2 periods). The full
 * parameters written to the INI minimise the same weighted error, held faintly to the
 * configuration's where the data leave them open, over the physically consistent ones (masses
 * > 0, each link's pseudo-inertia positive semi-definite: the inertia about the COM too, with the
 * triangle inequality; armature, viscous and Coulomb terms of the right sign; ident_cone.h).
 */
#ifndef ARMCTL_IDENT_FIT_H
#define ARMCTL_IDENT_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "dynamics/dynamics.h"

typedef struct ident_fit ident_fit;

typedef struct {
    int n, P;                           /* joints; standard parameters (DYN_PARAMS n) */
    int r;                              /* base parameters */
    int perm[DYN_MAX_DOF * DYN_PARAMS]; /* standard index of base parameter k (the rest after) */
    double theta[DYN_MAX_DOF * DYN_PARAMS];   /* base parameters (weighted least squares) */
    double sd[DYN_MAX_DOF * DYN_PARAMS];      /* their standard deviations */
    double pi[DYN_MAX_DOF * DYN_PARAMS];      /* full parameters, physically consistent */
    double pi_free[DYN_MAX_DOF * DYN_PARAMS]; /* the same before the physical projection */
    double cond;                              /* of the scaled, weighted base regressor */
    double align;              /* the torque fitted: ident_aligned at this a [periods] ... */
    bool align_at_end;         /* ... the end of the range searched */
    double sigma[DYN_MAX_DOF]; /* each joint's residual RMS [N m|N] */
    double fit_rms, tau_rms;   /* residual and torque RMS over all rows [N m|N] */
    long rows;
    int projected;  /* joints whose least-squares parameters were not physically consistent */
    int steps;      /* ADMM steps that made them consistent (0: none needed) ... */
    bool converged; /* ... and whether it converged within its limit */
} ident_result;

/* An empty fit for the arm desc (its configured parameters: the prior the full parameters stay
 * nearest to); a joint slower than v_min [rad/s|m/s] gives no equation at that sample (a joint
 * sticking in its Coulomb friction holds an unknown torque). NULL when memory is short or the
 * model cannot be built. */
ident_fit *ident_fit_create(const dyn_model_desc *desc, double v_min);
void ident_fit_free(ident_fit *f);
/* Adds one sample: q, qd, qdd (filtered, zero phase; qdd the central difference over the ticks
 * before and after) and the torque that acted as q was read, tau, with the ones of the tick
 * before and after [N m|N] (filtered alike): one equation per joint moving at v_min or faster and
 * not flagged in skip[j] (skip may be NULL). Returns 0, or -1 for a non-finite value (nothing
 * added). */
int ident_fit_add(ident_fit *f, const double *q, const double *qd, const double *qdd,
                  const double *tau_prev, const double *tau, const double *tau_next,
                  const unsigned char *skip);
/* The torque fitted at a sample whose torques are tau_prev, tau, tau_next, at alignment a (the
 * result's align): (a tau_prev + tau + (1 - a) tau_next) / 2. */
double ident_aligned(double a, double tau_prev, double tau, double tau_next);
/* Solves (see above): 0, or -1 with why. */
int ident_fit_solve(ident_fit *f, ident_result *out, char *why, size_t why_len);
/* The torque the parameters pi predict at a sample [N m|N] (tau_known included). */
void ident_predict(ident_fit *f, const double *pi, const double *q, const double *qd,
                   const double *qdd, double *tau);
/* The name of standard parameter k ("j3.m", "j3.hx", "j3.ixy", "j3.coulomb_neg" ...) of the
 * joints named names[] (NULL: j1, j2 ...). */
void ident_param_name(int k, const char *const *names, char *buf, size_t len);
/* The regressor columns (standard parameters) and the worst condition number of the
 * column-scaled base regressor of a motion sampled at m states (q, qd, qdd: m x n each): for
 * choosing an excitation. INFINITY when it shows fewer base parameters than random states do. */
double ident_condition(ident_fit *f, int m, const double *q, const double *qd, const double *qdd);

/* The fit's v_min [rad/s|m/s]. */
double ident_v_min(const ident_fit *f);
/* theta_b of full parameters pi (r values, the result's order). */
void ident_base_of(const ident_fit *f, const double *pi, double *theta);
/* A deterministic uniform number in [0, 1) from state s (xorshift64*; s != 0). */
double ident_uniform(unsigned long long *s);

#endif
