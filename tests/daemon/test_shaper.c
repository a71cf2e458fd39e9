/*
 * test_shaper.c — input shaping (daemon/shaper.h, traj_shape in daemon/trajectory.h): the
 * published ZV / ZVD / EI impulse trains, their residual vibration V(f, zeta) at and around
 * the design mode, a second-order mode driven by a shaped step, and plans convolved with a
 * shaper (same start and goal, longer by the shaper, equal to sum A_i q(t - t_i), validated
 * as shaped, bit-identical without a shaper, and a move into a mode leaving far less
 * vibration).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/shaper.h"
#include "daemon/trajectory.h"

static const double freqs[] = {0.5, 3.7, 12, 80};
static const double zetas[] = {0, 0.02, 0.05, 0.1, 0.3};
#define NF (int)(sizeof freqs / sizeof freqs[0])
#define NZ (int)(sizeof zetas / sizeof zetas[0])

/* The complex residual sum S = sum A_i e^{(zeta w + i wd) t_i} of Singer & Seering 1990
 * eq. 3 for a mode (f [Hz], zeta), as (re, im). */
static void residual_sum(const shaper *s, double f, double zeta, double *re, double *im)
{
    double w = 2 * M_PI * f, wd = w * sqrt(1 - zeta * zeta);
    *re = *im = 0;
    for (int i = 0; i < s->n; i++) {
        double e = s->a[i] * exp(zeta * w * s->t[i]);
        *re += e * cos(wd * s->t[i]);
        *im += e * sin(wd * s->t[i]);
    }
}

/* Amplitudes positive and summing to 1, t_0 = 0, times ascending. */
static void check_train(const shaper *s, int n)
{
    assert_int_equal(s->n, n);
    double sum = 0;
    for (int i = 0; i < s->n; i++) {
        assert_true(s->a[i] > 0);
        sum += s->a[i];
        if (i) assert_true(s->t[i] > s->t[i - 1]);
    }
    assert_true(fabs(sum - 1) < 1e-12);
    assert_true(s->t[0] == 0);
}

/* The published undamped trains: ZV [1/2 1/2] at [0 T/2], ZVD [1/4 1/2 1/4] at [0 T/2 T],
 * EI [(1+V)/4 (1-V)/2 (1+V)/4] at [0 T/2 T] (V = 0.05), T = 1/f. */
static void test_published_undamped(void **state)
{
    (void)state;
    shaper s;
    double f = 4, T = 0.25;
    assert_int_equal(shaper_design(&s, SHAPER_ZV, f, 0), 0);
    assert_true(fabs(s.a[0] - 0.5) < 1e-15 && fabs(s.a[1] - 0.5) < 1e-15);
    assert_true(fabs(s.t[1] - T / 2) < 1e-15);
    assert_int_equal(shaper_design(&s, SHAPER_ZVD, f, 0), 0);
    assert_true(fabs(s.a[0] - 0.25) < 1e-15 && fabs(s.a[1] - 0.5) < 1e-15);
    assert_true(fabs(s.a[2] - 0.25) < 1e-15 && fabs(shaper_duration(&s) - T) < 1e-15);
    assert_int_equal(shaper_design(&s, SHAPER_EI, f, 0), 0);
    assert_true(fabs(s.a[0] - 0.2625) < 1e-15 && fabs(s.a[1] - 0.475) < 1e-15);
    assert_true(fabs(s.a[2] - 0.2625) < 1e-15 && fabs(shaper_duration(&s) - T) < 1e-15);
    /* damped ZV: K = exp(-zeta pi / sqrt(1 - zeta^2)), A = [1 K] / (1 + K), t1 = Td / 2 */
    double z = 0.1, K = exp(-z * M_PI / sqrt(1 - z * z));
    assert_int_equal(shaper_design(&s, SHAPER_ZV, f, z), 0);
    assert_true(fabs(s.a[1] - K / (1 + K)) < 1e-15);
    assert_true(fabs(s.t[1] - 0.5 / (f * sqrt(1 - z * z))) < 1e-15);
    assert_int_equal(shaper_design(&s, SHAPER_NONE, f, z), 0);
    assert_int_equal(s.n, 1);
    assert_true(s.a[0] == 1 && shaper_duration(&s) == 0);
}

/* ZV and ZVD leave no vibration at the design mode (V < 1e-9), over frequencies and
 * damping ratios; unshaped (none) V = 1. */
