/*
 * calibrate.c — `armctl collision calibrate FILE [--runs N] [--factor F] [--floor T]`: proposes
 * [safety] collision_threshold from the arm itself (tools/armctl/README.md, "Calibrating collision
 * thresholds"):
 * the user's own contact-free trajectory is run N times with the collision observer on
 * (`collision = detect`, or `react`), each joint's largest |external torque estimate| r is taken
 * per run from telemetry, and the proposal is, per joint, the largest peak over the runs x F, at
 * least T.
 *
 * A run's window, in armd's clock (the "time" of telemetry and events): every sample after the
 * last one seen before the trajectory request (the arm holds until the trajectory is accepted)
 * up to its trajectory_done "done" + CAL_TAIL_S (r settles after the stop). armd sends the
 * events of a drain before its samples, so the window closes on the first sample past that
 * instant, not on the event. Telemetry at the loop rate, at most CAL_MAX_RATE_HZ.
 *
 * Units: N m (N on a prismatic joint), s.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/armctl.h"
#include "tools/armctl/trajfile.h"

#define CAL_PREFIX       "armctl: collision calibrate: "
#define CAL_TAIL_S       0.2    /* s of samples after trajectory_done "done" */
#define CAL_MAX_RATE_HZ  1000.0 /* telemetry rate cap [Hz] */
#define CAL_TIMEOUT_S    10.0   /* s past the trajectory's duration without its trajectory_done */
#define CAL_MAX_RUNS     100
#define CAL_MAX_THR      1e6 /* collision_threshold's upper bound (config loader) */
#define CAL_STR_(x)      #x
#define CAL_STR(x)       CAL_STR_(x) /* a macro's value as a string literal */
#define CAL_TABLE_RUNS   6 /* runs shown as columns of the table; more: only the largest */
#define CAL_DEFAULT_RUNS 3
/* After "collision detected on joint ...": what a detection during calibration means. */
#define CAL_COLLISION_ADVICE                                                                       \
    "either the arm touched something (calibrate with the arm clear of everything) or "            \
    "collision_threshold is too low for this move: while calibrating, set it out of reach (e.g. "  \
    "collision_threshold = 1000) and reload"

/* The command line. */
typedef struct {
    const char *file;
    int runs;         /* 1 … CAL_MAX_RUNS */
    double factor;    /* threshold = peak x factor, >= 1 */
    double floor_thr; /* no threshold below this [N m or N], > 0 */
} cal_options;

/* One run as the notification stream shows it (times in armd's clock [s]). */
typedef struct {
    const arm_info *a;
    json_int_t id;                  /* the trajectory's id */
    double duration;                /* the trajectory's duration [s] */
    double t_from;                  /* samples after this one count */
    double t_first, t_last;         /* the first and last sample counted; NaN before */
    double t_end;                   /* trajectory_done "done" + CAL_TAIL_S; NaN before it */
    double peak[ARMCTL_MAX_JOINTS]; /* largest |ext| per joint */
    bool closed;                    /* a sample past t_end came: the run is complete */
    bool still_moving;              /* failed while armd still runs the trajectory */
    char failure[640];              /* why the run failed; "" while it has not */
} cal_run;

/* Records why run r failed (the first reason only; later ones follow from it). moving: the
 * trajectory goes on unless armctl cancels it. */
