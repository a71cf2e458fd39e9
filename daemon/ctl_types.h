/*
 * ctl_types.h — the records armd's control loop publishes and its host side hands on: the arm's
 * state, an error for a client, a timed waypoint, the status snapshot, the per-tick telemetry
 * sample and the events. Plain data, no functions but the state names; every vector is in
 * config joint order, SI units, joint side.
 */
#ifndef ARMD_CTL_TYPES_H
#define ARMD_CTL_TYPES_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"

/* A tick that wakes this late while the arm is enabled faults ("control thread stalled") [s];
 * the host calls a control thread stalled after as long without a tick. */
#define CTL_STALL_SECONDS 0.2

typedef enum {
    CTL_DISABLED = 0, /* no torque */
    CTL_HOLDING = 1,  /* holding the desired position */
    CTL_MOVING = 2,   /* following a trajectory */
    CTL_FAULT = 3,    /* a fault stopped the arm; needs reset */
    CTL_ESTOP = 4     /* emergency stop: torque zeroed, disabled; needs reset */
} ctl_state;

/* "disabled", "holding", "moving", "fault", "estop". */
static inline const char *ctl_state_name(ctl_state s)
{
    static const char *const names[] = {"disabled", "holding", "moving", "fault", "estop"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

/* An error for a client: code is one word ("invalid_params", "bad_state", "limits", ...),
 * message a sentence naming what and where (e.g. "waypoint 3 joint elbow: ..."). */
typedef struct {
    char code[32];
    char message[256];
} ctl_error;

/* Fills *e (nothing when NULL) with a one-word code and a formatted sentence. */
static inline __attribute__((format(printf, 3, 4))) void
ctl_error_set(ctl_error *e, const char *code, const char *fmt, ...)
{
    if (!e) return;
    snprintf(e->code, sizeof e->code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

/* One timed waypoint. qd / qdd are used only when has_qd / has_qdd. */
typedef struct {
    double t; /* seconds from the trajectory's start */
    double q[CFG_MAX_JOINTS];
    double qd[CFG_MAX_JOINTS];
    double qdd[CFG_MAX_JOINTS];
    bool has_qd, has_qdd;
} ctl_waypoint;

/* A straight-line tool move (move_linear): to a pose, or by an offset from where the move
 * starts, in the base frame or the tool's own axes. */
typedef enum { CTL_FRAME_BASE, CTL_FRAME_TOOL } ctl_frame;
typedef struct {
    bool relative;              /* xyz is an offset from the start (else the goal position) */
    double xyz[3];              /* [m] */
    ctl_frame frame;            /* the axes of xyz */
    bool has_orientation;       /* absolute only: the goal orientation quat (else kept) */
    double quat[4];             /* unit quaternion w, x, y, z of the goal, base frame */
    double speed, acceleration; /* along the line [m/s, m/s^2]; 0: [trajectory] defaults */
    bool append;                /* start after the plan the loop holds (else replace it) */
} ctl_linear;

/* The tool servo ([tool NAME]): what its commands ask, how they end, what status shows. */
typedef enum { CTL_TOOL_IDLE = 0, CTL_TOOL_MOVE, CTL_TOOL_GRASP, CTL_TOOL_RELEASE } ctl_tool_kind;
typedef enum {
    CTL_TOOL_REACHED = 0, /* a move or release at its target within [tool] tolerance */
    CTL_TOOL_GRASPED,   /* a grasp stopped within width - epsilon_inner .. width + epsilon_outer */
    CTL_TOOL_NO_OBJECT, /* a grasp closed below width - epsilon_inner */
    CTL_TOOL_BLOCKED,   /* stopped before the target (a grasp: above width + epsilon_outer) */
    CTL_TOOL_STOPPED,   /* by tool.stop or a newer tool command */
    CTL_TOOL_ABORTED    /* the arm left holding/moving (disable, estop, fault) */
} ctl_tool_outcome;
static inline const char *ctl_tool_outcome_name(ctl_tool_outcome o)
{
    static const char *const names[] = {"reached", "grasped", "no_object",
                                        "blocked", "stopped", "aborted"};
    return (unsigned)o < sizeof names / sizeof names[0] ? names[o] : "?";
}
static inline const char *ctl_tool_kind_name(ctl_tool_kind k)
{
    static const char *const names[] = {"idle", "move", "grasp", "release"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* A tool command (tool.move / grasp / release / stop; stop is CTL_TOOL_IDLE). SI units. */
typedef struct {
    ctl_tool_kind kind;
    double opening;              /* move: the target [m]; grasp: the width */
    double speed;                /* [m/s] */
    double force;                /* grasp [N] */
    double eps_inner, eps_outer; /* grasp [m] */
} ctl_tool_cmd;

/* A tool pose: the tool frame ([arm] tool_xyz, tool_rpy in the last link) in the base frame, by
 * forward kinematics of the measured q: position x y z [m], then the orientation as the unit
 * quaternion w x y z (w >= 0). */
#define CTL_POSE 7
/* The wrench the environment applies at the tool frame origin, from the collision observer's
 * external torques (dyn_tool_wrench): force x y z [N], then the moment about the tool origin
 * x y z [N m], both in the base frame; NaN while the observer does not run. */
#define CTL_WRENCH 6

/* How a tool command ended. */
typedef struct {
    ctl_tool_outcome outcome;
    double opening, force; /* when it ended [m], [N] */
} ctl_tool_result;

/* The tool in status and telemetry. */
typedef struct {
    bool present;
    double opening, speed, force; /* [m], [m/s], [N] (> 0 squeezing) */
    double current;               /* the servo's motor current [A] */
    bool moving;                  /* the fingers move (|speed| >= TOOL_STILL_SPEED) */
    bool stalled;                 /* still, short of the goal by more than [tool] tolerance */
    ctl_tool_kind command;        /* the command running */
    bool grasped;                 /* the last grasp succeeded and nothing moved the fingers since */
} ctl_tool_status;

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
    ctl_tool_status tool;
    double pose[CTL_POSE];     /* the tool frame at q (CTL_POSE's layout) */
    double wrench[CTL_WRENCH]; /* the wrench at the tool (CTL_WRENCH's layout) */
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
    ctl_tool_status tool;
    double pose[CTL_POSE];     /* the tool frame at q (CTL_POSE's layout) */
    double wrench[CTL_WRENCH]; /* the wrench at the tool (CTL_WRENCH's layout) */
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
    int joint; /* CTL_EV_COLLISION: the joint that crossed its threshold; -1: the tool force */
    double ext[CFG_MAX_JOINTS]; /* CTL_EV_COLLISION: external torque estimate [N m|N] */
} ctl_event;

/* What the status seqlock carries: the status plus the desired acceleration (where a new
 * trajectory starts from). */
typedef struct {
    ctl_status st;
    double qdd_des[CFG_MAX_JOINTS];
} ctl_pub;

#endif
