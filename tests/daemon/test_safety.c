/*
 * test_safety.c — the state machine and fault checks of daemon/safety.h: every command in
 * every state, the fault reasons' text, the refusals' advice leading to a state that allows
 * the command, consecutive failed reads and the damping-stop end.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/safety.h"

/* Expected outcome of cmd in each state: next state, or -1 for refused. */
static void check_row(sf_cmd cmd, const int expect[5])
{
    for (int s = 0; s < 5; s++) {
        sf_state next;
        char why[200] = "";
        bool ok = sf_command_allowed((sf_state)s, cmd, "joint elbow: following error", &next, why,
                                     sizeof why);
        if (expect[s] < 0) {
            assert_false(ok);
            assert_true(strlen(why) > 0);
        } else {
            assert_true(ok);
            assert_int_equal(next, expect[s]);
        }
    }
}

static void transitions(void **state)
{
    (void)state;
    /* states:              disabled     holding      moving       fault     estop */
    int enable[5] = {SF_HOLDING, SF_HOLDING, SF_MOVING, -1, -1};
    int disable[5] = {SF_DISABLED, SF_DISABLED, SF_DISABLED, SF_FAULT, SF_ESTOP};
    int hold[5] = {-1, SF_HOLDING, SF_MOVING, -1, -1}; /* a controlled stop, as cancel */
    int estop[5] = {SF_ESTOP, SF_ESTOP, SF_ESTOP, SF_ESTOP, SF_ESTOP};
    int reset[5] = {SF_DISABLED, -1, -1, SF_DISABLED, SF_DISABLED};
    int cancel[5] = {-1, SF_HOLDING, SF_MOVING, -1, -1};
    int traj[5] = {-1, SF_MOVING, SF_MOVING, -1, -1};
    int law[5] = {SF_DISABLED, SF_HOLDING, -1, -1, -1};
    check_row(SF_CMD_ENABLE, enable);
    check_row(SF_CMD_DISABLE, disable);
    check_row(SF_CMD_HOLD, hold);
    check_row(SF_CMD_ESTOP, estop);
    check_row(SF_CMD_RESET, reset);
    check_row(SF_CMD_CANCEL, cancel);
    check_row(SF_CMD_TRAJECTORY, traj);
    check_row(SF_CMD_CONTROLLER, law);
}

static void refusal_texts(void **state)
{
    (void)state;
    sf_state next;
    char why[200];
    sf_command_allowed(SF_FAULT, SF_CMD_ENABLE,
                       "joint elbow: following error 0.2 over the limit 0.1", &next, why,
                       sizeof why);
    assert_string_equal(why, "the arm is in fault (joint elbow: following error 0.2 over the limit "
                             "0.1); reset it first");
    sf_command_allowed(SF_DISABLED, SF_CMD_TRAJECTORY, "", &next, why, sizeof why);
    assert_string_equal(why, "the arm is disabled; enable it first");
    sf_command_allowed(SF_MOVING, SF_CMD_CONTROLLER, "", &next, why, sizeof why);
    assert_string_equal(why, "the arm is moving; the control law can change only while disabled "
                             "or holding: let the trajectory end or cancel it first");
    sf_command_allowed(SF_ESTOP, SF_CMD_TRAJECTORY, "", &next, why, sizeof why);
    assert_string_equal(why, "the arm is in estop; reset and enable it first");
    assert_string_equal(sf_state_name(SF_ESTOP), "estop");
}

/* Follows the advice of a refusal (the clause after its last ';'): its steps in the order
 * written, each a command that must be allowed where it is taken ("trajectory end": a moving
 * arm comes to hold). The state reached, or -1 when a step is refused; *steps counts them. */
static int follow_advice(sf_state s, const char *why, int *steps)
{
    static const struct {
        const char *word;
        int cmd; /* -1: the trajectory ends */
    } words[] = {{"reset", SF_CMD_RESET}, {"enable", SF_CMD_ENABLE}, {"trajectory end", -1}};
    const char *advice = strrchr(why, ';');
    *steps = 0;
    if (!advice) return s;
    for (const char *at = advice; *at; at++)
        for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
            if (strncmp(at, words[k].word, strlen(words[k].word)) != 0) continue;
            (*steps)++;
            if (words[k].cmd < 0) {
                if (s == SF_MOVING) s = SF_HOLDING;
                continue;
            }
            sf_state next;
            if (!sf_command_allowed(s, (sf_cmd)words[k].cmd, "", &next, NULL, 0)) return -1;
            s = next;
        }
    return s;
}

