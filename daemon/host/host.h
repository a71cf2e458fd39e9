/*
 * host.h — private to the host (daemon/host/, whose public face is daemon/control.h): the
 * controller as the main thread owns it. The host builds everything the loop works with
 * (settings, dynamics, plans), sends it through the hand-off and accounts for every object until
 * the loop hands it back; it keeps the answers owed to callers and delivers them.
 *
 * Files, one job each (main thread only; in lockstep the same thread also steps the loop):
 *   commands.c  the state commands and trajectories: checks, plans built, their answers
 *   settings.c  gains, controller, payload and reload: checked, then queued as changes
 *   life.c      create, start (a thread, or stepped by lockstep), stop, free; the readers
 *               (status, samples, events); liveness and stall detection
 *   answers.c   answers owed: sending a command, the loop's replies, timeouts, delivery,
 *               waiting callers; the queued settings changes sent one at a time
 *   objects.c   the plan pool and the settings and dynamics objects: built from a change, in
 *               use once the loop took them, freed when it hands them back
 *   physical.c  what a change asks of the arm: stable gains, no change of the law's character
 *               mid-move, a payload the joints can hold (config/feasible.h)
 * Calls go down this list only (answers.c reaches a command's follow-up through the function
 * pointer its answer carries).
 */
#ifndef ARMD_HOST_H
#define ARMD_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "daemon/control.h"
#include "daemon/controller.h"
#include "daemon/handoff.h"
#include "daemon/loop/loop.h"
#include "daemon/loop_thread.h"
#include "daemon/runner.h"

#define HOST_PLANS 8 /* plan slots: one followed, the ones appended, one being built */
#define HOST_OBJS  (2 * CTL_MAX_PENDING + 4) /* settings and dynamics objects alive at once */
_Static_assert(HOST_PLANS >= LOOP_QUEUE + 2, "a plan can be built while the queue is full");

typedef struct ctl_pending ctl_pending;
/* A command's own work once its answer is in (p->rc, p->err, p->res); false when it sent a
 * follow-up that answers the caller instead. */
typedef bool (*host_done_fn)(ctl *c, ctl_pending *p);

/* A settings change waiting for its turn, or in the loop (settings.c, answers.c). */
typedef enum { CHANGE_GAINS, CHANGE_PAYLOAD, CHANGE_RELOAD, CHANGE_IMPEDANCE } change_kind;
typedef struct {
    change_kind kind;
    double v[3][CFG_MAX_JOINTS]; /* CHANGE_GAINS: kp, kd, ki ... */
    bool has[3];                 /* ... where given */
    dyn_payload payload;         /* CHANGE_PAYLOAD */
    armd_config *cand;           /* CHANGE_RELOAD: the configuration loaded (malloc'd) */
    cfg_impedance imp;           /* CHANGE_IMPEDANCE: the whole block */
} settings_change;

/* An answer owed to a caller. */
struct ctl_pending {
    bool used;
    uint64_t seq;        /* the command sent (its reply answers); 0 = not sent */
    bool answered;       /* rc, err, res hold the answer */
    int64_t deadline_ns; /* CLOCK_MONOTONIC: a "timeout" answer after it (once sent) */
    ctl_reply_to to;
    host_done_fn done; /* NULL: nothing more to do */
    int rc;
    ctl_error err;
    ctl_result res;
    /* trajectories */
    int plan;       /* the plan slot sent */
    bool append;    /* appended */
    traj_state end; /* the plan's end (where the next append starts) */
    /* settings changes: waiting for their turn while change is set and seq is 0 */
    settings_change *change;
    uint64_t order; /* queued changes go in this order */
};

/* The settings change in the loop (one at a time): what it carries, for its reply. */
typedef struct {
    uint64_t seq;        /* 0: none in the loop */
    int64_t deadline_ns; /* CLOCK_MONOTONIC: its answer is late after it */
    loop_settings *set;
    loop_dyn *dyn;
    armd_config *cand; /* a reload's configuration, the running one once accepted */
    dyn_payload payload;
} host_inflight;

