/* test_wrench.c — an independent check of the external-wrench sign convention of dyn_rnea
 * (dynamics/dynamics.h: w is the wrench the ENVIRONMENT applies to the tool, at the tool frame
 * origin, in tool-frame axes; tau = ID - J^T w).
 *
 * Physics: a payload of mass m whose COM sits at c (tool frame) is pulled by gravity with the
 * force m g (base frame). Held still (qd = qdd = 0), the joints must carry exactly what they
 * would carry for a bare arm on whose tool the environment exerts that same force at c:
 *   f = R_tool^T m g (tool frame),  moment about the tool origin n = c x f,
 *   dyn_rnea(with payload, w = NULL) == dyn_rnea(no payload, w = (f, n)).
 * The opposite sign (w = -(f, n)) must NOT match, so the check can tell the two apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/test_util.h"

/* The wrench (tool frame, about the tool origin) the weight of a point-like load of mass m [kg]
 * at c [m, tool frame] applies to the tool, given the tool pose (12 doubles [R | p]) and the
 * gravity g [m/s^2, base frame]: f = R^T m g, n = c x f. */
static void payload_weight_wrench(const double *tool, const double g[3], double m,
                                  const double c[3], double w[6])
{
    for (int k = 0; k < 3; k++) /* column k of R dotted with m g */
        w[k] = m * (tool[0 + k] * g[0] + tool[4 + k] * g[1] + tool[8 + k] * g[2]);
    w[3] = c[1] * w[2] - c[2] * w[1];
    w[4] = c[2] * w[0] - c[0] * w[2];
    w[5] = c[0] * w[1] - c[1] * w[0];
}

/* One random arm (random tool, mixed joint types and forms) in several random poses, with the
 * payload COM at the tool origin (com_at_origin) or at a random point. */
static void check_arm(int n, int com_at_origin)
{
    dyn_model_desc d;
    arm_random(&d, n, -1, 0.3, 1); /* random tool, armature, friction */
    memset(&d.payload, 0, sizeof d.payload);
    const double mass = rng_uniform(0.5, 5.0);
    double c[3] = {0, 0, 0};
    if (!com_at_origin)
        for (int k = 0; k < 3; k++) c[k] = rng_uniform(-0.2, 0.2);

    dyn_model *bare = dyn_model_create(&d, NULL, NULL);
    assert_non_null(bare);
    dyn_model_desc dp = d;
    dp.payload.mass = mass;
    memcpy(dp.payload.com, c, sizeof c);
    dp.payload.inertia[0] = dp.payload.inertia[3] = dp.payload.inertia[5] = 1e-3;
    dyn_model *loaded = dyn_model_create(&dp, NULL, NULL);
    assert_non_null(loaded);
    dyn_data *wb = dyn_data_create(bare), *wl = dyn_data_create(loaded);
    assert_non_null(wb);
    assert_non_null(wl);

    for (int s = 0; s < 5; s++) {
        double q[8], zero[8] = {0}, tool[12], w[6], wneg[6], t_loaded[8], t_wrench[8], t_wrong[8];
        for (int i = 0; i < n; i++) q[i] = rng_uniform(-3, 3);
        dyn_fk(bare, wb, q, NULL, tool);
        payload_weight_wrench(tool, d.gravity, mass, c, w);
        for (int k = 0; k < 6; k++) wneg[k] = -w[k];

        dyn_rnea(loaded, wl, q, zero, zero, NULL, DYN_ALL, t_loaded);
        dyn_rnea(bare, wb, q, zero, zero, w, DYN_ALL, t_wrench);
        dyn_rnea(bare, wb, q, zero, zero, wneg, DYN_ALL, t_wrong);
        assert_rel(t_wrench, t_loaded, n, 1e-9, "bare arm + payload weight as a tool wrench");
        /* where the payload's share of the torque (half the difference between the two
         * signs) is not negligible, the flipped sign must be visibly wrong */
        double e_wrong = rel_err(t_wrong, t_loaded, n, 1e-12);
        double payload_part = 0, scale = 1e-12;
        for (int i = 0; i < n; i++) {
            payload_part = fmax(payload_part, fabs(t_wrong[i] - t_wrench[i]) / 2);
            scale = fmax(scale, fabs(t_loaded[i]));
        }
        if (payload_part / scale > 1e-3) assert_true(e_wrong > 1e-4);
    }
    dyn_data_free(wb);
    dyn_data_free(wl);
    dyn_model_free(bare);
    dyn_model_free(loaded);
}

static void payload_at_tool_origin(void **state)
{
    (void)state;
    rng_seed(20261121);
    for (int n = 1; n <= 7; n++)
        for (int k = 0; k < 6; k++) check_arm(n, 1);
}

static void payload_off_origin(void **state)
{
    (void)state;
    rng_seed(777);
    for (int n = 1; n <= 7; n++)
        for (int k = 0; k < 6; k++) check_arm(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(payload_at_tool_origin),
                                       cmocka_unit_test(payload_off_origin)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
