/*
 * api_methods.c — the socket API's requests: parsing a line, checking the request and its
 * params, calling the control thread's interface (control.h) and building the reply. All joint
 * vectors are in config joint order, SI units. Main thread, called by the scheduler
 * (api_sched.c) with the reply target a command's answer goes to; it never calls the scheduler.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api_internal.h"
#include "daemon/log.h"

/* The reply of a state command: {"state"} after it. */
static json_t *build_state(api_client *cl, const ctl_result *res)
{
    (void)res;
    ctl_status st;
    ctl_status_get(cl->srv->c, &st);
    return json_pack("{s:s}", "state", ctl_state_name(st.state));
}

/* The reply of a trajectory or move: {"id", "duration"}. */
json_t *api_build_traj(api_client *cl, const ctl_result *res)
{
    (void)cl;
    return json_pack("{s:I, s:f}", "id", (json_int_t)res->id, "duration", res->duration);
}

/* {} */
static json_t *build_empty(api_client *cl, const ctl_result *res)
{
    (void)cl, (void)res;
    return json_object();
}

/* --------------------------------------------------------------------------------- methods */

/* info: name, version, dof, joint names and types, limits, rate, driver, controller. */
static int m_info(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (api_check_keys(params, api_no_keys, "params", e)) return -1;
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
    if (*result) {
        json_object_set_new(*result, "max_clients", json_integer(x->srv->max_clients));
        json_object_set_new(*result, "config", json_string(cfg->source));
        json_object_set_new(*result, "tool", api_tool_info_json(cfg));
    }
    return 0;
}

/* [safety] collision of the running configuration, as written in the INI. */
static const char *collision_mode_name(ctl *c)
{
    switch (ctl_config(c)->safety.collision) {
    case COLLISION_DETECT:
        return "detect";
    case COLLISION_REACT:
        return "react";
    default:
        return "off";
    }
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
    if (api_check_keys(params, api_no_keys, "params", e)) return -1;
    ctl_status st;
    ctl_status_get(x->c, &st);
    int n = st.n;
    json_t *traj = st.traj_id ? json_pack("{s:I, s:o, s:o}", "id", (json_int_t)st.traj_id,
                                          "progress", api_json_number(st.traj_progress),
                                          "remaining", api_json_number(st.traj_remaining))
                              : json_null();
    json_t *loop = json_pack(
        "{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o, s:o, s:o, s:o}", "rate_hz",
        api_json_number(st.rate_hz), "ticks", (json_int_t)st.ticks, "overruns",
        (json_int_t)st.overruns, "late_ticks", (json_int_t)st.late_ticks, "failed_reads",
        (json_int_t)st.failed_reads, "failed_writes", (json_int_t)st.failed_writes, "read_gaps",
        (json_int_t)st.read_gaps, "longest_read_gap_ms", api_json_number(st.longest_read_gap_ms),
        "saturations", (json_int_t)st.saturations, "lateness_us", timing_json(&st.lateness),
        "read_us", timing_json(&st.read), "compute_us", timing_json(&st.compute), "write_us",
        timing_json(&st.write));
    json_t *coll =
        json_pack("{s:s, s:o, s:I}", "mode", collision_mode_name(x->c), "external_torque",
                  api_json_vector(st.external_torque, n), "detected", (json_int_t)st.collisions);
    *result = json_pack(
        "{s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i}", "state",
        ctl_state_name(st.state), "fault", st.fault[0] ? json_string(st.fault) : json_null(),
        "time", api_json_number(st.time), "controller", cfg_controller_name(st.controller), "q",
        api_json_vector(st.q, n), "qd", api_json_vector(st.qd, n), "tau",
        api_json_vector(st.tau, n), "q_des", api_json_vector(st.q_des, n), "qd_des",
        api_json_vector(st.qd_des, n), "error", api_json_vector(st.error, n), "trajectory", traj,
        "loop", loop, "collision", coll, "clients", x->srv->n_clients);
    double mono, wall;
    api_clock_stamps(x->c, st.time, &mono, &wall);
    json_object_set_new(*result, "mono", api_json_stamp(mono));
    json_object_set_new(*result, "wall", api_json_stamp(wall));
    json_object_set_new(*result, "tool", api_tool_status_json(ctl_config(x->c), &st.tool));
    json_object_set_new(*result, "pose",
                        json_pack("{s:o, s:o}", "position", api_json_vector(st.pose, 3),
                                  "orientation", api_json_vector(st.pose + 3, 4)));
    json_object_set_new(*result, "wrench",
                        json_pack("{s:o, s:o}", "force", api_json_vector(st.wrench, 3), "torque",
                                  api_json_vector(st.wrench + 3, 3)));
    return 0;
}

