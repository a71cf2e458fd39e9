/*
 * test_config_tool.c — the [tool NAME] section (config/cfg_tool.c): the OpenManipulator-X
 * example loads with its gripper and the bus budget counts it; every validation error comes at
 * its file:line with its section and key, non-finite and huge numbers are refused, one tool at
 * most (a second, in the file or a drop-in, names both), no joint's ID, no armlink; defaults;
 * cfg_compare calls every tool change a restart. argv[1] is the source root.
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
#include "drivers/drivers.h"

static const char *root = ".";
static armd_config cfg, cfg2; /* large: static */

/* A small valid arm with a gripper between its two joints; each case replaces one of its
 * lines. build() adds 4 lines to j1, so the [tool g] header is line 25 of the text, id line 26,
 * and so on in this order. */
static const char *const base[] = {"[arm]",
                                   "name = t",
                                   "rate_hz = 100",
                                   "[driver]",
                                   "type = dxl2",
                                   "port = /dev/null",
                                   "[joint j1]",
                                   "type = revolute",
                                   "dh = standard",
                                   "a = 0.1",
                                   "alpha = 0",
                                   "d = 0",
                                   "theta = 0",
                                   "mass = 1",
                                   "inertia = 0.01 0 0 0.01 0 0.01",
                                   "lower = -1",
                                   "upper = 1",
                                   "velocity = 2",
                                   "acceleration = 5",
                                   "torque = 10",
                                   "[tool g]",
                                   "id = 7",
                                   "zero_offset = pi",
                                   "opening_at_zero = 0.02",
                                   "m_per_rad = -0.03",
                                   "torque_per_amp = 1.78",
                                   "lower = 0.02",
                                   "upper = 0.075",
                                   "velocity = 0.1",
                                   "max_force = 20",
                                   "[joint j2]",
                                   "type = revolute",
                                   "dh = standard",
                                   "a = 0.1",
                                   "alpha = 0",
                                   "d = 0",
                                   "theta = 0",
                                   "mass = 1",
                                   "inertia = 0.01 0 0 0.01 0 0.01",
                                   "lower = -1",
                                   "upper = 1",
                                   "velocity = 2",
                                   "acceleration = 5",
                                   "torque = 10",
                                   "kp = 100",
                                   "kd = 20",
                                   "id = 2",
                                   "torque_per_amp = 1"};
#define N_BASE (sizeof(base) / sizeof(base[0]))

/* base with the line equal to from replaced by to (NULL: none); j1's missing gains and ID are
 * added to its last line. Returns malloc'd text. */
static char *build(const char *from, const char *to)
{
    size_t cap = 8192;
    char *t = calloc(1, cap);
    assert_non_null(t);
    for (size_t i = 0; i < N_BASE; i++) {
        const char *line = base[i];
        if (from && strcmp(line, from) == 0) line = to;
        strncat(t, line, cap - strlen(t) - 80);
        if (i == 19) strcat(t, "\nkp = 100\nkd = 20\nid = 1\ntorque_per_amp = 1");
        strcat(t, "\n");
    }
    return t;
}

/* Loads text as "t.ini" into c; returns the error count, the report in rep. */
static int load(const char *text, armd_config *c, cfg_report *rep)
{
    cfg_report_init(rep);
    return cfg_load_string(text, "t.ini", c, rep);
}

/* The line of base (1-based, after build's 4 added lines) of the [tool g] key. */
static int tool_line(const char *key)
{
    for (size_t i = 20; i < N_BASE; i++)
        if (strncmp(base[i], key, strlen(key)) == 0 && base[i][strlen(key)] == ' ')
            return (int)i + 1 + 4;
    return -1;
}

