/*
 * control.h — armd's control thread and its lock-free hand-off with the main (libev) thread.
 *
 * The control thread owns the driver and the dynamics workspace once ctl_start() returns. The
 * main thread talks to it only through the functions below, which never block on the control
 * thread (commands go through a single-producer mailbox or a seqlock/double buffer; state comes
 * back through seqlocked snapshots and rings). All vectors are in config joint order, SI units.
 *
 * Each tick: read state -> velocity estimate -> sample trajectory -> control law -> limits and
 * safety -> write torques -> publish a sample. No allocation, locks or logging in a tick.
 */
#ifndef ARMD_CONTROL_H
#define ARMD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "drivers/drivers.h"
#include "dynamics/dynamics.h"

typedef enum {
    CTL_DISABLED = 0, /* no torque */
    CTL_HOLDING = 1,  /* holding the desired position */
    CTL_MOVING = 2,   /* following a trajectory */
    CTL_FAULT = 3,    /* a fault stopped the arm; needs reset */
    CTL_ESTOP = 4     /* emergency stop: torque zeroed, disabled; needs reset */
} ctl_state;

const char *ctl_state_name(ctl_state s); /* "disabled", "holding", ... */

/* An error for a client: code is one word ("invalid_params", "bad_state", "limits", ...),
 * message a sentence naming what and where (e.g. "waypoint 3 joint elbow: ..."). */
typedef struct {
    char code[32];
    char message[256];
} ctl_error;

/* One timed waypoint. qd / qdd are used only when has_qd / has_qdd. */
typedef struct {
    double t; /* seconds from the trajectory's start */
    double q[CFG_MAX_JOINTS];
    double qd[CFG_MAX_JOINTS];
    double qdd[CFG_MAX_JOINTS];
    bool has_qd, has_qdd;
} ctl_waypoint;

typedef struct {
    double p50_us, p99_us, max_us;
} ctl_timing;

typedef struct {
    ctl_state state;
    char fault[160]; /* "" when none, else the reason of the last fault */
    double time;     /* seconds since the control thread started */
    int n;
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], tau[CFG_MAX_JOINTS];
    double q_des[CFG_MAX_JOINTS], qd_des[CFG_MAX_JOINTS], error[CFG_MAX_JOINTS];
    cfg_controller controller;
    /* active trajectory: id 0 = none */
    uint32_t traj_id;
    double traj_progress;  /* 0..1 */
    double traj_remaining; /* seconds */
    /* loop statistics */
    ctl_timing lateness, read, compute, write;
    uint64_t ticks, overruns, failed_reads, failed_writes, saturations;
    uint64_t late_ticks; /* ticks that woke one or more whole periods late (overrun episodes) */
    uint64_t read_gaps;  /* stretches of ticks without a fresh state */
    double longest_read_gap_ms; /* the longest, good read to good read [ms] */
    /* collision detection: the observer's external torque estimate [N m|N] (0 while it does
     * not run) and the collisions detected since start */
    double external_torque[CFG_MAX_JOINTS];
    uint64_t collisions;
    double rate_hz;
} ctl_status;

/* A published per-tick sample (telemetry ring). */
typedef struct {
    uint64_t tick;
    double time;       /* control time of the tick [s] (its deadline) */
    double state_time; /* control time the state q, qd was read [s] (the reply complete) */
    bool fresh;        /* this tick read a new state (else q, qd are the last one's) */
    ctl_state state;
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], tau[CFG_MAX_JOINTS];
    /* the joint torque the servos reported with q (motor current x torque_per_amp): what acted
     * on the arm as the state was read, at the device's current resolution [N m|N] */
    double tau_meas[CFG_MAX_JOINTS];
    double q_des[CFG_MAX_JOINTS], qd_des[CFG_MAX_JOINTS];
    double ext[CFG_MAX_JOINTS]; /* the collision observer's external torque [N m|N] */
} ctl_sample;

typedef enum {
    CTL_EV_STATE = 0,           /* state changed: state */
    CTL_EV_FAULT = 1,           /* fault: text = reason */
    CTL_EV_TRAJECTORY_DONE = 2, /* traj_id finished: text = "done" | "aborted: why" | "cancelled"
                                   | "replaced" */
    CTL_EV_COLLISION = 3        /* collision detected: joint, ext[] (the external torque
                                   estimate), text = the reaction taken */
} ctl_event_type;

