/*
 * test_ident.c — armctl identify's computation on the PUMA 560 example (argv[1]):
 * - the regressor from strobing the recursion: Y pi + tau_known equals the inverse dynamics
 *   (friction, armature and a payload included) at random states, and leaves the model as it was;
 * - the standard parameters survive desc -> pi -> desc;
 * - the excitation starts and ends at rest at q0 and keeps inside the limits;
 * - the fit, on torques of an arm changed by armsim's --perturb (the configured model as the
 *   prior): the base parameters of the true arm come back, the full parameters are physically
 *   consistent, and a second excitation's torques are predicted (exactly without noise, within
 *   the 5 % with noise).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "tools/armctl/ident_excite.h"
#include "tools/armctl/ident_fit.h"
#include "tools/armsim/perturb.h"

static const char *puma_ini;
static armd_config cfg;
static const double ready[6] = {0, 1.5708, -1.5708, 0, 0, 0}; /* the rigs' pose */

static void load(void)
{
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(puma_ini, &cfg, &rep), 0);
    cfg_report_free(&rep);
}

static ident_limits limits_of(const armd_config *c)
{
    ident_limits l;
    memset(&l, 0, sizeof l);
    for (int j = 0; j < c->n_joints; j++) {
        l.lower[j] = c->joint[j].lower;
        l.upper[j] = c->joint[j].upper;
        l.velocity[j] = c->joint[j].velocity;
        l.acceleration[j] = c->joint[j].acceleration;
        l.torque[j] = c->joint[j].torque;
    }
    return l;
}

static double gauss(uint64_t *s)
{
    double u1 = ident_uniform((unsigned long long *)s), u2 = ident_uniform((unsigned long long *)s);
    return sqrt(-2 * log(u1 + 1e-300)) * cos(2 * M_PI * u2);
}

static void test_regressor(void **state)
{
    (void)state;
    load();
    dyn_model_desc d = cfg.model;
    d.friction_smoothing = 0.05;
    dyn_payload pl = {1.5, {0.02, -0.01, 0.08}, {0.003, 0.0001, 0, 0.004, 0, 0.002}};
    d.payload = pl;
    dyn_model *m = dyn_model_create(&d, NULL, NULL), *ref = dyn_model_create(&d, NULL, NULL);
    assert_non_null(m);
    dyn_data *dd = dyn_data_create(m);
    int n = d.n, P = DYN_PARAMS * n;
    double pi[DYN_MAX_DOF * DYN_PARAMS], *Y = malloc(sizeof(double) * (size_t)(n * P));
    dyn_params_from_desc(&d, pi);
    uint64_t s = 7;
    double worst = 0;
    for (int t = 0; t < 200; t++) {
        double q[6], qd[6], qdd[6], tau[6], again[6], known[6];
        for (int j = 0; j < n; j++) {
            q[j] = 3 * gauss(&s);
            qd[j] = (t % 4 == 0 ? 0.01 : 1) * gauss(&s); /* some in the friction's blend */
            qdd[j] = 2 * gauss(&s);
        }
        dyn_rnea(ref, dd, q, qd, qdd, NULL, DYN_ALL, tau);
        dyn_regressor(m, dd, q, qd, qdd, Y, known);
        for (int j = 0; j < n; j++) {
            double y = known[j];
            for (int c = 0; c < P; c++) y += Y[j * P + c] * pi[c];
            worst = fmax(worst, fabs(y - tau[j]) / (1 + fabs(tau[j])));
        }
        dyn_rnea(m, dd, q, qd, qdd, NULL, DYN_ALL, again); /* m as it was, bit for bit */
        for (int j = 0; j < n; j++) assert_true(again[j] == tau[j]);
    }
    print_message("regressor: worst relative error %.3g\n", worst);
    assert_true(worst <= 1e-11);
    /* desc -> pi -> desc */
    dyn_model_desc back = d;
    dyn_params_to_desc(pi, &back);
    for (int j = 0; j < n; j++) {
        assert_true(fabs(back.joint[j].mass - d.joint[j].mass) <= 1e-14);
        for (int k = 0; k < 3; k++)
            assert_true(fabs(back.joint[j].com[k] - d.joint[j].com[k]) <= 1e-12);
        for (int k = 0; k < 6; k++)
            assert_true(fabs(back.joint[j].inertia[k] - d.joint[j].inertia[k]) <= 1e-12);
    }
    free(Y);
    dyn_data_free(dd);
    dyn_model_free(m);
    dyn_model_free(ref);
}

