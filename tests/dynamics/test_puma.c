/* test_puma.c — the PUMA 560 (published parameters, see puma560_desc.c): gravity torque at the
 * zero pose equals a hand calculation; the model loads with triangle-inequality warnings only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/lagrange.h"
#include "tests/dynamics/puma560_desc.h"
#include "tests/dynamics/test_util.h"

static int warnings, errors;

static void count(void *ctx, int joint, const char *field, int is_error, const char *msg)
{
    (void)ctx, (void)joint, (void)field, (void)msg;
    if (is_error)
        errors++;
    else
        warnings++;
}

/* Zero pose by hand (all q = 0, standard DH): z0 up; frames 1, 2 have x = x0, y = z0, z = -y0;
 * frame 3 is aligned with the base at (a2 + a3, -d3, 0); frames 4-6 sit at
 * (a2 + a3, -d3, d4) with y4 = z0, z5 = z6 = z0. Base x of each COM:
 *   link 2: a2 + (-0.3638)             link 3: a2 + a3 + (-0.0203) = a2
 *   links 4, 5, 6: a2 + a3
 * Joints 2, 3 (and 5) have horizontal axes along -y0, so the torque holding link k is
 * g m_k (x_k - x_axis); joints 1, 4, 6 are vertical: no gravity torque. */
static void test_gravity_zero_pose(void **state)
{
    (void)state;
    dyn_model_desc d;
    puma560_desc(&d);
    warnings = errors = 0;
    dyn_model *m = dyn_model_create(&d, count, NULL);
    assert_non_null(m);
    assert_int_equal(errors, 0);
    assert_int_equal(warnings, 2); /* links 1 and 3 violate the triangle inequality */
    dyn_data *w = dyn_data_create(m);
    const double g = 9.81, a2 = 0.4318, a3 = 0.0203;
    const double m2 = 17.4, m3 = 4.8, m4 = 0.82, m5 = 0.34, m6 = 0.09;
    double x2 = a2 - 0.3638, x3 = a2 + a3 - 0.0203, xw = a2 + a3;
    double ref[6] = {0,
                     g * (m2 * x2 + m3 * x3 + (m4 + m5 + m6) * xw),
                     g * (m3 * (x3 - a2) + (m4 + m5 + m6) * (xw - a2)),
                     0,
                     g * (m5 * (xw - xw) + m6 * (xw - xw)),
                     0};
    double q[6] = {0}, tau[6];
    dyn_gravity(m, w, q, tau);
    for (int i = 0; i < 6; i++) assert_true(fabs(tau[i] - ref[i]) < 1e-9);
    assert_true(fabs(tau[1] - 37.4837) < 1e-4); /* the toolboxes' published gravload(qz) */
    assert_true(fabs(tau[2] - 0.2489) < 1e-4);
    dyn_data_free(w);
    dyn_model_free(m);
}

/* The PUMA at the named poses, all effects, against the Lagrange oracle. */
static void test_named_poses_vs_lagrange(void **state)
{
    (void)state;
    dyn_model_desc d;
    puma560_desc(&d);
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    dyn_data *w = dyn_data_create(m);
    const double poses[3][6] = {
        {0, 0, 0, 0, 0, 0}, {0, M_PI / 2, -M_PI / 2, 0, 0, 0}, {0, M_PI / 4, M_PI, 0, M_PI / 4, 0}};
    double qd[6] = {0.5, -0.4, 0.3, 1.0, -0.8, 0.6}, qdd[6] = {1, -2, 0.5, 3, -1, 2};
    for (int p = 0; p < 3; p++) {
        double t1[6], t2[6];
        dyn_rnea(m, w, poses[p], qd, qdd, NULL, DYN_ALL, t1);
        lagrange_id(&d, poses[p], qd, qdd, NULL, DYN_ALL, t2, NULL);
        assert_rel(t1, t2, 6, 1e-9, "PUMA rnea vs Lagrange");
    }
    dyn_data_free(w);
    dyn_model_free(m);
}

/* Payload changes at run time equal a model built with that payload. */
static void test_payload_swap(void **state)
{
    (void)state;
    dyn_model_desc d;
    puma560_desc(&d);
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    dyn_data *w = dyn_data_create(m);
    dyn_payload p = {2.5, {0.01, -0.02, 0.1}, {0.01, 0, 0, 0.012, 0, 0.008}};
    d.payload = p;
    d.tool_xyz[2] = 0.05;
    dyn_model *m2 = dyn_model_create(&d, NULL, NULL);
    dyn_data *w2 = dyn_data_create(m2);
    d.payload.mass = 0;
    dyn_model *m0 = dyn_model_create(&d, NULL, NULL); /* same tool, no payload */
    dyn_set_payload(m0, &p);
    double q[6] = {0.3, 0.7, -0.2, 0.4, 1.1, -0.6}, qd[6] = {1, 1, 1, 1, 1, 1},
           qdd[6] = {1, 0, -1, 2, 0, 1};
    double t1[6], t2[6], t3[6];
    dyn_rnea(m0, w, q, qd, qdd, NULL, DYN_ALL, t1);
    dyn_rnea(m2, w2, q, qd, qdd, NULL, DYN_ALL, t2);
    assert_rel(t1, t2, 6, 1e-13, "set_payload vs built-in payload");
    dyn_payload none = {0};
    dyn_set_payload(m0, &none);
    dyn_rnea(m0, w, q, qd, qdd, NULL, DYN_ALL, t3);
    assert_true(rel_err(t3, t2, 6, 1e-12) > 1e-3); /* the payload matters */
    dyn_model_free(m0);
    dyn_data_free(w2);
    dyn_model_free(m2);
    dyn_data_free(w);
    dyn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gravity_zero_pose),
                                       cmocka_unit_test(test_named_poses_vs_lagrange),
                                       cmocka_unit_test(test_payload_swap)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
