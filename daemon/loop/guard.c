/*
 * guard.c — the safety state machine and the fault, estop and damping-stop reactions (see
 * guard.h). Control thread only.
 */
#include "daemon/loop/guard.h"

#include <stdio.h>
#include <string.h>

#include "daemon/loop/out.h"

void guard_init(guard *g)
{
    memset(g, 0, sizeof *g);
    g->mode = GUARD_DISABLED;
}

ctl_state guard_state(const guard *g, const motion *m)
{
    switch (g->mode) {
    case GUARD_ENABLED:
        return motion_moving(m) ? CTL_MOVING : CTL_HOLDING;
    case GUARD_FAULT:
        return CTL_FAULT;
    case GUARD_ESTOP:
        return CTL_ESTOP;
    case GUARD_DISABLED:
    case GUARD_ENABLING:
        break;
    }
    return CTL_DISABLED;
}

bool guard_enabled(const guard *g)
{
    return g->mode == GUARD_ENABLED;
}

/* The enables waiting are over without enabling: answered with code and why; disabled. */
static void refuse_enable(guard *g, loop_out *o, const char *code, const char *why)
{
    if (g->mode != GUARD_ENABLING) return;
    for (int i = 0; i < g->n_enable; i++) out_refuse(o, g->enable_seq[i], code, "%s", why);
    g->n_enable = 0;
    if (g->servos_asked) o->servos = LOOP_SERVOS_OFF;
    g->mode = GUARD_DISABLED;
}

void guard_fault(guard *g, motion *m, loop_out *o, bool damp, bool fresh, const char *why)
{
    if (g->mode == GUARD_FAULT || g->mode == GUARD_ESTOP) return;
    char text[300];
    snprintf(text, sizeof text, "not enabled: the arm faulted: %s; reset and enable it", why);
    refuse_enable(g, o, "fault", text);
    g->damping = damp && fresh && g->mode == GUARD_ENABLED;
    g->damp_t = 0;
    if (!g->damping) o->servos = LOOP_SERVOS_OFF;
    snprintf(g->fault, sizeof g->fault, "%s", why);
    g->mode = GUARD_FAULT;
    snprintf(text, sizeof text, "aborted: fault: %s", g->fault);
    motion_end(m, o, text);
    out_event(o, CTL_EV_FAULT, 0, "%s", g->fault);
}

void guard_estop(guard *g, motion *m, loop_out *o)
{
    refuse_enable(g, o, "bad_state", "not enabled: emergency stop; reset and enable it");
    g->mode = GUARD_ESTOP;
    g->damping = false;
    o->servos = LOOP_SERVOS_OFF;
    motion_end(m, o, "aborted: estop");
}

void guard_disable(guard *g, motion *m, loop_out *o)
{
    if (g->mode == GUARD_ENABLING) refuse_enable(g, o, "bad_state", "not enabled: disabled");
    if (g->mode != GUARD_ENABLED) return;
    g->mode = GUARD_DISABLED;
    o->servos = LOOP_SERVOS_OFF;
    motion_end(m, o, "cancelled: disabled");
}

void guard_stop(guard *g, loop_out *o)
{
    refuse_enable(g, o, "not_running", "not enabled: armd is stopping");
    if (g->mode == GUARD_ENABLED) g->mode = GUARD_DISABLED;
    g->damping = false;
    o->servos = LOOP_SERVOS_OFF;
}

void guard_reset(guard *g, loop_out *o)
{
    if (g->mode != GUARD_FAULT && g->mode != GUARD_ESTOP) return;
    if (g->damping) o->servos = LOOP_SERVOS_OFF;
    g->damping = false;
    g->fault[0] = 0;
    g->mode = GUARD_DISABLED;
}

void guard_enable(guard *g, uint64_t seq, double t, loop_out *o)
{
    if (g->mode == GUARD_ENABLED) {
        out_answer(o, seq, 0, NULL);
        return;
    }
    if (g->mode == GUARD_ENABLING && g->n_enable >= GUARD_ENABLES) {
        out_refuse(o, seq, "busy", "%d enables are waiting already", GUARD_ENABLES);
        return;
    }
    if (g->mode == GUARD_DISABLED) {
        g->mode = GUARD_ENABLING;
        g->n_enable = 0;
        g->servos_asked = false;
        g->enable_t = t;
    }
    if (g->mode == GUARD_ENABLING) g->enable_seq[g->n_enable++] = seq;
}

void guard_step_enable(guard *g, const loop_in *in, const sense *s, const law_params *p, motion *m,
                       torque *t, loop_out *o)
{
    if (g->mode != GUARD_ENABLING) return;
    char why[200], text[300];
    if (g->servos_asked) { /* the servos' answer, from the driver after the last tick */
        if (in->servo_rc != 0) {
            snprintf(text, sizeof text, "could not enable the servos: %s", in->servo_fault.message);
            refuse_enable(g, o, "device", text);
            return;
        }
        g->mode = GUARD_ENABLED;
        motion_hold(m, o, s->q, NULL);
        motion_forget_path(m); /* the path before this enable is not one to go back along */
        torque_restart(t);
        for (int i = 0; i < g->n_enable; i++) out_answer(o, g->enable_seq[i], 0, NULL);
        g->n_enable = 0;
        return;
    }
    if (!s->fresh) { /* wait for a state: reads that keep failing fault the arm (sense) */
        if (in->t - g->enable_t < GUARD_ENABLE_WAIT_S) return;
        snprintf(text, sizeof text,
                 "not enabling: no state could be read from the device for %.0f ms (%d reads "
                 "failed)",
                 (in->t - g->enable_t) * 1e3, s->reads.consecutive);
        refuse_enable(g, o, "device", text);
        return;
    }
    if (sf_check_position(p, s->q, why, sizeof why)) {
        snprintf(text, sizeof text, "not enabling: %s", why);
        refuse_enable(g, o, "limits", text);
        return;
    }
    /* an arm still falling or swinging would fault on the first enabled tick */
    if (sf_check_velocity(p, s->qd, why, sizeof why)) {
        snprintf(text, sizeof text, "not enabling: %s; enable when the arm is at rest", why);
        refuse_enable(g, o, "limits", text);
        return;
    }
    g->servos_asked = true;
    o->servos = LOOP_SERVOS_ON;
}

/* The damping stop is over: torque off. */
static void end_damping(guard *g, torque *t, loop_out *o)
{
    g->damping = false;
    torque_zero(t, o->tau);
    o->write = true;
    o->servos = LOOP_SERVOS_OFF;
}

void guard_step_damping(guard *g, const loop_in *in, const sense *s, const law_params *p,
                        const law_dyn *dy, torque *t, loop_out *o)
{
    if (g->mode != GUARD_FAULT || !g->damping) return;
    g->damp_t += in->dt;
    if (!s->fresh) {
        /* no state this tick: the servos keep the last damping torque (nothing is written);
         * torque off once reads keep failing, as while enabled, or at the timeout */
        if (sense_exhausted(s, p, in->now_ns) || g->damp_t >= p->safety.damp_timeout)
            end_damping(g, t, o);
        return;
    }
    if (sf_damp_done(p, s->qd, g->damp_t) || !torque_damp(t, p, dy, s->q, s->qd, in->dt, o->tau)) {
        end_damping(g, t, o);
        return;
    }
    o->write = true;
}
