/*
 * stream.c — armctl's telemetry commands: watch (a live table) and record (a CSV file). Both
 * subscribe at a rate and then handle notifications until done, Ctrl-C, or the daemon closes;
 * subscribe() and stream() are shared with calibrate.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/armctl/armctl.h"

/* Subscribes to telemetry at rate_hz [Hz] (events always come): the rate armd uses (the loop
 * rate / a whole decimation) [Hz], or 0 on failure (reported). */
double subscribe(armctl_conn *c, double rate_hz)
{
    json_t *r = call(c, "subscribe", json_pack("{s:f}", "rate_hz", rate_hz));
    if (!r) return 0;
    double used = num(json_object_get(r, "rate_hz"));
    json_decref(r);
    return used > 0 ? used : rate_hz;
}

/* Feeds notifications to fn until it declines more or Ctrl-C (0), or the daemon closes the
 * connection (1, reported). */
int stream(armctl_conn *c, on_message fn, void *ctx)
{
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
        bool more = fn(m, json_string_value(json_object_get(m, "method")), ctx);
        json_decref(m);
        if (!more) break;
    }
    return 0;
}

typedef struct {
    arm_info a;
    bool tty;
    char last_event[512];
} watch_ctx;

/* watch: redraws the table on telemetry, remembers the last event for the footer. */
static bool watch_message(json_t *m, const char *method, void *ctx)
{
    watch_ctx *w = ctx;
    if (method && strcmp(method, "telemetry") == 0) {
        json_t *p = json_object_get(m, "params");
        if (opt_json) {
            print_json(p);
        } else {
            if (w->tty) printf("\033[H\033[J");
            printf("armd  %s  t = %.3f s   (Ctrl-C to quit)\n\n",
                   json_string_value(json_object_get(p, "state")), num(json_object_get(p, "time")));
            print_joint_table(&w->a, p, stdout);
            print_pose_line(p, stdout);
            print_wrench_line(p, stdout);
            print_tool_line(p, stdout);
            if (w->last_event[0]) printf("\nlast event: %s", w->last_event);
            if (!w->tty) printf("\n");
        }
        fflush(stdout);
    } else if (method) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        print_event(m, f);
        fclose(f);
        snprintf(w->last_event, sizeof w->last_event, "%s", buf);
        free(buf);
    }
    return true;
}

/* watch [--rate HZ]: a live joint table until Ctrl-C. */
int cmd_watch(armctl_conn *c, int argc, char **argv)
{
    double rate = 10;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--rate") == 0 && i + 1 < argc && parse_double(argv[i + 1], &rate) &&
            rate > 0)
            i++;
        else
            return usage_error("watch: unexpected argument '%s' (the option is --rate HZ, HZ > 0)",
                               argv[i]);
    }
    watch_ctx w = {.tty = isatty(STDOUT_FILENO)};
    if (get_info(c, &w.a, NULL)) return 1;
    if (!subscribe(c, rate)) return 1;
    return stream(c, watch_message, &w);
}

static const char *const record_groups[] = {"q", "q_des", "qd", "tau", "ext"};
#define N_GROUPS (int)(sizeof record_groups / sizeof record_groups[0])
/* The tool pose after the joints' groups, as columns pose_NAME: position [m], quaternion. */
static const char *const record_pose[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
#define N_POSE (int)(sizeof record_pose / sizeof record_pose[0])
/* Then the wrench at the tool, as columns wrench_NAME: force [N], moment [N m], base frame. */
static const char *const record_wrench[] = {"fx", "fy", "fz", "mx", "my", "mz"};
#define N_WRENCH (int)(sizeof record_wrench / sizeof record_wrench[0])
/* With a tool: its members written after the joints' groups, as columns tool_NAME (SI). */
static const char *const record_tool[] = {"opening", "speed", "force"};
#define N_TOOL (int)(sizeof record_tool / sizeof record_tool[0])

typedef struct {
    arm_info a;
    FILE *out;
    double seconds, t0; /* [s]; t0 NaN until the first sample */
    long rows;
} record_ctx;

/* Writes wall [s since the epoch] as ISO 8601 UTC with microseconds
 * (2026-11-25T08:15:03.123456Z); a non-finite or unrepresentable time as an empty field. */
static void put_iso8601(FILE *out, double wall)
{
    if (!(fabs(wall) < 1e15)) return;
    double whole = floor(wall);
    time_t s = (time_t)whole;
    long us = lround((wall - whole) * 1e6);
    if (us >= 1000000) {
        s++;
        us -= 1000000;
    }
    struct tm tm;
    char text[40];
    if (!gmtime_r(&s, &tm) || !strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm)) return;
    fprintf(out, "%s.%06ldZ", text, us);
}

