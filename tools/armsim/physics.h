/*
 * physics.h — the simulated arm: forward dynamics (dyn_forward_aba, the O(n) solver of seed 004)
 * integrated with classical RK4 at a fixed step of 1 / --rate on a clock the caller chooses:
 *  - real time (the armsim program): physics_start runs a thread that steps against
 *    CLOCK_MONOTONIC;
 *  - simulated time (in process, simbus.h): physics_begin, then physics_advance_to on the
 *    caller's thread.
 * Both take their steps in physics_advance_to. Every time given to or taken from this module
 * (start_ns, expiry_ns, physics_time_ns) is on that one clock [ns].
 *
 * Forces acting: the motor torques last commanded by the device side (held between writes,
 * zero while an actuator is inactive or its command has expired), gravity, armature, viscous +
 * Coulomb friction (smoothed), joint limits as stiff damped end stops, and the external
 * pushes and wall of --push/--wall (contact.h). All joint-side SI.
 *
 * --brake fits a holding brake on every joint (physics_brake): while the devices say every
 * joint's torque is off it holds the arm still, and nothing of the above is integrated.
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
    double t; /* true time since start [s], at the end of the last step */
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
    double run_s;          /* wall time since start [s] (in process: simulated time) */
    int solver_failures;   /* dyn_forward_aba returned an error */
    double friction_smoothing, endstop_hz; /* values used */
} physics_stats;

/* Builds the simulated model: the config's arm (or --model's), --mass-scale, --no-gravity,
 * friction smoothing, --q0, --push, --wall. NULL with err filled on error. truth may be NULL. */
physics *physics_create(const armd_config *cfg, const armsim_options *o, truth_log *truth,
                        char *err, size_t errlen);
/* Opens the truth log at path for p's arm (a flexible arm's extra columns, truth.h) and makes p
 * write to it; call before physics_start / physics_begin. NULL with err on failure. */
truth_log *physics_open_truth(physics *p, const armd_config *cfg, const char *path, int decimate,
                              truth_mode mode, char *err, size_t errlen);
/* Real time: physics_begin(start_ns) on CLOCK_MONOTONIC, then a thread that steps as the clock
 * passes (catching up at most 50 ms of lateness at once, skipping the rest). 0, or -1. */
int physics_start(physics *p, uint64_t start_ns);
void physics_stop(physics *p);
void physics_free(physics *p);

/* Simulated time: t = 0 is at start_ns of the caller's clock; writes the truth's first row. */
void physics_begin(physics *p, uint64_t start_ns);
/* Integrates whole steps while the next one ends at or before t_ns (the caller's clock): the
 * state is then that at the last step boundary <= t_ns. Each step holds the torques commanded
 * at its start; writes its truth row and publishes its state. Returns the steps taken.
 * Allocates nothing. */
uint64_t physics_advance_to(physics *p, uint64_t t_ns);
/* The end of the last step taken [ns, the caller's clock]. */
uint64_t physics_time_ns(const physics *p);

/* Holds actuator k of joint j at joint torque tau [N m|N] while active and (expiry_ns == 0 or
 * the step starts before expiry_ns, the steps' clock). */
void physics_command(physics *p, int j, int k, double tau, bool active, uint64_t expiry_ns);
/* Engages or releases the holding brake of --brake (nothing without it); it starts engaged, as
 * every servo starts with its torque off. The devices call it when the torque of their joints
 * goes all off (engaged) or one on (released); the tool servo is not a joint. Each step takes
 * the brake as it is at its start, like the torques: engaged, the state stands still (q held,
 * qd = 0, a flexible arm's modes too; no integration) and the step still writes its truth row
 * (ext: the pushes and the wall's torque at the held pose, which the brake takes). Any thread. */
void physics_brake(physics *p, bool engaged);
void physics_snapshot(physics *p, physics_state *s);
void physics_get_stats(physics *p, physics_stats *s);

#endif
