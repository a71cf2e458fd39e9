/*
 * resonance_cmd.c — `armctl resonance JOINT`: steps one joint of the holding arm by a small
 * angle, records its tracking error q - q_des at the loop rate for a few seconds after the
 * step's planned end, estimates the dominant mode in it (resonance.h) and prints the
 * [trajectory] lines for the input shaper, and with --plot a gnuplot PNG of the error and the
 * fitted envelope. Then moves the joint back.
 * Run it with [trajectory] shaper = none: a shaper already on hides the mode it cancels.
 * Units: SI, joint side; times in armd's clock [s].
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/armctl.h"
#include "tools/armctl/resonance.h"

#define RS_PREFIX    "armctl: resonance: "
#define RS_TIMEOUT_S 10.0 /* s past the window's end without telemetry reaching it */

/* The recording: joint j's tracking error between t_from and t_to (armd's time). */
typedef struct {
    int j;
    double t_from, t_to;
    long len, cap;
    double *t, *err;
    char failure[300];
} rs_rec;

/* stream() callback: samples inside the window; a fault, collision or leaving holding/moving
 * stops it. */
static bool rs_message(json_t *m, const char *method, void *ctx)
{
    rs_rec *r = ctx;
    json_t *p = json_object_get(m, "params");
    if (!method) return true;
    if (strcmp(method, "telemetry") == 0) {
        double t = num(json_object_get(p, "time"));
        if (t > r->t_to) return false;
        if (!(t >= r->t_from)) return true;
        if (r->len == r->cap) {
            long cap = r->cap ? 2 * r->cap : 8192;
            double *nt = realloc(r->t, sizeof(double) * (size_t)cap);
            if (nt) r->t = nt;
            double *ne = realloc(r->err, sizeof(double) * (size_t)cap);
            if (ne) r->err = ne;
            if (!nt || !ne) {
                snprintf(r->failure, sizeof r->failure, "out of memory");
                return false;
            }
            r->cap = cap;
        }
        r->t[r->len] = t;
        r->err[r->len++] = vec_at(p, "q", r->j) - vec_at(p, "q_des", r->j);
    } else if (strcmp(method, "fault") == 0) {
        const char *reason = json_string_value(json_object_get(p, "reason"));
        snprintf(r->failure, sizeof r->failure, "fault: %s", reason ? reason : "?");
    } else if (strcmp(method, "collision") == 0) {
        snprintf(r->failure, sizeof r->failure, "collision detected");
    } else if (strcmp(method, "state") == 0) {
        const char *state = json_string_value(json_object_get(p, "state"));
        if (!state || (strcmp(state, "holding") != 0 && strcmp(state, "moving") != 0))
            snprintf(r->failure, sizeof r->failure, "the arm went %s", state ? state : "?");
    }
    return !r->failure[0];
}

/* The joint named s (or numbered 1..n), -1 if none. */
static int joint_index(const arm_info *a, const char *s)
{
    for (int j = 0; j < a->n; j++)
        if (strcmp(a->name[j], s) == 0) return j;
    char *end;
    long k = strtol(s, &end, 10);
    return (*end == 0 && k >= 1 && k <= a->n) ? (int)k - 1 : -1;
}

/* move_to q (the shortest the limits allow); its duration [s], or -1 (reported). */
static double move_to(armctl_conn *c, const arm_info *a, const double *q)
{
    json_t *qa = json_array();
    for (int j = 0; j < a->n; j++) json_array_append_new(qa, json_real(q[j]));
    json_t *r = call(c, "move_to", json_pack("{s:o}", "q", qa));
    if (!r) return -1;
    double d = num(json_object_get(r, "duration"));
    json_decref(r);
    return d;
}

/* The plot: the tracking error about its mean and the fitted envelope +-A e^{-zeta 2 pi f t} of
 * mode m, PREFIX.dat, PREFIX.gp and (when gnuplot runs) PREFIX.png. */
static void write_plot(const char *prefix, const char *joint, const char *unit, const rs_rec *r,
                       const resonance_mode *m)
{
    char dat[1024], gp[1024], png[1024];
    snprintf(dat, sizeof dat, "%s.dat", prefix);
    snprintf(gp, sizeof gp, "%s.gp", prefix);
    snprintf(png, sizeof png, "%s.png", prefix);
    FILE *d = fopen(dat, "w"), *g = d ? fopen(gp, "w") : NULL;
    if (!d || !g) {
        fprintf(stderr, RS_PREFIX "%s: %s\n", d ? gp : dat, strerror(errno));
        if (d) fclose(d);
        return;
    }
    double mean = 0, sigma = 2 * M_PI * m->freq * m->damping;
    for (long i = 0; i < r->len; i++) mean += r->err[i] / (double)r->len;
    for (long i = 0; i < r->len; i++) {
        double t = r->t[i] - r->t[0], env = m->amplitude * exp(-sigma * t);
        fprintf(d, "%.6f %.9g %.9g %.9g\n", t, r->err[i] - mean, env, -env);
    }
    fclose(d);
    fprintf(g,
            "set terminal pngcairo noenhanced size 1000,500 font ',9'\nset output '%s'\n"
            "set title 'armctl resonance: joint %s, mode %.3f Hz, damping ratio %.4f'\n"
            "set grid\nset xlabel 't after the step [s]'\nset ylabel 'q - q_des - mean [%s]'\n"
            "plot '%s' using 1:2 with lines title 'tracking error', '' using 1:3 with lines "
            "dt 2 lc rgb 'red' title 'fitted envelope of the mode', '' using 1:4 with lines dt 2 "
            "lc rgb 'red' "
            "notitle\n",
            png, joint, m->freq, m->damping, unit, dat);
    fclose(g);
    run_gnuplot(RS_PREFIX, gp, png, dat);
}

