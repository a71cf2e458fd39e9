/*
 * control_internal.h — private to the control module (daemon/control*.c; daemon/control.h is
 * the only public way in): the controller struct shared by the main thread and the control
 * thread, the mailbox command format, small shared helpers, and the functions the control
 * files call across each other.
 *
 * Files, one job each:
 *   control.c        main thread: create/start/stop/free, status/sample/event readers, liveness
 *   control_cmd.c    main thread: the commands: checks, plan building, gains, reload
 *   control_reply.c  main thread: outstanding answers, the mailbox, ctl_poll, waiting callers
 *   control_thread.c control thread: the tick loop and one tick, faults, estop, publishing
 *   control_apply.c  control thread: applying the mailbox commands
 *   control_motion.c control thread: following plans (queue, settling, cancel stop, path check)
 */
#ifndef ARMD_CONTROL_INTERNAL_H
#define ARMD_CONTROL_INTERNAL_H

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "daemon/collision.h"
#include "daemon/control.h"
#include "daemon/controller.h"
#include "daemon/handoff.h"
#include "daemon/safety.h"
#include "daemon/ticktime.h"
#include "daemon/trajectory.h"

#define N_PLANS   6  /* plan slots: active + queued + one being built */
#define N_ACKS    64 /* acknowledgement slots (by command seq) ... */
#define N_MAILBOX 64 /* ... and mailbox places: as many as answers may be outstanding */
_Static_assert(CTL_MAX_PENDING <= N_ACKS && CTL_MAX_PENDING <= N_MAILBOX,
               "an outstanding answer's acknowledgement slot is never reused");

_Static_assert((int)SF_DISABLED == (int)CTL_DISABLED && (int)SF_ESTOP == (int)CTL_ESTOP,
               "safety states mirror ctl_state");

typedef enum {
    CMD_ENABLE,
    CMD_DISABLE,
    CMD_HOLD,
    CMD_ESTOP,
    CMD_RESET,
    CMD_CANCEL,
    CMD_TRAJ,
    CMD_PARAMS,
    CMD_CONTROLLER,
    CMD_PAYLOAD,
    CMD_STATS_RESET
} cmd_type;

/* One mailbox command (main thread -> control thread). */
typedef struct {
    uint64_t seq;
    cmd_type type;
    int slot;          /* CMD_TRAJ: plan slot; CMD_PARAMS: parameter block */
    bool append;       /* CMD_TRAJ */
    uint32_t after_id; /* CMD_TRAJ append: the plan it was built to follow (0 = none) */
    cfg_controller law;
    dyn_payload payload; /* CMD_PAYLOAD */
    bool swap_model;     /* CMD_PARAMS: a reload's new dynamics (model_next) come with it */
} ctl_cmd;

/* The control thread's answer to one command. */
typedef struct {
    int rc;
    ctl_error err;
} ctl_ack;

/* What a command does on the main thread once its answer is in (control_cmd.c). */
typedef enum {
    DONE_PLAIN,  /* nothing: pass the answer on */
    DONE_ENABLE, /* enabled past a soft limit: move back inside first */
    DONE_TRAJ,   /* a plan handed over: the tail for appends, or the slot back */
    DONE_RELOAD  /* the new configuration becomes the running one */
} done_kind;

/* An outstanding answer (main thread only). */
typedef struct {
    bool used;
    uint64_t seq;        /* the command's; 0 = answered without the control thread */
    int64_t deadline_ns; /* CLOCK_MONOTONIC: a "timeout" answer after it */
    done_kind kind;
    ctl_reply_to to;
    int rc; /* seq == 0: the answer */
    ctl_error err;
    ctl_result res;
    /* DONE_TRAJ */
    int slot;
    bool append;
    traj_state end;
    /* DONE_RELOAD: the candidate (malloc'd) and its trajectory limits */
    armd_config *cand;
} ctl_pending;

/* What the status seqlock carries: the public status plus the desired acceleration (the
 * anchor of a new trajectory). */
typedef struct {
    ctl_status st;
    double qdd_des[CFG_MAX_JOINTS];
} ctl_pub;

/* The collision reaction retract (control_retract.c): the executed path, recorded while a
 * plan is followed, and the way back along it. Positions [rad|m]; lengths in joint space
 * (sqrt of the sum of squared joint moves) [rad|m]. */
