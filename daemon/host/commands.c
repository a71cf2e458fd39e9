/*
 * commands.c — the state commands and trajectories (control.h): checked here, sent to the loop
 * and answered by its reply, so the answer tells the truth; nothing here waits unless the caller
 * asked to. Trajectories are built here into a plan slot the loop does not hold and handed over
 * with the command. Main thread only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daemon/host/host.h"
#include "daemon/safety.h"

#define SAME_TOL 1e-3 /* a t = 0 waypoint must be this close to the desired position */

/* Sends a command of type t (no arguments) for an answer to to (done: its follow-up); 0, or -1
 * with err when refused before sending. */
static int send_simple(ctl *c, loop_cmd_type t, const ctl_reply_to *to, host_done_fn done,
                       ctl_error *err)
{
    ctl_pending *p = host_pending_new(c, to, done, err);
    if (!p) return -1;
    loop_cmd m = {.type = t};
    return host_pending_send(c, p, &m, err);
}

/* A command without arguments; the answer to `to`, or waited for. */
static int simple_cmd(ctl *c, loop_cmd_type t, const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = send_simple(c, t, host_reply_target(to, &w, &self), NULL, err);
    return host_reply_finish(c, to, &w, rc, err);
}

/* An enable accepted: if a joint was enabled past its soft limit (accepted within
 * following_error, e.g. an arm resting on its hard stop), move back inside the limits at the
 * limits' pace instead of holding it pressed against the stop; that move's answer is the
 * enable's. False when the move was sent. */
static bool enable_done(ctl *c, ctl_pending *p)
{
    if (p->rc != 0) return true;
    ctl_status st;
    ctl_status_get(c, &st);
    double q[CFG_MAX_JOINTS];
    bool outside = false;
    for (int j = 0; j < c->n; j++) {
        const cfg_joint *J = &c->cfg.joint[j];
        q[j] = fmin(fmax(st.q_des[j], J->lower), J->upper);
        outside |= q[j] != st.q_des[j];
    }
    if (!outside) return true;
    if (ctl_move_to(c, q, 0, NULL, NULL, &p->to, &p->err) == 0) return false;
    p->rc = -1; /* the move was refused: say why */
    return true;
}

int ctl_enable(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = send_simple(c, LOOP_ENABLE, host_reply_target(to, &w, &self), enable_done, err);
    return host_reply_finish(c, to, &w, rc, err);
}

int ctl_disable(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, LOOP_DISABLE, to, err);
}

int ctl_hold(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, LOOP_HOLD, to, err);
}

int ctl_reset(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, LOOP_RESET, to, err);
}

int ctl_cancel(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, LOOP_CANCEL, to, err);
}

int ctl_stats_reset(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, LOOP_STATS_RESET, to, err);
}

/* Raises the estop flag first (seen at the next tick's start, whatever the mailbox holds), then
 * sends the command for the answer. Without a loop running, zeroes the torque from here. */
int ctl_estop(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    if (c->mode == HOST_THREAD || c->mode == HOST_STEPPED) {
        handoff_raise_estop(c->h);
        return simple_cmd(c, LOOP_ESTOP, to, err);
    }
    host_torque_off(c);
    host_waiter w;
    ctl_reply_to self;
    const ctl_reply_to *dst = host_reply_target(to, &w, &self);
    ctl_pending *p = host_pending_new(c, dst, NULL, err);
    if (!p) return host_reply_finish(c, to, &w, -1, err);
    host_pending_answer(p, 0, NULL);
    return host_reply_finish(c, to, &w, 0, err);
}

void ctl_estop_async(ctl *c)
{
    if (c) handoff_raise_estop(c->h);
}

/* ====================================================================== trajectories */

/* The state a new plan starts from: the end of the last handed-over plan when appending to one
 * the loop still holds, else the present desired state. *after_id = the plan appended to. */
