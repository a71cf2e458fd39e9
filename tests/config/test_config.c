/*
 * test_config.c — the INI loader on written text: each kind of error gives exactly its line,
 * several errors are all reported, drop-ins override and are named in messages, cfg_compare tells
 * live from restart changes, and the collision and flex keys are read and checked. The example
 * files are test_config_examples.c's.
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

static armd_config cfg, cfg2; /* large: static */

/* A small valid file; each error case replaces one of its lines. */
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
                                   "com = 0.05 0 0",
                                   "inertia = 0.01 0 0 0.01 0 0.01",
                                   "lower = -1",
                                   "upper = 1",
                                   "velocity = 2",
                                   "acceleration = 5",
                                   "torque = 10",
                                   "kp = 100",
                                   "kd = 20",
                                   "id = 1",
                                   "torque_per_amp = 1"};
#define N_BASE (sizeof(base) / sizeof(base[0]))

/* base with each line equal to from[k] replaced by to[k] (k < n); returns malloc'd text */
static char *build(int n, const char *const *from, const char *const *to)
{
    size_t cap = 8192;
    char *t = calloc(1, cap);
    assert_non_null(t);
    for (size_t i = 0; i < N_BASE; i++) {
        const char *line = base[i];
        for (int k = 0; k < n; k++)
            if (strcmp(line, from[k]) == 0) line = to[k];
        strncat(t, line, cap - strlen(t) - 2);
        strcat(t, "\n");
    }
    return t;
}

static void test_base_is_valid(void **state)
{
    (void)state;
    char *t = build(0, NULL, NULL);
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load_string(t, "t.ini", &cfg, &rep), 0);
    assert_int_equal(rep.n_lines, 0);
    assert_true(cfg.socket.stall_timeout == 2 && cfg.socket.idle_timeout == 300); /* defaults */
    free(t);
    cfg_report_free(&rep);
}

typedef struct {
    const char *from, *to;
    const char *expect; /* the whole line (or its start, when prefix) */
    int errors, warnings;
    bool prefix;
} error_case;

