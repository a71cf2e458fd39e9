/*
 * armctl.c — command-line client for armd's socket API: prints human-readable tables (joint
 * names and units) by default and the daemon's JSON with --json; exit status 1 with the
 * daemon's message when a command fails, 2 on usage errors.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/armctl/client.h"
#include "tools/armctl/trajfile.h"

#define DEFAULT_SOCKET "/run/armd/armd.sock"

static const char usage_text[] =
    "usage: armctl [-s SOCKET] [--json] COMMAND [ARGS]\n"
    "\n"
    "Commands armd (the arm controller daemon) over its socket.\n"
    "\n"
    "  status                     state, fault, joint table, trajectory, loop timing\n"
    "  info                       arm, joints, limits, rate, driver, controller\n"
    "  enable | disable | hold | estop | reset | cancel\n"
    "  move Q1..Qn [--time T]     move to a joint position [rad|m] (T [s], else from limits)\n"
    "  send FILE [--append]       send a trajectory: FILE.json ({\"points\": [{t, q, qd?, "
    "qdd?}]})\n"
    "                             or FILE.csv (rows t,q1..qn)\n"
    "  watch [--rate HZ]          live table until Ctrl-C\n"
    "  record FILE.csv --seconds N [--rate HZ]\n"
    "                             write t, q, q_des, qd, tau per joint (default: loop rate)\n"
    "  gains [kp=V kd=V ki=V]     show gains, or set them (V: one number or V1,V2,..,Vn)\n"
    "  controller NAME            computed_torque | pd_gravity | gravity_comp\n"
    "  reload                     reload the INI file (like SIGHUP)\n"
    "  wait done|STATE [--timeout S]\n"
    "                             wait until the trajectory is done (or the state is reached);\n"
    "                             fails on fault or estop\n"
    "\n"
    "  -s, --socket SOCKET        default $ARMD_SOCKET, else " DEFAULT_SOCKET "\n"
    "  --json                     print the daemon's JSON result\n"
    "  -h, --help                 this text\n"
    "\n"
    "Exit status: 0 ok, 1 the daemon refused or failed (its message is printed), 2 usage.\n";

static bool opt_json;
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "armctl: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(armctl --help for usage)\n");
    return 2;
}

/* Calls a method; prints the daemon's error and returns NULL on failure. */
static json_t *call(armctl_conn *c, const char *method, json_t *params)
{
    char err[1024];
    json_t *r = conn_call(c, method, params, err, sizeof err);
    if (!r) fprintf(stderr, "armctl: %s: %s\n", method, err);
    return r;
}

static void print_json(json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    if (s) puts(s);
    free(s);
}

static double num(json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}
static double vec_at(json_t *obj, const char *key, int i)
{
    return num(json_array_get(json_object_get(obj, key), (size_t)i));
}

/* Joint names and whether every joint is revolute (for units). */
typedef struct {
    int n;
    char name[64][64];
    bool prismatic[64];
    double rate_hz;
} arm_info;