void host_plan_start(ctl *c, bool append, traj_state *s, uint32_t *after_id)
{
    *after_id = 0;
    if (append && c->tail_plan >= 0 && c->plan_in_loop[c->tail_plan]) {
        *s = c->tail_end;
        *after_id = c->tail_id;
        return;
    }
    ctl_pub pub;
    handoff_status(c->h, &pub);
    for (int j = 0; j < c->n; j++) {
        s->q[j] = pub.st.q_des[j];
        s->qd[j] = pub.st.qd_des[j];
        s->qdd[j] = pub.qdd_des[j];
    }
}

/* A trajectory accepted: appends start at its end from now on. */
static bool traj_done(ctl *c, ctl_pending *p)
{
    if (p->rc == 0) {
        c->tail_plan = p->plan;
        c->tail_id = p->res.id;
        c->tail_end = p->end;
    }
    return true;
}

/* Hands the plan built in slot over (the answer comes with its id and duration). */
int host_submit_plan(ctl *c, int slot, bool append, uint32_t after_id, const ctl_reply_to *to,
                     ctl_error *err)
{
    ctl_pending *p = host_pending_new(c, to, traj_done, err);
    if (!p) return -1;
    traj_plan *pl = &c->plans[slot];
    pl->id = c->next_id++;
    p->plan = slot;
    p->append = append;
    p->res.id = pl->id;
    p->res.duration = pl->duration;
    traj_end_state(pl, &p->end);
    loop_cmd m = {.type = LOOP_TRAJECTORY, .plan = pl, .append = append, .after_id = after_id};
    if (host_pending_send(c, p, &m, err)) return -1; /* never sent: the slot stays free */
    c->plan_in_loop[slot] = true;                    /* until the loop hands it back */
    return 0;
}

/* Refuses trajectories unless the arm is enabled (the loop checks again). */
int host_check_enabled(ctl *c, ctl_error *err)
{
    ctl_status st;
    ctl_status_get(c, &st);
    sf_state next;
    char why[200];
    if (!sf_command_allowed((sf_state)st.state, SF_CMD_TRAJECTORY, st.fault, &next, why,
                            sizeof why)) {
        ctl_error_set(err, "bad_state", "%s", why);
        return -1;
    }
    return 0;
}

/* Copies a waited-for trajectory answer into the caller's id and duration. */
int host_traj_finish(ctl *c, const ctl_reply_to *to, host_waiter *w, int rc, uint32_t *id,
                     double *duration, ctl_error *err)
{
    rc = host_reply_finish(c, to, w, rc, err);
    if (!to && rc == 0) {
        if (id) *id = w->res.id;
        if (duration) *duration = w->res.duration;
    }
    return rc;
}

int ctl_trajectory(ctl *c, const ctl_waypoint *points, int n_points, bool append, uint32_t *id,
                   double *duration, const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = -1;
    if (host_check_enabled(c, err)) goto out;
    if (!points || n_points < 1) {
        ctl_error_set(err, "invalid_params", "a trajectory needs at least one waypoint");
        goto out;
    }
    if (n_points > TRAJ_MAX_POINTS) {
        ctl_error_set(err, "invalid_params",
                      "%d waypoints are more than the %d a trajectory may have", n_points,
                      TRAJ_MAX_POINTS);
        goto out;
    }
    int slot = host_plan_free_slot(c, err);
    if (slot < 0) goto out;
    traj_state s;
    uint32_t after;
    host_plan_start(c, append, &s, &after);
    if (traj_build(&c->plans[slot], &c->lim, &s, points, n_points, SAME_TOL, err)) goto out;
    if (host_plan_feasible(c, &c->plans[slot], err)) goto out;
    rc = host_submit_plan(c, slot, append, after, host_reply_target(to, &w, &self), err);
out:
    return host_traj_finish(c, to, &w, rc, id, duration, err);
}

int ctl_move_to(ctl *c, const double *q, double duration, uint32_t *id, double *duration_out,
                const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = -1;
    if (!q) {
        ctl_error_set(err, "invalid_params", "move_to needs a target position");
        goto out;
    }
    if (host_check_enabled(c, err)) goto out;
    int slot = host_plan_free_slot(c, err);
    if (slot < 0) goto out;
    traj_state s;
    uint32_t after;
    host_plan_start(c, false, &s, &after);
    if (traj_build_move(&c->plans[slot], &c->lim, &s, q, duration, err)) goto out;
    if (host_plan_feasible(c, &c->plans[slot], err)) goto out;
    rc = host_submit_plan(c, slot, false, 0, host_reply_target(to, &w, &self), err);
out:
    return host_traj_finish(c, to, &w, rc, id, duration_out, err);
}