static void test_base_is_valid(void **state)
{
    (void)state;
    char *t = build(NULL, NULL);
    cfg_report rep;
    int errors = load(t, &cfg, &rep);
    if (errors || rep.n_lines) cfg_report_print(&rep, stderr);
    assert_int_equal(errors, 0);
    assert_int_equal(rep.n_lines, 0);
    const cfg_tool *g = &cfg.tool;
    assert_true(g->present);
    assert_string_equal(g->name, "g");
    assert_int_equal(g->id, 7);
    assert_true(g->zero_offset == M_PI && g->m_per_rad == -0.03 && g->upper == 0.075);
    /* the defaults: speed min(0.05, velocity), force max_force / 2, and the fixed ones */
    assert_true(g->speed == 0.05 && g->force == 10);
    assert_true(g->counts_per_rev == 4096 && g->tolerance == 0.001 && g->epsilon == 0.005 &&
                g->timeout == 5);
    assert_int_equal(tool_line("id"), 26);
    cfg_report_free(&rep);
    free(t);
    /* a slower tool: speed follows velocity down */
    t = build("velocity = 0.1", "velocity = 0.02");
    assert_int_equal(load(t, &cfg, &rep), 0);
    assert_true(cfg.tool.speed == 0.02);
    cfg_report_free(&rep);
    free(t);
    /* no section: no tool */
    t = build("[tool g]", "[joint j3]");
    assert_true(load(t, &cfg, &rep) > 0); /* j3 is no joint; only "present" matters */
    assert_false(cfg.tool.present);
    cfg_report_free(&rep);
    free(t);
}

typedef struct {
    const char *from, *to;
    const char *expect; /* the first message line (its start, when prefix) */
    int errors;         /* and how many there are */
    bool prefix;
} error_case;