/* enable / disable / hold / estop / reset / cancel: a state command; the reply, once the
 * control thread has applied it, is the new state. */
static int state_command(api_ctx *x, json_t *params, api_err *e,
                         int (*cmd)(ctl *, const ctl_reply_to *, ctl_error *), const char *name)
{
    if (api_check_keys(params, api_no_keys, "params", e)) return API_ERROR;
    ctl_error ce = {{0}, {0}};
    if (cmd(x->c, api_reply_to(x, build_state, name), &ce) != 0) return api_fail_ctl(e, &ce);
    return API_PENDING;
}

/* A time [s] within [one loop period, TRAJ_MAX_DURATION] and at least a period after prev. */
static int check_time(api_ctx *x, const char *where, double t, double prev, api_err *e)
{
    double dt = api_loop_period(x);
    if (!(t >= dt * (1 - 1e-9) && t <= TRAJ_MAX_DURATION))
        return api_fail(e, "invalid_params",
                        "%s: %.6g s is outside [%.6g, %.0f] s (one control period to an hour)",
                        where, t, dt, TRAJ_MAX_DURATION);
    if (!(t - prev >= dt * (1 - 1e-9)))
        return api_fail(e, "invalid_params",
                        "%s: %.6g s is not at least one control period (%.6g s) after the previous "
                        "waypoint's %.6g s",
                        where, t, dt, prev);
    return 0;
}

/* name, "points[i]" of length k, with m (".t", ".q", ...) after it, for a message. */
static const char *member(char *name, int k, const char *m)
{
    strcpy(name + k, m);
    return name;
}

/* trajectory {points: [{t, q, qd?, qdd?}, ...], mode: "replace"|"append"} -> {id, duration}. */
static int m_trajectory(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"points", "mode", NULL};
    static const char *const pkeys[] = {"t", "q", "qd", "qdd", NULL};
    if (api_check_keys(params, keys, "params", e)) return -1;
    bool append = false;
    json_t *mode = json_object_get(params, "mode");
    if (mode) {
        if (json_is_string(mode) && strcmp(json_string_value(mode), "append") == 0)
            append = true;
        else if (!json_is_string(mode) || strcmp(json_string_value(mode), "replace") != 0)
            return api_fail(e, "invalid_params", "params.mode: expected \"replace\" or \"append\"");
    }
    json_t *pts = json_object_get(params, "points");
    if (!pts) return api_fail(e, "invalid_params", "params.points: missing");
    if (!json_is_array(pts) || json_array_size(pts) == 0)
        return api_fail(e, "invalid_params",
                        "params.points: expected a non-empty array of waypoints");
    size_t np = json_array_size(pts);
    if (np > API_MAX_POINTS)
        return api_fail(e, "invalid_params", "params.points: %zu waypoints, at most %d per request",
                        np, API_MAX_POINTS);
    ctl_waypoint *w = calloc(np, sizeof *w);
    if (!w) return api_fail(e, "internal", "out of memory");
    int rc = -1;
    for (size_t i = 0; i < np; i++) {
        json_t *p = json_array_get(pts, i);
        char name[64]; /* "points[i]", then a member's name after it (one snprintf a point) */
        const int k = snprintf(name, sizeof name, "points[%zu]", i);
        if (!json_is_object(p)) {
            api_fail(e, "invalid_params", "%s: expected an object {t, q, qd?, qdd?}", name);
            goto out;
        }
        if (api_check_keys(p, pkeys, name, e)) goto out;
        json_t *t = json_object_get(p, "t"), *q = json_object_get(p, "q");
        if (!t || !q) {
            api_fail(e, "invalid_params", "%s: missing", member(name, k, t ? ".q" : ".t"));
            goto out;
        }
        if (api_get_number(t, member(name, k, ".t"), &w[i].t, e)) goto out;
        if (!(i == 0 && w[i].t == 0) /* a t = 0 first point is the start itself */ &&
            check_time(x, member(name, k, ".t"), w[i].t, i > 0 ? w[i - 1].t : 0, e))
            goto out;
        if (api_get_vector(q, member(name, k, ".q"), x->n, false, w[i].q, e)) goto out;
        json_t *qd = json_object_get(p, "qd"), *qdd = json_object_get(p, "qdd");
        if (qd) {
            if (api_get_vector(qd, member(name, k, ".qd"), x->n, false, w[i].qd, e)) goto out;
            w[i].has_qd = true;
        }
        if (qdd) {
            if (!qd) {
                api_fail(e, "invalid_params", "points[%zu].qdd: given without points[%zu].qd", i,
                         i);
                goto out;
            }
            if (api_get_vector(qdd, member(name, k, ".qdd"), x->n, false, w[i].qdd, e)) goto out;
            w[i].has_qdd = true;
        }
    }
    char what[96];
    snprintf(what, sizeof what, "trajectory (%zu points, %s)", np, append ? "append" : "replace");
    ctl_error ce = {{0}, {0}};
    const ctl_reply_to *to = api_reply_to(x, api_build_traj, what);
    if (ctl_trajectory(x->c, w, (int)np, append, NULL, NULL, to, &ce) != 0) {
        api_fail_ctl(e, &ce);
        goto out;
    }
    rc = API_PENDING;