static void cal_fail(cal_run *r, bool moving, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cal_fail(cal_run *r, bool moving, const char *fmt, ...)
{
    if (r->failure[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->failure, sizeof r->failure, fmt, ap);
    va_end(ap);
    r->still_moving = moving;
}

/* A telemetry sample: |ext| into the peaks while in the window; closes the window past
 * t_end; fails the run when trajectory_done is overdue. */
static void cal_sample(cal_run *r, json_t *p)
{
    double t = num(json_object_get(p, "time"));
    if (!(t > r->t_from)) return; /* from before the request */
    r->t_last = t;
    if (t > r->t_end) {
        r->closed = true;
        return;
    }
    if (isnan(r->t_first)) r->t_first = t;
    for (int j = 0; j < r->a->n; j++) {
        double e = fabs(vec_at(p, "ext", j));
        if (e > r->peak[j]) r->peak[j] = e; /* NaN (a fault follows) is skipped */
    }
    if (isnan(r->t_end) && t - r->t_first > r->duration + CAL_TIMEOUT_S)
        cal_fail(r, true,
                 "no trajectory_done %.3g s after the request (the trajectory lasts "
                 "%.3g s)",
                 t - r->t_first, r->duration);
}

/* trajectory_done: "done" opens the tail; anything else (aborted, cancelled, replaced) fails the
 * run with armd's reason. With collision = react a detection's trajectory_done comes before its
 * collision event. Other trajectories' ends are not ours. */
static void cal_trajectory_done(cal_run *r, json_t *p)
{
    if (json_integer_value(json_object_get(p, "id")) != r->id) return;
    const char *result = json_string_value(json_object_get(p, "result"));
    bool collision = result && strncmp(result, "aborted: collision", 18) == 0;
    if (result && strcmp(result, "done") == 0)
        r->t_end = num(json_object_get(p, "time")) + CAL_TAIL_S;
    else
        cal_fail(r, false, "the trajectory ended \"%s\"%s%s", result ? result : "?",
                 collision ? ": " : "", collision ? CAL_COLLISION_ADVICE : "");
}

/* Index of the joint called name, or -1. */
static int joint_index(const arm_info *a, const char *name)
{
    for (int j = 0; name && j < a->n; j++)
        if (strcmp(a->name[j], name) == 0) return j;
    return -1;
}

/* A collision event: no calibration run may touch anything, and no threshold may be crossed by
 * the move itself. In detect mode (reaction none) the trajectory goes on: cancelled later. */
static void cal_collision(cal_run *r, json_t *p)
{
    const char *joint = json_string_value(json_object_get(p, "joint"));
    const char *reaction = json_string_value(json_object_get(p, "reaction"));
    int j = joint_index(r->a, joint);
    char what[160];
    snprintf(what, sizeof what, "%s (external torque %.3g %s, reaction %s)", joint ? joint : "?",
             j >= 0 ? vec_at(p, "external_torque", j) : NAN,
             j >= 0 && r->a->prismatic[j] ? "N" : "N m", reaction ? reaction : "?");
    cal_fail(r, reaction && strcmp(reaction, "none") == 0 && isnan(r->t_end),
             "collision detected on joint %s: " CAL_COLLISION_ADVICE, what);
}

/* A fault event: the run is over (its trajectory_done names the fault too). */
static void cal_fault(cal_run *r, json_t *p)
{
    const char *reason = json_string_value(json_object_get(p, "reason"));
    cal_fail(r, false, "fault: %s", reason ? reason : "?");
}

/* A state event: anything but holding or moving (estop, disable from elsewhere) ends the run. */
static void cal_state(cal_run *r, json_t *p)
{
    const char *state = json_string_value(json_object_get(p, "state"));
    if (state && (strcmp(state, "holding") == 0 || strcmp(state, "moving") == 0)) return;
    cal_fail(r, false, "the arm went %s", state ? state : "?");
}

/* The notifications a run follows, by method. */
static const struct {
    const char *method;
    void (*on)(cal_run *r, json_t *params);
} cal_handlers[] = {
    {"telemetry", cal_sample},    {"trajectory_done", cal_trajectory_done},
    {"collision", cal_collision}, {"fault", cal_fault},
    {"state", cal_state},
};

/* stream() callback: hands the notification to its handler; false once the run is complete or
 * has failed. */
static bool cal_message(json_t *m, const char *method, void *ctx)
{
    cal_run *r = ctx;
    int n_handlers = (int)(sizeof cal_handlers / sizeof cal_handlers[0]);
    for (int k = 0; method && k < n_handlers; k++)
        if (strcmp(method, cal_handlers[k].method) == 0)
            cal_handlers[k].on(r, json_object_get(m, "params"));
    return !r->closed && !r->failure[0];
}

/* Sends the trajectory (pts, not consumed) and follows it to its end + tail: 0 with r->peak
 * filled, or 1 (reported; a trajectory armd would go on running is cancelled). */
static int cal_run_once(armctl_conn *c, json_t *pts, int k, int runs, cal_run *r)
{
    json_t *res = call(c, "trajectory", json_pack("{s:O, s:s}", "points", pts, "mode", "replace"));
    if (!res) return 1;
    r->id = json_integer_value(json_object_get(res, "id"));
    r->duration = num(json_object_get(res, "duration"));
    json_decref(res);
    if (stream(c, cal_message, r) != 0) return 1; /* armd closed the connection (reported) */
    if (r->closed) return 0;
    if (interrupted) cal_fail(r, isnan(r->t_end), "interrupted");
    fprintf(stderr, CAL_PREFIX "run %d of %d: %s\n", k, runs, r->failure);
    if (r->still_moving) {
        json_t *x = call(c, "cancel", NULL);
        if (x) fprintf(stderr, CAL_PREFIX "the calibration move was cancelled\n");
        json_decref(x);
    }
    return 1;
}

/* Whether armd can calibrate now: the observer on (status.collision.mode detect or react) and
 * the arm holding. Prints each problem with what to do and returns 1; else 0, with *react set
 * when a detection would stop the move. */
static int cal_ready(armctl_conn *c, bool *react)
{
    json_t *s = call(c, "status", NULL);
    if (!s) return 1;
    const char *mode = json_string_value(json_object_get(json_object_get(s, "collision"), "mode"));
    const char *state = json_string_value(json_object_get(s, "state"));
    const char *fault = json_string_value(json_object_get(s, "fault"));
    int bad = 0;
    if (!mode || strcmp(mode, "off") == 0) {
        fprintf(stderr, CAL_PREFIX "collision detection is off: set [safety] collision = detect "
                                   "(thresholds can be anything large, e.g. collision_threshold = "
                                   "1000) and reload (armctl reload), then calibrate\n");
        bad = 1;
    }
    if (!state || strcmp(state, "holding") != 0) {
        const char *advice = state_advice(state);
        fprintf(stderr,
                CAL_PREFIX "the arm is %s, not holding: %s; calibration runs the trajectory from "
                           "where the arm holds",
                state ? state : "?", advice ? advice : "enable it (armctl enable)");
        if (fault) fprintf(stderr, " (fault: %s)", fault);
        fprintf(stderr, "\n");
        bad = 1;
    }
    *react = mode && strcmp(mode, "react") == 0;
    json_decref(s);
    return bad;
}

/* Parses a whole number spelled out completely in s into *out. */
static bool parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < -1000000000L || v > 1000000000L) return false;
    *out = (int)v;
    return true;
}

