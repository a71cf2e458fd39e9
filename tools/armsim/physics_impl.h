/*
 * physics_impl.h — armsim-private: the physics object shared by its two files.
 *
 *   physics.c       the model: builds it (physics_create), the truth log, the commands and the
 *                   published state (the device side), statistics;
 *   physics_step.c  the stepping: RK4 of the forward dynamics, physics_begin and
 *                   physics_advance_to on the caller's clock, and the real-time thread that
 *                   calls the same physics_advance_to on CLOCK_MONOTONIC.
 *
 * Threads: the fields under "stepping" belong to whoever steps (the physics thread of the armsim
 * program, or the caller of physics_advance_to in process); those under "shared" are read and
 * written under lock by the device side too.
 */
#ifndef ARMSIM_PHYSICS_IMPL_H
#define ARMSIM_PHYSICS_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "dynamics/dynamics.h"
#include "tools/armsim/contact.h"
#include "tools/armsim/flexsim.h"
#include "tools/armsim/physics.h"

#define ENDSTOP_HZ   50.0 /* natural frequency of a joint against its end stop */
#define ENDSTOP_ZETA 0.7  /* damping ratio of the end stop */

typedef struct {
    double tau;         /* joint torque share held [N m|N] */
    bool active;        /* the actuator drives its joint */
    uint64_t expiry_ns; /* no torque from then on (the steps' clock); 0 = never */
} actuator;

struct physics {
    /* the model (const after physics_create) */
    int n;
    int n_ids[CFG_MAX_JOINTS];
    dyn_model *model;
    dyn_data *data;
    double dt;         /* step [s] */
    uint64_t dt_ns;    /* step [ns]; dt is exactly this */
    uint64_t start_ns; /* the clock at t = 0 (physics_begin) [ns] */
    double lower[CFG_MAX_JOINTS], upper[CFG_MAX_JOINTS];
    double k_stop[CFG_MAX_JOINTS], c_stop[CFG_MAX_JOINTS];
    truth_log *truth;
    flexsim flex;      /* a flexible arm's model (flex.m NULL: rigid, dyn_forward_aba) */
    int nx;            /* state size: joints, then a flexible arm's modal coordinates */
    bool brake_fitted; /* --brake */

    /* stepping: x = (q, modal coordinates), xd its rate */
    double q[FLEXSIM_MAX_X], qd[FLEXSIM_MAX_X];
    armsim_contact contact; /* --push, --wall */
    uint64_t k;             /* steps done since t = 0 */
    uint64_t skipped_ns;    /* time the real-time thread skipped (not integrated) [ns] */
    /* the last step's inputs and outputs, kept here so a step allocates nothing */
    double tau[CFG_MAX_JOINTS];                       /* motor torque per joint [N m|N] */
    double tau_act[CFG_MAX_JOINTS][CFG_MAX_IDS];      /* ... per actuator */
    double push[CFG_MAX_JOINTS], ext[CFG_MAX_JOINTS]; /* pushes; external torque [N m|N] */
    double wall_force;                                /* [N] */
    double tool[12];                                  /* tool pose (dyn_fk), for the truth */
    double extra[FLEXSIM_MAX_X + 3];                  /* a flexible arm's truth columns */

    /* shared with the device side, under lock */
    pthread_mutex_t lock;
    actuator act[CFG_MAX_JOINTS][CFG_MAX_IDS];
    bool brake_engaged; /* the brake holds the joints (physics_brake; false without --brake) */
    physics_state pub;
    physics_stats stats;

    /* the real-time thread (physics_start) */
    pthread_t thread;
    bool realtime; /* stepped on CLOCK_MONOTONIC by the thread (physics_start was called) */
    bool running;
    _Atomic bool stop;
};

#endif
