/*
 * test_loop.c — the control loop's tick (daemon/loop/loop.h) called directly, one loop_step per
 * tick, with crafted samples, commands and driver results: no thread, no clock, no driver. The
 * "arm" is the sample the test writes: it stands where the test puts it, or (following) where
 * the loop wanted it a tick ago. What is checked, each exactly:
 *  - enable waits for a fresh state (read failures within the tolerance are ridden out, for 0.5 s
 *    at most), then for the servos, and is answered only then; refused when the reads stay away,
 *    when the arm is outside its limits or moving, when the servos refuse; two enables get one
 *    answer each;
 *  - reads and writes that keep failing fault, each counted apart; a short read gap is ridden
 *    out and reported; a write failing while disabled does not count;
 *  - whatever got past validation (a NaN gain, a NaN position) is a fault naming it;
 *  - the estop flag, a late tick and the host's stall verdict fault or stop the arm first;
 *  - a trajectory is followed and ends "done"; cancel decelerates and ends "cancelled"; the
 *    plans come back to the host; a law change by reload is refused while moving;
 *  - the damping stop after a fault (on_fault = damp) and its end;
 *  - the tool pose in status and sample is the planar arm's own geometry at the measured q.
 *
 * usage: test_daemon_loop CONFIG.ini (a 2-joint arm: config/examples/planar2.ini)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/loop/loop.h"
#include "loop_rig.h"

/* ---------------------------------------------------------------------------------- cases */

/* Reads that fail from the very first tick fault only once they are max_failed_reads and
 * max_read_gap_ms long counted from that tick (not from the driver clock's zero, which made
 * three failed reads at start a fault "no state for" the machine's uptime) */
static void failed_reads_at_start_count_from_the_first_tick(void **st)
{
    (void)st;
    rig_open(NULL);
    int max = R->cfg.safety.max_failed_reads;
    double gap_ms = R->cfg.safety.max_read_gap_ms;
    assert_true(max * R->period * 1e3 < gap_ms); /* the gap rule is the one that waits */
    R->fail_reads = 1000000;
    int k = 0;
    while (state() != CTL_FAULT && k < 100000) {
        tick();
        k++;
    }
    assert_int_equal(state(), CTL_FAULT);
    double waited_ms = (k - 1) * R->period * 1e3; /* from the first tick to the faulting one */
    assert_true(k >= max);
    assert_true(waited_ms >= gap_ms - R->period * 1e3);
    assert_true(waited_ms <= gap_ms + 2 * R->period * 1e3);
}

static void enable_waits_for_a_fresh_state_then_the_servos(void **st)
{
    (void)st;
    rig_open(NULL);
    R->q[0] = 0.3, R->q[1] = -0.2;
    ticks(3);
    R->fail_reads = 2; /* within max_failed_reads = 3 */
    uint64_t s = cmd((loop_cmd){.type = LOOP_ENABLE});
    tick(); /* failed read: waits */
    assert_int_equal(answer(s, NULL, NULL), 0);
    assert_int_equal(R->out.servos, LOOP_SERVOS_KEEP);
    tick(); /* failed read: waits */
    assert_int_equal(answer(s, NULL, NULL), 0);
    tick(); /* fresh: the servos are asked */
    assert_int_equal(R->out.servos, LOOP_SERVOS_ON);
    assert_int_equal(answer(s, NULL, NULL), 0);
    assert_int_equal(state(), CTL_DISABLED);
    tick(); /* the servos said yes: holding where it is */
    assert_int_equal(answer(s, NULL, NULL), 1);
    assert_int_equal(answers(s), 1);
    assert_int_equal(state(), CTL_HOLDING);
    assert_float_equal(R->out.pub.st.q_des[0], 0.3, 0);
    assert_float_equal(R->out.pub.st.q_des[1], -0.2, 0);
    assert_true(R->out.write); /* the holding torque */
    const ctl_event *e = last_event(CTL_EV_STATE);
    assert_non_null(e);
    assert_string_equal(e->text, "holding");
}

