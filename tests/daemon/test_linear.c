/*
 * test_linear.c — move_linear on the real loop, host and driver against armsim's arm in
 * process, on simulated time (daemon/lockstep.h): every tick, the true joint positions (armsim's
 * state at the tick's deadline) through the forward kinematics give the tool's true path.
 *  - the PUMA 560 at 1 kHz: 0.3 m lines at 0.25 m/s (down, then along base y; then 0.15 m
 *    back along the tool's own z): the true tool stays within 0.5 mm of the line and its
 *    orientation within 2.5 mrad of the start's (mostly the joints' holding offsets in armsim's
 *    Coulomb friction: the shoulder's is there before the line starts); each move lasts what the
 *    quintic gives (15/8 L / v) and ends within 0.5 mm of the goal;
 *  - the same line with a ZVD input shaper: still within 0.5 mm (the shaper acts on the path
 *    parameter), longer by the shaper's length;
 *  - the OpenManipulator-X at 400 Hz (as shipped): a 0.3 m line sideways at 0.25 m/s within
 *    1 mm (position and pitch: its yaw follows the position);
 *  - refusals with their reasons: out of reach (naming the waypoint), a singular start (the
 *    PUMA's wrist at q5 = 0), too fast for the joints ("limits"), an orientation the 4-joint arm
 *    cannot take, a line while the arm moves ("bad_state"), bad numbers ("invalid_params");
 *    the arm holds after each; appended to a move, a line starts where the move ends;
 *  - a seven-joint arm (redundant7.ini, made up): a 0.2 m square at 0.25 m/s four times, each
 *    side within 1 mm of its line, the posture nearer the middle of the joint ranges after each.
 *
 * usage: test_daemon_linear PUMA560.ini OPEN_MANIPULATOR_X.ini REDUNDANT7.ini
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

#define PUMA_LINE_TOL      0.5e-3 /* the bounds [m] */
#define OMX_LINE_TOL       1e-3
#define REDUNDANT_LINE_TOL 1e-3   /* a made-up arm: the looser of the two */
#define ROT_TOL            2.5e-3 /* [rad]: the wrist stops 1.75 mrad short in Coulomb friction */

static const char *puma_ini, *omx_ini, *redundant_ini;

typedef struct {
    lockstep_rig *r;
    dyn_model *m; /* the arm's model for the truth's forward kinematics */
    dyn_data *d;
} sim;

static sim *S;

/* The arm of ini from q0 ("a,b,..."), enabled and holding; with a ZVD shaper at shaper_hz
 * when that is above 0 (damping: the default 0.05). */
static void sim_open(const char *ini, const char *q0, double shaper_hz)
{
    S = calloc(1, sizeof *S);
    S->r = lockstep_rig_load(ini);
    if (shaper_hz > 0) {
        S->r->cfg.trajectory.shaper = SHAPE_ZVD;
        S->r->cfg.trajectory.shaper_freq = shaper_hz;
    }
    char *argv[] = {"--q0", (char *)q0};
    lockstep_rig_start(S->r, ini, 2, argv);
    S->m = dyn_model_create(&S->r->cfg.model, NULL, NULL);
    assert_non_null(S->m);
    S->d = dyn_data_create(S->m);
}

static int sim_close(void **state)
{
    (void)state;
    if (!S) return 0;
    lockstep_rig_free(S->r);
    dyn_data_free(S->d);
    dyn_model_free(S->m);
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

/* The true tool pose now (armsim's q through the model's forward kinematics). */
static void true_pose(double T[12])
{
    physics_state truth;
    lockstep_truth(S->r->ls, &truth);
    dyn_fk(S->m, S->d, truth.q, NULL, T);
}

/* The tool pose the loop commands now (its desired q through the forward kinematics): where a
 * line starts. */
static void desired_pose(double T[12])
{
    ctl_status st = status();
    dyn_fk(S->m, S->d, st.q_des, NULL, T);
}

/* The largest distance of the true tool from the segment a .. b and the largest rotation from
 * R0 (when R0 is not NULL) over a move, and how long it ran. */
typedef struct {
    double dist, rot, duration;
    uint32_t id;
} line_run;

/* |R0^T R| as an angle [rad] (R0, R the rotations of two 3x4 poses). */
static double angle_between(const double *A, const double *B)
{
    double tr = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) tr += A[4 * k + i] * B[4 * k + i];
    return acos(fmax(-1, fmin(1, (tr - 1) / 2)));
}

