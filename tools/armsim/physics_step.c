/*
 * physics_step.c — the stepping of the simulated arm: classical RK4 of the forward dynamics at a
 * fixed step, on whichever clock the caller drives. physics_advance_to is the one place a step
 * is taken: the armsim program's real-time thread (physics_start) calls it on CLOCK_MONOTONIC,
 * the in-process bus (simbus.c) on simulated time. Runs on that one thread; the commands and
 * the published state cross to the device side under p->lock.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

#include "tools/armsim/physics_impl.h"
#include "tools/armsim/simclock.h"

/* Longest lateness caught up step by step in one wake-up [s]; beyond it the missed time is
 * skipped (the arm freezes for it). The host stalls for several ms at times (hypervisor): a
 * plant that skipped those would drift from real time, and the truth from armd's clock. */
#define MAX_CATCHUP_S 0.05

/* End-stop torque [N m|N] on joint j: a spring-damper acting only beyond lower/upper, never
 * pulling the joint into the stop. */
static double endstop(const physics *p, int j, double q, double qd)
{
    double f = 0.0;
    if (q > p->upper[j]) {
        f = -p->k_stop[j] * (q - p->upper[j]) - p->c_stop[j] * qd;
        if (f > 0.0) f = 0.0;
    } else if (q < p->lower[j]) {
        f = -p->k_stop[j] * (q - p->lower[j]) - p->c_stop[j] * qd;
        if (f < 0.0) f = 0.0;
    }
    return f;
}

/* Accelerations qdd = FD(q, qd, tau_held + tau_stop + tau_wall) with gravity, armature,
 * friction; tau_held is what is held over the step (motor + pushes). Adds w x the wall's joint
 * torque to ext and w x its force [N] to *wall_force (the RK4 stage weight). A flexible arm: q,
 * qd, qdd are over all nx coordinates and FD is dyn_flex_forward (El-Rayyes 1990 eq 2.9), the
 * joint torques acting on the joint coordinates; the wall's contact point is the rigid arm's. */
static int accel(physics *p, const double *q, const double *qd, const double *tau_held, double *qdd,
                 double w, double *ext, double *wall_force)
{
    double tau[CFG_MAX_JOINTS], wall[CFG_MAX_JOINTS];
    *wall_force += w * contact_wall_torque(&p->contact, p->model, p->data, q, qd, wall);
    for (int j = 0; j < p->n; j++) {
        tau[j] = tau_held[j] + wall[j] + endstop(p, j, q[j], qd[j]);
        ext[j] += w * wall[j];
    }
    if (p->flex.m) return dyn_flex_forward(p->flex.m, p->flex.d, q, qd, tau, NULL, DYN_ALL, qdd);
    return dyn_forward_aba(p->model, p->data, q, qd, tau, NULL, DYN_ALL, qdd);
}

/* One classical Runge-Kutta (RK4) step of x = (q, qd), x' = (qd, FD(q, qd, tau + push + wall)),
 * with the motor torque tau and the pushes held constant over the step and the wall evaluated at
 * every stage (seed 000: RK4 simulation via M^-1 (tau - C - G)). ext receives the external
 * joint torque of the step (push + the RK4-weighted mean of the wall's stage torques, the
 * torque that acted in effect) [N m|N], *wall_force the same mean of the wall force [N]. */
static int rk4_step(physics *p, double h, const double *tau, const double *push, double *ext,
                    double *wall_force)
{
    const int n = p->nx, nj = p->n;
    double a1[FLEXSIM_MAX_X], a2[FLEXSIM_MAX_X], a3[FLEXSIM_MAX_X], a4[FLEXSIM_MAX_X];
    double v2[FLEXSIM_MAX_X], v3[FLEXSIM_MAX_X], v4[FLEXSIM_MAX_X], x[FLEXSIM_MAX_X];
    double held[CFG_MAX_JOINTS], wall[CFG_MAX_JOINTS] = {0};
    *wall_force = 0.0;
    for (int j = 0; j < nj; j++) held[j] = tau[j] + push[j];
    int rc = accel(p, p->q, p->qd, held, a1, 1.0 / 6.0, wall, wall_force);
    for (int j = 0; j < n; j++) {
        x[j] = p->q[j] + 0.5 * h * p->qd[j];
        v2[j] = p->qd[j] + 0.5 * h * a1[j];
    }
    rc |= accel(p, x, v2, held, a2, 2.0 / 6.0, wall, wall_force);
    for (int j = 0; j < n; j++) {
        x[j] = p->q[j] + 0.5 * h * v2[j];
        v3[j] = p->qd[j] + 0.5 * h * a2[j];
    }
    rc |= accel(p, x, v3, held, a3, 2.0 / 6.0, wall, wall_force);
    for (int j = 0; j < n; j++) {
        x[j] = p->q[j] + h * v3[j];
        v4[j] = p->qd[j] + h * a3[j];
    }
    rc |= accel(p, x, v4, held, a4, 1.0 / 6.0, wall, wall_force);
    for (int j = 0; j < nj; j++) ext[j] = push[j] + wall[j];
    if (rc != 0) return -1;
    for (int j = 0; j < n; j++) {
        p->q[j] += h / 6.0 * (p->qd[j] + 2.0 * v2[j] + 2.0 * v3[j] + v4[j]);
        p->qd[j] += h / 6.0 * (a1[j] + 2.0 * a2[j] + 2.0 * a3[j] + a4[j]);
    }
    return 0;
}

