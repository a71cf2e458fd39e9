/*
 * test_payload_fit.c — payload_fit's accumulator on the PUMA 560 example. The torques come from
 * dynamics' own inverse dynamics of the model plus a known payload (2 kg, 0.1 m off the tool
 * axis, with its own inertia), friction included, and the fit must give the payload back:
 * - near-exactly from slow motions (the regressor and the model's terms are right);
 * - within 1 % and 2 mm from quintic moves through the default poses at 1 kHz with torque noise,
 *   where the payload's own inertia torques are not modelled, and with a stiction-like bias on
 *   the joints at rest that must not matter (they are left out);
 * - a mass near 0 and no centre without a payload; refusals for no motion and for a motion that
 *   cannot tell the parameters apart.
 * argv[1]: the PUMA 560 example INI.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/payload_fit.h"

static const char *puma_ini;
static armd_config cfg;
static const double ready[6] = {0, 1.5708, -1.5708, 0, 0, 0};
static const dyn_payload two_kg = {2.0, {0.1, 0.0, 0.05}, {0.004, 0, 0, 0.006, 0, 0.003}};

static void load(void)
{
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(puma_ini, &cfg, &rep);
    cfg_report_free(&rep);
    assert_int_equal(errors, 0);
}

/* A deterministic normal deviate (xorshift + Box-Muller). */
static double gauss(uint64_t *s)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        u[i] = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]);
}

typedef struct {
    dyn_model *m;
    dyn_data *d;
} plant;

static plant plant_with(const dyn_payload *p)
{
    dyn_model_desc d = cfg.model;
    d.payload = *p;
    plant pl = {dyn_model_create(&d, NULL, NULL), NULL};
    assert_non_null(pl.m);
    pl.d = dyn_data_create(pl.m);
    return pl;
}

static void plant_free(plant *pl)
{
    dyn_data_free(pl->d);
    dyn_model_free(pl->m);
}

/* Quintic rest-to-rest moves through poses[0..np) and back to poses[0], T [s] each, sampled at
 * 1 kHz into acc; torques from the plant plus noise sd [N m]; joints at rest get bias [N m] of
 * alternating sign (an arm sticking somewhere in its stiction band). Every stall_every-th sample
 * (0: none) starts a stretch of 8 whose measured accelerations are off by 40 rad/s^2 on every
 * joint: what a host stall between a state read and a torque write does to the differentiated
 * velocity. Returns the samples. */
static long run_moves(payload_acc *acc, plant *pl, double poses[][CFG_MAX_JOINTS], int np, double T,
                      double sd, double bias, double v_min, int stall_every)
{
    long n = 0;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    long samples = 0;
    for (int k = 0; k < np; k++) {
        const double *a = poses[k], *b = poses[(k + 1) % np];
        for (int i = 0; i <= (int)(T * 1000); i++) {
            double t = i / 1000.0 / T, q[6], qd[6], qdd[6], tau[6];
            double p = t * t * t * (10 - 15 * t + 6 * t * t);
            double v = 30 * t * t * (1 - t) * (1 - t) / T;
            double acc2 = 60 * t * (1 - t) * (1 - 2 * t) / (T * T);
            for (int j = 0; j < 6; j++) {
                q[j] = a[j] + (b[j] - a[j]) * p;
                qd[j] = (b[j] - a[j]) * v;
                qdd[j] = (b[j] - a[j]) * acc2;
            }
            dyn_rnea(pl->m, pl->d, q, qd, qdd, NULL, DYN_ALL, tau);
            for (int j = 0; j < 6; j++) {
                tau[j] += sd * gauss(&s);
                if (fabs(qd[j]) < v_min) tau[j] += (i % 2 ? bias : -bias) * (j + 1);
            }
            if (stall_every && n++ % stall_every < 8)
                for (int j = 0; j < 6; j++) qdd[j] += 40;
            samples += payload_acc_add(acc, q, qd, qdd, tau) > 0;
        }
    }
    return samples;
}

