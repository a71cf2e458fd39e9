/*
 * tick.h — what one tick of the loop takes in and puts out, and what the host hands over with
 * its commands (settings, dynamics, plans) and gets back in the replies. Plain data: the
 * loop's modules, the runner, the hand-off and the host share these types; the loop's
 * functions are in loop.h.
 */
#ifndef ARMD_LOOP_TICK_H
#define ARMD_LOOP_TICK_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/controller.h"
#include "daemon/ctl_types.h"
#include "daemon/trajectory.h"
#include "drivers/drivers.h"
#include "dynamics/dynamics.h"

/* The loop's state (state.h; loop.h makes and steps it). */
typedef struct loop loop;

#define LOOP_MAX_CMDS    64 /* commands taken in one tick (the host's mailbox holds as many) */
#define LOOP_MAX_REPLIES (2 * LOOP_MAX_CMDS)
#define LOOP_MAX_EVENTS  32
#define LOOP_QUEUE       6 /* plans appended behind the one followed */

/* The loop's parameters, built by the host from the configuration (and gains.set), read-only
 * while the loop holds them. */
typedef struct {
    law_params p;    /* gains, limits, safety and trajectory tolerances */
    traj_limits lim; /* what a re-anchored plan is checked against */
} loop_settings;

/* The dynamics the loop computes with: the model (never written while the loop holds it), its
 * workspace (the loop's scratch) and the functions (the arm's generated code or the general
 * core, dyn_funcs_for). A payload change or a reload of the dynamics keys makes a new one. */
typedef struct {
    dyn_model *model;
    dyn_data *data;
    law_dyn dy; /* {functions, model, data} */
} loop_dyn;

typedef enum {
    LOOP_ENABLE,      /* disabled -> holding (waits for a fresh state in limits, then the servos) */
    LOOP_DISABLE,     /* -> disabled, torque off */
    LOOP_HOLD,        /* as LOOP_CANCEL (its TRAJECTORY_DONE says "cancelled: hold") */
    LOOP_ESTOP,       /* torque off, estop (the flag in loop_in.estop acts first) */
    LOOP_RESET,       /* fault | estop -> disabled */
    LOOP_CANCEL,      /* decelerate within the limits, then hold */
    LOOP_TRAJECTORY,  /* plan: replace the motion, or append (after_id) */
    LOOP_SETTINGS,    /* settings and/or dyn replace the ones in use */
    LOOP_CONTROLLER,  /* switch the control law */
    LOOP_STATS_RESET, /* the timing statistics start afresh (loop_out.reset_timing) */
    LOOP_TOOL,        /* a tool command (answered when it ends: tool.c) */
} loop_cmd_type;

/* One command from the host. */
typedef struct {
    uint64_t seq; /* its answer carries it */
    loop_cmd_type type;
    traj_plan *plan;               /* LOOP_TRAJECTORY: the loop's until handed back */
    bool append;                   /* LOOP_TRAJECTORY: after the plan after_id (0 = none) */
    uint32_t after_id;             /* ... the one it was built to follow */
    const loop_settings *settings; /* LOOP_SETTINGS: new settings, NULL = keep */
    loop_dyn *dyn;                 /* LOOP_SETTINGS: new dynamics, NULL = keep */
    cfg_controller law;            /* LOOP_CONTROLLER */
    ctl_tool_cmd tool;             /* LOOP_TOOL */
} loop_cmd;

/* An answer to a command (seq > 0) and/or objects handed back to the host. */
typedef struct {
    uint64_t seq; /* the command answered; 0: this reply only hands objects back */
    int rc;       /* 0, or -1 with err */
    ctl_error err;
    traj_plan *plan;               /* a plan the loop is done with (ended, or refused) */
    const loop_settings *settings; /* settings replaced (or refused) */
    loop_dyn *dyn;                 /* dynamics replaced (or refused) */
    ctl_tool_result tool;          /* the answer to a LOOP_TOOL (rc 0) */
} loop_reply;

typedef enum { LOOP_SERVOS_KEEP, LOOP_SERVOS_ON, LOOP_SERVOS_OFF } loop_servos;

/* What one tick takes in. */
typedef struct {
    /* time */
    double t;         /* control time of this tick [s]: its deadline, 0 at the first */
    double dt;        /* since the previous tick [s]: a period, more after a late wake-up */
    uint64_t skipped; /* whole periods missed before this tick (a late wake-up) */
    double late;      /* how late this tick woke [s] */
    int64_t t0_ns;    /* control time 0 on the driver's clock [ns] */
    int64_t now_ns;   /* the driver's clock when the read ended [ns] */
    /* the sample */
    int read_rc; /* drv_read's result: 0 = ds is a fresh state, else read_fault says why */
    drv_state ds;
    drv_fault read_fault;
    /* how the driver took the previous tick's output */
    bool wrote;   /* it wrote a torque ... */
    int write_rc; /* ... with this result */
    drv_fault write_fault;
    bool switched; /* it switched the servos on (LOOP_SERVOS_ON) ... */
    int servo_rc;  /* ... with this result */
    drv_fault servo_fault;
    /* from the host */
    bool estop; /* the estop flag was raised (a command, SIGUSR1) */
    bool stall; /* the host saw no tick for too long: fault with stall_reason */
    char stall_reason[160];
    int n_cmds;
    loop_cmd cmds[LOOP_MAX_CMDS];
} loop_in;

/* What one tick puts out. */
typedef struct {
    bool write;                 /* write tau now ... */
    double tau[CFG_MAX_JOINTS]; /* ... [N m|N] */
    loop_servos servos;         /* then switch the servos */
    bool tool_set;              /* a new goal for the tool servo, sent with the write */
    drv_tool_goal tool_goal;
    bool reset_timing; /* stats.reset was applied: the timing statistics start afresh */
    int n_replies;
    loop_reply replies[LOOP_MAX_REPLIES];
    int n_events;
    uint64_t events_lost; /* events that did not fit in this tick (counted, never silent) */
    ctl_event events[LOOP_MAX_EVENTS];
    ctl_pub pub;       /* the status snapshot after the tick */
    ctl_sample sample; /* the tick's telemetry sample */
} loop_out;

#endif
