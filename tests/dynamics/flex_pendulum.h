/* flex_pendulum.h — El-Rayyes 1990 case 3, the double compound pendulum with flexible links,
 * shared by test_flex.c and the figure generator flex_pendulum_plot.c. */
#ifndef ARMD_TESTS_FLEX_PENDULUM_H
#define ARMD_TESTS_FLEX_PENDULUM_H

#include "dynamics/dynamics.h"
#include "dynamics/flex.h"

#define FP_LENGTH   1.00 /* Table 4.8 */
#define FP_MASS     0.5
#define FP_TIP_MASS 0.5   /* kg; the seed does not give the mass at the end of link 2 */
#define FP_MODES    2     /* bending modes in the plane of motion per link (seed: not given) */
#define FP_Q1       -1.75 /* the seed's initial joint positions [rad] */
#define FP_Q2       -0.50

/* Two revolute joints about z, links of Table 4.8 along x, a point mass at the end of link 2,
 * gravity -9.81 along y (in the plane). rigid_rods: the rods are rigid bodies of the rigid
 * description (EI unused); otherwise beams of stiffness EI [N m^2] with FP_MODES modes. */
void flex_pendulum_desc(dyn_model_desc *d, dyn_flex_desc *f, int rigid_rods, double EI);

/* Released at rest from (FP_Q1, FP_Q2), modes undeflected, integrated by RK4 with step h [s]
 * for `steps` steps. EI = 0: the rigid model. q (steps x 2) receives the joint angles after
 * each step, tip (may be NULL; steps x 2) the in-plane tip deflections w_y(L) of links 1 and 2
 * [m] (0 for the rigid model). Returns 0, or -1 if a model could not be built or the forward
 * dynamics failed. */
int flex_pendulum_run(double EI, int steps, double h, double *q, double *tip);

/* The flexible pendulum (EI > 0, no damping) over `steps` RK4 steps of h [s]: the largest
 * |E - E0| [J] of kinetic + gravitational + elastic energy, checked every `every` steps, the
 * initial gravitational energy [J] and the largest elastic energy [J]. Returns 0 or -1. */
int flex_pendulum_energy(double EI, int steps, double h, int every, double *drift, double *pot0,
                         double *max_elastic);

#endif
