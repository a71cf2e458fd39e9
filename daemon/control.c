/*
 * control.c — armd's controller, main-thread side of its life (control.h): create, start,
 * stop and free; the status, sample and event readers; liveness and stall detection. The
 * control thread itself is in control_thread.c, the commands in control_cmd.c; the shared
 * struct in control_internal.h.
 */
#include "daemon/control.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "daemon/control_internal.h"
#include "daemon/log.h"
#include "daemon/rt.h"

#define SAMPLE_RING 4096 /* telemetry samples kept (about 1 s at 4 kHz) */
#define EVENT_RING  256  /* events kept */
#define STOP_WAIT_S 2    /* ctl_stop waits this long for the thread's own safe shutdown [s] */

/* "disabled", "holding", ... (the safety state machine's names). */
const char *ctl_state_name(ctl_state s)
{
    return sf_state_name((sf_state)s);
}

/* Fills *e (if not NULL) with a one-word code and a formatted sentence. */
void ctl_set_err(ctl_error *e, const char *code, const char *fmt, ...)
{
    if (!e) return;
    snprintf(e->code, sizeof e->code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

/* ======================================================================= life cycle */

/* Checks the arguments, copies cfg, allocates everything the control thread will use (so a
 * tick never allocates) and publishes the initial, disabled status. */
ctl *ctl_create(const armd_config *cfg, dyn_model *model, drv *driver, ctl_error *err)
{
    if (!cfg || !model || !driver) {
        ctl_set_err(err, "invalid_params",
                    "ctl_create needs a configuration, a model and a driver");
        return NULL;
    }
    if (dyn_model_dof(model) != cfg->n_joints) {
        ctl_set_err(err, "config", "the model has %d joints, the configuration %d",
                    dyn_model_dof(model), cfg->n_joints);
        return NULL;
    }
    if (!(cfg->rate_hz > 0)) {
        ctl_set_err(err, "config", "rate_hz must be positive");
        return NULL;
    }
    ctl *c = calloc(1, sizeof *c);
    if (!c) {
        ctl_set_err(err, "internal", "out of memory");
        return NULL;
    }
    c->notify_fd = -1;
    c->cfg = *cfg;
    c->n = cfg->n_joints;
    c->period = 1.0 / cfg->rate_hz;
    c->period_ns = (int64_t)llround(1e9 / cfg->rate_hz);
    c->model = model;
    c->payload = cfg->model.payload;
    c->driver = driver;
    c->tail_slot = -1;
    c->next_id = 1;
    traj_limits_from_config(&c->lim, cfg);
    law_params_from_config(&c->params[0], cfg);
    c->params[1] = c->params[0];
    c->lims[0] = c->lims[1] = c->lim;
    atomic_init(&c->params_active, 0);
    atomic_init(&c->t0_ns, ctl_mono_ns());
    c->data = dyn_data_create(model);
    c->dyn = (law_dyn){&dyn_general, model, c->data};
    bool ok = c->data != NULL;
    ok = ok && hf_mailbox_init(&c->cmds, sizeof(ctl_cmd), N_MAILBOX) == 0;
    c->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ok = ok && c->notify_fd >= 0;
    ok = ok && hf_seqlock_init(&c->status, sizeof(ctl_pub)) == 0;
    ok = ok && hf_ring_init(&c->samples, sizeof(ctl_sample), SAMPLE_RING) == 0;
    ok = ok && hf_ring_init(&c->events, sizeof(ctl_event), EVENT_RING) == 0;
    for (int i = 0; i < N_PLANS; i++) {
        ok = ok && traj_plan_alloc(&c->plans[i], c->n, TRAJ_MAX_POINTS) == 0;
        atomic_init(&c->plan_owner[i], 0);
    }
    tt_reset(&c->late);
    tt_reset(&c->read);
    tt_reset(&c->compute);
    tt_reset(&c->write);
    ctl_rt *r = &c->rt;
    r->state = SF_DISABLED;
    r->law = cfg->controller;
    r->active = -1;
    if (!ok) {
        ctl_set_err(err, "internal", "out of memory creating the controller");
        c->model = NULL; /* the caller keeps what it passed */
        c->driver = NULL;
        ctl_free(c);
        return NULL;
    }
    ctl_publish(c);
    return c;
}

/* The control thread's start routine: its own alternate signal stack (sigaltstack is per
 * thread: a stack overflow in a tick must still reach the fatal-signal handler), then the
 * thread's body. */
static void *control_thread_entry(void *arg)
{
    bool altstack = rt_altstack_enter() == 0;
    void *r = ctl_thread_main(arg);
    if (altstack) rt_altstack_leave();
    return r;
}

/* Reads the initial state, locks memory, starts the thread with the configured priority and
 * CPU (one warning each when refused), then lets it run. */
int ctl_start(ctl *c, ctl_error *err)
{
    if (c->started) {
        ctl_set_err(err, "bad_state", "the control thread is already running");
        return -1;
    }
    if (ctl_read_initial_state(c, err)) return -1;
    char why[200];
    if (c->cfg.realtime.lock_memory && rt_lock_memory(why, sizeof why)) log_warn("%s", why);
    if (pthread_create(&c->thread, NULL, control_thread_entry, c) != 0) {
        ctl_set_err(err, "internal", "could not start the control thread");
        return -1;
    }
    c->started = true;
    if (rt_set_fifo(c->thread, c->cfg.realtime.priority, why, sizeof why)) log_warn("%s", why);
    if (rt_pin_cpu(c->thread, c->cfg.realtime.cpu, why, sizeof why)) log_warn("%s", why);
    clock_gettime(CLOCK_MONOTONIC, &c->seen_when);
    atomic_store_explicit(&c->go, 1, memory_order_release);
    return 0;
}

/* Waits until the control thread has finished its safe shutdown (the exited flag), at most
 * seconds of CLOCK_MONOTONIC (a wall-clock step neither shortens nor stretches it). */
static bool wait_exited(ctl *c, double seconds)
{
    int64_t deadline = ctl_mono_ns() + (int64_t)(seconds * 1e9);
    while (!atomic_load_explicit(&c->exited, memory_order_acquire)) {
        if (ctl_mono_ns() >= deadline) return false;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return true;
}

/* Asks the thread to stop (it zeroes the torque and disables on its way out) and joins it. If
 * it has not finished within STOP_WAIT_S (monotonic), it is cancelled, and once it is gone the
 * torque is zeroed and the servos disabled from here. Without a thread, zeroes the torque from
 * here. */
void ctl_stop(ctl *c)
{
    if (!c || c->stopped) return;
    c->stopped = true;
    if (!c->started) {
        if (c->driver) ctl_torque_off(c);
        return;
    }
    atomic_store_explicit(&c->stop_request, 1, memory_order_release);
    bool cancelled = false;
    if (!wait_exited(c, STOP_WAIT_S)) {
        log_err("the control thread did not stop within %d s; cancelling it, then torque off "
                "from the main thread",
                STOP_WAIT_S);
        pthread_cancel(c->thread);
        cancelled = true;
    }
    pthread_join(c->thread, NULL);
    if (cancelled && !atomic_load_explicit(&c->exited, memory_order_acquire)) {
        ctl_torque_off(c); /* the thread's own torque off may not have run */
        log_notice("torque off written from the main thread");
    }
}

/* Async-signal-safe emergency stop (see control.h): only the flag the control thread checks at
 * the start of every tick. */
void ctl_estop_async(ctl *c)
{
    if (c) atomic_store_explicit(&c->estop_request, 1, memory_order_release);
}

const char *ctl_use_generated(ctl *c, const dyn_gen_module *gen)
{
    c->gen = gen;
    ctl_payload_changed(c);
    return c->dyn.f->origin;
}

void ctl_payload_changed(ctl *c)
{
    c->dyn.f = dyn_funcs_for(c->model, c->gen);
}

void ctl_swap_model(ctl *c)
{
    dyn_model *m = c->model;
    dyn_data *d = c->data;
    c->model = c->model_next;
    c->data = c->data_next;
    c->model_next = m;
    c->data_next = d;
    c->dyn.m = c->model;
    c->dyn.d = c->data;
    ctl_payload_changed(c); /* generated code only while it still fits the model */
    if (c->rt.obs.running) coll_stop(&c->rt.obs, c->n); /* restarted with the new model */
}

void ctl_free_next_model(ctl *c)
{
    if (c->data_next) dyn_data_free(c->data_next);
    if (c->model_next) dyn_model_free(c->model_next);
    c->data_next = NULL;
    c->model_next = NULL;
}

/* Stops, then frees everything, including the model and driver it owns. */
void ctl_free(ctl *c)
{
    if (!c) return;
    ctl_stop(c);
    for (int i = 0; i < N_PLANS; i++) traj_plan_free(&c->plans[i]);
    hf_mailbox_free(&c->cmds);
    hf_seqlock_free(&c->status);
    hf_ring_free(&c->samples);
    hf_ring_free(&c->events);
    ctl_free_next_model(c);
    if (c->data) dyn_data_free(c->data);
    if (c->model) dyn_model_free(c->model);
    if (c->driver) drv_close(c->driver);
    for (int i = 0; i < CTL_MAX_PENDING; i++) free(c->pending[i].cand);
    if (c->notify_fd >= 0) close(c->notify_fd);
    free(c);
}

/* ========================================================================= liveness */

/* True when the tick counter moved since the previous call (and the thread has not exited).
 * Its own cursor: ctl_stalled() keeps a separate one, so the two callers never hide ticks
 * from each other. */
bool ctl_alive(ctl *c)
{
    uint64_t t = atomic_load_explicit(&c->ticks, memory_order_acquire);
    bool moved = t != c->alive_ticks;
    c->alive_ticks = t;
    return moved && !atomic_load_explicit(&c->exited, memory_order_acquire);
}

/* True when no tick completed for more than max_seconds [s]; then asks the control thread
 * (once) to fault with the reason. */
bool ctl_stalled(ctl *c, double max_seconds)
{
    if (!c->started || c->stopped) return false;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t t = atomic_load_explicit(&c->ticks, memory_order_acquire);
    if (t != c->seen_ticks) {
        c->seen_ticks = t;
        c->seen_when = now;
    }
    double since = (double)(now.tv_sec - c->seen_when.tv_sec) +
                   (double)(now.tv_nsec - c->seen_when.tv_nsec) * 1e-9;
    if (since <= max_seconds) return false;
    if (!atomic_load_explicit(&c->stall_request, memory_order_acquire)) {
        snprintf(c->stall_reason, sizeof c->stall_reason,
                 "control thread stalled: no tick for %.0f ms", since * 1e3);
        atomic_store_explicit(&c->stall_request, 1, memory_order_release);
    }
    return true;
}

/* ========================================================================== readers */

double ctl_mono_of(ctl *c, double t)
{
    return (double)atomic_load_explicit(&c->t0_ns, memory_order_acquire) * 1e-9 + t;
}

/* The last published status plus the timing quantiles [us] read from the histograms. */
void ctl_status_get(ctl *c, ctl_status *out)
{
    ctl_pub pub;
    ctl_read_pub(c, &pub);
    *out = pub.st;
    ctl_timing *t[4] = {&out->lateness, &out->read, &out->compute, &out->write};
    tt_hist *h[4] = {&c->late, &c->read, &c->compute, &c->write};
    for (int i = 0; i < 4; i++) {
        t[i]->p50_us = tt_quantile_us(h[i], 0.5);
        t[i]->p99_us = tt_quantile_us(h[i], 0.99);
        t[i]->max_us = tt_max_us(h[i]);
    }
    out->rate_hz = c->cfg.rate_hz;
}

void ctl_payload_get(ctl *c, dyn_payload *out)
{
    *out = c->payload;
}

/* The running configuration (main thread's copy). */
const armd_config *ctl_config(ctl *c)
{
    return &c->cfg;
}

/* Telemetry samples newer than *cursor, oldest first (see control.h). */
int ctl_samples_read(ctl *c, uint64_t *cursor, ctl_sample *out, int max)
{
    return hf_ring_read(&c->samples, cursor, out, max, NULL);
}

/* Events newer than *cursor, oldest first (see control.h). */
int ctl_events_read(ctl *c, uint64_t *cursor, ctl_event *out, int max)
{
    return hf_ring_read(&c->events, cursor, out, max, NULL);
}