static void test_each_error_message(void **state)
{
    (void)state;
    const error_case cases[] = {
        {"id = 7", "", "t.ini:25: [tool g] id: missing required key", 1, false},
        {"id = 7", "id = 1",
         "t.ini:26: [tool g] id: servo ID 1 is already used by joint 'j1'; the tool needs a servo "
         "of its own",
         1, false},
        {"id = 7", "id = 2",
         "t.ini:26: [tool g] id: servo ID 2 is already used by joint 'j2'; the tool needs a servo "
         "of its own",
         1, false},
        {"id = 7", "id = 253", "t.ini:26: [tool g] id: 253 is out of range: must be 0 to 252", 1,
         false},
        {"id = 7", "id = 2.5", "t.ini:26: [tool g] id: expected an integer, got '2.5'", 1, false},
        {"type = dxl2", "type = armlink",
         "t.ini:25: [tool g]: [driver] type = armlink (t.ini:5) has no tool servo: the armlink "
         "protocol carries joints only; a tool needs type = dxl2",
         1, false},
        {"zero_offset = pi", "zero_offset = pie",
         "t.ini:27: [tool g] zero_offset: expected a number, got 'pie'", 1, false},
        {"zero_offset = pi", "zero_offset = 1e308*pi",
         "t.ini:27: [tool g] zero_offset: expected a number, got '1e308*pi'", 1, false},
        {"opening_at_zero = 0.02", "opening_at_zero = nan",
         "t.ini:28: [tool g] opening_at_zero: expected a number, got 'nan'", 1, false},
        {"opening_at_zero = 0.02", "opening_at_zero = -NaN",
         "t.ini:28: [tool g] opening_at_zero: expected a number, got '-NaN'", 1, false},
        {"m_per_rad = -0.03", "m_per_rad = 0",
         "t.ini:29: [tool g] m_per_rad: must not be 0: it is how much the opening changes per rad "
         "the shaft turns (negative when the fingers close as the shaft angle grows)",
         1, false},
        {"m_per_rad = -0.03", "m_per_rad = -0.0", "t.ini:29: [tool g] m_per_rad: must not be 0", 1,
         true},
        {"m_per_rad = -0.03", "m_per_rad = inf",
         "t.ini:29: [tool g] m_per_rad: expected a number, got 'inf'", 1, false},
        {"m_per_rad = -0.03", "m_per_rad = 1e300",
         "t.ini:29: [tool g] m_per_rad: 1e300 is out of range: must be -100 to 100 m/rad", 1,
         false},
        /* 1e-8 m/rad puts the open end 5.5e6 rad (8.7e5 turns) away: no Goal Position */
        {"m_per_rad = -0.03", "m_per_rad = -1e-8",
         "t.ini:32: [tool g] upper: 0.075 m is shaft angle -5.5e+06 rad (-3.585e+09 counts), "
         "beyond the servo's Goal Position range of +-1048575 counts (256 turns); check "
         "m_per_rad (-1e-08 m/rad) and opening_at_zero (0.02 m)",
         1, false},
        {"torque_per_amp = 1.78", "torque_per_amp = 0",
         "t.ini:30: [tool g] torque_per_amp: 0 is out of range: must be > 0 and <= 10000 N m/A", 1,
         false},
        {"lower = 0.02", "lower = -0.01",
         "t.ini:31: [tool g] lower: -0.01 is out of range: must be 0 to 100 m", 1, false},
        {"upper = 0.075", "upper = 0.02",
         "t.ini:32: [tool g] upper: 0.02 m must be above lower (0.02 m)", 1, false},
        {"upper = 0.075", "upper = +inf", "t.ini:32: [tool g] upper: expected a number, got '+inf'",
         1, false},
        {"velocity = 0.1", "velocity = 0",
         "t.ini:33: [tool g] velocity: 0 is out of range: must be > 0 and <= 100 m/s", 1, false},
        {"velocity = 0.1", "velocity = 0.1\nspeed = 0.2",
         "t.ini:34: [tool g] speed: 0.2 m/s is above velocity (0.1 m/s), the largest speed "
         "accepted",
         1, false},
        {"velocity = 0.1", "velocity = 0.1\nspeed = nan",
         "t.ini:34: [tool g] speed: expected a number, got 'nan'", 1, false},
        {"max_force = 20", "max_force = 20\nforce = 20.5",
         "t.ini:35: [tool g] force: 20.5 N is above max_force (20 N), the largest force accepted",
         1, false},
        {"max_force = 20", "max_force = 20\nforce = 1e400",
         "t.ini:35: [tool g] force: expected a number, got '1e400'", 1, false},
        {"max_force = 20", "max_force = 1e7",
         "t.ini:34: [tool g] max_force: 1e7 is out of range: must be > 0 and <= 1e+06 N", 1, false},
        /* 1e4 N x 0.03 m/rad / 1.78 N m/A = 168.5 A, beyond Goal Current's 88.1 A */
        {"max_force = 20", "max_force = 1e4",
         "t.ini:34: [tool g] max_force: 10000 N needs 168.5 A at torque_per_amp = 1.78 N m/A and "
         "m_per_rad = -0.03 m/rad; Dynamixel Goal Current reaches only 88.1 A (32767 x 2.69 mA)",
         1, false},
        {"max_force = 20", "max_force = 20\ntolerance = 0",
         "t.ini:35: [tool g] tolerance: 0 is out of range: must be > 0 and <= 10 m", 1, false},
        {"max_force = 20", "max_force = 20\nepsilon = -0.001",
         "t.ini:35: [tool g] epsilon: -0.001 is out of range: must be 0 to 10 m", 1, false},
        {"max_force = 20", "max_force = 20\ntimeout = inf",
         "t.ini:35: [tool g] timeout: expected a number, got 'inf'", 1, false},
        {"max_force = 20", "max_force = 20\ntimeout = 1e9",
         "t.ini:35: [tool g] timeout: 1e9 is out of range: must be > 0 and <= 3600 s", 1, false},
        {"max_force = 20", "max_force = 20\nforse = 3",
         "t.ini:35: [tool g] forse: unknown key 'forse'; did you mean 'force'?", 1, false},
        {"rate_hz = 100", "rate_hz = 100\nm_per_rad = 1",
         "t.ini:4: [arm] m_per_rad: unknown key 'm_per_rad' here; it belongs in [tool NAME]", 1,
         false},
        /* a header without a name or with a misspelt kind: its keys are skipped, not echoed */
        {"[tool g]", "[tool]", "t.ini:25: [tool]: a tool section needs a name: [tool NAME]", 1,
         false},
        {"[tool g]", "[tol g]", "t.ini:25: [tol g]: unknown section; did you mean [tool g]?", 1,
         false},
        {"[tool g]", "[tool g!]",
         "t.ini:25: [tool g!]: tool name 'g!' must be 1 to 63 letters, digits, '_', '-' or '.'", 1,
         false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const error_case *k = &cases[i];
        char *t = build(k->from, k->to);
        cfg_report rep;
        int errors = load(t, &cfg, &rep);
        if (errors != k->errors || rep.n_lines != k->errors) {
            fprintf(stderr, "case %zu (%s):\n", i, k->expect);
            cfg_report_print(&rep, stderr);
        }
        assert_int_equal(errors, k->errors);
        assert_int_equal(rep.n_lines, k->errors);
        if (k->prefix)
            assert_int_equal(strncmp(rep.lines[0], k->expect, strlen(k->expect)), 0);
        else
            assert_string_equal(rep.lines[0], k->expect);
        cfg_report_free(&rep);
        free(t);
    }
    assert_int_equal(tool_line("max_force"), 34); /* the numbers above */
}

/* zero_offset takes the joints' pi forms. */
static void test_zero_offset_pi(void **state)
{
    (void)state;
    static const char *const forms[] = {"pi", "-pi/2", "0.5*pi", "3*pi/4", "1.5"};
    const double want[] = {M_PI, -M_PI / 2, 0.5 * M_PI, 3 * M_PI / 4, 1.5};
    for (int i = 0; i < 5; i++) {
        char to[64];
        snprintf(to, sizeof to, "zero_offset = %s", forms[i]);
        char *t = build("zero_offset = pi", to);
        cfg_report rep;
        assert_int_equal(load(t, &cfg, &rep), 0);
        assert_true(fabs(cfg.tool.zero_offset - want[i]) < 1e-15);
        cfg_report_free(&rep);
        free(t);
    }
}

/* One tool: a second name is an error at its header naming the first; the same name twice in a
 * file is a duplicate section. */
static void test_second_tool(void **state)
{
    (void)state;
    char *t = build("torque_per_amp = 1", "torque_per_amp = 1\n[tool h]\nid = 9");
    cfg_report rep;
    assert_int_equal(load(t, &cfg, &rep), 1);
    assert_string_equal(rep.lines[0], "t.ini:53: [tool h]: a second tool section: armd drives one "
                                      "tool, and [tool g] is at t.ini:25; remove one of them");
    assert_string_equal(cfg.tool.name, "g"); /* the first in the file */
    cfg_report_free(&rep);
    free(t);
    t = build("max_force = 20", "max_force = 20\n[tool g]\nforce = 3");
    assert_int_equal(load(t, &cfg, &rep), 1);
    assert_string_equal(rep.lines[0], "t.ini:35: [tool g]: duplicate section (first at line 25)");
    cfg_report_free(&rep);
    free(t);
}

/* Writes text to dir/name. */
static void write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A drop-in may change the tool of the main file; one with another name is a second tool. */
static void test_dropin_tool(void **state)
{
    (void)state;
    char dir[] = "/tmp/armd-test-tool-XXXXXX", path[600], sub[600], bad[700], expect[2048];
    assert_non_null(mkdtemp(dir));
    char *t = build(NULL, NULL);
    write_file(dir, "arm.ini", t);
    free(t);
    snprintf(path, sizeof path, "%s/arm.ini", dir);
    snprintf(sub, sizeof sub, "%s/arm.d", dir);
    snprintf(bad, sizeof bad, "%s/20-hand.ini", sub);
    assert_int_equal(mkdir(sub, 0700), 0);
    write_file(sub, "10-force.ini", "[tool g]\nforce = 4\n");
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(path, &cfg, &rep), 0);
    assert_true(cfg.tool.force == 4 && cfg.tool.max_force == 20);
    cfg_report_free(&rep);
    write_file(sub, "20-hand.ini", "; another gripper\n[tool hand]\nid = 9\n");
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(path, &cfg, &rep), 1);
    snprintf(expect, sizeof expect,
             "%s:2: [tool hand]: a second tool section: armd drives one tool, and [tool g] is at "
             "%s:25; remove one of them",
             bad, path);
    assert_string_equal(rep.lines[0], expect);
    cfg_report_free(&rep);
    unlink(bad);
    snprintf(bad, sizeof bad, "%s/10-force.ini", sub);
    unlink(bad);
    rmdir(sub);
    unlink(path);
    rmdir(dir);
}

