/*
 * api_methods.c — the socket API's requests: parsing a line, checking the request and its
 * params, calling the control thread's interface (control.h) and building the reply. All joint
 * vectors are in config joint order, SI units.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api_internal.h"
#include "daemon/log.h"

typedef struct {
    api_client *cl;
    api_server *srv;
    ctl *c;
    int n; /* joints */
} api_ctx;

typedef int (*api_method_fn)(api_ctx *x, json_t *params, json_t **result, api_err *e);

/* Fills an error and returns -1. */
static int fail(api_err *e, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(api_err *e, const char *code, const char *fmt, ...)
{
    snprintf(e->code, sizeof e->code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return -1;
}

/* Copies a control-thread error. */
static int fail_ctl(api_err *e, const ctl_error *ce)
{
    return fail(e, ce->code[0] ? ce->code : "failed", "%s",
                ce->message[0] ? ce->message : "command failed");
}

json_t *api_json_number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *api_json_vector(const double *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, api_json_number(v[i]));
    return a;
}

static const char *json_type_word(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* Rejects members of obj not in allowed (NULL-terminated); where names the object. */
static int check_keys(json_t *obj, const char *const *allowed, const char *where, api_err *e)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        bool ok = false;
        for (int i = 0; allowed[i]; i++) ok = ok || strcmp(key, allowed[i]) == 0;
        if (!ok) {
            char list[256] = "";
            for (int i = 0; allowed[i]; i++) {
                strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, allowed[i], sizeof list - strlen(list) - 1);
            }
            return fail(e, "invalid_params", "%s: unknown member '%s' (expected: %s)", where, key,
                        allowed[0] ? list : "none");
        }
    }
    return 0;
}

/* A finite number. */
static int get_number(json_t *v, const char *where, double *out, api_err *e)
{
    if (!json_is_number(v))
        return fail(e, "invalid_params", "%s: expected a number, got %s", where, json_type_word(v));
    double x = json_number_value(v);
    if (!isfinite(x)) return fail(e, "invalid_params", "%s: not a finite number", where);
    *out = x;
    return 0;
}

/* An array of exactly n finite numbers; with allow_scalar a single number fills all n. */
static int get_vector(json_t *v, const char *where, int n, bool allow_scalar, double *out,
                      api_err *e)
{
    if (allow_scalar && json_is_number(v)) {
        double x;
        if (get_number(v, where, &x, e)) return -1;
        for (int i = 0; i < n; i++) out[i] = x;
        return 0;
    }
    if (!json_is_array(v))
        return fail(e, "invalid_params", "%s: expected %san array of %d numbers, got %s", where,
                    allow_scalar ? "a number or " : "", n, json_type_word(v));
    if ((int)json_array_size(v) != n)
        return fail(e, "invalid_params", "%s: expected %d values (one per joint), got %zu", where,
                    n, json_array_size(v));
    for (int i = 0; i < n; i++) {
        char w[128];
        snprintf(w, sizeof w, "%s[%d]", where, i);
        if (get_number(json_array_get(v, (size_t)i), w, &out[i], e)) return -1;
    }
    return 0;
}

static json_t *state_result(api_ctx *x)
{
    ctl_status st;
    ctl_status_get(x->c, &st);
    return json_pack("{s:s}", "state", ctl_state_name(st.state));
}

static const char *const no_keys[] = {NULL};

/* --------------------------------------------------------------------------------- methods */