#define RETRACT_POINTS  64 /* path points kept ... */
#define RETRACT_SPACING 32 /* ... collision_retract / RETRACT_SPACING apart: twice the distance */
typedef struct {
    double path[RETRACT_POINTS][CFG_MAX_JOINTS]; /* ring of measured positions, oldest first */
    int head, count;                             /* next slot written; points held */
    /* the way back, from where the collision was detected: points and the length up to each */
    double back[RETRACT_POINTS + 1][CFG_MAX_JOINTS];
    double s[RETRACT_POINTS + 1];
    int n_back;
    int seg;       /* the segment [seg, seg + 1] of `back` last sampled */
    bool active;   /* moving back (state moving) */
    double t;      /* time since it started [s] */
    double length; /* s[n_back - 1] [rad|m] */
    double v, a;   /* the trapezoid's speed [rad/s] and acceleration [rad/s^2] along it */
} ctl_retract;

/* Control-thread-only state. */
typedef struct {
    sf_state state;
    char fault[160];
    cfg_controller law;
    law_state ls;
    sf_reads reads, writes; /* consecutive failed reads / writes (counted apart) */
    drv_state ds;
    bool fresh; /* this tick's read succeeded */
    /* read gaps: ticks without a fresh state (during them the servos keep the last torque) */
    bool in_gap;
    uint64_t read_gaps;     /* gaps seen */
    int64_t longest_gap_ns; /* longest gap, good read to good read [ns] */
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], q_prev[CFG_MAX_JOINTS];
    uint64_t t_prev_ns;
    double sample_dt; /* time between the last two states read [s] */
    double q_des[CFG_MAX_JOINTS], qd_des[CFG_MAX_JOINTS], qdd_des[CFG_MAX_JOINTS];
    double tau[CFG_MAX_JOINTS];
    /* motion */
    int active;                  /* plan slot, -1 none */
    int queue[N_PLANS], n_queue; /* appended plan slots */
    double plan_t;
    int seg;
    bool settling;
    double settle_for;
    bool stopping;
    uint32_t stop_id;
    traj_stop stop;
    double stop_t;
    /* collision detection: the observer, a detection not yet over (one event per contact),
     * the count */
    coll_observer obs;
    bool coll_latched;
    double coll_suspect; /* after a read gap or late tick, the states are suspect this long [s] */
    uint64_t collisions;
    ctl_retract retract;
    bool floating; /* collision_reaction float: gravity_comp damped by the [joint] damping */
    /* fault reaction */
    bool damping;
    double damp_t;
    bool wrote_this_tick;
    /* counters and time */
    uint64_t tick, overruns, late_ticks, failed_reads, failed_writes, saturations;
    double time;
    ctl_pub pub;
    ctl_sample sample;
    ctl_event ev;
} ctl_rt;

struct ctl {
    /* main thread */
    armd_config cfg;
    traj_limits lim;
    uint64_t cmd_seq;
    uint64_t params_seq; /* the last CMD_PARAMS sent: no other until it is acknowledged */
    uint32_t next_id;
    int tail_slot; /* last plan handed over, for append */
    uint32_t tail_id;
    traj_state tail_end;
    uint64_t alive_ticks;      /* ctl_alive's cursor (its caller: the systemd watchdog) */
    uint64_t seen_ticks;       /* ctl_stalled's own cursor ... */
    struct timespec seen_when; /* ... and when it last saw the counter move */
    bool started, stopped;
    pthread_t thread;
    ctl_pending pending[CTL_MAX_PENDING];
    /* shared */
    int n;
    double period;
    int64_t period_ns;
    dyn_model *model;
    dyn_payload payload; /* the payload last given to the model (main thread's copy) */
    dyn_data *data;
    /* the dynamics the laws call: dyn.f is the arm's generated code while it fits the model
     * (gen, ctl_use_generated), else the general core; chosen again after a payload change by
     * the thread that changes it (ctl_payload_changed) */
    const dyn_gen_module *gen;
    law_dyn dyn;
    /* a reload that changes the dynamics keys: the main thread builds the new model and its
     * workspace here, the control thread swaps them with model/data when it takes the reload's
     * parameters; afterwards these hold the unused pair (the old one, or the new one if the
     * reload was refused), which the main thread frees once the reload is answered */
    dyn_model *model_next;
    dyn_data *data_next;
    drv *driver;
    hf_mailbox cmds;
    ctl_ack acks[N_ACKS];
    _Atomic uint64_t acked;
    int notify_fd; /* eventfd the control thread bumps after acknowledging (-1 = none) */
    _Atomic int estop_request, stop_request, go, exited, stall_request;
    char stall_reason[160];
    hf_seqlock status;
    hf_ring samples, events;
    tt_hist late, read, compute, write;
    law_params params[2];
    traj_limits lims[2]; /* with params[i]: what a re-anchored plan is checked against */
    _Atomic int params_active;
    traj_plan plans[N_PLANS];
    _Atomic int plan_owner[N_PLANS]; /* 0 = main thread, 1 = control thread */
    _Atomic uint64_t ticks;
    /* CLOCK_MONOTONIC [ns] of control time 0 (the first tick's deadline; ctl_create's moment
     * until the thread runs): written once by the control thread at its start */
    _Atomic int64_t t0_ns;
    /* control thread */
    ctl_rt rt;
};