static void test_slow_motion_exact(void **state)
{
    (void)state;
    load();
    double poses[PAYLOAD_FIT_MAX_POSES][CFG_MAX_JOINTS];
    int np = payload_default_poses(&cfg, ready, poses);
    assert_int_equal(np, 8);
    for (int k = 0; k < np; k++)
        for (int j = 0; j < 6; j++) {
            assert_true(poses[k][j] >= cfg.joint[j].lower && poses[k][j] <= cfg.joint[j].upper);
            if (j < 2) assert_true(poses[k][j] == ready[j]); /* only the elbow and wrist turn */
        }
    plant pl = plant_with(&two_kg);
    payload_acc *acc = payload_acc_create(&cfg.model, 1e-7);
    assert_non_null(acc);
    /* at each pose every joint creeps at 1e-6 rad/s, both ways: quasi-static */
    for (int k = 0; k < np; k++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double qd[6], qdd[6] = {0}, tau[6];
            for (int j = 0; j < 6; j++) qd[j] = sgn * 1e-6;
            dyn_rnea(pl.m, pl.d, poses[k], qd, qdd, NULL, DYN_ALL, tau);
            assert_int_equal(payload_acc_add(acc, poses[k], qd, qdd, tau), 6);
        }
    payload_fit_result r;
    char why[256] = "";
    assert_int_equal(payload_acc_solve(acc, &r, why, sizeof why), 0);
    print_message("slow: %.12g kg at %.9g %.9g %.9g m, cond %.3g, residual %.3g N m\n", r.mass,
                  r.com[0], r.com[1], r.com[2], r.cond, r.residual_rms);
    assert_true(r.com_known);
    assert_true(fabs(r.mass - 2.0) <= 1e-8);
    for (int i = 0; i < 3; i++) assert_true(fabs(r.com[i] - two_kg.com[i]) <= 1e-8);
    assert_true(r.residual_rms <= 1e-6); /* the normal equations' rounding */
    assert_true(r.cond < 100);
    assert_int_equal(r.rows, np * 2 * 6);
    payload_acc_free(acc);
    plant_free(&pl);
}

/* The 2 kg payload fitted from the default poses' moves (0.8 s each, noise 0.05 N m, 5 N m
 * stiction bias below v_min = 0.05 rad/s, stall_every as in run_moves): the result and the
 * number of samples. */
static long fit_moves(int stall_every, payload_fit_result *r)
{
    load();
    double poses[PAYLOAD_FIT_MAX_POSES][CFG_MAX_JOINTS];
    int np = payload_default_poses(&cfg, ready, poses);
    plant pl = plant_with(&two_kg);
    double v_min = 0.05;
    payload_acc *acc = payload_acc_create(&cfg.model, v_min);
    assert_non_null(acc);
    long samples = run_moves(acc, &pl, poses, np, 0.8, 0.05, 5.0, v_min, stall_every);
    char why[256] = "";
    assert_int_equal(payload_acc_solve(acc, r, why, sizeof why), 0);
    payload_acc_free(acc);
    plant_free(&pl);
    return samples;
}

static void test_moves_noise_stiction(void **state)
{
    (void)state;
    payload_fit_result r;
    long samples = fit_moves(0, &r);
    print_message("moves: inertia %s: %.4f %.4f %.4f %.4f %.4f %.4f\n",
                  r.inertia_known ? "fitted" : "not fitted", r.inertia[0], r.inertia[1],
                  r.inertia[2], r.inertia[3], r.inertia[4], r.inertia[5]);
    print_message("moves: %.4f kg (sd %.4f) at %.4f %.4f %.4f m (sd %.4f %.4f %.4f), residual "
                  "%.3f N m, %ld rows of %ld samples\n",
                  r.mass, r.sd_mass, r.com[0], r.com[1], r.com[2], r.sd_com[0], r.sd_com[1],
                  r.sd_com[2], r.residual_rms, r.rows, samples);
    assert_true(fabs(r.mass - 2.0) <= 0.02);
    double e = 0;
    for (int i = 0; i < 3; i++) e += (r.com[i] - two_kg.com[i]) * (r.com[i] - two_kg.com[i]);
    assert_true(sqrt(e) <= 0.002);
    assert_true(r.rows < samples * 6); /* joints at rest were left out */
    assert_true(r.inertia_known);      /* the moves turn the wrist enough to show it */
    for (int i = 0; i < 6; i++) assert_true(fabs(r.inertia[i] - two_kg.inertia[i]) <= 0.001);
    assert_true(r.sd_mass > 0 && r.residual_rms > 0.04);
    /* gaussian noise: the robust refit leaves out next to nothing */
    assert_true(r.rows_left_out <= r.rows / 1000);
}

