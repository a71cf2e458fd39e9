/*
 * test_trajectory.c — splines of daemon/trajectory.h: continuity at knots, boundary
 * conditions, quintic/cubic segments matching given qd/qdd, validation messages (exact text),
 * minimum-time moves within limits, the cancel (stop) profile and re-anchoring.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/trajectory.h"

/* Two revolute joints "shoulder" and "elbow": +-2 rad, 1 rad/s, 5 rad/s^2 unless changed. */
static traj_limits limits2(double v, double a)
{
    traj_limits l;
    memset(&l, 0, sizeof l);
    l.n = 2;
    l.period = 1e-3; /* 1 kHz */
    strcpy(l.name[0], "shoulder");
    strcpy(l.name[1], "elbow");
    for (int j = 0; j < 2; j++) {
        l.lower[j] = -2;
        l.upper[j] = 2;
        l.velocity[j] = v;
        l.acceleration[j] = a;
    }
    return l;
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

static traj_plan plan;
static int setup(void **state)
{
    (void)state;
    return traj_plan_alloc(&plan, 2, 64);
}
static int teardown(void **state)
{
    (void)state;
    traj_plan_free(&plan);
    return 0;
}

static void sample(double t, double q[2], double qd[2], double qdd[2])
{
    int seg = 0;
    traj_sample(&plan, t, &seg, q, qd, qdd);
}

/* Position-only waypoints: q, qd and qdd continuous at every interior knot, the knots passed
 * exactly, zero velocity at the end, start velocity = the start state's. */
static void spline_c2_and_boundaries(void **state)
{
    (void)state;
    traj_limits l = limits2(10, 100);
    traj_state s;
    memset(&s, 0, sizeof s);
    s.q[0] = 0.1;
    s.qd[0] = 0.3; /* starts moving */
    traj_waypoint p[4] = {wp(0.5, 0.4, 0.2), wp(1.2, -0.3, 0.5), wp(1.5, 0.0, 0.9),
                          wp(2.5, 0.6, 0.1)};
    traj_error e;
    assert_int_equal(traj_build(&plan, &l, &s, p, 4, 1e-6, &e), 0);
    assert_int_equal(plan.n_seg, 4);
    assert_true(fabs(plan.duration - 2.5) < 1e-12);
    double q[2], qd[2], qdd[2], qa[2], qda[2], qdda[2], qb[2], qdb[2], qddb[2];
    sample(0, q, qd, qdd);
    assert_true(fabs(q[0] - 0.1) < 1e-12 && fabs(qd[0] - 0.3) < 1e-12);
    assert_true(fabs(q[1]) < 1e-12 && fabs(qd[1]) < 1e-12);
    for (int k = 0; k < 4; k++) {
        sample(p[k].t, q, qd, qdd);
        for (int j = 0; j < 2; j++) assert_true(fabs(q[j] - p[k].q[j]) < 1e-9);
        if (k == 3) {
            for (int j = 0; j < 2; j++) assert_true(fabs(qd[j]) < 1e-9);
            continue;
        }
        double eps = 1e-7;
        sample(p[k].t - eps, qa, qda, qdda);
        sample(p[k].t + eps, qb, qdb, qddb);
        for (int j = 0; j < 2; j++) {
            assert_true(fabs(qa[j] - qb[j]) < 1e-5);
            assert_true(fabs(qda[j] - qdb[j]) < 1e-4);
            assert_true(fabs(qdda[j] - qddb[j]) < 1e-3); /* C2 */
        }
    }
}

/* Quintic segments hit the given q, qd, qdd; cubic (qd only) hit q and qd. */
static void quintic_and_cubic_match(void **state)
{
    (void)state;
    traj_limits l = limits2(10, 100);
    traj_state s;
    memset(&s, 0, sizeof s);
    traj_waypoint p[3] = {wp(0.5, 0.3, -0.2), wp(1.0, 0.5, 0.1), wp(1.6, 0.2, 0.2)};
    p[0].has_qd = p[0].has_qdd = true;
    p[0].qd[0] = 0.4, p[0].qd[1] = -0.1, p[0].qdd[0] = 1.5, p[0].qdd[1] = -2.0;
    p[1].has_qd = true;
    p[1].qd[0] = 0.2, p[1].qd[1] = 0.3;
    traj_error e;
    assert_int_equal(traj_build(&plan, &l, &s, p, 3, 1e-6, &e), 0);
    assert_true(plan.first_quintic);
    double q[2], qd[2], qdd[2];
    sample(0.5, q, qd, qdd);
    for (int j = 0; j < 2; j++) {
        assert_true(fabs(q[j] - p[0].q[j]) < 1e-9);
        assert_true(fabs(qd[j] - p[0].qd[j]) < 1e-9);
    }
    /* the quintic ends with the given acceleration (the next, cubic, segment starts with its
     * own: sample just before the knot) */
    sample(0.5 - 1e-9, q, qd, qdd);
    for (int j = 0; j < 2; j++) assert_true(fabs(qdd[j] - p[0].qdd[j]) < 1e-5);
    /* at t just above 0 the quintic starts with the start's acceleration (0) */
    sample(0, q, qd, qdd);
    for (int j = 0; j < 2; j++) assert_true(fabs(qdd[j]) < 1e-9);
    sample(1.0, q, qd, qdd);
    for (int j = 0; j < 2; j++) {
        assert_true(fabs(q[j] - p[1].q[j]) < 1e-9);
        assert_true(fabs(qd[j] - p[1].qd[j]) < 1e-9);
    }
    /* segment coefficient helpers directly */
    double c[6], h = 0.7, qq, v, a;
    traj_quintic(0.1, -0.2, 0.3, 0.9, 0.4, -0.5, h, c);
    qq = c[0] + h * (c[1] + h * (c[2] + h * (c[3] + h * (c[4] + h * c[5]))));
    v = c[1] + h * (2 * c[2] + h * (3 * c[3] + h * (4 * c[4] + h * 5 * c[5])));
    a = 2 * c[2] + h * (6 * c[3] + h * (12 * c[4] + h * 20 * c[5]));
    assert_true(fabs(qq - 0.9) < 1e-12 && fabs(v - 0.4) < 1e-12 && fabs(a + 0.5) < 1e-10);
    traj_cubic(0.1, -0.2, 0.9, 0.4, h, c);
    qq = c[0] + h * (c[1] + h * (c[2] + h * c[3]));
    v = c[1] + h * (2 * c[2] + h * 3 * c[3]);
    assert_true(fabs(qq - 0.9) < 1e-12 && fabs(v - 0.4) < 1e-12);
}

/* Spline runs on either side of a waypoint with given qd keep that velocity. */
static void mixed_runs(void **state)
{
    (void)state;
    traj_limits l = limits2(10, 100);
    traj_state s;
    memset(&s, 0, sizeof s);
    traj_waypoint p[5] = {wp(0.4, 0.2, 0.1), wp(0.8, 0.5, 0.3), wp(1.2, 0.6, 0.6),
                          wp(1.6, 0.3, 0.5), wp(2.0, 0.0, 0.0)};
    p[2].has_qd = true;
    p[2].qd[0] = 0.25;
    p[2].qd[1] = -0.5;
    traj_error e;
    assert_int_equal(traj_build(&plan, &l, &s, p, 5, 1e-6, &e), 0);
    double q[2], qd[2], qdd[2], qa[2], qda[2], qdda[2];
    sample(1.2, q, qd, qdd);
    assert_true(fabs(qd[0] - 0.25) < 1e-9 && fabs(qd[1] + 0.5) < 1e-9);
    /* C2 inside the runs (knot 0.8 and 1.6) */
    double kt[2] = {0.8, 1.6};
    for (int i = 0; i < 2; i++) {
        sample(kt[i] - 1e-7, qa, qda, qdda);
        sample(kt[i] + 1e-7, q, qd, qdd);
        for (int j = 0; j < 2; j++) assert_true(fabs(qdda[j] - qdd[j]) < 1e-3);
    }
}

/* Exact messages naming waypoint and joint. */
static void validation_messages(void **state)
{
    (void)state;
    traj_limits l = limits2(1, 100);
    traj_state s;
    memset(&s, 0, sizeof s);
    traj_error e;
    traj_waypoint p[2] = {wp(1, 0.1, 0.1), wp(1, 0.2, 0.2)};
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), -1);
    assert_string_equal(e.code, "invalid_params");
    assert_string_equal(
        e.message,
        "waypoint 1: t = 1 s is not at least one control period (0.001 s) after waypoint 0 (t = "
        "1 s); times must increase by a period or more");

    p[0] = wp(1, 0.1, 2.5);
    assert_int_equal(traj_build(&plan, &l, &s, p, 1, 1e-6, &e), -1);
    assert_string_equal(e.code, "limits");
    assert_string_equal(
        e.message,
        "waypoint 0 joint elbow: q = 2.5 rad is outside the position limits [-2, 2] rad");

    /* cubic Hermite rest to rest (the end has no acceleration): q = D (3 tau^2 - 2 tau^3) with
     * tau = t / T, so qd = (D / T) 6 tau (1 - tau) = 18 tau (1 - tau) rad/s for D = 1.5 rad,
     * T = 0.5 s: its peak, 4.5 rad/s at t = 0.25 s, is the one named */
    p[0] = wp(0.5, 0, 1.5);
    assert_int_equal(traj_build(&plan, &l, &s, p, 1, 1e-6, &e), -1);
    assert_string_equal(e.code, "limits");
    assert_string_equal(e.message,
                        "waypoint 0 joint elbow: the path reaches velocity 4.5 rad/s at t = "
                        "0.25 s (between the start and waypoint 0), over the limit 1 rad/s");

    l = limits2(100, 5);
    p[0] = wp(1, 0.5, 0);
    p[1] = wp(1.5, 0.5, 0.4); /* acceleration on the second segment */
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), -1);
    assert_true(strstr(e.message, "joint elbow: the path reaches acceleration") != NULL);
    assert_true(
        strstr(e.message, "(between waypoint 0 and waypoint 1), over the limit 5 rad/s^2") != NULL);
    assert_true(strncmp(e.message, "waypoint 1 joint elbow:", 23) == 0);

    p[0] = wp(0, 0.3, 0); /* t = 0 must be the start */
    p[1] = wp(1, 0.3, 0);
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), -1);
    assert_string_equal(
        e.message, "waypoint 0 joint shoulder: at t = 0 the trajectory is at the present "
                   "desired position 0 rad, not 0.3 rad; give the first waypoint a later time");
    p[0] = wp(0, 0, 0); /* ... and is dropped when it is */
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), 0);
    assert_int_equal(plan.n_seg, 1);

    p[0] = wp(-1, 0, 0);
    assert_int_equal(traj_build(&plan, &l, &s, p, 1, 1e-6, &e), -1);
    assert_string_equal(
        e.message, "waypoint 0: t = -1 s must be at least one control period (0.001 s) after "
                   "the start (the trajectory starts from the present desired state at t = 0)");
    p[0] = wp(1, NAN, 0);
    assert_int_equal(traj_build(&plan, &l, &s, p, 1, 1e-6, &e), -1);
    assert_string_equal(e.message, "waypoint 0 joint shoulder: value is not a finite number");

    traj_error_count(&e, 3, "q", 5, 6);
    assert_string_equal(e.message, "waypoint 3: q has 5 values, the arm has 6 joints");
    assert_int_equal(traj_build(&plan, &l, &s, p, 0, 1e-6, &e), -1);
    assert_string_equal(e.message, "a trajectory needs at least one waypoint");
}

