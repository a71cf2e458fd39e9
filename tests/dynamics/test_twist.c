/* test_twist.c — the specialised code paths for the constant twist between successive joint
 * axes (dynamics/dyn_internal.h: alpha = 0, +pi/2, -pi/2, pi use sign permutations, any other
 * alpha the general Rx(alpha)) against the Lagrange oracle. Every joint position sees every
 * twist; arms are described as standard DH, modified DH and URDF with randomly turned joint
 * frames (so the load-time z-x-z split and the re-defined moving frames are exercised too);
 * revolute and prismatic mixed. Inverse dynamics, gravity, H, both forward solvers and the tool
 * pose must agree with the oracle to 1e-9 (relative). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/lagrange.h"
#include "tests/dynamics/test_util.h"

enum { NTWIST = 5 };

/* The twists with a specialised path, and one general value. */
static const double twist[NTWIST] = {0.0, M_PI / 2, -M_PI / 2, M_PI, 0.7};

/* One arm of n joints whose standard-DH alphas cycle through the twists from index first,
 * re-described in the given form. */
static void twisted_arm(int n, int first, int form, dyn_model_desc *out)
{
    dyn_model_desc std;
    arm_random(&std, n, DYN_DH_STANDARD, 0.35, 1);
    for (int i = 0; i < n; i++) std.joint[i].alpha = twist[(first + i) % NTWIST];
    if (form == DYN_DH_STANDARD)
        *out = std;
    else
        arm_convert(&std, form, out);
}

static void check_arm(const dyn_model_desc *d)
{
    const int n = d->n;
    dyn_model *m = dyn_model_create(d, NULL, NULL);
    assert_non_null(m);
    dyn_data *w = dyn_data_create(m);
    assert_non_null(w);
    for (int s = 0; s < 3; s++) {
        double q[8], qd[8], qdd[8], zero[8] = {0}, wr[6], t1[8], t2[8], x[8];
        double H1[64], H2[64], tool[12], T[16];
        for (int i = 0; i < n; i++) {
            q[i] = rng_uniform(-3, 3);
            qd[i] = rng_uniform(-2, 2);
            qdd[i] = rng_uniform(-4, 4);
        }
        for (int k = 0; k < 6; k++) wr[k] = rng_uniform(-10, 10);

        dyn_rnea(m, w, q, qd, qdd, wr, DYN_ALL, t1);
        lagrange_id(d, q, qd, qdd, wr, DYN_ALL, t2, H2);
        assert_rel(t1, t2, n, 1e-9, "rnea vs Lagrange (twist paths)");

        assert_int_equal(dyn_forward_aba(m, w, q, qd, t2, wr, DYN_ALL, x), 0);
        assert_rel(x, qdd, n, 1e-9, "O(n) forward dynamics of the Lagrange torque (twist paths)");
        assert_int_equal(dyn_forward_chol(m, w, q, qd, t2, wr, DYN_ALL, x), 0);
        assert_rel(x, qdd, n, 1e-9, "Cholesky forward dynamics of the Lagrange torque");

        dyn_mass_matrix(m, w, q, 0, H1);
        assert_rel(H1, H2, n * n, 1e-9, "CRBA H vs Lagrange M (twist paths)");

        dyn_gravity(m, w, q, t1);
        lagrange_id(d, q, zero, zero, NULL, DYN_GRAVITY, t2, NULL);
        assert_rel(t1, t2, n, 1e-9, "gravity vs Lagrange (twist paths)");

        dyn_fk(m, w, q, NULL, tool);
        lagrange_tool_pose(d, q, T);
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 4; k++) assert_true(fabs(tool[4 * r + k] - T[4 * r + k]) < 1e-9);
    }
    dyn_data_free(w);
    dyn_model_free(m);
}

static void check_form(int form, unsigned long long seed)
{
    rng_seed(seed);
    for (int n = 2; n <= 7; n++)
        for (int first = 0; first < NTWIST; first++) {
            dyn_model_desc d;
            twisted_arm(n, first, form, &d);
            check_arm(&d);
        }
}

static void test_standard_dh(void **s)
{
    (void)s, check_form(DYN_DH_STANDARD, 31);
}
static void test_modified_dh(void **s)
{
    (void)s, check_form(DYN_DH_MODIFIED, 32);
}
static void test_urdf(void **s)
{
    (void)s, check_form(DYN_URDF, 33);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standard_dh),
        cmocka_unit_test(test_modified_dh),
        cmocka_unit_test(test_urdf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