/* info: name, version, dof, joint names and types, limits, rate, driver, controller. */
static int m_info(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (check_keys(params, no_keys, "params", e)) return -1;
    const armd_config *cfg = ctl_config(x->c);
    ctl_status st;
    ctl_status_get(x->c, &st);
    int n = cfg->n_joints;
    json_t *names = json_array(), *types = json_array();
    double lo[CFG_MAX_JOINTS], hi[CFG_MAX_JOINTS], vel[CFG_MAX_JOINTS], acc[CFG_MAX_JOINTS],
        trq[CFG_MAX_JOINTS];
    for (int i = 0; i < n; i++) {
        const cfg_joint *j = &cfg->joint[i];
        json_array_append_new(names, json_string(j->name));
        json_array_append_new(
            types,
            json_string(cfg->model.joint[i].type == DYN_PRISMATIC ? "prismatic" : "revolute"));
        lo[i] = j->lower;
        hi[i] = j->upper;
        vel[i] = j->velocity;
        acc[i] = j->acceleration;
        trq[i] = j->torque;
    }
    *result = json_pack(
        "{s:s, s:s, s:i, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o}, s:f, s:{s:s, s:s, s:i}, s:s, "
        "s:s}",
        "name", cfg->name, "version", x->srv->version, "dof", n, "joints", names, "types", types,
        "limits", "lower", api_json_vector(lo, n), "upper", api_json_vector(hi, n), "velocity",
        api_json_vector(vel, n), "acceleration", api_json_vector(acc, n), "torque",
        api_json_vector(trq, n), "rate_hz", cfg->rate_hz, "driver", "type",
        cfg->driver.type == DRIVER_DXL2 ? "dxl2" : "armlink", "port", cfg->driver.port, "baud",
        cfg->driver.baud, "controller", cfg_controller_name(st.controller), "socket", x->srv->path);
    if (*result) json_object_set_new(*result, "max_clients", json_integer(x->srv->max_clients));
    return 0;
}

static json_t *timing_json(const ctl_timing *t)
{
    return json_pack("{s:o, s:o, s:o}", "p50", api_json_number(t->p50_us), "p99",
                     api_json_number(t->p99_us), "max", api_json_number(t->max_us));
}

/* status: state, fault, time, joint state, desired state, tracking error, trajectory, loop
 * statistics. */
static int m_status(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (check_keys(params, no_keys, "params", e)) return -1;
    ctl_status st;
    ctl_status_get(x->c, &st);
    int n = st.n;
    json_t *traj = st.traj_id ? json_pack("{s:I, s:o, s:o}", "id", (json_int_t)st.traj_id,
                                          "progress", api_json_number(st.traj_progress),
                                          "remaining", api_json_number(st.traj_remaining))
                              : json_null();
    json_t *loop = json_pack(
        "{s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o, s:o, s:o, s:o}", "rate_hz",
        api_json_number(st.rate_hz), "ticks", (json_int_t)st.ticks, "overruns",
        (json_int_t)st.overruns, "failed_reads", (json_int_t)st.failed_reads, "failed_writes",
        (json_int_t)st.failed_writes, "read_gaps", (json_int_t)st.read_gaps, "longest_read_gap_ms",
        api_json_number(st.longest_read_gap_ms), "saturations", (json_int_t)st.saturations,
        "lateness_us", timing_json(&st.lateness), "read_us", timing_json(&st.read), "compute_us",
        timing_json(&st.compute), "write_us", timing_json(&st.write));
    *result = json_pack("{s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i}",
                        "state", ctl_state_name(st.state), "fault",
                        st.fault[0] ? json_string(st.fault) : json_null(), "time",
                        api_json_number(st.time), "controller", cfg_controller_name(st.controller),
                        "q", api_json_vector(st.q, n), "qd", api_json_vector(st.qd, n), "tau",
                        api_json_vector(st.tau, n), "q_des", api_json_vector(st.q_des, n), "qd_des",
                        api_json_vector(st.qd_des, n), "error", api_json_vector(st.error, n),
                        "trajectory", traj, "loop", loop, "clients", x->srv->n_clients);
    return 0;
}