int cmd_resonance(armctl_conn *c, int argc, char **argv)
{
    const char *joint = NULL, *out = NULL, *plot = NULL;
    double step = 0.05, seconds = 3, fmin = 1, fmax = -1;
    for (int i = 0; i < argc; i++) {
        double *dst = strcmp(argv[i], "--step") == 0      ? &step
                      : strcmp(argv[i], "--seconds") == 0 ? &seconds
                      : strcmp(argv[i], "--fmin") == 0    ? &fmin
                      : strcmp(argv[i], "--fmax") == 0    ? &fmax
                                                          : NULL;
        if (dst) {
            if (i + 1 >= argc || !parse_double(argv[i + 1], dst) || *dst == 0)
                return usage_error("resonance: %s needs a number (not 0)", argv[i]);
            i++;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--plot") == 0 && i + 1 < argc) {
            plot = argv[++i];
        } else if (!joint && argv[i][0] != '-') {
            joint = argv[i];
        } else {
            return usage_error("resonance: unexpected argument '%s'", argv[i]);
        }
    }
    if (!joint) return usage_error("resonance: which joint? (a name or 1..n)%s", "");
    if (!(seconds > 0.5 && seconds <= 60))
        return usage_error("resonance: --seconds %s", "0.5 ... 60");
    arm_info a;
    if (get_info(c, &a, NULL)) return 1;
    int j = joint_index(&a, joint);
    if (j < 0) return usage_error("resonance: no joint '%s'", joint);
    if (fmax < 0) fmax = a.rate_hz / 4;
    json_t *st = call(c, "status", NULL);
    if (!st) return 1;
    const char *state = json_string_value(json_object_get(st, "state"));
    if (!state || strcmp(state, "holding") != 0) {
        const char *advice = state_advice(state);
        fprintf(stderr, RS_PREFIX "the arm is %s, not holding: %s\n", state ? state : "?",
                advice ? advice : "enable it (armctl enable)");
        json_decref(st);
        return 1;
    }
    double q0[ARMCTL_MAX_JOINTS], q1[ARMCTL_MAX_JOINTS], t0 = num(json_object_get(st, "time"));
    for (int k = 0; k < a.n; k++) q0[k] = q1[k] = vec_at(st, "q_des", k);
    json_decref(st);
    q1[j] += step;
    double rate = subscribe(c, a.rate_hz);
    if (!rate) return 1;
    double dur = move_to(c, &a, q1);
    if (dur < 0) return 1;
    rs_rec r = {.j = j, .t_from = t0 + dur, .t_to = t0 + dur + seconds};
    fprintf(stderr, RS_PREFIX "joint %s stepped by %g in %.3g s; recording %g s\n", a.name[j], step,
            dur, seconds);
    int rc = stream(c, rs_message, &r);
    if (interrupted && !r.failure[0]) snprintf(r.failure, sizeof r.failure, "interrupted");
    if (!r.failure[0] && rc == 0) {
        double back = move_to(c, &a, q0); /* back to where it held */
        if (back < 0) fprintf(stderr, RS_PREFIX "the joint stays at the step\n");
    }
    rc = 1;
    if (r.failure[0]) {
        fprintf(stderr, RS_PREFIX "%s\n", r.failure);
        goto done;
    }
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) {
            fprintf(stderr, RS_PREFIX "%s: %s\n", out, strerror(errno));
        } else {
            fprintf(f, "time,error_%s\n", a.name[j]);
            for (long i = 0; i < r.len; i++) fprintf(f, "%.6f,%.9g\n", r.t[i], r.err[i]);
            fclose(f);
        }
    }
    resonance_mode m;
    char why[300];
    if (resonance_estimate(r.err, r.len, rate, fmin, fmax, &m, why, sizeof why)) {
        fprintf(stderr, RS_PREFIX "joint %s, %ld samples at %g Hz: %s\n", a.name[j], r.len, rate,
                why);
        goto done;
    }
    const char *u = a.prismatic[j] ? "m" : "rad";
    printf("joint %s: mode %.3f Hz (damped %.3f Hz), damping ratio %.4f, amplitude %.3g %s "
           "(fitted over %.2f s of %ld samples at %g Hz)\n",
           a.name[j], m.freq, m.freq_damped, m.damping, m.amplitude, u, m.fit_s, r.len, rate);
    printf("[trajectory]\nshaper = zvd\nshaper_freq = %.3f\nshaper_damping = %.4f\n", m.freq,
           m.damping);
    if (plot) write_plot(plot, a.name[j], u, &r, &m);
    rc = 0;
done:
    free(r.t);
    free(r.err);
    return rc;
}
