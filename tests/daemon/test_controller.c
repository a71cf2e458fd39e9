/*
 * test_controller.c — control laws of daemon/controller.h against torques computed by hand
 * for a 2-DOF planar arm (point masses at the link tips; Craig, "Introduction to Robotics",
 * example 6.6, the same arm as seed 003), the Coulomb term's velocity, plus the torque clamp
 * and rate limit; the computed-torque law in a sampled loop at config/feasible.h's stability
 * bounds.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/feasible.h"
#include "daemon/controller.h"

#define L1    0.7
#define L2    0.5
#define M1    2.0
#define M2    1.3
#define G     9.81
#define ARM1  0.1 /* armature of joint 1 */
#define VISC2 0.5 /* viscous friction of joint 2 */
#define COUL2 0.2 /* Coulomb friction of joint 2 (+-) */

static dyn_model *model;
static dyn_data *data;
static law_dyn dy; /* the general core on model, data */

static int setup(void **state)
{
    (void)state;
    dyn_model_desc d;
    memset(&d, 0, sizeof d);
    d.n = 2;
    for (int i = 0; i < 2; i++) {
        d.joint[i].type = DYN_REVOLUTE;
        d.joint[i].form = DYN_DH_STANDARD;
        d.joint[i].a = i == 0 ? L1 : L2;
        d.joint[i].mass = i == 0 ? M1 : M2; /* COM at the distal frame origin = link tip */
    }
    d.joint[0].armature = ARM1;
    d.joint[1].viscous = VISC2;
    d.joint[1].coulomb_pos = COUL2;
    d.joint[1].coulomb_neg = -COUL2;
    d.gravity[1] = -G; /* arm in the x-y plane, gravity along -y */
    model = dyn_model_create(&d, NULL, NULL);
    if (!model) return -1;
    data = dyn_data_create(model);
    dy = (law_dyn){&dyn_general, model, data};
    return data ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    dyn_data_free(data);
    dyn_model_free(model);
    return 0;
}

/* Craig eq. 6.60 (point masses at the link ends), without armature/friction. */
static void closed_form(const double *q, const double *qd, const double *qdd, double *tau)
{
    double c1 = cos(q[0]), c2 = cos(q[1]), s2 = sin(q[1]), c12 = cos(q[0] + q[1]);
    tau[0] = M2 * L2 * L2 * (qdd[0] + qdd[1]) + M2 * L1 * L2 * c2 * (2 * qdd[0] + qdd[1]) +
             (M1 + M2) * L1 * L1 * qdd[0] - M2 * L1 * L2 * s2 * qd[1] * qd[1] -
             2 * M2 * L1 * L2 * s2 * qd[0] * qd[1] + M2 * L2 * G * c12 + (M1 + M2) * L1 * G * c1;
    tau[1] = M2 * L1 * L2 * c2 * qdd[0] + M2 * L1 * L2 * s2 * qd[0] * qd[0] + M2 * L2 * G * c12 +
             M2 * L2 * L2 * (qdd[0] + qdd[1]);
}

static law_params params(void)
{
    law_params p;
    memset(&p, 0, sizeof p);
    p.n = 2;
    strcpy(p.name[0], "shoulder");
    strcpy(p.name[1], "elbow");
    double kp[2] = {100, 80}, kd[2] = {20, 18}, ki[2] = {10, 0};
    for (int j = 0; j < 2; j++) {
        p.kp[j] = kp[j];
        p.kd[j] = kd[j];
        p.ki[j] = ki[j];
        p.i_limit[j] = 0.1;
        p.torque[j] = 50;
        p.damping[j] = 3 + j;
    }
    return p;
}

static const double q[2] = {0.3, -0.5}, qd[2] = {0.2, -0.4};
static const double q_des[2] = {0.35, -0.45}, qd_des[2] = {0.1, -0.3}, qdd_des[2] = {0.5, -1};

