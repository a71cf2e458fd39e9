/*
 * test_omx.c — armurdf on the ROBOTIS OpenManipulator-X URDF as ROBOTIS publishes it
 * (tests/armurdf/data/open_manipulator_x.urdf: a fixed world joint, four revolute joints, two
 * prismatic gripper fingers, one a mimic joint, a fixed end-effector link, meshes, materials):
 * the chain, the merged and lumped masses and COM against a hand calculation, the total mass,
 * that the INI loads, and that config/examples/open_manipulator_x.ini carries exactly the model
 * armurdf writes. argv[1] is the source root.
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
#include "tools/armurdf/urdf_internal.h"

static const char *root = ".";
static armd_config cfg, example; /* large: static */

/* The URDF's numbers (link <inertial> and joint <origin>), for the hand calculations. */
#define M_LINK1   7.9119962e-02
#define M_LINK2   9.8406837e-02
#define M_LINK3   1.3850917e-01
#define M_LINK4   1.3274562e-01
#define M_LINK5   1.4327573e-01
#define M_FINGER  1.0e-03
#define GRIP_OPEN 0.01 /* --at gripper_left_joint: 10 mm per finger */

/* Imports the repository's copy with the options the example was built with. */
static void import_omx(imported *im, const char *tip, double grip, urdf_error *err, int *rc)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/armurdf/data/open_manipulator_x.urdf", root);
    size_t len;
    char *text = read_text(path, &len);
    assert_non_null(text);
    urdf_at at = {"gripper_left_joint", grip};
    urdf_options opt = {.tip = tip, .at = &at, .n_at = 1};
    *rc = import_text(text, len, "open_manipulator_x.urdf", &opt, im, err);
    free(text);
}

/* The import the example was built with; fails the test if it is refused. */
static void import_omx_ok(imported *im)
{
    urdf_error err;
    int rc;
    import_omx(im, "end_effector_link", GRIP_OPEN, &err, &rc);
    if (rc) fail_msg("%s", err.msg);
}

static void test_chain_and_masses(void **state)
{
    (void)state;
    imported im;
    import_omx_ok(&im);
    const urdf_arm *a = &im.arm;
    assert_int_equal(a->n, 4);
    assert_string_equal(im.r->link[a->base].name, "world");
    assert_string_equal(im.r->link[a->tip].name, "end_effector_link");
    static const char *const names[] = {"joint1", "joint2", "joint3", "joint4"};
    for (int i = 0; i < 4; i++) assert_string_equal(im.r->joint[a->j[i].joint].name, names[i]);
    /* the world joint (zero origin) composed into joint1's origin; axes as published */
    assert_true(a->j[0].composed && a->j[0].origin.xyz[0] == 0.012 && a->j[0].origin.xyz[2] == 0);
    assert_true(a->j[1].axis[1] == 1 && a->j[0].axis[2] == 1);
    /* links 2..4 unchanged: the file's numbers */
    assert_true(a->j[0].mass == M_LINK2 && a->j[1].mass == M_LINK3 && a->j[2].mass == M_LINK4);
    assert_true(a->j[1].com[2] == 1.0170197e-01 && a->j[2].inertia[3] == 2.4230292e-04);
    /* link 5 + both fingers (+ the massless end-effector link): the mimic finger moves along
     * -y (axis 0 -1 0, multiplier 1) as far as the left one along +y */
    double m = M_LINK5 + 2 * M_FINGER;
    assert_true(fabs(a->j[3].mass - m) < 1e-17);
    double cx = (M_LINK5 * 4.4206755e-02 + 2 * M_FINGER * 0.0817) / m;
    double cy = (M_LINK5 * 3.6839985e-07 + M_FINGER * (0.021 + GRIP_OPEN) -
                 M_FINGER * (0.021 + GRIP_OPEN)) /
                m;
    double cz = M_LINK5 * 8.9142216e-03 / m;
    assert_true(fabs(a->j[3].com[0] - cx) < 1e-15 && fabs(a->j[3].com[1] - cy) < 1e-15 &&
                fabs(a->j[3].com[2] - cz) < 1e-15);
    /* izz about the new COM: link 5's own izz moved by the parallel-axis theorem, the fingers'
     * 1e-6 each plus m d^2 in the x-y plane */
    double d5 = pow(4.4206755e-02 - cx, 2) + pow(3.6839985e-07 - cy, 2);
    double df = pow(0.0817 - cx, 2) + pow(0.031 - cy, 2),
           dg = pow(0.0817 - cx, 2) + pow(0.031 + cy, 2);
    double izz = 9.3127351e-05 + M_LINK5 * d5 + 2e-6 + M_FINGER * (df + dg);
    assert_true(fabs(a->j[3].inertia[5] - izz) < 1e-18);
    /* every link that moves is in the model: total mass conserved, link 1 stays with the base */
    double total = 0;
    for (int i = 0; i < 4; i++) total += a->j[i].mass;
    assert_true(fabs(total - (M_LINK2 + M_LINK3 + M_LINK4 + M_LINK5 + 2 * M_FINGER)) < 1e-16);
    int not_moving = 0;
    for (int i = 0; i < a->n_lumped; i++) not_moving += a->lumped[i].how == URDF_NOT_MOVING;
    assert_int_equal(not_moving, 2); /* world, link1 */
    /* the tool frame: end_effector_link 0.126 m along x of link 5 */
    assert_true(a->tool.xyz[0] == 0.126 && a->tool.xyz[1] == 0 && a->tool.rpy[2] == 0);
    /* the INI says what was lumped, at which position */
    assert_non_null(strstr(im.ini, ";   link 'gripper_left_link' 0.001 kg, prismatic joint "
                                   "'gripper_left_joint' at 0.01 m (--at)\n"));
    assert_non_null(strstr(im.ini, ";   link 'gripper_right_link' 0.001 kg, prismatic joint "
                                   "'gripper_right_joint' at 0.01 m (its <mimic> rule)\n"));
    assert_non_null(strstr(im.ini, ";   tool_xyz = 0.126 0 0\n"));
    imported_free(&im);
}