/* Reports a bad option value (naming it) and returns the usage exit status. */
static int cal_bad_value(const char *option, const char *value, const char *want)
{
    char msg[512];
    snprintf(msg, sizeof msg, "collision calibrate: %s '%s': %s", option, value, want);
    return usage_error("%s", msg);
}

/* --runs N: 1 … CAL_MAX_RUNS. */
static bool cal_set_runs(cal_options *o, const char *v)
{
    return parse_int(v, &o->runs) && o->runs >= 1 && o->runs <= CAL_MAX_RUNS;
}

/* --factor F: finite, >= 1. */
static bool cal_set_factor(cal_options *o, const char *v)
{
    return parse_double(v, &o->factor) && o->factor >= 1;
}

/* --floor T: finite, > 0, at most collision_threshold's bound. */
static bool cal_set_floor(cal_options *o, const char *v)
{
    return parse_double(v, &o->floor_thr) && o->floor_thr > 0 && o->floor_thr <= CAL_MAX_THR;
}

/* The options: each takes a value; want says what a good one is (for the usage error). */
static const struct {
    const char *name;
    bool (*set)(cal_options *o, const char *v);
    const char *want;
} cal_option_table[] = {
    {"--runs", cal_set_runs, "give a whole number of runs from 1 to " CAL_STR(CAL_MAX_RUNS)},
    {"--factor", cal_set_factor,
     "give a finite number >= 1 (threshold = peak x factor; below 1 the calibration moves "
     "themselves would be collisions)"},
    {"--floor", cal_set_floor,
     "give a finite number > 0 (the smallest threshold), at most " CAL_STR(CAL_MAX_THR)},
};

/* Index of option arg in cal_option_table, or -1. */
static int cal_option(const char *arg)
{
    int n = (int)(sizeof cal_option_table / sizeof cal_option_table[0]);
    for (int k = 0; k < n; k++)
        if (strcmp(arg, cal_option_table[k].name) == 0) return k;
    return -1;
}