/* Stretches of badly measured accelerations (host stalls), 2 % of the samples: the robust refit
 * leaves them out and finds the payload as without them. */
static void test_moves_with_stalls(void **state)
{
    (void)state;
    payload_fit_result r;
    long samples = fit_moves(400, &r);
    double e = 0;
    for (int i = 0; i < 3; i++) e += (r.com[i] - two_kg.com[i]) * (r.com[i] - two_kg.com[i]);
    print_message("stalls: %.4f kg at %.4f %.4f %.4f m (%.2f mm off), residual %.3f N m, %ld rows "
                  "kept, %ld left out, of %ld samples\n",
                  r.mass, r.com[0], r.com[1], r.com[2], 1e3 * sqrt(e), r.residual_rms, r.rows,
                  r.rows_left_out, samples);
    assert_true(fabs(r.mass - 2.0) <= 0.02);
    assert_true(sqrt(e) <= 0.002);
    /* 8 of every 400 samples were bad (2 %): those of the heavy joints are far off */
    long all = r.rows + r.rows_left_out;
    assert_true(r.rows_left_out >= all / 200 && r.rows_left_out <= all / 20);
    assert_true(r.residual_rms <= 0.07); /* the noise's 0.05, not the stalls' */
}

static void test_none(void **state)
{
    (void)state;
    load();
    double poses[PAYLOAD_FIT_MAX_POSES][CFG_MAX_JOINTS];
    int np = payload_default_poses(&cfg, ready, poses);
    dyn_payload none;
    memset(&none, 0, sizeof none);
    plant pl = plant_with(&none);
    payload_acc *acc = payload_acc_create(&cfg.model, 0.05);
    run_moves(acc, &pl, poses, np, 0.8, 0.05, 0, 0.05, 0);
    payload_fit_result r;
    char why[256] = "";
    assert_int_equal(payload_acc_solve(acc, &r, why, sizeof why), 0);
    print_message("none: %.5f kg (sd %.5f)\n", r.mass, r.sd_mass);
    assert_true(fabs(r.mass) <= 0.01);
    assert_false(r.com_known);
    payload_acc_free(acc);
    plant_free(&pl);
}

static void test_refusals(void **state)
{
    (void)state;
    load();
    plant pl = plant_with(&two_kg);
    payload_acc *acc = payload_acc_create(&cfg.model, 0.05);
    double q[6], qd[6] = {0}, qdd[6] = {0}, tau[6];
    memcpy(q, ready, sizeof q);
    dyn_rnea(pl.m, pl.d, q, qd, qdd, NULL, DYN_ALL, tau);
    for (int i = 0; i < 100; i++) assert_int_equal(payload_acc_add(acc, q, qd, qdd, tau), 0);
    payload_fit_result r;
    char why[256] = "";
    assert_int_equal(payload_acc_solve(acc, &r, why, sizeof why), -1);
    print_message("at rest: %s\n", why);
    assert_non_null(strstr(why, "did the arm move"));
    /* only the base joint turns (a vertical axis): gravity tells nothing */
    for (int i = 0; i < 100; i++) {
        q[0] = ready[0] + 0.001 * i;
        qd[0] = 0.1;
        dyn_rnea(pl.m, pl.d, q, qd, qdd, NULL, DYN_ALL, tau);
        assert_int_equal(payload_acc_add(acc, q, qd, qdd, tau), 1);
    }
    assert_int_equal(payload_acc_solve(acc, &r, why, sizeof why), -1);
    print_message("base only: %s\n", why);
    assert_non_null(strstr(why, "does not tell"));
    /* non-finite samples add nothing */
    qd[0] = NAN;
    assert_int_equal(payload_acc_add(acc, q, qd, qdd, tau), 0);
    payload_acc_free(acc);
    plant_free(&pl);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    puma_ini = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_motion_exact), cmocka_unit_test(test_moves_noise_stiction),
        cmocka_unit_test(test_moves_with_stalls), cmocka_unit_test(test_none),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
