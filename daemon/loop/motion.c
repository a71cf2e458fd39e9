/*
 * motion.c — hold, follow, stop and retract: the desired state of every tick, and the end of
 * every trajectory (see motion.h). Control thread only; no allocation.
 */
#include "daemon/loop/motion.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "daemon/loop/out.h"

/* after a plan's end the goal must be reached within max(this, 5 settle_time) [s], else the
 * trajectory ends "aborted: ... from the goal" (holding the last point) */
#define GOAL_TIMEOUT_MIN_S 0.5
#define REANCHOR_TOL       1e-6 /* an appended plan may start now only from its own start state */

void motion_init(motion *m, int n)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    m->kind = MOTION_HOLD;
    retract_clear(&m->back, n);
}

bool motion_moving(const motion *m)
{
    return m->kind != MOTION_HOLD;
}

/* Holds at q with zero desired velocity and acceleration (nothing ended here). */
static void hold_at(motion *m, const double *q)
{
    for (int j = 0; j < m->n; j++) {
        m->q_des[j] = q[j];
        m->qd_des[j] = m->qdd_des[j] = 0;
    }
    m->kind = MOTION_HOLD;
}

/* The one place a trajectory ends: its TRAJECTORY_DONE with text, and its plan (NULL: a stop's
 * trajectory, whose plan went back when the stop began) back to the host. */
static void end_trajectory(loop_out *o, uint32_t id, traj_plan *plan, const char *text)
{
    if (id) out_event(o, CTL_EV_TRAJECTORY_DONE, id, "%s", text);
    out_return_plan(o, plan);
}

void motion_end(motion *m, loop_out *o, const char *why)
{
    if (m->kind == MOTION_FOLLOW) {
        end_trajectory(o, m->follow.plan->id, m->follow.plan, why);
        for (int i = 0; i < m->follow.n_queue; i++)
            end_trajectory(o, m->follow.queue[i]->id, m->follow.queue[i], why);
    } else if (m->kind == MOTION_STOP) {
        end_trajectory(o, m->stop.id, NULL, why);
    }
    hold_at(m, m->q_des);
}

void motion_hold(motion *m, loop_out *o, const double *q, const char *why)
{
    motion_end(m, o, why);
    hold_at(m, q);
}

void motion_forget_path(motion *m)
{
    retract_clear(&m->back, m->n);
}

/* Re-anchors plan p at the present desired state (it was built from one up to a few ticks
 * older) and checks its changed first segment against lim; 0, or -1 with e ("limits") when
 * the arm has moved on too far for it. */
static int prepare(motion *m, traj_plan *p, const traj_limits *lim, ctl_error *e)
{
    traj_state s;
    for (int j = 0; j < m->n; j++) {
        s.q[j] = m->q_des[j];
        s.qd[j] = m->qd_des[j];
        s.qdd[j] = m->qdd_des[j];
    }
    traj_reanchor(p, &s);
    if (traj_validate_segment(p, lim, 0, 0, e) == 0) return 0;
    size_t len = strlen(e->message);
    snprintf(e->message + len, sizeof e->message - len,
             " (the arm moved on while the trajectory was handed over; send it again)");
    return -1;
}

/* Follows plan p from its start. */
static void start(motion *m, traj_plan *p)
{
    m->kind = MOTION_FOLLOW;
    m->follow = (motion_follow){.plan = p};
}

/* True when plan p starts at the present desired state, within REANCHOR_TOL in position and
 * velocity (appending after a plan that has just ended normally). */
static bool starts_here(const motion *m, const traj_plan *p)
{
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], qdd[CFG_MAX_JOINTS];
    int seg = 0;
    traj_sample(p, 0, &seg, q, qd, qdd);
    for (int j = 0; j < m->n; j++)
        if (fabs(q[j] - m->q_des[j]) > REANCHOR_TOL || fabs(qd[j] - m->qd_des[j]) > REANCHOR_TOL)
            return false;
    return true;
}