/* Parses TRAJFILE [--runs N] [--factor F] [--floor T] into o; the file must be readable. 0, or
 * the usage exit status. */
static int cal_parse(int argc, char **argv, cal_options *o)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        int k = cal_option(arg);
        if (k >= 0 && i + 1 >= argc)
            return usage_error("collision calibrate: %s needs a value", arg);
        if (k >= 0 && !cal_option_table[k].set(o, argv[i + 1]))
            return cal_bad_value(arg, argv[i + 1], cal_option_table[k].want);
        if (k >= 0)
            i++;
        else if (arg[0] == '-' && arg[1])
            return usage_error("collision calibrate: unknown option '%s'", arg);
        else if (!o->file)
            o->file = arg;
        else
            return usage_error("collision calibrate: unexpected argument '%s' (one file)", arg);
    }
    if (!o->file)
        return usage_error("collision calibrate: which trajectory file? (FILE.json or FILE.csv, "
                           "as for armctl send)%s",
                           "");
    FILE *f = fopen(o->file, "r");
    if (!f) return cal_bad_value("trajectory file", o->file, strerror(errno));
    fclose(f);
    return 0;
}

/* The proposed threshold of joint j: the largest peak over the runs x factor, at least the
 * floor, at most collision_threshold's bound. */
static double cal_propose(const cal_options *o, double (*peak)[ARMCTL_MAX_JOINTS], int j)
{
    double top = 0;
    for (int k = 0; k < o->runs; k++)
        if (peak[k][j] > top) top = peak[k][j];
    double thr = fmax(top * o->factor, o->floor_thr);
    return fmin(thr, CAL_MAX_THR);
}

/* x > 0 rounded up to 3 significant digits: the INI line is short and never below the
 * proposal. */
static double round_up_3(double x)
{
    if (!(x > 0) || !isfinite(x)) return x;
    double scale = pow(10, floor(log10(x)) - 2);
    return ceil(x / scale * (1 - 1e-12)) * scale;
}

/* Prints one run's peaks as a line: "run k of n: largest |external torque| j1 0.812, ...". */
static void cal_print_run(FILE *out, const arm_info *a, int k, int runs, const double *peak)
{
    bool prismatic = false;
    fprintf(out, "run %d of %d: largest |external torque|", k, runs);
    for (int j = 0; j < a->n; j++) {
        fprintf(out, "%s %s %.3f", j ? "," : "", a->name[j], peak[j]);
        prismatic = prismatic || a->prismatic[j];
    }
    fprintf(out, " (N m%s)\n", prismatic ? "; N on prismatic joints" : "");
    fflush(out);
}

/* The human-readable result: per joint the peaks, the largest, the proposal; then the INI
 * lines. */
static void cal_print_table(const arm_info *a, const cal_options *o,
                            double (*peak)[ARMCTL_MAX_JOINTS])
{
    bool columns = o->runs <= CAL_TABLE_RUNS;
    printf("\n%-14s", "joint");
    for (int k = 0; columns && k < o->runs; k++) {
        char label[16];
        snprintf(label, sizeof label, "run %d", k + 1);
        printf(" %9s", label);
    }
    printf(" %9s %9s\n", "largest", "proposed");
    for (int j = 0; j < a->n; j++) {
        double top = 0;
        printf("%-14s", a->name[j]);
        for (int k = 0; k < o->runs; k++) {
            if (columns) printf(" %9.3f", peak[k][j]);
            top = fmax(top, peak[k][j]);
        }
        printf(" %9.3f %9.6g  %s\n", top, round_up_3(cal_propose(o, peak, j)),
               a->prismatic[j] ? "N" : "N m");
    }
    printf("(proposed = largest x %g, at least %g)\n\n", o->factor, o->floor_thr);
    printf("Paste into the configuration (armctl reload applies it; collision = react acts on "
           "detections):\n\n[safety]\ncollision_threshold =");
    for (int j = 0; j < a->n; j++) printf(" %.6g", round_up_3(cal_propose(o, peak, j)));
    printf("\n");
}

