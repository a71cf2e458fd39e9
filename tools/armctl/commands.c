/*
 * commands.c — armctl's request/reply commands: status, info, pose, the argument-less state
 * commands, move, send, gains, controller, wait. Each returns the exit status (0 ok, 1 the
 * daemon refused or failed, 2 usage).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "tools/armctl/armctl.h"
#include "tools/armctl/trajfile.h"

/* status: the state, fault, joint table, trajectory and loop timing. */
int cmd_status(armctl_conn *c, int argc, char **argv)
{
    (void)argc, (void)argv;
    arm_info a;
    json_t *s = call(c, "status", NULL); /* first: a connection beyond max_clients runs one */
    if (!s) return 1;
    if (get_info(c, &a, NULL)) {
        fprintf(stderr, "armctl: no joint names (every connection of armd is taken: this one "
                        "was served one request); the status as armd sent it:\n");
        print_json(s);
        json_decref(s);
        return 0;
    }
    return print_result(&a, s, print_status);
}

/* The pose result: position [m] and quaternion, with the fixed-axis roll-pitch-yaw angles of
 * the quaternion's rotation R = Rz(yaw) Ry(pitch) Rx(roll) ([arm] tool_rpy's convention) [deg]. */
static void print_pose(const arm_info *a, json_t *p)
{
    (void)a;
    double w = vec_at(p, "orientation", 0), x = vec_at(p, "orientation", 1);
    double y = vec_at(p, "orientation", 2), z = vec_at(p, "orientation", 3);
    double r20 = 2 * (x * z - w * y), r21 = 2 * (y * z + w * x), r22 = 1 - 2 * (x * x + y * y);
    double r10 = 2 * (x * y + w * z), r00 = 1 - 2 * (y * y + z * z);
    const double deg = 180 / M_PI;
    printf("position     %.5f %.5f %.5f m (base frame)\n", vec_at(p, "position", 0),
           vec_at(p, "position", 1), vec_at(p, "position", 2));
    printf("orientation  w %.6f x %.6f y %.6f z %.6f\n", w, x, y, z);
    printf("             roll %.3f pitch %.3f yaw %.3f deg\n", deg * atan2(r21, r22),
           deg * asin(fmax(-1.0, fmin(1.0, -r20))), deg * atan2(r10, r00));
}

/* pose: the tool frame in the base frame (status's pose). */
int cmd_pose(armctl_conn *c, int argc, char **argv)
{
    (void)argc, (void)argv;
    json_t *s = call(c, "status", NULL);
    if (!s) return 1;
    json_t *p = json_incref(json_object_get(s, "pose"));
    json_decref(s);
    if (!json_is_object(p)) {
        fprintf(stderr, "armctl: armd's status has no pose (an armd older than this armctl?)\n");
        json_decref(p);
        return 1;
    }
    return print_result(NULL, p, print_pose);
}

/* info: arm, joints, limits, rate, driver, controller. */
int cmd_info(armctl_conn *c, int argc, char **argv)
{
    (void)argc, (void)argv;
    arm_info a;
    json_t *info;
    if (get_info(c, &a, &info)) return 1;
    return print_result(&a, info, print_info);
}

/* enable, disable, hold, estop, reset, cancel, reload: the new state (or what reloaded). */
int cmd_simple(armctl_conn *c, const char *method)
{
    json_t *r = call(c, method, NULL);
    if (!r) return 1;
    if (opt_json)
        print_json(r);
    else if (json_object_get(r, "state"))
        printf("%s\n", json_string_value(json_object_get(r, "state")));
    else if (json_object_get(r, "changed")) {
        const char *ch = json_string_value(json_object_get(r, "changed"));
        printf("reloaded: %s\n", ch && ch[0] ? ch : "nothing changed");
    }
    json_decref(r);
    return 0;
}

