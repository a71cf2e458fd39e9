/*
 * tool.c — the tool servo's commands (see tool.h). A move or release sends the target as the
 * servo's goal and ends "reached" once the opening is within [tool] tolerance of it with the
 * fingers still; a grasp sends the stroke's closed end with the grasp force as the current
 * clamp, so the fingers close until the object (or the stroke's end) stops them, and ends once
 * they have been still for TOOL_STILL_TIME: "grasped" within width - epsilon_inner .. width +
 * epsilon_outer, "no_object" below, "blocked" above (libfranka's Gripper::grasp rule). Control
 * thread only.
 */
#include "daemon/loop/tool.h"

#include <math.h>
#include <string.h>

#include "daemon/loop/out.h"

void tool_init(tool *T)
{
    memset(T, 0, sizeof *T);
    T->kind = CTL_TOOL_IDLE;
    T->still_since = -1;
    T->goal = NAN;
}

void tool_configure(tool *T, const cfg_tool *cfg)
{
    T->cfg = *cfg;
}

/* Ends the running command with outcome (answered with the opening and force now). */
static void finish(tool *T, ctl_tool_outcome outcome, loop_out *o)
{
    if (T->kind == CTL_TOOL_IDLE) return;
    ctl_tool_result r = {outcome, T->st.opening, T->st.force};
    out_answer_tool(o, T->seq, &r);
    T->grasped = outcome == CTL_TOOL_GRASPED;
    T->kind = CTL_TOOL_IDLE;
    T->seq = 0;
}

/* A goal for the servo, sent with this tick's write. */
static void send_goal(tool *T, loop_out *o, double opening, double speed, double force)
{
    o->tool_set = true;
    o->tool_goal = (drv_tool_goal){opening, speed, force};
    T->goal = opening;
}

void tool_command(tool *T, const loop_cmd *c, double t, loop_out *o)
{
    const ctl_tool_cmd *k = &c->tool;
    const cfg_tool *cf = &T->cfg;
    finish(T, CTL_TOOL_STOPPED, o); /* a newer command replaces the one running */
    if (k->kind == CTL_TOOL_IDLE) { /* tool.stop: hold where the fingers are */
        send_goal(T, o, T->st.opening, cf->speed, cf->force);
        ctl_tool_result r = {CTL_TOOL_STOPPED, T->st.opening, T->st.force};
        out_answer_tool(o, c->seq, &r);
        return;
    }
    T->kind = k->kind;
    T->seq = c->seq;
    T->cmd = *k;
    T->started = t;
    T->still_since = t;
    T->grasped = false;
    switch (k->kind) {
    case CTL_TOOL_MOVE:
        send_goal(T, o, k->opening, k->speed, cf->force);
        break;
    case CTL_TOOL_RELEASE:
        T->cmd.opening = cf->upper;
        send_goal(T, o, cf->upper, k->speed, cf->force);
        break;
    case CTL_TOOL_GRASP:
        send_goal(T, o, cf->lower, k->speed, k->force);
        break;
    case CTL_TOOL_IDLE:
        break;
    }
}

/* How a grasp that has come to rest ended. */
static ctl_tool_outcome grasp_outcome(const tool *T)
{
    double w = T->st.opening;
    if (w < T->cmd.opening - T->cmd.eps_inner) return CTL_TOOL_NO_OBJECT;
    if (w > T->cmd.opening + T->cmd.eps_outer) return CTL_TOOL_BLOCKED;
    return CTL_TOOL_GRASPED;
}

void tool_step(tool *T, const drv_state *ds, bool fresh, bool enabled, double t, loop_out *o)
{
    if (!T->cfg.present) return;
    if (fresh) {
        T->st = ds->tool;
        bool still = fabs(T->st.speed) < TOOL_STILL_SPEED;
        if (!still)
            T->still_since = -1;
        else if (T->still_since < 0)
            T->still_since = t;
    }
    if (!enabled) { /* torque off: the fingers let go */
        finish(T, CTL_TOOL_ABORTED, o);
        T->grasped = false;
        T->goal = NAN;
        return;
    }
    if (T->kind == CTL_TOOL_IDLE) return;
    if (t - T->started > T->cfg.timeout) {
        out_refuse(o, T->seq, "timeout",
                   "tool %s: the %s did not end within [tool] timeout = %g s (opening %.4f m)",
                   T->cfg.name, ctl_tool_kind_name(T->kind), T->cfg.timeout, T->st.opening);
        T->kind = CTL_TOOL_IDLE;
        T->seq = 0;
        send_goal(T, o, T->st.opening, T->cfg.speed, T->cfg.force); /* hold where it is */
        return;
    }
    bool settled = T->still_since >= 0 && t - T->still_since >= TOOL_STILL_TIME;
    if (T->kind == CTL_TOOL_GRASP) {
        if (settled) finish(T, grasp_outcome(T), o);
        return;
    }
    bool still = T->still_since >= 0;
    if (still && fabs(T->st.opening - T->cmd.opening) <= T->cfg.tolerance)
        finish(T, CTL_TOOL_REACHED, o);
    else if (settled)
        finish(T, CTL_TOOL_BLOCKED, o);
}

void tool_publish(const tool *T, ctl_tool_status *out)
{
    out->present = T->cfg.present;
    out->opening = T->st.opening;
    out->speed = T->st.speed;
    out->force = T->st.force;
    out->current = T->st.current;
    out->moving = !(fabs(T->st.speed) < TOOL_STILL_SPEED);
    out->stalled = T->still_since >= 0 && fabs(T->st.opening - T->goal) > T->cfg.tolerance;
    out->command = T->kind;
    out->grasped = T->grasped;
}
