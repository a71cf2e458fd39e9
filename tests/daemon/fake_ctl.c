/*
 * fake_ctl.c — the fake control thread of fake_ctl.h.
 */
#include "tests/daemon/fake_ctl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon/trajectory.h"

struct ctl fake;

/* A value the API should never have let through: a bug in its checks. */
static void violation(const char *what, double v)
{
    fprintf(stderr, "fake_ctl: the API handed over %s = %g\n", what, v);
    abort();
}

void fake_init(int n, double rate_hz)
{
    memset(&fake, 0, sizeof fake);
    fake.notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fake.notify_fd < 0) abort();
    fake.cfg.n_joints = n;
    fake.cfg.rate_hz = rate_hz;
    fake.cfg.model.n = n; /* joints of zeros: enough for payload.set's check of the payload */
    snprintf(fake.cfg.name, sizeof fake.cfg.name, "fake");
    for (int j = 0; j < n; j++) snprintf(fake.cfg.joint[j].name, CFG_NAME_MAX, "%c", 'a' + j);
}

void fake_close(void)
{
    close(fake.notify_fd);
    fake.notify_fd = -1;
}

int fake_answer_later(ctl *c, const ctl_reply_to *to, int rc, const char *code, const char *msg,
                      const ctl_result *res)
{
    if (!to || !to->fn) abort(); /* the API never waits */
    if (c->n_answers >= CTL_MAX_PENDING) abort();
    c->commands++;
    fake_answer *a = &c->answers[c->n_answers++];
    memset(a, 0, sizeof *a);
    a->to = *to;
    a->rc = rc;
    if (rc) {
        snprintf(a->err.code, sizeof a->err.code, "%s", code);
        snprintf(a->err.message, sizeof a->err.message, "%s", msg);
    }
    if (res) a->res = *res;
    uint64_t one = 1;
    if (write(c->notify_fd, &one, sizeof one) != (ssize_t)sizeof one) abort();
    return 0;
}

void ctl_poll(ctl *c)
{
    uint64_t n;
    ssize_t r = read(c->notify_fd, &n, sizeof n);
    (void)r;
    while (!c->hold_answers && c->n_answers > 0) {
        fake_answer a = c->answers[0];
        memmove(c->answers, c->answers + 1, sizeof(fake_answer) * (size_t)--c->n_answers);
        a.to.fn(a.to.ctx, a.rc, a.rc ? &a.err : NULL, &a.res);
    }
}

int ctl_notify_fd(ctl *c)
{
    return c->notify_fd;
}

bool ctl_simulated(ctl *c)
{
    (void)c;
    return false;
}

bool ctl_alive(ctl *c)
{
    return c != NULL;
}

