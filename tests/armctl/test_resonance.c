/*
 * test_resonance.c — armctl resonance's analysis core (tools/armctl/resonance.h) on synthetic
 * decaying oscillations A e^{-zeta wn t} cos(wd t + phi) + offset + Gaussian noise (2 % of A)
 * over a grid of frequencies and damping ratios: the natural frequency within 1 %, the damping
 * ratio within 20 %; and the refusals (no peak in the band, no decay, too short, bad input).
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

#include "tools/armctl/resonance.h"

/* A deterministic standard normal (xorshift64* + Box-Muller). */
static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return ((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double gauss(void)
{
    double u = uniform(), v = uniform();
    return sqrt(-2 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

/* n samples at fs of a mode (f natural [Hz], zeta) of amplitude A, phase phi, offset c, noise
 * sd noise. */
static double *mode_signal(long n, double fs, double f, double zeta, double A, double phi, double c,
                           double noise)
{
    double *x = malloc((size_t)n * sizeof *x), wn = 2 * M_PI * f, wd = wn * sqrt(1 - zeta * zeta);
    assert_non_null(x);
    for (long k = 0; k < n; k++) {
        double t = k / fs;
        x[k] = A * exp(-zeta * wn * t) * cos(wd * t + phi) + c + noise * gauss();
    }
    return x;
}

/* Frequency within 1 %, damping within 20 %, over 2.5 ... 45 Hz and zeta 0.01 ... 0.15 at
 * 1 kHz, 3 s records, 2 % noise, a phase and an offset. Prints the worst errors. */
static void test_synthetic_modes(void **state)
{
    (void)state;
    const double fs = 1000, freqs[] = {2.5, 7, 11.3, 18, 45}, zetas[] = {0.01, 0.03, 0.08, 0.15};
    double worst_f = 0, worst_z = 0;
    for (int a = 0; a < 5; a++) {
        for (int b = 0; b < 4; b++) {
            double f = freqs[a], z = zetas[b];
            long n = 3000;
            double *x = mode_signal(n, fs, f, z, 0.01, 0.3 * (a + b), 0.002, 0.0002);
            resonance_mode m;
            char why[200] = "";
            int rc = resonance_estimate(x, n, fs, 1, 100, &m, why, sizeof why);
            if (rc) fprintf(stderr, "f %g zeta %g: %s\n", f, z, why);
            assert_int_equal(rc, 0);
            double ef = fabs(m.freq - f) / f, ez = fabs(m.damping - z) / z;
            if (ef > 0.01 || ez > 0.2)
                fprintf(stderr, "f %g zeta %g: got %g Hz, zeta %g\n", f, z, m.freq, m.damping);
            assert_true(ef < 0.01);
            assert_true(ez < 0.2);
            assert_true(fabs(m.freq_damped - f * sqrt(1 - z * z)) / f < 0.01);
            worst_f = fmax(worst_f, ef);
            worst_z = fmax(worst_z, ez);
            free(x);
        }
    }
    printf("resonance: worst relative error frequency %.2e, damping %.3f\n", worst_f, worst_z);
}

/* Two modes: the stronger one is found. */
static void test_dominant_of_two(void **state)
{
    (void)state;
    long n = 4000;
    double *x = mode_signal(n, 1000, 6, 0.02, 0.01, 0, 0, 0.0001);
    double *y = mode_signal(n, 1000, 23, 0.02, 0.003, 1, 0, 0);
    for (long k = 0; k < n; k++) x[k] += y[k];
    resonance_mode m;
    char why[200];
    assert_int_equal(resonance_estimate(x, n, 1000, 1, 100, &m, why, sizeof why), 0);
    assert_true(fabs(m.freq - 6) / 6 < 0.01);
    assert_true(fabs(m.damping - 0.02) / 0.02 < 0.2);
    /* searched above the first, the second one */
    assert_int_equal(resonance_estimate(x, n, 1000, 12, 100, &m, why, sizeof why), 0);
    assert_true(fabs(m.freq - 23) / 23 < 0.01);
    free(x), free(y);
}

/* A stronger oscillation that does not decay (a limit cycle, as a joint dithering between two
 * encoder counts) is passed over for the decaying mode under it; with the mode outside the band
 * the refusal names the limit cycle. */
static void test_limit_cycle_skipped(void **state)
{
    (void)state;
    long n = 3000;
    double *x = mode_signal(n, 1000, 9, 0.05, 0.0015, 0, 0, 0.00005);
    double *y = mode_signal(n, 1000, 43, 0, 0.0015, 0.3, 0, 0);
    for (long k = 0; k < n; k++) x[k] += y[k];
    resonance_mode m;
    char why[300];
    assert_int_equal(resonance_estimate(x, n, 1000, 1, 100, &m, why, sizeof why), 0);
    assert_true(fabs(m.freq - 9) / 9 < 0.01);
    assert_true(fabs(m.damping - 0.05) / 0.05 < 0.2);
    assert_int_equal(resonance_estimate(x, n, 1000, 20, 100, &m, why, sizeof why), -1);
    assert_non_null(strstr(why, "the oscillation at 43 Hz does not decay"));
    free(x), free(y);
}

/* A small 10.4 Hz mode (zeta 0.033) on the servo's settling after the step, a critically damped
 * 1 Hz decay 10 x its amplitude whose spectrum, falling from 0 Hz, is larger at the band's low
 * edge than the mode's peak (what `armctl resonance` sees on flexarm2): the mode is found. */
static void test_mode_on_settling(void **state)
{
    (void)state;
    long n = 1500;
    double fs = 500, ws = 2 * M_PI * 1.0;
    double *x = mode_signal(n, fs, 10.4, 0.033, 0.0003, 0.4, 0, 0.000003);
    for (long k = 0; k < n; k++) {
        double t = k / fs;
        x[k] += 0.003 * (1 + ws * t) * exp(-ws * t);
    }
    resonance_mode m;
    char why[300];
    assert_int_equal(resonance_estimate(x, n, fs, 1, 125, &m, why, sizeof why), 0);
    assert_true(fabs(m.freq - 10.4) / 10.4 < 0.01);
    assert_true(fabs(m.damping - 0.033) / 0.033 < 0.2);
    free(x);
}

/* Refusals, each with its sentence. */
static void test_refusals(void **state)
{
    (void)state;
    resonance_mode m;
    char why[200];
    long n = 3000;
    double *x = mode_signal(n, 1000, 6, 0.02, 0.01, 0, 0, 0);
    assert_int_equal(resonance_estimate(x, n, 1000, 10, 100, &m, why, sizeof why), -1);
    assert_non_null(strstr(why, "no spectral peak inside [10, 100] Hz"));
    assert_int_equal(resonance_estimate(x, n, 1000, 5, 600, &m, why, sizeof why), -1);
    assert_non_null(strstr(why, "is not inside (0, 500] Hz"));
    assert_int_equal(resonance_estimate(x, 20, 1000, 1, 100, &m, why, sizeof why), -1);
    assert_non_null(strstr(why, "too few"));
    x[7] = NAN;
    assert_int_equal(resonance_estimate(x, n, 1000, 1, 100, &m, why, sizeof why), -1);
    assert_non_null(strstr(why, "sample 7 is not a finite number"));
    free(x);
    /* growing, not decaying */
    x = mode_signal(n, 1000, 6, 0, 0.01, 0, 0, 0);
    for (long k = 0; k < n; k++) x[k] *= exp(0.3 * k / 1000.0);
    assert_int_equal(resonance_estimate(x, n, 1000, 1, 100, &m, why, sizeof why), -1);
    assert_non_null(strstr(why, "does not decay"));
    free(x);
    /* gone within a period and a half */
    x = mode_signal(n, 1000, 3, 0.6, 0.01, 0, 0, 0);
    assert_int_equal(resonance_estimate(x, n, 1000, 1, 100, &m, why, sizeof why), -1);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_modes),
        cmocka_unit_test(test_dominant_of_two),
        cmocka_unit_test(test_limit_cycle_skipped),
        cmocka_unit_test(test_mode_on_settling),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
