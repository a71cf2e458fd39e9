/*
 * control.h — armd's controller as the main thread sees it: the only way into the control
 * side for main.c, the socket API and the procedures. The host (host*.c) builds what the loop
 * needs, hands it over through daemon/handoff.h and answers the callers; the loop
 * (daemon/loop/) runs on the control thread (loop_thread.c) or, in lockstep simulation, is
 * stepped by the main thread itself (ctl_start_stepped, ctl_tick).
 *
 * Every function here runs on the main thread and never blocks on the loop: commands go
 * through a mailbox and are answered later (see "commands" below), state comes back through
 * the status snapshot and the sample and event rings. All vectors are in config joint order,
 * SI units.
 */
#ifndef ARMD_CONTROL_H
#define ARMD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "drivers/drivers.h"
#include "dynamics/dynamics.h"

#include "daemon/ctl_types.h"

typedef struct ctl ctl;

/* Creates the controller for cfg (copied), model (owned afterwards) and an opened, probed driver
 * (owned afterwards): everything the loop will use is allocated here. The arm is disabled. */
ctl *ctl_create(const armd_config *cfg, dyn_model *model, drv *driver, ctl_error *err);
/* Lets the loop use gen (the arm's generated dynamics, dyngen.h; NULL: none) whenever it fits
 * the model as it is (dyn_funcs_for), the general core otherwise; call before the start. gen
 * must outlive the ctl. Returns the functions' origin ("general core" or "generated ...") as
 * used now. */
const char *ctl_use_generated(ctl *c, const dyn_gen_module *gen);
/* Starts the control thread (SCHED_FIFO, mlockall, CPU pin as configured; one warning each when
 * refused) and waits for its first tick (at most 1 s). */
int ctl_start(ctl *c, ctl_error *err);
/* Starts the loop without a thread (lockstep simulation): the caller runs each tick with
 * ctl_tick, on its clock, whose control time 0 is t0_ns; a caller that waits for an answer (no
 * reply_to) has the loop stepped by step(ctx) meanwhile. */
int ctl_start_stepped(ctl *c, int64_t t0_ns, void (*step)(void *ctx), void *ctx, ctl_error *err);
/* One tick of a stepped loop: its deadline (the caller's clock) [ns], how late it runs after
 * the original deadline [ns] and whole periods skipped before it. */
void ctl_tick(ctl *c, int64_t deadline_ns, int64_t late_ns, uint64_t skipped);
/* Safe shutdown: trajectories end, zero torque, servos disabled, the thread joined (cancelled
 * after 2 s and joined within 0.5 s more, then the torque off from here). False when the thread
 * could not be joined even then (it spins without a cancellation point): the driver is
 * silenced and the torque-off frame written from here (drv_torque_off_async), and the caller
 * must exit (non-zero) at once; ctl_free then frees nothing. Idempotent. */
bool ctl_stop(ctl *c);
/* Stops (ctl_stop) and frees the controller and its driver. */
void ctl_free(ctl *c);
/* True while ticks advance (for the systemd watchdog): the tick counter moved since the last
 * call. */
bool ctl_alive(ctl *c);

/* Stall detection (call it periodically, e.g. from a 50 ms timer; a control thread only):
 * true when no tick has completed for more than max_seconds; it then also asks the loop to
 * fault ("control thread stalled: ...") as soon as it runs again. The loop itself faults when
 * one of its ticks wakes up more than CTL_STALL_SECONDS late while the arm is enabled. (A
 * thread stuck for good cannot write torque; the device watchdog must cover that.) */
bool ctl_stalled(ctl *c, double max_seconds);

/* ------------------------------------------------------------------------------ commands
 * Each command is checked here, handed to the loop through the mailbox and applied at the
 * start of a tick; the loop's reply is the answer. Where
 * the answer goes is the caller's choice, through `to`:
 *  - to == NULL: the call waits for it (sleeping, at most CTL_ACK_TIMEOUT_S) and returns it:
 *    0, or -1 with *err filled (tests, tools);
 *  - to != NULL: the call never waits. It returns -1 with *err when the command is refused
 *    before it is sent (to->fn is then never called), else 0, and to->fn(to->ctx, rc, err,
 *    result) is called exactly once later from ctl_poll() — usually within a tick or two; with
 *    a "timeout" error after CTL_ACK_TIMEOUT_S. The main loop serves everything meanwhile.
 * Settings changes (gains, payload, reload) go to the loop one at a time, each built on what
 * the loop runs when its turn comes; the later ones wait for it (never "busy, send again"),
 * and are answered "timeout" as well once the one in the loop is CTL_ACK_TIMEOUT_S late.
 * At most CTL_MAX_PENDING answers can be outstanding ("busy" beyond). */