/* Refuses a tool command: err is "invalid_params" with the formatted message; returns -1. */
static int __attribute__((format(printf, 2, 3))) tool_refuse(ctl_error *err, const char *fmt, ...)
{
    if (!err) return -1;
    snprintf(err->code, sizeof err->code, "invalid_params");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

/* A tool command's numbers against [tool NAME] (see control.h); defaults filled in. 0, or -1
 * with err naming the parameter and the bound. */
static int tool_check(const cfg_tool *t, ctl_tool_cmd *k, ctl_error *err)
{
    const char *what = k->kind == CTL_TOOL_GRASP ? "width" : "opening";
    bool target = k->kind == CTL_TOOL_MOVE || k->kind == CTL_TOOL_GRASP;
    if (target && !(k->opening >= t->lower && k->opening <= t->upper))
        return tool_refuse(err, "%s %g m is outside tool %s's stroke %g .. %g m", what, k->opening,
                           t->name, t->lower, t->upper);
    if (k->speed == 0) k->speed = t->speed; /* 0: not given */
    if (!(k->speed > 0 && k->speed <= t->velocity))
        return tool_refuse(err, "speed %g m/s: tool %s takes 0 < speed <= %g m/s ([tool] velocity)",
                           k->speed, t->name, t->velocity);
    if (k->force == 0) k->force = t->force;
    if (!(k->force > 0 && k->force <= t->max_force))
        return tool_refuse(err, "force %g N: tool %s takes 0 < force <= %g N ([tool] max_force)",
                           k->force, t->name, t->max_force);
    if (k->eps_inner < 0) k->eps_inner = t->epsilon; /* < 0: not given */
    if (k->eps_outer < 0) k->eps_outer = t->epsilon;
    if (!(k->eps_inner <= 1 && k->eps_outer <= 1))
        return tool_refuse(err, "epsilon_inner %g, epsilon_outer %g: each 0 .. 1 m", k->eps_inner,
                           k->eps_outer);
    /* a grasp closes to the stroke's closed end: with nothing between the fingers they stop
     * there, which must lie below width - epsilon_inner for "no_object" to be told apart */
    double closed = t->lower + t->tolerance;
    if (k->kind == CTL_TOOL_GRASP && !(k->opening - k->eps_inner >= closed))
        return tool_refuse(err,
                           "width %g m - epsilon_inner %g m is below tool %s's closed end %g m + "
                           "tolerance %g m: an empty grasp would stop there and could not be told "
                           "from one holding; grasp %g m or wider, or lower epsilon_inner",
                           k->opening, k->eps_inner, t->name, t->lower, t->tolerance,
                           closed + k->eps_inner);
    return 0;
}

int ctl_tool(ctl *c, const ctl_tool_cmd *cmd, const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    const ctl_reply_to *dst = host_reply_target(to, &w, &self);
    const cfg_tool *t = &c->cfg.tool;
    if (!t->present) {
        ctl_error_set(err, "no_tool", "no [tool] section in the configuration");
        return host_reply_finish(c, to, &w, -1, err);
    }
    ctl_tool_cmd k = *cmd;
    if (tool_check(t, &k, err) < 0) return host_reply_finish(c, to, &w, -1, err);
    ctl_pending *p = host_pending_new(c, dst, NULL, err);
    if (!p) return host_reply_finish(c, to, &w, -1, err);
    loop_cmd m = {.type = LOOP_TOOL, .tool = k};
    int rc = host_pending_send(c, p, &m, err);
    /* answered when the command ends: the loop's own timeout, then a second of slack */
    if (rc == 0) p->deadline_ns += (int64_t)(t->timeout * 1e9);
    return host_reply_finish(c, to, &w, rc, err);
}