/* One physics step of p->dt: a rigid arm one RK4 step; a flexible arm flex.substeps RK4 steps
 * of dt / substeps (the highest mode resolved, flexsim.h), ext and *wall_force their means. */
static int physics_step(physics *p, const double *tau, const double *push, double *ext,
                        double *wall_force)
{
    const int s = p->flex.substeps;
    if (s <= 1) return rk4_step(p, p->dt, tau, push, ext, wall_force);
    double e[CFG_MAX_JOINTS], wf;
    int rc = 0;
    for (int j = 0; j < p->n; j++) ext[j] = 0.0;
    *wall_force = 0.0;
    for (int i = 0; i < s; i++) {
        rc |= rk4_step(p, p->dt / s, tau, push, e, &wf);
        for (int j = 0; j < p->n; j++) ext[j] += e[j] / s;
        *wall_force += wf / s;
    }
    return rc;
}

/* One step of dt with the brake engaged: the state stands still (qd = 0 over every coordinate),
 * nothing is integrated; ext and *wall_force are the pushes and the wall at the held pose, which
 * the brake takes. */
static void hold_step(physics *p, const double *push, double *ext, double *wall_force)
{
    double wall[CFG_MAX_JOINTS];
    for (int i = 0; i < p->nx; i++) p->qd[i] = 0.0;
    *wall_force = contact_wall_torque(&p->contact, p->model, p->data, p->q, p->qd, wall);
    for (int j = 0; j < p->n; j++) ext[j] = push[j] + wall[j];
}

/* Sums the motor torque per joint from the actuators active at time now_ns; returns whether the
 * brake is engaged. */
static bool gather_commands(physics *p, uint64_t now_ns, double *tau, double tau_act[][CFG_MAX_IDS])
{
    pthread_mutex_lock(&p->lock);
    bool braked = p->brake_engaged;
    for (int j = 0; j < p->n; j++) {
        tau[j] = 0.0;
        for (int k = 0; k < p->n_ids[j]; k++) {
            const actuator *a = &p->act[j][k];
            bool on = a->active && (a->expiry_ns == 0 || now_ns < a->expiry_ns);
            tau_act[j][k] = on ? a->tau : 0.0;
            tau[j] += tau_act[j][k];
        }
    }
    pthread_mutex_unlock(&p->lock);
    return braked;
}

/* Makes the state after a step visible to the device side. */
static void publish(physics *p, double t, const double *tau, double tau_act[][CFG_MAX_IDS])
{
    pthread_mutex_lock(&p->lock);
    p->pub.t = t;
    memcpy(p->pub.q, p->q, sizeof(double) * (size_t)p->n);
    memcpy(p->pub.qd, p->qd, sizeof(double) * (size_t)p->n);
    memcpy(p->pub.tau, tau, sizeof(double) * (size_t)p->n);
    memcpy(p->pub.tau_act, tau_act, sizeof(double) * CFG_MAX_IDS * (size_t)p->n);
    pthread_mutex_unlock(&p->lock);
}

/* One step of dt from step k's start: the actuators' torque and the brake at that time (an
 * expired actuator gives none), the pushes, RK4 (none while braked); then the truth row and the
 * published state at its end. */