static void test_zero_vibration(void **state)
{
    (void)state;
    shaper s;
    for (int a = 0; a < NF; a++) {
        for (int b = 0; b < NZ; b++) {
            double f = freqs[a], z = zetas[b];
            assert_int_equal(shaper_design(&s, SHAPER_ZV, f, z), 0);
            check_train(&s, 2);
            assert_true(shaper_residual(&s, f, z) < 1e-9);
            assert_int_equal(shaper_design(&s, SHAPER_ZVD, f, z), 0);
            check_train(&s, 3);
            assert_true(shaper_residual(&s, f, z) < 1e-9);
            assert_int_equal(shaper_design(&s, SHAPER_NONE, f, z), 0);
            assert_true(fabs(shaper_residual(&s, f, z) - 1) < 1e-15);
        }
    }
}

/* ZVD's extra constraint: dS/dw = 0 at the design mode (the vibration has a double zero), so
 * V grows like the square of a frequency error; ZV's grows linearly. */
static void test_zvd_derivative(void **state)
{
    (void)state;
    shaper zv, zvd;
    for (int b = 0; b < NZ; b++) {
        double f = 7, z = zetas[b], h = 1e-5 * f, r1, i1, r2, i2;
        assert_int_equal(shaper_design(&zvd, SHAPER_ZVD, f, z), 0);
        assert_int_equal(shaper_design(&zv, SHAPER_ZV, f, z), 0);
        residual_sum(&zvd, f + h, z, &r1, &i1);
        residual_sum(&zvd, f - h, z, &r2, &i2);
        double dzvd = hypot(r1 - r2, i1 - i2) / (2 * h / f); /* |dS / d(f/f0)| */
        residual_sum(&zv, f + h, z, &r1, &i1);
        residual_sum(&zv, f - h, z, &r2, &i2);
        double dzv = hypot(r1 - r2, i1 - i2) / (2 * h / f);
        assert_true(dzvd < 1e-6);
        assert_true(dzv > 0.5); /* pi/2 for zeta = 0 */
        for (double d = 1e-2; d >= 1e-3; d /= 10) {
            assert_true(shaper_residual(&zvd, f * (1 + d), z) < 3 * d * d);
            assert_true(shaper_residual(&zvd, f * (1 - d), z) < 3 * d * d);
            assert_true(shaper_residual(&zv, f * (1 + d), z) > 0.5 * d);
        }
    }
}

/* EI (V_tol = 5 %): at most 5 % vibration at the design mode (exactly 5 % undamped) and over
 * +-19 % of it (published insensitivity: +-20 % at 5 %), for damping up to 0.1; beyond, more. */
static void test_ei_band(void **state)
{
    (void)state;
    shaper s;
    for (int a = 0; a < NF; a++) {
        for (int b = 0; b < 4; b++) { /* zeta 0 ... 0.1: the approximation's range */
            double f = freqs[a], z = zetas[b];
            assert_int_equal(shaper_design(&s, SHAPER_EI, f, z), 0);
            check_train(&s, 3);
            assert_true(shaper_residual(&s, f, z) <= SHAPER_EI_TOLERANCE + 1e-12);
            for (double r = 0.81; r <= 1.19; r += 0.005)
                assert_true(shaper_residual(&s, r * f, z) <= SHAPER_EI_TOLERANCE + 1e-12);
            assert_true(shaper_residual(&s, 0.7 * f, z) > SHAPER_EI_TOLERANCE);
            assert_true(shaper_residual(&s, 1.3 * f, z) > SHAPER_EI_TOLERANCE);
        }
    }
    assert_int_equal(shaper_design(&s, SHAPER_EI, 10, 0), 0);
    assert_true(fabs(shaper_residual(&s, 10, 0) - 0.05) < 1e-9);
}

/* Bad modes are refused and leave no shaping. */
static void test_bad_mode(void **state)
{
    (void)state;
    shaper s;
    const double bad_f[] = {0, -1, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(shaper_design(&s, SHAPER_ZVD, bad_f[i], 0.05), -1);
        assert_int_equal(s.n, 1);
    }
    const double bad_z[] = {-0.01, 1, 1.5, NAN};
    for (int i = 0; i < 4; i++) assert_int_equal(shaper_design(&s, SHAPER_ZV, 5, bad_z[i]), -1);
    assert_int_equal(shaper_design(&s, (shaper_kind)42, 5, 0), -1);
}

