/*
 * ident_record.c — one recorded run of `armctl identify` (see ident_run.h): the excitation sent
 * as trajectories, armd's recorder (record.start, record.fetch: armd-api(7)) keeping
 * every sample at the loop rate whatever this process does meanwhile, the events (a 1 Hz
 * subscription: trajectory_done, fault, collision, state) followed to the motion's end, then
 * the samples fetched in pages from the run's start to its last trajectory_done "done" +
 * ID_TAIL_S. A sample armd's ring lost before its recorder read it is counted (id_rec.lost)
 * and left as a gap (the stretches of ident_signal.h split there).
 *
 * Units: SI, joint side; times in armd's clock [s].
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/armctl.h"
#include "tools/armctl/ident_excite.h"
#include "tools/armctl/ident_run.h"

#define ID_POINT_HZ  20.0 /* trajectory points per second */
#define ID_TAIL_S    0.2  /* s of samples after the last trajectory_done "done" */
#define ID_TIMEOUT_S 10.0 /* s past the motion's duration without its end */
#define ID_PAGE      400  /* samples per record.fetch (a reply of about 200 kB) */
#define ID_POLL_MS   20   /* wait between two fetches that found nothing new [ms] */

static void rec_fail(id_rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rec_fail(id_rec *r, const char *fmt, ...)
{
    if (r->failure[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->failure, sizeof r->failure, fmt, ap);
    va_end(ap);
}

void ident_rec_free(id_rec *r)
{
    free(r->t);
    free(r->mono);
    free(r->q);
    free(r->qd);
    free(r->tau);
    memset(r, 0, sizeof *r);
}

/* Appends a recorded sample (time, mono, q, qd, tau_meas); false when memory is short. */
static bool rec_push(id_rec *r, json_t *p)
{
    if (r->len == r->cap) {
        long cap = r->cap ? 2 * r->cap : 16384;
        size_t nd = sizeof(double) * (size_t)cap * (size_t)r->n;
        double *t = realloc(r->t, sizeof(double) * (size_t)cap);
        if (t) r->t = t;
        double *mono = realloc(r->mono, sizeof(double) * (size_t)cap);
        if (mono) r->mono = mono;
        double *q = realloc(r->q, nd);
        if (q) r->q = q;
        double *qd = realloc(r->qd, nd);
        if (qd) r->qd = qd;
        double *tau = realloc(r->tau, nd);
        if (tau) r->tau = tau;
        if (!t || !mono || !q || !qd || !tau) return false;
        r->cap = cap;
    }
    long i = r->len++;
    r->t[i] = num(json_object_get(p, "time"));
    r->mono[i] = num(json_object_get(p, "mono"));
    /* the torque the servos reported with q (what acted on the arm as q was read, at the
     * device's current resolution) */
    bool meas = json_is_array(json_object_get(p, "tau_meas"));
    r->measured = (i == 0 || r->measured) && meas;
    for (int j = 0; j < r->n; j++) {
        r->q[i * r->n + j] = vec_at(p, "q", j);
        r->qd[i * r->n + j] = vec_at(p, "qd", j);
        r->tau[i * r->n + j] = vec_at(p, "tau_meas", j);
    }
    return true;
}

/* stream() callback: the run's events until its last trajectory_done (t_end set), and anything
 * that stops it; the 1 Hz telemetry only tells the time (the timeout). */
static bool id_message(json_t *m, const char *method, void *ctx)
{
    id_rec *r = ctx;
    json_t *p = json_object_get(m, "params");
    if (!method) return true;
    if (strcmp(method, "telemetry") == 0) {
        double t = num(json_object_get(p, "time"));
        if (t > r->t_from + r->duration + ID_TIMEOUT_S)
            rec_fail(r, "the motion did not end within %.0f s of its duration", ID_TIMEOUT_S);
    } else if (strcmp(method, "trajectory_done") == 0) {
        json_int_t id = json_integer_value(json_object_get(p, "id"));
        const char *result = json_string_value(json_object_get(p, "result"));
        if (id < r->first_id || id > r->last_id) return true;
        /* the goal check after the end: the motion itself ran; an arm whose model is off
         * (what identification is for) may settle slower than the goal tolerance allows */
        bool settled_late = result && id == r->last_id && strstr(result, "from the goal");
        if (settled_late) fprintf(stderr, ID_PREFIX "note: %s\n", result);
        if (!result || (strcmp(result, "done") != 0 && !settled_late)) {
            rec_fail(r, "the excitation trajectory ended \"%s\"", result ? result : "?");
        } else if (id == r->last_id) {
            r->t_end = num(json_object_get(p, "time")) + ID_TAIL_S;
            return false;
        }
    } else if (strcmp(method, "fault") == 0) {
        const char *reason = json_string_value(json_object_get(p, "reason"));
        rec_fail(r, "fault: %s", reason ? reason : "?");
    } else if (strcmp(method, "collision") == 0) {
        const char *joint = json_string_value(json_object_get(p, "joint"));
        rec_fail(r, "collision detected on joint %s", joint ? joint : "?");
    } else if (strcmp(method, "state") == 0) {
        const char *state = json_string_value(json_object_get(p, "state"));
        if (!state || (strcmp(state, "holding") != 0 && strcmp(state, "moving") != 0))
            rec_fail(r, "the arm went %s", state ? state : "?");
    }
    return !r->failure[0];
}

/* One period of e as trajectory points (t in (0, T], q, qd, qdd). */
static json_t *period_points(const ident_excitation *e)
{
    json_t *pts = json_array();
    int count = (int)lround(e->period * ID_POINT_HZ);
    for (int k = 1; k <= count; k++) {
        double t = e->period * k / count, q[DYN_MAX_DOF], qd[DYN_MAX_DOF], qdd[DYN_MAX_DOF];
        ident_excitation_eval(e, t, q, qd, qdd);
        if (k == count) /* exactly at rest at the start pose */
            for (int j = 0; j < e->n; j++) {
                q[j] = e->q0[j];
                qd[j] = qdd[j] = 0;
            }
        json_t *qa = json_array(), *qda = json_array(), *qdda = json_array();
        for (int j = 0; j < e->n; j++) {
            json_array_append_new(qa, json_real(q[j]));
            json_array_append_new(qda, json_real(qd[j]));
            json_array_append_new(qdda, json_real(qdd[j]));
        }
        json_array_append_new(
            pts, json_pack("{s:f, s:o, s:o, s:o}", "t", t, "q", qa, "qd", qda, "qdd", qdda));
    }
    return pts;
}

/* Adds one page of records to r (those in (t_from, t_end]); sets r->closed past t_end. Returns
 * the records read. */
static long take_page(id_rec *r, json_t *records)
{
    size_t k = json_array_size(records);
    for (size_t i = 0; i < k && !r->closed && !r->failure[0]; i++) {
        json_t *p = json_array_get(records, i);
        r->lost += (long)json_integer_value(json_object_get(p, "lost_before"));
        double t = num(json_object_get(p, "time"));
        if (!(t > r->t_from)) continue;
        if (t > r->t_end) {
            r->closed = true;
            break;
        }
        const char *state = json_string_value(json_object_get(p, "state"));
        if (!state || (strcmp(state, "holding") != 0 && strcmp(state, "moving") != 0))
            rec_fail(r, "the arm went %s at %.3f s", state ? state : "?", t);
        else if (!rec_push(r, p))
            rec_fail(r, "out of memory after %ld samples", r->len);
    }
    return (long)k;
}

/* Fetches armd's recording from its first sample to the first one past r->t_end: 0, or 1
 * (r->failure says why). */
static int fetch_recording(armctl_conn *c, id_rec *r)
{
    long from = 0;
    while (!r->closed && !r->failure[0]) {
        if (interrupted) {
            rec_fail(r, "interrupted");
            break;
        }
        json_t *res = call(c, "record.fetch",
                           json_pack("{s:I, s:i}", "from", (json_int_t)from, "max", ID_PAGE));
        if (!res) {
            rec_fail(r, "armd's recording could not be fetched");
            break;
        }
        long k = take_page(r, json_object_get(res, "records"));
        from += k;
        bool done = json_is_true(json_object_get(res, "done"));
        long total = (long)json_integer_value(json_object_get(res, "samples"));
        const char *end = json_string_value(json_object_get(res, "end"));
        if (!r->closed && done && from >= total)
            rec_fail(r,
                     "armd's recording ended (%s) after %ld samples, before the motion's end "
                     "at %.3f s",
                     end ? end : "?", total, r->t_end);
        json_decref(res);
        if (k == 0 && !r->closed && !r->failure[0]) {
            int closed;
            json_t *m = conn_next(c, ID_POLL_MS, &closed); /* events meanwhile: not needed */
            json_decref(m);
            if (closed) rec_fail(r, "armd closed the connection");
        }
    }
    json_decref(call(c, "record.stop", json_pack("{s:b}", "discard", 1)));
    return r->failure[0] ? 1 : 0;
}

int ident_run_motion(armctl_conn *c, const ident_excitation *e, int periods, const char *what,
                     id_rec *r)
{
    json_t *st = call(c, "status", NULL);
    if (!st) return 1;
    r->t_from = num(json_object_get(st, "time"));
    json_decref(st);
    r->t_end = INFINITY;
    r->duration = e->period * periods;
    /* armd records from its next tick: the whole motion, its tail and the timeout's room */
    json_t *rs = call(c, "record.start",
                      json_pack("{s:f, s:[s, s, s]}", "duration", r->duration + ID_TIMEOUT_S + 1,
                                "fields", "q", "qd", "tau_meas"));
    if (!rs) return 1;
    json_decref(rs);
    json_t *pts = period_points(e);
    for (int p = 0; p < periods; p++) {
        json_t *res =
            call(c, "trajectory",
                 json_pack("{s:O, s:s}", "points", pts, "mode", p ? "append" : "replace"));
        if (!res) {
            json_decref(pts);
            if (p) json_decref(call(c, "cancel", NULL));
            return 1;
        }
        json_int_t id = json_integer_value(json_object_get(res, "id"));
        if (p == 0) r->first_id = id;
        r->last_id = id;
        json_decref(res);
    }
    json_decref(pts);
    fprintf(stderr, ID_PREFIX "%s motion: %.0f s (%d x %.3g s)\n", what, r->duration, periods,
            e->period);
    if (stream(c, id_message, r) != 0) return 1;
    if (interrupted) rec_fail(r, "interrupted");
    if (!r->failure[0] && fetch_recording(c, r) == 0) return 0;
    fprintf(stderr, ID_PREFIX "%s motion: %s\n", what, r->failure);
    json_t *x = call(c, "cancel", NULL);
    json_decref(x);
    return 1;
}