/* Sends the move, then ticks until its end + 1 s, measuring the true tool against the line
 * from the commanded pose at the start to goal (the expected end position). Asserts it was
 * accepted and that the true tool ends within 0.5 mm of the goal. */
static line_run run_line(const ctl_linear *req, const double goal[3], bool keep_orientation)
{
    double T0[12];
    desired_pose(T0);
    ctl_error e = {"", ""};
    line_run r = {0};
    if (ctl_move_linear(S->r->c, req, &r.id, &r.duration, NULL, &e))
        fail_msg("move_linear: %s: %s", e.code, e.message);
    double a[3] = {T0[3], T0[7], T0[11]}, ab[3], L2 = 0;
    for (int i = 0; i < 3; i++) ab[i] = goal[i] - a[i], L2 += ab[i] * ab[i];
    const double t_end = lockstep_time(S->r->ls) + r.duration + 1.0;
    while (lockstep_time(S->r->ls) < t_end) {
        lockstep_tick(S->r->ls);
        ctl_poll(S->r->c);
        double T[12], rel[3], s = 0, d2 = 0;
        true_pose(T);
        for (int i = 0; i < 3; i++) rel[i] = T[4 * i + 3] - a[i], s += rel[i] * ab[i];
        s = fmin(fmax(s / L2, 0), 1);
        for (int i = 0; i < 3; i++) d2 += (rel[i] - s * ab[i]) * (rel[i] - s * ab[i]);
        r.dist = fmax(r.dist, sqrt(d2));
        if (keep_orientation) r.rot = fmax(r.rot, angle_between(T0, T));
    }
    double T[12], end = 0;
    true_pose(T);
    for (int i = 0; i < 3; i++) end += (T[4 * i + 3] - goal[i]) * (T[4 * i + 3] - goal[i]);
    print_message("  line %.3f m in %.3f s: off the line by at most %.3f mm, %.3f mrad; at the "
                  "end %.3f mm from the goal\n",
                  sqrt(L2), r.duration, 1e3 * r.dist, 1e3 * r.rot, 1e3 * sqrt(end));
    assert_true(sqrt(end) < 0.5e-3);
    assert_int_equal(status().state, CTL_HOLDING);
    return r;
}

/* Refused with code, the message containing what. */
static void refused(const ctl_linear *req, const char *code, const char *what)
{
    ctl_error e = {"", ""};
    int rc = ctl_move_linear(S->r->c, req, NULL, NULL, NULL, &e);
    print_message("  refused: %s: %s\n", e.code, e.message);
    assert_int_equal(rc, -1);
    assert_string_equal(e.code, code);
    assert_non_null(strstr(e.message, what));
}

/* The PUMA from a pose with room on every side (elbow up, wrist bent): two 0.3 m lines at
 * 0.25 m/s and one of 0.15 m in the tool frame, each within 0.5 mm of the line and 2.5 mrad of
 * the orientation. */
static void puma_lines_are_followed(void **st)
{
    (void)st;
    sim_open(puma_ini, "0.2,0.9,-2.4,0.1,0.8,0.2", 0);
    run_until(2.0);
    const double v = 0.25, L = 0.3;
    const ctl_linear down = {.relative = true, .xyz = {0, 0, -L}, .speed = v, .acceleration = 2};
    const ctl_linear along = {.relative = true, .xyz = {0, L, 0}, .speed = v, .acceleration = 2};
    const ctl_linear tool_z = {.relative = true,
                               .xyz = {0, 0, -L / 2},
                               .frame = CTL_FRAME_TOOL,
                               .speed = v,
                               .acceleration = 2};
    const ctl_linear *moves[] = {&down, &along, &tool_z};
    for (int k = 0; k < 3; k++) {
        double T[12], goal[3];
        desired_pose(T);
        for (int i = 0; i < 3; i++) {
            double off = moves[k]->xyz[i];
            if (moves[k]->frame == CTL_FRAME_TOOL)
                off = T[4 * i] * moves[k]->xyz[0] + T[4 * i + 1] * moves[k]->xyz[1] +
                      T[4 * i + 2] * moves[k]->xyz[2];
            goal[i] = T[4 * i + 3] + off;
        }
        line_run r = run_line(moves[k], goal, true);
        const double *o = moves[k]->xyz, len = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
        assert_true(fabs(r.duration - 1.875 * len / v) < 1e-3); /* the quintic at its peak v */
        assert_true(r.dist < PUMA_LINE_TOL);
        assert_true(r.rot < ROT_TOL);
    }
    assert_int_equal(status().failed_reads, 0);
}

