/*
 * fuzz_trajectory.c — the trajectory builder's guarantee: any trajectory it accepts, sampled
 * at the loop rate, is finite and within the position, velocity and acceleration limits (up to
 * the validation's relative 1e-9). With the limits and loop rate of each example config
 * (config/examples: puma560, viperx300, planar2), a start state within them, and waypoints, qd,
 * qdd, move goals and durations from the input: mostly scaled near the limits (to get plans
 * accepted), sometimes raw doubles (NaN, infinities, 1e-300, 1e300 ...). A plan re-anchored at a
 * nearby start, as the control thread does, is held to the same guarantee once its first segment
 * passes traj_validate_segment. Part of the inputs run with an input shaper ([trajectory]
 * shaper): the guarantee holds for the shaped plan.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/trajectory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef ARMD_EXAMPLES
#error "ARMD_EXAMPLES: the directory of the example configs"
#endif

#define MAX_WP      16
#define MAX_SAMPLES 200000 /* per plan: beyond, every k-th loop tick */

static const char *const examples[] = {"puma560.ini", "viperx300.ini", "planar2.ini"};
#define N_EX (sizeof examples / sizeof examples[0])
static traj_limits lims[N_EX];
static traj_plan plan;

/* Loads the example configs' limits once. */
static void setup(void)
{
    static armd_config cfg;
    for (size_t i = 0; i < N_EX; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", ARMD_EXAMPLES, examples[i]);
        cfg_report rep;
        cfg_report_init(&rep);
        if (cfg_load(path, &cfg, &rep) != 0) {
            cfg_report_print(&rep, stderr);
            abort();
        }
        cfg_report_free(&rep);
        traj_limits_from_config(&lims[i], &cfg);
    }
    /* shaped, a plan of MAX_WP waypoints has up to SHAPER_MAX_IMPULSES (MAX_WP + 1) segments */
    if (traj_plan_alloc(&plan, CFG_MAX_JOINTS, SHAPER_MAX_IMPULSES * (MAX_WP + 2)) != 0) abort();
}

/* The input as a stream of values. */
typedef struct {
    const uint8_t *p;
    size_t left;
} stream;

static uint8_t next_byte(stream *s)
{
    if (!s->left) return 0;
    s->left--;
    return *s->p++;
}

/* A value in [lo, hi] (u from 7 bytes), or one time in 16 the raw double of the next 8. */
static double value(stream *s, double lo, double hi)
{
    uint8_t sel = next_byte(s);
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) bits = bits << 8 | next_byte(s);
    if (sel < 16) {
        double raw;
        memcpy(&raw, &bits, sizeof raw);
        return raw;
    }
    double u = (double)(bits >> 11) * 0x1p-53;
    if (sel < 32) u = sel & 1; /* exactly at a bound */
    return lo + (hi - lo) * u;
}

/* Position range of joint j to draw from: the limits, or +-10 where a limit is infinite. */
static void span_of(const traj_limits *l, int j, double *lo, double *hi)
{
    *lo = isfinite(l->lower[j]) ? l->lower[j] : -10;
    *hi = isfinite(l->upper[j]) ? l->upper[j] : 10;
}

/* Samples the plan at every loop tick (or every k-th beyond MAX_SAMPLES) from t0 to t1 and
 * aborts on a non-finite value or one outside the limits. */
static void check_samples(const traj_limits *l, double t0, double t1)
{
    double dt = l->period, ticks = (t1 - t0) / dt;
    double step = ticks > MAX_SAMPLES ? dt * ceil(ticks / MAX_SAMPLES) : dt;
    int seg = 0;
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], qdd[CFG_MAX_JOINTS];
    for (double t = t0;; t += step) {
        if (t > t1) t = t1;
        traj_sample(&plan, t, &seg, q, qd, qdd);
        for (int j = 0; j < l->n; j++) {
            double span = l->upper[j] - l->lower[j];
            double tol_q = isfinite(span) ? 2e-9 * span + 1e-9 : 1e-9;
            if (!isfinite(q[j]) || !isfinite(qd[j]) || !isfinite(qdd[j])) abort();
            if (q[j] < l->lower[j] - tol_q || q[j] > l->upper[j] + tol_q) abort();
            if (fabs(qd[j]) > l->velocity[j] * (1 + 2e-9) + 1e-9) abort();
            if (fabs(qdd[j]) > l->acceleration[j] * (1 + 2e-9) + 1e-9) abort();
        }
        if (t >= t1) break;
    }
}

