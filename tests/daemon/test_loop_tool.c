/*
 * test_loop_tool.c — the loop's tool commands (daemon/loop/tool.c) stepped tick by tick on the
 * loop rig (loop_rig.h) with a gripper played here: the fingers go to the goal at the goal's
 * speed and stop where an object of width W and stiffness K pushes back with the goal's force
 * (opening W - F/K). What is checked, each exactly once per command:
 *  - a grasp of a 20 mm object ends "grasped" with the opening within 1 mm of 20 mm and the
 *    force asked for; with no object "no_object"; an object wider than width + epsilon_outer
 *    "blocked";
 *  - a move and a release end "reached" within [tool] tolerance; a move an object blocks ends
 *    "blocked";
 *  - a newer command ends the running one "stopped"; tool.stop holds and is answered at once;
 *  - disabling (or an estop) during a grasp ends it "aborted"; a command while disabled is
 *    refused "bad_state", without a [tool] section "no_tool";
 *  - a command that does not end within [tool] timeout is answered "timeout" and the fingers
 *    are held where they are;
 *  - the goal goes out in the tick's output, never a joint torque changed by it.
 *
 * usage: test_daemon_loop_tool CONFIG.ini (config/examples/planar2.ini; the tool is set here)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loop_rig.h"

/* the gripper played here */
static struct {
    double x;        /* opening [m] */
    drv_tool_goal g; /* the goal taken */
    double width, k; /* the object (width 0: none) [m], [N/m] */
    double slow;     /* > 0: the fingers crawl at this speed whatever the goal [m/s] */
} G;

/* One tick of the gripper: takes the goal the loop put out a tick ago, moves the fingers. */
static void gripper(double dt)
{
    if (R->out.tool_set) G.g = R->out.tool_goal;
    double x0 = G.x;
    double v = G.slow > 0 ? G.slow : G.g.speed;
    double step = v * dt;
    double to = G.g.opening;
    G.x = fabs(to - G.x) <= step ? to : G.x + copysign(step, to - G.x);
    double force = 0;
    if (G.width > 0 && G.x < G.width) { /* the object stops the fingers */
        G.x = fmax(G.x, G.width - G.g.force / G.k);
        force = G.k * (G.width - G.x);
    }
    R->tool = (drv_tool_state){true, G.x, (G.x - x0) / dt, force, force / 59.3};
}

static void with_tool(armd_config *c)
{
    cfg_tool *t = &c->tool;
    memset(t, 0, sizeof *t);
    t->present = true;
    snprintf(t->name, sizeof t->name, "gripper");
    t->id = 15;
    t->m_per_rad = -0.030;
    t->opening_at_zero = 0.042;
    t->counts_per_rev = 4096;
    t->lower = 0.020 - 0.005; /* room below a 20 mm object */
    t->upper = 0.075;
    t->speed = 0.05;
    t->velocity = 0.1;
    t->force = 10;
    t->max_force = 20;
    t->torque_per_amp = 1.78;
    t->tolerance = 0.001;
    t->epsilon = 0.005;
    t->timeout = 5;
}

/* A rig with the gripper at opening x0 (and object width w, stiffness k), the arm enabled. */
static void open_rig(double x0, double w, double k)
{
    rig_open(with_tool);
    loop_set_tool(R->L, &R->cfg.tool);
    memset(&G, 0, sizeof G);
    G.x = x0;
    G.g = (drv_tool_goal){x0, 0.05, 10};
    G.width = w;
    G.k = k;
    R->device = gripper;
    enable();
}

static uint64_t tool_cmd(ctl_tool_kind kind, double opening, double force, double eps)
{
    loop_cmd c = {.type = LOOP_TOOL};
    c.tool = (ctl_tool_cmd){kind, opening, 0.05, force, eps, eps};
    return cmd(c);
}

/* Ticks until seq is answered (at most s seconds); asserts it was answered exactly once. */
static const loop_reply *run_until_answered(uint64_t seq, double s)
{
    for (int i = 0; i < (int)(s / R->period) && !answers(seq); i++) tick();
    assert_int_equal(answers(seq), 1);
    return reply_to(seq);
}

