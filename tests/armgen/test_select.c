/* test_select.c — when generated code is used (dyn_funcs_for, dyn_model_hash): the built-in
 * PUMA 560 module fits the model of config/examples/puma560.ini exactly; another payload or
 * gravity makes the general core take over and restoring them brings the module back; the
 * hash is the same for two models of one description and changes with any one number of it
 * (a relative change of 1e-12 in a mass, COM, inertia, DH parameter, armature, friction, tool,
 * payload, gravity, smoothing; the hash is over the model's internal form, so a change that
 * rounds away when the description is converted leaves the model, and the hash, as they
 * were). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "config/config.h"
#include "dynamics/dynamics.h"
#include "tools/armgen/builtin.h"

static const char *puma_ini; /* argv[1] */

static const dyn_gen_module *builtin(const char *arm)
{
    for (int i = 0; armgen_builtin[i]; i++)
        if (strcmp(armgen_builtin[i]->arm, arm) == 0) return armgen_builtin[i];
    return NULL;
}

static void load(armd_config *cfg)
{
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(puma_ini, cfg, &rep), 0);
    cfg_report_free(&rep);
}

static void test_payload_and_gravity_switch(void **state)
{
    (void)state;
    static armd_config cfg;
    load(&cfg);
    const dyn_gen_module *gen = builtin("puma560");
    assert_non_null(gen);
    dyn_model *m = dyn_model_create(&cfg.model, NULL, NULL);
    assert_non_null(m);
    assert_ptr_equal(dyn_funcs_for(m, gen), &gen->funcs);
    assert_ptr_equal(dyn_funcs_for(m, NULL), &dyn_general);
    dyn_payload load1 = {1.5, {0, 0, 0.05}, {0.001, 0, 0, 0.001, 0, 0.001}};
    dyn_set_payload(m, &load1);
    assert_ptr_equal(dyn_funcs_for(m, gen), &dyn_general);
    dyn_set_payload(m, &cfg.model.payload);
    assert_ptr_equal(dyn_funcs_for(m, gen), &gen->funcs);
    const double moon[3] = {0, 0, -1.62};
    dyn_set_gravity(m, moon);
    assert_ptr_equal(dyn_funcs_for(m, gen), &dyn_general);
    dyn_set_gravity(m, cfg.model.gravity);
    assert_ptr_equal(dyn_funcs_for(m, gen), &gen->funcs);
    dyn_model_free(m);
}

static unsigned long long hash_of(const dyn_model_desc *d)
{
    dyn_model *m = dyn_model_create(d, NULL, NULL);
    assert_non_null(m);
    unsigned long long h = dyn_model_hash(m);
    dyn_model_free(m);
    return h;
}

static void test_hash_covers_every_number(void **state)
{
    (void)state;
    static armd_config cfg;
    static dyn_model_desc d0, d;
    load(&cfg);
    d0 = cfg.model;
    d0.payload = (dyn_payload){1.0, {0.1, 0, 0.05}, {0.001, 0, 0, 0.001, 0, 0.001}}; /* so the
                                                                            tool frame counts */
    const unsigned long long h0 = hash_of(&d0);
    assert_true(hash_of(&d0) == h0);
    /* each number as a place in d; joint 2 (index 1) for the joint ones */
    dyn_joint_desc *j = &d.joint[1];
    double *fields[] = {&j->a,
                        &j->alpha,
                        &j->d,
                        &j->theta,
                        &j->mass,
                        &j->com[0],
                        &j->com[2],
                        &j->inertia[0],
                        &j->inertia[1],
                        &j->inertia[5],
                        &j->armature,
                        &j->viscous,
                        &j->coulomb_pos,
                        &j->coulomb_neg,
                        &d.gravity[1],
                        &d.gravity[2],
                        &d.tool_xyz[2],
                        &d.tool_rpy[0],
                        &d.payload.mass,
                        &d.payload.com[1],
                        &d.payload.inertia[3],
                        &d.friction_smoothing,
                        &d.joint[5].mass,
                        &d.joint[0].inertia[3]};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        d = d0;
        double *x = fields[k];
        *x = *x == 0.0 ? 1e-9 : *x * (1 + 1e-12);
        if (hash_of(&d) == h0) {
            print_error("number %zu leaves the hash unchanged\n", k);
            fail();
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    puma_ini = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_payload_and_gravity_switch),
        cmocka_unit_test(test_hash_covers_every_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