/* Every refusal's advice is the step that works: following it leads to a state where the
 * refused command is allowed (reset of an enabled arm has nothing to do, and says so). */
static void refusal_advice_works(void **state)
{
    (void)state;
    for (int cmd = SF_CMD_ENABLE; cmd <= SF_CMD_CONTROLLER; cmd++)
        for (int s = 0; s < 5; s++) {
            sf_state next;
            char why[200] = "";
            if (sf_command_allowed((sf_state)s, (sf_cmd)cmd, "joint elbow: following error", &next,
                                   why, sizeof why))
                continue;
            if (cmd == SF_CMD_RESET) {
                assert_non_null(strstr(why, "nothing to reset"));
                continue;
            }
            int steps, reached = follow_advice((sf_state)s, why, &steps);
            if (steps == 0 || reached < 0 ||
                !sf_command_allowed((sf_state)reached, (sf_cmd)cmd, "", &next, NULL, 0))
                fail_msg("state %s, command %d: the advice of '%s' does not lead to it (%d "
                         "steps, reached %d)",
                         sf_state_name((sf_state)s), cmd, why, steps, reached);
        }
}

static law_params params(void)
{
    law_params p;
    memset(&p, 0, sizeof p);
    p.n = 2;
    strcpy(p.name[0], "shoulder");
    strcpy(p.name[1], "elbow");
    for (int j = 0; j < 2; j++) {
        p.lower[j] = -1;
        p.upper[j] = 1;
        p.velocity[j] = 2;
        p.following_error[j] = 0.1;
    }
    p.safety.max_failed_reads = 3;
    p.safety.max_read_gap_ms = 20;
    p.safety.damp_stop_velocity = 0.05;
    p.safety.damp_timeout = 1.0;
    return p;
}

static void fault_reasons(void **state)
{
    (void)state;
    law_params p = params();
    char r[160];
    double q[2] = {0.2, 0.3}, qd[2] = {0.5, -0.5}, qdes[2] = {0.25, 0.35};
    assert_false(sf_check_tick(&p, q, qd, qdes, r, sizeof r));
    q[1] = qdes[1] = 1.05; /* beyond the limit by less than the following error: tolerated */
    qd[0] = 2.1;           /* within SF_VELOCITY_MARGIN of the limit */
    assert_false(sf_check_tick(&p, q, qd, qdes, r, sizeof r));
    qd[0] = 0.5;
    q[1] = 1.2;
    qdes[1] = 1.2;
    assert_true(sf_check_tick(&p, q, qd, qdes, r, sizeof r));
    assert_string_equal(r, "joint elbow: position 1.2 outside limits [-1, 1]");
    q[1] = 0.3;
    qd[0] = -2.5;
    assert_true(sf_check_tick(&p, q, qd, qdes, r, sizeof r));
    assert_string_equal(r, "joint shoulder: velocity -2.5 over the limit 2");
    qd[0] = 0.5;
    qdes[1] = 0.45;
    assert_true(sf_check_tick(&p, q, qd, qdes, r, sizeof r));
    assert_string_equal(r, "joint elbow: following error 0.15 over the limit 0.1");
    qdes[1] = 0.3;
    qd[1] = NAN;
    assert_true(sf_check_tick(&p, q, qd, qdes, r, sizeof r));
    assert_true(strncmp(r, "joint elbow: velocity", 21) == 0);
}

/* Enabling accepts the running band [lower - fe, upper + fe] (an arm resting on its hard stop
 * just past a soft limit), refuses anything further out, and keeps the limits strict where
 * the following error check is off. */
static void enable_position_band(void **state)
{
    (void)state;
    law_params p = params();
    char r[160] = "";
    double q[2] = {0.2, 0.3};
    assert_false(sf_check_position(&p, q, r, sizeof r));
    q[1] = 1.05; /* past the limit by less than the following error */
    assert_false(sf_check_position(&p, q, r, sizeof r));
    q[0] = -1.0999; /* just inside the band at the lower end */
    assert_false(sf_check_position(&p, q, r, sizeof r));
    q[0] = -1.1001;
    assert_true(sf_check_position(&p, q, r, sizeof r));
    assert_string_equal(r, "joint shoulder: position -1.1 outside limits [-1, 1]");
    q[0] = 0;
    q[1] = 1.2;
    assert_true(sf_check_position(&p, q, r, sizeof r));
    assert_string_equal(r, "joint elbow: position 1.2 outside limits [-1, 1]");
    q[1] = NAN;
    assert_true(sf_check_position(&p, q, r, sizeof r));
    assert_true(strncmp(r, "joint elbow: position nan", 25) == 0);
    p.following_error[1] = 0; /* check off: no band */
    q[1] = 1.05;
    assert_true(sf_check_position(&p, q, r, sizeof r));
    assert_string_equal(r, "joint elbow: position 1.05 outside limits [-1, 1]");
    q[1] = 1.0;
    assert_false(sf_check_position(&p, q, r, sizeof r));
}

