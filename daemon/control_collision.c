/*
 * control_collision.c — the control thread's collision detection: the momentum observer's step
 * every tick of an enabled arm (daemon/collision.h), the detection with its hysteresis and a
 * stricter threshold after a hold-up, and the reaction (event; stop, or the damping stop).
 * Control thread only; no allocation, locks or logging.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "daemon/control_internal.h"

/* the threshold factor while the states may be stale after a hold-up */
#define COLL_SUSPECT_FACTOR 2.0

/* The reaction to a collision detected on joint j (the observer's estimate in r->obs.r): an
 * event only (detect), or (react) the configured reaction: stop (trajectory cancelled, hold
 * the present position), damp (a fault ending in the damping stop), retract (trajectory
 * cancelled, back along the executed path, then hold; a stop when the arm was not following a
 * trajectory, or was already retracting: nothing safe to go back along) or float (trajectory
 * cancelled, gravity_comp damped by the damping gains until the controller is set again). The
 * torque reaction comes before the event, which names the reaction taken. Returns true when it
 * faulted (nothing more to compute this tick). */
static bool collision_reaction(ctl *c, const law_params *p, int j)
{
    ctl_rt *r = &c->rt;
    double thr = coll_threshold(&r->obs, p, j, r->qd[j]);
    char why[128];
    snprintf(why, sizeof why, "collision on joint %s: external torque %.3g (threshold %.3g)",
             p->name[j], r->obs.r[j], thr);
    const char *reaction = "none";
    bool faulted = false;
    if (p->safety.collision == COLLISION_REACT) {
        char aborted[160];
        snprintf(aborted, sizeof aborted, "aborted: %s", why);
        cfg_collision_reaction how = p->safety.collision_reaction;
        bool along_plan = r->state == SF_MOVING && !r->retract.active && !r->stopping;
        if (how == REACT_DAMP) {
            ctl_fault_damped(c, "%s", why);
            reaction = "damp";
            faulted = true;
        } else {
            ctl_drop_motion(c, aborted);
            if (how == REACT_RETRACT && along_plan && ctl_retract_start(c, p, r->q)) {
                reaction = "retract";
            } else {
                if (how == REACT_FLOAT) {
                    ctl_switch_law(c, CTRL_GRAVITY_COMP);
                    r->floating = true;
                }
                ctl_hold_at(c, r->q);
                ctl_set_state(c, SF_HOLDING);
                reaction = how == REACT_FLOAT ? "float" : "stop";
            }
        }
    }
    r->ev.joint = j;
    memcpy(r->ev.ext, r->obs.r, sizeof(double) * (size_t)c->n);
    ctl_emit(c, CTL_EV_COLLISION, 0, "%s", reaction);
    return faulted;
}

/* The momentum observer's step for an enabled arm with a fresh state (see collision.h) over
 * dt [s], the time between this state's sample and the previous one (the host time stamps of
 * the replies: a read that returns late in its tick, or ticks without a state, are then not
 * counted as time the torque did not act): started at the first such tick, then updated; a
 * non-finite estimate is a fault; a residual over its threshold is a collision (once per
 * contact: the next needs every joint back below half its threshold). After a sample interval
 * over two periods (a read gap, a late tick: the states around it can be stale, the replies
 * queued behind the hold-up) and for two observer time constants (2 / K_O) after it, a
 * collision needs COLL_SUSPECT_FACTOR times the threshold: a stale state spikes the residual
 * by a few N m, a real contact keeps growing through it. Returns true when the tick faulted. */
bool ctl_observe_collisions(ctl *c, const law_params *p, double dt)
{
    ctl_rt *r = &c->rt;
    if (p->safety.collision == COLLISION_OFF) {
        if (r->obs.running) coll_stop(&r->obs, c->n);
        return false;
    }
    if (!r->obs.running) {
        coll_start(&r->obs, &c->dyn, r->q, r->qd);
        r->coll_latched = false;
        r->coll_suspect = 0;
        return false;
    }
    coll_update(&r->obs, &c->dyn, p->safety.collision_filter, r->q, r->qd, dt);
    int bad = ctl_first_nonfinite(r->obs.r, c->n);
    if (bad >= 0) {
        ctl_fault(c, "non-finite external torque estimate on %s (collision observer)",
                  p->name[bad]);
        return true;
    }
    bool suspect = r->coll_suspect > 0 || dt > 2 * c->period;
    if (dt > 2 * c->period)
        r->coll_suspect = 2 / p->safety.collision_filter;
    else if (r->coll_suspect > 0)
        r->coll_suspect -= dt;
    if (r->coll_latched) {
        r->coll_latched = !coll_clear(&r->obs, p, r->qd);
        return false;
    }
    double ratio;
    int j = coll_detect(&r->obs, p, r->qd, &ratio);
    if (j < 0 || (suspect && !(ratio > COLL_SUSPECT_FACTOR))) return false;
    r->coll_latched = true;
    r->collisions++;
    return collision_reaction(c, p, j);
}
