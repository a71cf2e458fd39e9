/* test_wrench.c — an independent check of the external-wrench sign convention of dyn_rnea
 * (dynamics/dynamics.h: w is the wrench the ENVIRONMENT applies to the tool, at the tool frame
 * origin, in tool-frame axes; tau = ID - J^T w).
 *
 * Physics: a payload of mass m whose COM sits at c (tool frame) is pulled by gravity with the
 * force m g (base frame). Held still (qd = qdd = 0), the joints must carry exactly what they
 * would carry for a bare arm on whose tool the environment exerts that same force at c:
 *   f = R_tool^T m g (tool frame),  moment about the tool origin n = c x f,
 *   dyn_rnea(with payload, w = NULL) == dyn_rnea(no payload, w = (f, n)).
 * The opposite sign (w = -(f, n)) must NOT match, so the check can tell the two apart.
 * And dyn_tool_wrench, the estimate of such a wrench from joint torques, gives it back. */
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

/* dyn_tool_wrench inverts the RNEA's wrench: for random arms of 6 and 7 joints in random poses
 * a random wrench (base frame, about the tool origin) is turned into the tool-frame wrench of
 * dyn_rnea, the torques it takes (rnea without it minus rnea with it, at rest: J^T F) are given
 * to dyn_tool_wrench (damping 1e-6), which must give F back to 1e-6 relative (poses whose J is
 * near-singular, smallest singular value below 1e-2, are skipped by the comparison). Arms of
 * 3 to 5 joints: the wrench found reproduces the torques (1e-9) and has at most F's norm (the
 * minimum-norm one). Non-finite torques and a negative damping are refused. */