static void test_each_error_message(void **state)
{
    (void)state;
    static char longline[300];
    memset(longline, 'x', sizeof(longline) - 1);
    longline[0] = ';';
    const error_case cases[] = {
        {"port = /dev/null", "port = /dev/null\n[drivre]",
         "t.ini:7: [drivre]: unknown section; did you mean [driver]?", 1, 0, false},
        {"torque_per_amp = 1", "torque_per_amp = 1\nkd_gain = 3",
         "t.ini:26: [joint j1] kd_gain: unknown key 'kd_gain'; did you mean 'kd'?", 1, 0, false},
        {"theta = 0", "theta = 0\nrate_hz = 1",
         "t.ini:14: [joint j1] rate_hz: unknown key 'rate_hz' here; it belongs in [arm]", 1, 0,
         false},
        {"mass = 1", "", "t.ini:7: [joint j1] mass: missing required key", 1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[socket]\nstall_timeout = 0",
         "t.ini:8: [socket] stall_timeout: 0 is out of range: must be 0.1 to 600 s", 1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[socket]\nidle_timeout = nan",
         "t.ini:8: [socket] idle_timeout: expected a number, got 'nan'", 1, 0, false},
        {"mass = 1", "mass = abc", "t.ini:14: [joint j1] mass: expected a number, got 'abc'", 1, 0,
         false},
        {"rate_hz = 100", "rate_hz = 5000",
         "t.ini:3: [arm] rate_hz: 5000 is out of range: must be 60 to 4000 Hz", 1, 0, false},
        /* what the arm and its sampled loop can do (config/feasible.h) */
        {"kd = 20", "kd = 250",
         "t.ini:23: [joint j1] kd: kd dt = 250 x 0.01 s = 2.5 must be below 2 (the sampled loop's "
         "stability bound kd dt < 2; kd below 200 at this rate)",
         1, 0, false},
        {"kp = 100", "kp = 5000",
         "t.ini:22: [joint j1] kp: kp dt = 5000 x 0.01 s = 50 must be below 2 kd = 40", 1, 0, true},
        {"kd = 20", "kd = 20\nki = 5", "t.ini:24: [joint j1] ki: ki = 5 needs i_limit > 0", 1, 0,
         true},
        {"kd = 20", "kd = 20\ndamping = 7",
         "t.ini:24: [joint j1] damping: damping dt = 7 x 0.01 s = 0.07 must be below 2 x its "
         "inertia (at least 0.0325,",
         1, 0, true},
        {"port = /dev/null", "port = /dev/null\n[safety]\ndamping = 7",
         "t.ini:8: [safety] damping: joint j1: damping dt = 7 x 0.01 s = 0.07 must be below", 1, 0,
         true},
        {"rate_hz = 100", "rate_hz = 100\nmax_payload = 0",
         "t.ini:4: [arm] max_payload: 0 is out of range: must be > 0 and <= 10000 kg", 1, 0, false},
        {"rate_hz = 100", "rate_hz = 100\nmax_payload = inf",
         "t.ini:4: [arm] max_payload: expected a number, got 'inf'", 1, 0, false},
        {"rate_hz = 100", "rate_hz = 100\nmax_payload = 1\npayload_mass = 2",
         "t.ini:5: [arm] payload_mass: 2 kg is above [arm] max_payload = 1 kg (the arm's rated "
         "payload)",
         1, 0, false},
        {"rate_hz = 100", "rate_hz = 100\ngravity = 0 -9.81 0\npayload_mass = 9",
         "t.ini:5: [arm] payload_mass: joint j1 needs 10.30 N m to hold the arm with this payload "
         "at q = 0 (within the joint ranges)",
         1, 0, true},
        {"rate_hz = 100", "rate_hz = 100\ncoulomb_velocity = planned",
         "t.ini:4: [arm] coulomb_velocity: expected desired or measured, got 'planned'", 1, 0,
         false},
        {"rate_hz = 100", "rate_hz = 100\ncoulomb_width = -0.01",
         "t.ini:4: [arm] coulomb_width: -0.01 is out of range: must be 0 to 100 rad/s", 1, 0,
         false},
        {"velocity = 2", "velocity = 0",
         "t.ini:19: [joint j1] velocity: 0 is out of range: must be > 0 and <= 10000 rad/s", 1, 0,
         false},
        {"com = 0.05 0 0", "com = 0.05 0", "t.ini:15: [joint j1] com: expected 3 numbers, got 2", 1,
         0, false},
        {"torque_per_amp = 1", "torque_per_amp = 1\n[joint j1]",
         "t.ini:26: [joint j1]: duplicate joint name 'j1' (first at line 7)", 1, 0, false},
        {"kp = 100", "kp = 100\nkp = 200",
         "t.ini:23: [joint j1] kp: duplicate key (first at line 22)", 1, 0, false},
        {"theta = 0", "theta = 0\noops",
         "t.ini:14: expected 'key = value' or '[section]', got 'oops'", 1, 0, false},
        {"port = /dev/null", NULL, "t.ini:7: line too long (299 characters, at most 196)", 1, 0,
         false},
        {"type = dxl2", "type = dxl3",
         "t.ini:5: [driver] type: expected dxl2 or armlink, got 'dxl3'; did you mean 'dxl2'?", 1, 0,
         false},
        {"theta = 0", "theta = 0\norigin_xyz = 0 0 0",
         "t.ini:14: [joint j1] origin_xyz: cannot be mixed with 'dh' (line 9): describe a joint "
         "either by dh with a, alpha, d, theta or by origin_xyz, origin_rpy, axis",
         1, 0, false},
        {"id = 1", "id = 1 2\ndirection = 1 -1 1",
         "t.ini:25: [joint j1] direction: expected 1 or 2 values (one per servo), got 3", 1, 0,
         false},
        {"upper = 1", "upper = -2",
         "t.ini:18: [joint j1] upper: -2 rad must be above lower (-1 rad)", 1, 0, false},
        {"inertia = 0.01 0 0 0.01 0 0.01", "inertia = 1 0 0 0.1 0 0.1",
         "t.ini:16: [joint j1] inertia: warning: ", 0, 1, true},
        /* a watchdog off is refused unless allowed on purpose, then a warning */
        {"port = /dev/null", "port = /dev/null\nbus_watchdog_ms = 0",
         "t.ini:7: [driver] bus_watchdog_ms: 0 switches the servos' bus watchdog off, so a "
         "silent bus (armd killed, crashed or hung, a cable pulled) leaves the last torque "
         "applied; set it > 0, or add allow_no_watchdog = true to [driver] to run without it on "
         "purpose",
         1, 0, false},
        {"type = dxl2", "type = armlink\ndevice_watchdog_ms = 0",
         "t.ini:6: [driver] device_watchdog_ms: 0 switches the board's watchdog off, so a silent "
         "bus",
         1, 0, true},
        {"port = /dev/null", "port = /dev/null\nbus_watchdog_ms = 0\nallow_no_watchdog = true",
         "t.ini:7: [driver] bus_watchdog_ms: warning: 0 switches the servos' bus watchdog off "
         "(allowed by allow_no_watchdog): if armd stops talking, the last torque stays applied",
         0, 1, false},
        {"port = /dev/null", "port = /dev/null\nallow_no_watchdog = maybe",
         "t.ini:7: [driver] allow_no_watchdog: expected true or false, got 'maybe'", 1, 0, false},
        /* a servo watchdog that fires before armd judges a read gap */
        {"port = /dev/null",
         "port = /dev/null\nbus_watchdog_ms = 40\n[safety]\nmax_read_gap_ms = 60",
         "t.ini:9: [safety] max_read_gap_ms: warning: the servos' bus watchdog (bus_watchdog_ms = "
         "40 "
         "ms) cuts the torque before armd faults on a read gap (max_read_gap_ms = 60 ms)",
         0, 1, true},
        /* collision detection: thresholds for every joint, an observer gain the loop can
         * integrate, damping for the damp reaction, a friction model without a hard step */
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision = detect",
         "t.ini:8: [safety] collision: needs collision_threshold > 0 for every joint ([safety] "
         "or [joint NAME]); joint 'j1' has none (measure with armctl collision calibrate)",
         1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision = sometimes",
         "t.ini:8: [safety] collision: ", 1, 0, true},
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision_filter = 60",
         "t.ini:8: [safety] collision_filter: 60 1/s is above half the loop rate (100 Hz): the "
         "observer would overshoot",
         1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision_filter = nan",
         "t.ini:8: [safety] collision_filter: ", 1, 0, true},
        {"torque_per_amp = 1", "torque_per_amp = 1\ncollision_threshold = -1",
         "t.ini:26: [joint j1] collision_threshold: ", 1, 0, true},
        {"torque_per_amp = 1", "torque_per_amp = 1\ncollision_threshold = inf",
         "t.ini:26: [joint j1] collision_threshold: ", 1, 0, true},
        {"torque_per_amp = 1", "torque_per_amp = 1\ncollision_band = -0.5",
         "t.ini:26: [joint j1] collision_band: ", 1, 0, true},
        {"port = /dev/null",
         "port = /dev/null\n[safety]\ncollision = react\ncollision_reaction = damp\n"
         "collision_threshold = 5",
         "t.ini:9: [safety] collision_reaction: damp needs damping > 0 for every joint; joint "
         "'j1' has 0",
         1, 0, false},
        {"port = /dev/null",
         "port = /dev/null\n[safety]\ncollision = react\ncollision_reaction = float\n"
         "collision_threshold = 5",
         "t.ini:9: [safety] collision_reaction: float needs damping > 0 for every joint; joint "
         "'j1' has 0",
         1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision_reaction = back",
         "t.ini:8: [safety] collision_reaction: ", 1, 0, true},
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision_retract = 0",
         "t.ini:8: [safety] collision_retract: ", 1, 0, true},
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision_retract = nan",
         "t.ini:8: [safety] collision_retract: ", 1, 0, true},
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision_retract = 1e300",
         "t.ini:8: [safety] collision_retract: ", 1, 0, true},
        {"port = /dev/null", "port = /dev/null\n[safety]\ncollision_retract = -0.1",
         "t.ini:8: [safety] collision_retract: ", 1, 0, true},
        /* a tiny gear ratio or encoder resolution turns encoder counts into an infinite joint
         * position (found by fuzz_drv_armlink) */
        {"torque_per_amp = 1", "torque_per_amp = 1\ngear_ratio = 1e-300",
         "t.ini:26: [joint j1] gear_ratio: 1e-300 is out of range: must be 0.001 to 100000", 1, 0,
         false},
        {"torque_per_amp = 1", "torque_per_amp = 1\ncounts_per_rev = 0.5",
         "t.ini:26: [joint j1] counts_per_rev: 0.5 is out of range: must be 1 to 1e+09 counts", 1,
         0, false},
        /* [trajectory] input shaper */
        {"port = /dev/null", "port = /dev/null\n[trajectory]\nshaper = zvx",
         "t.ini:8: [trajectory] shaper: expected none, zv, zvd or ei, got 'zvx'; did you mean "
         "'zv'?",
         1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[trajectory]\nshaper = zvd",
         "t.ini:8: [trajectory] shaper: shaper = zvd needs shaper_freq, the frequency of the mode "
         "to cancel [Hz]",
         1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[trajectory]\nshaper = ei\nshaper_freq = 50",
         "t.ini:9: [trajectory] shaper_freq: 50 Hz is not below half the loop rate (100 Hz): the "
         "loop cannot follow it",
         1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[trajectory]\nshaper = zv\nshaper_freq = 0.2",
         "t.ini:9: [trajectory] shaper_freq: 0.2 is out of range: must be 0.5 to 200 Hz", 1, 0,
         false},
        {"port = /dev/null", "port = /dev/null\n[trajectory]\nshaper = zv\nshaper_freq = nan",
         "t.ini:9: [trajectory] shaper_freq: expected a number, got 'nan'", 1, 0, false},
        {"port = /dev/null", "port = /dev/null\n[trajectory]\nshaper = zv\nshaper_freq = inf",
         "t.ini:9: [trajectory] shaper_freq: expected a number, got 'inf'", 1, 0, false},
        {"port = /dev/null",
         "port = /dev/null\n[trajectory]\nshaper = zv\nshaper_freq = 5\nshaper_damping = 1",
         "t.ini:10: [trajectory] shaper_damping: 1 is out of range", 1, 0, true},
        {"port = /dev/null",
         "port = /dev/null\n[trajectory]\nshaper = zv\nshaper_freq = 5\nshaper_damping = -0.1",
         "t.ini:10: [trajectory] shaper_damping: -0.1 is out of range", 1, 0, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const error_case *k = &cases[i];
        char to[400];
        if (k->to)
            snprintf(to, sizeof(to), "%s", k->to);
        else
            snprintf(to, sizeof(to), "%s\n%s", k->from, longline);
        const char *tp = to;
        char *t = build(1, &k->from, &tp);
        cfg_report rep;
        cfg_report_init(&rep);
        int errors = cfg_load_string(t, "t.ini", &cfg, &rep);
        if (errors != k->errors || rep.n_warnings != k->warnings || rep.n_lines != 1) {
            fprintf(stderr, "case %zu (%s):\n", i, k->expect);
            cfg_report_print(&rep, stderr);
        }
        assert_int_equal(errors, k->errors);
        assert_int_equal(rep.n_errors, k->errors);
        assert_int_equal(rep.n_warnings, k->warnings);
        assert_int_equal(rep.n_lines, 1);
        if (k->prefix)
            assert_int_equal(strncmp(rep.lines[0], k->expect, strlen(k->expect)), 0);
        else
            assert_string_equal(rep.lines[0], k->expect);
        cfg_report_free(&rep);
        free(t);
    }
}

