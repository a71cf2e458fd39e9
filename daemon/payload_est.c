/*
 * payload_est.c — the payload estimate (see payload_est.h): a main-thread procedure on the
 * control side's interface. Each PE_TIMER_S step reads the samples published since the last one
 * (its own cursor), checks the arm is still holding or moving on one of the estimate's moves and
 * sends the next move once one has ended; after the move back, payload_fit solves and the result
 * is applied (ctl_payload_set) when asked.
 */
#include "daemon/payload_est.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/log.h"

#define PE_TIMER_S  0.005 /* the step: caller and arm checks, samples read, the next move [s] */
#define PE_HALF     5 /* the measured acceleration: central difference of qd over +-PE_HALF ticks */
#define PE_WINDOW   (2 * PE_HALF + 1)
#define PE_READ_MAX 64  /* samples per ctl_samples_read (a step at 1 kHz finds about 5) */
#define PE_BLOCK    0.1 /* the hold-out's blocks [s of control time] ... */
#define PE_HOLDOUT  5   /* ... every PE_HOLDOUT-th of them checks the fit instead of feeding it */

typedef enum { PE_IDLE, PE_START, PE_MOVE_SENT, PE_MOVING, PE_APPLY_SENT } pe_phase;

struct payload_est {
    struct ev_loop *loop;
    ctl *c;
    ev_timer timer;
    pe_phase phase;
    payload_est_caller caller;
    payload_est_request rq;
    int n, k; /* joints; pose being moved to (rq.n_poses = the move back) */
    double q0[CFG_MAX_JOINTS];
    uint32_t traj_id;       /* the move under way */
    double move_end;        /* control time the move is due to end [s] */
    double t_start;         /* control time the estimate started [s] */
    payload_acc *acc, *val; /* the fit's equations; the held-out ones that check it */
    dyn_payload in_use;     /* the payload in use at the start */
    uint64_t cursor;        /* this procedure's telemetry cursor (ctl_samples_read) */
    uint64_t last_tick;     /* tick of the last sample read (0: none yet) */
    ctl_sample read[PE_READ_MAX];
    ctl_sample win[PE_WINDOW]; /* the last fresh samples, consecutive ticks (ring) */
    int n_win, head;           /* held; index of the oldest */
    payload_est_result res;
    ctl_error err;
};

/* Ends the estimate: idle, then the answer (rc 0: the figures in pe->res). */
static void pe_finish(payload_est *pe, int rc)
{
    ev_timer_stop(pe->loop, &pe->timer);
    pe->phase = PE_IDLE;
    payload_acc_free(pe->acc);
    payload_acc_free(pe->val);
    pe->acc = pe->val = NULL;
    const payload_fit_result *f = &pe->res.fit;
    if (rc == 0)
        log_info("payload.estimate for %s: %.4g kg (sd %.2g) at %.4g %.4g %.4g m from %ld rows "
                 "(%ld left out), residual %.3g%s",
                 pe->caller.name, f->mass, f->sd_mass, f->com[0], f->com[1], f->com[2], f->rows,
                 f->rows_left_out, f->residual_rms, pe->res.applied ? ", applied" : "");
    else
        log_warn("payload.estimate for %s: %s", pe->caller.name, pe->err.message);
    ctl_result res;
    memset(&res, 0, sizeof res);
    pe->caller.reply.fn(pe->caller.reply.ctx, rc, rc ? &pe->err : NULL, &res);
}

