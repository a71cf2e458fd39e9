/*
 * test_armsim_freefall.c — armsim's physics against seed 003's closed-form 2-DOF planar arm
 * (003_57c57ddcb031fcc5.txt: tau = M(q) qdd + V(q, qd) + G(q), point masses at the link ends).
 *
 * A real armsim process simulates config/examples/planar2.ini with no torque (nothing talks
 * to it) for ~0.6 s; the test integrates qdd = M^-1 (-V - G) with RK4 at a 10x finer step over
 * the same steps the truth file records and compares q and qd row by row while the arm stays
 * inside its joint limits (the end stops are not part of the closed form).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tools/sim_harness.h"

#define RATE_HZ 10000.0
#define TOL_Q   1e-6 /* rad: RK4 at 0.1 ms vs 0.01 ms over 0.5 s is ~1e-12; CSV keeps 10 digits */
#define TOL_QD  1e-5 /* rad/s */

typedef struct {
    double m1, m2, l1, l2, g;
} planar2;

/* qdd of seed 003's arm without torque: M(q) qdd = -V(q, qd) - G(q). */
static void seed003_qdd(const planar2 *a, const double *q, const double *qd, double *qdd)
{
    double c1 = cos(q[0]), c2 = cos(q[1]), s2 = sin(q[1]), c12 = cos(q[0] + q[1]);
    double M11 =
        a->m2 * a->l2 * a->l2 + 2 * a->m2 * a->l1 * a->l2 * c2 + (a->m1 + a->m2) * a->l1 * a->l1;
    double M12 = a->m2 * a->l2 * a->l2 + a->m2 * a->l1 * a->l2 * c2;
    double M22 = a->m2 * a->l2 * a->l2;
    /* V as in the seed's final summary (the "theta2 double-dot squared" in its link-1 inward
     * step is a typo for the velocity squared) */
    double V1 = -a->m2 * a->l1 * a->l2 * s2 * qd[1] * qd[1] -
                2 * a->m2 * a->l1 * a->l2 * s2 * qd[0] * qd[1];
    double V2 = a->m2 * a->l1 * a->l2 * s2 * qd[0] * qd[0];
    double G1 = a->m2 * a->l2 * a->g * c12 + (a->m1 + a->m2) * a->l1 * a->g * c1;
    double G2 = a->m2 * a->l2 * a->g * c12;
    double r1 = -V1 - G1, r2 = -V2 - G2, det = M11 * M22 - M12 * M12;
    qdd[0] = (M22 * r1 - M12 * r2) / det;
    qdd[1] = (M11 * r2 - M12 * r1) / det;
}

