/*
 * control_motion.c — the control thread following plans: starting one, going on with the
 * appended ones, settling at the goal after the end, the cancel stop, the path tolerance, and
 * ending trajectories with their TRAJECTORY_DONE event. Control thread only; no allocation,
 * locks or logging.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "daemon/control_internal.h"

/* after a plan's end the goal must be reached within max(this, 5 settle_time) [s], else the
 * trajectory ends "aborted: ... from the goal" (holding the last point) */
#define GOAL_TIMEOUT_MIN_S 0.5

/* Ends the plan in slot: gives the slot back and publishes its TRAJECTORY_DONE with text. */
static void end_plan(ctl *c, int slot, const char *text)
{
    uint32_t id = c->plans[slot].id;
    ctl_release_slot(c, slot);
    ctl_emit(c, CTL_EV_TRAJECTORY_DONE, id, "%s", text);
}

/* Ends every trajectory (active, queued, stopping) with the given text; nothing left to
 * follow. */
void ctl_drop_motion(ctl *c, const char *why)
{
    ctl_rt *r = &c->rt;
    if (r->active >= 0) {
        int slot = r->active;
        r->active = -1;
        end_plan(c, slot, why);
    }
    if (r->stopping) {
        r->stopping = false;
        if (r->stop_id) ctl_emit(c, CTL_EV_TRAJECTORY_DONE, r->stop_id, "%s", why);
    }
    r->retract.active = false;
    for (int i = 0; i < r->n_queue; i++) end_plan(c, r->queue[i], why);
    r->n_queue = 0;
    r->settling = false;
}

/* Re-anchors plan slot at the present desired state and checks its first segment again. */
int ctl_prepare_plan(ctl *c, int slot, ctl_error *e)
{
    ctl_rt *r = &c->rt;
    traj_state s;
    for (int j = 0; j < c->n; j++) {
        s.q[j] = r->q_des[j];
        s.qd[j] = r->qd_des[j];
        s.qdd[j] = r->qdd_des[j];
    }
    traj_plan *pl = &c->plans[slot];
    traj_reanchor(pl, &s);
    if (traj_validate_segment(pl, ctl_live_limits(c), 0, 0, e) == 0) return 0;
    snprintf(e->message + strlen(e->message), sizeof e->message - strlen(e->message),
             " (the arm moved on while the trajectory was handed over; send it again)");
    return -1;
}

/* Starts a prepared plan slot now; state moving. */
void ctl_start_plan(ctl *c, int slot)
{
    ctl_rt *r = &c->rt;
    r->active = slot;
    r->plan_t = 0;
    r->seg = 0;
    r->settling = false;
    ctl_set_state(c, SF_MOVING);
}

/* Ends the active plan after its end (settled, or given up): holding, then its event. */
static void finish_active(ctl *c, const char *text)
{
    ctl_rt *r = &c->rt;
    int slot = r->active;
    uint32_t id = c->plans[slot].id;
    ctl_release_slot(c, slot);
    r->active = -1;
    r->settling = false;
    ctl_set_state(c, SF_HOLDING);
    ctl_emit(c, CTL_EV_TRAJECTORY_DONE, id, "%s", text);
}

/* The cancel stop: decelerates along r->stop; at its end holds and reports "cancelled". */
static void advance_stop(ctl *c, double dt)
{
    ctl_rt *r = &c->rt;
    r->stop_t += dt;
    traj_stop_sample(&r->stop, r->stop_t, r->q_des, r->qd_des, r->qdd_des);
    if (r->stop_t >= r->stop.duration) {
        r->stopping = false;
        ctl_hold_at(c, r->q_des);
        ctl_set_state(c, SF_HOLDING);
        if (r->stop_id) /* 0: the stop of a retract, not of a trajectory */
            ctl_emit(c, CTL_EV_TRAJECTORY_DONE, r->stop_id, "cancelled");
    }
}

/* Past the active plan's end: holds its last point until every joint is within the goal
 * tolerance [rad or m] for settle_time [s] ("done"), or gives up after the goal timeout. */
static void settle(ctl *c, const law_params *p, double dt)
{
    ctl_rt *r = &c->rt;
    const traj_plan *pl = &c->plans[r->active];
    if (!r->settling) {
        r->settling = true;
        r->settle_for = 0;
    }
    ctl_hold_at(c, r->q_des);
    double worst = 0;
    int wj = 0;
    for (int j = 0; j < c->n; j++) {
        double e = fabs(r->q_des[j] - r->q[j]);
        if (e > worst) worst = e, wj = j;
    }
    double after = r->plan_t - pl->duration;
    if (worst <= p->trajectory.goal_tolerance) {
        r->settle_for += dt;
        if (r->settle_for >= p->trajectory.settle_time) finish_active(c, "done");
        return;
    }
    r->settle_for = 0;
    double limit = fmax(GOAL_TIMEOUT_MIN_S, 5 * p->trajectory.settle_time);
    if (after > limit) {
        char why[256]; /* truncated to the event text by finish_active */
        snprintf(why, sizeof why,
                 "aborted: joint %s still %.4g from the goal %.3g s after the end (goal "
                 "tolerance %.4g)",
                 p->name[wj], worst, after, p->trajectory.goal_tolerance);
        finish_active(c, why);
    }
}

/* Advances the desired state along the active motion by dt [s]: a retract, the cancel stop,
 * or the active plan (going on with the appended ones at its end, then settling; the measured
 * path is recorded for a retract). */
void ctl_advance_motion(ctl *c, const law_params *p, double dt)
{
    ctl_rt *r = &c->rt;
    if (r->state != SF_MOVING) return;
    if (r->retract.active) {
        ctl_retract_advance(c, dt);
        return;
    }
    if (r->stopping) {
        advance_stop(c, dt);
        return;
    }
    if (r->active < 0) {
        ctl_set_state(c, SF_HOLDING);
        return;
    }
    traj_plan *pl = &c->plans[r->active];
    r->plan_t += dt;
    while (r->plan_t >= pl->duration && r->n_queue > 0) { /* go on with the appended one */
        double over = r->plan_t - pl->duration;
        end_plan(c, r->active, "done");
        r->active = r->queue[0];
        for (int i = 1; i < r->n_queue; i++) r->queue[i - 1] = r->queue[i];
        r->n_queue--;
        pl = &c->plans[r->active];
        r->plan_t = over;
        r->seg = 0;
    }
    traj_sample(pl, r->plan_t, &r->seg, r->q_des, r->qd_des, r->qdd_des);
    ctl_retract_record(&r->retract, c->n, r->q, p->safety.collision_retract);
    if (r->plan_t < pl->duration) return;
    settle(c, p, dt);
}

/* Path tolerance while moving: a joint off its desired position by more than the path
 * tolerance [rad or m] aborts the motion, holding the present position, saying why. */
void ctl_check_path(ctl *c, const law_params *p)
{
    ctl_rt *r = &c->rt;
    if (r->state != SF_MOVING || p->trajectory.path_tolerance <= 0) return;
    for (int j = 0; j < c->n; j++) {
        double e = r->q_des[j] - r->q[j];
        if (fabs(e) > p->trajectory.path_tolerance) {
            char why[160];
            snprintf(why, sizeof why,
                     "aborted: path tolerance: joint %s off by %.4g (tolerance %.4g)", p->name[j],
                     e, p->trajectory.path_tolerance);
            ctl_drop_motion(c, why);
            ctl_hold_at(c, r->q);
            ctl_set_state(c, SF_HOLDING);
            return;
        }
    }
}