/* record: one CSV row per telemetry sample until `seconds` have passed; events to stderr. */
static bool record_message(json_t *m, const char *method, void *ctx)
{
    record_ctx *r = ctx;
    if (method && strcmp(method, "telemetry") == 0) {
        json_t *p = json_object_get(m, "params");
        double t = num(json_object_get(p, "time"));
        if (isnan(r->t0)) r->t0 = t;
        if (t - r->t0 > r->seconds) return false;
        fprintf(r->out, "%.6f", t);
        for (int g = 0; g < N_GROUPS; g++)
            for (int i = 0; i < r->a.n; i++)
                fprintf(r->out, ",%.9g", vec_at(p, record_groups[g], i));
        json_t *pose = json_object_get(p, "pose");
        for (int k = 0; k < N_POSE; k++)
            fprintf(r->out, ",%.9g",
                    k < 3 ? vec_at(pose, "position", k) : vec_at(pose, "orientation", k - 3));
        json_t *wrench = json_object_get(p, "wrench");
        for (int k = 0; k < N_WRENCH; k++)
            fprintf(r->out, ",%.9g",
                    k < 3 ? vec_at(wrench, "force", k) : vec_at(wrench, "torque", k - 3));
        for (int k = 0; r->a.has_tool && k < N_TOOL; k++)
            fprintf(r->out, ",%.9g",
                    num(json_object_get(json_object_get(p, "tool"), record_tool[k])));
        fprintf(r->out, ",%.6f,", num(json_object_get(p, "mono")));
        put_iso8601(r->out, num(json_object_get(p, "wall")));
        fprintf(r->out, "\n");
        r->rows++;
    } else if (method && !opt_json) {
        print_event(m, stderr);
    }
    return true;
}

/* record FILE.csv --seconds N [--rate HZ]: t, then q, q_des, qd, tau, ext (the collision
 * observer's external torque) per joint (SI units), the tool pose (x y z [m], quaternion qw qx
 * qy qz), the wrench at the tool (fx fy fz [N], mx my mz [N m]), with a tool its opening,
 * speed and force,
 * then mono (CLOCK_MONOTONIC [s]) and wall (ISO 8601 UTC): the clocks to join the recording
 * with other data. */
int cmd_record(armctl_conn *c, int argc, char **argv)
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
        else if (!file && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0)) /* - : stdout */
            file = argv[i];
        else
            return usage_error("record: unexpected or invalid argument '%s'", argv[i]);
    }
    if (!file || seconds <= 0) return usage_error("record: record FILE.csv --seconds N%s", "");
    record_ctx r = {.seconds = seconds, .t0 = NAN};
    if (get_info(c, &r.a, NULL)) return 1;
    if (rate <= 0) rate = r.a.rate_hz;
    r.out = strcmp(file, "-") == 0 ? stdout : fopen(file, "w");
    if (!r.out) {
        fprintf(stderr, "armctl: %s: %s\n", file, strerror(errno));
        return 1;
    }
    fprintf(r.out, "t");
    for (int g = 0; g < N_GROUPS; g++)
        for (int i = 0; i < r.a.n; i++) fprintf(r.out, ",%s_%s", record_groups[g], r.a.name[i]);
    for (int k = 0; k < N_POSE; k++) fprintf(r.out, ",pose_%s", record_pose[k]);
    for (int k = 0; k < N_WRENCH; k++) fprintf(r.out, ",wrench_%s", record_wrench[k]);
    for (int k = 0; r.a.has_tool && k < N_TOOL; k++) fprintf(r.out, ",tool_%s", record_tool[k]);
    fprintf(r.out, ",mono,wall\n");
    if (!subscribe(c, rate)) {
        if (r.out != stdout) fclose(r.out);
        return 1;
    }
    int status = stream(c, record_message, &r);
    if (r.out != stdout) fclose(r.out);
    if (!opt_json && r.out != stdout) fprintf(stderr, "recorded %ld samples to %s\n", r.rows, file);
    return status;
}
