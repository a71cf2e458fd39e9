/*
 * test_impedance.c — controller = cartesian_impedance on the real loop, host and driver against
 * armsim's arm in process, on simulated time (daemon/lockstep.h); the PUMA 560 at 1 kHz holding
 * a pose with room (elbow up, wrist bent), the model's Coulomb friction cancelled at the
 * measured velocity (coulomb_velocity = measured, friction_smoothing 0.01 in both the model and
 * armsim), armsim's truth through the forward kinematics:
 *  - against armsim's wall (-z, 20000 N/m, the held target 10 mm inside it): at rest, the wall's
 *    force (its stiffness times the tool's true depth) equals the z stiffness times the tool's
 *    distance from its target within 5 %;
 *  - a 20 N step force down at the tool (--tool-force), every axis at damping ratio 0.3: the
 *    overshoot of the closed loop's mode the force drives most gives a damping ratio within
 *    20 % of 0.3, and at rest the z spring's force K e balances F within 5 %;
 *  - hand-guiding: with z free (stiffness 0), a 10 N push for 0.3 s moves the tool along z
 *    while x and y stay within 2 mm, and once it ends guide_damping slows the tool to under 5 %
 *    of its speed;
 *  - a reload or an impedance.set that would take the spring past the sampled loop's bound is
 *    refused, naming it; one within is taken; while the arm moves, a spring more than doubled
 *    is refused ("bad_state");
 *  - a redundant arm (seven joints: redundant7.ini): the law's null-space torque exerts no
 *    force at the tool (Lambda J H^-1 of it is 0 to 1e-9 of its size); after a push on joint 7
 *    the joints return to their posture within 10 mrad (the wrist's Coulomb friction against
 *    the posture's stiffness) and the tool to its target within 1 mm; with the joints' kp and
 *    kd at 0 (no posture term) the same push sends the arm wandering in its null space.
 *
 * usage: test_daemon_impedance PUMA560.ini REDUNDANT7.ini
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

#include "daemon/controller.h"
#include "daemon/impedance.h"
#include "tests/daemon/lockstep_rig.h"

static const char *puma_ini, *redundant_ini;
static const char *const Q0 = "0.2,0.9,-2.4,0.1,0.8,0.2";
static const char *const Q0_7 = "0.2,0.9,-2.4,0.1,0.8,0.2,0.4";

typedef struct {
    const char *ini, *q0; /* the arm and armsim's start pose */
    lockstep_rig *r;
    dyn_model *m; /* the arm's model for the truth's forward kinematics */
    dyn_data *d;
} sim;

static sim *S;

/* The arm of ini (started from q0) loaded with cartesian_impedance, translational stiffness
 * k_xy (x, y) and k_z, damping ratio zeta_z on z (0.7 elsewhere), not started. */
static armd_config *sim_load_arm(const char *ini, const char *q0, double k_xy, double k_z,
                                 double zeta_z)
{
    S = calloc(1, sizeof *S);
    S->ini = ini;
    S->q0 = q0;
    S->r = lockstep_rig_load(ini);
    armd_config *cfg = &S->r->cfg;
    cfg->controller = CTRL_CARTESIAN_IMPEDANCE;
    cfg->coulomb_velocity = COULOMB_MEASURED;
    cfg->model.friction_smoothing = 0.01;
    cfg_impedance *imp = &cfg->impedance;
    for (int i = 0; i < 6; i++) {
        imp->stiffness[i] = i < 2 ? k_xy : i == 2 ? k_z : 50;
        imp->damping_ratio[i] = i == 2 ? zeta_z : 0.7;
    }
    for (int j = 0; j < cfg->n_joints; j++) cfg->joint[j].following_error = 1;
    S->m = dyn_model_create(&cfg->model, NULL, NULL);
    assert_non_null(S->m);
    S->d = dyn_data_create(S->m);
    return cfg;
}

