/*
 * test_random.c — armurdf on random URDF trees against the Lagrange oracle of tests/dynamics.
 *
 * Each tree (urdf_gen.c) has fixed joints before, between and after its moving joints, side
 * branches with fixed, moving and mimic joints placed by --at, a branch fixed to the base, non-unit
 * axes, rotated inertial frames and a shuffled element order. The importer's INI is loaded by
 * config/ into a dynamics model; the oracle sees the tree before any merging: the path as a serial
 * chain with every fixed joint a joint held at q = qd = qdd = 0, the side branches added as 4x4
 * pseudo-inertias (T J T^T). Inverse dynamics (gravity, friction), the mass matrix and the tip
 * pose agree to 1e-9 relative, and every number the INI carries reads back bit for bit.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "tests/armurdf/armurdf_support.h"
#include "tests/armurdf/urdf_gen.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/lagrange.h"
#include "tests/dynamics/test_util.h"

#define TREES 300

static double worst_tau, worst_h; /* the largest relative errors met (printed) */

static armd_config cfg; /* large: static */

/* The loaded model holds exactly the numbers the importer computed; the axis to the last bit
 * of the loader's own normalisation (it divides by the norm again, 1 +- 1 ulp). */
static void assert_same_numbers(const urdf_arm *arm, const dyn_model_desc *d)
{
    for (int i = 0; i < arm->n; i++) {
        const urdf_chain_joint *c = &arm->j[i];
        const dyn_joint_desc *j = &d->joint[i];
        assert_true(j->mass == c->mass);
        for (int k = 0; k < 3; k++) {
            assert_true(j->com[k] == c->com[k] && j->origin_xyz[k] == c->origin.xyz[k] &&
                        j->origin_rpy[k] == c->origin.rpy[k]);
            assert_true(fabs(j->axis[k] - c->axis[k]) <= 2.3e-16);
        }
        for (int k = 0; k < 6; k++) assert_true(j->inertia[k] == c->inertia[k]);
    }
}

/* The imported tree's INI as a dynamics model (gravity and tool frame added to [arm]). */
static dyn_model *model_of(const gen_tree *t, const imported *im)
{
    char extra[512];
    const urdf_origin *o = &im->arm.tool;
    snprintf(extra, sizeof extra,
             "gravity = %.17g %.17g %.17g\ntool_xyz = %.17g %.17g %.17g\n"
             "tool_rpy = %.17g %.17g %.17g\n",
             t->gravity[0], t->gravity[1], t->gravity[2], o->xyz[0], o->xyz[1], o->xyz[2],
             o->rpy[0], o->rpy[1], o->rpy[2]);
    char *ini = complete_ini(im->ini, extra);
    cfg_report rep;
    cfg_report_init(&rep);
    if (cfg_load_string(ini, "random.ini", &cfg, &rep) != 0) {
        cfg_report_print(&rep, stderr);
        fail_msg("the written INI does not load:\n%s", ini);
    }
    cfg_report_free(&rep);
    free(ini);
    assert_int_equal(cfg.n_joints, t->n_moving);
    assert_same_numbers(&im->arm, &cfg.model);
    dyn_model *m = dyn_model_create(&cfg.model, NULL, NULL);
    assert_non_null(m);
    return m;
}

