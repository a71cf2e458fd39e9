/*
 * payload_est.c — payload.estimate: the arm, holding, moves through a few poses and back, and
 * payload_fit's accumulator turns the telemetry of those moves (measured q, qd, the acceleration
 * measured, the torque the servos reported with q) into the payload's mass and centre. Runs in the
 * main loop: a 5 ms timer follows the moves, the telemetry drain feeds the samples; one estimate at
 * a time per server. The requesting client waits for the reply like for any command (its later
 * requests wait behind it). Moves go through ctl_move_to, so the trajectory checks, limits and
 * safety apply as for any move.
 *
 * Every step checks the arm is still holding or moving on one of the estimate's moves; a fault,
 * an estop, a disable or another client's trajectory ends it with an error and no further move.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api_internal.h"
#include "daemon/log.h"

#define PE_TIMER_S 0.005
#define PE_HALF    5 /* the measured acceleration: central difference of qd over +-PE_HALF ticks */
#define PE_WINDOW  (2 * PE_HALF + 1)

typedef enum { PE_IDLE, PE_START, PE_MOVE_SENT, PE_MOVING, PE_APPLY_SENT } pe_phase;

struct payload_est {
    api_server *srv;
    api_client *cl;
    ctl_reply_to reply; /* to the waiting client (api_sched_reply_to) */
    ev_timer timer;
    pe_phase phase;
    api_payload_request rq;
    int n, k; /* joints; pose being moved to (rq.n_poses = the move back) */
    double q0[CFG_MAX_JOINTS];
    uint32_t traj_id; /* the move under way */
    double move_end;  /* control time the move is due to end [s] */
    double t_start;   /* control time the estimate started [s] */
    payload_acc *acc;
    ctl_sample win[PE_WINDOW]; /* the last samples, consecutive ticks (ring) */
    int n_win, head;           /* held; index of the oldest */
    long samples;
    payload_fit_result fit;
    bool applied;
    double duration; /* control time from the start to the end of the move back [s] */
    ctl_error err;
};

/* Remarks on a fit the user should read before trusting it: a centre coordinate whose standard
 * deviation is above 2 mm + 5 % of the centre's distance (the moves barely showed it). */
static json_t *pe_warnings(const payload_fit_result *f)
{
    json_t *w = json_array();
    if (!f->com_known) {
        json_array_append_new(w, json_string("no payload found: the mass is not above 3 standard "
                                             "deviations; the centre is unknown"));
        return w;
    }
    double dist = sqrt(f->com[0] * f->com[0] + f->com[1] * f->com[1] + f->com[2] * f->com[2]);
    for (int k = 0; k < 3; k++) {
        if (!(f->sd_com[k] > 0.002 + 0.05 * dist)) continue;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "com %c: sd %.1f mm: these moves barely show it (give poses that turn the tool "
                 "about another axis)",
                 "xyz"[k], 1e3 * f -> sd_com[k]);
        json_array_append_new(w, json_string(msg));
    }
    return w;
}

/* The reply of a finished estimate: {mass, com, sd_mass, sd_com, inertia, residual_rms, cond,
 * rows, rows_left_out, samples, poses, duration, applied, warnings}; com and sd_com are null when
 * the mass is too small to place, inertia (about the centre, tool axes) when the moves did not show
 * it. */
static json_t *pe_build_reply(api_client *cl, const ctl_result *res)
{
    (void)res;
    const payload_est *pe = cl->srv->est;
    const payload_fit_result *f = &pe->fit;
    json_t *r = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:i, s:o, s:b}", "mass",
        api_json_number(f->mass), "com", f->com_known ? api_json_vector(f->com, 3) : json_null(),
        "sd_mass", api_json_number(f->sd_mass), "sd_com",
        f->com_known ? api_json_vector(f->sd_com, 3) : json_null(), "inertia",
        f->inertia_known ? api_json_vector(f->inertia, 6) : json_null(), "residual_rms",
        api_json_number(f->residual_rms), "cond", api_json_number(f->cond), "rows",
        (json_int_t)f->rows, "rows_left_out", (json_int_t)f->rows_left_out, "samples",
        (json_int_t)pe->samples, "poses", pe->rq.n_poses, "duration", api_json_number(pe->duration),
        "applied", pe->applied);
    if (r) json_object_set_new(r, "warnings", pe_warnings(f));
    return r;
}

