/*
 * control_thread.c — armd's control thread: fixed-rate ticks on absolute CLOCK_MONOTONIC
 * deadlines. Each tick: estop flag -> drv_read (+ velocity estimate) -> mailbox commands ->
 * stall request -> collision observer (control_collision.c) -> trajectory sample -> safety
 * checks -> control law -> finiteness check ->
 * limits -> drv_write -> publish (status seqlock, sample ring, event ring). Also the fault and
 * estop reactions. A tick never allocates, locks or logs, and never sends a non-finite value:
 * one anywhere between the trajectory and the torque is a fault that names it.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/control_internal.h"
#include "daemon/rt.h"

/* Publishes an event stamped with the present time and state; text from fmt (NULL = ""). */
void ctl_emit(ctl *c, ctl_event_type type, uint32_t traj_id, const char *fmt, ...)
{
    ctl_rt *r = &c->rt;
    ctl_event *e = &r->ev;
    e->time = r->time;
    e->type = type;
    e->state = (ctl_state)r->state;
    e->traj_id = traj_id;
    e->text[0] = 0;
    if (type != CTL_EV_COLLISION) e->joint = -1; /* a collision event's joint, ext set by it */
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->text, sizeof e->text, fmt, ap);
        va_end(ap);
    }
    e->seq = hf_ring_head(&c->events) + 1;
    hf_ring_push(&c->events, e);
}

/* Changes the state, with a state event when it changed. */
void ctl_set_state(ctl *c, sf_state s)
{
    if (c->rt.state == s) return;
    c->rt.state = s;
    ctl_emit(c, CTL_EV_STATE, 0, "%s", sf_state_name(s));
}

/* ============================================================================== torque */

/* Sets the commanded torque and the limiter's previous torque to zero (nothing written). */
static void zero_tau(ctl *c)
{
    for (int j = 0; j < c->n; j++) c->rt.tau[j] = c->rt.ls.tau_prev[j] = 0;
}

/* Zero torque written, servos disabled, damping stop ended. Control thread, or the main
 * thread while no control thread runs. */
void ctl_torque_off(ctl *c)
{
    drv_fault f;
    zero_tau(c);
    drv_write(c->driver, c->rt.tau, &f);
    c->rt.wrote_this_tick = true;
    drv_enable(c->driver, false, &f);
    c->rt.damping = false;
}

/* The damping stop's torque [N m or N] at the present state, limited over dt [s]; false (and
 * nothing usable in r->tau) when the model gives a non-finite torque. */
static bool damp_torque(ctl *c, const law_params *p, double dt)
{
    ctl_rt *r = &c->rt;
    law_damp(p, &c->dyn, r->q, r->qd, r->tau);
    if (ctl_first_nonfinite(r->tau, c->n) >= 0) return false;
    law_limit(p, dt, &r->ls, r->tau);
    return true;
}

/* The fault reaction: first the torque (off, or the damping stop's first torque when damp and
 * the arm was enabled with a fresh state), then the state and events. Ignored in fault or
 * estop. */
static void fault_with(ctl *c, bool damp, const char *fmt, va_list ap)
{
    ctl_rt *r = &c->rt;
    if (r->state == SF_FAULT || r->state == SF_ESTOP) return;
    const law_params *p = ctl_live_params(c);
    bool was_enabled = r->state == SF_HOLDING || r->state == SF_MOVING;
    if (was_enabled && damp && r->fresh && damp_torque(c, p, c->period)) {
        drv_fault f;
        drv_write(c->driver, r->tau, &f);
        r->wrote_this_tick = true;
        r->damping = true;
        r->damp_t = 0;
    } else {
        ctl_torque_off(c);
    }
    vsnprintf(r->fault, sizeof r->fault, fmt, ap);
    r->state = SF_FAULT; /* before the events, so they carry it */
    char why[200];
    snprintf(why, sizeof why, "aborted: fault: %s", r->fault);
    ctl_drop_motion(c, why);
    ctl_emit(c, CTL_EV_FAULT, 0, "%s", r->fault);
    ctl_emit(c, CTL_EV_STATE, 0, "%s", sf_state_name(SF_FAULT));
}

