/*
 * format.c — armctl's output: the daemon's JSON as is (--json), or human-readable tables with
 * joint names and units (rad, rad/s, N m; m, m/s, N for prismatic joints).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/armctl.h"

/* Prints v as indented JSON, reals to 16 significant digits (a wall clock's microseconds). */
void print_json(json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(16));
    if (s) puts(s);
    free(s);
}

/* The value of a JSON number, NaN for anything else. */
double num(json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* obj[key][i] as a number. */
double vec_at(json_t *obj, const char *key, int i)
{
    return num(json_array_get(json_object_get(obj, key), (size_t)i));
}

static const char *unit_q(const arm_info *a, int i)
{
    return a->prismatic[i] ? "m" : "rad";
}
static const char *unit_qd(const arm_info *a, int i)
{
    return a->prismatic[i] ? "m/s" : "rad/s";
}
static const char *unit_tau(const arm_info *a, int i)
{
    return a->prismatic[i] ? "N" : "N m";
}

/* Prints the joint table of a status or telemetry object (error = q_des - q when absent). */
void print_joint_table(const arm_info *a, json_t *s, FILE *out)
{
    fprintf(out, "%-14s %11s %11s %11s %11s %11s  %s\n", "joint", "q", "q_des", "error", "qd",
            "tau", "units");
    for (int i = 0; i < a->n; i++) {
        double q = vec_at(s, "q", i), qdes = vec_at(s, "q_des", i);
        double e = json_object_get(s, "error") ? vec_at(s, "error", i) : qdes - q;
        fprintf(out, "%-14s %11.5f %11.5f %11.5f %11.4f %11.3f  %s, %s, %s\n", a->name[i], q, qdes,
                e, vec_at(s, "qd", i), vec_at(s, "tau", i), unit_q(a, i), unit_qd(a, i),
                unit_tau(a, i));
    }
}

/* The tool's line of a telemetry object (its "tool": opening, speed, force; nothing without
 * one), in mm, mm/s and N. */
void print_tool_line(json_t *s, FILE *out)
{
    json_t *t = json_object_get(s, "tool");
    if (!json_is_object(t)) return;
    fprintf(out, "%-14s opening %.2f mm, speed %.1f mm/s, force %.2f N\n", "tool",
            1e3 * num(json_object_get(t, "opening")), 1e3 * num(json_object_get(t, "speed")),
            num(json_object_get(t, "force")));
}

/* The tool pose's line of a status or telemetry object ("pose": position [m], orientation as a
 * unit quaternion w x y z), position in mm; nothing without one. */
void print_pose_line(json_t *s, FILE *out)
{
    json_t *p = json_object_get(s, "pose");
    if (!json_is_object(p)) return;
    fprintf(out, "%-14s x %.2f y %.2f z %.2f mm, quaternion w %.5f x %.5f y %.5f z %.5f\n", "pose",
            1e3 * vec_at(p, "position", 0), 1e3 * vec_at(p, "position", 1),
            1e3 * vec_at(p, "position", 2), vec_at(p, "orientation", 0),
            vec_at(p, "orientation", 1), vec_at(p, "orientation", 2), vec_at(p, "orientation", 3));
}

/* The wrench's line of a status or telemetry object ("wrench": force [N], moment [N m] about
 * the tool origin, base frame); nothing without one or while it is unknown (observer off). */
void print_wrench_line(json_t *s, FILE *out)
{
    json_t *w = json_object_get(s, "wrench");
    if (!json_is_object(w) || !isfinite(vec_at(w, "force", 0))) return;
    fprintf(out, "%-14s force x %.2f y %.2f z %.2f N, moment x %.3f y %.3f z %.3f N m\n", "wrench",
            vec_at(w, "force", 0), vec_at(w, "force", 1), vec_at(w, "force", 2),
            vec_at(w, "torque", 0), vec_at(w, "torque", 1), vec_at(w, "torque", 2));
}

/* One row of the loop timing table: p50, p99, max [us]. */
static void print_timing(const char *label, json_t *t)
{
    printf("  %-10s %9.1f %9.1f %9.1f\n", label, num(json_object_get(t, "p50")),
           num(json_object_get(t, "p99")), num(json_object_get(t, "max")));
}

/* Prints an event notification (state, fault, trajectory_done) as one line. */
void print_event(json_t *m, FILE *out)
{
    const char *method = json_string_value(json_object_get(m, "method"));
    json_t *p = json_object_get(m, "params");
    if (strcmp(method, "state") == 0)
        fprintf(out, "[%.3f] state %s\n", num(json_object_get(p, "time")),
                json_string_value(json_object_get(p, "state")));
    else if (strcmp(method, "fault") == 0)
        fprintf(out, "[%.3f] FAULT: %s\n", num(json_object_get(p, "time")),
                json_string_value(json_object_get(p, "reason")));
    else if (strcmp(method, "trajectory_done") == 0)
        fprintf(out, "[%.3f] trajectory %lld: %s\n", num(json_object_get(p, "time")),
                (long long)json_integer_value(json_object_get(p, "id")),
                json_string_value(json_object_get(p, "result")));
    else if (strcmp(method, "collision") == 0)
        fprintf(out, "[%.3f] COLLISION on joint %s (reaction %s, now %s)\n",
                num(json_object_get(p, "time")), json_string_value(json_object_get(p, "joint")),
                json_string_value(json_object_get(p, "reaction")),
                json_string_value(json_object_get(p, "state")));
}

/* Prints a command's result: the JSON with --json, else human(a, r). Consumes r; returns exit
 * status 0. */
int print_result(const arm_info *a, json_t *r, void (*human)(const arm_info *a, json_t *r))
{
    if (opt_json)
        print_json(r);
    else
        human(a, r);
    json_decref(r);
    return 0;
}

/* The id and duration [s] of an accepted trajectory (move_to, trajectory). */
void print_trajectory(const arm_info *a, json_t *r)
{
    (void)a;
    printf("trajectory %lld: %.3f s\n", (long long)json_integer_value(json_object_get(r, "id")),
           num(json_object_get(r, "duration")));
}

/* The controller now running (controller.set). */
void print_controller(const arm_info *a, json_t *r)
{
    (void)a;
    printf("controller %s\n", json_string_value(json_object_get(r, "controller")));
}

/* The status result: state, fault, controller, trajectory, joint table, loop timing. */
void print_status(const arm_info *a, json_t *s)
{
    json_t *fault = json_object_get(s, "fault");
    printf("state       %s\n", json_string_value(json_object_get(s, "state")));
    printf("fault       %s\n", json_is_string(fault) ? json_string_value(fault) : "none");
    printf("controller  %s\n", json_string_value(json_object_get(s, "controller")));
    printf("time        %.3f s\n", num(json_object_get(s, "time")));
    json_t *tr = json_object_get(s, "trajectory");
    if (json_is_object(tr))
        printf("trajectory  %lld: %.0f %% done, %.2f s left\n",
               (long long)json_integer_value(json_object_get(tr, "id")),
               100 * num(json_object_get(tr, "progress")), num(json_object_get(tr, "remaining")));
    else
        printf("trajectory  none\n");
    json_t *co = json_object_get(s, "collision");
    const char *mode = json_string_value(json_object_get(co, "mode"));
    if (mode && strcmp(mode, "off") != 0) {
        json_t *ext = json_object_get(co, "external_torque");
        printf("collision   %s, %lld detected; external torque", mode,
               (long long)json_integer_value(json_object_get(co, "detected")));
        for (size_t i = 0; i < json_array_size(ext); i++)
            printf(" %.3g", num(json_array_get(ext, i)));
        printf("\n");
    }
    json_t *tool = json_object_get(s, "tool");
    if (json_is_object(tool))
        printf("tool        %s: %.2f mm, %.2f N, %s%s\n",
               json_string_value(json_object_get(tool, "name")),
               1e3 * num(json_object_get(tool, "opening")), num(json_object_get(tool, "force")),
               json_string_value(json_object_get(tool, "command")),
               json_is_true(json_object_get(tool, "grasped")) ? ", grasped" : "");
    printf("\n");
    print_joint_table(a, s, stdout);
    print_pose_line(s, stdout);
    print_wrench_line(s, stdout);
    json_t *l = json_object_get(s, "loop");
    printf("\nloop %.0f Hz: %lld ticks, %lld overruns, %lld failed reads, %lld saturations\n",
           num(json_object_get(l, "rate_hz")),
           (long long)json_integer_value(json_object_get(l, "ticks")),
           (long long)json_integer_value(json_object_get(l, "overruns")),
           (long long)json_integer_value(json_object_get(l, "failed_reads")),
           (long long)json_integer_value(json_object_get(l, "saturations")));
    printf("  %-10s %9s %9s %9s\n", "[us]", "p50", "p99", "max");
    print_timing("lateness", json_object_get(l, "lateness_us"));
    print_timing("read", json_object_get(l, "read_us"));
    print_timing("compute", json_object_get(l, "compute_us"));
    print_timing("write", json_object_get(l, "write_us"));
}

/* The info result: arm, rate, controller, driver, the tool, and the joint limits table. */
void print_info(const arm_info *a, json_t *info)
{
    json_t *d = json_object_get(info, "driver");
    printf("arm         %s (armd %s)\n", json_string_value(json_object_get(info, "name")),
           json_string_value(json_object_get(info, "version")));
    printf("joints      %d\n", a->n);
    printf("rate        %g Hz\n", a->rate_hz);
    printf("controller  %s\n", json_string_value(json_object_get(info, "controller")));
    printf("driver      %s on %s at %lld baud\n", json_string_value(json_object_get(d, "type")),
           json_string_value(json_object_get(d, "port")),
           (long long)json_integer_value(json_object_get(d, "baud")));
    json_t *tool = json_object_get(info, "tool");
    if (json_is_object(tool))
        printf("tool        %s (servo %lld): stroke %.2f ... %.2f mm, speed %.0f mm/s (at most "
               "%.0f), force %.3g N (at most %.3g)\n",
               json_string_value(json_object_get(tool, "name")),
               (long long)json_integer_value(json_object_get(tool, "id")),
               1e3 * num(json_object_get(tool, "lower")), 1e3 * num(json_object_get(tool, "upper")),
               1e3 * num(json_object_get(tool, "speed")),
               1e3 * num(json_object_get(tool, "velocity")), num(json_object_get(tool, "force")),
               num(json_object_get(tool, "max_force")));
    else if (json_is_null(tool))
        printf("tool        none\n");
    printf("\n%-14s %-9s %10s %10s %10s %10s %10s\n", "joint", "type", "lower", "upper", "velocity",
           "accel", "torque");
    json_t *lim = json_object_get(info, "limits");
    for (int i = 0; i < a->n; i++)
        printf("%-14s %-9s %10.4f %10.4f %10.3f %10.3f %10.2f\n", a->name[i],
               a->prismatic[i] ? "prismatic" : "revolute", vec_at(lim, "lower", i),
               vec_at(lim, "upper", i), vec_at(lim, "velocity", i), vec_at(lim, "acceleration", i),
               vec_at(lim, "torque", i));
    printf("(rad, rad/s, rad/s^2, N m; prismatic joints m, m/s, m/s^2, N)\n");
}

/* The gains result: controller and kp, kd, ki per joint. */
void print_gains(const arm_info *a, json_t *r)
{
    printf("controller %s\n", json_string_value(json_object_get(r, "controller")));
    printf("%-14s %12s %12s %12s\n", "joint", "kp", "kd", "ki");
    for (int i = 0; i < a->n; i++)
        printf("%-14s %12.4g %12.4g %12.4g\n", a->name[i], vec_at(r, "kp", i), vec_at(r, "kd", i),
               vec_at(r, "ki", i));
    printf("(computed_torque: 1/s^2, 1/s, 1/s^3; pd_gravity: N m/rad, N m s/rad, "
           "N m/(rad s))\n");
}

void print_impedance(const arm_info *a, json_t *r)
{
    (void)a;
    static const struct {
        const char *key, *label, *unit;
    } rows[] = {{"translational_stiffness", "stiffness x y z", "N/m"},
                {"rotational_stiffness", "stiffness rx ry rz", "N m/rad"},
                {"damping_ratio", "damping ratio", "x y z rx ry rz"},
                {"guide_damping", "guide damping", "N s/m, N m s/rad (free axes)"}};
    printf("controller %s\n", json_string_value(json_object_get(r, "controller")));
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        json_t *v = json_object_get(r, rows[k].key);
        printf("%-20s", rows[k].label);
        for (size_t i = 0; i < json_array_size(v); i++)
            printf(" %10.4g", json_number_value(json_array_get(v, i)));
        printf("  %s\n", rows[k].unit);
    }
}

void run_gnuplot(const char *prefix, const char *gp, const char *png, const char *dat)
{
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>/dev/null", gp);
    if (system(cmd) == 0)
        fprintf(stderr, "%splot: %s\n", prefix, png);
    else
        fprintf(stderr, "%sgnuplot did not run: the plot's data and script are %s, %s\n", prefix,
                dat, gp);
}
