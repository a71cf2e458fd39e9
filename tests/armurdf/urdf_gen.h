/* urdf_gen.h — random URDF trees for the importer's tests, and the oracle's view of them: the
 * un-merged path as a serial chain (fixed joints as joints held at 0) for the Lagrange oracle of
 * tests/dynamics. Test code only. */
#ifndef ARMD_TESTS_URDF_GEN_H
#define ARMD_TESTS_URDF_GEN_H

#include <stdbool.h>

#include "dynamics/dynamics.h"
#include "tools/armurdf/urdf.h"

#define GEN_MAX 60 /* joints; links are one more */

typedef struct {
    int parent; /* parent link; joint k's child is link k + 1, link 0 the root */
    urdf_joint_type type;
    double xyz[3], rpy[3], axis[3]; /* origin; the axis is not of unit length */
    double lower, upper, damping, friction;
    int mimic; /* mimicked joint, -1 = none: q = mult q_mimic + off */
    double mult, off;
    bool at_given; /* side-branch joint placed with --at ... */
    double at;     /* ... at this position */
    bool on_path;  /* between base and tip */
    bool lumped;   /* in a side branch of a moving link (else: fixed to the base) */
} gen_joint;

typedef struct {
    bool has_inertial;
    double mass, xyz[3], rpy[3], I[6]; /* <inertial>: COM frame in the link frame, inertia */
} gen_link;

typedef struct {
    int n_joints;
    gen_joint j[GEN_MAX];
    gen_link l[GEN_MAX + 1];
    int n_path, path[GEN_MAX]; /* joints from the root to the tip */
    int tip, n_leaves;
    int n_moving; /* moving joints on the path */
    double gravity[3];
} gen_tree;

/* A random tree with n_moving (1..8) moving joints on the path: fixed joints before, between
 * and after them, side branches (fixed, revolute, continuous, prismatic, mimic joints) off
 * moving links, a branch fixed to the base (with a floating joint sometimes: never imported).
 * Seeded by rng_seed (tests/dynamics/arm_gen.h). */
void gen_random(gen_tree *t, int n_moving);

/* The tree as URDF text (joints in a shuffled order), malloc'd. */
char *gen_urdf(const gen_tree *t);

/* The --at options the tree asks for; names point into storage (16 chars each). */
int gen_at_options(const gen_tree *t, urdf_at *at, char (*storage)[16]);

/* The oracle's serial chain: every path joint in order (moving ones as they are, fixed ones as
 * revolute joints that the caller holds at q = qd = qdd = 0), each carrying its child link
 * plus the side branches hanging from it at their positions, merged as 4x4 pseudo-inertias
 * T J T^T. expanded[k] = the chain index of the k-th moving joint. Returns the chain length. */
int gen_oracle(const gen_tree *t, dyn_model_desc *d, int *expanded);

#endif