/* One RK4 step of the mode x'' = w^2 (u - x) - 2 zeta w x' driven by u(t) (u at t, t + dt/2
 * and t + dt given), state (x, v). */
static void mode_step(double *x, double *v, double w, double zeta, double dt, double u0, double um,
                      double u1)
{
#define ACC(xx, vv, uu) (w * w * ((uu) - (xx)) - 2 * zeta * w * (vv))
    double k1x = *v, k1v = ACC(*x, *v, u0);
    double k2x = *v + 0.5 * dt * k1v, k2v = ACC(*x + 0.5 * dt * k1x, *v + 0.5 * dt * k1v, um);
    double k3x = *v + 0.5 * dt * k2v, k3v = ACC(*x + 0.5 * dt * k2x, *v + 0.5 * dt * k2v, um);
    double k4x = *v + dt * k3v, k4v = ACC(*x + dt * k3x, *v + dt * k3v, u1);
#undef ACC
    *x += dt / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
    *v += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
}

/* The shaped step sum A_i H(t - t_i) at t (an impulse counts from its own time on). */
static double shaped_step(const shaper *s, double t)
{
    double u = 0;
    for (int i = 0; i < s->n; i++)
        if (t >= s->t[i] - 1e-12) u += s->a[i];
    return u;
}

/* Largest |x - 1| of the mode (f, zeta) after the shaper's last impulse, over 3 periods, the
 * mode driven from rest by the step shaped by s. dt divides the half period exactly. */
static double step_residual(const shaper *s, double f, double zeta)
{
    double w = 2 * M_PI * f, td = 1 / (f * sqrt(1 - zeta * zeta)), dt = td / 2000;
    double x = 0, v = 0, worst = 0, t_end = shaper_duration(s) + 3 * td;
    for (int k = 0; k * dt < t_end; k++) {
        double t = k * dt;
        if (t >= shaper_duration(s) - 1e-12) worst = fmax(worst, fabs(x - 1));
        double u = shaped_step(s, t + 1e-9); /* piecewise constant over the step */
        mode_step(&x, &v, w, zeta, dt, u, u, u);
    }
    return worst;
}

/* A shaped step into the mode it is designed for: ZV, ZVD leave < 1e-6 of the unshaped
 * oscillation (RK4's error), EI at most its 5 %; ZVD with the mode 10 % off still < 5 %. */
static void test_step_into_mode(void **state)
{
    (void)state;
    shaper none, zv, zvd, ei;
    double f = 2.5, z = 0.03;
    shaper_design(&none, SHAPER_NONE, f, z);
    assert_int_equal(shaper_design(&zv, SHAPER_ZV, f, z), 0);
    assert_int_equal(shaper_design(&zvd, SHAPER_ZVD, f, z), 0);
    assert_int_equal(shaper_design(&ei, SHAPER_EI, f, z), 0);
    double r0 = step_residual(&none, f, z);
    assert_true(r0 > 0.5); /* an unshaped step rings: e^{-zeta w t} at t = 0 is 1 */
    double rzv = step_residual(&zv, f, z) / r0, rzvd = step_residual(&zvd, f, z) / r0;
    double rei = step_residual(&ei, f, z) / r0;
    printf("shaped step into %.1f Hz, zeta %.2f: residual / unshaped ZV %.2e ZVD %.2e EI %.4f\n", f,
           z, rzv, rzvd, rei);
    assert_true(rzv < 1e-6);
    assert_true(rzvd < 1e-6);
    assert_true(rei < 0.06 && rei > 0.01); /* its tolerance, e^{...} of the first period */
    double off = step_residual(&zvd, 1.1 * f, z) / step_residual(&none, 1.1 * f, z);
    assert_true(off < 0.05);
}

/* ------------------------------------------------------------------------ shaped plans */

/* Two revolute joints, +-2 rad, v [rad/s], a [rad/s^2], 1 kHz, shaper kind at (f, zeta). */
static traj_limits limits2(double v, double a, shaper_kind kind, double f, double zeta)
{
    traj_limits l;
    memset(&l, 0, sizeof l);
    l.n = 2;
    l.period = 1e-3;
    strcpy(l.name[0], "shoulder");
    strcpy(l.name[1], "elbow");
    for (int j = 0; j < 2; j++) {
        l.lower[j] = -2;
        l.upper[j] = 2;
        l.velocity[j] = v;
        l.acceleration[j] = a;
    }
    assert_int_equal(shaper_design(&l.shape, kind, f, zeta), 0);
    return l;
}