/* Random states: the model's tau, H and tool pose against the oracle's at the moving joints. */
static void compare(const gen_tree *t, dyn_model *m, unsigned seed)
{
    dyn_model_desc od;
    int ex[GEN_MAX];
    int ne = gen_oracle(t, &od, ex), n = t->n_moving;
    dyn_data *d = dyn_data_create(m);
    static double Me[GEN_MAX * GEN_MAX];
    for (int trial = 0; trial < 3; trial++) {
        double q[GEN_MAX], qd[GEN_MAX], qdd[GEN_MAX], qe[GEN_MAX] = {0}, qde[GEN_MAX] = {0},
                                                      qdde[GEN_MAX] = {0};
        for (int k = 0; k < n; k++) {
            double lim = od.joint[ex[k]].type == DYN_PRISMATIC ? 0.9 : 3;
            qe[ex[k]] = q[k] = rng_uniform(-lim, lim);
            qde[ex[k]] = qd[k] = rng_uniform(-2, 2);
            qdde[ex[k]] = qdd[k] = rng_uniform(-2, 2);
        }
        double tau[GEN_MAX], taue[GEN_MAX], tau_o[GEN_MAX], H[GEN_MAX * GEN_MAX],
            H_o[GEN_MAX * GEN_MAX];
        dyn_rnea(m, d, q, qd, qdd, NULL, DYN_ALL, tau);
        dyn_mass_matrix(m, d, q, 0, H);
        lagrange_id(&od, qe, qde, qdde, NULL, DYN_GRAVITY | DYN_FRICTION, taue, Me);
        for (int k = 0; k < n; k++) {
            tau_o[k] = taue[ex[k]];
            for (int l = 0; l < n; l++) H_o[k * n + l] = Me[ex[k] * ne + ex[l]];
        }
        worst_tau = fmax(worst_tau, rel_err(tau, tau_o, n, 1e-12));
        worst_h = fmax(worst_h, rel_err(H, H_o, n * n, 1e-12));
        char what[64];
        snprintf(what, sizeof what, "seed %u tau", seed);
        assert_rel(tau, tau_o, n, 1e-9, what);
        snprintf(what, sizeof what, "seed %u H", seed);
        assert_rel(H, H_o, n * n, 1e-9, what);
        double tool[12], T[16], Tp[12];
        dyn_fk(m, d, q, NULL, tool);
        lagrange_tool_pose(&od, qe, T);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 4; c++) Tp[4 * r + c] = T[4 * r + c];
        snprintf(what, sizeof what, "seed %u tip pose", seed);
        assert_rel(tool, Tp, 12, 1e-9, what);
    }
    dyn_data_free(d);
}

/* TREES random trees with 1..7 moving joints; counts what they exercised. */
static void test_random_trees(void **state)
{
    (void)state;
    int lumped = 0, composed = 0, mimics = 0;
    for (unsigned seed = 1; seed <= TREES; seed++) {
        rng_seed(seed);
        gen_tree t;
        gen_random(&t, 1 + (int)(seed % 7));
        char *text = gen_urdf(&t);
        urdf_at at[GEN_MAX];
        char names[GEN_MAX][16], tip[16];
        urdf_options opt = {.at = at, .n_at = gen_at_options(&t, at, names)};
        snprintf(tip, sizeof tip, "l%d", t.tip);
        if (t.n_leaves > 1 || seed % 2) opt.tip = tip; /* else the default: the only leaf */
        imported im;
        urdf_error err;
        if (import_text(text, strlen(text), "random.urdf", &opt, &im, &err))
            fail_msg("seed %u: %s\n%s", seed, err.msg, text);
        assert_int_equal(im.arm.n, t.n_moving);
        for (int i = 0; i < im.arm.n; i++) {
            lumped += im.arm.j[i].n_lumped > 1;
            composed += im.arm.j[i].composed;
        }
        for (int k = 0; k < t.n_joints; k++) mimics += t.j[k].mimic >= 0 && t.j[k].lumped;
        dyn_model *m = model_of(&t, &im);
        compare(&t, m, seed);
        dyn_model_free(m);
        imported_free(&im);
        free(text);
    }
    /* the trees did exercise what they are for */
    printf("%d trees: %d chain links with lumped links, %d origins composed, %d mimic joints; "
           "largest relative error tau %.2g, H %.2g\n",
           TREES, lumped, composed, mimics, worst_tau, worst_h);
    assert_true(lumped > TREES / 2 && composed > TREES / 2 && mimics > TREES / 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_trees)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