/* With [trajectory] shaper = zvd at 4.5 Hz the shaper acts on the path parameter: the tool
 * stays on the line (the same 0.5 mm), the move longer by the shaper's 0.222 s. */
static void puma_shaped_line_stays_on_it(void **st)
{
    (void)st;
    sim_open(puma_ini, "0.2,0.9,-2.4,0.1,0.8,0.2", 4.5);
    run_until(2.0);
    const ctl_linear down = {
        .relative = true, .xyz = {0, 0, -0.3}, .speed = 0.25, .acceleration = 2};
    double T[12];
    desired_pose(T);
    const double goal[3] = {T[3], T[7], T[11] - 0.3};
    line_run r = run_line(&down, goal, true);
    const double zvd = 1 / (4.5 * sqrt(1 - 0.05 * 0.05)); /* ZVD's length: one damped period */
    assert_true(fabs(r.duration - (2.25 + zvd)) < 1e-3);
    assert_true(r.dist < PUMA_LINE_TOL);
    assert_true(r.rot < ROT_TOL);
}

/* The OMX as shipped (400 Hz): 0.3 m sideways at 0.25 m/s (from y = -0.107 m, past the base's
 * front at 0.19 m, to y = 0.193 m), within 1 mm. */
static void omx_line_is_followed(void **st)
{
    (void)st;
    sim_open(omx_ini, "-0.55,-0.2,0.4,0.6", 0);
    run_until(0.5);
    double T[12];
    desired_pose(T);
    const ctl_linear side = {
        .relative = true, .xyz = {0, 0.3, 0}, .speed = 0.25, .acceleration = 2};
    const double goal[3] = {T[3], T[7] + 0.3, T[11]};
    line_run r = run_line(&side, goal, false);
    assert_true(r.dist < OMX_LINE_TOL);
    /* an orientation the arm cannot take there: a roll of 0.3 rad */
    const double c = cos(0.15), s = sin(0.15);
    ctl_linear roll = {.xyz = {T[3], T[7], T[11]}, .has_orientation = true, .quat = {c, s, 0, 0}};
    refused(&roll, "unreachable", "position and pitch");
    assert_int_equal(status().state, CTL_HOLDING);
}

/* Each refusal names why; the arm holds after every one. */
static void puma_refusals(void **st)
{
    (void)st;
    sim_open(puma_ini, "0,1.5708,-1.5708,0,0,0", 0); /* the ready pose: the wrist at q5 = 0 */
    run_until(0.5);
    const ctl_linear small = {.relative = true, .xyz = {0, 0, -0.05}};
    refused(&small, "unreachable", "singularity");
    ctl_error e = {"", ""};
    const double q[6] = {0.2, 0.9, -2.4, 0.1, 0.8, 0.2};
    if (ctl_move_to(S->r->c, q, 0, NULL, NULL, NULL, &e)) fail_msg("move_to: %s", e.message);
    run_until(lockstep_time(S->r->ls) + 0.3);
    refused(&small, "bad_state", "moving"); /* while the move_to runs */
    /* appended, the line starts where the move_to ends: its goal is that pose + the offset */
    ctl_linear after = small;
    after.append = true;
    uint32_t id;
    double duration;
    if (ctl_move_linear(S->r->c, &after, &id, &duration, NULL, &e))
        fail_msg("appended move_linear: %s: %s", e.code, e.message);
    run_until(lockstep_time(S->r->ls) + 8);
    double Tq[12], T[12];
    dyn_fk(S->m, S->d, q, NULL, Tq);
    desired_pose(T);
    print_message("  appended line: ends %.2e m from the move_to's pose 5 cm lower\n",
                  fabs(T[11] - (Tq[11] - 0.05)) + fabs(T[3] - Tq[3]) + fabs(T[7] - Tq[7]));
    assert_true(fabs(T[11] - (Tq[11] - 0.05)) < 1e-9 && fabs(T[3] - Tq[3]) < 1e-9 &&
                fabs(T[7] - Tq[7]) < 1e-9);
    const ctl_linear far = {.relative = true, .xyz = {2, 0, 0}};
    refused(&far, "unreachable", "out of reach");
    const ctl_linear fast = {
        .relative = true, .xyz = {0, 0, -0.3}, .speed = 10, .acceleration = 100};
    refused(&fast, "limits", "waypoint");
    const ctl_linear nan_off = {.relative = true, .xyz = {0, NAN, 0}};
    refused(&nan_off, "invalid_params", "offset");
    ctl_linear bad_q = {.xyz = {0.3, 0, 0.3}, .has_orientation = true, .quat = {1, 1, 0, 0}};
    refused(&bad_q, "invalid_params", "unit quaternion");
    assert_int_equal(status().state, CTL_HOLDING);
}