/* enable / disable / hold / estop / reset / cancel: a state command, reply the new state. */
static int state_command(api_ctx *x, json_t *params, json_t **result, api_err *e,
                         int (*cmd)(ctl *, ctl_error *), const char *name)
{
    if (check_keys(params, no_keys, "params", e)) return -1;
    ctl_error ce = {{0}, {0}};
    if (cmd(x->c, &ce) != 0) return fail_ctl(e, &ce);
    log_info("api: client %u: %s", x->cl->id, name);
    *result = state_result(x);
    return 0;
}
/* trajectory {points: [{t, q, qd?, qdd?}, ...], mode: "replace"|"append"} -> {id, duration}. */
static int m_trajectory(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"points", "mode", NULL};
    static const char *const pkeys[] = {"t", "q", "qd", "qdd", NULL};
    if (check_keys(params, keys, "params", e)) return -1;
    bool append = false;
    json_t *mode = json_object_get(params, "mode");
    if (mode) {
        if (json_is_string(mode) && strcmp(json_string_value(mode), "append") == 0)
            append = true;
        else if (!json_is_string(mode) || strcmp(json_string_value(mode), "replace") != 0)
            return fail(e, "invalid_params", "params.mode: expected \"replace\" or \"append\"");
    }
    json_t *pts = json_object_get(params, "points");
    if (!pts) return fail(e, "invalid_params", "params.points: missing");
    if (!json_is_array(pts) || json_array_size(pts) == 0)
        return fail(e, "invalid_params", "params.points: expected a non-empty array of waypoints");
    size_t np = json_array_size(pts);
    if (np > API_MAX_POINTS)
        return fail(e, "invalid_params", "params.points: %zu waypoints, at most %d per request", np,
                    API_MAX_POINTS);
    ctl_waypoint *w = calloc(np, sizeof *w);
    if (!w) return fail(e, "internal", "out of memory");
    int rc = -1;
    for (size_t i = 0; i < np; i++) {
        json_t *p = json_array_get(pts, i);
        char where[64];
        snprintf(where, sizeof where, "points[%zu]", i);
        if (!json_is_object(p)) {
            fail(e, "invalid_params", "%s: expected an object {t, q, qd?, qdd?}", where);
            goto out;
        }
        if (check_keys(p, pkeys, where, e)) goto out;
        char wt[80], wq[80], wqd[80], wqdd[80];
        snprintf(wt, sizeof wt, "%s.t", where);
        snprintf(wq, sizeof wq, "%s.q", where);
        snprintf(wqd, sizeof wqd, "%s.qd", where);
        snprintf(wqdd, sizeof wqdd, "%s.qdd", where);
        json_t *t = json_object_get(p, "t"), *q = json_object_get(p, "q");
        if (!t) {
            fail(e, "invalid_params", "%s: missing", wt);
            goto out;
        }
        if (!q) {
            fail(e, "invalid_params", "%s: missing", wq);
            goto out;
        }
        if (get_number(t, wt, &w[i].t, e) || get_vector(q, wq, x->n, false, w[i].q, e)) goto out;
        json_t *qd = json_object_get(p, "qd"), *qdd = json_object_get(p, "qdd");
        if (qd) {
            if (get_vector(qd, wqd, x->n, false, w[i].qd, e)) goto out;
            w[i].has_qd = true;
        }
        if (qdd) {
            if (!qd) {
                fail(e, "invalid_params", "%s: given without %s", wqdd, wqd);
                goto out;
            }
            if (get_vector(qdd, wqdd, x->n, false, w[i].qdd, e)) goto out;
            w[i].has_qdd = true;
        }
    }
    uint32_t id = 0;
    double duration = 0;
    ctl_error ce = {{0}, {0}};
    if (ctl_trajectory(x->c, w, (int)np, append, &id, &duration, &ce) != 0) {
        fail_ctl(e, &ce);
        goto out;
    }
    log_info("api: client %u: trajectory %u (%zu points, %s, %.3f s)", x->cl->id, id, np,
             append ? "append" : "replace", duration);
    *result = json_pack("{s:I, s:f}", "id", (json_int_t)id, "duration", duration);
    rc = 0;
out:
    free(w);
    return rc;
}

/* move_to {q, duration?} -> {id, duration}. */
static int m_move_to(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"q", "duration", NULL};
    if (check_keys(params, keys, "params", e)) return -1;
    double q[CFG_MAX_JOINTS], duration = 0;
    json_t *jq = json_object_get(params, "q"), *jd = json_object_get(params, "duration");
    if (!jq) return fail(e, "invalid_params", "params.q: missing");
    if (get_vector(jq, "params.q", x->n, false, q, e)) return -1;
    if (jd && !json_is_null(jd)) {
        if (get_number(jd, "params.duration", &duration, e)) return -1;
        if (duration <= 0)
            return fail(e, "invalid_params",
                        "params.duration: must be > 0 s (omit it to let "
                        "the limits choose)");
    }
    uint32_t id = 0;
    double dur_out = 0;
    ctl_error ce = {{0}, {0}};
    if (ctl_move_to(x->c, q, duration, &id, &dur_out, &ce) != 0) return fail_ctl(e, &ce);
    log_info("api: client %u: move_to, trajectory %u (%.3f s)", x->cl->id, id, dur_out);
    *result = json_pack("{s:I, s:f}", "id", (json_int_t)id, "duration", dur_out);
    return 0;
}