static void computed_torque_matches_hand(void **state)
{
    (void)state;
    law_params p = params();
    law_state s;
    law_reset(&s, 2);
    double dt = 0.001, tau[2], a[2], expect[2];
    law_compute(CTRL_COMPUTED_TORQUE, &p, &dy, q, qd, q_des, qd_des, qdd_des, dt, &s, tau);
    for (int j = 0; j < 2; j++) {
        double e = q_des[j] - q[j], integral = e * dt;
        assert_true(fabs(s.integral[j] - integral) < 1e-15);
        a[j] = qdd_des[j] + p.kd[j] * (qd_des[j] - qd[j]) + p.kp[j] * e + p.ki[j] * integral;
    }
    closed_form(q, qd, a, expect);
    expect[0] += ARM1 * a[0];
    expect[1] += VISC2 * qd[1] - COUL2; /* qd[1] < 0 */
    for (int j = 0; j < 2; j++) assert_true(fabs(tau[j] - expect[j]) < 1e-9);
}

/* Computed torque's elbow torque for measured velocity v and desired velocity v_des (positions
 * and accelerations as above), with coulomb_velocity and coulomb_width as given. */
static double elbow_torque(cfg_coulomb_velocity src, double width, double v, double v_des)
{
    law_params p = params();
    p.coulomb_velocity = src;
    p.coulomb_width = width;
    law_state s;
    law_reset(&s, 2);
    double vel[2] = {qd[0], v}, vel_des[2] = {qd_des[0], v_des}, tau[2];
    law_compute(CTRL_COMPUTED_TORQUE, &p, &dy, q, vel, q_des, vel_des, qdd_des, 0.001, &s, tau);
    return tau[1];
}

/* The same without any Coulomb friction (the hand computation above, with viscous). */
static double elbow_without_coulomb(double v, double v_des)
{
    law_params p = params();
    double a[2], expect[2], vel[2] = {qd[0], v}, vel_des[2] = {qd_des[0], v_des};
    for (int j = 0; j < 2; j++) {
        double e = q_des[j] - q[j];
        a[j] = qdd_des[j] + p.kd[j] * (vel_des[j] - vel[j]) + p.kp[j] * e + p.ki[j] * e * 0.001;
    }
    closed_form(q, vel, a, expect);
    return expect[1] + VISC2 * v;
}

/* The Coulomb term follows the desired velocity (blended over coulomb_width with the cubic of
 * dynamics.h), the measured one only where it has the desired sign and is faster; with
 * coulomb_velocity = measured, the measured velocity's hard step (the model's smoothing 0). */
static void coulomb_follows_the_plan(void **state)
{
    (void)state;
    const struct {
        cfg_coulomb_velocity src;
        double width, v, v_des, coulomb; /* expected Coulomb part, in units of COUL2 */
    } c[] = {
        {COULOMB_MEASURED, 0.01, 0.1, -0.3, 1},            /* the arm still going the old way */
        {COULOMB_DESIRED, 0, 0.1, -0.3, -1},               /* ... the plan has reversed already */
        {COULOMB_DESIRED, 0.01, 0, 0.002, 0.296},          /* stuck, plan starting: x = 0.2 */
        {COULOMB_DESIRED, 0.01, 0.05, 0, 0},               /* holding, pushed: no Coulomb push */
        {COULOMB_DESIRED, 0.01, -0.4, -0.001, -1},         /* faster the planned way: measured */
        {COULOMB_DESIRED, 0.01, -0.0005, -0.001, -0.1495}, /* slower the planned way: desired */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        double got = elbow_torque(c[i].src, c[i].width, c[i].v, c[i].v_des);
        double want = elbow_without_coulomb(c[i].v, c[i].v_des) + c[i].coulomb * COUL2;
        if (!(fabs(got - want) < 1e-9))
            fail_msg("case %zu: elbow torque %.12g, expected %.12g", i, got, want);
    }
}

/* viscous_velocity = desired: the viscous term is viscous x qd_des in place of viscous x qd,
 * with either Coulomb source; measured (the default) leaves the torque as above. */