out:
    free(w);
    return rc;
}

/* move_to {q, duration?} -> {id, duration}; duration within [one loop period, 3600] s. */
static int m_move_to(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"q", "duration", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    double q[CFG_MAX_JOINTS], duration = 0;
    json_t *jq = json_object_get(params, "q"), *jd = json_object_get(params, "duration");
    if (!jq) return api_fail(e, "invalid_params", "params.q: missing");
    if (api_get_vector(jq, "params.q", x->n, false, q, e)) return API_ERROR;
    if (jd && !json_is_null(jd)) {
        if (api_get_number(jd, "params.duration", &duration, e)) return API_ERROR;
        double dt = api_loop_period(x);
        if (!(duration >= dt * (1 - 1e-9) && duration <= TRAJ_MAX_DURATION))
            return api_fail(
                e, "invalid_params",
                "params.duration: %.6g s is outside [%.6g, %.0f] s (one control period to "
                "an hour; omit it to let the limits choose)",
                duration, dt, TRAJ_MAX_DURATION);
    }
    ctl_error ce = {{0}, {0}};
    const ctl_reply_to *to = api_reply_to(x, api_build_traj, "move_to");
    if (ctl_move_to(x->c, q, duration, NULL, NULL, to, &ce) != 0) return api_fail_ctl(e, &ce);
    return API_PENDING;
}

/* {kp[], kd[], ki[], controller}: the gains in use. */
static json_t *gains_json(ctl *c, int n)
{
    double kp[CFG_MAX_JOINTS], kd[CFG_MAX_JOINTS], ki[CFG_MAX_JOINTS];
    ctl_gains_get(c, kp, kd, ki);
    ctl_status st;
    ctl_status_get(c, &st);
    return json_pack("{s:o, s:o, s:o, s:s}", "kp", api_json_vector(kp, n), "kd",
                     api_json_vector(kd, n), "ki", api_json_vector(ki, n), "controller",
                     cfg_controller_name(st.controller));
}

/* The reply of gains.set: the gains now in use. */
static json_t *build_gains(api_client *cl, const ctl_result *res)
{
    (void)res;
    return gains_json(cl->srv->c, ctl_config(cl->srv->c)->n_joints);
}

/* The reply of controller.set: {controller} now in use. */
static json_t *build_controller(api_client *cl, const ctl_result *res)
{
    (void)res;
    ctl_status st;
    ctl_status_get(cl->srv->c, &st);
    return json_pack("{s:s}", "controller", cfg_controller_name(st.controller));
}

/* The reply of reload: {changed}. */
static json_t *build_reload(api_client *cl, const ctl_result *res)
{
    (void)cl;
    return json_pack("{s:s}", "changed", res->changed);
}