static int get_info(armctl_conn *c, arm_info *a, json_t **info_out)
{
    json_t *info = call(c, "info", NULL);
    if (!info) return -1;
    json_t *names = json_object_get(info, "joints"), *types = json_object_get(info, "types");
    a->n = (int)json_array_size(names);
    if (a->n > 64) a->n = 64;
    for (int i = 0; i < a->n; i++) {
        snprintf(a->name[i], sizeof a->name[i], "%s",
                 json_string_value(json_array_get(names, (size_t)i)));
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        a->prismatic[i] = t && strcmp(t, "prismatic") == 0;
    }
    a->rate_hz = num(json_object_get(info, "rate_hz"));
    if (info_out)
        *info_out = info;
    else
        json_decref(info);
    return 0;
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

/* Prints the joint table of a status or telemetry object. */
static void print_joint_table(const arm_info *a, json_t *s, FILE *out)
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

static void print_timing(const char *label, json_t *t)
{
    printf("  %-10s %9.1f %9.1f %9.1f\n", label, num(json_object_get(t, "p50")),
           num(json_object_get(t, "p99")), num(json_object_get(t, "max")));
}

static int cmd_status(armctl_conn *c)
{
    arm_info a;
    if (get_info(c, &a, NULL)) return 1;
    json_t *s = call(c, "status", NULL);
    if (!s) return 1;
    if (opt_json) {
        print_json(s);
        json_decref(s);
        return 0;
    }
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
    printf("\n");
    print_joint_table(&a, s, stdout);
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
    json_decref(s);
    return 0;
}

static int cmd_info(armctl_conn *c)
{
    arm_info a;
    json_t *info;
    if (get_info(c, &a, &info)) return 1;
    if (opt_json) {
        print_json(info);
        json_decref(info);
        return 0;
    }
    json_t *d = json_object_get(info, "driver");
    printf("arm         %s (armd %s)\n", json_string_value(json_object_get(info, "name")),
           json_string_value(json_object_get(info, "version")));
    printf("joints      %d\n", a.n);
    printf("rate        %g Hz\n", a.rate_hz);
    printf("controller  %s\n", json_string_value(json_object_get(info, "controller")));
    printf("driver      %s on %s at %lld baud\n", json_string_value(json_object_get(d, "type")),
           json_string_value(json_object_get(d, "port")),
           (long long)json_integer_value(json_object_get(d, "baud")));
    printf("\n%-14s %-9s %10s %10s %10s %10s %10s\n", "joint", "type", "lower", "upper", "velocity",
           "accel", "torque");
    json_t *lim = json_object_get(info, "limits");
    for (int i = 0; i < a.n; i++)
        printf("%-14s %-9s %10.4f %10.4f %10.3f %10.3f %10.2f\n", a.name[i],
               a.prismatic[i] ? "prismatic" : "revolute", vec_at(lim, "lower", i),
               vec_at(lim, "upper", i), vec_at(lim, "velocity", i), vec_at(lim, "acceleration", i),
               vec_at(lim, "torque", i));
    printf("(rad, rad/s, rad/s^2, N m; prismatic joints m, m/s, m/s^2, N)\n");
    json_decref(info);
    return 0;
}

/* enable, disable, hold, estop, reset, cancel, reload. */
static int cmd_simple(armctl_conn *c, const char *method)
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

static int print_trajectory_reply(json_t *r)
{
    if (opt_json)
        print_json(r);
    else
        printf("trajectory %lld: %.3f s\n", (long long)json_integer_value(json_object_get(r, "id")),
               num(json_object_get(r, "duration")));
    json_decref(r);
    return 0;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

static int cmd_move(armctl_conn *c, int argc, char **argv)
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
    return r ? print_trajectory_reply(r) : 1;
}

static int cmd_send(armctl_conn *c, int argc, char **argv)
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
    return r ? print_trajectory_reply(r) : 1;
}

/* gains [kp=V kd=V ki=V] with V one number or V1,..,Vn. */
static int cmd_gains(armctl_conn *c, int argc, char **argv)
{
    arm_info a;
    if (get_info(c, &a, NULL)) return 1;
    json_t *r;
    if (argc == 0) {
        r = call(c, "gains.get", NULL);
    } else {
        json_t *p = json_object();
        for (int i = 0; i < argc; i++) {
            char *eq = strchr(argv[i], '=');
            if (!eq || (strncmp(argv[i], "kp=", 3) && strncmp(argv[i], "kd=", 3) &&
                        strncmp(argv[i], "ki=", 3))) {
                json_decref(p);
                return usage_error("gains: '%s': expected kp=V, kd=V or ki=V", argv[i]);
            }
            char key[3] = {argv[i][0], argv[i][1], 0};
            json_t *vals = json_array();
            char *s = eq + 1, *tok, *save = NULL;
            char buf[4096];
            snprintf(buf, sizeof buf, "%s", s);
            for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                double v;
                if (!parse_double(tok, &v)) {
                    json_decref(vals);
                    json_decref(p);
                    return usage_error("gains: '%s' is not a number", tok);
                }
                json_array_append_new(vals, json_real(v));
            }
            if (json_array_size(vals) == 1) {
                json_object_set(p, key, json_array_get(vals, 0));
                json_decref(vals);
            } else {
                json_object_set_new(p, key, vals);
            }
        }
        r = call(c, "gains.set", p);
    }
    if (!r) return 1;
    if (opt_json) {
        print_json(r);
    } else {
        printf("controller %s\n", json_string_value(json_object_get(r, "controller")));
        printf("%-14s %12s %12s %12s\n", "joint", "kp", "kd", "ki");
        for (int i = 0; i < a.n; i++)
            printf("%-14s %12.4g %12.4g %12.4g\n", a.name[i], vec_at(r, "kp", i),
                   vec_at(r, "kd", i), vec_at(r, "ki", i));
        printf("(computed_torque: 1/s^2, 1/s, 1/s^3; pd_gravity: N m/rad, N m s/rad, "
               "N m/(rad s))\n");
    }
    json_decref(r);
    return 0;
}

