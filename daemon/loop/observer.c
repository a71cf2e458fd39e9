/*
 * observer.c — collision detection and the reactions to a collision (see observer.h). Control
 * thread only; no allocation.
 */
#include "daemon/loop/observer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "daemon/loop/out.h"

/* the threshold factor while the states may be stale after a hold-up */
#define COLL_SUSPECT_FACTOR 2.0
/* dyn_tool_wrench's damping: singular values of the tool Jacobian well above it (0.01 m or
 * rad per rad) are inverted as they are, smaller ones attenuated */
#define WRENCH_DAMPING 1e-3

/* NaN: no estimate. */
static void wrench_unknown(observer *ob)
{
    for (int k = 0; k < 6; k++) ob->wrench[k] = NAN;
}

void observer_init(observer *ob, int n)
{
    memset(ob, 0, sizeof *ob);
    ob->n = n;
    wrench_unknown(ob);
}

void observer_stop(observer *ob)
{
    if (ob->obs.running) coll_stop(&ob->obs, ob->n);
    wrench_unknown(ob);
}

void observer_applied(observer *ob, const double *tau)
{
    if (ob->obs.running) coll_applied(&ob->obs, tau, ob->n);
}

/* The magnitude of the wrench's force [N]. */
static double tool_force(const observer *ob)
{
    return sqrt(ob->wrench[0] * ob->wrench[0] + ob->wrench[1] * ob->wrench[1] +
                ob->wrench[2] * ob->wrench[2]);
}

/* The reaction to a collision detected on joint j, or at the tool (j < 0: the force over
 * max_tool_force), the estimate in ob->obs.r and ob->wrench: an event only
 * (detect), or (react) the configured reaction: stop (trajectory cancelled, hold the present
 * position), damp (a fault ending in the damping stop), retract (trajectory cancelled, back
 * along the executed path, then hold; a stop when the arm was not following a trajectory: nothing
 * safe to go back along) or float (trajectory cancelled, gravity_comp damped by the damping
 * gains until the controller is set again). The reaction comes before the event, which names it.
 * Returns true when it faulted. */
static bool react(observer *ob, const law_params *p, const sense *s, guard *g, motion *m, torque *t,
                  loop_out *o, int j)
{
    char why[128], aborted[160];
    if (j >= 0)
        snprintf(why, sizeof why, "collision on joint %s: external torque %.3g (threshold %.3g)",
                 p->name[j], ob->obs.r[j], coll_threshold(&ob->obs, p, j, s->qd[j]));
    else
        snprintf(why, sizeof why, "collision at the tool: force %.3g N (max_tool_force %.3g N)",
                 tool_force(ob), p->safety.max_tool_force);
    snprintf(aborted, sizeof aborted, "aborted: %s", why);
    const char *reaction = "none";
    bool faulted = false;
    if (p->safety.collision == COLLISION_REACT) {
        cfg_collision_reaction how = p->safety.collision_reaction;
        if (how == REACT_DAMP) {
            guard_fault(g, m, o, true, s->fresh, why);
            reaction = "damp";
            faulted = true;
        } else if (how == REACT_RETRACT && m->kind == MOTION_FOLLOW &&
                   motion_retract(m, o, p, s->q, aborted)) {
            reaction = "retract";
        } else {
            motion_hold(m, o, s->q, aborted);
            if (how == REACT_FLOAT) torque_float(t);
            reaction = how == REACT_FLOAT ? "float" : "stop";
        }
    }
    ctl_event *e = out_event(o, CTL_EV_COLLISION, 0, "%s", reaction);
    if (e) {
        e->joint = j;
        memcpy(e->ext, ob->obs.r, sizeof(double) * (size_t)ob->n);
    }
    return faulted;
}

/* The observer over sample_dt (the time between this state's sample and the previous one: a read
 * that returns late, or ticks without a state, are then not counted as time the torque did not
 * act): started at the first such tick, then updated; a non-finite estimate is a fault; a
 * residual over its threshold is a collision, once per contact (the next needs every joint back
 * below half its threshold). After a sample interval over two periods (a read gap, a late tick:
 * the states around it can be stale, the replies queued behind the hold-up) and for two observer
 * time constants (2 / K_O) after it, a collision needs COLL_SUSPECT_FACTOR times the threshold: a
 * stale state spikes the residual by a few N m, a real contact keeps growing through it. */
bool observer_step(observer *ob, const law_params *p, const law_dyn *dy, double period,
                   const sense *s, guard *g, motion *m, torque *t, loop_out *o)
{
    if (p->safety.collision == COLLISION_OFF) {
        observer_stop(ob);
        return false;
    }
    if (!ob->obs.running) {
        coll_start(&ob->obs, dy, s->q, s->qd);
        ob->latched = false;
        ob->suspect = 0;
        return false;
    }
    double dt = s->sample_dt;
    coll_update(&ob->obs, dy, p->safety.collision_filter, s->q, s->qd, dt);
    if (dyn_tool_wrench(dy->m, dy->d, s->q, ob->obs.r, WRENCH_DAMPING, ob->wrench) != 0)
        wrench_unknown(ob);
    for (int j = 0; j < ob->n; j++) {
        if (isfinite(ob->obs.r[j])) continue;
        char why[160];
        snprintf(why, sizeof why, "non-finite external torque estimate on %s (collision observer)",
                 p->name[j]);
        guard_fault(g, m, o, p->safety.on_fault == ON_FAULT_DAMP, s->fresh, why);
        return true;
    }
    bool suspect = ob->suspect > 0 || dt > 2 * period;
    if (dt > 2 * period)
        ob->suspect = 2 / p->safety.collision_filter;
    else if (ob->suspect > 0)
        ob->suspect -= dt;
    const double f_max = p->safety.max_tool_force, f = tool_force(ob);
    if (ob->latched) { /* over: every joint below half its threshold, the tool force too */
        ob->latched = !coll_clear(&ob->obs, p, s->qd) || (f_max > 0 && !(f <= 0.5 * f_max));
        return false;
    }
    double ratio;
    int j = coll_detect(&ob->obs, p, s->qd, &ratio);
    if (j < 0 && f_max > 0 && !(f <= f_max)) { /* NaN counts as over */
        j = -1;
        ratio = f / f_max;
    } else if (j < 0) {
        return false;
    }
    if (suspect && !(ratio > COLL_SUSPECT_FACTOR)) return false;
    ob->latched = true;
    ob->collisions++;
    return react(ob, p, s, g, m, t, o, j);
}