/* The PUMA, as sim_load_arm, from Q0. */
static armd_config *sim_load(double k_xy, double k_z, double zeta_z)
{
    return sim_load_arm(puma_ini, Q0, k_xy, k_z, zeta_z);
}

/* Starts armsim from the arm's q0 with the options (NULL-terminated) and enables the arm. */
static void sim_start(const char *const *extra)
{
    char *argv[16] = {"--q0", (char *)S->q0};
    int argc = 2;
    for (int i = 0; extra && extra[i]; i++) argv[argc++] = (char *)extra[i];
    lockstep_rig_start(S->r, S->ini, argc, argv);
    assert_int_equal(lockstep_rig_status(S->r).controller, CTRL_CARTESIAN_IMPEDANCE);
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

/* The tool's true position (armsim's q) and its target (the loop's q_des), base frame [m]. */
static void positions(double p[3], double target[3])
{
    physics_state truth;
    double T[12];
    lockstep_truth(S->r->ls, &truth);
    dyn_fk(S->m, S->d, truth.q, NULL, T);
    for (int k = 0; k < 3; k++) p[k] = T[4 * k + 3];
    ctl_status st = lockstep_rig_status(S->r);
    dyn_fk(S->m, S->d, st.q_des, NULL, T);
    for (int k = 0; k < 3; k++) target[k] = T[4 * k + 3];
}

/* The tool's position at Q0 [m]. */
static void start_position(double p[3])
{
    double q[CFG_MAX_JOINTS], T[12];
    assert_int_equal(
        sscanf(Q0, "%lf,%lf,%lf,%lf,%lf,%lf", &q[0], &q[1], &q[2], &q[3], &q[4], &q[5]), 6);
    dyn_fk(S->m, S->d, q, NULL, T);
    for (int k = 0; k < 3; k++) p[k] = T[4 * k + 3];
}

static void wall_force_is_stiffness_times_penetration(void **st)
{
    (void)st;
    const double K = 2000, k_wall = 20000;
    sim_load(K, K, 0.7);
    double p0[3], p[3], tg[3];
    start_position(p0);
    const double wall_z = p0[2] - 0.005; /* 5 mm below the tool */
    char wall[64];
    snprintf(wall, sizeof wall, "-z,%.6f,%g", wall_z, k_wall);
    const char *opts[] = {"--wall", wall, NULL};
    sim_start(opts);
    lockstep_rig_run_until(S->r, 0.5);
    const ctl_linear down = {.relative = true, .xyz = {0, 0, -0.015}, .speed = 0.05};
    ctl_error e = {"", ""};
    uint32_t id;
    double duration;
    if (ctl_move_linear(S->r->c, &down, &id, &duration, NULL, &e))
        fail_msg("move_linear: %s: %s", e.code, e.message);
    lockstep_rig_run_until(S->r, 0.5 + duration + 3);
    positions(p, tg);
    const double depth = wall_z - p[2], F = k_wall * depth, spring = K * (p[2] - tg[2]);
    ctl_status s = lockstep_rig_status(S->r);
    print_message("  wall at z = %.4f m, target z = %.4f m, tool z = %.4f m (%s): wall force "
                  "%.3f N, K x penetration %.3f N (%+.2f %%)\n",
                  wall_z, tg[2], p[2], ctl_state_name(s.state), F, spring, 100 * (spring - F) / F);
    assert_true(F > 10); /* the target is well inside the wall */
    if (!(fabs(spring - F) <= 0.05 * F))
        fail_msg("wall force %.3f N, K x penetration %.3f N: more than 5 %% apart", F, spring);
    for (int k = 0; k < 2; k++)
        if (!(fabs(p[k] - tg[k]) <= 1e-3))
            fail_msg("%c off its target by %.4f m", "xy"[k], p[k] - tg[k]);
    assert_true(s.state == CTL_HOLDING || s.state == CTL_MOVING);
}

/* The tool's displacement from its target, 6 entries (position [m], rotation vector [rad],
 * base frame): armsim's true pose against FK(q_des). */
static void displacement(double d[6])
{
    physics_state truth;
    double T[12], Td[12], e[6];
    lockstep_truth(S->r->ls, &truth);
    dyn_fk(S->m, S->d, truth.q, NULL, T);
    ctl_status st = lockstep_rig_status(S->r);
    dyn_fk(S->m, S->d, st.q_des, NULL, Td);
    dyn_pose_error(Td, T, e);
    for (int i = 0; i < 6; i++) d[i] = -e[i];
}

/* Overshoot (peak / final - 1) to damping ratio, for a second-order step response. */
static double zeta_of_overshoot(double os)
{
    return -log(os) / sqrt(M_PI * M_PI + log(os) * log(os));
}

/* Every axis at damping ratio 0.3, K = (2000, 2000, 1000) N/m, 50 N m/rad; 20 N down from
 * t = 3 s. With S = diag(sqrt K) and S^-1 Lambda S^-1 = V diag(mu) V^T at the start pose, the
 * modes y = V^T S x each answer the step as mu y'' + 2 zeta sqrt(mu) y' + y = f (f = V^T S^-1 F):
 * the mode the force drives most overshoots by what its damping ratio gives. The z axis alone
 * (a sum of modes) is reported beside it. */
static void step_response_damping_ratio(void **st)
{
    (void)st;
    const double zeta = 0.3, F[6] = {0, 0, -20, 0, 0, 0};
    armd_config *cfg = sim_load(2000, 1000, zeta);
    for (int i = 0; i < 6; i++) cfg->impedance.damping_ratio[i] = zeta;
    const char *opts[] = {"--tool-force", "3,0,0,-20,20", NULL};
    sim_start(opts);
    lockstep_rig_run_until(S->r, 2.999);
    physics_state truth;
    lockstep_truth(S->r->ls, &truth);
    double J[36], A[36], Lambda[36], B[36], mu[6], V[36], s[6], f[6], d0[6], d[6];
    assert_int_equal(dyn_task_inertia(S->m, S->d, truth.q, J, A, Lambda), 0);
    for (int i = 0; i < 6; i++) s[i] = sqrt(cfg->impedance.stiffness[i]);
    for (int i = 0; i < 36; i++) B[i] = Lambda[i] / (s[i / 6] * s[i % 6]);
    dyn_sym_eigen(6, B, mu, V);
    int k = 0; /* the mode the force drives most */
    for (int m = 0; m < 6; m++) {
        f[m] = 0;
        for (int i = 0; i < 6; i++) f[m] += V[i * 6 + m] * F[i] / s[i];
        if (fabs(f[m]) > fabs(f[k])) k = m;
    }
    displacement(d0);
    double peak = 0, zpeak = 0, y = 0;
    while (lockstep_time(S->r->ls) < 10) {
        lockstep_tick(S->r->ls);
        displacement(d);
        y = 0;
        for (int i = 0; i < 6; i++) y += V[i * 6 + k] * s[i] * (d[i] - d0[i]);
        peak = fmax(peak, y / f[k]);
        zpeak = fmax(zpeak, d0[2] - d[2]);
    }
    lockstep_rig_run_until(S->r, 18);
    displacement(d);
    y = 0;
    for (int i = 0; i < 6; i++) y += V[i * 6 + k] * s[i] * (d[i] - d0[i]);
    const double settled = y / f[k], measured = zeta_of_overshoot(peak / settled - 1);
    const double zss = d0[2] - d[2], zmeas = zeta_of_overshoot(zpeak / zss - 1);
    print_message("  20 N down: mode %d (omega %.2f rad/s, %.0f %% of the z step): settles at "
                  "%.4f of f, overshoot %.1f %%: damping ratio %.3f against %.3f; the z axis "
                  "alone %.2f mm, peak %.2f mm: %.3f\n",
                  k, 1 / sqrt(mu[k]), 100 * f[k] * V[2 * 6 + k] / s[2] / (F[2] / s[2] / s[2]),
                  settled, 100 * (peak / settled - 1), measured, zeta, 1e3 * zss, 1e3 * zpeak,
                  zmeas);
    const double ez = -d[2]; /* the spring's stretch at rest along z: K e balances F */
    if (!(fabs(1000 * ez - 20) <= 0.05 * 20)) fail_msg("K e = %.3f N at rest, F = 20 N", 1000 * ez);
    if (!(fabs(settled - 1) <= 0.1)) /* Coulomb creep moves the rest by +-0.5 mm */
        fail_msg("the mode settles at %.4f of f", settled);
    if (!(fabs(measured - zeta) <= 0.2 * zeta))
        fail_msg("the mode's damping ratio %.3f from its overshoot, configured %.3f", measured,
                 zeta);
}

static void free_axis_guides(void **st)
{
    (void)st;
    sim_load(2000, 0, 0.7);
    const char *opts[] = {"--tool-force", "1,0,0,-10,0.3", NULL};
    sim_start(opts);
    double p[3], tg[3], a[3];
    lockstep_rig_run_until(S->r, 1);
    positions(a, tg);
    double dev = 0, v_end = 0, prev = a[2];
    while (lockstep_time(S->r->ls) < 1.3) {
        lockstep_tick(S->r->ls);
        positions(p, tg);
        for (int k = 0; k < 2; k++) dev = fmax(dev, fabs(p[k] - a[k]));
        v_end = (prev - p[2]) * S->r->cfg.rate_hz;
        prev = p[2];
    }
    const double moved = a[2] - p[2];
    lockstep_rig_run_until(S->r, 5);
    positions(p, tg);
    const double later = a[2] - p[2];
    lockstep_tick(S->r->ls);
    double q[3];
    positions(q, tg);
    const double v_later = (p[2] - q[2]) * S->r->cfg.rate_hz;
    print_message("  free z under 10 N for 0.3 s: moved %.2f mm at %.1f mm/s (x, y within %.3f "
                  "mm); 3.7 s after, %.2f mm at %.3f mm/s\n",
                  1e3 * moved, 1e3 * v_end, 1e3 * dev, 1e3 * later, 1e3 * v_later);
    assert_true(moved > 5e-3);                 /* a 2000 N/m spring would have given 5 mm at rest */
    assert_true(dev <= 2e-3);                  /* the stiff axes hold (inertial coupling) */
    assert_true(fabs(v_later) < 0.05 * v_end); /* guide_damping stopped it (Coulomb creep) */
    assert_int_equal(lockstep_rig_status(S->r).state, CTL_HOLDING);
}

static void unstable_change_refused(void **st)
{
    (void)st;
    sim_load(2000, 2000, 0.7);
    sim_start(NULL);
    lockstep_rig_run_until(S->r, 0.5);
    armd_config *cand = malloc(sizeof *cand);
    *cand = S->r->cfg;
    cand->impedance.stiffness[2] = 1e6;
    cand->impedance.damping_ratio[2] = 0.01;
    ctl_error err = {{0}, {0}};
    char changed[256];
    int rc = ctl_reload(S->r->c, cand, changed, sizeof changed, NULL, &err);
    print_message("  refused: %s: %s\n", err.code, err.message);
    assert_int_not_equal(rc, 0);
    assert_string_equal(err.code, "infeasible");
    assert_non_null(strstr(err.message, "[impedance] z: the spring's fastest mode"));
    free(cand);
    /* the same through impedance.set; then a change within the bound is taken */
    cfg_impedance m;
    ctl_impedance_get(S->r->c, &m);
    m.stiffness[2] = 1e6;
    m.damping_ratio[2] = 0.01;
    assert_int_not_equal(ctl_impedance_set(S->r->c, &m, NULL, &err), 0);
    assert_string_equal(err.code, "infeasible");
    m.stiffness[2] = 3000;
    m.damping_ratio[2] = 0.7;
    if (ctl_impedance_set(S->r->c, &m, NULL, &err)) fail_msg("%s: %s", err.code, err.message);
    ctl_impedance_get(S->r->c, &m);
    assert_float_equal(m.stiffness[2], 3000, 0);
    /* while the arm moves, no spring more than doubled */
    const ctl_linear down = {.relative = true, .xyz = {0, 0, -0.05}, .speed = 0.05};
    uint32_t id;
    double duration;
    if (ctl_move_linear(S->r->c, &down, &id, &duration, NULL, &err))
        fail_msg("move_linear: %s: %s", err.code, err.message);
    lockstep_rig_run_until(S->r, lockstep_time(S->r->ls) + 0.3);
    assert_int_equal(lockstep_rig_status(S->r).state, CTL_MOVING);
    m.stiffness[0] = 5000;
    assert_int_not_equal(ctl_impedance_set(S->r->c, &m, NULL, &err), 0);
    print_message("  while moving: %s: %s\n", err.code, err.message);
    assert_string_equal(err.code, "bad_state");
    lockstep_rig_run_until(S->r, lockstep_time(S->r->ls) + duration + 1);
    assert_int_equal(lockstep_rig_status(S->r).state, CTL_HOLDING);
}

/* The law at q, q_des (qd = qd_des = qdd_des = 0) on the general core. */
static void law_at(const law_params *p, const double *q, const double *q_des, double *tau)
{
    const double zero[CFG_MAX_JOINTS] = {0};
    const law_dyn dy = {&dyn_general, S->m, S->d};
    assert_int_equal(law_impedance(p, &dy, q, zero, q_des, zero, zero, 1e-3, tau), 0);
}

static void null_space_torque_is_invisible_at_the_tool(void **st)
{
    (void)st;
    armd_config *cfg = sim_load_arm(redundant_ini, Q0_7, 2000, 2000, 0.7);
    const int n = cfg->n_joints;
    assert_int_equal(n, 7);
    law_params with, without;
    law_params_from_config(&with, cfg);
    without = with;
    for (int j = 0; j < n; j++) without.kp[j] = without.kd[j] = 0;
    double q[7], q_des[7], a[7], b[7], dtau[7], x[7], J[6 * 7], A[36], Lambda[36];
    const double zero[7] = {0};
    assert_int_equal(sscanf(Q0_7, "%lf,%lf,%lf,%lf,%lf,%lf,%lf", &q[0], &q[1], &q[2], &q[3], &q[4],
                            &q[5], &q[6]),
                     7);
    for (int j = 0; j < n; j++) q_des[j] = q[j] + 0.02 * (j % 3 - 1) + 0.01; /* every joint off */
    law_at(&with, q, q_des, a);
    law_at(&without, q, q_des, b);
    double size = 0;
    for (int j = 0; j < n; j++) {
        dtau[j] = a[j] - b[j]; /* the null-space torque alone */
        size = fmax(size, fabs(dtau[j]));
    }
    /* x = H^-1 dtau (forward dynamics from rest without gravity), then Lambda J x */
    assert_int_equal(dyn_general.forward(S->m, S->d, q, zero, dtau, NULL, DYN_ARMATURE, x), 0);
    assert_int_equal(dyn_task_inertia(S->m, S->d, q, J, A, Lambda), 0);
    double Jx[6] = {0}, worst = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < n; j++) Jx[i] += J[i * n + j] * x[j];
    for (int i = 0; i < 6; i++) {
        double f = 0;
        for (int k = 0; k < 6; k++) f += Lambda[i * 6 + k] * Jx[k];
        worst = fmax(worst, fabs(f));
    }
    print_message("  null-space torque up to %.3f N m; the force it exerts at the tool %.2e\n",
                  size, worst);
    assert_true(size > 0.1);
    assert_true(worst <= 1e-9 * size);
}