/* The --json result: {"joints", "runs": [{"peak"}...], "threshold", "factor", "floor"}. */
static void cal_print_json(const arm_info *a, const cal_options *o,
                           double (*peak)[ARMCTL_MAX_JOINTS])
{
    json_t *joints = json_array(), *runs = json_array(), *thr = json_array();
    for (int j = 0; j < a->n; j++) {
        json_array_append_new(joints, json_string(a->name[j]));
        json_array_append_new(thr, json_real(cal_propose(o, peak, j)));
    }
    for (int k = 0; k < o->runs; k++) {
        json_t *p = json_array();
        for (int j = 0; j < a->n; j++) json_array_append_new(p, json_real(peak[k][j]));
        json_array_append_new(runs, json_pack("{s:o}", "peak", p));
    }
    json_t *r = json_pack("{s:o, s:o, s:o, s:f, s:f}", "joints", joints, "runs", runs, "threshold",
                          thr, "factor", o->factor, "floor", o->floor_thr);
    print_json(r);
    json_decref(r);
}

/* Runs the calibration proper: the trajectory o->runs times, the peaks into peak[run][joint].
 * 0, or 1 (reported). */
static int cal_runs(armctl_conn *c, const arm_info *a, const cal_options *o, json_t *pts,
                    double (*peak)[ARMCTL_MAX_JOINTS])
{
    FILE *progress = opt_json ? stderr : stdout; /* --json: stdout has the result only */
    double rate = subscribe(c, fmin(a->rate_hz, CAL_MAX_RATE_HZ));
    if (!rate) return 1;
    fprintf(progress, "calibrating collision thresholds: %d run%s of %s, telemetry at %g Hz\n",
            o->runs, o->runs == 1 ? "" : "s", o->file, rate);
    double t_from = -INFINITY;
    for (int k = 0; k < o->runs; k++) {
        cal_run r = {.a = a, .t_from = t_from, .t_first = NAN, .t_last = NAN, .t_end = NAN};
        if (cal_run_once(c, pts, k + 1, o->runs, &r)) return 1;
        memcpy(peak[k], r.peak, sizeof r.peak);
        cal_print_run(progress, a, k + 1, o->runs, r.peak);
        t_from = r.t_last;
    }
    return 0;
}

/* collision calibrate FILE [--runs N] [--factor F] [--floor T]: see the top of this file. */
static int cmd_calibrate(armctl_conn *c, int argc, char **argv)
{
    cal_options o = {.runs = CAL_DEFAULT_RUNS, .factor = 2, .floor_thr = 1};
    int bad = cal_parse(argc, argv, &o);
    if (bad) return bad;
    arm_info a;
    if (get_info(c, &a, NULL)) return 1;
    bool react;
    if (cal_ready(c, &react)) return 1;
    if (react)
        fprintf(stderr, CAL_PREFIX "warning: collision = react: a detection during calibration "
                                   "stops the move and ends the calibration (calibrate with "
                                   "collision = detect, or thresholds out of reach)\n");
    char err[512];
    json_t *pts = trajfile_load(o.file, a.n, err, sizeof err);
    if (!pts) {
        fprintf(stderr, "armctl: %s\n", err);
        return 1;
    }
    double(*peak)[ARMCTL_MAX_JOINTS] = calloc((size_t)o.runs, sizeof *peak);
    int status = cal_runs(c, &a, &o, pts, peak);
    if (status == 0 && opt_json)
        cal_print_json(&a, &o, peak);
    else if (status == 0)
        cal_print_table(&a, &o, peak);
    free(peak);
    json_decref(pts);
    return status;
}

/* The collision subcommands. */
static const struct {
    const char *name;
    int (*run)(armctl_conn *c, int argc, char **argv);
} collision_commands[] = {
    {"calibrate", cmd_calibrate},
};

/* collision SUBCOMMAND ...: dispatches to the subcommand. */
int cmd_collision(armctl_conn *c, int argc, char **argv)
{
    if (argc < 1) return usage_error("collision: which subcommand? (calibrate)%s", "");
    int n = (int)(sizeof collision_commands / sizeof collision_commands[0]);
    for (int k = 0; k < n; k++)
        if (strcmp(argv[0], collision_commands[k].name) == 0)
            return collision_commands[k].run(c, argc - 1, argv + 1);
    return usage_error("collision: unknown subcommand '%s' (calibrate)", argv[0]);
}