/* Enabling needs the arm (nearly) at rest: the same velocity bound as a running tick. */
static void enable_velocity_check(void **state)
{
    (void)state;
    law_params p = params();
    char r[160] = "";
    double qd[2] = {0, 0};
    assert_false(sf_check_velocity(&p, qd, r, sizeof r));
    qd[1] = -SF_VELOCITY_MARGIN * p.velocity[1] * 0.99;
    assert_false(sf_check_velocity(&p, qd, r, sizeof r));
    qd[1] = -SF_VELOCITY_MARGIN * p.velocity[1] * 1.01;
    assert_true(sf_check_velocity(&p, qd, r, sizeof r));
    assert_true(strncmp(r, "joint elbow: velocity -", 23) == 0);
    qd[1] = NAN;
    assert_true(sf_check_velocity(&p, qd, r, sizeof r));
}

static void failed_reads_count_consecutive(void **state)
{
    (void)state;
    law_params p = params(); /* 3 failures, 20 ms */
    const int64_t ms = 1000000;
    sf_reads r = {0};
    sf_read_ok(&r, 0);
    assert_false(sf_read_failed(&r, &p, 25 * ms));
    assert_false(sf_read_failed(&r, &p, 26 * ms));
    sf_read_ok(&r, 27 * ms); /* a good read starts over */
    assert_false(sf_read_failed(&r, &p, 50 * ms));
    assert_false(sf_read_failed(&r, &p, 51 * ms));
    assert_true(sf_read_failed(&r, &p, 52 * ms)); /* third in a row, 25 ms without a good one */
}

static void failed_reads_tolerated_for_the_gap_time(void **state)
{
    (void)state;
    law_params p = params(); /* 3 failures, 20 ms */
    const int64_t ms = 1000000;
    sf_reads r = {0};
    sf_read_ok(&r, 100 * ms);
    /* a fast loop: five failures within 5 ms are tolerated (a host stall), until 20 ms */
    for (int k = 1; k <= 19; k++) assert_false(sf_read_failed(&r, &p, (100 + k) * ms));
    assert_false(sf_reads_exhausted(&r, &p, 119 * ms));
    assert_true(sf_reads_exhausted(&r, &p, 120 * ms));
    assert_true(sf_read_failed(&r, &p, 120 * ms));
    /* a slow loop: 20 ms passed at the first failure, but the count is not reached yet */
    sf_read_ok(&r, 200 * ms);
    assert_false(sf_read_failed(&r, &p, 230 * ms));
    assert_false(sf_read_failed(&r, &p, 260 * ms));
    assert_true(sf_read_failed(&r, &p, 290 * ms));
    p.safety.max_read_gap_ms = 0; /* no time tolerance: the count alone decides */
    sf_read_ok(&r, 300 * ms);
    assert_false(sf_read_failed(&r, &p, 300 * ms));
    assert_false(sf_read_failed(&r, &p, 300 * ms));
    assert_true(sf_read_failed(&r, &p, 300 * ms));
}

static void damping_stop_ends(void **state)
{
    (void)state;
    law_params p = params();
    double moving[2] = {0.2, 0.01}, still[2] = {0.04, -0.049};
    assert_false(sf_damp_done(&p, moving, 0.5));
    assert_true(sf_damp_done(&p, still, 0.5));
    assert_true(sf_damp_done(&p, moving, 1.0)); /* timeout */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(transitions),
        cmocka_unit_test(refusal_texts),
        cmocka_unit_test(refusal_advice_works),
        cmocka_unit_test(fault_reasons),
        cmocka_unit_test(failed_reads_count_consecutive),
        cmocka_unit_test(failed_reads_tolerated_for_the_gap_time),
        cmocka_unit_test(damping_stop_ends),
        cmocka_unit_test(enable_position_band),
        cmocka_unit_test(enable_velocity_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