static void test_excitation(void **state)
{
    (void)state;
    load();
    ident_fit *f = ident_fit_create(&cfg.model, 0);
    assert_non_null(f);
    ident_limits lim = limits_of(&cfg);
    ident_excitation e;
    double cond;
    char why[256] = "";
    int rc = ident_excitation_design(f, &cfg.model, &lim, ready, 10, 5, 0.6, 20, 42, &e, &cond, why,
                                     sizeof why);
    print_message("excitation: cond %.3g %s\n", cond, why);
    assert_int_equal(rc, 0);
    assert_true(isfinite(cond));
    double q[6], qd[6], qdd[6];
    for (int end = 0; end < 2; end++) {
        ident_excitation_eval(&e, end * e.period, q, qd, qdd);
        for (int j = 0; j < 6; j++) {
            assert_true(fabs(q[j] - ready[j]) <= 1e-12);
            assert_true(fabs(qd[j]) <= 1e-12);
            assert_true(fabs(qdd[j]) <= 1e-12);
        }
    }
    double moved[6] = {0};
    for (int g = 0; g <= 20000; g++) {
        ident_excitation_eval(&e, e.period * g / 20000, q, qd, qdd);
        for (int j = 0; j < 6; j++) {
            assert_true(q[j] >= lim.lower[j] && q[j] <= lim.upper[j]);
            if (!(fabs(q[j] - ready[j]) <= 0.6 * 1.001)) /* the design checks 2000 points */
                fail_msg("joint %d at %.4f, %.4f from q0 at t = %.3f", j + 1, q[j], q[j] - ready[j],
                         e.period * g / 20000);
            assert_true(fabs(qd[j]) <= lim.velocity[j]);
            assert_true(fabs(qdd[j]) <= lim.acceleration[j]);
            moved[j] = fmax(moved[j], fabs(q[j] - ready[j]));
        }
    }
    for (int j = 0; j < 6; j++) assert_true(moved[j] > 0.05); /* every joint excited */
    ident_fit_free(f);
}

/* Samples of excitation e at rate [Hz] over periods, torques of the true arm plus noise sd [N m]
 * times each joint's torque limit / 100, into f. */
static void feed(ident_fit *f, dyn_model *truth, dyn_data *d, const ident_excitation *e,
                 double rate, int periods, double sd, uint64_t *s)
{
    int count = (int)(rate * e->period * periods);
    for (int i = 0; i < count; i++) {
        double q[6], qd[6], qdd[6], tau[6];
        ident_excitation_eval(e, i / rate, q, qd, qdd);
        dyn_rnea(truth, d, q, qd, qdd, NULL, DYN_ALL, tau);
        for (int j = 0; j < 6; j++) tau[j] += sd * cfg.joint[j].torque / 100 * gauss(s);
        assert_int_equal(ident_fit_add(f, q, qd, qdd, tau, tau, tau, NULL), 0);
    }
}

/* Samples of e at rate [Hz] whose torques (the truth's, no noise) are measured late by delay
 * periods, each with its neighbours' (as armctl identify passes them), into f; with same, the
 * sample's own torque for all three. */
static void feed_delayed(ident_fit *f, dyn_model *truth, dyn_data *d, const ident_excitation *e,
                         double rate, double delay, bool same)
{
    int count = (int)(rate * e->period);
    for (int i = 1; i + 1 < count; i++) {
        double q[6], qd[6], qdd[6], tau3[3][6], x[6], xd[6], xdd[6];
        ident_excitation_eval(e, i / rate, q, qd, qdd);
        for (int k = 0; k < 3; k++) {
            ident_excitation_eval(e, (i + k - 1 - delay) / rate, x, xd, xdd);
            dyn_rnea(truth, d, x, xd, xdd, NULL, DYN_ALL, tau3[k]);
        }
        if (same)
            assert_int_equal(ident_fit_add(f, q, qd, qdd, tau3[1], tau3[1], tau3[1], NULL), 0);
        else
            assert_int_equal(ident_fit_add(f, q, qd, qdd, tau3[0], tau3[1], tau3[2], NULL), 0);
    }
}

