/*
 * bench.h — armbench's parts (private to tools/armbench):
 *   armbench.c  the options and the general core's table (PUMA 560 and random chains)
 *   bench.c     timing one dynamics function: median over short repetitions
 *   generated.c the arms' generated code against the general core, same run (tools/armgen)
 *   opcount.c   the generated code's operation counts against seed 001's tables
 *   lockstep.c  how fast lockstep simulation runs tools/demo's move (armbench --lockstep)
 */
#ifndef ARMD_ARMBENCH_BENCH_H
#define ARMD_ARMBENCH_BENCH_H

#include "dynamics/dynamics.h"

/* The rows: what one timed call computes (all effects on: gravity, armature, friction). F_FK is
 * dyn_fk of the tool frame alone; F_IK one dyn_ik solve of a full pose (default options) from a
 * start 0.05 rad (or m) off per joint, as a path step would give it; F_RATES one dyn_ik_rates of
 * a full-pose task velocity and acceleration (qd and qdd: a waypoint of move_linear); F_WRENCH
 * one dyn_tool_wrench (the wrench at the tool from external torques, every tick with the
 * collision observer on); F_TASK one dyn_task_inertia (the tool Jacobian, A = J H^-1 J^T and
 * Lambda = A^-1: what the cartesian_impedance law computes every tick before its damper). */
enum {
    F_RNEA,
    F_GRAV,
    F_MASS,
    F_CHOL,
    F_ABA,
    F_JAC,
    F_OBS,
    F_FK,
    F_IK,
    F_RATES,
    F_WRENCH,
    F_TASK,
    NF
};
extern const char *const bench_name[NF];

/* ns per call of row f through table fs on model m (median of reps repetitions of ~20 us;
 * F_CHOL is the general core's Cholesky solver whatever fs is). */
double bench_ns(int f, const dyn_funcs *fs, const dyn_model *m, dyn_data *d, int reps);
/* The solves F_IK times on m: mean iterations over its 8 targets; *failed = how many of them
 * did not end DYN_IK_OK. */
double bench_ik_iterations(const dyn_model *m, dyn_data *d, int *failed);
/* calls of row f without timing (for instruction counts: valgrind --tool=callgrind). */
void bench_calls(int f, const dyn_funcs *fs, const dyn_model *m, dyn_data *d, int calls);

/* The table of generated against general for every example configuration in dir; 0, or -1
 * when none could be loaded (a message says why). */
int bench_generated(const char *dir, int reps);
/* The generated PUMA 560 module (the example configuration in dir) with its model; NULL if
 * there is none. *m and *d are to be freed by the caller. */
const dyn_gen_module *bench_puma_module(const char *dir, dyn_model **m, dyn_data **d);

/* armbench --lockstep: simulated seconds per wall second of the demo move on the PUMA 560 of
 * dir; 0, or -1 (said why). */
int bench_lockstep(const char *dir);

/* The operation counts of the PUMA 560 of dir (6 DOF, and its first 3 joints) beside seed 001. */
int bench_opcounts(const char *dir);

#endif