typedef struct {
    uint64_t seq;
    double time;
    ctl_event_type type;
    ctl_state state;
    uint32_t traj_id;
    char text[160];
    int joint;                  /* CTL_EV_COLLISION: the joint that crossed its threshold */
    double ext[CFG_MAX_JOINTS]; /* CTL_EV_COLLISION: external torque estimate [N m|N] */
} ctl_event;

typedef struct ctl ctl;

/* Creates the controller for cfg (copied), model (owned afterwards by ctl, used only by the
 * control thread after start) and an opened, probed driver (owned afterwards). */
ctl *ctl_create(const armd_config *cfg, dyn_model *model, drv *driver, ctl_error *err);
/* Lets the laws use gen (the arm's generated dynamics, dyngen.h; NULL: none) whenever it fits
 * the model as it is (dyn_funcs_for), the general core otherwise; call before ctl_start. gen
 * must outlive the ctl. Returns the functions' origin ("general core" or "generated ...") as
 * used now. */
const char *ctl_use_generated(ctl *c, const dyn_gen_module *gen);
/* Reads the initial state, then starts the control thread (SCHED_FIFO, mlockall, CPU pin as
 * configured; one warning each when refused). The arm is disabled. */
int ctl_start(ctl *c, ctl_error *err);
/* Safe shutdown: stops any trajectory, zeroes torques, disables the servos, joins the thread.
 * Idempotent. */
void ctl_stop(ctl *c);
void ctl_free(ctl *c);
/* True while ticks advance (for the systemd watchdog): the tick counter moved since the last
 * call. */
bool ctl_alive(ctl *c);

/* Stall detection (main thread, call it periodically, e.g. from a 50 ms timer): true when no
 * tick has completed for more than max_seconds; it then also asks the control thread to fault
 * ("control thread stalled: ...") as soon as it runs again. The control thread itself faults
 * when one of its ticks wakes up more than CTL_STALL_SECONDS late while the arm is enabled.
 * (A thread stuck for good cannot write torque; the device watchdog must cover that.) */
#define CTL_STALL_SECONDS 0.2
bool ctl_stalled(ctl *c, double max_seconds);

/* ------------------------------------------------------------------------------ commands
 * Main thread. Each command is checked here, handed to the control thread through the mailbox
 * and applied between two ticks; the control thread's acknowledgement is the answer. Where
 * the answer goes is the caller's choice, through `to`:
 *  - to == NULL: the call waits for it (sleeping, at most CTL_ACK_TIMEOUT_S) and returns it:
 *    0, or -1 with *err filled (tests, tools);
 *  - to != NULL: the call never waits. It returns -1 with *err when the command is refused
 *    before it is sent (to->fn is then never called), else 0, and to->fn(to->ctx, rc, err,
 *    result) is called exactly once later from ctl_poll() — usually within a tick or two; with
 *    a "timeout" error after CTL_ACK_TIMEOUT_S. The main loop serves everything meanwhile.
 * At most CTL_MAX_PENDING answers can be outstanding ("busy" beyond). */
#define CTL_ACK_TIMEOUT_S 1.0
#define CTL_MAX_PENDING   64

/* What an answer carries besides rc and err. */
typedef struct {
    uint32_t id;        /* trajectory, move_to: the new trajectory's id ... */
    double duration;    /* ... and its duration [s] */
    char changed[1024]; /* reload: the keys that changed ("" = none) */
} ctl_result;

typedef struct {
    void (*fn)(void *ctx, int rc, const ctl_error *err, const ctl_result *result);
    void *ctx;
} ctl_reply_to;

/* Delivers the answers that arrived (and the timeouts) to their to->fn. Call it when
 * ctl_notify_fd() is readable and at least every few ms. */
void ctl_poll(ctl *c);
/* A descriptor (eventfd) that becomes readable when the control thread has answered
 * something: watch it in the main loop and call ctl_poll(). */
int ctl_notify_fd(ctl *c);

/* disabled -> holding (present position, no jump); a joint enabled past a soft limit (within
 * following_error) is then moved back inside the limits, at the limits' pace */
int ctl_enable(ctl *c, const ctl_reply_to *to, ctl_error *err);
int ctl_disable(ctl *c, const ctl_reply_to *to, ctl_error *err); /* -> disabled (torque off) */
/* moving -> holding at the present desired position */
int ctl_hold(ctl *c, const ctl_reply_to *to, ctl_error *err);
/* torque zero at the next tick (the flag is raised before anything else), disabled, state
 * estop */