/* Pushes joint 7 with 2 N m for 0.2 s from 1 s on, holding with the joints' gains as
 * configured (posture true) or with kp, kd 0; returns the largest joint error from the posture
 * q_des over the 3 s after the push began and writes the largest over the last second, the
 * tool's distance from its target at the end [m] and the final state. */
static double push_and_settle(bool posture, double *q_end, double *tool_err, ctl_status *end)
{
    armd_config *cfg = sim_load_arm(redundant_ini, Q0_7, 2000, 2000, 0.7);
    if (!posture)
        for (int j = 0; j < cfg->n_joints; j++) cfg->joint[j].kp = cfg->joint[j].kd = 0;
    const char *opts[] = {"--push", "1,7,2,0.2", NULL};
    sim_start(opts);
    lockstep_rig_run_until(S->r, 1);
    double peak = 0;
    *q_end = 0;
    physics_state truth;
    while (lockstep_time(S->r->ls) < 4) {
        lockstep_tick(S->r->ls);
        lockstep_truth(S->r->ls, &truth);
        const ctl_status s = lockstep_rig_status(S->r);
        double e = 0;
        for (int j = 0; j < cfg->n_joints; j++) e = fmax(e, fabs(truth.q[j] - s.q_des[j]));
        peak = fmax(peak, e);
        if (lockstep_time(S->r->ls) >= 3) *q_end = fmax(*q_end, e);
    }
    double p[3], tg[3];
    positions(p, tg);
    *tool_err = sqrt((p[0] - tg[0]) * (p[0] - tg[0]) + (p[1] - tg[1]) * (p[1] - tg[1]) +
                     (p[2] - tg[2]) * (p[2] - tg[2]));
    *end = lockstep_rig_status(S->r);
    sim_close(NULL);
    return peak;
}