/* Without --tip the three leaves are named; the gripper beyond its travel is refused. */
static void test_tip_and_at_checked(void **state)
{
    (void)state;
    imported im;
    urdf_error err;
    int rc;
    import_omx(&im, NULL, GRIP_OPEN, &err, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err.msg, "armurdf: open_manipulator_x.urdf: 3 leaf links below 'world': "
                                 "'gripper_left_link', 'gripper_right_link', "
                                 "'end_effector_link'; choose the end of the arm with --tip LINK");
    import_omx(&im, "end_effector_link", 0.03, &err, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(err.msg, "open_manipulator_x.urdf:165: <joint name=\"gripper_left_joint\"> "
                                 "<limit>: position 0.03 m (--at) is outside the limits [-0.011, "
                                 "0.02]; choose another with --at");
}

/* The written sections load; the example carries the same model and URDF limits. */
static void test_ini_and_example(void **state)
{
    (void)state;
    imported im;
    import_omx_ok(&im);
    char *ini = complete_ini(im.ini, "tool_xyz = 0.126 0 0\n");
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load_string(ini, "omx.ini", &cfg, &rep);
    if (errors || rep.n_warnings) cfg_report_print(&rep, stderr);
    assert_int_equal(errors, 0);
    assert_int_equal(rep.n_warnings, 0);
    cfg_report_free(&rep);
    free(ini);
    assert_int_equal(cfg.n_joints, 4);

    char path[512];
    snprintf(path, sizeof path, "%s/config/examples/open_manipulator_x.ini", root);
    cfg_report_init(&rep);
    errors = cfg_load(path, &example, &rep);
    if (errors || rep.n_warnings) cfg_report_print(&rep, stderr);
    assert_int_equal(errors, 0);
    cfg_report_free(&rep);
    assert_int_equal(example.n_joints, 4);
    assert_true(memcmp(example.model.tool_xyz, cfg.model.tool_xyz, sizeof cfg.model.tool_xyz) == 0);
    for (int i = 0; i < 4; i++) {
        const dyn_joint_desc *e = &example.model.joint[i], *g = &cfg.model.joint[i];
        assert_string_equal(example.joint[i].name, cfg.joint[i].name);
        assert_int_equal(e->type, g->type);
        assert_int_equal(e->form, DYN_URDF);
        assert_true(memcmp(e->origin_xyz, g->origin_xyz, sizeof e->origin_xyz) == 0);
        assert_true(memcmp(e->origin_rpy, g->origin_rpy, sizeof e->origin_rpy) == 0);
        assert_true(memcmp(e->axis, g->axis, sizeof e->axis) == 0);
        assert_true(e->mass == g->mass && e->viscous == g->viscous);
        assert_true(memcmp(e->com, g->com, sizeof e->com) == 0);
        assert_true(memcmp(e->inertia, g->inertia, sizeof e->inertia) == 0);
        assert_true(example.joint[i].lower == cfg.joint[i].lower &&
                    example.joint[i].upper == cfg.joint[i].upper &&
                    example.joint[i].velocity == cfg.joint[i].velocity);
        /* ROBOTIS's effort 1000 is no limit of an XM430-W350 (stall 4.1 N m): the example's
         * torque is the servo's */
        assert_true(example.joint[i].torque < 4.1);
        assert_int_equal(example.joint[i].id[0], 11 + i);
    }
    assert_int_equal(example.driver.type, DRIVER_DXL2);
    assert_int_equal(example.driver.baud, 1000000);
    imported_free(&im);
}

/* Every number armurdf writes, comments included, reads back as the URDF's double: the lumped
 * links' masses and --at positions in the comments too. */
static void test_numbers_round_trip(void **state)
{
    (void)state;
    imported im;
    import_omx_ok(&im);
    assert_non_null(strstr(im.ini, ";   link 'link1' 0.079119962 kg, fixed joint 'world_fixed'\n"));
    assert_non_null(strstr(im.ini, ";   link 'link5' 0.14327573 kg\n"));
    assert_non_null(strstr(im.ini, "prismatic joint 'gripper_left_joint' at 0.01 m (--at)\n"));
    /* the URDF's own 0.047433463999999995 (xacro's sum 0.018 + 0.029433464) is another double
     * than 0.047433464: it is written as is */
    assert_non_null(strstr(im.ini, "com = -0.0003018487 0.00054043684 0.047433463999999995\n"));
    static const double v[] = {0.1 + 0.2, 1.0 / 3, 0.047433464,
                               1000,      1e17,    123456789012.5,
                               -2.5e-7,   5e-324,  1.7976931348623157e308,
                               -0.0};
    static const char *const want[] = {"0.30000000000000004",
                                       "0.3333333333333333",
                                       "0.047433464",
                                       "1000",
                                       "1e+17",
                                       "123456789012.5",
                                       "-2.5e-07",
                                       "5e-324",
                                       "1.7976931348623157e+308",
                                       "0"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char b[URDF_NUM_LEN];
        assert_string_equal(urdf_num(v[i], b), want[i]);
    }
    imported_free(&im);
}

/* effort="1000" (ROBOTIS's, the ROS tutorials') is flagged per joint, on stderr and in the
 * INI, with what to write instead; a real rating is not. */
static void test_effort_placeholder(void **state)
{
    (void)state;
    assert_true(urdf_effort_placeholder(1000) && urdf_effort_placeholder(1e4));
    assert_true(urdf_effort_placeholder(0));
    assert_false(urdf_effort_placeholder(4.1) || urdf_effort_placeholder(50) ||
                 urdf_effort_placeholder(1500) || urdf_effort_placeholder(100));
    imported im;
    import_omx_ok(&im);
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    assert_int_equal(urdf_warn_placeholders(f, im.r, &im.arm), 4);
    fclose(f);
    static const int line[] = {45, 75, 105, 135};
    for (int i = 0; i < 4; i++) {
        char want[256];
        snprintf(
            want, sizeof want,
            "open_manipulator_x.urdf:%d: warning: joint 'joint%d': <limit effort=\"1000\"> is a "
            "placeholder, not the actuator's limit; set torque in [joint joint%d] to the "
            "servo's stall torque from its data sheet [N m] (or less)\n",
            line[i], i + 1, i + 1);
        if (!strstr(text, want)) fail_msg("no line\n%s\nin\n%s", want, text);
    }
    assert_non_null(strstr(im.ini, "; torque: the URDF's effort limit is a placeholder"));
    free(text);
    imported_free(&im);
}

int main(int argc, char **argv)
{
    if (argc > 1) root = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_and_masses),   cmocka_unit_test(test_tip_and_at_checked),
        cmocka_unit_test(test_ini_and_example),    cmocka_unit_test(test_numbers_round_trip),
        cmocka_unit_test(test_effort_placeholder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