static void viscous_follows_the_plan(void **state)
{
    (void)state;
    const double v = -0.2, v_des = 0.3;
    for (int src = COULOMB_DESIRED; src <= COULOMB_MEASURED; src++) {
        law_params p = params();
        p.coulomb_velocity = (cfg_coulomb_velocity)src;
        p.coulomb_width = 0.01;
        double tau[2][2];
        for (int vs = VISCOUS_MEASURED; vs <= VISCOUS_DESIRED; vs++) {
            p.viscous_velocity = (cfg_viscous_velocity)vs;
            law_state s;
            law_reset(&s, 2);
            double vel[2] = {qd[0], v}, vel_des[2] = {qd_des[0], v_des};
            law_compute(CTRL_COMPUTED_TORQUE, &p, &dy, q, vel, q_des, vel_des, qdd_des, 0.001, &s,
                        tau[vs]);
        }
        assert_true(fabs(tau[VISCOUS_MEASURED][1] -
                         elbow_torque(p.coulomb_velocity, 0.01, v, v_des)) < 1e-12);
        if (!(fabs(tau[VISCOUS_DESIRED][1] - tau[VISCOUS_MEASURED][1] - VISC2 * (v_des - v)) <
              1e-9))
            fail_msg(
                "coulomb source %d: viscous at the desired velocity adds %.12g, expected %.12g",
                src, tau[VISCOUS_DESIRED][1] - tau[VISCOUS_MEASURED][1], VISC2 * (v_des - v));
        assert_true(fabs(tau[VISCOUS_DESIRED][0] - tau[VISCOUS_MEASURED][0]) <
                    1e-12); /* joint 1: no viscous */
    }
}

static void pd_gravity_matches_hand(void **state)
{
    (void)state;
    law_params p = params();
    law_state s;
    law_reset(&s, 2);
    double dt = 0.002, tau[2], zero[2] = {0, 0}, g[2];
    law_compute(CTRL_PD_GRAVITY, &p, &dy, q, qd, q_des, qd_des, qdd_des, dt, &s, tau);
    closed_form(q, zero, zero, g);
    for (int j = 0; j < 2; j++) {
        double e = q_des[j] - q[j];
        double expect = p.kp[j] * e + p.kd[j] * (qd_des[j] - qd[j]) + p.ki[j] * e * dt + g[j];
        assert_true(fabs(tau[j] - expect) < 1e-9);
    }
}

static void gravity_comp_and_damping_match_hand(void **state)
{
    (void)state;
    law_params p = params();
    law_state s;
    law_reset(&s, 2);
    double tau[2], zero[2] = {0, 0}, g[2];
    closed_form(q, zero, zero, g);
    law_compute(CTRL_GRAVITY_COMP, &p, &dy, q, qd, q_des, qd_des, qdd_des, 0.001, &s, tau);
    assert_true(fabs(tau[0] - g[0]) < 1e-9);
    assert_true(fabs(tau[1] - (g[1] + VISC2 * qd[1] - COUL2)) < 1e-9);
    law_damp(&p, &dy, q, qd, tau);
    for (int j = 0; j < 2; j++) assert_true(fabs(tau[j] - (g[j] - p.damping[j] * qd[j])) < 1e-9);
}

/* The integral is bounded by i_limit (anti-windup). */
static void integral_is_bounded(void **state)
{
    (void)state;
    law_params p = params();
    law_state s;
    law_reset(&s, 2);
    double tau[2];
    for (int i = 0; i < 5000; i++)
        law_compute(CTRL_COMPUTED_TORQUE, &p, &dy, q, qd, q_des, qd_des, qdd_des, 0.001, &s, tau);
    assert_true(fabs(s.integral[0] - 0.1) < 1e-12); /* 0.05 rad * 5 s = 0.25 > 0.1 */
}

/* Clamp counts saturated joints; the rate limit bounds the change per tick. */
static void clamp_and_rate_limit(void **state)
{
    (void)state;
    law_params p = params();
    p.torque[0] = 5;
    p.torque[1] = 10;
    p.torque_rate[1] = 1000; /* N m/s -> 1 N m per 1 ms tick */
    law_state s;
    law_reset(&s, 2);
    double tau[2] = {-7.5, 8};
    assert_int_equal(law_limit(&p, 0.001, &s, tau), 1);
    assert_true(tau[0] == -5);
    assert_true(fabs(tau[1] - 1.0) < 1e-12);
    tau[0] = 3;
    tau[1] = 20; /* clamped to 10, then rate limited to 2 */
    assert_int_equal(law_limit(&p, 0.001, &s, tau), 1);
    assert_true(tau[0] == 3);
    assert_true(fabs(tau[1] - 2.0) < 1e-12);
    tau[0] = NAN;
    tau[1] = 1.5;
    assert_int_equal(law_limit(&p, 0.001, &s, tau), 0);
    assert_true(tau[0] == 0); /* never a NaN command */
    assert_true(fabs(tau[1] - 1.5) < 1e-12);
}