/* Times and durations outside [one period, an hour], NaN and infinities are refused by name;
 * before, 1e200 s was accepted and sampled to NaN (a limp arm reported as moving). */
static void times_and_durations_bounded(void **state)
{
    (void)state;
    traj_limits l = limits2(1, 5);
    traj_state s;
    memset(&s, 0, sizeof s);
    traj_error e;
    const double bad_t[] = {NAN, INFINITY, -INFINITY, 0.0005, 1e-300, -1, 3600.5, 1e300};
    for (size_t i = 0; i < sizeof bad_t / sizeof bad_t[0]; i++) {
        traj_waypoint p[1] = {wp(bad_t[i], 0.1, 0)};
        assert_int_equal(traj_build(&plan, &l, &s, p, 1, 1e-6, &e), -1);
        assert_string_equal(e.code, "invalid_params");
        assert_true(strncmp(e.message, "waypoint 0: t ", 14) == 0);
    }
    traj_waypoint p[2] = {wp(1, 0.1, 0), wp(1.0005, 0.1, 0)}; /* half a period apart */
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), -1);
    assert_true(strstr(e.message, "not at least one control period") != NULL);
    p[1] = wp(1.001, 0.1, 0); /* one period apart: fine */
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), 0);
    double goal[2] = {0.1, 0};
    const double bad_d[] = {NAN, INFINITY, 1e200, 3601, 1e-300, 0.0005};
    for (size_t i = 0; i < sizeof bad_d / sizeof bad_d[0]; i++) {
        assert_int_equal(traj_build_move(&plan, &l, &s, goal, bad_d[i], &e), -1);
        assert_string_equal(e.code, "invalid_params");
        assert_true(strncmp(e.message, "duration ", 9) == 0);
    }
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 3600, &e), 0);
    goal[0] = NAN;
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0, &e), -1);
    goal[0] = 0.1;
    s.qd[1] = NAN; /* a corrupt start state is not silently followed */
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0, &e), -1);
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), -1);
}