/* Fills e with code and a sentence; returns -1. */
static int refuse(ctl_error *e, const char *code, const char *message)
{
    ctl_error_set(e, code, "%s", message);
    return -1;
}

int motion_take(motion *m, loop_out *o, const loop_cmd *c, const traj_limits *lim, ctl_error *e)
{
    if (!c->append) {
        if (prepare(m, c->plan, lim, e)) return -1; /* the old motion goes on */
        motion_end(m, o, "replaced");
        start(m, c->plan);
        return 0;
    }
    motion_follow *f = &m->follow;
    if (m->kind == MOTION_FOLLOW) {
        const traj_plan *tail = f->n_queue > 0 ? f->queue[f->n_queue - 1] : f->plan;
        if (tail->id == c->after_id) {
            if (f->n_queue >= LOOP_QUEUE)
                return refuse(e, "busy", "too many trajectories queued; wait for one to finish");
            f->queue[f->n_queue++] = c->plan;
            return 0;
        }
    }
    if (m->kind != MOTION_HOLD || !starts_here(m, c->plan))
        return refuse(e, "conflict",
                      "the trajectory this one was appended to is no longer running; send it "
                      "again");
    if (prepare(m, c->plan, lim, e)) return -1;
    start(m, c->plan);
    return 0;
}

void motion_cancel(motion *m, loop_out *o, const double *acc, const char *why)
{
    if (m->kind == MOTION_HOLD || m->kind == MOTION_STOP) return;
    uint32_t id = 0;
    double qd0[CFG_MAX_JOINTS];
    bool settling = m->kind == MOTION_FOLLOW && m->follow.settling;
    for (int j = 0; j < m->n; j++) qd0[j] = settling ? 0 : m->qd_des[j];
    if (m->kind == MOTION_FOLLOW) {
        id = m->follow.plan->id;
        out_return_plan(o, m->follow.plan); /* its "cancelled" comes when the stop ends */
        for (int i = 0; i < m->follow.n_queue; i++)
            end_trajectory(o, m->follow.queue[i]->id, m->follow.queue[i], why);
    }
    m->kind = MOTION_STOP;
    m->stop.id = id;
    m->stop.why = why;
    m->stop.t = 0;
    traj_stop_init(&m->stop.profile, m->n, m->q_des, qd0, acc);
}

bool motion_retract(motion *m, loop_out *o, const law_params *p, const double *q, const char *why)
{
    motion_hold(m, o, q, why);
    if (!retract_plan(&m->back, p, q)) return false;
    m->kind = MOTION_RETRACT;
    return true;
}

/* The stop: decelerates along its profile; at its end holds and reports its why. */
static void advance_stop(motion *m, loop_out *o, double dt)
{
    motion_stop *s = &m->stop;
    s->t += dt;
    traj_stop_sample(&s->profile, s->t, m->q_des, m->qd_des, m->qdd_des);
    if (s->t < s->profile.duration) return;
    uint32_t id = s->id;
    const char *why = s->why;
    hold_at(m, m->q_des);
    end_trajectory(o, id, NULL, why);
}

/* The way back: at its end holds there. */
static void advance_retract(motion *m, double dt)
{
    if (!retract_sample(&m->back, dt, m->q_des, m->qd_des, m->qdd_des))
        hold_at(m, retract_end(&m->back));
}

/* The plan followed is over (settled, or given up): holds at its end and reports text. */
static void finish(motion *m, loop_out *o, const char *text)
{
    traj_plan *p = m->follow.plan;
    hold_at(m, m->q_des);
    end_trajectory(o, p->id, p, text);
}

/* Past the last plan's end: holds its last point until every joint is within the goal
 * tolerance [rad|m] for settle_time [s] ("done"), or gives up after the goal timeout. */
