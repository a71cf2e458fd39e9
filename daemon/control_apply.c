/*
 * control_apply.c — the control thread applying the main thread's mailbox commands: each is
 * checked against the safety state machine (sf_command_allowed), applied between two ticks
 * and answered in its acknowledgement slot. Control thread only; no allocation, locks or
 * logging.
 */
#include <math.h>

#include "daemon/control_internal.h"

#define REANCHOR_TOL 1e-6 /* an appended plan may start now only from its own start state */

/* True when plan slot starts at the present desired state, within REANCHOR_TOL in position
 * and velocity (appending after a plan that has just ended normally). */
static bool starts_here(ctl *c, int slot)
{
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], qdd[CFG_MAX_JOINTS];
    int seg = 0;
    traj_sample(&c->plans[slot], 0, &seg, q, qd, qdd);
    for (int j = 0; j < c->n; j++)
        if (fabs(q[j] - c->rt.q_des[j]) > REANCHOR_TOL ||
            fabs(qd[j] - c->rt.qd_des[j]) > REANCHOR_TOL)
            return false;
    return true;
}

/* CMD_TRAJ: replaces the motion now, or queues the plan after the one it was built to follow
 * (or starts it when that one has just ended where this one starts). */
static int cmd_traj(ctl *c, const ctl_cmd *m, ctl_error *e)
{
    ctl_rt *r = &c->rt;
    if (r->law == CTRL_GRAVITY_COMP) {
        ctl_set_err(e, "bad_state",
                    "the control law gravity_comp does not follow trajectories; switch to "
                    "computed_torque or pd_gravity first");
        return -1;
    }
    if (!m->append) {
        if (ctl_prepare_plan(c, m->slot, e)) return -1; /* the old motion goes on */
        ctl_drop_motion(c, "replaced");
        ctl_start_plan(c, m->slot);
        return 0;
    }
    int tail = r->n_queue > 0 ? r->queue[r->n_queue - 1] : r->active;
    if (!r->stopping && tail >= 0 && c->plans[tail].id == m->after_id) {
        if (r->n_queue >= N_PLANS) {
            ctl_set_err(e, "busy", "too many trajectories queued (%d)", N_PLANS);
            return -1;
        }
        r->queue[r->n_queue++] = m->slot;
        return 0;
    }
    if (r->stopping || tail >= 0 || !starts_here(c, m->slot)) {
        ctl_set_err(e, "conflict",
                    "the trajectory this one was appended to is no longer running; send it again");
        return -1;
    }
    if (ctl_prepare_plan(c, m->slot, e)) return -1;
    ctl_start_plan(c, m->slot);
    return 0;
}

/* CMD_ENABLE: disabled -> holding at the present position, if a fresh state within the
 * position limits was read and the servos accept. */
static int cmd_enable(ctl *c, const law_params *p, ctl_error *e)
{
    ctl_rt *r = &c->rt;
    if (r->state != SF_DISABLED) return 0;
    if (!r->fresh) {
        ctl_set_err(e, "device", "no state could be read from the device this tick; not enabling");
        return -1;
    }
    char why[200];
    if (sf_check_position(p, r->q, why, sizeof why)) {
        ctl_set_err(e, "limits", "not enabling: %s", why);
        return -1;
    }
    /* an arm still falling or swinging would fault on the first enabled tick */
    if (sf_check_velocity(p, r->qd, why, sizeof why)) {
        ctl_set_err(e, "limits", "not enabling: %s; enable when the arm is at rest", why);
        return -1;
    }
    drv_fault f;
    if (drv_enable(c->driver, true, &f)) {
        ctl_set_err(e, "device", "could not enable the servos: %s", f.message);
        return -1;
    }
    ctl_hold_at(c, r->q);
    law_reset(&r->ls, c->n);
    ctl_retract_clear(&r->retract); /* the path before this enable is not one to go back along */
    r->floating = false;
    ctl_set_state(c, SF_HOLDING);
    return 0;
}

/* CMD_CANCEL: while moving, replaces the motion by a stop decelerating within the
 * acceleration limits [rad/s^2 or m/s^2]; the stop's end reports "cancelled". */
static void cmd_cancel(ctl *c, const law_params *p)
{
    ctl_rt *r = &c->rt;
    if (r->state != SF_MOVING || r->stopping) return;
    uint32_t id = r->active >= 0 ? c->plans[r->active].id : 0;
    double qd0[CFG_MAX_JOINTS];
    for (int j = 0; j < c->n; j++) qd0[j] = r->settling ? 0 : r->qd_des[j];
    ctl_release_slot(c, r->active); /* its "cancelled" comes when the stop ends */
    r->active = -1;
    ctl_drop_motion(c, "cancelled"); /* the queued ones */
    traj_stop_init(&r->stop, c->n, r->q_des, qd0, p->acceleration);
    r->stopping = true;
    r->stop_id = id;
    r->stop_t = 0;
}

/* Switches the control law (the state was checked by the caller); a new law starts with a
 * zero integral. A switch by command ends a collision's float, also to gravity_comp itself. */
void ctl_switch_law(ctl *c, cfg_controller law)
{
    c->rt.floating = false;
    if (law == c->rt.law) return;
    c->rt.law = law;
    for (int j = 0; j < c->n; j++) c->rt.ls.integral[j] = 0;
}

