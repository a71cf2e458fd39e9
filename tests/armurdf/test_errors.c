/*
 * test_errors.c — every input armurdf refuses gives its documented one-line message with the
 * line of the element concerned (armurdf(1), tools/armurdf/armurdf.1.md). Each case edits lines of
 * one small valid URDF (a revolute joint, a fixed tool link, a prismatic finger) and names the
 * whole expected message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/armurdf/armurdf_support.h"

/* The valid URDF; line k + 1 is base[k] (a long line is one parenthesised literal). */
static const char *const base[] = {
    "<?xml version=\"1.0\"?>",
    "<robot name=\"r\">",
    "  <link name=\"base\"/>",
    "  <joint name=\"j1\" type=\"revolute\">",
    "    <parent link=\"base\"/>",
    "    <child link=\"l1\"/>",
    "    <origin xyz=\"0 0 0.1\" rpy=\"0 0 0\"/>",
    "    <axis xyz=\"0 0 1\"/>",
    "    <limit lower=\"-1\" upper=\"1\" effort=\"10\" velocity=\"2\"/>",
    "  </joint>",
    "  <link name=\"l1\">",
    "    <inertial>",
    "      <origin xyz=\"0 0 0.1\"/>",
    "      <mass value=\"1\"/>",
    "      <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/>",
    "    </inertial>",
    "  </link>",
    "  <joint name=\"j2\" type=\"fixed\"><parent link=\"l1\"/><child link=\"l2\"/></joint>",
    "  <link name=\"l2\"/>",
    ("  <joint name=\"f1\" type=\"prismatic\"><parent link=\"l1\"/><child link=\"finger\"/>"
     "<axis xyz=\"0 1 0\"/><limit lower=\"0\" upper=\"0.02\" effort=\"1\" velocity=\"1\"/>"
     "</joint>"),
    ("  <link name=\"finger\"><inertial><mass value=\"0.1\"/><inertia ixx=\"0\" ixy=\"0\" "
     "ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/></inertial></link>"),
    "</robot>",
};
#define N_BASE (int)(sizeof base / sizeof base[0])

/* Line 20 with the finger following joint target. */
#define FINGER_MIMIC(target)                                                                       \
    "  <joint name=\"f1\" type=\"prismatic\"><parent link=\"l1\"/><child link=\"finger\"/>"        \
    "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/><mimic joint=\"" target          \
    "\"/></joint>"

typedef struct {
    const char *what;
    int line[2];          /* lines to replace (1-based, 0 = none) ... */
    const char *text[2];  /* ... by these (one line each, so the numbering stays) */
    const char *opt_base; /* options (tip defaults to l2; "-" = no --tip) */
    const char *opt_tip;
    const char *at; /* "JOINT=VALUE" or NULL */
    const char *expect;
} err_case;