static void test_several_errors_all_reported(void **state)
{
    (void)state;
    const char *from[] = {"rate_hz = 100", "mass = 1", "torque_per_amp = 1"};
    const char *to[] = {"rate_hz = 5000", "mass = abc", "torque_per_amp = 1\nkd_gain = 3"};
    char *t = build(3, from, to);
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load_string(t, "bad.ini", &cfg, &rep), 3);
    assert_int_equal(rep.n_lines, 3);
    assert_string_equal(rep.lines[0], "bad.ini:3: [arm] rate_hz: 5000 is out of range: must be "
                                      "60 to 4000 Hz");
    assert_string_equal(rep.lines[1], "bad.ini:14: [joint j1] mass: expected a number, got 'abc'");
    assert_string_equal(
        rep.lines[2], "bad.ini:26: [joint j1] kd_gain: unknown key 'kd_gain'; did you mean 'kd'?");
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    cfg_report_print(&rep, f);
    fclose(f);
    const char *last = strstr(out, "bad.ini: 3 errors, 0 warnings\n");
    assert_non_null(last);
    assert_string_equal(last, "bad.ini: 3 errors, 0 warnings\n"); /* the final line */
    free(out);
    free(t);
    cfg_report_free(&rep);
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

static void test_dropin_overrides_and_is_named(void **state)
{
    (void)state;
    char dir[] = "/tmp/armd-test-config-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *t = build(0, NULL, NULL), path[600], sub[600];
    write_file(dir, "arm.ini", t);
    free(t);
    snprintf(path, sizeof(path), "%s/arm.ini", dir);
    snprintf(sub, sizeof(sub), "%s/arm.d", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    write_file(sub, "10-gains.ini", "[joint j1]\nkp = 250\nkd = 30\n");
    write_file(sub, "30-more.ini", "[joint j1]\n; later file wins\nkp = 300\n");
    write_file(sub, "notes.txt", "[joint j1]\nkp = 1\n"); /* not *.ini: ignored */
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(path, &cfg, &rep), 0);
    assert_true(cfg.joint[0].kp == 300); /* lexical order: 30-more after 10-gains */
    assert_true(cfg.joint[0].kd == 30);
    cfg_report_free(&rep);
    /* errors in a drop-in name the drop-in and its line */
    write_file(sub, "20-bad.ini", "[joint j1]\nkd = x\n[joint j9]\nkp = 1\n");
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(path, &cfg, &rep), 2);
    char expect[1600];
    snprintf(expect, sizeof(expect), "%s/20-bad.ini:2: [joint j1] kd: expected a number, got 'x'",
             sub);
    assert_string_equal(rep.lines[0], expect);
    snprintf(expect, sizeof(expect),
             "%s/20-bad.ini:3: [joint j9]: no joint 'j9' in %s; a drop-in can only change joints "
             "defined there",
             sub, path);
    assert_string_equal(rep.lines[1], expect);
    cfg_report_free(&rep);
    const char *names[] = {"10-gains.ini", "20-bad.ini", "30-more.ini", "notes.txt"};
    for (int i = 0; i < 4; i++) {
        snprintf(expect, sizeof(expect), "%s/%s", sub, names[i]);
        unlink(expect);
    }
    rmdir(sub);
    unlink(path);
    rmdir(dir);
}