/* A fault with the configured reaction ([safety] on_fault). */
void ctl_fault(ctl *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fault_with(c, ctl_live_params(c)->safety.on_fault == ON_FAULT_DAMP, fmt, ap);
    va_end(ap);
}

/* A fault that ends in the damping stop whatever on_fault says (collision_reaction = damp). */
void ctl_fault_damped(ctl *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fault_with(c, true, fmt, ap);
    va_end(ap);
}

/* Emergency stop: torque off, every trajectory aborted, state estop. */
void ctl_estop_now(ctl *c)
{
    ctl_torque_off(c);
    ctl_drop_motion(c, "aborted: estop");
    ctl_set_state(c, SF_ESTOP);
}

/* ============================================================================ a tick */

/* Velocity [rad/s or m/s]: the device's, or the differentiated position through a
 * first-order low-pass qd += alpha (raw - qd), alpha = dt / (dt + 1 / (2 pi f)). Also takes
 * the read position as the present one. */
static void estimate_velocity(ctl *c, const law_params *p)
{
    ctl_rt *r = &c->rt;
    bool first = r->t_prev_ns == 0;
    uint64_t now = r->ds.host_time_ns ? r->ds.host_time_ns : (uint64_t)ctl_mono_ns();
    double dt = first ? c->period : (double)((int64_t)now - (int64_t)r->t_prev_ns) * 1e-9;
    if (!(dt > 0)) dt = c->period;
    r->sample_dt = dt;
    if (p->velocity_source == VELOCITY_DEVICE && r->ds.has_velocity) {
        for (int j = 0; j < c->n; j++) r->qd[j] = r->ds.qd[j];
    } else {
        double alpha = 1;
        if (p->velocity_filter_hz > 0) alpha = dt / (dt + 1 / (2 * M_PI * p->velocity_filter_hz));
        for (int j = 0; j < c->n; j++) {
            double raw = first ? 0 : (r->ds.q[j] - r->q_prev[j]) / dt;
            r->qd[j] += alpha * (raw - r->qd[j]);
        }
    }
    for (int j = 0; j < c->n; j++) r->q[j] = r->q_prev[j] = r->ds.q[j];
    r->t_prev_ns = now;
}

/* Before the thread starts: reads the first state, holds there and publishes it. */
int ctl_read_initial_state(ctl *c, ctl_error *err)
{
    ctl_rt *r = &c->rt;
    drv_fault f;
    if (drv_read(c->driver, &r->ds, &f) != 0) {
        ctl_set_err(err, "device", "could not read the initial state: %s: %s",
                    drv_status_name(f.status), f.message);
        return -1;
    }
    estimate_velocity(c, ctl_live_params(c));
    r->fresh = true;
    int64_t now = ctl_mono_ns();
    sf_read_ok(&r->reads, now);
    sf_read_ok(&r->writes, now);
    ctl_hold_at(c, r->q);
    ctl_publish(c);
    return 0;
}

