/*
 * ident_excite.h — the excitation motion of armctl identify: per joint a finite Fourier series
 * (Swevers, Ganseman, Tukel, De Schutter and Van Brussel, "Optimal robot excitation and
 * identification", IEEE Trans. Robotics and Automation 13(5), 1997):
 *
 *   qd_j(t) = sum_{l=1..L} a_jl cos(l wf t) + b_jl sin(l wf t)
 *   q_j(t)  = q0_j + c_j + sum_l (a_jl sin(l wf t) - b_jl cos(l wf t)) / (l wf)
 *
 * periodic in T = 2 pi / wf. It starts and ends at rest at q0: sum_l a_jl = 0 (qd(0) = 0),
 * sum_l l b_jl = 0 (qdd(0) = 0) and c_j = sum_l b_jl / (l wf) (q(0) = q0). Each joint's series
 * is scaled to stay inside its position (and a swing cap), velocity and acceleration limits with
 * a margin and, by the configured model, inside its torque limit; among random candidates the
 * one whose regressor is best conditioned is kept (a random search, not Swevers' full
 * optimisation).
 */
#ifndef ARMCTL_IDENT_EXCITE_H
#define ARMCTL_IDENT_EXCITE_H

#include "dynamics/dynamics.h"
#include "tools/armctl/ident_fit.h"

#define IDENT_MAX_HARMONICS 10

typedef struct {
    int n, harmonics;
    double period; /* T [s] */
    double q0[DYN_MAX_DOF], c[DYN_MAX_DOF];
    double a[DYN_MAX_DOF][IDENT_MAX_HARMONICS], b[DYN_MAX_DOF][IDENT_MAX_HARMONICS];
} ident_excitation;

/* The joint limits the excitation keeps to: position [rad|m], velocity, acceleration, torque. */
typedef struct {
    double lower[DYN_MAX_DOF], upper[DYN_MAX_DOF];
    double velocity[DYN_MAX_DOF], acceleration[DYN_MAX_DOF], torque[DYN_MAX_DOF];
} ident_limits;

/* q, qd, qdd at time t [s] (any t: the series is periodic). */
void ident_excitation_eval(const ident_excitation *e, double t, double *q, double *qd, double *qdd);
/* Designs an excitation around q0: period [s], harmonics (1..IDENT_MAX_HARMONICS), the swing
 * cap [rad|m] around q0, candidates random series from seed; model (its configured parameters)
 * for the torque check and fit for the condition number. 0 with *cond (of the scaled base
 * regressor at 200 points of a period), or -1 with why (no room to move a joint). */
int ident_excitation_design(ident_fit *fit, const dyn_model_desc *model, const ident_limits *lim,
                            const double *q0, double period, int harmonics, double swing,
                            int candidates, unsigned long long seed, ident_excitation *out,
                            double *cond, char *why, size_t why_len);

#endif