/* Ends the estimate: the reply (pe_build_reply on success), then idle. */
static void pe_finish(payload_est *pe, int rc)
{
    ev_timer_stop(pe->srv->loop, &pe->timer);
    pe->phase = PE_IDLE;
    payload_acc_free(pe->acc);
    pe->acc = NULL;
    if (rc == 0)
        log_info("api: client %u: payload.estimate: %.4g kg (sd %.2g) at %.4g %.4g %.4g m from "
                 "%ld rows (%ld left out), residual %.3g%s",
                 pe->cl->id, pe->fit.mass, pe->fit.sd_mass, pe->fit.com[0], pe->fit.com[1],
                 pe->fit.com[2], pe->fit.rows, pe->fit.rows_left_out, pe->fit.residual_rms,
                 pe->applied ? ", applied" : "");
    else
        log_warn("api: client %u: payload.estimate: %s", pe->cl->id, pe->err.message);
    ctl_result res;
    memset(&res, 0, sizeof res);
    pe->reply.fn(pe->reply.ctx, rc, &pe->err, &res);
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
    ctl_status_get(pe->srv->c, &st);
    pe->traj_id = res->id;
    pe->move_end = st.time + res->duration;
    pe->phase = PE_MOVING;
}

/* The control thread answered payload.set (apply): the estimate's reply. */
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
    pe->applied = true;
    pe_finish(pe, 0);
}

/* The moves are done and the arm is back: fit, then apply or reply. */
static void pe_fit(payload_est *pe)
{
    char why[256];
    if (payload_acc_solve(pe->acc, &pe->fit, why, sizeof why) != 0) {
        pe_fail(pe, "failed", "%s", why);
        return;
    }
    if (!pe->rq.apply) {
        pe_finish(pe, 0);
        return;
    }
    if (!pe->fit.com_known || !(pe->fit.mass > 0)) {
        pe_fail(pe, "failed",
                "not applied: the fit found %.3g kg (sd %.2g kg), no payload to place",
                pe->fit.mass, pe->fit.sd_mass);
        return;
    }
    dyn_payload p;
    memset(&p, 0, sizeof p);
    p.mass = pe->fit.mass;
    memcpy(p.com, pe->fit.com, sizeof p.com);
    if (pe->fit.inertia_known) memcpy(p.inertia, pe->fit.inertia, sizeof p.inertia);
    pe->phase = PE_APPLY_SENT;
    ctl_reply_to to = {pe_apply_answer, pe};
    ctl_error ce = {{0}, {0}};
    if (ctl_payload_set(pe->srv->c, &p, &to, &ce) != 0)
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
            ctl_status_get(pe->srv->c, &st);
            pe->duration = st.time - pe->t_start;
            pe_fit(pe);
            return;
        }
        const double *target = pe->k < pe->rq.n_poses ? pe->rq.poses[pe->k] : pe->q0;
        ctl_status st;
        ctl_status_get(pe->srv->c, &st);
        double far = 0;
        for (int j = 0; j < pe->n; j++) far = fmax(far, fabs(target[j] - st.q_des[j]));
        if (far < 1e-9) continue;
        pe->phase = PE_MOVE_SENT;
        ctl_reply_to to = {pe_move_answer, pe};
        ctl_error ce = {{0}, {0}};
        if (ctl_move_to(pe->srv->c, target, pe->rq.move_time, NULL, NULL, &to, &ce) != 0)
            pe_fail(pe, ce.code[0] ? ce.code : "failed", "pose %d: move refused: %s", pe->k + 1,
                    ce.message);
        return;
    }
}

/* One step (every PE_TIMER_S): checks the arm and follows the moves. */
static void pe_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    payload_est *pe = w->data;
    if (pe->cl->dead) {
        pe_fail(pe, "aborted", "the requesting client went away (the arm holds where it is)");
        return;
    }
    if (pe->phase == PE_MOVE_SENT || pe->phase == PE_APPLY_SENT) return; /* answer pending */
    if (pe->phase == PE_START) { /* the first move is sent here, once the request waits */
        pe_next(pe);
        return;
    }
    ctl_status st;
    ctl_status_get(pe->srv->c, &st);
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
    api_telemetry_drain(pe->srv); /* the move's last samples, before the next move or the fit */
    pe_next(pe);
}

bool api_payload_estimate_running(const api_server *s)
{
    return s->est && s->est->phase != PE_IDLE && s->est->acc;
}

/* Feeds the accumulator the sample PE_HALF ticks back, with the acceleration measured as the
 * central difference of qd over the window around it (zero phase), divided by the time between
 * the two states' reads, and the torque that caused it: the mean of the window's later
 * PE_WINDOW - 1 tau_meas (each the command of the period before its read, as the servo applied
 * it: rounded to its current resolution). On the PUMA test this left a 0.005-0.008 N m residual
 * and the mass within 0.11 %; the commanded tau of the middle tick, 0.010-0.011 N m and 0.3 %
 * high; the middle tau_meas alone or a trapezoid over all 11, 0.008-0.013 N m and 0.12-0.22 %
 * low. A tick without a fresh state starts the window again (a gap); a window whose reads are
 * not about PE_WINDOW - 1 periods apart (the control thread or the device stalled inside it) adds
 * nothing. */
