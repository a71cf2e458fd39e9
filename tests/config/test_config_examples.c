/*
 * test_config_examples.c — the example configurations load to the numbers their sources publish
 * (planar 2-DOF, PUMA 560, ViperX 300, the flexible two-link arm), with exactly the warnings
 * their comments announce, at their lines. argv[1] is the source root (meson passes it), so the
 * test runs from any directory.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"

static const char *root = ".";
static armd_config cfg, cfg2; /* large: static */

/* Loads an example; asserts no errors and returns the report (caller frees). */
static void load_example(const char *name, armd_config *c, cfg_report *rep)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/config/examples/%s", root, name);
    cfg_report_init(rep);
    int errors = cfg_load(path, c, rep);
    if (errors) cfg_report_print(rep, stderr);
    assert_int_equal(errors, 0);
    assert_int_equal(rep->n_errors, 0);
}

/* The 1-based line of the first line of FILE starting with text (to name warnings exactly). */
static int line_of(const char *name, const char *text)
{
    char path[512], buf[512];
    snprintf(path, sizeof(path), "%s/config/examples/%s", root, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0, found = -1;
    while (fgets(buf, sizeof(buf), f)) {
        n++;
        if (strncmp(buf, text, strlen(text)) == 0) {
            found = n;
            break;
        }
    }
    fclose(f);
    assert_true(found > 0);
    return found;
}

static void test_planar2_loads(void **state)
{
    (void)state;
    cfg_report rep;
    load_example("planar2.ini", &cfg, &rep);
    assert_int_equal(rep.n_warnings, 0);
    assert_string_equal(cfg.name, "planar2");
    assert_int_equal(cfg.n_joints, 2);
    assert_int_equal(cfg.model.n, 2);
    assert_string_equal(cfg.joint[0].name, "shoulder");
    assert_string_equal(cfg.joint[1].name, "elbow");
    /* seed 003: point masses at the link ends, gravity along -y, frames at the joints */
    assert_int_equal(cfg.model.joint[0].form, DYN_DH_MODIFIED);
    assert_true(fabs(cfg.model.joint[1].a - 0.5) < 1e-12);
    assert_true(fabs(cfg.model.joint[0].com[0] - 0.5) < 1e-12);
    assert_true(fabs(cfg.model.joint[1].com[0] - 0.4) < 1e-12);
    assert_true(fabs(cfg.model.joint[0].mass - 2.0) < 1e-12);
    assert_true(fabs(cfg.model.joint[1].mass - 1.5) < 1e-12);
    for (int k = 0; k < 6; k++) assert_true(cfg.model.joint[1].inertia[k] == 0);
    assert_true(fabs(cfg.model.gravity[1] + 9.81) < 1e-12);
    assert_true(cfg.model.gravity[0] == 0 && cfg.model.gravity[2] == 0);
    assert_true(fabs(cfg.joint[0].lower + M_PI) < 1e-12);
    assert_int_equal(cfg.driver.type, DRIVER_ARMLINK);
    assert_int_equal(cfg.socket.mode, 0660);
    assert_string_equal(cfg.socket.path, "/run/armd/planar2/armd.sock");
    /* [safety] damping = 2 applies to both joints */
    assert_true(cfg.joint[0].damping == 2 && cfg.joint[1].damping == 2);
    assert_int_equal(cfg.safety.on_fault, ON_FAULT_DAMP);
    assert_true(fabs(cfg.rate_hz - 500) < 1e-12);
    assert_int_equal(cfg.joint[1].id[0], 2);
    cfg_report_free(&rep);
}

static void test_puma560_loads(void **state)
{
    (void)state;
    static const double G[6] = {-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686};
    static const double Jm[6] = {200e-6, 200e-6, 200e-6, 33e-6, 33e-6, 33e-6};
    static const double B[6] = {1.48e-3, 0.817e-3, 1.38e-3, 71.2e-6, 82.6e-6, 36.7e-6};
    static const double Tc[6][2] = {{0.395, -0.435},     {0.126, -0.071},     {0.132, -0.105},
                                    {11.2e-3, -16.9e-3}, {9.26e-3, -14.5e-3}, {3.96e-3, -10.5e-3}};
    static const double lim_deg[6][2] = {{-160, 160}, {-45, 225},  {-225, 45},
                                         {-110, 170}, {-100, 100}, {-266, 266}};
    cfg_report rep;
    load_example("puma560.ini", &cfg, &rep);
    assert_int_equal(cfg.n_joints, 6);
    assert_int_equal(cfg.driver.type, DRIVER_DXL2);
    assert_int_equal(cfg.driver.baud, 4000000);
    assert_true(fabs(cfg.rate_hz - 1000) < 1e-12);
    for (int i = 0; i < 6; i++) {
        const dyn_joint_desc *j = &cfg.model.joint[i];
        const cfg_joint *c = &cfg.joint[i];
        assert_int_equal(j->form, DYN_DH_STANDARD);
        /* joint-side drive train from the published motor-side values (rounded in the file) */
        assert_true(fabs(j->armature - G[i] * G[i] * Jm[i]) < 1e-5 * fabs(G[i] * G[i] * Jm[i]));
        assert_true(fabs(j->viscous - G[i] * G[i] * B[i]) < 1e-5 * fabs(G[i] * G[i] * B[i]));
        assert_true(fabs(j->coulomb_pos - fabs(G[i]) * Tc[i][0]) < 1e-5 * fabs(G[i] * Tc[i][0]));
        assert_true(fabs(j->coulomb_neg - fabs(G[i]) * Tc[i][1]) < 1e-5 * fabs(G[i] * Tc[i][1]));
        assert_true(fabs(c->lower - lim_deg[i][0] * M_PI / 180) < 1e-6);
        assert_true(fabs(c->upper - lim_deg[i][1] * M_PI / 180) < 1e-6);
        assert_true(fabs(c->gear_ratio - fabs(G[i])) < 1e-9);
        assert_int_equal(c->direction[0], G[i] < 0 ? -1 : 1);
        /* the torque limit fits Goal Current (2 bytes, 2.69 mA) */
        assert_true(c->torque / c->torque_per_amp < 32767 * 2.69e-3);
        assert_true(fabs(c->kd - 2 * sqrt(c->kp)) < 1e-9); /* critically damped */
    }
    assert_true(fabs(cfg.model.joint[0].alpha - M_PI / 2) < 1e-15);
    assert_true(fabs(cfg.model.joint[2].alpha + M_PI / 2) < 1e-15);
    assert_true(fabs(cfg.model.joint[1].a - 0.4318) < 1e-12);
    assert_true(fabs(cfg.model.joint[2].d - 0.15005) < 1e-12);
    assert_true(fabs(cfg.model.joint[1].com[2] - 0.2275) < 1e-12);
    assert_true(fabs(cfg.model.joint[3].inertia[3] - 1.3e-3) < 1e-15);
    assert_true(fabs(cfg.model.gravity[2] + 9.81) < 1e-12);
    assert_true(fabs(cfg.joint[1].damping - 30) < 1e-12);
    assert_true(fabs(cfg.joint[5].following_error - 0.15) < 1e-12);
    /* the published j1 (about its axis) and j3 inertias violate the triangle inequality */
    assert_int_equal(rep.n_warnings, 2);
    char expect[512];
    snprintf(expect, sizeof(expect),
             "%s/config/examples/puma560.ini:%d: [joint j1] inertia: warning: ", root,
             line_of("puma560.ini", "inertia = 0 0 0 0.35 0 0"));
    assert_int_equal(strncmp(rep.lines[0], expect, strlen(expect)), 0);
    cfg_report_free(&rep);
}

static void test_viperx300_loads(void **state)
{
    (void)state;
    cfg_report rep;
    load_example("viperx300.ini", &cfg, &rep);
    assert_int_equal(rep.n_warnings, 0);
    assert_int_equal(cfg.n_joints, 6);
    const cfg_joint *sh = &cfg.joint[1], *el = &cfg.joint[2];
    assert_string_equal(sh->name, "shoulder");
    assert_int_equal(sh->n_ids, 2);
    assert_int_equal(sh->id[0], 2);
    assert_int_equal(sh->id[1], 3);
    assert_int_equal(sh->direction[0], 1);
    assert_int_equal(sh->direction[1], -1);
    assert_int_equal(el->n_ids, 2);
    assert_int_equal(el->id[1], 5); /* comma-separated list */
    assert_int_equal(el->direction[1], -1);
    assert_true(fabs(sh->zero_offset[0] - M_PI) < 1e-15 && fabs(sh->zero_offset[1] - M_PI) < 1e-15);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(cfg.model.joint[i].form, DYN_URDF);
        assert_true(fabs(cfg.joint[i].following_error - 0.15) < 1e-12);
        assert_true(fabs(cfg.joint[i].torque_rate_limit - 200) < 1e-12);
    }
    assert_true(cfg.model.joint[1].axis[1] == 1);
    assert_true(fabs(cfg.model.joint[2].origin_xyz[0] - 0.05955) < 1e-12);
    assert_true(cfg.driver.fast_sync_read);
    cfg_report_free(&rep);
}

static void test_flexarm2_loads(void **state)
{
    (void)state;
    cfg_report rep;
    load_example("flexarm2.ini", &cfg, &rep);
    assert_int_equal(rep.n_lines, 0);
    assert_true(cfg.flexible);
    assert_int_equal(cfg.flex.link[0].modes_y, 2);
    assert_true(cfg.flex.link[0].length == 1.0 && cfg.flex.link[1].length == 0.8);
    assert_true(cfg.flex.link[0].EI_z == 3477 && cfg.flex.link[1].EI_y == 3477);
    cfg_report_free(&rep);
    load_example("flexarm2.ini", &cfg2, &rep);
    cfg_report_free(&rep);
    cfg2.flex.link[1].EI_z = 3000;
    cfg2.flex.link[0].damping = 0.05;
    char live[256], restart[256];
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof live, restart, sizeof restart), 1);
    assert_string_equal(live, "");
    assert_string_equal(restart, "[joint shoulder] flex_damping, [joint elbow] flex_ei");
}

int main(int argc, char **argv)
{
    if (argc > 1) root = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planar2_loads),
        cmocka_unit_test(test_puma560_loads),
        cmocka_unit_test(test_viperx300_loads),
        cmocka_unit_test(test_flexarm2_loads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
