/* arm_gen.h — random test arms and converters between description forms. */
#ifndef ARMD_TESTS_ARM_GEN_H
#define ARMD_TESTS_ARM_GEN_H

#include "dynamics/dynamics.h"

/* Deterministic uniform random number in [lo, hi) (xorshift; seed with rng_seed). */
void rng_seed(unsigned long long s);
double rng_uniform(double lo, double hi);

/* A random physically valid arm of n joints. form < 0: each joint's form chosen at random;
 * otherwise all joints use that form. p_prismatic: probability of a prismatic joint. With
 * all_extras: random armature, friction, tool, payload; otherwise none of them. */
void arm_random(dyn_model_desc *d, int n, int form, double p_prismatic, int all_extras);

/* Re-describes a standard-DH arm as modified DH (to_form DYN_DH_MODIFIED) or URDF (with a
 * random rotation of each joint frame about its origin): the same physical arm. */
void arm_convert(const dyn_model_desc *std, int to_form, dyn_model_desc *out);

#endif