/* ------------------------------------------------------------------ shared inline helpers */

/* CLOCK_MONOTONIC now [ns]. */
static inline int64_t ctl_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps 100 us (polling waits: the control thread's start, a command's acknowledgement). */
static inline void ctl_nap_100us(void)
{
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
}

/* The parameter block in use (the other one is filled by the main thread before a swap). */
static inline const law_params *ctl_live_params(ctl *c)
{
    return &c->params[atomic_load_explicit(&c->params_active, memory_order_acquire)];
}

/* The trajectory limits that go with the parameter block in use (control thread). */
static inline const traj_limits *ctl_live_limits(ctl *c)
{
    return &c->lims[atomic_load_explicit(&c->params_active, memory_order_acquire)];
}

/* Main thread: true while a control thread runs and takes commands; when false, the main
 * thread may change the controller directly. */
static inline bool ctl_thread_running(ctl *c)
{
    return c->started && !atomic_load_explicit(&c->exited, memory_order_acquire);
}

/* Main thread: the last published status and desired acceleration (all zero before the
 * first publish). */
static inline void ctl_read_pub(ctl *c, ctl_pub *out)
{
    if (!hf_seqlock_read(&c->status, out)) memset(out, 0, sizeof *out);
}

/* Control thread: gives a plan slot back to the main thread (slot < 0: nothing). */
static inline void ctl_release_slot(ctl *c, int slot)
{
    if (slot >= 0) atomic_store_explicit(&c->plan_owner[slot], 0, memory_order_release);
}

/* Control thread: holds at q [rad or m per joint] with zero desired velocity and
 * acceleration. */
static inline void ctl_hold_at(ctl *c, const double *q)
{
    for (int j = 0; j < c->n; j++) {
        c->rt.q_des[j] = q[j];
        c->rt.qd_des[j] = c->rt.qdd_des[j] = 0;
    }
}

/* ------------------------------------------------------------------------------ control.c */