/* Loads base with one replacement into c (must be valid). */
static void load_variant(armd_config *c, int n, const char *const *from, const char *const *to)
{
    char *t = build(n, from, to);
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load_string(t, "t.ini", c, &rep);
    if (errors) cfg_report_print(&rep, stderr);
    assert_int_equal(errors, 0);
    cfg_report_free(&rep);
    free(t);
}

static void test_compare_live_and_restart(void **state)
{
    (void)state;
    char live[512], restart[512];
    load_variant(&cfg, 0, NULL, NULL);
    load_variant(&cfg2, 0, NULL, NULL);
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof(live), restart, sizeof(restart)), 0);
    assert_string_equal(live, "");
    assert_string_equal(restart, "");
    /* gains and limits: live */
    const char *f1[] = {"kp = 100", "upper = 1"}, *t1[] = {"kp = 150", "upper = 1.5"};
    load_variant(&cfg2, 2, f1, t1);
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof(live), restart, sizeof(restart)), 0);
    assert_string_equal(live, "[joint j1] upper, [joint j1] kp");
    assert_string_equal(restart, "");
    /* the controller's Coulomb term: live, default desired over 0.01 rad/s */
    assert_int_equal(cfg.coulomb_velocity, COULOMB_DESIRED);
    assert_true(cfg.coulomb_width == 0.01);
    const char *f5[] = {"rate_hz = 100"};
    const char *t5[] = {"rate_hz = 100\ncoulomb_velocity = measured\ncoulomb_width = 0.02"};
    load_variant(&cfg2, 1, f5, t5);
    assert_int_equal(cfg2.coulomb_velocity, COULOMB_MEASURED);
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof(live), restart, sizeof(restart)), 0);
    assert_string_equal(live, "[arm] coulomb_velocity, [arm] coulomb_width");
    /* the controller's viscous term: live, default measured */
    assert_int_equal(cfg.viscous_velocity, VISCOUS_MEASURED);
    const char *tv[] = {"rate_hz = 100\nviscous_velocity = desired"};
    load_variant(&cfg2, 1, f5, tv);
    assert_int_equal(cfg2.viscous_velocity, VISCOUS_DESIRED);
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof(live), restart, sizeof(restart)), 0);
    assert_string_equal(live, "[arm] viscous_velocity");
    /* the port: restart; a link's mass (its dynamics, what armctl identify writes): live */
    const char *f2[] = {"mass = 1", "port = /dev/null", "kd = 20"};
    const char *t2[] = {"mass = 2", "port = /dev/ttyUSB1", "kd = 25"};
    load_variant(&cfg2, 3, f2, t2);
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof(live), restart, sizeof(restart)), 1);
    assert_string_equal(restart, "[driver] port");
    assert_string_equal(live, "[joint j1] mass, [joint j1] kd");
    /* allowing a watchdog off is checked at start: restart */
    const char *f4[] = {"port = /dev/null"}, *t4[] = {"port = /dev/null\nallow_no_watchdog = yes"};
    load_variant(&cfg2, 1, f4, t4);
    assert_true(cfg2.driver.allow_no_watchdog);
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof(live), restart, sizeof(restart)), 1);
    assert_string_equal(restart, "[driver] allow_no_watchdog");
    /* the input shaper: live (the next trajectory is shaped with the new one); defaults none,
     * damping 0.05 */
    assert_int_equal(cfg.trajectory.shaper, SHAPE_NONE);
    assert_true(cfg.trajectory.shaper_damping == 0.05);
    const char *f6[] = {"port = /dev/null"};
    const char *t6[] = {"port = /dev/null\n[trajectory]\nshaper = zvd\nshaper_freq = 4.5\n"
                        "shaper_damping = 0.02"};
    load_variant(&cfg2, 1, f6, t6);
    assert_int_equal(cfg2.trajectory.shaper, SHAPE_ZVD);
    assert_true(cfg2.trajectory.shaper_freq == 4.5 && cfg2.trajectory.shaper_damping == 0.02);
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof(live), restart, sizeof(restart)), 0);
    assert_string_equal(live, "[trajectory] shaper, [trajectory] shaper_freq, [trajectory] "
                              "shaper_damping");
    assert_string_equal(restart, "");
    /* an added joint: restart */
    const char *f3[] = {"torque_per_amp = 1"};
    const char *t3[] = {"torque_per_amp = 1\n[joint j2]\ntype = revolute\ndh = standard\na = 0\n"
                        "alpha = 0\nd = 0\ntheta = 0\nmass = 1\ninertia = 0.01 0 0 0.01 0 0.01\n"
                        "lower = -1\nupper = 1\nvelocity = 1\nacceleration = 1\ntorque = 1\n"
                        "kp = 1\nkd = 2\nid = 2\ntorque_per_amp = 1"};
    load_variant(&cfg2, 1, f3, t3);
    assert_int_equal(cfg_compare(&cfg, &cfg2, live, sizeof(live), restart, sizeof(restart)), 1);
    assert_string_equal(restart, "[joint j2] (added)");
    /* a small buffer is cut, never overrun */
    char tiny[8];
    assert_int_equal(cfg_compare(&cfg, &cfg2, tiny, sizeof(tiny), restart, sizeof(restart)), 1);
    assert_true(strlen(tiny) < sizeof(tiny));
}

