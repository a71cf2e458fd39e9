/*
 * api_payload.c — the socket API's payload methods: payload.get, payload.set (checked here and
 * by dynamics' own validation, applied by the control thread between two ticks) and
 * payload.estimate (its params and its reply; the estimate itself is the payload procedure,
 * payload_est.h, which the server owns and which answers to the client's reply target). Main
 * thread.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/feasible.h"
#include "daemon/api_internal.h"
#include "daemon/payload_est.h"
#include "daemon/trajectory.h"

/* {mass, com, inertia}: a payload in the API's form. */
static json_t *payload_json(const dyn_payload *p)
{
    return json_pack("{s:o, s:o, s:o}", "mass", api_json_number(p->mass), "com",
                     api_json_vector(p->com, 3), "inertia", api_json_vector(p->inertia, 6));
}

/* The reply of payload.set: the payload now in use. */
static json_t *build_payload(api_client *cl, const ctl_result *res)
{
    (void)res;
    dyn_payload p;
    ctl_payload_get(cl->srv->c, &p);
    return payload_json(&p);
}

int api_m_payload_get(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (api_check_keys(params, api_no_keys, "params", e)) return API_ERROR;
    dyn_payload p;
    ctl_payload_get(x->c, &p);
    *result = payload_json(&p);
    return API_DONE;
}

/* The first error dyn_desc_validate finds about the payload. */
typedef struct {
    char msg[256];
} payload_issue;

static void on_payload_issue(void *ctx, int joint, const char *field, int is_error, const char *msg)
{
    payload_issue *pi = ctx;
    if (joint == -1 && is_error && !pi->msg[0] && strncmp(field, "payload", 7) == 0)
        snprintf(pi->msg, sizeof pi->msg, "%s: %s", field, msg);
}

/* payload.set {mass, com?, inertia?} -> {mass, com, inertia}: a rigid payload held by the tool,
 * mass [kg] within [0, 10000], COM [m] in the tool frame within 100 m, inertia about the COM
 * (ixx ixy ixz iyy iyz izz) [kg m^2], physically valid (dynamics' own check); com and inertia
 * default to zeros. Applied between two ticks; kept until the next payload.set or a restart
 * (a reload keeps it). */
int api_m_payload_set(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"mass", "com", "inertia", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    dyn_payload p;
    memset(&p, 0, sizeof p);
    json_t *jm = json_object_get(params, "mass"), *jc = json_object_get(params, "com"),
           *ji = json_object_get(params, "inertia");
    if (!jm) return api_fail(e, "invalid_params", "params.mass: missing (0 clears the payload)");
    if (api_get_number(jm, "params.mass", &p.mass, e)) return API_ERROR;
    if (!(p.mass >= 0 && p.mass <= CTL_PAYLOAD_MASS_MAX))
        return api_fail(e, "invalid_params", "params.mass: %g kg is outside [0, %g]", p.mass,
                        CTL_PAYLOAD_MASS_MAX);
    if (jc && api_get_vector(jc, "params.com", 3, false, p.com, e)) return API_ERROR;
    if (ji && api_get_vector(ji, "params.inertia", 6, false, p.inertia, e)) return API_ERROR;
    for (int i = 0; i < 3; i++)
        if (!(fabs(p.com[i]) <= CTL_PAYLOAD_COM_MAX))
            return api_fail(e, "invalid_params", "params.com[%d]: %g m is outside [-%g, %g]", i,
                            p.com[i], CTL_PAYLOAD_COM_MAX, CTL_PAYLOAD_COM_MAX);
    for (int i = 0; i < 6; i++)
        if (!(fabs(p.inertia[i]) <= CTL_PAYLOAD_INERTIA_MAX))
            return api_fail(e, "invalid_params",
                            "params.inertia[%d]: %g kg m^2 is outside [-%g, %g]", i, p.inertia[i],
                            CTL_PAYLOAD_INERTIA_MAX, CTL_PAYLOAD_INERTIA_MAX);
    dyn_model_desc desc = ctl_config(x->c)->model;
    desc.payload = p;
    payload_issue pi = {{0}};
    dyn_desc_validate(&desc, on_payload_issue, &pi);
    if (pi.msg[0]) return api_fail(e, "invalid_params", "params: %s", pi.msg);
    char what[96];
    snprintf(what, sizeof what, "payload.set %g kg at %g %g %g m", p.mass, p.com[0], p.com[1],
             p.com[2]);
    ctl_error ce = {{0}, {0}};
    if (ctl_payload_set(x->c, &p, api_reply_to(x, build_payload, what), &ce) != 0)
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}

/* A number within [lo, hi] from params.key, or def when absent. */
static int get_bounded(json_t *params, const char *key, double lo, double hi, double def,
                       double *out, api_err *e)
{
    char where[64];
    snprintf(where, sizeof where, "params.%s", key);
    json_t *v = json_object_get(params, key);
    *out = def;
    if (!v || json_is_null(v)) return 0;
    if (api_get_number(v, where, out, e)) return -1;
    if (!(*out >= lo && *out <= hi))
        return api_fail(e, "invalid_params", "%s: %g s is outside [%g, %g]", where, *out, lo, hi);
    return 0;
}

/* Remarks on a fit the user should read before trusting it: a payload that payload.set would
 * refuse (above max_payload, or beyond a joint's torque: config/feasible.h), a centre
 * coordinate whose standard deviation is above 2 mm + 5 % of the centre's distance (the moves
 * barely showed it). */