/* Is item (a whole "[section] key" entry) in the comma-separated list? */
static bool listed(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = strstr(list, item); p; p = strstr(p + 1, item))
        if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ',')) return true;
    return false;
}

/* Every tool key is a restart key, and so are adding, removing and renaming the tool. */
static void test_compare_tool(void **state)
{
    (void)state;
    char live[4096], restart[4096];
    cfg_report rep;
    char *t = build(NULL, NULL);
    assert_int_equal(load(t, &cfg, &rep), 0);
    cfg_report_free(&rep);
    free(t);
    static const char *const from[] = {"id = 7", "zero_offset = pi", "m_per_rad = -0.03",
                                       "upper = 0.075", "max_force = 20"};
    static const char *const to[] = {"id = 8", "zero_offset = 0", "m_per_rad = 0.03",
                                     "upper = 0.07", "max_force = 20\nforce = 3\ntimeout = 2"};
    static const char *const want[] = {"[tool g] id", "[tool g] zero_offset", "[tool g] m_per_rad",
                                       "[tool g] upper", "[tool g] force"};
    for (int i = 0; i < 5; i++) {
        t = build(from[i], to[i]);
        int errors = load(t, &cfg2, &rep);
        if (errors) cfg_report_print(&rep, stderr);
        assert_int_equal(errors, 0);
        assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof live, restart, sizeof restart), 1);
        assert_string_equal(live, "");
        assert_true(listed(restart, want[i]));
        cfg_report_free(&rep);
        free(t);
    }
    assert_true(listed(restart, "[tool g] timeout"));
    /* removed, added, renamed */
    cfg2 = cfg;
    cfg2.tool.present = false;
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof live, restart, sizeof restart), 1);
    assert_true(listed(restart, "[tool g] (removed)"));
    assert_int_equal(cfg_compare(&cfg2, &cfg, live, sizeof live, restart, sizeof restart), 1);
    assert_string_equal(restart, "[tool g] (added)");
    cfg2 = cfg;
    snprintf(cfg2.tool.name, sizeof cfg2.tool.name, "hand");
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof live, restart, sizeof restart), 1);
    assert_string_equal(restart, "[tool g] (removed), [tool hand] (added)");
    assert_int_equal(cfg_compare(&cfg, &cfg, live, sizeof live, restart, sizeof restart), 0);
}