static traj_plan plan, ref;
static int setup(void **state)
{
    (void)state;
    if (traj_plan_alloc(&plan, 2, 256)) return -1;
    return traj_plan_alloc(&ref, 2, 256);
}
static int teardown(void **state)
{
    (void)state;
    traj_plan_free(&plan);
    traj_plan_free(&ref);
    return 0;
}

static traj_waypoint wp(double t, double q0, double q1)
{
    traj_waypoint w;
    memset(&w, 0, sizeof w);
    w.t = t;
    w.q[0] = q0;
    w.q[1] = q1;
    return w;
}

/* Without a shaper the plan is the one built before shapers existed: a move is exactly the
 * single quintic traj_quintic gives (samples bit-identical), and traj_shape(none) leaves
 * every byte of a waypoint plan as it was. */
static void test_none_bit_identical(void **state)
{
    (void)state;
    traj_limits l = limits2(3, 30, SHAPER_NONE, 0, 0);
    traj_state s = {{0.1, -0.2}, {0}, {0}};
    double goal[2] = {0.9, 0.3};
    traj_error e;
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0, &e), 0);
    assert_false(plan.shaped);
    assert_int_equal(plan.n_seg, 1);
    ref.n_seg = 1;
    ref.duration = plan.duration;
    ref.t0[0] = 0;
    ref.h[0] = plan.duration;
    for (int j = 0; j < 2; j++)
        traj_quintic(s.q[j], 0, 0, goal[j], 0, 0, plan.duration, ref.c + j * 6);
    int sa = 0, sb = 0;
    for (int k = 0; k <= 1000; k++) {
        double t = plan.duration * k / 1000, q[2], qd[2], qdd[2], Q[2], QD[2], QDD[2];
        traj_sample(&plan, t, &sa, q, qd, qdd);
        traj_sample(&ref, t, &sb, Q, QD, QDD);
        assert_memory_equal(q, Q, sizeof q);
        assert_memory_equal(qd, QD, sizeof qd);
        assert_memory_equal(qdd, QDD, sizeof qdd);
    }
    traj_waypoint p[3] = {wp(0.5, 0.3, 0.1), wp(1.1, 0.6, -0.2), wp(2, 0.2, 0.4)};
    assert_int_equal(traj_build(&plan, &l, &s, p, 3, 1e-6, &e), 0);
    int n_seg = plan.n_seg;
    double dur = plan.duration, t0[3], h[3], c[3 * 2 * 6];
    memcpy(t0, plan.t0, sizeof t0);
    memcpy(h, plan.h, sizeof h);
    memcpy(c, plan.c, sizeof c);
    assert_int_equal(traj_shape(&plan, &l.shape, &s, &e), 0);
    assert_int_equal(plan.n_seg, n_seg);
    assert_true(plan.duration == dur);
    assert_memory_equal(plan.t0, t0, sizeof t0);
    assert_memory_equal(plan.h, h, sizeof h);
    assert_memory_equal(plan.c, c, sizeof c);
}

/* A shaped move: same start and goal, at rest at both ends, longer by the shaper, and equal
 * to sum A_i q(t - t_i) of the unshaped move (q held before 0 and after its end). */