static int cmd_controller(armctl_conn *c, int argc, char **argv)
{
    if (argc != 1) return usage_error("controller: give one name%s", "");
    json_t *r = call(c, "controller.set", json_pack("{s:s}", "name", argv[0]));
    if (!r) return 1;
    if (opt_json)
        print_json(r);
    else
        printf("controller %s\n", json_string_value(json_object_get(r, "controller")));
    json_decref(r);
    return 0;
}

/* Prints an event notification (state, fault, trajectory_done) as one line. */
static void print_event(json_t *m, FILE *out)
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
}

static int cmd_watch(armctl_conn *c, int argc, char **argv)
{
    double rate = 10;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--rate") == 0 && i + 1 < argc && parse_double(argv[i + 1], &rate) &&
            rate > 0)
            i++;
        else
            return usage_error("watch: unexpected argument '%s'", argv[i]);
    }
    arm_info a;
    if (get_info(c, &a, NULL)) return 1;
    json_t *r = call(c, "subscribe", json_pack("{s:f}", "rate_hz", rate));
    if (!r) return 1;
    json_decref(r);
    bool tty = isatty(STDOUT_FILENO);
    char last_event[512] = "";
    while (!interrupted) {
        int closed;
        json_t *m = conn_next(c, 1000, &closed);
        if (!m) {
            if (closed) {
                fprintf(stderr, "armctl: armd closed the connection\n");
                return 1;
            }
            continue;
        }
        const char *method = json_string_value(json_object_get(m, "method"));
        if (method && strcmp(method, "telemetry") == 0) {
            json_t *p = json_object_get(m, "params");
            if (opt_json) {
                print_json(p);
            } else {
                if (tty) printf("\033[H\033[J");
                printf("armd  %s  t = %.3f s   (Ctrl-C to quit)\n\n",
                       json_string_value(json_object_get(p, "state")),
                       num(json_object_get(p, "time")));
                print_joint_table(&a, p, stdout);
                if (last_event[0]) printf("\nlast event: %s", last_event);
                if (!tty) printf("\n");
            }
            fflush(stdout);
        } else if (method) {
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);
            print_event(m, f);
            fclose(f);
            snprintf(last_event, sizeof last_event, "%s", buf);
            free(buf);
        }
        json_decref(m);
    }
    return 0;
}

static int cmd_record(armctl_conn *c, int argc, char **argv)
{
    const char *file = NULL;
    double seconds = -1, rate = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc &&
            parse_double(argv[i + 1], &seconds) && seconds > 0)
            i++;
        else if (strcmp(argv[i], "--rate") == 0 && i + 1 < argc &&
                 parse_double(argv[i + 1], &rate) && rate > 0)
            i++;
        else if (!file && argv[i][0] != '-')
            file = argv[i];
        else
            return usage_error("record: unexpected or invalid argument '%s'", argv[i]);
    }
    if (!file || seconds <= 0) return usage_error("record: record FILE.csv --seconds N%s", "");
    arm_info a;
    if (get_info(c, &a, NULL)) return 1;
    if (rate <= 0) rate = a.rate_hz;
    FILE *out = strcmp(file, "-") == 0 ? stdout : fopen(file, "w");
    if (!out) {
        fprintf(stderr, "armctl: %s: %s\n", file, strerror(errno));
        return 1;
    }
    fprintf(out, "t");
    const char *groups[] = {"q", "q_des", "qd", "tau"};
    for (int g = 0; g < 4; g++)
        for (int i = 0; i < a.n; i++) fprintf(out, ",%s_%s", groups[g], a.name[i]);
    fprintf(out, "\n");
    json_t *r = call(c, "subscribe", json_pack("{s:f}", "rate_hz", rate));
    if (!r) return 1;
    json_decref(r);
    double t0 = NAN;
    long rows = 0;
    int status = 0;
    while (!interrupted) {
        int closed;
        json_t *m = conn_next(c, 1000, &closed);
        if (!m) {
            if (closed) {
                fprintf(stderr, "armctl: armd closed the connection\n");
                status = 1;
                break;
            }
            continue;
        }
        const char *method = json_string_value(json_object_get(m, "method"));
        if (method && strcmp(method, "telemetry") == 0) {
            json_t *p = json_object_get(m, "params");
            double t = num(json_object_get(p, "time"));
            if (isnan(t0)) t0 = t;
            if (t - t0 > seconds) {
                json_decref(m);
                break;
            }
            fprintf(out, "%.6f", t);
            for (int g = 0; g < 4; g++)
                for (int i = 0; i < a.n; i++) fprintf(out, ",%.9g", vec_at(p, groups[g], i));
            fprintf(out, "\n");
            rows++;
        } else if (method && !opt_json) {
            print_event(m, stderr);
        }
        json_decref(m);
    }
    if (out != stdout) fclose(out);
    if (!opt_json && out != stdout) fprintf(stderr, "recorded %ld samples to %s\n", rows, file);
    return status;
}