/* One RK4 step of (q, qd) over h. */
static void rk4(const planar2 *a, double *q, double *qd, double h)
{
    double k1[2], k2[2], k3[2], k4[2], x[2], v2[2], v3[2], v4[2];
    seed003_qdd(a, q, qd, k1);
    for (int i = 0; i < 2; i++) x[i] = q[i] + h / 2 * qd[i], v2[i] = qd[i] + h / 2 * k1[i];
    seed003_qdd(a, x, v2, k2);
    for (int i = 0; i < 2; i++) x[i] = q[i] + h / 2 * v2[i], v3[i] = qd[i] + h / 2 * k2[i];
    seed003_qdd(a, x, v3, k3);
    for (int i = 0; i < 2; i++) x[i] = q[i] + h * v3[i], v4[i] = qd[i] + h * k3[i];
    seed003_qdd(a, x, v4, k4);
    for (int i = 0; i < 2; i++) {
        q[i] += h / 6 * (qd[i] + 2 * v2[i] + 2 * v3[i] + v4[i]);
        qd[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
}

/* The seed's parameters from the config, after checking it is the seed's arm. */
static planar2 seed_arm(const armd_config *cfg)
{
    const dyn_model_desc *d = &cfg->model;
    assert_int_equal(d->n, 2);
    for (int j = 0; j < 2; j++) {
        const dyn_joint_desc *J = &d->joint[j];
        assert_int_equal(J->type, DYN_REVOLUTE);
        assert_int_equal(J->form, DYN_DH_MODIFIED);
        assert_true(J->alpha == 0 && J->d == 0 && J->theta == 0);
        assert_true(J->com[1] == 0 && J->com[2] == 0 && J->com[0] > 0);
        for (int k = 0; k < 6; k++) assert_true(J->inertia[k] == 0);
        assert_true(J->armature == 0 && J->viscous == 0 && J->coulomb_pos == 0 &&
                    J->coulomb_neg == 0);
    }
    assert_true(d->joint[0].a == 0);
    assert_true(fabs(d->joint[1].a - d->joint[0].com[0]) < 1e-12); /* joint 2 at the mass */
    assert_true(d->gravity[0] == 0 && d->gravity[2] == 0 && d->gravity[1] < 0);
    planar2 a = {d->joint[0].mass, d->joint[1].mass, d->joint[0].com[0], d->joint[1].com[0],
                 -d->gravity[1]};
    return a;
}

static void test_free_fall_matches_seed003(void **state)
{
    (void)state;
    const char *ini = getenv("ARMSIM_PLANAR2_INI");
    assert_non_null(ini);
    armd_config *cfg = sim_load_config(ini, "/dev/null", -1);
    planar2 arm = seed_arm(cfg);

    static sim_proc sim; /* static: sim_teardown reaches it after a failed assertion */
    const char *extra[] = {"--rate", "10000", "--q0", "0.2,0.3", NULL};
    assert_int_equal(sim_start(&sim, ini, extra), 0);
    sim_sleep(0.8);
    assert_int_equal(sim_stop(&sim), 0);
    truth_table t;
    assert_int_equal(truth_load(sim.truth, 2, &t), 0);
    sim_cleanup(&sim);
    assert_true(t.rows > 1000);

    const double h = 1.0 / RATE_HZ;
    const double *r0 = truth_row(&t, 0);
    assert_true(r0[0] == 0.0);
    double q[2] = {r0[1], r0[2]}, qd[2] = {r0[3], r0[4]};
    assert_true(fabs(q[0] - 0.2) < 1e-12 && fabs(q[1] - 0.3) < 1e-12 && qd[0] == 0 && qd[1] == 0);
    double max_eq = 0, max_eqd = 0, t_end = 0, moved = 0;
    size_t skips = 0, compared = 0;
    for (size_t i = 1; i < t.rows; i++) {
        const double *r = truth_row(&t, i), *p = truth_row(&t, i - 1);
        double dt = r[0] - p[0];
        assert_true(dt > h * (1 - 1e-6)); /* one row per step; skipped time only adds */
        if (dt > 1.5 * h) skips++;
        for (int s = 0; s < 10; s++) rk4(&arm, q, qd, h / 10);
        bool inside = true;
        for (int j = 0; j < 2; j++)
            inside = inside && r[1 + j] > cfg->joint[j].lower && r[1 + j] < cfg->joint[j].upper;
        if (!inside) break;
        for (int j = 0; j < 2; j++) {
            assert_true(r[5 + j] == 0.0); /* no torque applied */
            max_eq = fmax(max_eq, fabs(r[1 + j] - q[j]));
            max_eqd = fmax(max_eqd, fabs(r[3 + j] - qd[j]));
        }
        moved = fmax(moved, fabs(r[1] - 0.2));
        t_end = r[0];
        compared++;
    }
    print_message("free fall: %zu steps compared over %.3f s, arm moved %.3f rad; max |q err| "
                  "%.3g rad, max |qd err| %.3g rad/s; %zu skipped intervals\n",
                  compared, t_end, moved, max_eq, max_eqd, skips);
    assert_true(compared >= 3000);
    assert_true(moved > 0.1); /* it did fall */
    assert_true(max_eq < TOL_Q);
    assert_true(max_eqd < TOL_QD);
    truth_free(&t);
    free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_free_fall_matches_seed003, sim_teardown)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