static const err_case cases[] = {
    {"floating chain joint",
     {4},
     {"  <joint name=\"j1\" type=\"floating\">"},
     NULL,
     NULL,
     NULL,
     "t.urdf:4: <joint name=\"j1\">: a floating joint (six degrees of freedom) cannot be a "
     "joint of the chain: armd models revolute, continuous and prismatic joints"},
    {"planar joint in a side branch",
     {20},
     {"  <joint name=\"f1\" type=\"planar\"><parent link=\"l1\"/><child link=\"finger\"/>"
      "</joint>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:20: <joint name=\"f1\">: a planar joint (three degrees of freedom) cannot be lumped "
     "into a link: armd models revolute, continuous and prismatic joints"},
    {"a link with two parents",
     {19},
     {"  <link name=\"l2\"/><joint name=\"j3\" type=\"fixed\"><parent link=\"base\"/>"
      "<child link=\"l1\"/></joint>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:19: <joint name=\"j3\">: link 'l1' already has the parent joint 'j1' (line 4): a "
     "link with two parents closes a loop, which a URDF tree and armd's serial chain cannot "
     "represent"},
    {"no root",
     {3},
     {"  <link name=\"base\"/><joint name=\"back\" type=\"fixed\"><parent link=\"l2\"/>"
      "<child link=\"base\"/></joint>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:3: <robot>: no root link: every link has a parent joint (a closed loop)"},
    {"a loop back to the base",
     {3},
     {"  <link name=\"base\"/><joint name=\"back\" type=\"fixed\"><parent link=\"l2\"/>"
      "<child link=\"base\"/></joint>"},
     "base",
     NULL,
     NULL,
     "t.urdf:3: <joint name=\"back\">: leads back to link 'base' (a closed loop)"},
    {"missing link",
     {6},
     {"    <child link=\"nope\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:6: <joint name=\"j1\"> <child>: no link named 'nope'"},
    {"NaN mass",
     {14},
     {"      <mass value=\"nan\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:14: <link name=\"l1\"> <inertial> <mass>: value: 'nan' is not a finite number"},
    {"infinite origin",
     {7},
     {"    <origin xyz=\"0 -inf 0.1\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:7: <joint name=\"j1\"> <origin>: xyz: '-inf' is not a finite number"},
    {"overflowing inertia",
     {15},
     {"      <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"1e999\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:15: <link name=\"l1\"> <inertial> <inertia>: izz: '1e999' is not a finite number"},
    {"two numbers for three",
     {8},
     {"    <axis xyz=\"0 1\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:8: <joint name=\"j1\"> <axis>: xyz: expected 3 numbers, got '0 1'"},
    {"not a number",
     {9},
     {"    <limit lower=\"-1\" upper=\"1x\" effort=\"10\" velocity=\"2\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:9: <joint name=\"j1\"> <limit>: upper: expected a number, got '1x'"},
    {"negative mass",
     {14},
     {"      <mass value=\"-1e-300\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:14: <link name=\"l1\"> <inertial> <mass>: value: -1e-300 kg is negative"},
    {"negative damping",
     {9},
     {"    <limit lower=\"-1\" upper=\"1\" effort=\"10\" velocity=\"2\"/><dynamics "
      "damping=\"-0.1\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:9: <joint name=\"j1\"> <dynamics>: damping: -0.1 is negative"},
    {"mimic on the chain",
     {8},
     {"    <axis xyz=\"0 0 1\"/><mimic joint=\"f1\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:8: <joint name=\"j1\"> <mimic>: the joint is on the chain and follows 'f1'; armd "
     "drives every chain joint on its own (choose another --tip, or remove the <mimic>)"},
    {"several leaves",
     {0},
     {NULL},
     NULL,
     "-",
     NULL,
     "armurdf: t.urdf: 2 leaf links below 'base': 'l2', 'finger'; choose the end of the arm "
     "with --tip LINK"},
    {"XML syntax",
     {17},
     {"  </lnk>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:17: not valid XML: mismatched tag"},
    {"entity declaration",
     {1},
     {"<?xml version=\"1.0\"?><!DOCTYPE robot [<!ENTITY boom \"x\">]>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:1: <!ENTITY>: entity 'boom': entity declarations are not supported in a URDF"},
    {"zero axis",
     {8},
     {"    <axis xyz=\"0 0 0\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:8: <joint name=\"j1\"> <axis>: xyz is zero: a revolute joint needs a direction"},
    {"lower not below upper",
     {9},
     {"    <limit lower=\"1\" upper=\"1\" effort=\"10\" velocity=\"2\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:9: <joint name=\"j1\"> <limit>: lower 1 is not below upper 1"},
    {"no limit",
     {9},
     {""},
     NULL,
     NULL,
     NULL,
     "t.urdf:4: <joint name=\"j1\">: a revolute joint needs <limit lower upper effort "
     "velocity>"},
    {"no effort",
     {9},
     {"    <limit lower=\"-1\" upper=\"1\" velocity=\"2\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:9: <joint name=\"j1\"> <limit>: needs effort and velocity"},
    {"--at on the chain",
     {0},
     {NULL},
     NULL,
     NULL,
     "j1=0.1",
     "armurdf: --at j1: the joint is on the chain that armd drives; --at places the joints of "
     "side branches, which are lumped"},
    {"--at unknown joint",
     {0},
     {NULL},
     NULL,
     NULL,
     "nope=1",
     "armurdf: --at nope: t.urdf has no joint of that name"},
    {"--at fixed joint",
     {0},
     {NULL},
     NULL,
     NULL,
     "j2=1",
     "armurdf: --at j2: a fixed joint has no position"},
    {"--at outside the limits",
     {0},
     {NULL},
     NULL,
     NULL,
     "f1=0.05",
     "t.urdf:20: <joint name=\"f1\"> <limit>: position 0.05 m (--at) is outside the limits "
     "[0, 0.02]; choose another with --at"},
    {"default position outside the limits",
     {20},
     {"  <joint name=\"f1\" type=\"prismatic\"><parent link=\"l1\"/><child link=\"finger\"/>"
      "<limit lower=\"0.01\" upper=\"0.02\" effort=\"1\" velocity=\"1\"/></joint>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:20: <joint name=\"f1\"> <limit>: position 0 m (the default) is outside the limits "
     "[0.01, 0.02]; choose another with --at"},
    {"--at of nothing lumped",
     {3},
     {"  <link name=\"base\"/><joint name=\"s\" type=\"revolute\"><parent link=\"base\"/>"
      "<child link=\"sl\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>"
      "<link name=\"sl\"/>"},
     NULL,
     NULL,
     "s=0.5",
     "armurdf: --at s: no lumped link depends on this joint (it is not in a side branch of the "
     "moving chain)"},
    {"--at of a mimic joint",
     {20},
     {FINGER_MIMIC("j9")},
     NULL,
     NULL,
     "f1=0.01",
     "armurdf: --at f1: the joint follows 'j9' (<mimic>, line 20); give --at j9=VALUE"},
    {"mimic of a missing joint",
     {20},
     {FINGER_MIMIC("j9")},
     NULL,
     NULL,
     NULL,
     "t.urdf:20: <joint name=\"f1\"> <mimic>: no joint named 'j9'"},
    {"side mimic of a chain joint",
     {20},
     {FINGER_MIMIC("j1")},
     NULL,
     NULL,
     NULL,
     "t.urdf:20: <joint name=\"f1\"> <mimic>: follows the chain joint 'j1', so it moves with "
     "the arm and cannot be lumped at one position"},
    {"a loop of mimic rules",
     {20},
     {FINGER_MIMIC("f1")},
     NULL,
     NULL,
     NULL,
     "t.urdf:20: <joint name=\"f1\"> <mimic>: 'f1' is part of a loop of mimic rules"},
    {"a name armd cannot take",
     {4},
     {"  <joint name=\"arm/j1\" type=\"revolute\">"},
     NULL,
     NULL,
     NULL,
     "t.urdf:4: <joint name=\"arm/j1\">: an armd joint name is 1 to 63 of A-Z a-z 0-9 _ - . "
     "(rename the joint in the URDF)"},
    {"root element",
     {2, 22},
     {"<robt name=\"r\">", "</robt>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:2: <robt>: the root element must be <robot>"},
    {"a link defined twice",
     {19},
     {"  <link name=\"l1\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:19: <link name=\"l1\">: defined twice (first at line 11)"},
    {"no moving joint",
     {4},
     {"  <joint name=\"j1\" type=\"fixed\">"},
     NULL,
     NULL,
     NULL,
     "armurdf: t.urdf: no moving joint between the base 'base' and the tip 'l2'"},
    {"unknown --base",
     {0},
     {NULL},
     "nope",
     NULL,
     NULL,
     "armurdf: --base nope: t.urdf has no link of that name"},
    {"tip not below the base",
     {0},
     {NULL},
     "l1",
     "base",
     NULL,
     "armurdf: --tip base: the link is not below the base 'l1'"},
    {"tip is the base",
     {0},
     {NULL},
     "l1",
     "l1",
     NULL,
     "armurdf: --tip l1: the tip is the base: no joints between them"},
    {"inertial without mass",
     {14},
     {""},
     NULL,
     NULL,
     NULL,
     "t.urdf:12: <link name=\"l1\"> <inertial>: needs <mass> and <inertia>"},
    {"inertia attribute missing",
     {15},
     {"      <inertia ixx=\"0.01\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:15: <link name=\"l1\"> <inertial> <inertia>: needs the attribute ixy [kg m^2] (ixx "
     "ixy ixz iyy iyz izz)"},
    {"unknown joint type",
     {4},
     {"  <joint name=\"j1\" type=\"ball\">"},
     NULL,
     NULL,
     NULL,
     "t.urdf:4: <joint name=\"j1\">: type 'ball' is not a URDF joint type (revolute, "
     "continuous, prismatic, fixed, floating, planar)"},
    {"joint without parent",
     {5},
     {""},
     NULL,
     NULL,
     NULL,
     "t.urdf:4: <joint name=\"j1\">: needs <parent link=\"...\"/> and <child link=\"...\"/>"},
    {"two origins",
     {7},
     {"    <origin xyz=\"0 0 0.1\"/><origin xyz=\"0 0 0\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:7: <joint name=\"j1\"> <origin>: appears twice in one <joint> (first at line 7)"},
    {"control character in a name",
     {19},
     {"  <link name=\"l&#9;2\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:19: <link>: name contains a control character (a tab, a line break, ...)"},
    {"empty name",
     {19},
     {"  <link name=\"\"/>"},
     NULL,
     NULL,
     NULL,
     "t.urdf:19: <link>: needs a non-empty name attribute"},
};

/* The base URDF with a case's lines replaced. */
static char *edited(const err_case *c)
{
    char *out;
    size_t n;
    FILE *f = open_memstream(&out, &n);
    assert_non_null(f);
    for (int i = 0; i < N_BASE; i++) {
        const char *line = base[i];
        for (int e = 0; e < 2; e++)
            if (c->line[e] == i + 1) line = c->text[e];
        fprintf(f, "%s\n", line);
    }
    fclose(f);
    return out;
}

/* Imports text with a case's options; returns the message ("" = imported). */
static void run_case(const err_case *c, char *msg, size_t len)
{
    char *text = edited(c), at_arg[64];
    urdf_at at;
    urdf_error err;
    urdf_options opt = {.base = c->opt_base, .tip = "l2"};
    if (c->opt_tip) opt.tip = strcmp(c->opt_tip, "-") == 0 ? NULL : c->opt_tip;
    if (c->at) {
        snprintf(at_arg, sizeof at_arg, "%s", c->at);
        assert_int_equal(urdf_at_parse(at_arg, &at, &err), 0);
        opt.at = &at;
        opt.n_at = 1;
    }
    imported im;
    msg[0] = 0;
    if (import_text(text, strlen(text), "t.urdf", &opt, &im, &err))
        snprintf(msg, len, "%s", err.msg);
    else
        imported_free(&im);
    free(text);
}

/* The unedited URDF imports (so each refusal below is the edit's). */
static void test_valid_base(void **state)
{
    (void)state;
    err_case none = {"valid", {0}, {NULL}, NULL, NULL, "f1=0.01", NULL};
    char msg[1024];
    run_case(&none, msg, sizeof msg);
    assert_string_equal(msg, "");
}

/* Every case gives exactly its message; all mismatches are listed. */
static void test_each_refusal(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char msg[1024];
        run_case(&cases[i], msg, sizeof msg);
        if (strcmp(msg, cases[i].expect) != 0) {
            print_error("%s:\n  expected: %s\n  got:      %s\n", cases[i].what, cases[i].expect,
                        msg[0] ? msg : "(imported)");
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* --at arguments that are not JOINT=VALUE. */
static void test_at_syntax(void **state)
{
    (void)state;
    static const char *const args[][2] = {
        {"f1", "armurdf: --at f1: expected JOINT=VALUE (rad or m)"},
        {"=1", "armurdf: --at =1: expected JOINT=VALUE (rad or m)"},
        {"f1=", "armurdf: --at f1=: '' is not a finite number"},
        {"f1=nan", "armurdf: --at f1=nan: 'nan' is not a finite number"},
        {"f1=1e999", "armurdf: --at f1=1e999: '1e999' is not a finite number"},
        {"f1=0.1x", "armurdf: --at f1=0.1x: '0.1x' is not a finite number"},
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        char arg[64];
        urdf_at at;
        urdf_error err;
        snprintf(arg, sizeof arg, "%s", args[i][0]);
        assert_int_equal(urdf_at_parse(arg, &at, &err), -1);
        assert_string_equal(err.msg, args[i][1]);
    }
}

/* 65 moving joints: one more than armd drives. */
static void test_too_many_joints(void **state)
{
    (void)state;
    char *text;
    size_t n;
    FILE *f = open_memstream(&text, &n);
    fprintf(f, "<robot name=\"long\">\n<link name=\"l0\"/>\n");
    for (int i = 1; i <= 65; i++)
        fprintf(f,
                "<link name=\"l%d\"/><joint name=\"j%d\" type=\"continuous\"><parent "
                "link=\"l%d\"/><child link=\"l%d\"/></joint>\n",
                i, i, i - 1, i);
    fprintf(f, "</robot>\n");
    fclose(f);
    imported im;
    urdf_error err;
    urdf_options opt = {0};
    assert_int_equal(import_text(text, n, "long.urdf", &opt, &im, &err), -1);
    assert_string_equal(err.msg, "long.urdf:67: <joint name=\"j65\">: more than 64 moving joints "
                                 "between base and tip; armd drives at most 64");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_base),
        cmocka_unit_test(test_each_refusal),
        cmocka_unit_test(test_at_syntax),
        cmocka_unit_test(test_too_many_joints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
