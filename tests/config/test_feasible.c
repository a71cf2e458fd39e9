/*
 * test_feasible.c — config/feasible.h: the gains' stability bounds against a simulated sampled
 * loop (a unit-inertia double integrator under PD, the torque held over each period: the exact
 * zero-order-hold update), gains 1 % inside each bound stay bounded and 1 % outside diverge, and
 * the verdict of feas_gains_stable agrees; ki needs i_limit; the character rule; a payload
 * refused at the present pose, over the joint ranges and above max_payload, a feasible one
 * accepted; the damping stop's bound with the joint's own inertia.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/feasible.h"

#define STEPS 50000

/* The largest |e| over the last tenth of STEPS periods of e'' = -kp e - kd e', the acceleration
 * held over each period dt (exact for the double integrator), from e = 1, e' = 0. */
static double simulate(double kp, double kd, double dt)
{
    double e = 1, v = 0, peak = 0;
    for (int k = 0; k < STEPS; k++) {
        double u = -kp * e - kd * v;
        e += v * dt + 0.5 * u * dt * dt;
        v += u * dt;
        if (k >= STEPS - STEPS / 10) peak = fmax(peak, fabs(e) + fabs(v) * dt);
        if (!(fabs(e) < 1e12)) return INFINITY;
    }
    return peak;
}

static bool stable(double kp, double kd, double dt)
{
    char why[256];
    return feas_gains_stable("j", kp, kd, dt, why, sizeof why) == 0;
}

/* Just inside each bound: bounded (below the start); just outside: diverged (x 100). */
static void test_bounds_match_simulation(void **state)
{
    (void)state;
    const double dts[] = {1e-3, 2.5e-3, 5e-3};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        double dt = dts[i];
        /* kd dt < 2 (kp small: kp dt^2 = kd dt / 2) */
        double kd_in = 0.99 * 2 / dt, kd_out = 1.01 * 2 / dt;
        assert_true(stable(0.5 * kd_in / dt, kd_in, dt));
        assert_false(stable(0.5 * kd_out / dt, kd_out, dt));
        assert_true(simulate(0.5 * kd_in / dt, kd_in, dt) < 1);
        assert_true(simulate(0.5 * kd_out / dt, kd_out, dt) > 100);
        /* kp dt < 2 kd, for a low and a high kd */
        const double kds[] = {40, 0.5 / dt};
        for (size_t k = 0; k < 2; k++) {
            double kd = kds[k], kp_in = 0.99 * 2 * kd / dt, kp_out = 1.01 * 2 * kd / dt;
            assert_true(stable(kp_in, kd, dt));
            assert_false(stable(kp_out, kd, dt));
            assert_true(simulate(kp_in, kd, dt) < 1);
            assert_true(simulate(kp_out, kd, dt) > 100);
        }
    }
    /* the examples' gains are well inside; kd = 0 with kp > 0 diverges; no gains, no loop */
    assert_true(stable(400, 40, 1e-3) && stable(1600, 80, 2.5e-3) && stable(100, 20, 5e-3));
    assert_false(stable(400, 0, 1e-3));
    assert_true(simulate(400, 0, 1e-3) > 100);
    assert_true(stable(0, 0, 1e-3) && stable(0, 40, 1e-3));
    char why[256];
    assert_int_equal(feas_gains_stable("j2", 400, 2500, 1e-3, why, sizeof why), -1);
    assert_string_equal(why, "joint j2: kd dt = 2500 x 0.001 s = 2.5 must be below 2 (the sampled "
                             "loop's stability bound kd dt < 2; kd below 2000 at this rate)");
    assert_int_equal(feas_gains_stable("j2", NAN, 40, 1e-3, why, sizeof why), -1);
}

static void test_integral_needs_limit(void **state)
{
    (void)state;
    char why[256];
    assert_int_equal(feas_integral("j1", 10, 0, why, sizeof why), -1);
    assert_non_null(strstr(why, "joint j1: ki = 10 needs i_limit > 0"));
    assert_int_equal(feas_integral("j1", 10, 0.01, why, sizeof why), 0);
    assert_int_equal(feas_integral("j1", 0, 0, why, sizeof why), 0);
}