/* Fills the status snapshot (seqlock) and the tick's sample (ring) from the thread state. */
void ctl_publish(ctl *c)
{
    ctl_rt *r = &c->rt;
    ctl_status *s = &r->pub.st;
    int n = c->n;
    s->state = (ctl_state)r->state;
    memcpy(s->fault, r->fault, sizeof s->fault);
    s->time = r->time;
    s->n = n;
    for (int j = 0; j < n; j++) {
        s->q[j] = r->q[j];
        s->qd[j] = r->qd[j];
        s->tau[j] = r->tau[j];
        s->q_des[j] = r->q_des[j];
        s->qd_des[j] = r->qd_des[j];
        s->error[j] = r->q_des[j] - r->q[j];
        r->pub.qdd_des[j] = r->qdd_des[j];
    }
    s->controller = r->law;
    s->traj_id = 0;
    s->traj_progress = 0;
    s->traj_remaining = 0;
    if (r->active >= 0) {
        const traj_plan *pl = &c->plans[r->active];
        double rem = fmax(0, pl->duration - r->plan_t);
        for (int i = 0; i < r->n_queue; i++) rem += c->plans[r->queue[i]].duration;
        s->traj_id = pl->id;
        s->traj_progress = pl->duration > 0 ? fmin(1, r->plan_t / pl->duration) : 1;
        s->traj_remaining = rem;
    } else if (r->stopping) {
        s->traj_id = r->stop_id;
        s->traj_progress = r->stop.duration > 0 ? fmin(1, r->stop_t / r->stop.duration) : 1;
        s->traj_remaining = fmax(0, r->stop.duration - r->stop_t);
    }
    s->ticks = r->tick;
    s->overruns = r->overruns;
    s->late_ticks = r->late_ticks;
    s->failed_reads = r->failed_reads;
    s->failed_writes = r->failed_writes;
    s->saturations = r->saturations;
    s->read_gaps = r->read_gaps;
    s->longest_read_gap_ms = (double)r->longest_gap_ns * 1e-6;
    memcpy(s->external_torque, r->obs.r, sizeof(double) * (size_t)n);
    s->collisions = r->collisions;
    s->rate_hz = 1.0 / c->period;
    hf_seqlock_write(&c->status, &r->pub);

    ctl_sample *m = &r->sample;
    m->tick = r->tick;
    m->time = r->time;
    m->state_time =
        (double)((int64_t)r->t_prev_ns - atomic_load_explicit(&c->t0_ns, memory_order_relaxed)) *
        1e-9;
    m->fresh = r->fresh;
    m->state = s->state;
    memcpy(m->q, s->q, sizeof(double) * (size_t)n);
    memcpy(m->qd, s->qd, sizeof(double) * (size_t)n);
    memcpy(m->tau, s->tau, sizeof(double) * (size_t)n);
    memcpy(m->tau_meas, r->ds.tau, sizeof(double) * (size_t)n);
    memcpy(m->q_des, s->q_des, sizeof(double) * (size_t)n);
    memcpy(m->qd_des, s->qd_des, sizeof(double) * (size_t)n);
    memcpy(m->ext, s->external_torque, sizeof(double) * (size_t)n);
    hf_ring_push(&c->samples, m);
}

/* Takes the result rc of the tick's drv_read at now_ns: the new state and velocity (closing a
 * read gap), or on failure counts it and faults on a device alert or once the failures exceed
 * both max_failed_reads and max_read_gap_ms. Sets r->fresh. */
static void take_read(ctl *c, const law_params *p, int rc, const drv_fault *f, int64_t now_ns)
{
    ctl_rt *r = &c->rt;
    r->fresh = rc == 0;
    if (r->fresh) {
        if (r->in_gap) {
            int64_t gap = now_ns - r->reads.last_ok_ns;
            if (gap > r->longest_gap_ns) r->longest_gap_ns = gap;
            r->in_gap = false;
        }
        sf_read_ok(&r->reads, now_ns);
        estimate_velocity(c, p);
        return;
    }
    r->failed_reads++;
    if (!r->in_gap) {
        r->in_gap = true;
        r->read_gaps++;
    }
    if (f->status == DRV_EALERT || f->status == DRV_EDEVICE) {
        if (f->device_id >= 0)
            ctl_fault(c, "device alert from device %d: %s", f->device_id, f->message);
        else
            ctl_fault(c, "device alert: %s", f->message);
    } else if (sf_read_failed(&r->reads, p, now_ns)) {
        ctl_fault(c, "%d consecutive failed reads, no state for %.1f ms (last: %s: %s)",
                  r->reads.consecutive, (double)(now_ns - r->reads.last_ok_ns) * 1e-6,
                  drv_status_name(f->status), f->message);
    }
}

/* The active trajectory's id for a message (0 = none). */
static uint32_t active_traj_id(const ctl *c)
{
    const ctl_rt *r = &c->rt;
    if (r->active >= 0) return c->plans[r->active].id;
    return r->stopping ? r->stop_id : 0;
}

/* Defence in depth before the law runs: a non-finite desired position, velocity or
 * acceleration (whatever got past validation) or gain is a fault naming the joint and the
 * trajectory. Returns true when it faulted. */