/* Enables with every read failing from now on; ticks until the enable is answered (1000 at
 * most). Returns the ticks it took, the answer's code and message in *code, *msg. */
static int enable_without_state(const char **code, const char **msg)
{
    ticks(2);
    R->fail_reads = 1000;
    uint64_t s = cmd((loop_cmd){.type = LOOP_ENABLE});
    int k = 0;
    while (answer(s, NULL, NULL) == 0 && k < 1000) tick(), k++;
    assert_int_equal(answer(s, code, msg), -1);
    return k;
}

static void enable_refused_when_no_state_comes(void **st)
{
    (void)st;
    rig_open(NULL);
    /* refused once the reads have failed as long as faults the arm: at least max_failed_reads
     * reads and max_read_gap_ms */
    const char *code = "", *msg = "";
    int k = enable_without_state(&code, &msg);
    assert_string_equal(code, "fault");
    assert_non_null(strstr(msg, "consecutive failed reads"));
    double waited_ms = k * R->period * 1e3;
    assert_true(k >= R->cfg.safety.max_failed_reads);
    assert_true(waited_ms >= R->cfg.safety.max_read_gap_ms - R->period * 1e3);
    assert_true(waited_ms <= R->cfg.safety.max_read_gap_ms + 2 * R->period * 1e3);
    assert_int_equal(state(), CTL_FAULT);
}

/* max_read_gap_ms 2000: longer than an enable waits */
static void gap_2s(armd_config *c)
{
    c->safety.max_read_gap_ms = 2000;
}

static void enable_waits_half_a_second_at_most(void **st)
{
    (void)st;
    rig_open(gap_2s);
    const char *code = "", *msg = "";
    int k = enable_without_state(&code, &msg);
    assert_string_equal(code, "device");
    assert_non_null(strstr(msg, "no state could be read"));
    /* GUARD_ENABLE_WAIT_S = 0.5 s at 500 Hz: 250 ticks after the command's; the arm is not
     * faulted (the read tolerance, 2 s, is not used up) */
    assert_int_equal(k, 1 + 250);
    assert_int_equal(state(), CTL_DISABLED);
}

static void enable_refused_outside_limits_or_by_the_servos(void **st)
{
    (void)st;
    rig_open(NULL);
    R->q[0] = 4.0; /* past upper = pi by more than following_error */
    tick();
    const char *code = "", *msg = "";
    uint64_t s = cmd((loop_cmd){.type = LOOP_ENABLE});
    tick();
    assert_int_equal(answer(s, &code, &msg), -1);
    assert_string_equal(code, "limits");
    assert_non_null(strstr(msg, "shoulder"));
    R->q[0] = 0;
    ticks(100); /* the jump's velocity estimate settles */
    R->servos_refuse = true;
    s = cmd((loop_cmd){.type = LOOP_ENABLE});
    ticks(2);
    assert_int_equal(answer(s, &code, &msg), -1);
    assert_string_equal(code, "device");
    assert_non_null(strstr(msg, "test: refused"));
    assert_int_equal(R->out.servos, LOOP_SERVOS_OFF); /* whatever the servos took, off again */
    assert_int_equal(state(), CTL_DISABLED);
}

static void two_enables_each_answered_once(void **st)
{
    (void)st;
    rig_open(NULL);
    tick();
    uint64_t a = cmd((loop_cmd){.type = LOOP_ENABLE});
    uint64_t b = cmd((loop_cmd){.type = LOOP_ENABLE});
    ticks(3);
    uint64_t c = cmd((loop_cmd){.type = LOOP_ENABLE}); /* enabled already */
    tick();
    assert_int_equal(answer(a, NULL, NULL), 1);
    assert_int_equal(answer(b, NULL, NULL), 1);
    assert_int_equal(answer(c, NULL, NULL), 1);
    assert_int_equal(answers(a) + answers(b) + answers(c), 3);
}