static void test_shaped_move(void **state)
{
    (void)state;
    const shaper_kind kinds[] = {SHAPER_ZV, SHAPER_ZVD, SHAPER_EI};
    for (int kk = 0; kk < 3; kk++) {
        traj_limits l0 = limits2(3, 30, SHAPER_NONE, 0, 0), l = limits2(3, 30, kinds[kk], 3, 0.05);
        traj_state s = {{0.1, -0.2}, {0}, {0}};
        double goal[2] = {0.9, 0.3};
        traj_error e;
        assert_int_equal(traj_build_move(&ref, &l0, &s, goal, 0.8, &e), 0);
        assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0.8, &e), 0);
        assert_true(plan.shaped);
        assert_true(fabs(plan.duration - (0.8 + shaper_duration(&l.shape))) < 1e-12);
        int sa = 0, sb = 0;
        double q[2], qd[2], qdd[2], Q[2], QD[2], QDD[2];
        traj_sample(&plan, 0, &sa, q, qd, qdd);
        for (int j = 0; j < 2; j++)
            assert_true(fabs(q[j] - s.q[j]) < 1e-12 && fabs(qd[j]) < 1e-12 && fabs(qdd[j]) < 1e-9);
        traj_sample(&plan, plan.duration, &sa, q, qd, qdd);
        for (int j = 0; j < 2; j++)
            assert_true(fabs(q[j] - goal[j]) < 1e-12 && fabs(qd[j]) < 1e-9 && fabs(qdd[j]) < 1e-6);
        for (int k = 0; k <= 997; k++) {
            double t = plan.duration * k / 997, want[2] = {0, 0}, wantd[2] = {0, 0};
            for (int i = 0; i < l.shape.n; i++) {
                double tt = t - l.shape.t[i];
                if (tt < 0) {
                    Q[0] = s.q[0], Q[1] = s.q[1], QD[0] = QD[1] = 0;
                } else {
                    sb = 0;
                    traj_sample(&ref, tt, &sb, Q, QD, QDD);
                }
                for (int j = 0; j < 2; j++) {
                    want[j] += l.shape.a[i] * Q[j];
                    wantd[j] += l.shape.a[i] * QD[j];
                }
            }
            traj_sample(&plan, t, &sa, q, qd, qdd);
            for (int j = 0; j < 2; j++) {
                assert_true(fabs(q[j] - want[j]) < 1e-10);
                assert_true(fabs(qd[j] - wantd[j]) < 1e-9);
            }
        }
    }
}

/* Waypoints (cubic segments, a C2 spline) shaped: still starts at the start and ends at the
 * last waypoint, continuous in q and qd across every shaped segment. */
static void test_shaped_waypoints(void **state)
{
    (void)state;
    traj_limits l = limits2(2, 20, SHAPER_ZVD, 4, 0.02);
    traj_state s = {{0, 0}, {0}, {0}};
    traj_waypoint p[4] = {wp(0.4, 0.3, 0.1), wp(0.9, 0.6, -0.2), wp(1.3, 0.5, 0.0),
                          wp(2.0, 0.2, 0.4)};
    traj_error e;
    assert_int_equal(traj_build(&plan, &l, &s, p, 4, 1e-6, &e), 0);
    assert_true(fabs(plan.duration - 2.0 - shaper_duration(&l.shape)) < 1e-12);
    assert_true(plan.n_seg > 4);
    int sg = 0;
    double q[2], qd[2], qdd[2], a[2], ad[2], add[2];
    traj_sample(&plan, plan.duration, &sg, q, qd, qdd);
    assert_true(fabs(q[0] - 0.2) < 1e-12 && fabs(q[1] - 0.4) < 1e-12);
    assert_true(fabs(qd[0]) < 1e-9 && fabs(qd[1]) < 1e-9);
    for (int k = 1; k < plan.n_seg; k++) {
        double tb = plan.t0[k];
        sg = k - 1;
        traj_sample(&plan, tb - 1e-12, &sg, a, ad, add);
        sg = k;
        traj_sample(&plan, tb, &sg, q, qd, qdd);
        for (int j = 0; j < 2; j++) {
            assert_true(fabs(q[j] - a[j]) < 1e-9);
            assert_true(fabs(qd[j] - ad[j]) < 1e-6);
        }
    }
}

/* Limits are checked on the shaped path: a move 3 % over the velocity limit unshaped is
 * refused without a shaper and accepted with one that spreads it (slower peak); a move too
 * fast for it even shaped is refused with the shaped path's message. */
static void test_limits_on_shaped_path(void **state)
{
    (void)state;
    traj_state s = {{0, 0}, {0}, {0}};
    double goal[2] = {1.0, 0};
    double T = 1.875 / 1.03; /* a quintic over 1 rad peaks at 1.875 / T rad/s: 1.03 rad/s */
    traj_limits l0 = limits2(1, 100, SHAPER_NONE, 0, 0), l = limits2(1, 100, SHAPER_ZVD, 2, 0);
    traj_error e;
    assert_int_equal(traj_build_move(&plan, &l0, &s, goal, T, &e), -1);
    assert_string_equal(e.code, "limits");
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, T, &e), 0);
    double vmax = 0, q[2], qd[2], qdd[2];
    int sg = 0;
    for (int k = 0; k <= 4000; k++) {
        traj_sample(&plan, plan.duration * k / 4000, &sg, q, qd, qdd);
        vmax = fmax(vmax, fabs(qd[0]));
    }
    assert_true(vmax < 1.0 && vmax > 0.8);
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 1.0, &e), -1);
    assert_string_equal(e.code, "limits");
    assert_non_null(strstr(e.message, "joint shoulder: the path reaches velocity"));
    assert_non_null(strstr(e.message, "(on the path shaped by [trajectory] shaper)"));
}