static void step_once(physics *p)
{
    uint64_t t_ns = p->skipped_ns + p->k * p->dt_ns; /* the step's start since t = 0 */
    bool braked = gather_commands(p, p->start_ns + t_ns, p->tau, p->tau_act);
    contact_push_torque(&p->contact, t_ns, p->push);
    contact_tool_force_torque(&p->contact, p->model, p->data, p->q, t_ns, p->push);
    if (braked)
        hold_step(p, p->push, p->ext, &p->wall_force);
    else if (physics_step(p, p->tau, p->push, p->ext, &p->wall_force) != 0)
        p->stats.solver_failures++;
    p->k++;
    double t = (double)(t_ns + p->dt_ns) * 1e-9;
    if (p->truth) {
        dyn_fk(p->model, p->data, p->q, NULL, p->tool);
        flexsim_truth(&p->flex, p->q, p->extra);
        truth_push(p->truth, t, (double)p->start_ns * 1e-9 + t, p->q, p->qd, p->tau, p->ext,
                   p->wall_force, p->tool, p->extra);
    }
    publish(p, t, p->tau, p->tau_act);
}

/* Puts t = 0 at start_ns and writes the truth's first row (the initial state). */
void physics_begin(physics *p, uint64_t start_ns)
{
    p->start_ns = start_ns;
    /* the first row: the state at t = 0 and the wall's force there (no step, no push yet) */
    p->wall_force = contact_wall_torque(&p->contact, p->model, p->data, p->q, p->qd, p->ext);
    if (!p->truth) return;
    dyn_fk(p->model, p->data, p->q, NULL, p->tool);
    flexsim_truth(&p->flex, p->q, p->extra);
    truth_push(p->truth, 0.0, (double)start_ns * 1e-9, p->q, p->qd, p->tau, p->ext, p->wall_force,
               p->tool, p->extra);
}

/* Steps while the next step ends at or before t_ns; returns the steps taken. */
uint64_t physics_advance_to(physics *p, uint64_t t_ns)
{
    uint64_t done = 0;
    while (p->start_ns + p->skipped_ns + (p->k + 1) * p->dt_ns <= t_ns) {
        step_once(p);
        done++;
    }
    if (done) {
        pthread_mutex_lock(&p->lock);
        p->stats.steps = p->k;
        p->stats.run_s = (double)(physics_time_ns(p) - p->start_ns) * 1e-9;
        pthread_mutex_unlock(&p->lock);
    }
    return done;
}

/* The end of the last step on the caller's clock [ns]. */
uint64_t physics_time_ns(const physics *p)
{
    return p->start_ns + p->skipped_ns + p->k * p->dt_ns;
}

/* The real-time thread: absolute deadlines start + k dt on CLOCK_MONOTONIC; when late, up to
 * MAX_CATCHUP_S worth of steps per wake-up, beyond that the missed time is skipped (the arm
 * freezes for it). The steps themselves are physics_advance_to's. */
static void *physics_thread(void *arg)
{
    physics *p = arg;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    const uint64_t max_catchup = (uint64_t)ceil(MAX_CATCHUP_S / p->dt);
    while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
        uint64_t next = physics_time_ns(p) + p->dt_ns;
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        uint64_t now = armsim_now_ns();
        uint64_t due = (now - p->start_ns - p->skipped_ns) / p->dt_ns;
        uint64_t todo = due > p->k ? due - p->k : 1;
        if (todo > 1) p->stats.late_wakeups++;
        if (todo > max_catchup) {
            p->skipped_ns += (todo - max_catchup) * p->dt_ns;
            p->stats.skips++;
            todo = max_catchup;
        }
        physics_advance_to(p, physics_time_ns(p) + todo * p->dt_ns);
        pthread_mutex_lock(&p->lock);
        p->stats.skipped_s = (double)p->skipped_ns * 1e-9;
        pthread_mutex_unlock(&p->lock);
    }
    return NULL;
}

/* physics_begin on CLOCK_MONOTONIC, then the real-time thread. */
int physics_start(physics *p, uint64_t start_ns)
{
    physics_begin(p, start_ns);
    p->realtime = true;
    if (pthread_create(&p->thread, NULL, physics_thread, p) != 0) return -1;
    p->running = true;
    return 0;
}

/* Stops and joins the real-time thread (nothing when it does not run). */
void physics_stop(physics *p)
{
    if (!p || !p->running) return;
    atomic_store(&p->stop, true);
    pthread_join(p->thread, NULL);
    p->running = false;
}
