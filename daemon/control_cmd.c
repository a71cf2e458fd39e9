/*
 * control_cmd.c — the main thread's commands to the control thread (control.h): each is
 * checked here, then goes through the mailbox (control_reply.c) and is answered by the
 * control thread's acknowledgement, so the answer tells the truth; nothing here waits unless
 * the caller asked to. Trajectories are built here into plan slots the main thread owns and
 * handed over with an atomic owner flag; gains and configuration reloads fill the inactive
 * parameter block and swap it in between two ticks. While no control thread runs, settings
 * are applied directly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control_internal.h"

#define SAME_TOL 1e-3 /* a t = 0 waypoint must be this close to the desired position */

/* A zeroed command of type t. */
static ctl_cmd new_cmd(cmd_type t)
{
    ctl_cmd m;
    memset(&m, 0, sizeof m);
    m.type = t;
    return m;
}

/* Sends a command whose answer needs no main-thread work; 0, or -1 with err (refused before
 * sending). */
static int send_plain(ctl *c, ctl_cmd *m, const ctl_reply_to *to, ctl_error *err)
{
    ctl_pending *p = ctl_pending_new(c, DONE_PLAIN, to, err);
    if (!p) return -1;
    return ctl_pending_send(c, p, m, err);
}

/* Answers to (at the next ctl_poll) without the control thread: the command was applied here
 * because none runs. */
static int answer_now(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    ctl_pending *p = ctl_pending_new(c, DONE_PLAIN, to, err);
    if (!p) return -1;
    ctl_pending_answer(p, 0, NULL);
    return 0;
}

/* A command without arguments, sent; the answer to `to`, or waited for. */
static int simple_cmd(ctl *c, cmd_type t, const ctl_reply_to *to, ctl_error *err)
{
    ctl_waiter w;
    ctl_reply_to self;
    ctl_cmd m = new_cmd(t);
    int rc = send_plain(c, &m, ctl_reply_target(to, &w, &self), err);
    return ctl_reply_finish(c, to, &w, rc, err);
}

/* disabled -> holding at the present position (then, if past a soft limit, a move back inside:
 * see ctl_cmd_done). */
int ctl_enable(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    ctl_waiter w;
    ctl_reply_to self;
    ctl_pending *p = ctl_pending_new(c, DONE_ENABLE, ctl_reply_target(to, &w, &self), err);
    int rc = -1;
    if (p) {
        ctl_cmd m = new_cmd(CMD_ENABLE);
        rc = ctl_pending_send(c, p, &m, err);
    }
    return ctl_reply_finish(c, to, &w, rc, err);
}

/* -> disabled, torque off. */
int ctl_disable(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, CMD_DISABLE, to, err);
}

/* moving -> holding at the present desired position. */
int ctl_hold(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, CMD_HOLD, to, err);
}

/* fault|estop -> disabled. */
int ctl_reset(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, CMD_RESET, to, err);
}

/* Decelerates the motion within the acceleration limits, then holds. */
int ctl_cancel(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, CMD_CANCEL, to, err);
}

/* The control thread resets its timing histograms between two ticks. */
int ctl_stats_reset(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return simple_cmd(c, CMD_STATS_RESET, to, err);
}

/* Raises the estop flag first (never lost, seen at the next tick's start, whatever the
 * mailbox holds), then sends the command for the answer. Without a control thread, zeroes the
 * torque from here. */