static int m_gains_get(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (api_check_keys(params, api_no_keys, "params", e)) return -1;
    *result = gains_json(x->c, x->n);
    return API_DONE;
}

/* gains.set {kp?, kd?, ki?}: each a number for every joint or an array of one per joint, within
 * the config loader's bounds: kp, kd in [0, 1e7], ki in [0, 1e9]. */
static int m_gains_set(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"kp", "kd", "ki", NULL};
    static const double max[] = {CTL_KP_MAX, CTL_KD_MAX, CTL_KI_MAX};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    double v[3][CFG_MAX_JOINTS];
    const double *ptr[3] = {NULL, NULL, NULL};
    char what[64] = "gains.set";
    for (int k = 0; k < 3; k++) {
        json_t *j = json_object_get(params, keys[k]);
        if (!j) continue;
        char where[32];
        snprintf(where, sizeof where, "params.%s", keys[k]);
        if (api_get_vector(j, where, x->n, true, v[k], e)) return API_ERROR;
        for (int i = 0; i < x->n; i++)
            if (!(v[k][i] >= 0 && v[k][i] <= max[k]))
                return api_fail(e, "invalid_params", "%s[%d]: %g is outside [0, %g]", where, i,
                                v[k][i], max[k]);
        ptr[k] = v[k];
        strncat(what, k == 0 ? " kp" : k == 1 ? " kd" : " ki", sizeof what - strlen(what) - 1);
    }
    if (!ptr[0] && !ptr[1] && !ptr[2])
        return api_fail(e, "invalid_params", "params: give at least one of kp, kd, ki");
    ctl_error ce = {{0}, {0}};
    if (ctl_gains_set(x->c, ptr[0], ptr[1], ptr[2], api_reply_to(x, build_gains, what), &ce) != 0)
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}

/* controller.set {name} -> {controller}. */
static int m_controller_set(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"name", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    json_t *name = json_object_get(params, "name");
    cfg_controller law;
    if (!json_is_string(name) || cfg_controller_parse(json_string_value(name), &law) != 0)
        return api_fail(e, "invalid_params",
                        "params.name: expected \"computed_torque\", \"pd_gravity\", "
                        "\"gravity_comp\" or \"cartesian_impedance\"");
    char what[64];
    snprintf(what, sizeof what, "controller.set %s", cfg_controller_name(law));
    ctl_error ce = {{0}, {0}};
    if (ctl_controller_set(x->c, law, api_reply_to(x, build_controller, what), &ce) != 0)
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}

/* reload -> {changed} (the same path as SIGHUP). */
static int m_reload(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    if (api_check_keys(params, api_no_keys, "params", e)) return API_ERROR;
    if (!x->srv->reload) return api_fail(e, "unsupported", "reload is not available");
    ctl_error ce = {{0}, {0}};
    log_info("api: client %u: reload", x->cl->id);
    if (x->srv->reload(x->srv->reload_ctx, api_reply_to(x, build_reload, NULL), &ce) != 0)
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}

/* The reply of sim.run: {time}, the control time reached [s]. */
static json_t *build_sim_time(api_client *cl, const ctl_result *res)
{
    (void)res;
    ctl_status st;
    ctl_status_get(cl->srv->c, &st);
    return json_pack("{s:o}", "time", api_json_number(st.time));
}

/* sim.run {seconds} -> {time} (armd --lockstep only): simulated time advances by seconds, in
 * (0, SIM_RUN_MAX_S]; answered once it has. */
#define SIM_RUN_MAX_S 3600.0
static int m_sim_run(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"seconds", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    if (!x->srv->sim_run)
        return api_fail(e, "unsupported",
                        "sim.run: this armd drives a real arm (simulated time exists only with "
                        "armd --lockstep)");
    json_t *js = json_object_get(params, "seconds");
    double seconds;
    if (!js) return api_fail(e, "invalid_params", "params.seconds: missing");
    if (api_get_number(js, "params.seconds", &seconds, e)) return API_ERROR;
    if (!(seconds > 0 && seconds <= SIM_RUN_MAX_S))
        return api_fail(e, "invalid_params", "params.seconds: %g s is outside (0, %g]", seconds,
                        SIM_RUN_MAX_S);
    ctl_error ce = {{0}, {0}};
    if (x->srv->sim_run(x->srv->sim_ctx, seconds, api_reply_to(x, build_sim_time, NULL), &ce))
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}