/* sum ((q_j - mid_j) / h_j)^2 over the joints, mid_j and h_j the middle and half of joint j's
 * range: how far a posture is from the middle of the ranges. */
static double off_centre(const double *q)
{
    double w = 0;
    for (int j = 0; j < S->r->cfg.n_joints; j++) {
        const double lo = S->r->cfg.joint[j].lower, hi = S->r->cfg.joint[j].upper;
        const double c = (q[j] - (lo + hi) / 2) / ((hi - lo) / 2);
        w += c * c;
    }
    return w;
}

/* The seven-joint arm (redundant7.ini) around a 0.2 m square at 0.25 m/s (down, along y, up,
 * back), four times: each side within 1 mm of its line and 2.5 mrad of the orientation; after
 * each square the posture (its q_des) is nearer the middle of the joint ranges than before it
 * (off_centre), as the planner's centring of the free joint makes it (traj_linear.h): least-norm
 * steps alone leave it a little farther off after every square. */
static void redundant_squares_keep_the_posture(void **st)
{
    (void)st;
    sim_open(redundant_ini, "0.2,0.9,-2.4,0.1,0.8,0.2,0.4", 0);
    run_until(2.0);
    ctl_status before = status();
    double w_before = off_centre(before.q_des);
    const double v = 0.25, L = 0.2, side[4][3] = {{0, 0, -L}, {0, L, 0}, {0, 0, L}, {0, -L, 0}};
    for (int sq = 0; sq < 4; sq++) {
        for (int k = 0; k < 4; k++) {
            const ctl_linear mv = {.relative = true,
                                   .xyz = {side[k][0], side[k][1], side[k][2]},
                                   .speed = v,
                                   .acceleration = 2};
            double T[12], goal[3];
            desired_pose(T);
            for (int i = 0; i < 3; i++) goal[i] = T[4 * i + 3] + side[k][i];
            line_run r = run_line(&mv, goal, true);
            assert_true(r.dist < REDUNDANT_LINE_TOL);
            assert_true(r.rot < ROT_TOL);
        }
        const ctl_status after = status();
        double change = 0;
        for (int j = 0; j < 7; j++) change = fmax(change, fabs(after.q_des[j] - before.q_des[j]));
        const double w = off_centre(after.q_des);
        print_message("  square %d: the posture moved up to %.3f mrad; off the middle of the "
                      "ranges %.6f (before %.6f)\n",
                      sq + 1, 1e3 * change, w, w_before);
        assert_true(w < w_before);
        before = after;
        w_before = w;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PUMA560.ini OPEN_MANIPULATOR_X.ini REDUNDANT7.ini\n", argv[0]);
        return 2;
    }
    puma_ini = argv[1];
    omx_ini = argv[2];
    redundant_ini = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(puma_lines_are_followed, sim_close),
        cmocka_unit_test_teardown(puma_shaped_line_stays_on_it, sim_close),
        cmocka_unit_test_teardown(omx_line_is_followed, sim_close),
        cmocka_unit_test_teardown(puma_refusals, sim_close),
        cmocka_unit_test_teardown(redundant_squares_keep_the_posture, sim_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