static void pe_fail(payload_est *pe, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pe_fail(payload_est *pe, const char *code, const char *fmt, ...)
{
    snprintf(pe->err.code, sizeof pe->err.code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pe->err.message, sizeof pe->err.message, fmt, ap);
    va_end(ap);
    pe_finish(pe, -1);
}

/* The control thread answered a move: its id and end time, or the refusal. */
static void pe_move_answer(void *ctx, int rc, const ctl_error *err, const ctl_result *res)
{
    payload_est *pe = ctx;
    if (pe->phase != PE_MOVE_SENT) return;
    if (rc != 0) {
        pe_fail(pe, err && err->code[0] ? err->code : "failed", "pose %d: move refused: %s",
                pe->k + 1, err && err->message[0] ? err->message : "?");
        return;
    }
    ctl_status st;
    ctl_status_get(pe->c, &st);
    pe->traj_id = res->id;
    pe->move_end = st.time + res->duration;
    pe->phase = PE_MOVING;
}

/* The control thread answered payload.set (apply): the estimate's answer. */
static void pe_apply_answer(void *ctx, int rc, const ctl_error *err, const ctl_result *res)
{
    (void)res;
    payload_est *pe = ctx;
    if (pe->phase != PE_APPLY_SENT) return;
    if (rc != 0) {
        pe_fail(pe, err && err->code[0] ? err->code : "failed", "applying the estimate: %s",
                err && err->message[0] ? err->message : "?");
        return;
    }
    pe->res.applied = true;
    pe_finish(pe, 0);
}

/* The payload a fit describes (what would be applied): its mass, and its centre and inertia
 * where the fit found them (else at the tool origin, a point). */
static dyn_payload fit_payload(const payload_fit_result *f)
{
    dyn_payload p;
    memset(&p, 0, sizeof p);
    p.mass = f->mass;
    if (f->com_known) memcpy(p.com, f->com, sizeof p.com);
    if (f->inertia_known) memcpy(p.inertia, f->inertia, sizeof p.inertia);
    return p;
}

/* The fit of the other four fifths against the held-out equations, next to the payload in use
 * (pe->res). */
static void pe_validate(payload_est *pe)
{
    payload_est_result *r = &pe->res;
    dyn_payload est = fit_payload(&r->fit);
    r->val_rms = payload_acc_rms(pe->val, &est, &r->val_rows);
    r->val_rms_in_use = payload_acc_rms(pe->val, &pe->in_use, NULL);
    r->validated = false;
    if (r->val_rows < PAYLOAD_EST_MIN_ROWS)
        snprintf(r->val_why, sizeof r->val_why,
                 "validation: %ld held-out equations, at least %d needed (longer moves)",
                 r->val_rows, PAYLOAD_EST_MIN_ROWS);
    else if (!isfinite(r->val_rms))
        snprintf(r->val_why, sizeof r->val_why,
                 "validation: the torque error on the held-out samples is not a number");
    else if (!(r->val_rms <= r->val_rms_in_use))
        snprintf(r->val_why, sizeof r->val_why,
                 "validation: the estimate leaves %.4g N m RMS unexplained on %ld held-out "
                 "equations, more than the payload in use (%.4g kg): %.4g",
                 r->val_rms, r->val_rows, pe->in_use.mass, r->val_rms_in_use);
    else
        r->validated = true;
}

/* The moves are done and the arm is back: fit, check, then apply or answer. */
static void pe_fit(payload_est *pe)
{
    char why[256];
    payload_fit_result *f = &pe->res.fit;
    if (payload_acc_solve(pe->acc, f, why, sizeof why) != 0) {
        pe_fail(pe, "failed", "%s", why);
        return;
    }
    pe_validate(pe);
    /* checked: the estimate from every equation, itself no worse than the payload in use on
     * the held-out ones (not validated: the held-out fit's figures, never applied) */
    payload_fit_result all;
    if (pe->res.validated && payload_acc_absorb(pe->acc, pe->val) == 0 &&
        payload_acc_solve(pe->acc, &all, why, sizeof why) == 0) {
        dyn_payload est = fit_payload(&all);
        double rms = payload_acc_rms(pe->val, &est, NULL);
        if (!(rms <= pe->res.val_rms_in_use)) {
            pe->res.validated = false;
            snprintf(pe->res.val_why, sizeof pe->res.val_why,
                     "validation: the estimate from all samples leaves %.4g N m RMS unexplained "
                     "on the held-out ones, more than the payload in use (%.4g)",
                     rms, pe->res.val_rms_in_use);
        }
        *f = all;
    }
    if (!pe->rq.apply) {
        pe_finish(pe, 0);
        return;
    }
    if (!pe->res.validated) {
        pe_fail(pe, "not_validated", "not applied: %s", pe->res.val_why);
        return;
    }
    if (!f->com_known || !(f->mass > 0)) {
        pe_fail(pe, "failed",
                "not applied: the fit found %.3g kg (sd %.2g kg), no payload to place", f->mass,
                f->sd_mass);
        return;
    }
    dyn_payload p;
    memset(&p, 0, sizeof p);
    p.mass = f->mass;
    memcpy(p.com, f->com, sizeof p.com);
    if (f->inertia_known) memcpy(p.inertia, f->inertia, sizeof p.inertia);
    pe->phase = PE_APPLY_SENT;
    ctl_reply_to to = {pe_apply_answer, pe};
    ctl_error ce = {{0}, {0}};
    if (ctl_payload_set(pe->c, &p, &to, &ce) != 0)
        pe_fail(pe, ce.code[0] ? ce.code : "failed", "applying the estimate: %s", ce.message);
}

/* Sends the move to pose k (k = n_poses: back to q0); after the move back, the fit. A pose where
 * the arm holds already is skipped. */
static void pe_next(payload_est *pe)
{
    for (;;) {
        pe->k++;
        if (pe->k > pe->rq.n_poses) {
            ctl_status st;
            ctl_status_get(pe->c, &st);
            pe->res.duration = st.time - pe->t_start;
            pe_fit(pe);
            return;
        }
        const double *target = pe->k < pe->rq.n_poses ? pe->rq.poses[pe->k] : pe->q0;
        ctl_status st;
        ctl_status_get(pe->c, &st);
        double far = 0;
        for (int j = 0; j < pe->n; j++) far = fmax(far, fabs(target[j] - st.q_des[j]));
        if (far < 1e-9) continue;
        pe->phase = PE_MOVE_SENT;
        ctl_reply_to to = {pe_move_answer, pe};
        ctl_error ce = {{0}, {0}};
        if (ctl_move_to(pe->c, target, pe->rq.move_time, NULL, NULL, &to, &ce) != 0)
            pe_fail(pe, ce.code[0] ? ce.code : "failed", "pose %d: move refused: %s", pe->k + 1,
                    ce.message);
        return;
    }
}

/* Feeds the accumulator the sample PE_HALF ticks back, with the acceleration measured as the
 * central difference of qd over the window around it (zero phase), divided by the time between
 * the two states' reads, and the torque that caused it: the mean of the window's later
 * PE_WINDOW - 1 tau_meas (each the command of the period before its read, as the servo applied
 * it: rounded to its current resolution). On the PUMA test in real time this left a 0.005-0.008
 * N m residual and the mass within 0.11 % (lockstep: 0.0082 N m, 0.26-0.28 %); the commanded
 * tau of the middle tick, 0.010-0.011 N m and 0.3 % high; the middle tau_meas alone or a
 * trapezoid over all 11, 0.008-0.013 N m and 0.12-0.22 % low (real time). The samples come in
 * consecutive ticks (pe_read ends the estimate at a skipped one); a tick without a fresh state
 * starts the window again (a gap); a window whose reads are not about PE_WINDOW - 1 periods apart
 * (the control thread or the device stalled inside it) adds nothing. */
static void pe_feed(payload_est *pe, const ctl_sample *sm)
{
    if (!(sm->time >= pe->t_start)) return;
    if (!sm->fresh) {
        pe->n_win = 0;
        return;
    }
    if (pe->n_win == PE_WINDOW) {
        pe->head = (pe->head + 1) % PE_WINDOW;
        pe->n_win--;
    }
    if (pe->n_win == 0) pe->head = 0;
    pe->win[(pe->head + pe->n_win) % PE_WINDOW] = *sm;
    pe->n_win++;
    if (pe->n_win < PE_WINDOW) return;
    const ctl_sample *first = &pe->win[pe->head], *mid = &pe->win[(pe->head + PE_HALF) % PE_WINDOW],
                     *last = &pe->win[(pe->head + PE_WINDOW - 1) % PE_WINDOW];
    if (mid->state != CTL_MOVING && mid->state != CTL_HOLDING) return;
    double span = last->state_time - first->state_time;
    double nominal = (2 * PE_HALF) / ctl_config(pe->c)->rate_hz;
    if (!(span >= 0.8 * nominal && span <= 1.25 * nominal)) return;
    double qdd[CFG_MAX_JOINTS], tau[CFG_MAX_JOINTS] = {0};
    for (int j = 0; j < pe->n; j++) qdd[j] = (last->qd[j] - first->qd[j]) / span;
    for (int i = 1; i < PE_WINDOW; i++)
        for (int j = 0; j < pe->n; j++)
            tau[j] += pe->win[(pe->head + i) % PE_WINDOW].tau_meas[j] / (PE_WINDOW - 1);
    /* every PE_HOLDOUT-th block of PE_BLOCK s checks the fit instead of feeding it */
    long block = (long)floor((mid->time - pe->t_start) / PE_BLOCK);
    payload_acc *to = block % PE_HOLDOUT == PE_HOLDOUT - 1 ? pe->val : pe->acc;
    if (payload_acc_add(to, mid->q, mid->qd, qdd, tau) > 0) pe->res.samples++;
}

/* Reads and feeds every sample published since the last step. The control thread numbers its
 * ticks one by one and publishes a sample each, so a tick missing between two samples read is
 * a hole: the ring overwrote samples before they were read (the main loop stalled for about
 * the ring's length). That ends the estimate. 0, or -1 when it ended. */
static int pe_read(payload_est *pe)
{
    for (;;) {
        int k = ctl_samples_read(pe->c, &pe->cursor, pe->read, PE_READ_MAX);
        for (int i = 0; i < k; i++) {
            const ctl_sample *sm = &pe->read[i];
            if (pe->last_tick != 0 && sm->tick > pe->last_tick + 1) {
                unsigned long long from = pe->last_tick + 1, to = sm->tick - 1;
                pe_fail(pe, "failed",
                        "samples lost: ticks %llu to %llu (%llu samples) were overwritten before "
                        "the estimate read them (the main loop stalled); no fit across a hole, "
                        "run it again",
                        from, to, to - from + 1);
                return -1;
            }
            if (pe->last_tick != 0 && sm->tick <= pe->last_tick) continue; /* not a new tick */
            pe->last_tick = sm->tick;
            pe_feed(pe, sm);
        }
        if (k < PE_READ_MAX) return 0;
    }
}

/* One step (every PE_TIMER_S): the caller still waits, the samples so far, the arm still on
 * the estimate's moves; the next move once one has ended. */
static void pe_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    payload_est *pe = w->data;
    if (pe->caller.gone && pe->caller.gone(pe->caller.gone_ctx)) {
        pe_fail(pe, "aborted", "the requesting client went away (the arm holds where it is)");
        return;
    }
    if (pe_read(pe) != 0) return;
    if (pe->phase == PE_MOVE_SENT || pe->phase == PE_APPLY_SENT) return; /* answer pending */
    if (pe->phase == PE_START) { /* the first move is sent here, once the caller waits */
        pe_next(pe);
        return;
    }
    ctl_status st;
    ctl_status_get(pe->c, &st);
    if (st.state != CTL_HOLDING && st.state != CTL_MOVING) {
        pe_fail(pe, "aborted", "the arm left holding during the move to pose %d: %s%s%s", pe->k + 1,
                ctl_state_name(st.state), st.fault[0] ? ": " : "", st.fault);
        return;
    }
    if (st.traj_id != 0 && st.traj_id != pe->traj_id) {
        pe_fail(pe, "aborted", "another trajectory (id %u) replaced the estimate's move to pose %d",
                st.traj_id, pe->k + 1);
        return;
    }
    if (st.traj_id == pe->traj_id && st.traj_id != 0) return; /* moving */
    if (st.time < pe->move_end - 0.5 * PE_TIMER_S) return;    /* not started in status yet */
    pe_next(pe); /* the move's last samples were read above */
}