/* A start in motion: the shaped plan still starts exactly at the start state (segment 0 is
 * re-anchored), so handing it over never jumps. */
static void test_moving_start(void **state)
{
    (void)state;
    traj_limits l = limits2(2, 50, SHAPER_ZV, 5, 0.05);
    traj_state s = {{0.2, 0.1}, {0.3, -0.2}, {0.5, 0.1}};
    traj_waypoint p[2] = {wp(0.5, 0.5, 0.2), wp(1.2, 0.4, 0.0)};
    traj_error e;
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), 0);
    int sg = 0;
    double q[2], qd[2], qdd[2];
    traj_sample(&plan, 0, &sg, q, qd, qdd);
    for (int j = 0; j < 2; j++) {
        assert_true(fabs(q[j] - s.q[j]) < 1e-12);
        assert_true(fabs(qd[j] - s.qd[j]) < 1e-12);
        assert_true(fabs(qdd[j] - s.qdd[j]) < 1e-9);
    }
}

/* A shaped plan that needs more segments than the plan holds is refused, saying so. */
static void test_capacity(void **state)
{
    (void)state;
    traj_limits l = limits2(5, 500, SHAPER_ZVD, 3, 0);
    traj_state s = {{0, 0}, {0}, {0}};
    traj_waypoint p[120];
    for (int i = 0; i < 120; i++) p[i] = wp(0.01 * (i + 1), 0.001 * i, 0);
    traj_error e;
    assert_int_equal(traj_build(&plan, &l, &s, p, 120, 1e-6, &e), -1);
    assert_string_equal(e.code, "invalid_params");
    assert_non_null(strstr(e.message, "more than the 256 a plan holds"));
}

/* traj_build's guarantee holds shaped: random waypoint trajectories (from rest and from a
 * moving start, every shaper), whatever is accepted, sampled every 0.2 ms, is within the
 * position, velocity and acceleration limits and ends at the last waypoint. From rest, shaping
 * makes (almost) no trajectory fail its limits that passes unshaped. */
static void test_random_shaped_within_limits(void **state)
{
    (void)state;
    unsigned seed = 12345;
    int accepted = 0, refused = 0, ref_unshaped[2] = {0, 0}, ref_shaped[2] = {0, 0};
    for (int trial = 0; trial < 400; trial++) {
        shaper_kind kind = (shaper_kind)(1 + trial % 3);
        double f = 1 + (rand_r(&seed) % 1000) / 50.0, z = (rand_r(&seed) % 100) / 500.0;
        traj_limits l = limits2(1.5, 8, kind, f, z);
        traj_state s = {{0}, {0}, {0}};
        if (trial % 2) /* a moving start */
            for (int j = 0; j < 2; j++) {
                s.qd[j] = ((rand_r(&seed) % 200) / 100.0 - 1) * 0.5;
                s.qdd[j] = ((rand_r(&seed) % 200) / 100.0 - 1) * 2;
            }
        traj_waypoint p[6];
        int n = 1 + rand_r(&seed) % 6;
        double t = 0;
        for (int i = 0; i < n; i++) {
            t += 0.5 + (rand_r(&seed) % 1000) / 500.0;
            p[i] = wp(t, (rand_r(&seed) % 200) / 100.0 - 1, (rand_r(&seed) % 200) / 100.0 - 1);
        }
        traj_error e;
        traj_limits lu = l; /* the same without a shaper, to compare what is refused */
        shaper_design(&lu.shape, SHAPER_NONE, 0, 0);
        ref_unshaped[trial % 2] += traj_build(&plan, &lu, &s, p, n, 1e-6, &e) != 0;
        if (traj_build(&plan, &l, &s, p, n, 1e-6, &e) != 0) {
            refused++;
            ref_shaped[trial % 2]++;
            continue;
        }
        accepted++;
        assert_true(plan.shaped);
        int sg = 0;
        double q[2], qd[2], qdd[2];
        for (double tt = 0;; tt += 2e-4) {
            if (tt > plan.duration) tt = plan.duration;
            traj_sample(&plan, tt, &sg, q, qd, qdd);
            for (int j = 0; j < 2; j++) {
                assert_true(q[j] >= -2 - 1e-8 && q[j] <= 2 + 1e-8);
                assert_true(fabs(qd[j]) <= 1.5 * (1 + 2e-9) + 1e-9);
                assert_true(fabs(qdd[j]) <= 8 * (1 + 2e-9) + 1e-9);
            }
            if (tt >= plan.duration) break;
        }
        assert_true(fabs(q[0] - p[n - 1].q[0]) < 1e-9 && fabs(q[1] - p[n - 1].q[1]) < 1e-9);
    }
    printf("random shaped trajectories: %d accepted, %d refused; refused of 200 from rest: %d "
           "shaped, %d unshaped; of 200 moving: %d shaped, %d unshaped\n",
           accepted, refused, ref_shaped[0], ref_unshaped[0], ref_shaped[1], ref_unshaped[1]);
    assert_true(accepted > 100);
    assert_true(ref_shaped[0] <= ref_unshaped[0] + 10); /* from rest shaping costs nothing */
}