/* The largest |e| over the last tenth of n periods of armd's computed-torque law on one joint
 * turning about the vertical (no gravity torque; inertia I = 0.5 kg x (0.5 m)^2 + armature 0.1),
 * its torque held over each period dt: the exact zero-order-hold step of the rigid joint (what
 * armsim's RK4 computes for a held torque). From e = 1e-3 rad at rest, q_des = 0. */
static double sampled_loop(double kp, double kd, double dt, int n)
{
    dyn_model_desc d;
    memset(&d, 0, sizeof d);
    d.n = 1;
    d.joint[0].type = DYN_REVOLUTE;
    d.joint[0].form = DYN_DH_STANDARD;
    d.joint[0].a = 0.5;
    d.joint[0].mass = 0.5;
    d.joint[0].armature = 0.1;
    d.gravity[2] = -G;
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    dyn_data *dd = dyn_data_create(m);
    law_dyn one = {&dyn_general, m, dd};
    const double inertia = 0.5 * 0.25 + 0.1;
    law_params p;
    memset(&p, 0, sizeof p);
    p.n = 1;
    p.kp[0] = kp;
    p.kd[0] = kd;
    law_state s;
    law_reset(&s, 1);
    double q = -1e-3, qd = 0, zero = 0, tau, peak = 0;
    for (int k = 0; k < n && fabs(q) < 1e6; k++) {
        law_compute(CTRL_COMPUTED_TORQUE, &p, &one, &q, &qd, &zero, &zero, &zero, dt, &s, &tau);
        double acc = tau / inertia;
        q += qd * dt + 0.5 * acc * dt * dt;
        qd += acc * dt;
        if (k >= n - n / 10) peak = fmax(peak, fabs(q));
    }
    dyn_data_free(dd);
    dyn_model_free(m);
    return fabs(q) < 1e6 ? peak : INFINITY;
}

/* armd's law on a sampled joint against config/feasible.h's bounds: 1 % inside each bound the
 * error stays below its start, 1 % outside it grows a hundredfold. */
static void gains_at_the_stability_bounds(void **state)
{
    (void)state;
    const double dt = 0.001, e0 = 1e-3;
    /* kd dt < 2 (kp dt^2 = kd dt / 2) */
    char why[256];
    assert_true(sampled_loop(0.5 * 1.98 / (dt * dt), 1.98 / dt, dt, 5000) < e0);
    assert_int_equal(feas_gains_stable("j", 0.5 * 1.98 / (dt * dt), 1.98 / dt, dt, why, 256), 0);
    assert_true(sampled_loop(0.5 * 2.02 / (dt * dt), 2.02 / dt, dt, 5000) > 100 * e0);
    assert_int_equal(feas_gains_stable("j", 0.5 * 2.02 / (dt * dt), 2.02 / dt, dt, why, 256), -1);
    /* kp dt < 2 kd (kd dt = 1) */
    double kd = 1 / dt;
    assert_true(sampled_loop(0.99 * 2 * kd / dt, kd, dt, 5000) < e0);
    assert_int_equal(feas_gains_stable("j", 0.99 * 2 * kd / dt, kd, dt, why, 256), 0);
    assert_true(sampled_loop(1.01 * 2 * kd / dt, kd, dt, 5000) > 100 * e0);
    assert_int_equal(feas_gains_stable("j", 1.01 * 2 * kd / dt, kd, dt, why, 256), -1);
    /* the PUMA example's gains, far inside */
    assert_true(sampled_loop(400, 40, dt, 5000) < 1e-6 * e0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(computed_torque_matches_hand),
        cmocka_unit_test(coulomb_follows_the_plan),
        cmocka_unit_test(viscous_follows_the_plan),
        cmocka_unit_test(pd_gravity_matches_hand),
        cmocka_unit_test(gravity_comp_and_damping_match_hand),
        cmocka_unit_test(integral_is_bounded),
        cmocka_unit_test(clamp_and_rate_limit),
        cmocka_unit_test(gains_at_the_stability_bounds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