static json_t *estimate_warnings(ctl *c, const payload_fit_result *f)
{
    json_t *w = json_array();
    dyn_payload p = {.mass = f->mass};
    for (int k = 0; f->com_known && k < 3; k++) p.com[k] = f->com[k];
    for (int k = 0; f->inertia_known && k < 6; k++) p.inertia[k] = f->inertia[k];
    ctl_status st;
    ctl_status_get(c, &st);
    char why[240], msg[300];
    if (feas_payload(ctl_config(c), &p, st.q, why, sizeof why)) {
        snprintf(msg, sizeof msg, "payload.set would refuse it: %s", why);
        json_array_append_new(w, json_string(msg));
    }
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

/* The reply of a finished estimate, from the procedure's figures: {mass, com, sd_mass, sd_com,
 * inertia, residual_rms, cond, rows, rows_left_out, samples, poses, duration, applied,
 * warnings, validation: {rms, rms_in_use, rows, passed, why?}}; com and sd_com are null when the
 * mass is too small to place, inertia (about the centre, tool axes) when the moves did not show it.
 */
static json_t *build_estimate(api_client *cl, const ctl_result *res)
{
    (void)res;
    const payload_est_result *r = payload_est_last_result(cl->srv->est);
    const payload_fit_result *f = &r->fit;
    json_t *j = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:i, s:o, s:b}", "mass",
        api_json_number(f->mass), "com", f->com_known ? api_json_vector(f->com, 3) : json_null(),
        "sd_mass", api_json_number(f->sd_mass), "sd_com",
        f->com_known ? api_json_vector(f->sd_com, 3) : json_null(), "inertia",
        f->inertia_known ? api_json_vector(f->inertia, 6) : json_null(), "residual_rms",
        api_json_number(f->residual_rms), "cond", api_json_number(f->cond), "rows",
        (json_int_t)f->rows, "rows_left_out", (json_int_t)f->rows_left_out, "samples",
        (json_int_t)r->samples, "poses", r->poses, "duration", api_json_number(r->duration),
        "applied", r->applied);
    if (j) json_object_set_new(j, "warnings", estimate_warnings(cl->srv->c, f));
    if (j)
        json_object_set_new(j, "validation",
                            json_pack("{s:o, s:o, s:I, s:b, s:s?}", "rms",
                                      api_json_number(r->val_rms), "rms_in_use",
                                      api_json_number(r->val_rms_in_use), "rows",
                                      (json_int_t)r->val_rows, "passed", r->validated, "why",
                                      r->validated ? NULL : r->val_why));
    return j;
}

/* The estimate's caller gone: the client closed while it waited. */
static bool client_gone(void *ctx)
{
    const api_client *cl = ctx;
    return cl->dead;
}

/* payload.estimate {poses?, move_time?, apply?} -> {mass, com, sd_mass, sd_com, inertia,
 * residual_rms, cond, rows, rows_left_out, samples, poses, duration, applied, warnings}: see
 * payload_est.h. Poses: 1 to PAYLOAD_FIT_MAX_POSES arrays of one position per joint, inside the
 * position limits. */
int api_m_payload_estimate(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"poses", "move_time", "apply", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    static payload_est_request rq; /* large; the main loop is the only caller */
    memset(&rq, 0, sizeof rq);
    double dt = api_loop_period(x);
    if (get_bounded(params, "move_time", 0, TRAJ_MAX_DURATION, 0, &rq.move_time, e))
        return API_ERROR;
    if (rq.move_time > 0 && !(rq.move_time >= dt * (1 - 1e-9)))
        return api_fail(
            e, "invalid_params",
            "params.move_time: %g s is shorter than a control period (0 lets the limits "
            "choose)",
            rq.move_time);
    json_t *ja = json_object_get(params, "apply");
    if (ja && !json_is_boolean(ja))
        return api_fail(e, "invalid_params", "params.apply: expected a boolean, got %s",
                        api_json_type_word(ja));
    rq.apply = ja && json_is_true(ja);
    json_t *jp = json_object_get(params, "poses");
    if (jp && !json_is_null(jp)) {
        size_t np = json_is_array(jp) ? json_array_size(jp) : 0;
        if (!json_is_array(jp) || np < 1 || np > PAYLOAD_FIT_MAX_POSES)
            return api_fail(e, "invalid_params",
                            "params.poses: expected an array of 1 to %d poses (one position per "
                            "joint each), got %s",
                            PAYLOAD_FIT_MAX_POSES,
                            json_is_array(jp) ? "an empty array" : api_json_type_word(jp));
        const armd_config *cfg = ctl_config(x->c);
        for (size_t k = 0; k < np; k++) {
            char where[64];
            snprintf(where, sizeof where, "params.poses[%zu]", k);
            if (api_get_vector(json_array_get(jp, k), where, x->n, false, rq.poses[k], e))
                return API_ERROR;
            for (int j = 0; j < x->n; j++)
                if (!(rq.poses[k][j] >= cfg->joint[j].lower &&
                      rq.poses[k][j] <= cfg->joint[j].upper))
                    return api_fail(e, "invalid_params",
                                    "%s[%d]: %g is outside joint %s's limits [%g, %g]", where, j,
                                    rq.poses[k][j], cfg->joint[j].name, cfg->joint[j].lower,
                                    cfg->joint[j].upper);
        }
        rq.n_poses = (int)np;
    }
    payload_est_caller caller = {*api_reply_to(x, build_estimate, "payload.estimate"), client_gone,
                                 x->cl, ""};
    snprintf(caller.name, sizeof caller.name, "client %u", x->cl->id);
    ctl_error ce = {{0}, {0}};
    if (payload_est_start(x->srv->est, &rq, &caller, &ce) != 0) return api_fail_ctl(e, &ce);
    return API_PENDING;
}
