/*
 * control_cmd.c — the main thread's commands to the control thread (control.h): each goes
 * through the mailbox and waits (sleeping, bounded) for the acknowledgement, so the reply
 * tells the truth. Trajectories are built here into plan slots the main thread owns and
 * handed over with an atomic owner flag; gains and configuration reloads fill the inactive
 * parameter block and swap it in between two ticks. While no control thread runs, settings
 * are applied directly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control_internal.h"

#define ACK_TIMEOUT_S 1.0  /* longest wait for the control thread's acknowledgement */
#define SAME_TOL      1e-3 /* a t = 0 waypoint must be this close to the desired position */

/* ================================================================ mailbox and replies */

/* Sends a command and waits (sleeping 100 us steps, at most ACK_TIMEOUT_S) for its
 * acknowledgement; returns the control thread's answer. */
static int send_cmd(ctl *c, ctl_cmd *m, ctl_error *err)
{
    if (!ctl_thread_running(c)) {
        ctl_set_err(err, "not_running", "the control thread is not running");
        return -1;
    }
    m->seq = ++c->cmd_seq;
    if (!hf_mailbox_push(&c->cmds, m)) {
        c->cmd_seq--;
        ctl_set_err(err, "busy", "the control thread is not taking commands (mailbox full)");
        return -1;
    }
    int64_t deadline = ctl_mono_ns() + (int64_t)(ACK_TIMEOUT_S * 1e9);
    while (atomic_load_explicit(&c->acked, memory_order_acquire) < m->seq) {
        if (ctl_mono_ns() > deadline) {
            ctl_set_err(err, "timeout", "the control thread did not acknowledge within %.0f ms",
                        ACK_TIMEOUT_S * 1e3);
            return -1;
        }
        ctl_nap_100us();
    }
    const ctl_ack *a = &c->acks[m->seq % N_ACKS];
    if (a->rc && err) *err = a->err;
    return a->rc;
}

/* A zeroed command of type t. */
static ctl_cmd new_cmd(cmd_type t)
{
    ctl_cmd m;
    memset(&m, 0, sizeof m);
    m.type = t;
    return m;
}

/* Sends a command without arguments. */
static int simple_cmd(ctl *c, cmd_type t, ctl_error *err)
{
    ctl_cmd m = new_cmd(t);
    return send_cmd(c, &m, err);
}

/* disabled -> holding at the present position. */
int ctl_enable(ctl *c, ctl_error *err)
{
    if (simple_cmd(c, CMD_ENABLE, err)) return -1;
    /* Enabled past a soft limit (accepted within following_error, e.g. an arm resting on its
     * hard stop): move back inside the limits at the limits' pace instead of holding the arm
     * pressed against the stop. */
    ctl_status st;
    ctl_status_get(c, &st);
    double q[CFG_MAX_JOINTS];
    bool outside = false;
    for (int j = 0; j < c->n; j++) {
        const cfg_joint *J = &c->cfg.joint[j];
        q[j] = fmin(fmax(st.q_des[j], J->lower), J->upper);
        outside |= q[j] != st.q_des[j];
    }
    if (!outside) return 0;
    uint32_t id;
    double duration;
    return ctl_move_to(c, q, 0, &id, &duration, err);
}

/* -> disabled, torque off. */
int ctl_disable(ctl *c, ctl_error *err)
{
    return simple_cmd(c, CMD_DISABLE, err);
}

/* moving -> holding at the present desired position. */
int ctl_hold(ctl *c, ctl_error *err)
{
    return simple_cmd(c, CMD_HOLD, err);
}

/* fault|estop -> disabled. */
int ctl_reset(ctl *c, ctl_error *err)
{
    return simple_cmd(c, CMD_RESET, err);
}

/* Decelerates the motion within the acceleration limits, then holds. */
int ctl_cancel(ctl *c, ctl_error *err)
{
    return simple_cmd(c, CMD_CANCEL, err);
}

/* The control thread resets its timing histograms between two ticks. */
int ctl_stats_reset(ctl *c, ctl_error *err)
{
    return simple_cmd(c, CMD_STATS_RESET, err);
}

/* Raises the estop flag first (never lost, seen at the next tick's start), then sends the
 * command for the reply. Without a control thread, zeroes the torque from here. */
int ctl_estop(ctl *c, ctl_error *err)
{
    if (!ctl_thread_running(c)) {
        if (!c->started) { /* no control thread: zero the torque from here */
            ctl_torque_off(c);
            c->rt.state = SF_ESTOP;
            ctl_publish(c);
        }
        return 0;
    }
    atomic_store_explicit(&c->estop_request, 1, memory_order_release); /* never lost */
    return simple_cmd(c, CMD_ESTOP, err);
}

/* ====================================================================== trajectories */