/* RMS of the prediction error over the RMS torque of excitation e, by parameters pi. */
static double validation_error(ident_fit *f, dyn_model *truth, dyn_data *d,
                               const ident_excitation *e, const double *pi)
{
    double se = 0, st = 0;
    for (int i = 0; i < 2000; i++) {
        double q[6], qd[6], qdd[6], tau[6], pred[6];
        ident_excitation_eval(e, e->period * i / 2000, q, qd, qdd);
        dyn_rnea(truth, d, q, qd, qdd, NULL, DYN_ALL, tau);
        ident_predict(f, pi, q, qd, qdd, pred);
        for (int j = 0; j < 6; j++) {
            se += (pred[j] - tau[j]) * (pred[j] - tau[j]);
            st += tau[j] * tau[j];
        }
    }
    return sqrt(se / st);
}

/* Masses > 0, inertia about the COM a body's, friction and armature of the right sign. */
static void assert_consistent(const double *pi, int n)
{
    dyn_model_desc d;
    memset(&d, 0, sizeof d);
    d.n = n;
    dyn_params_to_desc(pi, &d);
    for (int j = 0; j < n; j++) {
        const dyn_joint_desc *jd = &d.joint[j];
        double w[3], R[9];
        dyn_inertia_principal(jd->inertia, w, R);
        double tol = 1e-9 * (fabs(w[0]) + fabs(w[1]) + fabs(w[2])) + 1e-15;
        assert_true(jd->mass > 0);
        assert_true(w[0] >= -tol && w[2] <= w[0] + w[1] + tol);
        assert_true(jd->armature >= 0 && jd->viscous >= 0);
        assert_true(jd->coulomb_pos >= 0 && jd->coulomb_neg <= 0);
    }
}

/* The arm armsim --perturb 3 plays (truth_desc, its model and data). */
static dyn_model *perturbed_truth(dyn_model_desc *truth_desc, dyn_data **d)
{
    load();
    *truth_desc = cfg.model;
    perturb_desc(truth_desc, 3, NULL);
    dyn_model *truth = dyn_model_create(truth_desc, NULL, NULL);
    assert_non_null(truth);
    *d = dyn_data_create(truth);
    return truth;
}

/* The identification excitation e and the validation one v around the rigs' pose; cond: e's
 * condition number. */
static void excitations(ident_fit *f, ident_excitation *e, ident_excitation *v, double *cond)
{
    ident_limits lim = limits_of(&cfg);
    double vcond;
    char why[256] = "";
    assert_int_equal(ident_excitation_design(f, &cfg.model, &lim, ready, 10, 5, 0.6, 20, 11, e,
                                             cond, why, sizeof why),
                     0);
    assert_int_equal(ident_excitation_design(f, &cfg.model, &lim, ready, 10, 5, 0.6, 5, 99, v,
                                             &vcond, why, sizeof why),
                     0);
}

static void fit_perturbed(double noise, double max_base_err, double max_val_err)
{
    dyn_model_desc truth_desc;
    dyn_data *d;
    dyn_model *truth = perturbed_truth(&truth_desc, &d);
    ident_fit *f = ident_fit_create(&cfg.model, 0); /* the prior: the arm as configured */
    ident_excitation e, v;
    double cond;
    char why[256] = "";
    excitations(f, &e, &v, &cond);
    uint64_t s = 5;
    feed(f, truth, d, &e, 100, 3, noise, &s);
    ident_result r;
    int rc = ident_fit_solve(f, &r, why, sizeof why);
    if (rc != 0) fail_msg("%s", why);
    double pi_true[DYN_MAX_DOF * DYN_PARAMS], theta_true[DYN_MAX_DOF * DYN_PARAMS];
    dyn_params_from_desc(&truth_desc, pi_true);
    ident_base_of(f, pi_true, theta_true);
    double worst = 0, norm = 0;
    for (int k = 0; k < r.r; k++) norm = fmax(norm, fabs(theta_true[k]));
    for (int k = 0; k < r.r; k++) worst = fmax(worst, fabs(r.theta[k] - theta_true[k]));
    double ve = validation_error(f, truth, d, &v, r.pi);
    double prior_pi[DYN_MAX_DOF * DYN_PARAMS];
    dyn_params_from_desc(&cfg.model, prior_pi);
    double ve_prior = validation_error(f, truth, d, &v, prior_pi);
    print_message("noise %.2g %%: %d of %d base parameters, cond %.3g (design %.3g), worst base "
                  "error %.3g of %.3g, fit residual %.3g of torque RMS %.3g, %d joints projected; "
                  "validation error %.3g %% (configured model %.3g %%)\n",
                  noise, r.r, r.P, r.cond, cond, worst, norm, r.fit_rms, r.tau_rms, r.projected,
                  100 * ve, 100 * ve_prior);
    double worst_sd = 0;
    for (int k = 0; k < r.r; k++)
        if (r.sd[k] > 0) worst_sd = fmax(worst_sd, fabs(r.theta[k] - theta_true[k]) / r.sd[k]);
    print_message("largest base parameter error %.3g standard deviations\n", worst_sd);
    assert_true(worst <= max_base_err * norm);
    if (noise > 0) assert_true(worst_sd <= 6); /* the reported sd are honest */
    assert_true(ve <= max_val_err);
    assert_true(ve_prior > 10 * ve); /* the perturbed arm really differs */
    assert_consistent(r.pi, r.n);
    for (int k = 0; k < r.r; k++) assert_true(r.sd[k] >= 0 && isfinite(r.sd[k]));
    ident_fit_free(f);
    dyn_data_free(d);
    dyn_model_free(truth);
}

