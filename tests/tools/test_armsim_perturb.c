/*
 * test_armsim_perturb.c — armsim --perturb's parameter changes (tools/armsim/perturb.c) on the
 * PUMA 560 example: every factor within its documented range, the inertia still a body's where
 * it was one (dynamics' own validation finds no new error), the same seed the same arm and
 * another seed another, and the arm really different (some factor beyond 10 %).
 * argv[1]: the PUMA 560 example INI.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "tools/armsim/perturb.h"

static const char *puma_ini;
static armd_config cfg;

static void load(void)
{
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(puma_ini, &cfg, &rep), 0);
    cfg_report_free(&rep);
}

/* New errors of dynamics' validation (warnings do not count). */
static int errors_of(const dyn_model_desc *d)
{
    return dyn_desc_validate(d, NULL, NULL);
}

/* Within [1 - spread, 1 + spread] of the original (0 stays 0); counts ratios off by > 10 %. */
static void within(double orig, double now, double spread, int *big)
{
    if (orig == 0) {
        assert_true(now == 0);
        return;
    }
    double r = now / orig;
    if (!(r >= 1 - spread - 1e-12 && r <= 1 + spread + 1e-12))
        fail_msg("ratio %g outside 1 +- %g", r, spread);
    *big += fabs(r - 1) > 0.1;
}

static void test_ranges_and_validity(void **state)
{
    (void)state;
    load();
    int big = 0;
    for (uint64_t seed = 0; seed < 50; seed++) {
        dyn_model_desc d = cfg.model;
        perturb_desc(&d, seed, NULL);
        assert_int_equal(errors_of(&d), errors_of(&cfg.model));
        for (int j = 0; j < d.n; j++) {
            const dyn_joint_desc *a = &cfg.model.joint[j], *b = &d.joint[j];
            within(a->mass, b->mass, PERTURB_INERTIAL, &big);
            for (int k = 0; k < 3; k++) within(a->com[k], b->com[k], PERTURB_INERTIAL, &big);
            within(a->viscous, b->viscous, PERTURB_FRICTION, &big);
            within(a->coulomb_pos, b->coulomb_pos, PERTURB_FRICTION, &big);
            within(a->coulomb_neg, b->coulomb_neg, PERTURB_FRICTION, &big);
            assert_true(a->armature == b->armature);
            /* principal moments: each within 1 +- 30 % (the clamp only lowers the largest) */
            double ma[3], mb[3], Ra[9], Rb[9];
            dyn_inertia_principal(a->inertia, ma, Ra);
            dyn_inertia_principal(b->inertia, mb, Rb);
            double sa = ma[0] + ma[1] + ma[2], sb = mb[0] + mb[1] + mb[2];
            assert_true(sb >= (1 - PERTURB_INERTIAL) * sa * (1 - 1e-9) - 1e-15);
            assert_true(sb <= (1 + PERTURB_INERTIAL) * sa * (1 + 1e-9) + 1e-15);
            assert_true(mb[0] >= -1e-12 * sb);
            if (ma[2] <= ma[0] + ma[1]) assert_true(mb[2] <= mb[0] + mb[1] + 1e-12 * sb);
        }
    }
    print_message("factors beyond 10 %%: %d\n", big);
    assert_true(big > 100); /* the arm really differs */
}

static void test_reproducible(void **state)
{
    (void)state;
    load();
    dyn_model_desc a = cfg.model, b = cfg.model, c = cfg.model;
    perturb_desc(&a, 7, NULL);
    perturb_desc(&b, 7, NULL);
    perturb_desc(&c, 8, NULL);
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(a.joint[1].mass != c.joint[1].mass);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    puma_ini = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_and_validity),
        cmocka_unit_test(test_reproducible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