/* max_read_gap_ms 20 at 500 Hz: 10 ticks */
static void gap_20ms(armd_config *c)
{
    c->safety.max_read_gap_ms = 20;
}

static void short_read_gap_ridden_out_long_one_faults(void **st)
{
    (void)st;
    rig_open(gap_20ms);
    tick();
    enable();
    R->fail_reads = 5; /* 10 ms: within 20 ms */
    ticks(10);
    assert_int_equal(state(), CTL_HOLDING);
    assert_int_equal(R->out.pub.st.read_gaps, 1);
    assert_int_equal(R->out.pub.st.failed_reads, 5);
    assert_true(R->out.pub.st.longest_read_gap_ms >= 10.0 &&
                R->out.pub.st.longest_read_gap_ms <= 12.0);
    R->fail_reads = 1000;
    int k = 0;
    while (state() != CTL_FAULT && k < 100) tick(), k++;
    assert_int_equal(state(), CTL_FAULT);
    assert_true(k >= 10 && k <= 11); /* 20 ms at 2 ms a tick */
    assert_non_null(strstr(R->out.pub.st.fault, "consecutive failed reads"));
    assert_int_equal(R->out.servos, LOOP_SERVOS_OFF); /* no state: no damping stop */
    assert_true(R->out.write);
    assert_float_equal(R->out.tau[0], 0, 0);
}

static void writes_failing_fault_counted_apart(void **st)
{
    (void)st;
    rig_open(gap_20ms);
    R->fail_writes = 100; /* disabled: the zero torques fail, uncounted */
    ticks(20);
    assert_int_equal(R->out.pub.st.failed_writes, 0);
    assert_int_equal(state(), CTL_DISABLED);
    R->fail_writes = 0;
    tick();
    enable();
    R->fail_writes = 1000;
    int k = 0;
    while (state() != CTL_FAULT && k < 100) tick(), k++;
    assert_int_equal(state(), CTL_FAULT);
    assert_non_null(strstr(R->out.pub.st.fault, "consecutive failed writes"));
    assert_int_equal(R->out.pub.st.failed_reads, 0);
    assert_true(R->out.pub.st.failed_writes >= 10);
}

static void nan_gain_and_nan_position_fault_naming_them(void **st)
{
    (void)st;
    rig_open(NULL);
    tick();
    enable();
    R->set2 = R->set;
    R->set2.p.kd[1] = NAN;
    uint64_t s = cmd((loop_cmd){.type = LOOP_SETTINGS, .settings = &R->set2});
    tick();
    assert_int_equal(answer(s, NULL, NULL), 1);
    assert_int_equal(state(), CTL_FAULT);
    assert_non_null(strstr(R->out.pub.st.fault, "non-finite gain kd on elbow"));
    /* the settings replaced came back with the answer */
    bool back = false;
    for (int i = 0; i < R->n_rep; i++) back |= R->rep[i].seq == s && R->rep[i].settings == &R->set;
    assert_true(back);
    rig_close(NULL);

    rig_open(NULL);
    tick();
    enable();
    R->q[1] = NAN;
    tick();
    assert_int_equal(state(), CTL_FAULT);
    assert_non_null(strstr(R->out.pub.st.fault, "elbow"));
    for (int j = 0; j < 2; j++) assert_true(isfinite(R->out.tau[j]));
}

