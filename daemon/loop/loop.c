/*
 * loop.c — one control tick, top to bottom (see loop.h):
 *   sample -> commands -> desired state -> observer -> guarded torque -> tool -> publish.
 * Control thread only (or lockstep's, or a test's: whoever steps it); no clock, sleep,
 * allocation, lock or log. A non-finite value between the trajectory and the torque is a fault
 * that names it, never a torque sent.
 */
#include "daemon/loop/state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/loop/out.h"

loop *loop_create(int n, double period, const loop_settings *settings, loop_dyn *dyn,
                  cfg_controller law)
{
    loop *L = calloc(1, sizeof *L);
    if (!L) return NULL;
    L->n = n;
    L->period = period;
    L->set = settings;
    L->dyn = dyn;
    sense_init(&L->sense, n, 0);
    motion_init(&L->motion, n);
    guard_init(&L->guard);
    observer_init(&L->observer, n);
    torque_init(&L->torque, n, law);
    tool_init(&L->tool);
    L->published = CTL_DISABLED;
    return L;
}

void loop_set_tool(loop *L, const cfg_tool *cfg)
{
    tool_configure(&L->tool, cfg);
}

void loop_free(loop *L)
{
    free(L);
}

/* The faults a tick's sample and the driver's last answers call for: the estop flag first,
 * a tick that woke far too late, the read, the last write, the host's stall verdict. */
static void take_sample(loop *L, const loop_in *in, loop_out *o)
{
    const law_params *p = &L->set->p;
    bool damp = p->safety.on_fault == ON_FAULT_DAMP;
    guard *g = &L->guard;
    char why[200];
    if (in->estop) guard_estop(g, &L->motion, o);
    if (in->late > CTL_STALL_SECONDS && guard_enabled(g)) {
        snprintf(why, sizeof why, "control thread stalled: a tick was %.0f ms late",
                 in->late * 1e3);
        guard_fault(g, &L->motion, o, damp, false, why);
    }
    bool fault = sense_take_read(&L->sense, p, in, L->period, why, sizeof why);
    if (fault) guard_fault(g, &L->motion, o, damp, L->sense.fresh, why);
    if (in->wrote) {
        if (in->write_rc == 0) observer_applied(&L->observer, L->tau_written);
        if (sense_take_write(&L->sense, p, in, L->wrote_enabled, why, sizeof why) &&
            guard_enabled(g))
            guard_fault(g, &L->motion, o, damp, L->sense.fresh, why);
    }
    if (in->stall) guard_fault(g, &L->motion, o, damp, L->sense.fresh, in->stall_reason);
}

/* Defence in depth before the law runs: a non-finite desired position, velocity or
 * acceleration (whatever got past validation) or gain is a fault naming the joint and the
 * trajectory. Returns true when it faulted. */
static bool refuse_nonfinite(loop *L, const law_params *p, loop_out *o)
{
    const motion *m = &L->motion;
    const struct {
        const double *v;
        const char *what;
    } in[] = {{m->q_des, "desired position"},
              {m->qd_des, "desired velocity"},
              {m->qdd_des, "desired acceleration"},
              {p->kp, "gain kp"},
              {p->kd, "gain kd"},
              {p->ki, "gain ki"}};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        for (int j = 0; j < L->n; j++) {
            if (isfinite(in[i].v[j])) continue;
            uint32_t id;
            double progress, remaining;
            motion_progress(m, &id, &progress, &remaining);
            char why[200];
            snprintf(why, sizeof why, "non-finite %s on %s (trajectory %u)", in[i].what, p->name[j],
                     id);
            guard_fault(&L->guard, &L->motion, o, p->safety.on_fault == ON_FAULT_DAMP,
                        L->sense.fresh, why);
            return true;
        }
    }
    return false;
}

