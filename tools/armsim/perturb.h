/*
 * perturb.h — armsim --perturb SEED: a plant that differs from the configured arm in every
 * link, reproducibly, so that a test of identification or robustness cannot pass by the model
 * being exact by construction.
 */
#ifndef ARMSIM_PERTURB_H
#define ARMSIM_PERTURB_H

#include <stdint.h>
#include <stdio.h>

#include "dynamics/dynamics.h"

/* mass, each COM coordinate, each principal moment: x (1 +- 30 %) */
#define PERTURB_INERTIAL 0.30
/* viscous and both Coulomb levels: x (1 +- 50 %) */
#define PERTURB_FRICTION 0.50

/* Perturbs every joint's link of d in place, each factor drawn uniformly from seed (splitmix64):
 * mass and each COM coordinate (link frame) x (1 + 0.3 u); the inertia about the COM keeps its
 * principal axes, each principal moment x (1 + 0.3 u), and stays a body's (the largest moment
 * clamped to the sum of the others when the original satisfied that); viscous, coulomb_pos and
 * coulomb_neg each x (1 + 0.5 u); u in [-1, 1]. Armature, kinematics, payload are kept. Writes
 * one line per joint to log (NULL: none). */
void perturb_desc(dyn_model_desc *d, uint64_t seed, FILE *log);

#endif