static bool refuse_nonfinite_inputs(ctl *c, const law_params *p)
{
    ctl_rt *r = &c->rt;
    const struct {
        const double *v;
        const char *what;
    } in[] = {{r->q_des, "desired position"},
              {r->qd_des, "desired velocity"},
              {r->qdd_des, "desired acceleration"},
              {p->kp, "gain kp"},
              {p->kd, "gain kd"},
              {p->ki, "gain ki"}};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        int j = ctl_first_nonfinite(in[i].v, c->n);
        if (j < 0) continue;
        ctl_fault(c, "non-finite %s on %s (trajectory %u)", in[i].what, p->name[j],
                  active_traj_id(c));
        return true;
    }
    return false;
}

/* The tick's torque [N m or N] into r->tau: the control law while enabled (after the motion
 * step and the safety checks), the damping stop after a fault, else zero. A non-finite input
 * or law output is a fault, never a silent zero torque (law_limit's clamp is saturation, not
 * a NaN filter). */
static void compute_torque(ctl *c, const law_params *p, double dt, int64_t now_ns)
{
    ctl_rt *r = &c->rt;
    if (r->state == SF_HOLDING || r->state == SF_MOVING) {
        if (!r->fresh) return;
        if (ctl_observe_collisions(c, p, r->sample_dt)) return;
        ctl_advance_motion(c, p, dt);
        if (r->law == CTRL_GRAVITY_COMP && r->state == SF_HOLDING)
            ctl_hold_at(c, r->q); /* floating: the desired state follows the arm */
        if (refuse_nonfinite_inputs(c, p)) return;
        char why[160];
        if (sf_check_tick(p, r->q, r->qd, r->q_des, why, sizeof why)) {
            ctl_fault(c, "%s", why);
            return;
        }
        ctl_check_path(c, p);
        law_compute(r->law, p, &c->dyn, r->q, r->qd, r->q_des, r->qd_des, r->qdd_des, dt, &r->ls,
                    r->tau);
        if (r->floating) law_add_damping(p, r->qd, r->tau); /* a collision's float */
        int j = ctl_first_nonfinite(r->tau, c->n);
        if (j >= 0) {
            ctl_fault(c, "non-finite torque on %s from the %s law (trajectory %u)", p->name[j],
                      cfg_controller_name(r->law), active_traj_id(c));
            return;
        }
        r->saturations += (uint64_t)law_limit(p, dt, &r->ls, r->tau);
    } else if (r->state == SF_FAULT && r->damping) {
        r->damp_t += dt;
        if (!r->fresh) {
            /* no state this tick: the servos keep the last damping torque (nothing is written);
             * torque off once reads keep failing, as while enabled, or at the timeout */
            if (sf_reads_exhausted(&r->reads, p, now_ns) || r->damp_t >= p->safety.damp_timeout)
                ctl_torque_off(c);
        } else if (sf_damp_done(p, r->qd, r->damp_t) || !damp_torque(c, p, dt)) {
            ctl_torque_off(c);
        }
    } else {
        zero_tau(c);
    }
    if (r->obs.running && r->state != SF_HOLDING && r->state != SF_MOVING)
        coll_stop(&r->obs, c->n); /* started afresh at the next enable */
}

/* Writes r->tau unless already written this tick or there is nothing safe to write (enabled
 * without a fresh state, or damping without one). Failed writes while enabled are counted on
 * their own (a good read does not excuse a write that keeps failing) and fault with the same
 * tolerance as reads. */
static void write_torque(ctl *c, const law_params *p, int64_t now_ns)
{
    ctl_rt *r = &c->rt;
    if (r->wrote_this_tick || !(r->fresh || r->state == SF_DISABLED || r->state == SF_ESTOP ||
                                (r->state == SF_FAULT && !r->damping)))
        return;
    drv_fault f;
    if (drv_write(c->driver, r->tau, &f) == 0) {
        sf_read_ok(&r->writes, now_ns);
        if (r->obs.running) coll_applied(&r->obs, r->tau, c->n);
        return;
    }
    if (r->state != SF_HOLDING && r->state != SF_MOVING) return;
    r->failed_writes++;
    if (f.status == DRV_EALERT || f.status == DRV_EDEVICE)
        ctl_fault(c, "device alert on write: %s", f.message);
    else if (sf_read_failed(&r->writes, p, now_ns))
        ctl_fault(c, "%d consecutive failed writes over %.1f ms (last: %s: %s)",
                  r->writes.consecutive, (double)(now_ns - r->writes.last_ok_ns) * 1e-6,
                  drv_status_name(f.status), f.message);
}