#define CTL_ACK_TIMEOUT_S 1.0
#define CTL_MAX_PENDING   64

/* What an answer carries besides rc and err. */
typedef struct {
    uint32_t id;          /* trajectory, move_to: the new trajectory's id ... */
    double duration;      /* ... and its duration [s] */
    char changed[1024];   /* reload: the keys that changed ("" = none) */
    ctl_tool_result tool; /* tool commands: how it ended */
} ctl_result;

typedef struct {
    void (*fn)(void *ctx, int rc, const ctl_error *err, const ctl_result *result);
    void *ctx;
} ctl_reply_to;

/* Delivers the answers that arrived (and the timeouts) to their to->fn. Call it when
 * ctl_notify_fd() is readable and at least every few ms. */
void ctl_poll(ctl *c);
/* A descriptor (eventfd) that becomes readable when the loop has answered something: watch it
 * in the main loop and call ctl_poll(). */
int ctl_notify_fd(ctl *c);
/* True while an answer is owed (a command sent to the loop and not answered, or one waiting
 * for its turn): a paused lockstep runs ticks until it is given. */
bool ctl_waiting(ctl *c);

/* disabled -> holding (present position, no jump). The loop waits for a fresh state within the
 * limits, 0.5 s at most (reads that keep failing past [safety] max_failed_reads and
 * max_read_gap_ms fault the arm sooner), then for the servos; a joint enabled past a soft limit
 * (within following_error) is then moved back inside the limits, at the limits' pace */
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
 * the flag the loop checks at the start of its next tick. */
void ctl_estop_async(ctl *c);

/* Validates and queues a trajectory (append = after the current one, else replace now). The
 * answer's result has its id and duration [s] (also in *id and *duration when waiting). */
int ctl_trajectory(ctl *c, const ctl_waypoint *points, int n_points, bool append, uint32_t *id,
                   double *duration, const ctl_reply_to *to, ctl_error *err);
/* A single move from the present desired state to q; duration <= 0 chooses the shortest
 * duration the velocity and acceleration limits allow. */
int ctl_move_to(ctl *c, const double *q, double duration, uint32_t *id, double *duration_out,
                const ctl_reply_to *to, ctl_error *err);
/* A straight line of the tool frame from the pose where the move starts (the present desired
 * state, at rest, or the end of the plan appended to) to req's goal, at most req's speed and
 * acceleration along it: planned by inverse kinematics into a joint plan (traj_linear.h), then
 * validated like a trajectory, torques included. Errors: "bad_state" (not enabled, or moving
 * without append), "invalid_params", "unreachable" (out of reach, a singularity, an orientation
 * the arm cannot take; naming the waypoint), "limits". The answer as for ctl_trajectory. */
int ctl_move_linear(ctl *c, const ctl_linear *req, uint32_t *id, double *duration,
                    const ctl_reply_to *to, ctl_error *err);

/* Run-time gains (NULL = unchanged), each finite within the config loader's bounds
 * (CTL_KP_MAX, CTL_KD_MAX, CTL_KI_MAX). The INI file stays the source of truth at reload. */
#define CTL_KP_MAX 1e7
#define CTL_KD_MAX 1e7
#define CTL_KI_MAX 1e9
int ctl_gains_set(ctl *c, const double *kp, const double *kd, const double *ki,
                  const ctl_reply_to *to, ctl_error *err);
void ctl_gains_get(ctl *c, double *kp, double *kd, double *ki);

/* The cartesian_impedance law's spring and damper ([impedance]) in use, and their replacement
 * between two ticks: each value finite within the config loader's bounds (below), then, when
 * the law in use is cartesian_impedance, the sampled loop's bound at the present pose and over
 * the joint ranges ("infeasible") and, while the arm moves, no spring turned on or off or
 * changed by more than a factor of 2 ("bad_state"). Any state. The INI file stays the source of
 * truth at reload. */
