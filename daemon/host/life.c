/*
 * life.c — the controller's life as the main thread sees it (control.h): create, start (the
 * control thread, or stepped by lockstep), stop and free; the status, sample and event readers;
 * liveness and stall detection. Main thread only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/host/host.h"
#include "daemon/log.h"

#define STOP_WAIT_S  2   /* ctl_stop waits this long for the thread's own safe shutdown [s] */
#define JOIN_WAIT_S  0.5 /* ... then this long for the cancelled thread to be joined [s] */
#define FIRST_TICK_S 1   /* ctl_start waits this long for the first tick [s] */

void host_torque_off(ctl *c)
{
    if (!c->driver) return;
    double zero[CFG_MAX_JOINTS] = {0};
    drv_fault f;
    drv_write(c->driver, zero, &f);
    drv_enable(c->driver, false, &f);
}

/* ======================================================================= life cycle */

/* The settings the loop starts with, from cfg (registered); NULL when out of memory. */
static loop_settings *first_settings(ctl *c, const armd_config *cfg)
{
    loop_settings *s = malloc(sizeof *s);
    if (!s) return NULL;
    law_params_from_config(&s->p, cfg);
    traj_limits_from_config(&s->lim, cfg);
    if (host_obj_add(c, s, false) == 0) return s;
    free(s);
    return NULL;
}

/* Everything the loop will use, allocated now (a tick never allocates): the hand-off, the plan
 * pool, the first settings and dynamics (model taken over), the loop and its runner. */
static bool build(ctl *c, dyn_model *model, drv *driver, ctl_error *err)
{
    c->h = handoff_create();
    if (!c->h || host_plans_alloc(c) != 0) return false;
    c->set = first_settings(c, &c->cfg);
    if (!c->set) return false;
    c->dyn = host_dyn_wrap(c, model, err);
    if (!c->dyn) return false;
    if (host_obj_add(c, c->dyn, true) != 0) {
        c->dyn->model = NULL; /* the caller keeps it */
        host_dyn_free(c->dyn);
        c->dyn = NULL;
        return false;
    }
    c->L = loop_create(c->n, c->period, c->set, c->dyn, c->cfg.controller);
    if (c->L) loop_set_tool(c->L, &c->cfg.tool);
    c->run = c->L ? runner_create(c->L, driver, c->h, c->period) : NULL;
    return c->run != NULL;
}

ctl *ctl_create(const armd_config *cfg, dyn_model *model, drv *driver, ctl_error *err)
{
    if (!cfg || !model || !driver) {
        ctl_error_set(err, "invalid_params",
                      "ctl_create needs a configuration, a model and a driver");
        return NULL;
    }
    if (dyn_model_dof(model) != cfg->n_joints) {
        ctl_error_set(err, "config", "the model has %d joints, the configuration %d",
                      dyn_model_dof(model), cfg->n_joints);
        return NULL;
    }
    if (!(cfg->rate_hz > 0)) {
        ctl_error_set(err, "config", "rate_hz must be positive");
        return NULL;
    }
    ctl *c = calloc(1, sizeof *c);
    if (!c) {
        ctl_error_set(err, "internal", "out of memory");
        return NULL;
    }
    c->cfg = *cfg;
    c->n = cfg->n_joints;
    c->period = 1.0 / cfg->rate_hz;
    c->period_ns = (int64_t)llround(1e9 / cfg->rate_hz);
    c->payload = cfg->model.payload;
    c->tail_plan = -1;
    c->next_id = 1;
    c->mode = HOST_CREATED;
    traj_limits_from_config(&c->lim, cfg);
    if (!build(c, model, driver, err)) {
        if (c->dyn) c->dyn->model = NULL; /* the caller keeps what it passed */
        ctl_free(c);
        if (err && !err->code[0])
            ctl_error_set(err, "internal", "out of memory creating the controller");
        return NULL;
    }
    c->driver = driver;
    return c;
}

const char *ctl_use_generated(ctl *c, const dyn_gen_module *gen)
{
    c->gen = gen;
    c->dyn->dy.f = dyn_funcs_for(c->dyn->model, gen); /* before the loop runs */
    return c->dyn->dy.f->origin;
}

int ctl_start(ctl *c, ctl_error *err)
{
    if (c->mode != HOST_CREATED) {
        ctl_error_set(err, "bad_state", "the control loop was started already");
        return -1;
    }
    char why[200];
    if (loop_thread_start(&c->thread, c->run, c->h, c->period_ns, &c->cfg.realtime, why,
                          sizeof why)) {
        ctl_error_set(err, "internal", "%s", why);
        return -1;
    }
    c->mode = HOST_THREAD;
    c->seen_ns = host_mono_ns();
    int64_t deadline = c->seen_ns + (int64_t)(FIRST_TICK_S * 1e9);
    while (handoff_ticks(c->h) == 0 && host_mono_ns() < deadline) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    if (handoff_ticks(c->h) == 0) {
        ctl_error_set(err, "internal", "the control thread did not tick within %d s", FIRST_TICK_S);
        ctl_stop(c);
        return -1;
    }
    return 0;
}