int ctl_estop(ctl *c, const ctl_reply_to *to, ctl_error *err);
int ctl_reset(ctl *c, const ctl_reply_to *to, ctl_error *err); /* fault|estop -> disabled */
/* decelerate within acceleration limits, then hold */
int ctl_cancel(ctl *c, const ctl_reply_to *to, ctl_error *err);

/* ctl_estop from a signal handler (SIGUSR1): async-signal-safe, no wait, no reply; only raises
 * the flag the control thread checks at the start of its next tick (after ctl_start). */
void ctl_estop_async(ctl *c);

/* Validates and queues a trajectory (append = after the current one, else replace now). The
 * answer's result has its id and duration [s] (also in *id and *duration when waiting). */
int ctl_trajectory(ctl *c, const ctl_waypoint *points, int n_points, bool append, uint32_t *id,
                   double *duration, const ctl_reply_to *to, ctl_error *err);
/* A single move from the present desired state to q; duration <= 0 chooses the shortest
 * duration the velocity and acceleration limits allow. */
int ctl_move_to(ctl *c, const double *q, double duration, uint32_t *id, double *duration_out,
                const ctl_reply_to *to, ctl_error *err);

/* Run-time gains (NULL = unchanged), each finite within the config loader's bounds
 * (CTL_KP_MAX, CTL_KD_MAX, CTL_KI_MAX). The INI file stays the source of truth at reload. */
#define CTL_KP_MAX 1e7
#define CTL_KD_MAX 1e7
#define CTL_KI_MAX 1e9
int ctl_gains_set(ctl *c, const double *kp, const double *kd, const double *ki,
                  const ctl_reply_to *to, ctl_error *err);
void ctl_gains_get(ctl *c, double *kp, double *kd, double *ki);
/* Switch control law; allowed while disabled or holding. */
int ctl_controller_set(ctl *c, cfg_controller law, const ctl_reply_to *to, ctl_error *err);

/* Replaces the tool payload between two ticks (dyn_set_payload in the control thread).
 * Allowed in any state; mass within [0, CTL_PAYLOAD_MASS_MAX] kg, com within
 * CTL_PAYLOAD_COM_MAX m of the tool frame, |inertia| <= CTL_PAYLOAD_INERTIA_MAX (the config
 * loader's bounds), all finite. */
#define CTL_PAYLOAD_MASS_MAX    10000.0
#define CTL_PAYLOAD_COM_MAX     100.0
#define CTL_PAYLOAD_INERTIA_MAX 1e4
int ctl_payload_set(ctl *c, const dyn_payload *payload, const ctl_reply_to *to, ctl_error *err);
/* The payload in use: the config's until ctl_payload_set replaces it (a reload keeps it). */
void ctl_payload_get(ctl *c, dyn_payload *out);

/* Applies a new, already validated configuration between two ticks if only live keys changed;
 * otherwise refuses (err names the keys needing a restart) and keeps the running one. The
 * result's `changed` lists the keys that changed ("" if none; also copied to changed when
 * waiting). */
int ctl_reload(ctl *c, const armd_config *candidate, char *changed, size_t changed_len,
               const ctl_reply_to *to, ctl_error *err);

/* Starts the loop timing statistics (lateness, read, compute, write quantiles) afresh, between
 * two ticks; the counters (ticks, overruns, ...) keep counting. */
int ctl_stats_reset(ctl *c, const ctl_reply_to *to, ctl_error *err);

/* The CLOCK_MONOTONIC time [s] of control time t [s] (the `time` of status, samples and events,
 * 0 at the control thread's first tick deadline), to join armd's records with other clocks. */
double ctl_mono_of(ctl *c, double t);

/* Snapshot of everything `status` reports. */
void ctl_status_get(ctl *c, ctl_status *out);
/* The running configuration (main thread's copy; valid until the next successful reload). */
const armd_config *ctl_config(ctl *c);

/* Telemetry: copies up to max samples newer than *cursor (oldest first) and advances *cursor.
 * Start with *cursor = 0 to get only samples published from now on. A slow reader skips
 * samples (the ring overwrites); it never delays the control thread. Returns the count. */
int ctl_samples_read(ctl *c, uint64_t *cursor, ctl_sample *out, int max);
/* Events (state changes, faults, trajectory ends), same cursor semantics. */
int ctl_events_read(ctl *c, uint64_t *cursor, ctl_event *out, int max);

#endif