#define CTL_STIFFNESS_MAX     1e6 /* N/m */
#define CTL_ROT_STIFFNESS_MAX 1e5 /* N m/rad */
#define CTL_DAMPING_RATIO_MAX 10.0
#define CTL_GUIDE_DAMPING_MAX 1e5 /* N s/m, N m s/rad */
void ctl_impedance_get(ctl *c, cfg_impedance *out);
int ctl_impedance_set(ctl *c, const cfg_impedance *imp, const ctl_reply_to *to, ctl_error *err);
/* Switch control law; allowed while disabled or holding. */
int ctl_controller_set(ctl *c, cfg_controller law, const ctl_reply_to *to, ctl_error *err);

/* A tool command ([tool NAME]: tool.move, tool.grasp, tool.release; CTL_TOOL_IDLE = tool.stop),
 * checked here against the section (finite; opening or width within the stroke; speed in
 * (0, velocity], 0 = [tool] speed; force in (0, max_force], 0 = [tool] force; epsilons >= 0,
 * < 0 = [tool] epsilon; a grasp's width - epsilon_inner at least lower + tolerance, where the
 * empty fingers stop)
 * and answered by the loop when it ends (res->tool), within [tool] timeout; "no_tool" without a
 * section, "invalid_params", "bad_state" while the arm is not enabled. */
int ctl_tool(ctl *c, const ctl_tool_cmd *cmd, const ctl_reply_to *to, ctl_error *err);

/* Replaces the tool payload between two ticks: a new model with it is built here and handed to
 * the loop. Allowed in any state; mass within [0, CTL_PAYLOAD_MASS_MAX] kg, com within
 * CTL_PAYLOAD_COM_MAX m of the tool frame, |inertia| <= CTL_PAYLOAD_INERTIA_MAX (the config
 * loader's bounds), all finite. */
#define CTL_PAYLOAD_MASS_MAX    10000.0
#define CTL_PAYLOAD_COM_MAX     100.0
#define CTL_PAYLOAD_INERTIA_MAX 1e4
int ctl_payload_set(ctl *c, const dyn_payload *payload, const ctl_reply_to *to, ctl_error *err);
/* The payload in use: the config's until ctl_payload_set replaces it (a reload keeps it). */
void ctl_payload_get(ctl *c, dyn_payload *out);

/* Applies a new, already validated configuration between two ticks if only live keys changed
 * (new settings, and a new model when the dynamics keys changed, built here and handed to the
 * loop); otherwise refuses (err names the keys needing a restart) and keeps the running one. The
 * result's `changed` lists the keys that changed ("" if none; also copied to changed when
 * waiting). */
int ctl_reload(ctl *c, const armd_config *candidate, char *changed, size_t changed_len,
               const ctl_reply_to *to, ctl_error *err);

/* Starts the loop timing statistics (lateness, read, compute, write quantiles) afresh, between
 * two ticks; the counters (ticks, overruns, ...) keep counting. */
int ctl_stats_reset(ctl *c, const ctl_reply_to *to, ctl_error *err);

/* The loop's clock [s] at control time t [s] (the `time` of status, samples and events, 0 a
 * period before the first tick's deadline): CLOCK_MONOTONIC with a control thread, the
 * simulated clock in lockstep; to join armd's records with other clocks. */
double ctl_mono_of(ctl *c, double t);

/* True when the loop runs on a simulated clock (lockstep): `mono` is then that clock. */
bool ctl_simulated(ctl *c);

/* Snapshot of everything `status` reports. */
void ctl_status_get(ctl *c, ctl_status *out);
/* The running configuration (main thread's copy; valid until the next successful reload). */
const armd_config *ctl_config(ctl *c);

/* Telemetry: copies up to max samples newer than *cursor (oldest first) and advances *cursor.
 * Start with *cursor = 0 to get only samples published from now on. A slow reader skips
 * samples (the ring overwrites); it never delays the loop. Returns the count. */
int ctl_samples_read(ctl *c, uint64_t *cursor, ctl_sample *out, int max);
/* Events (state changes, faults, trajectory ends), same cursor semantics. */
int ctl_events_read(ctl *c, uint64_t *cursor, ctl_event *out, int max);

#endif