/* Peak |x - goal| of a mode (f [Hz], zeta) at the end of joint 0's plan, the mode
 * x'' = w^2 (q_des - x) - 2 zeta w x' driven by the plan from rest, measured over 3 periods
 * after the plan's end (RK4, 0.1 ms). */
static double plan_residual(const traj_plan *p, double f, double zeta, double goal)
{
    double w = 2 * M_PI * f, dt = 1e-4, x = 0, v = 0, worst = 0, q[2], qd[2], qdd[2];
    int sg = 0;
    traj_sample(p, 0, &sg, q, qd, qdd);
    x = q[0];
    double t_end = p->duration + 3 / f;
    for (double t = 0; t < t_end; t += dt) {
        if (t >= p->duration) worst = fmax(worst, fabs(x - goal));
        double u0, um, u1;
        traj_sample(p, t, &sg, q, qd, qdd);
        u0 = q[0];
        traj_sample(p, t + dt / 2, &sg, q, qd, qdd);
        um = q[0];
        traj_sample(p, t + dt, &sg, q, qd, qdd);
        u1 = q[0];
        mode_step(&x, &v, w, zeta, dt, u0, um, u1);
    }
    return worst;
}

/* A fast move into a 3 Hz, zeta 0.02 mode: shaped with ZVD at the mode, the residual
 * vibration is at least 10 x smaller than unshaped (here ~1e-6 of it). */
static void test_move_into_mode(void **state)
{
    (void)state;
    double f = 3, z = 0.02, goal[2] = {1.0, 0};
    traj_state s = {{0, 0}, {0}, {0}};
    traj_limits l0 = limits2(10, 100, SHAPER_NONE, 0, 0), l = limits2(10, 100, SHAPER_ZVD, f, z);
    traj_error e;
    assert_int_equal(traj_build_move(&ref, &l0, &s, goal, 0.25, &e), 0);
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0.25, &e), 0);
    double r0 = plan_residual(&ref, f, z, goal[0]), r1 = plan_residual(&plan, f, z, goal[0]);
    printf("move into %.1f Hz, zeta %.2f: residual unshaped %.3e rad, ZVD %.3e rad (%.2e)\n", f, z,
           r0, r1, r1 / r0);
    assert_true(r0 > 0.05);
    assert_true(r1 < r0 / 10);
    /* the mode 10 % off the design: still >= 10 x smaller */
    double r0b = plan_residual(&ref, 1.1 * f, z, goal[0]),
           r1b = plan_residual(&plan, 1.1 * f, z, goal[0]);
    printf("  mode at %.1f Hz: unshaped %.3e rad, ZVD %.3e rad\n", 1.1 * f, r0b, r1b);
    assert_true(r1b < r0b / 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_undamped),
        cmocka_unit_test(test_zero_vibration),
        cmocka_unit_test(test_zvd_derivative),
        cmocka_unit_test(test_ei_band),
        cmocka_unit_test(test_bad_mode),
        cmocka_unit_test(test_step_into_mode),
        cmocka_unit_test_setup_teardown(test_none_bit_identical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shaped_move, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shaped_waypoints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits_on_shaped_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_moving_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capacity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_shaped_within_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_move_into_mode, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