int ctl_enable(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    c->state = CTL_HOLDING;
    c->events++;
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

int ctl_disable(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    c->state = CTL_DISABLED;
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

int ctl_hold(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    if (c->state == CTL_DISABLED) /* refused by the control thread: an answer, later */
        return fake_answer_later(c, to, -1, "bad_state", "the arm is disabled", NULL);
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

int ctl_estop(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    c->state = CTL_ESTOP;
    c->estops++;
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

int ctl_reset(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    c->state = CTL_DISABLED;
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

int ctl_cancel(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    return ctl_hold(c, to, err);
}

/* A time [s] the API may hand over: within [one loop period, TRAJ_MAX_DURATION]. */
static void check_time(const char *what, double t)
{
    double dt = 1.0 / fake.cfg.rate_hz;
    if (!(t >= dt * (1 - 1e-6) && t <= TRAJ_MAX_DURATION)) violation(what, t);
}

static void check_finite(const char *what, const double *v, int n)
{
    for (int j = 0; j < n; j++)
        if (!isfinite(v[j])) violation(what, v[j]);
}

int ctl_trajectory(ctl *c, const ctl_waypoint *points, int n_points, bool append, uint32_t *id,
                   double *duration, const ctl_reply_to *to, ctl_error *err)
{
    (void)err, (void)id, (void)duration;
    if (n_points < 1 || n_points > TRAJ_MAX_POINTS) violation("the number of waypoints", n_points);
    for (int i = 0; i < n_points; i++) {
        const ctl_waypoint *w = &points[i];
        if (!(i == 0 && w->t == 0)) check_time("a waypoint time", w->t);
        if (i > 0 && !(w->t - points[i - 1].t >= (1 - 1e-6) / c->cfg.rate_hz))
            violation("a waypoint spacing", w->t - points[i - 1].t);
        check_finite("q", w->q, c->cfg.n_joints);
        if (w->has_qd) check_finite("qd", w->qd, c->cfg.n_joints);
        if (w->has_qdd) check_finite("qdd", w->qdd, c->cfg.n_joints);
    }
    c->last_points = n_points;
    c->last_append = append;
    memcpy(c->last_q0, points[0].q, sizeof c->last_q0);
    ctl_result res = {.id = 7, .duration = points[n_points - 1].t};
    return fake_answer_later(c, to, 0, NULL, NULL, &res);
}

int ctl_move_to(ctl *c, const double *q, double duration, uint32_t *id, double *duration_out,
                const ctl_reply_to *to, ctl_error *err)
{
    (void)err, (void)id, (void)duration_out;
    check_finite("q", q, c->cfg.n_joints);
    if (duration != 0) check_time("a move duration", duration);
    memcpy(c->last_q0, q, sizeof(double) * (size_t)c->cfg.n_joints);
    ctl_result res = {.id = 8, .duration = duration > 0 ? duration : 1.5};
    return fake_answer_later(c, to, 0, NULL, NULL, &res);
}

int ctl_move_linear(ctl *c, const ctl_linear *req, uint32_t *id, double *duration,
                    const ctl_reply_to *to, ctl_error *err)
{
    (void)err, (void)id, (void)duration;
    check_finite("a move_linear position or offset", req->xyz, 3);
    if (req->has_orientation) check_finite("a move_linear orientation", req->quat, 4);
    if (!(req->speed >= 0 && req->speed < INFINITY)) violation("a move_linear speed", req->speed);
    if (!(req->acceleration >= 0 && req->acceleration < INFINITY))
        violation("a move_linear acceleration", req->acceleration);
    if (req->frame == CTL_FRAME_TOOL && !req->relative) violation("a tool-frame position", 1);
    c->last_linear = *req;
    ctl_result res = {.id = 9, .duration = 1.25};
    return fake_answer_later(c, to, 0, NULL, NULL, &res);
}

int ctl_gains_set(ctl *c, const double *kp, const double *kd, const double *ki,
                  const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    for (int i = 0; i < c->cfg.n_joints; i++) {
        if (kp && !(kp[i] >= 0 && kp[i] <= CTL_KP_MAX)) violation("kp", kp[i]);
        if (kd && !(kd[i] >= 0 && kd[i] <= CTL_KD_MAX)) violation("kd", kd[i]);
        if (ki && !(ki[i] >= 0 && ki[i] <= CTL_KI_MAX)) violation("ki", ki[i]);
        if (kp) c->kp[i] = kp[i];
        if (kd) c->kd[i] = kd[i];
        if (ki) c->ki[i] = ki[i];
    }
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

int ctl_impedance_set(ctl *c, const cfg_impedance *imp, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    for (int i = 0; i < 6; i++) {
        if (!(imp->stiffness[i] >= 0 && imp->stiffness[i] <= CTL_STIFFNESS_MAX))
            violation("a stiffness", imp->stiffness[i]);
        if (!(imp->damping_ratio[i] >= 0 && imp->damping_ratio[i] <= CTL_DAMPING_RATIO_MAX))
            violation("a damping ratio", imp->damping_ratio[i]);
    }
    c->impedance = *imp;
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

void ctl_impedance_get(ctl *c, cfg_impedance *out)
{
    *out = c->impedance;
}

void ctl_gains_get(ctl *c, double *kp, double *kd, double *ki)
{
    memcpy(kp, c->kp, sizeof c->kp);
    memcpy(kd, c->kd, sizeof c->kd);
    memcpy(ki, c->ki, sizeof c->ki);
}

int ctl_controller_set(ctl *c, cfg_controller law, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    if (law != CTRL_COMPUTED_TORQUE && law != CTRL_PD_GRAVITY && law != CTRL_GRAVITY_COMP)
        violation("a control law", law);
    c->cfg.controller = law;
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

int ctl_stats_reset(ctl *c, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    c->stats_resets++;
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

void ctl_status_get(ctl *c, ctl_status *out)
{
    memset(out, 0, sizeof *out);
    out->state = c->state;
    out->n = c->cfg.n_joints;
    out->q[0] = 0.5;
    out->q[1] = NAN; /* non-finite values must become null, never break the reply */
    out->controller = c->cfg.controller;
    out->rate_hz = c->cfg.rate_hz;
    out->ticks = c->tick;
}

/* The fake's control time 0 is CLOCK_MONOTONIC FAKE_MONO0 s (fake_ctl.h: a value the tests can
 * recognise, with a microsecond in it that 10 significant digits would lose). */
double ctl_mono_of(ctl *c, double t)
{
    (void)c;
    return FAKE_MONO0 + t;
}

int ctl_payload_set(ctl *c, const dyn_payload *payload, const ctl_reply_to *to, ctl_error *err)
{
    (void)err;
    if (!(payload->mass >= 0 && payload->mass <= CTL_PAYLOAD_MASS_MAX))
        violation("a payload mass", payload->mass);
    check_finite("a payload com", payload->com, 3);
    check_finite("a payload inertia", payload->inertia, 6);
    c->payload = *payload;
    return fake_answer_later(c, to, 0, NULL, NULL, NULL);
}

void ctl_payload_get(ctl *c, dyn_payload *out)
{
    *out = c->payload;
}

const armd_config *ctl_config(ctl *c)
{
    return &c->cfg;
}

/* Produces 20 new samples per call, with increasing ticks. */
int ctl_samples_read(ctl *c, uint64_t *cursor, ctl_sample *out, int max)
{
    if (*cursor == 0) *cursor = c->tick;
    int k = 0;
    for (; k < max && k < 20; k++) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].tick = ++c->tick;
        out[k].time = (double)c->tick * 1e-3;
        out[k].state_time = out[k].time;
        out[k].fresh = true;
        out[k].q[0] = 0.25;
    }
    *cursor = c->tick;
    return k;
}

int ctl_events_read(ctl *c, uint64_t *cursor, ctl_event *out, int max)
{
    int k = 0;
    while (*cursor < c->events && k < max) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].seq = ++*cursor;
        out[k].type = CTL_EV_STATE;
        out[k].state = c->state;
        k++;
    }
    return k;
}

/* No tool in the fake's configuration: refused as the real host refuses it. */
int ctl_tool(ctl *c, const ctl_tool_cmd *cmd, const ctl_reply_to *to, ctl_error *err)
{
    (void)c, (void)cmd, (void)to;
    ctl_error_set(err, "no_tool", "no [tool] section in the configuration");
    return -1;
}