static void estop_late_tick_and_stall_stop_the_arm(void **st)
{
    (void)st;
    rig_open(NULL);
    tick();
    enable();
    R->in.estop = true;
    tick();
    assert_int_equal(state(), CTL_ESTOP);
    assert_int_equal(R->out.servos, LOOP_SERVOS_OFF);
    assert_true(R->out.write && R->out.tau[0] == 0 && R->out.tau[1] == 0);
    uint64_t s = cmd((loop_cmd){.type = LOOP_ENABLE});
    tick();
    const char *code = "", *msg = "";
    assert_int_equal(answer(s, &code, &msg), -1);
    assert_non_null(strstr(msg, "reset it first"));
    s = cmd((loop_cmd){.type = LOOP_RESET});
    tick();
    assert_int_equal(answer(s, NULL, NULL), 1);
    enable();
    R->in.late = 0.25; /* a tick 250 ms late */
    R->in.skipped = 125;
    tick();
    assert_int_equal(state(), CTL_FAULT);
    assert_non_null(strstr(R->out.pub.st.fault, "control thread stalled: a tick was 250 ms late"));
    assert_int_equal(R->out.pub.st.overruns, 125);
    cmd((loop_cmd){.type = LOOP_RESET});
    tick();
    enable();
    R->in.stall = true;
    snprintf(R->in.stall_reason, sizeof R->in.stall_reason, "control thread stalled: test");
    tick();
    assert_int_equal(state(), CTL_FAULT);
    assert_string_equal(R->out.pub.st.fault, "control thread stalled: test");
}

/* A move of the shoulder by 0.2 rad from q0 (the plan as the host builds it). */
static traj_plan *move_plan(uint32_t id, double from0, double to0)
{
    static traj_plan plans[4];
    static int k;
    traj_plan *p = &plans[k++ % 4];
    traj_plan_free(p);
    assert_int_equal(traj_plan_alloc(p, R->cfg.n_joints, 16), 0);
    traj_state s = {{from0, 0}, {0, 0}, {0, 0}};
    double goal[2] = {to0, 0};
    ctl_error e;
    assert_int_equal(traj_build_move(p, &R->set.lim, &s, goal, 0.5, &e), 0);
    p->id = id;
    return p;
}

static void trajectory_done_and_cancelled(void **st)
{
    (void)st;
    rig_open(NULL);
    tick();
    enable();
    R->follow = true;
    uint64_t s = cmd((loop_cmd){.type = LOOP_TRAJECTORY, .plan = move_plan(7, 0, 0.2)});
    tick();
    assert_int_equal(answer(s, NULL, NULL), 1);
    assert_int_equal(state(), CTL_MOVING);
    assert_int_equal(R->out.pub.st.traj_id, 7);
    int k = 0;
    while (state() == CTL_MOVING && k < 1000) tick(), k++;
    const ctl_event *e = last_event(CTL_EV_TRAJECTORY_DONE);
    assert_non_null(e);
    assert_int_equal(e->traj_id, 7);
    assert_string_equal(e->text, "done");
    assert_int_equal(state(), CTL_HOLDING);
    assert_int_equal(R->plans_back, 1);
    assert_float_equal(R->out.pub.st.q_des[0], 0.2, 1e-12);
    /* 0.5 s at 500 Hz, then settle_time 0.1 s: 300 ticks counted from the command's (the
     * first tick along the plan), the settling's first tick being the plan's last */
    assert_true(k + 1 >= 298 && k + 1 <= 301);

    s = cmd((loop_cmd){.type = LOOP_TRAJECTORY, .plan = move_plan(8, 0.2, 0.0)});
    ticks(100); /* half way */
    double v = R->out.pub.st.qd_des[0];
    assert_true(v < -0.1);
    uint64_t c = cmd((loop_cmd){.type = LOOP_CANCEL});
    tick();
    assert_int_equal(answer(c, NULL, NULL), 1);
    assert_int_equal(R->plans_back, 2); /* the cancelled plan is back at once */
    /* decelerating at the acceleration limit (10 rad/s^2): |v| / 10 s */
    k = 0;
    while (state() == CTL_MOVING && k < 1000) tick(), k++;
    e = last_event(CTL_EV_TRAJECTORY_DONE);
    assert_int_equal(e->traj_id, 8);
    assert_string_equal(e->text, "cancelled");
    assert_true(fabs(k * R->period - fabs(v) / 10) <= 3 * R->period);
    assert_float_equal(R->out.pub.st.qd_des[0], 0, 0);
}