int ctl_start_stepped(ctl *c, int64_t t0_ns, void (*step)(void *ctx), void *ctx, ctl_error *err)
{
    if (c->mode != HOST_CREATED || !step) {
        ctl_error_set(err, "bad_state", "the control loop was started already");
        return -1;
    }
    runner_begin(c->run, t0_ns);
    c->step = step;
    c->step_ctx = ctx;
    c->mode = HOST_STEPPED;
    return 0;
}

void ctl_tick(ctl *c, int64_t deadline_ns, int64_t late_ns, uint64_t skipped)
{
    if (c->mode == HOST_STEPPED) runner_tick(c->run, deadline_ns, late_ns, skipped);
}

bool ctl_stop(ctl *c)
{
    if (!c || c->mode == HOST_STOPPED) return true;
    if (c->mode == HOST_STUCK) return false;
    if (c->mode == HOST_THREAD) {
        loop_thread_end end = loop_thread_stop(&c->thread, STOP_WAIT_S, JOIN_WAIT_S);
        if (end == LOOP_THREAD_CANCELLED) {
            log_err("the control thread did not stop within %d s; cancelling it, then torque off "
                    "from the main thread",
                    STOP_WAIT_S);
            host_torque_off(c);
            log_notice("torque off written from the main thread");
        } else if (end == LOOP_THREAD_STUCK) {
            /* it may still write: silence the driver under it, then the frame of the fatal
             * signals (no reply to wait for on a port the thread may be reading) */
            log_err("the control thread did not stop within %d s and could not be cancelled "
                    "within %g s more; torque off from the main thread, then exit",
                    STOP_WAIT_S, JOIN_WAIT_S);
            drv_torque_off_async(c->driver);
            log_notice("torque-off frame written from the main thread");
            c->mode = HOST_STUCK;
            return false;
        }
    } else if (c->mode == HOST_STEPPED) {
        runner_stop(c->run);
    } else if (c->mode == HOST_CREATED) {
        host_torque_off(c);
    }
    c->mode = HOST_STOPPED;
    host_pending_stop(c); /* every caller still gets its one answer (ctl_poll delivers it) */
    return true;
}

void ctl_free(ctl *c)
{
    if (!c || !ctl_stop(c)) return; /* a thread still running uses all of it: the process ends */
    for (int i = 0; i < CTL_MAX_PENDING; i++)
        if (c->pending[i].used) host_pending_drop(&c->pending[i]);
    runner_free(c->run);
    loop_free(c->L);
    host_objects_free(c);
    handoff_free(c->h);
    if (c->driver) drv_close(c->driver);
    free(c);
}

/* ========================================================================= liveness */

bool ctl_alive(ctl *c)
{
    uint64_t t = handoff_ticks(c->h);
    bool moved = t != c->alive_ticks;
    c->alive_ticks = t;
    return moved && !handoff_exited(c->h);
}

bool ctl_stalled(ctl *c, double max_seconds)
{
    if (c->mode != HOST_THREAD) return false;
    int64_t now = host_mono_ns();
    uint64_t t = handoff_ticks(c->h);
    if (t != c->seen_ticks) {
        c->seen_ticks = t;
        c->seen_ns = now;
    }
    double since = (double)(now - c->seen_ns) * 1e-9;
    if (since <= max_seconds) return false;
    char reason[160];
    snprintf(reason, sizeof reason, "control thread stalled: no tick for %.0f ms", since * 1e3);
    handoff_raise_stall(c->h, reason);
    return true;
}

/* ========================================================================== readers */

double ctl_mono_of(ctl *c, double t)
{
    return (double)handoff_t0(c->h) * 1e-9 + t;
}

bool ctl_simulated(ctl *c)
{
    return c->mode == HOST_STEPPED;
}

void ctl_status_get(ctl *c, ctl_status *out)
{
    ctl_pub pub;
    handoff_status(c->h, &pub);
    *out = pub.st;
    handoff_timing(c->h, HANDOFF_LATE, &out->lateness);
    handoff_timing(c->h, HANDOFF_READ, &out->read);
    handoff_timing(c->h, HANDOFF_COMPUTE, &out->compute);
    handoff_timing(c->h, HANDOFF_WRITE, &out->write);
    out->rate_hz = c->cfg.rate_hz;
    out->n = c->n;
}

const armd_config *ctl_config(ctl *c)
{
    return &c->cfg;
}

int ctl_samples_read(ctl *c, uint64_t *cursor, ctl_sample *out, int max)
{
    return handoff_samples(c->h, cursor, out, max);
}

int ctl_events_read(ctl *c, uint64_t *cursor, ctl_event *out, int max)
{
    return handoff_events(c->h, cursor, out, max);
}