/* A peak between samples: from -0.878 rad/s to rest at 1.228 rad over 2.465 s the cubic's
 * velocity peaks at 1.0011 rad/s at 58 % of the segment, but at most 0.9997 rad/s at any of 33
 * evenly spaced samples, which is how the validation looked before: accepted then, refused
 * now, naming the true peak. */
static void peak_between_samples_refused(void **state)
{
    (void)state;
    traj_limits l = limits2(1, 100);
    traj_state s;
    memset(&s, 0, sizeof s);
    s.qd[0] = -0.8781016110151163;
    traj_waypoint p[1] = {wp(2.4652613871931974, 1.2281682815487276, 0)};
    traj_error e;
    assert_int_equal(traj_build(&plan, &l, &s, p, 1, 1e-6, &e), -1);
    assert_string_equal(e.code, "limits");
    assert_true(strstr(e.message, "joint shoulder: the path reaches velocity 1.001 rad/s at t = "
                                  "1.4") != NULL);
}

/* xorshift64* in [0, 1) (a fixed seed: the same cases every run). */
static double uniform(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return (double)((*x * 2685821657736338717ull) >> 11) * 0x1p-53;
}

/* The guarantee of traj_build: whatever it accepts, sampled densely (10 x the loop rate), is
 * finite and within the limits. Random starts within the limits, random waypoints (with and
 * without qd / qdd) within reach of them; some are accepted (the test says how many). Sampling 32
 * points per segment, as the validation did before, let through paths that peaked between the
 * samples. */