static json_t *gains_json(api_ctx *x)
{
    double kp[CFG_MAX_JOINTS], kd[CFG_MAX_JOINTS], ki[CFG_MAX_JOINTS];
    ctl_gains_get(x->c, kp, kd, ki);
    ctl_status st;
    ctl_status_get(x->c, &st);
    return json_pack("{s:o, s:o, s:o, s:s}", "kp", api_json_vector(kp, x->n), "kd",
                     api_json_vector(kd, x->n), "ki", api_json_vector(ki, x->n), "controller",
                     cfg_controller_name(st.controller));
}

static int m_gains_get(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (check_keys(params, no_keys, "params", e)) return -1;
    *result = gains_json(x);
    return 0;
}

/* gains.set {kp?, kd?, ki?}: each a number for every joint or an array of one per joint. */
static int m_gains_set(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"kp", "kd", "ki", NULL};
    if (check_keys(params, keys, "params", e)) return -1;
    double v[3][CFG_MAX_JOINTS];
    const double *ptr[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++) {
        json_t *j = json_object_get(params, keys[k]);
        if (!j) continue;
        char where[32];
        snprintf(where, sizeof where, "params.%s", keys[k]);
        if (get_vector(j, where, x->n, true, v[k], e)) return -1;
        for (int i = 0; i < x->n; i++)
            if (v[k][i] < 0)
                return fail(e, "invalid_params", "%s[%d]: gains must be >= 0", where, i);
        ptr[k] = v[k];
    }
    if (!ptr[0] && !ptr[1] && !ptr[2])
        return fail(e, "invalid_params", "params: give at least one of kp, kd, ki");
    ctl_error ce = {{0}, {0}};
    if (ctl_gains_set(x->c, ptr[0], ptr[1], ptr[2], &ce) != 0) return fail_ctl(e, &ce);
    log_info("api: client %u: gains.set%s%s%s", x->cl->id, ptr[0] ? " kp" : "", ptr[1] ? " kd" : "",
             ptr[2] ? " ki" : "");
    *result = gains_json(x);
    return 0;
}

/* controller.set {name}. */
static int m_controller_set(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"name", NULL};
    if (check_keys(params, keys, "params", e)) return -1;
    json_t *name = json_object_get(params, "name");
    cfg_controller law;
    if (!json_is_string(name) || cfg_controller_parse(json_string_value(name), &law) != 0)
        return fail(e, "invalid_params",
                    "params.name: expected \"computed_torque\", \"pd_gravity\" or "
                    "\"gravity_comp\"");
    ctl_error ce = {{0}, {0}};
    if (ctl_controller_set(x->c, law, &ce) != 0) return fail_ctl(e, &ce);
    log_info("api: client %u: controller.set %s", x->cl->id, cfg_controller_name(law));
    *result = json_pack("{s:s}", "controller", cfg_controller_name(law));
    return 0;
}

/* reload -> {changed} (the same path as SIGHUP). */
static int m_reload(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (check_keys(params, no_keys, "params", e)) return -1;
    if (!x->srv->reload) return fail(e, "unsupported", "reload is not available");
    char changed[2048] = "";
    ctl_error ce = {{0}, {0}};
    log_info("api: client %u: reload", x->cl->id);
    if (x->srv->reload(x->srv->reload_ctx, changed, sizeof changed, &ce) != 0)
        return fail_ctl(e, &ce);
    *result = json_pack("{s:s}", "changed", changed);
    return 0;
}

/* subscribe {rate_hz?} -> {rate_hz}: telemetry at up to the loop rate, plus events. */
static int m_subscribe(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"rate_hz", NULL};
    if (check_keys(params, keys, "params", e)) return -1;
    double rate = 50;
    json_t *r = json_object_get(params, "rate_hz");
    if (r && get_number(r, "params.rate_hz", &rate, e)) return -1;
    if (rate <= 0) return fail(e, "invalid_params", "params.rate_hz: must be > 0");
    double eff = api_telemetry_subscribe(x->cl, rate);
    *result = json_pack("{s:f}", "rate_hz", eff);
    return 0;
}

static int m_unsubscribe(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (check_keys(params, no_keys, "params", e)) return -1;
    api_telemetry_subscribe(x->cl, 0);
    *result = json_object();
    return 0;
}

