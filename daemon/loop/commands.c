/*
 * commands.c — the host's commands applied at the start of a tick (between the sample and the
 * desired state): each is checked against the safety state machine (sf_command_allowed), applied
 * by the module it concerns and answered in the tick's replies, so an answer tells the truth.
 * Control thread only; no allocation, locks or logging.
 */
#include "daemon/loop/state.h"

#include <stdio.h>

#include "daemon/loop/out.h"

/* The safety state machine's name for each command it judges (-1: judged elsewhere). */
static int sf_command_of(loop_cmd_type t)
{
    switch (t) {
    case LOOP_ENABLE:
        return SF_CMD_ENABLE;
    case LOOP_DISABLE:
        return SF_CMD_DISABLE;
    case LOOP_HOLD:
        return SF_CMD_HOLD;
    case LOOP_ESTOP:
        return SF_CMD_ESTOP;
    case LOOP_RESET:
        return SF_CMD_RESET;
    case LOOP_CANCEL:
        return SF_CMD_CANCEL;
    case LOOP_TRAJECTORY:
        return SF_CMD_TRAJECTORY;
    case LOOP_CONTROLLER:
        return SF_CMD_CONTROLLER;
    case LOOP_SETTINGS:
    case LOOP_STATS_RESET:
    case LOOP_TOOL:
        break;
    }
    return -1;
}

/* A trajectory: the loop's plan now, or refused (the plan goes back with the answer). */
static void apply_trajectory(loop *L, const loop_cmd *c, loop_out *o)
{
    ctl_error e = {"", ""};
    if (L->torque.law == CTRL_GRAVITY_COMP) {
        out_refuse(o, c->seq, "bad_state",
                   "the control law gravity_comp does not follow trajectories; switch to "
                   "computed_torque or pd_gravity first");
        out_return_plan(o, c->plan);
        return;
    }
    if (motion_take(&L->motion, o, c, &L->set->lim, &e) != 0) {
        out_answer(o, c->seq, -1, &e);
        out_return_plan(o, c->plan);
        return;
    }
    out_answer(o, c->seq, 0, NULL);
}

/* A reload must not take the damping away from an arm that relies on it now: a collision's
 * float (gravity_comp damped by the [joint] damping gains: undamped, a hand-guided arm would
 * coast on) or a running damping stop (it would never slow down). The loader only demands
 * damping > 0 when on_fault or collision_reaction needs it, so a reload that switches those too
 * could otherwise set a gain to 0 under the arm. True (answered) to refuse. */
static bool refuse_undamping(loop *L, const loop_cmd *c, loop_out *o)
{
    if (!L->torque.floating && !L->guard.damping) return false;
    const law_params *next = &c->settings->p;
    for (int j = 0; j < L->n; j++) {
        if (next->damping[j] > 0) continue;
        /* the float ends at a law change or the next enable; the damping stop by itself */
        out_refuse(o, c->seq, "bad_state",
                   "not reloaded: [joint %s] damping = %g while the %s runs on the damping gains; "
                   "%s",
                   next->name[j], next->damping[j],
                   L->torque.floating ? "collision's float" : "damping stop",
                   L->torque.floating ? "end the float first (controller.set to another law, or "
                                        "disable and enable), then reload"
                                      : "reload once the damping stop has ended (the arm is then "
                                        "in fault)");
        return true;
    }
    return false;
}

/* New settings and/or dynamics. A change of [arm] controller switches the law like
 * controller.set: only while disabled or holding, with the integral reset. The replaced (or
 * refused) objects go back with the answer; new dynamics restart the collision observer. */
static void apply_settings(loop *L, const loop_cmd *c, loop_out *o)
{
    ctl_state st = guard_state(&L->guard, &L->motion);
    if (c->settings) {
        cfg_controller law = c->settings->p.law;
        sf_state next;
        char why[200];
        if (law != L->set->p.law && !sf_command_allowed((sf_state)st, SF_CMD_CONTROLLER,
                                                        L->guard.fault, &next, why, sizeof why)) {
            out_refuse(o, c->seq, "bad_state", "not reloaded: [arm] controller = %s: %s",
                       cfg_controller_name(law), why);
            out_return(o, c->seq, c->settings, c->dyn);
            return;
        }
        if (refuse_undamping(L, c, o)) {
            out_return(o, c->seq, c->settings, c->dyn);
            return;
        }
        if (law != L->set->p.law) torque_switch(&L->torque, law);
    }
    const loop_settings *old_set = NULL;
    loop_dyn *old_dyn = NULL;
    if (c->settings) {
        old_set = L->set;
        L->set = c->settings;
    }
    if (c->dyn) {
        old_dyn = L->dyn;
        L->dyn = c->dyn;
        observer_stop(&L->observer); /* restarted on the new model at the next tick */
    }
    out_answer(o, c->seq, 0, NULL);
    out_return(o, c->seq, old_set, old_dyn);
}

/* Applies one command (answered in o). */
static void apply(loop *L, const loop_in *in, const loop_cmd *c, loop_out *o)
{
    int sc = sf_command_of(c->type);
    if (sc >= 0) {
        sf_state next;
        char why[200];
        ctl_state st = guard_state(&L->guard, &L->motion);
        if (!sf_command_allowed((sf_state)st, (sf_cmd)sc, L->guard.fault, &next, why, sizeof why)) {
            out_refuse(o, c->seq, "bad_state", "%s", why);
            if (c->type == LOOP_TRAJECTORY) out_return_plan(o, c->plan);
            return;
        }
    }
    switch (c->type) {
    case LOOP_ENABLE:
        guard_enable(&L->guard, c->seq, in->t, o); /* answered when it is over */
        return;
    case LOOP_DISABLE:
        guard_disable(&L->guard, &L->motion, o);
        break;
    case LOOP_HOLD: /* a controlled stop as cancel's, not a velocity step at full speed */
        motion_cancel(&L->motion, o, L->set->p.acceleration, "cancelled: hold");
        break;
    case LOOP_ESTOP:
        guard_estop(&L->guard, &L->motion, o);
        break;
    case LOOP_RESET:
        guard_reset(&L->guard, o);
        sense_forgive(&L->sense, in->now_ns); /* the failures that led to the fault are past */
        break;
    case LOOP_CANCEL:
        motion_cancel(&L->motion, o, L->set->p.acceleration, "cancelled");
        break;
    case LOOP_TRAJECTORY:
        apply_trajectory(L, c, o);
        return;
    case LOOP_SETTINGS:
        apply_settings(L, c, o);
        return;
    case LOOP_CONTROLLER:
        torque_switch(&L->torque, c->law);
        break;
    case LOOP_STATS_RESET:
        o->reset_timing = true;
        break;
    case LOOP_TOOL:
        if (!L->tool.cfg.present) {
            out_refuse(o, c->seq, "no_tool", "no [tool] section in the configuration");
        } else if (!guard_enabled(&L->guard)) {
            ctl_state st = guard_state(&L->guard, &L->motion);
            out_refuse(o, c->seq, "bad_state", "the arm is %s: %s", ctl_state_name(st),
                       st == CTL_ESTOP || st == CTL_FAULT ? "reset it, then enable it"
                                                          : "enable it first");
        } else {
            tool_command(&L->tool, c, in->t, o); /* answered when it ends */
        }
        return;
    }
    out_answer(o, c->seq, 0, NULL);
}

void loop_commands(loop *L, const loop_in *in, loop_out *o)
{
    for (int i = 0; i < in->n_cmds; i++) apply(L, in, &in->cmds[i], o);
}