static void grasp_of_20mm_object_succeeds_with_the_force_asked(void **st)
{
    (void)st;
    open_rig(0.060, 0.020, 1e5);
    uint64_t s = tool_cmd(CTL_TOOL_GRASP, 0.020, 10, 0.005);
    const loop_reply *r = run_until_answered(s, 3);
    assert_int_equal(r->rc, 0);
    assert_int_equal(r->tool.outcome, CTL_TOOL_GRASPED);
    assert_true(fabs(r->tool.opening - 0.020) < 0.001);
    assert_float_equal(r->tool.force, 10, 1e-6); /* 1e5 N/m x 0.1 mm */
    assert_true(R->out.pub.st.tool.grasped);
    /* the goal sent: the stroke's closed end, the grasp's force */
    assert_float_equal(G.g.opening, R->cfg.tool.lower, 0);
    assert_float_equal(G.g.force, 10, 0);
    ticks(20); /* nothing more is answered */
    assert_int_equal(answers(s), 1);
}

static void grasp_without_object_is_no_object(void **st)
{
    (void)st;
    open_rig(0.060, 0, 0);
    uint64_t s = tool_cmd(CTL_TOOL_GRASP, 0.030, 10, 0.005);
    const loop_reply *r = run_until_answered(s, 3);
    assert_int_equal(r->rc, 0);
    assert_int_equal(r->tool.outcome, CTL_TOOL_NO_OBJECT);
    assert_float_equal(r->tool.opening, R->cfg.tool.lower, 1e-9);
    assert_false(R->out.pub.st.tool.grasped);
}

static void grasp_of_a_wider_object_is_blocked(void **st)
{
    (void)st;
    open_rig(0.070, 0.050, 1e5);
    uint64_t s = tool_cmd(CTL_TOOL_GRASP, 0.030, 10, 0.005);
    const loop_reply *r = run_until_answered(s, 3);
    assert_int_equal(r->tool.outcome, CTL_TOOL_BLOCKED);
}

static void move_and_release_reach_move_into_object_blocked(void **st)
{
    (void)st;
    open_rig(0.040, 0.030, 1e5);
    uint64_t s = tool_cmd(CTL_TOOL_MOVE, 0.055, 0, 0);
    const loop_reply *r = run_until_answered(s, 3);
    assert_int_equal(r->tool.outcome, CTL_TOOL_REACHED);
    assert_true(fabs(r->tool.opening - 0.055) <= R->cfg.tool.tolerance);
    s = tool_cmd(CTL_TOOL_RELEASE, 0, 0, 0);
    r = run_until_answered(s, 3);
    assert_int_equal(r->tool.outcome, CTL_TOOL_REACHED);
    assert_float_equal(r->tool.opening, R->cfg.tool.upper, R->cfg.tool.tolerance);
    s = tool_cmd(CTL_TOOL_MOVE, 0.020, 0, 0); /* the 30 mm object is in the way */
    r = run_until_answered(s, 3);
    assert_int_equal(r->tool.outcome, CTL_TOOL_BLOCKED);
    assert_true(r->tool.opening > 0.029);
}

static void newer_command_stops_the_running_one_and_stop_answers_at_once(void **st)
{
    (void)st;
    open_rig(0.070, 0, 0);
    uint64_t a = tool_cmd(CTL_TOOL_MOVE, 0.020, 0, 0);
    ticks(5);
    assert_int_equal(answers(a), 0);
    uint64_t b = tool_cmd(CTL_TOOL_MOVE, 0.065, 0, 0);
    tick();
    assert_int_equal(answers(a), 1);
    assert_int_equal(reply_to(a)->tool.outcome, CTL_TOOL_STOPPED);
    uint64_t c = tool_cmd(CTL_TOOL_IDLE, 0, 0, 0);
    tick();
    assert_int_equal(answers(b), 1);
    assert_int_equal(reply_to(b)->tool.outcome, CTL_TOOL_STOPPED);
    assert_int_equal(answers(c), 1);
    assert_int_equal(reply_to(c)->tool.outcome, CTL_TOOL_STOPPED);
    double held = G.x;
    ticks(10);
    /* held where the fingers were read as the stop came (a tick before they moved on) */
    assert_float_equal(G.g.opening, held, 2 * 0.05 * R->period + 1e-12);
    assert_float_equal(G.x, G.g.opening, 1e-12);
    assert_int_equal(R->out.pub.st.tool.command, CTL_TOOL_IDLE);
}