/* hold while moving: cancel's stop (the desired velocity steps by at most the acceleration
 * limit x one tick), then holding; the trajectory ends "cancelled: hold" at rest */
static void hold_while_moving_stops_within_the_limits(void **st)
{
    (void)st;
    rig_open(NULL);
    tick();
    enable();
    R->follow = true;
    cmd((loop_cmd){.type = LOOP_TRAJECTORY, .plan = move_plan(9, 0, 0.2)});
    ticks(125); /* half way, at full speed */
    double v = R->out.pub.st.qd_des[0];
    assert_true(v > 0.1);
    uint64_t h = cmd((loop_cmd){.type = LOOP_HOLD});
    tick();
    assert_int_equal(answer(h, NULL, NULL), 1);
    assert_int_equal(state(), CTL_MOVING); /* the stop runs */
    double prev = R->out.pub.st.qd_des[0], step = fabs(prev - v);
    int k = 0;
    while (state() == CTL_MOVING && k < 1000) {
        tick(), k++;
        step = fmax(step, fabs(R->out.pub.st.qd_des[0] - prev));
        prev = R->out.pub.st.qd_des[0];
    }
    assert_true(step <= 10 * R->period * (1 + 1e-9)); /* j1: 10 rad/s^2 */
    const ctl_event *e = last_event(CTL_EV_TRAJECTORY_DONE);
    assert_non_null(e);
    assert_int_equal(e->traj_id, 9);
    assert_string_equal(e->text, "cancelled: hold");
    assert_int_equal(state(), CTL_HOLDING);
    assert_true(fabs(k * R->period - v / 10) <= 3 * R->period);
    assert_float_equal(R->out.pub.st.qd_des[0], 0, 0);
}

static void law_change_by_reload_refused_while_moving(void **st)
{
    (void)st;
    rig_open(NULL);
    tick();
    enable();
    R->follow = true;
    cmd((loop_cmd){.type = LOOP_TRAJECTORY, .plan = move_plan(3, 0, 0.2)});
    ticks(10);
    R->set2 = R->set;
    R->set2.p.law = CTRL_PD_GRAVITY;
    uint64_t s = cmd((loop_cmd){.type = LOOP_SETTINGS, .settings = &R->set2});
    tick();
    const char *code = "", *msg = "";
    assert_int_equal(answer(s, &code, &msg), -1);
    assert_string_equal(code, "bad_state");
    assert_non_null(strstr(msg, "[arm] controller = pd_gravity"));
    assert_int_equal(R->out.pub.st.controller, CTRL_COMPUTED_TORQUE);
    /* the refused settings came back with the answer */
    bool back = false;
    for (int i = 0; i < R->n_rep; i++) back |= R->rep[i].seq == s && R->rep[i].settings == &R->set2;
    assert_true(back);
    while (state() == CTL_MOVING) tick();
    s = cmd((loop_cmd){.type = LOOP_SETTINGS, .settings = &R->set2});
    tick();
    assert_int_equal(answer(s, NULL, NULL), 1);
    assert_int_equal(R->out.pub.st.controller, CTRL_PD_GRAVITY);
}

/* the device's velocity (exactly what the test says) */
static void device_velocity(armd_config *c)
{
    c->velocity_source = VELOCITY_DEVICE;
}