/* Torques measured 0.3 of a period late (a servo that reports the current of a moment before
 * the read): the fitted alignment is 0.5 - 0.3 = 0.2 (the mean of the torques over the two
 * periods then matches the acceleration's), and the fit predicts the validation motion better
 * than one that takes each sample's own torque. */
static void test_fit_delayed(void **state)
{
    (void)state;
    dyn_model_desc truth_desc;
    dyn_data *d;
    dyn_model *truth = perturbed_truth(&truth_desc, &d);
    ident_excitation e, v;
    double cond, ve[2], align[2];
    char why[256] = "";
    for (int same = 0; same < 2; same++) {
        /* as identify: no equation from a joint slow enough to be in its Coulomb step, where
         * 0.3 ms is the whole step */
        ident_fit *f = ident_fit_create(&cfg.model, fmax(0.02, 5 * cfg.model.friction_smoothing));
        assert_non_null(f);
        excitations(f, &e, &v, &cond);
        feed_delayed(f, truth, d, &e, 1000, 0.3, same);
        ident_result r;
        if (ident_fit_solve(f, &r, why, sizeof why) != 0) fail_msg("%s", why);
        ve[same] = validation_error(f, truth, d, &v, r.pi);
        align[same] = r.align;
        assert_consistent(r.pi, r.n);
        ident_fit_free(f);
    }
    print_message("torques 0.3 period late: alignment %.3f, validation error %.3g %% (each "
                  "sample's own torque: %.3g %%)\n",
                  align[0], 100 * ve[0], 100 * ve[1]);
    assert_true(fabs(align[0] - 0.2) <= 0.03);
    assert_true(ve[0] < ve[1] / 2);
    dyn_data_free(d);
    dyn_model_free(truth);
}

static void test_fit_exact(void **state)
{
    (void)state;
    fit_perturbed(0, 1e-6, 0.01);
}

static void test_fit_noise(void **state)
{
    (void)state;
    fit_perturbed(1.0, 1.0, 0.05); /* 1 % of each torque limit as noise; the base error judged in
                                    * its standard deviations */
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc > 2 && strcmp(argv[2], "delayed") && strcmp(argv[2], "others"))) {
        fprintf(stderr, "usage: %s PUMA560.ini [delayed | others]\n", argv[0]);
        return 2;
    }
    puma_ini = argv[1];
    /* meson runs the longest case apart from the others, so that the two halves run side by
     * side */
    const struct CMUnitTest others[] = {
        cmocka_unit_test(test_regressor), cmocka_unit_test(test_excitation),
        cmocka_unit_test(test_fit_exact), cmocka_unit_test(test_fit_noise)};
    const struct CMUnitTest delayed[] = {cmocka_unit_test(test_fit_delayed)};
    int rc = 0;
    if (argc < 3 || !strcmp(argv[2], "others")) rc |= cmocka_run_group_tests(others, NULL, NULL);
    if (argc < 3 || !strcmp(argv[2], "delayed")) rc |= cmocka_run_group_tests(delayed, NULL, NULL);
    return rc;
}