/* move Q1..Qn [--time T]: move_to a joint position [rad|m] in T [s]. */
int cmd_move(armctl_conn *c, int argc, char **argv)
{
    json_t *q = json_array();
    double t = -1;
    for (int i = 0; i < argc; i++) {
        double v;
        if (strcmp(argv[i], "--time") == 0 || strcmp(argv[i], "-t") == 0) {
            if (i + 1 >= argc || !parse_double(argv[i + 1], &t) || t <= 0) {
                json_decref(q);
                return usage_error("move: --time needs a duration > 0 [s]%s", "");
            }
            i++;
        } else if (parse_double(argv[i], &v)) {
            json_array_append_new(q, json_real(v));
        } else {
            json_decref(q);
            return usage_error("move: '%s' is not a number", argv[i]);
        }
    }
    json_t *p = json_pack("{s:o}", "q", q);
    if (t > 0) json_object_set_new(p, "duration", json_real(t));
    json_t *r = call(c, "move_to", p);
    return r ? print_result(NULL, r, print_trajectory) : 1;
}

/* send FILE [--append]: a trajectory file (JSON or CSV, see trajfile.h). */
int cmd_send(armctl_conn *c, int argc, char **argv)
{
    const char *file = NULL;
    bool append = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--append") == 0)
            append = true;
        else if (!file)
            file = argv[i];
        else
            return usage_error("send: unexpected argument '%s'", argv[i]);
    }
    if (!file) return usage_error("send: which file?%s", "");
    arm_info a;
    if (get_info(c, &a, NULL)) return 1;
    char err[512];
    json_t *pts = trajfile_load(file, a.n, err, sizeof err);
    if (!pts) {
        fprintf(stderr, "armctl: %s\n", err);
        return 1;
    }
    json_t *r = call(c, "trajectory",
                     json_pack("{s:o, s:s}", "points", pts, "mode", append ? "append" : "replace"));
    return r ? print_result(NULL, r, print_trajectory) : 1;
}

/* Adds one "NAME=V" / "NAME=V1,..,Vn" argument of command cmd to the params p, NAME one of
 * names[] (NULL-terminated) and the param its entry of params[]: 0, or the usage exit status. */
static int add_keyed(json_t *p, const char *cmd, const char *arg, const char *const *names,
                     const char *const *params)
{
    const char *eq = strchr(arg, '=');
    int k = -1;
    for (int i = 0; eq && names[i]; i++)
        if (strlen(names[i]) == (size_t)(eq - arg) && strncmp(arg, names[i], eq - arg) == 0) k = i;
    if (k < 0) {
        char expected[200] = "";
        for (int i = 0; names[i]; i++)
            snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s%s=V",
                     i == 0         ? ""
                     : names[i + 1] ? ", "
                                    : " or ",
                     names[i]);
        char msg[400];
        snprintf(msg, sizeof msg, "%s: '%s': expected %s", cmd, arg, expected);
        return usage_error("%s", msg);
    }
    json_t *vals = json_array();
    char buf[4096], *tok, *save = NULL;
    snprintf(buf, sizeof buf, "%s", eq + 1);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (!parse_double(tok, &v)) {
            json_decref(vals);
            char msg[300];
            snprintf(msg, sizeof msg, "%s: '%s' is not a number", cmd, tok);
            return usage_error("%s", msg);
        }
        json_array_append_new(vals, json_real(v));
    }
    if (json_array_size(vals) == 1) {
        json_object_set(p, params[k], json_array_get(vals, 0));
        json_decref(vals);
    } else {
        json_object_set_new(p, params[k], vals);
    }
    return 0;
}

/* The params of a "NAME=V ..." command line (NULL: no arguments, *bad 0), or NULL with *bad the
 * usage exit status. */