/* A free plan slot (owned by the main thread), or -1 with err "busy". */
static int free_slot(ctl *c, ctl_error *err)
{
    for (int i = 0; i < N_PLANS; i++)
        if (atomic_load_explicit(&c->plan_owner[i], memory_order_acquire) == 0) return i;
    ctl_set_err(err, "busy", "too many trajectories queued; wait for one to finish");
    return -1;
}

/* The state a new plan starts from: the end of the last handed-over plan when appending to
 * one still running, else the present desired state. *after_id = the plan appended to. */
static void plan_start(ctl *c, bool append, traj_state *s, uint32_t *after_id)
{
    *after_id = 0;
    if (append && c->tail_slot >= 0 &&
        atomic_load_explicit(&c->plan_owner[c->tail_slot], memory_order_acquire) == 1) {
        *s = c->tail_end;
        *after_id = c->tail_id;
        return;
    }
    ctl_pub pub;
    ctl_read_pub(c, &pub);
    for (int j = 0; j < c->n; j++) {
        s->q[j] = pub.st.q_des[j];
        s->qd[j] = pub.st.qd_des[j];
        s->qdd[j] = pub.qdd_des[j];
    }
}

/* Hands a built plan in slot over; records it as the tail for later appends. */
static int submit_plan(ctl *c, int slot, bool append, uint32_t after_id, uint32_t *id,
                       double *duration, ctl_error *err)
{
    traj_plan *pl = &c->plans[slot];
    pl->id = c->next_id++;
    traj_state end;
    traj_end_state(pl, &end);
    atomic_store_explicit(&c->plan_owner[slot], 1, memory_order_relaxed);
    ctl_cmd m = new_cmd(CMD_TRAJ);
    m.slot = slot;
    m.append = append;
    m.after_id = after_id;
    ctl_error local;
    if (!err) err = &local;
    if (send_cmd(c, &m, err)) {
        /* refused by the control thread: it gave the slot back; never sent: give it back
         * here; timed out: the control thread still owns it */
        if (strcmp(err->code, "busy") == 0 || strcmp(err->code, "not_running") == 0)
            atomic_store_explicit(&c->plan_owner[slot], 0, memory_order_release);
        return -1;
    }
    c->tail_slot = slot;
    c->tail_id = pl->id;
    c->tail_end = end;
    if (id) *id = pl->id;
    if (duration) *duration = pl->duration;
    return 0;
}

/* Refuses trajectories unless the arm is enabled (the control thread checks again). */
static int check_enabled(ctl *c, ctl_error *err)
{
    ctl_status st;
    ctl_status_get(c, &st);
    sf_state next;
    char why[200];
    if (!sf_command_allowed((sf_state)st.state, SF_CMD_TRAJECTORY, st.fault, &next, why,
                            sizeof why)) {
        ctl_set_err(err, "bad_state", "%s", why);
        return -1;
    }
    return 0;
}

/* Validates the waypoints, builds the plan from its start state (plan_start) and hands
 * it over. */
int ctl_trajectory(ctl *c, const ctl_waypoint *points, int n_points, bool append, uint32_t *id,
                   double *duration, ctl_error *err)
{
    if (check_enabled(c, err)) return -1;
    if (!points || n_points < 1) {
        ctl_set_err(err, "invalid_params", "a trajectory needs at least one waypoint");
        return -1;
    }
    if (n_points > TRAJ_MAX_POINTS) {
        ctl_set_err(err, "invalid_params",
                    "%d waypoints are more than the %d a trajectory may have", n_points,
                    TRAJ_MAX_POINTS);
        return -1;
    }
    int slot = free_slot(c, err);
    if (slot < 0) return -1;
    traj_state s;
    uint32_t after;
    plan_start(c, append, &s, &after);
    if (traj_build(&c->plans[slot], &c->lim, &s, points, n_points, SAME_TOL, err)) return -1;
    return submit_plan(c, slot, append, after, id, duration, err);
}

/* Builds a single move from the present desired state to q and hands it over. */
int ctl_move_to(ctl *c, const double *q, double duration, uint32_t *id, double *duration_out,
                ctl_error *err)
{
    if (!q) {
        ctl_set_err(err, "invalid_params", "move_to needs a target position");
        return -1;
    }
    if (check_enabled(c, err)) return -1;
    int slot = free_slot(c, err);
    if (slot < 0) return -1;
    traj_state s;
    uint32_t after;
    plan_start(c, false, &s, &after);
    if (traj_build_move(&c->plans[slot], &c->lim, &s, q, duration, err)) return -1;
    return submit_plan(c, slot, false, 0, id, duration_out, err);
}

/* ============================================================ parameters and settings */

/* Fills the inactive parameter block from *p and *lim (NULL = the limits in use) and swaps it
 * in between two ticks. */