/* subscribe {rate_hz?} -> {rate_hz}: telemetry at 1 Hz up to the loop rate, plus events. */
static int m_subscribe(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"rate_hz", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    double rate = 50, loop_hz = ctl_config(x->c)->rate_hz;
    json_t *r = json_object_get(params, "rate_hz");
    if (r && api_get_number(r, "params.rate_hz", &rate, e)) return API_ERROR;
    if (!(rate >= 1 && rate <= loop_hz))
        return api_fail(e, "invalid_params",
                        "params.rate_hz: %g Hz is outside [1, %g] (the loop rate)", rate, loop_hz);
    double eff = api_telemetry_subscribe(x->cl, rate);
    *result = json_pack("{s:f}", "rate_hz", eff);
    return API_DONE;
}

static int m_unsubscribe(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (api_check_keys(params, api_no_keys, "params", e)) return -1;
    api_telemetry_subscribe(x->cl, 0);
    *result = json_object();
    return 0;
}

/* stats.reset -> {}: the loop timing quantiles start afresh (counters keep counting). */
static int m_stats_reset(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    if (api_check_keys(params, api_no_keys, "params", e)) return API_ERROR;
    ctl_error ce = {{0}, {0}};
    if (ctl_stats_reset(x->c, api_reply_to(x, build_empty, NULL), &ce) != 0)
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}

/* The methods: a handler, or (fn == NULL) a state command run by state_command();
 * operator = allowed on a restricted connection (one beyond max_clients). */
static const struct {
    const char *name;
    api_method_fn fn;
    int (*state_cmd)(ctl *, const ctl_reply_to *, ctl_error *);
    bool operator;
} methods[] = {
    {"info", m_info, NULL, false},
    {"status", m_status, NULL, true},
    {"enable", NULL, ctl_enable, false},
    {"disable", NULL, ctl_disable, true},
    {"hold", NULL, ctl_hold, false},
    {"estop", NULL, ctl_estop, true},
    {"reset", NULL, ctl_reset, false},
    {"cancel", NULL, ctl_cancel, false},
    {"trajectory", m_trajectory, NULL, false},
    {"move_to", m_move_to, NULL, false},
    {"move_linear", api_m_move_linear, NULL, false},
    {"gains.get", m_gains_get, NULL, false},
    {"gains.set", m_gains_set, NULL, false},
    {"controller.set", m_controller_set, NULL, false},
    {"impedance.get", api_m_impedance_get, NULL, false},
    {"impedance.set", api_m_impedance_set, NULL, false},
    {"reload", m_reload, NULL, false},
    {"sim.run", m_sim_run, NULL, false},
    {"subscribe", m_subscribe, NULL, false},
    {"unsubscribe", m_unsubscribe, NULL, false},
    {"stats.reset", m_stats_reset, NULL, false},
    {"payload.get", api_m_payload_get, NULL, false},
    {"payload.set", api_m_payload_set, NULL, false},
    {"payload.estimate", api_m_payload_estimate, NULL, false},
    {"record.start", api_m_record_start, NULL, false},
    {"record.fetch", api_m_record_fetch, NULL, false},
    {"record.stop", api_m_record_stop, NULL, false},
    {"tool.move", api_m_tool_move, NULL, false},
    {"tool.grasp", api_m_tool_grasp, NULL, false},
    {"tool.release", api_m_tool_release, NULL, false},
    {"tool.stop", api_m_tool_stop, NULL, false},
};

/* Entry i of the method table: its name, and whether a restricted connection may call it. */
const char *api_method_name(size_t i, bool *restricted_ok)
{
    if (i >= sizeof methods / sizeof methods[0]) return NULL;
    if (restricted_ok) *restricted_ok = methods[i].operator;
    return methods[i].name;
}

/* Sends {"id", "result"} or {"id", "error"}: every real in full (api_json_line), so that a
 * numeric id comes back as the very double the request's id was read as. */