static void redundant_arm_holds_its_posture(void **st)
{
    (void)st;
    double q_end, tool_err, q_free, tool_free;
    ctl_status s, s_free;
    const double peak = push_and_settle(true, &q_end, &tool_err, &s);
    const double peak_free = push_and_settle(false, &q_free, &tool_free, &s_free);
    print_message("  2 N m on joint 7 for 0.2 s: with the posture term the joints move up to "
                  "%.1f mrad and settle within %.1f mrad, the tool %.3f mm from its target "
                  "(%s); without it up to %.0f mrad (%s%s%s)\n",
                  1e3 * peak, 1e3 * q_end, 1e3 * tool_err, ctl_state_name(s.state), 1e3 * peak_free,
                  ctl_state_name(s_free.state), *s_free.fault ? ": " : "", s_free.fault);
    if (s.state != CTL_HOLDING) fail_msg("%s: %s", ctl_state_name(s.state), s.fault);
    assert_true(peak > 10e-3);     /* the push moved the joints */
    assert_true(q_end <= 10e-3);   /* back to the posture within the wrist's Coulomb stick band */
    assert_true(tool_err <= 1e-3); /* 2 N of the 2000 N/m spring: within the joints' friction */
    assert_true(peak_free > 0.1);  /* without the term the arm wanders off in its null space */
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s PUMA560.ini REDUNDANT7.ini\n", argv[0]);
        return 2;
    }
    puma_ini = argv[1];
    redundant_ini = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(wall_force_is_stiffness_times_penetration, sim_close),
        cmocka_unit_test_teardown(step_response_damping_ratio, sim_close),
        cmocka_unit_test_teardown(free_axis_guides, sim_close),
        cmocka_unit_test_teardown(unstable_change_refused, sim_close),
        cmocka_unit_test_teardown(null_space_torque_is_invisible_at_the_tool, sim_close),
        cmocka_unit_test_teardown(redundant_arm_holds_its_posture, sim_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