payload_est *payload_est_create(struct ev_loop *loop, ctl *c)
{
    payload_est *pe = calloc(1, sizeof *pe);
    if (!pe) return NULL;
    pe->loop = loop;
    pe->c = c;
    ev_timer_init(&pe->timer, pe_timer_cb, PE_TIMER_S, PE_TIMER_S);
    pe->timer.data = pe;
    return pe;
}

void payload_est_free(payload_est *pe)
{
    if (!pe) return;
    ev_timer_stop(pe->loop, &pe->timer);
    payload_acc_free(pe->acc); /* answers still on their way are not awaited */
    payload_acc_free(pe->val);
    free(pe);
}

static int pe_refuse(ctl_error *err, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int pe_refuse(ctl_error *err, const char *code, const char *fmt, ...)
{
    snprintf(err->code, sizeof err->code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

int payload_est_start(payload_est *pe, const payload_est_request *rq,
                      const payload_est_caller *caller, ctl_error *err)
{
    if (pe->phase != PE_IDLE)
        return pe_refuse(err, "busy", "a payload estimate is running for %s; wait for it",
                         pe->caller.name);
    ctl_status st;
    ctl_status_get(pe->c, &st);
    if (st.state != CTL_HOLDING || st.traj_id != 0) {
        /* the step that leads to holding from each state (daemon/safety.c) */
        const char *step = st.state == CTL_FAULT || st.state == CTL_ESTOP ? "reset and enable it"
                           : st.state == CTL_DISABLED                     ? "enable it"
                                                      : "let the trajectory end or cancel it";
        return pe_refuse(err, "bad_state",
                         "payload.estimate needs the arm holding at rest (now %s%s); %s first",
                         ctl_state_name(st.state), st.traj_id ? ", moving" : "", step);
    }
    const armd_config *cfg = ctl_config(pe->c);
    /* joints at least this fast give equations: 5 x the Coulomb smoothing band, >= 0.02 */
    double v_min = fmax(0.02, 5 * cfg->model.friction_smoothing);
    pe->acc = payload_acc_create(&cfg->model, v_min);
    pe->val = payload_acc_create(&cfg->model, v_min);
    if (!pe->acc || !pe->val) {
        payload_acc_free(pe->acc);
        payload_acc_free(pe->val);
        pe->acc = pe->val = NULL;
        return pe_refuse(err, "internal", "the arm's model cannot be built for the fit");
    }
    ctl_payload_get(pe->c, &pe->in_use);
    pe->caller = *caller;
    pe->rq = *rq;
    pe->n = cfg->n_joints;
    memcpy(pe->q0, st.q_des, sizeof pe->q0);
    if (pe->rq.n_poses == 0) pe->rq.n_poses = payload_default_poses(cfg, pe->q0, pe->rq.poses);
    memset(&pe->err, 0, sizeof pe->err);
    memset(&pe->res, 0, sizeof pe->res);
    pe->res.poses = pe->rq.n_poses;
    pe->traj_id = 0;
    pe->t_start = st.time;
    pe->n_win = 0;
    pe->cursor = 0; /* a read from cursor 0 starts at the samples published from now on */
    pe->last_tick = 0;
    ctl_samples_read(pe->c, &pe->cursor, pe->read, 0);
    log_info("payload.estimate for %s: %d poses%s", pe->caller.name, pe->rq.n_poses,
             pe->rq.apply ? ", apply" : "");
    pe->k = -1;
    pe->phase = PE_START;
    ev_timer_start(pe->loop, &pe->timer);
    return 0;
}

bool payload_est_running(const payload_est *pe)
{
    return pe && pe->phase != PE_IDLE;
}

void payload_est_abort(payload_est *pe, const char *why)
{
    if (payload_est_running(pe)) pe_fail(pe, "aborted", "%s", why);
}

const payload_est_result *payload_est_last_result(const payload_est *pe)
{
    return &pe->res;
}