/* [safety] collision keys: values read, the [safety] list a default that [joint] overrides;
 * a hard Coulomb step with detection on is a warning that names the joint, smoothing clears it. */
static void test_collision_keys(void **state)
{
    (void)state;
    const char *from[] = {"port = /dev/null", "kd = 20"};
    const char *to[] = {"port = /dev/null\n[safety]\ncollision = react\ncollision_reaction = "
                        "damp\ndamping = 3\ncollision_filter = 40\ncollision_threshold = 5\n"
                        "collision_band = 2",
                        "kd = 20\ncollision_threshold = 7.5"};
    char *t = build(2, from, to);
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load_string(t, "t.ini", &cfg, &rep), 0);
    assert_int_equal(rep.n_lines, 0);
    assert_int_equal(cfg.safety.collision, COLLISION_REACT);
    assert_int_equal(cfg.safety.collision_reaction, REACT_DAMP);
    assert_true(cfg.safety.collision_filter == 40);
    assert_true(cfg.joint[0].collision_threshold == 7.5); /* the joint's own key wins */
    assert_true(cfg.joint[0].collision_band == 2);
    assert_true(cfg.safety.collision_retract == 0.1); /* the default */
    free(t);
    cfg_report_free(&rep);

    to[0] = "port = /dev/null\n[safety]\ncollision = react\ncollision_reaction = retract\n"
            "collision_retract = 0.25\ncollision_threshold = 5";
    t = build(2, from, to);
    cfg_report_init(&rep);
    assert_int_equal(cfg_load_string(t, "t.ini", &cfg, &rep), 0);
    assert_int_equal(rep.n_lines, 0); /* retract needs no damping */
    assert_int_equal(cfg.safety.collision_reaction, REACT_RETRACT);
    assert_true(cfg.safety.collision_retract == 0.25);
    free(t);
    cfg_report_free(&rep);
    to[0] = "port = /dev/null\n[safety]\ncollision = react\ncollision_reaction = float\n"
            "damping = 3\ncollision_threshold = 5";
    t = build(2, from, to);
    cfg_report_init(&rep);
    assert_int_equal(cfg_load_string(t, "t.ini", &cfg, &rep), 0);
    assert_int_equal(cfg.safety.collision_reaction, REACT_FLOAT);
    free(t);
    cfg_report_free(&rep);

    to[1] = "kd = 20\ncoulomb = 1.5 -1.5";
    t = build(2, from, to);
    cfg_report_init(&rep);
    assert_int_equal(cfg_load_string(t, "t.ini", &cfg, &rep), 0);
    assert_int_equal(rep.n_warnings, 1);
    assert_non_null(strstr(rep.lines[0], "t.ini:8: [safety] collision: warning: [arm] "
                                         "friction_smoothing is 0 (a hard Coulomb step) and "
                                         "joint 'j1' has Coulomb friction"));
    free(t);
    cfg_report_free(&rep);

    const char *from3[] = {"port = /dev/null", "kd = 20", "rate_hz = 100"};
    const char *to3[] = {to[0], to[1], "rate_hz = 100\nfriction_smoothing = 0.01"};
    t = build(3, from3, to3);
    cfg_report_init(&rep);
    assert_int_equal(cfg_load_string(t, "t.ini", &cfg, &rep), 0);
    assert_int_equal(rep.n_lines, 0);
    free(t);
    cfg_report_free(&rep);
}