static void settle(motion *m, loop_out *o, const law_params *p, double dt, const double *q)
{
    motion_follow *f = &m->follow;
    if (!f->settling) {
        f->settling = true;
        f->settle_for = 0;
    }
    for (int j = 0; j < m->n; j++) m->qd_des[j] = m->qdd_des[j] = 0;
    double worst = 0;
    int wj = 0;
    for (int j = 0; j < m->n; j++) {
        double e = fabs(m->q_des[j] - q[j]);
        if (e > worst) worst = e, wj = j;
    }
    double after = f->t - f->plan->duration;
    if (worst <= p->trajectory.goal_tolerance) {
        f->settle_for += dt;
        if (f->settle_for >= p->trajectory.settle_time) finish(m, o, "done");
        return;
    }
    f->settle_for = 0;
    double limit = fmax(GOAL_TIMEOUT_MIN_S, 5 * p->trajectory.settle_time);
    if (after > limit) {
        char why[256]; /* truncated to the event text */
        snprintf(why, sizeof why,
                 "aborted: joint %s still %.4g from the goal %.3g s after the end (goal "
                 "tolerance %.4g)",
                 p->name[wj], worst, after, p->trajectory.goal_tolerance);
        finish(m, o, why);
    }
}

/* Following: along the plan (going on with the appended ones at its end), recording the
 * executed path, then settling. */
static void advance_follow(motion *m, loop_out *o, const law_params *p, double dt, const double *q)
{
    motion_follow *f = &m->follow;
    f->t += dt;
    while (f->t >= f->plan->duration && f->n_queue > 0) { /* go on with the appended one */
        double over = f->t - f->plan->duration;
        end_trajectory(o, f->plan->id, f->plan, "done");
        f->plan = f->queue[0];
        for (int i = 1; i < f->n_queue; i++) f->queue[i - 1] = f->queue[i];
        f->n_queue--;
        f->t = over;
        f->seg = 0;
        f->settling = false;
    }
    traj_sample(f->plan, f->t, &f->seg, m->q_des, m->qd_des, m->qdd_des);
    retract_record(&m->back, q, p->safety.collision_retract);
    if (f->t >= f->plan->duration) settle(m, o, p, dt, q);
}

void motion_advance(motion *m, loop_out *o, const law_params *p, double dt, const double *q)
{
    switch (m->kind) {
    case MOTION_HOLD:
        return;
    case MOTION_FOLLOW:
        advance_follow(m, o, p, dt, q);
        return;
    case MOTION_STOP:
        advance_stop(m, o, dt);
        return;
    case MOTION_RETRACT:
        advance_retract(m, dt);
        return;
    }
}

void motion_check_path(motion *m, loop_out *o, const law_params *p, const double *q)
{
    if (m->kind == MOTION_HOLD || p->trajectory.path_tolerance <= 0) return;
    for (int j = 0; j < m->n; j++) {
        double e = m->q_des[j] - q[j];
        if (!(fabs(e) > p->trajectory.path_tolerance)) continue;
        char why[160];
        snprintf(why, sizeof why, "aborted: path tolerance: joint %s off by %.4g (tolerance %.4g)",
                 p->name[j], e, p->trajectory.path_tolerance);
        motion_hold(m, o, q, why);
        return;
    }
}

void motion_progress(const motion *m, uint32_t *id, double *progress, double *remaining)
{
    *id = 0;
    *progress = *remaining = 0;
    if (m->kind == MOTION_FOLLOW) {
        const motion_follow *f = &m->follow;
        double rem = fmax(0, f->plan->duration - f->t);
        for (int i = 0; i < f->n_queue; i++) rem += f->queue[i]->duration;
        *id = f->plan->id;
        *progress = f->plan->duration > 0 ? fmin(1, f->t / f->plan->duration) : 1;
        *remaining = rem;
    } else if (m->kind == MOTION_STOP) {
        const motion_stop *s = &m->stop;
        *id = s->id;
        *progress = s->profile.duration > 0 ? fmin(1, s->t / s->profile.duration) : 1;
        *remaining = fmax(0, s->profile.duration - s->t);
    }
}
