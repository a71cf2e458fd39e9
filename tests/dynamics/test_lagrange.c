/* test_lagrange.c — the recursion equals the Lagrange oracle (seed 000 §2 vs §3) for random
 * 2-7 DOF arms: every description form, revolute and prismatic mixed, gravity, armature,
 * friction, payload, tool and external wrench; relative error < 1e-9. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/lagrange.h"
#include "tests/dynamics/test_util.h"

static void random_state(int n, double *q, double *qd, double *qdd)
{
    for (int i = 0; i < n; i++) {
        q[i] = rng_uniform(-3, 3);
        qd[i] = rng_uniform(-2, 2);
        qdd[i] = rng_uniform(-4, 4);
    }
}

/* One random arm per (n, form); several states each; all flags and a wrench. */
static void check_forms(int form, unsigned long long seed)
{
    rng_seed(seed);
    for (int n = 2; n <= 7; n++) {
        for (int arm = 0; arm < 3; arm++) {
            dyn_model_desc d;
            arm_random(&d, n, form, 0.35, 1);
            dyn_model *m = dyn_model_create(&d, NULL, NULL);
            assert_non_null(m);
            dyn_data *w = dyn_data_create(m);
            for (int s = 0; s < 3; s++) {
                double q[7], qd[7], qdd[7], wr[6], t1[7], t2[7], H1[49], H2[49];
                random_state(n, q, qd, qdd);
                for (int k = 0; k < 6; k++) wr[k] = rng_uniform(-10, 10);
                dyn_rnea(m, w, q, qd, qdd, wr, DYN_ALL, t1);
                lagrange_id(&d, q, qd, qdd, wr, DYN_ALL, t2, H2);
                assert_rel(t1, t2, n, 1e-9, "rnea (all effects) vs Lagrange");
                dyn_rnea(m, w, q, qd, qdd, NULL, 0, t1);
                lagrange_id(&d, q, qd, qdd, NULL, 0, t2, NULL);
                assert_rel(t1, t2, n, 1e-9, "rnea (no gravity) vs Lagrange");
                dyn_mass_matrix(m, w, q, 0, H1);
                assert_rel(H1, H2, n * n, 1e-9, "CRBA H vs Lagrange M");
            }
            dyn_data_free(w);
            dyn_model_free(m);
        }
    }
}

static void test_standard_dh(void **s)
{
    (void)s, check_forms(DYN_DH_STANDARD, 11);
}
static void test_modified_dh(void **s)
{
    (void)s, check_forms(DYN_DH_MODIFIED, 12);
}
static void test_urdf(void **s)
{
    (void)s, check_forms(DYN_URDF, 13);
}
static void test_mixed_forms(void **s)
{
    (void)s, check_forms(-1, 14);
}

/* The wrench term alone: dyn_wrench_torque == the oracle's J^T w. */
static void test_wrench_term(void **state)
{
    (void)state;
    rng_seed(15);
    for (int n = 2; n <= 7; n++) {
        dyn_model_desc d;
        arm_random(&d, n, -1, 0.35, 1);
        dyn_model *m = dyn_model_create(&d, NULL, NULL);
        dyn_data *w = dyn_data_create(m);
        double q[7], zero[7] = {0}, wr[6], t1[7], t2[7];
        for (int i = 0; i < n; i++) q[i] = rng_uniform(-3, 3);
        for (int k = 0; k < 6; k++) wr[k] = rng_uniform(-10, 10);
        dyn_wrench_torque(m, w, q, wr, t1);
        lagrange_id(&d, q, zero, zero, wr, 0, t2, NULL);
        for (int i = 0; i < n; i++) t2[i] = -t2[i];
        assert_rel(t1, t2, n, 1e-9, "J^T w vs Lagrange");
        dyn_data_free(w);
        dyn_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standard_dh), cmocka_unit_test(test_modified_dh),
        cmocka_unit_test(test_urdf),        cmocka_unit_test(test_mixed_forms),
        cmocka_unit_test(test_wrench_term),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