static void test_controller_names(void **state)
{
    (void)state;
    cfg_controller c;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(cfg_controller_parse(cfg_controller_name((cfg_controller)i), &c), 0);
        assert_int_equal(c, i);
    }
    assert_int_equal(cfg_controller_parse("pd", &c), -1);
    assert_string_equal(cfg_controller_name(CTRL_PD_GRAVITY), "pd_gravity");
}

static void test_missing_file(void **state)
{
    (void)state;
    cfg_report rep;
    cfg_report_init(&rep);
    assert_true(cfg_load("/nonexistent/armd.ini", &cfg, &rep) > 0);
    assert_string_equal(rep.lines[0],
                        "/nonexistent/armd.ini: cannot open: No such file or directory");
    cfg_report_free(&rep);
}

/* A one-link arm on a 0.5 m beam (modified DH, the tool at the beam's end); flex is the joint's
 * flex_* lines, dh its kinematic form line. Loads it into cfg; returns the error count. */
static int load_flex(const char *dh, const char *flex, cfg_report *rep)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[arm]\nname = f\nrate_hz = 100\ntool_xyz = 0.5 0 0\n[driver]\ntype = armlink\n"
             "port = /dev/null\n[joint j1]\ntype = revolute\n%s\na = 0\nalpha = 0\nd = 0\n"
             "theta = 0\nmass = 1.5\ncom = 0.4 0 0\ninertia = 1e-4 0 0 0.03 0 0.03\n"
             "lower = -1\nupper = 1\nvelocity = 2\nacceleration = 5\ntorque = 10\nkp = 100\n"
             "kd = 20\nid = 1\ntorque_per_amp = 1\n%s\n",
             dh, flex);
    cfg_report_init(rep);
    return cfg_load_string(text, "f.ini", &cfg, rep);
}