/* A reload must not take the damping away from an arm that relies on it now: a collision's
 * float (gravity_comp damped by the [joint] damping gains: undamped, a hand-guided arm would
 * coast on) or a running damping stop (it would never slow down). The loader only demands
 * damping > 0 when on_fault or collision_reaction needs it, so a reload that switches those
 * too could otherwise set a gain to 0 under the arm. Fills *e and returns true to refuse. */
static bool refuse_undamping(ctl *c, const law_params *next, ctl_error *e)
{
    ctl_rt *r = &c->rt;
    if (!r->floating && !r->damping) return false;
    for (int j = 0; j < c->n; j++) {
        if (next->damping[j] > 0) continue;
        ctl_set_err(e, "bad_state",
                    "not reloaded: [joint %s] damping = %g while the %s runs on the damping "
                    "gains; reload once it has ended (controller.set, reset)",
                    next->name[j], next->damping[j],
                    r->floating ? "collision's float" : "damping stop");
        return true;
    }
    return false;
}

/* Applies one command; fills *e and returns -1 when refused. */
static int apply_cmd(ctl *c, const ctl_cmd *m, ctl_error *e)
{
    ctl_rt *r = &c->rt;
    static const sf_cmd map[] = {
        [CMD_ENABLE] = SF_CMD_ENABLE,   [CMD_DISABLE] = SF_CMD_DISABLE,
        [CMD_HOLD] = SF_CMD_HOLD,       [CMD_ESTOP] = SF_CMD_ESTOP,
        [CMD_RESET] = SF_CMD_RESET,     [CMD_CANCEL] = SF_CMD_CANCEL,
        [CMD_TRAJ] = SF_CMD_TRAJECTORY, [CMD_CONTROLLER] = SF_CMD_CONTROLLER,
    };
    if (m->type == CMD_PAYLOAD) {
        dyn_set_payload(c->model, &m->payload);
        ctl_payload_changed(c);
        return 0;
    }
    if (m->type == CMD_STATS_RESET) {
        tt_reset(&c->late);
        tt_reset(&c->read);
        tt_reset(&c->compute);
        tt_reset(&c->write);
        return 0;
    }
    if (m->type == CMD_PARAMS) {
        /* a reload that changes [arm] controller switches the law like controller.set: only
         * while disabled or holding, with the integral reset */
        int old = atomic_load_explicit(&c->params_active, memory_order_relaxed);
        cfg_controller law = c->params[m->slot].law;
        if (law != c->params[old].law) {
            sf_state next;
            char why[200];
            if (!sf_command_allowed(r->state, SF_CMD_CONTROLLER, r->fault, &next, why,
                                    sizeof why)) {
                ctl_set_err(e, "bad_state", "not reloaded: [arm] controller = %s: %s",
                            cfg_controller_name(law), why);
                return -1;
            }
            ctl_switch_law(c, law);
        }
        if (refuse_undamping(c, &c->params[m->slot], e)) return -1;
        if (m->swap_model) ctl_swap_model(c);
        atomic_store_explicit(&c->params_active, m->slot, memory_order_release);
        return 0;
    }
    sf_state next;
    char why[200];
    if (!sf_command_allowed(r->state, map[m->type], r->fault, &next, why, sizeof why)) {
        ctl_set_err(e, "bad_state", "%s", why);
        return -1;
    }
    const law_params *p = ctl_live_params(c);
    switch (m->type) {
    case CMD_ENABLE:
        return cmd_enable(c, p, e);
    case CMD_DISABLE:
        if (r->state == SF_FAULT || r->state == SF_ESTOP) return 0;
        ctl_torque_off(c);
        ctl_drop_motion(c, "cancelled: disabled");
        ctl_set_state(c, SF_DISABLED);
        return 0;
    case CMD_HOLD:
        if (r->state == SF_MOVING) {
            ctl_drop_motion(c, "cancelled: hold");
            ctl_hold_at(c, r->q_des);
            ctl_set_state(c, SF_HOLDING);
        }
        return 0;
    case CMD_ESTOP:
        ctl_estop_now(c);
        return 0;
    case CMD_RESET:
        if (r->damping) ctl_torque_off(c);
        r->fault[0] = 0;
        sf_read_ok(&r->reads, ctl_mono_ns()); /* the failures that led to the fault are past */
        sf_read_ok(&r->writes, ctl_mono_ns());
        ctl_set_state(c, SF_DISABLED);
        return 0;
    case CMD_CANCEL:
        cmd_cancel(c, p);
        return 0;
    case CMD_TRAJ:
        return cmd_traj(c, m, e);
    case CMD_CONTROLLER:
        ctl_switch_law(c, m->law);
        return 0;
    case CMD_PARAMS:
    case CMD_PAYLOAD:
    case CMD_STATS_RESET:
        break;
    }
    return 0;
}

/* Applies the queued mailbox commands; returns the last seq handled (0 = none). The
 * acknowledgement is published after the tick's status (by the caller), so a reply and a
 * following status agree. A refused CMD_TRAJ gives its plan slot back. */
uint64_t ctl_process_commands(ctl *c)
{
    ctl_cmd m;
    uint64_t last = 0;
    while (hf_mailbox_pop(&c->cmds, &m)) {
        ctl_ack *a = &c->acks[m.seq % N_ACKS];
        a->err.code[0] = a->err.message[0] = 0;
        a->rc = apply_cmd(c, &m, &a->err);
        if (a->rc && m.type == CMD_TRAJ) ctl_release_slot(c, m.slot);
        last = m.seq;
    }
    return last;
}