/* A start state within the limits (as the present desired state always is). */
static void draw_start(stream *s, const traj_limits *l, traj_state *st)
{
    for (int j = 0; j < l->n; j++) {
        double lo, hi;
        span_of(l, j, &lo, &hi);
        st->q[j] = lo + (hi - lo) * (double)next_byte(s) / 255.0;
        st->qd[j] = l->velocity[j] * ((double)next_byte(s) / 127.5 - 1);
        st->qdd[j] = l->acceleration[j] * ((double)next_byte(s) / 127.5 - 1);
    }
}

/* The re-anchored plan (first segment rebuilt from a start nudged by a few ticks' motion)
 * keeps the guarantee whenever traj_validate_segment accepts it. */
static void check_reanchored(stream *s, const traj_limits *l, const traj_state *st)
{
    traj_state moved = *st;
    for (int j = 0; j < l->n; j++) {
        double k = ((double)next_byte(s) / 127.5 - 1) * 3 * l->period; /* up to 3 ticks */
        moved.q[j] += moved.qd[j] * k;
        moved.qd[j] += moved.qdd[j] * k;
        double lo, hi;
        span_of(l, j, &lo, &hi);
        moved.q[j] = fmin(fmax(moved.q[j], lo), hi);
        moved.qd[j] = fmin(fmax(moved.qd[j], -l->velocity[j]), l->velocity[j]);
    }
    traj_reanchor(&plan, &moved);
    if (traj_validate_segment(&plan, l, 0, 0, NULL) == 0)
        check_samples(l, 0, plan.n_seg > 1 ? plan.t0[1] : plan.duration);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!plan.c) setup();
    stream s = {data, size};
    uint8_t head = next_byte(&s);
    /* head bits 4-5: the input shaper (none, ZV, ZVD, EI) at 0.5 ... 50 Hz, zeta 0 ... 0.3 */
    static traj_limits shaped;
    shaped = lims[head % N_EX];
    shaper_kind kind = (shaper_kind)((head >> 4) & 3);
    if (kind != SHAPER_NONE) {
        double f = 0.5 + 49.5 * next_byte(&s) / 255.0, zeta = 0.3 * next_byte(&s) / 255.0;
        if (shaper_design(&shaped.shape, kind, f, zeta)) abort();
    }
    const traj_limits *l = &shaped;
    traj_state st;
    memset(&st, 0, sizeof st);
    draw_start(&s, l, &st);
    plan.n = l->n;
    traj_error err;
    if (head & 0x80) { /* a move */
        double goal[CFG_MAX_JOINTS];
        for (int j = 0; j < l->n; j++) {
            double lo, hi;
            span_of(l, j, &lo, &hi);
            goal[j] = value(&s, lo, hi);
        }
        double duration = value(&s, -1, 10);
        if (traj_build_move(&plan, l, &st, goal, duration, &err) == 0) {
            check_samples(l, 0, plan.duration);
            check_reanchored(&s, l, &st);
        }
        return 0;
    }
    traj_waypoint w[MAX_WP];
    int n = 1 + next_byte(&s) % MAX_WP;
    double t = 0;
    memset(w, 0, sizeof w);
    for (int i = 0; i < n; i++) {
        uint8_t flags = next_byte(&s);
        t = (flags & 0x40) ? value(&s, -1, 3600) : t + value(&s, 0, 2);
        w[i].t = t;
        w[i].has_qd = flags & 1;
        w[i].has_qdd = (flags & 3) == 3;
        for (int j = 0; j < l->n; j++) {
            double lo, hi;
            span_of(l, j, &lo, &hi);
            double m = 0.1 * (hi - lo);
            w[i].q[j] = value(&s, lo - m, hi + m);
            w[i].qd[j] = value(&s, -1.2 * l->velocity[j], 1.2 * l->velocity[j]);
            w[i].qdd[j] = value(&s, -1.2 * l->acceleration[j], 1.2 * l->acceleration[j]);
        }
    }
    if (traj_build(&plan, l, &st, w, n, 1e-3, &err) == 0) {
        check_samples(l, 0, plan.duration);
        check_reanchored(&s, l, &st);
    }
    return 0;
}