int ctl_estop(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    if (ctl_thread_running(c)) {
        atomic_store_explicit(&c->estop_request, 1, memory_order_release);
        return simple_cmd(c, CMD_ESTOP, to, err);
    }
    if (!c->started) { /* no control thread: zero the torque from here */
        ctl_torque_off(c);
        c->rt.state = SF_ESTOP;
        ctl_publish(c);
    }
    ctl_waiter w;
    ctl_reply_to self;
    int rc = answer_now(c, ctl_reply_target(to, &w, &self), err);
    return ctl_reply_finish(c, to, &w, rc, err);
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

/* Hands a built plan in slot over (the answer comes with its id and duration; the tail for
 * appends is recorded when it is accepted: ctl_cmd_done). */
static int submit_plan(ctl *c, int slot, bool append, uint32_t after_id, const ctl_reply_to *to,
                       ctl_error *err)
{
    ctl_pending *p = ctl_pending_new(c, DONE_TRAJ, to, err);
    if (!p) return -1;
    traj_plan *pl = &c->plans[slot];
    pl->id = c->next_id++;
    p->slot = slot;
    p->append = append;
    p->res.id = pl->id;
    p->res.duration = pl->duration;
    traj_end_state(pl, &p->end);
    atomic_store_explicit(&c->plan_owner[slot], 1, memory_order_relaxed);
    ctl_cmd m = new_cmd(CMD_TRAJ);
    m.slot = slot;
    m.append = append;
    m.after_id = after_id;
    if (ctl_pending_send(c, p, &m, err)) { /* never sent: the slot comes back */
        atomic_store_explicit(&c->plan_owner[slot], 0, memory_order_release);
        return -1;
    }
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

/* Copies a waited-for trajectory answer into the caller's id and duration. */
static int traj_finish(ctl *c, const ctl_reply_to *to, ctl_waiter *w, int rc, uint32_t *id,
                       double *duration, ctl_error *err)
{
    rc = ctl_reply_finish(c, to, w, rc, err);
    if (!to && rc == 0) {
        if (id) *id = w->res.id;
        if (duration) *duration = w->res.duration;
    }
    return rc;
}

/* Validates the waypoints, builds the plan from its start state (plan_start) and hands
 * it over. */
int ctl_trajectory(ctl *c, const ctl_waypoint *points, int n_points, bool append, uint32_t *id,
                   double *duration, const ctl_reply_to *to, ctl_error *err)
{
    ctl_waiter w;
    ctl_reply_to self;
    int rc = -1;
    if (check_enabled(c, err)) goto out;
    if (!points || n_points < 1) {
        ctl_set_err(err, "invalid_params", "a trajectory needs at least one waypoint");
        goto out;
    }
    if (n_points > TRAJ_MAX_POINTS) {
        ctl_set_err(err, "invalid_params",
                    "%d waypoints are more than the %d a trajectory may have", n_points,
                    TRAJ_MAX_POINTS);
        goto out;
    }
    int slot = free_slot(c, err);
    if (slot < 0) goto out;
    traj_state s;
    uint32_t after;
    plan_start(c, append, &s, &after);
    if (traj_build(&c->plans[slot], &c->lim, &s, points, n_points, SAME_TOL, err)) goto out;
    rc = submit_plan(c, slot, append, after, ctl_reply_target(to, &w, &self), err);
out:
    return traj_finish(c, to, &w, rc, id, duration, err);
}

/* Builds a single move from the present desired state to q and hands it over. */
int ctl_move_to(ctl *c, const double *q, double duration, uint32_t *id, double *duration_out,
                const ctl_reply_to *to, ctl_error *err)
{
    ctl_waiter w;
    ctl_reply_to self;
    int rc = -1;
    if (!q) {
        ctl_set_err(err, "invalid_params", "move_to needs a target position");
        goto out;
    }
    if (check_enabled(c, err)) goto out;
    int slot = free_slot(c, err);
    if (slot < 0) goto out;
    traj_state s;
    uint32_t after;
    plan_start(c, false, &s, &after);
    if (traj_build_move(&c->plans[slot], &c->lim, &s, q, duration, err)) goto out;
    rc = submit_plan(c, slot, false, 0, ctl_reply_target(to, &w, &self), err);
out:
    return traj_finish(c, to, &w, rc, id, duration_out, err);
}

/* ============================================================ parameters and settings */

/* True while a parameter block handed over has not been acknowledged: the inactive block may
 * be the one about to become live, so it must not be written. */
static bool params_busy(ctl *c, ctl_error *err)
{
    if (!c->params_seq || atomic_load_explicit(&c->acked, memory_order_acquire) >= c->params_seq)
        return false;
    ctl_set_err(err, "busy",
                "the previous gain or configuration change is still being applied; "
                "send this one again");
    return true;
}

/* Fills the inactive parameter block from *p and *lim (NULL = the limits in use) and swaps it
 * in between two ticks, with model_next when swap_model (a reload's new dynamics); the answer
 * goes to entry e (or is given at once without a control thread). */
static int swap_params(ctl *c, const law_params *p, const traj_limits *lim, bool swap_model,
                       ctl_pending *e, ctl_error *err)
{
    int act = atomic_load_explicit(&c->params_active, memory_order_acquire);
    int other = 1 - act;
    c->params[other] = *p;
    c->lims[other] = lim ? *lim : c->lims[act];
    if (!ctl_thread_running(c)) {
        if (swap_model) ctl_swap_model(c);
        atomic_store_explicit(&c->params_active, other, memory_order_release);
        c->rt.law = p->law;
        ctl_pending_answer(e, 0, NULL);
        return 0;
    }
    ctl_cmd m = new_cmd(CMD_PARAMS);
    m.slot = other;
    m.swap_model = swap_model;
    if (ctl_pending_send(c, e, &m, err)) return -1;
    c->params_seq = m.seq;
    return 0;
}

/* Checks that every given gain is finite and within the config loader's bounds, then swaps
 * in the changed gains. */
int ctl_gains_set(ctl *c, const double *kp, const double *kd, const double *ki,
                  const ctl_reply_to *to, ctl_error *err)
{
    ctl_waiter w;
    ctl_reply_to self;
    int rc = -1;
    law_params p = *ctl_live_params(c);
    const double *v[3] = {kp, kd, ki};
    const char *nm[3] = {"kp", "kd", "ki"};
    const double max[3] = {CTL_KP_MAX, CTL_KD_MAX, CTL_KI_MAX};
    for (int k = 0; k < 3; k++) {
        if (!v[k]) continue;
        for (int j = 0; j < c->n; j++) {
            if (!(v[k][j] >= 0 && v[k][j] <= max[k])) {
                ctl_set_err(err, "invalid_params", "joint %s: %s = %g must be within [0, %g]",
                            p.name[j], nm[k], v[k][j], max[k]);
                goto out;
            }
        }
    }
    if (params_busy(c, err)) goto out;
    for (int j = 0; j < c->n; j++) {
        if (kp) p.kp[j] = kp[j];
        if (kd) p.kd[j] = kd[j];
        if (ki) p.ki[j] = ki[j];
    }
    ctl_pending *e = ctl_pending_new(c, DONE_PLAIN, ctl_reply_target(to, &w, &self), err);
    if (e) rc = swap_params(c, &p, NULL, false, e, err);
out:
    return ctl_reply_finish(c, to, &w, rc, err);
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
int ctl_controller_set(ctl *c, cfg_controller law, const ctl_reply_to *to, ctl_error *err)
{
    ctl_waiter w;
    ctl_reply_to self;
    const ctl_reply_to *dst = ctl_reply_target(to, &w, &self);
    int rc = -1;
    if (law != CTRL_COMPUTED_TORQUE && law != CTRL_PD_GRAVITY && law != CTRL_GRAVITY_COMP) {
        ctl_set_err(err, "invalid_params", "unknown controller %d", (int)law);
    } else if (!ctl_thread_running(c)) {
        c->rt.law = law;
        rc = answer_now(c, dst, err);
    } else {
        ctl_cmd m = new_cmd(CMD_CONTROLLER);
        m.law = law;
        rc = send_plain(c, &m, dst, err);
    }
    return ctl_reply_finish(c, to, &w, rc, err);
}

/* Checks the payload against the config loader's bounds (every value finite), then replaces
 * it. */
int ctl_payload_set(ctl *c, const dyn_payload *payload, const ctl_reply_to *to, ctl_error *err)
{
    ctl_waiter w;
    ctl_reply_to self;
    const ctl_reply_to *dst = ctl_reply_target(to, &w, &self);
    int rc = -1;
    bool ok = payload->mass >= 0 && payload->mass <= CTL_PAYLOAD_MASS_MAX;
    for (int i = 0; i < 3; i++) ok = ok && fabs(payload->com[i]) <= CTL_PAYLOAD_COM_MAX;
    for (int i = 0; i < 6; i++) ok = ok && fabs(payload->inertia[i]) <= CTL_PAYLOAD_INERTIA_MAX;
    if (!ok) {
        ctl_set_err(err, "invalid_params",
                    "payload: mass must be within [0, %g] kg, each com coordinate within %g m "
                    "and each inertia value within %g kg m^2, all finite",
                    CTL_PAYLOAD_MASS_MAX, CTL_PAYLOAD_COM_MAX, CTL_PAYLOAD_INERTIA_MAX);
    } else if (!ctl_thread_running(c)) {
        dyn_set_payload(c->model, payload);
        ctl_payload_changed(c);
        rc = answer_now(c, dst, err);
    } else {
        ctl_cmd m = new_cmd(CMD_PAYLOAD);
        m.payload = *payload;
        rc = send_plain(c, &m, dst, err);
    }
    if (rc == 0) c->payload = *payload;
    return ctl_reply_finish(c, to, &w, rc, err);
}

/* Whether a reload changes the dynamics keys (mass, com, inertia, armature, viscous, coulomb) of
 * any joint: then the control thread needs a new model. */
static bool dynamics_changed(const dyn_model_desc *a, const dyn_model_desc *b)
{
    for (int j = 0; j < a->n; j++) {
        const dyn_joint_desc *x = &a->joint[j], *y = &b->joint[j];
        if (x->mass != y->mass || memcmp(x->com, y->com, sizeof x->com) ||
            memcmp(x->inertia, y->inertia, sizeof x->inertia) || x->armature != y->armature ||
            x->viscous != y->viscous || x->coulomb_pos != y->coulomb_pos ||
            x->coulomb_neg != y->coulomb_neg)
            return true;
    }
    return false;
}

/* The candidate's model (with the payload in use now) and its workspace into model_next /
 * data_next, for the control thread to swap in with the reload's parameters. */
static int build_next_model(ctl *c, const armd_config *candidate, ctl_error *err)
{
    if (c->model_next) { /* the last reload's models are freed when it is answered */
        ctl_set_err(err, "busy", "not reloaded: the last reload is still being applied; try again");
        return -1;
    }
    dyn_model_desc desc = candidate->model;
    desc.payload = c->payload;
    c->model_next = dyn_model_create(&desc, NULL, NULL);
    c->data_next = c->model_next ? dyn_data_create(c->model_next) : NULL;
    if (!c->data_next) {
        ctl_free_next_model(c);
        ctl_set_err(err, "invalid_config", "not reloaded: the new dynamics do not make a model");
        return -1;
    }
    return 0;
}

/* Compares with the running configuration (cfg_compare); only live keys changed: swaps in
 * the new law parameters (and, when the dynamics keys changed, a new model); the candidate becomes
 * the running configuration once the control thread has taken them (ctl_cmd_done). */
int ctl_reload(ctl *c, const armd_config *candidate, char *changed, size_t changed_len,
               const ctl_reply_to *to, ctl_error *err)
{
    ctl_waiter w;
    ctl_reply_to self;
    const ctl_reply_to *dst = ctl_reply_target(to, &w, &self);
    char restart[512] = "", ch[sizeof(((ctl_result *)0)->changed)] = "";
    int rc = -1;
    if (changed && changed_len) changed[0] = 0;
    if (cfg_compare(&c->cfg, candidate, ch, sizeof ch, restart, sizeof restart)) {
        ctl_set_err(err, "restart_needed", "not reloaded: these keys need a restart: %s", restart);
        goto out;
    }
    for (int j = 0; j < candidate->n_joints; j++) {
        double cap = drv_torque_capacity(c->driver, j);
        if (candidate->joint[j].torque > cap * (1 + 1e-9)) {
            ctl_set_err(err, "limits",
                        "not reloaded: [joint %s] torque %g is more than its servos can deliver "
                        "at their Current Limit (%.4g)",
                        candidate->joint[j].name, candidate->joint[j].torque, cap);
            goto out;
        }
    }
    if (ch[0] && params_busy(c, err)) goto out;
    ctl_pending *e = ctl_pending_new(c, DONE_RELOAD, dst, err);
    if (!e) goto out;
    snprintf(e->res.changed, sizeof e->res.changed, "%s", ch);
    if (!ch[0]) { /* nothing to do */
        ctl_pending_answer(e, 0, NULL);
        rc = 0;
        goto out;
    }
    e->cand = malloc(sizeof *e->cand);
    if (!e->cand) {
        ctl_set_err(err, "internal", "out of memory");
        ctl_pending_drop(e);
        goto out;
    }
    *e->cand = *candidate;
    bool new_model = dynamics_changed(&c->cfg.model, &candidate->model);
    if (new_model && build_next_model(c, candidate, err) != 0) {
        ctl_pending_drop(e);
        goto out;
    }
    law_params p;
    law_params_from_config(&p, candidate);
    traj_limits lim;
    traj_limits_from_config(&lim, candidate);
    rc = swap_params(c, &p, &lim, new_model, e, err);
    if (rc != 0) ctl_free_next_model(c); /* never sent: nothing refers to it */
out:
    rc = ctl_reply_finish(c, to, &w, rc, err);
    if (!to && rc == 0 && changed && changed_len)
        snprintf(changed, changed_len, "%s", w.res.changed);
    return rc;
}

/* ============================================================ the answers' main-thread part */

/* An enable accepted: if a joint was enabled past its soft limit (accepted within
 * following_error, e.g. an arm resting on its hard stop), move back inside the limits at the
 * limits' pace instead of holding it pressed against the stop; that move's answer is the
 * enable's. False when the move was sent. */
static bool enable_done(ctl *c, ctl_pending *p)
{
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

bool ctl_cmd_done(ctl *c, ctl_pending *p)
{
    switch (p->kind) {
    case DONE_PLAIN:
        return true;
    case DONE_ENABLE:
        return p->rc == 0 ? enable_done(c, p) : true;
    case DONE_TRAJ:
        /* refused: the control thread gave the slot back; timed out: it still owns it */
        if (p->rc == 0) {
            c->tail_slot = p->slot;
            c->tail_id = p->res.id;
            c->tail_end = p->end;
        }
        return true;
    case DONE_RELOAD:
        if (p->rc == 0 && p->cand) {
            c->cfg = *p->cand;
            traj_limits_from_config(&c->lim, p->cand);
        }
        ctl_free_next_model(c); /* the old model, or the refused new one */
        return true;
    }
    return true;
}