/* Fills *e (if not NULL) with a one-word code and a formatted sentence. */
void ctl_set_err(ctl_error *e, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The model's payload changed (dyn_set_payload, in the thread that owns the model now): the
 * laws take the generated code only while it still fits, else the general core. */
void ctl_payload_changed(ctl *c);
/* A reload's new dynamics in: model/data and model_next/data_next trade places, the laws take
 * the new model (generated code only while it fits), the collision observer restarts on it.
 * Runs in the thread that owns the model (the control thread once it runs). */
void ctl_swap_model(ctl *c);
/* Frees model_next/data_next (main thread, once no command refers to them). */
void ctl_free_next_model(ctl *c);

/* ----------------------------------------------------------------------- control_thread.c */

/* The control thread's body (pthread start routine; arg is the ctl). */
void *ctl_thread_main(void *arg);
/* Before the thread starts: reads the first state, holds there and publishes it. */
int ctl_read_initial_state(ctl *c, ctl_error *err);
/* Fills the status snapshot and the sample, publishes both. */
void ctl_publish(ctl *c);
/* Publishes an event; text from fmt (NULL = ""). */
void ctl_emit(ctl *c, ctl_event_type type, uint32_t traj_id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Changes the state, with a state event when it changed. */
void ctl_set_state(ctl *c, sf_state s);
/* Zero torque written, servos disabled, damping stop ended. Control thread, or the main
 * thread while no control thread runs. */
void ctl_torque_off(ctl *c);
/* A fault: torque reaction, state fault, motion ends, events. */
void ctl_fault(ctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, ending in the damping stop whatever [safety] on_fault says. */
void ctl_fault_damped(ctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The collision observer's step for an enabled arm with a fresh state sampled dt [s] after the
 * previous one, and the reaction to a detection (control_collision.c); true when it faulted. */
bool ctl_observe_collisions(ctl *c, const law_params *p, double dt);

/* Index of the first non-finite value of v[0..n), -1 when all are finite. */
static inline int ctl_first_nonfinite(const double *v, int n)
{
    for (int j = 0; j < n; j++)
        if (!isfinite(v[j])) return j;
    return -1;
}
/* Emergency stop: torque off, motion ends, state estop. */
void ctl_estop_now(ctl *c);

/* ------------------------------------------------------------------------ control_reply.c */

/* A free entry for an answer of the given kind to `to`, or NULL with err "busy". */
ctl_pending *ctl_pending_new(ctl *c, done_kind kind, const ctl_reply_to *to, ctl_error *err);
/* Gives an entry back unanswered (the command was refused before it was sent). */
void ctl_pending_drop(ctl_pending *p);
/* Sends m for entry p; -1 with err (and p dropped) when no control thread runs or the
 * mailbox is full. */
int ctl_pending_send(ctl *c, ctl_pending *p, ctl_cmd *m, ctl_error *err);
/* Answers entry p now, without the control thread (delivered by the next ctl_poll). */
void ctl_pending_answer(ctl_pending *p, int rc, const ctl_error *err);

/* A caller that passed no reply_to waits on one of these. */
typedef struct {
    bool done;
    int rc;
    ctl_error err;
    ctl_result res;
} ctl_waiter;
/* to, or (to == NULL) a reply_to that fills *w. */
const ctl_reply_to *ctl_reply_target(const ctl_reply_to *to, ctl_waiter *w, ctl_reply_to *self);
/* The command's return value: rc itself when to != NULL or rc != 0; else waits for *w's
 * answer (polling) and returns it with *err. */
int ctl_reply_finish(ctl *c, const ctl_reply_to *to, ctl_waiter *w, int rc, ctl_error *err);

/* -------------------------------------------------------------------------- control_cmd.c */

/* The main thread's part of an answer that came in (control_cmd.c): the tail for appends,
 * the running configuration, the follow-up move of an enable. False when the answer is not to
 * be delivered yet (a follow-up command will deliver it). */
bool ctl_cmd_done(ctl *c, ctl_pending *p);

/* ------------------------------------------------------------------------ control_apply.c */

/* Applies the queued mailbox commands; returns the last seq handled (0 = none). */
uint64_t ctl_process_commands(ctl *c);
/* Switches the control law with a zero integral; ends a collision's float. */
void ctl_switch_law(ctl *c, cfg_controller law);

/* ----------------------------------------------------------------------- control_motion.c */

/* Ends every trajectory (active, queued, stopping) with the given text. */
void ctl_drop_motion(ctl *c, const char *why);
/* Re-anchors plan slot at the present desired state (the plan was built from a state up to a
 * few ticks older) and checks its changed first segment against the live limits; 0, or -1
 * with *e ("limits") when the arm has moved on too far for it. */
int ctl_prepare_plan(ctl *c, int slot, ctl_error *e);
/* Starts a prepared plan slot now; state moving. */
void ctl_start_plan(ctl *c, int slot);
/* Advances the desired state along the active motion by dt [s]. */
void ctl_advance_motion(ctl *c, const law_params *p, double dt);
/* Path tolerance while moving: abort, hold the present position, say why. */
void ctl_check_path(ctl *c, const law_params *p);

/* ---------------------------------------------------------------------- control_retract.c */

/* Forgets the recorded path and any retract (at enable). */
void ctl_retract_clear(ctl_retract *b);
/* Records the measured position q (n joints) on the executed path when it is at least
 * distance / RETRACT_SPACING [rad|m] from the last point recorded. */
void ctl_retract_record(ctl_retract *b, int n, const double *q, double distance);
/* Starts moving back from q along the recorded path by up to distance [rad|m], at a quarter
 * of the lowest joint velocity and acceleration limits; false (nothing started) when less
 * than RETRACT_MIN of path was recorded. The state becomes moving. */
bool ctl_retract_start(ctl *c, const law_params *p, const double *q);
/* Advances the desired state along the way back by dt [s]; at its end holds there (state
 * holding). */
void ctl_retract_advance(ctl *c, double dt);

#endif