struct ctl {
    /* the configuration */
    armd_config cfg; /* the running configuration */
    traj_limits lim; /* its trajectory limits (plans are built against them) */
    int n;
    double period; /* [s] */
    int64_t period_ns;
    const dyn_gen_module *gen; /* the arm's generated dynamics, if any */
    dyn_payload payload;       /* the payload in use (the last one the loop took) */
    /* what the loop runs (the last settings and dynamics it took; read-only) */
    const loop_settings *set;
    loop_dyn *dyn;
    host_inflight inflight;
    /* objects (objects.c) */
    traj_plan plans[HOST_PLANS];
    bool plan_in_loop[HOST_PLANS];
    void *objs[HOST_OBJS]; /* settings and dynamics alive: freed when handed back, or at the end */
    bool obj_is_dyn[HOST_OBJS];
    /* the parts */
    handoff *h;
    loop *L;
    drv *driver;
    runner *run;
    loop_thread thread;
    /* HOST_STUCK: the control thread could not be joined and still runs (ctl_stop) */
    enum { HOST_CREATED, HOST_THREAD, HOST_STEPPED, HOST_STOPPED, HOST_STUCK } mode;
    void (*step)(void *ctx); /* HOST_STEPPED: advances the loop one tick (waiting callers) */
    void *step_ctx;
    /* answers */
    ctl_pending pending[CTL_MAX_PENDING];
    uint64_t cmd_seq;
    uint64_t change_order; /* the last queued change's order */
    uint32_t next_id;
    int tail_plan; /* the last plan handed over (appends start at its end), -1 none */
    uint32_t tail_id;
    traj_state tail_end;
    /* liveness */
    uint64_t alive_ticks; /* ctl_alive's cursor (its caller: the systemd watchdog) */
    uint64_t seen_ticks;  /* ctl_stalled's own cursor ... */
    int64_t seen_ns;      /* ... and when it last saw the counter move */
};

/* CLOCK_MONOTONIC now [ns]. */
static inline int64_t host_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
/* Zero torque written and the servos switched off from the main thread: only while no loop
 * runs (before the start, after the stop, or when the control thread had to be cancelled). */
void host_torque_off(ctl *c);

/* ------------------------------------------------------------------------------ answers.c */
/* A free entry for an answer to `to` (done: the command's follow-up), or NULL with err "busy". */
ctl_pending *host_pending_new(ctl *c, const ctl_reply_to *to, host_done_fn done, ctl_error *err);
/* Gives an entry back unanswered (the command was refused before it was sent). */
void host_pending_drop(ctl_pending *p);
/* Sends m for entry p (its answer is the loop's reply); -1 with err (p dropped) when no loop
 * runs or the mailbox is full. */
int host_pending_send(ctl *c, ctl_pending *p, loop_cmd *m, ctl_error *err);
/* Answers entry p here, now (delivered by the next ctl_poll). */
void host_pending_answer(ctl_pending *p, int rc, const ctl_error *err);
/* Queues a settings change (taken over, malloc'd) for entry p: sent when the one in the loop is
 * over, built then on top of what the loop runs. */
void host_pending_change(ctl *c, ctl_pending *p, settings_change *ch);
/* The loop has stopped: its last replies are taken, and every answer still owed becomes a
 * "stopping" error (delivered by the next ctl_poll, as any answer). */
void host_pending_stop(ctl *c);
/* A caller that passed no reply_to waits on one of these. */
typedef struct {
    bool done;
    int rc;
    ctl_error err;
    ctl_result res;
} host_waiter;
/* to, or (to == NULL) a reply_to that fills *w. */
const ctl_reply_to *host_reply_target(const ctl_reply_to *to, host_waiter *w, ctl_reply_to *self);
/* The command's return value: rc itself when to != NULL or rc != 0; else waits for *w's answer
 * (polling; stepping the loop when it is stepped) and returns it with *err. */
