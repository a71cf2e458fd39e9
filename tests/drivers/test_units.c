/*
 * test_units.c — device <-> joint SI conversion (drivers/units.c): the formulas against
 * hand-derived values, round trips, mirrored twins with direction -1, prismatic joints.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/drivers.h"

/* |a - b| <= eps in double precision (cmocka 1.1.5 compares floats only). */
#define assert_double_equal(a, b, eps) assert_near((a), (b), (eps), __FILE__, __LINE__)
static void assert_near(double a, double b, double eps, const char *file, int line)
{
    if (!(fabs(a - b) <= eps)) {
        print_error("%s:%d: %.17g != %.17g (tolerance %g)\n", file, line, a, b, eps);
        fail();
    }
}

/* A joint driven by two mirrored XM430s through a 2:1 reduction. */
static cfg_joint twin_joint(void)
{
    cfg_joint j;
    memset(&j, 0, sizeof j);
    strcpy(j.name, "shoulder");
    j.n_ids = 2;
    j.id[0] = 2;
    j.id[1] = 3;
    j.direction[0] = 1;
    j.direction[1] = -1;
    j.zero_offset[0] = M_PI;       /* 2048 counts */
    j.zero_offset[1] = M_PI + 0.1; /* the twin's horn sits a little further on */
    j.counts_per_rev = 4096;
    j.gear_ratio = 2.0;
    j.torque_per_amp = 1.5;
    return j;
}

static void test_position_formula(void **state)
{
    (void)state;
    cfg_joint j = twin_joint();
    /* 3072 counts = 1.5 pi shaft; (1.5 pi - pi) / 2 = pi / 4 */
    assert_double_equal(units_counts_to_q(&j, 0, 3072), M_PI / 4, 1e-12);
    /* twin, direction -1: shaft = pi + 0.1 - 2 q  for q = pi/4 -> counts = (pi/2 + 0.1)*4096/2pi */
    int32_t c1 = units_q_to_counts(&j, 1, M_PI / 4);
    assert_int_equal(c1, (int32_t)lround((M_PI / 2 + 0.1) * 4096 / (2 * M_PI)));
    /* both servos report the same joint angle (within one count / gear ratio) */
    assert_double_equal(units_counts_to_q(&j, 1, c1), M_PI / 4, 2 * M_PI / 4096 / 2 + 1e-12);
}

static void test_position_round_trip(void **state)
{
    (void)state;
    cfg_joint j = twin_joint();
    for (int k = 0; k < 2; k++)
        for (int32_t c = -100000; c <= 100000; c += 777)
            assert_int_equal(units_q_to_counts(&j, k, units_counts_to_q(&j, k, c)), c);
    /* out-of-range and NaN saturate instead of invoking undefined behaviour */
    assert_int_equal(units_q_to_counts(&j, 0, 1e12), INT32_MAX);
    assert_int_equal(units_q_to_counts(&j, 0, -1e12), INT32_MIN);
    assert_int_equal(units_q_to_counts(&j, 0, NAN), INT32_MIN);
}

/* The joint torque splits equally over the twins, with opposite current signs, and the sum
 * of the servos' contributions gives the torque back. */
static void test_torque_split(void **state)
{
    (void)state;
    cfg_joint j = twin_joint();
    double tau = 2.4;
    double a0 = units_tau_to_amps(&j, 0, tau), a1 = units_tau_to_amps(&j, 1, tau);
    assert_double_equal(a0, 2.4 / (2 * 1.5), 1e-12);
    assert_double_equal(a1, -a0, 1e-12);
    double back = units_amps_to_tau(&j, 0, a0) + units_amps_to_tau(&j, 1, a1);
    assert_double_equal(back, tau, 1e-12);
}

static void test_velocity(void **state)
{
    (void)state;
    cfg_joint j = twin_joint();
    /* 60 rpm = 2 pi rad/s at the shaft, / 2 gear */
    assert_double_equal(units_rpm_to_qd(&j, 0, 60.0), M_PI, 1e-12);
    assert_double_equal(units_rpm_to_qd(&j, 1, 60.0), -M_PI, 1e-12);
    for (double qd = -5; qd <= 5; qd += 0.37)
        for (int k = 0; k < 2; k++)
            assert_double_equal(units_rpm_to_qd(&j, k, units_qd_to_rpm(&j, k, qd)), qd, 1e-12);
}

/* Prismatic: gear_ratio = shaft radians per metre (10 mm lead screw: 2 pi / 0.01). */
static void test_prismatic(void **state)
{
    (void)state;
    cfg_joint j = twin_joint();
    j.n_ids = 1;
    j.zero_offset[0] = 0;
    j.gear_ratio = 2 * M_PI / 0.010;
    /* one shaft revolution = 10 mm */
    assert_double_equal(units_counts_to_q(&j, 0, 4096), 0.010, 1e-15);
    assert_int_equal(units_q_to_counts(&j, 0, 0.025), 4096 * 5 / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_position_formula), cmocka_unit_test(test_position_round_trip),
        cmocka_unit_test(test_torque_split),     cmocka_unit_test(test_velocity),
        cmocka_unit_test(test_prismatic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
