/*
 * test_signal.c — armctl identify's signal preparation (tools/armctl/ident_signal.h): where a
 * recording's stretches of evenly spaced samples end (telemetry stamps with a late tick's
 * skipped periods, a dropped sample, print rounding, a non-finite stamp), the zero-phase
 * low-pass (no lag in the pass band, attenuation above the cutoff) and the central-difference
 * derivative, per stretch and, to show what the stretches are for, across a gap.
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

#include "tools/armctl/ident_signal.h"

#define FS  1000.0 /* the loop rate of the recordings [Hz] */
#define LEN 3000

/* Telemetry stamps [s] of LEN ticks at FS from mono 38909.343984 s (a long-running host's
 * CLOCK_MONOTONIC, printed to the microsecond): a late tick at index 1000 that skipped 2
 * periods (stamp 3 periods after the one before), a dropped sample at 2000 (2 periods). */
static void stamps(double *t)
{
    long period = 0;
    for (long i = 0; i < LEN; i++) {
        period += i == 0 ? 0 : i == 1000 ? 3 : i == 2000 ? 2 : 1;
        t[i] = round((38909.343984 + period / FS) * 1e6) / 1e6;
    }
}

/* The stretches end at the late tick, at the dropped sample and at the end, and nowhere else. */
static void test_stretch_ends(void **state)
{
    (void)state;
    double t[LEN];
    stamps(t);
    assert_int_equal(ident_stretch_end(t, LEN, FS, 0), 1000);
    assert_int_equal(ident_stretch_end(t, LEN, FS, 1000), 2000);
    assert_int_equal(ident_stretch_end(t, LEN, FS, 2000), LEN);
    assert_int_equal(ident_stretch_end(t, LEN, FS, 1500), 2000);
    assert_int_equal(ident_stretch_end(t, LEN, FS, LEN - 1), LEN);
    /* a repeated stamp, a step back and a non-finite stamp end a stretch too */
    double u[6] = {0, 0.001, 0.002, 0.002, 0.004, 0.005};
    assert_int_equal(ident_stretch_end(u, 6, FS, 0), 3);
    u[3] = 0.001;
    assert_int_equal(ident_stretch_end(u, 6, FS, 0), 3);
    u[3] = NAN;
    assert_int_equal(ident_stretch_end(u, 6, FS, 0), 3);
    u[3] = 0.003;
    assert_int_equal(ident_stretch_end(u, 6, FS, 0), 6);
    /* at another rate: 100 Hz samples 10 ms apart */
    double v[4] = {5.00, 5.01, 5.02, 5.04};
    assert_int_equal(ident_stretch_end(v, 4, 100, 0), 3);
}

/* A 1 Hz sine through the 10 Hz zero-phase low-pass keeps its amplitude and phase (two passes
 * of the second-order Butterworth: magnitude 1 / (1 + (f / fc)^4) = 1 - 1e-4) away from the
 * ends; a 60 Hz one is cut to below 1 % (1 / (1 + 6^4) = 8e-4). */
static void test_lowpass(void **state)
{
    (void)state;
    double *x = malloc(sizeof(double) * LEN), *y = malloc(sizeof(double) * LEN);
    assert_non_null(x);
    assert_non_null(y);
    for (long i = 0; i < LEN; i++) {
        x[i] = sin(2 * M_PI * 1 * i / FS + 0.3);
        y[i] = sin(2 * M_PI * 60 * i / FS);
    }
    ident_lowpass(x, LEN, 1, 10, FS);
    ident_lowpass(y, LEN, 1, 10, FS);
    double worst = 0, left = 0;
    for (long i = 300; i < LEN - 300; i++) {
        worst = fmax(worst, fabs(x[i] - sin(2 * M_PI * 1 * i / FS + 0.3)));
        left = fmax(left, fabs(y[i]));
    }
    printf("low-pass at 10 Hz: 1 Hz sine off by %.2g, 60 Hz sine left at %.2g\n", worst, left);
    assert_true(worst < 1e-3);
    assert_true(left < 0.01);
    free(x);
    free(y);
}

/* The central difference of sin(2 pi t) is 2 pi cos(2 pi t) to (2 pi / FS)^2 / 6 relative; with
 * a stride (the joints of a row-per-sample recording) too. */
static void test_derivative(void **state)
{
    (void)state;
    enum { N = 3 };
    double *x = malloc(sizeof(double) * LEN * N), *d = malloc(sizeof(double) * LEN * N);
    assert_non_null(x);
    assert_non_null(d);
    for (long i = 0; i < LEN; i++)
        for (int j = 0; j < N; j++) x[i * N + j] = (j + 1) * sin(2 * M_PI * i / FS);
    for (int j = 0; j < N; j++) ident_derivative(x + j, LEN, N, FS, d + j);
    for (long i = 1; i < LEN - 1; i++)
        for (int j = 0; j < N; j++)
            assert_true(fabs(d[i * N + j] - (j + 1) * 2 * M_PI * cos(2 * M_PI * i / FS)) <
                        (j + 1) * 1e-4);
    free(x);
    free(d);
}

/* What the stretches are for: a velocity ramp sampled at the stamps above (acceleration 2 rad/s^2,
 * its value read at each stamp's true time). Differentiated per stretch, the acceleration is 2
 * everywhere (ends included: a ramp's one-sided difference is exact); differentiated as one run
 * of ticks, the late tick reads as a 3 x acceleration over two samples. */
static void test_derivative_per_stretch(void **state)
{
    (void)state;
    double t[LEN], v[LEN], a[LEN];
    stamps(t);
    for (long i = 0; i < LEN; i++) v[i] = 2 * (t[i] - t[0]);
    long stretches = 0;
    for (long s = 0; s < LEN; stretches++) {
        long e = ident_stretch_end(t, LEN, FS, s);
        ident_derivative(v + s, e - s, 1, FS, a + s);
        s = e;
    }
    assert_int_equal(stretches, 3);
    for (long i = 0; i < LEN; i++) assert_true(fabs(a[i] - 2) < 0.01);
    ident_derivative(v, LEN, 1, FS, a);
    assert_true(fabs(a[1000] - 2) > 1);
    assert_true(fabs(a[999] - 2) > 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stretch_ends),
        cmocka_unit_test(test_lowpass),
        cmocka_unit_test(test_derivative),
        cmocka_unit_test(test_derivative_per_stretch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