int host_reply_finish(ctl *c, const ctl_reply_to *to, host_waiter *w, int rc, ctl_error *err);

/* ----------------------------------------------------------------------------- commands.c */
/* The state a new plan starts from: the end of the last handed-over plan when appending to one
 * the loop still holds, else the present desired state. *after_id = the plan appended to. */
void host_plan_start(ctl *c, bool append, traj_state *s, uint32_t *after_id);
/* Hands the plan built in slot over (the answer comes with its id and duration); 0 or -1. */
int host_submit_plan(ctl *c, int slot, bool append, uint32_t after_id, const ctl_reply_to *to,
                     ctl_error *err);
/* Refuses trajectories unless the arm is enabled ("bad_state"; the loop checks again). */
int host_check_enabled(ctl *c, ctl_error *err);
/* A trajectory command's return (host_reply_finish), with the waited-for answer's id and
 * duration copied out (each may be NULL). */
int host_traj_finish(ctl *c, const ctl_reply_to *to, host_waiter *w, int rc, uint32_t *id,
                     double *duration, ctl_error *err);

/* ------------------------------------------------------------------------------ objects.c */
/* Allocates the plan pool; 0 or -1. */
int host_plans_alloc(ctl *c);
/* A plan slot the loop does not hold, or -1 with err "busy". */
int host_plan_free_slot(ctl *c, ctl_error *err);
/* Registers a settings or dynamics object the host made (freed when handed back); -1 when the
 * registry is full (the caller frees it). */
int host_obj_add(ctl *c, void *obj, bool is_dyn);
/* Takes what a reply hands back: plans return to the pool, settings and dynamics are freed
 * (unless still in use: what the loop runs now). */
void host_objects_returned(ctl *c, const loop_reply *r);
/* Frees every object and the plan pool (the loop is gone). */
void host_objects_free(ctl *c);
/* A dynamics object for desc (a new model, its workspace, the functions for it). NULL with err. */
loop_dyn *host_dyn_new(ctl *c, const dyn_model_desc *desc, ctl_error *err);
/* The same around an existing model (taken over). */
loop_dyn *host_dyn_wrap(ctl *c, dyn_model *model, ctl_error *err);
void host_dyn_free(loop_dyn *d);

/* The objects a change makes on top of what the loop runs (settings and/or dynamics, each NULL
 * when unchanged) into the in-flight record; a reload's keys changed into changed (len bytes).
 * 0, or -1 with err (nothing made). */
int host_change_build(ctl *c, const settings_change *ch, char *changed, size_t len, ctl_error *err);
/* ----------------------------------------------------------------------------- physical.c */
/* The cartesian_impedance law's spring and damper imp on cfg's arm with payload, at the present
 * measured pose and over the joint ranges (config/feasible.h feas_impedance), and the arm at
 * most 6 joints: 0, or -1 with why. */
int host_impedance_feasible(ctl *c, const armd_config *cfg, const cfg_impedance *imp,
                            const dyn_payload *payload, char *why, size_t len);
/* Change ch, made into the law's parameters next (NULL: unchanged) and the payload it leaves in
 * use, against the arm (physical.c's header): 0, or -1 with err naming the joint and the
 * numbers ("invalid_params": a gain past a bound; "bad_state": a change of character while
 * moving; "infeasible": the payload or the impedance). */
int host_change_feasible(ctl *c, const settings_change *ch, const law_params *next,
                         const dyn_payload *payload, ctl_error *err);
/* Plan pl's inverse dynamics (RNEA with gravity, armature, friction and the payload in use)
 * sampled along it within every joint's torque limit: 0, or -1 with err ("limits", naming the
 * joint, the time and the torque). */
int host_plan_feasible(ctl *c, const traj_plan *pl, ctl_error *err);

/* The loop took the in-flight change: its objects (and a reload's configuration) are what runs
 * now. */
void host_change_accepted(ctl *c);
/* The in-flight change is over (taken or refused): its record is cleared. */
void host_change_clear(ctl *c);

#endif