/* The desired state of an enabled arm with a fresh state: the observer (and a collision's
 * reaction), the motion advanced by dt, then the checks of the tick: finite inputs, position,
 * velocity and following error (a fault), the path tolerance (the motion ends). */
static void desired_state(loop *L, const loop_in *in, loop_out *o)
{
    const law_params *p = &L->set->p;
    const sense *s = &L->sense;
    motion *m = &L->motion;
    if (observer_step(&L->observer, p, &L->dyn->dy, L->period, s, &L->guard, m, &L->torque, o))
        return;
    motion_advance(m, o, p, in->dt, s->q);
    if (L->torque.law == CTRL_GRAVITY_COMP && !motion_moving(m))
        motion_hold(m, o, s->q, NULL); /* floating: the desired state follows the arm */
    if (refuse_nonfinite(L, p, o)) return;
    char why[160];
    if (sf_check_tick(p, s->q, s->qd, m->q_des, why, sizeof why)) {
        guard_fault(&L->guard, m, o, p->safety.on_fault == ON_FAULT_DAMP, s->fresh, why);
        return;
    }
    motion_check_path(m, o, p, s->q);
}

/* The tick's torque: the control law while enabled with a fresh state (nothing written
 * without one: the servos keep the last torque), the damping stop after a fault, else zero. A
 * non-finite law torque is a fault, whose torque is then the one written. */
static void guarded_torque(loop *L, const loop_in *in, loop_out *o)
{
    const law_params *p = &L->set->p;
    const sense *s = &L->sense;
    guard *g = &L->guard;
    if (guard_enabled(g)) {
        if (!s->fresh) return;
        const motion *m = &L->motion;
        uint32_t id;
        double progress, remaining;
        motion_progress(m, &id, &progress, &remaining);
        char why[200];
        if (torque_law(&L->torque, p, &L->dyn->dy, s->q, s->qd, m->q_des, m->qd_des, m->qdd_des,
                       in->dt, id, o->tau, why, sizeof why)) {
            o->write = true;
            return;
        }
        guard_fault(g, &L->motion, o, p->safety.on_fault == ON_FAULT_DAMP, s->fresh, why);
    }
    if (g->mode == GUARD_FAULT && g->damping) {
        guard_step_damping(g, in, s, p, &L->dyn->dy, &L->torque, o);
        return;
    }
    torque_zero(&L->torque, o->tau);
    o->write = true;
}

/* The tool frame at q in the base frame (CTL_POSE: x y z [m], quaternion w x y z), by forward
 * kinematics of the model in use (the function table: generated code or the general core);
 * non-finite q gives non-finite numbers (published as null). */
static void tool_pose(loop *L, const double *q, double pose[CTL_POSE])
{
    double T[12];
    const law_dyn *dy = &L->dyn->dy;
    dy->f->fk(dy->m, dy->d, q, T);
    const double R[9] = {T[0], T[1], T[2], T[4], T[5], T[6], T[8], T[9], T[10]};
    pose[0] = T[3];
    pose[1] = T[7];
    pose[2] = T[11];
    dyn_rot_to_quat(R, pose + 3);
}

/* The status snapshot, the tick's sample, a state event when the state changed (the tick's
 * last event), and every event of the tick stamped with the state after it. */