void api_payload_estimate_feed(api_server *s, const ctl_sample *sm)
{
    payload_est *pe = s->est;
    if (!(sm->time >= pe->t_start)) return;
    if (pe->n_win > 0) {
        const ctl_sample *last = &pe->win[(pe->head + pe->n_win - 1) % PE_WINDOW];
        if (sm->tick != last->tick + 1) pe->n_win = 0; /* a gap: start the window again */
    }
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
    double nominal = (2 * PE_HALF) / ctl_config(s->c)->rate_hz;
    if (!(span >= 0.8 * nominal && span <= 1.25 * nominal)) return;
    double qdd[CFG_MAX_JOINTS], tau[CFG_MAX_JOINTS] = {0};
    for (int j = 0; j < pe->n; j++) qdd[j] = (last->qd[j] - first->qd[j]) / span;
    for (int i = 1; i < PE_WINDOW; i++)
        for (int j = 0; j < pe->n; j++)
            tau[j] += pe->win[(pe->head + i) % PE_WINDOW].tau_meas[j] / (PE_WINDOW - 1);
    if (payload_acc_add(pe->acc, mid->q, mid->qd, qdd, tau) > 0) pe->samples++;
}

int api_payload_estimate_start(api_client *cl, const api_payload_request *rq, api_err *e)
{
    api_server *s = cl->srv;
    if (!s->est) {
        s->est = calloc(1, sizeof *s->est);
        if (!s->est) {
            snprintf(e->code, sizeof e->code, "internal");
            snprintf(e->message, sizeof e->message, "out of memory");
            return API_ERROR;
        }
        ev_timer_init(&s->est->timer, pe_timer_cb, PE_TIMER_S, PE_TIMER_S);
        s->est->timer.data = s->est;
        s->est->srv = s;
    }
    payload_est *pe = s->est;
    if (pe->phase != PE_IDLE) {
        snprintf(e->code, sizeof e->code, "busy");
        snprintf(e->message, sizeof e->message,
                 "a payload estimate is running for client %u; wait for it", pe->cl->id);
        return API_ERROR;
    }
    ctl_status st;
    ctl_status_get(s->c, &st);
    if (st.state != CTL_HOLDING || st.traj_id != 0) {
        snprintf(e->code, sizeof e->code, "bad_state");
        snprintf(e->message, sizeof e->message,
                 "payload.estimate needs the arm holding at rest (now %s%s): enable it and let "
                 "any trajectory finish",
                 ctl_state_name(st.state), st.traj_id ? ", moving" : "");
        return API_ERROR;
    }
    const armd_config *cfg = ctl_config(s->c);
    /* joints at least this fast give equations: 5 x the Coulomb smoothing band, >= 0.02 */
    double v_min = fmax(0.02, 5 * cfg->model.friction_smoothing);
    pe->acc = payload_acc_create(&cfg->model, v_min);
    if (!pe->acc) {
        snprintf(e->code, sizeof e->code, "internal");
        snprintf(e->message, sizeof e->message, "the arm's model cannot be built for the fit");
        return API_ERROR;
    }
    pe->cl = cl;
    pe->rq = *rq;
    pe->n = cfg->n_joints;
    memcpy(pe->q0, st.q_des, sizeof pe->q0);
    if (pe->rq.n_poses == 0) pe->rq.n_poses = payload_default_poses(cfg, pe->q0, pe->rq.poses);
    memset(&pe->err, 0, sizeof pe->err);
    memset(&pe->fit, 0, sizeof pe->fit);
    pe->applied = false;
    pe->traj_id = 0;
    pe->t_start = st.time;
    pe->duration = 0;
    pe->n_win = 0;
    pe->samples = 0;
    log_info("api: client %u: payload.estimate: %d poses%s", cl->id, pe->rq.n_poses,
             pe->rq.apply ? ", apply" : "");
    pe->reply = api_sched_reply_to(cl, pe_build_reply, "payload.estimate");
    pe->k = -1;
    pe->phase = PE_START;
    ev_timer_start(s->loop, &pe->timer);
    return API_PENDING;
}

void api_payload_estimate_abort(api_server *s, const char *why)
{
    if (s->est && s->est->phase != PE_IDLE) pe_fail(s->est, "aborted", "%s", why);
}

void api_payload_estimate_stop(api_server *s)
{
    if (s->est) {
        ev_timer_stop(s->loop, &s->est->timer);
        s->est->phase = PE_IDLE; /* answers still on their way are ignored */
        payload_acc_free(s->est->acc);
        s->est->acc = NULL;
    }
}

void api_payload_estimate_free(api_server *s)
{
    api_payload_estimate_stop(s);
    free(s->est);
    s->est = NULL;
}