static void accepted_paths_stay_within_limits(void **state)
{
    (void)state;
    traj_limits l = limits2(1, 5);
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    int accepted = 0;
    for (int trial = 0; trial < 3000; trial++) {
        traj_state s;
        memset(&s, 0, sizeof s);
        for (int j = 0; j < 2; j++) {
            s.q[j] = -2 + 4 * uniform(&rng);
            s.qd[j] = (2 * uniform(&rng) - 1) * 0.3 * l.velocity[j];
            s.qdd[j] = (2 * uniform(&rng) - 1) * 0.3 * l.acceleration[j];
        }
        traj_waypoint p[4];
        int n = 1 + (int)(uniform(&rng) * 4);
        double t = 0, q0 = s.q[0], q1 = s.q[1];
        for (int i = 0; i < n; i++) {
            double dt = 0.001 + 3 * uniform(&rng) * uniform(&rng);
            t += dt;
            q0 += (2 * uniform(&rng) - 1) * 0.7 * l.velocity[0] * dt; /* reachable, mostly */
            q1 += (2 * uniform(&rng) - 1) * 0.7 * l.velocity[1] * dt;
            p[i] = wp(t, q0, q1);
            p[i].has_qd = uniform(&rng) < 0.5;
            p[i].has_qdd = p[i].has_qd && uniform(&rng) < 0.5;
            for (int j = 0; j < 2; j++) {
                p[i].qd[j] = (2 * uniform(&rng) - 1) * 0.5 * l.velocity[j];
                p[i].qdd[j] = (2 * uniform(&rng) - 1) * 0.5 * l.acceleration[j];
            }
        }
        traj_error e;
        if (traj_build(&plan, &l, &s, p, n, 1e-6, &e) != 0) continue;
        accepted++;
        int seg = 0;
        double q[2], qd[2], qdd[2];
        for (double tt = 0; tt <= plan.duration; tt += 1e-4) {
            traj_sample(&plan, tt, &seg, q, qd, qdd);
            for (int j = 0; j < 2; j++) {
                assert_true(isfinite(q[j]) && isfinite(qd[j]) && isfinite(qdd[j]));
                assert_true(q[j] >= -2 - 1e-8 && q[j] <= 2 + 1e-8);
                assert_true(fabs(qd[j]) <= 1 + 1e-8);
                assert_true(fabs(qdd[j]) <= 5 + 1e-8);
            }
        }
    }
    printf("%d of 3000 random trajectories accepted\n", accepted);
    assert_true(accepted > 300); /* the property was exercised */
}

