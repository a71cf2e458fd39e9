/*
 * tool.h — daemon/loop/ private: the tool servo ([tool NAME], a gripper in Dynamixel
 * current-based position mode) as the loop drives it. The servo closes its own position loop;
 * the loop sends it goals (opening, speed, force) in the tick's write and watches the opening it
 * reads with the joints to decide how each command ends (ctl_tool_outcome), answering the command
 * then. Control thread only; no allocation, locks or logging.
 */
#ifndef ARMD_LOOP_TOOL_H
#define ARMD_LOOP_TOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/loop/tick.h"

/* The fingers count as still below this speed [m/s] ... */
#define TOOL_STILL_SPEED 0.002
/* ... held this long [s]: a command that has not reached its target is then over */
#define TOOL_STILL_TIME 0.1

typedef struct {
    cfg_tool cfg;       /* restart-only: set once (tool_configure); present false = none */
    ctl_tool_kind kind; /* the command running (CTL_TOOL_IDLE: none) ... */
    uint64_t seq;       /* ... whose answer is owed */
    ctl_tool_cmd cmd;   /* ... as asked */
    double started;     /* its start [s, control time] */
    double still_since; /* when the fingers last became still [s], < 0 while moving */
    drv_tool_state st;  /* the last reading */
    double goal;        /* the opening of the last goal sent [m], NAN while none holds */
    bool grasped;       /* the last grasp held, nothing moved the fingers since */
} tool;

/* No tool and nothing running. */
void tool_init(tool *T);
/* The [tool] section the loop drives (main thread, before the loop runs). */
void tool_configure(tool *T, const cfg_tool *cfg);
/* A tool command from the host (c->tool), the arm enabled: a goal goes out, a command still
 * running is answered "stopped", tool.stop (CTL_TOOL_IDLE) is answered at once. */
void tool_command(tool *T, const loop_cmd *c, double t, loop_out *o);
/* One tick: the reading taken when fresh; a running command ended when its target is reached,
 * the fingers stopped, it ran past [tool] timeout, or the arm is no longer enabled (aborted). */
void tool_step(tool *T, const drv_state *ds, bool fresh, bool enabled, double t, loop_out *o);
/* The tool's part of status and telemetry. */
void tool_publish(const tool *T, ctl_tool_status *out);

#endif
