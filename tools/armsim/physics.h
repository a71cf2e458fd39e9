/*
 * physics.h — the simulated arm: forward dynamics (dyn_forward_aba, the O(n) solver of seed 004)
 * integrated with classical RK4 at a fixed step against CLOCK_MONOTONIC, in its own thread.
 *
 * Forces acting: the motor torques last commanded by the device side (held between writes,
 * zero while an actuator is inactive or its command has expired), gravity, armature, viscous +
 * Coulomb friction (smoothed), joint limits as stiff damped end stops, and the external
 * pushes and wall of --push/--wall (contact.h). All joint-side SI.
 *
 * An arm with flexible links (flex_modes in the config or --model) integrates dynamics/flex.h's
 * model instead (flexsim.h): the state is the joints plus the modal coordinates, the forces above
 * act on the joint coordinates, and each step is split into RK4 substeps that resolve the
 * highest mode.
 */
#ifndef ARMSIM_PHYSICS_H
#define ARMSIM_PHYSICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "tools/armsim/options.h"
#include "tools/armsim/truth.h"

typedef struct physics physics;

/* A consistent copy of the simulated state. */
typedef struct {
    double t; /* true time since start [s] */
    int n;
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS];
    double tau[CFG_MAX_JOINTS];                  /* motor torque applied per joint [N m|N] */
    double tau_act[CFG_MAX_JOINTS][CFG_MAX_IDS]; /* ... contributed by each actuator */
} physics_state;

typedef struct {
    uint64_t steps;        /* RK4 steps done */
    uint64_t late_wakeups; /* wake-ups that needed catch-up steps */
    uint64_t skips;        /* times the catch-up bound was hit and time was skipped */
    double skipped_s;      /* total time skipped (not integrated) [s] */
    double run_s;          /* wall time since start [s] */
    int solver_failures;   /* dyn_forward_aba returned an error */
    double friction_smoothing, endstop_hz; /* values used */
} physics_stats;

/* Builds the simulated model: the config's arm (or --model's), --mass-scale, --no-gravity,
 * friction smoothing, --q0, --push, --wall. NULL with err filled on error. truth may be NULL. */
physics *physics_create(const armd_config *cfg, const armsim_options *o, truth_log *truth,
                        char *err, size_t errlen);
/* Opens the truth log at path for p's arm (a flexible arm's extra columns, truth.h) and makes p
 * write to it; call before physics_start. NULL with err on failure. */
truth_log *physics_open_truth(physics *p, const armd_config *cfg, const char *path, int decimate,
                              char *err, size_t errlen);
/* Starts the integration thread with t = 0 at start_ns (CLOCK_MONOTONIC). */
int physics_start(physics *p, uint64_t start_ns);
void physics_stop(physics *p);
void physics_free(physics *p);

/* Holds actuator k of joint j at joint torque tau [N m|N] while active and (expiry_ns == 0 or
 * the simulated time is before expiry_ns, CLOCK_MONOTONIC). */
void physics_command(physics *p, int j, int k, double tau, bool active, uint64_t expiry_ns);
void physics_snapshot(physics *p, physics_state *s);
void physics_get_stats(physics *p, physics_stats *s);

#endif