/* The flex_* keys: read into cfg.flex (one EI for both directions or two), and each wrong value
 * rejected at its line with the key named: a length that is not the distance to the next joint
 * (dyn_flex_create's check), NaN, inf, negative, out of range, fractional mode counts, keys
 * without flex_modes, a mode without its stiffness, a beam heavier than its link, standard DH. */
static void test_flex_keys(void **state)
{
    (void)state;
    cfg_report rep;
    const char *good = "flex_modes = 2 1 0\nflex_length = 0.5\nflex_mass = 0.3\n"
                       "flex_ei = 300 200\nflex_damping = 0.02";
    assert_int_equal(load_flex("dh = modified", good, &rep), 0);
    assert_int_equal(rep.n_lines, 0);
    assert_true(cfg.flexible);
    const dyn_flex_link *l = &cfg.flex.link[0];
    assert_int_equal(l->modes_y, 2);
    assert_int_equal(l->modes_z, 1);
    assert_int_equal(l->modes_x, 0);
    assert_true(l->length == 0.5 && l->mass == 0.3 && l->damping == 0.02);
    assert_true(l->EI_z == 300 && l->EI_y == 200); /* y_b first, as flex_modes */
    cfg_report_free(&rep);
    assert_int_equal(load_flex("dh = modified",
                               "flex_modes = 1 1 0\nflex_length = 0.5\n"
                               "flex_mass = 0.3\nflex_ei = 250",
                               &rep),
                     0);
    assert_true(cfg.flex.link[0].EI_z == 250 && cfg.flex.link[0].EI_y == 250);
    cfg_report_free(&rep);
    /* no flex keys: a rigid arm */
    assert_int_equal(load_flex("dh = modified", "", &rep), 0);
    assert_false(cfg.flexible);
    cfg_report_free(&rep);
    static const struct {
        const char *flex, *expect;
    } bad[] = {
        {"flex_modes = 2 0 0\nflex_length = 0.6\nflex_mass = 0.3\nflex_ei = 300",
         "f.ini:28: [joint j1] flex_length: joint 0: the beam's length 0.6 m must equal the "
         "distance 0.5 m from joint 0 to the next joint's origin at q = 0 (the tool for the "
         "last)"},
        {"flex_modes = 2 0 0\nflex_length = 0.5\nflex_mass = 0.3\nflex_ei = nan",
         "f.ini:30: [joint j1] flex_ei: expected a number, got 'nan'"},
        {"flex_modes = 2 0 0\nflex_length = 0.5\nflex_mass = 0.3\nflex_ei = inf",
         "f.ini:30: [joint j1] flex_ei: "},
        {"flex_modes = 2 0 0\nflex_length = 0.5\nflex_mass = -0.3\nflex_ei = 300",
         "f.ini:29: [joint j1] flex_mass: -0.3 is out of range: must be 0 to 10000 kg"},
        {"flex_modes = 2 0 0\nflex_length = 0.5\nflex_mass = 0.3\nflex_ei = 0",
         "f.ini:30: [joint j1] flex_ei: 0 is out of range: must be > 0 and <= 1e+12 N m^2"},
        {"flex_modes = 5 0 0\nflex_length = 0.5\nflex_mass = 0.3\nflex_ei = 300",
         "f.ini:27: [joint j1] flex_modes: 5 is out of range: must be 0 to 4"},
        {"flex_modes = 1.5 0 0\nflex_length = 0.5\nflex_mass = 0.3\nflex_ei = 300",
         "f.ini:27: [joint j1] flex_modes: expected three whole numbers of modes (bending y, "
         "bending z, torsion), got '1.5 0 0'"},
        {"flex_modes = 2 0\nflex_length = 0.5", "f.ini:27: [joint j1] flex_modes: expected 3 "
                                                "numbers, got 2"},
        {"flex_mass = 0.3", "f.ini:27: [joint j1] flex_mass: describes a flexible link but the "
                            "joint has no flex_modes (e.g. flex_modes = 2 0 0 for two bending "
                            "modes in the plane of motion)"},
        {"flex_modes = 2 0 0\nflex_length = 0.5\nflex_mass = 0.3",
         "f.ini:8: [joint j1] flex_ei: missing required key"},
        {"flex_modes = 0 0 1\nflex_length = 0.5\nflex_gj = 100",
         "f.ini:8: [joint j1] flex_polar: missing required key"},
        {"flex_modes = 2 0 0\nflex_length = 0.5\nflex_mass = 0.3\nflex_ei = 300\n"
         "flex_damping = 11",
         "f.ini:31: [joint j1] flex_damping: 11 is out of range: must be 0 to 10"},
        {"flex_modes = 2 0 0\nflex_length = 0.5\nflex_mass = 2\nflex_ei = 300",
         "f.ini:2: [arm]: joint 'j1': flex_mass 2 kg is more than the link's mass 1.5 kg (mass, "
         "com and inertia describe the whole link, beam included)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int errors = load_flex("dh = modified", bad[k].flex, &rep);
        if (errors != 1 || strncmp(rep.lines[0], bad[k].expect, strlen(bad[k].expect)) != 0) {
            cfg_report_print(&rep, stderr);
            fail_msg("case %zu: expected '%s'", k, bad[k].expect);
        }
        cfg_report_free(&rep);
    }
    /* the beam starts at the joint: standard DH's distal link frame is refused */
    assert_int_equal(load_flex("dh = standard", good, &rep), 1);
    assert_non_null(strstr(rep.lines[0], "flexible links need dh = modified or origin_xyz"));
    cfg_report_free(&rep);
}

/* flexarm2.ini: the example's beams as documented, restart-only on reload. */
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_is_valid),
        cmocka_unit_test(test_each_error_message),
        cmocka_unit_test(test_several_errors_all_reported),
        cmocka_unit_test(test_dropin_overrides_and_is_named),
        cmocka_unit_test(test_compare_live_and_restart),
        cmocka_unit_test(test_collision_keys),
        cmocka_unit_test(test_controller_names),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_flex_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