/* One control tick; dt is the time since the previous one [s] (more than a period after an
 * overrun). Everything goes out through ctl_publish() and the acknowledgement counter. */
static void tick(ctl *c, double dt)
{
    ctl_rt *r = &c->rt;
    r->wrote_this_tick = false;
    if (atomic_exchange_explicit(&c->estop_request, 0, memory_order_acquire)) ctl_estop_now(c);

    drv_fault f;
    int64_t t0 = ctl_mono_ns();
    int rc = drv_read(c->driver, &r->ds, &f);
    int64_t t1 = ctl_mono_ns();
    tt_add(&c->read, t1 - t0);
    take_read(c, ctl_live_params(c), rc, &f, t1);
    uint64_t acked = ctl_process_commands(c);
    const law_params *p = ctl_live_params(c);
    if (atomic_exchange_explicit(&c->stall_request, 0, memory_order_acquire))
        ctl_fault(c, "%s", c->stall_reason);
    compute_torque(c, p, dt, t1);
    int64_t t2 = ctl_mono_ns();
    tt_add(&c->compute, t2 - t1);
    write_torque(c, p, t2);
    tt_add(&c->write, ctl_mono_ns() - t2);
    ctl_publish(c);
    if (acked) {
        atomic_store_explicit(&c->acked, acked, memory_order_release);
        /* wake the main loop: a non-blocking eventfd write (EAGAIN only if it is readable
         * already); the main loop also polls on a timer */
        uint64_t one = 1;
        ssize_t w = write(c->notify_fd, &one, sizeof one);
        (void)w;
    }
}

/* The control thread: waits for go, then ticks on absolute deadlines (counting skipped
 * periods as overruns, faulting on a late wake-up while enabled) until asked to stop; then
 * the safe shutdown. */
void *ctl_thread_main(void *arg)
{
    ctl *c = arg;
    ctl_rt *r = &c->rt;
    pthread_setname_np(pthread_self(), "armd-control"); /* for ps/top, and to find it */
    rt_prefault_stack(128 * 1024);
    while (!atomic_load_explicit(&c->go, memory_order_acquire)) ctl_nap_100us();
    int64_t start = ctl_mono_ns(), next = start;
    atomic_store_explicit(&c->t0_ns, start, memory_order_release);
    while (!atomic_load_explicit(&c->stop_request, memory_order_acquire)) {
        next += c->period_ns;
        struct timespec ts = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        int64_t now = ctl_mono_ns(), late = now - next;
        tt_add(&c->late, late);
        int64_t skipped = late >= c->period_ns ? late / c->period_ns : 0;
        next += skipped * c->period_ns;
        r->overruns += (uint64_t)skipped;
        r->late_ticks += skipped > 0;
        double dt = c->period * (double)(1 + skipped);
        r->time = (double)(next - start) * 1e-9;
        r->tick++;
        if (late > (int64_t)(CTL_STALL_SECONDS * 1e9) &&
            (r->state == SF_HOLDING || r->state == SF_MOVING))
            ctl_fault(c, "control thread stalled: a tick was %.0f ms late", (double)late * 1e-6);
        tick(c, dt);
        atomic_fetch_add_explicit(&c->ticks, 1, memory_order_release);
    }
    /* safe shutdown: torque off first, then the state */
    ctl_torque_off(c);
    ctl_drop_motion(c, "cancelled: stopping");
    if (r->state != SF_FAULT && r->state != SF_ESTOP) ctl_set_state(c, SF_DISABLED);
    ctl_publish(c);
    atomic_store_explicit(&c->exited, 1, memory_order_release);
    return NULL;
}
