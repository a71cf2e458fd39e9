/*
 * test_armsim_gripper.c — armsim's tool servo fingers (tools/armsim/gripper.h) on their own, with
 * the OpenManipulator-X gripper of the contract (m_per_rad -0.030 m/rad, 1.78 N m/A, stroke
 * 20-75 mm) filled in by hand, and the --object option: a free close reaches its goal at the
 * profile speed; a grasp of a 20 mm, 1e5 N/m object at 10 N stops 0.1 mm inside it and reports
 * 10 N as current; the Goal Current caps the force; torque off and an expired bus watchdog hold
 * the fingers still. Times are the gripper's clock [ns], stepped a 1 ms tick at a time.
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

#include "drivers/drivers.h"
#include "tools/armsim/gripper.h"
#include "tools/armsim/options.h"

#define TICK_NS 1000000ull    /* a housekeeping tick: 1 ms */
#define T0_NS   1000000000ull /* the clock when the tests start: 1 s */
#define EXACT   1e-12         /* [m] or [N]: the model's own arithmetic */

/* The contract's OpenManipulator-X gripper. */
static cfg_tool omx(void)
{
    return (cfg_tool){.present = true,
                      .name = "gripper",
                      .id = 15,
                      .zero_offset = M_PI,
                      .opening_at_zero = 0.042,
                      .m_per_rad = -0.030,
                      .counts_per_rev = 4096,
                      .lower = 0.020,
                      .upper = 0.075,
                      .speed = 0.05,
                      .velocity = 0.1,
                      .force = 10,
                      .max_force = 20,
                      .torque_per_amp = 1.78,
                      .tolerance = 0.001,
                      .epsilon = 0.005,
                      .timeout = 5};
}

/* armsim's options from a NULL-terminated list (after "armsim"); returns the parser's result,
 * its message (if any) in msg. */
static int parse(const char *const *args, armsim_options *o, char *msg, size_t len)
{
    char *argv[16] = {"armsim"};
    int argc = 1;
    while (args[argc - 1]) {
        argv[argc] = (char *)args[argc - 1];
        argc++;
    }
    FILE *f = fmemopen(msg, len, "w");
    assert_non_null(f);
    int rc = armsim_parse_options(argc, argv, o, f);
    fclose(f);
    return rc;
}

/* The fingers open at the stroke's upper end, the clock at T0_NS, optionally with --object. */
static void start(gripper *g, const char *object)
{
    armsim_options o;
    char msg[256] = "";
    const char *none[] = {NULL}, *with[] = {"--object", object, NULL};
    assert_int_equal(parse(object ? with : none, &o, msg, sizeof msg), 0);
    cfg_tool t = omx();
    gripper_init(g, &t, &o, t.upper);
    gripper_advance_to(g, T0_NS);
}

/* Drives toward goal [m] at speed [m/s] with at most force [N] (top speed 0.2 m/s). */
static void drive(gripper *g, double goal, double speed, double force)
{
    gripper_cmd c = {
        .active = true, .goal = goal, .speed = speed, .max_speed = 0.2, .force = force};
    gripper_command(g, &c, true);
}

/* Steps n ticks from the gripper's time. */
static void run_ticks(gripper *g, int n)
{
    for (int i = 0; i < n; i++) gripper_advance_to(g, g->t_ns + TICK_NS);
}

/* A free close from 75 mm to 20 mm at 0.047 m/s: the opening falls at exactly that rate with no
 * motor force, reaches 20 mm at the first tick at or after 55 / 47 s (within one tick of it),
 * then rests there: no rate, no force. */