/* The OpenManipulator-X example: its gripper as the contract gives it (ROBOTIS's figures), no
 * warnings, and the bus budget with the tool's reply and the Bulk Write. */
static void test_omx_example(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/config/examples/open_manipulator_x.ini", root);
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, &cfg, &rep);
    if (errors || rep.n_lines) cfg_report_print(&rep, stderr);
    assert_int_equal(errors, 0);
    assert_int_equal(rep.n_warnings, 0);
    cfg_report_free(&rep);
    const cfg_tool *g = &cfg.tool;
    assert_true(g->present);
    assert_string_equal(g->name, "gripper");
    assert_int_equal(g->id, 15);
    assert_true(g->zero_offset == M_PI && g->opening_at_zero == 0.042 && g->m_per_rad == -0.030);
    assert_true(g->lower == 0.020 && g->upper == 0.075 && g->torque_per_amp == 1.78);
    assert_true(g->velocity == 0.1 && g->speed == 0.05 && g->max_force == 20 && g->force == 10);
    assert_true(g->counts_per_rev == 4096 && g->tolerance == 0.001 && g->epsilon == 0.005 &&
                g->timeout == 5);
    /* 59 N per A; the stroke's ends at 2526 and 1331 counts, within one turn of the centre */
    assert_true(fabs(g->torque_per_amp / fabs(g->m_per_rad) - 59.33) < 0.01);
    double lo =
        (g->zero_offset + (g->lower - g->opening_at_zero) / g->m_per_rad) * 4096 / (2 * M_PI);
    double hi =
        (g->zero_offset + (g->upper - g->opening_at_zero) / g->m_per_rad) * 4096 / (2 * M_PI);
    assert_int_equal((int)lround(lo), 2526);
    assert_int_equal((int)lround(hi), 1331);
    /* bus: Sync Read 14 + 5 out, 5 x 21 back, Bulk Write 33 + 7 x 4: 185 bytes at 1 Mbps + 100 us;
     * without the tool 18 + 84 + 26 = 128 bytes */
    assert_true(fabs(drv_tick_bus_time_us(&cfg) - (1850 + DRV_TURNAROUND_US)) < 1e-9);
    cfg.tool.present = false;
    assert_true(fabs(drv_tick_bus_time_us(&cfg) - (1280 + DRV_TURNAROUND_US)) < 1e-9);
    cfg.tool.present = true;
    cfg.driver.fast_sync_read = true; /* 8 + 14 x 5 back, one return delay */
    cfg.driver.return_delay_us = 20;
    assert_true(fabs(drv_tick_bus_time_us(&cfg) - (10 * (19 + 78 + 61) + 20 + DRV_TURNAROUND_US)) <
                1e-9);
}

int main(int argc, char **argv)
{
    if (argc > 1) root = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_is_valid),  cmocka_unit_test(test_each_error_message),
        cmocka_unit_test(test_zero_offset_pi), cmocka_unit_test(test_second_tool),
        cmocka_unit_test(test_dropin_tool),    cmocka_unit_test(test_compare_tool),
        cmocka_unit_test(test_omx_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
