/* test_momentum.c — dyn_momentum against matrices: p == H(q) qd (composite rigid bodies) and
 * C^T qd == dH/dt qd - C qd, with dH/dt qd by a central difference of H along qd, for random
 * arms of every description form with prismatic joints, armature, friction and payload; the
 * skew property qd . C^T qd == qd . C qd; a single joint has C^T qd == 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/test_util.h"

#define NMAX 8

/* dH/dt qd at (q, qd) by a central difference of H(q + e qd) over e = +-h (error O(h^2)). */
static void hdot_qd(dyn_model *m, dyn_data *w, int n, const double *q, const double *qd, double h,
                    double *out)
{
    double qp[NMAX], qm[NMAX], Hp[NMAX * NMAX], Hm[NMAX * NMAX];
    for (int i = 0; i < n; i++) qp[i] = q[i] + h * qd[i], qm[i] = q[i] - h * qd[i];
    dyn_mass_matrix(m, w, qp, DYN_ARMATURE, Hp);
    dyn_mass_matrix(m, w, qm, DYN_ARMATURE, Hm);
    for (int i = 0; i < n; i++) {
        out[i] = 0;
        for (int k = 0; k < n; k++) out[i] += (Hp[i * n + k] - Hm[i * n + k]) / (2 * h) * qd[k];
    }
}

/* For random arms: p against H qd (1e-12) and C^T qd against the difference quotient (1e-6,
 * the quotient's own error), and the skew property (1e-11). */
static void check_arms(int form, double p_prismatic, unsigned long long seed)
{
    rng_seed(seed);
    for (int trial = 0; trial < 40; trial++) {
        int n = 1 + trial % NMAX;
        dyn_model_desc desc;
        arm_random(&desc, n, form, p_prismatic, 1);
        dyn_model *m = dyn_model_create(&desc, NULL, NULL);
        assert_non_null(m);
        dyn_data *w = dyn_data_create(m);
        double q[NMAX], qd[NMAX], p[NMAX], ct[NMAX], H[NMAX * NMAX], Hqd[NMAX], hd[NMAX], cq[NMAX],
            ref[NMAX];
        for (int i = 0; i < n; i++) q[i] = rng_uniform(-3, 3), qd[i] = rng_uniform(-2, 2);
        dyn_momentum(m, w, q, qd, DYN_ARMATURE, p, ct);
        dyn_mass_matrix(m, w, q, DYN_ARMATURE, H);
        for (int i = 0; i < n; i++) {
            Hqd[i] = 0;
            for (int k = 0; k < n; k++) Hqd[i] += H[i * n + k] * qd[k];
        }
        assert_rel(p, Hqd, n, 1e-12, "p = H qd");
        hdot_qd(m, w, n, q, qd, 1e-5, hd);
        dyn_coriolis(m, w, q, qd, cq);
        for (int i = 0; i < n; i++) ref[i] = hd[i] - cq[i];
        assert_rel(ct, ref, n, 1e-6, "C^T qd = dH/dt qd - C qd");
        double a = 0, b = 0, s = 1e-12;
        for (int i = 0; i < n; i++) {
            a += qd[i] * ct[i], b += qd[i] * cq[i];
            s = fmax(s, fabs(qd[i] * cq[i]));
        }
        if (!(fabs(a - b) <= 1e-11 * s * n)) {
            print_error("skew property: qd.C^T qd %.17g, qd.C qd %.17g\n", a, b);
            fail();
        }
        /* armature enters p only when flagged, and never C^T qd */
        double p0[NMAX], ct0[NMAX];
        dyn_momentum(m, w, q, qd, 0, p0, ct0);
        for (int i = 0; i < n; i++) {
            assert_true(fabs(p[i] - p0[i] - desc.joint[i].armature * qd[i]) <=
                        1e-12 * (fabs(p[i]) + 1));
            assert_true(ct0[i] == ct[i]);
        }
        dyn_data_free(w);
        dyn_model_free(m);
    }
}

static void test_standard_dh(void **state)
{
    (void)state;
    check_arms(DYN_DH_STANDARD, 0.0, 11);
}

static void test_modified_dh_prismatic(void **state)
{
    (void)state;
    check_arms(DYN_DH_MODIFIED, 0.4, 12);
}

static void test_urdf(void **state)
{
    (void)state;
    check_arms(DYN_URDF, 0.2, 13);
}

static void test_mixed_forms(void **state)
{
    (void)state;
    check_arms(-1, 0.3, 14);
}

/* One revolute joint: H is constant, so C^T qd is exactly 0 and p = (I_zz + armature) qd. */
static void test_single_joint(void **state)
{
    (void)state;
    dyn_model_desc d;
    memset(&d, 0, sizeof d);
    d.n = 1;
    d.gravity[2] = -9.81;
    d.joint[0].form = DYN_DH_STANDARD;
    d.joint[0].a = 0.5;
    d.joint[0].mass = 2.0;
    d.joint[0].com[0] = -0.25;
    d.joint[0].inertia[0] = d.joint[0].inertia[3] = d.joint[0].inertia[5] = 0.01;
    d.joint[0].armature = 0.3;
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    assert_non_null(m);
    dyn_data *w = dyn_data_create(m);
    double q = 0.7, qd = -1.9, p, ct;
    dyn_momentum(m, w, &q, &qd, DYN_ARMATURE, &p, &ct);
    double izz = 0.01 + 2.0 * 0.25 * 0.25 + 0.3;
    assert_true(fabs(p - izz * qd) < 1e-13);
    assert_true(ct == 0.0);
    dyn_data_free(w);
    dyn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standard_dh),  cmocka_unit_test(test_modified_dh_prismatic),
        cmocka_unit_test(test_urdf),         cmocka_unit_test(test_mixed_forms),
        cmocka_unit_test(test_single_joint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