static void publish(loop *L, loop_out *o)
{
    const sense *s = &L->sense;
    const motion *m = &L->motion;
    int n = L->n;
    ctl_state state = guard_state(&L->guard, m);
    if (state != L->published) out_event(o, CTL_EV_STATE, 0, "%s", ctl_state_name(state));
    L->published = state;
    for (int i = 0; i < o->n_events; i++) o->events[i].state = state;

    ctl_status *st = &o->pub.st;
    st->state = state;
    snprintf(st->fault, sizeof st->fault, "%s", L->guard.fault);
    st->time = L->time;
    st->n = n;
    for (int j = 0; j < n; j++) {
        st->q[j] = s->q[j];
        st->qd[j] = s->qd[j];
        st->tau[j] = L->tau_written[j];
        st->q_des[j] = m->q_des[j];
        st->qd_des[j] = m->qd_des[j];
        st->error[j] = m->q_des[j] - s->q[j];
        st->external_torque[j] = L->observer.obs.r[j];
        o->pub.qdd_des[j] = m->qdd_des[j];
    }
    st->controller = L->torque.law;
    motion_progress(m, &st->traj_id, &st->traj_progress, &st->traj_remaining);
    st->ticks = L->tick;
    st->overruns = L->overruns;
    st->late_ticks = L->late_ticks;
    st->failed_reads = s->failed_reads;
    st->failed_writes = s->failed_writes;
    st->saturations = L->torque.saturations;
    st->read_gaps = s->read_gaps;
    st->longest_read_gap_ms = (double)s->longest_gap_ns * 1e-6;
    st->collisions = L->observer.collisions;
    st->rate_hz = 1.0 / L->period;
    tool_publish(&L->tool, &st->tool);
    tool_pose(L, s->q, st->pose);
    memcpy(st->wrench, L->observer.wrench, sizeof st->wrench);

    ctl_sample *sm = &o->sample;
    sm->tick = L->tick;
    sm->time = L->time;
    sm->state_time = (double)(s->t_state_ns - L->t0_ns) * 1e-9;
    sm->fresh = s->fresh;
    sm->state = state;
    size_t bytes = sizeof(double) * (size_t)n;
    memcpy(sm->q, st->q, bytes);
    memcpy(sm->qd, st->qd, bytes);
    memcpy(sm->tau, st->tau, bytes);
    memcpy(sm->tau_meas, s->tau_meas, bytes);
    memcpy(sm->q_des, st->q_des, bytes);
    memcpy(sm->qd_des, st->qd_des, bytes);
    memcpy(sm->ext, st->external_torque, bytes);
    sm->tool = st->tool;
    memcpy(sm->pose, st->pose, sizeof sm->pose);
    memcpy(sm->wrench, st->wrench, sizeof sm->wrench);
}

/* What the tick wrote, remembered for the next one (the write's result and the observer's
 * applied torque come back then). */
static void note_write(loop *L, const loop_out *o)
{
    L->wrote_enabled = o->write && guard_enabled(&L->guard);
    if (o->write) memcpy(L->tau_written, o->tau, sizeof(double) * (size_t)L->n);
}

void loop_step(loop *L, const loop_in *in, loop_out *o)
{
    out_begin(o, in->t);
    /* the read and write clocks start at the first tick (sense_init knew no time yet): before
     * any state came, a gap counts from here, not from the driver clock's zero */
    if (L->tick == 0) sense_forgive(&L->sense, in->now_ns);
    L->tick++;
    L->time = in->t;
    L->t0_ns = in->t0_ns;
    L->overruns += in->skipped;
    L->late_ticks += in->skipped > 0;

    take_sample(L, in, o);
    loop_commands(L, in, o);
    guard_step_enable(&L->guard, in, &L->sense, &L->set->p, &L->motion, &L->torque, o);
    if (guard_enabled(&L->guard) && L->sense.fresh) desired_state(L, in, o);
    guarded_torque(L, in, o);
    if (!guard_enabled(&L->guard)) observer_stop(&L->observer); /* afresh at the next enable */
    tool_step(&L->tool, &in->ds, in->read_rc == 0, guard_enabled(&L->guard), in->t, o);
    note_write(L, o);
    publish(L, o);
}

void loop_stop(loop *L, loop_out *o)
{
    out_begin(o, L->time);
    motion_end(&L->motion, o, "cancelled: stopping");
    guard_stop(&L->guard, o);
    torque_zero(&L->torque, o->tau);
    o->write = true;
    observer_stop(&L->observer);
    tool_step(&L->tool, NULL, false, false, L->time, o);
    note_write(L, o);
    publish(L, o);
}