/* Largest |qd| and |qdd| of joint j over the plan, densely sampled. */
static void plan_peaks(int j, double *vmax, double *amax)
{
    *vmax = *amax = 0;
    double q[2], qd[2], qdd[2];
    for (int i = 0; i <= 20000; i++) {
        sample(plan.duration * i / 20000.0, q, qd, qdd);
        *vmax = fmax(*vmax, fabs(qd[j]));
        *amax = fmax(*amax, fabs(qdd[j]));
    }
}

/* move_to without a duration: within the limits and close to one of them (minimal). */
/* A move that starts past a limit (an arm enabled on its hard stop) may come back inside the
 * limits, but a path going further out than its start is still refused. */
static void move_from_outside_the_limits(void **state)
{
    (void)state;
    traj_limits l = limits2(1, 5);
    traj_state s;
    memset(&s, 0, sizeof s);
    s.q[0] = -2.05; /* 0.05 past the lower limit */
    double back[2] = {-2.0, 0}, further[2] = {-2.1, 0};
    traj_error e;
    assert_int_equal(traj_build_move(&plan, &l, &s, back, 0, &e), 0);
    double q[2], qd[2], qdd[2];
    for (int i = 0; i <= 100; i++) {
        sample(plan.duration * i / 100, q, qd, qdd);
        assert_true(q[0] >= -2.05 - 1e-12 && q[0] <= -2.0 + 1e-12); /* monotonic, inward */
    }
    assert_int_equal(traj_build_move(&plan, &l, &s, further, 0, &e), -1);
    assert_string_equal(e.code, "limits");
}

static void move_to_minimum_time(void **state)
{
    (void)state;
    traj_limits l = limits2(1, 5);
    l.velocity[1] = 0.5;
    traj_state s;
    memset(&s, 0, sizeof s);
    double goal[2] = {1.5, -0.4};
    traj_error e;
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0, &e), 0);
    double expect = fmax(traj_min_quintic_time(1.5, 1, 5), traj_min_quintic_time(0.4, 0.5, 5));
    assert_true(plan.duration >= expect && plan.duration < expect * 1.01);
    double v0, a0, v1, a1;
    plan_peaks(0, &v0, &a0);
    plan_peaks(1, &v1, &a1);
    assert_true(v0 <= 1 + 1e-9 && a0 <= 5 + 1e-9 && v1 <= 0.5 + 1e-9 && a1 <= 5 + 1e-9);
    assert_true(v0 > 0.98 || a0 > 0.98 * 5); /* the binding limit is reached */
    double q[2], qd[2], qdd[2];
    sample(plan.duration, q, qd, qdd);
    assert_true(fabs(q[0] - 1.5) < 1e-9 && fabs(q[1] + 0.4) < 1e-9 && fabs(qd[0]) < 1e-9);
    /* from a moving start the duration grows until the limits hold */
    s.qd[0] = -0.9;
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0, &e), 0);
    plan_peaks(0, &v0, &a0);
    assert_true(v0 <= 1 + 1e-6 && a0 <= 5 + 1e-6);
    /* a duration too short is refused with the limit named */
    memset(&s, 0, sizeof s);
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0.2, &e), -1);
    assert_string_equal(e.code, "limits");
    assert_true(strncmp(e.message, "waypoint 0 joint shoulder: the path reaches", 43) == 0);
    goal[1] = -3;
    assert_int_equal(traj_build_move(&plan, &l, &s, goal, 0, &e), -1);
    assert_string_equal(
        e.message, "waypoint 0 joint elbow: q = -3 rad is outside the position limits [-2, 2] rad");
}