static void test_free_close(void **state)
{
    (void)state;
    gripper g;
    start(&g, NULL);
    const double speed = 0.047, goal = 0.020, t_reach = (0.075 - goal) / speed;
    drive(&g, goal, speed, 10.0);
    int reached = -1;
    for (int i = 1; i <= 2000 && reached < 0; i++) {
        run_ticks(&g, 1);
        if (fabs(g.x - goal) < EXACT) {
            reached = i;
        } else {
            double want = 0.075 - speed * i * 1e-3;
            if (fabs(g.x - want) > 1e-9 || fabs(g.rate + speed) > 1e-9 || g.f_motor != 0.0)
                fail_msg("tick %d: opening %.9f m (want %.9f), rate %.9f m/s, force %g N", i, g.x,
                         want, g.rate, g.f_motor);
        }
    }
    print_message("free close at %.3f m/s: 20 mm reached at tick %d, %.4f s expected\n", speed,
                  reached, t_reach);
    assert_true(reached > 0);
    assert_true(reached * 1e-3 >= t_reach - 1e-9 && reached * 1e-3 < t_reach + 1e-3);
    run_ticks(&g, 100);
    assert_true(fabs(g.x - goal) < EXACT && g.rate == 0.0);
    assert_true(fabs(gripper_closing_force(&g)) < EXACT);
}

/* A grasp of a 20 mm object of 1e5 N/m at 10 N, the goal well beyond it (10 mm): the fingers
 * stop at 20 mm - 10 / 1e5 = 19.9 mm, pressing with 10 N, which the servo reports as
 * -10 m_per_rad / torque_per_amp = +0.1685 A; a much stiffer object stops them within
 * micrometres of its width. */
static void test_grasp(void **state)
{
    (void)state;
    cfg_tool t = omx();
    gripper g;
    start(&g, "0.02,1e5");
    drive(&g, 0.010, 0.05, 10.0);
    run_ticks(&g, 2000);
    double amps = units_force_to_amps(&t, gripper_closing_force(&g));
    print_message("grasp of 20 mm, 1e5 N/m at 10 N: opening %.6f mm, force %.6f N, %.6f A\n",
                  g.x * 1e3, gripper_closing_force(&g), amps);
    assert_true(fabs(g.x - (0.020 - 1e-4)) < EXACT);
    assert_true(fabs(gripper_closing_force(&g) - 10.0) < EXACT);
    assert_true(fabs(amps - 10.0 * 0.030 / 1.78) < EXACT);
    assert_true(g.rate == 0.0);

    start(&g, "0.02,1e9");
    drive(&g, 0.010, 0.05, 10.0);
    run_ticks(&g, 2000);
    assert_true(g.x < 0.020 && g.x > 0.020 - 1e-6);
}

/* The Goal Current caps the force: at 3 N and at 20 N the fingers stop where the object's force
 * is that (20 mm - 0.03 mm, - 0.2 mm) whatever the goal beyond it (10 mm or 0 mm); a goal too
 * close behind the object (0.2 mm) leaves the position loop short of the cap, at kp (x - goal)
 * with kp = 19 N m/rad / 0.03^2 m^2/rad^2. */
static void test_force_cap(void **state)
{
    (void)state;
    const double forces[] = {3.0, 20.0}, goals[] = {0.010, 0.0};
    gripper g;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            start(&g, "0.02,1e5");
            drive(&g, goals[k], 0.05, forces[i]);
            run_ticks(&g, 2000);
            if (fabs(g.x - (0.020 - forces[i] / 1e5)) > EXACT ||
                fabs(gripper_closing_force(&g) - forces[i]) > EXACT)
                fail_msg("force %g N, goal %g m: opening %.9f m, force %.9f N", forces[i], goals[k],
                         g.x, gripper_closing_force(&g));
        }
    start(&g, "0.02,1e5");
    drive(&g, 0.0198, 0.05, 20.0);
    run_ticks(&g, 2000);
    const double kp = 19.0 / (0.03 * 0.03), x = (kp * 0.0198 + 1e5 * 0.020) / (kp + 1e5);
    print_message("goal 0.2 mm behind the object at 20 N: %.3f N (kp %.0f N/m)\n",
                  gripper_closing_force(&g), kp);
    assert_true(fabs(g.x - x) < EXACT);
    assert_true(fabs(gripper_closing_force(&g) - kp * (x - 0.0198)) < 1e-9);
    assert_true(gripper_closing_force(&g) < 20.0);
}

/* Torque off holds the fingers where they are, moving or pressing: no rate, no force; torque on
 * again takes up the old goal from there. */
