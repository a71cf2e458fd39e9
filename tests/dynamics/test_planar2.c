/* test_planar2.c — seed 003's 2-DOF planar arm (point masses at the link ends): the closed-form
 * M, V, G of the seed equal the recursion at many random states. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/test_util.h"

static void test_closed_form(void **state)
{
    (void)state;
    rng_seed(3);
    for (int trial = 0; trial < 20; trial++) {
        double m1 = rng_uniform(0.5, 5), m2 = rng_uniform(0.5, 5);
        double l1 = rng_uniform(0.2, 1), l2 = rng_uniform(0.2, 1), g = 9.81;
        dyn_model_desc d;
        memset(&d, 0, sizeof d);
        d.n = 2;
        d.joint[0].a = l1, d.joint[0].mass = m1; /* distal frame at the point mass */
        d.joint[1].a = l2, d.joint[1].mass = m2;
        d.gravity[1] = -g; /* seed 003: base accelerates with G y0 */
        dyn_model *m = dyn_model_create(&d, NULL, NULL);
        assert_non_null(m);
        dyn_data *w = dyn_data_create(m);
        for (int s = 0; s < 50; s++) {
            double q[2] = {rng_uniform(-3, 3), rng_uniform(-3, 3)};
            double qd[2] = {rng_uniform(-3, 3), rng_uniform(-3, 3)};
            double qdd[2] = {rng_uniform(-5, 5), rng_uniform(-5, 5)};
            double c1 = cos(q[0]), c2 = cos(q[1]), s2 = sin(q[1]), c12 = cos(q[0] + q[1]);
            double M[4] = {m2 * l2 * l2 + 2 * m2 * l1 * l2 * c2 + (m1 + m2) * l1 * l1,
                           m2 * l2 * l2 + m2 * l1 * l2 * c2, m2 * l2 * l2 + m2 * l1 * l2 * c2,
                           m2 * l2 * l2};
            double V[2] = {-m2 * l1 * l2 * s2 * qd[1] * qd[1] -
                               2 * m2 * l1 * l2 * s2 * qd[0] * qd[1],
                           m2 * l1 * l2 * s2 * qd[0] * qd[0]};
            double G[2] = {m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1, m2 * l2 * g * c12};
            double tau_ref[2], tau[2], H[4], Cq[2], Gq[2];
            for (int i = 0; i < 2; i++)
                tau_ref[i] = M[2 * i] * qdd[0] + M[2 * i + 1] * qdd[1] + V[i] + G[i];
            dyn_rnea(m, w, q, qd, qdd, NULL, DYN_ALL, tau);
            assert_rel(tau, tau_ref, 2, 1e-12, "tau vs seed 003 closed form");
            dyn_mass_matrix(m, w, q, DYN_ALL, H);
            assert_rel(H, M, 4, 1e-12, "H vs M(theta)");
            dyn_coriolis(m, w, q, qd, Cq);
            assert_rel(Cq, V, 2, 1e-12, "C qd vs V");
            dyn_gravity(m, w, q, Gq);
            assert_rel(Gq, G, 2, 1e-12, "G(q)");
        }
        dyn_data_free(w);
        dyn_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_closed_form)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
