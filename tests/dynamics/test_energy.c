/* test_energy.c — a passive frictionless arm integrated with RK4 (seed 000 §7) conserves
 * energy over 10 s, and dE/dt == tau . qd under random torques. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/test_util.h"

#define N 6

static void deriv(dyn_model *m, dyn_data *w, const double *y, const double *tau, double *dy)
{
    memcpy(dy, y + N, N * sizeof(double));
    assert_int_equal(dyn_forward_aba(m, w, y, y + N, tau, NULL, DYN_GRAVITY | DYN_ARMATURE, dy + N),
                     0);
}

static void rk4(dyn_model *m, dyn_data *w, double *y, const double *tau, double h)
{
    double k1[2 * N], k2[2 * N], k3[2 * N], k4[2 * N], t[2 * N];
    deriv(m, w, y, tau, k1);
    for (int i = 0; i < 2 * N; i++) t[i] = y[i] + 0.5 * h * k1[i];
    deriv(m, w, t, tau, k2);
    for (int i = 0; i < 2 * N; i++) t[i] = y[i] + 0.5 * h * k2[i];
    deriv(m, w, t, tau, k3);
    for (int i = 0; i < 2 * N; i++) t[i] = y[i] + h * k3[i];
    deriv(m, w, t, tau, k4);
    for (int i = 0; i < 2 * N; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}

static void test_passive_conserves(void **state)
{
    (void)state;
    rng_seed(31);
    dyn_model_desc d;
    arm_random(&d, N, -1, 0.3, 1);
    for (int i = 0; i < N; i++)
        d.joint[i].viscous = d.joint[i].coulomb_pos = d.joint[i].coulomb_neg = 0;
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    dyn_data *w = dyn_data_create(m);
    double y[2 * N], zero[N] = {0};
    for (int i = 0; i < N; i++) y[i] = rng_uniform(-1, 1), y[N + i] = rng_uniform(-1, 1);
    double ke, pe, E0 = dyn_energy(m, w, y, y + N, &ke, &pe), scale = fabs(ke) + fabs(pe);
    double worst = 0;
    for (int k = 0; k < 10000; k++) { /* 10 s at 1 ms */
        rk4(m, w, y, zero, 1e-3);
        worst = fmax(worst, fabs(dyn_energy(m, w, y, y + N, NULL, NULL) - E0));
    }
    if (!(worst < 1e-6 * scale)) {
        print_error("energy drift %g J over 10 s (scale %g J)\n", worst, scale);
        fail();
    }
    dyn_data_free(w);
    dyn_model_free(m);
}

/* Under torque tau (with friction), dE/dt = (tau - friction) . qd; checked by central
 * differences of E along the RK4 trajectory. */
static void test_power_balance(void **state)
{
    (void)state;
    rng_seed(32);
    dyn_model_desc d;
    arm_random(&d, N, -1, 0.3, 1);
    d.friction_smoothing = 0.05;
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    dyn_data *w = dyn_data_create(m);
    for (int trial = 0; trial < 10; trial++) {
        double y[2 * N], tau[N], fr[N], ya[2 * N], yb[2 * N], dy[2 * N], h = 1e-5;
        for (int i = 0; i < N; i++) {
            y[i] = rng_uniform(-2, 2), y[N + i] = rng_uniform(-1, 1);
            tau[i] = rng_uniform(-20, 20);
        }
        assert_int_equal(dyn_forward_chol(m, w, y, y + N, tau, NULL, DYN_ALL, dy + N), 0);
        memcpy(dy, y + N, sizeof(double) * N);
        for (int i = 0; i < 2 * N; i++) ya[i] = y[i] + h * dy[i], yb[i] = y[i] - h * dy[i];
        double Edot =
            (dyn_energy(m, w, ya, ya + N, NULL, NULL) - dyn_energy(m, w, yb, yb + N, NULL, NULL)) /
            (2 * h);
        dyn_friction(m, y + N, fr);
        double P = 0, Pscale = 0;
        for (int i = 0; i < N; i++)
            P += (tau[i] - fr[i]) * y[N + i], Pscale += fabs(tau[i] * y[N + i]);
        if (!(fabs(Edot - P) < 1e-6 * Pscale + 1e-9)) {
            print_error("dE/dt %g vs tau.qd %g\n", Edot, P);
            fail();
        }
    }
    dyn_data_free(w);
    dyn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_passive_conserves),
                                       cmocka_unit_test(test_power_balance)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