static void disable_aborts_and_commands_need_an_enabled_arm(void **st)
{
    (void)st;
    open_rig(0.060, 0.020, 1e5);
    uint64_t s = tool_cmd(CTL_TOOL_GRASP, 0.020, 10, 0.005);
    ticks(3);
    cmd((loop_cmd){.type = LOOP_DISABLE});
    tick();
    assert_int_equal(answers(s), 1);
    assert_int_equal(reply_to(s)->tool.outcome, CTL_TOOL_ABORTED);
    const char *code = NULL;
    s = tool_cmd(CTL_TOOL_MOVE, 0.05, 0, 0);
    tick();
    assert_int_equal(answer(s, &code, NULL), -1);
    assert_string_equal(code, "bad_state");
    /* estop during a move: aborted too */
    enable();
    s = tool_cmd(CTL_TOOL_MOVE, 0.07, 0, 0);
    tick();
    R->in.estop = true;
    tick();
    assert_int_equal(answers(s), 1);
    assert_int_equal(reply_to(s)->tool.outcome, CTL_TOOL_ABORTED);
}

static void without_tool_section_no_tool(void **st)
{
    (void)st;
    rig_open(NULL);
    enable();
    uint64_t s = tool_cmd(CTL_TOOL_MOVE, 0.05, 0, 0);
    tick();
    const char *code = NULL;
    assert_int_equal(answer(s, &code, NULL), -1);
    assert_string_equal(code, "no_tool");
    assert_false(R->out.tool_set);
}

static void command_past_timeout_answered_timeout_and_held(void **st)
{
    (void)st;
    open_rig(0.070, 0, 0);
    G.slow = 0.005; /* 5 mm/s: 50 mm takes 10 s, the timeout is 5 s */
    uint64_t s = tool_cmd(CTL_TOOL_MOVE, 0.020, 0, 0);
    const loop_reply *r = run_until_answered(s, 6);
    assert_int_equal(r->rc, -1);
    assert_string_equal(r->err.code, "timeout");
    tick();
    assert_float_equal(G.g.opening, G.x, 0.005 * R->period * 2);
}

static void the_goal_changes_no_joint_torque(void **st)
{
    (void)st;
    open_rig(0.060, 0, 0);
    ticks(5);
    double tau0[2] = {R->out.tau[0], R->out.tau[1]};
    tool_cmd(CTL_TOOL_MOVE, 0.030, 0, 0);
    tick();
    assert_true(R->out.tool_set);
    assert_float_equal(R->out.tau[0], tau0[0], 1e-9);
    assert_float_equal(R->out.tau[1], tau0[1], 1e-9);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CONFIG.ini\n", argv[0]);
        return 2;
    }
    rig_config_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(grasp_of_20mm_object_succeeds_with_the_force_asked, rig_close),
        cmocka_unit_test_teardown(grasp_without_object_is_no_object, rig_close),
        cmocka_unit_test_teardown(grasp_of_a_wider_object_is_blocked, rig_close),
        cmocka_unit_test_teardown(move_and_release_reach_move_into_object_blocked, rig_close),
        cmocka_unit_test_teardown(newer_command_stops_the_running_one_and_stop_answers_at_once,
                                  rig_close),
        cmocka_unit_test_teardown(disable_aborts_and_commands_need_an_enabled_arm, rig_close),
        cmocka_unit_test_teardown(without_tool_section_no_tool, rig_close),
        cmocka_unit_test_teardown(command_past_timeout_answered_timeout_and_held, rig_close),
        cmocka_unit_test_teardown(the_goal_changes_no_joint_torque, rig_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