static void test_character(void **state)
{
    (void)state;
    char why[256];
    const double base[3] = {400, 40, 0};
    const struct {
        double nu[3];
        int rc;
        const char *word;
    } cases[] = {
        {{400, 35, 0}, 0, NULL},            /* critical -> slightly under */
        {{300, 40, 0}, 0, NULL},            /* critical -> slightly over */
        {{800, 40, 0}, 0, NULL},            /* doubled exactly */
        {{2000, 40, 0}, -1, "factor of 2"}, /* x 5 */
        {{400, 19, 0}, -1, "factor of 2"},  /* more than halved */
        {{400, 40, 5}, -1, "on"},           /* ki from zero */
        {{0, 40, 0}, -1, "off"},            /* kp to zero */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = feas_gain_character("j1", base, cases[i].nu, why, sizeof why);
        assert_int_equal(rc, cases[i].rc);
        if (cases[i].word) assert_non_null(strstr(why, cases[i].word));
    }
    /* under-damped (zeta 0.6) to over-damped (zeta 1.15): refused, either way; 0.75 -> 1.3
     * (from the band [1/sqrt(2), 1]) passes */
    const double under[3] = {400, 24, 0}, over[3] = {300, 40, 0};
    assert_int_equal(feas_gain_character("j1", under, over, why, sizeof why), -1);
    assert_non_null(strstr(why, "from 0.6 to 1.15, under-damped (below 1/sqrt(2)) to over-damped"));
    assert_int_equal(feas_gain_character("j1", over, under, why, sizeof why), -1);
    const double band[3] = {400, 30, 0}, over2[3] = {400, 52, 0};
    assert_int_equal(feas_gain_character("j1", band, over2, why, sizeof why), 0);
}

/* One revolute joint about z, gravity along -y: the link (1 kg, its centre 0.15 m out) and a
 * payload at the tool (0.1 m out) weigh on the joint as (m r) g cos q; limits [-1, 1] rad,
 * torque limit 10 N m. */
static const char *const arm1 =
    "[arm]\nname = t\nrate_hz = 100\ngravity = 0 -9.81 0\nmax_payload = 9.5\n"
    "[driver]\ntype = armlink\nport = /dev/null\n"
    "[joint j1]\ntype = revolute\ndh = standard\na = 0.1\nalpha = 0\nd = 0\ntheta = 0\n"
    "mass = 1\ncom = 0.05 0 0\ninertia = 0.01 0 0 0.01 0 0.01\nlower = -1\nupper = 1\n"
    "velocity = 2\nacceleration = 5\ntorque = 10\nkp = 100\nkd = 20\nid = 1\n"
    "torque_per_amp = 1\n";

static void test_payload(void **state)
{
    (void)state;
    static armd_config cfg;
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load_string(arm1, "t.ini", &cfg, &rep), 0);
    cfg_report_free(&rep);
    char why[256];
    dyn_payload p = {0};
    double q0[1] = {0}, q_up[1] = {M_PI / 2 - 0.6};
    /* 8 kg: 7.85 + 1.47 = 9.32 N m at q = 0, the worst pose */
    p.mass = 8;
    assert_int_equal(feas_payload(&cfg, &p, q0, why, sizeof why), 0);
    /* 9 kg: 8.83 + 1.47 = 10.30 N m at q = 0 */
    p.mass = 9;
    assert_int_equal(feas_payload(&cfg, &p, q0, why, sizeof why), -1);
    assert_string_equal(why, "joint j1 needs 10.30 N m to hold the arm with this payload at the "
                             "present pose (the arm alone 1.47 N m), above its torque limit of "
                             "10.00 N m");
    /* held at q = 0.97 rad it is within; the range's q = 0 is not */
    assert_int_equal(feas_payload(&cfg, &p, q_up, why, sizeof why), -1);
    assert_non_null(strstr(why, "joint j1 needs 10.30 N m to hold the arm with this payload at "
                                "q = 0 (within the joint ranges)"));
    /* above max_payload (9.5 kg) */
    p.mass = 9.6;
    cfg.joint[0].torque = 100;
    assert_int_equal(feas_payload(&cfg, &p, q0, why, sizeof why), -1);
    assert_string_equal(why,
                        "9.6 kg is above [arm] max_payload = 9.5 kg (the arm's rated payload)");
    /* the damping stop: H_11 = 0.01 + 1 x 0.15^2 = 0.0325 kg m^2; D dt < 0.065 at 100 Hz */
    double h = feas_own_inertia(&cfg, 0);
    assert_true(fabs(h - 0.0325) < 1e-12);
    assert_int_equal(feas_damping_stable("j1", 6, h, 0.01, why, sizeof why), 0);
    assert_int_equal(feas_damping_stable("j1", 7, h, 0.01, why, sizeof why), -1);
    /* without max_payload only the torque counts */
    cfg.max_payload = 0;
    assert_int_equal(feas_payload(&cfg, &p, q0, why, sizeof why), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_match_simulation),
        cmocka_unit_test(test_integral_needs_limit),
        cmocka_unit_test(test_character),
        cmocka_unit_test(test_payload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
