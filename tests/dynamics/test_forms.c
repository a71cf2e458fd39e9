/* test_forms.c — one physical arm described as standard DH, modified DH and URDF gives the
 * same torques, mass matrix, accelerations and tool pose. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/test_util.h"

static void check_same(int n, unsigned long long seed)
{
    rng_seed(seed);
    dyn_model_desc d[3];
    arm_random(&d[0], n, DYN_DH_STANDARD, 0.35, 1);
    arm_convert(&d[0], DYN_DH_MODIFIED, &d[1]);
    arm_convert(&d[0], DYN_URDF, &d[2]);
    dyn_model *m[3];
    dyn_data *w[3];
    for (int k = 0; k < 3; k++) {
        m[k] = dyn_model_create(&d[k], NULL, NULL);
        assert_non_null(m[k]);
        w[k] = dyn_data_create(m[k]);
    }
    static double q[64], qd[64], qdd[64], tau[3][64], H[3][64 * 64], acc[3][64], tool[3][12];
    double wr[6];
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < n; i++) {
            q[i] = rng_uniform(-3, 3);
            qd[i] = rng_uniform(-2, 2);
            qdd[i] = rng_uniform(-4, 4);
        }
        for (int k = 0; k < 6; k++) wr[k] = rng_uniform(-5, 5);
        for (int k = 0; k < 3; k++) {
            dyn_rnea(m[k], w[k], q, qd, qdd, wr, DYN_ALL, tau[k]);
            dyn_mass_matrix(m[k], w[k], q, DYN_ALL, H[k]);
            assert_int_equal(dyn_forward_aba(m[k], w[k], q, qd, tau[0], wr, DYN_ALL, acc[k]), 0);
            dyn_fk(m[k], w[k], q, NULL, tool[k]);
        }
        for (int k = 1; k < 3; k++) {
            assert_rel(tau[k], tau[0], n, 1e-10, "tau, other form vs standard DH");
            assert_rel(H[k], H[0], n * n, 1e-10, "H, other form vs standard DH");
            assert_rel(acc[k], acc[0], n, 1e-8, "qdd, other form vs standard DH");
            assert_rel(tool[k], tool[0], 12, 1e-10, "tool pose, other form vs standard DH");
        }
    }
    for (int k = 0; k < 3; k++) {
        dyn_data_free(w[k]);
        dyn_model_free(m[k]);
    }
}

static void test_small_arms(void **s)
{
    (void)s;
    for (int n = 1; n <= 7; n++) check_same(n, 100 + (unsigned)n);
}

static void test_long_chain(void **s)
{
    (void)s;
    check_same(64, 164);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_small_arms),
                                       cmocka_unit_test(test_long_chain)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