/* Cancel: each joint decelerates at no more than its limit, reaches rest and stays. */
static void cancel_decelerates_within_limits(void **state)
{
    (void)state;
    traj_stop st;
    double q0[2] = {0.2, -0.1}, v0[2] = {0.8, -0.3}, acc[2] = {2.0, 4.0};
    traj_stop_init(&st, 2, q0, v0, acc);
    assert_true(fabs(st.duration - 0.4) < 1e-12);
    double q[2], qd[2], qdd[2], qp[2] = {0.2, -0.1}, vp[2] = {0.8, -0.3}, dt = 1e-4;
    for (int i = 1; i <= 6000; i++) {
        traj_stop_sample(&st, i * dt, q, qd, qdd);
        for (int j = 0; j < 2; j++) {
            assert_true(fabs(qdd[j]) <= acc[j] + 1e-12);
            assert_true(fabs(qd[j] - vp[j]) <= acc[j] * dt + 1e-9); /* no velocity jump */
            assert_true(fabs(q[j] - qp[j]) <= fabs(vp[j]) * dt + 1e-9);
            assert_true(qd[j] * v0[j] >= -1e-12); /* never reverses */
            qp[j] = q[j];
            vp[j] = qd[j];
        }
    }
    assert_true(fabs(qd[0]) < 1e-12 && fabs(qd[1]) < 1e-12);
    assert_true(fabs(q[0] - (0.2 + 0.8 * 0.8 / (2 * 2.0))) < 1e-9);
    assert_true(fabs(q[1] - (-0.1 - 0.3 * 0.3 / (2 * 4.0))) < 1e-9);
}

/* Re-anchoring moves the start without changing the end of segment 0 or later segments. */
static void reanchor_keeps_end(void **state)
{
    (void)state;
    traj_limits l = limits2(10, 100);
    traj_state s, s2;
    memset(&s, 0, sizeof s);
    traj_waypoint p[2] = {wp(0.5, 0.4, 0.2), wp(1.0, 0.1, 0.1)};
    traj_error e;
    assert_int_equal(traj_build(&plan, &l, &s, p, 2, 1e-6, &e), 0);
    double qa[2], qda[2], qdda[2], q[2], qd[2], qdd[2];
    sample(0.5, qa, qda, qdda);
    memset(&s2, 0, sizeof s2);
    s2.q[0] = 0.01;
    s2.qd[0] = 0.05;
    s2.q[1] = -0.01;
    traj_reanchor(&plan, &s2);
    sample(0, q, qd, qdd);
    assert_true(fabs(q[0] - 0.01) < 1e-12 && fabs(qd[0] - 0.05) < 1e-12 &&
                fabs(q[1] + 0.01) < 1e-12);
    sample(0.5, q, qd, qdd);
    for (int j = 0; j < 2; j++)
        assert_true(fabs(q[j] - qa[j]) < 1e-9 && fabs(qd[j] - qda[j]) < 1e-9);
    traj_state end;
    traj_end_state(&plan, &end);
    assert_true(fabs(end.q[0] - 0.1) < 1e-12 && fabs(end.qd[0]) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(spline_c2_and_boundaries, setup, teardown),
        cmocka_unit_test_setup_teardown(quintic_and_cubic_match, setup, teardown),
        cmocka_unit_test_setup_teardown(mixed_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(validation_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(times_and_durations_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(peak_between_samples_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(accepted_paths_stay_within_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(move_to_minimum_time, setup, teardown),
        cmocka_unit_test_setup_teardown(move_from_outside_the_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(cancel_decelerates_within_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(reanchor_keeps_end, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
