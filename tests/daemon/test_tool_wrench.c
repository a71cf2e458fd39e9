/*
 * test_tool_wrench.c — the wrench at the tool (status and telemetry "wrench", from the collision
 * observer's external torques) on the real loop, host and driver against armsim's arm in
 * process, on simulated time (daemon/lockstep.h), the PUMA 560 at 1 kHz, holding:
 *  - armsim pushes the tool point with a known force (--tool-force, base frame); once the arm
 *    has come to rest under it, every axis of the estimated force is within 5 % (and 0.5 N) of
 *    it and the moment about the tool origin within 0.5 N m of 0; without the force, the
 *    estimate is within 0.5 N of 0;
 *  - [safety] max_tool_force: a force over it is a collision at the tool ("joint" -1), with the
 *    configured reaction (stop: the arm holds); one under it is none;
 *  - with the observer off the wrench is unknown (NaN).
 *
 * usage: test_daemon_tool_wrench PUMA560.ini
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/daemon/lockstep_rig.h"

static const char *puma_ini;

typedef struct {
    lockstep_rig *r;
    uint64_t ev_cursor;
} sim;

static sim *S;

/* The PUMA holding a pose with room (elbow up, wrist bent), collision detection on (thresholds
 * out of reach: only the tool force can trip), max_tool_force as given, armsim's options. */
static void sim_open(int collision, double max_tool_force, const char *const *extra)
{
    S = calloc(1, sizeof *S);
    S->r = lockstep_rig_load(puma_ini);
    armd_config *cfg = &S->r->cfg;
    cfg->safety.collision = collision;
    cfg->safety.collision_reaction = REACT_STOP;
    cfg->safety.max_tool_force = max_tool_force;
    cfg->model.friction_smoothing = 0.01; /* as armd.conf(5) advises with collision on */
    for (int j = 0; j < cfg->n_joints; j++) cfg->joint[j].collision_threshold = 1e4;
    char *argv[16] = {"--q0", "0.2,0.9,-2.4,0.1,0.8,0.2"};
    int argc = 2;
    for (int i = 0; extra && extra[i]; i++) argv[argc++] = (char *)extra[i];
    lockstep_rig_start(S->r, puma_ini, argc, argv);
    S->ev_cursor = 1;
}

static int sim_close(void **state)
{
    (void)state;
    if (!S) return 0;
    lockstep_rig_free(S->r);
    free(S);
    S = NULL;
    return 0;
}

static ctl_status status(void)
{
    return lockstep_rig_status(S->r);
}

static void run_until(double t)
{
    lockstep_rig_run_until(S->r, t);
}

/* The collision events since the last call: how many, the joint of the last. */
static int collisions(int *joint)
{
    ctl_event ev[64];
    int k, count = 0;
    while ((k = ctl_events_read(S->r->c, &S->ev_cursor, ev, 64)) > 0)
        for (int i = 0; i < k; i++)
            if (ev[i].type == CTL_EV_COLLISION) {
                count++;
                *joint = ev[i].joint;
            }
    return count;
}

/* The estimate against the applied force F (base frame) and a zero moment. */
static void check_wrench(const char *what, const double F[3])
{
    ctl_status st = status();
    print_message("  %s: force (%.3f, %.3f, %.3f) N against (%.3f, %.3f, %.3f), moment (%.3f, "
                  "%.3f, %.3f) N m\n",
                  what, st.wrench[0], st.wrench[1], st.wrench[2], F[0], F[1], F[2], st.wrench[3],
                  st.wrench[4], st.wrench[5]);
    for (int k = 0; k < 3; k++) {
        const double tol = fmax(0.5, 0.05 * fabs(F[k]));
        if (!(fabs(st.wrench[k] - F[k]) <= tol))
            fail_msg("%s: force %c %.3f N, applied %.3f N (tolerance %.2f)", what, "xyz"[k],
                     st.wrench[k], F[k], tol);
        if (!(fabs(st.wrench[3 + k]) <= 0.5))
            fail_msg("%s: moment %c %.3f N m, none applied", what, "xyz"[k], st.wrench[3 + k]);
    }
}

/* 20 N pushing the tool (10, -5, 20 N split) from t = 1 s for 60 s: the estimate at rest under
 * it, then again at rest after it. */
static void estimate_at_rest(void **st)
{
    (void)st;
    const char *opts[] = {"--tool-force", "1,10,-5,15,60", NULL};
    sim_open(COLLISION_DETECT, 0, opts);
    const double none[3] = {0, 0, 0}, F[3] = {10, -5, 15};
    run_until(0.9);
    check_wrench("before", none);
    run_until(40);
    check_wrench("under the force, at rest", F);
    run_until(100);
    check_wrench("after it", none);
    int j;
    assert_int_equal(collisions(&j), 0);
}

/* max_tool_force 15 N: 10 N is none; 25 N is a collision at the tool, reaction stop. */
static void max_tool_force_reacts(void **st)
{
    (void)st;
    const char *opts[] = {"--tool-force", "1,0,0,-10,5", "--tool-force", "10,0,25,0,5", NULL};
    sim_open(COLLISION_REACT, 15, opts);
    int j = 99;
    run_until(8);
    assert_int_equal(collisions(&j), 0);
    run_until(12);
    assert_int_equal(collisions(&j), 1);
    assert_int_equal(j, -1);
    assert_int_equal(status().state, CTL_HOLDING);
    assert_int_equal(status().collisions, 1);
}

/* Without the observer there is no estimate. */
static void unknown_without_observer(void **st)
{
    (void)st;
    sim_open(COLLISION_OFF, 0, NULL);
    run_until(0.5);
    ctl_status s = status();
    for (int k = 0; k < CTL_WRENCH; k++) assert_true(isnan(s.wrench[k]));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PUMA560.ini\n", argv[0]);
        return 2;
    }
    puma_ini = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(estimate_at_rest, sim_close),
        cmocka_unit_test_teardown(max_tool_force_reacts, sim_close),
        cmocka_unit_test_teardown(unknown_without_observer, sim_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