static void test_torque_off(void **state)
{
    (void)state;
    gripper g;
    start(&g, "0.02,1e5");
    drive(&g, 0.010, 0.05, 10.0);
    run_ticks(&g, 500); /* halfway: 75 - 25 = 50 mm */
    assert_true(fabs(g.x - 0.050) < EXACT);
    gripper_cmd c = g.cmd;
    c.active = false;
    gripper_command(&g, &c, false);
    run_ticks(&g, 1000);
    assert_true(fabs(g.x - 0.050) < EXACT && g.rate == 0.0 && g.f_motor == 0.0);
    c.active = true;
    gripper_command(&g, &c, false);
    run_ticks(&g, 1000); /* 30 mm at 0.05 m/s: 0.6 s, then pressing */
    assert_true(fabs(g.x - 0.0199) < EXACT);
    c.active = false;
    gripper_command(&g, &c, false);
    run_ticks(&g, 100);
    assert_true(fabs(g.x - 0.0199) < EXACT && g.rate == 0.0 && g.f_motor == 0.0);
    /* a Goal Current of 0 moves nothing either */
    c.active = true;
    c.force = 0.0;
    c.goal = 0.070;
    gripper_command(&g, &c, true);
    run_ticks(&g, 100);
    assert_true(fabs(g.x - 0.0199) < EXACT && g.rate == 0.0);
}

/* The bus watchdog's expiry ends the drive exactly then, even inside one long step: from 75 mm
 * at 0.05 m/s with an expiry 0.3004 s on, one step of 1 s ends at 75 - 15.02 mm. */
static void test_watchdog_expiry(void **state)
{
    (void)state;
    gripper g;
    start(&g, NULL);
    gripper_cmd c = {.active = true,
                     .goal = 0.020,
                     .speed = 0.05,
                     .max_speed = 0.2,
                     .force = 10.0,
                     .expiry_ns = T0_NS + 300400000ull};
    gripper_command(&g, &c, true);
    gripper_advance_to(&g, T0_NS + 1000000000ull);
    assert_true(fabs(g.x - (0.075 - 0.05 * 0.3004)) < EXACT);
    assert_true(g.rate == 0.0 && g.f_motor == 0.0);
}

/* --object WIDTH,STIFFNESS: taken when both are finite and above 0; each refusal names
 * --object and says what is wrong. */
static void test_object_option(void **state)
{
    (void)state;
    armsim_options o;
    char msg[256];
    const char *good[] = {"--object", "0.02,1e5", NULL};
    assert_int_equal(parse(good, &o, msg, sizeof msg), 0);
    assert_true(o.object.on && o.object.width == 0.02 && o.object.stiffness == 1e5);
    const char *none[] = {NULL};
    assert_int_equal(parse(none, &o, msg, sizeof msg), 0);
    assert_false(o.object.on);
    static const struct {
        const char *arg, *says;
    } bad[] = {{"0.02", "is not WIDTH,STIFFNESS"},
               {"0.02,1e5,3", "is not WIDTH,STIFFNESS"},
               {"0,1e5", "WIDTH 0 must be more than 0 m"},
               {"-0.01,1e5", "WIDTH -0.01 is outside"},
               {"nan,1e5", "WIDTH 'nan' is not a finite number"},
               {"0.02,inf", "STIFFNESS 'inf' is not a finite number"},
               {"0.02,0", "STIFFNESS 0 must be more than 0 N/m"},
               {"0.02,-5", "STIFFNESS -5 is outside"},
               {"0.02,", "STIFFNESS '' is not a finite number"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[] = {"--object", bad[i].arg, NULL};
        memset(msg, 0, sizeof msg);
        int rc = parse(args, &o, msg, sizeof msg);
        if (rc != -1 || !strstr(msg, "--object") || !strstr(msg, bad[i].says))
            fail_msg("--object %s: rc %d, message '%s' (want '%s')", bad[i].arg, rc, msg,
                     bad[i].says);
    }
    const char *twice[] = {"--object", "0.02,1e5", "--object", "0.03,1e5", NULL};
    assert_int_equal(parse(twice, &o, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "--object: given twice"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_close),      cmocka_unit_test(test_grasp),
        cmocka_unit_test(test_force_cap),       cmocka_unit_test(test_torque_off),
        cmocka_unit_test(test_watchdog_expiry), cmocka_unit_test(test_object_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