/* wait done|STATE [--timeout S]: polls status every 20 ms. */
static int cmd_wait(armctl_conn *c, int argc, char **argv)
{
    const char *what = NULL;
    double timeout = -1;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc &&
            parse_double(argv[i + 1], &timeout) && timeout > 0)
            i++;
        else if (!what)
            what = argv[i];
        else
            return usage_error("wait: unexpected argument '%s'", argv[i]);
    }
    if (!what) return usage_error("wait: done or a state name%s", "");
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
            fprintf(stderr, "armctl: wait %s: arm is %s%s%s\n", what, state,
                    json_is_string(f) ? ": " : "", json_is_string(f) ? json_string_value(f) : "");
            json_decref(s);
            return 1;
        }
        json_decref(s);
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec);
        if (timeout > 0 && el > timeout) {
            fprintf(stderr, "armctl: wait %s: timed out after %g s (state %s)\n", what, timeout,
                    state);
            return 1;
        }
        struct timespec nap = {0, 20000000};
        nanosleep(&nap, NULL);
    }
    return 1;
}

int main(int argc, char **argv)
{
    const char *sock = getenv("ARMD_SOCKET");
    if (!sock || !sock[0]) sock = DEFAULT_SOCKET;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if ((strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "--socket") == 0) && i + 1 < argc)
            sock = argv[++i];
        else if (strcmp(argv[i], "--json") == 0)
            opt_json = true;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else
            return usage_error("unknown option '%s'", argv[i]);
    }
    if (i >= argc) return usage_error("no command given%s", "");
    const char *cmd = argv[i++];
    /* --json may also follow the command */
    int rest_n = 0;
    char **rest = calloc((size_t)(argc - i + 1), sizeof *rest);
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            opt_json = true;
        else
            rest[rest_n++] = argv[i];
    }
    static const char *const known[] = {
        "status", "info",  "enable", "disable", "hold",   "estop", "reset",      "cancel", "move",
        "send",   "watch", "record", "gains",   "reload", "wait",  "controller", NULL};
    bool ok = false;
    for (int k = 0; known[k]; k++) ok = ok || strcmp(cmd, known[k]) == 0;
    if (!ok) {
        free(rest);
        return usage_error("unknown command '%s'", cmd);
    }
    struct sigaction sa = {.sa_handler = on_sigint};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    char err[512];
    armctl_conn *c = conn_open(sock, err, sizeof err);
    if (!c) {
        fprintf(stderr, "armctl: %s\n", err);
        free(rest);
        return 1;
    }
    int status;
    if (strcmp(cmd, "status") == 0)
        status = cmd_status(c);
    else if (strcmp(cmd, "info") == 0)
        status = cmd_info(c);
    else if (strcmp(cmd, "move") == 0)
        status = cmd_move(c, rest_n, rest);
    else if (strcmp(cmd, "send") == 0)
        status = cmd_send(c, rest_n, rest);
    else if (strcmp(cmd, "watch") == 0)
        status = cmd_watch(c, rest_n, rest);
    else if (strcmp(cmd, "record") == 0)
        status = cmd_record(c, rest_n, rest);
    else if (strcmp(cmd, "gains") == 0)
        status = cmd_gains(c, rest_n, rest);
    else if (strcmp(cmd, "controller") == 0)
        status = cmd_controller(c, rest_n, rest);
    else if (strcmp(cmd, "wait") == 0)
        status = cmd_wait(c, rest_n, rest);
    else if (rest_n > 0)
        status = usage_error("'%s' takes no arguments", cmd);
    else
        status = cmd_simple(c, cmd);
    conn_close(c);
    free(rest);
    return status;
}