static void damping_stop_then_torque_off(void **st)
{
    (void)st;
    rig_open(device_velocity);
    tick();
    enable();
    /* a following error fault with the shoulder swinging at 2 rad/s: the damping stop
     * (on_fault = damp) brakes it, torque -D qd + G(q) */
    R->q[0] = 0.5; /* 0.5 rad off the desired 0: over following_error 0.1 */
    R->qd[0] = 2.0;
    tick();
    assert_int_equal(state(), CTL_FAULT);
    assert_non_null(strstr(R->out.pub.st.fault, "following error"));
    assert_true(R->out.write);
    assert_int_equal(R->out.servos, LOOP_SERVOS_KEEP); /* still on: damping */
    double tau_swinging = R->out.tau[0];
    R->qd[0] = 1.0;
    tick(); /* same pose, half the speed: the torque differs by D x 1 rad/s (no rate limit) */
    assert_true(R->out.write);
    assert_float_equal(R->out.tau[0] - tau_swinging, R->cfg.joint[0].damping * 1.0, 1e-9);
    /* slow enough: the damping stop ends, zero torque, servos off */
    R->qd[0] = 0.01;
    tick();
    assert_true(R->out.write);
    assert_float_equal(R->out.tau[0], 0, 0);
    assert_float_equal(R->out.tau[1], 0, 0);
    assert_int_equal(R->out.servos, LOOP_SERVOS_OFF);
}

/* The published tool pose is the 2-link planar arm's tip: (l1 c1 + l2 c12, l1 s1 + l2 s12, 0)
 * with l1 = 0.5, l2 = 0.4 m (planar2.ini), turned by q1 + q2 about z: the quaternion
 * (cos(q12/2), 0, 0, sin(q12/2)); the same in the status and the sample, tick by tick. */
static void tool_pose_is_the_arms_geometry(void **st)
{
    (void)st;
    rig_open(NULL);
    const double qs[3][2] = {{0.3, -0.7}, {-2.5, 2.0}, {3.0, 0.4}};
    for (int k = 0; k < 3; k++) {
        R->q[0] = qs[k][0], R->q[1] = qs[k][1];
        tick();
        double q12 = qs[k][0] + qs[k][1];
        double want[7] = {0.5 * cos(qs[k][0]) + 0.4 * cos(q12),
                          0.5 * sin(qs[k][0]) + 0.4 * sin(q12),
                          0,
                          fabs(cos(q12 / 2)),
                          0,
                          0,
                          sin(q12 / 2) * (cos(q12 / 2) < 0 ? -1 : 1)};
        for (int i = 0; i < 7; i++) {
            assert_true(fabs(R->out.pub.st.pose[i] - want[i]) <= 1e-12);
            assert_true(fabs(R->out.sample.pose[i] - want[i]) <= 1e-12);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CONFIG.ini\n", argv[0]);
        return 2;
    }
    rig_config_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(failed_reads_at_start_count_from_the_first_tick, rig_close),
        cmocka_unit_test_teardown(enable_waits_for_a_fresh_state_then_the_servos, rig_close),
        cmocka_unit_test_teardown(enable_refused_when_no_state_comes, rig_close),
        cmocka_unit_test_teardown(enable_waits_half_a_second_at_most, rig_close),
        cmocka_unit_test_teardown(enable_refused_outside_limits_or_by_the_servos, rig_close),
        cmocka_unit_test_teardown(two_enables_each_answered_once, rig_close),
        cmocka_unit_test_teardown(short_read_gap_ridden_out_long_one_faults, rig_close),
        cmocka_unit_test_teardown(writes_failing_fault_counted_apart, rig_close),
        cmocka_unit_test_teardown(nan_gain_and_nan_position_fault_naming_them, rig_close),
        cmocka_unit_test_teardown(estop_late_tick_and_stall_stop_the_arm, rig_close),
        cmocka_unit_test_teardown(trajectory_done_and_cancelled, rig_close),
        cmocka_unit_test_teardown(hold_while_moving_stops_within_the_limits, rig_close),
        cmocka_unit_test_teardown(law_change_by_reload_refused_while_moving, rig_close),
        cmocka_unit_test_teardown(damping_stop_then_torque_off, rig_close),
        cmocka_unit_test_teardown(tool_pose_is_the_arms_geometry, rig_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