/* stats.reset -> {}: the loop timing quantiles start afresh (counters keep counting). */
static int m_stats_reset(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (check_keys(params, no_keys, "params", e)) return -1;
    ctl_error ce = {{0}, {0}};
    if (ctl_stats_reset(x->c, &ce) != 0) return fail_ctl(e, &ce);
    *result = json_object();
    return 0;
}

/* The methods: a handler, or (fn == NULL) a state command run by state_command(). */
static const struct {
    const char *name;
    api_method_fn fn;
    int (*state_cmd)(ctl *, ctl_error *);
} methods[] = {
    {"info", m_info, NULL},
    {"status", m_status, NULL},
    {"enable", NULL, ctl_enable},
    {"disable", NULL, ctl_disable},
    {"hold", NULL, ctl_hold},
    {"estop", NULL, ctl_estop},
    {"reset", NULL, ctl_reset},
    {"cancel", NULL, ctl_cancel},
    {"trajectory", m_trajectory, NULL},
    {"move_to", m_move_to, NULL},
    {"gains.get", m_gains_get, NULL},
    {"gains.set", m_gains_set, NULL},
    {"controller.set", m_controller_set, NULL},
    {"reload", m_reload, NULL},
    {"subscribe", m_subscribe, NULL},
    {"unsubscribe", m_unsubscribe, NULL},
    {"stats.reset", m_stats_reset, NULL},
};

/* Sends {"id", "error"} (id may be NULL = JSON null). */
static void send_error(api_client *cl, json_t *id, const api_err *e)
{
    json_t *msg = json_pack("{s:O?, s:{s:s, s:s}}", "id", id, "error", "code", e->code, "message",
                            e->message);
    if (!msg) return;
    if (!id) json_object_set_new(msg, "id", json_null());
    api_client_send_json(cl, msg);
    json_decref(msg);
}

void api_dispatch(api_client *cl, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    size_t skip = 0;
    while (skip < len && (line[skip] == ' ' || line[skip] == '\t')) skip++;
    if (skip == len) return; /* blank line */
    api_err e = {{0}, {0}};
    json_error_t je;
    json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!req) {
        fail(&e, "parse_error", "malformed JSON at column %d: %s", je.column, je.text);
        send_error(cl, NULL, &e);
        return;
    }
    json_t *id = NULL, *result = NULL;
    if (!json_is_object(req)) {
        fail(&e, "invalid_request", "a request must be a JSON object, got %s", json_type_word(req));
        send_error(cl, NULL, &e);
        json_decref(req);
        return;
    }
    id = json_object_get(req, "id");
    static const char *const keys[] = {"id", "method", "params", "jsonrpc", NULL};
    json_t *method = json_object_get(req, "method");
    json_t *params = json_object_get(req, "params");
    int rc = -1;
    if (check_keys(req, keys, "request", &e) != 0) {
        snprintf(e.code, sizeof e.code, "invalid_request");
    } else {
        if (!method)
            fail(&e, "invalid_request", "request: missing \"method\"");
        else if (!json_is_string(method))
            fail(&e, "invalid_request", "request.method: expected a string, got %s",
                 json_type_word(method));
        else if (params && !json_is_object(params) && !json_is_null(params))
            fail(&e, "invalid_params", "request.params: expected an object, got %s",
                 json_type_word(params));
        else {
            const char *name = json_string_value(method);
            size_t m = 0, n_methods = sizeof methods / sizeof methods[0];
            while (m < n_methods && strcmp(methods[m].name, name) != 0) m++;
            if (m == n_methods) {
                fail(&e, "unknown_method", "unknown method '%.64s'", name);
            } else {
                json_t *empty = NULL;
                if (!params || json_is_null(params)) params = empty = json_object();
                api_ctx x = {cl, cl->srv, cl->srv->c, ctl_config(cl->srv->c)->n_joints};
                rc = methods[m].fn ? methods[m].fn(&x, params, &result, &e)
                                   : state_command(&x, params, &result, &e, methods[m].state_cmd,
                                                   methods[m].name);
                json_decref(empty);
                if (rc == 0 && !result) rc = fail(&e, "internal", "could not build the reply");
            }
        }
    }
    if (id && !cl->dead) {
        if (rc == 0) {
            json_t *msg = json_pack("{s:O, s:O}", "id", id, "result", result);
            if (msg) api_client_send_json(cl, msg);
            json_decref(msg);
        } else {
            send_error(cl, id, &e);
        }
    }
    json_decref(result);
    json_decref(req);
}