static int swap_params(ctl *c, const law_params *p, const traj_limits *lim, ctl_error *err)
{
    int act = atomic_load_explicit(&c->params_active, memory_order_acquire);
    int other = 1 - act;
    c->params[other] = *p;
    c->lims[other] = lim ? *lim : c->lims[act];
    if (!ctl_thread_running(c)) {
        atomic_store_explicit(&c->params_active, other, memory_order_release);
        c->rt.law = p->law;
        return 0;
    }
    ctl_cmd m = new_cmd(CMD_PARAMS);
    m.slot = other;
    return send_cmd(c, &m, err);
}

/* Checks that every given gain is finite and >= 0, then swaps in the changed gains. */
int ctl_gains_set(ctl *c, const double *kp, const double *kd, const double *ki, ctl_error *err)
{
    law_params p = *ctl_live_params(c);
    const double *v[3] = {kp, kd, ki};
    const char *nm[3] = {"kp", "kd", "ki"};
    for (int k = 0; k < 3; k++) {
        if (!v[k]) continue;
        for (int j = 0; j < c->n; j++) {
            if (!isfinite(v[k][j]) || v[k][j] < 0) {
                ctl_set_err(err, "invalid_params", "joint %s: %s = %g must be a finite number >= 0",
                            p.name[j], nm[k], v[k][j]);
                return -1;
            }
        }
    }
    for (int j = 0; j < c->n; j++) {
        if (kp) p.kp[j] = kp[j];
        if (kd) p.kd[j] = kd[j];
        if (ki) p.ki[j] = ki[j];
    }
    return swap_params(c, &p, NULL, err);
}

/* Copies the gains in use (NULL = not wanted). */
void ctl_gains_get(ctl *c, double *kp, double *kd, double *ki)
{
    const law_params *p = ctl_live_params(c);
    for (int j = 0; j < c->n; j++) {
        if (kp) kp[j] = p->kp[j];
        if (kd) kd[j] = p->kd[j];
        if (ki) ki[j] = p->ki[j];
    }
}

/* Checks the law is a known one, then switches (the control thread checks the state). */
int ctl_controller_set(ctl *c, cfg_controller law, ctl_error *err)
{
    if (law != CTRL_COMPUTED_TORQUE && law != CTRL_PD_GRAVITY && law != CTRL_GRAVITY_COMP) {
        ctl_set_err(err, "invalid_params", "unknown controller %d", (int)law);
        return -1;
    }
    if (!ctl_thread_running(c)) {
        c->rt.law = law;
        return 0;
    }
    ctl_cmd m = new_cmd(CMD_CONTROLLER);
    m.law = law;
    return send_cmd(c, &m, err);
}

/* Checks mass [kg] >= 0 and finite com [m] and inertia [kg m^2], then replaces the payload. */
int ctl_payload_set(ctl *c, const dyn_payload *payload, ctl_error *err)
{
    bool ok = isfinite(payload->mass) && payload->mass >= 0;
    for (int i = 0; i < 3; i++) ok = ok && isfinite(payload->com[i]);
    for (int i = 0; i < 6; i++) ok = ok && isfinite(payload->inertia[i]);
    if (!ok) {
        ctl_set_err(err, "invalid_params", "payload: mass must be >= 0 and every value finite");
        return -1;
    }
    if (!ctl_thread_running(c)) {
        dyn_set_payload(c->model, payload);
        return 0;
    }
    ctl_cmd m = new_cmd(CMD_PAYLOAD);
    m.payload = *payload;
    return send_cmd(c, &m, err);
}

/* Compares with the running configuration (cfg_compare); only live keys changed: swaps in
 * the new law parameters and keeps the candidate as the running configuration. */
int ctl_reload(ctl *c, const armd_config *candidate, char *changed, size_t changed_len,
               ctl_error *err)
{
    char restart[512] = "";
    char ch[1024] = "";
    if (changed && changed_len) changed[0] = 0;
    if (cfg_compare(&c->cfg, candidate, ch, sizeof ch, restart, sizeof restart)) {
        ctl_set_err(err, "restart_needed", "not reloaded: these keys need a restart: %s", restart);
        return -1;
    }
    for (int j = 0; j < candidate->n_joints; j++) {
        double cap = drv_torque_capacity(c->driver, j);
        if (candidate->joint[j].torque > cap * (1 + 1e-9)) {
            ctl_set_err(err, "limits",
                        "not reloaded: [joint %s] torque %g is more than its servos can deliver "
                        "at their Current Limit (%.4g)",
                        candidate->joint[j].name, candidate->joint[j].torque, cap);
            return -1;
        }
    }
    if (changed && changed_len) snprintf(changed, changed_len, "%s", ch);
    if (!ch[0]) return 0;
    law_params p;
    law_params_from_config(&p, candidate);
    traj_limits lim;
    traj_limits_from_config(&lim, candidate);
    if (swap_params(c, &p, &lim, err)) return -1;
    c->cfg = *candidate;
    c->lim = lim;
    return 0;
}
