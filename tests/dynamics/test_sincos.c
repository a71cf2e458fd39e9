/* test_sincos.c — dyn_sincos_n (dynamics/sincos.h) against libm's sin and cos: at most 2 ulp on
 * the polynomial path (|x| < 1e5: log-uniform magnitudes from 1e-300, arguments next to
 * multiples of pi/2, batches of every length 1..9 so full and partial vectors are both used),
 * exactly libm beyond it (large arguments), NaN for NaN and +-inf, the sign of zero kept, and
 * good lanes unaffected by bad neighbours in the same vector. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"

enum { MAXB = 9 };

/* Distance in units in the last place between two finite doubles (ordered bit patterns). */
static double ulp_dist(double a, double b)
{
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    if (ia < 0) ia = INT64_MIN - ia;
    if (ib < 0) ib = INT64_MIN - ib;
    return ia >= ib ? (double)((uint64_t)ia - (uint64_t)ib) : (double)((uint64_t)ib - (uint64_t)ia);
}

/* Runs one batch and returns the largest ulp error against libm; fails on a non-finite result
 * for a finite argument. */
static double batch_err(const double *x, int n)
{
    double s[MAXB], c[MAXB], e = 0;
    dyn_sincos_n(x, s, c, n);
    for (int i = 0; i < n; i++) {
        if (!isfinite(s[i]) || !isfinite(c[i])) {
            print_error("x = %.17g: sin %g cos %g\n", x[i], s[i], c[i]);
            fail();
        }
        e = fmax(e, fmax(ulp_dist(s[i], sin(x[i])), ulp_dist(c[i], cos(x[i]))));
    }
    return e;
}

/* Log-uniform magnitudes 1e-300 .. 1e5, random signs, every batch length. */
static void test_random_arguments(void **state)
{
    (void)state;
    rng_seed(7);
    double worst = 0, x[MAXB];
    for (int t = 0; t < 400000; t++) {
        int n = 1 + t % MAXB;
        for (int i = 0; i < n; i++) {
            double mag = pow(10.0, rng_uniform(-300, log10(DYN_SINCOS_FAST_MAX) - 1e-9));
            x[i] = rng_uniform(0, 1) < 0.5 ? -mag : mag;
        }
        worst = fmax(worst, batch_err(x, n));
    }
    for (int t = 0; t < 400000; t++) { /* the joint-angle range, densely */
        for (int i = 0; i < 4; i++) x[i] = rng_uniform(-10, 10);
        worst = fmax(worst, batch_err(x, 4));
    }
    print_message("random arguments: max error %.0f ulp\n", worst);
    assert_true(worst <= 2);
}

/* Arguments within a few ulp of k pi/2 (the reduction's hardest cases), k up to 6e4. */
static void test_near_multiples_of_half_pi(void **state)
{
    (void)state;
    double worst = 0;
    for (int k = -63000; k <= 63000; k += 7) {
        double x0 = k * (M_PI / 2), x[MAXB];
        x[0] = x0;
        for (int d = 1; d <= 4; d++) {
            x[2 * d - 1] = nextafter(x0, INFINITY) + (d - 1) * DBL_EPSILON * fabs(x0);
            x[2 * d] = nextafter(x0, -INFINITY) - (d - 1) * DBL_EPSILON * fabs(x0);
        }
        worst = fmax(worst, batch_err(x, MAXB));
    }
    print_message("near k pi/2: max error %.0f ulp\n", worst);
    assert_true(worst <= 2);
}

/* |x| >= DYN_SINCOS_FAST_MAX: libm's results exactly, also mixed with fast lanes. */
static void test_large_arguments(void **state)
{
    (void)state;
    const double big[] = {DYN_SINCOS_FAST_MAX,
                          -DYN_SINCOS_FAST_MAX,
                          1.5e5,
                          -7.77e7,
                          1e15,
                          -3e22,
                          1e300,
                          DBL_MAX,
                          -DBL_MAX};
    const int nb = sizeof big / sizeof big[0];
    for (int i = 0; i < nb; i++) {
        double x[3] = {0.5, big[i], -1.25}, s[3], c[3];
        dyn_sincos_n(x, s, c, 3);
        assert_true(s[1] == sin(big[i]) && c[1] == cos(big[i]));
        assert_true(ulp_dist(s[0], sin(0.5)) <= 2 && ulp_dist(c[2], cos(-1.25)) <= 2);
    }
}

/* NaN and +-inf give NaN for both, without disturbing the other lanes; +-0 and subnormals
 * give sin(x) = x (sign kept) and cos(x) = 1. */
static void test_special_values(void **state)
{
    (void)state;
    double x[7] = {NAN, INFINITY, 0.3, -INFINITY, -0.0, 0.0, -4.9e-324}, s[7], c[7];
    dyn_sincos_n(x, s, c, 7);
    for (int i = 0; i < 7; i++) {
        if (i == 0 || i == 1 || i == 3) {
            assert_true(isnan(s[i]) && isnan(c[i]));
        } else if (i == 2) {
            assert_true(ulp_dist(s[i], sin(0.3)) <= 2 && ulp_dist(c[i], cos(0.3)) <= 2);
        } else {
            assert_true(s[i] == x[i] && signbit(s[i]) == signbit(x[i]));
            assert_true(c[i] == 1.0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_arguments),
        cmocka_unit_test(test_near_multiples_of_half_pi),
        cmocka_unit_test(test_large_arguments),
        cmocka_unit_test(test_special_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