void api_reply(api_client *cl, json_t *id, int rc, json_t *result, const api_err *e)
{
    if (!id || cl->dead) return;
    json_t *msg = rc == 0 ? json_pack("{s:O, s:O}", "id", id, "result", result)
                          : json_pack("{s:O, s:{s:s, s:s}}", "id", id, "error", "code", e->code,
                                      "message", e->message);
    if (msg)
        api_client_send_json(cl, msg);
    else
        api_client_drop(cl, "out of memory for a reply");
    json_decref(msg);
}

/* Sends {"id": null, "error"} for a line that is no request at all. */
static void send_error_no_id(api_client *cl, const api_err *e)
{
    json_t *id = json_null();
    api_reply(cl, id, -1, NULL, e);
    json_decref(id);
}

/* Runs method m for the request; API_DONE with *result, API_ERROR with *e, or API_PENDING
 * (the reply comes with the answer, which goes to x->reply). */
static int run_method(api_ctx *x, size_t m, json_t *params, json_t **result, api_err *e)
{
    if (x->cl->restricted && !methods[m].operator)
        return api_fail(e, "restricted",
                        "this connection is beyond max_clients: one request, estop, status or "
                        "disable; '%s' needs a free connection",
                        methods[m].name);
    json_t *empty = NULL;
    if (!params || json_is_null(params)) params = empty = json_object();
    int rc = methods[m].fn ? methods[m].fn(x, params, result, e)
                           : state_command(x, params, e, methods[m].state_cmd, methods[m].name);
    json_decref(empty);
    if (rc == API_DONE && !*result) rc = api_fail(e, "internal", "could not build the reply");
    return rc;
}

size_t api_request_length(const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    size_t skip = 0;
    while (skip < len && (line[skip] == ' ' || line[skip] == '\t')) skip++;
    return skip == len ? 0 : len;
}

int api_dispatch(api_client *cl, const char *line, size_t len, const ctl_reply_to *reply,
                 api_wait *w)
{
    len = api_request_length(line, len);
    if (len == 0) return API_DONE; /* blank line */
    json_error_t je;
    json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    int rc = api_dispatch_parsed(cl, req, &je, reply, w);
    json_decref(req);
    return rc;
}

int api_dispatch_parsed(api_client *cl, json_t *req, const json_error_t *je,
                        const ctl_reply_to *reply, api_wait *w)
{
    api_err e = {{0}, {0}};
    if (!req) {
        api_fail(&e, "parse_error", "malformed JSON at column %d: %s", je->column, je->text);
        send_error_no_id(cl, &e);
        return API_ERROR;
    }
    if (!json_is_object(req)) {
        api_fail(&e, "invalid_request", "a request must be a JSON object, got %s",
                 api_json_type_word(req));
        send_error_no_id(cl, &e);
        return API_ERROR;
    }
    json_t *id = json_object_get(req, "id"), *result = NULL;
    static const char *const keys[] = {"id", "method", "params", "jsonrpc", NULL};
    json_t *method = json_object_get(req, "method");
    json_t *params = json_object_get(req, "params");
    int rc = API_ERROR;
    if (api_check_keys(req, keys, "request", &e) != 0) {
        snprintf(e.code, sizeof e.code, "invalid_request");
    } else if (!method) {
        api_fail(&e, "invalid_request", "request: missing \"method\"");
    } else if (!json_is_string(method)) {
        api_fail(&e, "invalid_request", "request.method: expected a string, got %s",
                 api_json_type_word(method));
    } else if (params && !json_is_object(params) && !json_is_null(params)) {
        api_fail(&e, "invalid_params", "request.params: expected an object, got %s",
                 api_json_type_word(params));
    } else {
        const char *name = json_string_value(method);
        size_t m = 0, n_methods = sizeof methods / sizeof methods[0];
        while (m < n_methods && strcmp(methods[m].name, name) != 0) m++;
        api_ctx x = {cl, cl->srv, cl->srv->c, ctl_config(cl->srv->c)->n_joints, *reply, {0}};
        if (m == n_methods)
            api_fail(&e, "unknown_method", "unknown method '%.64s'", name);
        else
            rc = run_method(&x, m, params, &result, &e);
        if (rc == API_PENDING) { /* the reply goes out with the answer */
            *w = x.wait;
            w->id = id ? json_incref(id) : NULL;
        }
    }
    if (rc != API_PENDING) api_reply(cl, id, rc, result, &e);
    json_decref(result);
    return rc;
}
