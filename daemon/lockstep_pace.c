/*
 * lockstep_pace.c — when simulated time runs (see lockstep_pace.h). Main thread only.
 */
#include "daemon/lockstep_pace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH       200          /* ticks between two deliveries of answers and telemetry */
#define BACKLOG_MAX (256 * 1024) /* a subscriber this far behind holds simulated time [bytes] */

/* A sim.run waiting for its time. */
typedef struct {
    bool used;
    double target; /* control time to reach [s] */
    ctl_reply_to to;
} pace_run;

struct lockstep_pace {
    struct ev_loop *loop;
    lockstep *ls;
    ctl *c;
    double speed; /* x real time; 0 = as fast as it computes */
    bool paused;
    double period; /* [s] */
    ev_prepare prepare;
    ev_idle idle;
    ev_timer timer;
    double mono0; /* pacing origin: CLOCK_MONOTONIC [s] (a wall clock step moves no pace) ... */
    double sim0;  /* ... and the control time then */
    pace_run runs[LOCKSTEP_RUNS];
    lockstep_hooks hooks;
};

/* CLOCK_MONOTONIC now [s] (libev's ev_now() follows the wall clock). */
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The furthest control time a sim.run waits for, or -1. */
static double furthest_run(const lockstep_pace *p)
{
    double t = -1;
    for (int i = 0; i < LOCKSTEP_RUNS; i++)
        if (p->runs[i].used && p->runs[i].target > t) t = p->runs[i].target;
    return t;
}

/* How many ticks may run now (0: none; then *wait_s > 0 when a timer should look again). */
static int ticks_due(lockstep_pace *p, double *wait_s)
{
    *wait_s = 0;
    if (p->hooks.backlog && p->hooks.backlog(p->hooks.ctx) > BACKLOG_MAX) return 0;
    double t = lockstep_time(p->ls);
    if (p->paused) {
        double target = furthest_run(p);
        if (target > t + 1e-9) return (int)ceil((target - t) / p->period - 1e-6);
        return ctl_waiting(p->c) ? 1 : 0; /* a command is answered after its tick */
    }
    if (p->speed > 0) {
        double due = p->sim0 + p->speed * (mono_now() - p->mono0);
        if (t >= due) {
            *wait_s = (t - due + p->period) / p->speed;
            return 0;
        }
        return (int)ceil((due - t) / p->period - 1e-6);
    }
    return BATCH;
}

/* Answers the sim.run requests whose time has come. */
static void answer_runs(lockstep_pace *p)
{
    double t = lockstep_time(p->ls);
    for (int i = 0; i < LOCKSTEP_RUNS; i++) {
        pace_run *r = &p->runs[i];
        if (!r->used || t < r->target - 1e-9) continue;
        r->used = false;
        ctl_result res;
        memset(&res, 0, sizeof res);
        if (r->to.fn) r->to.fn(r->to.ctx, 0, NULL, &res);
    }
}

/* A batch of ticks, then the answers and telemetry they made. */
static void idle_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)loop, (void)revents;
    lockstep_pace *p = w->data;
    double wait;
    int k = ticks_due(p, &wait), ran = 0;
    if (k > BATCH) k = BATCH;
    /* one tick at a time while a sim.run waits: a tick that skipped periods (a read that ran
     * past its deadline) must not carry simulated time past the target */
    for (int i = 0; i < k; i++, ran++) {
        if (i > 0 && p->paused && ticks_due(p, &wait) == 0) break;
        lockstep_tick(p->ls);
    }
    k = ran;
    if (k) lockstep_flush(p->ls);
    if (k && p->hooks.after) p->hooks.after(p->hooks.ctx);
    answer_runs(p);
}

/* Before the loop waits: ticks to run keep the idle watcher on; otherwise a timer (paced) or
 * the next event (a request, a reader catching up) looks again. */
static void prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)revents;
    lockstep_pace *p = w->data;
    double wait;
    if (ticks_due(p, &wait) > 0) {
        ev_idle_start(loop, &p->idle);
        return;
    }
    ev_idle_stop(loop, &p->idle);
    if (wait > 0 && !ev_is_active(&p->timer)) {
        ev_timer_set(&p->timer, wait, 0);
        ev_timer_start(loop, &p->timer);
    }
}

/* The paced wait is over (prepare_cb looks again). */
static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)w, (void)revents;
}

lockstep_pace *lockstep_pace_start(struct ev_loop *loop, lockstep *ls, ctl *c, double speed,
                                   bool paused)
{
    lockstep_pace *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->loop = loop;
    p->ls = ls;
    p->c = c;
    p->speed = speed;
    p->paused = paused;
    p->period = 1.0 / ctl_config(c)->rate_hz;
    p->mono0 = mono_now();
    p->sim0 = lockstep_time(ls);
    ev_prepare_init(&p->prepare, prepare_cb);
    ev_idle_init(&p->idle, idle_cb);
    ev_init(&p->timer, timer_cb);
    p->prepare.data = p->idle.data = p->timer.data = p;
    ev_prepare_start(loop, &p->prepare);
    return p;
}

void lockstep_pace_hooks(lockstep_pace *p, const lockstep_hooks *h)
{
    p->hooks = *h;
}

int lockstep_pace_run(void *ctx, double seconds, const ctl_reply_to *to, ctl_error *err)
{
    lockstep_pace *p = ctx;
    for (int i = 0; i < LOCKSTEP_RUNS; i++) {
        if (p->runs[i].used) continue;
        p->runs[i] = (pace_run){true, lockstep_time(p->ls) + seconds, *to};
        return 0;
    }
    ctl_error_set(err, "busy", "%d sim.run requests are waiting already", LOCKSTEP_RUNS);
    return -1;
}

void lockstep_pace_stop(lockstep_pace *p)
{
    if (!p) return;
    for (int i = 0; i < LOCKSTEP_RUNS; i++) { /* each waiting sim.run gets its answer */
        pace_run *r = &p->runs[i];
        if (!r->used) continue;
        r->used = false;
        ctl_error e;
        ctl_error_set(&e, "stopping", "armd is stopping; simulated time stopped at %.6f s",
                      lockstep_time(p->ls));
        if (r->to.fn) r->to.fn(r->to.ctx, -1, &e, NULL);
    }
    ev_prepare_stop(p->loop, &p->prepare);
    ev_idle_stop(p->loop, &p->idle);
    ev_timer_stop(p->loop, &p->timer);
    free(p);
}