static json_t *keyed_params(const char *cmd, int argc, char **argv, const char *const *names,
                            const char *const *params, int *bad)
{
    *bad = 0;
    if (argc == 0) return NULL;
    json_t *p = json_object();
    for (int i = 0; i < argc && !*bad; i++) *bad = add_keyed(p, cmd, argv[i], names, params);
    if (*bad) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* gains [kp=V kd=V ki=V] with V one number or V1,..,Vn: shows or sets the gains. */
int cmd_gains(armctl_conn *c, int argc, char **argv)
{
    static const char *const names[] = {"kp", "kd", "ki", NULL};
    int bad;
    json_t *p = keyed_params("gains", argc, argv, names, names, &bad); /* before anything */
    if (bad) return bad;
    arm_info a;
    if (get_info(c, &a, NULL)) {
        json_decref(p);
        return 1;
    }
    json_t *r = p ? call(c, "gains.set", p) : call(c, "gains.get", NULL);
    return r ? print_result(&a, r, print_gains) : 1;
}

/* impedance [translational=V] [rotational=V] [damping=V] [guide=V,V]: shows or sets the
 * cartesian_impedance law's spring and damper. */
int cmd_impedance(armctl_conn *c, int argc, char **argv)
{
    static const char *const names[] = {"translational", "rotational", "damping", "guide", NULL};
    static const char *const params[] = {"translational_stiffness", "rotational_stiffness",
                                         "damping_ratio", "guide_damping", NULL};
    int bad;
    json_t *p = keyed_params("impedance", argc, argv, names, params, &bad);
    if (bad) return bad;
    json_t *r = p ? call(c, "impedance.set", p) : call(c, "impedance.get", NULL);
    return r ? print_result(NULL, r, print_impedance) : 1;
}

/* controller NAME: switches the control law. */
int cmd_controller(armctl_conn *c, int argc, char **argv)
{
    cfg_controller law;
    if (argc != 1 || cfg_controller_parse(argv[0], &law) != 0)
        return usage_error("controller: '%s' is not a control law (computed_torque, pd_gravity, "
                           "gravity_comp, cartesian_impedance)",
                           argc ? argv[0] : "");
    json_t *r = call(c, "controller.set", json_pack("{s:s}", "name", argv[0]));
    return r ? print_result(NULL, r, print_controller) : 1;
}

/* wait done|STATE [--timeout S]: polls status every 20 ms; fails on fault or estop. */
int cmd_wait(armctl_conn *c, int argc, char **argv)
{
    const char *what = NULL;
    double timeout = -1;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--timeout") == 0) {
            if (i + 1 >= argc || !parse_double(argv[i + 1], &timeout) || timeout <= 0)
                return usage_error("wait: --timeout '%s': needs a duration > 0 [s]",
                                   i + 1 < argc ? argv[i + 1] : "");
            i++;
        } else if (argv[i][0] == '-')
            return usage_error("wait: unknown option '%s' (the option is --timeout S)", argv[i]);
        else if (!what)
            what = argv[i];
        else
            return usage_error("wait: unexpected argument '%s' (one of done or a state)", argv[i]);
    }
    if (!what) return usage_error("wait: done or a state name%s", "");
    if (strcmp(what, "done") != 0 && !is_state_name(what)) {
        char msg[300];
        snprintf(msg, sizeof msg, "wait: '%s' is not done or a state (done | %s)", what,
                 state_names_text);
        return usage_error("%s", msg);
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!interrupted) {
        json_t *s = call(c, "status", NULL);
        if (!s) return 1;
        const char *state = json_string_value(json_object_get(s, "state"));
        bool has_traj = json_is_object(json_object_get(s, "trajectory"));
        bool reached = strcmp(what, "done") == 0 ? !has_traj && (strcmp(state, "holding") == 0)
                                                 : strcmp(state, what) == 0;
        if (reached) {
            if (!opt_json) printf("%s\n", state);
            json_decref(s);
            return 0;
        }
        if (strcmp(state, "fault") == 0 || strcmp(state, "estop") == 0 ||
            (strcmp(what, "done") == 0 && strcmp(state, "disabled") == 0)) {
            json_t *f = json_object_get(s, "fault");
            const char *advice = state_advice(state);
            fprintf(stderr, "armctl: wait %s: the arm is %s%s%s%s%s%s\n", what,
                    strcmp(state, "disabled") == 0 ? "" : "in ", state,
                    json_is_string(f) ? ": " : "", json_is_string(f) ? json_string_value(f) : "",
                    advice ? "; " : "", advice ? advice : "");
            json_decref(s);
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec);
        if (timeout > 0 && el > timeout) {
            fprintf(stderr, "armctl: wait %s: timed out after %g s (state %s)\n", what, timeout,
                    state);
            json_decref(s); /* state points into s */
            return 1;
        }
        json_decref(s);
        struct timespec nap = {0, 20000000};
        nanosleep(&nap, NULL);
    }
    return 1;
}