static void tool_wrench_inverts_rnea(void **state)
{
    (void)state;
    rng_seed(4242);
    int compared = 0;
    for (int trial = 0; trial < 300; trial++) {
        const int n = 3 + trial % 5;
        dyn_model_desc d;
        arm_random(&d, n, -1, 0.3, 1);
        memset(&d.payload, 0, sizeof d.payload);
        dyn_model *m = dyn_model_create(&d, NULL, NULL);
        assert_non_null(m);
        dyn_data *dd = dyn_data_create(m);
        double q[8], zero[8] = {0}, T[12], F[6], wt[6], t0[8], t1[8], tau[8], Fe[6];
        for (int i = 0; i < n; i++) q[i] = rng_uniform(-3, 3);
        for (int k = 0; k < 6; k++) F[k] = rng_uniform(-20, 20);
        dyn_fk(m, dd, q, NULL, T);
        for (int k = 0; k < 3; k++) { /* R^T f, R^T n: the same wrench in tool axes */
            wt[k] = T[k] * F[0] + T[4 + k] * F[1] + T[8 + k] * F[2];
            wt[3 + k] = T[k] * F[3] + T[4 + k] * F[4] + T[8 + k] * F[5];
        }
        dyn_rnea(m, dd, q, zero, zero, NULL, DYN_ALL, t0);
        dyn_rnea(m, dd, q, zero, zero, wt, DYN_ALL, t1);
        for (int i = 0; i < n; i++) tau[i] = t0[i] - t1[i];
        assert_int_equal(dyn_tool_wrench(m, dd, q, tau, 1e-6, Fe), 0);
        if (n >= 6) {
            double J[6 * 8], G[36], smin = INFINITY;
            dyn_jacobian(m, dd, q, J);
            for (int r = 0; r < 6; r++) /* J J^T: its smallest eigenvalue is sigma_min^2 */
                for (int c = 0; c < 6; c++) {
                    double g = 0;
                    for (int i = 0; i < n; i++) g += J[r * n + i] * J[c * n + i];
                    G[r * 6 + c] = g;
                }
            double ev[6], V[36];
            dyn_sym_eigen(6, G, ev, V);
            for (int k = 0; k < 6; k++) smin = fmin(smin, ev[k]);
            if (!(sqrt(fmax(smin, 0)) > 1e-2)) goto next;
            assert_rel(Fe, F, 6, 1e-6, "the wrench back from J^T F");
            compared++;
        } else {
            double te[8], nf = 0, ne = 0, J[6 * 8];
            dyn_jacobian(m, dd, q, J);
            for (int i = 0; i < n; i++) {
                te[i] = 0;
                for (int r = 0; r < 6; r++) te[i] += J[r * n + i] * Fe[r];
            }
            assert_rel(te, tau, n, 1e-9, "J^T of the minimum-norm wrench");
            for (int k = 0; k < 6; k++) nf += F[k] * F[k], ne += Fe[k] * Fe[k];
            assert_true(ne <= nf * (1 + 1e-9));
        }
    next:
        dyn_data_free(dd);
        dyn_model_free(m);
    }
    print_message("dyn_tool_wrench: %d full-rank 6- and 7-joint cases compared\n", compared);
    assert_true(compared >= 80);
    /* bad input */
    dyn_model_desc d;
    arm_random(&d, 6, -1, 0.3, 1);
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    dyn_data *dd = dyn_data_create(m);
    double q[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, tau[6] = {1, 2, 3, 4, 5, NAN}, F[6] = {7};
    assert_int_equal(dyn_tool_wrench(m, dd, q, tau, 1e-3, F), -1);
    assert_true(F[0] == 7);
    tau[5] = 0;
    assert_int_equal(dyn_tool_wrench(m, dd, q, tau, -1, F), -1);
    assert_int_equal(dyn_tool_wrench(m, dd, q, tau, 1e-3, F), 0);
    dyn_data_free(dd);
    dyn_model_free(m);
}

/* dyn_task_inertia against the physics it names: the tool's acceleration under a unit force
 * along axis i at rest, without gravity, is column i of A = J H^-1 J^T, here from the O(n)
 * forward dynamics (ABA) of tau = J^T e_i; with 6 joints away from a singularity Lambda A = I,
 * else it says A is singular (1). */
static void task_inertia_is_khatibs(void **state)
{
    (void)state;
    rng_seed(777);
    int full = 0;
    for (int trial = 0; trial < 200; trial++) {
        const int n = 3 + trial % 4;
        dyn_model_desc d;
        arm_random(&d, n, -1, 0.3, 1);
        dyn_model *m = dyn_model_create(&d, NULL, NULL);
        assert_non_null(m);
        dyn_data *dd = dyn_data_create(m);
        double q[8], zero[8] = {0}, J[6 * 8], A[36], L[36], Af[36], qdd[8], tau[8], amax = 0;
        for (int i = 0; i < n; i++) q[i] = rng_uniform(-3, 3);
        const int rc = dyn_task_inertia(m, dd, q, J, A, L);
        assert_true(rc == 0 || rc == 1);
        for (int c = 0; c < 6; c++) {
            for (int i = 0; i < n; i++) tau[i] = J[c * n + i];
            assert_int_equal(dyn_forward_aba(m, dd, q, zero, tau, NULL, DYN_ARMATURE, qdd), 0);
            for (int r = 0; r < 6; r++) {
                double a = 0;
                for (int i = 0; i < n; i++) a += J[r * n + i] * qdd[i];
                Af[r * 6 + c] = a;
                amax = fmax(amax, fabs(a));
            }
        }
        for (int i = 0; i < 36; i++)
            if (!(fabs(A[i] - Af[i]) <= 1e-9 * amax))
                fail_msg("n %d: A[%d] %.12g, from the forward dynamics %.12g", n, i, A[i], Af[i]);
        if (n < 6) assert_int_equal(rc, 1);
        if (rc == 0) {
            for (int i = 0; i < 6; i++)
                for (int k = 0; k < 6; k++) {
                    double p = 0;
                    for (int j = 0; j < 6; j++) p += L[i * 6 + j] * A[j * 6 + k];
                    if (!(fabs(p - (i == k)) <= 1e-6))
                        fail_msg("(Lambda A)[%d][%d] = %.9g", i, k, p);
                }
            full++;
        }
        dyn_data_free(dd);
        dyn_model_free(m);
    }
    print_message("dyn_task_inertia: %d 6-joint cases with Lambda A = I\n", full);
    assert_true(full >= 20);
    double q[6] = {0, 0, 0, 0, 0, NAN}, J[36], A[36], L[36];
    dyn_model_desc d;
    arm_random(&d, 6, -1, 0.3, 1);
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    dyn_data *dd = dyn_data_create(m);
    assert_int_equal(dyn_task_inertia(m, dd, q, J, A, L), -1);
    dyn_data_free(dd);
    dyn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(payload_at_tool_origin), cmocka_unit_test(payload_off_origin),
        cmocka_unit_test(tool_wrench_inverts_rnea), cmocka_unit_test(task_inertia_is_khatibs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
